//! The non-linear 4-bit codebook and the super-block quantizer shared by IQ4_NL and IQ4_XS
//! (ggml's `quantize_row_iq4_nl_impl`).
//!
//! Both types pick, for every group of 32 values, a scale and one of the 16 codebook entries
//! per value. IQ4_NL stores that scale as fp16 (its super-block is the 32-value group itself);
//! IQ4_XS groups eight of them under one fp16 super-scale and stores each group scale as a
//! signed 6-bit multiple of it.
//!
//! Only the path that `ggml_quantize_chunk` takes is implemented: the scale search with
//! `ntry = 7` (the `quantize_row_iq4_nl_ref` variant with `ntry = -1` is never used for files).

use crate::common::{f32_to_f16, nearest_int};
use crate::simd::V8;

/// `kvalues_iq4nl`: the IQ4 codebook (a format constant).
pub(crate) const KVALUES_IQ4NL: [i8; 16] = [
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
];

/// Groups whose largest |x| is below this are given a zero scale (`GROUP_MAX_EPS`).
const GROUP_MAX_EPS: f32 = 1e-15;

/// Half-width of the scale search around `values[0]/max` (the chunk path's `ntry`).
const NTRY: i32 = 7;

/// Values per group (one scale each).
const GROUP: usize = 32;

/// Largest super-block handled (IQ4_XS's QK_K).
const MAX_SUPER: usize = 256;

/// Index of the codebook entry nearest to `x` (`best_index_int8`).
///
/// Values at or beyond either end clamp to it. Otherwise a binary search finds the two
/// neighbours, and the lower one wins only when it is strictly closer: an exact tie goes to
/// the upper neighbour. A NaN `x` fails every comparison and so lands on the last index.
/// (The kernels use the equivalent [`THRESHOLDS`]; this is the reference transcription.)
#[cfg(test)]
pub(crate) fn best_index_int8(values: &[i8; 16], x: f32) -> u8 {
    if x <= values[0] as f32 {
        return 0;
    }
    if x >= values[15] as f32 {
        return 15;
    }
    let (mut lo, mut hi) = (0usize, 15usize);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if x < values[mid] as f32 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    if x - (values[hi - 1] as f32) < (values[hi] as f32) - x {
        (hi - 1) as u8
    } else {
        hi as u8
    }
}

/// Whether `best_index_int8` picks the upper of the neighbours `lo < hi` for `x` in
/// `lo..hi`: the C comparison `x - lo < hi - x`, rounding included.
#[allow(clippy::neg_cmp_op_on_partial_ord)] // the negation of the C test, kept literal
const fn picks_upper(x: f32, lo: f32, hi: f32) -> bool {
    !(x - lo < hi - x)
}

/// The float just below (`down`) or above a finite `x`.
const fn step(x: f32, down: bool) -> f32 {
    let b = x.to_bits();
    if x == 0.0 {
        return if down {
            f32::from_bits(0x8000_0001)
        } else {
            f32::from_bits(1)
        };
    }
    // Away from zero is one more in the magnitude bits, towards zero one less.
    if (x > 0.0) != down {
        f32::from_bits(b + 1)
    } else {
        f32::from_bits(b - 1)
    }
}

/// The smallest `x` in `lo..=hi` for which `best_index_int8` picks `hi`. The comparison
/// is monotone in `x` (`x - lo` only grows and `hi - x` only shrinks), so it flips once;
/// the exact midpoint is a tie, which picks `hi`, and the flip is found by walking from it.
const fn threshold(lo: f32, hi: f32) -> f32 {
    let mut x = (lo + hi) / 2.0;
    if picks_upper(x, lo, hi) {
        while picks_upper(step(x, true), lo, hi) {
            x = step(x, true);
        }
    } else {
        while !picks_upper(x, lo, hi) {
            x = step(x, false);
        }
    }
    x
}

/// `best_index_int8` as a count: for every non-NaN `x`, the index it returns is the number
/// of thresholds `t` with `x >= t`, where `THRESHOLDS[k]` is where the choice between
/// entries `k` and `k + 1` flips (see [`threshold`]). Below `THRESHOLDS[0]` that is 0 (and
/// `x <= values[0]` lies below it), from `THRESHOLDS[14]` on it is 15 (and `x >= values[15]`
/// lies above it); in between, the C binary search brackets `x` by the neighbours whose
/// threshold decides. A NaN counts 0 but must give 15, so callers test for it.
pub(crate) const THRESHOLDS: [f32; 15] = {
    let v = &KVALUES_IQ4NL;
    let mut t = [0f32; 15];
    let mut k = 0;
    while k < 15 {
        t[k] = threshold(v[k] as f32, v[k + 1] as f32);
        k += 1;
    }
    t
};

/// [`best_index_int8`] over the IQ4 codebook, branch-free (see [`THRESHOLDS`]).
#[inline(always)]
pub(crate) fn best_index_iq4nl(x: f32) -> u8 {
    let mut idx = 0u8;
    for &t in &THRESHOLDS {
        idx += (x >= t) as u8;
    }
    if x.is_nan() {
        15
    } else {
        idx
    }
}

