//! iq1_s: 256 elements per block, 50 bytes per block (1.5625 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u8; 32]` (low 8 bits of one [`IQ1S_GRID`] index per 8 elements),
//! `qh: [u16; 8]`, one per 32 elements: bits `3l..3l+3` are the high 3 bits of the `l`-th
//! index, bits 12–14 the group scale `s`, bit 15 the sign of the delta. Element value:
//! `d·(2s+1) · (grid ± IQ1S_DELTA)`.

use super::blocks::BlockIq1S;
use super::iq1_search::{best_neighbour2, merge_sort};
use super::iq_grids::{IQ1S_DELTA, IQ1S_GRID};
use super::iq_lattice;
use super::iq_search::{cmax, scale_code, sum_squares, superblock_quantizer};
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use std::mem::{offset_of, size_of};

/// Elements per block.
pub(crate) const QK: usize = 256;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockIq1S>();
/// Byte offset of `qs` in a block.
const QS: usize = offset_of!(BlockIq1S, qs);
/// Byte offset of `qh` in a block.
const QH: usize = offset_of!(BlockIq1S, qh);

/// Groups with a largest magnitude below this are stored as zero.
const GROUP_MAX_EPS_IQ1_S: f32 = 1e-12;

/// The three levels with a positive delta (`code − 1 + δ`).
const X_P: [f32; 3] = [-1.0 + IQ1S_DELTA, IQ1S_DELTA, 1.0 + IQ1S_DELTA];
/// The three levels with a negative delta (`code − 1 − δ`).
const X_M: [f32; 3] = [-1.0 - IQ1S_DELTA, -IQ1S_DELTA, 1.0 - IQ1S_DELTA];

/// The best split of a sorted 32-value group: the values before `i1` get code 0, those
/// before `i2` code 1, the rest code 2; `shift` is the delta's sign. `None` if no split has
/// a positive finite fit.
#[inline(always)]
fn best_split(sumx: &[f32; 33], sumw: &[f32; 33], max: f32) -> Option<(usize, usize, i8, f32)> {
    let n = 32;
    let mut best_score = -f32::MAX;
    let mut scale = max;
    let mut best = None;
    // Per delta sign, for every i2 of the current i1: Σqx, Σq², (Σqx)². Computed first for
    // all i2 at once (independent, so vectorised), then scanned in the reference's order.
    let (mut qx, mut q2, mut sq) = ([[0f32; 33]; 2], [[0f32; 33]; 2], [[0f32; 33]; 2]);
    // The third terms depend on i2 only.
    let (mut tx, mut tw) = ([[0f32; 33]; 2], [[0f32; 33]; 2]);
    for (h, xs) in [&X_P, &X_M].into_iter().enumerate() {
        for i2 in 0..=n {
            tx[h][i2] = (sumx[n] - sumx[i2]) * xs[2];
            tw[h][i2] = (sumw[n] - sumw[i2]) * xs[2] * xs[2];
        }
    }
    for i1 in 0..=n {
        for (h, xs) in [&X_P, &X_M].into_iter().enumerate() {
            let a = (sumx[i1] - sumx[0]) * xs[0];
            let aw = (sumw[i1] - sumw[0]) * xs[0] * xs[0];
            let (x1, w1) = (sumx[i1], sumw[i1]);
            let (qx, q2, sq) = (&mut qx[h][i1..], &mut q2[h][i1..], &mut sq[h][i1..]);
            let (sx, sw) = (&sumx[i1..], &sumw[i1..]);
            let (tx, tw) = (&tx[h][i1..], &tw[h][i1..]);
            for j in 0..=n - i1 {
                let v = a + (sx[j] - x1) * xs[1] + tx[j];
                let w = aw + (sw[j] - w1) * xs[1] * xs[1] + tw[j];
                qx[j] = v;
                q2[j] = w;
                sq[j] = v * v;
            }
        }
        for i2 in i1..=n {
            for (h, shift) in [(0, 1i8), (1, -1)] {
                let sumq2 = q2[h][i2];
                if sumq2 > 0.0 && sq[h][i2] > best_score * sumq2 {
                    scale = qx[h][i2] / sumq2;
                    best_score = scale * qx[h][i2];
                    best = Some((i1, i2, shift));
                }
            }
        }
    }
    best.map(|(i1, i2, shift)| (i1, i2, shift, scale))
}

