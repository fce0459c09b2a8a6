//! iq2_s: 256 elements per block, 82 bytes per block (2.5625 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u8; 32]` (low 8 bits of the grid index of each 8 elements),
//! `signs: [u8; 32]` (one explicit sign byte per 8 elements), `qh: [u8; 8]` (bits `2l..2l+2`
//! of `qh[g]` are bits 8–9 of the index of the `l`-th 8 in group `g`), `scales: [u8; 8]` (two
//! 4-bit scales per 32, as in iq2_xs). The index selects one of 1024 entries of
//! [`IQ2S_GRID`]. Element value: `d·(0.5+s)·0.25 · grid · sign`.

use super::blocks::BlockIq2S;
use super::iq_grids::{sign_factor, IQ2S_GRID};
use super::iq_lattice;
use super::iq_search::{
    fit_superblock, pack_scale_nibbles, sum_squares, superblock_quantizer, Fit, Refine, Scratch,
    Spec, ZeroTest,
};
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use std::mem::{offset_of, size_of};

/// Elements per block.
pub(crate) const QK: usize = 256;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockIq2S>();
/// Byte offset of `qs` in a block.
const QS: usize = offset_of!(BlockIq2S, qs);
/// Byte offset of `signs` in a block.
const SIGNS: usize = offset_of!(BlockIq2S, signs);
/// Byte offset of `qh` in a block.
const QH: usize = offset_of!(BlockIq2S, qh);
/// Byte offset of `scales` in a block.
const SCALES: usize = offset_of!(BlockIq2S, scales);

/// The search of `quantize_row_iq2_s_impl`.
const SPEC: Spec = Spec {
    n: 16,
    kmaxq: 3,
    steps: 9,
    step: 0.1,
    qp_start: false,
    zero: ZeroTest::Below(1e-8),
    parity_signs: false,
    init_on_grid: true,
    refine: Refine::OffGrid,
};

superblock_quantizer! {
    /// Quantizes one row (`quantize_iq2_s`).
    setup {
        let lat = iq_lattice::iq2s();
        let mut s = Scratch::new();
    }
    |v8, xbl, qw, y| {
        let sigma2 = 2.0 * sum_squares(xbl) / QK as f32;
        let plain = |sigma2: f32, x: f32| 0.25 * sigma2 + x * x;
        let store = |ib: usize, fit: &Fit| {
            for k in 0..2 {
                let i8 = 2 * ib + k;
                let g = fit.grid[k];
                y[QS + i8] = g as u8;
                y[QH + i8 / 4] |= ((g >> 8) << (2 * (i8 % 4))) as u8;
                y[SIGNS + i8] = fit.signs[k];
            }
        };
        let (scales, max_scale) =
            fit_superblock(v8, &SPEC, lat, xbl, qw, sigma2, plain, &mut s, store)?;
        if max_scale == 0.0 {
            return Ok(());
        }
        let d = max_scale / 31.0;
        put_u16(y, 0, f32_to_f16(d * 0.9875));
        pack_scale_nibbles(&mut y[SCALES..], d, &scales[..QK / SPEC.n]);
        Ok(())
    }
}

/// Dequantizes whole iq2_s blocks (`dequantize_row_iq2_s`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let sc = block[SCALES + g];
            let db = [
                d * (0.5 + (sc & 0xf) as f32) * 0.25,
                d * (0.5 + (sc >> 4) as f32) * 0.25,
            ];
            let qh = block[QH + g] as usize;
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let k = 4 * g + l;
                let index = block[QS + k] as usize | (((qh >> (2 * l)) & 3) << 8);
                let grid = &IQ2S_GRID[index];
                let signs = block[SIGNS + k];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db[l / 2] * grid[j] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
