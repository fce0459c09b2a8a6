//! Janus-Pro's image-understanding tower (`JanusForConditionalGeneration`, projector type
//! `janus_pro`): a SigLIP-style encoder under `model.vision_model.` (its attention output
//! spelled `projection_layer`) and the MLP aligner (`model.aligner.fc1`, then
//! `hidden_layers.N`), written as the numbered projector layers `mm.0`, `mm.N+1`. The
//! image-generation parts (VQ model, generation embeddings, aligner and head) are dropped.
//!
//! The tower config gives `mlp_ratio` where others give `intermediate_size`: the feed-forward
//! size is `round(hidden_size * mlp_ratio)`, rounding half to even as Python does. The
//! composite class builds a missing vision config from `JanusVisionConfig`'s defaults.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::{Clip, ConfigValue, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `JanusForConditionalGeneration`.
pub const JANUS: Projector = Projector {
    hf_names: &["JanusForConditionalGeneration"],
    projector_type: "janus_pro",
    vision: true,
    audio: false,
    default_configs: true,
    filter,
    force: &[],
    prepare,
    hook: Some(hook),
    params,
};

/// `JanusConfig` builds its vision config as a `JanusVisionConfig` and its text config as a
/// `LlamaConfig` when config.json has none.
pub(super) const CONFIG_CLASSES: ConfigClasses = ConfigClasses {
    composites: &[CompositeClass {
        model_type: "janus",
        builds: &[
            ("vision_config", "janus_vision_model"),
            ("text_config", "llama"),
        ],
    }],
    sub_configs: &[SubConfigClass {
        model_types: &["janus_vision_model"],
        values: &[
            ("hidden_size", ConfigValue::Int(1024)),
            ("num_hidden_layers", ConfigValue::Int(24)),
            ("num_attention_heads", ConfigValue::Int(16)),
            ("image_size", ConfigValue::Int(384)),
            ("patch_size", ConfigValue::Int(16)),
            ("hidden_act", ConfigValue::Text("gelu")),
            ("layer_norm_eps", ConfigValue::Float(1e-6)),
            ("mlp_ratio", ConfigValue::Float(4.0)),
            ("depth", ConfigValue::Int(2)),
        ],
    }],
};

/// The prefixes of the image-generation parts (with and without `model.`).
const GENERATION: &[&str] = &[
    "model.vqmodel.",
    "vqmodel.",
    "model.generation_embeddings.",
    "generation_embeddings.",
    "model.generation_aligner.",
    "generation_aligner.",
    "model.generation_head.",
    "generation_head.",
];

fn filter(name: &str) -> Option<String> {
    if GENERATION.iter().any(|p| name.starts_with(p)) {
        return None;
    }
    Some(name.to_string())
}

/// `intermediate_size` from `hidden_size * mlp_ratio` when the config has none.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let path = ctx.hp.path.clone();
    let v = ctx.vision.as_mut().expect("a vision projector");
    if v.contains_key("intermediate_size") {
        return Ok(());
    }
    let (Some(ratio), Some(hidden)) = (
        v.get("mlp_ratio").filter(|x| !x.is_null()),
        v.get("hidden_size").filter(|x| !x.is_null()),
    ) else {
        return Ok(());
    };
    let size = match (hidden.as_f64(), ratio.as_f64()) {
        (Some(h), Some(r)) => Some((h * r).round_ties_even()),
        _ => None,
    }
    .filter(|s| s.is_finite() && *s >= 0.0 && *s < 9.0e15)
    .ok_or_else(|| ConvertError::BadHparam {
        path,
        keys: vec![
            "vision_config.hidden_size".into(),
            "vision_config.mlp_ratio".into(),
        ],
        expected: "numbers whose product is a size".into(),
        found: format!("{hidden} * {ratio}"),
    })?;
    v.insert("intermediate_size".into(), Json::from(size as u64));
    Ok(())
}

/// The aligner's layers by their position; the tower through the table; anything else
/// (outside both) is dropped.
fn hook(_ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let aligner = ["model.aligner.", "aligner."]
        .iter()
        .find_map(|p| name.strip_prefix(p));
    if let Some(local) = aligner {
        let index = aligner_index(local).ok_or_else(|| ConvertError::Tensor {
            name: name.clone(),
            problem: "not an aligner layer (fc1 or hidden_layers.N)".into(),
        })?;
        let suffix = if name.ends_with(".bias") {
            "bias"
        } else {
            "weight"
        };
        return Ok(vec![Out::Named(format!("mm.{index}.{suffix}"), expr)]);
    }
    if name.starts_with("model.vision_model.") || name.starts_with("vision_model.") {
        return Ok(vec![Out::Map(name, expr)]);
    }
    Ok(Vec::new())
}

/// `fc1` is layer 0, `hidden_layers.N` layer N + 1.
fn aligner_index(local: &str) -> Option<u64> {
    if local.starts_with("fc1.") {
        return Some(0);
    }
    let rest = local.strip_prefix("hidden_layers.")?;
    let (n, tail) = rest.split_once('.')?;
    if tail.is_empty() {
        return None;
    }
    n.parse::<u64>().ok()?.checked_add(1)
}

/// The projector type, the tower's layer-norm epsilon, and its activation flag.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "janus_pro");
    c.vision_eps(1e-6)?;
    let act = match c.ctx.tower().get("hidden_act") {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.to_lowercase(),
        Some(other) => other.to_string().to_lowercase(),
    };
    match act.as_str() {
        "gelu" => c.bool(clip::USE_GELU, true),
        "silu" => c.bool(clip::USE_SILU, true),
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligner_layers_are_numbered_from_fc1() {
        assert_eq!(aligner_index("fc1.weight"), Some(0));
        assert_eq!(aligner_index("hidden_layers.0.bias"), Some(1));
        assert_eq!(aligner_index("hidden_layers.4.weight"), Some(5));
        assert_eq!(aligner_index("hidden_layers.x.weight"), None);
        assert_eq!(aligner_index("hidden_layers.3"), None);
        assert_eq!(aligner_index("fc2.weight"), None);
    }

    #[test]
    fn generation_parts_are_dropped() {
        assert_eq!(filter("model.vqmodel.quantize.embedding.weight"), None);
        assert_eq!(filter("generation_head.proj_out.bias"), None);
        assert_eq!(
            filter("model.aligner.fc1.weight").as_deref(),
            Some("model.aligner.fc1.weight")
        );
    }
}
