//! `ModernBertModel`, `ModernBertForMaskedLM`, `ModernBertForSequenceClassification` (arch
//! `modern-bert`, `ModernBertModel(BertModel)` in `conversion/bert.py`).
//!
//! BERT's rules after dropping a `model.` prefix; a fused `Wqkv`, a GLU `Wi`; the hparams
//! are BERT's plus the local attention window, the global-layer period, rope scaling
//! `none`, `vocab_size` and the activation. ModernBertConfig keeps its rope per layer type
//! (global theta 160000, local 10000), which the generic block writes as `rope.freq_base`
//! and `rope.freq_base_swa`. The vocabulary is GPT-2 BPE with bos, eos and sep added.
//! (`ModernBertForMaskedLM`'s `head.decoder` has no GGUF tensor in this architecture: the
//! reference cannot map it, and neither can we.)

use ggufkit::gguf::keys::{attention, llm};
use serde_json::{json, Map, Value as Json};

use super::{bert, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::json_u64;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The ModernBERT class.
pub const MODERN_BERT: Arch = Arch {
    hf_names: &[
        "ModernBertModel",
        "ModernBertForMaskedLM",
        "ModernBertForSequenceClassification",
    ],
    model_types: &[ModelType {
        name: "modernbert",
        hf_classes: &[
            "ModernBertModel",
            "ModernBertForMaskedLM",
            "ModernBertForSequenceClassification",
        ],
        defaults: defaults! {
            "vocab_size" => 50368,
            "hidden_size" => 768,
            "intermediate_size" => 1152,
            "num_hidden_layers" => 22,
            "num_attention_heads" => 12,
            "hidden_activation" => "gelu",
            "max_position_embeddings" => 8192,
            "norm_eps" => 1e-5,
            "pad_token_id" => 50283,
            "eos_token_id" => 50282,
            "bos_token_id" => 50281,
            "cls_token_id" => 50281,
            "sep_token_id" => 50282,
            "local_attention" => 128,
            "classifier_pooling" => "cls",
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(prepare),
    }],
    composites: &[],
    gguf: "modern-bert",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::TokenEmbdNorm,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnOut,
        Tensor::AttnQkv,
        Tensor::FfnUp,
        Tensor::FfnDown,
        Tensor::FfnNorm,
        Tensor::Cls,
        Tensor::ClsOut,
        Tensor::ClsNorm,
    ]],
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

fn filter(name: &str) -> Option<String> {
    bert::filter(name.strip_prefix("model.").unwrap_or(name))
}

/// ModernBertConfig's `__post_init__`: layer types from `global_attn_every_n_layers`
/// (default 3; layer `i` is global when `i % n == 0`), and the per-layer-type rope dict
/// (`rope_scaling` merged into both, thetas from `global_rope_theta` / `local_rope_theta`,
/// else 160000 / 10000). `false` when transformers would raise.
fn prepare(cfg: &mut Map<String, Json>) -> bool {
    if cfg.get("layer_types").is_none_or(Json::is_null) {
        let every = match cfg.get("global_attn_every_n_layers") {
            None => 3,
            Some(v) => match json_u64(v) {
                Some(n) if n > 0 => n,
                _ => return false,
            },
        };
        let Some(n) = cfg.get("num_hidden_layers").map_or(Some(22), json_u64) else {
            return false;
        };
        let types: Vec<Json> = (0..n.min(crate::hf::config::MAX_BLOCK_COUNT))
            .map(|i| {
                json!(if i % every != 0 {
                    "sliding_attention"
                } else {
                    "full_attention"
                })
            })
            .collect();
        cfg.insert("layer_types".into(), Json::Array(types));
    }
    let rope_scaling = cfg.remove("rope_scaling");
    let global = cfg.remove("global_rope_theta").unwrap_or(json!(160000.0));
    let local = cfg.remove("local_rope_theta").unwrap_or(json!(10000.0));
    let mut rp = match cfg.get("rope_parameters") {
        Some(Json::Object(m)) => m.clone(),
        None | Some(Json::Null) => {
            let mut m = Map::new();
            m.insert("sliding_attention".into(), json!({"rope_type": "default"}));
            m.insert("full_attention".into(), json!({"rope_type": "default"}));
            m
        }
        Some(_) => return false,
    };
    match rope_scaling {
        None | Some(Json::Null) => {}
        Some(Json::Object(rs)) => {
            for key in ["full_attention", "sliding_attention"] {
                match rp.get_mut(key) {
                    Some(Json::Object(d)) => d.extend(rs.clone()),
                    _ => return false,
                }
            }
        }
        Some(_) => return false,
    }
    for (key, theta) in [("full_attention", global), ("sliding_attention", local)] {
        let d = rp.entry(key).or_insert(Json::Null);
        if d.is_null() {
            *d = json!({"rope_type": "default"});
        }
        let Json::Object(d) = d else { return false };
        d.entry("rope_theta").or_insert(theta);
    }
    let max_pos = cfg
        .get("max_position_embeddings")
        .cloned()
        .unwrap_or(json!(8192));
    for d in rp.values_mut() {
        let Json::Object(d) = d else { continue };
        let ty = d.get("type").cloned().unwrap_or(json!("default"));
        let ty = d.entry("rope_type").or_insert(ty).clone();
        if matches!(ty.as_str(), Some("llama3" | "yarn" | "longrope")) {
            d.entry("original_max_position_embeddings")
                .or_insert(max_pos.clone());
        }
    }
    cfg.insert("rope_parameters".into(), Json::Object(rp));
    true
}

fn params(p: &mut Params) -> Result<(), ConvertError> {
    bert::params(p)?;
    p.req_u32(attention::SLIDING_WINDOW, &["local_attention"])?;
    match p.hp.get("global_attn_every_n_layers") {
        None | Some(Json::Null) => {}
        Some(v) => {
            let v = v.clone();
            p.u32_or_list(attention::SLIDING_WINDOW_PATTERN, &v)?;
        }
    }
    p.rope_scaling_none();
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    if let Some(act) = p.hp.get("hidden_activation").and_then(Json::as_str) {
        p.string(HIDDEN_ACT, act);
    }
    Ok(())
}

/// `{arch}.hidden_activation`.
const HIDDEN_ACT: &str = "hidden_activation";

/// `ModernBertModel.set_vocab`: `add_bos`, `add_eos` and `add_sep` set first, then the
/// GPT-2 BPE path.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.set_bool(ggufkit::gguf::keys::tokenizer::ADD_BOS, true);
    b.set_bool(ggufkit::gguf::keys::tokenizer::ADD_EOS, true);
    b.set_bool(ggufkit::gguf::keys::tokenizer::ADD_SEP, true);
    b.gpt2()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::hf::config::from_json;

    /// ModernBertConfig: layer types from `global_attn_every_n_layers`, per-type thetas.
    #[test]
    fn modernbert_config_defaults() {
        let hp = from_json(
            json!({"architectures": ["ModernBertModel"], "model_type": "modernbert",
                "num_hidden_layers": 4, "global_attn_every_n_layers": 2,
                "local_rope_theta": 5000.0}),
            "config.json".into(),
        )
        .unwrap();
        assert_eq!(
            hp.map["layer_types"],
            json!([
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention"
            ])
        );
        assert_eq!(hp.rope["full_attention"]["rope_theta"], json!(160000.0));
        assert_eq!(hp.rope["sliding_attention"]["rope_theta"], json!(5000.0));
        assert_eq!(hp.map["classifier_pooling"], json!("cls"));
    }
}
