//! Structure-of-arrays versions of the scale searches in [`crate::kquants`], which fit eight
//! independent groups at once, one per lane of a [`V8`] vector.
//!
//! A K-quant super-block runs the same search on each of its 8 or 16 sub-blocks, and the
//! legacy imatrix paths on each 32-value block. Within one group the search is sequential
//! (every sum accumulates in index order, and the qkx searches even feed each candidate's
//! result into the next), but the groups are independent. So the data are transposed to
//! `xt[i][g]` (element `i` of group `g`) and every operation works on the eight groups at
//! once: lane `g` performs exactly the f32 operation that the scalar search performs for
//! group `g`, in the same order, so the results are bit-identical. Branches become per-lane
//! selects: both sides are computed and the one the reference takes is kept. The discarded
//! side may divide by zero or make NaNs, which is harmless.
//!
//! The searches return, per group, the scale (and offset) and the parameters from which the
//! kept levels are recomputed on demand (the callers overwrite the levels of almost every
//! group with a requantization against the stored scales, so storing them would be wasted).
//! The recomputation repeats the very operations that produced them, so it is exact.

use crate::common::nearest_int;
use crate::kquants::{QkxSearch, GROUP_MAX_EPS};
use crate::simd::{madd, V8};

/// Groups per vector.
pub(crate) const LANES: usize = 8;

/// The transpose of 8 consecutive groups of `N` values: `t[i][g] = x[g*N + i]`. When `x`
/// holds fewer groups, the missing ones are zeros.
#[inline(always)]
pub(crate) fn transpose<const N: usize>(x: &[f32]) -> [[f32; LANES]; N] {
    let mut t = [[0f32; LANES]; N];
    for (g, xs) in x.chunks_exact(N).take(LANES).enumerate() {
        for (row, &v) in t.iter_mut().zip(xs) {
            row[g] = v;
        }
    }
    t
}

/// `x²` elementwise: ggml's default weights.
#[inline(always)]
pub(crate) fn squares<const N: usize>(xt: &[[f32; LANES]; N]) -> [[f32; LANES]; N] {
    let mut w = [[0f32; LANES]; N];
    for (w, x) in w.iter_mut().zip(xt) {
        for (w, &x) in w.iter_mut().zip(x) {
            *w = x * x;
        }
    }
    w
}

/// Per group, the signed value of largest magnitude (the first one on ties, NaN never
/// wins) and that magnitude, as `kquants`' scalar scan.
#[inline(always)]
fn signed_absmax<S: V8, const N: usize>(s: S, xt: &[[f32; LANES]; N]) -> (S::F, S::F) {
    let (mut max, mut amax) = (s.splat(0.0), s.splat(0.0));
    for row in xt {
        let x = s.load(row);
        let av = s.abs(x);
        let m = s.lt(amax, av);
        amax = s.select(m, av, amax);
        max = s.select(m, x, max);
    }
    (max, amax)
}

/// Result of [`make_qx_quants_lanes`].
pub(crate) struct QxFit {
    /// The scale `make_qx_quants` returns (0 for an all-zero group).
    pub scale: [f32; LANES],
    /// The inverse scale of the levels the reference keeps.
    pub iscale: [f32; LANES],
    /// The largest magnitude; below `GROUP_MAX_EPS` the group is all zero (levels 0).
    pub amax: [f32; LANES],
}

impl QxFit {
    /// The levels (`l + nmax`) that `make_qx_quants` leaves for group `g`, whose values
    /// are `x`.
    #[inline(always)]
    pub fn levels(&self, g: usize, nmax: i32, x: &[f32], l: &mut [u8]) {
        if self.amax[g] < GROUP_MAX_EPS {
            l[..x.len()].fill(0);
            return;
        }
        let iscale = self.iscale[g];
        for (li, &xi) in l.iter_mut().zip(x) {
            *li = (nearest_int(iscale * xi).clamp(-nmax, nmax - 1) + nmax) as u8;
        }
    }
}

