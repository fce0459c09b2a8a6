//! Gemma 4's vision and audio towers (`Gemma4VisionAudioModel`, projector types `gemma4v`
//! and `gemma4a`) and Gemma 4 Unified's transformer-less embedders
//! (`Gemma4UnifiedVisionAudioModel`, `gemma4uv` and `gemma4ua`).
//!
//! Gemma 4's vision tower is a patch embedder (a linear layer over `p × p × 3` pixels,
//! written as the convolution kernel `[n_embd, 3, p, p]`, and a 2-D position table), blocks
//! with q/k norms and norms after attention and FFN, and the output standardization; its
//! audio tower is a conformer (subsampling convolutions, two half-step FFNs around attention
//! with relative keys and a per-dimension query scale stored through softplus, a light
//! convolution). Both may have clipped linears, whose bounds (`input_min` … `output_max`,
//! scalars) are written as one-element tensors beside the weight. The audio tower is
//! optional: a checkpoint without `audio_config` gets a vision-only file. Both encoders'
//! tensors map through a table of 128 blocks, as for every class with two encoders.
//!
//! Gemma 4 Unified has no transformer blocks: its vision embedder's dense patch projection
//! and first norm are reordered from the pixels' HWC order to the CHW order the runtime's
//! im2col produces, its position table has its first two axes swapped, and its position norm
//! is written as the fourth patch norm. Its config's sizes are the embedders' widths, the
//! block, FFN and head counts zero.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::{Map, Value as Json};

use super::{json_u64, Clip, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Gemma4ForConditionalGeneration`.
pub const GEMMA4: Projector = Projector {
    hf_names: &["Gemma4ForConditionalGeneration"],
    projector_type: "gemma4v",
    vision: true,
    audio: true,
    default_configs: false,
    filter: |n| Some(n.to_string()),
    force: &[
        (On::HfWhere(audio_conv), Force::Type(GgmlType::F32)),
        (
            On::Hf("position_embedding_table"),
            Force::Type(GgmlType::F32),
        ),
    ],
    prepare,
    hook: Some(hook),
    params,
};

/// `Gemma4UnifiedForConditionalGeneration`: Gemma 4's class with the embedders' renames and
/// reorderings, its own config defaults and projector types.
pub const GEMMA4_UNIFIED: Projector = Projector {
    hf_names: &["Gemma4UnifiedForConditionalGeneration"],
    projector_type: "gemma4uv",
    prepare: prepare_unified,
    hook: Some(hook_unified),
    params: params_unified,
    ..GEMMA4
};

/// The suffixes a Gemma 4 tensor name may carry past its table spelling.
const SUFFIXES: &[&str] = &[
    ".weight",
    ".bias",
    ".input_max",
    ".input_min",
    ".output_max",
    ".output_min",
];

/// The config defaults transformers fills into `Gemma4VisionConfig` for the keys the
/// converter reads.
const VISION_DEFAULTS: &[(&str, u64)] = &[
    ("hidden_size", 768),
    ("intermediate_size", 3072),
    ("num_hidden_layers", 16),
    ("num_attention_heads", 12),
    ("patch_size", 16),
];

/// The same for `Gemma4AudioConfig`.
const AUDIO_DEFAULTS: &[(&str, u64)] = &[
    ("hidden_size", 1024),
    ("num_hidden_layers", 12),
    ("num_attention_heads", 8),
];

/// The same for `Gemma4UnifiedVisionConfig`.
const UNIFIED_VISION_DEFAULTS: &[(&str, u64)] = &[
    ("patch_size", 16),
    ("pooling_kernel_size", 3),
    ("mm_embed_dim", 3840),
    ("mm_posemb_size", 1120),
    ("output_proj_dims", 3840),
];

/// The same for `Gemma4UnifiedAudioConfig`.
const UNIFIED_AUDIO_DEFAULTS: &[(&str, u64)] = &[("audio_embed_dim", 640)];

/// The mel bins when the audio config names none (`input_feat_size`).
const DEFAULT_MEL_BINS: u64 = 128;

/// The image size written for Gemma 4 (the runtime does not read it).
const IMAGE_SIZE: u64 = 224;

fn fill(m: &mut Map<String, Json>, defaults: &[(&str, u64)]) {
    for (k, v) in defaults {
        m.entry(k.to_string()).or_insert(Json::from(*v));
    }
}

/// An audio tensor's convolution (`".conv" in name or "_conv" in name and ".weight" in
/// name`), kept in F32.
fn audio_conv(name: &str) -> bool {
    is_audio(name)
        && (name.contains(".conv") || (name.contains("_conv") && name.contains(".weight")))
}

/// Whether an HF tensor belongs to the audio tower or its embedder.
fn is_audio(name: &str) -> bool {
    name.contains("audio_tower") || name.contains("embed_audio")
}

/// `Gemma4VisionAudioModel.__init__` after the config defaults: the fixed image size, the
/// audio tower's mel bins and FFN width (four times its width), or no audio encoder when
/// the config has no audio tower.
fn init(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let path = ctx.hp.path.clone();
    let v = ctx.vision.as_mut().expect("checked before prepare");
    v.insert("image_size".into(), Json::from(IMAGE_SIZE));
    let Some(a) = ctx.audio.as_mut().filter(|a| !a.is_empty()) else {
        ctx.has_audio = false;
        return Ok(());
    };
    let mel = a
        .get("input_feat_size")
        .cloned()
        .unwrap_or(Json::from(DEFAULT_MEL_BINS));
    a.insert("feat_in".into(), mel);
    if let Some(h) = a.get("hidden_size") {
        let ff = json_u64(h).and_then(|h| h.checked_mul(4)).ok_or_else(|| {
            ConvertError::wrong_type(&path, "audio_config.hidden_size", "an integer", h)
        })?;
        a.insert("intermediate_size".into(), Json::from(ff));
    }
    Ok(())
}

fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    fill(
        ctx.vision.as_mut().expect("checked before prepare"),
        VISION_DEFAULTS,
    );
    if let Some(a) = ctx.audio.as_mut() {
        fill(a, AUDIO_DEFAULTS);
    }
    init(ctx)
}

