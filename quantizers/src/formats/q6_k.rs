//! q6_K: 256 elements, 210 bytes per block (6.5625 bits per weight).
//!
//! Layout: `ql[128]` (bytes 0–127, low 4 bits), `qh[64]` (128–191, high 2 bits),
//! `scales[16]: i8` (192–207, one per 16 elements), `d: f16` (208–209). A quant `L` in
//! 0..64 stands for `L - 32`; element `e` is `d * scales[e/16] * (L[e] - 32)`.
//!
//! Within each half `h` of 128 elements and for `l` in 0..32, `ql[64h + l]` holds elements
//! `128h + l` (low nibble) and `128h + l + 64` (high nibble), `ql[64h + 32 + l]` holds
//! `128h + l + 32` and `128h + l + 96`, and `qh[32h + l]` their top two bits in the order
//! `+0, +32, +64, +96`.

use super::blocks::BlockQ6K;
use crate::common::{f16_to_f32, f32_to_f16, get_u16, nearest_int, put_u16};
use crate::kquants::GROUP_MAX_EPS;
use crate::lanes::{make_qx_quants_lanes, squares, transpose, QxFit};
use crate::simd::{multiversion, V8};
use std::mem::{offset_of, size_of};

pub(crate) const QK: usize = 256;
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ6K>();
const SCALES_AT: usize = offset_of!(BlockQ6K, scales);
const D_AT: usize = offset_of!(BlockQ6K, d);

multiversion! {
    /// `quantize_q6_K` for one row: the reference quantizer without an imatrix, the `_impl`
    /// path (the raw imatrix values as weights of the group fits) with one.
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

#[inline(always)]
fn quantize_row_impl<S: V8>(s: S, src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) {
    for (i, (x, y)) in src
        .chunks_exact(QK)
        .zip(dst.chunks_exact_mut(BLOCK_BYTES))
        .enumerate()
    {
        let qw = imatrix.map(|im| &im[QK * i..QK * (i + 1)]);
        quantize_block(s, x, y, qw);
    }
}

/// The `make_qx_quants(nmax = 32)` fits of 8 consecutive groups of 16 (weights `x²`, or
/// `qw`), one group per lane.
#[inline(always)]
fn fit_eight<S: V8>(s: S, x: &[f32], qw: Option<&[f32]>) -> QxFit {
    let xt = transpose::<16>(x);
    let wt = match qw {
        Some(q) => transpose::<16>(q),
        None => squares(&xt),
    };
    make_qx_quants_lanes(s, 32, &xt, &wt)
}

/// One super-block. The group fits (`make_qx_quants(nmax = 32)`, weights `x²` or the
/// imatrix) run eight groups side by side, one per lane (see [`crate::lanes`]).
#[inline(always)]
fn quantize_block<S: V8>(s: S, x: &[f32], y: &mut [u8], qw: Option<&[f32]>) {
    let fits = [
        fit_eight(s, &x[..128], qw),
        fit_eight(s, &x[128..], qw.map(|q| &q[128..])),
    ];
    let scales: [f32; 16] = std::array::from_fn(|j| fits[j / 8].scale[j % 8]);
    let (mut max_scale, mut max_abs_scale) = (0.0f32, 0.0f32);
    for &scale in &scales {
        if scale.abs() > max_abs_scale {
            max_abs_scale = scale.abs();
            max_scale = scale;
        }
    }

    if max_abs_scale < GROUP_MAX_EPS {
        y.fill(0);
        return;
    }

    let iscale = -128.0f32 / max_scale;
    put_u16(y, D_AT, f32_to_f16(1.0 / iscale));
    let d = f16_to_f32(get_u16(y, D_AT));
    let mut sc = [0i8; QK / 16];
    for (s, &scale) in sc.iter_mut().zip(&scales) {
        *s = nearest_int(iscale * scale).min(127) as i8;
    }
    let mut levels = [0u8; QK];
    for (g, ((xs, ls), &s)) in x
        .chunks_exact(16)
        .zip(levels.chunks_exact_mut(16))
        .zip(&sc)
        .enumerate()
    {
        let dl = d * s as f32;
        if dl == 0.0 {
            // The group keeps the levels of its fit.
            fits[g / 8].levels(g % 8, 32, xs, ls);
            continue;
        }
        for (l, &v) in ls.iter_mut().zip(xs) {
            *l = (nearest_int(v / dl).clamp(-32, 31) + 32) as u8;
        }
    }

    for (s, o) in sc.iter().zip(&mut y[SCALES_AT..D_AT]) {
        *o = *s as u8;
    }
    let (ql, rest) = y.split_at_mut(128);
    let qh = &mut rest[..64];
    for ((lv, ql), qh) in levels
        .chunks_exact(128)
        .zip(ql.chunks_exact_mut(64))
        .zip(qh.chunks_exact_mut(32))
    {
        for l in 0..32 {
            let (a, b, c, e) = (lv[l], lv[l + 32], lv[l + 64], lv[l + 96]);
            ql[l] = (a & 0xF) | ((c & 0xF) << 4);
            ql[l + 32] = (b & 0xF) | ((e & 0xF) << 4);
            qh[l] = (a >> 4) | ((b >> 4) << 2) | ((c >> 4) << 4) | ((e >> 4) << 6);
        }
    }
}

pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (x, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(x, D_AT));
        let sc = &x[SCALES_AT..D_AT];
        for (h, yh) in y.chunks_exact_mut(128).enumerate() {
            let ql = &x[64 * h..64 * h + 64];
            let qh = &x[128 + 32 * h..128 + 32 * h + 32];
            let sc = &sc[8 * h..8 * h + 8];
            for l in 0..32 {
                let q = [
                    (ql[l] & 0xF) | ((qh[l] & 3) << 4),
                    (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4),
                    (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4),
                    (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4),
                ];
                for (k, &qk) in q.iter().enumerate() {
                    let s = sc[l / 16 + 2 * k] as i8 as f32;
                    yh[l + 32 * k] = d * s * (qk as i32 - 32) as f32;
                }
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
            assert!(err < 0.04, "max error {err}");
        }
    }

    #[test]
    fn zero_block_is_all_zero_bytes() {
        let mut q = vec![0xAAu8; BLOCK_BYTES];
        quantize_row(&[0.0; QK], &mut q, None);
        assert!(q.iter().all(|&b| b == 0));
    }
}
