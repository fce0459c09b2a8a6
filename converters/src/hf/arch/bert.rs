//! `BertModel` and the sentence-transformers layout (arch `bert`, `conversion/bert.py`).
//!
//! The `bert.` prefix is stripped, `.gamma`/`.beta` renamed, position ids and the pooler
//! dropped; the hparams are the generic block plus `causal = false`, the pooling type from
//! `modules.json` and classifier labels for real (non-dummy) `id2label` maps.

use ggufkit::gguf::keys::{attention, llm};
use serde_json::Value as Json;

use super::{no_extra, Arch, HeadDim, Modified, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The BERT class.
pub const BERT: Arch = Arch {
    hf_names: &[
        "BertModel",
        "BertForMaskedLM",
        "CamembertModel",
        "BertForSequenceClassification",
    ],
    model_types: &[ModelType {
        name: "bert",
        hf_classes: &[
            "BertModel",
            "BertForMaskedLM",
            "BertForSequenceClassification",
        ],
        defaults: defaults! {
            "vocab_size" => 30522,
            "hidden_size" => 768,
            "num_hidden_layers" => 12,
            "num_attention_heads" => 12,
            "intermediate_size" => 3072,
            "max_position_embeddings" => 512,
            "type_vocab_size" => 2,
            "layer_norm_eps" => 1e-12,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "bert",
    vocab: VocabKind::Bert,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::TokenTypes,
        Tensor::TokenEmbdNorm,
        Tensor::PosEmbd,
        Tensor::Cls,
        Tensor::ClsOut,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::AttnOutNorm,
        Tensor::FfnUp,
        Tensor::FfnDown,
        Tensor::LayerOutNorm,
    ]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        rename: Some(rename),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
};

/// `BertModel.filter_tensors`.
pub(super) fn filter(name: &str) -> Option<String> {
    let mut n = name.strip_prefix("bert.").unwrap_or(name).to_string();
    if let Some(b) = n.strip_suffix(".gamma") {
        n = format!("{b}.weight");
    }
    if let Some(b) = n.strip_suffix(".beta") {
        n = format!("{b}.bias");
    }
    let dropped = matches!(
        n.as_str(),
        "embeddings.position_ids" | "pooler.dense.weight" | "pooler.dense.bias"
    ) || n.starts_with("cls.predictions")
        || n.starts_with("cls.seq_relationship");
    (!dropped).then_some(n)
}

/// The classifier labels, ordered by id, unless `id2label` is transformers' dummy pair.
fn labels(hp: &Hparams) -> Option<Vec<String>> {
    let Some(Json::Object(m)) = hp.get("id2label") else {
        return None;
    };
    if m.is_empty() || (m.len() == 2 && m.get("0").and_then(Json::as_str) == Some("LABEL_0")) {
        return None;
    }
    let mut items: Vec<(i64, String)> = m
        .iter()
        .map(|(k, v)| {
            let label = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            (k.parse().unwrap_or(i64::MAX), label)
        })
        .collect();
    items.sort();
    Some(items.into_iter().map(|(_, v)| v).collect())
}

/// `BertModel.modify_tensors`: a classifier with real labels is `classifier.out_proj`.
pub(super) fn rename(hp: &Hparams, name: &str) -> String {
    if labels(hp).is_some() {
        match name {
            "classifier.weight" => return "classifier.out_proj.weight".into(),
            "classifier.bias" => return "classifier.out_proj.bias".into(),
            _ => {}
        }
    }
    name.to_string()
}

/// `BertModel.set_gguf_parameters`.
pub(super) fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.bool(attention::CAUSAL, false);
    p.pooling()?;
    if let Some(l) = labels(p.hp) {
        p.strings(llm::CLASSIFIER_OUTPUT_LABELS, l);
    }
    Ok(())
}

/// `XLMRobertaModel` / `XLMRobertaForSequenceClassification` (`XLMRobertaModel(BertModel)`,
/// arch `bert`): BERT's rules after dropping a `roberta.` prefix (and jina-v3's
/// `.parametrizations.` spelling), position embeddings cut by `pad_token_id + 1` rows (the
/// context length shrinks by as much), and the unigram SentencePiece vocabulary. A config
/// with `lora_adaptations` (jina-embeddings-v3, arch `jina-bert-v3` with LoRA side files) is
/// refused.
pub const XLM_ROBERTA: Arch = Arch {
    hf_names: &["XLMRobertaModel", "XLMRobertaForSequenceClassification"],
    model_types: &[ModelType {
        name: "xlm-roberta",
        hf_classes: &["XLMRobertaModel", "XLMRobertaForSequenceClassification"],
        defaults: defaults! {
            "vocab_size" => 30522,
            "hidden_size" => 768,
            "num_hidden_layers" => 12,
            "num_attention_heads" => 12,
            "intermediate_size" => 3072,
            "max_position_embeddings" => 512,
            "type_vocab_size" => 2,
            "layer_norm_eps" => 1e-12,
            "pad_token_id" => 1,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "bert",
    vocab: VocabKind::XlmRoberta,
    vocab_quirks: VocabQuirks::NONE,
    tensors: BERT.tensors,
    tensor_overrides: &[],
    filter: xlmr_filter,
    rules: Rules {
        rename: Some(rename),
        hook: Some(cut_positions),
        ..Rules::NONE
    },
    params: xlmr_params,
    extra: no_extra,
};

fn xlmr_filter(name: &str) -> Option<String> {
    let mut n = name.strip_prefix("roberta.").unwrap_or(name).to_string();
    if n.contains(".parametrizations.") {
        n = n.replace(".parametrizations.", ".");
        if let Some(b) = n.strip_suffix(".original") {
            n = b.to_string();
        }
    }
    filter(&n)
}

/// `pad_token_id + 1`, the rows of the position embedding before the first real position.
fn position_offset(hp: &Hparams) -> Result<Option<u64>, ConvertError> {
    Ok(hp.find_u64(&["pad_token_id"])?.map(|p| p + 1))
}

fn cut_positions(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name != "embeddings.position_embeddings.weight" {
        return Ok(Modified::Pass(name, expr));
    }
    let Some(off) = position_offset(hp)? else {
        return Ok(Modified::Pass(name, expr));
    };
    let rows = expr.shape().first().copied().unwrap_or(0);
    // Slicing past the end leaves no rows, as torch does.
    let start = off.min(rows);
    let expr = expr.narrow(&name, 0, start, rows - start)?;
    Ok(Modified::Pass(name, expr))
}

fn xlmr_params(p: &mut Params) -> Result<(), ConvertError> {
    if p.hp.get("lora_adaptations").is_some_and(|v| match v {
        Json::Null => false,
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
        Json::String(s) => !s.is_empty(),
        _ => true,
    }) {
        return Err(ConvertError::UnsupportedFeature {
            arch: p.hp.arch.clone(),
            feature: "lora_adaptations (jina-embeddings-v3: arch jina-bert-v3 with one LoRA \
                      GGUF per task) is not supported"
                .into(),
        });
    }
    params(p)?;
    // `_xlmroberta_tokenizer_init` lowered `max_position_embeddings` before the generic
    // block read it.
    if let (Some(off), Some(Json::Number(_))) = (
        position_offset(p.hp)?,
        p.hp.get("max_position_embeddings"),
    ) {
        let max = p.hp.req_u64(&["max_position_embeddings"])?;
        let ctx = max.checked_sub(off).ok_or_else(|| {
            ConvertError::format(
                &p.hp.path,
                None,
                format!(
                    "max_position_embeddings {max} is smaller than pad_token_id + 1 = {off} \
                     (the position offset)"
                ),
            )
        })?;
        p.u32(llm::CONTEXT_LENGTH, ctx)?;
    }
    Ok(())
}
