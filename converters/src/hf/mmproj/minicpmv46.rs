//! MiniCPM-V 4.6's vision tower (`MiniCPMV4_6ForConditionalGeneration`, projector type
//! `minicpmv4_6`): a SigLIP encoder under `model.vision_tower.`, the window-attention ViT
//! merger inserted after one of its blocks (`model.vision_tower.vit_merger.`: layer norm,
//! q/k/v/out attention, then a downsampling MLP written as `ds_ln` / `ds_ffn_up` /
//! `ds_ffn_down`), and the final downsampling MLP `model.merger.mlp.0` (`mm.input_norm`,
//! `mm.up`, `mm.down`). The LM head and the MTP block belong to the text file.
//!
//! The preprocessor config's `downsample_mode` (default `16x`) is `4x` or `16x`: `4x`
//! leaves the ViT merger out and halves the scale factor (2 instead of 4); its
//! `scale_resolution`, when given, is the image size written (the slice size the runtime
//! processes; the config's `image_size` sizes the position buckets). The merger's place is
//! the composite config's `insert_layer_id` (transformers' `MiniCPMV4_6Config` sets it,
//! default 6, and copies it into the vision config), written as the one window-attention
//! layer index.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::{Clip, ConfigValue, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `MiniCPMV4_6ForConditionalGeneration`.
pub const MINICPMV46: Projector = Projector {
    hf_names: &["MiniCPMV4_6ForConditionalGeneration"],
    projector_type: "minicpmv4_6",
    vision: true,
    audio: false,
    default_configs: true,
    filter,
    force: &[],
    prepare,
    hook: Some(hook),
    params,
};

/// `MiniCPMV4_6Config` builds its vision config as a `MiniCPMV4_6VisionConfig` (SigLIP's
/// sizes) and its text config as a Qwen 3.5 one when config.json has none.
pub(super) const CONFIG_CLASSES: ConfigClasses = ConfigClasses {
    composites: &[CompositeClass {
        model_type: "minicpmv4_6",
        builds: &[
            ("vision_config", "minicpmv4_6_vision"),
            ("text_config", "qwen3_5_text"),
        ],
    }],
    sub_configs: &[SubConfigClass {
        model_types: &["minicpmv4_6_vision"],
        values: &[
            ("hidden_size", ConfigValue::Int(768)),
            ("intermediate_size", ConfigValue::Int(3072)),
            ("num_hidden_layers", ConfigValue::Int(12)),
            ("num_attention_heads", ConfigValue::Int(12)),
            ("image_size", ConfigValue::Int(224)),
            ("patch_size", ConfigValue::Int(16)),
            ("layer_norm_eps", ConfigValue::Float(1e-6)),
        ],
    }],
};

/// The composite class's default `insert_layer_id`.
const INSERT_LAYER_DEFAULT: i64 = 6;

/// The downsample modes the class converts, with their scale factors.
const MODES: &[(&str, u64)] = &[("4x", 2), ("16x", 4)];

/// The LM head and the MTP block are the text file's.
fn filter(name: &str) -> Option<String> {
    if name.starts_with("lm_head.") || name.starts_with("mtp") {
        return None;
    }
    Some(name.to_string())
}

/// The preprocessor config's downsample mode, checked.
fn downsample_mode(ctx: &Ctx) -> Result<String, ConvertError> {
    let mode = match ctx.pre.get("downsample_mode") {
        None => "16x".to_string(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    if !MODES.iter().any(|(m, _)| *m == mode) {
        return Err(ctx.unsupported(format!(
            "downsample_mode {mode:?} in the preprocessor config: only \"4x\" and \"16x\" \
             (the reference refuses it too)"
        )));
    }
    Ok(mode)
}

/// The mode is checked; `scale_resolution` becomes the image size; the merger's index is
/// the composite's `insert_layer_id` (as AutoConfig gives it to the vision config).
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    downsample_mode(ctx)?;
    let path = ctx.hp.path.clone();
    let insert = match ctx.hp.raw.get("insert_layer_id") {
        None => Json::from(INSERT_LAYER_DEFAULT),
        Some(v) => v.clone(),
    };
    let scale = ctx
        .pre
        .get("scale_resolution")
        .filter(|v| !v.is_null())
        .cloned();
    let v = ctx.vision.as_mut().expect("a vision projector");
    v.insert("insert_layer_id".into(), insert);
    if let Some(s) = scale {
        // int(scale_resolution): a float is truncated toward zero.
        let n = s
            .as_i64()
            .or_else(|| {
                s.as_f64()
                    .filter(|x| x.is_finite())
                    .map(|x| x.trunc() as i64)
            })
            .ok_or_else(|| ConvertError::BadHparam {
                path,
                keys: vec!["scale_resolution".into()],
                expected: "a number (preprocessor config)".into(),
                found: s.to_string(),
            })?;
        v.insert("image_size".into(), Json::from(n));
    }
    Ok(())
}

/// Whether a tensor belongs to the ViT merger, which the `4x` mode leaves out.
fn is_vit_merger(name: &str) -> bool {
    name.contains(".vit_merger.")
}

/// The `4x` mode drops the ViT merger's tensors; the rest map through the table.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if is_vit_merger(&name) && downsample_mode(ctx)? == "4x" {
        return Ok(Vec::new());
    }
    Ok(vec![Out::Map(name, expr)])
}

/// The projector type, the scale factor, the merger's index, GELU and the epsilon.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    let mode = downsample_mode(c.ctx)?;
    let factor = MODES
        .iter()
        .find(|(m, _)| *m == mode)
        .map(|(_, f)| *f)
        .expect("checked in prepare");
    c.string(clip::PROJECTOR_TYPE, "minicpmv4_6");
    c.u32(clip::vision::PROJECTOR_SCALE_FACTOR, factor)?;
    let insert = c.vparam(&["insert_layer_id"])?.clone();
    let index = insert
        .as_i64()
        .or_else(|| {
            insert
                .as_f64()
                .filter(|x| x.is_finite())
                .map(|x| x.trunc() as i64)
        })
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| {
            ConvertError::wrong_type(
                &c.ctx.hp.path,
                "insert_layer_id",
                "an integer that fits in an INT32",
                &insert,
            )
        })?;
    c.numbers(clip::vision::WA_LAYER_INDEXES, &Json::from(vec![index]))?;
    c.bool(clip::USE_GELU, true);
    c.vision_eps(1e-6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_files_tensors_are_dropped() {
        assert_eq!(filter("lm_head.weight"), None);
        assert_eq!(filter("mtp.fc.weight"), None);
        assert_eq!(
            filter("model.merger.mlp.0.linear_1.weight").as_deref(),
            Some("model.merger.mlp.0.linear_1.weight")
        );
        assert!(is_vit_merger("model.vision_tower.vit_merger.linear_1.bias"));
        assert!(!is_vit_merger("model.merger.mlp.0.linear_1.bias"));
    }
}
