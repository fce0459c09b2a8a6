//! iq1_m: 256 elements per block, 56 bytes per block (1.75 bits per weight).
//!
//! Layout: `qs: [u8; 32]` (low 8 bits of one [`IQ1S_GRID`] index per 8 elements), `qh: [u8;
//! 16]` (one nibble per 8 elements: bits 0–2 the high index bits, bit 3 the delta sign),
//! `scales: [u8; 8]` read as four little-endian u16 `sc`. Each `sc[k]` holds four 3-bit
//! scales in bits 0–11 (two per 32 elements: the first and second 16) and, in its top nibble,
//! nibble `k` of the block's f16 super-scale `d` (there is no separate `d` field). Element
//! value: `d·(2s+1) · (grid ± IQ1S_DELTA)`.

use super::blocks::BlockIq1M;
use super::iq1_search::{best_neighbour2, sort_group};
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
    all: &mut Candidates<S>,
) -> Option<(usize, usize, usize, f32)> {
    let n = 16;
    // Prefix sums per half, padded (like the i2-only products below) so that eight can be
    // loaded from any i2 ≤ n. The running sums stay in registers: adding −0 to the other
    // half's sum leaves it unchanged (x + −0 = x for every x), so no step branches on the
    // half.
    let mut px = [[0f32; 24]; 2];
    let mut pw = [[0f32; 24]; 2];
    let (mut sx, mut sw) = ([0f32; 2], [0f32; 2]);
    let neg_zero = (-0f32).to_bits();
    for (j, &(_, i)) in pairs.iter().enumerate() {
        let i = i as usize;
        let (wx, w) = (weight[i] * xb[i], weight[i]);
        // All ones where the value is in the first half.
        let first = 0u32.wrapping_sub(u32::from(i < n / 2));
        let pick = |v: f32, m: u32| f32::from_bits((v.to_bits() & m) | (neg_zero & !m));
        sx[0] += pick(wx, first);
        sx[1] += pick(wx, !first);
        sw[0] += pick(w, first);
        sw[1] += pick(w, !first);
        for h in 0..2 {
            px[h][j + 1] = sx[h];
            pw[h][j + 1] = sw[h];
        }
    }
    let txs = [px[0][n], px[1][n]];
    let tws = [pw[0][n], pw[1][n]];
    let (p2, m2) = (X_P[2], X_M[2]);
    let cp1 = X_P[0] * X_P[0] - X_P[1] * X_P[1];
    let cp2 = X_P[1] * X_P[1] - X_P[2] * X_P[2];
    let cm1 = X_M[0] * X_M[0] - X_M[1] * X_M[1];
    let cm2 = X_M[1] * X_M[1] - X_M[2] * X_M[2];
    // The i2-only products. For each i1, eight i2 at a time are scored for all four
    // patterns in vectors (each lane with the reference's operations) and kept for
    // `Candidates::resolve`.
    let (mut bp, mut bm) = ([[0f32; 24]; 2], [[0f32; 24]; 2]);
    for h in 0..2 {
        for c in 0..3 {
            let w = v8.load(pw[h][8 * c..8 * c + 8].try_into().expect("8"));
            let (p, m) = (v8.mul(w, v8.splat(cp2)), v8.mul(w, v8.splat(cm2)));
            bp[h][8 * c..8 * c + 8].copy_from_slice(&v8.to_array(p));
            bm[h][8 * c..8 * c + 8].copy_from_slice(&v8.to_array(m));
        }
    }
    let pxs = [&px[0], &px[1]];
    let load = |a: &[f32; 24], at: usize| -> [f32; 8] { a[at..at + 8].try_into().expect("8") };
    let zero = v8.splat(0.0);
    let mut tops = all.clear();
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
            all.push(&mut tops, i1, i2, (n + 1 - i2).min(8), x, q);
        }
    }
    // Every candidate's `q` is a sum of all 16 weights times squared levels of at least δ²
    // = 1/64 and at most 1.27: with no negative weight it lies within a factor 128 of
    // their sum (rounding moves it by a few units of `u`). Values of at most 2⁴⁰ keep
    // every `x` finite.
    let total = tws[0] + tws[1];
    let safe = weight.iter().all(|&w| w >= 0.0)
        && (total / 128.0 >= *TAME.start())
        && (total * 2.0 <= *TAME.end())
        && xb.iter().all(|&v| v.abs() <= (1u64 << 40) as f32);
    all.resolve(&tops, max, safe)
}

