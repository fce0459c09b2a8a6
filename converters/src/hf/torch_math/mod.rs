//! The float computations the reference converter hands to torch, reproduced bit for bit.
//!
//! The reference (`convert_hf_to_gguf.py` on torch 2.15, x86-64) computes a few values with
//! torch rather than plain IEEE arithmetic: Mamba-style `A = -exp(A_log)`, Llama 3's RoPE
//! frequencies `base ** (arange(0, dim, 2) / dim)`, Gemma 3n's `Normal(0, 1).icdf(p)`
//! (an `erfinv`), Gemma 4's audio `softplus` and the batch norm folds' `sqrt`. torch picks a kernel for those by the CPU
//! it runs on, and the kernels disagree in the last bit. For `exp` and `erfinv` (MKL) this module matches MKL's AVX-512
//! path, which torch's default dispatch takes on an AVX-512 x86-64 CPU and with which the
//! project's reference outputs were made, or on request its generic path ([`MklPath`]); for
//! `pow` and `softplus` (SLEEF's `powf`, `expf` and `log1pf` in torch's AVX-512 vector
//! kernels, the C library's in their scalar tails) the AVX-512 build.
//! `docs/torch-float-semantics.md` lists every float operation of the reference's
//! conversions, where ggufkit computes each and why the result is identical;
//! `conformance/make_torch_exp_table.py`, `make_torch_erfinv_table.py`,
//! `make_torch_softplus_golden.py` and `make_torch_math_golden.py` measure torch, and `converters/tests/suite/convert/torch_math_golden.rs`
//! compares.

mod bilinear;
mod deviations;
mod double_float;
mod erfinv;
mod exp;
mod pow;
mod sleef;
mod softplus;
mod sqrt;

pub use bilinear::{torch_bilinear_align_corners_f32, BILINEAR_LANES};
pub use erfinv::{torch_erfinv_f32, torch_erfinv_f32_on, torch_normal_icdf_f32};
pub use exp::{torch_exp_f32, torch_exp_f32_on, MklPath};
pub use pow::{torch_pow_f32, vector_powf, VECTOR_STEP};
pub use softplus::{
    scalar_softplus, torch_softplus_f16, torch_softplus_f32, vector_softplus, SOFTPLUS_STEP_F16,
    SOFTPLUS_STEP_F32,
};
pub use sqrt::torch_sqrt_f32;
