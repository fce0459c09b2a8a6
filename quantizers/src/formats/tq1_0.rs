//! tq1_0: 256 elements per block, 54 bytes per block (ternary, 1.6875 bits per weight).
//!
//! Layout: `qs[48]`, `qh[4]`, then `d: f16` (the scale comes last). Every byte holds five
//! trits (four plus padding in `qh`) as a base-3 fixed-point fraction: the byte is
//! `ceil(t * 256 / 243)` where `t` is the base-3 number formed by the trits, first trit most
//! significant. Trit `n` is recovered as `((byte * 3^n mod 256) * 3) >> 8`.
//!
//! Element order: `qs[m]` (m < 32) holds elements `m + 32n` for n = 0..5, `qs[32 + m]`
//! (m < 16) holds `160 + m + 16n`, and `qh[j]` holds `240 + j + 4n` for n = 0..4.

use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 256;
/// Bytes per block.
const BLOCK_BYTES: usize = 54;

/// Registry entry for tq1_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::TQ1_0,
    name: "tq1_0",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: false,
    quantize: Some(quantize_row),
    dequantize: Some(dequantize_row),
};

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
#[inline]
pub(crate) fn ternary_scale(x: &[f32]) -> (f32, f32) {
    let mut amax = 0f32;
    for &v in x {
        let a = v.abs();
        amax = if amax > a { amax } else { a };
    }
    let id = if amax != 0.0 { 1.0f32 / amax } else { 0.0 };
    (amax, id)
}

/// `ceil(q * 256 / 243)` in integer arithmetic, stored as a byte.
#[inline]
fn pack_trits(q: u8) -> u8 {
    (q as u32 * 256).div_ceil(243) as u8
}

/// The base-3 number of the trits of `xs` (first most significant), each `round(x·id) + 1`
/// (-1, 0, 1 → 0, 1, 2), in u8 arithmetic that wraps as the C code's does.
#[inline]
fn base3(xs: impl Iterator<Item = f32>, id: f32) -> u8 {
    xs.fold(0u8, |q, v| {
        q.wrapping_mul(3)
            .wrapping_add(c_lroundf_int(v * id).wrapping_add(1) as u8)
    })
}

/// `quantize_row_tq1_0_ref` (the imatrix is ignored).
fn quantize_row(src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    for (x, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let (d, id) = ternary_scale(x);
        for m in 0..32 {
            y[m] = pack_trits(base3((0..5).map(|n| x[m + 32 * n]), id));
        }
        for m in 0..16 {
            y[32 + m] = pack_trits(base3((0..5).map(|n| x[160 + m + 16 * n]), id));
        }
        for j in 0..4 {
            let q = base3((0..4).map(|n| x[240 + j + 4 * n]), id);
            // The fifth, padding trit is a zero in the least significant place.
            y[48 + j] = pack_trits(q.wrapping_mul(3));
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
fn dequantize_row(src: &[u8], dst: &mut [f32]) {
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
