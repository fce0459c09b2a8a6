//! `LagunaForCausalLM` (arch `laguna`, `LagunaModel` in `conversion/laguna.py`).
//!
//! poolside's Laguna: per-layer attention head counts (`num_attention_heads_per_layer`,
//! written as the head-count array), an attention output gate `self_attn.g_proj` (per head
//! or per element: `gating_types`, else `gating` as a string or the legacy `true` = per head;
//! a per-element gate the `gating` string does not declare is refused, and the gate's width
//! must agree with its type), q/k norms, sliding and full layers with per-layer-type partial
//! rotary (`rope.dimension_count` and `_swa` from the rope dict's `full_attention` /
//! `sliding_attention` entries). The leading dense blocks come from `mlp_layer_types`, then
//! routed experts (numbered `mlp.experts.{xid}.*` stacked gate, up, down; the selection
//! bias `mlp.experts.e_score_correction_bias` is mapped as it is) with a shared expert;
//! sigmoid routing, always normalised. GPT-2 BPE vocabulary with `</assistant>` as a control
//! token, `chat_template.jinja` as the chat template when present, and the first id of an
//! `eos_token_id` list that is not `bos_token_id` as eot.

use ggufkit::gguf::keys::{self, attention, llm, mla, rope};
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// Laguna.
pub const LAGUNA: Arch = Arch {
    hf_names: &["LagunaForCausalLM"],
    model_types: &[ModelType {
        name: "laguna",
        hf_classes: &["LagunaForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 100352,
            "hidden_size" => 2048,
            "intermediate_size" => 8192,
            "num_hidden_layers" => 40,
            "num_attention_heads" => 48,
            "num_key_value_heads" => 8,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-6,
            "tie_word_embeddings" => false,
            "sliding_window" => 512,
            "moe_intermediate_size" => 512,
            "shared_expert_intermediate_size" => 512,
            "num_experts_per_tok" => 8,
            "num_experts" => 256,
            "head_dim" => 128,
            "gating" => true,
            "moe_routed_scaling_factor" => 1.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(derive_layer_lists),
    }],
    composites: &[],
    gguf: "laguna",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::AttnGate,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::FfnGateInp,
        Tensor::FfnExpProbsB,
        Tensor::FfnGateExp,
        Tensor::FfnDownExp,
        Tensor::FfnUpExp,
        Tensor::FfnGateShexp,
        Tensor::FfnUpShexp,
        Tensor::FfnDownShexp,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(hook),
        experts: &[LAGUNA_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Numbered per-expert `gate/up/down_proj`, stacked in that order (the hook passes the
/// selection bias, also under `mlp.experts.`, on by itself first).
const LAGUNA_EXPERTS: Experts = Experts {
    marker: "mlp.experts.",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["gate_proj", "up_proj", "down_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `token_type` of a control token (`gguf.TokenType.CONTROL`).
const CONTROL: i32 = 3;

/// `LagunaConfig.__post_init__`: all layers full attention, the first dense and the others
/// sparse, every layer with `num_attention_heads` heads, the per-layer-type rope dict, when
/// the config does not say.
fn derive_layer_lists(cfg: &mut serde_json::Map<String, Json>) -> bool {
    let n = cfg
        .get("num_hidden_layers")
        .map_or(Some(40), Json::as_u64)
        .unwrap_or(0)
        .min(crate::hf::config::MAX_BLOCK_COUNT) as usize;
    let absent =
        |cfg: &serde_json::Map<String, Json>, k: &str| cfg.get(k).is_none_or(Json::is_null);
    if absent(cfg, "layer_types") {
        cfg.insert("layer_types".into(), Json::from(vec!["full_attention"; n]));
    }
    if absent(cfg, "mlp_layer_types") {
        let mut t = vec!["dense"];
        t.extend(vec!["sparse"; n.saturating_sub(1)]);
        cfg.insert("mlp_layer_types".into(), Json::from(t));
    }
    if absent(cfg, "num_attention_heads_per_layer") {
        let heads = cfg
            .get("num_attention_heads")
            .cloned()
            .unwrap_or(Json::from(48));
        cfg.insert(
            "num_attention_heads_per_layer".into(),
            Json::Array(vec![heads; n]),
        );
    }
    if absent(cfg, "rope_parameters") {
        cfg.insert(
            "rope_parameters".into(),
            serde_json::json!({
                "full_attention": {"rope_type": "default", "rope_theta": 500000.0, "partial_rotary_factor": 0.5},
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0},
            }),
        );
    }
    true
}

fn fmt_err(hp: &Hparams, what: String) -> ConvertError {
    ConvertError::format(&hp.path, None, what)
}

/// The per-layer head counts: `num_attention_heads_per_layer` when non-empty, else
/// `num_attention_heads` for every layer; one per layer.
fn heads_per_layer(hp: &Hparams) -> Result<Vec<u64>, ConvertError> {
    let n = hp.req_u64(&["num_hidden_layers"])?;
    let heads = match hp.get("num_attention_heads_per_layer") {
        Some(Json::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| {
                json_u64(v).ok_or_else(|| {
                    fmt_err(
                        hp,
                        format!("num_attention_heads_per_layer: not a count: {v}"),
                    )
                })
            })
            .collect::<Result<Vec<u64>, _>>()?,
        None | Some(Json::Null) | Some(Json::Array(_)) => {
            let h = hp.req_u64(&["num_attention_heads"])?;
            vec![h; n.min(crate::hf::config::MAX_BLOCK_COUNT) as usize]
        }
        Some(v) => {
            return Err(fmt_err(
                hp,
                format!("num_attention_heads_per_layer: expected a list, found {v}"),
            ))
        }
    };
    if heads.len() as u64 != n {
        return Err(fmt_err(
            hp,
            format!(
                "num_attention_heads_per_layer has {} entries for {n} layers",
                heads.len()
            ),
        ));
    }
    Ok(heads)
}

/// `_attn_gate_types`: each layer's output gate, true for per-element, false for per-head.
fn gate_types(hp: &Hparams) -> Result<Vec<bool>, ConvertError> {
    let n = hp.req_u64(&["num_hidden_layers"])?;
    let norm = |v: &Json| -> Result<bool, ConvertError> {
        let s = match v {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        match s.replace('-', "_").as_str() {
            "per_element" => Ok(true),
            "per_head" => Ok(false),
            _ => Err(fmt_err(
                hp,
                format!("Laguna: unrecognised attention gate type {v}"),
            )),
        }
    };
    let gating = hp.get("gating");
    let types = match hp.get("gating_types") {
        Some(Json::Array(a)) if !a.is_empty() => {
            if a.len() as u64 != n {
                return Err(fmt_err(
                    hp,
                    format!("gating_types has {} entries for {n} layers", a.len()),
                ));
            }
            a.iter().map(norm).collect::<Result<Vec<bool>, _>>()?
        }
        _ => match gating {
            Some(g @ Json::String(_)) => vec![norm(g)?; n as usize],
            Some(Json::Bool(true)) => vec![false; n as usize],
            _ => {
                return Err(fmt_err(
                    hp,
                    format!(
                    "Laguna: cannot determine the attention gate type (gating {}, gating_types {})",
                    gating.unwrap_or(&Json::Null),
                    hp.get("gating_types").unwrap_or(&Json::Null)
                ),
                ))
            }
        },
    };
    let declared = matches!(gating, Some(g @ Json::String(_)) if norm(g).ok() == Some(true));
    if types.iter().any(|t| *t) && !declared {
        return Err(fmt_err(
            hp,
            format!(
                "Laguna declares a per-element attention gate but gating ({}) is not the \
                 string \"per-element\"",
                gating.unwrap_or(&Json::Null)
            ),
        ));
    }
    Ok(types)
}

/// `LagunaModel.modify_tensors`: the selection bias is mapped by itself, and each layer's
/// gate projection must have the width its gate type says (heads, or heads × head_dim).
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.contains("mlp.experts.") && !is_numbered_expert(&name) {
        return Ok(Modified::Out(vec![(name, expr)]));
    }
    if name.ends_with("self_attn.g_proj.weight") {
        if let Some(bid) = name
            .split('.')
            .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<usize>().ok())
        {
            let heads = heads_per_layer(hp)?;
            let n_head = *heads.get(bid).ok_or_else(|| ConvertError::Tensor {
                name: name.clone(),
                problem: "layer past num_hidden_layers".into(),
            })?;
            let per_element = gate_types(hp)?[bid];
            let head_dim = hp.req_u64(&["head_dim"])?;
            let expected = if per_element {
                n_head.saturating_mul(head_dim)
            } else {
                n_head
            };
            let width = expr.shape().first().copied().unwrap_or(0);
            if width != expected {
                return Err(ConvertError::Tensor {
                    name,
                    problem: format!(
                        "gate width {width} contradicts the declared {} gate (expected \
                         {expected}): weights and config disagree",
                        if per_element {
                            "per-element"
                        } else {
                            "per-head"
                        }
                    ),
                });
            }
        }
    }
    Ok(Modified::Pass(name, expr))
}

/// `re.search(r"mlp\.experts\.\d+\.", name)`.
fn is_numbered_expert(name: &str) -> bool {
    name.match_indices("mlp.experts.").any(|(i, m)| {
        let rest = &name[i + m.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest.as_bytes().get(digits) == Some(&b'.')
    })
}

/// `LagunaModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    p.u32(llm::VOCAB_SIZE, hp.req_u64(&["vocab_size"])?)?;
    let heads = heads_per_layer(hp)?;
    let heads = heads
        .iter()
        .map(|h| i32::try_from(*h).map_err(|_| fmt_err(hp, format!("head count {h} too large"))))
        .collect::<Result<Vec<i32>, _>>()?;
    p.i32s(attention::HEAD_COUNT, heads);
    gate_types(hp)?;
    if let Some(w) = hp.find_u64(&["sliding_window"])?.filter(|w| *w > 0) {
        p.u32(attention::SLIDING_WINDOW, w)?;
    }
    p.u32(
        llm::EXPERT_FEED_FORWARD_LENGTH,
        hp.req_u64(&["moe_intermediate_size"])?,
    )?;
    p.u32(
        llm::EXPERT_SHARED_FEED_FORWARD_LENGTH,
        hp.req_u64(&["shared_expert_intermediate_size"])?,
    )?;
    p.bool(mla::EXPERT_WEIGHTS_NORM, true);
    p.f32(
        mla::EXPERT_WEIGHTS_SCALE,
        hp.req_f64(&["moe_routed_scaling_factor"])?,
    );
    // ExpertGatingFuncType.SIGMOID
    p.u32(llm::EXPERT_GATING_FUNC, 2)?;
    let dense = match hp.get("mlp_layer_types") {
        Some(Json::Array(t)) => t.iter().take_while(|t| t.as_str() == Some("dense")).count(),
        _ => return Err(hp.missing(&["mlp_layer_types"])),
    };
    p.u32(llm::LEADING_DENSE_BLOCK_COUNT, dense as u64)?;
    let head_dim = hp.req_u64(&["head_dim"])? as f64;
    let factor = |entry: &Json| -> Result<f64, ConvertError> {
        match entry.get("partial_rotary_factor") {
            None => Ok(1.0),
            Some(v) => v
                .as_f64()
                .ok_or_else(|| fmt_err(hp, format!("partial_rotary_factor: not a number: {v}"))),
        }
    };
    let full = hp.rope.get("full_attention").ok_or_else(|| {
        fmt_err(
            hp,
            "Laguna needs a per-layer-type rope dict with full_attention".into(),
        )
    })?;
    p.u32(rope::DIMENSION_COUNT, (head_dim * factor(full)?) as u64)?;
    if let Some(swa) = hp.rope.get("sliding_attention") {
        p.u32(rope::DIMENSION_COUNT_SWA, (head_dim * factor(swa)?) as u64)?;
    }
    Ok(())
}

/// `LagunaModel.set_vocab`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let outcome = b.gpt2()?;
    b.set_token_type("</assistant>", CONTROL);
    let tmpl = b.dir().join("chat_template.jinja");
    if tmpl.is_file() {
        let text = std::fs::read_to_string(&tmpl).map_err(|e| ConvertError::io(&tmpl, e))?;
        b.set_chat_template(&text);
    }
    let hp = b.hparams().clone();
    if let Some(Json::Array(ids)) = hp.get("eos_token_id") {
        let bos = hp.get("bos_token_id");
        if let Some(extra) = ids.iter().find(|e| Some(*e) != bos) {
            let id = extra.as_i64().ok_or_else(|| {
                ConvertError::wrong_type(b.dir().config_path(), "eos_token_id", "integers", extra)
            })?;
            b.set_token_id(keys::tokenizer::EOT_ID, id.into())?;
        }
    }
    Ok(outcome)
}
