//! Gated delta-net hybrids: `Qwen3NextForCausalLM` (arch `qwen3next`) and the Qwen3.5 text
//! classes (`qwen35`, `qwen35moe`), `conversion/qwen.py`.
//!
//! Layers are linear attention (a gated delta-net: `linear_attn.*`) or full attention with
//! gated queries (`layer_types`, else every `full_attention_interval`-th layer); Qwen3-Next and
//! Qwen3.5-MoE have Qwen2-MoE's routed and shared experts, Qwen3.5 a dense FFN. Tensors: every
//! `*norm.weight` except the delta-net's gated `linear_attn.norm` gets `+ 1`, `A_log` becomes
//! `A = -exp(A_log)`, `dt_bias` is the `dt_proj` bias, the conv1d weight is squeezed, and
//! Qwen3-Next's fused `in_proj_qkvz` (per key head `[q, k, v, z]`) is regrouped into
//! `attn_qkv` (all q, all k, all v) and `attn_gate` (all z). Qwen3.5 first reorders the value
//! heads from grouped by key head to tiled (`[G0_v0, G1_v0, …, G0_v1, …]`) when there are
//! more value heads than key heads: the v rows of `in_proj_qkv`, the rows of `in_proj_z`,
//! `in_proj_a`, `in_proj_b`, `A_log`, `dt_bias`, the v channels of the conv1d and the columns
//! of `out_proj`.
//!
//! The next-token-prediction block is kept: the checkpoint's `mtp.layers.{i}.*` become blocks
//! `num_hidden_layers + i`, `mtp.fc` / `pre_fc_norm_embedding` / `pre_fc_norm_hidden` /
//! `norm` that block's `eh_proj` / `enorm` / `hnorm` / `shared_head.norm`
//! ([`mtp_entries`]); their number is `mtp_num_hidden_layers`, else (Qwen3-Next's configs
//! lack it) the number of `mtp.layers.*` in the checkpoint, which must not be zero (the
//! reference refuses such a checkpoint). Hparams: Qwen2-MoE's, `nextn_predict_layers`, the
//! `ssm.*` sizes of the delta-net, the recurrent-layer pattern (padded with the MTP blocks),
//! `full_attention_interval`, and rotary dimensions `head_dim * partial_rotary_factor`
//! (default 0.25); Qwen3.5 always writes M-RoPE sections (default `[11, 11, 10, 0]`).
//!
//! Not reproduced: for `model_type` `qwen3_5`, `qwen3_5_moe` and `qwen3_5_moe_text`,
//! transformers 5 loads the tokenizer as its own `Qwen3_5Tokenizer` (Qwen's pre-tokenizer and
//! NFC over the file's vocabulary) whatever tokenizer_config.json says, so the reference
//! hashes that pipeline; we hash tokenizer.json as written. The two agree for the tokenizers
//! Qwen ships (their tokenizer.json has that pipeline); a foreign vocabulary under those
//! model types is refused by the reference (unknown hash) and converted here.

use ggufkit::gguf::keys::{hybrid, mla, rope, ssm};
use serde_json::{json, Map, Value as Json};

use super::qwen::{moe_params, QWEN_EXPERTS};
use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, MtpExport, Rules, TextType};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::{Params, BLOCK_COUNT_KEYS};
use crate::hf::tensors::Entry;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

/// The attention, norms and next-token-prediction tensors every class here has.
const COMMON: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::AttnQ,
    Tensor::AttnQNorm,
    Tensor::AttnK,
    Tensor::AttnKNorm,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::AttnPostNorm,
    Tensor::AttnGate,
    Tensor::AttnQkv,
    Tensor::SsmA,
    Tensor::SsmConv1d,
    Tensor::SsmDt,
    Tensor::SsmNorm,
    Tensor::SsmOut,
    Tensor::NextnEhProj,
    Tensor::NextnEmbedTokens,
    Tensor::NextnEnorm,
    Tensor::NextnHnorm,
    Tensor::NextnSharedHeadHead,
    Tensor::NextnSharedHeadNorm,
];