/// Most blocks of eight splits a group can have: `Σ_{i1 ≤ 16} ⌈(17 − i1)/8⌉`.
const MAX_BLOCKS: usize = 27;

/// The range of `Σ w·q²` (and of the largest score) in which [`Candidates::resolve`]'s
/// shortcut holds: every product and quotient it relies on is then a normal float.
const TAME: std::ops::RangeInclusive<f32> =
    f32::from_bits((127 - 60) << 23)..=f32::from_bits((127 + 60) << 23);

/// Every candidate (split `i1`, `i2` and sign pattern `k`) of a group, eight splits `i2` per
/// block, in the reference's scan order (`i1`, then `i2`, then `k`): `Σ w·x·q` (`x`) and
/// `Σ w·q²` (`q`). The score the reference keeps as its best is `(x/q)·x`; it is `−∞` here
/// where `q ≤ 0` or past the block's `len` (the reference never takes those).
struct Candidates<S: V8> {
    v8: S,
    blocks: usize,
    at: [(usize, usize, usize); MAX_BLOCKS],
    x: [[S::F; 4]; MAX_BLOCKS],
    q: [[S::F; 4]; MAX_BLOCKS],
}

/// What [`Candidates::push`] accumulates while the candidates are scored, kept apart from
/// the (large, in-memory) candidate arrays so that it stays in registers (three vectors):
/// per lane, over all blocks and patterns, the largest score so far, the second largest
/// (equal to the largest on a tie) and where the largest is (`4·block + pattern`, its
/// first). Their scores are those of [`Candidates::score`] when the group is safe (see
/// [`Candidates::resolve`]); otherwise they are not used.
#[derive(Clone, Copy)]
struct Tops<S: V8> {
    top: S::F,
    second: S::F,
    place: S::F,
}

impl<S: V8> Candidates<S> {
    #[inline(always)]
    fn new(v8: S) -> Self {
        let z = v8.splat(0.0);
        Candidates {
            v8,
            blocks: 0,
            at: [(0, 0, 0); MAX_BLOCKS],
            x: [[z; 4]; MAX_BLOCKS],
            q: [[z; 4]; MAX_BLOCKS],
        }
    }

    /// Forgets every block (the arrays are reused, not cleared) and starts the
    /// accumulators of the next group.
    #[inline(always)]
    fn clear(&mut self) -> Tops<S> {
        self.blocks = 0;
        let neg_inf = self.v8.splat(f32::NEG_INFINITY);
        Tops {
            top: neg_inf,
            second: neg_inf,
            place: self.v8.splat(0.0),
        }
    }

    /// Adds the block of splits `i1`, `i2 .. i2 + len`.
    #[inline(always)]
    fn push(
        &mut self,
        tops: &mut Tops<S>,
        i1: usize,
        i2: usize,
        len: usize,
        x: [S::F; 4],
        q: [S::F; 4],
    ) {
        let v8 = self.v8;
        let neg_inf = v8.splat(f32::NEG_INFINITY);
        let in_block = v8.lt(LANE.with(v8), v8.splat(len as f32));
        let b = self.blocks;
        for k in 0..4 {
            let s = v8.mul(v8.div(x[k], q[k]), x[k]);
            // In a safe group every `q` is positive and no score is NaN.
            let score = v8.select(in_block, s, neg_inf);
            let top = tops.top;
            let here = v8.splat((4 * b + k) as f32);
            tops.place = v8.select(v8.lt(top, score), here, tops.place);
            tops.second = v8.max(tops.second, v8.min(top, score));
            tops.top = v8.max(top, score);
            (self.x[b][k], self.q[b][k]) = (x[k], q[k]);
        }
        self.at[b] = (i1, i2, len);
        self.blocks += 1;
    }

    /// The score of each candidate of block `b` and pattern `k`, as [`Candidates::push`]
    /// ranks it, and `x²`.
    #[inline(always)]
    fn score(&self, b: usize, k: usize) -> (S::F, S::F) {
        let v8 = self.v8;
        let (x, q) = (self.x[b][k], self.q[b][k]);
        let in_block = v8.lt(LANE.with(v8), v8.splat(self.at[b].2 as f32));
        let s = v8.mul(v8.div(x, q), x);
        let usable = v8.and(in_block, v8.and(v8.lt(v8.splat(0.0), q), v8.eq(s, s)));
        (
            v8.select(usable, s, v8.splat(f32::NEG_INFINITY)),
            v8.mul(x, x),
        )
    }

