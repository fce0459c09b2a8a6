//! iq3_xxs: 256 elements per block, 98 bytes per block (3.0625 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u8; 64]` (one [`IQ3XXS_GRID`] index per 4 elements), then eight
//! little-endian u32, one per 32 elements: bits `7l..7l+7` are the sign index (into
//! [`KSIGNS_IQ2XS`]) of the `l`-th 8 elements, the top 4 bits the group scale `s`.
//! Element value: `d·(0.5+s)·0.5 · grid · sign`.

use super::blocks::BlockIq3Xxs;
use super::iq_grids::{sign_factor, IQ3XXS_GRID, KSIGNS_IQ2XS};
use super::iq_lattice;
use super::iq_search::{
    fit_superblock, scale_code, sum_squares, superblock_quantizer, Fit, Refine, Scratch, Spec,
    ZeroTest,
};
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use std::mem::{offset_of, size_of};

/// Elements per block.
pub(crate) const QK: usize = 256;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockIq3Xxs>();
/// Byte offset of `qs` in a block.
const QS: usize = offset_of!(BlockIq3Xxs, qs);
/// Byte offset of `scales_and_signs` in a block.
const SCALES_AND_SIGNS: usize = offset_of!(BlockIq3Xxs, scales_and_signs);

/// The search of `quantize_row_iq3_xxs_impl`.
const SPEC: Spec = Spec {
    n: 32,
    kmaxq: 8,
    steps: 15,
    step: 0.2,
    qp_start: false,
    zero: ZeroTest::Below(1e-8),
    parity_signs: true,
    init_on_grid: true,
    refine: Refine::OffGrid,
};

/// The importance of a value without an imatrix: `x²` (shared with iq3_s).
pub(crate) fn squared(_sigma2: f32, x: f32) -> f32 {
    x * x
}

superblock_quantizer! {
    /// Quantizes one row (`quantize_iq3_xxs`).
    setup {
        let lat = iq_lattice::iq3xxs();
        let mut s = Scratch::new();
    }
    |v8, xbl, qw, y| {
        let sigma2 = 2.0 * sum_squares(xbl) / QK as f32;
        let mut sas = [0u32; 8];
        let store = |ib: usize, fit: &Fit| {
            for k in 0..8 {
                y[QS + 8 * ib + k] = fit.grid[k] as u8;
            }
            sas[ib] = fit.signs[0] as u32
                | (fit.signs[1] as u32) << 7
                | (fit.signs[2] as u32) << 14
                | (fit.signs[3] as u32) << 21;
        };
        let (scales, max_scale) =
            fit_superblock(v8, &SPEC, lat, xbl, qw, sigma2, squared, &mut s, store)?;
        if max_scale == 0.0 {
            y.fill(0);
            return Ok(());
        }
        let d = max_scale / 31.0;
        put_u16(y, 0, f32_to_f16(d * 1.0125));
        let id = 1.0 / d;
        for (ib, &sc) in scales.iter().take(QK / SPEC.n).enumerate() {
            sas[ib] |= (scale_code(id, sc, 15) as u32) << 28;
            y[SCALES_AND_SIGNS + 4 * ib..SCALES_AND_SIGNS + 4 * ib + 4]
                .copy_from_slice(&sas[ib].to_le_bytes());
        }
        Ok(())
    }
}

/// Dequantizes whole iq3_xxs blocks (`dequantize_row_iq3_xxs`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let at = SCALES_AND_SIGNS + 4 * g;
            let aux = u32::from_le_bytes([block[at], block[at + 1], block[at + 2], block[at + 3]]);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let signs = KSIGNS_IQ2XS[((aux >> (7 * l)) & 127) as usize];
                let q = QS + 8 * g + 2 * l;
                let halves = [
                    &IQ3XXS_GRID[block[q] as usize],
                    &IQ3XXS_GRID[block[q + 1] as usize],
                ];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db * halves[j / 4][j % 4] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
