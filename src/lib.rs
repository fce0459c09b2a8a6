//! ggufkit: a GGUF toolchain whose output is byte-identical to llama.cpp's.
//!
//! * [`gguf`]: the container (strict reader, streaming writer, metadata).
//! * [`ir`]: the model IR with lazy tensor sources that readers produce and the writer
//!   consumes.
//! * [`write`]: streaming a model into a crash-safe output file.
//! * [`pipeline`]: the output engine: planned outputs (one or several, sharing their f32
//!   work) written and committed, observed by progress and reports.
//! * [`manifest`]: the per-file JSON manifest used to compare against llama.cpp.
//! * [`inspect`]: `gguf-inspect` (dump, manifest, diff, verify).
//!
//! Quantization kernels live in the `ggufkit-quantizers` crate, re-exported as
//! [`quantizers`]; the HuggingFace and legacy readers in `ggufkit-converters`.

pub mod cli;
pub mod gguf;
pub mod inspect;
pub mod ir;
pub mod manifest;
pub mod mapped;
pub mod output;
pub mod pipeline;
pub mod progress;
pub mod quantize;
pub mod split;
pub mod threads;
pub mod write;

pub use ggufkit_quantizers as quantizers;
