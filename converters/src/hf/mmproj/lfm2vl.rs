//! LFM2-VL (`Lfm2VlForConditionalGeneration`, projector type `lfm2`): a SigLIP2 tower in the
//! hub's `model.vision_tower.vision_model.` layout and a pixel-unshuffle projector
//! (`model.multi_modal_projector.{layer_norm, linear_1, linear_2}`).
//!
//! The linear patch embedding's rows are 16 × 16 × 3 patches (the reference assumes 16-pixel
//! patches whatever the config says), written as a `[out, 3, 16, 16]` convolution kernel;
//! the image size is always 256 (the tower is dynamic-resolution); the block count leaves out
//! the blocks after the config's `vision_feature_layer`.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{Clip, Ctx, Out, Projector};
use crate::hf::config::json_u64;
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Lfm2VlForConditionalGeneration`.
pub const LFM2VL: Projector = Projector {
    hf_names: &["Lfm2VlForConditionalGeneration"],
    projector_type: "lfm2",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[],
    prepare,
    hook: Some(hook),
    params,
};

/// The image size the class writes.
const IMAGE_SIZE: u64 = 256;

/// The patch side the patch embedding's rows are read with.
const PATCH: u64 = 16;

/// The defaults of transformers' `Siglip2VisionConfig` for the keys the converter reads.
const VISION_DEFAULTS: &[(&str, f64)] = &[
    ("hidden_size", 768.0),
    ("intermediate_size", 3072.0),
    ("num_hidden_layers", 12.0),
    ("num_attention_heads", 12.0),
    ("patch_size", 16.0),
    ("layer_norm_eps", 1e-6),
];

fn filter(name: &str) -> Option<String> {
    Some(
        name.replace("model.vision_tower.", "vision_tower.")
            .replace("model.multi_modal_projector.", "multi_modal_projector."),
    )
}

/// AutoConfig's vision sub-config (an `lfm2_vl` config.json), then the fixed image size.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let auto_config = ctx.hp.raw.get("model_type").and_then(Json::as_str) == Some("lfm2_vl");
    let v = ctx.vision.as_mut().expect("a vision projector");
    if auto_config {
        for (k, d) in VISION_DEFAULTS {
            let value = if d.fract() == 0.0 {
                Json::from(*d as u64)
            } else {
                Json::from(*d)
            };
            v.entry(k.to_string()).or_insert(value);
        }
    }
    v.insert("image_size".into(), Json::from(IMAGE_SIZE));
    Ok(())
}

fn hook(_ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains("patch_embedding.weight") {
        let expr = patch_kernel(&name, expr)?;
        return Ok(vec![Out::Map(name, expr)]);
    }
    Ok(vec![Out::Map(name, expr)])
}

/// Each row of `[out, …]` read as a `[16, 16, 3]` patch and written as `[3, 16, 16]`.
fn patch_kernel(name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let shape = expr.shape().to_vec();
    let out = shape.first().copied().unwrap_or(0);
    let numel = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let per_row = PATCH * PATCH * 3;
    if out == 0 || numel != out.checked_mul(per_row) {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "a patch embedding of shape {shape:?}: expected rows of {PATCH} x {PATCH} x 3 \
                 values"
            ),
        });
    }
    expr.reshape(name, vec![out, PATCH * PATCH, 3])?
        .transpose_last2(name)?
        .reshape(name, vec![out, 3, PATCH, PATCH])
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "lfm2");
    let eps = c.vparam(&["layer_norm_eps"])?.clone();
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)?;
    let raw = &c.ctx.hp.raw;
    let factor = raw
        .get("downsample_factor")
        .cloned()
        .unwrap_or(Json::from(2));
    c.u32_json(clip::vision::PROJECTOR_SCALE_FACTOR, &factor)?;
    c.bool(clip::USE_GELU, true);
    let layer = raw
        .get("vision_feature_layer")
        .cloned()
        .unwrap_or(Json::from(-1));
    let blocks = c.vparam(super::BLOCK_KEYS)?.clone();
    // `vision_feature_layer` counts from the end as Python indices do: -1 keeps every block.
    let kept = match (json_u64(&blocks), layer.as_i64()) {
        (Some(n), Some(l)) => i128::from(n) + i128::from(l) + 1,
        _ => -1,
    };
    let kept = u64::try_from(kept).map_err(|_| ConvertError::BadHparam {
        path: c.ctx.hp.path.clone(),
        keys: vec!["vision_feature_layer".into()],
        expected: format!("an integer index into the tower's {blocks} blocks"),
        found: layer.to_string(),
    })?;
    c.u32(clip::vision::BLOCK_COUNT, kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_prefixes_lose_the_model_level() {
        assert_eq!(
            filter("model.vision_tower.vision_model.post_layernorm.weight").as_deref(),
            Some("vision_tower.vision_model.post_layernorm.weight")
        );
        assert_eq!(
            filter("model.multi_modal_projector.linear_1.bias").as_deref(),
            Some("multi_modal_projector.linear_1.bias")
        );
    }

    #[test]
    fn patch_kernel_regroups_channels() {
        let vals: Vec<f32> = (0..768).map(|i| i as f32).collect();
        let e = patch_kernel("p", Expr::constant(vals, vec![1, 768])).unwrap();
        assert_eq!(e.shape(), &[1, 3, 16, 16]);
        let out = e.eval_f32().unwrap();
        // out[0][c][i][j] = in[0][i][j][c]
        assert_eq!(out[0], 0.0);
        assert_eq!(out[1], 3.0);
        assert_eq!(out[256], 1.0);
        assert_eq!(out[2 * 256 + 17], (17 * 3 + 2) as f32);
        assert!(patch_kernel("p", Expr::constant(vec![0.0; 10], vec![1, 10])).is_err());
    }
}
