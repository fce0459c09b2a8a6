//! `LLaDAModelLM` (arch `llada`, `LLaDAModel` in `conversion/llada.py`) and `LLaDAMoEModel` /
//! `LLaDAMoEModelLM` (arch `llada-moe`, `LLaDAMoEModel`): masked-diffusion language models.
//!
//! LLaDA (GSAI-ML's remote code) keeps OLMo's config spellings (`d_model`, `n_heads`,
//! `n_kv_heads`, `n_layers`, `mlp_hidden_size`, `max_sequence_length`) and its
//! `model.transformer.*` tensor names (`wte`, `ff_out` as the head, `ln_f`; per block
//! `attn_norm`, `q/k/v_proj`, `attn_out`, `ff_norm`, `ff_proj` as the gate, `up_proj`,
//! `ff_out` as the down projection). Its q/k weights and biases are un-permuted like Llama's,
//! with the head counts read in the class's own order (`num_attention_heads` before
//! `n_heads`). After the generic block the class writes the vocabulary size, the rope
//! dimension count, and overwrites the context, embedding and FFN lengths with its own keys
//! and defaults (4096, 4096, 12288); attention is non-causal and the logits are not shifted.
//! Its vocabulary is GPT-2 BPE over the class's own `get_vocab_base` (added tokens kept as
//! written, typed by `added_tokens_decoder` alone) with `add_bos_token` forced on.
//!
//! LLaDA-MoE (inclusionAI's remote code) is OLMoE's layout: q/k norms, per-expert
//! `down/gate/up_proj` stacked in that order; it writes `expert_intermediate_size` as the
//! expert FFN length, a fixed mask token id (156895), non-causal attention and unshifted
//! logits. Its vocabulary is the base GPT-2 path.

use ggufkit::gguf::keys::{attention, diffusion, llm, rope, tokenizer as tok};
use ggufkit::gguf::Value;

use super::{Arch, Experts, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// LLaDA's fixed mask token id in LLaDA-MoE's files.
const LLADA_MOE_MASK_TOKEN: u32 = 156895;

/// LLaDA (dense).
pub const LLADA: Arch = Arch {
    hf_names: &["LLaDAModelLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "llada",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        hook: Some(unpermute_qk),
        ..Rules::NONE
    },
    params,
    extra: super::no_extra,
    hooks: Hooks::NONE,
};

/// LLaDA-MoE.
pub const LLADA_MOE: Arch = Arch {
    hf_names: &["LLaDAMoEModel", "LLaDAMoEModelLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "llada-moe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[MOE_DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        experts: &[MOE_EXPERTS],
        ..Rules::NONE
    },
    params: moe_params,
    extra: super::no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}` (any name with `experts`).
const MOE_EXPERTS: Experts = Experts {
    marker: "experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `LLaDAModel.set_vocab`: GPT-2 BPE over the class's `get_vocab_base`, then
/// `add_bos_token` on.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let outcome = b.gpt2_added_as_decoded()?;
    b.set_bool(tok::ADD_BOS, true);
    Ok(outcome)
}

/// The first of `keys` present and not null (`hparams.get(a, hparams.get(b))`), as a
/// count.
fn first_count(hp: &Hparams, keys: &[&str]) -> Result<Option<u64>, ConvertError> {
    for k in keys {
        if let Some(v) = hp.get(k) {
            return if v.is_null() {
                Ok(None)
            } else {
                hp.req_u64(&[k]).map(Some)
            };
        }
    }
    Ok(None)
}

/// `LLaDAModel.modify_tensors`: q weights and biases permuted with the attention head
/// count, k with the kv head count (the head count when there is none).
fn unpermute_qk(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let is_q = name.ends_with("q_proj.weight") || name.ends_with("q_proj.bias");
    let is_k = name.ends_with("k_proj.weight") || name.ends_with("k_proj.bias");
    if !is_q && !is_k {
        return Ok(Modified::Pass(name, expr));
    }
    let heads_keys = ["num_attention_heads", "n_heads"];
    let n_head = first_count(hp, &heads_keys)?.ok_or_else(|| hp.missing(&heads_keys))?;
    let n = if is_q {
        n_head
    } else {
        first_count(hp, &["num_key_value_heads", "n_kv_heads"])?.unwrap_or(n_head)
    };
    let expr = expr.permute_heads(&name, n)?;
    Ok(Modified::Pass(name, expr))
}

/// A count the class reads with `hparams.get(key, default)`.
fn count_or(hp: &Hparams, key: &str, default: u64) -> Result<u64, ConvertError> {
    match hp.get(key) {
        None => Ok(default),
        Some(_) => hp.req_u64(&[key]),
    }
}

/// `LLaDAModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.pooling()?;
    let hp = p.hp;
    p.u32(llm::VOCAB_SIZE, hp.req_u64(&["vocab_size"])?)?;
    let rope_dim = match first_count(hp, &["head_dim"])? {
        Some(d) => d,
        None => {
            let heads_keys = ["num_attention_heads", "n_heads"];
            let n_head = first_count(hp, &heads_keys)?.ok_or_else(|| hp.missing(&heads_keys))?;
            let width_keys = ["hidden_size", "d_model"];
            let width = first_count(hp, &width_keys)?.ok_or_else(|| hp.missing(&width_keys))?;
            width
                .checked_div(n_head)
                .ok_or_else(|| hp.missing(&heads_keys))?
        }
    };
    p.u32(rope::DIMENSION_COUNT, rope_dim)?;
    p.u32(
        llm::CONTEXT_LENGTH,
        count_or(hp, "max_sequence_length", 4096)?,
    )?;
    p.u32(llm::EMBEDDING_LENGTH, count_or(hp, "d_model", 4096)?)?;
    p.u32(
        llm::FEED_FORWARD_LENGTH,
        count_or(hp, "mlp_hidden_size", 12288)?,
    )?;
    p.bool(attention::CAUSAL, false);
    p.md.set(diffusion::SHIFT_LOGITS, Value::Bool(false));
    Ok(())
}

/// `LLaDAMoEModel.set_gguf_parameters`.
fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.opt_u32(
        llm::EXPERT_FEED_FORWARD_LENGTH,
        &["expert_intermediate_size"],
    )?;
    p.md.set(tok::MASK_ID, Value::U32(LLADA_MOE_MASK_TOKEN));
    p.bool(attention::CAUSAL, false);
    p.md.set(diffusion::SHIFT_LOGITS, Value::Bool(false));
    Ok(())
}
