//! Qwen2 / Qwen3 (dense) and Qwen2-MoE / Qwen3-MoE (`conversion/qwen.py`).
//!
//! Llama names without the rotary permutation (Qwen uses NeoX rope); Qwen3 adds q/k norms;
//! the MoE classes stack per-expert `down/gate/up_proj` (in that order) into
//! `ffn_*_exps`, accept already fused 3-D expert tensors, and add the expert FFN sizes.

use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Experts, Extra, Rules, LLAMA_LIKE};
use crate::hf::config::Hparams;
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// `Qwen2ForCausalLM` (arch `qwen2`).
pub const QWEN2: Arch = Arch {
    hf_names: &["Qwen2ForCausalLM", "Qwen2Model"],
    gguf: "qwen2",
    vocab: VocabKind::Qwen2,
    tensors: &[LLAMA_LIKE],
    filter: keep,
    rules: Rules {
        headless_arch: Some("Qwen2Model"),
        ..Rules::NONE
    },
    params: dense_params,
    extra: no_extra,
};

/// `Qwen3ForCausalLM` (arch `qwen3`).
pub const QWEN3: Arch = Arch {
    hf_names: &["Qwen3ForCausalLM", "Qwen3Model"],
    gguf: "qwen3",
    vocab: VocabKind::Qwen2,
    tensors: &[LLAMA_LIKE, QK_NORM],
    filter: keep,
    rules: Rules::NONE,
    params: dense_params,
    extra: refuse_reranker,
};

/// `Qwen2MoeForCausalLM` (arch `qwen2moe`).
pub const QWEN2MOE: Arch = Arch {
    hf_names: &["Qwen2MoeForCausalLM"],
    gguf: "qwen2moe",
    vocab: VocabKind::Gpt2,
    tensors: &[LLAMA_LIKE, MOE],
    filter: keep,
    rules: MOE_RULES,
    params: moe_params,
    extra: no_extra,
};

/// `Qwen3MoeForCausalLM` (arch `qwen3moe`).
pub const QWEN3MOE: Arch = Arch {
    hf_names: &["Qwen3MoeForCausalLM"],
    gguf: "qwen3moe",
    vocab: VocabKind::Gpt2,
    tensors: &[LLAMA_LIKE, QK_NORM, MOE],
    filter: keep,
    rules: MOE_RULES,
    params: moe_params,
    extra: no_extra,
};

const MOE_RULES: Rules = Rules {
    fused_experts: true,
    experts: &[QWEN_EXPERTS],
    ..Rules::NONE
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}` (Qwen-MoE, OLMoE).
pub const QWEN_EXPERTS: Experts = Experts {
    marker: "experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `self_attn.q_norm` / `k_norm`.
pub const QK_NORM: &[(&str, &str)] = &[
    (
        "model.layers.{bid}.self_attn.q_norm",
        "blk.{bid}.attn_q_norm",
    ),
    (
        "model.layers.{bid}.self_attn.k_norm",
        "blk.{bid}.attn_k_norm",
    ),
];

/// The Qwen-MoE router, shared expert and stacked experts.
pub const MOE: &[(&str, &str)] = &[
    ("model.layers.{bid}.mlp.gate", "blk.{bid}.ffn_gate_inp"),
    (
        "model.layers.{bid}.mlp.shared_expert_gate",
        "blk.{bid}.ffn_gate_inp_shexp",
    ),
    (
        "model.layers.{bid}.mlp.shared_expert.gate_proj",
        "blk.{bid}.ffn_gate_shexp",
    ),
    (
        "model.layers.{bid}.mlp.shared_expert.up_proj",
        "blk.{bid}.ffn_up_shexp",
    ),
    (
        "model.layers.{bid}.mlp.shared_expert.down_proj",
        "blk.{bid}.ffn_down_shexp",
    ),
    (
        "model.layers.{bid}.mlp.experts.gate_proj",
        "blk.{bid}.ffn_gate_exps",
    ),
    (
        "model.layers.{bid}.mlp.experts.up_proj",
        "blk.{bid}.ffn_up_exps",
    ),
    (
        "model.layers.{bid}.mlp.experts.down_proj",
        "blk.{bid}.ffn_down_exps",
    ),
];

fn dense_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.pooling()
}

fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.opt_u32("expert_feed_forward_length", &["moe_intermediate_size"])?;
    p.opt_u32(
        "expert_shared_feed_forward_length",
        &["shared_expert_intermediate_size"],
    )
}

/// Qwen3 rerankers need a classifier head built from the LM head's "yes"/"no" rows and a
/// rerank chat template (which needs the tokenizer); refuse them rather than write a plain
/// Qwen3 model.
fn refuse_reranker(hp: &Hparams) -> Result<Extra, ConvertError> {
    let dir = hp.path.parent().unwrap_or(std::path::Path::new("."));
    let readme = std::fs::read_to_string(dir.join("README.md"))
        .unwrap_or_default()
        .to_lowercase();
    let hints = [
        crate::hf::metadata::dir_name(dir),
        hp.get("_name_or_path")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
        hp.get("model_type")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
        hp.raw["architectures"][0]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    ];
    let is_reranker = readme.contains("# qwen3-reranker")
        || readme.contains("# qwen3-vl-reranker")
        || hints.iter().any(|h| {
            let h = h.to_lowercase();
            h.contains("qwen3-reranker") || h.contains("qwen3-vl-reranker")
        })
        || hints[3].to_lowercase().contains("sequenceclassification");
    if is_reranker {
        return Err(ConvertError::Unsupported(
            "Qwen3 reranker models are not supported yet".into(),
        ));
    }
    Ok(Extra::default())
}
