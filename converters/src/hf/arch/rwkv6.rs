//! RWKV-6 "Finch" (`Rwkv6Model` in `conversion/rwkv.py`): arch `rwkv6`, a recurrent model of
//! time-mix and channel-mix blocks.
//!
//! The config is read as written (transformers has no `rwkv6` class). The vocabulary is the
//! RWKV World file. Per tensor, in the checkpoint's order: every name without `.weight` /
//! `.bias` gets `.weight`; the token-shift LoRA's first matrix and both decay LoRA matrices
//! are transposed, the second token-shift matrix `[5, r, C]` becomes `[5, C, r]`; the decay
//! base and every token-shift mix are squeezed; the time-mix output and channel-mix value
//! matrices are divided by `2^(block / rescale_every)` when `rescale_every` is positive. A
//! block's five token-shift mixes of w, k, v, r, g are written as one
//! `time_mix_lerp_fused` `[5, 1, 1, C]` where the last of them is (a block that lacks one
//! writes none of them); `time_maa_x` stays on its own.
//!
//! QRWKV6 (`RWKV6Qwen2Model`, arch `rwkv6qwen2`) is the same time mixing under `self_attn.`
//! in a Qwen2 decoder (RMS norms, a gated MLP, grouped key/value heads): SentencePiece or
//! GPT-2 vocabulary, its own hparams, and its token-shift LoRA chunks stored in r, k, v, w, g
//! order, reordered to w, k, v, r, g after the RWKV-6 steps.

use ggufkit::gguf::keys::{attention, llm, wkv};

