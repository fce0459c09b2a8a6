//! `DeepseekV4ForCausalLM` (arch `deepseek4`, `DeepseekV4Model` in `conversion/deepseek.py`),
//! from the checkpoint layout DeepSeek publishes.
//!
//! The checkpoint's names are DeepSeek's own (`embed`, `head`, `norm`, `hc_head_*`, and per
//! block `layers.N.attn.*`, `layers.N.ffn.*`, `hc_{attn,ffn}_{fn,base,scale}`), mapped by
//! the class's own table ([`map_name`]), not gguf-py's: a name outside it is refused.
//!
//! * **Weights.** FP8 (E4M3 or E5M2) weights come with a `.scale` of E8M0 exponents, one
//!   per 128 × 128 block: they are dequantized (`weight.float() * 2^(e - 127)`) and always
//!   written as Q8_0 (F16 where a row is not whole blocks, F32 for norms). Other matrices
//!   keep their source type: F32 sources F32, BF16 sources BF16; only what is neither (F16)
//!   follows the outtype. The routed experts (`ffn.experts.E.w{1,2,3}` with `.scale`) are
//!   MXFP4 and are repacked without dequantizing into `ffn_{gate,down,up}_exps` per block,
//!   written first; a hash-routed layer's token-id table (`ffn.gate.tid2eid`, the first
//!   `num_hash_layers` blocks) is written before them as I32, and its unused `ffn.gate.bias`
//!   is dropped. `general.file_type` is always MOSTLY_MXFP4_MOE.
//! * **Next-token prediction.** The `mtp.K.*` block is skipped unless `--mtp`, which keeps
//!   only it (as block `num_hidden_layers + K`) with the embedding, final norm and head: its
//!   `e_proj` and `h_proj` are joined side by side into `nextn.eh_proj` (Q8_0), `norm` is
//!   the shared head norm, its `hc_head_*` the model's; the block count and
//!   `nextn_predict_layers` count it.
//! * **Config.** transformers' `DeepseekV4Config` (its defaults, the attribute aliases, the
//!   legacy keys it folds away) is read with config.json's own keys put back
//!   (`hparams.setdefault`), so `compress_ratios` and `num_hash_layers` come from the file;
//!   a `rope_scaling` in the file supplies the rope type the per-branch `rope_parameters`
//!   lack.
//! * **Chat template.** The class writes llama.cpp's bundled DeepSeek-V4 template first
//!   (right after `general.architecture`) and lets the tokenizer's own replace it in place;
//!   ggufkit does not carry llama.cpp's template files, so a tokenizer without a chat
//!   template of its own is refused.

use ggufkit::gguf::keys::{self, attention, compressed, indexer, layered, llm, mla, rope};
use ggufkit::gguf::Value;
use ggufkit::quantize::ftype::ft;
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::{Arch, Entry, Extra, HeadDim, Hooks, ModelType, Modified, MtpExport, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::safetensors::{StDtype, StTensor};
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

mod config;
use config::config_class;

/// The GGUF tensors of the architecture (gguf-py's `MODEL_TENSORS[DEEPSEEK4]`).
const TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::HcHeadFn,
    Tensor::HcHeadBase,
    Tensor::HcHeadScale,
    Tensor::AttnNorm,
    Tensor::AttnSinks,
    Tensor::AttnQA,
    Tensor::AttnQB,
    Tensor::AttnQANorm,
    Tensor::AttnKv,
    Tensor::AttnKvANorm,
    Tensor::AttnOutA,
    Tensor::AttnOutB,
    Tensor::HcAttnFn,
    Tensor::HcAttnBase,
    Tensor::HcAttnScale,
    Tensor::HcFfnFn,
    Tensor::HcFfnBase,
    Tensor::HcFfnScale,
    Tensor::AttnCompressorWkv,
    Tensor::AttnCompressorWgate,
    Tensor::AttnCompressorApe,
    Tensor::AttnCompressorNorm,
    Tensor::IndexerProj,
    Tensor::IndexerAttnQB,
    Tensor::IndexerCompressorWkv,
    Tensor::IndexerCompressorWgate,
    Tensor::IndexerCompressorApe,
    Tensor::IndexerCompressorNorm,
    Tensor::FfnGateInp,
    Tensor::FfnGateTid2eid,
    Tensor::FfnExpProbsB,
    Tensor::FfnExpProbsBVl,
    Tensor::FfnNorm,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnUpShexp,
    Tensor::NextnEhProj,
    Tensor::NextnEmbedTokens,
    Tensor::NextnEnorm,
    Tensor::NextnHnorm,
    Tensor::NextnSharedHeadHead,
    Tensor::NextnSharedHeadNorm,
];

