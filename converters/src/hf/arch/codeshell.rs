//! `CodeShellForCausalLM` (arch `codeshell`, `CodeShellModel(TextModel)` in
//! `conversion/codeshell.py`). The checkpoints ship remote code, so the config is read as
//! config.json gives it.
//!
//! GPT-2's tensor names with a grouped-query fused `c_attn` and rotary positions (the
//! stored `rotary_emb.inv_freq` buffers are skipped). The hparams are written by the class:
//! context `n_positions`, FFN four times `n_embd`, kv heads `num_query_groups`, then rope
//! base 10000 with a linear scaling factor of 1. The vocabulary is GPT-2 BPE.

use ggufkit::gguf::keys::{attention, llm, rope};

use super::{keep, no_extra, Arch, Hooks, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The CodeShell class.
pub const CODESHELL: Arch = Arch {
    hf_names: &["CodeShellForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "codeshell",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::PosEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `CodeShellModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.req_u32(llm::CONTEXT_LENGTH, &["n_positions"])?;
    let n_embd = p.hp.req_u64(&["n_embd"])?;
    p.u32(llm::EMBEDDING_LENGTH, n_embd)?;
    let ff = n_embd
        .checked_mul(4)
        .ok_or_else(|| ConvertError::NotACount {
            key: "n_embd".into(),
            value: n_embd.to_string(),
        })?;
    p.u32(llm::FEED_FORWARD_LENGTH, ff)?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(attention::HEAD_COUNT, &["n_head"])?;
    p.req_u32(attention::HEAD_COUNT_KV, &["num_query_groups"])?;
    let eps = p.hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.file_type();
    p.f32(rope::FREQ_BASE, 10000.0);
    p.string(rope::SCALING_TYPE, "linear");
    p.f32(rope::SCALING_FACTOR, 1.0);
    Ok(())
}
