//! OLMo, OLMo 2 / OLMo 3 and OLMoE (`conversion/olmo.py`).
//!
//! OLMo (arch `olmo`) has non-parametric layer norms: no norm tensors, a fixed
//! `layer_norm_epsilon` of 1e-5, an optional `clamp_kqv`, and Llama's rotary permutation of
//! the q/k weights (not biases). OLMo 2 (`olmo2`) puts its norms after attention and FFN,
//! adds q/k norms and, for OLMo 3, a sliding-window layout. OLMoE (`olmoe`) stacks
//! per-expert `down/gate/up_proj` like Qwen-MoE and fixes the RMS epsilon at 1e-5.

use super::qwen::{QK_NORM, QWEN_EXPERTS};
use super::{keep, no_extra, Arch, QkPermute, Rules, LLAMA_LIKE};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// `OlmoForCausalLM` (arch `olmo`).
pub const OLMO: Arch = Arch {
    hf_names: &["OlmoForCausalLM", "OLMoForCausalLM"],
    gguf: "olmo",
    vocab: VocabKind::Gpt2,
    tensors: &[OLMO_TENSORS],
    filter: keep,
    rules: Rules {
        permute_qk: QkPermute::Weights,
        ..Rules::NONE
    },
    params: olmo_params,
    extra: no_extra,
};

/// `Olmo2ForCausalLM` (arch `olmo2`; OLMo 3 and its sliding layout are handled the same way by the reference, but its per-layer-type rope dict is not supported here).
pub const OLMO2: Arch = Arch {
    hf_names: &["Olmo2ForCausalLM"],
    gguf: "olmo2",
    vocab: VocabKind::Gpt2,
    tensors: &[OLMO_TENSORS, OLMO2_NORMS, QK_NORM],
    filter: keep,
    rules: Rules::NONE,
    params: olmo2_params,
    extra: no_extra,
};

/// `OlmoeForCausalLM` (arch `olmoe`).
pub const OLMOE: Arch = Arch {
    hf_names: &["OlmoeForCausalLM"],
    gguf: "olmoe",
    vocab: VocabKind::Gpt2,
    tensors: &[LLAMA_LIKE, QK_NORM, OLMOE_MOE],
    filter: keep,
    rules: Rules {
        experts: &[QWEN_EXPERTS],
        ..Rules::NONE
    },
    params: olmoe_params,
    extra: no_extra,
};

/// The OLMo tensors: Llama's without any norm.
const OLMO_TENSORS: &[(&str, &str)] = &[
    ("model.embed_tokens", "token_embd"),
    ("lm_head", "output"),
    ("model.layers.{bid}.self_attn.q_proj", "blk.{bid}.attn_q"),
    ("model.layers.{bid}.self_attn.k_proj", "blk.{bid}.attn_k"),
    ("model.layers.{bid}.self_attn.v_proj", "blk.{bid}.attn_v"),
    (
        "model.layers.{bid}.self_attn.o_proj",
        "blk.{bid}.attn_output",
    ),
    ("model.layers.{bid}.mlp.gate_proj", "blk.{bid}.ffn_gate"),
    ("model.layers.{bid}.mlp.up_proj", "blk.{bid}.ffn_up"),
    ("model.layers.{bid}.mlp.down_proj", "blk.{bid}.ffn_down"),
];

/// OLMo 2's output norm and post-attention / post-FFN norms.
const OLMO2_NORMS: &[(&str, &str)] = &[
    ("model.norm", "output_norm"),
    (
        "model.layers.{bid}.post_attention_layernorm",
        "blk.{bid}.post_attention_norm",
    ),
    (
        "model.layers.{bid}.post_feedforward_layernorm",
        "blk.{bid}.post_ffw_norm",
    ),
];

const OLMOE_MOE: &[(&str, &str)] = &[
    ("model.layers.{bid}.mlp.gate", "blk.{bid}.ffn_gate_inp"),
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

fn olmo_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.f32("attention.layer_norm_epsilon", 1e-5);
    p.opt_f32("attention.clamp_kqv", &["clip_qkv"])
}

fn olmo2_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let Some(sw) = p.hp.get("sliding_window").cloned() else {
        return Ok(());
    };
    let sw = crate::hf::config::json_u64(&sw).ok_or_else(|| {
        ConvertError::format(
            &p.hp.path,
            None,
            format!("sliding_window: expected an integer, found {sw}"),
        )
    })?;
    p.u32("attention.sliding_window", sw)?;
    let pattern = match p.layer_types_pattern()? {
        Some(v) => v,
        // OLMo 3: every fourth layer is global.
        None => (0..p.hp.req_u64(&["num_hidden_layers"])?)
            .map(|i| (i + 1) % 4 != 0)
            .collect(),
    };
    p.bools("attention.sliding_window_pattern", pattern);
    Ok(())
}

fn olmoe_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.f32("attention.layer_norm_rms_epsilon", 1e-5);
    Ok(())
}
