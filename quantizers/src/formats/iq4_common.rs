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
#[inline]
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

/// Weighted fit of one group against the codebook at inverse scale `id`: returns
/// `(Σ w·q·x, Σ w·q²)` accumulated in index order, exactly as ggml does.
#[inline]
fn fit(xb: &[f32], weight: &[f32; GROUP], id: f32) -> (f32, f32) {
    let mut sumqx = 0f32;
    let mut sumq2 = 0f32;
    for (&x, &w) in xb.iter().zip(weight.iter()) {
        let q = KVALUES_IQ4NL[best_index_int8(&KVALUES_IQ4NL, id * x) as usize] as f32;
        sumqx += w * q * x;
        sumq2 += w * q * q;
    }
    (sumqx, sumq2)
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
pub(crate) fn quantize_superblock(
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
        // First guess: map the extreme value onto the most negative codebook entry.
        let d0 = -max / v0;
        let (sumqx, sumq2) = fit(xb, &weight, 1.0f32 / d0);
        let mut d = if sumq2 > 0.0 { sumqx / sumq2 } else { 0.0 };
        let mut best = d * sumqx;
        for itry in -NTRY..=NTRY {
            let id = (itry + values[0] as i32) as f32 / max;
            let (sumqx, sumq2) = fit(xb, &weight, id);
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
                *q = best_index_int8(values, idl * v);
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
            *q = best_index_int8(values, id * v);
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
    fn zero_superblock_is_zero_scale_mid_code() {
        let x = [0f32; 256];
        let mut qs = [0xAAu8; 128];
        let s = quantize_superblock(&x, None, &mut qs);
        // The super-scale is -max_scale/32 = -0.0, stored as the fp16 negative zero.
        assert_eq!(s.d, 0x8000);
        assert!(qs.iter().all(|&b| b == 0x88));
        // Every 6-bit scale is l = 0 + 32: low nibble 0, high bits 2.
        assert_eq!(s.scales_l, [0; 4]);
        assert_eq!(s.scales_h, 0xAAAA);
    }
}
