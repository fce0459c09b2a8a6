//! iq1_s: 256 elements per block, 50 bytes per block (1.5625 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u8; 32]` (low 8 bits of one [`IQ1S_GRID`] index per 8 elements),
//! `qh: [u16; 8]`, one per 32 elements: bits `3l..3l+3` are the high 3 bits of the `l`-th
//! index, bits 12–14 the group scale `s`, bit 15 the sign of the delta. Element value:
//! `d·(2s+1) · (grid ± IQ1S_DELTA)`.

use super::blocks::BlockIq1S;
use super::iq1_search::{best_neighbour2, sort_group};
use super::iq_grids::{IQ1S_DELTA, IQ1S_GRID};
use super::iq_lattice;
use super::iq_search::{cmax, scale_code, sum_squares, superblock_quantizer};
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use crate::simd::V8;
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
///
/// For each `i1`, eight `i2` at a time are scored for both delta signs in a vector (each
/// lane with the reference's operations); a block in which no split beats the best so far
/// leaves the best unchanged and is skipped, any other is scanned in the reference's order.
#[inline(always)]
fn best_split<S: V8>(
    v8: S,
    sumx: &[f32; 33],
    sumw: &[f32; 33],
    max: f32,
) -> Option<(usize, usize, i8, f32)> {
    const N: usize = 32;
    let mut best_score = -f32::MAX;
    let mut scale = max;
    let mut best = None;
    // The prefix sums padded so that eight can be loaded from any i2 ≤ N.
    let (mut px, mut pw) = ([0f32; N + 8], [0f32; N + 8]);
    px[..=N].copy_from_slice(sumx);
    pw[..=N].copy_from_slice(sumw);
    let zero = v8.splat(0.0);
    let (mut qx, mut q2, mut sq) = ([[0f32; 8]; 2], [[0f32; 8]; 2], [[0f32; 8]; 2]);
    for i1 in 0..=N {
        let (x1, w1) = (v8.splat(sumx[i1]), v8.splat(sumw[i1]));
        for i2 in (i1..=N).step_by(8) {
            let x2 = v8.load(px[i2..i2 + 8].try_into().expect("8 values"));
            let w2 = v8.load(pw[i2..i2 + 8].try_into().expect("8 values"));
            let bs = v8.splat(best_score);
            let mut pass = 0;
            for (h, xs) in [&X_P, &X_M].into_iter().enumerate() {
                let (c0, c1, c2) = (v8.splat(xs[0]), v8.splat(xs[1]), v8.splat(xs[2]));
                let a = v8.mul(v8.splat(sumx[i1] - sumx[0]), c0);
                let aw = v8.mul(v8.mul(v8.splat(sumw[i1] - sumw[0]), c0), c0);
                let tx = v8.mul(v8.sub(v8.splat(sumx[N]), x2), c2);
                let tw = v8.mul(v8.mul(v8.sub(v8.splat(sumw[N]), w2), c2), c2);
                let v = v8.add(v8.add(a, v8.mul(v8.sub(x2, x1), c1)), tx);
                let w = v8.add(v8.add(aw, v8.mul(v8.mul(v8.sub(w2, w1), c1), c1)), tw);
                let vv = v8.mul(v, v);
                pass |= v8.mask_bits(v8.and(v8.lt(zero, w), v8.lt(v8.mul(bs, w), vv)));
                qx[h] = v8.to_array(v);
                q2[h] = v8.to_array(w);
                sq[h] = v8.to_array(vv);
            }
            let count = (N + 1 - i2).min(8);
            if pass & ((1 << count) - 1) == 0 {
                continue;
            }
            for j in 0..count {
                for (h, shift) in [(0, 1i8), (1, -1)] {
                    let sumq2 = q2[h][j];
                    if sumq2 > 0.0 && sq[h][j] > best_score * sumq2 {
                        scale = qx[h][j] / sumq2;
                        best_score = scale * qx[h][j];
                        best = Some((i1, i2 + j, shift));
                    }
                }
            }
        }
    }
    best.map(|(i1, i2, shift)| (i1, i2, shift, scale))
}

/// What the first pass over a super-block keeps of a group for the second: the delta's sign
/// and the scale of its split, and per 8 values the grid index or the neighbour list to
/// search.
#[derive(Clone, Copy)]
struct Fit {
    shift: i8,
    scale: f32,
    points: [Result<u16, usize>; 4],
}

superblock_quantizer! {
    /// Quantizes one row (`quantize_iq1_s`); the imatrix is required.
    ///
    /// Two passes per super-block, as in iq1_m: the first sorts each group, finds its split
    /// and looks its points up, asking for the neighbour lists of the points off the grid
    /// to be fetched into the cache; the second runs the neighbour searches and the refits.
    /// No group's search depends on another's, so the results are the reference's.
    setup {
        let lat = iq_lattice::iq1s();
        let mut weight = [0f32; QK];
        let mut pairs = [(0f32, 0u8); 32];
        let mut tmp = [(0f32, 0u8); 32];
        let mut l = [0i8; 32];
        let mut fits: [Option<Fit>; QK / 32] = [None; QK / 32];
    }
    |v8, xbl, qw, y| {
        let qw = qw.ok_or("iq1_s needs an importance matrix")?;
        let sigma2 = 2.0 * sum_squares(xbl) / QK as f32;
        let mut scales = [0f32; 8];
        let mut shifts = [1i8; 8];
        let mut max_scale = 0f32;
        for (ib, xb) in xbl.chunks_exact(32).enumerate() {
            fits[ib] = None;
            let weight = &mut weight[32 * ib..32 * ib + 32];
            for ((w, &q), &x) in weight.iter_mut().zip(&qw[32 * ib..]).zip(xb) {
                *w = q * (sigma2 + x * x).sqrt();
            }
            let max = xb[1..].iter().fold(xb[0].abs(), |m, &v| cmax(m, v.abs()));
            if max < GROUP_MAX_EPS_IQ1_S {
                continue;
            }
            sort_group(v8, xb, &mut pairs, &mut tmp);
            let (mut sumx, mut sumw) = ([0f32; 33], [0f32; 33]);
            for (j, &(_, i)) in pairs.iter().enumerate() {
                let i = i as usize;
                sumx[j + 1] = sumx[j] + weight[i] * xb[i];
                sumw[j + 1] = sumw[j] + weight[i];
            }
            let Some((i1, i2, mut shift, mut scale)) = best_split(v8, &sumx, &sumw, max) else {
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
            let points: [Result<u16, usize>; 4] =
                std::array::from_fn(|k| lat.lookup(&l[8 * k..8 * k + 8]));
            for p in points {
                if let Err(list) = p {
                    lat.prefetch(list);
                }
            }
            fits[ib] = Some(Fit { shift, scale, points });
        }
        for (ib, xb) in xbl.chunks_exact(32).enumerate() {
            let Some(Fit { shift, mut scale, points }) = fits[ib] else {
                continue;
            };
            let weight = &weight[32 * ib..32 * ib + 32];
            let xx = if shift == 1 { &X_P } else { &X_M };
            let mut index = [0u16; 4];
            for (k, idx) in index.iter_mut().enumerate() {
                *idx = match points[k] {
                    Ok(g) => g,
                    Err(list) => {
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
                            &mut l[..8],
                            2048,
                        )
                        .ok_or("no grid neighbour has a finite error")?
                    }
                };
            }
            if points.iter().any(|p| p.is_err()) {
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
