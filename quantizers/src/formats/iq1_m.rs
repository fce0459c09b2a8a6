//! iq1_m: 256 elements per block, 56 bytes per block (1.75 bits per weight).
//!
//! Layout: `qs: [u8; 32]` (low 8 bits of one [`IQ1S_GRID`] index per 8 elements), `qh: [u8;
//! 16]` (one nibble per 8 elements: bits 0–2 the high index bits, bit 3 the delta sign),
//! `scales: [u8; 8]` read as four little-endian u16 `sc`. Each `sc[k]` holds four 3-bit
//! scales in bits 0–11 (two per 32 elements: the first and second 16) and, in its top nibble,
//! nibble `k` of the block's f16 super-scale `d` (there is no separate `d` field). Element
//! value: `d·(2s+1) · (grid ± IQ1S_DELTA)`.

use super::blocks::BlockIq1M;
use super::iq1_search::{best_neighbour2, merge_sort};
use super::iq_grids::{IQ1M_DELTA, IQ1S_DELTA, IQ1S_GRID};
use super::iq_lattice;
use super::iq_search::{cmax, scale_code, sum_squares, superblock_quantizer};
use crate::common::{f16_to_f32, f32_to_f16, get_u16, put_u16};
use crate::simd::V8;
use std::mem::{offset_of, size_of};

/// Elements per block.
pub(crate) const QK: usize = 256;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockIq1M>();
/// Byte offset of `qs` in a block.
const QS: usize = offset_of!(BlockIq1M, qs);
/// Byte offset of `qh` in a block.
const QH: usize = offset_of!(BlockIq1M, qh);
/// Byte offset of `scales` in a block.
const SCALES: usize = offset_of!(BlockIq1M, scales);

/// Groups with a largest magnitude below this are stored as zero.
const GROUP_MAX_EPS_IQ1_M: f32 = 1e-7;

/// The three levels with a positive delta (`code − 1 + δ`).
const X_P: [f32; 3] = [-1.0 + IQ1M_DELTA, IQ1M_DELTA, 1.0 + IQ1M_DELTA];
/// The three levels with a negative delta (`code − 1 − δ`).
const X_M: [f32; 3] = [-1.0 - IQ1M_DELTA, -IQ1M_DELTA, 1.0 - IQ1M_DELTA];

/// `qh` bits marking a negative delta, by sign pattern (bit 1: first 8, bit 0: second 8).
const MASKS: [u8; 4] = [0x00, 0x80, 0x08, 0x88];

/// The levels of the `k`-th 8 values of a group with sign pattern `pattern` (0: +,+;
/// 1: +,−; 2: −,+; 3: −,−).
fn levels(pattern: usize, k: usize) -> &'static [f32; 3] {
    let negative = if k == 0 {
        pattern >= 2
    } else {
        pattern % 2 == 1
    };
    if negative {
        &X_M
    } else {
        &X_P
    }
}

/// The importance of each value of a 16-value group.
fn weights(qw: Option<&[f32]>, sigma2: f32, xb: &[f32], weight: &mut [f32; 16]) {
    match qw {
        Some(qw) => {
            for ((w, &q), &x) in weight.iter_mut().zip(qw).zip(xb) {
                *w = q * (sigma2 + x * x).sqrt();
            }
        }
        None => {
            for (w, &x) in weight.iter_mut().zip(xb) {
                *w = x * x;
            }
        }
    }
}

