//! The scale-and-lattice search shared by the IQ2 and IQ3 quantizers, and the row loop of
//! every IQ1–IQ3 quantizer.
//!
//! A group of 16 or 32 values is fitted as `scale · (2·code + 1) · sign`, where the codes of
//! each 8 (IQ2) or 4 (IQ3) lanes must form a grid entry. The signs are taken from the values
//! (IQ2_XXS, IQ2_XS and IQ3_XXS store only 7 of every 8 signs, so an odd count of negatives
//! flips the least important value). The search tries a fan of trial scales around the
//! group's maximum; for each it rounds every value to its nearest code, replaces points that
//! are off the grid by their best-scoring neighbour, and keeps the trial with the best
//! weighted least-squares fit. A final pass re-rounds at the chosen scale and refits it.
//!
//! The five types differ in small details, each a field of [`Spec`]; the float operations
//! and their order are those of llama.cpp's kernels.

use super::iq_lattice::Lattice;
use crate::common::nearest_int;
use crate::kernel::Unrepresentable;
use crate::kquants::make_qp_quants;
use crate::simd::V8;

/// The most trial scales of any type (IQ3_XXS has 31), rounded up to whole vectors.
const MAX_TRIALS: usize = 32;

/// Why a block cannot be quantized (llama.cpp aborts on these inputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SearchError {
    /// No neighbour scored below `f32::MAX` (NaN or infinite errors).
    NoNeighbour,
    /// The final codes are not a grid entry.
    OffGrid,
    /// The fitted scale is negative or NaN.
    BadScale,
}

impl SearchError {
    /// A short description for error messages.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            SearchError::NoNeighbour => "no grid neighbour has a finite error",
            SearchError::OffGrid => "the fitted codes are not on the grid",
            SearchError::BadScale => "the fitted scale is NaN",
        }
    }
}

impl From<SearchError> for &'static str {
    fn from(e: SearchError) -> &'static str {
        e.reason()
    }
}

/// The row loop of the IQ1–IQ3 quantizers: `quantize(x, qw, y)` for each super-block of
/// `QK` values `x`, with `qw` its slice of the imatrix and `y` its `BYTES` output bytes,
/// zeroed first. A refusal (the reason) stops the row and names the super-block.
#[inline(always)]
pub(crate) fn quantize_superblocks<const QK: usize, const BYTES: usize>(
    src: &[f32],
    dst: &mut [u8],
    imatrix: Option<&[f32]>,
    mut quantize: impl FnMut(&[f32], Option<&[f32]>, &mut [u8]) -> Result<(), &'static str>,
) -> Result<(), Unrepresentable> {
    let blocks = src.chunks_exact(QK).zip(dst.chunks_exact_mut(BYTES));
    for (block, (x, y)) in blocks.enumerate() {
        let qw = imatrix.map(|im| &im[QK * block..QK * (block + 1)]);
        y.fill(0);
        quantize(x, qw, y).map_err(|reason| Unrepresentable { block, reason })?;
    }
    Ok(())
}

/// Defines an IQ format's `quantize_row` (see `multiversion!`): `setup` runs once per row,
/// then the closure once per super-block through [`quantize_superblocks`], with the
/// [`V8`](crate::simd::V8) of the build as its first argument. Expects the format's `QK` and
/// `BLOCK_BYTES` in scope.
macro_rules! superblock_quantizer {
    (
        $(#[$attr:meta])*
        setup { $($setup:stmt;)* }
        |$v8:ident, $x:ident, $qw:ident, $y:ident| $body:block
    ) => {
        $crate::simd::multiversion! {
            $(#[$attr])*
            pub(crate) fn quantize_row(
                src: &[f32],
                dst: &mut [u8],
                imatrix: Option<&[f32]>,
            ) -> Result<(), $crate::kernel::Unrepresentable> = quantize_row_impl;
        }

        #[inline(always)]
        fn quantize_row_impl<S: $crate::simd::V8>(
            $v8: S,
            src: &[f32],
            dst: &mut [u8],
            imatrix: Option<&[f32]>,
        ) -> Result<(), $crate::kernel::Unrepresentable> {
            $($setup)*
            $crate::formats::iq_search::quantize_superblocks::<QK, BLOCK_BYTES>(
                src,
                dst,
                imatrix,
                // Inlined so that the body is compiled with the caller's target features
                // (the AVX2 build of `multiversion!`), as it was before it became a closure.
                #[inline(always)]
                |$x, $qw, $y| $body,
            )
        }
    };
}
pub(crate) use superblock_quantizer;

/// How a group too small to quantize is recognised.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ZeroTest {
    /// The largest magnitude is below this threshold.
    Below(f32),
    /// The largest magnitude equals zero (NaN passes).
    IsZero,
}

/// Which groups the final pass re-rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refine {
    /// All of them, whenever the scale is positive (IQ2_XXS).
    Always,
    /// Those whose best trial was off the grid (IQ2_XS, IQ2_S, IQ3_XXS).
    OffGrid,
    /// All of them when any best-trial group was off the grid (IQ3_S).
    AllIfAnyOff,
}

