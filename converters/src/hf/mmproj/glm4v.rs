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

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::qwenvl::{deepstack, filter3, hook3, prepare3};
use super::{json_u64, Clip, ConfigValue, Ctx, Out, Projector};
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

/// The composite classes of these towers and, for the keys the converter reads, the
/// transformers 5 defaults of the vision config each builds when config.json has none (and
/// GLM-5.3-Flash's text config, whose width the projector reads).
pub(super) const CONFIG_CLASSES: ConfigClasses = {
    use ConfigValue::{Bool, Float, Int, Text};
    const OCR_TOWER: &[(&str, ConfigValue)] = &[
        ("attention_bias", Bool(true)),
        ("depth", Int(24)),
        ("hidden_act", Text("silu")),
        ("hidden_size", Int(1024)),
        ("image_size", Int(336)),
        ("in_channels", Int(3)),
        ("intermediate_size", Int(4096)),
        ("num_heads", Int(16)),
        ("out_hidden_size", Int(1536)),
        ("patch_size", Int(14)),
        ("rms_norm_eps", Float(1e-5)),
        ("spatial_merge_size", Int(2)),
        ("temporal_patch_size", Int(2)),
        ("projection_intermediate_size", Int(10240)),
        ("swiglu_limit", Float(10.0)),
    ];
    ConfigClasses {
        composites: &[
            CompositeClass {
                model_type: "glm4v",
                builds: &[("vision_config", "glm4v_vision")],
            },
            CompositeClass {
                model_type: "glm4v_moe",
                builds: &[("vision_config", "glm4v_moe_vision")],
            },
            CompositeClass {
                model_type: "glm_ocr",
                builds: &[("vision_config", "glm_ocr_vision")],
            },
            CompositeClass {
                model_type: "glm5_next",
                builds: &[
                    ("vision_config", "glm5_next_vision"),
                    ("text_config", "glm5_next_text"),
                ],
            },
        ],
        sub_configs: &[
            SubConfigClass {
                model_types: &["glm4v_vision", "glm4v_moe_vision"],
                values: &[
                    ("attention_bias", Bool(false)),
                    ("depth", Int(24)),
                    ("hidden_act", Text("silu")),
                    ("hidden_size", Int(1536)),
                    ("image_size", Int(336)),
                    ("in_channels", Int(3)),
                    ("intermediate_size", Int(13696)),
                    ("num_heads", Int(12)),
                    ("out_hidden_size", Int(4096)),
                    ("patch_size", Int(14)),
                    ("rms_norm_eps", Float(1e-5)),
                    ("spatial_merge_size", Int(2)),
                    ("temporal_patch_size", Int(2)),
                ],
            },
            // GLM-OCR's tower; GLM-5.3-Flash's adds the SwiGLU projection's width and clamp.
            SubConfigClass {
                model_types: &["glm_ocr_vision"],
                values: OCR_TOWER.split_at(OCR_TOWER.len() - 2).0,
            },
            SubConfigClass {
                model_types: &["glm5_next_vision"],
                values: OCR_TOWER,
            },
            SubConfigClass {
                model_types: &["glm5_next_text"],
                values: &[("hidden_size", Int(4096))],
            },
        ],
    }
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
