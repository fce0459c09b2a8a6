//! q4_K: 256 elements, 144 bytes per block (4.5 bits per weight).
//!
//! Layout: `d: f16` (bytes 0–1), `dmin: f16` (2–3), `scales[12]` (4–15: eight 6-bit scales
//! and mins, see [`crate::kquants::pack_scale_min_k4`]), `qs[128]` (16–143). Sub-block `j`
//! (32 elements) dequantizes as `(d*sc_j)*q - dmin*m_j`. For chunk `c` in 0..4, `qs[32c + l]`
//! holds element `64c + l` in its low nibble and `64c + 32 + l` in its high nibble.
//!
//! The scale search (this file's [`quantize_super_block`]) is shared with Q5_K, which only
//! differs in the level count, the search range and the quant packing.

use crate::common::{f16_to_f32, f32_to_f16, get_u16, nearest_int, put_u16};
use crate::kquants::{
    get_scale_min_k4, make_qkx2_quants, make_qkx3_quants, make_qp_quants, pack_scale_min_k4,
    QkxSearch, QKX3_IMATRIX_SEARCH,
};
use crate::registry::TypeTraits;
use crate::types::GgmlType;

const QK: usize = 256;
const BLOCK_BYTES: usize = 144;
/// Bytes of the `d`, `dmin`, `scales[12]` head shared by Q4_K and Q5_K.
pub(crate) const HEAD_BYTES: usize = 16;

/// Registry entry for q4_K.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::Q4_K,
    name: "q4_K",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: true,
    quantize: Some(quantize_row),
    dequantize: Some(dequantize_row),
};

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
pub(crate) fn quantize_super_block(
    x: &[f32],
    qw: Option<&[f32]>,
    p: &SubBlockParams,
    head: &mut [u8],
    levels: &mut [u8; QK],
) {
    let mut scales = [0.0f32; 8];
    let mut mins = [0.0f32; 8];
    let mut weights = [0.0f32; 32];
    let mut ls = [0u8; 8];
    let mut lm = [0u8; 8];
    let (d, dmin);

    match qw {
        None => {
            let (mut max_scale, mut max_min) = (0.0f32, 0.0f32);
            for (j, (xs, lv)) in x
                .chunks_exact(32)
                .zip(levels.chunks_exact_mut(32))
                .enumerate()
            {
                let mut sum_x2 = 0.0f32;
                for &v in xs {
                    sum_x2 += v * v;
                }
                let av_x = (sum_x2 / 32.0).sqrt();
                for (w, &v) in weights.iter_mut().zip(xs) {
                    *w = av_x + v.abs();
                }
                let (scale, min) = make_qkx2_quants(p.nmax, xs, &weights, lv, p.ref_search);
                scales[j] = scale;
                mins[j] = min;
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
                ls[j] = (nearest_int(inv_scale * scales[j]) as u8).min(63);
                lm[j] = (nearest_int(inv_min * mins[j]) as u8).min(63);
            }
            d = max_scale / 63.0;
            dmin = max_min / 63.0;
        }
        Some(qw) => {
            let mut sum_x2 = 0.0f32;
            for &v in x {
                sum_x2 += v * v;
            }
            let sigma2 = 2.0 * sum_x2 / QK as f32;
            let mut sw = [0.0f32; 8];
            for (j, ((xs, lv), qw)) in x
                .chunks_exact(32)
                .zip(levels.chunks_exact_mut(32))
                .zip(qw.chunks_exact(32))
                .enumerate()
            {
                for ((w, &v), &q) in weights.iter_mut().zip(xs).zip(qw) {
                    *w = q * (sigma2 + v * v).sqrt();
                }
                let mut sumw = 0.0f32;
                for &w in &weights {
                    sumw += w;
                }
                sw[j] = sumw;
                let (scale, min) =
                    make_qkx3_quants(p.nmax, xs, Some(&weights), lv, QKX3_IMATRIX_SEARCH);
                scales[j] = scale;
                mins[j] = min;
            }
            d = make_qp_quants(63, &scales, &sw, &mut ls);
            dmin = make_qp_quants(63, &mins, &sw, &mut lm);
            if p.clamp_impl_scales {
                for v in ls.iter_mut().chain(lm.iter_mut()) {
                    *v = (*v).min(63);
                }
            }
        }
    }

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
            continue;
        }
        let dm = dmin * m as f32;
        for (l, &v) in lv.iter_mut().zip(xs) {
            *l = nearest_int((v + dm) / dj).clamp(0, p.nmax) as u8;
        }
    }
}

/// `quantize_q4_K` for one row: `quantize_row_q4_K_ref` without an imatrix,
/// `quantize_row_q4_K_impl` with one.
fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) {
    let mut levels = [0u8; QK];
    for (i, (x, y)) in src
        .chunks_exact(QK)
        .zip(dst.chunks_exact_mut(BLOCK_BYTES))
        .enumerate()
    {
        let qw = imatrix.map(|im| &im[QK * i..QK * (i + 1)]);
        let (head, qs) = y.split_at_mut(HEAD_BYTES);
        quantize_super_block(x, qw, &Q4_K_PARAMS, head, &mut levels);
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

fn dequantize_row(src: &[u8], dst: &mut [f32]) {
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
