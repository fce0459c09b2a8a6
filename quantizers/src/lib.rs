//! GGML block formats: bit-exact quantize and dequantize kernels.
//!
//! A pure crate: slices in, slices out, no I/O. Every tensor element type GGUF knows is a
//! [`GgmlType`]; its [`TypeTraits`] (from [`traits`]) give the block geometry and the row
//! kernels. The CLIs and the GGUF writer go through this registry only, so adding a type is
//! one file in `formats/` plus one line in [`registry`].
//!
//! Fidelity: the kernels reproduce llama.cpp's x86-64 `ggml-base` output byte for byte. That
//! build evaluates every float expression unfused and in source order, so the kernels here
//! never use `mul_add`, never reassociate, and keep f32 vs f64 exactly where the reference
//! does. The golden-vector conformance test (`tests/golden_vectors.rs`) guards this.

mod common;
mod formats;
mod kquants;
mod lanes;
mod registry;
mod rows;
mod simd;
mod types;

pub use common::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
pub use registry::{all_types, traits, DequantizeRowFn, QuantizeRowFn, TypeTraits};
pub use rows::{dequantize_rows, quantize_rows, row_size, QuantError};
#[doc(hidden)]
pub use simd::force_portable;
pub use types::GgmlType;
