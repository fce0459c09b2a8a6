//! q3_K: 256 elements, 110 bytes per block (3.4375 bits per weight).
//!
//! Layout: `hmask[32]` (bytes 0–31: bit 2 of element `e` is bit `e/32` of `hmask[e%32]`),
//! `qs[64]` (32–95, the low 2 bits, see [`crate::kquants::pack_2bit`]), `scales[12]`
//! (96–107, sixteen 6-bit scales stored as `sc + 32`), `d: f16` (108–109). Element `e` of
//! group `j = e/16` dequantizes as `(d*sc_j) * (q - 4)` with `q` the 3-bit quant.

use super::blocks::BlockQ3K;
use crate::common::{f16_to_f32, f32_to_f16, get_u16, nearest_int, put_u16};
use crate::kquants::{make_qx_quants, pack_2bit};
use crate::lanes::{make_q3_quants_lanes, make_qx_quants_lanes, transpose, Q3Fit, QxFit};
use crate::simd::{multiversion, V8};
use std::mem::{offset_of, size_of};

pub(crate) const QK: usize = 256;
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ3K>();
const QS_AT: usize = offset_of!(BlockQ3K, qs);
const SCALES_AT: usize = offset_of!(BlockQ3K, scales);
const D_AT: usize = offset_of!(BlockQ3K, d);

/// Packs the sixteen biased 6-bit scales `l` (0..64) into the 12 `scales` bytes: the low
/// nibbles of scales 0–7 / 8–15 go to the low / high nibbles of bytes 0–7, and the top two
/// bits of scale `j` to bits `2*(j/4)` of byte `8 + j%4`.
fn pack_scales(l: &[u8; 16]) -> [u8; 12] {
    let mut s = [0u8; 12];
    for (j, &v) in l.iter().enumerate() {
        if j < 8 {
            s[j] = v & 0xF;
        } else {
            s[j - 8] |= (v & 0xF) << 4;
        }
        s[8 + j % 4] |= (v >> 4) << (2 * (j / 4));
    }
    s
}

/// The signed scale of group `j` (`-32..32`) from the 12 `scales` bytes.
#[inline]
fn scale(s: &[u8], j: usize) -> i32 {
    let lo = if j < 8 { s[j] & 0xF } else { s[j - 8] >> 4 };
    let hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
    (lo | (hi << 4)) as i32 - 32
}

