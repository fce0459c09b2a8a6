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

use super::f16::{f16_bits_to_f32, f32_to_f16_bits};
use crate::common::{get_u16, put_u16};
use crate::lanes::{make_qx_quants_lanes, transpose, LANES};
use crate::registry::{Quantizer, TypeTraits};
use crate::simd::{multiversion, V8};
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 32;
/// Bytes per block.
const BLOCK_BYTES: usize = 18;

/// Registry entry for q4_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::Q4_0,
    name: "q4_0",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: true,
    quantize: Some(Quantizer::Total(quantize_row)),
    dequantize: Some(dequantize_row),
};

/// The signed element of largest magnitude, the first one on ties, or `+0.0` when every
/// element is zero or NaN: the result of the reference's sequential
/// `if amax < |v| { amax = |v|; max = v }` scan.
///
/// In lanes: the largest magnitude is the same in any order (NaNs, for which `<` is false,
/// never get in), and the first element that has it is the lowest set bit of the mask of
/// the elements equal to it.
#[inline(always)]
pub(super) fn signed_abs_max<S: V8>(s: S, x: &[f32; QK]) -> f32 {
    let mut amax = s.splat(0.0);
    for chunk in x.chunks_exact(LANES) {
        let a = s.abs(s.load(chunk.try_into().unwrap()));
        amax = s.max(a, amax);
    }
    // A pairwise tree (the lanes hold no NaNs, so any order gives the maximum).
    let max = |a: f32, b: f32| if a < b { b } else { a };
    let a = s.to_array(amax);
    let amax = max(
        max(max(a[0], a[1]), max(a[2], a[3])),
        max(max(a[4], a[5]), max(a[6], a[7])),
    );
    if amax == 0.0 {
        return 0.0;
    }
    let mut hits = 0u32;
    for (k, chunk) in x.chunks_exact(LANES).enumerate() {
        let a = s.abs(s.load(chunk.try_into().unwrap()));
        hits |= s.mask_bits(s.eq(a, s.splat(amax))) << (LANES * k);
    }
    x[hits.trailing_zeros() as usize % QK]
}

/// The range `|v| < 2^21` (NaN excluded) in which q8_0's `round_fast` is exact. (The
/// 1.5·2^23 trick itself holds a little below 2^22; quants that large only come from
/// degenerate scales, which take the exact path.)
#[inline(always)]
pub(super) fn in_fast_range(v: f32) -> bool {
    v.abs() < 2_097_152.0
}

/// C's `(int)(arg)` for every element of a block, where `arg` is `(x - min) * id + add`
/// (`SUB_MIN`) or `x * id + add`, evaluated in that order: the float→int conversion is
/// x86-64's own ([`V8::trunc_i32`], exact for every input, NaN and overflow included).
#[inline(always)]
pub(super) fn block_trunc<S: V8, const SUB_MIN: bool>(
    s: S,
    x: &[f32; QK],
    min: f32,
    id: f32,
    add: f32,
) -> [i32; QK] {
    let (min, id, add) = (s.splat(min), s.splat(id), s.splat(add));
    let mut t = [0i32; QK];
    for (t, x) in t.chunks_exact_mut(LANES).zip(x.chunks_exact(LANES)) {
        let mut v = s.load(x.try_into().unwrap());
        if SUB_MIN {
            v = s.sub(v, min);
        }
        let v = s.add(s.mul(v, id), add);
        t.copy_from_slice(&s.trunc_i32(v));
    }
    t
}

/// Packs the q4_0/q4_1 nibbles `min(15, (int8_t)t)` of a block (`t` from [`block_trunc`])
/// into `qs`, element `j` low and `j + 16` high.
#[inline(always)]
pub(super) fn pack_nibbles(t: &[i32; QK], qs: &mut [u8]) {
    let nibble = |t: i32| (t as i8 as i32).min(15) as u8;
    let (lo, hi) = t.split_at(QK / 2);
    for ((q, &a), &b) in qs.iter_mut().zip(lo).zip(hi) {
        *q = nibble(a) | (nibble(b) << 4);
    }
}

/// Σx² of the whole row, summed in order in f32, divided by the row length: the σ² of the
/// legacy imatrix paths.
pub(super) fn row_sigma2(x: &[f32]) -> f32 {
    let sum_x2 = x.iter().fold(0f32, |s, &v| s + v * v);
    sum_x2 / x.len() as f32
}

/// Blocks the imatrix paths fit side by side, one per lane (see [`crate::lanes`]).
pub(super) const CHUNK_BLOCKS: usize = LANES;