/// The tensors `--mtp` keeps besides the `mtp.*` ones.
const MTP_SHARED: &[&str] = &["embed.weight", "norm.weight", "head.weight", "head.scale"];

/// DeepSeek V4.
pub const DEEPSEEK4: Arch = Arch {
    hf_names: &["DeepseekV4ForCausalLM"],
    model_types: &[ModelType {
        name: "deepseek_v4",
        hf_classes: &["DeepseekV4ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 129280,
            "hidden_size" => 4096,
            "moe_intermediate_size" => 2048,
            "num_hidden_layers" => 43,
            "num_attention_heads" => 64,
            "num_key_value_heads" => 1,
            "head_dim" => 512,
            "q_lora_rank" => 1024,
            "num_experts_per_tok" => 6,
            "n_routed_experts" => 256,
            "n_shared_experts" => 1,
            "scoring_func" => "sqrtsoftplus",
            "norm_topk_prob" => true,
            "routed_scaling_factor" => 1.5,
            "max_position_embeddings" => 1048576,
            "compress_rope_theta" => 160000.0,
            "hc_mult" => 4,
            "hc_sinkhorn_iters" => 20,
            "hc_eps" => 1.0e-6,
            "swiglu_limit" => 10.0,
            "sliding_window" => 128,
            "o_groups" => 8,
            "o_lora_rank" => 1024,
            "index_n_heads" => 64,
            "index_head_dim" => 128,
            "index_topk" => 512,
            "num_nextn_predict_layers" => 1,
            "rms_norm_eps" => 1.0e-6,
            "bos_token_id" => 0,
            "eos_token_id" => 1,
            "tie_word_embeddings" => false,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(config_class),
    }],
    composites: &[],
    gguf: "deepseek4",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[TENSORS],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        mtp: Some(class_init),
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp,
            shared: MTP_SHARED,
        }),
        dequant: Some(dequant),
        generate: Some(generate),
        force_type: Some(force_type),
        file_type: Some(ft::MXFP4_MOE),
        ..Rules::NONE
    },
    params,
    extra,
    hooks: Hooks::NONE,
};

/// `DeepseekV4Model.__init__`: config.json's own keys back into the hparams
/// (`setdefault`), the file's `rope_scaling` into a rope dict without a type, then the
/// `mtp.*` tensors: skipped unless `--mtp`, which renames them (`filter_tensors`) and counts
/// their blocks.
fn class_init(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    restore_raw_keys(hp);
    if hp.mtp != Mtp::Only {
        return Ok(entries
            .into_iter()
            .filter(|e| !e.name.starts_with("mtp."))
            .collect());
    }
    let main = hp.req_u64(&["num_hidden_layers"])?;
    let nextn = hp.find_u64(&["num_nextn_predict_layers"])?.unwrap_or(0);
    hp.extra_blocks = hp.extra_blocks.saturating_add(nextn);
    let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
    for mut e in entries {
        if e.name.starts_with("mtp.") {
            e.name = mtp_name(&e.name, main, nextn)?;
        }
        // A name seen twice keeps its first place and its last value (a Python dict).
        match out.iter().position(|o| o.name == e.name) {
            Some(i) => out[i] = e,
            None => out.push(e),
        }
    }
    Ok(out)
}

/// The first half of `DeepseekV4Model.__init__`: config.json's own keys back into the
/// hparams (`setdefault`), and the file's `rope_scaling` into a rope dict without a type.
pub(super) fn restore_raw_keys(hp: &mut Hparams) {
    let Json::Object(raw) = &hp.raw else {
        return;
    };
    for (k, v) in raw {
        hp.map.entry(k.clone()).or_insert_with(|| v.clone());
    }
    if hp.rope_full().get("rope_type").is_none_or(Json::is_null) {
        if let Some(Json::Object(scaling)) = raw.get("rope_scaling") {
            let mut scaling = scaling.clone();
            if !scaling.contains_key("rope_type") {
                if let Some(t) = scaling.get("type").filter(|t| !t.is_null()).cloned() {
                    scaling.insert("rope_type".into(), t);
                }
            }
            for (k, v) in scaling {
                hp.rope.insert(k, v);
            }
        }
    }
}

