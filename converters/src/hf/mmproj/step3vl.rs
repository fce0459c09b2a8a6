//! Step3-VL (`StepVLForConditionalGeneration`, `Step3p7ForConditionalGeneration`, projector
//! type `step3vl`): a PE-style tower under `vision_model.` (a `conv1` patch embedding, a bare
//! `positional_embedding` table, `ln_pre`, `transformer.resblocks` with a fused `in_proj`,
//! `c_fc` / `c_proj` and the `ls_1` / `ls_2` layer scales stored as `.gamma`), two
//! convolution downsamplers `vision_model.vit_downsampler{1,2}` written as `mm.0` / `mm.1`,
//! and the linear projector `vit_large_projector` written as `mm.model.fc`. The text model's
//! tensors (`model.`, `lm_head.`) are dropped; so is anything outside `vision_model.` but
//! the projector's weight.
//!
//! The position table is kept in F32; the downsamplers' kernels in F16 for an f16 file and
//! F32 otherwise. A tower config without `intermediate_size` gets
//! `round(width * mlp_ratio)` (ratio 8960 / 1536 by default, rounding half to even). The image
//! processor's mean and std default to the CLIP values.
//!
//! A `step3p7` config is read through transformers' `Step3p7Config`: its vision config is a
//! `Step3p7VisionConfig` whatever `model_type` the file gives it (built from the defaults when
//! absent), whose `width` / `layers` / `heads` spellings become `hidden_size` /
//! `num_hidden_layers` / `num_attention_heads`, and whose feed-forward size is always
//! `int(hidden_size * mlp_ratio)`. A config of another `model_type` (Step3-VL-10B's
//! `step_vl`, unknown to transformers) is read as written.
//!
//! The reference only converts the published Step3-VL-10B tower: it checks, from the config
//! alone, that `understand_projector_stride`, `image_size`, the width and the block count are
//! 2, 728, 1536 and 47, and refuses anything else.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::{Map, Value as Json};

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::{Clip, ConfigValue, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Step3VLVisionModel` (both class names).
pub const STEP3VL: Projector = Projector {
    hf_names: &[
        "StepVLForConditionalGeneration",
        "Step3p7ForConditionalGeneration",
    ],
    projector_type: "step3vl",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[
        (On::Gguf(".position_embd."), Force::Type(GgmlType::F32)),
        (On::HfWhere(is_downsampler_kernel), Force::F16IfF16),
    ],
    prepare,
    hook: Some(hook),
    params,
};

/// `Step3p7Config` builds its vision config as a `Step3p7VisionConfig` and its text config as
/// a `Step3p7TextConfig` (`model_type` `step3p5`) when config.json has none.
pub(super) const CONFIG_CLASSES: ConfigClasses = {
    use ConfigValue::{Float, Int, Text};
    ConfigClasses {
        composites: &[CompositeClass {
            model_type: STEP3P7,
            builds: &[("vision_config", VISION_CLASS), ("text_config", "step3p5")],
        }],
        sub_configs: &[
            SubConfigClass {
                model_types: &[VISION_CLASS],
                values: &[
                    ("hidden_size", Int(1536)),
                    ("intermediate_size", Int(3072)),
                    ("num_hidden_layers", Int(47)),
                    ("num_attention_heads", Int(16)),
                    ("num_channels", Int(3)),
                    ("image_size", Int(728)),
                    ("patch_size", Int(14)),
                    ("hidden_act", Text("quick_gelu")),
                    ("layer_norm_eps", Float(1e-5)),
                    ("mlp_ratio", Float(DEFAULT_MLP_RATIO)),
                ],
            },
            SubConfigClass {
                model_types: &["step3p5"],
                values: &[("hidden_size", Int(4096))],
            },
        ],
    }
};

/// The composite config class transformers registers (Step 3.7).
const STEP3P7: &str = "step3p7";

/// Its vision config class.
const VISION_CLASS: &str = "step3p5_vision";

/// `Step3p7VisionConfig`'s legacy spellings and the attributes they set.
const VISION_RENAMES: &[(&str, &str)] = &[
    ("width", "hidden_size"),
    ("layers", "num_hidden_layers"),
    ("heads", "num_attention_heads"),
    ("ls_init_value", "layer_scale_init_value"),
];

/// The tower the reference is validated for: (projector stride, image size, width, blocks).
const VALIDATED: (i64, i64, i64, i64) = (2, 728, 1536, 47);

/// The feed-forward ratio when the tower names none (Step3-VL-10B's 8960 / 1536).
const DEFAULT_MLP_RATIO: f64 = 8960.0 / 1536.0;

/// The largest image side the processor resizes to, written as `preproc_image_size`.
const PREPROC_IMAGE_SIZE: u64 = 3024;

/// The image processor's normalisation defaults (mistral-common's, the CLIP values).
const MEAN: [f64; 3] = [0.48145466, 0.4578275, 0.40821073];
const STD: [f64; 3] = [0.26862954, 0.26130258, 0.27577711];

/// The text model's tensors are not the projector's.
fn filter(name: &str) -> Option<String> {
    if name.starts_with("model.") || name.starts_with("lm_head.") {
        return None;
    }
    Some(name.to_string())
}

/// A downsampler's number and `weight` / `bias`, read as the reference's pattern
/// `vision_model\.vit_downsampler(\d+)\.(weight|bias)` does (anchored at the start only).
fn downsampler(name: &str) -> Option<(i64, &'static str)> {
    let rest = name.strip_prefix("vision_model.vit_downsampler")?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (num, tail) = rest.split_at(digits);
    let id: i64 = num.parse().ok()?;
    let kind = if tail.starts_with(".weight") {
        "weight"
    } else if tail.starts_with(".bias") {
        "bias"
    } else {
        return None;
    };
    Some((id, kind))
}

/// The downsamplers' kernels the class writes in F16 for an f16 file (`mm.0` / `mm.1`
/// weights).
fn is_downsampler_kernel(name: &str) -> bool {
    matches!(downsampler(name), Some((1 | 2, "weight")))
}

/// `__init__`: the feed-forward size from the width and ratio when the tower has none, the
/// normalisation defaults.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let path = ctx.hp.path.clone();
    let auto_config = ctx.hp.raw.get("model_type").and_then(Json::as_str) == Some(STEP3P7);
    let v = ctx.vision.as_mut().expect("a vision projector");
    if auto_config {
        vision_config_class(&path, v)?;
    }
    if !truthy(v.get("intermediate_size")) {
        let hidden = [v.get("hidden_size"), v.get("width")]
            .into_iter()
            .flatten()
            .find(|x| truthy(Some(x)));
        let width = match hidden {
            None => 0.0,
            Some(x) => x.as_f64().ok_or_else(|| {
                ConvertError::wrong_type(&path, "vision_config.hidden_size", "a number", x)
            })?,
        };
        if width <= 0.0 {
            return Err(ConvertError::BadHparam {
                path,
                keys: vec![
                    "vision_config.hidden_size".into(),
                    "vision_config.width".into(),
                ],
                expected: "a positive width (the feed-forward size is derived from it)".into(),
                found: format!("{width}"),
            });
        }
        let ratio = match v.get("mlp_ratio") {
            None => DEFAULT_MLP_RATIO,
            Some(x) => x.as_f64().ok_or_else(|| {
                ConvertError::wrong_type(&path, "vision_config.mlp_ratio", "a number", x)
            })?,
        };
        let size = (width * ratio).round_ties_even();
        if !(size.is_finite() && (0.0..9.0e15).contains(&size)) {
            return Err(ConvertError::BadHparam {
                path,
                keys: vec!["vision_config.mlp_ratio".into()],
                expected: "a ratio whose product with the width is a size".into(),
                found: format!("{width} * {ratio}"),
            });
        }
        v.insert("intermediate_size".into(), Json::from(size as u64));
    }
    for (k, d) in [("image_mean", MEAN), ("image_std", STD)] {
        ctx.pre
            .entry(k.to_string())
            .or_insert_with(|| Json::from(d.to_vec()));
    }
    Ok(())
}

/// `Step3p7VisionConfig` built from the file's vision config: the legacy spellings moved to
/// their attributes (they win over the attribute's own key), the class's defaults for the
/// rest, and the feed-forward size `int(hidden_size * mlp_ratio)` whatever the file says.
fn vision_config_class(
    path: &std::path::Path,
    v: &mut Map<String, Json>,
) -> Result<(), ConvertError> {
    for (legacy, attr) in VISION_RENAMES {
        if let Some(x) = v.remove(*legacy) {
            v.insert(attr.to_string(), x);
        }
    }
    v.insert("model_type".into(), Json::from(VISION_CLASS));
    let mut defaults = Map::new();
    defaults.insert("model_type".into(), Json::from(VISION_CLASS));
    super::defaults::fill(&Json::Null, "vision_config", &mut defaults);
    for (k, d) in defaults {
        v.entry(k).or_insert(d);
    }
    let number = |key: &str| -> Result<f64, ConvertError> {
        let x = &v[key];
        x.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(path, format!("vision_config.{key}"), "a number", x)
        })
    };
    let size = (number("hidden_size")? * number("mlp_ratio")?).trunc();
    if !(size.is_finite() && (0.0..9.0e15).contains(&size)) {
        return Err(ConvertError::BadHparam {
            path: path.to_path_buf(),
            keys: vec!["vision_config.mlp_ratio".into()],
            expected: "a ratio whose product with the width is a size".into(),
            found: format!("{size}"),
        });
    }
    v.insert("intermediate_size".into(), Json::from(size as u64));
    Ok(())
}

/// Python's truth of a config value (absent, null, zero, empty: false).
fn truthy(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(Json::Number(n)) => n.as_f64() != Some(0.0),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        Some(Json::Object(o)) => !o.is_empty(),
    }
}

/// `modify_tensors`: the downsamplers and the projector by name, the tower's spellings
/// renamed to the table's; anything else is dropped.
fn hook(_ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.starts_with("vision_model.vit_downsampler") {
        let (id, kind) = downsampler(&name).ok_or_else(|| ConvertError::Tensor {
            name: name.clone(),
            problem: "not a Step3-VL downsampler tensor (vit_downsamplerN.weight / .bias)".into(),
        })?;
        return Ok(vec![Out::Named(format!("mm.{}.{kind}", id - 1), expr)]);
    }
    if name == "vit_large_projector.weight" {
        return Ok(vec![Out::Named("mm.model.fc.weight".into(), expr)]);
    }
    if !name.starts_with("vision_model.") {
        return Ok(Vec::new());
    }
    let mut name = name;
    if name == "vision_model.positional_embedding" {
        name.push_str(".weight");
    } else if name.ends_with(".gamma") && name.contains(".ls_") {
        name = format!("{}.weight", name.trim_end_matches(".gamma"));
    }
    let name = name
        .replace("attn.in_proj_weight", "attn.in_proj.weight")
        .replace("attn.in_proj_bias", "attn.in_proj.bias");
    Ok(vec![Out::Map(name, expr)])
}

/// Python's `int()` of a config value read with a default (`-1` when absent).
fn int_of(path: &std::path::Path, key: &str, v: Option<&Json>) -> Result<i64, ConvertError> {
    match v {
        None => Ok(-1),
        Some(Json::Bool(b)) => Ok(i64::from(*b)),
        Some(x) => x
            .as_i64()
            .or_else(|| {
                x.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.trunc() as i64)
            })
            .ok_or_else(|| ConvertError::wrong_type(path, key, "a number", x)),
    }
}

/// The first of `keys` present (`dict.get(a, dict.get(b, -1))`).
fn first<'a>(obj: &'a Map<String, Json>, keys: &[&str]) -> Option<&'a Json> {
    keys.iter().find_map(|k| obj.get(*k))
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    let path = c.ctx.hp.path.clone();
    let tower = c.ctx.tower();
    let stride = int_of(
        &path,
        "understand_projector_stride",
        c.ctx.hp.raw.get("understand_projector_stride"),
    )?;
    let image = int_of(&path, "vision_config.image_size", tower.get("image_size"))?;
    let width = int_of(
        &path,
        "vision_config.hidden_size",
        first(tower, &["hidden_size", "width"]),
    )?;
    let blocks = int_of(
        &path,
        "vision_config.num_hidden_layers",
        first(tower, &["num_hidden_layers", "layers"]),
    )?;
    if (stride, image, width, blocks) != VALIDATED {
        return Err(c.ctx.unsupported(format!(
            "a tower other than Step3-VL-10B's: (understand_projector_stride, image_size, \
             width, layers) = ({stride}, {image}, {width}, {blocks}), the reference converts \
             only {VALIDATED:?}"
        )));
    }
    c.string(clip::PROJECTOR_TYPE, "step3vl");
    c.vision_eps(1e-5)?;
    c.u32(
        clip::vision::PROJECTOR_SCALE_FACTOR,
        (stride * stride) as u64,
    )?;
    c.u32(clip::vision::PREPROC_IMAGE_SIZE, PREPROC_IMAGE_SIZE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_tensors_are_dropped() {
        assert!(filter("model.layers.0.mlp.up_proj.weight").is_none());
        assert!(filter("lm_head.weight").is_none());
        assert!(filter("vision_model.conv1.weight").is_some());
    }

    #[test]
    fn downsamplers_are_read_as_the_pattern_does() {
        assert_eq!(
            downsampler("vision_model.vit_downsampler1.weight"),
            Some((1, "weight"))
        );
        assert_eq!(
            downsampler("vision_model.vit_downsampler2.bias"),
            Some((2, "bias"))
        );
        assert_eq!(downsampler("vision_model.vit_downsampler.weight"), None);
        assert_eq!(downsampler("vision_model.vit_downsampler1.scale"), None);
        assert!(is_downsampler_kernel(
            "vision_model.vit_downsampler2.weight"
        ));
        assert!(!is_downsampler_kernel("vision_model.vit_downsampler2.bias"));
        assert!(!is_downsampler_kernel(
            "vision_model.vit_downsampler3.weight"
        ));
    }

    #[test]
    fn python_truth() {
        assert!(!truthy(None));
        assert!(!truthy(Some(&Json::from(0))));
        assert!(!truthy(Some(&Json::Null)));
        assert!(truthy(Some(&Json::from(24))));
    }
}
