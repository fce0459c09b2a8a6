//! `MiniMaxM3SparseForCausalLM` and the text half of `MiniMaxM3SparseForConditionalGeneration`
//! (arch `minimax-m3`, `MiniMaxM3Model` in `conversion/minimax.py`, a subclass of MiniMax-M2's).
//!
//! MiniMax-M2's block (`minimax.rs`: per-expert `block_sparse_moe.experts.{xid}.w1/w2/w3`
//! stacked as gate, down and up, the router and its selection bias, per-head q/k norms,
//! partial rotary from `rotary_dim`) plus:
//!
//! - leading dense blocks (`mlp.*`): their count is the run of zeros that starts
//!   `moe_layer_freq`, written as `leading_dense_block_count`;
//! - shared experts (`block_sparse_moe.shared_experts.*`, `n_shared_experts` of them) and the
//!   routed scale (`routed_scaling_factor`), with the top-k weights always normalised;
//! - MiniMax sparse attention's indexer (`self_attn.index_{q,k}_proj`, `index_{q,k}_norm`),
//!   its sizes read from `sparse_attention_config`; its projections stay F32 whatever the
//!   outtype;
//! - Gemma-style `(1 + w)` RMS norms: every tensor whose name ends with `norm.weight` gets 1
//!   added, so the runtime applies a plain RMS norm.
//!
//! transformers 5.24 registers the vision-language config (`minimax_m3_vl`, its text part
//! `minimax_m3_vl_text`), whose `__post_init__` consumes `sparse_attention_config` and
//! `moe_layer_freq` into its own attributes: a config of those types has neither key in
//! `to_dict()`, and the reference refuses it (`could not find any of:
//! ['sparse_attention_config']`); so does this converter, with the missing key named. The
//! vendor's remote-code configs (`model_type` `minimax_m3`) are read as written.
//! A conditional-generation checkpoint's `language_model.` prefix is dropped by the generic
//! filter; its vision tensors have no text name, and are refused as the reference refuses
//! them.

use ggufkit::gguf::keys::{indexer, llm, mla};
use serde_json::{Map, Value as Json};