/// The name `filter_tensors` gives MTP tensor `name` (`mtp.K.rest`) under `--mtp`.
fn mtp_name(name: &str, main: u64, nextn: u64) -> Result<String, ConvertError> {
    let bad = |why: &str| ConvertError::Tensor {
        name: name.to_string(),
        problem: why.to_string(),
    };
    let mut parts = name.splitn(3, '.');
    let (_, k, rest) = (parts.next(), parts.next(), parts.next());
    let (Some(k), Some(rest)) = (k, rest) else {
        return Err(bad(
            "unexpected DeepSeek-V4 MTP tensor (expected mtp.K.name)",
        ));
    };
    if k.is_empty() || !k.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(
            "unexpected DeepSeek-V4 MTP tensor (expected mtp.K.name)",
        ));
    }
    let k: u64 = k.parse().map_err(|_| bad("MTP layer number too large"))?;
    if k >= nextn {
        return Err(bad(&format!(
            "unexpected DeepSeek-V4 MTP layer {k}: num_nextn_predict_layers is {nextn}"
        )));
    }
    let bid = main.saturating_add(k);
    Ok(match rest {
        "hc_head_fn" | "hc_head_base" | "hc_head_scale" => rest.to_string(),
        "e_proj.weight" | "e_proj.scale" | "h_proj.weight" | "h_proj.scale" | "enorm.weight"
        | "hnorm.weight" => format!("layers.{bid}.nextn.{rest}"),
        "norm.weight" => format!("layers.{bid}.nextn.shared_head_norm.weight"),
        _ => format!("layers.{bid}.{rest}"),
    })
}

/// Whether a (filtered) tensor name belongs to the next-token-prediction block.
fn is_mtp(_: &Hparams, name: &str) -> Result<bool, ConvertError> {
    Ok(name.starts_with("mtp."))
}

/// `DeepseekV4Model.filter_tensors`: the vision aligner and image tokens are not part of
/// the text model.
pub(super) fn filter(name: &str) -> Option<String> {
    if name.starts_with("aligner.") || name.starts_with("image_") {
        return None;
    }
    Some(name.to_string())
}

pub(super) fn terr(name: &str, problem: impl Into<String>) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem: problem.into(),
    }
}

/// The side of a block FP8 scale (`dequant_model` repeats each scale over 128 × 128).
const FP8_BLOCK: u64 = 128;

/// `DeepseekV4Model.dequant_model`: each FP8 `<m>.weight` with a `<m>.scale` of E8M0
/// exponents becomes `weight.float() * 2^(e - 127)` per 128 × 128 block, written as Q8_0;
/// the scale is consumed. A scale whose weight is absent or not FP8 stays (and is refused
/// by the name map, as the reference refuses it).
pub(super) fn dequant(_: &Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    let mut entries: Vec<Option<Entry>> = entries.into_iter().map(Some).collect();
    let index: std::collections::HashMap<String, usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.as_ref().map(|e| (e.name.clone(), i)))
        .collect();
    for i in 0..entries.len() {
        let Some(base) = entries[i]
            .as_ref()
            .and_then(|e| e.name.strip_suffix(".scale"))
            .map(str::to_string)
        else {
            continue;
        };
        let wname = format!("{base}.weight");
        let Some(&wi) = index.get(&wname) else {
            continue;
        };
        let is_fp8 = entries[wi]
            .as_ref()
            .is_some_and(|w| matches!(w.dtype, StDtype::F8E4M3 | StDtype::F8E5M2));
        if !is_fp8 {
            continue;
        }
        let scale = entries[i].take().expect("present");
        let scale = e8m0_scale(&scale)?;
        let w = entries[wi].as_mut().expect("present");
        if w.expr.shape().len() != 2 {
            return Err(terr(
                &wname,
                format!("an FP8 weight must be 2-D, found {:?}", w.expr.shape()),
            ));
        }
        w.expr = Expr::dequant(
            &wname,
            w.expr.clone(),
            scale,
            Some(vec![FP8_BLOCK, FP8_BLOCK]),
        )?;
        w.fp8_q8 = true;
    }
    Ok(entries.into_iter().flatten().collect())
}