/// `a[i] * b[i]` lane-wise for every row.
#[inline(always)]
fn products<S: V8, const N: usize>(
    s: S,
    a: &[[f32; LANES]; N],
    b: &[[f32; LANES]; N],
) -> [[f32; LANES]; N] {
    let mut p = [[0f32; LANES]; N];
    for ((p, a), b) in p.iter_mut().zip(a).zip(b) {
        *p = s.to_array(s.mul(s.load(a), s.load(b)));
    }
    p
}

/// The `(Σ w·x·l, Σ w·l²)` of one `make_qx_quants` candidate, `l` the levels at `iscale`
/// clamped to `lo..=hi`, accumulated in index order; `wx` holds the products `w·x`.
#[inline(always)]
fn qx_sums<S: V8, const N: usize>(
    s: S,
    iscale: S::F,
    lo: f32,
    hi: f32,
    xt: &[[f32; LANES]; N],
    wt: &[[f32; LANES]; N],
    wx: &[[f32; LANES]; N],
) -> (S::F, S::F) {
    let (mut sumlx, mut suml2) = (s.splat(0.0), s.splat(0.0));
    for ((x, w), wx) in xt.iter().zip(wt).zip(wx) {
        let q = s.level(s.mul(iscale, s.load(x)), lo, hi);
        sumlx = s.add(sumlx, s.mul(s.load(wx), q));
        suml2 = s.add(suml2, s.mul(s.mul(s.load(w), q), q));
    }
    (sumlx, suml2)
}

/// [`crate::kquants::make_qx_quants`] for 8 groups of `N` (transposed values `xt`,
/// weights `wt`).
#[inline(always)]
pub(crate) fn make_qx_quants_lanes<S: V8, const N: usize>(
    s: S,
    nmax: i32,
    xt: &[[f32; LANES]; N],
    wt: &[[f32; LANES]; N],
) -> QxFit {
    let (max, amax) = signed_absmax(s, xt);
    let (lo, hi) = (-nmax as f32, (nmax - 1) as f32);
    // `w*x*l` is `(w*x)*l`: the first product does not depend on the candidate.
    let wx = products(s, wt, xt);
    let zero = s.splat(0.0);
    let nmaxf = nmax as f32;
    let mut best_iscale = s.div(s.splat(-nmaxf), max);
    let (sumlx, suml2) = qx_sums(s, best_iscale, lo, hi, xt, wt, &wx);
    let mut scale = s.select(s.ne(suml2, zero), s.div(sumlx, suml2), zero);
    let mut best = s.mul(scale, sumlx);
    for is in (-9..=9).filter(|&is| is != 0) {
        let iscale = s.div(s.splat(-(nmaxf + 0.1f32 * is as f32)), max);
        let (sumlx, suml2) = qx_sums(s, iscale, lo, hi, xt, wt, &wx);
        // suml2 > 0 && sumlx*sumlx > best*suml2
        let better = s.and(
            s.lt(zero, suml2),
            s.lt(s.mul(best, suml2), s.mul(sumlx, sumlx)),
        );
        let this_scale = s.div(sumlx, suml2);
        best_iscale = s.select(better, iscale, best_iscale);
        scale = s.select(better, this_scale, scale);
        best = s.select(better, s.mul(this_scale, sumlx), best);
    }
    let amax = s.to_array(amax);
    let mut scale = s.to_array(scale);
    for (sc, &a) in scale.iter_mut().zip(&amax) {
        if a < GROUP_MAX_EPS {
            *sc = 0.0;
        }
    }
    QxFit {
        scale,
        iscale: s.to_array(best_iscale),
        amax,
    }
}

/// Result of [`make_q3_quants_lanes`].
pub(crate) struct Q3Fit<const N: usize> {
    /// The scale `make_q3_quants` returns (0 for an all-zero group).
    pub scale: [f32; LANES],
    /// The final levels `l` in `-nmax..nmax` (not yet offset by `nmax`), transposed.
    pub lt: [[f32; LANES]; N],
    /// The largest magnitude; below `GROUP_MAX_EPS` the group is all zero (levels 0).
    pub amax: [f32; LANES],
}