/// The per-type details of the search.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    /// Values per group (16 or 32).
    pub n: usize,
    /// Number of codes per lane (3 for IQ2, 8 for IQ3).
    pub kmaxq: i32,
    /// Trial scales run from `-steps` to `steps`.
    pub steps: i32,
    /// Increment of the trial numerator per step.
    pub step: f32,
    /// Start from `make_qp_quants` (IQ2_XXS) rather than from the maximum.
    pub qp_start: bool,
    /// The test for an all-zero group.
    pub zero: ZeroTest,
    /// Only 7 of 8 signs are stored: an odd count of negatives flips one value.
    pub parity_signs: bool,
    /// What a group counts as before any trial improves the fit.
    pub init_on_grid: bool,
    /// The final pass.
    pub refine: Refine,
}

/// The result of fitting one group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fit {
    /// The group scale (≥ 0).
    pub scale: f32,
    /// Grid index per 8 (IQ2) or 4 (IQ3) lanes.
    pub grid: [u16; 8],
    /// Sign byte per 8 values (7 bits when `parity_signs`).
    pub signs: [u8; 4],
}

/// Scratch space of one group, kept across calls to avoid re-initialisation.
pub(crate) struct Scratch {
    xval: [f32; 32],
    waux: [f32; 32],
    l: [i8; 32],
    on: [bool; 8],
    qp: [u8; 32],
    /// Per value, per trial scale: the coordinate `2·code + 1` the trial gives it.
    q: [[f32; MAX_TRIALS]; 32],
}

impl Scratch {
    /// Fresh scratch space.
    pub(crate) fn new() -> Scratch {
        Scratch {
            xval: [0.0; 32],
            waux: [0.0; 32],
            l: [0; 32],
            on: [false; 8],
            qp: [0; 32],
            q: [[0.0; MAX_TRIALS]; 32],
        }
    }
}

