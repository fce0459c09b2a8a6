//! Ling 3.0 VL's vision tower (`BailingMoeV3VLForConditionalGeneration`,
//! `BailingMoeV3VLVisionModel`, projector type `ling3vl`): Qwen3-VL's tower (under
//! `model.visual.` or `visual.`) whose merger is a norm only (`merger.norm`, a per-patch
//! LayerNorm before the spatial merge, written as `mm.input_norm`), followed by the
//! top-level projector MLP `linear_proj.0` / `linear_proj.2` (`mm.0` / `mm.2`). The class
//! requires `disable_merger_proj: true` and an `out_hidden_size` in the vision config, and
//! writes none of Qwen3-VL's deepstack keys; the attention LayerNorm epsilon is the text
//! config's `rms_norm_eps` (default 1e-6).

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{qwenvl, Clip, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `BailingMoeV3VLForConditionalGeneration`.
pub const LING3VL: Projector = Projector {
    hf_names: &["BailingMoeV3VLForConditionalGeneration"],
    projector_type: "ling3vl",
    filter,
    prepare,
    hook: Some(hook),
    params,
    ..qwenvl::QWEN3VL
};

/// `filter_tensors`: the projector MLP `linear_proj.{i}.{suffix}` as `mm.{i}.{suffix}`, the
/// tower as Qwen3-VL's filter takes it; everything else (the text model) is dropped.
fn filter(name: &str) -> Option<String> {
    if name.starts_with("lm_head.") {
        return None;
    }
    if name.starts_with("linear_proj") {
        // A malformed projector name is kept as it is, for the hook to refuse by name.
        return Some(projector_name(name).unwrap_or_else(|| name.to_string()));
    }
    qwenvl::filter3(name)
}

/// `linear_proj.{i}.{suffix}` → `mm.{i}.{suffix}`; `None` unless it has exactly three parts
/// with a numeric index.
fn projector_name(name: &str) -> Option<String> {
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        [_, idx, suffix] => {
            let idx: u64 = idx.parse().ok()?;
            Some(format!("mm.{idx}.{suffix}"))
        }
        _ => None,
    }
}

/// `__init__`: Qwen3-VL's renames, then the class's two requirements.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    qwenvl::prepare3(ctx)?;
    let tower = ctx.tower();
    if tower.get("disable_merger_proj") != Some(&Json::Bool(true)) {
        return Err(ctx.unsupported("a vision config without disable_merger_proj: true"));
    }
    if tower.get("out_hidden_size").is_none_or(Json::is_null) {
        return Err(ctx.unsupported("a vision config without out_hidden_size"));
    }
    Ok(())
}

/// `modify_tensors`: the projector MLP as it is, the merger's norm as `mm.input_norm`, the
/// rest as Qwen3-VL's tower.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.starts_with("linear_proj") {
        return Err(ConvertError::Tensor {
            name,
            problem: "a projector tensor not named linear_proj.<index>.<suffix>".into(),
        });
    }
    if name.starts_with("mm.0.") || name.starts_with("mm.2.") {
        return Ok(vec![Out::Named(name, expr)]);
    }
    if let Some(suffix) = name.strip_prefix("visual.merger.norm.") {
        if suffix == "weight" || suffix == "bias" {
            return Ok(vec![Out::Named(format!("mm.input_norm.{suffix}"), expr)]);
        }
    }
    qwenvl::hook3(ctx, name, expr)
}

/// `set_gguf_parameters` after the base keys (none of Qwen3-VL's own).
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "ling3vl");
    c.bool(clip::USE_GELU, true);
    if let Some(m) = c.ctx.tower().get("spatial_merge_size").cloned() {
        if !m.is_null() {
            c.u32_json(clip::vision::SPATIAL_MERGE_SIZE, &m)?;
        }
    }
    let eps = c
        .ctx
        .hp
        .raw
        .get("text_config")
        .and_then(|t| t.get("rms_norm_eps"))
        .cloned()
        .unwrap_or(Json::from(1e-6));
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)
}
