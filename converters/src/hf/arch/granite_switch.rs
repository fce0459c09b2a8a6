//! Granite Switch: `GraniteSwitchForCausalLM` (`conversion/granite.py`'s
//! `GraniteSwitchModel`, a Granite-MoE subclass), arch `graniteswitch`.
//!
//! Remote code (`model_type` `granite_switch`): config.json is read as written. A dense,
//! all-attention Granite whose projections carry `num_adapters` embedded LoRA adapters,
//! selected per token by control tokens. The block count is one below the config's (the
//! weightless switch reserves one cache slot); the switch module (`model.switch.*`, `switch.*`)
//! and the control-token buffers (`adapter_token_ids`, `control_to_substitute_lut`) are not
//! written.
//!
//! Every tensor gets its GGUF name here (nothing goes through the name table):
//! - the fused `self_attn.qkv_proj.base_layer.weight` is written as `attn_qkv` with its q and
//!   k row blocks permuted for rope (sizes from `projection_head_dim`, else `head_dim`, else
//!   `hidden_size / num_attention_heads`); `o_proj` as `attn_output`;
//! - `shared_mlp.input_linear.base_layer.weight` is split into `ffn_gate` / `ffn_up` halves
//!   (`shared_intermediate_size` rows each), `shared_mlp.output_linear` is `ffn_down`;
//! - each adapter stack (`lora_A` / `lora_B`, or per fused slice `lora_A_slices.N` /
//!   `lora_B_slices.N`: q, k, v or gate, up) of shape `[adapters, 1, …]` loses its second
//!   dimension and gets a zero adapter in front (slot 0), as `<tensor>.lora_a` /
//!   `<tensor>.lora_b`; the q and k `B` stacks are permuted per adapter like their base rows;
//! - the norms, `embed_tokens` and `norm` by their usual names; `lm_head` is dropped (tied).
//!
//! Any other tensor is refused, as the reference raises.
//!
//! Hparams: Granite-MoE's, `expert_used_count` 0 when the config has no
//! `num_local_experts`, then the adapter count, LoRA rank, the activating and substitute
//! token ids, and the router gain (`control_token_gain`, default 15).

use ggufkit::gguf::keys::{adapters, llm};
use serde_json::Value as Json;

use super::{granite, llama, Arch, Hooks, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, DECODER};
use crate::hf::params::{Params, BLOCK_COUNT_KEYS};
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `GraniteSwitchForCausalLM`.
pub const GRANITE_SWITCH: Arch = Arch {
    hf_names: &["GraniteSwitchForCausalLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "graniteswitch",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[crate::hf::names::Tensor::AttnQkv]],
    tensor_overrides: &[],
    filter: granite::filter,
    rules: Rules {
        hook: Some(hook),
        ..Rules::NONE
    },
    params,
    extra: llama::no_rope_freqs,
    hooks: Hooks {
        adjust: Some(one_block_less),
        ..Hooks::NONE
    },
};

/// The constructor's `block_count - 1`, on the key the block count is read from.
fn one_block_less(hp: &mut Hparams) -> Result<(), ConvertError> {
    let Some(key) = BLOCK_COUNT_KEYS
        .iter()
        .find(|k| hp.map.get(**k).is_some_and(|v| !v.is_null()))
    else {
        return Err(hp.missing(BLOCK_COUNT_KEYS));
    };
    let v = &hp.map[*key];
    let n =
        json_u64(v).ok_or_else(|| ConvertError::wrong_type(&hp.path, *key, "a block count", v))?;
    if n == 0 {
        return Err(ConvertError::out_of_range(
            &hp.path,
            *key,
            n,
            "at least 1 (the switch takes one of the blocks)",
        ));
    }
    hp.map.insert((*key).to_string(), Json::from(n - 1));
    Ok(())
}

fn terr(name: &str, problem: impl Into<String>) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem: problem.into(),
    }
}

/// An integer hparam read as the constructor does (`int(...)`).
fn int(hp: &Hparams, key: &str) -> Result<u64, ConvertError> {
    match hp.get(key) {
        None => Err(hp.missing(&[key])),
        Some(v) => {
            json_u64(v).ok_or_else(|| ConvertError::wrong_type(&hp.path, key, "an integer", v))
        }
    }
}

/// A truthy integer hparam, else `None` (Python's `a or b`).
fn truthy_u64(hp: &Hparams, key: &str) -> Option<u64> {
    hp.get(key).and_then(json_u64).filter(|v| *v != 0)
}

/// The attention sizes: heads, KV heads and the q and k/v row counts.
struct Sizes {
    n_head: u64,
    n_kv: u64,
    q: u64,
    kv: u64,
}

fn sizes(hp: &Hparams) -> Result<Sizes, ConvertError> {
    let n_head = int(hp, "num_attention_heads")?;
    let n_kv = int(hp, "num_key_value_heads")?;
    let head_dim = match truthy_u64(hp, "projection_head_dim").or(truthy_u64(hp, "head_dim")) {
        Some(d) => d,
        None => {
            let hidden = int(hp, "hidden_size")?;
            if n_head == 0 {
                return Err(ConvertError::out_of_range(
                    &hp.path,
                    "num_attention_heads",
                    0,
                    "at least 1",
                ));
            }
            hidden / n_head
        }
    };
    Ok(Sizes {
        n_head,
        n_kv,
        q: n_head * head_dim,
        kv: n_kv * head_dim,
    })
}

