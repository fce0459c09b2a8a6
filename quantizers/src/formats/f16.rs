//! f16: 1 element per block, 2 bytes per block (IEEE binary16 bits, little-endian).
//!
//! Quantization is `ggml_fp32_to_fp16_row`: round to nearest even, correct subnormals, overflow
//! to ±inf (|x| ≥ 65520). **NaN handling:** every NaN becomes the quiet NaN `sign | 0x7E00`,
//! its payload dropped, as ggml's portable `GGML_FP32_TO_FP16` does.
//!
//! Dequantization is exact widening. **NaN handling:** an f16 NaN keeps its sign and payload
//! and comes back quiet (bit 22 set), as ggml's `GGML_FP16_TO_FP32` (and F16C) produce.
//!
//! The two scalar conversions here are branch-free so that the row loops vectorise; the other
//! block formats of this crate use them for their f16 scales too.

use crate::common::put_u16;
use crate::simd::{multiversion, V8};

/// Elements per block.
pub(crate) const QK: usize = 1;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = 2;

/// f32 → binary16 bits, bit-identical to ggml's `GGML_FP32_TO_FP16` for every input
/// (the same results as [`crate::f32_to_f16`]), written without branches.
#[inline(always)]
pub(crate) fn f32_to_f16_bits(x: f32) -> u16 {
    let u = x.to_bits();
    let sign = (u >> 16) & 0x8000;
    let a = u & 0x7fff_ffff;
    // Normal halves: move the exponent from bias 127 to bias 15, then drop 13 mantissa bits
    // rounding to nearest even; a carry out of the mantissa bumps the exponent, as it should.
    let normal = a
        .wrapping_sub(0x3800_0000)
        .wrapping_add(0x0fff + ((a >> 13) & 1))
        >> 13;
    // Subnormal halves (|x| < 2^-14): adding 0.5 puts the binary point at 2^-24, so the
    // hardware's round-to-nearest-even leaves the half mantissa in the low bits (up to
    // 0x400, the smallest normal, when it rounds up).
    let sub = (f32::from_bits(a) + 0.5)
        .to_bits()
        .wrapping_sub(0x3f00_0000);
    let mag = if a > 0x7f80_0000 {
        0x7e00
    } else if a >= 0x477f_f000 {
        0x7c00
    } else if a >= 0x3880_0000 {
        normal
    } else {
        sub
    };
    (sign | mag) as u16
}

/// binary16 bits → f32, exact; NaNs keep sign and payload and are made quiet.
#[inline(always)]
pub(crate) fn f16_bits_to_f32(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let exp = h & 0x7c00;
    let man = h & 0x03ff;
    let mag = if exp == 0x7c00 {
        let quiet = if man != 0 { 0x0040_0000 } else { 0 };
        0x7f80_0000 | (man << 13) | quiet
    } else if exp == 0 {
        // Zero or subnormal: man · 2^-24, exact in f32.
        (man as i32 as f32 * (1.0 / 16_777_216.0)).to_bits()
    } else {
        ((h & 0x7fff) << 13) + 0x3800_0000
    };
    f32::from_bits(sign | mag)
}

