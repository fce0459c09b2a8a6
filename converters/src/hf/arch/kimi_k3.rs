//! `KimiK3ForConditionalGeneration` (arch `kimi-k3`, `KimiK3Model` in
//! `conversion/kimi_k3.py`): Kimi-K3's text model, Kimi Linear's hybrid of KDA and MLA blocks
//! (see [`super::kimi_linear`]) under a `language_model.` prefix, with the vision tower and
//! projector dropped.
//!
//! The config's `text_config` names `KimiLinearForCausalLM`, which cannot load K3: the
//! reference routes on the root class ([`Hooks::routes_on_root`]). The root `model_type`
//! (`kimi_k3`) is unknown to transformers, so config.json is read as written: no class
//! defaults, no attribute aliases.
//!
//! What K3 adds to Kimi Linear:
//! - cross-layer attention residuals: `<x>_res_norm.weight` and `<x>_res_proj.weight` are only
//!   used as their elementwise product, written as one F32 vector per block before attention
//!   (`attn_res_score`), before the FFN (`ffn_res_score`) and once for the output
//!   (`output_res_score`), at the place of the pair's second tensor;
//! - `self_attn.g_proj`, one HF name for two tensors: a KDA block's full-rank output gate
//!   (`ssm_g`), an MLA block's output gate (`attn_gate`);
//! - a latent MoE: the routed experts work in `routed_expert_hidden_size` between
//!   `routed_expert_down_proj` and `routed_expert_up_proj`, with `routed_expert_norm`;
//! - the situ activation and the residual block size, as hparams; sigmoid routing asserted;
//! - `A = -exp(A_log)` computed in F32 on the first `num_attention_heads` rows.
//!
//! Moonshot publishes K3 with its routed experts in compressed-tensors' `mxfp4-pack-quantized`
//! layout (`<expert>.weight_packed`, two E2M1 codes a byte, and `<expert>.weight_scale`, one
//! E8M0 exponent per 32 values). For such a checkpoint `dequant_model` is skipped (after
//! checking that no other tensor is packed), each block's experts are repacked losslessly into
//! one GGML MXFP4 tensor per projection, written before all others, and `general.file_type` is
//! MOSTLY_MXFP4_MOE whatever the outtype.
//!
//! The vocabulary is Kimi Linear's (GPT-2 BPE from tokenizer.json), then the config's
//! `eos_token_id` (K3's turn terminator) replaces the tokenizer's, and a directory without a
//! chat template gets the one the reference bundles (`kimi_k3_template.jinja`).

use ggufkit::gguf::keys::{self, activation, attention, attn_res, kda, llm, mla, rope, ssm};
use ggufkit::quantize::ftype::ft;
use serde_json::Value as Json;