/// C's `MAX(a, b)`: `a` only when it is strictly larger.
#[inline(always)]
pub(crate) fn cmax(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `Σ w·x·q` and `Σ w·q·q` with `q = 2·code + 1`.
#[inline(always)]
fn sums(w: &[f32], x: &[f32], l: &[i8]) -> (f32, f32) {
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for ((&w, &x), &l) in w.iter().zip(x).zip(l) {
        let q = (2 * l as i32 + 1) as f32;
        sumqx += w * x * q;
        sumq2 += w * q * q;
    }
    (sumqx, sumq2)
}

/// Rounds `xval` at inverse scale `id` to lane codes `0..kmaxq`.
#[inline(always)]
fn round_codes(id: f32, xval: &[f32], kmaxq: i32, l: &mut [i8]) {
    for (l, &x) in l.iter_mut().zip(xval) {
        let q = nearest_int(0.5 * (id * x - 1.0));
        *l = q.clamp(0, kmaxq - 1) as i8;
    }
}

/// Fits one group `xb` with importance `weight`. `Ok(None)` for a group treated as zero.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // k indexes several per-sub-group arrays at once
pub(crate) fn fit_group<S: V8>(
    v8: S,
    spec: &Spec,
    lat: &Lattice,
    xb: &[f32],
    weight: &[f32],
    s: &mut Scratch,
) -> Result<Option<Fit>, SearchError> {
    let n = spec.n;
    let lanes = if spec.kmaxq == 3 { 8 } else { 4 };
    let ngroups = n / lanes;
    let xval = &mut s.xval[..n];
    let waux = &mut s.waux[..n];
    for (a, &w) in waux.iter_mut().zip(weight) {
        *a = w.sqrt();
    }
    let mut signs = [0u8; 4];
    for (k, sign) in signs.iter_mut().enumerate().take(n / 8) {
        let (mut nflip, mut bits) = (0, 0u8);
        for i in 0..8 {
            let x = xb[8 * k + i];
            if x >= 0.0 {
                xval[8 * k + i] = x;
            } else {
                xval[8 * k + i] = -x;
                nflip += 1;
                bits |= 1 << i;
            }
        }
        if spec.parity_signs {
            if nflip % 2 == 1 {
                let at = |i: usize| weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                let (mut imin, mut min) = (0, at(0));
                for i in 1..8 {
                    let ax = at(i);
                    if ax < min {
                        min = ax;
                        imin = i;
                    }
                }
                xval[8 * k + imin] = -xval[8 * k + imin];
                bits ^= 1 << imin;
            }
            bits &= 127;
        }
        *sign = bits;
    }
    let max = xval[1..].iter().fold(xval[0], |m, &v| cmax(m, v));
    let is_zero = match spec.zero {
        ZeroTest::Below(eps) => max < eps,
        ZeroTest::IsZero => max == 0.0,
    };
    let l = &mut s.l[..n];
    l.fill(0);
    if is_zero {
        return Ok(None);
    }

    let (mut scale, denom) = if spec.qp_start {
        let scale = make_qp_quants(spec.kmaxq + 1, xval, weight, &mut s.qp[..n]);
        for (l, &q) in l.iter_mut().zip(&s.qp[..n]) {
            *l = q as i8;
        }
        let eff_max = scale * spec.kmaxq as f32;
        if eff_max <= 0.0 {
            l.fill(0);
            return Ok(None);
        }
        (scale, eff_max)
    } else {
        (max / (2 * spec.kmaxq - 1) as f32, max)
    };

    let on = &mut s.on[..ngroups];
    on.fill(spec.init_on_grid);
    let ntrials = (2 * spec.steps + 1) as usize;
    let nvec = ntrials.div_ceil(8);
    // The trial scales are independent until the choice of the best: each step below runs
    // them all, eight to a vector where it can, each with the reference's operations.
    let mut ids = [0f32; MAX_TRIALS];
    for (t, id) in ids.iter_mut().enumerate().take(8 * nvec) {
        // Vector lanes past the last trial repeat it; their results are never read.
        let is = t.min(ntrials - 1) as i32 - spec.steps;
        *id = ((2 * spec.kmaxq - 1) as f32 + is as f32 * spec.step) / denom;
    }
    // Round every value at every trial scale, and find each point's place on the lattice
    // (its codes read as a base-`levels` number).
    let q = &mut s.q;
    let (half, one, two) = (v8.splat(0.5), v8.splat(1.0), v8.splat(2.0));
    let levels = v8.splat(if spec.kmaxq == 3 { 3.0 } else { 8.0 });
    let hi = (spec.kmaxq - 1) as f32;
    let mut points = [[0i32; MAX_TRIALS]; 8];
    for v in 0..nvec {
        let id = v8.load(ids[8 * v..8 * v + 8].try_into().expect("8 trials"));
        for (k, point) in points.iter_mut().enumerate().take(ngroups) {
            let mut u = v8.splat(0.0);
            for i in (lanes * k..lanes * (k + 1)).rev() {
                let t = v8.sub(v8.mul(id, v8.splat(xval[i])), one);
                let code = v8.level(v8.mul(half, t), 0.0, hi);
                q[i][8 * v..8 * v + 8]
                    .copy_from_slice(&v8.to_array(v8.add(v8.mul(code, two), one)));
                // Exact: integers below 2¹⁶.
                u = v8.add(v8.mul(u, levels), code);
            }
            point[8 * v..8 * v + 8].copy_from_slice(&v8.trunc_i32(u));
        }
    }
    // Points off the grid become their best neighbour at the trial's scale.
    let mut off = [0u8; MAX_TRIALS];
    for (t, (&id, off)) in ids.iter().zip(&mut off).enumerate().take(ntrials) {
        let this_scale = 1.0 / id;
        for (k, point) in points.iter().enumerate().take(ngroups) {
            if let Err(list) = lat.entry(point[t] as usize) {
                *off |= 1 << k;
                let r = lanes * k..lanes * (k + 1);
                let g = lat
                    .nearest(v8, list, &xval[r.clone()], &waux[r], this_scale)
                    .ok_or(SearchError::NoNeighbour)?;
                for (j, &c) in lat.coords(g)[..lanes].iter().enumerate() {
                    q[lanes * k + j][t] = c as f32;
                }
            }
        }
    }
    // Σ w·x·q and Σ w·q·q of every trial, in the reference's order.
    let (mut sumqx, mut sumq2) = ([0f32; MAX_TRIALS], [0f32; MAX_TRIALS]);
    for v in 0..nvec {
        let (mut qx, mut q2) = (v8.splat(0.0), v8.splat(0.0));
        for i in 0..n {
            let qi = v8.load(q[i][8 * v..8 * v + 8].try_into().expect("8 trials"));
            let (w, wx) = (v8.splat(weight[i]), v8.splat(weight[i] * xval[i]));
            qx = v8.add(qx, v8.mul(wx, qi));
            q2 = v8.add(q2, v8.mul(v8.mul(w, qi), qi));
        }
        sumqx[8 * v..8 * v + 8].copy_from_slice(&v8.to_array(qx));
        sumq2[8 * v..8 * v + 8].copy_from_slice(&v8.to_array(q2));
    }
    let mut best = 0.0f32;
    let mut best_trial = None;
    for t in 0..ntrials {
        let (sumqx, sumq2) = (sumqx[t], sumq2[t]);
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            best_trial = Some(t);
        }
    }
    if let Some(t) = best_trial {
        for (l, q) in l.iter_mut().zip(&q[..n]) {
            *l = ((q[t] as i32 - 1) / 2) as i8;
        }
        for (k, on) in on.iter_mut().enumerate() {
            *on = off[t] & (1 << k) == 0;
        }
    }

    let any_off = on.iter().any(|&o| !o);
    let refine = match spec.refine {
        Refine::Always => scale > 0.0,
        Refine::OffGrid | Refine::AllIfAnyOff => any_off && scale > 0.0,
    };
    if refine {
        let id = 1.0 / scale;
        for k in 0..ngroups {
            if spec.refine == Refine::OffGrid && on[k] {
                continue;
            }
            let r = lanes * k..lanes * (k + 1);
            round_codes(id, &xval[r.clone()], spec.kmaxq, &mut l[r.clone()]);
            if let Err(list) = lat.lookup(&l[r.clone()]) {
                let (x, w) = (&xval[r.clone()], &waux[r.clone()]);
                lat.best_neighbour(v8, list, x, w, scale, &mut l[r])
                    .ok_or(SearchError::NoNeighbour)?;
            }
        }
        let (sumqx, sumq2) = sums(weight, xval, l);
        if sumq2 > 0.0 {
            scale = sumqx / sumq2;
        }
    }
    if scale < 0.0 {
        scale = -scale;
        for sign in signs.iter_mut().take(n / 8) {
            *sign = if spec.parity_signs {
                !*sign & 127
            } else {
                !*sign
            };
        }
    }
    let mut grid = [0u16; 8];
    for (k, g) in grid.iter_mut().enumerate().take(ngroups) {
        let u = lat.pack(&l[lanes * k..lanes * (k + 1)]);
        *g = lat.on_grid(u).ok_or(SearchError::OffGrid)?;
    }
    if scale.is_nan() || scale < 0.0 {
        return Err(SearchError::BadScale);
    }
    Ok(Some(Fit { scale, grid, signs }))
}