impl<const N: usize> Q3Fit<N> {
    /// The levels (`l + nmax`) that `make_q3_quants` leaves for group `g`.
    #[inline(always)]
    pub fn levels(&self, g: usize, nmax: i32, l: &mut [u8]) {
        let zero = self.amax[g] < GROUP_MAX_EPS;
        for (li, row) in l[..N].iter_mut().zip(&self.lt) {
            *li = if zero {
                0
            } else {
                (row[g] as i32 + nmax) as u8
            };
        }
    }
}

/// [`crate::kquants::make_q3_quants`] for 8 groups of `N` (transposed values `xt`).
///
/// The coordinate descent runs up to 5 rounds, each group stopping after a round without a
/// change. Here all lanes run until no lane changes: a round without a change leaves a
/// group's state untouched, so repeating it (with the same inputs) changes nothing again.
/// The levels are kept as floats; they are small integers, so comparing them is exact.
#[inline(always)]
pub(crate) fn make_q3_quants_lanes<S: V8, const N: usize>(
    s: S,
    nmax: i32,
    xt: &[[f32; LANES]; N],
) -> Q3Fit<N> {
    let (max, amax) = signed_absmax(s, xt);
    let (lo, hi) = (-nmax as f32, (nmax - 1) as f32);
    let iscale = s.div(s.splat(-(nmax as f32)), max);
    // The weight is x², and `w*x*l` is `(w*x)*l`.
    let w = products(s, xt, xt);
    let wx = products(s, &w, xt);
    let mut lt = [[0f32; LANES]; N];
    let (mut sumlx, mut suml2) = (s.splat(0.0), s.splat(0.0));
    for ((l, x), (w, wx)) in lt.iter_mut().zip(xt).zip(w.iter().zip(&wx)) {
        let q = s.level(s.mul(iscale, s.load(x)), lo, hi);
        *l = s.to_array(q);
        sumlx = s.add(sumlx, s.mul(s.load(wx), q));
        suml2 = s.add(suml2, s.mul(s.mul(s.load(w), q), q));
    }
    let zero = s.splat(0.0);
    for _ in 0..5 {
        let mut changed = zero;
        for ((l, x), (w, wx)) in lt.iter_mut().zip(xt).zip(w.iter().zip(&wx)) {
            let (x, w, wx) = (s.load(x), s.load(w), s.load(wx));
            let cur = s.load(l);
            let slx = s.sub(sumlx, s.mul(wx, cur));
            let sl2 = s.sub(suml2, s.mul(s.mul(w, cur), cur));
            let new_l = s.level(s.div(s.mul(x, sl2), slx), lo, hi);
            let slx_new = s.add(slx, s.mul(wx, new_l));
            let sl2_new = s.add(sl2, s.mul(s.mul(w, new_l), new_l));
            // slx > 0 && new_l != l && sl2_new > 0
            //     && slx_new*slx_new*suml2 > sumlx*sumlx*sl2_new
            let take = s.and(
                s.and(s.lt(zero, slx), s.ne(new_l, cur)),
                s.and(
                    s.lt(zero, sl2_new),
                    s.lt(
                        s.mul(s.mul(sumlx, sumlx), sl2_new),
                        s.mul(s.mul(slx_new, slx_new), suml2),
                    ),
                ),
            );
            *l = s.to_array(s.select(take, new_l, cur));
            sumlx = s.select(take, slx_new, sumlx);
            suml2 = s.select(take, sl2_new, suml2);
            changed = s.or(changed, take);
        }
        if !s.any(changed) {
            break;
        }
    }
    let amax = s.to_array(amax);
    let mut scale = s.to_array(s.select(s.lt(zero, suml2), s.div(sumlx, suml2), zero));
    for (sc, &a) in scale.iter_mut().zip(&amax) {
        if a < GROUP_MAX_EPS {
            *sc = 0.0;
        }
    }
    Q3Fit { scale, lt, amax }
}

