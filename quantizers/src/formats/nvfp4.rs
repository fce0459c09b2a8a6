//! nvfp4: 64 elements per block, 36 bytes per block.
//!
//! Layout: `d[4]` (one UE4M3 scale per 16 values), then `qs[32]`: for sub-block `s`, bytes
//! `8s..8s+8` hold element `16s + j` in the low nibble and `16s + 8 + j` in the high nibble.
//! Value = `KVALUES_MXFP4[nibble] * ue4m3(d[s]) / 2` (the table holds the E2M1 values doubled).

use super::blocks::BlockNvfp4;
use crate::common::c_trunc_i32;
use crate::formats::mxfp4::{best_index_fp4, KVALUES_MXFP4};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 64;
/// Elements per sub-block (one scale each).
const QK_SUB: usize = 16;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockNvfp4>();
/// Sub-blocks per block.
const N_SUB: usize = QK / QK_SUB;

/// `ggml_ue4m3_to_fp32`: the unsigned E4M3 value (bias 7, no infinities) times 0.5, with
/// `0x7F` (NaN) read as zero. Every step is exact.
#[inline]
fn ue4m3_to_f32_half(x: u8) -> f32 {
    if x == 0 || x == 0x7f {
        return 0.0;
    }
    let exp = ((x >> 3) & 0xf) as i32;
    let man = (x & 7) as f32;
    let raw = if exp == 0 {
        man * f32::from_bits((127 - 9) << 23)
    } else {
        (1.0f32 + man / 8.0f32) * f32::from_bits(((exp - 7 + 127) as u32) << 23)
    };
    raw * 0.5f32
}

/// `ggml_fp32_to_ue4m3`: positive values only (anything else, NaN included, gives 0),
/// saturating at 448 (`0x7E`). Normal results round the mantissa half-up on the first
/// dropped bit; subnormal results are `trunc(x·512 + 0.5)` clamped to 1..=7 (below 1 → 0).
#[inline]
fn f32_to_ue4m3(x: f32) -> u8 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let x = if x > 448.0 { 448.0f32 } else { x };
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 7;
    if exp <= 0 {
        let man = c_trunc_i32(x * 512.0f32 + 0.5f32).min(7);
        return if man < 1 { 0 } else { man as u8 };
    }
    if exp >= 15 {
        return 0x7e;
    }
    let mut exp = exp;
    let mut man = ((bits >> 20) & 7) as i32 + ((bits >> 19) & 1) as i32;
    if man > 7 {
        man = 0;
        exp += 1;
        if exp >= 15 {
            return 0x7e;
        }
    }
    ((exp << 3) | man) as u8
}

/// `quantize_row_nvfp4_ref` (the imatrix is ignored).
pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    for (x, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let (scales, qs) = y.split_at_mut(N_SUB);
        for ((xb, sc), qb) in x
            .chunks_exact(QK_SUB)
            .zip(scales.iter_mut())
            .zip(qs.chunks_exact_mut(QK_SUB / 2))
        {
            let mut amax = 0f32;
            for &v in xb {
                if amax < v.abs() {
                    amax = v.abs();
                }
            }
            let ue = f32_to_ue4m3(amax / 6.0f32);
            *sc = ue;
            let d = ue4m3_to_f32_half(ue);
            for (j, q) in qb.iter_mut().enumerate() {
                *q = best_index_fp4(xb[j], d) | (best_index_fp4(xb[j + QK_SUB / 2], d) << 4);
            }
        }
    }
}

/// `dequantize_row_nvfp4`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let (scales, qs) = b.split_at(N_SUB);
        for ((&sc, qb), yb) in scales
            .iter()
            .zip(qs.chunks_exact(QK_SUB / 2))
            .zip(y.chunks_exact_mut(QK_SUB))
        {
            let d = ue4m3_to_f32_half(sc);
            for (j, &q) in qb.iter().enumerate() {
                yb[j] = KVALUES_MXFP4[(q & 0x0f) as usize] as f32 * d;
                yb[j + QK_SUB / 2] = KVALUES_MXFP4[(q >> 4) as usize] as f32 * d;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ue4m3_conversions() {
        assert_eq!(f32_to_ue4m3(0.0), 0);
        assert_eq!(f32_to_ue4m3(-1.0), 0);
        assert_eq!(f32_to_ue4m3(f32::NAN), 0);
        assert_eq!(f32_to_ue4m3(1.0), 0x38);
        assert_eq!(f32_to_ue4m3(1e9), 0x7e);
        assert_eq!(ue4m3_to_f32_half(0x7e), 224.0);
        assert_eq!(ue4m3_to_f32_half(0x7f), 0.0);
        assert_eq!(ue4m3_to_f32_half(0x38), 0.5);
        assert_eq!(ue4m3_to_f32_half(1), 2f32.powi(-10));
        // Codes below exponent 15 survive the round trip through f32; exponent 15 always
        // encodes as the saturated 0x7E.
        assert_eq!(f32_to_ue4m3(256.0), 0x7e);
        for c in 1u8..0x78 {
            assert_eq!(f32_to_ue4m3(2.0 * ue4m3_to_f32_half(c)), c, "code {c:#x}");
        }
        // Subnormal rounding: 1.5·2^-9 rounds half up to 2.
        assert_eq!(f32_to_ue4m3(1.5 / 512.0), 2);
        assert_eq!(f32_to_ue4m3(0.4 / 512.0), 0);
    }

    #[test]
    fn round_trip_error_is_small() {
        let x: Vec<f32> = (0..QK * 4)
            .map(|i| (i as f32 * 0.83).sin() * (1 + i / 16) as f32)
            .collect();
        let mut q = vec![0u8; 4 * BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mut y = vec![0f32; x.len()];
        dequantize_row(&q, &mut y);
        for (xb, yb) in x.chunks(QK_SUB).zip(y.chunks(QK_SUB)) {
            let amax = xb.iter().fold(0f32, |m, v| m.max(v.abs()));
            for (a, b) in xb.iter().zip(yb) {
                assert!((a - b).abs() <= 0.25 * amax, "{a} vs {b}");
            }
        }
    }
}