multiversion! {
    /// Converts a row to f16 (`ggml_fp32_to_fp16_row`). The imatrix is ignored.
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

/// [`quantize_row`]'s body: a branch-free loop, compiled for AVX2 too.
#[inline(always)]
fn quantize_row_impl<S: V8>(_: S, src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    debug_assert_eq!(dst.len(), src.len() * 2);
    for (d, &v) in dst.chunks_exact_mut(2).zip(src) {
        put_u16(d, 0, f32_to_f16_bits(v));
    }
}

/// Values widened per call of the `half` crate's slice conversion in [`dequantize_row`].
const WIDEN_CHUNK: usize = 256;

/// Widens f16 values to f32 (`ggml_fp16_to_fp32_row`).
///
/// The `half` crate's slice conversion uses the CPU's F16C instructions when it has them
/// (detected at run time) and an exact software conversion otherwise. Both agree with
/// [`f16_bits_to_f32`] on every bit pattern, NaN payloads included (F16C quiets a signalling
/// NaN and keeps its payload, as ggml's table does); the test below checks all 65,536.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
    debug_assert_eq!(src.len(), dst.len() * 2);
    let mut bits = [0u16; WIDEN_CHUNK];
    for (s, d) in src.chunks(2 * WIDEN_CHUNK).zip(dst.chunks_mut(WIDEN_CHUNK)) {
        let bits = &mut bits[..d.len()];
        for (b, p) in bits.iter_mut().zip(s.chunks_exact(2)) {
            *b = u16::from_le_bytes([p[0], p[1]]);
        }
        bits.reinterpret_cast::<half::f16>().convert_to_f32_slice(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::f16_to_f32;

    /// Every 97th f32 bit pattern plus the interesting boundaries; the full 2^32 sweep is the
    /// ignored test below.
    fn sample_bits() -> impl Iterator<Item = u32> {
        let edges = [
            0u32,
            1,
            0x3380_0000,
            0x3380_0001,
            0x33c0_0000,
            0x387f_e000,
            0x387f_f000,
            0x3880_0000,
            0x477f_efff,
            0x477f_f000,
            0x7f7f_ffff,
            0x7f80_0000,
            0x7f80_0001,
            0x7fc0_0000,
            0x7fff_ffff,
        ];
        (0..=u32::MAX / 97)
            .map(|i| i * 97)
            .chain(edges.into_iter().flat_map(|e| [e, e | 0x8000_0000]))
    }

    #[test]
    fn f32_to_f16_matches_the_half_crate() {
        for u in sample_bits() {
            let x = f32::from_bits(u);
            assert_eq!(f32_to_f16_bits(x), half_reference(x), "{u:#010x}");
        }
    }

    #[test]
    fn dequantize_row_widens_every_bit_pattern_exactly() {
        // An odd length, so that the last chunk is partial.
        let patterns: Vec<u16> = (0..=u16::MAX).chain([0x7c01, 0xfe01, 0x0001]).collect();
        let src: Vec<u8> = patterns.iter().flat_map(|h| h.to_le_bytes()).collect();
        let mut dst = vec![0f32; patterns.len()];
        dequantize_row(&src, &mut dst);
        for (&h, &v) in patterns.iter().zip(&dst) {
            assert_eq!(v.to_bits(), f16_bits_to_f32(h).to_bits(), "{h:#06x}");
        }
    }

    /// The `half` crate's conversion with ggml's NaN rule: an independent implementation to
    /// check ours against.
    fn half_reference(x: f32) -> u16 {
        if x.is_nan() {
            return ((x.to_bits() >> 16) as u16 & 0x8000) | 0x7E00;
        }
        half::f16::from_f32(x).to_bits()
    }

    #[test]
    #[ignore = "exhaustive 2^32 sweep, run by hand"]
    fn f32_to_f16_matches_the_half_crate_exhaustive() {
        for u in 0..=u32::MAX {
            let x = f32::from_bits(u);
            assert_eq!(f32_to_f16_bits(x), half_reference(x), "{u:#010x}");
        }
    }

    #[test]
    fn f16_to_f32_is_exact_and_quiets_nan() {
        for h in 0..=u16::MAX {
            let ours = f16_bits_to_f32(h);
            assert_eq!(ours.to_bits(), f16_to_f32(h).to_bits(), "{h:#06x}");
            if (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0 {
                let payload = (h as u32 & 0x03ff) << 13;
                let sign = (h as u32 & 0x8000) << 16;
                assert_eq!(ours.to_bits(), sign | 0x7fc0_0000 | payload, "{h:#06x}");
            } else {
                // Exact: converting back gives the same bits.
                assert_eq!(f32_to_f16_bits(ours), h, "{h:#06x}");
            }
        }
    }

    #[test]
    fn row_round_trip_and_specials() {
        let src = [
            0.0f32,
            -0.0,
            1.0,
            65504.0,
            65520.0,
            -1e-8,
            f32::NAN,
            -f32::NAN,
        ];
        let mut q = [0u8; 16];
        quantize_row(&src, &mut q, None);
        let bits: Vec<u16> = q
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(
            bits,
            [0x0000, 0x8000, 0x3c00, 0x7bff, 0x7c00, 0x8000, 0x7e00, 0xfe00]
        );
        let mut back = [0f32; 8];
        dequantize_row(&q, &mut back);
        assert_eq!(&back[..4], &[0.0, -0.0, 1.0, 65504.0]);
        assert!(back[1].is_sign_negative());
        assert_eq!(back[4], f32::INFINITY);
        assert!(back[6].is_nan() && back[7].is_nan() && back[7].is_sign_negative());
    }
}