use super::deepseek2::split_kv_b_with;
use super::dflash::truthy;
use super::kimi_linear::{head_count_kv, kda_conv_and_dt_bias, linear_attn_config};
use super::{keep, no_extra, Arch, Experts, Hooks, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::family::Entry;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The chat template the reference bundles for K3 (its `models/templates/Kimi-K3.jinja`).
const TEMPLATE: &str = include_str!("kimi_k3_template.jinja");

/// The tensors beyond [`DECODER`] (gguf-py's `kimi-k3` list).
const KIMI_K3_TENSORS: &[Tensor] = &[
    Tensor::OutputResScore,
    Tensor::AttnResScore,
    Tensor::FfnResScore,
    Tensor::AttnGate,
    Tensor::AttnQA,
    Tensor::AttnQB,
    Tensor::AttnKvAMqa,
    Tensor::AttnKvB,
    Tensor::AttnKB,
    Tensor::AttnVB,
    Tensor::AttnQANorm,
    Tensor::AttnKvANorm,
    Tensor::SsmConv1dQ,
    Tensor::SsmConv1dK,
    Tensor::SsmConv1dV,
    Tensor::SsmFA,
    Tensor::SsmFB,
    Tensor::SsmBeta,
    Tensor::SsmA,
    Tensor::SsmG,
    Tensor::SsmDt,
    Tensor::SsmNorm,
    Tensor::FfnGateInp,
    Tensor::FfnExpProbsB,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnUpShexp,
    Tensor::FfnRoutedDown,
    Tensor::FfnRoutedUp,
    Tensor::FfnRoutedNorm,
];

/// Kimi-K3.
pub const KIMI_K3: Arch = Arch {
    hf_names: &["KimiK3ForConditionalGeneration"],
    model_types: &[],
    composites: &[],
    gguf: "kimi-k3",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, KIMI_K3_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[K3_EXPERTS],
        hook: Some(hook),
        mtp: Some(fuse_residual_scores),
        dequant: Some(dequant),
        dequant_when: Some(is_mxfp4_packed),
        generate: Some(generate),
        file_type_of: Some(file_type_of),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks {
        routes_on_root: true,
        ..Hooks::NONE
    },
};

/// Per-expert `w1/w2/w3` under `block_sparse_moe.experts.{xid}`, stacked as gate, down, up;
/// the count is `num_experts` alone (the config is read as written).
const K3_EXPERTS: Experts = Experts {
    marker: "block_sparse_moe.experts",
    count_keys: &["num_experts"],
    parts: &["w1", "w2", "w3"],
    expert_name: "model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.block_sparse_moe.experts.{w}.weight",
};

/// The residual-score pairs: (HF stem, GGUF tensor, per block).
const RES_FUSIONS: [(&str, &str, bool); 3] = [
    (
        "self_attention_res",
        "blk.{bid}.attn_res_score.weight",
        true,
    ),
    ("mlp_res", "blk.{bid}.ffn_res_score.weight", true),
    ("output_attn_res", "output_res_score.weight", false),
];

/// The suffix the fused tensors' GGUF names end with (so the hook writes them as named).
const FUSED_SUFFIX: &str = "_res_score.weight";

/// The block number the reference gives a tensor: its first all-digit dotted part.
fn bid_of(name: &str) -> Option<u64> {
    name.split('.')
        .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

/// Which residual pair (index into [`RES_FUSIONS`]) and which half (`true` for the norm) a
/// tensor is, if it is one.
fn res_part(name: &str) -> Option<(usize, bool)> {
    RES_FUSIONS
        .iter()
        .enumerate()
        .find_map(|(i, (stem, _, _))| {
            if name.ends_with(&format!("{stem}_norm.weight")) {
                Some((i, true))
            } else if name.ends_with(&format!("{stem}_proj.weight")) {
                Some((i, false))
            } else {
                None
            }
        })
}

/// A residual pair's index in [`RES_FUSIONS`] and its block.
type PairKey = (usize, Option<u64>);

/// The half of a pair seen first: whether it is the norm, its name and its values.
type Half = (bool, String, Expr);

/// `_try_fuse_res` over the whole list: each `<x>_res_norm` / `<x>_res_proj` pair (per block)
/// becomes `norm.float().flatten() * proj.float().flatten()` at the place of the pair's
/// second tensor; a half without its pair, or a half given twice, is refused.
fn fuse_residual_scores(_: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    // (pair, block) -> (is norm, name, values) of the half seen first.
    let mut held: Vec<(PairKey, Half)> = Vec::new();
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let Some((pair, is_norm)) = res_part(&e.name) else {
            out.push(e);
            continue;
        };
        let bid = bid_of(&e.name);
        let key = (pair, bid);
        let Some(pos) = held.iter().position(|(k, _)| *k == key) else {
            held.push((key, (is_norm, e.name, e.expr)));
            continue;
        };
        let (_, (other_norm, other_name, other)) = held.remove(pos);
        if other_norm == is_norm {
            return Err(ConvertError::Tensor {
                name: e.name,
                problem: format!(
                    "a second {} of its pair (first: {other_name})",
                    half(is_norm)
                ),
            });
        }
        let (norm, proj) = if is_norm {
            (e.expr, other)
        } else {
            (other, e.expr)
        };
        let flat = |x: Expr, n: &str| {
            let count = x.shape().iter().product::<u64>();
            x.float(n)?.reshape(n, vec![count])
        };
        let fused = Expr::mul(&e.name, flat(norm, &e.name)?, flat(proj, &e.name)?)?;
        let (_, gguf, per_block) = RES_FUSIONS[pair];
        let name = match (per_block, bid) {
            (true, Some(b)) => gguf.replace("{bid}", &b.to_string()),
            (true, None) => {
                return Err(ConvertError::Tensor {
                    name: e.name,
                    problem: "a per-block residual score outside any block".into(),
                })
            }
            (false, _) => gguf.to_string(),
        };
        out.push(Entry {
            name,
            expr: fused,
            ..e
        });
    }
    if let Some((_, (is_norm, name, _))) = held.into_iter().next() {
        return Err(ConvertError::Tensor {
            name,
            problem: format!(
                "an attention-residual {} without its {}",
                half(is_norm),
                half(!is_norm)
            ),
        });
    }
    Ok(out)
}

fn half(is_norm: bool) -> &'static str {
    if is_norm {
        "res_norm"
    } else {
        "res_proj"
    }
}

