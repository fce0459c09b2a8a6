//! Gemma 3n's vision and audio towers (`Gemma3nVisionAudioModel`, projector types `gemma3nv`
//! and `gemma3na`).
//!
//! The vision tower is timm's MobileNetV5 (a convolution stem, stages of edge-residual,
//! inverted-residual and attention blocks, the multi-scale fusion adapter `msfa`), whose block
//! tensors are numbered twice (`blocks.{stage}.{index}`) and written as
//! `v.blk.{stage}.{index}.<suffix>` past the name table; the stem's bias becomes
//! `[1, C, 1, 1]`. The audio tower is a conformer (`model.audio_tower.conformer.{i}` read as
//! `conformer.layers.{i}`). Both embedders (`embed_vision`, `embed_audio`) map through the
//! table. A missing vision or audio config is the class's defaults, as AutoConfig builds it.
//! The config's sizes are fixed up as the reference does: 128 vision blocks (the
//! MobileNet has none the runtime counts), an FFN four times the config's, the image size
//! and patch from the preprocessor (`size.height`, `image_seq_length`), no image
//! normalization; the audio tower's counts come from its `conf_*` keys.
//!
//! The reference maps no name of the subsampling convolutions' norms
//! (`subsample_conv_projection.conv_{i}.norm`) that transformers' layout has, so such a
//! checkpoint is refused at that tensor, as the reference refuses it.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::{Map, Value as Json};

