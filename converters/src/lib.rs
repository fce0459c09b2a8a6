//! Readers that turn source models into the ggufkit model IR ([`ggufkit::ir::Model`]).
//!
//! Each reader maps a source format (a HuggingFace safetensors directory, a legacy
//! GGML/GGMF/GGJT `.bin`) to the same IR: ordered metadata plus lazy tensor sources that
//! point into memory-mapped input files. Nothing is read whole; the GGUF writer pulls
//! tensors one at a time.