/// Result of [`qkx_search_lanes`].
pub(crate) struct QkxFit {
    /// The scale `make_qkx2_quants` / `make_qkx3_quants` returns.
    pub scale: [f32; LANES],
    /// The (non-negative) `the_min` it returns.
    pub the_min: [f32; LANES],
    /// The kept levels are `clamp(nearest_int(level_iscale * (x - level_min)), 0, nmax)`.
    pub level_iscale: [f32; LANES],
    /// See `level_iscale`.
    pub level_min: [f32; LANES],
    /// Groups with `max <= min`: levels all 0.
    pub flat: [bool; LANES],
}

impl QkxFit {
    /// The levels the search leaves for group `g`, whose values are `x`.
    #[inline(always)]
    pub fn levels(&self, g: usize, nmax: i32, x: &[f32], l: &mut [u8]) {
        if self.flat[g] {
            l[..x.len()].fill(0);
            return;
        }
        let (iscale, min) = (self.level_iscale[g], self.level_min[g]);
        for (li, &xi) in l.iter_mut().zip(x) {
            *li = nearest_int(iscale * (xi - min)).clamp(0, nmax) as u8;
        }
    }
}

/// [`crate::kquants::make_qkx2_quants`] (and `make_qkx3_quants` with weights) for 8
/// groups of `N` (transposed values `xt` and weights `wt`).
#[inline(always)]
pub(crate) fn qkx_search_lanes<S: V8, const N: usize>(
    s: S,
    nmax: i32,
    xt: &[[f32; LANES]; N],
    wt: &[[f32; LANES]; N],
    search: QkxSearch,
) -> QkxFit {
    if search.use_mad {
        qkx_search_with::<S, N, true>(s, nmax, xt, wt, search)
    } else {
        qkx_search_with::<S, N, false>(s, nmax, xt, wt, search)
    }
}

/// The error measure of the qkx searches: `|d|` (`USE_MAD`) or `d²`.
#[inline(always)]
fn err<S: V8, const USE_MAD: bool>(s: S, d: S::F) -> S::F {
    if USE_MAD {
        s.abs(d)
    } else {
        s.mul(d, d)
    }
}

