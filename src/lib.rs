//! ggufkit: a GGUF toolchain whose output is byte-identical to llama.cpp's.
//!
//! * [`cursor`]: the checked byte cursor every binary reader uses.
//! * [`gguf`]: the container (strict reader, streaming writer, metadata).
//! * [`ir`]: the model IR with lazy tensor sources that readers produce and the writer
//!   consumes.
//! * [`write`]: streaming a model into a crash-safe output file.
//! * [`manifest`]: the per-file JSON manifest used to compare against llama.cpp.
//! * [`inspect`]: what `gguf-inspect` shows and checks (dump, manifest, diff, verify).
//!
//! Quantization kernels live in the `ggufkit-quantizers` crate, re-exported as
//! [`quantizers`]; the HuggingFace and legacy readers in `ggufkit-converters`; the
//! command-line tools in `ggufkit-cli`.

pub mod cursor;
pub mod gguf;
pub mod inspect;
pub mod ir;
pub mod manifest;
pub mod mapped;
pub mod output;
pub mod progress;
pub mod quantize;
pub mod split;
pub mod threads;
pub mod write;

pub use ggufkit_quantizers as quantizers;