use super::{keep, no_extra, Arch, Entry, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind as Vocab;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The class reads config.json as written: AutoConfig knows no `rwkv6`.
fn as_written(_: &mut serde_json::Map<String, serde_json::Value>) -> bool {
    false
}

/// `Rwkv6ForCausalLM` (arch `rwkv6`).
pub const RWKV6: Arch = Arch {
    hf_names: &["Rwkv6ForCausalLM"],
    model_types: &[ModelType {
        name: "rwkv6",
        hf_classes: &["Rwkv6ForCausalLM"],
        defaults: &[],
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(as_written),
    }],
    composites: &[],
    gguf: "rwkv6",
    vocab: VocabKind::Own(world_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[RWKV6_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        mtp: Some(rwkv6_tensors),
        ..Rules::NONE
    },
    params: rwkv6_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `RWKV6Qwen2ForCausalLM` (arch `rwkv6qwen2`).
pub const RWKV6QWEN2: Arch = Arch {
    hf_names: &["RWKV6Qwen2ForCausalLM"],
    model_types: &[ModelType {
        name: "rwkv6qwen2",
        hf_classes: &["RWKV6Qwen2ForCausalLM"],
        defaults: &[],
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(as_written),
    }],
    composites: &[],
    gguf: "rwkv6qwen2",
    vocab: Vocab::Qwen2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[RWKV6QWEN2_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        mtp: Some(rwkv6qwen2_tensors),
        ..Rules::NONE
    },
    params: rwkv6qwen2_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// gguf-py's `MODEL_TENSORS[RWKV6QWEN2]`.
const RWKV6QWEN2_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::TimeMixW1,
    Tensor::TimeMixW2,
    Tensor::TimeMixLerpX,
    Tensor::TimeMixLerpK,
    Tensor::TimeMixLerpV,
    Tensor::TimeMixLerpR,
    Tensor::TimeMixLerpG,
    Tensor::TimeMixLerpW,
    Tensor::TimeMixLerpFused,
    Tensor::TimeMixFirst,
    Tensor::TimeMixDecay,
    Tensor::TimeMixDecayW1,
    Tensor::TimeMixDecayW2,
    Tensor::TimeMixKey,
    Tensor::TimeMixValue,
    Tensor::TimeMixReceptance,
    Tensor::TimeMixGate,
    Tensor::TimeMixLn,
    Tensor::TimeMixOutput,
    Tensor::FfnNorm,
    Tensor::FfnGate,
    Tensor::FfnDown,
    Tensor::FfnUp,
];

/// gguf-py's `MODEL_TENSORS[RWKV6]`.
const RWKV6_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::TokenEmbdNorm,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::AttnNorm2,
    Tensor::TimeMixW1,
    Tensor::TimeMixW2,
    Tensor::TimeMixLerpX,
    Tensor::TimeMixLerpK,
    Tensor::TimeMixLerpV,
    Tensor::TimeMixLerpR,
    Tensor::TimeMixLerpG,
    Tensor::TimeMixLerpW,
    Tensor::TimeMixLerpFused,
    Tensor::TimeMixFirst,
    Tensor::TimeMixDecay,
    Tensor::TimeMixDecayW1,
    Tensor::TimeMixDecayW2,
    Tensor::TimeMixKey,
    Tensor::TimeMixValue,
    Tensor::TimeMixReceptance,
    Tensor::TimeMixGate,
    Tensor::TimeMixLn,
    Tensor::TimeMixOutput,
    Tensor::ChannelMixLerpK,
    Tensor::ChannelMixLerpR,
    Tensor::ChannelMixKey,
    Tensor::ChannelMixReceptance,
    Tensor::ChannelMixValue,
];

/// `_set_vocab_rwkv_world`.
pub(super) fn world_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.rwkv_world()
}

/// RWKV isn't context limited: the class writes 2^20.
pub(super) const CONTEXT_LENGTH: u64 = 1 << 20;

/// `Rwkv6Model.set_gguf_parameters`.
fn rwkv6_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let head_size = hp.req_u64(&["head_size"])?;
    let hidden = hp.req_u64(&["hidden_size"])?;
    let eps = hp.req_f64(&["layer_norm_epsilon"])?;
    let rescale = rescale_every(hp)?;
    let ffn = match hp.get("intermediate_size") {
        None => return Err(hp.missing(&["intermediate_size"])),
        Some(serde_json::Value::Null) => hidden.saturating_mul(7) / 64 * 32,
        Some(_) => hp.req_u64(&["intermediate_size"])?,
    };
    let (mix_dim, decay_dim) = if hidden == 4096 { (64, 128) } else { (32, 64) };
    p.u32(llm::CONTEXT_LENGTH, CONTEXT_LENGTH)?;
    p.u32(llm::EMBEDDING_LENGTH, hidden)?;
    p.u32(llm::BLOCK_COUNT, hp.block_count()?)?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.u32(wkv::RESCALE_EVERY_N_LAYERS, rescale)?;
    p.u32(wkv::HEAD_SIZE, head_size)?;
    p.u32(wkv::TIME_MIX_EXTRA_DIM, mix_dim)?;
    p.u32(wkv::TIME_DECAY_EXTRA_DIM, decay_dim)?;
    p.u32(llm::FEED_FORWARD_LENGTH, ffn)?;
    p.file_type();
    p.u32(attention::HEAD_COUNT, 0)
}

/// `RWKV6Qwen2Model.set_gguf_parameters`.
fn rwkv6qwen2_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let heads = hp.req_u64(&["num_attention_heads"])?;
    let kv_heads = hp.req_u64(&["num_key_value_heads"])?;
    let hidden = hp.req_u64(&["hidden_size"])?;
    if heads == 0 {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "num_attention_heads",
            heads,
            "at least 1",
        ));
    }
    let eps = hp.req_f64(&["rms_norm_eps"])?;
    let ffn = hp.req_u64(&["intermediate_size"])?;
    let big = hidden >= 4096;
    let mix_dim = present_or(hp, "lora_rank_tokenshift", if big { 64 } else { 32 })?;
    let decay_dim = present_or(hp, "lora_rank_decay", if big { 128 } else { 64 })?;
    p.u32(llm::CONTEXT_LENGTH, CONTEXT_LENGTH)?;
    p.u32(llm::EMBEDDING_LENGTH, hidden)?;
    p.u32(llm::BLOCK_COUNT, hp.block_count()?)?;
    p.u32(wkv::HEAD_SIZE, hidden / heads)?;
    p.u32(wkv::TIME_MIX_EXTRA_DIM, mix_dim)?;
    p.u32(wkv::TIME_DECAY_EXTRA_DIM, decay_dim)?;
    p.u32(llm::FEED_FORWARD_LENGTH, ffn)?;
    p.file_type();
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    p.u32(wkv::TOKEN_SHIFT_COUNT, 1)?;
    p.u32(attention::HEAD_COUNT_KV, kv_heads)?;
    p.u32(attention::HEAD_COUNT, 0)
}

