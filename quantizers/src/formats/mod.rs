//! One module per GGML type: its quantizer and dequantizer (`quantize_row`,
//! `dequantize_row`) and its geometry (`QK`, `BLOCK_BYTES`), which the type table in
//! `registry.rs` collects. Shared pieces live in neutral modules that import no format:
//! `blocks` (every block layout), `block32` (the 32-element formats' helpers), `iq_*` (the
//! IQ searches and grids). No format imports the registry.
//!
//! Unsafe code is confined to the formats with SIMD kernels (`multiversion!`, directly or
//! through `superblock_quantizer!`, compiles them a second time with AVX2 enabled and calls
//! that copy through an `unsafe` block); every other module forbids it.

pub mod bf16;
#[forbid(unsafe_code)]
pub(crate) mod block32;
#[forbid(unsafe_code)]
pub(crate) mod blocks;
pub mod f16;
#[forbid(unsafe_code)]
pub mod f32;
pub mod iq1_m;
pub mod iq1_s;
#[forbid(unsafe_code)]
pub(crate) mod iq1_search;
pub mod iq2_s;
pub mod iq2_xs;
pub mod iq2_xxs;
pub mod iq3_s;
pub mod iq3_xxs;
#[forbid(unsafe_code)]
pub mod iq4_common;
pub mod iq4_nl;
pub mod iq4_xs;
#[forbid(unsafe_code)]
pub(crate) mod iq_grids;
pub(crate) mod iq_lattice;
pub(crate) mod iq_search;
pub mod mxfp4;
#[forbid(unsafe_code)]
pub mod nvfp4;
#[forbid(unsafe_code)]
pub mod q1_0;
pub mod q2_0;
pub mod q2_k;
pub mod q3_k;
pub mod q4_0;
pub mod q4_1;
pub mod q4_k;
pub mod q5_0;
pub mod q5_1;
pub mod q5_k;
pub mod q6_k;
pub mod q8_0;
#[forbid(unsafe_code)]
pub mod q8_1;
#[forbid(unsafe_code)]
pub mod q8_k;
pub mod tq1_0;
pub mod tq2_0;
