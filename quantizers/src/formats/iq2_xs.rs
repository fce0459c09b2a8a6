//! iq2_xs: 256 elements per block, 74 bytes per block (2.3125 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u16; 32]`, `scales: [u8; 8]`. Each `qs` entry covers 8 elements:
//! its low 9 bits index [`IQ2XS_GRID`], its top 7 bits are a sign index into [`KSIGNS_IQ2XS`].
//! `scales[g]` holds two 4-bit scales for the 32 elements of group `g`: the low nibble for
//! the first 16, the high nibble for the last 16. Element value: `d·(0.5+s)·0.25 · grid · sign`.

use super::blocks::BlockIq2Xs;
use super::iq_grids::{sign_factor, IQ2XS_GRID, KSIGNS_IQ2XS};
use super::iq_lattice;
use super::iq_search::{
    fit_superblock, pack_scale_nibbles, sum_squares, superblock_quantizer, Fit, Refine, Scratch,
    Spec, ZeroTest,
};
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use crate::kquants::GROUP_MAX_EPS;
use std::mem::{offset_of, size_of};

/// Elements per block.
pub(crate) const QK: usize = 256;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockIq2Xs>();
/// Byte offset of `scales`.
const SCALES: usize = offset_of!(BlockIq2Xs, scales);

/// The search of `quantize_row_iq2_xs_impl`.
const SPEC: Spec = Spec {
    n: 16,
    kmaxq: 3,
    steps: 9,
    step: 0.1,
    qp_start: false,
    zero: ZeroTest::Below(GROUP_MAX_EPS),
    parity_signs: true,
    init_on_grid: true,
    refine: Refine::OffGrid,
};

superblock_quantizer! {
    /// Quantizes one row (`quantize_iq2_xs`); the imatrix is required.
    setup {
        let lat = iq_lattice::iq2xs();
        let mut s = Scratch::new();
    }
    |v8, xbl, qw, y| {
        let qw = qw.ok_or("iq2_xs needs an importance matrix")?;
        let sigma2 = sum_squares(xbl) / QK as f32;
        let mut q2 = [0u16; 32];
        let store = |ib: usize, fit: &Fit| {
            for k in 0..2 {
                q2[2 * ib + k] = fit.grid[k] | ((fit.signs[k] as u16) << 9);
            }
        };
        let (scales, max_scale) =
            fit_superblock(v8, &SPEC, lat, xbl, Some(qw), sigma2, |_, _| 0.0, &mut s, store)?;
        if max_scale == 0.0 {
            return Ok(());
        }
        let d = max_scale / 31.0;
        put_u16(y, 0, f32_to_f16(d));
        pack_scale_nibbles(&mut y[SCALES..], d, &scales[..QK / SPEC.n]);
        for (k, w) in q2.iter().enumerate() {
            put_u16(y, 2 + 2 * k, *w);
        }
        Ok(())
    }
}

/// Dequantizes whole iq2_xs blocks (`dequantize_row_iq2_xs`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let sc = block[SCALES + g];
            let db = [
                d * (0.5 + (sc & 0xf) as f32) * 0.25,
                d * (0.5 + (sc >> 4) as f32) * 0.25,
            ];
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let q = get_u16(block, 2 + 2 * (4 * g + l));
                let grid = &IQ2XS_GRID[(q & 511) as usize];
                let signs = KSIGNS_IQ2XS[(q >> 9) as usize];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db[l / 2] * grid[j] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
