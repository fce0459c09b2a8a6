//! `DeepseekForCausalLM` (arch `deepseek`, `DeepseekModel` in `conversion/deepseek.py`).
//!
//! DeepSeek-MoE (V1, remote code: transformers has no config class for `model_type`
//! "deepseek", so the config is read as written): Llama attention (q/k permuted for
//! llama.cpp's rope, k with `num_key_value_heads`), `first_k_dense_replace` dense blocks,
//! then routed experts (per-expert `down/gate/up_proj` stacked in that order), shared
//! experts and the router. The hparams add the rope dimensions (`head_dim`, else
//! `hidden_size / num_attention_heads`), no rope scaling, the leading dense block count,
//! the expert sizes and counts and an expert weights scale of 1. The vocabulary is
//! SentencePiece when there is a `tokenizer.model`, else GPT-2 BPE.

use ggufkit::gguf::keys::{llm, mla, rope};

use super::deepseek2::DEEPSEEK_EXPERTS;
use super::{keep, no_extra, Arch, Hooks, QkPermute, Rules};
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// DeepSeek-MoE's tensors beyond the Llama decoder's (gguf-py's `deepseek` list).
const MOE_TENSORS: &[Tensor] = &[
    Tensor::AttnQkv,
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnUpShexp,
];

/// DeepSeek-MoE (V1).
pub const DEEPSEEK: Arch = Arch {
    hf_names: &["DeepseekForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "deepseek",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, MOE_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        experts: &[DEEPSEEK_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `DeepseekModel.set_vocab`: SentencePiece, or GPT-2 BPE when there is no
/// `tokenizer.model`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    match b.spm_model()? {
        Some(model) => Ok((b.sentencepiece(model)?, None)),
        None => b.gpt2(),
    }
}

/// `DeepseekModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let rope_dim = match hp.find_u64(&["head_dim"])? {
        Some(d) => d,
        None => {
            let hidden = hp.req_u64(&["hidden_size"])?;
            let heads = hp.req_u64(&["num_attention_heads"])?;
            hidden.checked_div(heads).ok_or_else(|| {
                ConvertError::out_of_range(
                    &hp.path,
                    "num_attention_heads",
                    0,
                    "at least 1 (hidden_size is divided by it)",
                )
            })?
        }
    };
    p.u32(rope::DIMENSION_COUNT, rope_dim)?;
    p.rope_scaling_none();
    p.req_u32(llm::LEADING_DENSE_BLOCK_COUNT, &["first_k_dense_replace"])?;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    p.f32(mla::EXPERT_WEIGHTS_SCALE, 1.0);
    p.req_u32(llm::EXPERT_COUNT, &["n_routed_experts"])?;
    p.req_u32(llm::EXPERT_SHARED_COUNT, &["n_shared_experts"])?;
    Ok(())
}
