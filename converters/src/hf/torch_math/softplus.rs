//! `torch.nn.functional.softplus` (beta 1, threshold 20) of a contiguous CPU tensor, as torch
//! 2.15's x86-64 build computes it with its AVX-512 kernels.
//!
//! torch runs two loops over the elements. The first `n − n mod (2 · lanes)` elements go
//! through the vector kernel: `x > 20 ? x : log1p(exp(x))` with `Vectorized<float>`'s `exp`
//! and `log1p`, which are SLEEF's 1-ulp functions ([`super::sleef`]). The rest go through the
//! scalar kernel, the same formula with the C library's `expf` and `log1pf` (Rust's `f32::exp`
//! and `f32::ln_1p` call the same functions). The lanes are 16 for a float32 tensor and 32
//! for a float16 one, whose values are widened to float32, computed by the same kernels and
//! rounded once to half. Multiplying and dividing by beta 1 changes no bit, so it is left
//! out. The two kernels differ in the last bit for about 1% of inputs, so a result depends on
//! the element's index; both are reproduced bit for bit on every float32 input
//! (`conformance/make_torch_softplus_golden.py` measures torch).

use ggufkit::quantizers::{f16_to_f32, f32_to_f16};

use super::sleef::{expf_u10, log1pf_u10};

/// Elements per vector-loop step of a float32 tensor (two vectors of 16 lanes).
pub const SOFTPLUS_STEP_F32: usize = 32;

/// Elements per vector-loop step of a float16 tensor (two vectors of 32 lanes).
pub const SOFTPLUS_STEP_F16: usize = 64;

/// Inputs above this are returned unchanged (torch's default threshold for beta 1).
const THRESHOLD: f32 = 20.0;

/// The scalar loop's softplus of a float32.
pub fn scalar_softplus(x: f32) -> f32 {
    if x > THRESHOLD {
        x
    } else {
        x.exp().ln_1p()
    }
}

/// The vector loop's softplus of a float32.
pub fn vector_softplus(x: f32) -> f32 {
    if x > THRESHOLD {
        x
    } else {
        log1pf_u10(expf_u10(x))
    }
}

/// `softplus` of a contiguous float32 tensor.
pub fn torch_softplus_f32(xs: &[f32]) -> Vec<f32> {
    let body = xs.len() - xs.len() % SOFTPLUS_STEP_F32;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            if i < body {
                vector_softplus(x)
            } else {
                scalar_softplus(x)
            }
        })
        .collect()
}

/// `softplus` of a contiguous float16 tensor (IEEE half bits in and out).
pub fn torch_softplus_f16(xs: &[u16]) -> Vec<u16> {
    let body = xs.len() - xs.len() % SOFTPLUS_STEP_F16;
    xs.iter()
        .enumerate()
        .map(|(i, &h)| {
            let x = f16_to_f32(h);
            if x > THRESHOLD {
                h
            } else if i < body {
                f32_to_f16(vector_softplus(x))
            } else {
                f32_to_f16(scalar_softplus(x))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_by_position() {
        // 5.96e-8 (bfloat16 0x3380) is one of the inputs the vector kernel rounds the
        // other way.
        let x = f32::from_bits(0x3380_0000);
        assert_ne!(vector_softplus(x), scalar_softplus(x));
        let xs = vec![x; 33];
        let out = torch_softplus_f32(&xs);
        assert_eq!(out[0], vector_softplus(x));
        assert_eq!(out[31], vector_softplus(x));
        assert_eq!(out[32], scalar_softplus(x));
        assert_eq!(torch_softplus_f32(&xs[..8])[0], scalar_softplus(x));
    }

    #[test]
    fn threshold_and_zero() {
        assert_eq!(scalar_softplus(25.0), 25.0);
        assert_eq!(vector_softplus(25.0), 25.0);
        assert_eq!(scalar_softplus(0.0), std::f32::consts::LN_2);
        assert_eq!(vector_softplus(0.0), std::f32::consts::LN_2);
        assert_eq!(
            torch_softplus_f16(&[f32_to_f16(30.0)]),
            vec![f32_to_f16(30.0)]
        );
    }
}
