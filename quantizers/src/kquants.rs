//! Scale-search helpers shared by the K-quants and the imatrix paths of the legacy quants
//! (`make_qx_quants`, `make_q3_quants`, `make_qkx2_quants`, `make_qkx3_quants`,
//! `make_qp_quants`), plus the scale packings that several K-quant blocks share.
//!
//! Every helper quantizes one group `x` (its length is the group size `n`) and writes the
//! chosen levels into `l`, which must have the same length. All arithmetic is f32, evaluated
//! in ggml's source order without fusing: sums accumulate sequentially in index order, and
//! products keep C's left-to-right grouping (`w*x*l` is `(w*x)*l`). Comparisons keep ggml's
//! strictness, so NaN and inf inputs take the same branches as the C code.

// The K-quant kernels run these searches eight groups at a time through `crate::lanes`;
// the scalar versions here are the reference transcriptions of ggml's code, used by the
// paths that fit one group at a time and as the oracle of the lane versions' tests.

use crate::common::nearest_int;

/// ggml's `GROUP_MAX_EPS`: groups whose largest magnitude is below this are "all zero".
pub(crate) const GROUP_MAX_EPS: f32 = 1e-15;

/// Largest group the helpers that need stack scratch space accept (`make_qx_quants`,
/// `make_q3_quants`, `make_qkx2_quants`, `make_qkx3_quants`).
pub(crate) const MAX_GROUP: usize = 32;

/// Parameters of the candidate-scale search of [`make_qkx2_quants`] / [`make_qkx3_quants`]:
/// candidates `iscale = (rmin + rdelta*is + nmax) / (max - min)` for `is` in `0..=nstep`,
/// scored by the weighted absolute (`use_mad`) or squared error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QkxSearch {
    /// Offset of the first candidate, in quant levels.
    pub rmin: f32,
    /// Step between candidates, in quant levels.
    pub rdelta: f32,
    /// Number of steps (`nstep + 1` candidates); below 1 the search is skipped.
    pub nstep: i32,
    /// Score with |error| instead of error².
    pub use_mad: bool,
}

/// The search every imatrix path uses with `make_qkx3_quants` (`-0.9, 0.05, 36, false`).
pub(crate) const QKX3_IMATRIX_SEARCH: QkxSearch = QkxSearch {
    rmin: -0.9,
    rdelta: 0.05,
    nstep: 36,
    use_mad: false,
};

/// The signed value of largest magnitude (the first one wins ties) and that magnitude.
/// Starts from 0, so NaNs never win.
#[inline]
fn signed_absmax(x: &[f32]) -> (f32, f32) {
    let (mut max, mut amax) = (0.0f32, 0.0f32);
    for &v in x {
        let av = v.abs();
        if av > amax {
            amax = av;
            max = v;
        }
    }
    (max, amax)
}

/// Copies the weights, or, when there are none, fills `buf` with `x[i]*x[i]` (ggml's
/// default weighting), and returns the slice to use.
#[inline]
fn weights_or_squares<'a>(
    x: &[f32],
    weights: Option<&'a [f32]>,
    buf: &'a mut [f32; MAX_GROUP],
) -> &'a [f32] {
    match weights {
        Some(w) => &w[..x.len()],
        None => {
            for (b, &v) in buf.iter_mut().zip(x) {
                *b = v * v;
            }
            &buf[..x.len()]
        }
    }
}

