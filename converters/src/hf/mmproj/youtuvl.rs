//! Youtu-VL (`YoutuVLForConditionalGeneration`, projector type `youtuvl`): a SigLIP2 tower
//! under `siglip2.vision_model.` with windowed attention in every block but the listed ones
//! (`fullatt_block_indexes`), and a Qwen2-VL style merger (`merger.ln_q`, `merger.mlp.{0,2}`).
//!
//! The checkpoint holds the text model's tensors at the top level (`model.layers.`, …),
//! which the class leaves out by prefix; a tower tensor the name table cannot map (the
//! SigLIP2 position table) is left out as the reference does, not refused.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{Clip, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `YoutuVLForConditionalGeneration`.
pub const YOUTUVL: Projector = Projector {
    hf_names: &["YoutuVLForConditionalGeneration"],
    projector_type: "youtuvl",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[],
    prepare,
    hook: Some(hook),
    params,
};

/// The image size when the tower's config names none.
const DEFAULT_IMAGE_SIZE: u64 = 560;

/// The text model's tensors, left out.
const TEXT_PREFIXES: &[&str] = &[
    "lm_head.",
    "model.layers.",
    "model.embed_tokens.",
    "model.norm.",
];

/// The activations written as GELU.
const GELU: &[&str] = &[
    "gelu",
    "gelu_pytorch_tanh",
    "gelu_fast",
    "gelu_new",
    "gelu_accurate",
];

fn filter(name: &str) -> Option<String> {
    if TEXT_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return None;
    }
    Some(name.to_string())
}

fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let v = ctx.vision.as_mut().expect("a vision projector");
    v.entry("image_size")
        .or_insert(Json::from(DEFAULT_IMAGE_SIZE));
    Ok(())
}

fn hook(_ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    Ok(vec![Out::MapOrDrop(name, expr)])
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "youtuvl");
    c.vision_eps(1e-6)?;
    let tower = c.ctx.tower();
    let act = match tower.get("hidden_act") {
        None => "gelu_pytorch_tanh".to_string(),
        // the reference compares the value's text, lower-cased
        Some(Json::String(s)) => s.to_lowercase(),
        Some(other) => other.to_string().to_lowercase(),
    };
    if GELU.contains(&act.as_str()) {
        c.bool(clip::USE_GELU, true);
    } else if act == "silu" {
        c.bool(clip::USE_SILU, true);
    } else {
        return Err(c.ctx.unsupported(format!("the vision activation {act:?}")));
    }
    let merge = tower
        .get("spatial_merge_size")
        .cloned()
        .unwrap_or(Json::from(2));
    c.u32_json(clip::vision::SPATIAL_MERGE_SIZE, &merge)?;
    if let Some(w) = tower.get("window_size").filter(|w| !w.is_null()).cloned() {
        c.u32_json(clip::vision::WINDOW_SIZE, &w)?;
    }
    let full = tower
        .get("fullatt_block_indexes")
        .filter(|v| !v.is_null())
        .cloned()
        .ok_or_else(|| c.ctx.hp.missing(&["vision_config.fullatt_block_indexes"]))?;
    c.numbers(clip::vision::WA_LAYER_INDEXES, &full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_model_is_left_out() {
        assert!(filter("model.layers.0.mlp.up_proj.weight").is_none());
        assert!(filter("lm_head.weight").is_none());
        assert_eq!(
            filter("merger.mlp.0.weight").as_deref(),
            Some("merger.mlp.0.weight")
        );
    }
}
