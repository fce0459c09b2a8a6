//! `Ernie4_5ForCausalLM` (arch `ernie4_5`, `Ernie4_5Model` in `conversion/ernie.py`).
//!
//! The generic text model with a SentencePiece vocabulary (and `add_space_prefix` from
//! tokenizer_config.json when it has the key); Paddle checkpoints' `ernie.` prefix becomes
//! `model.`, their fused `qkv_proj` is split into q/k/v and `up_gate_proj` into gate (first
//! half) and up.
//!
//! ERNIE 4.5 MoE (`Ernie4_5_MoeForCausalLM`, arch `ernie4_5-moe`) keeps the vocabulary and
//! the `ernie.` rename but not the splits: its non-expert tensors are mapped as they are (a
//! fused `qkv_proj` becomes `attn_qkv`), per-expert `gate/up/down_proj` are stacked in that
//! order, Multi-Token-Prediction tensors are dropped, and the layer layout is written as
//! KVs: MoE every `moe_layer_interval` layers from `moe_layer_start_index` (the leading dense
//! blocks), shared experts with the reference's FFN size `intermediate_size //
//! num_key_value_heads`. `moe_layer_end_index` is not written (the reference ignores it).

use ggufkit::gguf::keys::llm;
use serde_json::{Map, Value as Json};

