//! q8_1: 32 elements per block, 36 bytes per block.
//!
//! Layout: `d: f16`, `s: f16`, then `qs[32]: i8`. Element value = `q · d`; `s = Σq · d` is a
//! dot-product helper. llama-quantize never writes this type (`ggml_quantize_chunk` refuses
//! it) and ggml has no dequantizer for it; ours follows the layout.
//!
//! Quantization (`quantize_row_q8_1_ref`; the imatrix is ignored) is q8_0's, plus
//! `s = fp16(f32(Σ stored i8 quants) · d)`. **NaN handling:** as q8_0.

use super::blocks::BlockQ8_1;
use super::f16::{f16_bits_to_f32, f32_to_f16_bits};
use super::q8_0::{abs_max, quants_q8};
use crate::common::{get_u16, put_u16};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 32;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ8_1>();

/// Quantizes one row (`quantize_row_q8_1_ref`). The imatrix is ignored.
pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    debug_assert_eq!(src.len() % QK, 0);
    debug_assert_eq!(dst.len(), src.len() / QK * BLOCK_BYTES);
    for (xb, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let x: &[f32; QK] = xb.try_into().unwrap();
        let d = abs_max(x) / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        put_u16(y, 0, f32_to_f16_bits(d));
        quants_q8(x, id, &mut y[4..]);
        // The reference sums the stored int8 values.
        let sum: i32 = y[4..].iter().map(|&q| q as i8 as i32).sum();
        put_u16(y, 2, f32_to_f16_bits(sum as f32 * d));
    }
}

/// Dequantizes from the layout: `q · d` (`s` is not needed).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len() / BLOCK_BYTES * QK, dst.len());
    for (y, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_bits_to_f32(get_u16(y, 0));
        for (o, &q) in out.iter_mut().zip(&y[4..]) {
            *o = q as i8 as f32 * d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::block32::tests::{adversarial_blocks, Rng};
    use super::*;

    #[test]
    fn quants_equal_q8_0_and_s_is_the_scaled_sum() {
        let blocks = adversarial_blocks();
        let src: Vec<f32> = blocks.iter().flatten().copied().collect();
        let mut q8_1 = vec![0u8; blocks.len() * BLOCK_BYTES];
        quantize_row(&src, &mut q8_1, None);
        let mut q8_0 = vec![0u8; blocks.len() * 34];
        super::super::q8_0::quantize_row(&src, &mut q8_0, None);
        let rows = q8_1.chunks_exact(BLOCK_BYTES).zip(q8_0.chunks_exact(34));
        for ((a, b), x) in rows.zip(&blocks) {
            assert_eq!(&a[..2], &b[..2]);
            assert_eq!(&a[4..], &b[2..]);
            let d = abs_max(x) / 127.0;
            let sum: i32 = a[4..].iter().map(|&q| q as i8 as i32).sum();
            assert_eq!(get_u16(a, 2), f32_to_f16_bits(sum as f32 * d), "{x:?}");
        }
    }

    #[test]
    fn s_matches_the_reference_formula() {
        let mut rng = Rng::new(5);
        let x = rng.block(2.0);
        let mut y = [0u8; BLOCK_BYTES];
        quantize_row(&x, &mut y, None);
        let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
        let d = amax / 127.0;
        let sum: i32 = y[4..].iter().map(|&q| q as i8 as i32).sum();
        assert_eq!(get_u16(&y, 2), f32_to_f16_bits(sum as f32 * d));
        let mut back = [0f32; QK];
        dequantize_row(&y, &mut back);
        for (&a, &b) in x.iter().zip(&back) {
            assert!((a - b).abs() <= d * 0.6);
        }
    }
}
