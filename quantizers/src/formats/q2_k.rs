//! q2_K: 256 elements, 84 bytes per block (2.625 bits per weight).
//!
//! Layout: `scales[16]` (bytes 0–15: scale in the low nibble, min in the high nibble, one
//! per 16 elements), `qs[64]` (16–79, 2-bit quants, see [`crate::kquants::pack_2bit`]),
//! `d: f16` (80–81), `dmin: f16` (82–83). Element `e` of group `j = e/16` dequantizes as
//! `(d*sc_j)*q - dmin*m_j`.

use super::blocks::BlockQ2K;
use crate::common::{add_div_left_nan, f16_to_f32, f32_to_f16, get_u16, nearest_int, put_u16};
use crate::kquants::{make_qp_quants, pack_2bit, QkxSearch, QKX3_IMATRIX_SEARCH};
use crate::lanes::{qkx_search_lanes, transpose, QkxFit};
use crate::simd::{multiversion, V8};
use std::mem::{offset_of, size_of};

pub(crate) const QK: usize = 256;
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ2K>();
const QS_AT: usize = offset_of!(BlockQ2K, qs);
const D_AT: usize = offset_of!(BlockQ2K, d);
const DMIN_AT: usize = offset_of!(BlockQ2K, dmin);

/// The `make_qkx2_quants` search of the reference path.
const REF_SEARCH: QkxSearch = QkxSearch {
    rmin: -0.5,
    rdelta: 0.1,
    nstep: 15,
    use_mad: true,
};

multiversion! {
    /// `quantize_q2_K` for one row: `quantize_row_q2_K_ref` without an imatrix,
    /// `quantize_row_q2_K_impl` with one.
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
        let fits = match imatrix {
            None => scales_ref(s, x, y),
            Some(im) => scales_impl(s, x, &im[QK * i..QK * (i + 1)], y),
        };
        requantize(x, y, &fits, &mut levels);
        pack_2bit(&levels, &mut y[QS_AT..D_AT]);
    }
}

/// The `make_qkx2_quants` / `make_qkx3_quants` fits (`nmax = 3`) of the 16 groups, eight
/// side by side (one per lane, see [`crate::lanes`]), weighted by `wt(half)`: the
/// transposed weights of groups `8*half..8*half + 8`.
#[inline(always)]
fn fit_groups<S: V8>(
    s: S,
    x: &[f32],
    search: QkxSearch,
    mut wt: impl FnMut(usize, &[[f32; 8]; 16]) -> [[f32; 8]; 16],
) -> [QkxFit; 2] {
    let xt0 = transpose::<16>(&x[..128]);
    let wt0 = wt(0, &xt0);
    let fit0 = qkx_search_lanes(s, 3, &xt0, &wt0, search);
    let xt1 = transpose::<16>(&x[128..]);
    let wt1 = wt(1, &xt1);
    let fit1 = qkx_search_lanes(s, 3, &xt1, &wt1, search);
    [fit0, fit1]
}

/// The reference sub-block fits (weights `|x|`): writes `scales`, `d` and `dmin`.
#[inline(always)]
fn scales_ref<S: V8>(s: S, x: &[f32], y: &mut [u8]) -> [QkxFit; 2] {
    let fits = fit_groups(s, x, REF_SEARCH, |_, xt| xt.map(|row| row.map(f32::abs)));
    let scales: [f32; 16] = std::array::from_fn(|j| fits[j / 8].scale[j % 8]);
    let mins: [f32; 16] = std::array::from_fn(|j| fits[j / 8].the_min[j % 8]);
    let (mut max_scale, mut max_min) = (0.0f32, 0.0f32);
    for (&scale, &min) in scales.iter().zip(&mins) {
        if scale > max_scale {
            max_scale = scale;
        }
        if min > max_min {
            max_min = min;
        }
    }

    let sc = &mut y[..16];
    if max_scale > 0.0 {
        let iscale = 15.0 / max_scale;
        for (s, &scale) in sc.iter_mut().zip(&scales) {
            *s = nearest_int(iscale * scale) as u8;
        }
        put_u16(y, D_AT, f32_to_f16(max_scale / 15.0));
    } else {
        sc.fill(0);
        put_u16(y, D_AT, f32_to_f16(0.0));
    }
    let sc = &mut y[..16];
    if max_min > 0.0 {
        let iscale = 15.0 / max_min;
        for (s, &min) in sc.iter_mut().zip(&mins) {
            *s = (*s as i32 | (nearest_int(iscale * min) << 4)) as u8;
        }
        put_u16(y, DMIN_AT, f32_to_f16(max_min / 15.0));
    } else {
        put_u16(y, DMIN_AT, f32_to_f16(0.0));
    }
    fits
}

