//! Readers that turn source models into the ggufkit model IR ([`ggufkit::ir::Model`]).
//!
//! Each reader maps a source format to the same IR: ordered metadata plus lazy tensor
//! sources that point into memory-mapped input files. Nothing is read whole; the GGUF
//! writer pulls tensors one at a time.
//!
//! * [`hf`]: a HuggingFace model directory (config.json, safetensors, tokenizer files), as
//!   llama.cpp's `convert_hf_to_gguf.py` converts it.
//! * [`legacy`]: pre-GGUF GGML / GGMF / GGJT llama files, as `convert_llama_ggml_to_gguf.py`
//!   converts them.
//! * [`torch`]: PyTorch checkpoints (`pytorch_model*.bin`) of a HuggingFace directory,
//!   read without running their pickle; the [`hf`] reader uses them when the directory has
//!   no safetensors weights.
//! * [`hub`]: HuggingFace model ids resolved in the local HuggingFace cache.
//! * [`batch`]: several outputs from one read of a source, several sources at once
//!   (`gguf-convert --outtype a,b,c`, `gguf-convert --batch jobs.toml`).
//!
//! ```
//! use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
//!
//! // The tiny Llama of testdata/ as llama.cpp's converter writes it at f16: metadata and lazy
//! // tensors; nothing is read until the output engine asks for a tensor's bytes.
//! let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/hf/llama-spm");
//! let opts = HfOptions { outtype: OutType::F16, ..HfOptions::default() };
//! let conv = read_hf_dir(&dir, &opts)?;
//! assert_eq!(conv.model.architecture(), Some("llama"));
//! assert_eq!(conv.default_file_name, "Llama-Spm-1.7M-F16.gguf");
//! # Ok::<(), ggufkit_converters::ConvertError>(())
//! ```

#![deny(missing_docs)]
// The readers parse hostile pickles, zips and JSON: no unsafe code, ever.
#![forbid(unsafe_code)]

pub mod batch;
pub mod error;
pub mod hf;
pub mod hub;
pub mod legacy;
mod loadable;
pub mod remote;
pub mod torch;

pub use error::{ConvertError, SafetensorsProblem, ShardProblem, VocabProblem};