/// `hparams.get(key, default)`: the default only when the key is absent (a null is refused,
/// as the reference cannot write it).
pub(super) fn present_or(hp: &Hparams, key: &str, default: u64) -> Result<u64, ConvertError> {
    match hp.get(key) {
        None => Ok(default),
        Some(_) => hp.req_u64(&[key]),
    }
}

/// `rescale_every` (required).
fn rescale_every(hp: &Hparams) -> Result<u64, ConvertError> {
    hp.req_u64(&["rescale_every"])
}

/// The first all-digit part of a tensor name (`prepare_tensors`' block id).
pub(super) fn block_of(name: &str) -> Option<u64> {
    name.split('.')
        .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

/// The name without `.weight` / `.bias`, and that suffix.
pub(super) fn split_suffix(name: &str) -> (&str, &str) {
    for s in [".weight", ".bias"] {
        if let Some(stem) = name.strip_suffix(s) {
            return (stem, s);
        }
    }
    (name, "")
}

/// The name the class writes: `.weight` appended where the name has neither suffix.
pub(super) fn with_weight(stem: &str, suffix: &str) -> String {
    let suffix = if suffix.is_empty() { ".weight" } else { suffix };
    format!("{stem}{suffix}")
}

/// The token-shift mixes fused per block, in the fused tensor's order.
const FUSED: [&str; 5] = ["w", "k", "v", "r", "g"];

/// A block's fused token-shift mixes as they arrive (`lerp_weights`).
#[derive(Default)]
pub(super) struct LerpBuffer {
    slots: Vec<(u64, Vec<Option<Entry>>)>,
}

impl LerpBuffer {
    /// Puts member `index` (of `n`) of block `bid` in; the members in order once all `n` are.
    pub(super) fn put(&mut self, bid: u64, index: usize, n: usize, e: Entry) -> Option<Vec<Entry>> {
        let pos = match self.slots.iter().position(|(b, _)| *b == bid) {
            Some(p) => p,
            None => {
                self.slots.push((bid, (0..n).map(|_| None).collect()));
                self.slots.len() - 1
            }
        };
        let slots = &mut self.slots[pos].1;
        slots[index] = Some(e);
        if slots.iter().any(Option::is_none) {
            return None;
        }
        let (_, full) = self.slots.swap_remove(pos);
        Some(full.into_iter().flatten().collect())
    }
}

/// The fused tensor from its members' values.
pub(super) fn fused_entry(
    bid: u64,
    exprs: Vec<Expr>,
    first: &Entry,
) -> Result<Entry, ConvertError> {
    let name = format!("blk.{bid}.time_mix_lerp_fused.weight");
    Ok(Entry {
        expr: Expr::stack(&name, exprs)?,
        name,
        dtype: first.dtype,
        fp8_q8: false,
        type_bid: None,
    })
}

/// `Rwkv6Model.modify_tensors` over the whole list, in the checkpoint's order.
fn rwkv6_tensors(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    time_mix_tensors(hp, entries, false)
}

/// `RWKV6Qwen2Model.modify_tensors`: RWKV-6's, then the token-shift LoRA's chunks reordered.
fn rwkv6qwen2_tensors(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    time_mix_tensors(hp, entries, true)
}

/// The stored order of QRWKV6's token-shift LoRA chunks (r, k, v, w, g) taken to RWKV-6's
/// (w, k, v, r, g).
const QWEN2_CHUNKS: [u64; 5] = [3, 1, 2, 0, 4];

/// `view(5, -1, last)`, the chunks in [`QWEN2_CHUNKS`] order, back to the tensor's shape.
fn reorder_chunks(expr: Expr, name: &str) -> Result<Expr, ConvertError> {
    let shape = expr.shape().to_vec();
    let last = shape.last().copied().unwrap_or(1);
    let total: u64 = shape.iter().product();
    if last == 0 || !total.is_multiple_of(5 * last) {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("cannot view {shape:?} as 5 chunks"),
        });
    }
    let rows = total / (5 * last);
    let chunks = expr.reshape(name, vec![5, rows, last])?;
    let mut parts = Vec::with_capacity(5);
    for i in QWEN2_CHUNKS {
        let part = chunks.clone().narrow(name, 0, i, 1)?;
        parts.push(part.reshape(name, vec![rows, last])?);
    }
    Expr::stack(name, parts)?.reshape(name, shape)
}

