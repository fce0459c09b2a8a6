//! mxfp4: 32 elements per block, 17 bytes per block.
//!
//! Layout: `e: u8` (an E8M0 power-of-two exponent), then `qs[16]` of E2M1 nibbles (element `j`
//! low, element `16 + j` high). The table [`KVALUES_MXFP4`] holds the E2M1 values doubled, so
//! the stored exponent is used halved: value = `KVALUES_MXFP4[nibble] * 2^(e - 128)`.

use super::blocks::BlockMxfp4;
use crate::common::c_trunc_i32;
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 32;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockMxfp4>();

/// `kvalues_mxfp4` (`kvalues_fp4`): E2M1 values times two, shared with NVFP4 (a format
/// constant; index 8 is negative zero and so never chosen by [`best_index_fp4`]).
pub(crate) const KVALUES_MXFP4: [i8; 16] =
    [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/// Index of the FP4 code nearest to `x` at scale `e` (`best_index_mxfp4`): a linear scan of
/// `|KVALUES_MXFP4[i]*e - x|` where only a strictly smaller error replaces the best, so the
/// lowest index wins ties. (Branch-free, so that loops over it vectorise.)
#[inline(always)]
pub(crate) fn best_index_fp4(x: f32, e: f32) -> u8 {
    let mut best = 0u8;
    let mut best_err = (KVALUES_MXFP4[0] as f32 * e - x).abs();
    for (i, &k) in KVALUES_MXFP4.iter().enumerate().skip(1) {
        let err = (k as f32 * e - x).abs();
        let better = err < best_err;
        best = if better { i as u8 } else { best };
        best_err = if better { err } else { best_err };
    }
    best
}

/// `ggml_e8m0_to_fp32_half`: `2^(x - 128)` built from bits (subnormal for `x < 2`).
#[inline]
fn e8m0_to_f32_half(x: u8) -> f32 {
    let bits = if x < 2 {
        0x0020_0000u32 << x
    } else {
        ((x - 1) as u32) << 23
    };
    f32::from_bits(bits)
}

multiversion! {
    /// `quantize_row_mxfp4_ref` (the imatrix is ignored).
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

#[inline(always)]
fn quantize_row_impl<S: V8>(_: S, src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    for (x, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let mut amax = 0f32;
        for &v in x {
            if amax < v.abs() {
                amax = v.abs();
            }
        }
        // C converts the float straight to uint8_t; x86-64 goes through a 32-bit
        // truncating conversion and keeps the low byte.
        let e = if amax > 0.0 {
            c_trunc_i32(amax.log2().floor() - 2.0 + 127.0) as u8
        } else {
            0
        };
        let d = e8m0_to_f32_half(e);
        y[0] = e;
        let mut idx = [0u8; QK];
        for (i, &v) in idx.iter_mut().zip(x) {
            *i = best_index_fp4(v, d);
        }
        let (lo, hi) = idx.split_at(QK / 2);
        for ((q, &a), &b) in y[1..].iter_mut().zip(lo).zip(hi) {
            *q = a | (b << 4);
        }
    }
}

/// `dequantize_row_mxfp4`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = e8m0_to_f32_half(b[0]);
        for (j, &q) in b[1..].iter().enumerate() {
            y[j] = KVALUES_MXFP4[(q & 0x0f) as usize] as f32 * d;
            y[j + QK / 2] = KVALUES_MXFP4[(q >> 4) as usize] as f32 * d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e8m0_half_values() {
        assert_eq!(e8m0_to_f32_half(128), 1.0);
        assert_eq!(e8m0_to_f32_half(127), 0.5);
        assert_eq!(e8m0_to_f32_half(1), f32::from_bits(0x0040_0000));
        assert_eq!(e8m0_to_f32_half(0), f32::from_bits(0x0020_0000));
    }

    #[test]
    fn best_index_first_minimum_wins() {
        // 0 matches both +0 (index 0) and -0 (index 8): the first one wins.
        assert_eq!(best_index_fp4(0.0, 1.0), 0);
        // 5 is halfway between 4 (index 4) and 6 (index 5): the lower index wins.
        assert_eq!(best_index_fp4(5.0, 1.0), 4);
        assert_eq!(best_index_fp4(-5.0, 1.0), 12);
        assert_eq!(best_index_fp4(100.0, 1.0), 7);
        assert_eq!(best_index_fp4(-2.9, 1.0), 11);
    }

    #[test]
    fn round_trip_error_is_small() {
        let x: Vec<f32> = (0..QK * 8)
            .map(|i| (i as f32 * 0.61).sin() * (1 + i / 32) as f32)
            .collect();
        let mut q = vec![0u8; 8 * BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mut y = vec![0f32; x.len()];
        dequantize_row(&q, &mut y);
        for (xb, yb) in x.chunks(QK).zip(y.chunks(QK)) {
            let amax = xb.iter().fold(0f32, |m, v| m.max(v.abs()));
            for (a, b) in xb.iter().zip(yb) {
                // With 2^E <= amax < 2^(E+1) the codes reach 1.5·2^E in steps of at most
                // 0.5·2^E, so the error stays below 0.25·amax.
                assert!((a - b).abs() <= 0.25 * amax, "{a} vs {b}");
            }
        }
    }
}
