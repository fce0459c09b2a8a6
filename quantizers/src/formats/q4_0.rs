//! q4_0: 32 elements per block, 18 bytes per block.
//!
//! Layout: `d: f16`, then `qs[16]`; byte `j` holds element `j` in its low nibble and element
//! `j + 16` in its high nibble. Element value = `(q - 8) · d`.
//!
//! Without an imatrix (`quantize_row_q4_0_ref`): `d = m / -8` where `m` is the signed element
//! of largest magnitude (first one wins), `q = min(15, (i8)(x/d + 8.5))`. An all-zero block
//! stores `d = -0.0` (`0 / -8`).
//!
//! With an imatrix (`quantize_row_q4_0_impl`): weights `w = qw · sqrt(σ² + x²)` with σ² the
//! row's mean square, then the weighted fit of `make_qx_quants(nmax = 8, rmse_type = 1)`.
//!
//! **NaN handling:** NaNs never win the magnitude search (the comparison is false), so they
//! only reach the quants: C's float→int conversion gives `i32::MIN` on x86-64 for NaN and
//! out-of-range values, whose low byte (0) is what the `(int8_t)` cast keeps. An infinite
//! maximum gives `d = ∓inf`, `1/d = ∓0`, and `±inf · 0 = NaN` quants. All of that is
//! reproduced exactly.

use super::block32::{
    block_trunc, pack_nibbles, row_sigma2, signed_abs_max, weighted_lanes, CHUNK_BLOCKS,
};
use super::blocks::BlockQ4_0;
use super::f16::{f16_bits_to_f32, f32_to_f16_bits};
use crate::common::{get_u16, put_u16};
use crate::lanes::{make_qx_quants_lanes, LANES};
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 32;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ4_0>();

