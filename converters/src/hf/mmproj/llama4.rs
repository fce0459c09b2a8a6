//! Llama 4's vision tower (`Llama4ForConditionalGeneration`, projector type `llama4`): a
//! linear patch embedding, a class embedding and a position table, pre and post layer
//! norms, blocks with q/k/v/o projections, and a pixel-shuffle adapter
//! (`vision_adapter.mlp.fc1` / `fc2`, numbered layers of the MLP projector); the
//! multimodal projector's single `linear_1` is written as `mm.model.fc.weight`.
//!
//! The vision config is transformers' `Llama4VisionConfig` when AutoConfig reads the
//! config (`model_type` `llama4`): its defaults fill the keys config.json leaves out.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{Clip, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Llama4ForConditionalGeneration`.
pub const LLAMA4: Projector = Projector {
    hf_names: &["Llama4ForConditionalGeneration"],
    projector_type: "llama4",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[],
    prepare,
    hook: Some(hook),
    params,
};

/// The defaults of transformers' `Llama4VisionConfig` for the keys the converter reads.
const VISION_DEFAULTS: &[(&str, f64)] = &[
    ("hidden_size", 768.0),
    ("intermediate_size", 5632.0),
    ("num_hidden_layers", 34.0),
    ("num_attention_heads", 16.0),
    ("image_size", 448.0),
    ("patch_size", 14.0),
    ("norm_eps", 1e-5),
    ("pixel_shuffle_ratio", 0.5),
];

/// The tower and projector tensors; the position table's bare parameter gets `.weight`.
fn filter(name: &str) -> Option<String> {
    if !name.contains("multi_modal_projector") && !name.contains("vision_model") {
        return None;
    }
    if name.contains("positional_embedding_vlm") && !name.contains(".weight") {
        return Some(format!("{name}.weight"));
    }
    Some(name.to_string())
}

fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let auto_config = ctx.hp.raw.get("model_type").and_then(Json::as_str) == Some("llama4");
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
        v.entry("hidden_act").or_insert(Json::from("gelu"));
    }
    Ok(())
}

/// `multi_modal_projector.linear_1` is one fully connected layer despite its number.
fn hook(_ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains("multi_modal_projector.linear_1") {
        return Ok(vec![Out::Named("mm.model.fc.weight".into(), expr)]);
    }
    Ok(vec![Out::Map(name, expr)])
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "llama4");
    let eps = c.vparam(&["norm_eps"])?.clone();
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)?;
    let ratio = c.vparam(&["pixel_shuffle_ratio"])?.clone();
    let factor = ratio
        .as_f64()
        .map(|r| 1.0 / r)
        .filter(|f| f.is_finite() && *f >= 0.0 && *f < 4_294_967_296.0)
        .ok_or_else(|| ConvertError::BadHparam {
            path: c.ctx.hp.path.clone(),
            keys: vec!["vision_config.pixel_shuffle_ratio".into()],
            expected: "a positive number whose inverse fits a UINT32".into(),
            found: ratio.to_string(),
        })?;
    c.u32(clip::vision::PROJECTOR_SCALE_FACTOR, factor.trunc() as u64)?;
    let act = c.vparam(&["hidden_act"])?.clone();
    if act.as_str() != Some("gelu") {
        return Err(c.ctx.unsupported(format!(
            "vision hidden_act {act}: the reference requires gelu"
        )));
    }
    c.bool(clip::USE_GELU, true);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_keeps_the_tower_and_names_the_position_table() {
        assert_eq!(filter("language_model.model.norm.weight"), None);
        assert_eq!(
            filter("vision_model.positional_embedding_vlm").as_deref(),
            Some("vision_model.positional_embedding_vlm.weight")
        );
        assert_eq!(
            filter("multi_modal_projector.linear_1.weight").as_deref(),
            Some("multi_modal_projector.linear_1.weight")
        );
    }
}