multiversion! {
    /// `quantize_q3_K` for one row: `quantize_row_q3_K_ref` without an imatrix,
    /// `quantize_row_q3_K_impl` with one.
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

/// The per-group fits of one super-block, from which the levels of groups whose stored
/// scale is zero are taken. (A stack value per super-block: boxing the larger variant would
/// allocate in the hot loop.)
#[allow(clippy::large_enum_variant)]
enum Fits {
    /// `make_q3_quants` (reference path), groups `8h..8h + 8` in `[h]`.
    Ref([Q3Fit<16>; 2]),
    /// `make_qx_quants` (imatrix path).
    Impl([QxFit; 2]),
}

#[inline(always)]
fn quantize_row_impl<S: V8>(s: S, src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) {
    let mut levels = [0u8; QK];
    for (i, (x, y)) in src
        .chunks_exact(QK)
        .zip(dst.chunks_exact_mut(BLOCK_BYTES))
        .enumerate()
    {
        let (packed, d, fits) = match imatrix {
            None => scales_ref(s, x),
            Some(im) => scales_impl(s, x, &im[QK * i..QK * (i + 1)]),
        };
        y[SCALES_AT..D_AT].copy_from_slice(&packed);
        put_u16(y, D_AT, f32_to_f16(d));
        let d = f16_to_f32(get_u16(y, D_AT));

        for (j, (xs, lv)) in x
            .chunks_exact(16)
            .zip(levels.chunks_exact_mut(16))
            .enumerate()
        {
            let dl = d * scale(&packed, j) as f32;
            if dl == 0.0 {
                // The group keeps the levels of its fit.
                match &fits {
                    Fits::Ref(f) => f[j / 8].levels(j % 8, 4, lv),
                    Fits::Impl(f) => f[j / 8].levels(j % 8, 4, xs, lv),
                }
                continue;
            }
            for (l, &v) in lv.iter_mut().zip(xs) {
                *l = (nearest_int(v / dl).clamp(-4, 3) + 4) as u8;
            }
        }

        // The levels are 0..8: bit 2 of element `32k + m` goes to bit `k` of `hmask[m]`,
        // and the low two bits stay (the C code's `if (L > 3) { set bit; L -= 4; }`,
        // written without a branch on the data).
        let hmask = &mut y[..QS_AT];
        hmask.fill(0);
        for (k, lk) in levels.chunks_exact_mut(32).enumerate() {
            for (h, l) in hmask.iter_mut().zip(lk.iter_mut()) {
                *h |= ((*l >> 2) & 1) << k;
                *l &= 3;
            }
        }
        pack_2bit(&levels, &mut y[QS_AT..SCALES_AT]);
    }
}

/// The reference fits (`make_q3_quants` per group, eight groups side by side, one per
/// lane, see [`crate::lanes`]; the scales quantized against the one of largest magnitude).
/// Returns the packed scales, `d` (before fp16 rounding) and the fits.
#[inline(always)]
fn scales_ref<S: V8>(s: S, x: &[f32]) -> ([u8; 12], f32, Fits) {
    let fits = [
        make_q3_quants_lanes(s, 4, &transpose::<16>(&x[..128])),
        make_q3_quants_lanes(s, 4, &transpose::<16>(&x[128..])),
    ];
    let scales: [f32; 16] = std::array::from_fn(|j| fits[j / 8].scale[j % 8]);
    let (mut max_scale, mut amax) = (0.0f32, 0.0f32);
    for &s in &scales {
        if s.abs() > amax {
            amax = s.abs();
            max_scale = s;
        }
    }
    if max_scale == 0.0 {
        return ([0u8; 12], 0.0, Fits::Ref(fits));
    }
    let iscale = -32.0f32 / max_scale;
    let l: [u8; 16] = std::array::from_fn(|j| {
        let v = nearest_int(iscale * scales[j]) as i8 as i32;
        (v.clamp(-32, 31) + 32) as u8
    });
    (pack_scales(&l), 1.0 / iscale, Fits::Ref(fits))
}

/// The imatrix fits: `make_qx_quants` per group weighted by `qw*sqrt(sigma2 + x²)` (eight
/// groups side by side), then the scales themselves by `make_qx_quants` weighted by the
/// group weight sums.
#[inline(always)]
fn scales_impl<S: V8>(s: S, x: &[f32], qw: &[f32]) -> ([u8; 12], f32, Fits) {
    let mut sumx2 = 0.0f32;
    for &v in x {
        sumx2 += v * v;
    }
    let sigma2 = 2.0 * sumx2 / QK as f32;
    let mut sw = [0.0f32; 16];
    let (sw0, sw1) = sw.split_at_mut(8);
    let fits = [
        fit_weighted(s, &x[..128], &qw[..128], sigma2, sw0),
        fit_weighted(s, &x[128..], &qw[128..], sigma2, sw1),
    ];
    let scales: [f32; 16] = std::array::from_fn(|j| fits[j / 8].scale[j % 8]);
    let mut ls = [0u8; 16];
    let d_block = make_qx_quants(32, &scales, Some(&sw), &mut ls);
    (pack_scales(&ls), d_block, Fits::Impl(fits))
}

/// `make_qx_quants(nmax = 4)` of 8 groups of 16 weighted by `qw*sqrt(sigma2 + x²)`; adds
/// each group's weight sum (in index order) to `sw`.
#[inline(always)]
fn fit_weighted<S: V8>(s: S, x: &[f32], qw: &[f32], sigma2: f32, sw: &mut [f32]) -> QxFit {
    let xt = transpose::<16>(x);
    let qwt = transpose::<16>(qw);
    let mut wt = [[0.0f32; 8]; 16];
    for ((w, q), x) in wt.iter_mut().zip(&qwt).zip(&xt) {
        for g in 0..8 {
            w[g] = q[g] * (sigma2 + x[g] * x[g]).sqrt();
            sw[g] += w[g];
        }
    }
    make_qx_quants_lanes(s, 4, &xt, &wt)
}

pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (x, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(x, D_AT));
        let hmask = &x[..QS_AT];
        let qs = &x[QS_AT..SCALES_AT];
        let sc = &x[SCALES_AT..D_AT];
        // Group j = e/16 covers elements 128h + 32s + l with l in 16(j%2)..16(j%2)+16.
        for (j, yg) in y.chunks_exact_mut(16).enumerate() {
            let (h, s, off) = (j / 8, (j / 2) % 4, 16 * (j % 2));
            let dl = d * scale(sc, j) as f32;
            let bit = 1u8 << (4 * h + s);
            let q = &qs[32 * h + off..32 * h + off + 16];
            let hm = &hmask[off..off + 16];
            for ((o, &b), &m) in yg.iter_mut().zip(q).zip(hm) {
                let v = ((b >> (2 * s)) & 3) as i32 - if m & bit != 0 { 0 } else { 4 };
                *o = dl * v as f32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| (((i * 2654435761usize) % 10007) as f32 / 10007.0 - 0.5) * 2.0)
            .collect()
    }

    #[test]
    fn scale_packing_roundtrip() {
        let l: [u8; 16] = std::array::from_fn(|j| (j * 17 % 64) as u8);
        let s = pack_scales(&l);
        for (j, &v) in l.iter().enumerate() {
            assert_eq!(scale(&s, j), v as i32 - 32);
        }
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
            assert!(err < 0.3, "max error {err}");
        }
    }
}
