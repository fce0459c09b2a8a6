//! q5_0: 32 elements per block, 22 bytes per block.
//!
//! Layout: `d: f16`, `qh: u32` (little-endian), `qs[16]`. Each quant is 5 bits: its low
//! nibble sits in `qs` as in q4_0 (element `j` low, `j + 16` high) and its bit 4 is bit `j`
//! (resp. `j + 16`) of `qh`. Element value = `(q - 16) · d`.
//!
//! Without an imatrix (`quantize_row_q5_0_ref`): `d = m / -16` with `m` the signed element of
//! largest magnitude, `q = min(31, (i8)(x/d + 16.5))`. An all-zero block stores `d = -0.0`.
//! With an imatrix (`quantize_row_q5_0_impl`): the q4_0 weighting with
//! `make_qx_quants(nmax = 16, rmse_type = 1)`.
//!
//! **NaN handling:** as q4_0: NaNs are skipped by the magnitude search, and a NaN or
//! out-of-range quant is C's x86-64 `i32::MIN` truncated to a byte (0).

use super::block32::{block_trunc, row_sigma2, signed_abs_max, weighted_lanes, CHUNK_BLOCKS};
use super::blocks::BlockQ5_0;
use super::f16::{f16_bits_to_f32, f32_to_f16_bits};
use crate::common::{get_u16, put_u16};
use crate::lanes::make_qx_quants_lanes;
use crate::lanes::LANES;
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 32;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ5_0>();

/// Packs 32 five-bit quants (only their low 5 bits count) into `qh` (`out[0..4]`) and `qs`
/// (`out[4..20]`); shared with q5_1.
#[inline(always)]
pub(super) fn pack_q5(q: &[u8; QK], out: &mut [u8]) {
    let (lo, hi) = q.split_at(QK / 2);
    let mut qh = 0u32;
    for (j, (&a, &b)) in lo.iter().zip(hi).enumerate() {
        qh |= (((a & 0x10) >> 4) as u32) << j;
        qh |= (((b & 0x10) >> 4) as u32) << (j + QK / 2);
    }
    out[..4].copy_from_slice(&qh.to_le_bytes());
    for ((s, &a), &b) in out[4..].iter_mut().zip(lo).zip(hi) {
        *s = (a & 0x0f) | ((b & 0x0f) << 4);
    }
}

/// Unpacks the 32 five-bit quants stored as `qh` (`packed[0..4]`) and `qs` (`packed[4..20]`).
#[inline(always)]
pub(super) fn unpack_q5(packed: &[u8]) -> [u8; QK] {
    let qh = u32::from_le_bytes([packed[0], packed[1], packed[2], packed[3]]);
    let mut q = [0u8; QK];
    let (lo, hi) = q.split_at_mut(QK / 2);
    for (j, ((a, b), &s)) in lo.iter_mut().zip(hi).zip(&packed[4..20]).enumerate() {
        *a = (s & 0x0f) | ((((qh >> j) & 1) as u8) << 4);
        *b = (s >> 4) | ((((qh >> (j + QK / 2)) & 1) as u8) << 4);
    }
    q
}

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

/// `quantize_row_q5_0_ref`: the quants are `min(31, (int8_t)(x·id + 16.5))`. The
/// per-block scalars (`d`, `1/d`, the fp16 bits of `d`) are computed for eight blocks at a
/// time, one block per lane.
#[inline(always)]
fn quantize_row_ref<S: V8>(s: S, src: &[f32], dst: &mut [u8]) {
    let chunks = src.chunks(CHUNK_BLOCKS * QK);
    for (xc, yc) in chunks.zip(dst.chunks_mut(CHUNK_BLOCKS * BLOCK_BYTES)) {
        let mut max = [0f32; LANES];
        for (m, xb) in max.iter_mut().zip(xc.chunks_exact(QK)) {
            *m = signed_abs_max(s, xb.try_into().unwrap());
        }
        let d = s.div(s.load(&max), s.splat(-16.0));
        let zero = s.splat(0.0);
        let id = s.to_array(s.select(s.ne(d, zero), s.div(s.splat(1.0), d), zero));
        let dh = s.f16_bits(d);
        for (g, (xb, y)) in xc
            .chunks_exact(QK)
            .zip(yc.chunks_exact_mut(BLOCK_BYTES))
            .enumerate()
        {
            put_u16(y, 0, dh[g]);
            let t = block_trunc::<S, false>(s, xb.try_into().unwrap(), 0.0, id[g], 16.5);
            let mut q = [0u8; QK];
            for (q, &t) in q.iter_mut().zip(&t) {
                *q = (t as i8 as i32).min(31) as u8;
            }
            pack_q5(&q, &mut y[2..]);
        }
    }
}

