//! DFlash block-diffusion speculative-decoding drafts (`DFlashDraftModel`,
//! `DFlash2DraftModel`; arch `dflash`), converted with `--target-model-dir`.
//!
//! A Qwen3 decoder whose checkpoint names lack the `model.` prefix; `fc` (the projection of
//! the target layers' hidden states) and `hidden_norm` are its own tensors. The vocabulary
//! is built from the target's tokenizer by the target class's own path, then the
//! `dflash_config` mask token is written. The keys beyond Qwen3's come from
//! `dflash_config` (or the config root): the block size, the target layers (one-based),
//! rope dimensions under a partial rotary factor, value / logit / embedding scales, a soft
//! cap, the sliding window (every layer under `use_swa`), causality, the convolution and
//! candidate-selector sizes, and degenerate M-RoPE sections for a target with M-RoPE. A
//! checkpoint whose rope is interleaved (`rope_is_neox_style: false`) has its q/k rows and
//! q/k norms reordered to NeoX's layout per head.

use ggufkit::gguf::keys::{attention, draft, llm, rope};
use ggufkit::gguf::Value;
use serde_json::{Map, Value as Json};

use super::{Arch, Extra, Hooks, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The tensors of a `dflash` file: a Qwen3 decoder.
pub(super) const DFLASH_TENSORS: &[&[Tensor]] = &[DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]];

/// A draft's vocabulary: its target's, read through the target class's own path (this one's
/// when the target is itself a draft).
pub(super) const FROM_TARGET_CLASS: VocabQuirks = VocabQuirks {
    from_target: true,
    target_class: true,
    ..VocabQuirks::NONE
};

/// The DFlash draft (the reference's `DFlashModel`, a Qwen3 subclass).
pub const DFLASH: Arch = Arch {
    hf_names: &["DFlashDraftModel", "DFlash2DraftModel"],
    model_types: &[],
    composites: &[],
    gguf: "dflash",
    // The target class's own path; this one when the target is a DFlash draft itself.
    vocab: VocabKind::Qwen2,
    vocab_quirks: FROM_TARGET_CLASS,
    tensors: DFLASH_TENSORS,
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        ..Rules::NONE
    },
    params,
    extra,
    hooks: Hooks {
        vocab_tail: Some(mask_token),
        ..Hooks::NONE
    },
};

/// `DFlashModel.filter_tensors`: the `model.` prefix the checkpoint leaves out, and
/// `.weight` on attention sinks stored without it.
pub(super) fn filter(name: &str) -> Option<String> {
    let mut name = if name.starts_with("model.") {
        name.to_string()
    } else {
        format!("model.{name}")
    };
    if name.contains("sink") && !name.ends_with(".weight") {
        name.push_str(".weight");
    }
    Some(name)
}

/// `dflash_config` (an empty map when absent or not an object).
pub(super) fn dflash_config(hp: &Hparams) -> Map<String, Json> {
    match hp.get("dflash_config") {
        Some(Json::Object(m)) => m.clone(),
        _ => Map::new(),
    }
}

/// A value of `dflash_config`, else of the config root.
fn either<'a>(cfg: &'a Map<String, Json>, hp: &'a Hparams, key: &str) -> Option<&'a Json> {
    cfg.get(key).or_else(|| hp.get(key))
}

/// The GGUF name of a draft tensor with its own name, keeping the checkpoint's suffix.
fn own_name(gguf: &str, bid: Option<u64>, suffix: &str) -> String {
    let base = match bid {
        Some(b) => gguf.replace("{bid}", &b.to_string()),
        None => gguf.to_string(),
    };
    format!("{base}{suffix}")
}