/// The best split of a sorted 16-value group and sign pattern, searched with prefix sums
/// kept per half of the group: `(i1, i2, pattern, scale)`.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // h and k index several arrays at once
fn best_split<S: V8>(
    v8: S,
    pairs: &[(f32, u8); 16],
    xb: &[f32],
    weight: &[f32; 16],
    max: f32,
) -> Option<(usize, usize, usize, f32)> {
    let n = 16;
    let mut px = [[0f32; 17]; 2];
    let mut pw = [[0f32; 17]; 2];
    for (j, &(_, i)) in pairs.iter().enumerate() {
        let i = i as usize;
        let h = usize::from(i >= n / 2);
        px[h][j + 1] = px[h][j] + weight[i] * xb[i];
        px[1 - h][j + 1] = px[1 - h][j];
        pw[h][j + 1] = pw[h][j] + weight[i];
        pw[1 - h][j + 1] = pw[1 - h][j];
    }
    let txs = [px[0][n], px[1][n]];
    let tws = [pw[0][n], pw[1][n]];
    let (p2, m2) = (X_P[2], X_M[2]);
    let cp1 = X_P[0] * X_P[0] - X_P[1] * X_P[1];
    let cp2 = X_P[1] * X_P[1] - X_P[2] * X_P[2];
    let cm1 = X_M[0] * X_M[0] - X_M[1] * X_M[1];
    let cm2 = X_M[1] * X_M[1] - X_M[2] * X_M[2];
    let mut best_score = -f32::MAX;
    let mut scale = max;
    let mut best = None;
    // The i2-only products, padded (like the prefix sums) so that eight can be loaded from
    // any i2 ≤ n. Then for each i1, eight i2 at a time are scored for all four patterns in
    // vectors (each lane with the reference's operations); a block in which no candidate
    // beats the best so far leaves it unchanged and is skipped, any other is scanned in the
    // reference's order.
    let (mut bp, mut bm) = ([[0f32; 24]; 2], [[0f32; 24]; 2]);
    let (mut qx0, mut qx1) = ([0f32; 24], [0f32; 24]);
    for h in 0..2 {
        for i2 in 0..=n {
            bp[h][i2] = pw[h][i2] * cp2;
            bm[h][i2] = pw[h][i2] * cm2;
        }
    }
    qx0[..=n].copy_from_slice(&px[0]);
    qx1[..=n].copy_from_slice(&px[1]);
    let pxs = [&qx0, &qx1];
    let load = |a: &[f32; 24], at: usize| -> [f32; 8] { a[at..at + 8].try_into().expect("8") };
    let zero = v8.splat(0.0);
    let (mut sumqx, mut sumq2, mut sq) = ([[0f32; 8]; 4], [[0f32; 8]; 4], [[0f32; 8]; 4]);
    for i1 in 0..=n {
        let mut ap = [0f32; 2];
        let mut am = [0f32; 2];
        let mut tp = [0f32; 2];
        let mut tm = [0f32; 2];
        for h in 0..2 {
            ap[h] = tws[h] * p2 * p2 + pw[h][i1] * cp1;
            am[h] = tws[h] * m2 * m2 + pw[h][i1] * cm1;
            tp[h] = txs[h] * p2;
            tm[h] = txs[h] * m2;
        }
        let x01 = [px[0][i1], px[1][i1]];
        for i2 in (i1..=n).step_by(8) {
            let mut qx_p = [zero; 2];
            let mut qx_m = [zero; 2];
            let mut q2_p = [zero; 2];
            let mut q2_m = [zero; 2];
            for h in 0..2 {
                let sx = v8.add(v8.splat(x01[h]), v8.load(&load(pxs[h], i2)));
                qx_p[h] = v8.sub(v8.splat(tp[h]), sx);
                qx_m[h] = v8.sub(v8.splat(tm[h]), sx);
                q2_p[h] = v8.add(v8.splat(ap[h]), v8.load(&load(&bp[h], i2)));
                q2_m[h] = v8.add(v8.splat(am[h]), v8.load(&load(&bm[h], i2)));
            }
            let x = [
                v8.add(qx_p[0], qx_p[1]),
                v8.add(qx_p[0], qx_m[1]),
                v8.add(qx_m[0], qx_p[1]),
                v8.add(qx_m[0], qx_m[1]),
            ];
            let q = [
                v8.add(q2_p[0], q2_p[1]),
                v8.add(q2_p[0], q2_m[1]),
                v8.add(q2_m[0], q2_p[1]),
                v8.add(q2_m[0], q2_m[1]),
            ];
            let bs = v8.splat(best_score);
            let mut pass = 0;
            for k in 0..4 {
                let xx = v8.mul(x[k], x[k]);
                pass |= v8.mask_bits(v8.and(v8.lt(zero, q[k]), v8.lt(v8.mul(bs, q[k]), xx)));
                sumqx[k] = v8.to_array(x[k]);
                sumq2[k] = v8.to_array(q[k]);
                sq[k] = v8.to_array(xx);
            }
            let count = (n + 1 - i2).min(8);
            if pass & ((1 << count) - 1) == 0 {
                continue;
            }
            for j in 0..count {
                for k in 0..4 {
                    if sumq2[k][j] > 0.0 && sq[k][j] > best_score * sumq2[k][j] {
                        scale = sumqx[k][j] / sumq2[k][j];
                        best_score = scale * sumqx[k][j];
                        best = Some((i1, i2 + j, k));
                    }
                }
            }
        }
    }
    best.map(|(i1, i2, k)| (i1, i2, k, scale))
}

