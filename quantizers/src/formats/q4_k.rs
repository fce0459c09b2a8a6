//! q4_K: 256 elements, 144 bytes per block (4.5 bits per weight).
//!
//! Layout: `d: f16` (bytes 0–1), `dmin: f16` (2–3), `scales[12]` (4–15: eight 6-bit scales
//! and mins, see [`crate::kquants::pack_scale_min_k4`]), `qs[128]` (16–143). Sub-block `j`
//! (32 elements) dequantizes as `(d*sc_j)*q - dmin*m_j`. For chunk `c` in 0..4, `qs[32c + l]`
//! holds element `64c + l` in its low nibble and `64c + 32 + l` in its high nibble.
//!
//! The scale search (this file's [`quantize_super_block`]) is shared with Q5_K, which only
//! differs in the level count, the search range and the quant packing.

use super::blocks::BlockQ4K;
use crate::common::{add_div_left_nan, f16_to_f32, f32_to_f16, get_u16, nearest_int, put_u16};
use crate::kquants::{
    get_scale_min_k4, make_qp_quants, pack_scale_min_k4, QkxSearch, QKX3_IMATRIX_SEARCH,
};
use crate::lanes::{qkx_search_lanes, transpose};
use crate::simd::{madd, multiversion, V8};
use std::mem::size_of;

pub(crate) const QK: usize = 256;
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ4K>();
/// Bytes of the `d`, `dmin`, `scales[12]` head shared by Q4_K and Q5_K.
pub(crate) const HEAD_BYTES: usize = 16;

/// What differs between the Q4_K and Q5_K scale searches.
pub(crate) struct SubBlockParams {
    /// Top quant level (15 for Q4_K, 31 for Q5_K).
    pub nmax: i32,
    /// The `make_qkx2_quants` search of the reference (no imatrix) path.
    pub ref_search: QkxSearch,
    /// The imatrix path clamps the 6-bit sub-scales to 63 before packing (Q5_K only).
    pub clamp_impl_scales: bool,
}

const Q4_K_PARAMS: SubBlockParams = SubBlockParams {
    nmax: 15,
    ref_search: QkxSearch {
        rmin: -1.0,
        rdelta: 0.1,
        nstep: 20,
        use_mad: false,
    },
    clamp_impl_scales: false,
};

/// Quantizes one super-block of 256 values as Q4_K/Q5_K do: fits each of the 8 sub-blocks
/// of 32 (`make_qkx2_quants` weighted by `av_x + |x|` without an imatrix; with one,
/// `make_qkx3_quants` weighted by `qw*sqrt(sigma2 + x²)` and the sub-scales fitted by
/// `make_qp_quants`), writes `d`, `dmin` and the packed 6-bit scales into `head` (16 bytes)
/// and the final levels `0..=nmax` into `levels`.
///
/// The 8 sub-block fits run side by side, one sub-block per lane (see [`crate::lanes`]).
#[inline(always)]
pub(crate) fn quantize_super_block<S: V8>(
    s: S,
    x: &[f32],
    qw: Option<&[f32]>,
    p: &SubBlockParams,
    head: &mut [u8],
    levels: &mut [u8; QK],
) {
    let xt = transpose::<32>(x);
    let mut ls = [0u8; 8];
    let mut lm = [0u8; 8];
    let (d, dmin);

    let fit = match qw {
        None => {
            // Weights `av_x + |x|` with `av_x = sqrt(Σx²/32)` per sub-block.
            let mut sum_x2 = [0.0f32; 8];
            for row in &xt {
                for g in 0..8 {
                    sum_x2[g] = madd::<S>(row[g], row[g], sum_x2[g]);
                }
            }
            let av_x = sum_x2.map(|s| (s / 32.0).sqrt());
            let wt = xt.map(|row| std::array::from_fn(|g| av_x[g] + row[g].abs()));
            let fit = qkx_search_lanes(s, p.nmax, &xt, &wt, p.ref_search);
            let (mut max_scale, mut max_min) = (0.0f32, 0.0f32);
            for (&scale, &min) in fit.scale.iter().zip(&fit.the_min) {
                if scale > max_scale {
                    max_scale = scale;
                }
                if min > max_min {
                    max_min = min;
                }
            }
            let inv_scale = if max_scale > 0.0 {
                63.0 / max_scale
            } else {
                0.0
            };
            let inv_min = if max_min > 0.0 { 63.0 / max_min } else { 0.0 };
            for j in 0..8 {
                ls[j] = (nearest_int(inv_scale * fit.scale[j]) as u8).min(63);
                lm[j] = (nearest_int(inv_min * fit.the_min[j]) as u8).min(63);
            }
            d = max_scale / 63.0;
            dmin = max_min / 63.0;
            fit
        }
        Some(qw) => {
            let mut sum_x2 = 0.0f32;
            for &v in x {
                sum_x2 += v * v;
            }
            let sigma2 = 2.0 * sum_x2 / QK as f32;
            let qwt = transpose::<32>(qw);
            let mut wt = [[0.0f32; 8]; 32];
            let mut sw = [0.0f32; 8];
            for ((w, q), x) in wt.iter_mut().zip(&qwt).zip(&xt) {
                for g in 0..8 {
                    w[g] = q[g] * (sigma2 + x[g] * x[g]).sqrt();
                    sw[g] += w[g];
                }
            }
            let fit = qkx_search_lanes(s, p.nmax, &xt, &wt, QKX3_IMATRIX_SEARCH);
            d = make_qp_quants(63, &fit.scale, &sw, &mut ls);
            dmin = make_qp_quants(63, &fit.the_min, &sw, &mut lm);
            if p.clamp_impl_scales {
                for v in ls.iter_mut().chain(lm.iter_mut()) {
                    *v = (*v).min(63);
                }
            }
            fit
        }
    };

    let packed = pack_scale_min_k4(&ls, &lm);
    head[4..HEAD_BYTES].copy_from_slice(&packed);
    put_u16(head, 0, f32_to_f16(d));
    put_u16(head, 2, f32_to_f16(dmin));
    let d = f16_to_f32(get_u16(head, 0));
    let dmin = f16_to_f32(get_u16(head, 2));

    for (j, (xs, lv)) in x
        .chunks_exact(32)
        .zip(levels.chunks_exact_mut(32))
        .enumerate()
    {
        let (sc, m) = get_scale_min_k4(j, &packed);
        let dj = d * sc as f32;
        if dj == 0.0 {
            // The sub-block keeps the levels of its fit.
            fit.levels(j, p.nmax, xs, lv);
            continue;
        }
        let dm = dmin * m as f32;
        for (l, &v) in lv.iter_mut().zip(xs) {
            *l = nearest_int(add_div_left_nan(v, dm, dj)).clamp(0, p.nmax) as u8;
        }
    }
}

