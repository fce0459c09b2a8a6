//! HuggingFace model directories → model IR, as llama.cpp's `convert_hf_to_gguf.py` does.
//!
//! To be written (issue: gguf-convert). Public boundary:
//! [`read_hf_dir`] returns the IR with every tensor already in its output type for the
//! plain outtypes (f32, f16, bf16, q8_0, tq1_0, tq2_0); quantized outtypes are applied by
//! the caller with `ggufkit::quantize::plan` on the f32 IR.

pub mod tokenizer;