superblock_quantizer! {
    /// Quantizes one row (`quantize_iq1_m`).
    setup {
        let lat = iq_lattice::iq1s();
        let mut weight = [0f32; 16];
        let mut pairs = [(0f32, 0u8); 16];
        let mut tmp = [(0f32, 0u8); 16];
        let mut l = [0i8; 16];
    }
    |v8, xbl, qw, y| {
        let sigma2 = 2.0 * sum_squares(xbl) / QK as f32;
        let mut scales = [0f32; 16];
        let mut shifts = [0usize; 16];
        let mut max_scale = 0f32;
        for (ib, xb) in xbl.chunks_exact(16).enumerate() {
            let qw = qw.map(|qw| &qw[16 * ib..]);
            weights(qw, sigma2, xb, &mut weight);
            let max = xb[1..].iter().fold(xb[0].abs(), |m, &v| cmax(m, v.abs()));
            if max < GROUP_MAX_EPS_IQ1_M {
                continue;
            }
            for (j, (p, &x)) in pairs.iter_mut().zip(xb).enumerate() {
                *p = (x, j as u8);
            }
            merge_sort(&mut pairs, &mut tmp);
            let Some((i1, i2, mut pattern, mut scale)) = best_split(v8, &pairs, xb, &weight, max)
            else {
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
                pattern = 3 - pattern;
            }
            let mut all_on_grid = true;
            let mut index = [0u16; 2];
            for (k, idx) in index.iter_mut().enumerate() {
                let xx = levels(pattern, k);
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
                            16 * ib + 8 * k,
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
                    let xx = levels(pattern, k);
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
            y[QS + 2 * ib] = index[0] as u8;
            y[QS + 2 * ib + 1] = index[1] as u8;
            y[QH + ib] = ((index[0] >> 8) | ((index[1] >> 8) << 4)) as u8;
            if scale.is_nan() || scale < 0.0 {
                return Err("the fitted scale is NaN");
            }
            scales[ib] = scale;
            shifts[ib] = pattern;
            max_scale = cmax(max_scale, scale);
        }
        if max_scale == 0.0 {
            return Ok(());
        }
        let mut sc = [0u16; 4];
        let mut d = max_scale / 15.0;
        let id = 1.0 / d;
        let (mut sumqx, mut sumq2) = (0f32, 0f32);
        for (ib, xb) in xbl.chunks_exact(16).enumerate() {
            let code = scale_code(id, scales[ib], 7);
            sc[ib / 4] |= (code as u16) << (3 * (ib % 4));
            y[QH + ib] |= MASKS[shifts[ib]];
            let qw = qw.map(|qw| &qw[16 * ib..]);
            weights(qw, sigma2, xb, &mut weight);
            let mult = (2 * code as i32 + 1) as f32;
            for k in 0..2 {
                let xx = levels(shifts[ib], k);
                let g = y[QS + 2 * ib + k] as u16 | (((y[QH + ib] as u16) << (8 - 4 * k)) & 0x700);
                let pg = lat.coords(g);
                for j in 0..8 {
                    let w = weight[8 * k + j];
                    let q = xx[((pg[j] - 1) / 2) as usize] * mult;
                    sumqx += w * q * xb[8 * k + j];
                    sumq2 += w * q * q;
                }
            }
        }
        if sumq2 > 0.0 {
            d = sumqx / sumq2;
        }
        let bits = f32_to_f16(d * 1.1125);
        sc[0] |= (bits & 0x000f) << 12;
        sc[1] |= (bits & 0x00f0) << 8;
        sc[2] |= (bits & 0x0f00) << 4;
        sc[3] |= bits & 0xf000;
        for (k, &v) in sc.iter().enumerate() {
            put_u16(y, SCALES + 2 * k, v);
        }
        Ok(())
    }
}

/// Dequantizes whole iq1_m blocks (`dequantize_row_iq1_m`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let sc: [u16; 4] = std::array::from_fn(|k| get_u16(block, SCALES + 2 * k));
        let d_bits = sc
            .iter()
            .enumerate()
            .fold(0u16, |bits, (k, &s)| bits | ((s >> 12) << (4 * k)));
        let d = f16_to_f32(d_bits);
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let s = (sc[g / 2] >> (6 * (g % 2))) as usize;
            // One scale for each 16 elements.
            let dl = [
                d * (2 * (s & 7) + 1) as f32,
                d * (2 * ((s >> 3) & 7) + 1) as f32,
            ];
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let h = (block[QH + 2 * g + l / 2] >> (4 * (l % 2))) as usize & 0xf;
                let index = block[QS + 4 * g + l] as usize | ((h & 7) << 8);
                let delta = if h & 8 != 0 { -IQ1S_DELTA } else { IQ1S_DELTA };
                let grid = &IQ1S_GRID[index];
                for (y, &v) in y8.iter_mut().zip(grid) {
                    *y = dl[l / 2] * (v as f32 + delta);
                }
            }
        }
    }
}
