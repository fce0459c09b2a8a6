//! SmolVLM and Idefics3 (`SmolVLMModel`): a SigLIP-like tower and a pixel-shuffle linear
//! projector; projector type `idefics3`, the tower's embeddings always F32.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::{Clip, ConfigValue, Ctx, Force, On, Projector};
use crate::ConvertError;

/// `SmolVLMForConditionalGeneration`, `Idefics3ForConditionalGeneration`.
pub const SMOLVLM: Projector = Projector {
    hf_names: &[
        "Idefics3ForConditionalGeneration",
        "SmolVLMForConditionalGeneration",
    ],
    projector_type: "idefics3",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[(On::Hf(".embeddings."), Force::Type(GgmlType::F32))],
    prepare,
    hook: None,
    params,
};

/// The composite classes build their own vision config (whose defaults the projector
/// module's tower table gives) and a Llama text config (transformers 5's `LlamaConfig`
/// width) when config.json has none.
pub(super) const CONFIG_CLASSES: ConfigClasses = ConfigClasses {
    composites: &[
        CompositeClass {
            model_type: "idefics3",
            builds: &[
                ("vision_config", "idefics3_vision"),
                ("text_config", "llama"),
            ],
        },
        CompositeClass {
            model_type: "smolvlm",
            builds: &[
                ("vision_config", "smolvlm_vision"),
                ("text_config", "llama"),
            ],
        },
    ],
    sub_configs: &[SubConfigClass {
        model_types: &["llama"],
        values: &[("hidden_size", ConfigValue::Int(4096))],
    }],
};

fn filter(name: &str) -> Option<String> {
    let vision = ["vision_tower", "vision_model", "model.connector"]
        .iter()
        .any(|p| name.contains(p));
    vision.then(|| name.to_string())
}

/// SmolVLM2's config.json may lack the tower's sizes: the transformers defaults.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let v = ctx.vision.as_mut().expect("a vision projector");
    if v.get("model_type").and_then(Json::as_str) == Some("smolvlm_vision") {
        for (k, d) in [
            ("hidden_size", 1152),
            ("num_attention_heads", 16),
            ("intermediate_size", 3072),
        ] {
            v.entry(k).or_insert(Json::from(d));
        }
    }
    Ok(())
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "idefics3");
    c.vision_eps(1e-5)?;
    let scale = c
        .ctx
        .hp
        .raw
        .get("scale_factor")
        .cloned()
        .unwrap_or(Json::from(2));
    c.u32_json(clip::vision::PROJECTOR_SCALE_FACTOR, &scale)?;
    c.bool(clip::USE_GELU, true);
    let edge = c
        .ctx
        .pre
        .get("size")
        .and_then(|s| s.get("longest_edge"))
        .cloned();
    let edge = match edge {
        Some(e) => e,
        None => c.vparam(&["image_size"])?.clone(),
    };
    c.u32_json(clip::vision::PREPROC_IMAGE_SIZE, &edge)
}
