//! PaddleOCR-VL's projector (`PaddleOCRVisionModel`, the vision config's class; projector
//! type `paddleocr`): a SigLIP tower under `visual.vision_model.` (read as
//! `model.vision_model.`) and the `mlp_AR` projector (`pre_norm`, `linear_1`, `linear_2`).
//!
//! Only tensors of the tower or the projector are kept (the text model's are left out by
//! name), without the packing position table and the tower's head. The image size is the
//! side of the image processor's largest image (`⌊√max_pixels⌋`), and its pixel bounds are
//! written too: the processor config must name both.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{Clip, Ctx, Projector};
use crate::ConvertError;

/// `PaddleOCRVisionModel`.
pub const PADDLEOCR_VISION: Projector = Projector {
    hf_names: &["PaddleOCRVisionModel"],
    projector_type: "paddleocr",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[],
    prepare,
    hook: None,
    params,
};

/// The defaults of transformers' PaddleOCR-VL vision config for the keys the converter
/// reads, filled in when AutoConfig builds the config (`model_type` `paddleocr_vl`).
const VISION_DEFAULTS: &[(&str, u64)] = &[
    ("hidden_size", 1152),
    ("intermediate_size", 4304),
    ("num_hidden_layers", 27),
    ("num_attention_heads", 16),
    ("patch_size", 14),
];

fn filter(name: &str) -> Option<String> {
    if !name.contains("vision_model") && !name.contains("mlp_AR") {
        return None;
    }
    let name = name.replace("visual.", "model.");
    if name.contains("packing_position_embedding") || name.contains("vision_model.head") {
        return None;
    }
    Some(name)
}

/// The side of the largest image: the integer part of √`max_pixels`.
fn side(ctx: &Ctx, max: &Json) -> Result<u64, ConvertError> {
    let n = max.as_f64().filter(|n| *n >= 0.0).ok_or_else(|| {
        ConvertError::wrong_type(
            ctx.dir.join("preprocessor_config.json"),
            "max_pixels",
            "a non-negative number",
            max,
        )
    })?;
    Ok(n.sqrt().trunc() as u64)
}

fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    ctx.pixel_bound("min_pixels")?;
    let max = ctx.pixel_bound("max_pixels")?.clone();
    let size = side(ctx, &max)?;
    let auto_config = ctx.hp.raw.get("model_type").and_then(Json::as_str) == Some("paddleocr_vl");
    let v = ctx.vision.as_mut().expect("a vision projector");
    if auto_config {
        for (k, d) in VISION_DEFAULTS {
            v.entry(k.to_string()).or_insert(Json::from(*d));
        }
    }
    v.insert("image_size".into(), Json::from(size));
    Ok(())
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "paddleocr");
    let max = c.ctx.pixel_bound("max_pixels")?.clone();
    c.u32_json(clip::vision::IMAGE_MAX_PIXELS, &max)?;
    let min = c.ctx.pixel_bound("min_pixels")?.clone();
    c.u32_json(clip::vision::IMAGE_MIN_PIXELS, &min)?;
    c.bool(clip::USE_GELU, true);
    let eps = c
        .ctx
        .tower()
        .get("rms_norm_eps")
        .cloned()
        .unwrap_or(Json::from(1e-6));
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tower_and_projector_are_kept_under_the_model_prefix() {
        assert_eq!(
            filter("visual.vision_model.post_layernorm.weight").as_deref(),
            Some("model.vision_model.post_layernorm.weight")
        );
        assert_eq!(
            filter("mlp_AR.linear_1.weight").as_deref(),
            Some("mlp_AR.linear_1.weight")
        );
        assert!(filter("model.layers.0.mlp.up_proj.weight").is_none());
        assert!(
            filter("visual.vision_model.embeddings.packing_position_embedding.weight").is_none()
        );
        assert!(filter("visual.vision_model.head.probe").is_none());
    }
}
