//! q1_0: 128 elements per block, 18 bytes per block.
//!
//! Layout: `d: f16` (the mean |x| of the block), then `qs[16]`: bit `j % 8` of byte `j / 8` is
//! set when element `j` is ≥ 0. Value = `+d` for a set bit, `-d` otherwise.

use super::blocks::BlockQ1_0;
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 128;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ1_0>();

/// `quantize_row_q1_0_ref` (the imatrix is ignored).
pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    for (x, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let mut sum_abs = 0f32;
        for &v in x {
            sum_abs += v.abs();
        }
        put_u16(y, 0, f32_to_f16(sum_abs / QK as f32));
        for (byte, xs) in y[2..].iter_mut().zip(x.chunks_exact(8)) {
            let mut b = 0u8;
            for (bit, &v) in xs.iter().enumerate() {
                if v >= 0.0 {
                    b |= 1 << bit;
                }
            }
            *byte = b;
        }
    }
}

/// `dequantize_row_q1_0`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(b, 0));
        let neg_d = -d;
        for (&byte, ys) in b[2..].iter().zip(y.chunks_exact_mut(8)) {
            for (bit, v) in ys.iter_mut().enumerate() {
                *v = if (byte >> bit) & 1 != 0 { d } else { neg_d };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_and_mean_scale() {
        let x: Vec<f32> = (0..QK)
            .map(|i| {
                if i % 3 == 0 {
                    -2.0
                } else {
                    0.5 * (i % 5) as f32
                }
            })
            .collect();
        let mut q = vec![0u8; BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mean = x.iter().map(|v| v.abs()).sum::<f32>() / QK as f32;
        let d = f16_to_f32(get_u16(&q, 0));
        assert!((d - mean).abs() <= mean * 1e-3);
        let mut y = vec![0f32; QK];
        dequantize_row(&q, &mut y);
        for (a, b) in x.iter().zip(&y) {
            // Zero counts as non-negative.
            assert_eq!(*a >= 0.0, *b > 0.0, "{a} vs {b}");
            assert_eq!(b.abs(), d);
        }
    }
}