/// Qwen2-MoE's routed and shared experts.
const EXPERTS: &[Tensor] = &[
    Tensor::FfnGateInp,
    Tensor::FfnGateInpShexp,
    Tensor::FfnUpShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnGateExp,
];

/// Qwen3-Next's transformers defaults (`Qwen3NextConfig`), the keys the converter reads.
const NEXT_DEFAULTS: &[super::ConfigDefault] = defaults! {
    "vocab_size" => 151936,
    "hidden_size" => 2048,
    "intermediate_size" => 5632,
    "num_hidden_layers" => 48,
    "num_attention_heads" => 16,
    "num_key_value_heads" => 2,
    "max_position_embeddings" => 32768,
    "rms_norm_eps" => 1e-6,
    "rope_theta" => 10000.0,
    "head_dim" => 256,
    "linear_conv_kernel_dim" => 4,
    "linear_key_head_dim" => 128,
    "linear_value_head_dim" => 128,
    "linear_num_key_heads" => 16,
    "linear_num_value_heads" => 32,
    "moe_intermediate_size" => 512,
    "shared_expert_intermediate_size" => 512,
    "num_experts_per_tok" => 10,
    "num_experts" => 512,
};

/// `Qwen3NextForCausalLM` (arch `qwen3next`).
pub const QWEN3NEXT: Arch = Arch {
    hf_names: &["Qwen3NextForCausalLM"],
    model_types: &[ModelType {
        name: "qwen3_next",
        hf_classes: &["Qwen3NextForCausalLM"],
        defaults: NEXT_DEFAULTS,
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(|cfg| layer_types(cfg, 48)),
    }],
    composites: &[],
    gguf: "qwen3next",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[COMMON, EXPERTS, &[Tensor::SsmIn, Tensor::SsmBetaAlpha]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        fused_experts: true,
        experts: &[QWEN_EXPERTS],
        hook: Some(next_hook),
        mtp: Some(mtp_entries),
        mtp_export: Some(QWEN_MTP_EXPORT),
        ..Rules::NONE
    },
    params: next_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Qwen3_5ForCausalLM` and the text model of `Qwen3_5ForConditionalGeneration` (arch
/// `qwen35`).
pub const QWEN35: Arch = Arch {
    hf_names: &["Qwen3_5ForConditionalGeneration", "Qwen3_5ForCausalLM"],
    model_types: &[ModelType {
        name: "qwen3_5_text",
        hf_classes: &["Qwen3_5ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 248320,
            "hidden_size" => 4096,
            "intermediate_size" => 12288,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 4,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "head_dim" => 256,
            "linear_conv_kernel_dim" => 4,
            "linear_key_head_dim" => 128,
            "linear_value_head_dim" => 128,
            "linear_num_key_heads" => 16,
            "linear_num_value_heads" => 32,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(|cfg| layer_types(cfg, 32)),
    }],
    composites: &[("qwen3_5", TextType::Fixed("qwen3_5_text"))],
    gguf: "qwen35",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        COMMON,
        &[
            Tensor::FfnGate,
            Tensor::FfnDown,
            Tensor::FfnUp,
            Tensor::SsmBeta,
            Tensor::SsmAlpha,
        ],
    ],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        fused_experts: true,
        experts: &[QWEN_EXPERTS],
        hook: Some(qwen35_hook),
        mtp: Some(mtp_entries),
        mtp_export: Some(QWEN_MTP_EXPORT),
        ..Rules::NONE
    },
    params: qwen35_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Qwen3_5MoeForCausalLM` and the text model of `Qwen3_5MoeForConditionalGeneration` (arch
/// `qwen35moe`).
pub const QWEN35MOE: Arch = Arch {
    hf_names: &[
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5MoeForCausalLM",
    ],
    model_types: &[ModelType {
        name: "qwen3_5_moe_text",
        hf_classes: &["Qwen3_5MoeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 248320,
            "hidden_size" => 2048,
            "num_hidden_layers" => 40,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 2,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "head_dim" => 256,
            "linear_conv_kernel_dim" => 4,
            "linear_key_head_dim" => 128,
            "linear_value_head_dim" => 128,
            "linear_num_key_heads" => 16,
            "linear_num_value_heads" => 32,
            "moe_intermediate_size" => 512,
            "shared_expert_intermediate_size" => 512,
            "num_experts_per_tok" => 8,
            "num_experts" => 256,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(|cfg| layer_types(cfg, 40)),
    }],
    composites: &[("qwen3_5_moe", TextType::Fixed("qwen3_5_moe_text"))],
    gguf: "qwen35moe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[COMMON, EXPERTS, &[Tensor::SsmBeta, Tensor::SsmAlpha]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        fused_experts: true,
        experts: &[QWEN_EXPERTS],
        hook: Some(qwen35_hook),
        mtp: Some(mtp_entries),
        mtp_export: Some(QWEN_MTP_EXPORT),
        ..Rules::NONE
    },
    params: qwen35_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The config classes' `__post_init__`: without `layer_types`, every
/// `full_attention_interval`-th layer (default 4, a key the class then drops) is full
/// attention, the others linear. `false` (AutoConfig fails) for an interval that is not a
/// positive integer.
fn layer_types(cfg: &mut Map<String, Json>, default_layers: u64) -> bool {
    if !cfg.get("layer_types").is_none_or(Json::is_null) {
        return true;
    }
    let interval = match cfg.get("full_attention_interval") {
        None => 4,
        Some(v) => match json_u64(v).filter(|i| *i != 0 && v.is_u64()) {
            Some(i) => i,
            None => return false,
        },
    };
    let n = match cfg.get("num_hidden_layers") {
        None => default_layers,
        Some(v) => match v.as_u64() {
            Some(n) => n.min(crate::hf::config::MAX_BLOCK_COUNT),
            None => return false,
        },
    };
    cfg.remove("full_attention_interval");
    let types: Vec<Json> = (0..n)
        .map(|i| {
            json!(if (i + 1) % interval != 0 {
                "linear_attention"
            } else {
                "full_attention"
            })
        })
        .collect();
    cfg.insert("layer_types".into(), Json::Array(types));
    true
}

/// `_QwenMtpMixin.filter_tensors` under `--mtp` / `--no-mtp`: the MTP tensors are
/// `mtp.*` and `model.mtp.*`; `--mtp` keeps the embeddings, final norm and output besides.
const QWEN_MTP_EXPORT: MtpExport = MtpExport {
    raw_names: false,
    is_mtp: |_, name| Ok(name.starts_with("mtp.") || name.starts_with("model.mtp.")),
    shared: &[
        "model.embed_tokens.weight",
        "model.norm.weight",
        "lm_head.weight",
        "embed_tokens.weight",
        "norm.weight",
    ],
};

/// `_QwenMtpMixin.filter_tensors` and the block count of its `__init__`: `model.mtp.*` and
/// `mtp.*` tensors are renamed to the blocks after the config's (`mtp.layers.{i}.X` →
/// `model.layers.{n + i}.X`; `mtp.fc`, `pre_fc_norm_embedding`, `pre_fc_norm_hidden`, `norm`
/// → block `n`'s `eh_proj`, `enorm`, `hnorm`, `shared_head.norm`), and `hp` gets the MTP
/// blocks: `mtp_num_hidden_layers`, else the number of `mtp.layers.*` seen.
fn mtp_entries(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    if hp.mtp == Mtp::Drop {
        // --no-mtp: the MTP tensors are gone and the block count is the config's.
        return Ok(entries);
    }
    let n = hp
        .find_u64(BLOCK_COUNT_KEYS)?
        .ok_or_else(|| hp.missing(BLOCK_COUNT_KEYS))?;
    let mut seen = 0u64;
    let mut out = Vec::with_capacity(entries.len());
    for mut e in entries {
        if let Some(rest) = e.name.strip_prefix("model.mtp.") {
            e.name = format!("mtp.{rest}");
        }
        if e.name.starts_with("mtp.") {
            let parts: Vec<&str> = e.name.splitn(4, '.').collect();
            let is_index = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
            if parts.len() == 4 && parts[1] == "layers" && is_index(parts[2]) {
                let idx: u64 = parts[2].parse().map_err(|_| ConvertError::Tensor {
                    name: e.name.clone(),
                    problem: "next-token-prediction layer index out of range".into(),
                })?;
                seen = seen.max(idx.saturating_add(1));
                e.name = format!("model.layers.{}.{}", n.saturating_add(idx), parts[3]);
            } else if parts.len() == 3 {
                let mapped = match parts[1] {
                    "fc" => Some("eh_proj"),
                    "pre_fc_norm_embedding" => Some("enorm"),
                    "pre_fc_norm_hidden" => Some("hnorm"),
                    "norm" => Some("shared_head.norm"),
                    _ => None,
                };
                if let Some(m) = mapped {
                    e.name = format!("model.layers.{n}.{m}.{}", parts[2]);
                }
            }
        }
        out.push(e);
    }
    let extra = match hp.get("mtp_num_hidden_layers") {
        None => 0,
        Some(v) => json_u64(v).ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "mtp_num_hidden_layers", "a count", v)
        })?,
    };
    let extra = if extra == 0 { seen } else { extra };
    if extra == 0 {
        return Err(ConvertError::format(
            &hp.path,
            None,
            "no next-token-prediction layers: config.json has no mtp_num_hidden_layers and \
             the checkpoint no mtp.layers.* tensors (the reference refuses such a checkpoint)",
        ));
    }
    hp.extra_blocks = extra;
    Ok(out)
}