/// The imatrix sub-block fits: weights `qw*sqrt(sigma2 + x²)`, sub-scales and sub-mins by
/// `make_qp_quants`. Writes `scales`, `d` and `dmin`.
#[inline(always)]
fn scales_impl<S: V8>(s: S, x: &[f32], qw: &[f32], y: &mut [u8]) -> [QkxFit; 2] {
    let mut sumx2 = 0.0f32;
    for &v in x {
        sumx2 += v * v;
    }
    let sigma2 = sumx2 / QK as f32;
    let mut sw = [0.0f32; 16];
    let fits = fit_groups(s, x, QKX3_IMATRIX_SEARCH, |half, xt| {
        let qwt = transpose::<16>(&qw[128 * half..]);
        let mut wt = [[0.0f32; 8]; 16];
        for ((w, q), x) in wt.iter_mut().zip(&qwt).zip(xt) {
            for g in 0..8 {
                w[g] = q[g] * (sigma2 + x[g] * x[g]).sqrt();
                sw[8 * half + g] += w[g];
            }
        }
        wt
    });
    let scales: [f32; 16] = std::array::from_fn(|j| fits[j / 8].scale[j % 8]);
    let mins: [f32; 16] = std::array::from_fn(|j| fits[j / 8].the_min[j % 8]);
    let mut ls = [0u8; 16];
    let mut lm = [0u8; 16];
    let dm = make_qp_quants(15, &scales, &sw, &mut ls);
    let mm = make_qp_quants(15, &mins, &sw, &mut lm);
    put_u16(y, D_AT, f32_to_f16(dm));
    put_u16(y, DMIN_AT, f32_to_f16(mm));
    for ((s, &a), &b) in y[..16].iter_mut().zip(&ls).zip(&lm) {
        *s = a | (b << 4);
    }
    fits
}

/// Requantizes every group whose effective scale is non-zero against the stored (fp16)
/// `d`/`dmin` and 4-bit sub-scales; the other groups keep the levels of their fits.
#[inline(always)]
fn requantize(x: &[f32], y: &[u8], fits: &[QkxFit; 2], levels: &mut [u8; QK]) {
    let d = f16_to_f32(get_u16(y, D_AT));
    let dmin = f16_to_f32(get_u16(y, DMIN_AT));
    for (j, ((xs, lv), &s)) in x
        .chunks_exact(16)
        .zip(levels.chunks_exact_mut(16))
        .zip(&y[..16])
        .enumerate()
    {
        let dl = d * (s & 0xF) as f32;
        if dl == 0.0 {
            fits[j / 8].levels(j % 8, 3, xs, lv);
            continue;
        }
        let ml = dmin * (s >> 4) as f32;
        for (l, &v) in lv.iter_mut().zip(xs) {
            *l = nearest_int(add_div_left_nan(v, ml, dl)).clamp(0, 3) as u8;
        }
    }
}

pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (x, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(x, D_AT));
        let dmin = f16_to_f32(get_u16(x, DMIN_AT));
        let qs = &x[QS_AT..D_AT];
        // Group j = e/16 covers elements 128h + 32s + l with l in 16(j%2)..16(j%2)+16.
        for (j, (yg, &s)) in y.chunks_exact_mut(16).zip(&x[..16]).enumerate() {
            let (h, shift, off) = (j / 8, 2 * ((j / 2) % 4), 16 * (j % 2));
            let dl = d * (s & 0xF) as f32;
            let ml = dmin * (s >> 4) as f32;
            let q = &qs[32 * h + off..32 * h + off + 16];
            for (o, &b) in yg.iter_mut().zip(q) {
                *o = dl * ((b >> shift) & 3) as f32 - ml;
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
    fn roundtrip_error_is_bounded() {
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
            assert!(err < 0.5, "max error {err}");
        }
    }
}
