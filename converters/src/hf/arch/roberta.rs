//! `RobertaModel`, `RobertaForSequenceClassification` (arch `bert`,
//! `RobertaModel(BertModel)` in `conversion/bert.py`).
//!
//! BERT's rules after dropping a `roberta.` prefix; the position embedding loses its first
//! `pad_token_id + 1` rows and the context length as many. With a tokenizer.json the
//! vocabulary is the GPT-2 BPE path followed by the token type count; without one it is
//! BERT's. The classification head's `classifier.dense` / `classifier.out_proj` are
//! `cls` / `cls.output` through the names table.

use ggufkit::gguf::keys::tokenizer as tok;

use super::{bert, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::params::Params;
use crate::hf::tokenizer::{hparam_count, VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The RoBERTa classes.
pub const ROBERTA: Arch = Arch {
    hf_names: &["RobertaModel", "RobertaForSequenceClassification"],
    model_types: &[ModelType {
        name: "roberta",
        hf_classes: &["RobertaModel", "RobertaForSequenceClassification"],
        defaults: defaults! {
            "vocab_size" => 50265,
            "hidden_size" => 768,
            "num_hidden_layers" => 12,
            "num_attention_heads" => 12,
            "intermediate_size" => 3072,
            "hidden_act" => "gelu",
            "max_position_embeddings" => 512,
            "type_vocab_size" => 2,
            "layer_norm_eps" => 1e-12,
            "pad_token_id" => 1,
            "bos_token_id" => 0,
            "eos_token_id" => 2,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "bert",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: bert::BERT.tensors,
    tensor_overrides: &[],
    filter,
    rules: Rules {
        rename: Some(bert::rename),
        hook: Some(bert::cut_positions),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `RobertaModel.filter_tensors`: the `roberta.` prefix goes, then BERT's.
fn filter(name: &str) -> Option<String> {
    bert::filter(name.strip_prefix("roberta.").unwrap_or(name))
}

/// BERT's hparams with the context length lowered by the position offset.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    bert::params(p)?;
    bert::shrink_context(p)
}

/// `RobertaModel.set_vocab`: GPT-2 BPE and the token type count (default 1) when there is
/// a tokenizer.json, else BERT's WordPiece path.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    if b.dir().tokenizer_json()?.is_none() {
        return b.wordpiece();
    }
    let outcome = b.gpt2()?;
    let types = hparam_count(b.hparams(), "type_vocab_size")?.unwrap_or(1);
    let types = u32::try_from(types).map_err(|_| ConvertError::NotACount {
        key: "type_vocab_size".into(),
        value: types.to_string(),
    })?;
    b.set_u32(tok::TOKEN_TYPE_COUNT, types);
    Ok(outcome)
}