/// A block scale's values: E8M0 as stored, or one-byte integers read as the same biased
/// exponents (`exp2(byte - 127)`; a byte of 255 is infinite there and NaN as E8M0).
fn e8m0_scale(scale: &Entry) -> Result<Expr, ConvertError> {
    let t = scale
        .expr
        .as_read()
        .ok_or_else(|| terr(&scale.name, "an FP8 scale must be a stored tensor"))?;
    match t.dtype {
        StDtype::F8E8M0 => Ok(scale.expr.clone()),
        StDtype::U8 | StDtype::I8 => Ok(Expr::read(StTensor {
            dtype: StDtype::F8E8M0,
            ..t.clone()
        })),
        d => Err(terr(
            &scale.name,
            format!(
                "an FP8 block scale must be E8M0 exponents (one byte), found {}",
                d.name()
            ),
        )),
    }
}

/// The GGUF name of `tensor` in block `bid` with `suffix`.
pub(super) fn gguf_name(tensor: Tensor, bid: Option<u64>, suffix: &str) -> String {
    let base = match bid {
        Some(b) => tensor.gguf().replace("{bid}", &b.to_string()),
        None => tensor.gguf().to_string(),
    };
    format!("{base}{suffix}")
}

/// The stored tensor of entry `name` (removed from `entries`), for a class that writes it
/// itself.
fn take_read(
    entries: &mut Vec<Entry>,
    name: &str,
    missing: &str,
) -> Result<StTensor, ConvertError> {
    let i = entries
        .iter()
        .position(|e| e.name == name)
        .ok_or_else(|| terr(name, missing.to_string()))?;
    let e = entries.remove(i);
    e.expr
        .as_read()
        .cloned()
        .ok_or_else(|| terr(name, "expected a stored tensor, found a transformed one"))
}

/// `DeepseekV4Model.generate_extra_tensors`: the hash-routing tables (I32) and the MXFP4
/// expert tensors, written first; each MTP block's `e_proj` and `h_proj` joined into
/// `nextn.eh_proj` (side by side, `torch.cat(dim=1)`), put first among the model's tensors.
pub(super) fn generate(
    hp: &Hparams,
    entries: &mut Vec<Entry>,
) -> Result<Vec<(String, Expr)>, ConvertError> {
    let mut out = Vec::new();
    let main = hp.req_u64(&["num_hidden_layers"])?;
    let blocks = hp.block_count()?;
    let only = hp.mtp == Mtp::Only;
    let hashed = hp.req_u64(&["num_hash_layers"])?;
    let table = |b: u64| format!("layers.{b}.ffn.gate.tid2eid");
    let any_table = (0..hashed.min(blocks.saturating_add(1)))
        .any(|b| entries.iter().any(|e| e.name == table(b)));
    if !only || any_table {
        for b in 0..hashed {
            let t = take_read(entries, &table(b), "missing hash routing tensor")?;
            let name = gguf_name(Tensor::FfnGateTid2eid, Some(b), ".weight");
            out.push((name.clone(), crate::hf::int_rows::as_i32(&name, &t)?));
        }
    }
    let experts = hp.req_u64(&["n_routed_experts"])?;
    for b in 0..blocks {
        if only && b < main {
            continue;
        }
        for (proj, tensor) in [
            ("w1", Tensor::FfnGateExp),
            ("w2", Tensor::FfnDownExp),
            ("w3", Tensor::FfnUpExp),
        ] {
            let mut parts = Vec::new();
            for x in 0..experts {
                let w = format!("layers.{b}.ffn.experts.{x}.{proj}.weight");
                let s = format!("layers.{b}.ffn.experts.{x}.{proj}.scale");
                if !entries.iter().any(|e| e.name == w) || !entries.iter().any(|e| e.name == s) {
                    return Err(terr(&w, "missing routed expert tensors (weight and scale)"));
                }
                let w = take_read(entries, &w, "missing routed expert weight")?;
                let s = take_read(entries, &s, "missing routed expert scale")?;
                parts.push((w, s));
            }
            let name = gguf_name(tensor, Some(b), ".weight");
            let expr = crate::hf::prequant::mxfp4_experts(&name, parts)?;
            out.push((name, expr));
        }
    }
    let mut joined = Vec::new();
    for b in main..blocks {
        let (e, h) = (
            format!("layers.{b}.nextn.e_proj.weight"),
            format!("layers.{b}.nextn.h_proj.weight"),
        );
        let ei = entries.iter().position(|x| x.name == e);
        let hi = entries.iter().position(|x| x.name == h);
        let (ei, hi) = match (ei, hi) {
            (None, None) => continue,
            (Some(ei), Some(hi)) => (ei, hi),
            _ => {
                return Err(terr(
                    &e,
                    format!("missing DeepSeek-V4 MTP e/h projection pair for block {b}"),
                ))
            }
        };
        let (ex, hx) = (entries[ei].expr.clone(), entries[hi].expr.clone());
        let dtype = entries[ei].dtype;
        let name = format!("layers.{b}.nextn.eh_proj.weight");
        let expr = side_by_side(&name, ex, hx)?;
        entries.retain(|x| x.name != e && x.name != h);
        joined.push(Entry {
            name,
            expr,
            dtype,
            fp8_q8: false,
            type_bid: None,
        });
    }
    entries.splice(0..0, joined);
    Ok(out)
}

