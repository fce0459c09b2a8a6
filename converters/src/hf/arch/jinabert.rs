//! `JinaBertModel`, `JinaBertForMaskedLM` (arch `jina-bert-v2`, `JinaBertV2Model(BertModel)`
//! in `conversion/bert.py`). The checkpoints ship remote code under `model_type: bert`, so
//! AutoConfig gives BertConfig's defaults next to Jina's own keys.
//!
//! BERT's tensor rules, hparams and classifier labels; ALiBi instead of position
//! embeddings, a fused GEGLU (`mlp.gated_layers`, written as one `ffn_up`), a norm after
//! the MLP. The vocabulary follows tokenizer_config.json's `tokenizer_class`: BERT's
//! WordPiece for `BertTokenizer`; for `RobertaTokenizer`, GPT-2 BPE (a `Whitespace`
//! pre-tokenizer's vocabulary is not supported here) with two token types.

use ggufkit::gguf::keys::tokenizer as tok;
use serde_json::Value as Json;

use super::{bert, no_extra, Arch, Hooks, Rules};
use crate::hf::names::Tensor;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The Jina BERT v2 classes.
pub const JINA_BERT_V2: Arch = Arch {
    hf_names: &["JinaBertModel", "JinaBertForMaskedLM"],
    model_types: &[],
    composites: &[],
    gguf: "jina-bert-v2",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::TokenEmbdNorm,
        Tensor::TokenTypes,
        Tensor::AttnNorm2,
        Tensor::AttnOutNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnQNorm,
        Tensor::AttnK,
        Tensor::AttnKNorm,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnUp,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::LayerOutNorm,
        Tensor::Cls,
    ]],
    tensor_overrides: &[],
    filter: bert::filter,
    rules: Rules {
        rename: Some(bert::rename),
        ..Rules::NONE
    },
    params: bert::params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn unsupported(b: &VocabBuild, feature: String) -> ConvertError {
    let arch = b
        .hparams()
        .get("architectures")
        .and_then(|a| a.get(0))
        .and_then(Json::as_str)
        .unwrap_or("JinaBertModel")
        .to_string();
    ConvertError::UnsupportedFeature { arch, feature }
}

/// `JinaBertV2Model.set_vocab`: chosen by tokenizer_config.json's `tokenizer_class`, which
/// must be there.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let path = b.dir().path().join("tokenizer_config.json");
    let class = match b.tokenizer_config() {
        None => {
            return Err(ConvertError::io(
                &path,
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ))
        }
        Some(tc) => tc.get("tokenizer_class").cloned().ok_or_else(|| {
            ConvertError::format(&path, None, "no tokenizer_class (JinaBertModel reads it)")
        })?,
    };
    match class.as_str() {
        Some("BertTokenizer") => b.wordpiece(),
        Some("RobertaTokenizer") => {
            let pre = b
                .dir()
                .tokenizer_json()?
                .and_then(|tj| tj.get("pre_tokenizer"))
                .and_then(|p| p.get("type"))
                .and_then(Json::as_str);
            if pre == Some("Whitespace") {
                return Err(unsupported(
                    b,
                    "a RobertaTokenizer with a Whitespace pre-tokenizer (the reference's \
                     whitespace vocabulary) is not supported"
                        .into(),
                ));
            }
            let outcome = b.gpt2()?;
            b.set_u32(tok::TOKEN_TYPE_COUNT, 2);
            Ok(outcome)
        }
        _ => Err(unsupported(
            b,
            format!("tokenizer {class} is not supported for JinaBertModel"),
        )),
    }
}