/// `quantize_row_q4_K_ref` as a build with fused multiply-adds computes it ([`crate::fused`]).
pub(crate) fn quantize_row_fused(src: &[f32], dst: &mut [u8]) {
    quantize_row_impl(crate::fused::Fused, src, dst, None);
}

multiversion! {
    /// `quantize_q4_K` for one row: `quantize_row_q4_K_ref` without an imatrix,
    /// `quantize_row_q4_K_impl` with one.
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

#[inline(always)]
fn quantize_row_impl<S: V8>(s: S, src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) {
    let mut levels = [0u8; QK];
    for (i, (x, y)) in src
        .chunks_exact(QK)
        .zip(dst.chunks_exact_mut(BLOCK_BYTES))
        .enumerate()
    {
        let qw = imatrix.map(|im| &im[QK * i..QK * (i + 1)]);
        let (head, qs) = y.split_at_mut(HEAD_BYTES);
        quantize_super_block(s, x, qw, &Q4_K_PARAMS, head, &mut levels);
        for (lv, q) in levels.chunks_exact(64).zip(qs.chunks_exact_mut(32)) {
            for (l, o) in q.iter_mut().enumerate() {
                *o = lv[l] | (lv[l + 32] << 4);
            }
        }
    }
}

/// The per-sub-block `(d*sc, dmin*m)` pairs of a Q4_K/Q5_K head.
pub(crate) fn sub_block_factors(head: &[u8]) -> [(f32, f32); 8] {
    let d = f16_to_f32(get_u16(head, 0));
    let dmin = f16_to_f32(get_u16(head, 2));
    let s = &head[4..HEAD_BYTES];
    std::array::from_fn(|j| {
        let (sc, m) = get_scale_min_k4(j, s);
        (d * sc as f32, dmin * m as f32)
    })
}

pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (x, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let f = sub_block_factors(x);
        let qs = &x[HEAD_BYTES..];
        for (c, (q, yc)) in qs.chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
            let (d1, m1) = f[2 * c];
            let (d2, m2) = f[2 * c + 1];
            let (lo, hi) = yc.split_at_mut(32);
            for ((&b, a), h) in q.iter().zip(lo).zip(hi) {
                *a = d1 * (b & 0xF) as f32 - m1;
                *h = d2 * (b >> 4) as f32 - m2;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| (((i * 2654435761usize) % 10007) as f32 / 10007.0 - 0.3) * 2.0)
            .collect()
    }

    #[test]
    fn roundtrip_error_is_small() {
        let x = data(1024);
        for im in [None, Some(vec![1.0f32; 1024])] {
            let mut q = vec![0u8; 4 * BLOCK_BYTES];
            quantize_row(&x, &mut q, im.as_deref());
            let mut y = vec![0f32; 1024];
            dequantize_row(&q, &mut y);
            let err = x
                .iter()
                .zip(&y)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(err < 0.15, "max error {err}");
        }
    }
}
