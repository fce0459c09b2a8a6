//! RWKV-7 "Goose" (`Rwkv7Model` in `conversion/rwkv.py`): arch `rwkv7`.
//!
//! The config is read as written (transformers has no `rwkv7` class), in either spelling:
//! BlinkDL's (`head_size`, `layer_norm_epsilon`, `lora_rank_*`) or fla-hub's (`head_dim`,
//! `norm_eps`, `*_low_rank_dim`); an absent or null LoRA rank is derived from the hidden
//! size. The vocabulary is the RWKV World file.
//!
//! The class first unifies the names (`blocks` → `layers`, `ffn` → `feed_forward`,
//! `self_attn` / `attn` → `attention`, no `time_mixer.`, `feed_forward_norm` → `ln2`,
//! `g_norm` → `ln_x`). Then, per tensor in the checkpoint's order: fla-hub's LoRA layers
//! `X_lora.lora.{0,2}.weight` / `.lora.2.bias` become `X1` / `X2` / `X0` (and once one is seen,
//! LoRA matrices are no longer transposed: BlinkDL's are stored the other way round); the
//! value-residual LoRA of block 0 is dropped (unused); the token-shift mixes `attention.x_*`
//! (r, w, k, v, a and, with `wkv_has_gate`, g) are stacked into `time_mix_lerp_fused` where the
//! last of a block arrives (an already fused `x_x` is reshaped to `[n, 1, 1, C]`); every other
//! tensor is squeezed, `r_k` flattened, and block 0's in-context learning-rate LoRA is written
//! a second time as its value-residual LoRA, which llama.cpp expects in every block.
//!
//! ARWKV-7 (`ARwkv7Model`, `RwkvHybridForCausalLM`, arch `arwkv7`) is the same time mixing
//! (under `self_attn.time_mixer.`) in a Qwen2 decoder: SentencePiece or GPT-2 vocabulary,
//! `wkv_version` 7 required, fixed LoRA ranks (the gate's 0 without `wkv_has_gate`) and one
//! token shift.

use ggufkit::gguf::keys::{attention, llm, wkv};

