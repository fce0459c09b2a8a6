//! iq4_xs: 256 elements per block, 136 bytes per block.
//!
//! Layout: `d: f16`, `scales_h: u16` (2 high bits per group), `scales_l[4]` (4 low bits per
//! group), `qs[128]` (per 32-value group, 16 bytes of IQ4_NL nibbles). Group `ib` has the 6-bit
//! scale `ls`, and its values are `d * (ls - 32) * KVALUES_IQ4NL[nibble]`.

use super::blocks::BlockIq4Xs;
use crate::common::{f16_to_f32, get_u16, put_u16};
use crate::formats::iq4_common::{quantize_superblock, KVALUES_IQ4NL};
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 256;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockIq4Xs>();

multiversion! {
    /// `quantize_iq4_xs` for one row.
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

#[inline(always)]
fn quantize_row_impl<S: V8>(s: S, src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) {
    for (ib, (x, y)) in src
        .chunks_exact(QK)
        .zip(dst.chunks_exact_mut(BLOCK_BYTES))
        .enumerate()
    {
        let qw = imatrix.map(|im| &im[ib * QK..(ib + 1) * QK]);
        let s = quantize_superblock(s, x, qw, &mut y[8..]);
        put_u16(y, 0, s.d);
        put_u16(y, 2, s.scales_h);
        y[4..8].copy_from_slice(&s.scales_l);
    }
}

/// `dequantize_row_iq4_xs`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(b, 0));
        let scales_h = get_u16(b, 2);
        let scales_l = &b[4..8];
        for (ib, (qs, yg)) in b[8..]
            .chunks_exact(16)
            .zip(y.chunks_exact_mut(32))
            .enumerate()
        {
            let ls = ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) as i32
                | (((scales_h >> (2 * ib)) & 3) << 4) as i32;
            let dl = d * (ls - 32) as f32;
            for (j, &q) in qs.iter().enumerate() {
                yg[j] = dl * KVALUES_IQ4NL[(q & 0xf) as usize] as f32;
                yg[j + 16] = dl * KVALUES_IQ4NL[(q >> 4) as usize] as f32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as f32 * 0.3917).cos() * (1.0 + (i / 32) as f32)) - 0.2)
            .collect()
    }

    #[test]
    fn round_trip_error_is_small() {
        let x = sample(QK * 4);
        let mut q = vec![0u8; 4 * BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mut y = vec![0f32; x.len()];
        dequantize_row(&q, &mut y);
        for (xg, yg) in x.chunks(32).zip(y.chunks(32)) {
            let amax = xg.iter().fold(0f32, |m, v| m.max(v.abs()));
            for (a, b) in xg.iter().zip(yg) {
                assert!((a - b).abs() <= 0.2 * amax, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn scale_bits_round_trip() {
        // Groups of very different magnitude exercise the 6-bit sub-scales.
        let x: Vec<f32> = (0..QK)
            .map(|i| ((i % 13) as f32 - 6.0) * (1 << (i / 32)) as f32)
            .collect();
        let im = vec![1.0f32; QK];
        let mut q = vec![0u8; BLOCK_BYTES];
        quantize_row(&x, &mut q, Some(&im));
        let mut y = vec![0f32; QK];
        dequantize_row(&q, &mut y);
        let (xl, yl) = (&x[224..], &y[224..]);
        for (a, b) in xl.iter().zip(yl) {
            assert!((a - b).abs() <= 0.15 * 6.0 * 128.0, "{a} vs {b}");
        }
    }
}
