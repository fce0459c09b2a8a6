//! q8_K: 256 elements, 292 bytes per block. ggml's intermediate dot-product format, never
//! written by llama-quantize (`quantize_row_q8_K_ref` / `dequantize_row_q8_K`).
//!
//! Layout: `d: f32` (bytes 0–3), `qs[256]: i8` (4–259), `bsums[16]: i16` (260–291, the sum
//! of each group of 16 quants).

use super::blocks::BlockQ8K;
use crate::common::nearest_int;
use std::mem::size_of;

pub(crate) const QK: usize = 256;
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ8K>();

pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    for (x, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        quantize_block(x, y);
    }
}

fn quantize_block(x: &[f32], y: &mut [u8]) {
    let (mut max, mut amax) = (0.0f32, 0.0f32);
    for &v in x {
        if v.abs() > amax {
            amax = v.abs();
            max = v;
        }
    }
    if amax == 0.0 {
        // ggml leaves `bsums` unwritten here; we write zeros (the buffer is ours to define).
        y.fill(0);
        return;
    }
    let iscale = -127.0f32 / max;
    let (d, rest) = y.split_at_mut(4);
    let (qs, bsums) = rest.split_at_mut(QK);
    for (q, &v) in qs.iter_mut().zip(x) {
        *q = nearest_int(iscale * v).min(127) as i8 as u8;
    }
    for (group, out) in qs.chunks_exact(16).zip(bsums.chunks_exact_mut(2)) {
        let sum: i32 = group.iter().map(|&q| q as i8 as i32).sum();
        out.copy_from_slice(&(sum as i16).to_le_bytes());
    }
    d.copy_from_slice(&(1.0f32 / iscale).to_le_bytes());
}

pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (x, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f32::from_le_bytes([x[0], x[1], x[2], x[3]]);
        for (o, &q) in y.iter_mut().zip(&x[4..4 + QK]) {
            *o = d * (q as i8) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_error_is_within_half_a_step() {
        let x: Vec<f32> = (0..512)
            .map(|i| ((i * 7919 % 1000) as f32 - 500.0) * 0.01)
            .collect();
        let mut q = vec![0u8; 2 * BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mut y = vec![0f32; 512];
        dequantize_row(&q, &mut y);
        for (blk_x, blk_y) in x.chunks(QK).zip(y.chunks(QK)) {
            let amax = blk_x.iter().fold(0f32, |m, v| m.max(v.abs()));
            for (a, b) in blk_x.iter().zip(blk_y) {
                assert!((a - b).abs() <= amax / 127.0 * 0.5 + 1e-6);
            }
        }
        // bsums are the group sums of the quants.
        let s0: i32 = q[4..20].iter().map(|&b| b as i8 as i32).sum();
        assert_eq!(i16::from_le_bytes([q[260], q[261]]) as i32, s0);
    }
}