/// `KimiK3Model.modify_tensors` after the residual fusion: the convolutions made 4-D,
/// `A = -exp(A_log)`, `dt_bias` renamed, `g_proj` told apart by block kind, `kv_b_proj`
/// split.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.ends_with(FUSED_SUFFIX) {
        return Ok(Modified::Named(vec![(name, expr)]));
    }
    let (name, mut expr) = kda_conv_and_dt_bias(name, expr)?;
    if name.ends_with(".A_log") {
        expr = a_from_log(hp, &name, expr)?;
    }
    if name.ends_with(".self_attn.g_proj.weight") {
        return gate(hp, name, expr);
    }
    if name.contains(".block_sparse_moe.experts.") || !name.ends_with("kv_b_proj.weight") {
        return Ok(Modified::Pass(name, expr));
    }
    let (k, v) = split_kv_b_with(hp, &name, expr, &["v_head_dim"])?;
    Ok(Modified::Out(vec![
        (name.replace("kv_b_proj", "k_b_proj"), k),
        (name.replace("kv_b_proj", "v_b_proj"), v),
    ]))
}

/// `-exp(A_log.float()[:num_attention_heads])`: the first rows (outermost dimension), in F32.
fn a_from_log(hp: &Hparams, name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let n_head = hp.req_u64(&["num_attention_heads"])?;
    let expr = match expr.shape().first() {
        Some(&rows) if rows > n_head => expr.narrow(name, 0, 0, n_head)?,
        Some(_) => expr,
        None => {
            return Err(ConvertError::Tensor {
                name: name.to_string(),
                problem: "a 0-d tensor cannot be sliced".into(),
            })
        }
    };
    Ok(expr.float(name)?.neg_exp())
}

/// `self_attn.g_proj`: `ssm_g` in a KDA block, `attn_gate` in an MLA block (listed, 1-based,
/// in `linear_attn_config.full_attn_layers`).
fn gate(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let Some(bid) = bid_of(&name) else {
        return Err(ConvertError::Tensor {
            name,
            problem: "an attention gate outside any block".into(),
        });
    };
    let la = linear_attn_config(hp)?;
    let full = match la.get("full_attn_layers") {
        Some(Json::Array(a)) => a,
        None => return Err(hp.missing(&["linear_attn_config.full_attn_layers"])),
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "linear_attn_config.full_attn_layers",
                "a list of block numbers",
                v,
            ))
        }
    };
    // Python's `in` compares by value: 2 and 2.0 both name block 2.
    let mla = full.iter().any(|x| x.as_f64() == Some((bid + 1) as f64));
    let tensor = if mla { "attn_gate" } else { "ssm_g" };
    Ok(Modified::Named(vec![(
        format!("blk.{bid}.{tensor}.weight"),
        expr,
    )]))
}

/// `KimiK3Model.set_vocab`: Kimi Linear's GPT-2 vocabulary, the config's `eos_token_id`, and
/// the bundled chat template when the directory has none.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let outcome = b.gpt2()?;
    match b.hparams().get("eos_token_id") {
        None | Some(Json::Null) => {}
        Some(v) => {
            let id = v.as_i64().ok_or_else(|| {
                ConvertError::wrong_type(b.dir().config_path(), "eos_token_id", "an integer", v)
            })?;
            b.set_token_id(keys::tokenizer::EOS_ID, id.into())?;
        }
    }
    if !b.has_chat_template()? {
        b.set_chat_template(TEMPLATE);
    }
    Ok(outcome)
}