superblock_quantizer! {
    /// Quantizes one row (`quantize_iq1_s`); the imatrix is required.
    setup {
        let lat = iq_lattice::iq1s();
        let mut weight = [0f32; 32];
        let mut pairs = [(0f32, 0u8); 32];
        let mut tmp = [(0f32, 0u8); 32];
        let mut l = [0i8; 32];
    }
    |v8, xbl, qw, y| {
        let qw = qw.ok_or("iq1_s needs an importance matrix")?;
        let sigma2 = 2.0 * sum_squares(xbl) / QK as f32;
        let mut scales = [0f32; 8];
        let mut shifts = [1i8; 8];
        let mut max_scale = 0f32;
        for (ib, xb) in xbl.chunks_exact(32).enumerate() {
            for ((w, &q), &x) in weight.iter_mut().zip(&qw[32 * ib..]).zip(xb) {
                *w = q * (sigma2 + x * x).sqrt();
            }
            let max = xb[1..].iter().fold(xb[0].abs(), |m, &v| cmax(m, v.abs()));
            if max < GROUP_MAX_EPS_IQ1_S {
                continue;
            }
            for (j, (p, &x)) in pairs.iter_mut().zip(xb).enumerate() {
                *p = (x, j as u8);
            }
            merge_sort(&mut pairs, &mut tmp);
            let (mut sumx, mut sumw) = ([0f32; 33], [0f32; 33]);
            for (j, &(_, i)) in pairs.iter().enumerate() {
                let i = i as usize;
                sumx[j + 1] = sumx[j] + weight[i] * xb[i];
                sumw[j + 1] = sumw[j] + weight[i];
            }
            let Some((i1, i2, mut shift, mut scale)) = best_split(&sumx, &sumw, max) else {
                continue;
            };
            for (j, &(_, i)) in pairs.iter().enumerate() {
                l[i as usize] = if j < i1 {
                    0
                } else if j < i2 {
                    1
                } else {
                    2
                };
            }
            if scale < 0.0 {
                for v in l.iter_mut() {
                    *v = 2 - *v;
                }
                scale = -scale;
                shift = -shift;
            }
            let xx = if shift == 1 { &X_P } else { &X_M };
            let mut all_on_grid = true;
            let mut index = [0u16; 4];
            for (k, idx) in index.iter_mut().enumerate() {
                let lk = &mut l[8 * k..8 * k + 8];
                *idx = match lat.lookup(lk) {
                    Ok(g) => g,
                    Err(list) => {
                        all_on_grid = false;
                        let w = &weight[8 * k..8 * k + 8];
                        best_neighbour2(
                            v8,
                            lat,
                            list,
                            xbl,
                            32 * ib + 8 * k,
                            w,
                            scale,
                            xx,
                            lk,
                            2048,
                        )
                        .ok_or("no grid neighbour has a finite error")?
                    }
                };
            }
            if !all_on_grid {
                let (mut sumqx, mut sumq2) = (0f32, 0f32);
                for (k, &g) in index.iter().enumerate() {
                    let pg = lat.coords(g);
                    for j in 0..8 {
                        let w = weight[8 * k + j];
                        let q = xx[((pg[j] - 1) / 2) as usize];
                        sumqx += w * q * xb[8 * k + j];
                        sumq2 += w * q * q;
                    }
                }
                if sumqx > 0.0 && sumq2 > 0.0 {
                    scale = sumqx / sumq2;
                }
            }
            let mut h = 0u16;
            for (k, &g) in index.iter().enumerate() {
                y[QS + 4 * ib + k] = g as u8;
                h |= (g >> 8) << (3 * k);
            }
            put_u16(y, QH + 2 * ib, h);
            if scale.is_nan() || scale < 0.0 {
                return Err("the fitted scale is NaN");
            }
            scales[ib] = scale;
            shifts[ib] = shift;
            max_scale = cmax(max_scale, scale);
        }
        if max_scale == 0.0 {
            return Ok(());
        }
        let d = max_scale / 15.0;
        put_u16(y, 0, f32_to_f16(d * 1.125));
        let id = 1.0 / d;
        for (ib, (&sc, &shift)) in scales.iter().zip(&shifts).enumerate() {
            let mut code = scale_code(id, sc, 7) as u16;
            if shift == -1 {
                code |= 8;
            }
            let h = get_u16(y, QH + 2 * ib) | (code << 12);
            put_u16(y, QH + 2 * ib, h);
        }
        Ok(())
    }
}

/// Dequantizes whole iq1_s blocks (`dequantize_row_iq1_s`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let qh = get_u16(block, QH + 2 * g) as usize;
            let dl = d * (2 * ((qh >> 12) & 7) + 1) as f32;
            let delta = if qh & 0x8000 != 0 {
                -IQ1S_DELTA
            } else {
                IQ1S_DELTA
            };
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let index = block[QS + 4 * g + l] as usize | (((qh >> (3 * l)) & 7) << 8);
                let grid = &IQ1S_GRID[index];
                for (y, &v) in y8.iter_mut().zip(grid) {
                    *y = dl * (v as f32 + delta);
                }
            }
        }
    }
}
