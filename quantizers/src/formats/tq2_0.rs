//! tq2_0: 256 elements per block, 66 bytes per block (ternary, 2.0625 bits per weight).
//!
//! Layout: `qs[64]`, then `d: f16` (the scale comes last). Byte `32c + m` holds, at bits
//! `2n`, the code `t + 1` (t ∈ {-1, 0, 1}) of element `128c + 32n + m`. Value = `(code - 1) * d`.

use super::blocks::BlockTq2_0;
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use crate::formats::tq1_0::{ternary_codes, ternary_scale};
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 256;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockTq2_0>();

multiversion! {
    /// `quantize_row_tq2_0_ref` (the imatrix is ignored).
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

#[inline(always)]
fn quantize_row_impl<S: V8>(_: S, src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    for (x, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let (d, id) = ternary_scale(x);
        let mut q = [0u8; QK];
        ternary_codes(x, id, &mut q);
        for (qc, yc) in q.chunks_exact(128).zip(y[..64].chunks_exact_mut(32)) {
            for (m, byte) in yc.iter_mut().enumerate() {
                // The C code adds the 2-bit fields; they do not overlap, so this is an OR.
                *byte = (qc[m] & 3)
                    | ((qc[m + 32] & 3) << 2)
                    | ((qc[m + 64] & 3) << 4)
                    | ((qc[m + 96] & 3) << 6);
            }
        }
        put_u16(y, 64, f32_to_f16(d));
    }
}

/// `dequantize_row_tq2_0`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(b, 64));
        for (qc, yc) in b[..64].chunks_exact(32).zip(y.chunks_exact_mut(128)) {
            for (l, yl) in yc.chunks_exact_mut(32).enumerate() {
                for (v, &byte) in yl.iter_mut().zip(qc) {
                    let q = ((byte >> (2 * l)) & 3) as i8;
                    *v = (q - 1) as f32 * d;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ternary_round_trip_is_exact() {
        let x: Vec<f32> = (0..QK * 2)
            .map(|i| [-0.25f32, 0.0, 0.25][(i * 5 + i / 7) % 3])
            .collect();
        let mut q = vec![0u8; 2 * BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mut y = vec![0f32; x.len()];
        dequantize_row(&q, &mut y);
        assert_eq!(x, y);
    }

    #[test]
    fn halfway_rounds_away_from_zero() {
        let mut x = vec![0f32; QK];
        x[0] = 2.0;
        x[1] = 1.0; // 0.5 → 1
        x[2] = -1.0; // -0.5 → -1
        x[3] = 0.99; // → 0
        let mut q = vec![0u8; BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        let mut y = vec![0f32; QK];
        dequantize_row(&q, &mut y);
        assert_eq!(&y[..4], &[2.0, 2.0, -2.0, 0.0]);
    }
}