/// A required integer of `linear_attn_config` (the class indexes it).
fn la_req_u64(hp: &Hparams, key: &str) -> Result<u64, ConvertError> {
    let la = linear_attn_config(hp)?;
    let path = format!("linear_attn_config.{key}");
    match la.get(key) {
        None => Err(hp.missing(&[&path])),
        Some(v) => json_u64(v)
            .ok_or_else(|| ConvertError::wrong_type(&hp.path, path, "a non-negative integer", v)),
    }
}

/// An hparam the class asserts equals `want`.
fn assert_str(hp: &Hparams, key: &str, want: &str) -> Result<(), ConvertError> {
    match hp.get(key) {
        None => Err(hp.missing(&[key])),
        Some(Json::String(s)) if s == want => Ok(()),
        Some(v) => Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec![key.to_string()],
            expected: format!("{want:?} (the class asserts it)"),
            found: v.to_string(),
        }),
    }
}

/// `KimiK3Model.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    // The generic block runs with one KV head: MLA is written as MQA.
    let mut mqa = p.hp.clone();
    mqa.map.insert("num_key_value_heads".into(), Json::from(1));
    p.with_hparams(&mqa).generic()?;
    let hp = p.hp;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let la = linear_attn_config(hp)?;
    let kv = head_count_kv(hp, la)?;
    p.i32s(attention::HEAD_COUNT_KV, kv);
    p.u32(ssm::CONV_KERNEL, la_req_u64(hp, "short_conv_kernel_size")?)?;
    p.u32(kda::HEAD_DIM, la_req_u64(hp, "head_dim")?)?;
    match la.get("gate_lower_bound") {
        None | Some(Json::Null) => {}
        Some(v) => {
            let lb = v.as_f64().ok_or_else(|| {
                ConvertError::wrong_type(
                    &hp.path,
                    "linear_attn_config.gate_lower_bound",
                    "a number",
                    v,
                )
            })?;
            p.f32(kda::GATE_LOWER_BOUND, lb);
        }
    }
    mla_params(p)?;
    moe_params(p)?;
    assert_str(hp, "hidden_act", "situ")?;
    p.f32(
        activation::SITU_BETA,
        hp.req_f64(&["activation_situ_beta"])?,
    );
    let linear_beta = hp.req_f64(&["activation_situ_linear_beta"])?;
    p.f32(activation::SITU_LINEAR_BETA, linear_beta);
    p.req_u32(attn_res::BLOCK_SIZE, &["attn_res_block_size"])
}

/// The MLA keys: the ranks, the rope size, the compressed cache's key and value sizes, the
/// decompressed head sizes.
fn mla_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    if let Some(q) = hp.find_u64(&["q_lora_rank"])? {
        p.u32(mla::Q_LORA_RANK, q)?;
    }
    let kv_lora = hp.req_u64(&["kv_lora_rank"])?;
    p.u32(mla::KV_LORA_RANK, kv_lora)?;
    let nope = hp.req_u64(&["qk_nope_head_dim"])?;
    let rope_dim = hp.req_u64(&["qk_rope_head_dim"])?;
    let v_dim = hp.req_u64(&["v_head_dim"])?;
    // K3's MLA is nope-only; the class asserts the flag.
    if !hp.get("mla_use_nope").is_some_and(truthy) {
        return Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["mla_use_nope".into()],
            expected: "true (the class asserts a nope-only MLA)".into(),
            found: hp
                .get("mla_use_nope")
                .map_or("absent".into(), Json::to_string),
        });
    }
    p.u32(rope::DIMENSION_COUNT, rope_dim)?;
    let sum = |a: u64, what: &str| {
        a.checked_add(rope_dim).ok_or_else(|| {
            ConvertError::out_of_range(
                &hp.path,
                what,
                format!("{a} + {rope_dim}"),
                "a sum that fits 64 bits",
            )
        })
    };
    p.u32(
        attention::KEY_LENGTH,
        sum(kv_lora, "kv_lora_rank + qk_rope_head_dim")?,
    )?;
    p.u32(attention::VALUE_LENGTH, kv_lora)?;
    p.u32(
        mla::KEY_LENGTH_MLA,
        sum(nope, "qk_nope_head_dim + qk_rope_head_dim")?,
    )?;
    p.u32(mla::VALUE_LENGTH_MLA, v_dim)
}