multiversion! {
    /// Quantizes one row; with an imatrix, through the weighted scale search.
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

/// `quantize_row_q4_0_ref`. The per-block scalars (`d`, `1/d`, the fp16 bits of `d`) are
/// computed for eight blocks at a time, one block per lane.
#[inline(always)]
fn quantize_row_ref<S: V8>(s: S, src: &[f32], dst: &mut [u8]) {
    let chunks = src.chunks(CHUNK_BLOCKS * QK);
    for (xc, yc) in chunks.zip(dst.chunks_mut(CHUNK_BLOCKS * BLOCK_BYTES)) {
        let mut max = [0f32; LANES];
        for (m, xb) in max.iter_mut().zip(xc.chunks_exact(QK)) {
            *m = signed_abs_max(s, xb.try_into().unwrap());
        }
        let d = s.div(s.load(&max), s.splat(-8.0));
        let zero = s.splat(0.0);
        let id = s.to_array(s.select(s.ne(d, zero), s.div(s.splat(1.0), d), zero));
        let dh = s.f16_bits(d);
        for (g, (xb, y)) in xc
            .chunks_exact(QK)
            .zip(yc.chunks_exact_mut(BLOCK_BYTES))
            .enumerate()
        {
            put_u16(y, 0, dh[g]);
            let t = block_trunc::<S, false>(s, xb.try_into().unwrap(), 0.0, id[g], 8.5);
            pack_nibbles(&t, &mut y[2..]);
        }
    }
}

/// `quantize_row_q4_0_impl`: σ² over the whole row, then per block the weighted
/// `make_qx_quants(nmax = 8, rmse_type = 1)`; its levels `0..=15` are the nibbles and its
/// fitted scale (either sign) is `d`. The fits run eight blocks at a time.
#[inline(always)]
fn quantize_row_weighted<S: V8>(s: S, src: &[f32], dst: &mut [u8], qw: &[f32]) {
    let sigma2 = row_sigma2(src);
    let chunks = src
        .chunks(CHUNK_BLOCKS * QK)
        .zip(qw.chunks(CHUNK_BLOCKS * QK));
    for ((xc, qc), yc) in chunks.zip(dst.chunks_mut(CHUNK_BLOCKS * BLOCK_BYTES)) {
        let (xt, wt) = weighted_lanes(xc, qc, sigma2);
        let fit = make_qx_quants_lanes(s, 8, &xt, &wt);
        for (g, (xb, y)) in xc
            .chunks_exact(QK)
            .zip(yc.chunks_exact_mut(BLOCK_BYTES))
            .enumerate()
        {
            let mut l = [0u8; QK];
            fit.levels(g, 8, xb, &mut l);
            put_u16(y, 0, f32_to_f16_bits(fit.scale[g]));
            let (lo, hi) = l.split_at(QK / 2);
            for ((q, &a), &b) in y[2..].iter_mut().zip(lo).zip(hi) {
                *q = a | (b << 4);
            }
        }
    }
}

/// `dequantize_row_q4_0`: `(q - 8) · d`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len() / BLOCK_BYTES * QK, dst.len());
    for (y, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_bits_to_f32(get_u16(y, 0));
        let (lo, hi) = out.split_at_mut(QK / 2);
        for ((&q, a), b) in y[2..].iter().zip(lo).zip(hi) {
            *a = ((q & 0x0f) as i32 - 8) as f32 * d;
            *b = ((q >> 4) as i32 - 8) as f32 * d;
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::block32::tests::{adversarial_blocks, signed_abs_max_scalar, Rng};
    use super::*;
    use crate::common::c_trunc_i32;

    /// `quantize_row_q4_0_ref` written the plain way, with C's conversions.
    fn quantize_block_plain(x: &[f32; QK]) -> [u8; BLOCK_BYTES] {
        let mut y = [0u8; BLOCK_BYTES];
        let d = signed_abs_max_scalar(x) / -8.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        y[..2].copy_from_slice(&crate::common::f32_to_f16(d).to_le_bytes());
        for j in 0..QK / 2 {
            let a = (c_trunc_i32(x[j] * id + 8.5) as i8 as i32).min(15) as u8;
            let b = (c_trunc_i32(x[j + 16] * id + 8.5) as i8 as i32).min(15) as u8;
            y[2 + j] = a | (b << 4);
        }
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
    fn all_zero_block_stores_negative_zero_scale() {
        for z in [0.0f32, -0.0] {
            let mut y = [0u8; BLOCK_BYTES];
            quantize_row(&[z; QK], &mut y, None);
            assert_eq!(&y[..2], &[0x00, 0x80], "d = -0.0");
            assert!(y[2..].iter().all(|&q| q == 0x88));
            let mut back = [1f32; QK];
            dequantize_row(&y, &mut back);
            assert!(back.iter().all(|&v| v == 0.0));
        }
    }

    #[test]
    fn round_trip_error_is_within_one_step() {
        let mut rng = Rng::new(7);
        for scale in [1.0f32, 1e-3, 50.0] {
            let src: Vec<f32> = (0..64 * QK).map(|_| rng.uniform() * scale).collect();
            let mut q = vec![0u8; 64 * BLOCK_BYTES];
            quantize_row(&src, &mut q, None);
            let mut back = vec![0f32; src.len()];
            dequantize_row(&q, &mut back);
            for ((xb, yb), y) in src
                .chunks_exact(QK)
                .zip(back.chunks_exact(QK))
                .zip(q.chunks_exact(BLOCK_BYTES))
            {
                let d = f16_bits_to_f32(get_u16(y, 0)).abs();
                for (&a, &b) in xb.iter().zip(yb) {
                    // Half a step, except that +8 is clamped to +7 (a full step).
                    assert!((a - b).abs() <= d * 1.01, "{a} vs {b}, d = {d}");
                }
            }
        }
    }

    #[test]
    fn imatrix_path_matches_the_block_by_block_search() {
        // 13 blocks: one full chunk of eight lanes and a partial one.
        let mut rng = Rng::new(5);
        let n = 13 * QK;
        let src: Vec<f32> = (0..n).map(|i| rng.uniform() * (1 + i % 7) as f32).collect();
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
            let d = crate::kquants::make_qx_quants(8, xb, Some(&w), &mut l);
            assert_eq!(get_u16(y, 0), f32_to_f16_bits(d));
            for j in 0..QK / 2 {
                assert_eq!(y[2 + j], l[j] | (l[j + 16] << 4));
            }
        }
    }

    #[test]
    fn imatrix_path_fits_the_data() {
        let mut rng = Rng::new(11);
        let n = 8 * QK;
        let src: Vec<f32> = (0..n).map(|_| rng.uniform()).collect();
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
        assert!(max_err < 0.25, "max error {max_err}");
        // Zero data gives zero levels and a zero scale.
        let mut y = vec![0xffu8; 8 * BLOCK_BYTES];
        quantize_row(&vec![0.0; n], &mut y, Some(&qw));
        assert!(y.iter().all(|&b| b == 0));
    }
}
