//! `PLMForCausalLM` (arch `plm`, `PLMModel` in `conversion/plm.py`).
//!
//! Remote code (no transformers config class: the config is read as written). Multi-head
//! latent attention without a q low-rank projection (`kv_b_proj` is written whole, not
//! split) and a gateless MLP. The hparams are the generic block, then `vocab_size`, the KV
//! low-rank size, the key length `qk_nope_head_dim + qk_rope_head_dim`, the value length
//! `v_head_dim` and the rope dimensions `qk_rope_head_dim` (a key the generic block wrote
//! from `head_dim` keeps its place and takes the new value). The vocabulary is GPT-2 BPE.

use ggufkit::gguf::keys::{attention, llm, mla, rope};

use super::{keep, no_extra, Arch, Hooks, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// PLM's tensors (gguf-py's `plm` list).
const PLM_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::OutputNorm,
    Tensor::AttnNorm,
    Tensor::AttnQ,
    Tensor::AttnKvAMqa,
    Tensor::AttnKvANorm,
    Tensor::AttnKvB,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnUp,
    Tensor::FfnDown,
];

/// The PLM class.
pub const PLM: Arch = Arch {
    hf_names: &["PLMForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "plm",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[PLM_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `PLMModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.generic()?;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    p.req_u32(mla::KV_LORA_RANK, &["kv_lora_rank"])?;
    let nope = hp.req_u64(&["qk_nope_head_dim"])?;
    let rope_dim = hp.req_u64(&["qk_rope_head_dim"])?;
    let key = nope.checked_add(rope_dim).ok_or_else(|| {
        ConvertError::out_of_range(
            &hp.path,
            "qk_nope_head_dim + qk_rope_head_dim",
            nope,
            "a sum below 2^64",
        )
    })?;
    p.u32(attention::KEY_LENGTH, key)?;
    p.req_u32(attention::VALUE_LENGTH, &["v_head_dim"])?;
    p.u32(rope::DIMENSION_COUNT, rope_dim)
}
