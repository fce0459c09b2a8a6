//! `MapleForCausalLM` (arch `maple`, `MapleModel` in `conversion/maple.py`).
//!
//! Remote code (no transformers config class: the config is read as written). Llama
//! attention with q/k norms and no q/k permutation; each block's FFN is a routed MoE
//! (`mlp.gate`, per-expert `down/gate/up_proj` stacked in that order). The class asserts its
//! own config (SiLU, no shared experts, `norm_topk_prob` and `nope_on_global_attention`
//! true), refused here as typed errors. The hparams are the generic block, then
//! `vocab_size`, the rope dimensions `int(head_dim * partial_rotary_factor)`, the sliding
//! window and its per-layer pattern, the expert FFN size and a SwiGLU clamp of 7 for every
//! block. The vocabulary is GPT-2 BPE.

use ggufkit::gguf::keys::{attention, llm, rope};
use serde_json::Value as Json;

use super::deepseek2::truthy;
use super::{keep, no_extra, Arch, Experts, Hooks, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The clamp of the experts' SwiGLU gate/up in Maple's modelling code.
const SWIGLU_CLAMP: f32 = 7.0;

/// Maple's tensors (gguf-py's `maple` list): no dense FFN.
const MAPLE_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::AttnQ,
    Tensor::AttnQNorm,
    Tensor::AttnK,
    Tensor::AttnKNorm,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
];

/// Maple's per-expert `down_proj` / `gate_proj` / `up_proj`.
const MAPLE_EXPERTS: Experts = Experts {
    marker: "mlp.experts",
    count_keys: &["num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// The Maple class.
pub const MAPLE: Arch = Arch {
    hf_names: &["MapleForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "maple",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[MAPLE_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[MAPLE_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The class's assertions on its config, in its order.
fn check_config(hp: &Hparams) -> Result<(), ConvertError> {
    let refuse = |what: &str| ConvertError::UnsupportedFeature {
        arch: hp.arch.clone(),
        feature: format!("the conversion asserts {what}"),
    };
    if hp.find(&["hidden_act"]).is_none() {
        return Err(hp.missing(&["hidden_act"]));
    }
    if hp.find(&["hidden_act"]).and_then(Json::as_str) != Some("silu") {
        return Err(refuse("hidden_act \"silu\""));
    }
    let no_shared = match hp.find(&["num_shared_experts"]) {
        None => true,
        Some(Json::Number(n)) => n.as_f64() == Some(0.0),
        Some(Json::Bool(b)) => !b,
        Some(_) => false,
    };
    if !no_shared {
        return Err(refuse("num_shared_experts 0"));
    }
    let norm_topk = hp.find(&["norm_topk_prob"]).is_none() || truthy(hp.find(&["norm_topk_prob"]));
    if !norm_topk {
        return Err(refuse("norm_topk_prob true"));
    }
    if !truthy(hp.find(&["nope_on_global_attention"])) {
        return Err(refuse("nope_on_global_attention true"));
    }
    Ok(())
}

/// `MapleModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    check_config(hp)?;
    let head_dim = match hp.find(&["head_dim"]) {
        Some(_) => hp.req_u64(&["head_dim"])?,
        None => {
            let hidden = hp.req_u64(&["hidden_size"])?;
            let heads = hp.req_u64(&["num_attention_heads"])?;
            hidden
                .checked_div(heads)
                .ok_or_else(|| hp.missing(&["num_attention_heads"]))?
        }
    };
    let factor = match hp.rope.get("partial_rotary_factor") {
        None => 1.0,
        Some(v) => v.as_f64().ok_or_else(|| ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["partial_rotary_factor".into()],
            expected: "a number".into(),
            found: v.to_string(),
        })?,
    };
    let dims = head_dim as f64 * factor;
    if !dims.is_finite() || dims < 0.0 {
        return Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["partial_rotary_factor".into()],
            expected: "a non-negative factor".into(),
            found: factor.to_string(),
        });
    }
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    p.u32(rope::DIMENSION_COUNT, dims.trunc() as u64)?;
    p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])?;
    let types = match hp.find(&["layer_types"]) {
        Some(Json::Array(a)) => a,
        Some(v) => {
            return Err(ConvertError::BadHparam {
                path: hp.path.clone(),
                keys: vec!["layer_types".into()],
                expected: "a list of layer types".into(),
                found: v.to_string(),
            })
        }
        None => return Err(hp.missing(&["layer_types"])),
    };
    let pattern = types
        .iter()
        .map(|t| t.as_str() == Some("sliding_attention"))
        .collect();
    p.bools(attention::SLIDING_WINDOW_PATTERN, pattern);
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    let blocks = usize::try_from(p.block_count()?).unwrap_or(usize::MAX);
    p.f32s(llm::SWIGLU_CLAMP_EXP, vec![SWIGLU_CLAMP; blocks]);
    Ok(())
}