/// [`qkx_search_lanes`] for a fixed error metric (`USE_MAD`: |error| instead of error²).
#[inline(always)]
fn qkx_search_with<S: V8, const N: usize, const USE_MAD: bool>(
    s: S,
    nmax: i32,
    xt: &[[f32; LANES]; N],
    wt: &[[f32; LANES]; N],
    search: QkxSearch,
) -> QkxFit {
    let zero = s.splat(0.0);
    let x0 = s.load(&xt[0]);
    let (mut min, mut max) = (x0, x0);
    let mut sum_w = s.load(&wt[0]);
    let mut sum_x = s.mul(sum_w, x0);
    for (x, w) in xt.iter().zip(wt).skip(1) {
        let (x, w) = (s.load(x), s.load(w));
        min = s.min(x, min);
        max = s.max(x, max);
        sum_w = s.add(sum_w, w);
        sum_x = s.acc_mul(sum_x, w, x);
    }
    // `if min > 0 { min = 0 }` (keeps a -0 or NaN `min`).
    min = s.min(zero, min);
    let flat = s.le(max, min);
    let flat_min = min;

    let nmaxf = nmax as f32;
    let iscale = s.div(s.splat(nmaxf), s.sub(max, min));
    let mut scale = s.div(s.splat(1.0), iscale);
    let mut best = zero;
    for (x, w) in xt.iter().zip(wt) {
        let x = s.load(x);
        let l = s.level(s.mul(iscale, s.sub(x, min)), 0.0, nmaxf);
        let diff = s.sub(s.mul_add(scale, l, min), x);
        best = s.acc_mul(best, s.load(w), err::<S, USE_MAD>(s, diff));
    }
    let (mut level_iscale, mut level_min) = (iscale, min);

    let mut lq = [[0f32; LANES]; N];
    // Below one step the reference skips the search.
    let candidates = if search.nstep < 1 {
        0
    } else {
        search.nstep + 1
    };
    for is in 0..candidates {
        let c = madd::<S>(search.rdelta, is as f32, search.rmin) + nmaxf;
        let iscale = s.div(s.splat(c), s.sub(max, min));
        let (mut sum_l, mut sum_l2, mut sum_xl) = (zero, zero, zero);
        for ((lq, x), w) in lq.iter_mut().zip(xt).zip(wt) {
            let x = s.load(x);
            let q = s.level(s.mul(iscale, s.sub(x, min)), 0.0, nmaxf);
            *lq = s.to_array(q);
            // `w*l`, `w*l*l` and `w*l*x` all start with the product `w*l`.
            let w = s.load(w);
            let wq = s.mul(w, q);
            sum_l = s.acc_mul(sum_l, w, q);
            sum_l2 = s.acc_mul(sum_l2, wq, q);
            sum_xl = s.acc_mul(sum_xl, wq, x);
        }
        let det = s.mul_sub_mul(sum_w, sum_l2, sum_l, sum_l);
        let fit_scale = s.div(s.mul_sub_mul(sum_w, sum_xl, sum_x, sum_l), det);
        let fit_min = s.div(s.mul_sub_mul(sum_l2, sum_x, sum_l, sum_xl), det);
        // A positive offset is replaced by 0 and the scale refitted alone.
        let pos = s.lt(zero, fit_min);
        let this_scale = s.select(pos, s.div(sum_xl, sum_l2), fit_scale);
        let this_min = s.select(pos, zero, fit_min);
        let mut cur = zero;
        for ((lq, x), w) in lq.iter().zip(xt).zip(wt) {
            let diff = s.sub(s.mul_add(this_scale, s.load(lq), this_min), s.load(x));
            cur = s.acc_mul(cur, s.load(w), err::<S, USE_MAD>(s, diff));
        }
        // det > 0 && cur < best
        let better = s.and(s.lt(zero, det), s.lt(cur, best));
        best = s.select(better, cur, best);
        scale = s.select(better, this_scale, scale);
        level_iscale = s.select(better, iscale, level_iscale);
        level_min = s.select(better, min, level_min);
        min = s.select(better, this_min, min);
    }

    let flat_a = s.to_array(flat);
    QkxFit {
        scale: s.to_array(s.select(flat, zero, scale)),
        the_min: s.to_array(s.neg(s.select(flat, flat_min, min))),
        level_iscale: s.to_array(level_iscale),
        level_min: s.to_array(level_min),
        flat: flat_a.map(|m| m.to_bits() != 0),
    }
}

#[cfg(test)]
mod tests {
    //! Every lane search against its scalar transcription in `kquants`, for every `V8`
    //! implementation this machine can run, on random groups of many magnitudes and on
    //! degenerate ones (zeros, constants, ties, subnormals, infinities). NaN-free inputs
    //! must agree bit for bit.

    use super::*;
    use crate::kquants::{make_q3_quants, make_qkx2_quants, make_qx_quants, QKX3_IMATRIX_SEARCH};
    use crate::simd::Scalar;

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn uniform(&mut self) -> f32 {
            (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        }
    }

