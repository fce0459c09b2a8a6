//! `DistilBertModel`, `DistilBertForMaskedLM`, `DistilBertForSequenceClassification` (arch
//! `bert`, `DistilBertModel(BertModel)` in `conversion/bert.py`).
//!
//! BERT's rules after dropping a `distilbert.` prefix and the masked-LM head (`vocab_*`);
//! the layers keep DistilBERT's names (`q_lin`, `sa_layer_norm`, `ffn.lin1`, …), which the
//! names table maps. The config has no epsilon: the class writes BERT's 1e-12 before the
//! generic block. There are no token types (the count is the default 1).

use ggufkit::gguf::keys::attention;

use super::{bert, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The DistilBERT classes.
pub const DISTIL_BERT: Arch = Arch {
    hf_names: &[
        "DistilBertModel",
        "DistilBertForMaskedLM",
        "DistilBertForSequenceClassification",
    ],
    model_types: &[ModelType {
        name: "distilbert",
        hf_classes: &[
            "DistilBertModel",
            "DistilBertForMaskedLM",
            "DistilBertForSequenceClassification",
        ],
        defaults: defaults! {
            "vocab_size" => 30522,
            "max_position_embeddings" => 512,
            "sinusoidal_pos_embds" => false,
            "n_layers" => 6,
            "n_heads" => 12,
            "dim" => 768,
            "hidden_dim" => 3072,
            "activation" => "gelu",
            "pad_token_id" => 0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "bert",
    vocab: VocabKind::Bert,
    vocab_quirks: VocabQuirks::NONE,
    tensors: bert::BERT.tensors,
    tensor_overrides: &[],
    filter,
    rules: Rules {
        rename: Some(bert::rename),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `DistilBertModel.filter_tensors`: the prefix and the masked-LM head go, then BERT's.
fn filter(name: &str) -> Option<String> {
    let n = name.strip_prefix("distilbert.").unwrap_or(name);
    if n.starts_with("vocab_") {
        return None;
    }
    bert::filter(n)
}

/// BERT's epsilon, which DistilBERT's config does not give, then BERT's hparams.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.f32(attention::LAYERNORM_EPS, 1e-12);
    bert::params(p)
}

#[cfg(test)]
mod tests {
    use super::filter;

    /// The masked-LM head (`vocab_transform`, `vocab_layer_norm`, `vocab_projector`) is
    /// dropped, the prefix stripped, BERT's own drops still apply.
    #[test]
    fn distilbert_filter() {
        assert_eq!(filter("vocab_projector.bias"), None);
        assert_eq!(filter("distilbert.vocab_transform.weight"), None);
        assert_eq!(
            filter("distilbert.transformer.layer.0.attention.q_lin.weight").as_deref(),
            Some("transformer.layer.0.attention.q_lin.weight")
        );
        assert_eq!(filter("distilbert.embeddings.position_ids"), None);
        assert_eq!(
            filter("pre_classifier.weight").as_deref(),
            Some("pre_classifier.weight")
        );
    }
}