/// The MoE keys: sizes and counts, the routing scale and normalisation, sigmoid gating (the
/// class asserts it), the latent size when there is one.
fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    p.req_u32(llm::EXPERT_SHARED_COUNT, &["num_shared_experts"])?;
    p.req_u32(llm::LEADING_DENSE_BLOCK_COUNT, &["first_k_dense_replace"])?;
    p.f32(
        mla::EXPERT_WEIGHTS_SCALE,
        hp.req_f64(&["routed_scaling_factor"])?,
    );
    let norm = hp
        .get("moe_renormalize")
        .ok_or_else(|| hp.missing(&["moe_renormalize"]))?;
    p.bool(mla::EXPERT_WEIGHTS_NORM, truthy(norm));
    assert_str(hp, "moe_router_activation_func", "sigmoid")?;
    // gguf-py's ExpertGatingFuncType.SIGMOID.
    p.u32(llm::EXPERT_GATING_FUNC, 2)?;
    if let Some(latent) = hp.find_u64(&["routed_expert_hidden_size"])? {
        p.u32(llm::EXPERT_LATENT_LENGTH, latent)?;
    }
    Ok(())
}

/// The compressed-tensors format of Moonshot's MXFP4 experts.
const MXFP4_FORMAT: &str = "mxfp4-pack-quantized";

/// `_is_mxfp4_packed`: `quantization_config` names compressed-tensors in the MXFP4 format.
fn is_mxfp4_packed(hp: &Hparams) -> bool {
    let Some(Json::Object(qc)) = hp.get("quantization_config") else {
        return false;
    };
    let field = |k: &str| qc.get(k).and_then(Json::as_str);
    field("quant_method") == Some("compressed-tensors") && field("format") == Some(MXFP4_FORMAT)
}

/// MOSTLY_MXFP4_MOE for the MXFP4 layout (`prepare_tensors` sets it whatever the outtype).
fn file_type_of(hp: &Hparams) -> Option<u32> {
    is_mxfp4_packed(hp).then_some(ft::MXFP4_MOE)
}

/// The projection of an MXFP4 expert weight name: (block, expert, `w1` / `w2` / `w3`), for
/// `[language_model.]model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight_packed`.
fn packed_expert(name: &str) -> Option<(u64, u64, &str)> {
    let rest = name.strip_prefix("language_model.").unwrap_or(name);
    let rest = rest.strip_prefix("model.layers.")?;
    let (bid, rest) = rest.split_once('.')?;
    let rest = rest.strip_prefix("block_sparse_moe.experts.")?;
    let (xid, rest) = rest.split_once('.')?;
    let w = rest.strip_suffix(".weight_packed")?;
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u64>().ok())
            .flatten()
    };
    matches!(w, "w1" | "w2" | "w3").then_some((number(bid)?, number(xid)?, w))
}

/// `KimiK3Model.dequant_model` for the MXFP4 layout (the others get the generic one): nothing
/// is dequantized, so no packed tensor may lie outside the routed experts.
fn dequant(_: &Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    let stray: Vec<&str> = entries
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| n.ends_with(".weight_packed") && packed_expert(n).is_none())
        .collect();
    if let Some(first) = stray.first() {
        return Err(ConvertError::Tensor {
            name: first.to_string(),
            problem: format!(
                "{} MXFP4 tensor(s) outside the routed experts; only the routed experts have \
                 a repack path",
                stray.len()
            ),
        });
    }
    Ok(entries)
}

