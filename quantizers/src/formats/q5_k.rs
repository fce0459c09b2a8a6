//! q5_K: 256 elements, 176 bytes per block (5.5 bits per weight).
//!
//! Layout: `d: f16`, `dmin: f16`, `scales[12]` (bytes 0–15, as in Q4_K), `qh[32]` (16–47),
//! `qs[128]` (48–175). The low nibbles are placed as in Q4_K; bit 4 of element `e` is bit
//! `e/32` of `qh[e%32]`. Sub-block `j` dequantizes as `(d*sc_j)*q - dmin*m_j`.

use super::blocks::BlockQ5K;
use crate::kquants::QkxSearch;
use crate::simd::{multiversion, V8};
use std::mem::size_of;

use super::q4_k::{quantize_super_block, sub_block_factors, SubBlockParams, HEAD_BYTES};

pub(crate) const QK: usize = 256;
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ5K>();
const QS_AT: usize = HEAD_BYTES + 32;

const Q5_K_PARAMS: SubBlockParams = SubBlockParams {
    nmax: 31,
    ref_search: QkxSearch {
        rmin: -0.5,
        rdelta: 0.1,
        nstep: 15,
        use_mad: false,
    },
    clamp_impl_scales: true,
};

/// `quantize_row_q5_K_ref` as a build with fused multiply-adds computes it ([`crate::fused`]).
pub(crate) fn quantize_row_fused(src: &[f32], dst: &mut [u8]) {
    quantize_row_impl(crate::fused::Fused, src, dst, None);
}

multiversion! {
    /// `quantize_q5_K` for one row: `quantize_row_q5_K_ref` without an imatrix,
    /// `quantize_row_q5_K_impl` with one.
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
        let (head, rest) = y.split_at_mut(HEAD_BYTES);
        quantize_super_block(s, x, qw, &Q5_K_PARAMS, head, &mut levels);
        let (qh, qs) = rest.split_at_mut(32);
        qh.fill(0);
        for (c, (lv, q)) in levels
            .chunks_exact(64)
            .zip(qs.chunks_exact_mut(32))
            .enumerate()
        {
            let (m1, m2) = (1u8 << (2 * c), 2u8 << (2 * c));
            // The levels are 0..32: bit 4 goes to `qh`, the low nibble to `qs` (the C
            // code's `if (l > 15) { l -= 16; set bit; }`, without a branch on the data).
            for (l, (o, h)) in q.iter_mut().zip(qh.iter_mut()).enumerate() {
                let (l1, l2) = (lv[l], lv[l + 32]);
                *h |= (((l1 >> 4) & 1) * m1) | (((l2 >> 4) & 1) * m2);
                *o = (l1 & 15) | ((l2 & 15) << 4);
            }
        }
    }
}

pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (x, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let f = sub_block_factors(x);
        let qh = &x[HEAD_BYTES..QS_AT];
        let qs = &x[QS_AT..];
        for (c, (q, yc)) in qs.chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
            let (d1, m1) = f[2 * c];
            let (d2, m2) = f[2 * c + 1];
            let (u1, u2) = (1u8 << (2 * c), 2u8 << (2 * c));
            let (lo, hi) = yc.split_at_mut(32);
            for (((&b, &h), a), e) in q.iter().zip(qh).zip(lo).zip(hi) {
                let q1 = (b & 0xF) as i32 + if h & u1 != 0 { 16 } else { 0 };
                let q2 = (b >> 4) as i32 + if h & u2 != 0 { 16 } else { 0 };
                *a = d1 * q1 as f32 - m1;
                *e = d2 * q2 as f32 - m2;
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
            assert!(err < 0.08, "max error {err}");
        }
    }
}