/// The draft's own tensors (by the reference's table rows for `dflash`), the selector
/// codebooks' missing `.weight`, the interleaved-rope reordering; `embed_tokens` is dropped
/// when the config says the draft has none.
pub(super) fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name == "model.embed_tokens.weight"
        && hp.get("has_embed_tokens").and_then(Json::as_bool) == Some(false)
    {
        return Ok(Modified::Drop);
    }
    let (stem, suffix) = match name.strip_suffix(".weight") {
        Some(s) => (s.to_string(), ".weight"),
        None => match name.strip_suffix(".bias") {
            Some(s) => (s.to_string(), ".bias"),
            None => (name.clone(), ""),
        },
    };
    let bid = block_id(&name);
    let layer = |rest: &str| bid.map(|b| format!("model.layers.{b}.{rest}"));
    let own = match stem.as_str() {
        "model.fc" => Some(("fc", None)),
        "model.hidden_norm" => Some(("enc.output_norm", None)),
        "model.markov_head.markov_w1" => Some(("markov_w1", None)),
        "model.markov_head.markov_w2" => Some(("markov_w2", None)),
        "model.confidence_head.proj" => Some(("conf_proj", None)),
        "model.candidate_selector.hidden_projection" => Some(("selector_hidden", None)),
        "model.candidate_selector.predecessor_codebook" => Some(("selector_predecessor", None)),
        "model.candidate_selector.successor_codebook" => Some(("selector_successor", None)),
        s if Some(s) == layer("attention_conv.base_kernel").as_deref() => {
            Some(("blk.{bid}.attn_conv_base", bid))
        }
        s if Some(s) == layer("attention_conv.kernel_projection").as_deref() => {
            Some(("blk.{bid}.attn_conv_proj", bid))
        }
        s if Some(s) == layer("mlp_conv.base_kernel").as_deref() => {
            Some(("blk.{bid}.ffn_conv_base", bid))
        }
        s if Some(s) == layer("mlp_conv.kernel_projection").as_deref() => {
            Some(("blk.{bid}.ffn_conv_proj", bid))
        }
        _ => None,
    };
    if let Some((gguf, bid)) = own {
        // The selector codebooks are stored without `.weight`; the reference adds it.
        let suffix =
            if suffix.is_empty() && gguf.starts_with("selector_") && gguf != "selector_hidden" {
                ".weight"
            } else {
                suffix
            };
        return Ok(Modified::Named(vec![(own_name(gguf, bid, suffix), expr)]));
    }
    let expr = if interleaved(hp) && is_rope_tensor(&name) {
        to_neox(hp, &name, expr)?
    } else {
        expr
    };
    Ok(Modified::Pass(name, expr))
}

/// `rope_is_neox_style: false`: the checkpoint's rotary pairs are interleaved.
fn interleaved(hp: &Hparams) -> bool {
    hp.get("rope_is_neox_style").and_then(Json::as_bool) == Some(false)
}

/// The tensors whose rows follow the rotary layout.
fn is_rope_tensor(name: &str) -> bool {
    [
        "self_attn.q_proj.weight",
        "self_attn.k_proj.weight",
        "self_attn.q_norm.weight",
        "self_attn.k_norm.weight",
    ]
    .iter()
    .any(|s| name.ends_with(s))
}

/// Per head of `head_dim` rows, the even rows first, then the odd ones (the reference's
/// `reshape(-1, head_dim // 2, 2, ...).transpose(1, 2)`).
fn to_neox(hp: &Hparams, name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let head_dim = hp.req_u64(&["head_dim"])?;
    let rows = expr.shape().first().copied().unwrap_or(0);
    if head_dim < 2 || !head_dim.is_multiple_of(2) || !rows.is_multiple_of(head_dim) {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("{rows} rows are not whole heads of head_dim {head_dim}"),
        });
    }
    let half = head_dim / 2;
    let map = (0..rows)
        .map(|r| {
            let (head, i) = (r / head_dim, r % head_dim);
            let src = if i < half { 2 * i } else { 2 * (i - half) + 1 };
            head * head_dim + src
        })
        .collect();
    expr.gather_rows(name, map)
}