    /// The candidate the reference's scan ends with, `(i1, i2, pattern, scale)`, `scale`
    /// starting at `max` as in the reference. `safe`: every candidate has `q` in [`TAME`]
    /// and a finite `x` (the caller knows it from the weights and values), so that no
    /// score is NaN; unsafe groups are scanned.
    ///
    /// The scan takes a candidate when `x² > best·q` (q > 0) and then sets `best` to its
    /// score. Without rounding the last one taken is the first with the largest score `m`.
    /// Shortcut: when `m` is the only candidate scoring at least `m·(1 − 2⁻²⁰)`, it is the
    /// answer. (With every value involved a normal float, each operation errs by at most
    /// `u = 2⁻²⁴` relatively: a later candidate passing against `m`'s score would score
    /// above `m·(1 − 4u)`, and every score held before `m`, below `m·(1 − 15u)`, lets `m`
    /// pass.) Otherwise [`Candidates::resolve_exact`] decides.
    #[inline(always)]
    fn resolve(&self, tops: &Tops<S>, max: f32, safe: bool) -> Option<(usize, usize, usize, f32)> {
        let v8 = self.v8;
        if !safe {
            return self.scan(max);
        }
        let t = tops.top;
        // Scores are never NaN here: the largest is the same in any order.
        let top = -v8.hmin(v8.neg(t));
        if top == f32::NEG_INFINITY {
            return self.scan(max);
        }
        if TAME.contains(&top) {
            let at_top = v8.eq(t, v8.splat(top));
            let lanes = v8.mask_bits(at_top);
            if lanes.count_ones() == 1 {
                let rest = v8.select(at_top, v8.splat(f32::NEG_INFINITY), t);
                let second = -v8.hmin(v8.neg(v8.max(tops.second, rest)));
                if second < top * (1.0 - 1.0 / (1u32 << 20) as f32) {
                    let j = lanes.trailing_zeros() as usize;
                    let place = v8.to_array(tops.place)[j] as usize;
                    let (b, k) = (place / 4, place % 4);
                    let xm = v8.to_array(self.x[b][k])[j];
                    let qm = v8.to_array(self.q[b][k])[j];
                    let (i1, i2, _) = self.at[b];
                    return Some((i1, i2 + j, k, xm / qm));
                }
            }
        }
        self.resolve_exact(top, max)
    }

    /// [`Candidates::resolve`] without the shortcut, for the largest score `top`: `m` (the
    /// first candidate with it) passes against the largest `best` the scan can hold before
    /// it (`−f32::MAX` or an earlier candidate's score), and no later candidate passes
    /// against `m`'s score. Where either fails (near-ties), the scan runs one candidate at a
    /// time.
    #[cold]
    #[inline(never)]
    fn resolve_exact(&self, top: f32, max: f32) -> Option<(usize, usize, usize, f32)> {
        let v8 = self.v8;
        let tops = v8.splat(top);
        // The first candidate with the top score: block `b`, lane `j`, pattern `k`.
        let (b, j, k) = (0..self.blocks).find_map(|b| {
            let at_top: [u32; 4] =
                std::array::from_fn(|k| v8.mask_bits(v8.eq(self.score(b, k).0, tops)));
            let any = at_top[0] | at_top[1] | at_top[2] | at_top[3];
            if any == 0 {
                return None;
            }
            let j = any.trailing_zeros() as usize;
            (0..4).find(|&k| at_top[k] >> j & 1 == 1).map(|k| (b, j, k))
        })?;
        let lane = |v: S::F| v8.to_array(v)[j];
        let (xm, qm) = (lane(self.x[b][k]), lane(self.q[b][k]));
        let xxm = xm * xm;
        let scale = xm / qm;
        let best = scale * xm;
        // Scores before `m`, and whether a later candidate passes against `best`.
        let zero = v8.splat(0.0);
        let bests = v8.splat(best);
        let mut before = v8.splat(-f32::MAX);
        for bb in 0..self.blocks {
            let (_, _, len) = self.at[bb];
            let lanes = (1u32 << len) - 1;
            for kk in 0..4 {
                let (score, xx) = self.score(bb, kk);
                // Lanes before `first_m` come before `m`, from `first_later` on after it.
                let (first_m, first_later) = match bb.cmp(&b) {
                    std::cmp::Ordering::Less => (8, 8),
                    std::cmp::Ordering::Equal => {
                        (j + usize::from(kk < k), j + usize::from(kk <= k))
                    }
                    std::cmp::Ordering::Greater => (0, 0),
                };
                if first_m > 0 {
                    let earlier = v8.lt(LANE.with(v8), v8.splat(first_m as f32));
                    let s = v8.select(earlier, score, v8.splat(f32::NEG_INFINITY));
                    before = v8.max(before, s);
                }
                if first_later < 8 {
                    let q = self.q[bb][kk];
                    let passes = v8.and(v8.lt(zero, q), v8.lt(v8.mul(bests, q), xx));
                    if v8.mask_bits(passes) & lanes & (0xffu32 << first_later) != 0 {
                        return self.scan(max);
                    }
                }
            }
        }
        let before = -v8.hmin(v8.neg(before));
        if !(qm > 0.0 && xxm > before * qm) {
            return self.scan(max);
        }
        let (i1, i2, _) = self.at[b];
        Some((i1, i2 + j, k, scale))
    }

