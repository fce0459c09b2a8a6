//! The text model of Qwen3-ASR (`Qwen3ASRForConditionalGeneration`, arch `qwen3vl`,
//! `Qwen3ASRTextModel` in `conversion/qwen3vl.py`).
//!
//! Qwen3-VL's text model (a Qwen3 decoder; the config's `text_config` is a Qwen3 config, its
//! `thinker_config` level dropped when present) with no deepstack layers. Its vocabulary is
//! Qwen2's path (SentencePiece when there is a `tokenizer.model`, else GPT-2 BPE), then the
//! class replaces the chat template by plain ChatML and makes the added token `<|im_end|>`
//! of tokenizer_config.json's `added_tokens_decoder` the BOS and EOS token (each key keeps
//! the place the vocabulary step gave it). The class reads tokenizer_config.json
//! unconditionally: a directory without one is refused, as by the reference.

use ggufkit::gguf::keys::tokenizer as tk;
use serde_json::Value as Json;

use super::qwenvl::QWEN3VL;
use super::{Arch, TextType};
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome};
use crate::ConvertError;

/// Qwen3-ASR's text model.
pub const QWEN3ASR: Arch = Arch {
    hf_names: &["Qwen3ASRForConditionalGeneration"],
    model_types: &[],
    composites: &[("qwen3_asr", TextType::Named("qwen3"))],
    vocab: VocabKind::Own(set_vocab),
    ..QWEN3VL
};

/// The ChatML template the class writes whatever the tokenizer's.
const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let out = match b.spm_model()? {
        Some(m) => (b.sentencepiece(&m)?, None),
        None => b.gpt2()?,
    };
    b.set_string(tk::CHAT_TEMPLATE, CHATML);
    let path = b.dir().join("tokenizer_config.json");
    let Some(tc) = b.tokenizer_config() else {
        return Err(ConvertError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "Qwen3-ASR's vocabulary reads the <|im_end|> token id from tokenizer_config.json",
            ),
        ));
    };
    let bad = |what: String| ConvertError::format(&path, None, what);
    let mut im_end = None;
    if let Some(added) = tc.get("added_tokens_decoder") {
        let added = added
            .as_object()
            .ok_or_else(|| bad("added_tokens_decoder is not an object".into()))?;
        // serde_json's map is ordered by key: with several `<|im_end|>` entries the one
        // with the smallest key text is taken (a tokenizer has one).
        for (id, data) in added {
            let data = data
                .as_object()
                .ok_or_else(|| bad(format!("added_tokens_decoder[{id:?}] is not an object")))?;
            if data.get("content").and_then(Json::as_str) == Some("<|im_end|>") {
                let n: u32 = id.trim().parse().map_err(|_| {
                    bad(format!("added_tokens_decoder key {id:?} is not a token id"))
                })?;
                im_end = Some(n);
                break;
            }
        }
    }
    if let Some(n) = im_end {
        b.set_u32(tk::BOS_ID, n);
        b.set_u32(tk::EOS_ID, n);
    }
    Ok(out)
}