use super::{json_u64, Clip, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Gemma3nForConditionalGeneration`.
pub const GEMMA3N: Projector = Projector {
    hf_names: &["Gemma3nForConditionalGeneration"],
    projector_type: "gemma3nv",
    vision: true,
    audio: true,
    default_configs: true,
    filter: |n| Some(n.to_string()),
    force: &[
        (On::Hf("input_projection"), Force::Type(GgmlType::F16)),
        (On::Hf("input_proj"), Force::Type(GgmlType::F16)),
        (On::Hf(".embeddings."), Force::Type(GgmlType::F32)),
        (On::Hf("stem"), Force::Type(GgmlType::F32)),
        (On::HfWhere(conformer_conv), Force::Type(GgmlType::F32)),
    ],
    prepare,
    hook: Some(hook),
    params,
};

/// The suffixes a conformer tensor name may carry past its table spelling.
const SUFFIXES: &[&str] = &[
    ".weight",
    ".bias",
    ".input_max",
    ".input_min",
    ".output_max",
    ".output_min",
];

/// The tensors of a MobileNetV5 block, `blocks.{stage}.{index}.<suffix>`, each written as
/// `v.blk.{stage}.{index}.<suffix>`.
const BLOCK_SUFFIXES: &[&str] = &[
    "conv_exp.weight",
    "bn1.weight",
    "conv_pwl.weight",
    "bn2.weight",
    "dw_start.conv.weight",
    "dw_start.bn.weight",
    "dw_mid.conv.weight",
    "dw_mid.bn.weight",
    "pw_exp.conv.weight",
    "pw_exp.bn.weight",
    "pw_proj.conv.weight",
    "pw_proj.bn.weight",
    "layer_scale.gamma",
    "attn.query.proj.weight",
    "attn.key.proj.weight",
    "attn.value.proj.weight",
    "attn.output.proj.weight",
    "attn.key.down_conv.weight",
    "attn.key.norm.weight",
    "attn.value.down_conv.weight",
    "attn.value.norm.weight",
    "norm.weight",
];

/// The config defaults transformers fills into `Gemma3nVisionConfig` for the keys the
/// converter reads.
const VISION_DEFAULTS: &[(&str, u64)] = &[("hidden_size", 2048)];

/// The same for `Gemma3nAudioConfig`.
const AUDIO_DEFAULTS: &[(&str, u64)] = &[
    ("hidden_size", 1536),
    ("input_feat_size", 128),
    ("conf_num_attention_heads", 8),
    ("conf_num_hidden_layers", 12),
];

/// The vision block count written (the reference's stand-in: the MobileNet's blocks are not
/// counted).
const VISION_BLOCKS: u64 = 128;

fn fill(m: &mut Map<String, Json>, defaults: &[(&str, u64)]) {
    for (k, v) in defaults {
        m.entry(k.to_string()).or_insert(Json::from(*v));
    }
}

/// A tensor of the audio tower (`ConformerAudioModel.is_audio_tensor`).
fn is_audio(name: &str) -> bool {
    [
        "audio",
        "codebook",
        "conformer",
        "depth_embedding",
        "depthformer",
        "depth_linear",
    ]
    .iter()
    .any(|p| name.contains(p))
}

/// An audio tensor's convolution (`".conv" in name or "_conv" in name and ".weight" in
/// name`), kept in F32.
fn conformer_conv(name: &str) -> bool {
    is_audio(name)
        && (name.contains(".conv") || (name.contains("_conv") && name.contains(".weight")))
}

/// An integer times four, or the config error.
fn times4(ctx: &Ctx, key: &str, v: &Json) -> Result<Json, ConvertError> {
    json_u64(v)
        .and_then(|n| n.checked_mul(4))
        .map(Json::from)
        .ok_or_else(|| ConvertError::wrong_type(&ctx.hp.path, key, "an integer", v))
}

/// `Gemma3nVisionAudioModel.__init__`: the configs' defaults and fix-ups, the image size
/// and patch from the preprocessor, no image normalization.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let ff = {
        let v = ctx.vision.as_mut().expect("checked before prepare");
        fill(v, VISION_DEFAULTS);
        v.get("intermediate_size")
            .cloned()
            .unwrap_or(Json::from(2048))
    };
    let ff = times4(ctx, "vision_config.intermediate_size", &ff)?;
    let (image, patch) = image_and_patch(ctx)?;
    let v = ctx.vision.as_mut().expect("checked before prepare");
    v.insert("n_layers".into(), Json::from(VISION_BLOCKS));
    v.insert("intermediate_size".into(), ff);
    v.entry("num_attention_heads").or_insert(Json::from(8));
    v.insert("image_size".into(), Json::from(image));
    v.insert("patch_size".into(), Json::from(patch));
    ctx.pre
        .insert("image_mean".into(), Json::from(vec![0.0, 0.0, 0.0]));
    ctx.pre
        .insert("image_std".into(), Json::from(vec![1.0, 1.0, 1.0]));
    let a = ctx.audio.as_mut().expect("built by the config defaults");
    fill(a, AUDIO_DEFAULTS);
    for (to, from) in [
        ("n_layers", "conf_num_hidden_layers"),
        ("num_attention_heads", "conf_num_attention_heads"),
        ("feat_in", "input_feat_size"),
    ] {
        let v = a.get(from).cloned().expect("filled by the defaults");
        a.insert(to.into(), v);
    }
    a.entry("intermediate_size").or_insert(Json::from(6144));
    Ok(())
}

/// The preprocessor's `size.height` (768 without a `size`) and that over its
/// `image_seq_length` (256 without one), floored.
fn image_and_patch(ctx: &Ctx) -> Result<(u64, u64), ConvertError> {
    let bad = |what: &str| {
        ConvertError::format(
            ctx.dir.join("preprocessor_config.json"),
            None,
            format!("{what}: the Gemma 3n projector needs an integer image height and token count"),
        )
    };
    let image = match ctx.pre.get("size") {
        None => 768,
        Some(s) => s
            .get("height")
            .and_then(json_u64)
            .ok_or_else(|| bad(&format!("size {s}")))?,
    };
    let seq = match ctx.pre.get("image_seq_length") {
        None => 256,
        Some(n) => json_u64(n)
            .filter(|n| *n > 0)
            .ok_or_else(|| bad(&format!("image_seq_length {n}")))?,
    };
    Ok((image, image / seq))
}

