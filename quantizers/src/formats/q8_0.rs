//! q8_0: 32 elements per block, 34 bytes per block.
//!
//! Layout: `d: f16`, then `qs[32]: i8`. Element value = `q · d`.
//!
//! Quantization (`quantize_row_q8_0_ref`; the imatrix is always ignored): `amax` = the
//! largest `|x|` (`amax = amax > |v| ? amax : |v|` from 0), `d = amax / 127`,
//! `q = (i8)roundf(x / d)` with the division done as a multiplication by the f32 `1/d`.
//!
//! **NaN handling:** the reference's max reduction lets a NaN through only while it is the
//! latest element (the next comparison with a number replaces it), so a NaN `amax` needs
//! the NaN to be the block's last element, or followed only by NaNs; then every quant is
//! NaN. A NaN or out-of-range quant is C's x86-64 `i32::MIN` truncated to a byte (0). All of
//! that is reproduced exactly.

use super::block32::{in_fast_range, round_fast};
use super::blocks::BlockQ8_0;
use super::f16::{f16_bits_to_f32, f32_to_f16_bits};
use crate::common::{c_round_i32, get_u16, put_u16};
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 32;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ8_0>();

/// The reference's sequential `amax = amax > |v| ? amax : |v|` from 0.
fn abs_max_scalar(x: &[f32; QK]) -> f32 {
    x.iter().fold(0f32, |m, &v| {
        let a = v.abs();
        if m > a {
            m
        } else {
            a
        }
    })
}

/// [`abs_max_scalar`], computed on the bit patterns so it vectorises: for non-negative
/// floats the integer order of the bits is the float order, so without NaNs the reduction
/// is an integer maximum in any order. A NaN (bits above `0x7f80_0000`) makes the result
/// depend on its position, and the sequential scan decides.
#[inline(always)]
pub(super) fn abs_max(x: &[f32; QK]) -> f32 {
    let mut lanes = [0i32; 8];
    for chunk in x.chunks_exact(8) {
        for (l, &v) in lanes.iter_mut().zip(chunk) {
            let a = (v.to_bits() & 0x7fff_ffff) as i32;
            *l = if a > *l { a } else { *l };
        }
    }
    let m = lanes.iter().fold(0, |m, &l| m.max(l));
    if m > 0x7f80_0000 {
        abs_max_scalar(x)
    } else {
        f32::from_bits(m as u32)
    }
}

/// The q8_0/q8_1 quants `(int8_t)roundf(x·id)`: C's x86-64 conversion rounds half away
/// from zero, converts to 32 bits (`i32::MIN` for NaN and out of range) and keeps the low
/// byte. A fast vectorised pass handles the usual `|x·id| < 2^21`; otherwise the block is
/// redone with the exact scalar conversion.
#[inline(always)]
pub(super) fn quants_q8(x: &[f32; QK], id: f32, qs: &mut [u8]) {
    let mut exact = true;
    for (q, &v) in qs.iter_mut().zip(x) {
        let s = v * id;
        exact &= in_fast_range(s);
        *q = round_fast(s) as u8;
    }
    if !exact {
        for (q, &v) in qs.iter_mut().zip(x) {
            *q = c_round_i32(v * id) as u8;
        }
    }
}

