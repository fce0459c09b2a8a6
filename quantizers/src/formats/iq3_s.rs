//! iq3_s: 256 elements per block, 110 bytes per block (3.4375 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u8; 64]` (low 8 bits of one [`IQ3S_GRID`] index per 4 elements),
//! `qh: [u8; 8]` (bit `k` of `qh[g]` is bit 8 of the `k`-th index of group `g`), `signs:
//! [u8; 32]` (one explicit sign byte per 8 elements), `scales: [u8; 4]` (two 4-bit scales per
//! 64 elements: low nibble for the first 32). Element value: `d·(1+2s) · grid · sign`.

use super::blocks::BlockIq3S;
use super::iq3_xxs::squared;
use super::iq_grids::{sign_factor, IQ3S_GRID};
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
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockIq3S>();
/// Byte offset of `qs` in a block.
const QS: usize = offset_of!(BlockIq3S, qs);
/// Byte offset of `qh` in a block.
const QH: usize = offset_of!(BlockIq3S, qh);
/// Byte offset of `signs` in a block.
const SIGNS: usize = offset_of!(BlockIq3S, signs);
/// Byte offset of `scales` in a block.
const SCALES: usize = offset_of!(BlockIq3S, scales);

/// The search of `quantize_row_iq3_s_impl`.
const SPEC: Spec = Spec {
    n: 32,
    kmaxq: 8,
    steps: 9,
    step: 0.2,
    qp_start: false,
    zero: ZeroTest::IsZero,
    parity_signs: false,
    init_on_grid: false,
    refine: Refine::AllIfAnyOff,
};

superblock_quantizer! {
    /// Quantizes one row (`quantize_iq3_s`).
    ///
    /// As in llama.cpp, the grid indices and signs of a group are stored after those of the
    /// previous *non-zero* groups: an all-zero group takes no `qs` or `signs` space (its `qh`
    /// bits and scale keep their own positions).
    setup {
        let lat = iq_lattice::iq3s();
        let mut s = Scratch::new();
    }
    |v8, xbl, qw, y| {
        let sigma2 = 2.0 * sum_squares(xbl) / QK as f32;
        let mut stored = 0;
        let store = |ib: usize, fit: &Fit| {
            for k in 0..8 {
                let g = fit.grid[k];
                y[QS + 8 * stored + k] = g as u8;
                y[QH + ib] |= ((g >> 8) << k) as u8;
            }
            y[SIGNS + 4 * stored..SIGNS + 4 * stored + 4].copy_from_slice(&fit.signs);
            stored += 1;
        };
        let (scales, max_scale) =
            fit_superblock(v8, &SPEC, lat, xbl, qw, sigma2, squared, &mut s, store)?;
        if max_scale == 0.0 {
            return Ok(());
        }
        let d = max_scale / 31.0;
        put_u16(y, 0, f32_to_f16(d * 1.033));
        pack_scale_nibbles(&mut y[SCALES..], d, &scales[..QK / SPEC.n]);
        Ok(())
    }
}

/// Dequantizes whole iq3_s blocks (`dequantize_row_iq3_s`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let nibble = (block[SCALES + g / 2] >> (4 * (g % 2))) & 0xf;
            let db = d * (1 + 2 * nibble as i32) as f32;
            let qh = block[QH + g] as usize;
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let k = 2 * l;
                let q = QS + 8 * g + k;
                let index = |h: usize| block[q + h] as usize | (((qh >> (k + h)) & 1) << 8);
                let halves = [&IQ3S_GRID[index(0)], &IQ3S_GRID[index(1)]];
                let signs = block[SIGNS + 4 * g + l];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db * halves[j / 4][j % 4] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
