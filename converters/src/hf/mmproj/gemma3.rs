//! Gemma 3's SigLIP tower and projector (`Gemma3VisionModel`): projector type `gemma3`,
//! `mm.input_projection` always F16, the tower's embeddings always F32, the projector's
//! RMS norm stored as `1 + w`.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::defaults::{CompositeClass, ConfigClasses};
use super::{Clip, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Gemma3ForConditionalGeneration`.
pub const GEMMA3: Projector = Projector {
    hf_names: &["Gemma3ForConditionalGeneration"],
    projector_type: "gemma3",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[
        (On::Hf("input_projection"), Force::Type(GgmlType::F16)),
        (On::Hf(".embeddings."), Force::Type(GgmlType::F32)),
    ],
    prepare: |_| Ok(()),
    hook: Some(hook),
    params,
};

/// Gemma 3's composite class builds a SigLIP vision config when config.json has none (whose
/// defaults the projector module's tower table gives).
pub(super) const CONFIG_CLASSES: ConfigClasses = ConfigClasses {
    composites: &[CompositeClass {
        model_type: "gemma3",
        builds: &[("vision_config", "siglip_vision_model")],
    }],
    sub_configs: &[],
};

/// The tower and projector only (the pooling head of a SigLIP checkpoint is dropped);
/// `mm_input_projection_weight` becomes `mm_input_projection.weight`.
fn filter(name: &str) -> Option<String> {
    if name.contains("vision_model.head.") {
        return None;
    }
    const KEEP: &[&str] = &[
        "multi_modal_projector.",
        "vision_tower.",
        "multimodal_projector.",
        "vision_model.",
    ];
    if !KEEP.iter().any(|p| name.starts_with(p)) {
        return None;
    }
    Some(name.replace("_weight", ".weight"))
}

/// Gemma's RMS norm multiplies by `1 + w`: the projector's soft embedding norm is stored
/// shifted (the SigLIP layer norms are plain).
fn hook(_: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains("soft_emb_norm.weight") {
        return Ok(vec![Out::Map(name, expr.add_scalar(1.0))]);
    }
    Ok(vec![Out::Map(name, expr)])
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "gemma3");
    c.vision_eps(1e-6)?;
    c.bool(clip::USE_GELU, true);
    // The pooling factor, written only when it is not the released models' 4 (tiny test
    // models): (image_size / patch_size) / sqrt(image_seq_length).
    let seq = c
        .ctx
        .pre
        .get("image_seq_length")
        .cloned()
        .unwrap_or(Json::from(256));
    let seq = seq.as_f64().ok_or_else(|| {
        c.ctx
            .missing("preprocessor image_seq_length", &["image_seq_length"])
    })?;
    let per_side = seq.sqrt().trunc() as u64;
    let image = super::json_u64(c.vparam(&["image_size"])?).unwrap_or(0);
    let patch = super::json_u64(c.vparam(&["patch_size"])?).unwrap_or(0);
    if patch == 0 || per_side == 0 {
        return Err(c.ctx.unsupported(format!(
            "patch_size {patch} / image_seq_length {seq}: the pooling factor is undefined"
        )));
    }
    let factor = (image / patch) / per_side;
    if factor > 0 && factor != 4 {
        c.u32(clip::vision::PROJECTOR_SCALE_FACTOR, factor)?;
    }
    Ok(())
}