/// `torch.cat((a, b), dim=1)` of two matrices of one shape: the transposes stacked, read
/// as one matrix, transposed back.
fn side_by_side(name: &str, a: Expr, b: Expr) -> Result<Expr, ConvertError> {
    let s = a.shape().to_vec();
    if s.len() != 2 || b.shape() != s.as_slice() {
        return Err(terr(
            name,
            format!(
                "e_proj {:?} and h_proj {:?} must be matrices of one shape",
                s,
                b.shape()
            ),
        ));
    }
    let stacked = Expr::stack(name, vec![a.transpose(name)?, b.transpose(name)?])?;
    stacked.reshape(name, vec![2 * s[1], s[0]])?.transpose(name)
}

/// The class's root tensors: HF name → GGUF tensor and suffix.
const ROOT_MAP: &[(&str, Tensor, &str)] = &[
    ("embed.weight", Tensor::TokenEmbd, ".weight"),
    ("norm.weight", Tensor::OutputNorm, ".weight"),
    ("head.weight", Tensor::Output, ".weight"),
    ("hc_head_fn", Tensor::HcHeadFn, ".weight"),
    ("hc_head_base", Tensor::HcHeadBase, ".weight"),
    ("hc_head_scale", Tensor::HcHeadScale, ".weight"),
];

/// The class's block tensors: the name after `layers.N.` → GGUF tensor and suffix.
const LAYER_MAP: &[(&str, Tensor, &str)] = &[
    ("hc_attn_fn", Tensor::HcAttnFn, ".weight"),
    ("hc_attn_base", Tensor::HcAttnBase, ".weight"),
    ("hc_attn_scale", Tensor::HcAttnScale, ".weight"),
    ("hc_ffn_fn", Tensor::HcFfnFn, ".weight"),
    ("hc_ffn_base", Tensor::HcFfnBase, ".weight"),
    ("hc_ffn_scale", Tensor::HcFfnScale, ".weight"),
    ("attn.attn_sink", Tensor::AttnSinks, ".weight"),
    ("attn.wq_a.weight", Tensor::AttnQA, ".weight"),
    ("attn.wq_b.weight", Tensor::AttnQB, ".weight"),
    ("attn.q_norm.weight", Tensor::AttnQANorm, ".weight"),
    ("attn.wkv.weight", Tensor::AttnKv, ".weight"),
    ("attn.kv_norm.weight", Tensor::AttnKvANorm, ".weight"),
    ("attn.wo_a.weight", Tensor::AttnOutA, ".weight"),
    ("attn.wo_b.weight", Tensor::AttnOutB, ".weight"),
    ("attn.compressor.ape", Tensor::AttnCompressorApe, ".weight"),
    (
        "attn.compressor.wkv.weight",
        Tensor::AttnCompressorWkv,
        ".weight",
    ),
    (
        "attn.compressor.wgate.weight",
        Tensor::AttnCompressorWgate,
        ".weight",
    ),
    (
        "attn.compressor.norm.weight",
        Tensor::AttnCompressorNorm,
        ".weight",
    ),
    ("attn.indexer.wq_b.weight", Tensor::IndexerAttnQB, ".weight"),
    (
        "attn.indexer.weights_proj.weight",
        Tensor::IndexerProj,
        ".weight",
    ),
    (
        "attn.indexer.compressor.ape",
        Tensor::IndexerCompressorApe,
        ".weight",
    ),
    (
        "attn.indexer.compressor.wkv.weight",
        Tensor::IndexerCompressorWkv,
        ".weight",
    ),
    (
        "attn.indexer.compressor.wgate.weight",
        Tensor::IndexerCompressorWgate,
        ".weight",
    ),
    (
        "attn.indexer.compressor.norm.weight",
        Tensor::IndexerCompressorNorm,
        ".weight",
    ),
    ("attn_norm.weight", Tensor::AttnNorm, ".weight"),
    ("ffn_norm.weight", Tensor::FfnNorm, ".weight"),
    ("ffn.gate.weight", Tensor::FfnGateInp, ".weight"),
    ("ffn.gate.bias", Tensor::FfnExpProbsB, ".bias"),
    ("ffn.gate.bias_vl", Tensor::FfnExpProbsBVl, ".bias"),
    ("ffn.gate.tid2eid", Tensor::FfnGateTid2eid, ".weight"),
    (
        "ffn.shared_experts.w1.weight",
        Tensor::FfnGateShexp,
        ".weight",
    ),
    (
        "ffn.shared_experts.w2.weight",
        Tensor::FfnDownShexp,
        ".weight",
    ),
    (
        "ffn.shared_experts.w3.weight",
        Tensor::FfnUpShexp,
        ".weight",
    ),
    ("nextn.eh_proj.weight", Tensor::NextnEhProj, ".weight"),
    ("nextn.enorm.weight", Tensor::NextnEnorm, ".weight"),
    ("nextn.hnorm.weight", Tensor::NextnHnorm, ".weight"),
    (
        "nextn.shared_head_norm.weight",
        Tensor::NextnSharedHeadNorm,
        ".weight",
    ),
    (
        "nextn.embed_tokens.weight",
        Tensor::NextnEmbedTokens,
        ".weight",
    ),
    (
        "nextn.shared_head_head.weight",
        Tensor::NextnSharedHeadHead,
        ".weight",
    ),
];

