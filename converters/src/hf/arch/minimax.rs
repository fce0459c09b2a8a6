//! `MiniMaxM2ForCausalLM` (arch `minimax-m2`, `MiniMaxM2Model` in `conversion/minimax.py`).
//!
//! Every block is a MoE (`block_sparse_moe`: router `gate`, the expert selection bias
//! `e_score_correction_bias`, per-expert `w1`/`w2`/`w3` stacked in that order as gate,
//! down and up), with full-width q/k norms. The expert FFN size is `intermediate_size`, the
//! rotary dimensions the config's legacy `rotary_dim` (required); routing (sigmoid) comes
//! from the generic `scoring_func`. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{llm, rope};

use super::{keep, no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::{Tensor, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// MiniMax-M2 (and M2.x).
pub const MINIMAX_M2: Arch = Arch {
    hf_names: &["MiniMaxM2ForCausalLM"],
    model_types: &[ModelType {
        name: "minimax_m2",
        hf_classes: &["MiniMaxM2ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 200064,
            "hidden_size" => 3072,
            "intermediate_size" => 1536,
            "num_hidden_layers" => 62,
            "num_attention_heads" => 48,
            "num_key_value_heads" => 8,
            "head_dim" => 128,
            "max_position_embeddings" => 196608,
            "rms_norm_eps" => 1e-6,
            "bos_token_id" => 200034,
            "eos_token_id" => 200020,
            "tie_word_embeddings" => false,
            "num_experts_per_tok" => 8,
            "num_local_experts" => 256,
            "rope_theta" => 5000000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "minimax-m2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        MOE_DECODER,
        &[Tensor::AttnQNorm, Tensor::AttnKNorm, Tensor::FfnExpProbsB],
    ],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[MINIMAX_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `w1`/`w2`/`w3` under `block_sparse_moe.experts.{xid}`.
pub(super) const MINIMAX_EXPERTS: Experts = Experts {
    marker: "block_sparse_moe.experts.",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["w1", "w2", "w3"],
    expert_name: "model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.block_sparse_moe.experts.{w}.weight",
};

/// `MiniMaxM2Model.set_gguf_parameters`.
pub(super) fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["intermediate_size"])?;
    p.req_u32(rope::DIMENSION_COUNT, &["rotary_dim"])
}