fn hp_err(hp: &Hparams, what: String) -> ConvertError {
    ConvertError::format(&hp.path, None, what)
}

/// `Qwen3NextModel.set_gguf_parameters` (after Qwen2-MoE's and the MTP mixin's).
fn next_params(p: &mut Params) -> Result<(), ConvertError> {
    moe_params(p)?;
    let hp = p.hp;
    let n_layer = hp.req_u64(&["num_hidden_layers"])?;
    let total = hp.block_count()?;
    if total > n_layer {
        p.u32(mla::NEXTN_PREDICT_LAYERS, total - n_layer)?;
    }
    p.u32(ssm::CONV_KERNEL, hp.req_u64(&["linear_conv_kernel_dim"])?)?;
    p.u32(ssm::STATE_SIZE, hp.req_u64(&["linear_key_head_dim"])?)?;
    p.u32(ssm::GROUP_COUNT, hp.req_u64(&["linear_num_key_heads"])?)?;
    let n_v = hp.req_u64(&["linear_num_value_heads"])?;
    p.u32(ssm::TIME_STEP_RANK, n_v)?;
    let inner = hp
        .req_u64(&["linear_value_head_dim"])?
        .checked_mul(n_v)
        .ok_or_else(|| hp_err(hp, "linear attention inner size overflows".into()))?;
    p.u32(ssm::INNER_SIZE, inner)?;
    match hp.get("layer_types") {
        None | Some(Json::Null) => {}
        Some(Json::Array(types)) => {
            if types.len() as u64 != n_layer {
                return Err(hp_err(
                    hp,
                    format!(
                        "layer_types has {} entries, expected num_hidden_layers ({n_layer})",
                        types.len()
                    ),
                ));
            }
            let mut recurrent: Vec<bool> = types
                .iter()
                .map(|t| t.as_str() == Some("linear_attention"))
                .collect();
            recurrent.resize(total as usize, false);
            p.bools(hybrid::RECURRENT_LAYERS, recurrent);
        }
        Some(v) => {
            return Err(hp_err(
                hp,
                format!("layer_types: expected a list, found {v}"),
            ))
        }
    }
    let interval = hp.find_u64(&["full_attention_interval"])?.unwrap_or(4);
    p.u32(hybrid::FULL_ATTENTION_INTERVAL, interval)?;
    let rope_dim = match hp.find_u64(&["head_dim"])? {
        Some(d) => d,
        None => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            hp.req_u64(&["hidden_size"])?
                .checked_div(heads)
                .ok_or_else(|| hp_err(hp, "num_attention_heads is 0".into()))?
        }
    };
    let factor = match hp.rope.get("partial_rotary_factor") {
        None => 0.25,
        Some(v) => v
            .as_f64()
            .ok_or_else(|| hp_err(hp, format!("partial_rotary_factor: not a number: {v}")))?,
    };
    p.u32(rope::DIMENSION_COUNT, (rope_dim as f64 * factor) as u64)?;
    Ok(())
}

