//! GGML block formats: bit-exact quantize and dequantize kernels.
//!
//! A pure crate: slices in, slices out, no I/O. Every tensor element type GGUF knows is a
//! [`GgmlType`]; its [`TypeTraits`] (from [`traits`]) give the block geometry and the row
//! kernels. The CLIs and the GGUF writer go through this registry only, so adding a type is
//! its file in `formats/` (and its block in `formats/blocks.rs`) plus one row in the table
//! in `registry.rs`.
//!
//! Fidelity: the kernels reproduce llama.cpp's x86-64 `ggml-base` output byte for byte. That
//! build evaluates every float expression unfused and in source order, so the kernels here
//! never use `mul_add`, never reassociate, and keep f32 vs f64 exactly where the reference
//! does. The golden-vector conformance test (`tests/suite/kernels/golden_vectors.rs`) guards this.
//!
//! Speed without reordering: the hot kernels vectorise *across* independent computations
//! rather than within a reduction. A K-quant super-block's sub-block scale searches, the
//! legacy imatrix fits of neighbouring blocks and IQ4's scale trials each run one per lane
//! of an eight-lane vector (`lanes.rs`, `simd.rs`), every lane doing exactly the scalar
//! sequence of f32 operations; row kernels are also compiled for AVX2 and picked at run time.
//! One thing is beyond reach: when two NaNs with different payloads or signs meet in one
//! operation, x86 returns the first operand, but Rust does not fix which operand is first,
//! so inputs that already contain such NaNs may give NaN scales with other NaN bits.
//!
//! ```
//! use ggufkit_quantizers::{dequantize_rows, quantize_rows, GgmlType};
//!
//! // One Q8_0 block (32 values): 34 bytes, and back to within the type's precision.
//! let x: Vec<f32> = (0..32).map(|i| i as f32 / 8.0).collect();
//! let mut q = vec![0u8; GgmlType::Q8_0.type_size()];
//! quantize_rows(GgmlType::Q8_0, &x, &mut q, 32, None).unwrap();
//! let mut y = vec![0f32; 32];
//! dequantize_rows(GgmlType::Q8_0, &q, &mut y).unwrap();
//! assert!(x.iter().zip(&y).all(|(a, b)| (a - b).abs() < 0.02));
//! ```

#![deny(missing_docs)]

// Unsafe code is confined to `simd` (the x86 intrinsics behind the lane types, checked for
// at run time) and the kernels in `formats` that call it; every other module forbids it.
#[macro_use]
#[forbid(unsafe_code)]
mod type_table;

#[forbid(unsafe_code)]
mod common;
mod formats;
#[forbid(unsafe_code)]
pub mod fused;
#[forbid(unsafe_code)]
mod kernel;
#[forbid(unsafe_code)]
mod kquants;
#[forbid(unsafe_code)]
mod lanes;
#[forbid(unsafe_code)]
mod registry;
#[forbid(unsafe_code)]
mod rows;
mod simd;

pub use common::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
pub use kernel::{DequantizeRowFn, QuantizeRowFn, Quantizer, TryQuantizeRowFn, Unrepresentable};
pub use registry::{all_types, traits, GgmlType, TypeTraits};
pub use rows::{dequantize_rows, quantize_rows, row_size, QuantError};
#[doc(hidden)]
pub use simd::force_portable;