/// RWKV-6's per-tensor steps (see the module documentation); `qwen2` adds QRWKV6's chunk
/// reordering.
fn time_mix_tensors(
    hp: &mut Hparams,
    entries: Vec<Entry>,
    qwen2: bool,
) -> Result<Vec<Entry>, ConvertError> {
    let rescale = hp.find_u64(&["rescale_every"])?.unwrap_or(0);
    let mut lerps = LerpBuffer::default();
    let mut out = Vec::with_capacity(entries.len());
    for mut e in entries {
        let bid = block_of(&e.name);
        let (stem, suffix) = split_suffix(&e.name);
        let (stem, suffix) = (stem.to_string(), suffix.to_string());
        let leaf = stem.rsplit('.').next().unwrap_or("").to_string();
        let parent = stem.rsplit('.').nth(1).unwrap_or("");
        let mut expr = e.expr;
        if matches!(
            leaf.as_str(),
            "time_maa_w1" | "time_decay_w1" | "time_decay_w2"
        ) {
            expr = expr.transpose(&e.name)?;
        }
        if leaf == "time_maa_w2" {
            expr = permute_021(expr, &e.name)?;
        }
        let lerp = leaf.starts_with("time_maa_") && !leaf.ends_with(['1', '2']);
        if leaf == "time_decay" || lerp {
            expr = expr.squeeze(&e.name)?;
        }
        let scaled = (parent == "attention" && leaf == "output")
            || (parent == "self_attn" && leaf == "o_proj")
            || (parent == "feed_forward" && leaf == "value");
        if rescale > 0 && scaled {
            if let Some(b) = bid {
                expr = expr.mul_scalar(0.5f64.powi(i32::try_from(b / rescale).unwrap_or(i32::MAX)));
            }
        }
        if qwen2 && (leaf == "time_maa_w1" || leaf == "time_maa_w2") {
            expr = reorder_chunks(expr, &e.name)?;
        }
        e.name = with_weight(&stem, &suffix);
        let member = FUSED.iter().position(|x| leaf == format!("time_maa_{x}"));
        let in_attention = parent == "attention" || parent == "self_attn";
        match (bid, member, in_attention) {
            (Some(b), Some(i), true) => {
                // `unsqueeze(0)` of each, stacked, then `unsqueeze(1)`.
                let shape = [&[1], expr.shape()].concat();
                e.expr = expr.reshape(&e.name, shape)?;
                if let Some(all) = lerps.put(b, i, FUSED.len(), e) {
                    let exprs: Vec<Expr> = all.iter().map(|m| m.expr.clone()).collect();
                    let mut fused = fused_entry(b, exprs, &all[0])?;
                    let s = fused.expr.shape();
                    let shape = [&s[..1], &[1], &s[1..]].concat();
                    fused.expr = fused.expr.reshape(&fused.name, shape)?;
                    out.push(fused);
                }
            }
            _ => {
                e.expr = expr;
                out.push(e);
            }
        }
    }
    Ok(out)
}

/// `permute(0, 2, 1)` of a 3-D tensor.
fn permute_021(expr: Expr, name: &str) -> Result<Expr, ConvertError> {
    if expr.shape().len() != 3 {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("expected 3 dimensions to permute, found {:?}", expr.shape()),
        });
    }
    expr.transpose_last2(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_ids_and_suffixes() {
        assert_eq!(block_of("rwkv.blocks.12.attention.key.weight"), Some(12));
        assert_eq!(block_of("head.weight"), None);
        assert_eq!(split_suffix("a.time_maa_x"), ("a.time_maa_x", ""));
        assert_eq!(with_weight("a.time_maa_x", ""), "a.time_maa_x.weight");
        assert_eq!(with_weight("a.ln_x", ".bias"), "a.ln_x.bias");
    }
}
