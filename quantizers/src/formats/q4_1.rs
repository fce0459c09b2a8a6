//! q4_1: 32 elements per block, 20 bytes per block.
//!
//! Layout: `d: f16`, `m: f16`, then `qs[16]` with q4_0's nibble order. Element value =
//! `q · d + m`.
//!
//! Without an imatrix (`quantize_row_q4_1_ref`): `m` is the block minimum, `d = (max − min)
//! / 15`, `q = min(15, (i8)((x − min)/d + 0.5))`. With an imatrix (`quantize_row_q4_1_impl`):
//! q4_0's weighting, then `make_qkx3_quants(nmax = 15, rmin = −0.9, rdelta = 0.05, nstep =
//! 36)`, storing the fitted offset as `m`.
//!
//! **NaN handling:** NaNs never become the minimum or maximum (both comparisons are false);
//! an all-NaN block keeps the starting values `±FLT_MAX`. NaN or out-of-range quants are C's
//! x86-64 `i32::MIN` truncated to a byte (0), as the reference build stores them.

use super::block32::{block_trunc, pack_nibbles, row_sigma2, weighted_lanes, CHUNK_BLOCKS};
use super::blocks::BlockQ4_1;
use super::f16::{f16_bits_to_f32, f32_to_f16_bits};
use crate::common::{get_u16, put_u16};
use crate::kquants::QKX3_IMATRIX_SEARCH;
use crate::lanes::qkx_search_lanes;
use crate::lanes::LANES;
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 32;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ4_1>();

/// The reference's sequential scan `if v < min { min = v }; if v > max { max = v }` from
/// `(FLT_MAX, −FLT_MAX)`, as `(min, max)`.
fn min_max_scalar(x: &[f32; QK]) -> (f32, f32) {
    let (mut mn, mut mx) = (f32::MAX, -f32::MAX);
    for &v in x {
        if v < mn {
            mn = v;
        }
        if v > mx {
            mx = v;
        }
    }
    (mn, mx)
}

/// [`min_max_scalar`], computed in lanes (`minps`/`maxps` keep the running value on ties
/// and NaNs, as the scan's strict comparisons do). Lanes can only disagree with the
/// sequential scan on which zero (+0 or −0) comes first, so a zero result is recomputed
/// sequentially.
#[inline(always)]
pub(super) fn min_max<S: V8>(s: S, x: &[f32; QK]) -> (f32, f32) {
    let (mut mn, mut mx) = (s.splat(f32::MAX), s.splat(-f32::MAX));
    for chunk in x.chunks_exact(LANES) {
        let v = s.load(chunk.try_into().unwrap());
        mn = s.min(v, mn);
        mx = s.max(v, mx);
    }
    let (mn, mx) = (s.to_array(mn), s.to_array(mx));
    // Pairwise trees: without NaNs (which never got in) the order only decides zero signs.
    let lo = |a: f32, b: f32| if a < b { a } else { b };
    let hi = |a: f32, b: f32| if a > b { a } else { b };
    let min = lo(
        lo(lo(mn[0], mn[1]), lo(mn[2], mn[3])),
        lo(lo(mn[4], mn[5]), lo(mn[6], mn[7])),
    );
    let max = hi(
        hi(hi(mx[0], mx[1]), hi(mx[2], mx[3])),
        hi(hi(mx[4], mx[5]), hi(mx[6], mx[7])),
    );
    if min == 0.0 || max == 0.0 {
        min_max_scalar(x)
    } else {
        (min, max)
    }
}