/// Fits every `spec.n`-value group of the 256-value super-block `xbl`. Each value's
/// importance is `qw·√(σ² + x²)` with the imatrix slice `qw`, `plain(σ², x)` without;
/// `store(ib, fit)` receives each group that is not treated as zero. Returns the group
/// scales (zero for skipped groups) and their maximum (C's `MAX` fold from 0).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_superblock<S: V8>(
    v8: S,
    spec: &Spec,
    lat: &Lattice,
    xbl: &[f32],
    qw: Option<&[f32]>,
    sigma2: f32,
    plain: fn(f32, f32) -> f32,
    s: &mut Scratch,
    mut store: impl FnMut(usize, &Fit),
) -> Result<([f32; 16], f32), SearchError> {
    let mut weight = [0f32; 32];
    let weight = &mut weight[..spec.n];
    let mut scales = [0f32; 16];
    let mut max_scale = 0f32;
    for (ib, xb) in xbl.chunks_exact(spec.n).enumerate() {
        match qw {
            Some(qw) => {
                for ((w, &q), &x) in weight.iter_mut().zip(&qw[spec.n * ib..]).zip(xb) {
                    *w = q * (sigma2 + x * x).sqrt();
                }
            }
            None => {
                for (w, &x) in weight.iter_mut().zip(xb) {
                    *w = plain(sigma2, x);
                }
            }
        }
        if let Some(fit) = fit_group(v8, spec, lat, xb, weight, s)? {
            store(ib, &fit);
            scales[ib] = fit.scale;
            max_scale = cmax(max_scale, fit.scale);
        }
    }
    Ok((scales, max_scale))
}

/// `nearest_int(0.5·(id·scale − 1))` clamped to `0..=max`: a group scale as its 4-bit (or
/// 3-bit) code.
#[inline(always)]
pub(crate) fn scale_code(id: f32, scale: f32, max: i32) -> u8 {
    nearest_int(0.5 * (id * scale - 1.0)).clamp(0, max) as u8
}

/// Stores the group scales of a super-block whose scale is `d` as 4-bit codes, two per
/// byte (even groups in the low nibble), into the zeroed `out`.
#[inline(always)]
pub(crate) fn pack_scale_nibbles(out: &mut [u8], d: f32, scales: &[f32]) {
    let id = 1.0 / d;
    for (ib, &sc) in scales.iter().enumerate() {
        out[ib / 2] |= scale_code(id, sc, 15) << (4 * (ib % 2));
    }
}

/// `Σ x²` over a super-block, in order.
#[inline(always)]
pub(crate) fn sum_squares(x: &[f32]) -> f32 {
    x.iter().fold(0.0f32, |s, &v| s + v * v)
}
