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
//! * [`hub`]: HuggingFace model ids resolved in the local HuggingFace cache.
//! * [`batch`]: several outputs from one read of a source, several sources at once
//!   (`gguf-convert --outtype a,b,c`, `gguf-convert --batch jobs.toml`).

pub mod batch;
pub mod error;
pub mod hf;
pub mod hub;
pub mod legacy;

pub use error::ConvertError;