use super::rwkv6::{block_of, fused_entry, split_suffix, with_weight, world_vocab, LerpBuffer};
use super::{no_extra, Arch, Entry, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The class reads config.json as written: AutoConfig knows no `rwkv7`.
fn as_written(_: &mut serde_json::Map<String, serde_json::Value>) -> bool {
    false
}

/// `Rwkv7ForCausalLM`, `RWKV7ForCausalLM` (arch `rwkv7`).
pub const RWKV7: Arch = Arch {
    hf_names: &["Rwkv7ForCausalLM", "RWKV7ForCausalLM"],
    model_types: &[ModelType {
        name: "rwkv7",
        hf_classes: &["Rwkv7ForCausalLM", "RWKV7ForCausalLM"],
        defaults: &[],
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(as_written),
    }],
    composites: &[],
    gguf: "rwkv7",
    vocab: VocabKind::Own(world_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: RWKV7_TENSORS,
    tensor_overrides: &[],
    filter: unify_names,
    rules: Rules {
        mtp: Some(rwkv7_tensors),
        ..Rules::NONE
    },
    params: rwkv7_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `RwkvHybridForCausalLM` (arch `arwkv7`).
pub const ARWKV7: Arch = Arch {
    hf_names: &["RwkvHybridForCausalLM"],
    model_types: &[ModelType {
        name: "rwkv_hybrid",
        hf_classes: &["RwkvHybridForCausalLM"],
        defaults: &[],
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(as_written),
    }],
    composites: &[],
    gguf: "arwkv7",
    vocab: VocabKind::Qwen2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: ARWKV7_TENSORS,
    tensor_overrides: &[],
    filter: unify_names,
    rules: Rules {
        mtp: Some(rwkv7_tensors),
        ..Rules::NONE
    },
    params: arwkv7_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The embeddings, the output and the first block norm, which every RWKV-7 layout has.
const RWKV7_HEAD: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::TokenEmbdNorm,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
];

/// RWKV-7's time mixing (attention), shared by RWKV-7 and ARWKV-7.
const RWKV7_TIME_MIX: &[Tensor] = &[
    Tensor::TimeMixLerpFused,
    Tensor::TimeMixW0,
    Tensor::TimeMixW1,
    Tensor::TimeMixW2,
    Tensor::TimeMixA0,
    Tensor::TimeMixA1,
    Tensor::TimeMixA2,
    Tensor::TimeMixV0,
    Tensor::TimeMixV1,
    Tensor::TimeMixV2,
    Tensor::TimeMixG1,
    Tensor::TimeMixG2,
    Tensor::TimeMixKK,
    Tensor::TimeMixKA,
    Tensor::TimeMixRK,
    Tensor::TimeMixKey,
    Tensor::TimeMixValue,
    Tensor::TimeMixReceptance,
    Tensor::TimeMixLn,
    Tensor::TimeMixOutput,
];

/// gguf-py's `MODEL_TENSORS[ARWKV7]`: RWKV-7's time mixing with a gated feed-forward.
const ARWKV7_TENSORS: &[&[Tensor]] = &[
    RWKV7_HEAD,
    RWKV7_TIME_MIX,
    &[
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ],
];

/// `ARwkv7Model.set_gguf_parameters`.
fn arwkv7_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let hidden = hp.req_u64(&["hidden_size"])?;
    let head_size = hp.req_u64(&["head_size"])?;
    let eps = hp.req_f64(&["rms_norm_eps"])?;
    let ffn = hp.req_u64(&["intermediate_size"])?;
    let gate = match hp.get("wkv_has_gate") {
        None => return Err(hp.missing(&["wkv_has_gate"])),
        Some(v) => crate::hf::tokenizer::json_truthy(v),
    };
    let version = hp.get("wkv_version");
    if version.and_then(crate::hf::config::json_u64) != Some(7) {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "wkv_version",
            version.map_or("absent".to_string(), ToString::to_string),
            "7",
        ));
    }
    p.u32(llm::CONTEXT_LENGTH, super::rwkv6::CONTEXT_LENGTH)?;
    p.u32(llm::EMBEDDING_LENGTH, hidden)?;
    p.u32(llm::BLOCK_COUNT, hp.block_count()?)?;
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    p.u32(wkv::HEAD_SIZE, head_size)?;
    write_ranks(p, [64, 64, 32, if gate { 128 } else { 0 }])?;
    p.u32(llm::FEED_FORWARD_LENGTH, ffn)?;
    p.file_type();
    p.u32(wkv::TOKEN_SHIFT_COUNT, 1)?;
    p.u32(attention::HEAD_COUNT, 0)
}

/// gguf-py's `MODEL_TENSORS[RWKV7]`.
pub(super) const RWKV7_TENSORS: &[&[Tensor]] = &[
    RWKV7_HEAD,
    &[Tensor::AttnNorm2],
    RWKV7_TIME_MIX,
    &[
        Tensor::ChannelMixLerpK,
        Tensor::ChannelMixKey,
        Tensor::ChannelMixValue,
    ],
];

/// `Rwkv7Model.filter_tensors`' renames.
pub(super) fn unify_names(name: &str) -> Option<String> {
    let n = name
        .replace("blocks", "layers")
        .replace("ffn", "feed_forward")
        .replace("self_attn", "attention")
        .replace("attn", "attention")
        .replace("time_mixer.", "")
        .replace("feed_forward_norm", "ln2")
        .replace("g_norm", "ln_x");
    Some(n)
}

/// `calc_lora_rank`: `max(1, round(hidden^exponent * multiplier / 32)) * 32`, rounding half
/// to even as Python's `round` does.
pub(super) fn calc_lora_rank(hidden: u64, exponent: f64, multiplier: f64) -> u64 {
    let r = ((hidden as f64).powf(exponent) * multiplier / 32.0).round_ties_even();
    (r.max(1.0) as u64).saturating_mul(32)
}