/// Gemma 4 Unified's `__init__`: both embedders required; their widths become the encoders'
/// sizes and the block, FFN and head counts are zero.
fn prepare_unified(ctx: &mut Ctx) -> Result<(), ConvertError> {
    fill(
        ctx.vision.as_mut().expect("checked before prepare"),
        UNIFIED_VISION_DEFAULTS,
    );
    match ctx.audio.as_mut() {
        Some(a) => fill(a, UNIFIED_AUDIO_DEFAULTS),
        None => return Err(ctx.unsupported("the config has no audio_config")),
    }
    init(ctx)?;
    for (m, width) in [
        (ctx.vision.as_mut(), "mm_embed_dim"),
        (ctx.audio.as_mut(), "audio_embed_dim"),
    ] {
        let m = m.expect("both configs present");
        let w = m.get(width).cloned().expect("filled by the defaults");
        m.insert("hidden_size".into(), w);
        for k in ["intermediate_size", "num_layers", "num_attention_heads"] {
            m.insert(k.into(), Json::from(0));
        }
    }
    Ok(())
}

/// `modify_tensors`: scalars become one-element tensors; audio names move under
/// `conformer.` with their per-dimension scales through softplus and the depthwise kernel
/// squeezed to 2-D; vision names move under `vision_model.model.`, the patch projection
/// becomes a convolution kernel. An audio tensor in a checkpoint whose config has no audio
/// tower is refused, as the reference refuses it.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if is_audio(&name) && ctx.audio.is_none() {
        return Err(ConvertError::Tensor {
            name,
            problem: format!(
                "an audio tower tensor, but {} has no audio_config",
                ctx.hp.path.display()
            ),
        });
    }
    let expr = if expr.shape().is_empty() {
        expr.reshape(&name, vec![1])?
    } else {
        expr
    };
    let (name, expr) = if is_audio(&name) {
        audio(name, expr)?
    } else {
        vision(name, expr)?
    };
    Ok(vec![Out::MapWith(name, expr, SUFFIXES)])
}

fn audio(name: String, expr: Expr) -> Result<(String, Expr), ConvertError> {
    let mut name = name
        .replace("model.audio_tower.", "conformer.")
        .replace(".linear.", ".");
    let mut expr = expr;
    if name.ends_with("per_dim_key_scale") || name.ends_with("per_dim_scale") {
        name.push_str(".weight");
        expr = expr.softplus();
    }
    if name.contains("lconv1d.depthwise_conv1d") && name.ends_with(".weight") {
        let s = expr.shape().to_vec();
        if s.len() != 3 || s[1] != 1 {
            return Err(ConvertError::Tensor {
                name,
                problem: format!("depthwise kernel of shape {s:?}: expected [n, 1, k]"),
            });
        }
        expr = expr.reshape(&name, vec![s[0], s[2]])?;
    }
    Ok((name, expr))
}

