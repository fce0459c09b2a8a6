//! HunyuanOCR (`HunYuanVLForConditionalGeneration`, projector type `hunyuanvl`): a ViT under
//! `vit.` and its perceiver (`vit.perceive.`: RMS norms before and after, two convolutions
//! `proj.0` / `proj.2`, an MLP, and learned newline, separator, begin and end rows).
//!
//! The position table's first row is the class position, which the file leaves out; the
//! two convolutions' kernels are written in F16 for an f16 file and F32 otherwise; the image
//! size is the tower's `max_image_size` unless it names one; the image processor's pixel
//! bounds are required.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{Clip, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `HunYuanVLForConditionalGeneration`.
pub const HUNYUANVL: Projector = Projector {
    hf_names: &["HunYuanVLForConditionalGeneration"],
    projector_type: "hunyuanvl",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    // the perceiver's convolutions (`tensor_force_quant`; their biases are 1-D, F32 anyway)
    force: &[
        (On::Gguf("mm.0."), Force::F16IfF16),
        (On::Gguf("mm.2."), Force::F16IfF16),
    ],
    prepare,
    hook: Some(hook),
    params,
};

/// The defaults of transformers' HunYuan-VL vision config for the keys the converter reads,
/// filled in when AutoConfig builds the config (`model_type` `hunyuan_vl`).
const VISION_DEFAULTS: &[(&str, f64)] = &[
    ("hidden_size", 1152.0),
    ("intermediate_size", 4304.0),
    ("num_hidden_layers", 27.0),
    ("num_attention_heads", 16.0),
    ("patch_size", 16.0),
    ("spatial_merge_size", 2.0),
    ("max_image_size", 2048.0),
    ("rms_norm_eps", 1e-5),
];

/// The image size when the tower names neither `image_size` nor `max_image_size`.
const DEFAULT_IMAGE_SIZE: u64 = 2048;

fn filter(name: &str) -> Option<String> {
    name.starts_with("vit.").then(|| name.to_string())
}

fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let auto_config = ctx.hp.raw.get("model_type").and_then(Json::as_str) == Some("hunyuan_vl");
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
    if !v.contains_key("image_size") {
        let size = v
            .get("max_image_size")
            .cloned()
            .unwrap_or(Json::from(DEFAULT_IMAGE_SIZE));
        v.insert("image_size".into(), size);
    }
    Ok(())
}

fn hook(_ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains("position_embedding") {
        let expr = without_class_row(&name, expr)?;
        return Ok(vec![Out::Map(name, expr)]);
    }
    Ok(vec![Out::Map(name, expr)])
}

/// The position table without its first row (the class position's).
fn without_class_row(name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let rows = expr.shape().first().copied().unwrap_or(0);
    if rows == 0 {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: "a position table without rows: expected the class row first".into(),
        });
    }
    expr.narrow(name, 0, 1, rows - 1)
}

/// The image processor's pixel bound `key`, truncated to an integer as Python's `int` does.
fn pixels(c: &Clip, key: &str) -> Result<Json, ConvertError> {
    let v = c.ctx.pixel_bound(key)?;
    match v {
        Json::Number(n) if n.is_u64() || n.is_i64() => Ok(v.clone()),
        Json::Number(n) => Ok(Json::from(n.as_f64().unwrap_or(0.0).trunc() as i64)),
        other => Err(ConvertError::wrong_type(
            c.ctx.dir.join("preprocessor_config.json"),
            key,
            "a number",
            other,
        )),
    }
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "hunyuanvl");
    c.bool(clip::USE_GELU, true);
    let tower = c.ctx.tower();
    let eps = tower
        .get("rms_norm_eps")
        .cloned()
        .unwrap_or(Json::from(1e-5));
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)?;
    let merge = tower
        .get("spatial_merge_size")
        .cloned()
        .unwrap_or(Json::from(2));
    c.u32_json(clip::vision::SPATIAL_MERGE_SIZE, &merge)?;
    let min = pixels(c, "min_pixels")?;
    c.u32_json(clip::vision::IMAGE_MIN_PIXELS, &min)?;
    let max = pixels(c, "max_pixels")?;
    c.u32_json(clip::vision::IMAGE_MAX_PIXELS, &max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_vit_is_kept() {
        assert!(filter("model.layers.0.mlp.up_proj.weight").is_none());
        assert_eq!(
            filter("vit.perceive.mlp.weight").as_deref(),
            Some("vit.perceive.mlp.weight")
        );
    }

    #[test]
    fn the_class_row_is_left_out() {
        let e = Expr::constant((0..6).map(|i| i as f32).collect(), vec![3, 2]);
        let out = without_class_row("p", e).unwrap();
        assert_eq!(out.shape(), &[2, 2]);
        assert_eq!(out.eval_f32().unwrap(), vec![2.0, 3.0, 4.0, 5.0]);
        let empty = Expr::constant(Vec::new(), vec![0, 2]);
        assert!(matches!(
            without_class_row("p", empty),
            Err(ConvertError::Tensor { .. })
        ));
    }
}