/// Rows `[start, start + len)` of a matrix.
fn rows(name: &str, e: &Expr, start: u64, len: u64) -> Result<Expr, ConvertError> {
    e.clone().narrow(name, 0, start, len)
}

/// Splits the rows of `e` into consecutive blocks of these sizes (`split(sizes, dim=0)`).
fn split_rows(name: &str, e: &Expr, sizes: &[u64]) -> Result<Vec<Expr>, ConvertError> {
    let total: u64 = sizes.iter().sum();
    if e.shape().first().copied() != Some(total) {
        return Err(terr(
            name,
            format!("shape {:?} cannot be split into rows {sizes:?}", e.shape()),
        ));
    }
    let mut out = Vec::with_capacity(sizes.len());
    let mut at = 0;
    for &n in sizes {
        out.push(rows(name, e, at, n)?);
        at += n;
    }
    Ok(out)
}

/// Llama's rope permutation of a q or k row block (`n_head` heads).
fn permute(name: &str, e: Expr, n_head: u64) -> Result<Expr, ConvertError> {
    e.permute_heads(name, n_head)
}

/// `[adapters, 1, …]` without its second dimension.
fn squeeze1(name: &str, e: Expr) -> Result<Expr, ConvertError> {
    let s = e.shape().to_vec();
    if s.len() < 2 || s[1] != 1 {
        return Err(terr(
            name,
            format!("an adapter stack of shape {s:?} has no second dimension of 1"),
        ));
    }
    let mut shape = vec![s[0]];
    shape.extend_from_slice(&s[2..]);
    e.reshape(name, shape)
}

/// A zero adapter in front of a `[adapters, …]` stack.
fn with_zero_slot(name: &str, e: Expr) -> Result<Expr, ConvertError> {
    let mut shape = e.shape().to_vec();
    shape[0] = 1;
    let count = shape.iter().product::<u64>() as usize;
    let zero = Expr::constant(vec![0.0; count], shape);
    Expr::cat_rows(name, vec![zero, e])
}

/// `_lora_a`: squeezed, zero slot first.
fn lora_a(name: &str, e: Expr) -> Result<Expr, ConvertError> {
    with_zero_slot(name, squeeze1(name, e)?)
}

/// `_lora_b`: squeezed, each adapter's rows permuted for rope when `n_head` is given, zero
/// slot first.
fn lora_b(name: &str, e: Expr, n_head: Option<u64>) -> Result<Expr, ConvertError> {
    let b = squeeze1(name, e)?;
    let b = match n_head {
        None => b,
        Some(n) => {
            let s = b.shape().to_vec();
            if s.len() != 3 {
                return Err(terr(
                    name,
                    format!("an adapter stack of shape {s:?} is not 3-D"),
                ));
            }
            let parts = (0..s[0])
                .map(|i| {
                    let one = b.clone().narrow(name, 0, i, 1)?;
                    let one = one.reshape(name, vec![s[1], s[2]])?;
                    permute(name, one, n)
                })
                .collect::<Result<Vec<_>, _>>()?;
            Expr::stack(name, parts)?
        }
    };
    with_zero_slot(name, b)
}

/// The slot number after `lora_A_slices.` / `lora_B_slices.`.
fn slot(name: &str) -> Result<u64, ConvertError> {
    name.rsplit('.')
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| terr(name, "no slot number after the slice list"))
}

/// An unfused projection with adapters (`o_proj`, `output_linear`): its base weight, `lora_A`
/// and `lora_B` under the GGUF tensor `base` (`blk.N.attn_output`).
fn single(name: &str, expr: Expr, base: String, what: &str) -> Result<Modified, ConvertError> {
    let out = if name.ends_with("base_layer.weight") {
        (format!("{base}.weight"), expr)
    } else if name.ends_with("lora_A") {
        (format!("{base}.lora_a"), lora_a(name, expr)?)
    } else if name.ends_with("lora_B") {
        (format!("{base}.lora_b"), lora_b(name, expr, None)?)
    } else {
        return Err(terr(name, format!("unexpected {what} tensor")));
    };
    Ok(Modified::Named(vec![out]))
}