multiversion! {
    /// Quantizes one row (`quantize_row_q8_0_ref`). The imatrix is ignored.
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

/// [`quantize_row`]'s body, generic over the lane type only so that it is compiled for AVX2
/// too: its loops are plain Rust, which the compiler vectorises for the target it gets.
#[inline(always)]
fn quantize_row_impl<S: V8>(_s: S, src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    debug_assert_eq!(src.len() % QK, 0);
    debug_assert_eq!(dst.len(), src.len() / QK * BLOCK_BYTES);
    for (xb, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let x: &[f32; QK] = xb.try_into().unwrap();
        let d = abs_max(x) / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        put_u16(y, 0, f32_to_f16_bits(d));
        quants_q8(x, id, &mut y[2..]);
    }
}

/// `dequantize_row_q8_0`: `q · d`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len() / BLOCK_BYTES * QK, dst.len());
    for (y, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_bits_to_f32(get_u16(y, 0));
        for (o, &q) in out.iter_mut().zip(&y[2..]) {
            *o = q as i8 as f32 * d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::block32::tests::{adversarial_blocks, Rng};
    use super::*;
    use crate::common::f32_to_f16;

    /// `quantize_row_q8_0_ref` written the plain way, with C's conversions.
    fn quantize_block_plain(x: &[f32; QK]) -> [u8; BLOCK_BYTES] {
        let mut y = [0u8; BLOCK_BYTES];
        let d = abs_max_scalar(x) / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        for (q, &v) in y[2..].iter_mut().zip(x) {
            *q = c_round_i32(v * id) as u8;
        }
        y
    }

    #[test]
    fn abs_max_matches_the_sequential_scan() {
        for b in adversarial_blocks() {
            assert_eq!(abs_max(&b).to_bits(), abs_max_scalar(&b).to_bits(), "{b:?}");
        }
    }

    #[test]
    fn quantize_matches_the_plain_reference() {
        let blocks = adversarial_blocks();
        let src: Vec<f32> = blocks.iter().flatten().copied().collect();
        let mut ours = vec![0u8; blocks.len() * BLOCK_BYTES];
        quantize_row(&src, &mut ours, None);
        for (b, y) in blocks.iter().zip(ours.chunks_exact(BLOCK_BYTES)) {
            assert_eq!(y, quantize_block_plain(b), "{b:?}");
        }
    }

    #[test]
    fn all_zero_and_nan_blocks() {
        let mut y = [0xffu8; BLOCK_BYTES];
        quantize_row(&[-0.0; QK], &mut y, None);
        assert!(y.iter().all(|&b| b == 0), "d = +0, quants 0");
        // A NaN survives the max reduction only as the last element: d is NaN, every
        // quant is C's NaN conversion (low byte 0).
        let mut x = [1.0f32; QK];
        x[QK - 1] = f32::NAN;
        quantize_row(&x, &mut y, None);
        assert_eq!(get_u16(&y, 0), 0x7e00);
        assert!(y[2..].iter().all(|&b| b == 0));
        // Anywhere else the next number replaces it.
        x[QK - 1] = 1.0;
        x[5] = f32::NAN;
        quantize_row(&x, &mut y, None);
        assert_eq!(
            f16_bits_to_f32(get_u16(&y, 0)),
            f16_bits_to_f32(f32_to_f16(1.0 / 127.0))
        );
        assert_eq!(y[2 + 5], 0);
        assert_eq!(y[2], 127);
    }

    #[test]
    fn round_trip_error_is_within_half_a_step() {
        let mut rng = Rng::new(3);
        // Scales whose d is a normal f16, so the f16 rounding is relative.
        for scale in [1.0f32, 0.05, 100.0] {
            let src: Vec<f32> = (0..64 * QK).map(|_| rng.uniform() * scale).collect();
            let mut q = vec![0u8; 64 * BLOCK_BYTES];
            quantize_row(&src, &mut q, None);
            let mut back = vec![0f32; src.len()];
            dequantize_row(&q, &mut back);
            for ((xb, yb), y) in src
                .chunks_exact(QK)
                .zip(back.chunks_exact(QK))
                .zip(q.chunks_exact(BLOCK_BYTES))
            {
                let d = f16_bits_to_f32(get_u16(y, 0));
                for (&a, &b) in xb.iter().zip(yb) {
                    // Half a step, plus the f16 rounding of d times up to 127.
                    assert!((a - b).abs() <= d * (0.5 + 127.0 / 2048.0), "{a} vs {b}");
                }
            }
        }
    }
}