/// `modify_tensors`: audio tensors through the conformer's renames; the vision tower's
/// blocks by their two numbers, its other tensors and the embedders through the table.
fn hook(_: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if is_audio(&name) {
        let name = name.replace("model.audio_tower.conformer.", "conformer.layers.");
        return conformer(name, expr);
    }
    if !(name.starts_with("model.embed_vision.") || name.starts_with("model.vision_tower.")) {
        return Ok(Vec::new());
    }
    if name.starts_with("model.vision_tower.timm_model.blocks.") {
        return Ok(vec![Out::Named(block_name(&name)?, expr)]);
    }
    let expr = if name.ends_with("conv_stem.conv.bias") || name.ends_with("layer_scale.gamma") {
        let mut shape = vec![1];
        shape.extend_from_slice(expr.shape());
        shape.extend([1, 1]);
        expr.reshape(&name, shape)?
    } else {
        expr
    };
    Ok(vec![Out::Map(name, expr)])
}

/// `ConformerAudioModel.modify_tensors` for the tensors a Gemma 3n checkpoint has: the
/// pre-encoder's convolution biases as `[C, 1, 1]`, depthwise and pointwise kernels
/// squeezed to 2-D. Its batch-norm fold (a family with `batch_norm` tensors) has no Gemma 3n
/// tensor and is refused.
fn conformer(name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains("batch_norm") {
        return Err(ConvertError::Tensor {
            name,
            problem: "a conformer batch norm: not a Gemma 3n tensor".into(),
        });
    }
    let s = expr.shape().to_vec();
    let squeeze = |axis: usize| -> Result<Vec<u64>, ConvertError> {
        if s.len() != 3 || s[axis] != 1 {
            return Err(ConvertError::Tensor {
                name: name.clone(),
                problem: format!("convolution kernel of shape {s:?}: expected size 1 at {axis}"),
            });
        }
        let mut t = s.clone();
        t.remove(axis);
        Ok(t)
    };
    let expr = if name.starts_with("conformer.pre_encode.conv.") && name.ends_with(".bias") {
        let mut t = s.clone();
        t.extend([1, 1]);
        expr.reshape(&name, t)?
    } else if name.contains("conv.depthwise_conv") && name.ends_with(".weight") {
        expr.reshape(&name, squeeze(1)?)?
    } else if name.contains("conv.pointwise_conv") && name.ends_with(".weight") {
        expr.reshape(&name, squeeze(2)?)?
    } else {
        expr
    };
    Ok(vec![Out::MapWith(name, expr, SUFFIXES)])
}

/// `v.blk.{stage}.{index}.<suffix>` of `model.vision_tower.timm_model.blocks.{stage}.{index}.<suffix>`.
fn block_name(name: &str) -> Result<String, ConvertError> {
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() >= 7 {
        let suffix = parts[6..].join(".");
        if BLOCK_SUFFIXES.contains(&suffix.as_str()) {
            return Ok(format!("v.blk.{}.{}.{suffix}", parts[4], parts[5]));
        }
    }
    Err(ConvertError::Tensor {
        name: name.to_string(),
        problem: "can not map tensor (no MobileNetV5 block tensor has this name)".into(),
    })
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::vision::PROJECTOR_TYPE, "gemma3nv");
    c.vision_eps(1e-6)?;
    c.string(clip::audio::PROJECTOR_TYPE, "gemma3na");
    let mel = c.aparam(&["feat_in"])?.clone();
    c.u32_json(clip::audio::NUM_MEL_BINS, &mel)?;
    c.f32_json(clip::audio::LAYERNORM_EPS, &Json::from(1e-5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_names() {
        assert_eq!(
            block_name("model.vision_tower.timm_model.blocks.3.12.attn.key.norm.weight").unwrap(),
            "v.blk.3.12.attn.key.norm.weight"
        );
        assert!(block_name("model.vision_tower.timm_model.blocks.3.12.se.conv.weight").is_err());
        assert!(block_name("model.vision_tower.timm_model.blocks.3").is_err());
    }

    #[test]
    fn forced_f32_convolutions() {
        assert!(conformer_conv(
            "model.audio_tower.subsample_conv_projection.conv_0.conv.weight"
        ));
        assert!(!conformer_conv(
            "model.vision_tower.timm_model.conv_stem.conv.weight"
        ));
    }
}
