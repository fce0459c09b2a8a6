//! Pieces the 32-element block formats share (q4_0, q4_1, q5_0, q5_1, q8_0, q8_1) and the
//! exact-rounding shortcut q8_0, q2_0 and tq1_0 use: the magnitude scans, C's float→int
//! conversions over a block, the nibble packing and the legacy imatrix weighting.

use crate::lanes::{transpose, LANES};
use crate::simd::V8;

/// Elements per block of the legacy formats.
pub(crate) const QK: usize = 32;

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

/// `roundf` (half away from zero) for `|v| < 2^21` only, without a float→int instruction so
/// that loops over it vectorise: adding 1.5·2^23 rounds to nearest-even and leaves the
/// integer in the low mantissa bits; an exact tie that went toward zero is moved away.
#[inline(always)]
pub(super) fn round_fast(v: f32) -> i32 {
    const MAGIC: f32 = 12_582_912.0;
    let t = v + MAGIC;
    let nearest = (t.to_bits() & 0x007f_ffff) as i32 - 0x0040_0000;
    let rest = v - (t - MAGIC); // exact
    nearest + (rest == 0.5 && v > 0.0) as i32 - (rest == -0.5 && v < 0.0) as i32
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::common::c_round_i32;

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
    pub(in crate::formats) fn signed_abs_max_scalar(x: &[f32; QK]) -> f32 {
        let (mut amax, mut max) = (0f32, 0f32);
        for &v in x {
            if amax < v.abs() {
                amax = v.abs();
                max = v;
            }
        }
        max
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
    fn round_fast_is_roundf_in_range() {
        let limit = 2_097_152f32.to_bits();
        let samples = (0..limit)
            .step_by(61)
            .chain((0..256).map(|k| (k as f32 * 0.5).to_bits()))
            .chain((0..64).map(|k| (2_097_152.0f32 - k as f32 * 0.5).to_bits()));
        for u in samples {
            for v in [f32::from_bits(u), -f32::from_bits(u)] {
                if in_fast_range(v) {
                    assert_eq!(round_fast(v), c_round_i32(v), "{v:e}");
                }
            }
        }
    }

    #[test]
    #[ignore = "exhaustive sweep of the fast range, run by hand"]
    fn round_fast_is_roundf_in_range_exhaustive() {
        for u in 0..2_097_152f32.to_bits() {
            for v in [f32::from_bits(u), -f32::from_bits(u)] {
                assert_eq!(round_fast(v), c_round_i32(v), "{v:e}");
            }
        }
    }
}
