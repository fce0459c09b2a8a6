//! iq4_nl: 32 elements per block, 18 bytes per block.
//!
//! Layout: `d: f16`, then `qs[16]` (element `j` in the low nibble of byte `j`, element
//! `16 + j` in its high nibble). Value = `d * KVALUES_IQ4NL[nibble]`.

use super::blocks::BlockIq4Nl;
use crate::common::{f16_to_f32, get_u16, put_u16};
use crate::formats::iq4_common::{quantize_superblock, KVALUES_IQ4NL};
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 32;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockIq4Nl>();

multiversion! {
    /// `quantize_iq4_nl` for one row: each 32-value block is its own super-block.
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
        let s = quantize_superblock(s, x, qw, &mut y[2..]);
        put_u16(y, 0, s.d);
    }
}

/// `dequantize_row_iq4_nl`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(b, 0));
        for (j, &q) in b[2..].iter().enumerate() {
            y[j] = d * KVALUES_IQ4NL[(q & 0xf) as usize] as f32;
            y[j + QK / 2] = d * KVALUES_IQ4NL[(q >> 4) as usize] as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as f32 * 0.7331).sin() * 3.0) + (i % 7) as f32 * 0.1 - 0.3)
            .collect()
    }

    #[test]
    fn round_trip_error_is_small() {
        let x = sample(32 * 16);
        let mut q = vec![0u8; 16 * BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mut y = vec![0f32; x.len()];
        dequantize_row(&q, &mut y);
        for (xb, yb) in x.chunks(QK).zip(y.chunks(QK)) {
            let amax = xb.iter().fold(0f32, |m, v| m.max(v.abs()));
            for (a, b) in xb.iter().zip(yb) {
                assert!((a - b).abs() <= 0.15 * amax, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn imatrix_path_runs_and_round_trips() {
        let x = sample(64);
        let im: Vec<f32> = (0..64).map(|i| 0.5 + (i % 5) as f32).collect();
        let mut q = vec![0u8; 2 * BLOCK_BYTES];
        quantize_row(&x, &mut q, Some(&im));
        let mut y = vec![0f32; 64];
        dequantize_row(&q, &mut y);
        for (a, b) in x.iter().zip(&y) {
            assert!((a - b).abs() < 0.5, "{a} vs {b}");
        }
    }
}