use super::{no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The ERNIE 4.5 (dense) class.
pub const ERNIE4_5: Arch = Arch {
    hf_names: &["Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM"],
    model_types: &[ModelType {
        name: "ernie4_5",
        hf_classes: &["Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 103424,
            "hidden_size" => 1024,
            "intermediate_size" => 3072,
            "num_hidden_layers" => 18,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 2,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 500000.0,
            "use_bias" => false,
            "head_dim" => 128,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "ernie4_5",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(split_fused),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Ernie4_5_MoeForCausalLM` (arch `ernie4_5-moe`).
pub const ERNIE4_5_MOE: Arch = Arch {
    hf_names: &["Ernie4_5_MoeForCausalLM"],
    model_types: &[ModelType {
        name: "ernie4_5_moe",
        hf_classes: &["Ernie4_5_MoeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 103424,
            "hidden_size" => 2560,
            "intermediate_size" => 12288,
            "num_hidden_layers" => 28,
            "num_attention_heads" => 20,
            "num_key_value_heads" => 4,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 500000.0,
            "use_bias" => false,
            "moe_intermediate_size" => 1536,
            "moe_k" => 6,
            "moe_num_experts" => 64,
            "moe_num_shared_experts" => 2,
            "moe_layer_start_index" => 1,
            "moe_layer_end_index" => 27,
            "moe_layer_interval" => 1,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(moe_aliases),
    }],
    composites: &[],
    gguf: "ernie4_5-moe",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[
            Tensor::AttnQkv,
            Tensor::FfnGateInp,
            Tensor::FfnGateExp,
            Tensor::FfnDownExp,
            Tensor::FfnUpExp,
            Tensor::FfnGateShexp,
            Tensor::FfnDownShexp,
            Tensor::FfnUpShexp,
            Tensor::FfnExpProbsB,
        ],
    ],
    tensor_overrides: &[],
    filter: moe_filter,
    rules: Rules {
        experts: &[ERNIE_EXPERTS],
        ..Rules::NONE
    },
    params: moe_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `gate/up/down_proj` under `mlp.experts.{xid}`, stacked in that order.
const ERNIE_EXPERTS: Experts = Experts {
    marker: "mlp.experts",
    count_keys: &["moe_num_experts"],
    parts: &["gate_proj", "up_proj", "down_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

fn filter(name: &str) -> Option<String> {
    Some(name.replace("ernie.", "model."))
}

/// Whether `name` starts with `pattern` read as a regular expression whose `.` matches any
/// character, followed by a digit (`re.match(r"model.mtp_block.(\d+)", name)`).
fn starts_with_indexed(name: &str, pattern: &str) -> bool {
    let mut chars = name.chars();
    for p in pattern.chars() {
        match chars.next() {
            Some(c) if p == '.' || c == p => {}
            _ => return false,
        }
    }
    chars.next().is_some_and(|c| c.is_ascii_digit())
}

/// `Ernie4_5MoeModel.filter_tensors`: the Multi-Token-Prediction tensors go, then the
/// dense class's rename.
fn moe_filter(name: &str) -> Option<String> {
    const MTP: &[&str] = &[
        "model.mtp_block.",
        "model.mtp_emb_norm.",
        "model.mtp_hidden_norm.",
        "model.mtp_linear_proj.",
    ];
    if MTP.iter().any(|p| starts_with_indexed(name, p)) {
        return None;
    }
    filter(name)
}

/// `Ernie4_5_MoeConfig.attribute_map`: `num_experts` and `num_experts_per_tok` in a config
/// file set `moe_num_experts` and `moe_k` (the dict then has only the latter).
fn moe_aliases(cfg: &mut Map<String, Json>) -> bool {
    for (alias, key) in [
        ("num_experts", "moe_num_experts"),
        ("num_experts_per_tok", "moe_k"),
    ] {
        if let Some(v) = cfg.remove(alias) {
            cfg.insert(key.into(), v);
        }
    }
    true
}

/// `Ernie4_5MoeModel.set_gguf_parameters`.
fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.req_u32(llm::EXPERT_COUNT, &["moe_num_experts"])?;
    let used =
        p.hp.get("moe_k")
            .cloned()
            .ok_or_else(|| p.hp.missing(&["moe_k"]))?;
    p.u32_or_list(llm::EXPERT_USED_COUNT, &used)?;
    p.req_u32(llm::INTERLEAVE_MOE_LAYER_STEP, &["moe_layer_interval"])?;
    p.req_u32(llm::LEADING_DENSE_BLOCK_COUNT, &["moe_layer_start_index"])?;
    p.opt_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    let Some(shared) = p.hp.find_u64(&["moe_num_shared_experts"])? else {
        return Ok(());
    };
    p.u32(llm::EXPERT_SHARED_COUNT, shared)?;
    if shared == 0 {
        return Ok(());
    }
    let ff = p.hp.find_u64(&["intermediate_size"])?;
    let kv = p.hp.find_u64(&["num_key_value_heads"])?;
    if let (Some(ff), Some(kv)) = (ff, kv) {
        let per_head = ff.checked_div(kv).ok_or_else(|| {
            ConvertError::out_of_range(
                &p.hp.path,
                "num_key_value_heads",
                0,
                "at least 1 (the shared expert FFN length is intermediate_size // \
                 num_key_value_heads)",
            )
        })?;
        p.u32(llm::EXPERT_SHARED_FEED_FORWARD_LENGTH, per_head)?;
    }
    Ok(())
}

fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()
}

fn split_fused(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.contains("qkv_proj") {
        let heads = hp.req_u64(&["num_attention_heads"])?;
        let kv = hp.req_u64(&["num_key_value_heads"])?;
        let head_dim = match hp.find_u64(&["head_dim"])? {
            Some(d) => d,
            None if heads > 0 => hp.req_u64(&["hidden_size"])? / heads,
            None => return Err(hp.missing(&["num_attention_heads"])),
        };
        let (q, k) = (heads * head_dim, kv * head_dim);
        let rows = expr.shape().first().copied().unwrap_or(0);
        if rows != q + 2 * k {
            return Err(ConvertError::Tensor {
                name,
                problem: format!("{rows} rows cannot be split into q {q}, k {k}, v {k}"),
            });
        }
        let out = vec![
            (
                name.replace("qkv_proj.weight", "q_proj.weight"),
                expr.clone().narrow(&name, 0, 0, q)?,
            ),
            (
                name.replace("qkv_proj.weight", "k_proj.weight"),
                expr.clone().narrow(&name, 0, q, k)?,
            ),
            (
                name.replace("qkv_proj.weight", "v_proj.weight"),
                expr.narrow(&name, 0, q + k, k)?,
            ),
        ];
        return Ok(Modified::Out(out));
    }
    if name.contains("up_gate_proj") {
        let rows = expr.shape().first().copied().unwrap_or(0);
        let half = rows / 2;
        let out = vec![
            (
                name.replace("up_gate_proj.weight", "gate_proj.weight"),
                expr.clone().narrow(&name, 0, 0, half)?,
            ),
            (
                name.replace("up_gate_proj.weight", "up_proj.weight"),
                expr.narrow(&name, 0, half, half)?,
            ),
        ];
        return Ok(Modified::Out(out));
    }
    Ok(Modified::Pass(name, expr))
}

/// `Ernie4_5Model.set_vocab`: SentencePiece (required), then `add_space_prefix` from
/// tokenizer_config.json when it has the key.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model("ERNIE 4.5 needs tokenizer.model")?;
    let path = b.sentencepiece(model)?;
    b.space_prefix_from_config();
    Ok((path, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtp_tensors_are_dropped_before_the_rename() {
        assert_eq!(moe_filter("model.mtp_block.0.mlp.gate.weight"), None);
        assert_eq!(moe_filter("model.mtp_emb_norm.0.weight"), None);
        assert_eq!(moe_filter("model.mtp_hidden_norm.12.weight"), None);
        assert_eq!(moe_filter("model.mtp_linear_proj.0.weight"), None);
        // `.` in the reference's pattern matches any character.
        assert_eq!(moe_filter("modelXmtp_blockY3.weight"), None);
        // No index: kept; the Paddle prefix is renamed after the check.
        assert!(moe_filter("model.mtp_block.weight").is_some());
        assert_eq!(
            moe_filter("ernie.mtp_block.0.weight").as_deref(),
            Some("model.mtp_block.0.weight")
        );
        assert_eq!(
            moe_filter("ernie.layers.0.mlp.gate.weight").as_deref(),
            Some("model.layers.0.mlp.gate.weight")
        );
    }

    #[test]
    fn attribute_map_aliases_set_the_moe_keys() {
        let mut cfg = Map::new();
        cfg.insert("num_experts".into(), serde_json::json!(8));
        cfg.insert("moe_k".into(), serde_json::json!(2));
        cfg.insert("num_experts_per_tok".into(), serde_json::json!(3));
        assert!(moe_aliases(&mut cfg));
        assert_eq!(cfg["moe_num_experts"], 8);
        assert_eq!(cfg["moe_k"], 3);
        assert!(!cfg.contains_key("num_experts"));
    }
}