    /// Eight groups of `N` values, `case` picking the kind of data.
    fn groups<const N: usize>(rng: &mut Rng, case: usize) -> Vec<f32> {
        let mut x = Vec::with_capacity(8 * N);
        for g in 0..8 {
            let scale = [1.0f32, 1e-3, 30.0, 1e-20, 1e-39, 1e30, 3e38][(case + g) % 7];
            for i in 0..N {
                let v = match (case + 3 * g) % 11 {
                    0 => 0.0,
                    9 => -0.0,
                    10 if i % 2 == 0 => -0.0,
                    10 => rng.uniform().abs() * scale,
                    1 => scale,
                    2 => ((i % 5) as f32 - 2.0) * 0.5 * scale,
                    3 => rng.uniform().abs() * scale,
                    4 => -rng.uniform().abs() * scale,
                    5 if i == N / 2 => f32::INFINITY,
                    6 => f32::from_bits((rng.next() >> 41) as u32),
                    _ => rng.uniform() * scale,
                };
                x.push(v);
            }
        }
        x
    }

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    fn check<S: V8>(s: S) {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for case in 0..200 {
            check_n::<S, 16>(s, &mut rng, case);
            check_n::<S, 32>(s, &mut rng, case);
        }
    }

    fn check_n<S: V8, const N: usize>(s: S, rng: &mut Rng, case: usize) {
        let x = groups::<N>(rng, case);
        let w: Vec<f32> = (0..8 * N).map(|_| rng.uniform().abs() + 0.01).collect();
        let xt = transpose::<N>(&x);
        let wt = transpose::<N>(&w);
        let mut l = [0u8; 32];
        let mut lf = [0u8; 32];

        for nmax in [4, 8, 16, 32] {
            let fit = make_qx_quants_lanes(s, nmax, &xt, &wt);
            for g in 0..8 {
                let xs = &x[g * N..(g + 1) * N];
                let d = make_qx_quants(nmax, xs, Some(&w[g * N..]), &mut l);
                fit.levels(g, nmax, xs, &mut lf);
                assert!(same(d, fit.scale[g]), "qx {nmax} case {case} g {g}");
                assert_eq!(l[..N], lf[..N], "qx levels {nmax} case {case} g {g}");
            }
        }

        let fit = make_q3_quants_lanes(s, 4, &xt);
        for g in 0..8 {
            let xs = &x[g * N..(g + 1) * N];
            let d = make_q3_quants(4, xs, &mut l);
            fit.levels(g, 4, &mut lf);
            assert!(same(d, fit.scale[g]), "q3 case {case} g {g}");
            assert_eq!(l[..N], lf[..N], "q3 levels case {case} g {g}");
        }

        let searches = [
            QkxSearch {
                rmin: -0.5,
                rdelta: 0.1,
                nstep: 15,
                use_mad: true,
            },
            QkxSearch {
                rmin: -1.0,
                rdelta: 0.1,
                nstep: 20,
                use_mad: false,
            },
            QKX3_IMATRIX_SEARCH,
            QkxSearch {
                rmin: -0.5,
                rdelta: 0.1,
                nstep: 0,
                use_mad: false,
            },
        ];
        for search in searches {
            for nmax in [3, 15, 31] {
                let fit = qkx_search_lanes(s, nmax, &xt, &wt, search);
                for g in 0..8 {
                    let xs = &x[g * N..(g + 1) * N];
                    let (d, m) = make_qkx2_quants(nmax, xs, &w[g * N..], &mut l, search);
                    fit.levels(g, nmax, xs, &mut lf);
                    let what = format!("qkx {search:?} {nmax} case {case} g {g}");
                    assert!(same(d, fit.scale[g]), "{what}: {d} vs {}", fit.scale[g]);
                    assert!(
                        same(m, fit.the_min[g]),
                        "{what}: min {m} vs {}",
                        fit.the_min[g]
                    );
                    assert_eq!(l[..N], lf[..N], "{what}: levels");
                }
            }
        }
    }

    #[test]
    fn scalar_lanes_match_the_reference() {
        check(Scalar);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sse2_lanes_match_the_reference() {
        check(crate::simd::Sse2);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_lanes_match_the_reference() {
        match crate::simd::Avx2::get() {
            Some(s) => check(s),
            None => eprintln!("no AVX2 on this CPU: skipped"),
        }
    }
}
