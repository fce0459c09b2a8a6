//! `HYV3ForCausalLM` (arch `hy_v3`, `HYV3Model` in `conversion/hunyuan.py`): Tencent's Hy3.
//!
//! A Llama-layout decoder (NeoX rope, no q/k permutation) with per-head q/k norms; dense
//! blocks where the config's `mlp_layer_types` says so (the converter writes no key for
//! them), routed experts elsewhere: per-expert `mlp.experts.{xid}.down/gate/up_proj` stacked
//! in that order, the router `mlp.router.gate`, its selection bias `mlp.expert_bias` and a
//! shared expert `mlp.shared_mlp`. The expert sizes, `route_norm` (default true, Python
//! truthiness) and `router_scaling_factor` (default 1) are written after the generic keys,
//! and the gating function is always sigmoid.
//!
//! The next-token-prediction blocks follow the `num_hidden_layers` ones: the block count and
//! `nextn_predict_layers` include them (unless `--no-mtp`), and their `final_layernorm` is the
//! draft head's `shared_head.norm`. `--mtp` keeps them with the embedding, the final norm
//! and the head. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{llm, mla};
use serde_json::Value as Json;

use super::deepseek2::{truthy, MOE_NEXTN_TENSORS};
use super::glm4moe::{is_past_main_layers, GLM_MTP_SHARED};
use super::{keep, no_extra, Arch, Experts, HeadDim, Hooks, ModelType, MtpExport, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

/// Hy3.
pub const HY_V3: Arch = Arch {
    hf_names: &["HYV3ForCausalLM"],
    model_types: &[ModelType {
        name: "hy_v3",
        hf_classes: &["HYV3ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 120832,
            "hidden_size" => 4096,
            "intermediate_size" => 13312,
            "num_hidden_layers" => 80,
            "num_attention_heads" => 64,
            "num_key_value_heads" => 8,
            "head_dim" => 128,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "pad_token_id" => (Json::Null),
            "bos_token_id" => (Json::Null),
            "eos_token_id" => (Json::Null),
            "tie_word_embeddings" => false,
            "num_experts" => 192,
            "num_experts_per_tok" => 8,
            "num_shared_experts" => 1,
            "moe_intermediate_size" => 1536,
            "router_scaling_factor" => 2.826,
            "rope_theta" => 11158840.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(super::num_local_experts_alias),
    }],
    composites: &[],
    gguf: "hy_v3",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[Tensor::AttnQNorm, Tensor::AttnKNorm],
        MOE_NEXTN_TENSORS,
    ],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[HY_V3_EXPERTS],
        rename: Some(mtp_head_norm),
        nextn_blocks: true,
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp: is_past_main_layers,
            shared: GLM_MTP_SHARED,
        }),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}`, stacked in that order.
const HY_V3_EXPERTS: Experts = Experts {
    marker: ".mlp.experts.",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `HYV3Model.filter_tensors`: a next-token-prediction block's `final_layernorm` (applied
/// before the shared head) is its `shared_head.norm`.
fn mtp_head_norm(hp: &Hparams, name: &str) -> String {
    if name.contains(".final_layernorm.") && is_past_main_layers(hp, name).unwrap_or(false) {
        name.replace(".final_layernorm.", ".shared_head.norm.")
    } else {
        name.to_string()
    }
}

/// `HYV3Model.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let moe = hp.req_u64(&["moe_intermediate_size"])?;
    p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, moe)?;
    let shared = match hp.get("num_shared_experts") {
        None => 1,
        Some(v) => crate::hf::config::json_u64(v).ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "num_shared_experts", "an integer", v)
        })?,
    };
    let shared_ff = moe.checked_mul(shared).ok_or_else(|| {
        ConvertError::out_of_range(
            &hp.path,
            "moe_intermediate_size * num_shared_experts",
            u64::MAX,
            "a UINT32 holds at most 4294967295",
        )
    })?;
    p.u32(llm::EXPERT_SHARED_FEED_FORWARD_LENGTH, shared_ff)?;
    let norm = hp.get("route_norm").is_none() || truthy(hp.get("route_norm"));
    p.bool(mla::EXPERT_WEIGHTS_NORM, norm);
    let scale = match hp.get("router_scaling_factor") {
        None => 1.0,
        Some(v) => v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "router_scaling_factor", "a number", v)
        })?,
    };
    p.f32(mla::EXPERT_WEIGHTS_SCALE, scale);
    // ExpertGatingFuncType.SIGMOID
    p.u32(llm::EXPERT_GATING_FUNC, 2)?;
    if hp.mtp != Mtp::Drop {
        let nextn = match hp.get("num_nextn_predict_layers") {
            None => 0,
            Some(v) => crate::hf::config::json_u64(v).ok_or_else(|| {
                ConvertError::wrong_type(&hp.path, "num_nextn_predict_layers", "an integer", v)
            })?,
        };
        if nextn > 0 {
            p.u32(mla::NEXTN_PREDICT_LAYERS, nextn)?;
        }
    }
    Ok(())
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
    fn only_an_mtp_block_final_norm_is_the_shared_head_norm() {
        let h = hp(json!({"architectures": ["HYV3ForCausalLM"], "num_hidden_layers": 3}));
        assert_eq!(
            mtp_head_norm(&h, "model.layers.3.final_layernorm.weight"),
            "model.layers.3.shared_head.norm.weight"
        );
        assert_eq!(
            mtp_head_norm(&h, "model.layers.2.final_layernorm.weight"),
            "model.layers.2.final_layernorm.weight"
        );
        assert_eq!(
            mtp_head_norm(&h, "model.layers.3.input_layernorm.weight"),
            "model.layers.3.input_layernorm.weight"
        );
    }

    #[test]
    fn the_config_class_stores_num_local_experts_as_num_experts() {
        let h = hp(json!({
            "architectures": ["HYV3ForCausalLM"],
            "model_type": "hy_v3",
            "num_local_experts": 6,
        }));
        assert_eq!(h.get("num_experts"), Some(&json!(6)));
        assert!(h.get("num_local_experts").is_none());
    }
}