/// `_map_dsv4_tensor_name`: the GGUF tensor (and block) of a class tensor name.
pub(super) fn map_name(name: &str) -> Result<(Tensor, Option<u64>, &'static str), ConvertError> {
    if let Some((_, t, suffix)) = ROOT_MAP.iter().find(|(hf, _, _)| *hf == name) {
        return Ok((*t, None, suffix));
    }
    let unsupported = || {
        terr(
            name,
            "unsupported DeepSeek-V4 tensor (no deepseek4 tensor has this name)",
        )
    };
    let rest = name.strip_prefix("layers.").ok_or_else(unsupported)?;
    let (layer, rest) = rest.split_once('.').ok_or_else(unsupported)?;
    if layer.is_empty() || !layer.bytes().all(|b| b.is_ascii_digit()) {
        return Err(unsupported());
    }
    let bid: u64 = layer.parse().map_err(|_| unsupported())?;
    if let Some((_, t, suffix)) = LAYER_MAP.iter().find(|(hf, _, _)| *hf == rest) {
        return Ok((*t, Some(bid), suffix));
    }
    if is_expert(rest) {
        return Ok((Tensor::FfnGateExp, Some(bid), ".weight"));
    }
    Err(unsupported())
}

/// `ffn.experts.E.w{1,2,3}.{weight,scale}`.
pub(super) fn is_expert(rest: &str) -> bool {
    let Some(r) = rest.strip_prefix("ffn.experts.") else {
        return false;
    };
    let Some((x, w)) = r.split_once('.') else {
        return false;
    };
    !x.is_empty()
        && x.bytes().all(|b| b.is_ascii_digit())
        && matches!(
            w,
            "w1.weight" | "w1.scale" | "w2.weight" | "w2.scale" | "w3.weight" | "w3.scale"
        )
}

/// `DeepseekV4Model.modify_tensors`: routed experts left over are not written (they are
/// written as MXFP4 when generated), nor a hash layer's gate bias or a routing table met
/// here; every other tensor is named by the class's map.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name
        .strip_prefix("layers.")
        .and_then(|r| r.split_once('.'))
        .is_some_and(|(l, r)| l.bytes().all(|b| b.is_ascii_digit()) && is_expert(r))
    {
        return Ok(Modified::Drop);
    }
    let bid = block_id(&name);
    if name.ends_with(".ffn.gate.bias") {
        let hashed = hp.req_u64(&["num_hash_layers"])?;
        if bid.is_some_and(|b| b < hashed) {
            return Ok(Modified::Drop);
        }
    }
    let (tensor, block, suffix) = map_name(&name)?;
    if tensor == Tensor::FfnGateTid2eid {
        return Ok(Modified::Drop);
    }
    Ok(Modified::Named(vec![(
        gguf_name(tensor, block, suffix),
        expr,
    )]))
}

