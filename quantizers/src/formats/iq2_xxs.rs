//! iq2_xxs: 256 elements per block, 66 bytes per block (2.0625 bits per weight).
//!
//! Layout: `d: f16`, then 8 groups of 8 bytes, one per 32 elements. A group holds four grid
//! indices into [`IQ2XXS_GRID`] (bytes 0–3, one per 8 elements), then a little-endian u32
//! whose bits `7l..7l+7` are the sign index of the `l`-th 8 (into [`KSIGNS_IQ2XS`]) and whose
//! top 4 bits are the group scale `s`. Element value: `d·(0.5+s)·0.25 · grid · sign`.

use super::blocks::BlockIq2Xxs;
use super::iq_grids::{sign_factor, IQ2XXS_GRID, KSIGNS_IQ2XS};
use super::iq_lattice;
use super::iq_search::{
    fit_superblock, scale_code, sum_squares, superblock_quantizer, Fit, Refine, Scratch, Spec,
    ZeroTest,
};
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use crate::kquants::GROUP_MAX_EPS;
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 256;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockIq2Xxs>();

/// The search of `quantize_row_iq2_xxs_impl`.
const SPEC: Spec = Spec {
    n: 32,
    kmaxq: 3,
    steps: 6,
    step: 0.1,
    qp_start: true,
    zero: ZeroTest::Below(GROUP_MAX_EPS),
    parity_signs: true,
    init_on_grid: true,
    refine: Refine::Always,
};

superblock_quantizer! {
    /// Quantizes one row (`quantize_iq2_xxs`); the imatrix is required.
    setup {
        let lat = iq_lattice::iq2xxs();
        let mut s = Scratch::new();
    }
    |v8, xbl, qw, y| {
        let qw = qw.ok_or("iq2_xxs needs an importance matrix")?;
        let sigma2 = sum_squares(xbl) / QK as f32;
        let mut q2 = [0u32; 16];
        let store = |ib: usize, fit: &Fit| {
            for k in 0..4 {
                q2[2 * ib] |= (fit.grid[k] as u32) << (8 * k);
                q2[2 * ib + 1] |= (fit.signs[k] as u32) << (7 * k);
            }
        };
        let (scales, max_scale) =
            fit_superblock(v8, &SPEC, lat, xbl, Some(qw), sigma2, |_, _| 0.0, &mut s, store)?;
        if max_scale == 0.0 {
            return Ok(());
        }
        let d = max_scale / 31.0;
        put_u16(y, 0, f32_to_f16(d));
        let id = 1.0 / d;
        for (ib, &sc) in scales.iter().take(QK / SPEC.n).enumerate() {
            q2[2 * ib + 1] |= (scale_code(id, sc, 15) as u32) << 28;
        }
        for (out, w) in y[2..].chunks_exact_mut(4).zip(&q2) {
            out.copy_from_slice(&w.to_le_bytes());
        }
        Ok(())
    }
}

/// Dequantizes whole iq2_xxs blocks (`dequantize_row_iq2_xxs`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (group, y32) in block[2..].chunks_exact(8).zip(out.chunks_exact_mut(32)) {
            let aux = u32::from_le_bytes([group[4], group[5], group[6], group[7]]);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.25;
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let grid = &IQ2XXS_GRID[group[l] as usize];
                let signs = KSIGNS_IQ2XS[((aux >> (7 * l)) & 127) as usize];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db * grid[j] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
