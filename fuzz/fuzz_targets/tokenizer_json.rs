//! `tokenizer.json`: any bytes give tokenizer keys or a clean error on every vocabulary path
//! that reads it (GPT-2 BPE and the paths built on it: Qwen2, ModernBERT, GLM-4, GLM-4.5,
//! Mamba, Mamba-2, Granite 4 hybrids; LlamaModel's and Jamba's byte-fallback "llama-hf"; BERT
//! WordPiece; NomicBERT's choice between XLM-R's unigram and WordPiece), including
//! the pre-tokenizer detection (chkhsh, then the structure rules) and the special-token
//! vocabulary. HuggingFace's `tokenizers` crate loads and runs the file as in a conversion.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ggufkit_converters::hf::tokenizer::{detect_pre_tokenizer, VocabKind};
use ggufkit_converters::hf::vocab_kind;
use libfuzzer_sys::fuzz_target;

/// The vocabulary path of an architecture whose class has its own `set_vocab`.
fn own(hf_arch: &str) -> VocabKind {
    vocab_kind(hf_arch).expect("a supported architecture")
}

#[path = "common/vocab.rs"]
mod vocab;

/// A scratch model directory for this process (tokenizer.json is rewritten per input).
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("ggufkit-fuzz-tj-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch directory");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    // Not JSON: refused by the first read, before anything else looks at it.
    if serde_json::from_slice::<serde_json::Value>(data).is_err() {
        return;
    }
    let dir = scratch();
    if std::fs::write(dir.join("tokenizer.json"), data).is_err() {
        return;
    }
    let _ = detect_pre_tokenizer(dir);
    let hparams = serde_json::json!({});
    let kinds = [
        (VocabKind::Gpt2, "qwen2moe"),
        (VocabKind::Qwen2, "qwen2"),
        (VocabKind::Llama, "llama"),
        (VocabKind::Bert, "bert"),
        (own("NomicBertModel"), "nomic-bert"),
        (own("ModernBertModel"), "modern-bert"),
        (own("Glm4ForCausalLM"), "glm4"),
        (own("Glm4MoeForCausalLM"), "glm4moe"),
        (own("MambaForCausalLM"), "mamba"),
        (own("Mamba2ForCausalLM"), "mamba2"),
        (own("GraniteMoeHybridForCausalLM"), "granitehybrid"),
        (own("JambaForCausalLM"), "jamba"),
    ];
    vocab::report_each(dir, &hparams, &kinds);
    // Again with a tokenizer_config.json naming a tokenizer class (chosen by the input's
    // length): the class decides whether tokenizer.json's pipeline and added tokens are kept
    // or rebuilt, and the added tokens are replayed from the config's `added_tokens_decoder`
    // (here the file's own added tokens, under their ids) and named special tokens.
    let tj: serde_json::Value = serde_json::from_slice(data).unwrap_or_default();
    let added = tj.get("added_tokens").and_then(|a| a.as_array());
    let mut decoder = serde_json::Map::new();
    for t in added.into_iter().flatten() {
        if let Some(id) = t.get("id") {
            decoder.insert(id.to_string(), t.clone());
        }
    }
    let first = added
        .and_then(|a| a.first())
        .and_then(|t| t.get("content"))
        .cloned();
    const CLASSES: [&str; 5] = [
        "GPT2Tokenizer",
        "Qwen2TokenizerFast",
        "LlamaTokenizer",
        "PreTrainedTokenizerFast",
        "NoSuchTokenizer",
    ];
    let tc = serde_json::json!({
        "tokenizer_class": CLASSES[data.len() % CLASSES.len()],
        "added_tokens_decoder": decoder,
        "bos_token": first,
        "eos_token": "<fuzz-eos>",
        "additional_special_tokens": ["<fuzz-extra>"],
    });
    if std::fs::write(dir.join("tokenizer_config.json"), tc.to_string()).is_ok() {
        let kinds = [(VocabKind::Gpt2, "qwen2moe"), (VocabKind::Llama, "llama")];
        vocab::report_each(dir, &hparams, &kinds);
        let _ = std::fs::remove_file(dir.join("tokenizer_config.json"));
    }
});