/// Qwen3.5: Qwen3-Next's hparams, and the M-RoPE sections always (`_Qwen35MRopeMixin`).
pub(super) fn qwen35_params(p: &mut Params) -> Result<(), ConvertError> {
    next_params(p)?;
    if !p.hp.rope.contains_key("mrope_section") {
        p.i32s(rope::DIMENSION_SECTIONS, vec![11, 11, 10, 0]);
    }
    Ok(())
}

/// A count from the hparams, for the tensor transforms.
fn count(hp: &Hparams, key: &str) -> Result<u64, ConvertError> {
    hp.req_u64(&[key])
}

/// `Qwen3NextModel.modify_tensors` (before Qwen2-MoE's expert handling).
fn next_hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let mut name = name;
    let mut expr = expr;
    if name.ends_with(".A_log") {
        expr = expr.neg_exp();
    } else if let Some(base) = name.strip_suffix(".dt_bias") {
        name = format!("{base}.dt_proj.bias");
    } else if name.contains("conv1d") {
        expr = expr.squeeze(&name)?;
    } else if name.ends_with("norm.weight") && !name.ends_with("linear_attn.norm.weight") {
        expr = expr.add_scalar(1.0);
    }
    if name.contains("in_proj_qkvz.weight") {
        return split_qkvz(hp, &name, expr);
    }
    Ok(Modified::Pass(name, expr))
}

