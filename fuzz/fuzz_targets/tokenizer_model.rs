//! SentencePiece `tokenizer.model`: any bytes give a model or a clean error, and an accepted
//! model goes through every SentencePiece vocabulary path of the converter to keys or a clean
//! error: LlamaModel, Qwen2, Gemma, Phi-3, ERNIE 4.5, InternLM3, Mamba, Mamba-2, Granite 4
//! hybrids and Jamba from `tokenizer.model`, and XLM-RoBERTa's unigram `t5` vocabulary from
//! the same bytes as `sentencepiece.bpe.model`.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ggufkit_converters::hf::tokenizer::proto::parse_model;
use ggufkit_converters::hf::tokenizer::VocabKind;
use ggufkit_converters::hf::vocab_kind;
use libfuzzer_sys::fuzz_target;

#[path = "common/vocab.rs"]
mod vocab;

/// A scratch model directory for this process (tokenizer.model is rewritten per input).
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("ggufkit-fuzz-spm-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch directory");
        d
    })
}

/// The vocabulary path of an architecture whose class has its own `set_vocab`.
fn own(hf_arch: &str) -> VocabKind {
    vocab_kind(hf_arch).expect("a supported architecture")
}

fuzz_target!(|data: &[u8]| {
    let Ok(model) = parse_model(data) else { return };
    let dir = scratch();
    if std::fs::write(dir.join("tokenizer.model"), data).is_err()
        || std::fs::write(dir.join("sentencepiece.bpe.model"), data).is_err()
    {
        return;
    }
    let n = model.pieces.len();
    // No vocab_size, one past the pieces (padding), and fewer than the pieces (truncation).
    let sizes = [
        serde_json::json!({}),
        serde_json::json!({ "vocab_size": n + 3 }),
        serde_json::json!({ "vocab_size": n / 2 }),
    ];
    for hparams in &sizes {
        let kinds = [
            (VocabKind::Llama, "llama"),
            (VocabKind::Qwen2, "qwen2"),
            (VocabKind::Gemma, "gemma"),
            (VocabKind::Phi3, "phi3"),
            (own("Ernie4_5_ForCausalLM"), "ernie4_5"),
            (own("XLMRobertaModel"), "bert"),
            (own("InternLM3ForCausalLM"), "llama"),
            (own("MambaForCausalLM"), "mamba"),
            (own("Mamba2ForCausalLM"), "mamba2"),
            (own("GraniteMoeHybridForCausalLM"), "granitehybrid"),
            (own("JambaForCausalLM"), "jamba"),
        ];
        vocab::report_each(dir, hparams, &kinds);
    }
});