/// `DeepseekV4Model.tensor_force_quant` after the FP8 rule (the dequantized weights carry
/// it): the joined MTP projection is Q8_0, F32 sources stay F32 and BF16 matrices BF16.
pub(super) fn force_type(name: &str, source: StDtype, n_dims: usize) -> Option<GgmlType> {
    if name.ends_with(".nextn.eh_proj.weight") {
        return Some(GgmlType::Q8_0);
    }
    match source {
        StDtype::F32 => Some(GgmlType::F32),
        StDtype::Bf16 if n_dims >= 2 => Some(GgmlType::BF16),
        _ => None,
    }
}

/// `DeepseekV4Model.__init__`'s default chat template, written right after
/// `general.architecture` and replaced (in place) by the tokenizer's own. ggufkit does not
/// carry llama.cpp's bundled template, so the tokenizer must have one.
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    let dir = hp.path.parent().unwrap_or(std::path::Path::new("."));
    template_extra(&crate::hf::ModelDir::new(dir))
}

/// The bundled chat template's place (see [`extra`]), for the tokenizer of `model_dir`.
pub(super) fn template_extra(model_dir: &crate::hf::ModelDir) -> Result<Extra, ConvertError> {
    let dir = model_dir.path();
    // `tokenizer_config.get("chat_template", alt)`: a present key decides, even when unusable.
    let from_config = model_dir
        .tokenizer_config()?
        .and_then(|tc| tc.get("chat_template"))
        .map(|t| t.is_string() || t.is_array());
    let has_template = match from_config {
        Some(ok) => ok,
        None => {
            dir.join("chat_template.jinja").is_file() || dir.join("chat_template.json").is_file()
        }
    };
    if !has_template {
        return Err(ConvertError::Unsupported(format!(
            "{}: the tokenizer has no chat template; llama.cpp's converter writes its bundled \
             DeepSeek-V4 template (models/templates/deepseek-ai-DeepSeek-V4.jinja) then, which \
             ggufkit does not carry: add a chat_template to tokenizer_config.json or a \
             chat_template.jinja beside it",
            dir.display()
        )));
    }
    Ok(Extra {
        tensors: Vec::new(),
        early_kvs: vec![(keys::tokenizer::CHAT_TEMPLATE.to_string(), Value::from(""))],
    })
}

/// A float hparam repeated per block as gguf-py writes a list of it: FLOAT32, or INT32
/// when the file gives an integer.
fn per_block(p: &mut Params, suffix: &str, key: &str, blocks: u64) -> Result<(), ConvertError> {
    let v =
        p.hp.get(key)
            .filter(|v| !v.is_null())
            .cloned()
            .ok_or_else(|| p.hp.missing(&[key]))?;
    let n = usize::try_from(blocks).unwrap_or(usize::MAX);
    if let Some(i) = v.as_i64() {
        let i = i32::try_from(i)
            .map_err(|_| ConvertError::out_of_range(&p.hp.path, key, i, "an INT32 list element"))?;
        p.i32s(suffix, vec![i; n]);
        return Ok(());
    }
    let f = p.hp.req_f64(&[key])?;
    p.f32s(suffix, vec![f as f32; n]);
    Ok(())
}

/// `DeepseekV4Model.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    common_params(p)?;
    let hp = p.hp;
    let width = hp
        .req_u64(&["hidden_size"])?
        .saturating_mul(hp.req_u64(&["hc_mult"])?);
    p.u32(layered::EMBEDDING_LENGTH_OUT, width)?;
    if hp.mtp == Mtp::Only {
        let nextn = hp.find_u64(&["num_nextn_predict_layers"])?.unwrap_or(0);
        if nextn > 0 {
            p.u32(mla::NEXTN_PREDICT_LAYERS, nextn)?;
        }
    }
    Ok(())
}

