//! `GPT2LMHeadModel` and `RuGPT3XLForCausalLM` (arch `gpt2`, `conversion/gpt2.py`).
//!
//! GPT-2: Conv1D weights (`c_attn`, `c_proj`, `c_fc`) are stored `[in, out]` and are
//! transposed; the hparams are GPT-2's own short list.
//!
//! ruGPT-3 XL (the HF port, remote code: config.json read as written) is a plain text
//! model of the same GGUF architecture: the generic hparams, no transposes, and separate
//! `self_attn.{q,k,v}_proj` weights and biases, concatenated by rows into `attn_qkv`
//! (q, k, v) where the last of a block's three arrives; parts left without their partners at
//! the end (or under a block number past the block count) fail the conversion, as they fail
//! the reference.

use super::{keep, no_extra, Arch, Entry, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;
use ggufkit::gguf::keys::{attention, llm};

/// The GPT-2 class.
pub const GPT2: Arch = Arch {
    hf_names: &["GPT2LMHeadModel"],
    model_types: &[ModelType {
        name: "gpt2",
        hf_classes: &["GPT2LMHeadModel"],
        defaults: defaults! {
            "vocab_size" => 50257,
            "n_positions" => 1024,
            "n_embd" => 768,
            "n_layer" => 12,
            "n_head" => 12,
            "layer_norm_epsilon" => 1e-5,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "gpt2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::PosEmbd,
        Tensor::Output,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        transpose: &[".c_attn.weight", ".c_proj.weight", ".c_fc.weight"],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn params(p: &mut Params) -> Result<(), ConvertError> {
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::CONTEXT_LENGTH, &["n_ctx"])?;
    let n_embd = p.hp.req_u64(&["n_embd"])?;
    p.u32(llm::EMBEDDING_LENGTH, n_embd)?;
    p.u32(llm::FEED_FORWARD_LENGTH, 4 * n_embd)?;
    p.req_u32(attention::HEAD_COUNT, &["n_head"])?;
    let eps = p.hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.file_type();
    Ok(())
}

/// The ruGPT-3 XL class.
pub const RUGPT3XL: Arch = Arch {
    hf_names: &["RuGPT3XLForCausalLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "gpt2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: GPT2.tensors,
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        mtp: Some(fuse_qkv),
        ..Rules::NONE
    },
    params: rugpt3xl_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `TextModel.set_gguf_parameters`.
fn rugpt3xl_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()
}

/// Which of q, k, v a tensor is (`.self_attn.q_proj.` …), and whether it is the weight
/// (a name ending with `.weight`) or the bias (any other).
fn qkv_part(name: &str) -> Option<(usize, &'static str)> {
    let part = [
        ".self_attn.q_proj.",
        ".self_attn.k_proj.",
        ".self_attn.v_proj.",
    ]
    .iter()
    .position(|m| name.contains(m))?;
    Some((
        part,
        if name.ends_with(".weight") {
            "weight"
        } else {
            "bias"
        },
    ))
}

/// `RuGPT3XLModel.modify_tensors` / `prepare_tensors`: each block's q, k and v (weights
/// and biases apart) concatenated by rows into `blk.{bid}.attn_qkv.{weight,bias}`, written
/// where the last of the three arrives.
fn fuse_qkv(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    let blocks = hp.block_count()?;
    let mut pending: Vec<(u64, &'static str, [Option<Entry>; 3])> = Vec::new();
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let Some((part, suffix)) = qkv_part(&e.name) else {
            out.push(e);
            continue;
        };
        let bid = block_id(&e.name).ok_or_else(|| ConvertError::Tensor {
            name: e.name.clone(),
            problem: "a q/k/v projection outside any block".into(),
        })?;
        if bid >= blocks {
            return Err(ConvertError::Tensor {
                name: e.name.clone(),
                problem: format!("block {bid} of a model of {blocks} blocks"),
            });
        }
        let at = match pending
            .iter()
            .position(|(b, s, _)| *b == bid && *s == suffix)
        {
            Some(i) => i,
            None => {
                pending.push((bid, suffix, [None, None, None]));
                pending.len() - 1
            }
        };
        // A second tensor for the same slot replaces the first, as the class's dict does.
        pending[at].2[part] = Some(e);
        if pending[at].2.iter().all(Option::is_some) {
            let (_, _, parts) = pending.remove(at);
            let parts: Vec<Entry> = parts.into_iter().flatten().collect();
            let name = format!("blk.{bid}.attn_qkv.{suffix}");
            let first = &parts[0];
            let (dtype, fp8_q8) = (first.dtype, first.fp8_q8);
            let expr = Expr::cat_rows(&name, parts.into_iter().map(|p| p.expr).collect())?;
            out.push(Entry {
                name,
                expr,
                dtype,
                fp8_q8,
                type_bid: None,
            });
        }
    }
    if let Some((bid, suffix, parts)) = pending.first() {
        let have: Vec<&str> = parts
            .iter()
            .zip(["q", "k", "v"])
            .filter(|(p, _)| p.is_some())
            .map(|(_, n)| n)
            .collect();
        return Err(ConvertError::Other(format!(
            "unprocessed Q/K/V parts: block {bid} has only {} of its {suffix}",
            have.join(", ")
        )));
    }
    Ok(out)
}