/// A number of `dflash_config` (or the root) as FLOAT32, when present and not null.
fn opt_f64(cfg: &Map<String, Json>, hp: &Hparams, key: &str) -> Result<Option<f64>, ConvertError> {
    match either(cfg, hp, key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or_else(|| ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec![format!("dflash_config.{key}")],
            expected: "a number".into(),
            found: v.to_string(),
        }),
    }
}

/// A count of `dflash_config` (or the root).
fn count(hp: &Hparams, key: &str, v: &Json) -> Result<u64, ConvertError> {
    json_u64(v).ok_or_else(|| ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![format!("dflash_config.{key}")],
        expected: "a count".into(),
        found: v.to_string(),
    })
}

/// `DFlashModel.set_gguf_parameters` after Qwen3's.
pub(super) fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.pooling()?;
    let hp = p.hp;
    let cfg = dflash_config(hp);
    let head_dim = head_dim(hp)?;
    if let Some(f) = hp
        .rope
        .get("partial_rotary_factor")
        .filter(|v| !v.is_null())
    {
        let f = f.as_f64().unwrap_or(0.0);
        p.u32(rope::DIMENSION_COUNT, (head_dim as f64 * f) as u64)?;
    }
    if let Some(v) = cfg.get("attention_value_scale").filter(|v| !v.is_null()) {
        p.f32(attention::VALUE_SCALE, v.as_f64().unwrap_or(0.0));
    }
    let block = either(&cfg, hp, "block_size")
        .cloned()
        .unwrap_or(Json::from(16));
    p.u32(draft::BLOCK_SIZE, count(hp, "block_size", &block)?)?;
    if cfg.contains_key("conv_kernel_size") {
        for (key, suffix) in [
            ("conv_kernel_size", draft::CONV_KERNEL_SIZE),
            ("conv_group_size", draft::CONV_GROUP_SIZE),
            ("selector_rank", draft::SELECTOR_RANK),
            ("selector_top_k", draft::SELECTOR_TOP_K),
        ] {
            let v = cfg.get(key).ok_or_else(|| hp.missing(&[key]))?;
            p.u32(suffix, count(hp, key, v)?)?;
        }
    }
    if let Some(x) = opt_f64(&cfg, hp, "output_multiplier")? {
        p.f32(llm::LOGIT_SCALE, x);
    }
    if let Some(x) = opt_f64(&cfg, hp, "final_logit_softcapping")?.filter(|x| *x > 0.0) {
        p.f32(llm::FINAL_LOGIT_SOFTCAPPING, x);
    }
    if let Some(x) = opt_f64(&cfg, hp, "input_embedding_scale")? {
        p.f32(llm::EMBEDDING_SCALE, x);
    }
    target_layers(p, &cfg)?;
    sliding_window(p, &cfg)?;
    let causal = match hp.get("is_causal").filter(|v| !v.is_null()) {
        Some(v) => Some(v),
        None => cfg.get("causal").filter(|v| !v.is_null()),
    };
    if let Some(v) = causal {
        p.bool(attention::CAUSAL, truthy(v));
    }
    if target_uses_mrope(hp)? {
        let half = u32::try_from(head_dim / 2).unwrap_or(u32::MAX);
        p.md.set(
            ggufkit::gguf::keys::arch_key(p.arch, rope::DIMENSION_SECTIONS),
            Value::Array(ggufkit::gguf::ArrayValue::I32(vec![half as i32, 0, 0, 0])),
        );
    }
    Ok(())
}

/// Python's truthiness of a JSON value.
pub(super) fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64() != Some(0.0),
        Json::String(s) => !s.is_empty(),
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}

/// `head_dim`, else `hidden_size / num_attention_heads`.
fn head_dim(hp: &Hparams) -> Result<u64, ConvertError> {
    match hp.find_u64(&["head_dim"])?.filter(|d| *d > 0) {
        Some(d) => Ok(d),
        None => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            Ok(hp.req_u64(&["hidden_size"])? / heads.max(1))
        }
    }
}