/// `DeepseekV4Model.set_gguf_parameters` up to the hash-layer count: what it writes under
/// any architecture (the output width only under `deepseek4`).
pub(super) fn common_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let blocks = p.block_count()?;
    p.req_u32(rope::DIMENSION_COUNT, &["qk_rope_head_dim"])?;
    p.req_u32(mla::Q_LORA_RANK, &["q_lora_rank"])?;
    p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])?;
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    p.req_u32(llm::EXPERT_SHARED_COUNT, &["n_shared_experts"])?;
    p.f32(
        mla::EXPERT_WEIGHTS_SCALE,
        hp.req_f64(&["routed_scaling_factor"])?,
    );
    p.bool(mla::EXPERT_WEIGHTS_NORM, hp.req_bool(&["norm_topk_prob"])?);
    per_block(p, llm::SWIGLU_CLAMP_EXP, "swiglu_limit", blocks)?;
    per_block(p, compressed::SWIGLU_CLAMP_SHEXP, "swiglu_limit", blocks)?;
    p.req_u32(indexer::HEAD_COUNT, &["index_n_heads"])?;
    p.req_u32(indexer::KEY_LENGTH, &["index_head_dim"])?;
    p.req_u32(indexer::TOP_K, &["index_topk"])?;
    p.req_u32(compressed::OUTPUT_GROUP_COUNT, &["o_groups"])?;
    p.req_u32(compressed::OUTPUT_LORA_RANK, &["o_lora_rank"])?;
    let ratios = hp
        .get("compress_ratios")
        .filter(|v| !v.is_null())
        .ok_or_else(|| hp.missing(&["compress_ratios"]))?;
    let ratios: Vec<i32> = ratios
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|x| x.as_i64().and_then(|i| i32::try_from(i).ok()))
                .collect()
        })
        .ok_or_else(|| {
            ConvertError::format(
                &hp.path,
                None,
                format!("compress_ratios is {ratios}: not a list of INT32 integers"),
            )
        })?;
    if !ratios.is_empty() {
        p.i32s(compressed::COMPRESS_RATIOS, ratios);
    }
    p.f32(
        compressed::COMPRESS_ROPE_FREQ_BASE,
        hp.req_f64(&["compress_rope_theta"])?,
    );
    p.req_u32(compressed::HC_COUNT, &["hc_mult"])?;
    p.req_u32(compressed::HC_SINKHORN_ITERATIONS, &["hc_sinkhorn_iters"])?;
    p.f32(compressed::HC_EPSILON, hp.req_f64(&["hc_eps"])?);
    p.req_u32(compressed::HASH_LAYER_COUNT, &["num_hash_layers"])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_map_to_their_gguf_tensors() {
        let name = |n: &str| {
            let (t, b, s) = map_name(n).unwrap();
            gguf_name(t, b, s)
        };
        assert_eq!(name("hc_head_fn"), "output_hc_fn.weight");
        assert_eq!(name("layers.2.attn.attn_sink"), "blk.2.attn_sinks.weight");
        assert_eq!(name("layers.0.ffn.gate.bias"), "blk.0.exp_probs_b.bias");
        assert_eq!(
            name("layers.1.ffn.gate.bias_vl"),
            "blk.1.exp_probs_b_vl.bias"
        );
        assert_eq!(
            name("layers.3.attn.indexer.compressor.ape"),
            "blk.3.indexer_compressor_ape.weight"
        );
        assert!(map_name("layers.0.attn.wq_a.scale").is_err());
        assert!(map_name("head.scale").is_err());
        assert!(map_name("layers.x.attn_norm.weight").is_err());
    }

    #[test]
    fn mtp_names_become_blocks_after_the_model() {
        assert_eq!(
            mtp_name("mtp.0.e_proj.weight", 3, 1).unwrap(),
            "layers.3.nextn.e_proj.weight"
        );
        assert_eq!(
            mtp_name("mtp.0.norm.weight", 3, 1).unwrap(),
            "layers.3.nextn.shared_head_norm.weight"
        );
        assert_eq!(mtp_name("mtp.0.hc_head_fn", 3, 1).unwrap(), "hc_head_fn");
        assert_eq!(
            mtp_name("mtp.1.attn.wkv.weight", 3, 2).unwrap(),
            "layers.4.attn.wkv.weight"
        );
        assert!(mtp_name("mtp.1.attn.wkv.weight", 3, 1).is_err());
        assert!(mtp_name("mtp.a.x", 3, 1).is_err());
        assert!(mtp_name("mtp.0", 3, 1).is_err());
    }

    #[test]
    fn source_types_are_kept() {
        assert_eq!(
            force_type("blk.3.nextn.eh_proj.weight", StDtype::Bf16, 2),
            Some(GgmlType::Q8_0)
        );
        assert_eq!(
            force_type("blk.0.hc_attn_fn.weight", StDtype::F32, 2),
            Some(GgmlType::F32)
        );
        assert_eq!(
            force_type("blk.0.ffn_gate_inp.weight", StDtype::Bf16, 2),
            Some(GgmlType::BF16)
        );
        assert_eq!(force_type("blk.0.attn_norm.weight", StDtype::Bf16, 1), None);
        assert_eq!(force_type("blk.0.attn_q_a.weight", StDtype::F16, 2), None);
    }
}