fn vision(name: String, expr: Expr) -> Result<(String, Expr), ConvertError> {
    let mut name = name
        .replace("model.vision_tower.encoder.", "vision_model.model.")
        .replace(".linear.weight", ".weight");
    if name.ends_with("layer_scalar") || name.ends_with("position_embedding_table") {
        name.push_str(".weight");
    }
    let mut expr = expr;
    if name.ends_with("patch_embedder.input_proj.weight") {
        expr = patch_kernel(&name, expr)?;
    }
    Ok((name, expr))
}

/// `[n_embd, p·p·3]` (pixels in HWC order) → `[n_embd, 3, p, p]`, with
/// `p = int(sqrt(columns / 3))`.
fn patch_kernel(name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let s = expr.shape().to_vec();
    if s.len() != 2 {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("patch projection of shape {s:?}: expected 2-D"),
        });
    }
    let p = ((s[1] / 3) as f64).sqrt() as u64;
    expr.reshape(name, vec![s[0], p * p, 3])?
        .transpose_last2(name)?
        .reshape(name, vec![s[0], 3, p, p])
}

/// Gemma 4 Unified's renames and reorderings, then Gemma 4's.
fn hook_unified(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let (name, expr) = if name.ends_with("pos_embedding") {
        let name = format!("{name}.weight");
        let e = swap_first_axes(&name, expr)?;
        (name, e)
    } else if name.contains(".pos_norm.") {
        (name.replace(".pos_norm.", ".patch_ln3."), expr)
    } else if name.contains("patch_dense.weight") {
        let perm = chw_order(ctx, &name, expr.shape().get(1).copied())?;
        let e = expr
            .transpose(&name)?
            .gather_rows(&name, perm)?
            .transpose(&name)?;
        (name, e)
    } else if name.contains("patch_ln1.weight") || name.contains("patch_ln1.bias") {
        let perm = chw_order(ctx, &name, expr.shape().first().copied())?;
        let e = expr.gather_rows(&name, perm)?;
        (name, e)
    } else {
        (name, expr)
    };
    hook(ctx, name, expr)
}

/// `permute(1, 0, 2)` of a 3-D tensor.
fn swap_first_axes(name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let s = expr.shape().to_vec();
    if s.len() != 3 {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("position table of shape {s:?}: expected 3-D"),
        });
    }
    let (a, b, c) = (s[0], s[1], s[2]);
    // Row j·a + i of the output is row i·b + j of the input, rows of c values.
    let map = (0..b)
        .flat_map(|j| (0..a).map(move |i| i * b + j))
        .collect();
    expr.reshape(name, vec![a * b, c])?
        .gather_rows(name, map)?
        .reshape(name, vec![b, a, c])
}

/// The order that puts the `p·p·3` pixel values of a patch from HWC into CHW: position `i`
/// of the result takes HWC index `row·3p + col·3 + ch`, where `i` is (ch, row, col) in CHW.
/// `p` is the config's `model_patch_size`, else `patch_size · pooling_kernel_size`; the
/// tensor must have `p·p·3` values along the axis.
fn chw_order(ctx: &Ctx, name: &str, len: Option<u64>) -> Result<Vec<u64>, ConvertError> {
    let v = ctx.vision.as_ref().expect("a vision projector");
    let get = |k: &str| v.get(k).and_then(json_u64);
    let p = match v.get("model_patch_size") {
        Some(_) => get("model_patch_size"),
        None => get("patch_size")
            .zip(get("pooling_kernel_size"))
            .and_then(|(a, b)| a.checked_mul(b)),
    };
    let n = p.and_then(|p| p.checked_mul(p)?.checked_mul(3));
    let (Some(p), Some(n)) = (p, n) else {
        return Err(ctx.missing(
            "the vision embedder's patch size",
            &["model_patch_size", "patch_size", "pooling_kernel_size"],
        ));
    };
    if len != Some(n) {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "{len:?} pixel values per patch, but a patch of {p}x{p} pixels has {n}"
            ),
        });
    }
    Ok(chw_perm(p))
}

