//! The quantizers as a build that contracts `a*b + c` into fused multiply-adds computes them.
//!
//! llama.cpp's C quantizers are compiled with floating-point contraction wherever the compiler
//! allows it: clang on arm64 (Apple silicon, most ARM servers) turns each `a*b + c` within an
//! expression into one `fmadd`, rounded once, where an x86-64 build rounds the product and
//! the sum separately. The results differ by an ulp here and there, and where the quantizer
//! compares two nearly equal candidates (a level at a midpoint, a scale search whose
//! candidates score the same) it can pick the other one. So an arm64-made file differs from
//! an x86-made one in a few blocks of most quantized tensors, with either being correct.
//!
//! This module reproduces such a build for the K-quant scale search of Q4_K and Q5_K (the
//! reference path, without an importance matrix), for checking tools that must tell those
//! differences from real ones (`gguf-inspect provenance`). It is an emulation: the kernels run
//! on plain arrays with [`Fused`], whose `acc + a*b`, `a*b + c` and `a*b - c*d` are
//! `f32::mul_add` (`a*b - c*d` as `fma(a, b, -(c*d))`, the contraction compilers emit), in the
//! expressions where a contracting C compiler fuses them: the weighted sums, the candidate
//! scale, the residuals and the least-squares determinants of `make_qkx2_quants`, and the
//! sum of squares behind the weights of `quantize_row_q4_K_ref` / `quantize_row_q5_K_ref`.
//! Everything else rounds as the x86-64 kernels do.

use crate::simd::{Scalar, V8};
use crate::{GgmlType, QuantError};

/// [`V8`] on plain arrays with fused multiply-adds ([`V8::FUSED`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fused;

/// Forwards each listed method to [`Scalar`].
macro_rules! forward {
    ($($name:ident($($a:ident: $t:ty),*) -> $r:ty;)*) => {
        $(#[inline(always)]
        fn $name(self, $($a: $t),*) -> $r {
            Scalar.$name($($a),*)
        })*
    };
}

type F = [f32; 8];

impl V8 for Fused {
    type F = F;
    type U = [u32; 8];
    const FUSED: bool = true;
    forward! {
        splat(v: f32) -> F;
        load(a: &F) -> F;
        to_array(v: F) -> F;
        add(a: F, b: F) -> F;
        sub(a: F, b: F) -> F;
        mul(a: F, b: F) -> F;
        div(a: F, b: F) -> F;
        abs(a: F) -> F;
        neg(a: F) -> F;
        max(a: F, b: F) -> F;
        min(a: F, b: F) -> F;
        lt(a: F, b: F) -> F;
        le(a: F, b: F) -> F;
        ne(a: F, b: F) -> F;
        eq(a: F, b: F) -> F;
        and(a: F, b: F) -> F;
        or(a: F, b: F) -> F;
        select(m: F, a: F, b: F) -> F;
        any(m: F) -> bool;
        mask_bits(m: F) -> u32;
        trunc_i32(v: F) -> [i32; 8];
        f16_bits(v: F) -> [u16; 8];
        level(v: F, lo: f32, hi: f32) -> F;
        hmin(v: F) -> f32;
        load_u16(a: &[u16; 8]) -> [u32; 8];
        lookup8(table: F, codes: [u32; 8], shift: u32) -> F;
    }
    #[inline(always)]
    fn acc_mul(self, acc: F, a: F, b: F) -> F {
        std::array::from_fn(|i| a[i].mul_add(b[i], acc[i]))
    }
    #[inline(always)]
    fn mul_add(self, a: F, b: F, c: F) -> F {
        std::array::from_fn(|i| a[i].mul_add(b[i], c[i]))
    }
    #[inline(always)]
    fn mul_sub_mul(self, a: F, b: F, c: F, d: F) -> F {
        std::array::from_fn(|i| a[i].mul_add(b[i], -(c[i] * d[i])))
    }
}

/// One row's quantizer.
type RowFn = fn(&[f32], &mut [u8]);

/// Quantizes `src` (whole rows of `ty`'s blocks) into `dst` as a build with fused
/// multiply-adds does, without an importance matrix. Q4_K and Q5_K only; other types are
/// refused with [`QuantError::NoQuantizer`].
pub fn quantize_rows_fused(ty: GgmlType, src: &[f32], dst: &mut [u8]) -> Result<(), QuantError> {
    let (qk, bytes, row): (usize, usize, RowFn) = match ty {
        GgmlType::Q4_K => (
            256,
            crate::formats::q4_k::BLOCK_BYTES,
            crate::formats::q4_k::quantize_row_fused,
        ),
        GgmlType::Q5_K => (
            256,
            crate::formats::q5_k::BLOCK_BYTES,
            crate::formats::q5_k::quantize_row_fused,
        ),
        _ => return Err(QuantError::NoQuantizer(ty)),
    };
    if !src.len().is_multiple_of(qk) {
        return Err(QuantError::RowNotBlockAligned {
            ty,
            n_per_row: src.len(),
        });
    }
    if dst.len() != src.len() / qk * bytes {
        return Err(QuantError::BufferSize {
            expected: src.len() / qk * bytes,
            got: dst.len(),
        });
    }
    row(src, dst);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.1
            })
            .collect()
    }

    /// The fused build agrees with the plain one on most blocks and differs on a few, by a
    /// choice that leaves the block about as close to its input.
    #[test]
    fn fused_q4_k_differs_from_the_plain_kernel_in_a_few_blocks() {
        let n = 256 * 4096;
        let x = data(n, 7);
        for ty in [GgmlType::Q4_K, GgmlType::Q5_K] {
            let size = crate::row_size(ty, n).unwrap();
            let (mut plain, mut fused) = (vec![0u8; size], vec![0u8; size]);
            crate::quantize_rows(ty, &x, &mut plain, n, None).unwrap();
            quantize_rows_fused(ty, &x, &mut fused).unwrap();
            let bs = crate::traits(ty).type_size;
            let differ = plain
                .chunks(bs)
                .zip(fused.chunks(bs))
                .filter(|(a, b)| a != b)
                .count();
            assert!(differ > 0, "{ty}: no block differs");
            assert!(
                differ * 20 < n / 256,
                "{ty}: {differ} of {} blocks differ",
                n / 256
            );
            // Each differing block is about as close to its input either way.
            let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
            crate::dequantize_rows(ty, &plain, &mut a).unwrap();
            crate::dequantize_rows(ty, &fused, &mut b).unwrap();
            let sse = |q: &[f32], r: std::ops::Range<usize>| -> f64 {
                q[r.clone()]
                    .iter()
                    .zip(&x[r])
                    .map(|(&q, &v)| ((q - v) as f64).powi(2))
                    .sum()
            };
            let mut worst = 0f64;
            for i in 0..n / 256 {
                let r = i * 256..(i + 1) * 256;
                worst = worst.max(sse(&b, r.clone()) / sse(&a, r));
            }
            eprintln!("{ty}: {differ} blocks differ, worst block error ratio {worst}");
            assert!(worst < 1.25, "{ty}: worst block error ratio {worst}");
        }
    }
}