/// The four LoRA ranks (decay, in-context learning rate, value residual, gate): one
/// spelling's keys when all four are present, else the other's.
fn lora_ranks(hp: &Hparams, hidden: u64) -> Result<[u64; 4], ConvertError> {
    const BLINK: [&str; 4] = [
        "lora_rank_decay",
        "lora_rank_iclr",
        "lora_rank_value_residual_mix",
        "lora_rank_gate",
    ];
    const FLA: [&str; 4] = [
        "decay_low_rank_dim",
        "a_low_rank_dim",
        "v_low_rank_dim",
        "gate_low_rank_dim",
    ];
    const DERIVED: [(f64, f64); 4] = [(0.5, 1.8), (0.5, 1.8), (0.5, 1.3), (0.8, 0.6)];
    let keys = if BLINK.iter().all(|k| hp.get(k).is_some()) {
        BLINK
    } else {
        FLA
    };
    let mut out = [0; 4];
    for (i, key) in keys.iter().enumerate() {
        if hp.get(key).is_none() {
            return Err(hp.missing(&[key]));
        }
        let (e, m) = DERIVED[i];
        out[i] = match hp.find_u64(&[key])? {
            Some(v) => v,
            None => calc_lora_rank(hidden, e, m),
        };
    }
    Ok(out)
}

/// `Rwkv7Model.set_gguf_parameters`.
fn rwkv7_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let (head_size, eps) =
        if hp.get("head_size").is_some() && hp.get("layer_norm_epsilon").is_some() {
            (
                hp.req_u64(&["head_size"])?,
                hp.req_f64(&["layer_norm_epsilon"])?,
            )
        } else {
            (hp.req_u64(&["head_dim"])?, hp.req_f64(&["norm_eps"])?)
        };
    let hidden = hp.req_u64(&["hidden_size"])?;
    let ffn = intermediate_or(hp, hidden.saturating_mul(4))?;
    let ranks = lora_ranks(hp, hidden)?;
    p.u32(llm::CONTEXT_LENGTH, super::rwkv6::CONTEXT_LENGTH)?;
    p.u32(llm::EMBEDDING_LENGTH, hidden)?;
    p.u32(llm::BLOCK_COUNT, hp.block_count()?)?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.u32(wkv::HEAD_SIZE, head_size)?;
    write_ranks(p, ranks)?;
    p.u32(llm::FEED_FORWARD_LENGTH, ffn)?;
    p.file_type();
    p.u32(attention::HEAD_COUNT, 0)
}

/// `intermediate_size` (required), `default` when null.
pub(super) fn intermediate_or(hp: &Hparams, default: u64) -> Result<u64, ConvertError> {
    match hp.get("intermediate_size") {
        None => Err(hp.missing(&["intermediate_size"])),
        Some(serde_json::Value::Null) => Ok(default),
        Some(_) => hp.req_u64(&["intermediate_size"]),
    }
}

/// The four LoRA rank keys, in the class's order.
pub(super) fn write_ranks(p: &mut Params, ranks: [u64; 4]) -> Result<(), ConvertError> {
    p.u32(wkv::DECAY_LORA_RANK, ranks[0])?;
    p.u32(wkv::ICLR_LORA_RANK, ranks[1])?;
    p.u32(wkv::VALUE_RESIDUAL_MIX_LORA_RANK, ranks[2])?;
    p.u32(wkv::GATE_LORA_RANK, ranks[3])
}

/// fla-hub's LoRA layer names as the class renames them.
fn lora_rename(name: &str) -> String {
    name.replace("_lora.lora.0.weight", "1.weight")
        .replace("_lora.lora.2.weight", "2.weight")
        .replace("_lora.lora.2.bias", "0.weight")
}

/// The token-shift mixes of a block, in the fused tensor's order.
fn lerp_list(hp: &Hparams) -> &'static [&'static str] {
    let gate = hp
        .get("wkv_has_gate")
        .is_none_or(crate::hf::tokenizer::json_truthy);
    if gate {
        &["r", "w", "k", "v", "a", "g"]
    } else {
        &["r", "w", "k", "v", "a"]
    }
}

/// Whether `stem` is block `bid`'s LoRA tensor `attention.{x}{n}` for x in `xs`, n in `ns`.
fn is_lora(stem: &str, bid: u64, xs: &str, ns: &str) -> bool {
    let Some(rest) = stem.strip_prefix(&format!("model.layers.{bid}.attention.")) else {
        return false;
    };
    let b = rest.as_bytes();
    b.len() == 2 && xs.as_bytes().contains(&b[0]) && ns.as_bytes().contains(&b[1])
}