/// `quantize_row_q5_0_impl`: q4_0's weighting, `make_qx_quants(nmax = 16, rmse_type = 1)`
/// per block; its levels `0..=31` are the quants and its fitted scale is `d`. The fits run
/// eight blocks at a time.
#[inline(always)]
fn quantize_row_weighted<S: V8>(s: S, src: &[f32], dst: &mut [u8], qw: &[f32]) {
    let sigma2 = row_sigma2(src);
    let chunks = src
        .chunks(CHUNK_BLOCKS * QK)
        .zip(qw.chunks(CHUNK_BLOCKS * QK));
    for ((xc, qc), yc) in chunks.zip(dst.chunks_mut(CHUNK_BLOCKS * BLOCK_BYTES)) {
        let (xt, wt) = weighted_lanes(xc, qc, sigma2);
        let fit = make_qx_quants_lanes(s, 16, &xt, &wt);
        for (g, (xb, y)) in xc
            .chunks_exact(QK)
            .zip(yc.chunks_exact_mut(BLOCK_BYTES))
            .enumerate()
        {
            let mut l = [0u8; QK];
            fit.levels(g, 16, xb, &mut l);
            put_u16(y, 0, f32_to_f16_bits(fit.scale[g]));
            pack_q5(&l, &mut y[2..]);
        }
    }
}

/// `dequantize_row_q5_0`: `(q - 16) · d`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len() / BLOCK_BYTES * QK, dst.len());
    for (y, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_bits_to_f32(get_u16(y, 0));
        let q = unpack_q5(&y[2..]);
        for (o, &q) in out.iter_mut().zip(&q) {
            *o = (q as i32 - 16) as f32 * d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::block32::tests::{adversarial_blocks, Rng};
    use super::*;
    use crate::common::c_trunc_i32;
    use crate::common::f32_to_f16;

    /// `quantize_row_q5_0_ref` written the plain way, with C's conversions and bit layout.
    fn quantize_block_plain(x: &[f32; QK]) -> [u8; BLOCK_BYTES] {
        let (mut amax, mut max) = (0f32, 0f32);
        for &v in x {
            if amax < v.abs() {
                amax = v.abs();
                max = v;
            }
        }
        let d = max / -16.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        let mut y = [0u8; BLOCK_BYTES];
        y[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let mut qh = 0u32;
        for j in 0..QK / 2 {
            let q0 = (c_trunc_i32(x[j] * id + 16.5) as i8 as i32).min(31) as u8;
            let q1 = (c_trunc_i32(x[j + 16] * id + 16.5) as i8 as i32).min(31) as u8;
            y[6 + j] = (q0 & 0x0f) | ((q1 & 0x0f) << 4);
            qh |= (((q0 & 0x10) >> 4) as u32) << j;
            qh |= (((q1 & 0x10) >> 4) as u32) << (j + 16);
        }
        y[2..6].copy_from_slice(&qh.to_le_bytes());
        y
    }

    #[test]
    fn pack_and_unpack_are_inverse() {
        let mut rng = Rng::new(17);
        for _ in 0..100 {
            let q: [u8; QK] = std::array::from_fn(|_| (rng.uniform().to_bits() >> 7) as u8 & 31);
            let mut packed = [0u8; 20];
            pack_q5(&q, &mut packed);
            assert_eq!(unpack_q5(&packed), q);
        }
    }

    #[test]
    fn high_bits_of_any_bytes() {
        let mut rng = Rng::new(19);
        for _ in 0..1000 {
            let q: [u8; QK] = std::array::from_fn(|_| (rng.uniform().to_bits() >> 5) as u8);
            let mut packed = [0u8; 20];
            pack_q5(&q, &mut packed);
            let want = (0..QK).fold(0u32, |h, e| h | ((((q[e] >> 4) & 1) as u32) << e));
            assert_eq!(packed[..4], want.to_le_bytes());
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
    fn all_zero_block_stores_negative_zero_scale() {
        let mut y = [0u8; BLOCK_BYTES];
        quantize_row(&[0.0; QK], &mut y, None);
        // d = 0 / -16 = -0.0; every quant is 16: bit 4 set in qh, low nibbles 0.
        assert_eq!(&y[..6], &[0x00, 0x80, 0xff, 0xff, 0xff, 0xff]);
        assert!(y[6..].iter().all(|&q| q == 0));
        let mut back = [1f32; QK];
        dequantize_row(&y, &mut back);
        assert!(back.iter().all(|&v| v == 0.0));
    }

    #[test]
    fn round_trip_error_is_within_one_step() {
        let mut rng = Rng::new(19);
        for scale in [1.0f32, 0.01, 60.0] {
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
                    // Half a step, except that +16 is clamped to +15 (a full step).
                    assert!((a - b).abs() <= d * 1.01, "{a} vs {b}, d = {d}");
                }
            }
        }
    }

    #[test]
    fn imatrix_path_fits_the_data() {
        let mut rng = Rng::new(23);
        let n = 8 * QK;
        let src: Vec<f32> = (0..n).map(|_| rng.uniform()).collect();
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
        assert!(max_err < 0.12, "max error {max_err}");
    }
}