    /// The reference's scan, one candidate after the other.
    #[cold]
    fn scan(&self, max: f32) -> Option<(usize, usize, usize, f32)> {
        let v8 = self.v8;
        let mut best_score = -f32::MAX;
        let mut scale = max;
        let mut best = None;
        for b in 0..self.blocks {
            let (i1, i2, len) = self.at[b];
            let x: [[f32; 8]; 4] = std::array::from_fn(|k| v8.to_array(self.x[b][k]));
            let q: [[f32; 8]; 4] = std::array::from_fn(|k| v8.to_array(self.q[b][k]));
            for j in 0..len {
                for k in 0..4 {
                    let (x, q) = (x[k][j], q[k][j]);
                    if q > 0.0 && x * x > best_score * q {
                        scale = x / q;
                        best_score = scale * x;
                        best = Some((i1, i2 + j, k));
                    }
                }
            }
        }
        best.map(|(i1, i2, k)| (i1, i2, k, scale))
    }
}

/// Lane numbers 0..8.
struct Lanes;
/// The lane numbers as floats, for masks of the first `n` lanes.
const LANE: Lanes = Lanes;

impl Lanes {
    #[inline(always)]
    fn with<S: V8>(&self, v8: S) -> S::F {
        v8.load(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    }
}

/// What the first pass over a super-block keeps of a group for the second: the split's sign
/// pattern and scale, and per 8 values the grid index or the neighbour list to search.
#[derive(Clone, Copy)]
struct Fit {
    pattern: usize,
    scale: f32,
    points: [Result<u16, usize>; 2],
}

superblock_quantizer! {
    /// Quantizes one row (`quantize_iq1_m`).
    ///
    /// Each super-block takes two passes over its groups: the first sorts each group, finds
    /// its split and looks its two points up, asking for the neighbour lists of the points off
    /// the grid to be fetched into the cache; the second runs the neighbour searches and the
    /// refits. A group's steps and their results are those of the reference's single loop
    /// (no group's search depends on another's), but the lists' memory is read while the
    /// other groups' splits are computed instead of stalling the searches.
    setup {
        let lat = iq_lattice::iq1s();
        let mut weight = [0f32; QK];
        let mut pairs = [(0f32, 0u8); 16];
        let mut tmp = [(0f32, 0u8); 16];
        let mut l = [0i8; 16];
        let mut candidates = Candidates::new(v8);
        let mut fits: [Option<Fit>; QK / 16] = [None; QK / 16];
    }
    |v8, xbl, qw, y| {
        let sigma2 = 2.0 * sum_squares(xbl) / QK as f32;
        let mut scales = [0f32; 16];
        let mut shifts = [0usize; 16];
        let mut max_scale = 0f32;
        for (ib, xb) in xbl.chunks_exact(16).enumerate() {
            fits[ib] = None;
            let qw = qw.map(|qw| &qw[16 * ib..]);
            let weight: &mut [f32; 16] = (&mut weight[16 * ib..16 * ib + 16]).try_into().expect("16");
            weights(qw, sigma2, xb, weight);
            let max = xb[1..].iter().fold(xb[0].abs(), |m, &v| cmax(m, v.abs()));
            if max < GROUP_MAX_EPS_IQ1_M {
                continue;
            }
            sort_group(v8, xb, &mut pairs, &mut tmp);
            let Some((i1, i2, mut pattern, mut scale)) = best_split(v8, &pairs, xb, weight, max, &mut candidates)
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
            let points: [Result<u16, usize>; 2] = std::array::from_fn(|k| lat.lookup(&l[8 * k..8 * k + 8]));
            for p in points {
                if let Err(list) = p {
                    lat.prefetch(list);
                }
            }
            fits[ib] = Some(Fit { pattern, scale, points });
        }
        for (ib, xb) in xbl.chunks_exact(16).enumerate() {
            let Some(Fit { pattern, mut scale, points }) = fits[ib] else {
                continue;
            };
            let weight = &weight[16 * ib..16 * ib + 16];
            let mut index = [0u16; 2];
            for (k, idx) in index.iter_mut().enumerate() {
                *idx = match points[k] {
                    Ok(g) => g,
                    Err(list) => {
                        let xx = levels(pattern, k);
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
            let weight = &weight[16 * ib..16 * ib + 16];
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{Avx2, Scalar, Sse2};

    /// A small deterministic generator (xorshift) of lane values: mostly ordinary, often
    /// repeated (ties), sometimes zero, negative, tiny, huge, infinite or NaN.
    struct Gen(u64);
    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn value(&mut self, pool: &[f32; 4]) -> f32 {
            let r = self.next();
            match r % 64 {
                0 => 0.0,
                1 => -0.0,
                2 => f32::INFINITY,
                3 => f32::NAN,
                4 => 1e-30,
                5 => 3e37,
                6..=40 => pool[(r >> 8) as usize % 4],
                _ => ((r >> 16) as u32 as f32 / u32::MAX as f32 - 0.3) * 4.0,
            }
        }
        /// Ordinary values only, often equal or a few units in the last place apart
        /// (near-ties).
        fn ordinary(&mut self, pool: &[f32; 4]) -> f32 {
            let r = self.next();
            let p = pool[(r >> 8) as usize % 4];
            match r % 8 {
                0..=2 => p,
                3 | 4 => f32::from_bits(p.to_bits() + (r >> 20) as u32 % 4),
                _ => ((r >> 16) as u32 as f32 / u32::MAX as f32 - 0.3) * 4.0,
            }
        }
    }

    /// `resolve`'s vector shortcut ends where the reference's one-at-a-time scan does, for
    /// every kind of lane the split search can produce, ties and non-finite values included.
    fn resolve_equals_scan<S: V8>(v8: S) {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let mut all = Candidates::new(v8);
        let (mut shortcuts, mut safes) = (0, 0);
        for case in 0..20_000 {
            let mut tops = all.clear();
            let pool = [g.value(&[1.0; 4]), 0.5, 2.0, g.value(&[1.0; 4])];
            let blocks = 1 + case % MAX_BLOCKS;
            // Half the cases have ordinary values only (positive `q`), mostly safe.
            let ordinary = case % 2 == 1;
            let mut safe = true;
            for b in 0..blocks {
                let mut lanes = || -> [S::F; 4] {
                    std::array::from_fn(|_| {
                        let v: [f32; 8] = std::array::from_fn(|_| {
                            if ordinary {
                                g.ordinary(&[0.5, 0.75, 2.0, 1.5])
                            } else {
                                g.value(&pool)
                            }
                        });
                        v8.load(&v)
                    })
                };
                let (x, mut q) = (lanes(), lanes());
                if ordinary {
                    q = q.map(|v| v8.load(&v8.to_array(v).map(|v| v.abs() + 0.01)));
                }
                let len = 1 + (b * 7 + case) % 8;
                for (xk, qk) in x.into_iter().zip(q) {
                    let (xs, qs) = (v8.to_array(xk), v8.to_array(qk));
                    safe &= xs[..len].iter().all(|v| v.is_finite());
                    safe &= qs[..len].iter().all(|v| TAME.contains(v));
                }
                all.push(&mut tops, b, 0, len, x, q);
            }
            safes += usize::from(safe);
            let fast = all.resolve(&tops, 0.25, safe);
            let slow = all.scan(0.25);
            let same = match (fast, slow) {
                (Some((a, b, c, s)), Some((d, e, f, t))) => {
                    (a, b, c) == (d, e, f) && s.to_bits() == t.to_bits()
                }
                (None, None) => true,
                _ => false,
            };
            assert!(same, "case {case}: {fast:?} != {slow:?}");
            shortcuts += usize::from(fast.is_some());
        }
        assert!(
            shortcuts > 10_000,
            "only {shortcuts} cases found a candidate"
        );
        assert!(safes > 8_000, "only {safes} safe cases");
    }

    #[test]
    fn split_resolution_matches_the_scan() {
        resolve_equals_scan(Scalar);
        resolve_equals_scan(Sse2);
        if let Some(v8) = Avx2::get() {
            resolve_equals_scan(v8);
        }
    }
}