/// `GraniteSwitchModel.modify_tensors`.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let bare = name.rsplit('.').next().unwrap_or("");
    if name.starts_with("model.switch.")
        || name.starts_with("switch.")
        || matches!(bare, "adapter_token_ids" | "control_to_substitute_lut")
    {
        return Ok(Modified::Drop);
    }
    let bid = block_id(&name);
    let blk = |base: &str, suffix: &str| format!("blk.{}.{base}{suffix}", bid.unwrap_or(0));
    let out = |v: Vec<(String, Expr)>| Ok(Modified::Named(v));
    let bad_slot = |s: u64| terr(&name, format!("no slice {s} in this fused projection"));
    if name.contains("self_attn.qkv_proj") {
        let z = sizes(hp)?;
        if name.ends_with("base_layer.weight") {
            let parts = split_rows(&name, &expr, &[z.q, z.kv, z.kv])?;
            let mut it = parts.into_iter();
            let (q, k, v) = (it.next(), it.next(), it.next());
            let (Some(q), Some(k), Some(v)) = (q, k, v) else {
                return Err(terr(&name, "the q/k/v split failed"));
            };
            let q = permute(&name, q, z.n_head)?;
            let k = permute(&name, k, z.n_kv)?;
            let fused = Expr::cat_rows(&name, vec![q, k, v])?;
            return out(vec![(blk("attn_qkv", ".weight"), fused)]);
        }
        if name.contains("lora_A_slices.") {
            let s = slot(&name)?;
            let key = ["attn_q", "attn_k", "attn_v"]
                .get(s as usize)
                .ok_or_else(|| bad_slot(s))?;
            return out(vec![(blk(key, ".lora_a"), lora_a(&name, expr)?)]);
        }
        if name.contains("lora_B_slices.") {
            let s = slot(&name)?;
            let (key, heads) = match s {
                0 => ("attn_q", Some(z.n_head)),
                1 => ("attn_k", Some(z.n_kv)),
                2 => ("attn_v", None),
                _ => return Err(bad_slot(s)),
            };
            return out(vec![(blk(key, ".lora_b"), lora_b(&name, expr, heads)?)]);
        }
        return Err(terr(&name, "unexpected qkv_proj tensor"));
    }
    if name.contains("self_attn.o_proj") {
        return single(&name, expr, blk("attn_output", ""), "o_proj");
    }
    if name.contains("shared_mlp.input_linear") {
        let ffn = int(hp, "shared_intermediate_size")?;
        if name.ends_with("base_layer.weight") {
            let parts = split_rows(&name, &expr, &[ffn, ffn])?;
            let mut it = parts.into_iter();
            let (Some(gate), Some(up)) = (it.next(), it.next()) else {
                return Err(terr(&name, "the gate/up split failed"));
            };
            return out(vec![
                (blk("ffn_gate", ".weight"), gate),
                (blk("ffn_up", ".weight"), up),
            ]);
        }
        let key = |s: u64| {
            ["ffn_gate", "ffn_up"]
                .get(s as usize)
                .copied()
                .ok_or_else(|| bad_slot(s))
        };
        if name.contains("lora_A_slices.") {
            let k = key(slot(&name)?)?;
            return out(vec![(blk(k, ".lora_a"), lora_a(&name, expr)?)]);
        }
        if name.contains("lora_B_slices.") {
            let k = key(slot(&name)?)?;
            return out(vec![(blk(k, ".lora_b"), lora_b(&name, expr, None)?)]);
        }
        return Err(terr(&name, "unexpected shared_mlp.input_linear tensor"));
    }
    if name.contains("shared_mlp.output_linear") {
        return single(&name, expr, blk("ffn_down", ""), "shared_mlp.output_linear");
    }
    if bid.is_some()
        && name.contains(".layers.")
        && (name.contains("input_layernorm") || name.contains("post_attention_layernorm"))
    {
        let key = if name.contains("input_layernorm") {
            "attn_norm"
        } else {
            "ffn_norm"
        };
        return out(vec![(blk(key, ".weight"), expr)]);
    }
    match name.as_str() {
        "model.embed_tokens.weight" | "embed_tokens.weight" => {
            out(vec![("token_embd.weight".into(), expr)])
        }
        "model.norm.weight" | "norm.weight" => out(vec![("output_norm.weight".into(), expr)]),
        "lm_head.weight" => Ok(Modified::Drop),
        _ => Err(terr(&name, "not a Granite Switch tensor")),
    }
}

/// `GraniteSwitchModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    granite::moe_params(p)?;
    let hp = p.hp;
    let experts = hp.get("num_local_experts").is_some_and(granite::truthy);
    if !experts {
        p.u32(llm::EXPERT_USED_COUNT, 0)?;
    }
    p.u32(adapters::COUNT, int(hp, "num_adapters")?)?;
    p.u32(adapters::LORA_RANK, int(hp, "max_lora_rank")?)?;
    for (key, suffix) in [
        ("adapter_token_ids", adapters::TOKEN_IDS_ACTIVATE),
        (
            "adapter_substitute_token_ids",
            adapters::TOKEN_IDS_SUBSTITUTE,
        ),
    ] {
        match hp.get(key) {
            None => return Err(hp.missing(&[key])),
            Some(v @ Json::Array(_)) => p.u32_or_list(suffix, v)?,
            Some(v) => {
                return Err(ConvertError::wrong_type(
                    &hp.path,
                    key,
                    "a list of token ids",
                    v,
                ))
            }
        }
    }
    // `float(hparams.get("control_token_gain", 15.0))`: a null gain fails there.
    let gain = match hp.get("control_token_gain") {
        None => 15.0,
        Some(v) => v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "control_token_gain", "a number", v)
        })?,
    };
    p.f32(adapters::ROUTER_GAIN, gain);
    Ok(())
}