/// The codebook value `best_index_int8` picks for each lane of `x`, as f32 (see
/// [`THRESHOLDS`]).
#[inline(always)]
fn nearest_value<S: V8>(s: S, x: S::F) -> S::F {
    let mut v = s.splat(KVALUES_IQ4NL[0] as f32);
    for (&t, &next) in THRESHOLDS.iter().zip(&KVALUES_IQ4NL[1..]) {
        v = s.select(s.le(s.splat(t), x), s.splat(next as f32), v);
    }
    s.select(s.ne(x, x), s.splat(KVALUES_IQ4NL[15] as f32), v)
}

/// The weighted fits of one group at 16 inverse scales, one per lane (`id[0]` and
/// `id[1]`): `(Σ w·q·x, Σ w·q²)` with `q` the codebook value picked for `id·x`,
/// accumulated in index order exactly as ggml does. The trials are independent; only the
/// choice among their results is sequential.
#[inline(always)]
fn fit_trials<S: V8>(s: S, xb: &[f32], weight: &[f32; GROUP], id: [S::F; 2]) -> [[f32; 16]; 2] {
    let zero = s.splat(0.0);
    let (mut sumqx, mut sumq2) = ([zero; 2], [zero; 2]);
    for (&x, &w) in xb.iter().zip(weight) {
        let (x, w) = (s.splat(x), s.splat(w));
        for h in 0..2 {
            let q = nearest_value(s, s.mul(id[h], x));
            let wq = s.mul(w, q);
            sumqx[h] = s.add(sumqx[h], s.mul(wq, x));
            sumq2[h] = s.add(sumq2[h], s.mul(wq, q));
        }
    }
    let mut out = [[0f32; 16]; 2];
    for h in 0..2 {
        out[0][8 * h..8 * h + 8].copy_from_slice(&s.to_array(sumqx[h]));
        out[1][8 * h..8 * h + 8].copy_from_slice(&s.to_array(sumq2[h]));
    }
    out
}

/// What [`quantize_superblock`] produces besides the packed nibbles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SuperBlockScales {
    /// fp16 bits of the (super-)scale `d`.
    pub d: u16,
    /// High 2 bits of each 6-bit group scale (IQ4_XS only; 0 for a single group).
    pub scales_h: u16,
    /// Low 4 bits of the group scales, two per byte (IQ4_XS only; zeros for a single group).
    pub scales_l: [u8; 4],
}

