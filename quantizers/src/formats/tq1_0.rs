//! tq1_0: 256 elements per block, 54 bytes per block (ternary, 1.6875 bits per weight).
//!
//! Layout: `qs[48]`, `qh[4]`, then `d: f16` (the scale comes last). Every byte holds five
//! trits (four plus padding in `qh`) as a base-3 fixed-point fraction: the byte is
//! `ceil(t * 256 / 243)` where `t` is the base-3 number formed by the trits, first trit most
//! significant. Trit `n` is recovered as `((byte * 3^n mod 256) * 3) >> 8`.
//!
//! Element order: `qs[m]` (m < 32) holds elements `m + 32n` for n = 0..5, `qs[32 + m]`
//! (m < 16) holds `160 + m + 16n`, and `qh[j]` holds `240 + j + 4n` for n = 0..4.

use super::block32::in_fast_range;
use super::block32::round_fast;
use super::blocks::BlockTq1_0;
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 256;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockTq1_0>();

/// C's `(int)lroundf(x)` on x86-64 glibc: round half away from zero to a `long`, where NaN
/// and values beyond the `long` range give `LONG_MIN`, then keep the low 32 bits.
#[inline]
pub(crate) fn c_lroundf_int(x: f32) -> i32 {
    const TWO_63: f32 = 9_223_372_036_854_775_808.0;
    let r = x.round();
    let l = if !(-TWO_63..TWO_63).contains(&r) {
        i64::MIN
    } else {
        r as i64
    };
    l as i32
}

/// The ternary block scale: `amax` folded with C's `MAX(a, b)` (`a > b ? a : b`), and its
/// inverse (0 for an all-zero block).
///
/// Without NaNs the fold is a plain maximum, computed on the bit patterns so that it
/// vectorises (for non-negative floats the integer order of the bits is the float order).
/// A NaN (bits above `0x7f80_0000`) makes the result depend on its position (it survives
/// only as the last element), and the sequential fold decides.
#[inline(always)]
pub(crate) fn ternary_scale(x: &[f32]) -> (f32, f32) {
    let mut lanes = [0u32; 8];
    for chunk in x.chunks_exact(8) {
        for (l, &v) in lanes.iter_mut().zip(chunk) {
            *l = (*l).max(v.to_bits() & 0x7fff_ffff);
        }
    }
    let bits = lanes.iter().fold(0, |m, &l| m.max(l));
    let amax = if bits > 0x7f80_0000 || !x.len().is_multiple_of(8) {
        let mut amax = 0f32;
        for &v in x {
            let a = v.abs();
            amax = if amax > a { amax } else { a };
        }
        amax
    } else {
        f32::from_bits(bits)
    };
    let id = if amax != 0.0 { 1.0f32 / amax } else { 0.0 };
    (amax, id)
}

/// The ternary codes `lroundf(x·id) + 1` of a block as bytes (-1, 0, 1 → 0, 1, 2; other
/// values wrap as in C). `roundf` is done by [`round_fast`] where it is exact, which lets
/// the loop vectorise (a call to `roundf` would not); a block with a quant outside that
/// range is redone with the exact scalar conversion.
#[inline(always)]
pub(crate) fn ternary_codes(x: &[f32], id: f32, q: &mut [u8]) {
    let mut exact = true;
    for (q, &v) in q.iter_mut().zip(x) {
        let s = v * id;
        exact &= in_fast_range(s);
        *q = round_fast(s).wrapping_add(1) as u8;
    }
    if !exact {
        for (q, &v) in q.iter_mut().zip(x) {
            *q = c_lroundf_int(v * id).wrapping_add(1) as u8;
        }
    }
}

/// `ceil(q * 256 / 243)` in integer arithmetic, stored as a byte.
#[inline(always)]
fn pack_trits(q: u8) -> u8 {
    (q as u32 * 256).div_ceil(243) as u8
}