/// For each CHW position `i` of a `p × p × 3` patch, its HWC index.
fn chw_perm(p: u64) -> Vec<u64> {
    (0..p * p * 3)
        .map(|i| {
            let (ch, row, col) = (i / (p * p), (i % (p * p)) / p, i % p);
            row * p * 3 + col * 3 + ch
        })
        .collect()
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::vision::PROJECTOR_TYPE, "gemma4v");
    c.vision_eps(1e-6)?;
    if c.ctx.has_audio {
        c.string(clip::audio::PROJECTOR_TYPE, "gemma4a");
        let mel = c.aparam(&["feat_in"])?.clone();
        c.u32_json(clip::audio::NUM_MEL_BINS, &mel)?;
        let eps = c
            .ctx
            .audio
            .as_ref()
            .and_then(|a| a.get("layer_norm_eps"))
            .cloned()
            .unwrap_or(Json::from(1e-6));
        c.f32_json(clip::audio::LAYERNORM_EPS, &eps)?;
    }
    Ok(())
}

/// Gemma 4's keys, the projector types overwritten in place.
fn params_unified(c: &mut Clip) -> Result<(), ConvertError> {
    params(c)?;
    c.string(clip::vision::PROJECTOR_TYPE, "gemma4uv");
    c.string(clip::audio::PROJECTOR_TYPE, "gemma4ua");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota(shape: Vec<u64>) -> Expr {
        let n = shape.iter().product::<u64>();
        Expr::constant((0..n).map(|x| x as f32).collect(), shape)
    }

    #[test]
    fn patch_projection_becomes_a_chw_kernel() {
        // One output row of a 2 x 2 patch: HWC value (y, x, c) is 6y + 3x + c.
        let k = patch_kernel("w", iota(vec![1, 12])).unwrap();
        assert_eq!(k.shape(), &[1, 3, 2, 2]);
        let v = k.eval_f32().unwrap();
        // CHW order: channel 0 holds (0,0), (0,1), (1,0), (1,1) = 0, 3, 6, 9.
        assert_eq!(v, vec![0., 3., 6., 9., 1., 4., 7., 10., 2., 5., 8., 11.]);
        assert!(patch_kernel("w", iota(vec![1, 2, 6])).is_err());
    }

    #[test]
    fn unified_orders_match_the_kernel() {
        assert_eq!(chw_perm(2), vec![0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]);
        let t = swap_first_axes("p", iota(vec![2, 3, 2])).unwrap();
        assert_eq!(t.shape(), &[3, 2, 2]);
        // out[j][i] = in[i][j]: rows of two values.
        assert_eq!(
            t.eval_f32().unwrap(),
            vec![0., 1., 6., 7., 2., 3., 8., 9., 4., 5., 10., 11.]
        );
        assert!(swap_first_axes("p", iota(vec![4, 2])).is_err());
    }

    #[test]
    fn audio_renames_and_kernels() {
        let (n, e) = audio(
            "model.audio_tower.layers.1.lconv1d.depthwise_conv1d.weight".into(),
            iota(vec![4, 1, 3]),
        )
        .unwrap();
        assert_eq!(n, "conformer.layers.1.lconv1d.depthwise_conv1d.weight");
        assert_eq!(e.shape(), &[4, 3]);
        assert!(audio(
            "model.audio_tower.layers.1.lconv1d.depthwise_conv1d.weight".into(),
            iota(vec![4, 2, 3]),
        )
        .is_err());
        let (n, _) = audio(
            "model.audio_tower.layers.0.self_attn.q_proj.linear.weight".into(),
            iota(vec![2, 2]),
        )
        .unwrap();
        assert_eq!(n, "conformer.layers.0.self_attn.q_proj.weight");
        let (n, e) = audio(
            "model.audio_tower.layers.0.self_attn.per_dim_scale".into(),
            Expr::constant(vec![0.0, 30.0], vec![2]),
        )
        .unwrap();
        assert_eq!(n, "conformer.layers.0.self_attn.per_dim_scale.weight");
        assert_eq!(e.eval_f32().unwrap(), vec![std::f32::consts::LN_2, 30.0]);
    }

    #[test]
    fn audio_convolutions_are_forced_to_f32() {
        assert!(audio_conv(
            "model.audio_tower.subsample_conv_projection.layer0.conv.weight"
        ));
        assert!(audio_conv(
            "model.audio_tower.subsample_conv_projection.input_proj_linear.weight"
        ));
        assert!(audio_conv(
            "model.audio_tower.layers.0.lconv1d.depthwise_conv1d.weight"
        ));
        assert!(!audio_conv(
            "model.audio_tower.layers.0.lconv1d.linear_start.linear.weight"
        ));
        assert!(!audio_conv("model.vision_tower.conv.weight"));
    }
}
