//! Tokenizer metadata (`tokenizer.ggml.*`, `tokenizer.chat_template`) from a HuggingFace
//! directory: SentencePiece `tokenizer.model`, BPE `tokenizer.json`, WordPiece.
//!
//! Public boundary (stable): [`vocab_metadata`] returns the tokenizer keys in the order
//! llama.cpp's converter writes them.

pub mod proto;

use std::path::Path;

use ggufkit::gguf::Value;

use crate::ConvertError;

/// Which vocabulary path an architecture's converter class takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VocabKind {
    /// `LlamaModel.set_vocab`: SentencePiece if `tokenizer.model` exists, else the
    /// byte-fallback HF path, else GPT-2 BPE.
    Llama,
    /// Qwen2: SentencePiece first, else GPT-2 BPE.
    Qwen2,
    /// GPT-2 style BPE from `tokenizer.json`.
    Gpt2,
    /// Gemma's SentencePiece vocabulary.
    Gemma,
    /// Phi-3's SentencePiece vocabulary with added tokens.
    Phi3,
    /// BERT WordPiece.
    Bert,
}

/// What the tokenizer converter needs to know.
#[derive(Debug, Clone)]
pub struct VocabRequest<'a> {
    /// The model directory.
    pub dir: &'a Path,
    /// The vocabulary path.
    pub kind: VocabKind,
    /// `general.architecture` (some rules depend on it).
    pub arch: &'a str,
    /// The merged hparams (config.json with transformers defaults).
    pub hparams: &'a serde_json::Value,
}

/// The tokenizer keys, in order.
pub fn vocab_metadata(_req: &VocabRequest) -> Result<Vec<(String, Value)>, ConvertError> {
    Err(ConvertError::Unsupported(
        "tokenizer conversion is not implemented yet".into(),
    ))
}
