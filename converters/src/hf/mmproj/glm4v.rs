//! GLM's vision towers (`Glm4VVisionModel`, a `Qwen3VLVisionModel` subclass): GLM-4.1V,
//! GLM-4.5V and GLM-OCR (projector type `glm4v`), and GLM-5.3-Flash (`glm5v`).
//!
//! The tower reads its config and filters its tensors as Qwen3-VL's does (`model.visual.`
//! renamed `visual.`, the Conv3D patch embedding split into two Conv2D halves), but its
//! merger (`visual.merger.proj`, `post_projection_norm`, the SwiGLU `gate_proj` / `up_proj`
//! / `down_proj`) maps through the projector table instead of Qwen3-VL's renames, and the
//! rest of its tensors (`post_conv_layernorm`, `embeddings.position_embedding`,
//! `downsample`, `post_layernorm`, GLM-OCR's per-head `attn.q_norm` / `attn.k_norm`) are
//! table rows too. Its keys replace Qwen3-VL's: the projector type, the activation
//! (`hidden_act` gelu or silu; any other writes none) and the tower's own `rms_norm_eps`
//! (default 1e-5). GLM-5V adds the spatial merge size (default 2), the SwiGLU clamp when the
//! config has `swiglu_limit`, and the image token budget of the preprocessor as pixel counts.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::qwenvl::{deepstack, filter3, hook3, prepare3};
use super::{json_u64, Clip, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Glm4vForConditionalGeneration`, `Glm4vMoeForConditionalGeneration`,
/// `GlmOcrForConditionalGeneration`.
pub const GLM4V: Projector = Projector {
    hf_names: &[
        "Glm4vForConditionalGeneration",
        "Glm4vMoeForConditionalGeneration",
        "GlmOcrForConditionalGeneration",
    ],
    projector_type: "glm4v",
    vision: true,
    audio: false,
    default_configs: false,
    filter: filter3,
    force: &[],
    prepare,
    hook: Some(hook),
    params: params4,
};

/// `Glm5NextForConditionalGeneration` (GLM-5.3-Flash): the GLM-4V tower with per-head q/k
/// norms, without the post-conv norm and the learned position embeddings.
pub const GLM5V: Projector = Projector {
    hf_names: &["Glm5NextForConditionalGeneration"],
    projector_type: "glm5v",
    params: params5,
    ..GLM4V
};

/// Qwen3-VL's `__init__` (whose deepstack flags are computed, and refused when a listed
/// block is out of range, even though GLM does not write them).
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    prepare3(ctx)?;
    deepstack(ctx).map(|_| ())
}

fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.starts_with("visual.merger.") {
        return Ok(vec![Out::Map(name, expr)]);
    }
    hook3(ctx, name, expr)
}

fn params4(c: &mut Clip) -> Result<(), ConvertError> {
    glm_params(c, "glm4v")
}

/// The keys of `Glm4VVisionModel.set_gguf_parameters` (after the base ones).
fn glm_params(c: &mut Clip, projector_type: &str) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, projector_type);
    let act = c.ctx.tower().get("hidden_act").map(|v| match v {
        Json::String(s) => s.to_lowercase(),
        other => other.to_string().to_lowercase(),
    });
    match act.as_deref() {
        Some("gelu") => c.bool(clip::USE_GELU, true),
        Some("silu") => c.bool(clip::USE_SILU, true),
        _ => {}
    }
    let eps = c
        .ctx
        .tower()
        .get("rms_norm_eps")
        .cloned()
        .unwrap_or(Json::from(1e-5));
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)
}

fn params5(c: &mut Clip) -> Result<(), ConvertError> {
    glm_params(c, "glm5v")?;
    let merge = c
        .ctx
        .tower()
        .get("spatial_merge_size")
        .cloned()
        .unwrap_or(Json::from(2));
    c.u32_json(clip::vision::SPATIAL_MERGE_SIZE, &merge)?;
    if let Some(limit) = c.ctx.tower().get("swiglu_limit").filter(|v| !v.is_null()) {
        let limit = limit.clone();
        c.f32_json(clip::vision::SWIGLU_CLAMP, &limit)?;
    }
    // The processor's image token budget, as the pixels of one frame.
    let pre_int = |key: &str, default: u64| -> Result<u64, ConvertError> {
        match c.ctx.pre.get(key) {
            None => Ok(default),
            Some(v) => json_u64(v).ok_or_else(|| c.ctx.unsupported(format!("{key} is {v}"))),
        }
    };
    let patch = pre_int("patch_size", 14)?;
    let merge = pre_int("merge_size", 2)?;
    let per_token = (patch * merge)
        .checked_mul(patch * merge)
        .ok_or_else(|| c.ctx.unsupported("patch_size * merge_size overflows"))?;
    for (key, out) in [
        ("min_image_tokens", clip::vision::IMAGE_MIN_PIXELS),
        ("max_image_tokens", clip::vision::IMAGE_MAX_PIXELS),
    ] {
        if let Some(v) = c.ctx.pre.get(key).filter(|v| !v.is_null()) {
            let n = json_u64(v)
                .and_then(|n| n.checked_mul(per_token))
                .ok_or_else(|| c.ctx.unsupported(format!("{key} is {v}")))?;
            c.u32(out, n)?;
        }
    }
    Ok(())
}