/// Quantizes one super-block `x` (32 values for IQ4_NL, 256 for IQ4_XS) into `qs`
/// (`x.len() / 2` bytes of nibbles, Q4_0 layout per 32 values) and returns the scales.
///
/// `quant_weights`, when given, are the imatrix entries for exactly these values.
#[inline(always)]
pub(crate) fn quantize_superblock<S: V8>(
    s: S,
    x: &[f32],
    quant_weights: Option<&[f32]>,
    qs: &mut [u8],
) -> SuperBlockScales {
    let n = x.len();
    debug_assert!(n.is_multiple_of(GROUP) && n <= MAX_SUPER && qs.len() == n / 2);
    let ngroups = n / GROUP;
    let values = &KVALUES_IQ4NL;
    let v0 = values[0] as f32;

    let mut sigma2 = 0f32;
    for &v in x {
        sigma2 += v * v;
    }
    sigma2 *= 2.0f32 / n as f32;

    let mut scales = [0f32; MAX_SUPER / GROUP];
    let mut weight = [0f32; GROUP];
    let mut max_scale = 0f32;
    let mut amax_scale = 0f32;
    for (ib, xb) in x.chunks_exact(GROUP).enumerate() {
        match quant_weights {
            Some(qw) => {
                let qw = &qw[ib * GROUP..(ib + 1) * GROUP];
                for ((w, &q), &v) in weight.iter_mut().zip(qw).zip(xb) {
                    *w = q * (sigma2 + v * v).sqrt();
                }
            }
            None => {
                for (w, &v) in weight.iter_mut().zip(xb) {
                    *w = v * v;
                }
            }
        }
        let mut amax = 0f32;
        let mut max = 0f32;
        for &v in xb {
            let ax = v.abs();
            if ax > amax {
                amax = ax;
                max = v;
            }
        }
        if amax < GROUP_MAX_EPS {
            scales[ib] = 0.0;
            continue;
        }
        // Trial 0 is the first guess, which maps the extreme value onto the most negative
        // codebook entry; trials 1..16 are `itry = -NTRY..=NTRY`.
        let d0 = -max / v0;
        let mut ids = [0f32; 16];
        ids[0] = 1.0f32 / d0;
        for (id, itry) in ids[1..].iter_mut().zip(-NTRY..=NTRY) {
            *id = (itry + values[0] as i32) as f32 / max;
        }
        let [sumqx, sumq2] = fit_trials(
            s,
            xb,
            &weight,
            [
                s.load(ids[..8].try_into().unwrap()),
                s.load(ids[8..].try_into().unwrap()),
            ],
        );
        let mut d = if sumq2[0] > 0.0 {
            sumqx[0] / sumq2[0]
        } else {
            0.0
        };
        let mut best = d * sumqx[0];
        for (&sumqx, &sumq2) in sumqx[1..].iter().zip(&sumq2[1..]) {
            if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
                d = sumqx / sumq2;
                best = d * sumqx;
            }
        }
        scales[ib] = d;
        let abs_d = d.abs();
        if abs_d > amax_scale {
            amax_scale = abs_d;
            max_scale = d;
        }
    }

    let mut levels = [0u8; MAX_SUPER];
    let mut out = SuperBlockScales {
        d: 0,
        scales_h: 0,
        scales_l: [0; 4],
    };
    if ngroups > 1 {
        let d = -max_scale / 32.0f32;
        out.d = f32_to_f16(d);
        let id = if d != 0.0 { 1.0f32 / d } else { 0.0 };
        for (ib, (xb, lb)) in x
            .chunks_exact(GROUP)
            .zip(levels.chunks_exact_mut(GROUP))
            .enumerate()
        {
            let l = nearest_int(id * scales[ib]).clamp(-32, 31);
            let dl = d * l as f32;
            let idl = if dl != 0.0 { 1.0f32 / dl } else { 0.0 };
            for (q, &v) in lb.iter_mut().zip(xb) {
                *q = best_index_iq4nl(idl * v);
            }
            let l = (l + 32) as u8;
            if ib % 2 == 0 {
                out.scales_l[ib / 2] = l & 0xf;
            } else {
                out.scales_l[ib / 2] |= (l & 0xf) << 4;
            }
            out.scales_h |= ((l >> 4) as u16) << (2 * (ib % 8));
        }
    } else {
        out.d = f32_to_f16(scales[0]);
        let id = if scales[0] != 0.0 {
            1.0f32 / scales[0]
        } else {
            0.0
        };
        for (q, &v) in levels.iter_mut().zip(x) {
            *q = best_index_iq4nl(id * v);
        }
    }

    for (q4, lg) in qs
        .chunks_exact_mut(GROUP / 2)
        .zip(levels.chunks_exact(GROUP))
    {
        for j in 0..GROUP / 2 {
            q4[j] = lg[j] | (lg[j + GROUP / 2] << 4);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::Scalar;

    #[test]
    fn best_index_clamps_and_breaks_ties_upwards() {
        let v = &KVALUES_IQ4NL;
        assert_eq!(best_index_int8(v, -1000.0), 0);
        assert_eq!(best_index_int8(v, -127.0), 0);
        assert_eq!(best_index_int8(v, 113.0), 15);
        assert_eq!(best_index_int8(v, 1e9), 15);
        assert_eq!(best_index_int8(v, f32::NAN), 15);
        // Exact midpoints go to the upper neighbour.
        for i in 0..15 {
            let mid = (v[i] as f32 + v[i + 1] as f32) / 2.0;
            assert_eq!(best_index_int8(v, mid), (i + 1) as u8, "midpoint {mid}");
            assert_eq!(best_index_int8(v, mid - 0.01), i as u8);
        }
        // Every entry maps to itself.
        for (i, &e) in v.iter().enumerate() {
            assert_eq!(best_index_int8(v, e as f32), i as u8);
        }
        // Zero lies between -10 and 1, closer to 1.
        assert_eq!(best_index_int8(v, 0.0), 8);
    }

    #[test]
    fn thresholds_reproduce_the_binary_search() {
        let v = &KVALUES_IQ4NL;
        let mut xs: Vec<f32> = vec![
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
        ];
        // Every float within 4096 ulps of every threshold, codebook entry and midpoint, and
        // a dense sweep of the whole codebook range.
        for &c in THRESHOLDS.iter().chain(&v.map(|e| e as f32)) {
            for k in -4096i32..=4096 {
                xs.push(f32::from_bits((c.to_bits() as i32 + k) as u32));
            }
        }
        for i in -140_000..=140_000 {
            xs.push(i as f32 / 1000.0);
        }
        for &x in &xs {
            assert_eq!(best_index_iq4nl(x), best_index_int8(v, x), "{x:e}");
        }
        for lanes in xs.chunks_exact(8) {
            let got = Scalar.to_array(nearest_value(
                Scalar,
                Scalar.load(lanes.try_into().unwrap()),
            ));
            for (&x, &q) in lanes.iter().zip(&got) {
                assert_eq!(q, v[best_index_int8(v, x) as usize] as f32, "{x:e}");
            }
        }
    }

    #[test]
    fn zero_superblock_is_zero_scale_mid_code() {
        let x = [0f32; 256];
        let mut qs = [0xAAu8; 128];
        let s = quantize_superblock(crate::simd::Scalar, &x, None, &mut qs);
        // The super-scale is -max_scale/32 = -0.0, stored as the fp16 negative zero.
        assert_eq!(s.d, 0x8000);
        assert!(qs.iter().all(|&b| b == 0x88));
        // Every 6-bit scale is l = 0 + 32: low nibble 0, high bits 2.
        assert_eq!(s.scales_l, [0; 4]);
        assert_eq!(s.scales_h, 0xAAAA);
    }
}
