//! `BertModel` and the sentence-transformers layout (arch `bert`, `conversion/bert.py`).
//!
//! The `bert.` prefix is stripped, `.gamma`/`.beta` renamed, position ids and the pooler
//! dropped; the hparams are the generic block plus `causal = false`, the pooling type from
//! `modules.json` and classifier labels for real (non-dummy) `id2label` maps.

use ggufkit::gguf::keys::{attention, llm};
use serde_json::Value as Json;

use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
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
    hooks: Hooks::NONE,
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
    vocab: VocabKind::Own(xlmr_vocab),
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
    hooks: Hooks::NONE,
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

/// `modify_tensors` of the classes with a position offset: the position embedding loses its
/// first `pad_token_id + 1` rows.
pub(super) fn cut_positions(
    hp: &Hparams,
    name: String,
    expr: Expr,
) -> Result<Modified, ConvertError> {
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
    shrink_context(p)
}

/// The context length of a class whose `__init__` lowered `max_position_embeddings` by the
/// position offset before the generic block read it (XLM-R, RoBERTa).
pub(super) fn shrink_context(p: &mut Params) -> Result<(), ConvertError> {
    if let (Some(off), Some(Json::Number(_))) =
        (position_offset(p.hp)?, p.hp.get("max_position_embeddings"))
    {
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

/// `NomicBertModel` (`NomicBertModel(BertModel)`, arch `nomic-bert`). Nomic's checkpoints
/// ship remote code, but transformers 5 has a `nomic_bert` config class: its defaults
/// (`hidden_size` 768, `num_hidden_layers` 12, `max_position_embeddings` 2048, rope theta
/// 1000, ...) are added next to nomic's own keys (`n_embd`, `n_layer`, `rotary_emb_base`),
/// and the reference's generic block finds them first. The reference checks the config
/// (SwiGLU, no biases, post-norm, plain full rotary, known position counts) before anything
/// is written; so do we. The vocabulary is BERT's WordPiece, or XLM-R's unigram model when
/// tokenizer.json is a Unigram one. The MoE variant (`moe_every_n_layers`, arch
/// `nomic-bert-moe`) is refused.
pub const NOMIC_BERT: Arch = Arch {
    hf_names: &["NomicBertModel"],
    model_types: &[ModelType {
        name: "nomic_bert",
        hf_classes: &["NomicBertModel"],
        defaults: defaults! {
            "vocab_size" => 30528,
            "hidden_size" => 768,
            "num_hidden_layers" => 12,
            "num_attention_heads" => 12,
            "intermediate_size" => 3072,
            "hidden_act" => "silu",
            "max_position_embeddings" => 2048,
            "type_vocab_size" => 2,
            "layer_norm_eps" => 1e-12,
            "pad_token_id" => 0,
            "rope_theta" => 1000.0,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "nomic-bert",
    vocab: VocabKind::Own(nomic_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::TokenEmbdNorm,
        Tensor::TokenTypes,
        Tensor::PosEmbd,
        Tensor::OutputNorm,
        Tensor::AttnOutNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::LayerOutNorm,
    ]],
    tensor_overrides: &[],
    filter: nomic_filter,
    rules: Rules {
        rename: Some(rename),
        ..Rules::NONE
    },
    params: nomic_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn nomic_filter(name: &str) -> Option<String> {
    if name.contains("mlp.experts.bias") {
        return None;
    }
    filter(name)
}

fn nomic_unsupported(hp: &Hparams, feature: impl Into<String>) -> ConvertError {
    ConvertError::UnsupportedFeature {
        arch: hp.arch.clone(),
        feature: feature.into(),
    }
}

/// `NomicBertModel.__init__`'s checks (the reference asserts them before converting).
fn nomic_check(hp: &Hparams) -> Result<(), ConvertError> {
    let moe = hp
        .get("moe_every_n_layers")
        .is_some_and(|v| !matches!(v, Json::Null | Json::Bool(false)) && v.as_f64() != Some(0.0));
    if moe {
        return Err(nomic_unsupported(
            hp,
            "moe_every_n_layers: the MoE variant (nomic-bert-moe, nomic-embed-text-v2-moe) is \
             not supported",
        ));
    }
    let npos = hp.req_u64(&["n_positions"])?;
    let mtp = hp.find_u64(&["max_trained_positions"])?.unwrap_or(2048);
    if !matches!((npos, mtp), (8192, 2048) | (2048, 2048)) {
        return Err(nomic_unsupported(
            hp,
            format!("unrecognized parameters: n_positions={npos}, max_trained_positions={mtp}"),
        ));
    }
    let want = |key: &str, ok: &dyn Fn(&Json) -> bool, what: &str| match hp.get(key) {
        Some(v) if ok(v) => Ok(()),
        v => Err(nomic_unsupported(
            hp,
            format!(
                "{key} must be {what}, found {}",
                v.map_or("nothing".to_string(), Json::to_string)
            ),
        )),
    };
    let is_false = |v: &Json| *v == Json::Bool(false);
    want(
        "activation_function",
        &|v| v.as_str() == Some("swiglu"),
        "\"swiglu\"",
    )?;
    want("causal", &is_false, "false")?;
    for k in ["qkv_proj_bias", "mlp_fc1_bias", "mlp_fc2_bias", "prenorm"] {
        want(k, &is_false, "false")?;
    }
    want("rotary_emb_fraction", &|v| v.as_f64() == Some(1.0), "1.0")?;
    want("rotary_emb_interleaved", &is_false, "false")?;
    want("rotary_emb_scale_base", &Json::is_null, "null")
}

/// Whether tokenizer.json is a Unigram one (XLM-R's vocabulary) rather than WordPiece.
fn nomic_tokenizer_is_unigram(
    tj: Option<&Json>,
    path: std::path::PathBuf,
) -> Result<bool, ConvertError> {
    let tj = tj.ok_or_else(|| {
        ConvertError::io(&path, std::io::Error::from(std::io::ErrorKind::NotFound))
    })?;
    match tj["model"]["type"].as_str() {
        Some("Unigram") => Ok(true),
        Some("WordPiece") => Ok(false),
        other => Err(ConvertError::format(
            &path,
            None,
            format!("unknown tokenizer: {}", other.unwrap_or("(no model.type)")),
        )),
    }
}

fn nomic_params(p: &mut Params) -> Result<(), ConvertError> {
    nomic_check(p.hp)?;
    let unigram = nomic_tokenizer_is_unigram(p.tokenizer_json()?, p.tokenizer_json_path())?;
    params(p)?;
    // With XLM-R's tokenizer, `_xlmroberta_tokenizer_init` lowers max_position_embeddings
    // by pad_token_id + 1 before the generic block reads it.
    if unigram {
        if let (Some(off), Some(Json::Number(_))) =
            (position_offset(p.hp)?, p.hp.get("max_position_embeddings"))
        {
            let max = p.hp.req_u64(&["max_position_embeddings"])?;
            let ctx = max.checked_sub(off).ok_or_else(|| {
                nomic_unsupported(
                    p.hp,
                    format!("max_position_embeddings {max} is smaller than pad_token_id + 1"),
                )
            })?;
            p.u32(llm::CONTEXT_LENGTH, ctx)?;
        }
    }
    Ok(())
}

/// `XLMRobertaModel.set_vocab`: the unigram `sentencepiece.bpe.model` as a `t5` vocabulary.
fn xlmr_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.xlmr_unigram()
}

/// `NomicBertModel.set_vocab`: XLM-R's unigram vocabulary when tokenizer.json is a Unigram
/// one, else BERT's WordPiece.
fn nomic_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    if nomic_tokenizer_is_unigram(b.dir().tokenizer_json()?, b.dir().tokenizer_json_path())? {
        b.xlmr_unigram()
    } else {
        b.wordpiece()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value as Json};

    use super::nomic_check;
    use crate::hf::config::from_json;

    fn nomic(extra: Json) -> crate::hf::config::Hparams {
        let mut cfg = json!({"architectures": ["NomicBertModel"], "model_type": "nomic_bert",
            "n_positions": 8192, "max_trained_positions": 2048,
            "activation_function": "swiglu", "causal": false, "qkv_proj_bias": false,
            "mlp_fc1_bias": false, "mlp_fc2_bias": false, "prenorm": false,
            "rotary_emb_fraction": 1.0, "rotary_emb_interleaved": false,
            "rotary_emb_scale_base": null});
        for (k, v) in extra.as_object().unwrap() {
            cfg[k] = v.clone();
        }
        from_json(cfg, "config.json".into()).unwrap()
    }

    /// The reference's NomicBERT assertions, and its MoE variant, refuse before writing.
    #[test]
    fn nomic_config_checks() {
        nomic_check(&nomic(json!({}))).unwrap();
        for (bad, what) in [
            (json!({"moe_every_n_layers": 2}), "moe_every_n_layers"),
            (json!({"n_positions": 4096}), "n_positions"),
            (
                json!({"activation_function": "gelu"}),
                "activation_function",
            ),
            (json!({"prenorm": true}), "prenorm"),
            (json!({"rotary_emb_fraction": 0.5}), "rotary_emb_fraction"),
        ] {
            let e = nomic_check(&nomic(bad)).unwrap_err().to_string();
            assert!(e.contains("NomicBertModel") && e.contains(what), "{e}");
        }
        let hp = nomic(json!({}));
        assert_eq!(hp.map["num_hidden_layers"], json!(12));
        assert_eq!(hp.rope["rope_theta"], json!(1000.0));
    }
}
