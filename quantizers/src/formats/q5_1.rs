//! q5_1: 32 elements per block, 24 bytes per block.
//!
//! Layout: `d: f16`, `m: f16`, `qh: u32`, `qs[16]`, the 5-bit quants packed as in q5_0.
//! Element value = `q · d + m`.
//!
//! Without an imatrix (`quantize_row_q5_1_ref`): `m` is the block minimum, `d = (max − min)
//! / 31`, `q = (u8)((x − min)/d + 0.5)` (no clamp in the reference). With an imatrix
//! (`quantize_row_q5_1_impl`): q4_0's weighting, then `make_qkx3_quants(nmax = 31, rmin =
//! −0.9, rdelta = 0.05, nstep = 36)`, storing the fitted offset as `m`.
//!
//! **NaN handling:** as q4_1: NaNs never become the minimum or maximum, and a NaN or
//! out-of-range quant is C's x86-64 `i32::MIN` truncated to a byte (0).

use super::block32::{block_trunc, row_sigma2, weighted_lanes, CHUNK_BLOCKS};
use super::blocks::BlockQ5_1;
use super::f16::{f16_bits_to_f32, f32_to_f16_bits};
use super::q4_1::min_max;
use super::q5_0::{pack_q5, unpack_q5};
use crate::common::{get_u16, put_u16};
use crate::kquants::QKX3_IMATRIX_SEARCH;
use crate::lanes::qkx_search_lanes;
use crate::lanes::LANES;
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 32;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ5_1>();

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

/// `quantize_row_q5_1_ref`: the quants are `(uint8_t)((x − min)·id + 0.5)`, on x86-64 a
/// 32-bit truncation whose low byte is kept. The per-block scalars (`d`, `1/d`, the fp16
/// bits of `d` and `min`) are computed for eight blocks at a time, one block per lane.
#[inline(always)]
fn quantize_row_ref<S: V8>(s: S, src: &[f32], dst: &mut [u8]) {
    let chunks = src.chunks(CHUNK_BLOCKS * QK);
    for (xc, yc) in chunks.zip(dst.chunks_mut(CHUNK_BLOCKS * BLOCK_BYTES)) {
        let (mut min, mut max) = ([0f32; LANES], [0f32; LANES]);
        for ((lo, hi), xb) in min.iter_mut().zip(max.iter_mut()).zip(xc.chunks_exact(QK)) {
            (*lo, *hi) = min_max(s, xb.try_into().unwrap());
        }
        let d = s.div(s.sub(s.load(&max), s.load(&min)), s.splat(31.0));
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
            let mut q = [0u8; QK];
            for (q, &t) in q.iter_mut().zip(&t) {
                *q = t as u8;
            }
            pack_q5(&q, &mut y[4..]);
        }
    }
}

/// `quantize_row_q5_1_impl`: q4_0's weighting, then per block
/// `make_qkx3_quants(nmax = 31, rmin = −0.9, rdelta = 0.05, nstep = 36)`; `d` is the fitted
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
        let fit = qkx_search_lanes(s, 31, &xt, &wt, QKX3_IMATRIX_SEARCH);
        for (g, (xb, y)) in xc
            .chunks_exact(QK)
            .zip(yc.chunks_exact_mut(BLOCK_BYTES))
            .enumerate()
        {
            let mut l = [0u8; QK];
            fit.levels(g, 31, xb, &mut l);
            put_u16(y, 0, f32_to_f16_bits(fit.scale[g]));
            put_u16(y, 2, f32_to_f16_bits(-fit.the_min[g]));
            pack_q5(&l, &mut y[4..]);
        }
    }
}

/// `dequantize_row_q5_1`: `q · d + m`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len() / BLOCK_BYTES * QK, dst.len());
    for (y, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_bits_to_f32(get_u16(y, 0));
        let m = f16_bits_to_f32(get_u16(y, 2));
        let q = unpack_q5(&y[4..]);
        for (o, &q) in out.iter_mut().zip(&q) {
            *o = q as f32 * d + m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::block32::tests::{adversarial_blocks, Rng};
    use super::*;
    use crate::common::c_trunc_i32;
    use crate::common::f32_to_f16;

    /// `quantize_row_q5_1_ref` written the plain way, with C's conversions and bit layout.
    fn quantize_block_plain(x: &[f32; QK]) -> [u8; BLOCK_BYTES] {
        let (mut min, mut max) = (f32::MAX, -f32::MAX);
        for &v in x {
            if v < min {
                min = v;
            }
            if v > max {
                max = v;
            }
        }
        let d = (max - min) / 31.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        let mut y = [0u8; BLOCK_BYTES];
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        y[2..4].copy_from_slice(&f32_to_f16(min).to_le_bytes());
        let mut qh = 0u32;
        for j in 0..QK / 2 {
            let q0 = c_trunc_i32((x[j] - min) * id + 0.5) as u8;
            let q1 = c_trunc_i32((x[j + 16] - min) * id + 0.5) as u8;
            y[8 + j] = (q0 & 0x0f) | ((q1 & 0x0f) << 4);
            qh |= (((q0 & 0x10) >> 4) as u32) << j;
            qh |= (((q1 & 0x10) >> 4) as u32) << (j + 16);
        }
        y[4..8].copy_from_slice(&qh.to_le_bytes());
        y
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
        let mut y = [0xffu8; BLOCK_BYTES];
        quantize_row(&[-0.0; QK], &mut y, None);
        assert_eq!((get_u16(&y, 0), get_u16(&y, 2)), (0x0000, 0x8000));
        assert!(y[4..].iter().all(|&q| q == 0));
    }

    #[test]
    fn round_trip_error_is_within_half_a_step() {
        let mut rng = Rng::new(29);
        for (scale, offset) in [(1.0f32, 0.0f32), (0.05, 0.02), (40.0, 5.0)] {
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
                let tol = d * (0.5 + 31.0 / 2048.0) + m.abs() / 2048.0;
                for (&a, &b) in xb.iter().zip(yb) {
                    assert!((a - b).abs() <= tol, "{a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn imatrix_path_fits_the_data() {
        let mut rng = Rng::new(31);
        let n = 8 * QK;
        let src: Vec<f32> = (0..n).map(|_| rng.uniform() + 0.25).collect();
        let qw: Vec<f32> = (0..n).map(|_| 0.5 + rng.uniform().abs()).collect();
        let mut y = vec![0u8; 8 * BLOCK_BYTES];
        quantize_row(&src, &mut y, Some(&qw));
        let mut back = vec![0f32; n];
        dequantize_row(&y, &mut back);
        let max_err = src
            .iter()
            .zip(&back)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(max_err < 0.1, "max error {max_err}");
    }
}