/// The values of up to [`CHUNK_BLOCKS`] blocks `x`, transposed, and their legacy imatrix
/// weights `qw[j] · sqrt(σ² + x[j]²)` (`qw` the matching imatrix entries), transposed too.
/// Missing blocks are zeros.
#[inline(always)]
pub(super) fn weighted_lanes(
    x: &[f32],
    qw: &[f32],
    sigma2: f32,
) -> ([[f32; LANES]; QK], [[f32; LANES]; QK]) {
    let xt = transpose::<QK>(x);
    let mut wt = transpose::<QK>(qw);
    for (w, x) in wt.iter_mut().zip(&xt) {
        for (w, &x) in w.iter_mut().zip(x) {
            *w *= (sigma2 + x * x).sqrt();
        }
    }
    (xt, wt)
}

multiversion! {
    /// Quantizes one row; with an imatrix, through the weighted scale search.
    fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
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
fn dequantize_row(src: &[u8], dst: &mut [f32]) {
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
    use super::*;
    use crate::common::c_trunc_i32;

    /// Deterministic test data (xorshift64*), shared by the legacy formats' tests.
    pub(in crate::formats) struct Rng(u64);

    impl Rng {
        /// A generator from a non-zero seed.
        pub(in crate::formats) fn new(seed: u64) -> Rng {
            Rng(seed | 1)
        }

        /// Uniform in `[-1, 1)`.
        pub(in crate::formats) fn uniform(&mut self) -> f32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let r = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
            (r >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        }

        /// A block of `uniform() · scale`.
        pub(in crate::formats) fn block(&mut self, scale: f32) -> [f32; QK] {
            std::array::from_fn(|_| self.uniform() * scale)
        }
    }

    /// Blocks that stress the scans and conversions: random data at several scales, magnitude
    /// ties of both signs, ±0 mixes, NaN and ±inf at several positions, subnormals (whose
    /// scales overflow the inverse), and values whose quant lands on an exact tie.
    pub(in crate::formats) fn adversarial_blocks() -> Vec<[f32; QK]> {
        let mut rng = Rng::new(0x5eed);
        let mut blocks = Vec::new();
        for scale in [1.0f32, 0.02, 1e-3, 30.0, 1e-20, 1e-38, 1e-42, 1e30, 3e38] {
            for _ in 0..8 {
                blocks.push(rng.block(scale));
            }
        }
        let mut ties = rng.block(1.0);
        ties[3] = 2.0;
        ties[9] = -2.0;
        ties[20] = 2.0;
        blocks.push(ties);
        let mut neg_first = ties;
        neg_first[3] = -2.0;
        neg_first[9] = 2.0;
        blocks.push(neg_first);
        blocks.push([0.0; QK]);
        blocks.push([-0.0; QK]);
        blocks.push(std::array::from_fn(|j| if j % 3 == 0 { -0.0 } else { 0.0 }));
        blocks.push(std::array::from_fn(|j| if j % 5 == 0 { 0.0 } else { -0.0 }));
        blocks.push(std::array::from_fn(|j| if j < 16 { 0.0 } else { 1.0 }));
        blocks.push(std::array::from_fn(|j| if j < 16 { -1.0 } else { -0.0 }));
        blocks.push(std::array::from_fn(|j| j as f32 - 8.0));
        blocks.push(std::array::from_fn(|j| (j as f32 - 16.0) * 0.5));
        blocks.push(std::array::from_fn(|j| j as f32 * 0.5));
        blocks.push([f32::from_bits(1); QK]);
        blocks.push(std::array::from_fn(|j| f32::from_bits(j as u32 * 977)));
        let specials = [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
        for (k, &s) in specials.iter().enumerate() {
            for pos in [0, 7, 16, 31] {
                let mut b = rng.block(1.0 + k as f32);
                b[pos] = s;
                blocks.push(b);
            }
        }
        let mut two_nans = rng.block(1.0);
        two_nans[30] = f32::NAN;
        two_nans[31] = f32::NAN;
        blocks.push(two_nans);
        blocks.push([f32::NAN; QK]);
        blocks.push([f32::INFINITY; QK]);
        blocks
    }

    /// The reference's scan, written as C does it.
    fn signed_abs_max_scalar(x: &[f32; QK]) -> f32 {
        let (mut amax, mut max) = (0f32, 0f32);
        for &v in x {
            if amax < v.abs() {
                amax = v.abs();
                max = v;
            }
        }
        max
    }

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
    fn signed_abs_max_matches_the_sequential_scan() {
        for b in adversarial_blocks() {
            let want = signed_abs_max_scalar(&b).to_bits();
            assert_eq!(
                signed_abs_max(crate::simd::Scalar, &b).to_bits(),
                want,
                "{b:?}"
            );
            #[cfg(target_arch = "x86_64")]
            {
                assert_eq!(
                    signed_abs_max(crate::simd::Sse2, &b).to_bits(),
                    want,
                    "{b:?}"
                );
                if let Some(s) = crate::simd::Avx2::get() {
                    assert_eq!(signed_abs_max(s, &b).to_bits(), want, "{b:?}");
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