fn terr(name: &str, problem: String) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem,
    }
}

/// Qwen3-Next's `in_proj_qkvz`: rows `[q, k, v, z]` per key head (q, k of `head_k_dim` rows,
/// v, z of `num_v_heads / num_k_heads * head_v_dim`) → `attn_qkv` (every head's q, then every
/// k, then every v) and `attn_gate` (every z).
fn split_qkvz(hp: &Hparams, name: &str, expr: Expr) -> Result<Modified, ConvertError> {
    let hk = count(hp, "linear_key_head_dim")?;
    let hv = count(hp, "linear_value_head_dim")?;
    let nv = count(hp, "linear_num_value_heads")?;
    let nk = count(hp, "linear_num_key_heads")?;
    let hidden = count(hp, "hidden_size")?;
    let shape = expr.shape().to_vec();
    let bad = || {
        terr(
            name,
            format!("shape {shape:?} is not [{nk} key heads x [q, k, v, z], hidden size {hidden}]"),
        )
    };
    if nk == 0 {
        return Err(bad());
    }
    let vz = (nv / nk).checked_mul(hv).ok_or_else(bad)?;
    let per = hk
        .checked_mul(2)
        .and_then(|x| x.checked_add(vz.checked_mul(2)?))
        .ok_or_else(bad)?;
    if shape.len() != 2 || Some(shape[0]) != nk.checked_mul(per) || shape[1] != hidden {
        return Err(bad());
    }
    let mut map = Vec::with_capacity(shape[0] as usize);
    for (start, len) in [(0, hk), (hk, hk), (2 * hk, vz), (2 * hk + vz, vz)] {
        for g in 0..nk {
            map.extend((0..len).map(|r| g * per + start + r));
        }
    }
    let qkv_rows = nk * (2 * hk + vz);
    let all = expr.gather_rows(name, map)?;
    let qkv = all.clone().narrow(name, 0, 0, qkv_rows)?;
    let z = all.narrow(name, 0, qkv_rows, nk * vz)?;
    let bid = block_id(name).unwrap_or(0);
    Ok(Modified::Out(vec![
        (format!("blk.{bid}.attn_qkv.weight"), qkv),
        (format!("blk.{bid}.attn_gate.weight"), z),
    ]))
}