/// The target layers, one-based, when the config lists any.
fn target_layers(p: &mut Params, cfg: &Map<String, Json>) -> Result<(), ConvertError> {
    let hp = p.hp;
    let Some(ids) = either(cfg, hp, "target_layer_ids").and_then(Json::as_array) else {
        return Ok(());
    };
    let ids = ids
        .iter()
        .map(|v| {
            v.as_i64()
                .and_then(|x| i32::try_from(x + 1).ok())
                .ok_or_else(|| ConvertError::BadHparam {
                    path: hp.path.clone(),
                    keys: vec!["dflash_config.target_layer_ids".into()],
                    expected: "a list of layer numbers".into(),
                    found: v.to_string(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    p.i32s(draft::TARGET_LAYERS, ids);
    Ok(())
}

/// The sliding window and the layers it applies to (every layer under `use_swa`, else
/// the `sliding_attention` entries of `layer_types`).
fn sliding_window(p: &mut Params, cfg: &Map<String, Json>) -> Result<(), ConvertError> {
    let hp = p.hp;
    let use_swa = cfg.get("use_swa").is_some_and(truthy);
    let enabled = hp.get("use_sliding_window").is_some_and(truthy) || use_swa;
    let window = cfg
        .get("swa_window_size")
        .filter(|v| truthy(v))
        .or_else(|| hp.get("sliding_window"))
        .filter(|v| truthy(v));
    let (true, Some(window)) = (enabled, window) else {
        return Ok(());
    };
    let pattern = if use_swa {
        vec![true; usize::try_from(p.block_count()?).unwrap_or(0)]
    } else {
        match hp.get("layer_types").and_then(Json::as_array) {
            Some(types) => types.iter().map(|t| t == "sliding_attention").collect(),
            None => Vec::new(),
        }
    };
    p.u32(
        attention::SLIDING_WINDOW,
        count(hp, "swa_window_size", window)?,
    )?;
    p.bools(attention::SLIDING_WINDOW_PATTERN, pattern);
    Ok(())
}

/// Whether the target's config (its `text_config` when it has one) has an M-RoPE
/// `mrope_section` in its rope parameters.
fn target_uses_mrope(hp: &Hparams) -> Result<bool, ConvertError> {
    let Some(target) = hp.target.as_deref() else {
        return Ok(false);
    };
    let cfg = target.config()?;
    let cfg = cfg.get("text_config").unwrap_or(cfg);
    let rope = [cfg.get("rope_parameters"), cfg.get("rope_scaling")]
        .into_iter()
        .flatten()
        .find(|v| truthy(v));
    Ok(rope.is_some_and(|r| r.get("mrope_section").is_some()))
}

/// The `dflash_config` mask token, written after the vocabulary.
pub(super) fn mask_token(hp: &Hparams) -> Result<Vec<(String, Value)>, ConvertError> {
    let cfg = dflash_config(hp);
    let Some(v) = cfg.get("mask_token_id").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let id = json_u64(v)
        .and_then(|x| u32::try_from(x).ok())
        .ok_or_else(|| ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["dflash_config.mask_token_id".into()],
            expected: "a 32-bit token id".into(),
            found: v.to_string(),
        })?;
    Ok(vec![(
        ggufkit::gguf::keys::tokenizer::MASK_ID.to_string(),
        Value::U32(id),
    )])
}

/// A `mask_embedding.pt` (MiMo's drafts: a mask row patched into the target's embedding)
/// is a torch file this converter does not read: refused rather than ignored.
pub(super) fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    let dir = hp.path.parent().unwrap_or(std::path::Path::new("."));
    if dir.join("mask_embedding.pt").is_file() {
        return Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature: "mask_embedding.pt (a mask embedding patched into the target's token \
                      embedding) is not supported yet"
                .into(),
        });
    }
    Ok(Extra::default())
}
