//! ggufkit: a GGUF toolchain whose output is byte-identical to llama.cpp's.
//!
//! * [`cursor`]: the checked byte cursor every binary reader uses.
//! * [`edit`]: metadata edits as gguf-py's `gguf_new_metadata.py` / `gguf_set_metadata.py` make them.
//! * [`gguf`]: the container (strict reader, streaming writer, metadata).
//! * [`ir`]: the model IR with lazy tensor sources that readers produce and the writer
//!   consumes.
//! * [`write`]: streaming a model into a crash-safe output file.
//! * [`pipeline`]: the output engine: planned outputs (one or several, sharing their f32
//!   work) written and committed, observed by progress and reports.
//! * [`reshard`]: llama-gguf-split's split and merge of existing files.
//! * [`manifest`]: the per-file JSON manifest used to compare against llama.cpp.
//! * [`inspect`]: what `gguf-inspect` shows and checks (dump, manifest, diff, verify).
//! * [`timing`]: wall time per named phase of a run, for `--verbose` and the benchmarks.
//!
//! Quantization kernels live in the `ggufkit-quantizers` crate, re-exported as
//! [`quantizers`]; the HuggingFace and legacy readers in `ggufkit-converters`; the
//! command-line tools in `ggufkit-cli`.
//!
//! A model is built (or read) as IR, written, and read back:
//!
//! ```
//! use std::sync::Arc;
//! use ggufkit::gguf::GgufFile;
//! use ggufkit::ir::{Model, Tensor, TensorData};
//! use ggufkit::quantizers::GgmlType;
//! use ggufkit::write::{write_model, WriteOptions};
//!
//! let mut model = Model::default();
//! model.metadata.set("general.architecture", "llama");
//! model.tensors.push(Tensor {
//!     name: "token_embd.weight".into(),
//!     dims: vec![4, 2],
//!     ty: GgmlType::F32,
//!     data: TensorData::Owned(Arc::new(vec![0u8; 32])),
//! });
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("tiny.gguf");
//! write_model(&model, &path, &WriteOptions::default())?;
//!
//! let file = GgufFile::open(&path)?;
//! assert_eq!(file.architecture(), Some("llama"));
//! assert_eq!(file.tensors[0].name, "token_embd.weight");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

// Every module but the two that call the OS directly (`mapped`: mmap and madvise; `output`:
// restoring SIGPIPE's default disposition) is free of unsafe code, and stays so.
#[forbid(unsafe_code)]
pub mod cursor;
#[forbid(unsafe_code)]
pub mod edit;
#[forbid(unsafe_code)]
pub mod gguf;
#[forbid(unsafe_code)]
pub mod inspect;
#[forbid(unsafe_code)]
pub mod ir;
#[forbid(unsafe_code)]
pub mod manifest;
pub mod mapped;
pub mod output;
#[forbid(unsafe_code)]
pub mod patterns;
#[forbid(unsafe_code)]
pub mod pipeline;
#[forbid(unsafe_code)]
pub mod progress;
#[forbid(unsafe_code)]
pub mod quantize;
#[forbid(unsafe_code)]
pub mod reshard;
#[forbid(unsafe_code)]
pub mod split;
#[forbid(unsafe_code)]
pub mod threads;
#[forbid(unsafe_code)]
pub mod timing;
#[forbid(unsafe_code)]
pub mod write;

pub use ggufkit_quantizers as quantizers;