/// `Rwkv7Model.modify_tensors` over the whole list, in the checkpoint's order.
pub(super) fn rwkv7_tensors(
    hp: &mut Hparams,
    entries: Vec<Entry>,
) -> Result<Vec<Entry>, ConvertError> {
    let lerp = lerp_list(hp);
    let mut needs_transpose = true;
    let mut lerps = LerpBuffer::default();
    let mut out = Vec::with_capacity(entries.len());
    for mut e in entries {
        if e.name.contains("_lora.lora") {
            needs_transpose = false;
        }
        e.name = lora_rename(&e.name);
        let bid = block_of(&e.name);
        let (stem, suffix) = split_suffix(&e.name);
        let (stem, suffix) = (stem.to_string(), suffix.to_string());
        if bid == Some(0) && is_lora(&stem, 0, "v", "012") {
            continue;
        }
        if let Some(b) = bid.filter(|_| e.name.contains("attention.x_")) {
            if e.name.contains("attention.x_x") {
                let name = format!("blk.{b}.time_mix_lerp_fused.weight");
                let n = lerp.len() as u64;
                let total: u64 = e.expr.shape().iter().product();
                if !total.is_multiple_of(n) {
                    return Err(ConvertError::Tensor {
                        name: e.name,
                        problem: format!("cannot split {total} values into {n} mixes"),
                    });
                }
                e.expr = e.expr.reshape(&name, vec![n, 1, 1, total / n])?;
                e.name = name;
                out.push(e);
            } else if let Some(i) = lerp
                .iter()
                .position(|x| e.name == format!("model.layers.{b}.attention.x_{x}"))
            {
                if let Some(all) = lerps.put(b, i, lerp.len(), e) {
                    let exprs: Vec<Expr> = all.iter().map(|m| m.expr.clone()).collect();
                    out.push(fused_entry(b, exprs, &all[0])?);
                }
            }
            continue;
        }
        let mut expr = e.expr.squeeze(&e.name)?;
        if needs_transpose && bid.is_some_and(|b| is_lora(&stem, b, "wavg", "12")) {
            expr = expr.transpose(&e.name)?;
        }
        if bid.is_some_and(|b| stem == format!("model.layers.{b}.attention.r_k")) {
            let n = expr.shape().iter().product();
            expr = expr.reshape(&e.name, vec![n])?;
        }
        e.name = with_weight(&stem, &suffix);
        if bid == Some(0) && is_lora(&stem, 0, "a", "012") {
            let copy = stem.replace(".attention.a", ".attention.v");
            out.push(Entry {
                name: with_weight(&copy, &suffix),
                expr: expr.clone(),
                dtype: e.dtype,
                fp8_q8: e.fp8_q8,
                type_bid: e.type_bid,
            });
        }
        e.expr = expr;
        out.push(e);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lora_ranks_round_half_to_even() {
        assert_eq!(calc_lora_rank(2048, 0.5, 1.8), 96);
        assert_eq!(calc_lora_rank(16, 0.5, 1.8), 32);
        assert_eq!(calc_lora_rank(4096, 0.8, 0.6), 480);
        assert_eq!(calc_lora_rank(768, 0.5, 1.3), 32);
    }

    #[test]
    fn names_are_unified_as_the_class_does() {
        assert_eq!(
            unify_names("model.layers.1.attn.g_norm.weight").unwrap(),
            "model.layers.1.attention.ln_x.weight"
        );
        assert_eq!(
            unify_names("model.layers.1.ffn_norm.bias").unwrap(),
            "model.layers.1.ln2.bias"
        );
        assert_eq!(
            lora_rename("model.layers.1.attention.w_lora.lora.2.bias"),
            "model.layers.1.attention.w0.weight"
        );
        assert!(is_lora("model.layers.0.attention.v2", 0, "v", "012"));
        assert!(!is_lora("model.layers.0.attention.v_proj", 0, "v", "012"));
    }
}