/// `_reorder_v_heads` along the rows: `rows = n_k * per_k * head_dim` grouped by key head
/// become tiled (`[k][r][d]` → `[r][k][d]`).
fn tiled_rows(n_k: u64, per_k: u64, head_dim: u64) -> Vec<u64> {
    let mut map = Vec::with_capacity((n_k * per_k * head_dim) as usize);
    for r in 0..per_k {
        for g in 0..n_k {
            map.extend((0..head_dim).map(|d| (g * per_k + r) * head_dim + d));
        }
    }
    map
}

/// Reorders `rows` rows of `expr` starting at `start` (the rest unchanged).
fn reorder_rows(
    name: &str,
    expr: Expr,
    start: u64,
    n_k: u64,
    per_k: u64,
    head_dim: u64,
) -> Result<Expr, ConvertError> {
    let rows = expr.shape().first().copied().unwrap_or(0);
    let len = n_k
        .checked_mul(per_k)
        .and_then(|x| x.checked_mul(head_dim))
        .filter(|l| start.checked_add(*l) == Some(rows))
        .ok_or_else(|| {
            terr(
                name,
                format!(
                    "{} rows after row {start} are not {n_k} key heads x {per_k} value heads x \
                     {head_dim}",
                    rows.saturating_sub(start)
                ),
            )
        })?;
    let mut map: Vec<u64> = (0..start).collect();
    map.extend(
        tiled_rows(n_k, per_k, head_dim)
            .into_iter()
            .map(|i| i + start),
    );
    debug_assert_eq!(map.len() as u64, start + len);
    expr.gather_rows(name, map)
}

/// Reorders the columns (the innermost dimension of a 2-D tensor).
fn reorder_cols(
    name: &str,
    expr: Expr,
    n_k: u64,
    per_k: u64,
    head_dim: u64,
) -> Result<Expr, ConvertError> {
    if expr.shape().len() != 2 {
        return Err(terr(
            name,
            format!(
                "cannot reorder the value heads of the columns of shape {:?}",
                expr.shape()
            ),
        ));
    }
    let t = expr.transpose(name)?;
    reorder_rows(name, t, 0, n_k, per_k, head_dim)?.transpose(name)
}

/// `_LinearAttentionVReorderBase.modify_tensors`, then Qwen3-Next's.
pub(super) fn qwen35_hook(
    hp: &Hparams,
    name: String,
    expr: Expr,
) -> Result<Modified, ConvertError> {
    let nk = hp.find_u64(&["linear_num_key_heads"])?.unwrap_or(0);
    let nv = hp.find_u64(&["linear_num_value_heads"])?.unwrap_or(0);
    if nk == 0 || nv == 0 || nk == nv || !name.contains("linear_attn.") {
        return next_hook(hp, name, expr);
    }
    let hk = count(hp, "linear_key_head_dim")?;
    let hv = count(hp, "linear_value_head_dim")?;
    let per_k = nv / nk;
    let n = name.as_str();
    let expr = if n.contains(".in_proj_qkv.") {
        reorder_rows(n, expr, 2 * nk * hk, nk, per_k, hv)?
    } else if n.contains(".in_proj_z.") {
        reorder_rows(n, expr, 0, nk, per_k, hv)?
    } else if n.contains(".in_proj_b.") || n.contains(".in_proj_a.") {
        reorder_rows(n, expr, 0, nk, per_k, 1)?
    } else if n.contains(".A_log") || n.contains(".dt_bias") || n.contains(".dt_proj") {
        if expr.shape().len() <= 1 {
            reorder_rows(n, expr, 0, nk, per_k, 1)?
        } else {
            reorder_cols(n, expr, nk, per_k, 1)?
        }
    } else if n.contains(".conv1d") {
        let squeezed = expr.squeeze(n)?;
        reorder_rows(n, squeezed, 2 * nk * hk, nk, per_k, hv)?
    } else if n.contains(".out_proj.") {
        reorder_cols(n, expr, nk, per_k, hv)?
    } else {
        expr
    };
    next_hook(hp, name, expr)
}
