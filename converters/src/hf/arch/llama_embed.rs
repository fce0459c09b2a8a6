//! `LlamaBidirectionalModel` (arch `llama-embed`, `LlamaEmbedNemotronModel(LlamaModel)` in
//! `conversion/llama.py`): Llama-Embed-Nemotron, a Llama whose attention is bidirectional.
//!
//! Everything is Llama's (vocabulary, q/k permutation, hparams, Llama-3 rope factors)
//! except the GGUF architecture and the headless checkpoint, whose names (`layers.*`,
//! `embed_tokens`, `norm`) are mapped as they are: only `LlamaModel` gets a `model.`
//! prefix. Its hub config names a remote-code config class (`llama_bidirec`), so it is
//! read as written, without class defaults.

use super::{llama::LLAMA, Arch, Rules};

/// The Llama-Embed-Nemotron class.
pub const LLAMA_EMBED: Arch = Arch {
    hf_names: &["LlamaBidirectionalModel"],
    model_types: &[],
    composites: &[],
    gguf: "llama-embed",
    rules: Rules {
        headless_arch: None,
        ..LLAMA.rules
    },
    ..LLAMA
};