multiversion! {
    /// Quantizes one row; with an imatrix, through the weighted scale/offset search.
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

#[inline(always)]
fn quantize_row_impl<S: V8>(s: S, src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) {
    debug_assert_eq!(src.len() % QK, 0);
    debug_assert_eq!(dst.len(), src.len() / QK * BLOCK_BYTES);
    match imatrix {
        None => quantize_row_ref(s, src, dst),
        Some(qw) => quantize_row_weighted(s, src, dst, qw),
    }
}

/// `quantize_row_q4_1_ref`. The per-block scalars (`d`, `1/d`, the fp16 bits of `d` and
/// `min`) are computed for eight blocks at a time, one block per lane.
#[inline(always)]
fn quantize_row_ref<S: V8>(s: S, src: &[f32], dst: &mut [u8]) {
    let chunks = src.chunks(CHUNK_BLOCKS * QK);
    for (xc, yc) in chunks.zip(dst.chunks_mut(CHUNK_BLOCKS * BLOCK_BYTES)) {
        let (mut min, mut max) = ([0f32; LANES], [0f32; LANES]);
        for ((lo, hi), xb) in min.iter_mut().zip(max.iter_mut()).zip(xc.chunks_exact(QK)) {
            (*lo, *hi) = min_max(s, xb.try_into().unwrap());
        }
        let d = s.div(s.sub(s.load(&max), s.load(&min)), s.splat(15.0));
        let zero = s.splat(0.0);
        let id = s.to_array(s.select(s.ne(d, zero), s.div(s.splat(1.0), d), zero));
        let (dh, mh) = (s.f16_bits(d), s.f16_bits(s.load(&min)));
        for (g, (xb, y)) in xc
            .chunks_exact(QK)
            .zip(yc.chunks_exact_mut(BLOCK_BYTES))
            .enumerate()
        {
            put_u16(y, 0, dh[g]);
            put_u16(y, 2, mh[g]);
            let t = block_trunc::<S, true>(s, xb.try_into().unwrap(), min[g], id[g], 0.5);
            pack_nibbles(&t, &mut y[4..]);
        }
    }
}

/// `quantize_row_q4_1_impl`: q4_0's weighting, then per block
/// `make_qkx3_quants(nmax = 15, rmin = −0.9, rdelta = 0.05, nstep = 36)`; `d` is the fitted
/// scale and `m` the fitted offset (`−the_min`, at most 0). The fits run eight
/// blocks at a time.
#[inline(always)]
fn quantize_row_weighted<S: V8>(s: S, src: &[f32], dst: &mut [u8], qw: &[f32]) {
    let sigma2 = row_sigma2(src);
    let chunks = src
        .chunks(CHUNK_BLOCKS * QK)
        .zip(qw.chunks(CHUNK_BLOCKS * QK));
    for ((xc, qc), yc) in chunks.zip(dst.chunks_mut(CHUNK_BLOCKS * BLOCK_BYTES)) {
        let (xt, wt) = weighted_lanes(xc, qc, sigma2);
        let fit = qkx_search_lanes(s, 15, &xt, &wt, QKX3_IMATRIX_SEARCH);
        for (g, (xb, y)) in xc
            .chunks_exact(QK)
            .zip(yc.chunks_exact_mut(BLOCK_BYTES))
            .enumerate()
        {
            let mut l = [0u8; QK];
            fit.levels(g, 15, xb, &mut l);
            put_u16(y, 0, f32_to_f16_bits(fit.scale[g]));
            put_u16(y, 2, f32_to_f16_bits(-fit.the_min[g]));
            let (lo, hi) = l.split_at(QK / 2);
            for ((q, &a), &b) in y[4..].iter_mut().zip(lo).zip(hi) {
                *q = a | (b << 4);
            }
        }
    }
}

/// `dequantize_row_q4_1`: `q · d + m`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len() / BLOCK_BYTES * QK, dst.len());
    for (y, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_bits_to_f32(get_u16(y, 0));
        let m = f16_bits_to_f32(get_u16(y, 2));
        let (lo, hi) = out.split_at_mut(QK / 2);
        for ((&q, a), b) in y[4..].iter().zip(lo).zip(hi) {
            *a = (q & 0x0f) as f32 * d + m;
            *b = (q >> 4) as f32 * d + m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::block32::tests::{adversarial_blocks, Rng};
    use super::*;
    use crate::common::c_trunc_i32;
    use crate::common::f32_to_f16;

    /// `quantize_row_q4_1_ref` written the plain way, with C's conversions.
    fn quantize_block_plain(x: &[f32; QK]) -> [u8; BLOCK_BYTES] {
        let mut y = [0u8; BLOCK_BYTES];
        let (min, max) = min_max_scalar(x);
        let d = (max - min) / 15.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        y[2..4].copy_from_slice(&f32_to_f16(min).to_le_bytes());
        for j in 0..QK / 2 {
            let q = |v: f32| (c_trunc_i32((v - min) * id + 0.5) as i8 as i32).min(15) as u8;
            y[4 + j] = q(x[j]) | (q(x[j + 16]) << 4);
        }
        y
    }

    #[test]
    fn imatrix_path_matches_the_block_by_block_search() {
        // 13 blocks: one full chunk of eight lanes and a partial one.
        let mut rng = Rng::new(9);
        let n = 13 * QK;
        let src: Vec<f32> = (0..n).map(|i| rng.uniform() * (1 + i % 5) as f32).collect();
        let qw: Vec<f32> = (0..n).map(|_| rng.uniform().abs()).collect();
        let mut ours = vec![0u8; 13 * BLOCK_BYTES];
        quantize_row(&src, &mut ours, Some(&qw));
        let sigma2 = row_sigma2(&src);
        for ((xb, qb), y) in src
            .chunks(QK)
            .zip(qw.chunks(QK))
            .zip(ours.chunks(BLOCK_BYTES))
        {
            let w: Vec<f32> = xb
                .iter()
                .zip(qb)
                .map(|(&x, &q)| q * (sigma2 + x * x).sqrt())
                .collect();
            let mut l = [0u8; QK];
            let (d, the_min) =
                crate::kquants::make_qkx3_quants(15, xb, Some(&w), &mut l, QKX3_IMATRIX_SEARCH);
            assert_eq!(get_u16(y, 0), f32_to_f16_bits(d));
            assert_eq!(get_u16(y, 2), f32_to_f16_bits(-the_min));
            for j in 0..QK / 2 {
                assert_eq!(y[4 + j], l[j] | (l[j + 16] << 4));
            }
        }
    }

    #[test]
    fn min_max_matches_the_sequential_scan() {
        for b in adversarial_blocks() {
            let want = min_max_scalar(&b);
            let want = (want.0.to_bits(), want.1.to_bits());
            let bits = |(a, b): (f32, f32)| (a.to_bits(), b.to_bits());
            assert_eq!(bits(min_max(crate::simd::Scalar, &b)), want, "{b:?}");
            #[cfg(target_arch = "x86_64")]
            {
                assert_eq!(bits(min_max(crate::simd::Sse2, &b)), want, "{b:?}");
                if let Some(s) = crate::simd::Avx2::get() {
                    assert_eq!(bits(min_max(s, &b)), want, "{b:?}");
                }
            }
        }
    }

    #[test]
    fn quantize_matches_the_plain_reference() {
        let blocks = adversarial_blocks();
        let src: Vec<f32> = blocks.iter().flatten().copied().collect();
        let mut ours = vec![0u8; blocks.len() * BLOCK_BYTES];
        quantize_row(&src, &mut ours, None);
        for (b, y) in blocks.iter().zip(ours.chunks_exact(BLOCK_BYTES)) {
            assert_eq!(y, quantize_block_plain(b), "{b:?}");
        }
    }

    #[test]
    fn all_zero_block() {
        // d = (max − min)/15 keeps the zeros' signs: +0 − +0 = +0, −0 − −0 = +0.
        for (z, m) in [(0.0f32, 0x0000u16), (-0.0, 0x8000)] {
            let mut y = [0xffu8; BLOCK_BYTES];
            quantize_row(&[z; QK], &mut y, None);
            assert_eq!((get_u16(&y, 0), get_u16(&y, 2)), (0x0000, m));
            assert!(y[4..].iter().all(|&q| q == 0));
        }
    }

    #[test]
    fn round_trip_error_is_within_half_a_step() {
        let mut rng = Rng::new(9);
        for (scale, offset) in [(1.0f32, 0.0f32), (0.05, 0.01), (40.0, -3.0)] {
            let src: Vec<f32> = (0..64 * QK)
                .map(|_| rng.uniform() * scale + offset)
                .collect();
            let mut q = vec![0u8; 64 * BLOCK_BYTES];
            quantize_row(&src, &mut q, None);
            let mut back = vec![0f32; src.len()];
            dequantize_row(&q, &mut back);
            for ((xb, yb), y) in src
                .chunks_exact(QK)
                .zip(back.chunks_exact(QK))
                .zip(q.chunks_exact(BLOCK_BYTES))
            {
                let d = f16_bits_to_f32(get_u16(y, 0));
                let m = f16_bits_to_f32(get_u16(y, 2));
                // Half a step, plus the f16 roundings of d (times up to 15) and of m.
                let tol = d * (0.5 + 15.0 / 2048.0) + m.abs() / 2048.0;
                for (&a, &b) in xb.iter().zip(yb) {
                    assert!((a - b).abs() <= tol, "{a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn imatrix_path_fits_the_data() {
        let mut rng = Rng::new(13);
        let n = 8 * QK;
        let src: Vec<f32> = (0..n).map(|_| rng.uniform() + 0.25).collect();
        let qw: Vec<f32> = (0..n).map(|_| 0.5 + rng.uniform().abs()).collect();
        let (mut plain, mut weighted) = (vec![0u8; 8 * BLOCK_BYTES], vec![0u8; 8 * BLOCK_BYTES]);
        quantize_row(&src, &mut plain, None);
        quantize_row(&src, &mut weighted, Some(&qw));
        assert_ne!(plain, weighted);
        let mut back = vec![0f32; n];
        dequantize_row(&weighted, &mut back);
        let max_err = src
            .iter()
            .zip(&back)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(max_err < 0.2, "max error {max_err}");
    }
}