use super::minimax::{params as minimax_m2_params, MINIMAX_EXPERTS};
use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Rules, TextType};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::names::{Tensor, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// MiniMax-M3 (sparse attention).
pub const MINIMAX_M3: Arch = Arch {
    hf_names: &[
        "MiniMaxM3SparseForCausalLM",
        "MiniMaxM3SparseForConditionalGeneration",
    ],
    model_types: &[ModelType {
        name: "minimax_m3_vl_text",
        hf_classes: &["MiniMaxM3SparseForConditionalGeneration"],
        defaults: defaults! {
            "vocab_size" => 200064,
            "hidden_size" => 6144,
            "intermediate_size" => 3072,
            "num_hidden_layers" => 60,
            "num_attention_heads" => 64,
            "num_key_value_heads" => 4,
            "head_dim" => 128,
            "max_position_embeddings" => 524288,
            "rms_norm_eps" => 1e-6,
            "bos_token_id" => 200034,
            "eos_token_id" => 200020,
            "tie_word_embeddings" => false,
            "num_experts_per_tok" => 4,
            "num_local_experts" => 128,
            "routed_scaling_factor" => 2.0,
            "rotary_dim" => 64,
            "rope_theta" => 5000000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(consume_legacy_keys),
    }],
    composites: &[("minimax_m3_vl", TextType::Fixed("minimax_m3_vl_text"))],
    gguf: "minimax-m3",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        MOE_DECODER,
        &[
            Tensor::AttnQNorm,
            Tensor::AttnKNorm,
            Tensor::FfnExpProbsB,
            Tensor::FfnGateShexp,
            Tensor::FfnUpShexp,
            Tensor::FfnDownShexp,
            Tensor::FfnGate,
            Tensor::FfnUp,
            Tensor::FfnDown,
            Tensor::IndexerQProj,
            Tensor::IndexerKProj,
            Tensor::IndexerQNorm,
            Tensor::IndexerKNorm,
        ],
    ],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[MINIMAX_EXPERTS],
        norm_shift: true,
        f32_names: &[".indexer."],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `MiniMaxM3VLTextConfig.__post_init__`: `num_experts` is stored as `num_local_experts`,
/// and the legacy `sparse_attention_config` / `moe_layer_freq` are consumed (turned into the
/// class's own attributes), so `to_dict()` has neither.
fn consume_legacy_keys(cfg: &mut Map<String, Json>) -> bool {
    if let Some(v) = cfg.remove("num_experts") {
        cfg.insert("num_local_experts".into(), v);
    }
    cfg.remove("sparse_attention_config");
    cfg.remove("moe_layer_freq");
    true
}

/// `MiniMaxM3Model.set_gguf_parameters`: MiniMax-M2's keys, then the shared experts, the
/// routing scale and normalisation, the indexer's sizes and the leading dense blocks.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    minimax_m2_params(p)?;
    let hp = p.hp;
    p.req_u32(llm::EXPERT_SHARED_COUNT, &["n_shared_experts"])?;
    let scale = hp.req_f64(&["routed_scaling_factor"])?;
    p.f32(mla::EXPERT_WEIGHTS_SCALE, scale);
    p.bool(mla::EXPERT_WEIGHTS_NORM, true);
    let sac = sparse_attention_config(hp)?;
    for (suffix, key) in [
        (indexer::HEAD_COUNT, "sparse_num_index_heads"),
        (indexer::KEY_LENGTH, "sparse_index_dim"),
        (indexer::TOP_K, "sparse_topk_blocks"),
        (indexer::BLOCK_SIZE, "sparse_block_size"),
        (indexer::LOCAL_BLOCKS, "sparse_local_block"),
    ] {
        p.u32(suffix, sac_u64(hp, sac, key)?)?;
    }
    p.u32(llm::LEADING_DENSE_BLOCK_COUNT, leading_dense(hp)?)
}

/// The config's `sparse_attention_config` object.
fn sparse_attention_config(hp: &Hparams) -> Result<&Map<String, Json>, ConvertError> {
    const KEY: &str = "sparse_attention_config";
    match hp.get(KEY) {
        None => Err(hp.missing(&[KEY])),
        Some(Json::Object(m)) => Ok(m),
        Some(v) => Err(ConvertError::wrong_type(&hp.path, KEY, "an object", v)),
    }
}

/// A non-negative integer of `sparse_attention_config`.
fn sac_u64(hp: &Hparams, sac: &Map<String, Json>, key: &str) -> Result<u64, ConvertError> {
    let full = format!("sparse_attention_config.{key}");
    let v = sac.get(key).ok_or_else(|| hp.missing(&[full.as_str()]))?;
    json_u64(v).ok_or_else(|| ConvertError::wrong_type(&hp.path, full, "an integer", v))
}

/// The number of dense blocks before the first MoE block: the leading entries of
/// `moe_layer_freq` equal to 0 (`false` counts as 0, as Python compares it).
fn leading_dense(hp: &Hparams) -> Result<u64, ConvertError> {
    const KEY: &str = "moe_layer_freq";
    let v = hp.get(KEY).ok_or_else(|| hp.missing(&[KEY]))?;
    let Json::Array(freq) = v else {
        return Err(ConvertError::wrong_type(&hp.path, KEY, "a list", v));
    };
    let mut n = 0;
    for f in freq {
        let zero = match f {
            Json::Bool(b) => !b,
            Json::Number(x) => x.as_f64() == Some(0.0),
            _ => {
                return Err(ConvertError::wrong_type(
                    &hp.path,
                    format!("{KEY}[{n}]"),
                    "a number",
                    f,
                ))
            }
        };
        if !zero {
            break;
        }
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn hp(cfg: Json) -> Hparams {
        crate::hf::config::from_json(cfg, PathBuf::from("config.json")).unwrap()
    }

    #[test]
    fn leading_dense_blocks_are_the_first_zeros() {
        let base = json!({"architectures": ["MiniMaxM3SparseForCausalLM"]});
        let with = |freq: Json| {
            let mut c = base.clone();
            c["moe_layer_freq"] = freq;
            leading_dense(&hp(c))
        };
        assert_eq!(with(json!([0, 0, 1, 0])).unwrap(), 2);
        assert_eq!(with(json!([1, 0])).unwrap(), 0);
        assert_eq!(with(json!([false, 0.0, true])).unwrap(), 2);
        assert_eq!(with(json!([])).unwrap(), 0);
        assert!(matches!(
            with(json!({"a": 1})),
            Err(ConvertError::WrongType { key, .. }) if key == "moe_layer_freq"
        ));
        assert!(matches!(
            with(json!([0, "x"])),
            Err(ConvertError::WrongType { key, .. }) if key == "moe_layer_freq[1]"
        ));
        assert!(matches!(
            leading_dense(&hp(base)),
            Err(ConvertError::MissingHparam { keys, .. }) if keys == ["moe_layer_freq"]
        ));
    }

    #[test]
    fn the_vl_config_consumes_the_sparse_attention_keys() {
        let cfg = hp(json!({
            "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
            "model_type": "minimax_m3_vl",
            "text_config": {
                "sparse_attention_config": {"sparse_num_index_heads": 2},
                "moe_layer_freq": [0, 1],
                "num_experts": 8,
            },
        }));
        assert!(cfg.get("sparse_attention_config").is_none());
        assert!(cfg.get("moe_layer_freq").is_none());
        assert_eq!(cfg.get("num_local_experts"), Some(&json!(8)));
        assert!(matches!(
            sparse_attention_config(&cfg),
            Err(ConvertError::MissingHparam { keys, .. }) if keys == ["sparse_attention_config"]
        ));
    }

    #[test]
    fn sparse_attention_sizes_are_integers() {
        let cfg = hp(json!({
            "architectures": ["MiniMaxM3SparseForCausalLM"],
            "sparse_attention_config": {"sparse_index_dim": 8, "sparse_block_size": 1.5},
        }));
        let sac = sparse_attention_config(&cfg).unwrap();
        assert_eq!(sac_u64(&cfg, sac, "sparse_index_dim").unwrap(), 8);
        assert!(matches!(
            sac_u64(&cfg, sac, "sparse_block_size"),
            Err(ConvertError::WrongType { key, .. })
                if key == "sparse_attention_config.sparse_block_size"
        ));
        assert!(matches!(
            sac_u64(&cfg, sac, "sparse_topk_blocks"),
            Err(ConvertError::MissingHparam { keys, .. })
                if keys == ["sparse_attention_config.sparse_topk_blocks"]
        ));
    }
}