/// The base-3 number of the codes `q[at], q[at + step], …` (`count` of them, the first
/// most significant), in u8 arithmetic that wraps as the C code's does.
#[inline(always)]
fn base3(q: &[u8; QK], at: usize, step: usize, count: usize) -> u8 {
    (0..count).fold(0u8, |acc, n| {
        acc.wrapping_mul(3).wrapping_add(q[at + step * n])
    })
}

multiversion! {
    /// `quantize_row_tq1_0_ref` (the imatrix is ignored).
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

#[inline(always)]
fn quantize_row_impl<S: V8>(_: S, src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    for (x, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let (d, id) = ternary_scale(x);
        let mut q = [0u8; QK];
        ternary_codes(x, id, &mut q);
        for (m, b) in y[..32].iter_mut().enumerate() {
            *b = pack_trits(base3(&q, m, 32, 5));
        }
        for (m, b) in y[32..48].iter_mut().enumerate() {
            *b = pack_trits(base3(&q, 160 + m, 16, 5));
        }
        for (j, b) in y[48..52].iter_mut().enumerate() {
            // The fifth, padding trit is a zero in the least significant place.
            *b = pack_trits(base3(&q, 240 + j, 4, 4).wrapping_mul(3));
        }
        put_u16(y, 52, f32_to_f16(d));
    }
}

/// Trit `n` (0 = most significant) of a packed byte, as -1, 0 or 1, times `d`.
#[inline]
fn unpack_trit(byte: u8, pow3: u8, d: f32) -> f32 {
    let q = byte.wrapping_mul(pow3);
    let xi = ((q as u16 * 3) >> 8) as i16;
    (xi - 1) as f32 * d
}

/// `dequantize_row_tq1_0`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    const POW3: [u8; 5] = [1, 3, 9, 27, 81];
    for (b, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(b, 52));
        let (head, rest) = y.split_at_mut(160);
        let (mid, tail) = rest.split_at_mut(80);
        for (n, yn) in head.chunks_exact_mut(32).enumerate() {
            for (v, &byte) in yn.iter_mut().zip(&b[0..32]) {
                *v = unpack_trit(byte, POW3[n], d);
            }
        }
        for (n, yn) in mid.chunks_exact_mut(16).enumerate() {
            for (v, &byte) in yn.iter_mut().zip(&b[32..48]) {
                *v = unpack_trit(byte, POW3[n], d);
            }
        }
        for (n, yn) in tail.chunks_exact_mut(4).enumerate() {
            for (v, &byte) in yn.iter_mut().zip(&b[48..52]) {
                *v = unpack_trit(byte, POW3[n], d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lroundf_int_matches_x86_glibc() {
        assert_eq!(c_lroundf_int(0.5), 1);
        assert_eq!(c_lroundf_int(-0.5), -1);
        assert_eq!(c_lroundf_int(0.49), 0);
        assert_eq!(c_lroundf_int(f32::NAN), 0);
        assert_eq!(c_lroundf_int(f32::INFINITY), 0);
        assert_eq!(c_lroundf_int(4_294_967_296.0 + 8192.0), 8192);
    }

    #[test]
    fn ternary_round_trip_is_exact() {
        // Values in {-a, 0, a} are reproduced exactly when a is representable in fp16.
        let x: Vec<f32> = (0..QK * 2)
            .map(|i| [-1.5f32, 0.0, 1.5][(i * 7 + i / 3) % 3])
            .collect();
        let mut q = vec![0u8; 2 * BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mut y = vec![0f32; x.len()];
        dequantize_row(&q, &mut y);
        assert_eq!(x, y);
    }

    #[test]
    fn round_trip_error_is_bounded() {
        let x: Vec<f32> = (0..QK).map(|i| (i as f32 * 0.37).sin()).collect();
        let mut q = vec![0u8; BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mut y = vec![0f32; QK];
        dequantize_row(&q, &mut y);
        let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
        for (a, b) in x.iter().zip(&y) {
            assert!((a - b).abs() <= 0.5 * amax + 1e-3, "{a} vs {b}");
        }
    }
}
