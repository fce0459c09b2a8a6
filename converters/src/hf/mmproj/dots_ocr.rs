//! dots.ocr's vision tower (`DotsOCRForCausalLM`, projector type `dots_ocr`;
//! `DotsOCRVisionModel` in `conversion/dotsocr.py`).
//!
//! The `dots_vit` tower lives under `vision_tower.`: a Conv2d patchifier with an RMS norm,
//! blocks with a fused `qkv`, RMS `norm1` / `norm2` and a SwiGLU MLP (`fc1` gate, `fc3` up,
//! `fc2` down), a `post_trunk_norm`, and the Qwen2-VL style patch merger (`merger.ln_q`,
//! `merger.mlp.{0,2}`). Only the tower's tensors are kept; the blocks' MLP tensors take
//! Qwen2.5-VL's spellings (`visual.blocks.N.mlp.{gate,down,up}_proj`) before the name table
//! maps them. Besides the base keys (image size 0: dynamic resolution) it writes SiLU, the
//! image processor's `min_pixels` / `max_pixels` (required), the tower's `rms_norm_eps`
//! and its `spatial_merge_size` as the projector's scale factor (both required).

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{Clip, Ctx, Projector};
use crate::ConvertError;

/// `DotsOCRForCausalLM`.
pub const DOTS_OCR: Projector = Projector {
    hf_names: &["DotsOCRForCausalLM"],
    projector_type: "dots_ocr",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[],
    prepare,
    hook: None,
    params,
};

/// The tower's tensors only; a block's MLP renamed to Qwen2.5-VL's spelling (`fc1` gate,
/// `fc2` down, `fc3` up).
fn filter(name: &str) -> Option<String> {
    if !name.starts_with("vision_tower.") {
        return None;
    }
    if name.contains("vision_tower.blocks.") && name.contains(".mlp.") {
        return Some(
            name.replace("vision_tower.blocks.", "visual.blocks.")
                .replace(".fc1", ".gate_proj")
                .replace(".fc2", ".down_proj")
                .replace(".fc3", ".up_proj"),
        );
    }
    Some(name.to_string())
}

/// Dynamic resolution: the image size is written as 0.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let v = ctx.vision.as_mut().expect("a vision projector");
    v.insert("image_size".into(), Json::from(0));
    Ok(())
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "dots_ocr");
    let min = c.ctx.pixel_bound("min_pixels")?.clone();
    c.u32_json(clip::vision::IMAGE_MIN_PIXELS, &min)?;
    let max = c.ctx.pixel_bound("max_pixels")?.clone();
    c.u32_json(clip::vision::IMAGE_MAX_PIXELS, &max)?;
    let eps = c.vparam(&["rms_norm_eps"])?.clone();
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)?;
    let merge = c.vparam(&["spatial_merge_size"])?.clone();
    c.u32_json(clip::vision::PROJECTOR_SCALE_FACTOR, &merge)?;
    c.bool(clip::USE_SILU, true);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tower_is_kept_with_qwen_mlp_names() {
        assert_eq!(
            filter("vision_tower.blocks.2.mlp.fc1.weight").as_deref(),
            Some("visual.blocks.2.mlp.gate_proj.weight")
        );
        assert_eq!(
            filter("vision_tower.blocks.0.mlp.fc2.weight").as_deref(),
            Some("visual.blocks.0.mlp.down_proj.weight")
        );
        assert_eq!(
            filter("vision_tower.blocks.0.mlp.fc3.weight").as_deref(),
            Some("visual.blocks.0.mlp.up_proj.weight")
        );
        assert_eq!(
            filter("vision_tower.merger.mlp.0.weight").as_deref(),
            Some("vision_tower.merger.mlp.0.weight")
        );
        assert!(filter("model.norm.weight").is_none());
        assert!(filter("lm_head.weight").is_none());
    }
}