/// `make_qx_quants` with `rmse_type == 1`: symmetric quantization of a group to levels
/// `0..2*nmax` (stored as `l + nmax`, `l` in `-nmax..nmax`), searching 19 candidate scales
/// for the best weighted least-squares fit. Weights are `weights[i]`, or `x[i]²` when
/// `None`. Returns the scale (0 for an all-zero group, whose levels are all 0).
///
/// `x.len()` must be at most [`MAX_GROUP`]; `l` and `weights` at least as long as `x`.
pub(crate) fn make_qx_quants(nmax: i32, x: &[f32], weights: Option<&[f32]>, l: &mut [u8]) -> f32 {
    let n = x.len();
    assert!(n <= MAX_GROUP, "make_qx_quants: group of {n} > {MAX_GROUP}");
    let l = &mut l[..n];
    let mut wbuf = [0.0f32; MAX_GROUP];
    let w = weights_or_squares(x, weights, &mut wbuf);

    let (max, amax) = signed_absmax(x);
    if amax < GROUP_MAX_EPS {
        l.fill(0);
        return 0.0;
    }
    let level = |iscale: f32, v: f32| nearest_int(iscale * v).clamp(-nmax, nmax - 1);
    let sums = |iscale: f32| {
        let (mut sumlx, mut suml2) = (0.0f32, 0.0f32);
        for (&xi, &wi) in x.iter().zip(w) {
            let q = level(iscale, xi) as f32;
            sumlx += wi * xi * q;
            suml2 += wi * q * q;
        }
        (sumlx, suml2)
    };
    let store = |iscale: f32, l: &mut [u8]| {
        for (li, &xi) in l.iter_mut().zip(x) {
            *li = (level(iscale, xi) + nmax) as u8;
        }
    };

    let iscale = -(nmax as f32) / max;
    store(iscale, l);
    let (sumlx, suml2) = sums(iscale);
    let mut scale = if suml2 != 0.0 { sumlx / suml2 } else { 0.0 };
    let mut best = scale * sumlx;
    for is in (-9..=9).filter(|&is| is != 0) {
        let iscale = -(nmax as f32 + 0.1f32 * is as f32) / max;
        let (sumlx, suml2) = sums(iscale);
        if suml2 > 0.0 && sumlx * sumlx > best * suml2 {
            store(iscale, l);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    scale
}

/// `make_q3_quants` with `do_rmse = true` (the Q3_K reference): symmetric levels as in
/// [`make_qx_quants`] with weights `x[i]²`, refined by up to 5 rounds of coordinate descent.
/// Writes `l + nmax` into `l`; returns the scale (0 and all-zero levels for a zero group).
///
/// `x.len()` must be at most [`MAX_GROUP`]. (The kernels use
/// [`crate::lanes::make_q3_quants_lanes`]; this is its test oracle.)
#[cfg(test)]
pub(crate) fn make_q3_quants(nmax: i32, x: &[f32], l: &mut [u8]) -> f32 {
    let n = x.len();
    assert!(n <= MAX_GROUP, "make_q3_quants: group of {n} > {MAX_GROUP}");
    let l = &mut l[..n];
    let (max, amax) = signed_absmax(x);
    if amax < GROUP_MAX_EPS {
        l.fill(0);
        return 0.0;
    }
    let iscale = -(nmax as f32) / max;
    let mut lv = [0i32; MAX_GROUP];
    let lv = &mut lv[..n];
    let (mut sumlx, mut suml2) = (0.0f32, 0.0f32);
    for (li, &xi) in lv.iter_mut().zip(x) {
        let q = nearest_int(iscale * xi).clamp(-nmax, nmax - 1);
        *li = q;
        let w = xi * xi;
        let qf = q as f32;
        sumlx += w * xi * qf;
        suml2 += w * qf * qf;
    }
    for _ in 0..5 {
        let mut changed = 0;
        for (li, &xi) in lv.iter_mut().zip(x) {
            let w = xi * xi;
            let cur = *li as f32;
            let mut slx = sumlx - w * xi * cur;
            if slx > 0.0 {
                let mut sl2 = suml2 - w * cur * cur;
                let new_l = nearest_int(xi * sl2 / slx).clamp(-nmax, nmax - 1);
                if new_l != *li {
                    let nf = new_l as f32;
                    slx += w * xi * nf;
                    sl2 += w * nf * nf;
                    if sl2 > 0.0 && slx * slx * suml2 > sumlx * sumlx * sl2 {
                        *li = new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        changed += 1;
                    }
                }
            }
        }
        if changed == 0 {
            break;
        }
    }
    for (o, &q) in l.iter_mut().zip(lv.iter()) {
        *o = (q + nmax) as u8;
    }
    if suml2 > 0.0 {
        sumlx / suml2
    } else {
        0.0
    }
}

/// `make_qkx2_quants`: asymmetric quantization of a group to levels `0..=nmax` with a
/// non-positive offset, searching `search.nstep + 1` candidate scales and refitting scale
/// and offset by weighted least squares. Returns `(scale, the_min)` where the dequantized
/// value is `scale*l - the_min` (`the_min >= 0`).
///
/// `x.len()` must be at most [`MAX_GROUP`]; `weights` and `l` at least as long as `x`.
/// (The kernels use [`crate::lanes::qkx_search_lanes`]; this is its test oracle.)
#[cfg(test)]
pub(crate) fn make_qkx2_quants(
    nmax: i32,
    x: &[f32],
    weights: &[f32],
    l: &mut [u8],
    search: QkxSearch,
) -> (f32, f32) {
    qkx_search(nmax, x, &weights[..x.len()], l, search)
}

/// `make_qkx3_quants`: the same search as [`make_qkx2_quants`], except that the weights
/// may be absent, in which case `x[i]²` is used. (The C early exit tests `max <= min`
/// instead of `max == min`; the two agree for every input, NaN included, since `min` is
/// at most `max` unless both are NaN.) Returns `(scale, the_min)`.
///
/// `x.len()` must be at most [`MAX_GROUP`]; `weights` and `l` at least as long as `x`.
#[cfg(test)]
pub(crate) fn make_qkx3_quants(
    nmax: i32,
    x: &[f32],
    weights: Option<&[f32]>,
    l: &mut [u8],
    search: QkxSearch,
) -> (f32, f32) {
    let mut wbuf = [0.0f32; MAX_GROUP];
    assert!(x.len() <= MAX_GROUP, "make_qkx3_quants: group too large");
    let w = weights_or_squares(x, weights, &mut wbuf);
    qkx_search(nmax, x, w, l, search)
}

/// The common body of `make_qkx2_quants` / `make_qkx3_quants`; `w.len() == x.len()`.
/// Dispatches on the error metric so that the hot loops carry no branch for it.
#[cfg(test)]
fn qkx_search(nmax: i32, x: &[f32], w: &[f32], l: &mut [u8], search: QkxSearch) -> (f32, f32) {
    if search.use_mad {
        qkx_search_with::<true>(nmax, x, w, l, search)
    } else {
        qkx_search_with::<false>(nmax, x, w, l, search)
    }
}

/// [`qkx_search`] for a fixed error metric (`USE_MAD`: |error| instead of error²).
#[cfg(test)]
fn qkx_search_with<const USE_MAD: bool>(
    nmax: i32,
    x: &[f32],
    w: &[f32],
    l: &mut [u8],
    search: QkxSearch,
) -> (f32, f32) {
    let n = x.len();
    assert!(
        (1..=MAX_GROUP).contains(&n),
        "qkx search: group of {n} elements"
    );
    let l = &mut l[..n];

    let (mut min, mut max) = (x[0], x[0]);
    let mut sum_w = w[0];
    let mut sum_x = sum_w * x[0];
    for (&xi, &wi) in x.iter().zip(w).skip(1) {
        if xi < min {
            min = xi;
        }
        if xi > max {
            max = xi;
        }
        sum_w += wi;
        sum_x += wi * xi;
    }
    if min > 0.0 {
        min = 0.0;
    }
    if max <= min {
        l.fill(0);
        return (0.0, -min);
    }

    let err = |d: f32| if USE_MAD { d.abs() } else { d * d };
    let nmaxf = nmax as f32;

    let iscale = nmaxf / (max - min);
    let mut scale = 1.0 / iscale;
    let mut best = 0.0f32;
    for ((li, &xi), &wi) in l.iter_mut().zip(x).zip(w) {
        *li = nearest_int(iscale * (xi - min)).clamp(0, nmax) as u8;
        let diff = scale * *li as f32 + min - xi;
        best += wi * err(diff);
    }
    if search.nstep < 1 {
        return (scale, -min);
    }

    let mut laux = [0u8; MAX_GROUP];
    let laux = &mut laux[..n];
    for is in 0..=search.nstep {
        let iscale = (search.rmin + search.rdelta * is as f32 + nmaxf) / (max - min);
        let (mut sum_l, mut sum_l2, mut sum_xl) = (0.0f32, 0.0f32, 0.0f32);
        for ((la, &xi), &wi) in laux.iter_mut().zip(x).zip(w) {
            let q = nearest_int(iscale * (xi - min)).clamp(0, nmax);
            *la = q as u8;
            let qf = q as f32;
            sum_l += wi * qf;
            sum_l2 += wi * qf * qf;
            sum_xl += wi * qf * xi;
        }
        let det = sum_w * sum_l2 - sum_l * sum_l;
        if det > 0.0 {
            let mut this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
            let mut this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
            if this_min > 0.0 {
                this_min = 0.0;
                this_scale = sum_xl / sum_l2;
            }
            let mut cur = 0.0f32;
            for ((&la, &xi), &wi) in laux.iter().zip(x).zip(w) {
                let diff = this_scale * la as f32 + this_min - xi;
                cur += wi * err(diff);
            }
            if cur < best {
                l.copy_from_slice(laux);
                best = cur;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    (scale, -min)
}

/// `make_qp_quants`: quantizes non-negative values (the sub-block scales or mins of the
/// imatrix paths) to levels `0..=nmax` with weights `weights`, trying 9 candidate scales
/// and refining by coordinate descent. Returns the scale (0 and all-zero levels when the
/// largest value is below [`GROUP_MAX_EPS`]).
///
/// As in C the levels are stored as `u8` with wrapping, and only the upper clamp `nmax` is
/// applied, so a negative input yields a wrapped level.
pub(crate) fn make_qp_quants(nmax: i32, x: &[f32], weights: &[f32], l: &mut [u8]) -> f32 {
    let n = x.len();
    let l = &mut l[..n];
    let w = &weights[..n];
    // C's MAX(max, x): keeps `max` only when it is strictly larger.
    let max = x.iter().fold(0.0f32, |m, &v| if m > v { m } else { v });
    if max < GROUP_MAX_EPS {
        l.fill(0);
        return 0.0;
    }
    let nmaxf = nmax as f32;

    let mut iscale = nmaxf / max;
    for (li, &xi) in l.iter_mut().zip(x) {
        *li = nearest_int(iscale * xi) as u8;
    }
    let scale = 1.0 / iscale;
    let mut best_mse = 0.0f32;
    for ((&li, &xi), &wi) in l.iter().zip(x).zip(w) {
        let diff = xi - scale * li as f32;
        best_mse += wi * diff * diff;
    }
    for is in (-4..=4).filter(|&is| is != 0) {
        let iscale_is = (0.1f32 * is as f32 + nmaxf) / max;
        let scale_is = 1.0 / iscale_is;
        let mut mse = 0.0f32;
        for (&xi, &wi) in x.iter().zip(w) {
            let q = nearest_int(iscale_is * xi).min(nmax);
            let diff = xi - scale_is * q as f32;
            mse += wi * diff * diff;
        }
        if mse < best_mse {
            best_mse = mse;
            iscale = iscale_is;
        }
    }

    let (mut sumlx, mut suml2) = (0.0f32, 0.0f32);
    for ((li, &xi), &wi) in l.iter_mut().zip(x).zip(w) {
        let q = nearest_int(iscale * xi).min(nmax);
        *li = q as u8;
        let qf = q as f32;
        sumlx += wi * xi * qf;
        suml2 += wi * qf * qf;
    }
    for _ in 0..5 {
        let mut changed = 0;
        for ((li, &xi), &wi) in l.iter_mut().zip(x).zip(w) {
            let cur = *li as f32;
            let mut slx = sumlx - wi * xi * cur;
            let mut sl2 = suml2 - wi * cur * cur;
            if slx > 0.0 && sl2 > 0.0 {
                let new_l = nearest_int(xi * sl2 / slx).min(nmax);
                if new_l != *li as i32 {
                    let nf = new_l as f32;
                    slx += wi * xi * nf;
                    sl2 += wi * nf * nf;
                    if slx * slx * suml2 > sumlx * sumlx * sl2 {
                        *li = new_l as u8;
                        sumlx = slx;
                        suml2 = sl2;
                        changed += 1;
                    }
                }
            }
        }
        if changed == 0 {
            break;
        }
    }
    if suml2 > 0.0 {
        sumlx / suml2
    } else {
        0.0
    }
}

/// Packs 8 six-bit sub-block scales and mins into Q4_K/Q5_K's 12 `scales` bytes, exactly as
/// ggml stores them (byte stores truncate, so out-of-range values wrap as in C).
pub(crate) fn pack_scale_min_k4(ls: &[u8; 8], lm: &[u8; 8]) -> [u8; 12] {
    let mut s = [0u8; 12];
    for j in 0..8 {
        if j < 4 {
            s[j] = ls[j];
            s[j + 4] = lm[j];
        } else {
            s[j + 4] = (ls[j] & 0xF) | ((lm[j] & 0xF) << 4);
            s[j - 4] |= (ls[j] >> 4) << 6;
            s[j] |= (lm[j] >> 4) << 6;
        }
    }
    s
}

/// `get_scale_min_k4`: the six-bit scale and min of sub-block `j` (0..8) from Q4_K/Q5_K's
/// 12 `scales` bytes.
#[inline]
pub(crate) fn get_scale_min_k4(j: usize, s: &[u8]) -> (u8, u8) {
    if j < 4 {
        (s[j] & 63, s[j + 4] & 63)
    } else {
        (
            (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4),
            (s[j + 4] >> 4) | ((s[j] >> 6) << 4),
        )
    }
}

/// Packs 256 two-bit levels into Q2_K/Q3_K's 64 `qs` bytes: byte `32h + l` holds elements
/// `128h + l + 32s` in bits `2s..2s+2`. Levels are truncated to the byte as C does.
pub(crate) fn pack_2bit(levels: &[u8; 256], qs: &mut [u8]) {
    for (half, out) in levels.chunks_exact(128).zip(qs.chunks_exact_mut(32)) {
        for (l, o) in out.iter_mut().enumerate() {
            *o = half[l] | (half[l + 32] << 2) | (half[l + 64] << 4) | (half[l + 96] << 6);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_min_k4_roundtrip() {
        for seed in 0..64u32 {
            let ls: [u8; 8] = std::array::from_fn(|j| ((seed * 7 + j as u32 * 13) % 64) as u8);
            let lm: [u8; 8] = std::array::from_fn(|j| ((seed * 11 + j as u32 * 5) % 64) as u8);
            let s = pack_scale_min_k4(&ls, &lm);
            for j in 0..8 {
                assert_eq!(get_scale_min_k4(j, &s), (ls[j], lm[j]), "seed {seed} j {j}");
            }
        }
    }

    #[test]
    fn pack_2bit_layout() {
        let mut levels = [0u8; 256];
        levels[128 + 64 + 5] = 3; // h = 1, s = 2, l = 5
        let mut qs = [0u8; 64];
        pack_2bit(&levels, &mut qs);
        assert_eq!(qs[32 + 5], 3 << 4);
        assert_eq!(qs.iter().filter(|&&b| b != 0).count(), 1);
    }

    #[test]
    fn qx_zero_group_is_level_zero() {
        let mut l = [9u8; 16];
        assert_eq!(make_qx_quants(4, &[0.0; 16], None, &mut l), 0.0);
        assert_eq!(l, [0u8; 16]);
    }

    #[test]
    fn qx_reconstructs_integer_grid() {
        // Values on an exact grid of step 0.5 are reproduced exactly.
        let x: [f32; 16] = std::array::from_fn(|i| (i as f32 - 8.0) * 0.5);
        let mut l = [0u8; 16];
        let d = make_qx_quants(8, &x, None, &mut l);
        for (&xi, &li) in x.iter().zip(&l) {
            assert!((d * (li as f32 - 8.0) - xi).abs() < 1e-5, "{d} {li} {xi}");
        }
    }

    #[test]
    fn qkx_fits_within_half_a_step() {
        let x: [f32; 32] = std::array::from_fn(|i| ((i * 37 % 32) as f32) * 0.1 - 1.3);
        let w = [1.0f32; 32];
        let mut l = [0u8; 32];
        let (d, m) = make_qkx2_quants(
            15,
            &x,
            &w,
            &mut l,
            QkxSearch {
                rmin: -1.0,
                rdelta: 0.1,
                nstep: 20,
                use_mad: false,
            },
        );
        assert!(m >= 0.0);
        for (&xi, &li) in x.iter().zip(&l) {
            assert!(li <= 15);
            assert!((d * li as f32 - m - xi).abs() <= 0.5 * d + 1e-6);
        }
        let (d3, m3) = make_qkx3_quants(15, &x, None, &mut l, QKX3_IMATRIX_SEARCH);
        assert!(d3 > 0.0 && m3 >= 0.0);
    }

    #[test]
    fn qp_quantizes_nonnegative() {
        let x = [0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let w = [1.0f32; 8];
        let mut l = [0u8; 8];
        let d = make_qp_quants(7, &x, &w, &mut l);
        assert!((d - 1.0).abs() < 1e-6);
        assert_eq!(l, [0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
