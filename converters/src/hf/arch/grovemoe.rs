//! `GroveMoeForCausalLM` (arch `grovemoe`, `GroveMoeModel` in `conversion/grovemoe.py`;
//! also registered under its `auto_map` spelling `modeling_grove_moe.GroveMoeForCausalLM`).
//!
//! GroveMoE (inclusionAI's remote code): Qwen3-MoE's attention with q/k norms and routed
//! experts (per-expert `down/gate/up_proj` stacked in that order), plus "adjugate" chunk
//! experts under `mlp.chunk_experts.{xid}`: one per group of two routed experts, so half as
//! many, stacked the same way into `ffn_{down,gate,up}_chexps`. The checkpoint's selection
//! bias (`….expert_bias`) is unused by the model and not written. The class writes three
//! constants of the published modeling code: the chunk experts' width (`head_dim`, else
//! 128), two experts per group and a group scale of 0.05. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{chunk_experts, llm};
use serde_json::Value as Json;

use super::{Arch, Experts, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// How many routed experts share one chunk expert (a constant of the modeling code).
const EXPERTS_PER_GROUP: u64 = 2;

/// The hparam the loaded config gains with the number of chunk experts (the routed experts'
/// count over [`EXPERTS_PER_GROUP`]), which their stacking reads.
const CHUNK_COUNT_KEY: &str = "grove_chunk_expert_count";

/// GroveMoE.
pub const GROVEMOE: Arch = Arch {
    hf_names: &[
        "GroveMoeForCausalLM",
        "modeling_grove_moe.GroveMoeForCausalLM",
    ],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "grovemoe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        MOE_DECODER,
        &[
            Tensor::AttnQNorm,
            Tensor::AttnKNorm,
            Tensor::FfnGateChexp,
            Tensor::FfnDownChexp,
            Tensor::FfnUpChexp,
        ],
    ],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        hook: Some(drop_expert_bias),
        // The chunk experts first: their names also contain the routed experts' marker.
        experts: &[CHUNK_EXPERTS, ROUTED_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: super::no_extra,
    hooks: Hooks {
        adjust: Some(count_chunk_experts),
        ..Hooks::NONE
    },
};

/// The chunk experts under `mlp.chunk_experts.{xid}`.
const CHUNK_EXPERTS: Experts = Experts {
    marker: "chunk_experts",
    count_keys: &[CHUNK_COUNT_KEY],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.chunk_experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.chunk_experts.{w}.weight",
};

/// The routed experts under `mlp.experts.{xid}`.
const ROUTED_EXPERTS: Experts = Experts {
    marker: "experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// Records the number of chunk experts (`num_local_experts` or `num_experts`, halved) for
/// their stacking; a config with neither leaves it out, so that stacking reports the
/// missing hparam.
fn count_chunk_experts(hp: &mut Hparams) -> Result<(), ConvertError> {
    if let Some(n) = hp.find_u64(&["num_local_experts", "num_experts"])? {
        hp.map
            .insert(CHUNK_COUNT_KEY.into(), Json::from(n / EXPERTS_PER_GROUP));
    }
    Ok(())
}

/// `GroveMoeModel.modify_tensors`' first step: the selection bias is not written.
fn drop_expert_bias(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.ends_with(".expert_bias") {
        return Ok(Modified::Drop);
    }
    Ok(Modified::Pass(name, expr))
}

/// `GroveMoeModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.opt_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    // `hparams.get("head_dim") or 128`: absent, null or zero gives 128.
    let chunk_ff = match p.hp.find_u64(&["head_dim"])? {
        Some(d) if d != 0 => d,
        _ => 128,
    };
    p.u32(chunk_experts::FEED_FORWARD_LENGTH, chunk_ff)?;
    p.u32(chunk_experts::EXPERTS_PER_GROUP, EXPERTS_PER_GROUP)?;
    p.f32(chunk_experts::GROUP_SCALE, 0.05);
    Ok(())
}