/// `KimiK3Model.generate_extra_tensors` for the MXFP4 layout: per block (ascending) and
/// projection (`w1` gate, `w2` down, `w3` up), the `num_experts` experts' packed weights and
/// scales repacked into one `[n_expert, rows, cols]` MXFP4 tensor, written first. Every
/// expert of a group must be there with its scale, and no other.
fn generate(hp: &Hparams, entries: &mut Vec<Entry>) -> Result<Vec<(String, Expr)>, ConvertError> {
    use std::collections::{BTreeMap, HashSet};
    if !is_mxfp4_packed(hp) {
        return Ok(Vec::new());
    }
    let n_experts = hp.req_u64(&["num_experts"])?;
    let names: HashSet<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    // (block, projection) -> expert -> (packed name, scale name); a later spelling of one
    // expert (`07` and `7`) replaces the earlier, as the reference's dict does.
    let mut groups: BTreeMap<(u64, String), BTreeMap<u64, (String, String)>> = BTreeMap::new();
    for e in entries.iter() {
        let Some((bid, xid, w)) = packed_expert(&e.name) else {
            continue;
        };
        let stem = e.name.strip_suffix("_packed").unwrap_or(&e.name);
        let scale = format!("{stem}_scale");
        if !names.contains(scale.as_str()) {
            return Err(ConvertError::Tensor {
                problem: format!("missing {scale} for it"),
                name: e.name.clone(),
            });
        }
        groups
            .entry((bid, w.to_string()))
            .or_default()
            .insert(xid, (e.name.clone(), scale));
    }
    let mut wanted: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for ((bid, w), experts) in groups {
        let missing: Vec<u64> = (0..n_experts)
            .filter(|x| !experts.contains_key(x))
            .collect();
        if let Some(&first) = missing.first() {
            return Err(ConvertError::Tensor {
                name: format!(
                    "model.layers.{bid}.block_sparse_moe.experts.{first}.{w}.weight_packed"
                ),
                problem: format!(
                    "layer {bid} {w}: {} of {n_experts} experts missing, first is {first}",
                    missing.len()
                ),
            });
        }
        if experts.len() as u64 != n_experts {
            let last = experts.values().next_back().map(|(p, _)| p.clone());
            return Err(ConvertError::Tensor {
                name: last.unwrap_or_default(),
                problem: format!(
                    "layer {bid} {w}: {} experts, expected {n_experts}",
                    experts.len()
                ),
            });
        }
        let tensor = match w.as_str() {
            "w1" => Tensor::FfnGateExp,
            "w2" => Tensor::FfnDownExp,
            _ => Tensor::FfnUpExp,
        };
        let name = format!(
            "{}.weight",
            tensor.gguf().replace("{bid}", &bid.to_string())
        );
        wanted.push((name, experts.into_values().collect()));
    }
    crate::hf::prequant::take_mxfp4_experts(entries, wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residual_halves_are_recognised_by_suffix() {
        assert_eq!(
            res_part("model.layers.3.self_attention_res_norm.weight"),
            Some((0, true))
        );
        assert_eq!(
            res_part("model.layers.3.mlp_res_proj.weight"),
            Some((1, false))
        );
        assert_eq!(
            res_part("model.output_attn_res_proj.weight"),
            Some((2, false))
        );
        assert_eq!(res_part("model.layers.3.mlp.down_proj.weight"), None);
        assert_eq!(bid_of("model.layers.12.mlp_res_norm.weight"), Some(12));
        assert_eq!(bid_of("model.output_attn_res_norm.weight"), None);
    }

    #[test]
    fn mxfp4_expert_names_are_parsed_as_the_reference_matches_them() {
        let n = "language_model.model.layers.3.block_sparse_moe.experts.12.w2.weight_packed";
        assert_eq!(packed_expert(n), Some((3, 12, "w2")));
        assert_eq!(
            packed_expert("model.layers.0.block_sparse_moe.experts.0.w1.weight_packed"),
            Some((0, 0, "w1"))
        );
        for other in [
            "model.layers.3.block_sparse_moe.experts.1.w4.weight_packed",
            "model.layers.3.block_sparse_moe.shared_experts.up_proj.weight_packed",
            "model.layers.x.block_sparse_moe.experts.1.w1.weight_packed",
            "model.layers.3.block_sparse_moe.experts.1.w1.weight_scale",
            "vision.model.layers.3.block_sparse_moe.experts.1.w1.weight_packed",
        ] {
            assert_eq!(packed_expert(other), None, "{other}");
        }
    }
}
