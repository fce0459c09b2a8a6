//! The text models of Qwen3-Omni-MoE (`Qwen3OmniMoeForConditionalGeneration`, arch
//! `qwen3vlmoe`, `Qwen3OmniMoeTextModel`) and Qwen3-ASR (`Qwen3ASRForConditionalGeneration`,
//! arch `qwen3vl`, `Qwen3ASRTextModel`) in `conversion/qwen3vl.py`.
//!
//! Both are Qwen3-VL's text models (the `thinker_config` level of an Omni config dropped,
//! `thinker.` dropped from tensor names; the talker, code2wav, audio and vision towers are
//! the generic multimodal filter's) with no deepstack layers (neither config has a root
//! `vision_config`). Their vocabulary is their base's (Qwen3-VL-MoE: GPT-2 BPE; Qwen3-VL:
//! SentencePiece when there is a `tokenizer.model`, else GPT-2 BPE), then the added token
//! `<|im_end|>` of tokenizer_config.json's `added_tokens_decoder` becomes the BOS and EOS
//! token (each key keeps the place the vocabulary step gave it); Qwen3-ASR also replaces the
//! chat template by plain ChatML. The classes read tokenizer_config.json unconditionally: a
//! directory without one is refused, as by the reference.

use ggufkit::gguf::keys::tokenizer as tk;
use serde_json::Value as Json;

use super::qwenvl::{QWEN3VL, QWEN3VLMOE};
use super::{Arch, TextType};
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome};
use crate::ConvertError;

/// Qwen3-Omni-MoE's thinker text model.
pub const QWEN3OMNIMOE: Arch = Arch {
    hf_names: &["Qwen3OmniMoeForConditionalGeneration"],
    model_types: &[],
    composites: &[],
    vocab: VocabKind::Own(omni_set_vocab),
    ..QWEN3VLMOE
};

/// Qwen3-ASR's text model.
pub const QWEN3ASR: Arch = Arch {
    hf_names: &["Qwen3ASRForConditionalGeneration"],
    model_types: &[],
    composites: &[("qwen3_asr", TextType::Named("qwen3"))],
    vocab: VocabKind::Own(asr_set_vocab),
    ..QWEN3VL
};

/// The ChatML template the class writes whatever the tokenizer's.
const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/// Qwen3-VL-MoE's vocabulary (GPT-2 BPE), then `<|im_end|>` as BOS and EOS.
fn omni_set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let out = b.gpt2()?;
    im_end_as_bos_eos(b)?;
    Ok(out)
}

/// Qwen3-VL's vocabulary, the ChatML template, then `<|im_end|>` as BOS and EOS.
fn asr_set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let out = match b.spm_model()? {
        Some(m) => (b.sentencepiece(m)?, None),
        None => b.gpt2()?,
    };
    b.set_string(tk::CHAT_TEMPLATE, CHATML);
    im_end_as_bos_eos(b)?;
    Ok(out)
}

/// The id of the added token `<|im_end|>` in tokenizer_config.json, written as the BOS and
/// EOS token ids when there is one.
fn im_end_as_bos_eos(b: &mut VocabBuild) -> Result<(), ConvertError> {
    let path = b.dir().tokenizer_config_path();
    let Some(tc) = b.tokenizer_config() else {
        return Err(ConvertError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the class reads the <|im_end|> token id from tokenizer_config.json",
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
    Ok(())
}
