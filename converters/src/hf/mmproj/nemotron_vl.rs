//! Nemotron Nano VL V2's projector (`NemotronH_Nano_VL_V2`, and `RADIOModel` when the vision
//! config names it): projector type `nemotron_v2_vl`. The RADIO v2.5-h tower under
//! `vision_model.radio_model.model.` (a linear patch embedder, a bare position table, class and
//! register tokens, timm blocks with a fused `qkv`), the `mlp1` projector, and, when the
//! config has a `sound_config` (Nemotron-3-Nano-Omni), the Parakeet audio encoder
//! (`sound_encoder.`) and its projector (`sound_projection.`), written with audio projector
//! type `parakeet`.
//!
//! The RADIO config carries no ViT sizes: the class writes ViT-H's (width 1280, FFN 5120,
//! 32 blocks, 16 heads) whatever the checkpoint holds, and the image size of
//! `force_image_size` (512 by default). With those sizes it reshapes the patch embedder to
//! `[1280, 3, p, p]` and, when the position table's side differs from `image_size /
//! patch_size`, resizes it (bilinear, `align_corners=True`, in F32). The Parakeet convolution
//! weights and biases are reshaped for ggml's convolutions, and the audio encoder's biases,
//! norms and convolution weights are kept in F32.

use ggufkit::gguf::keys::{self, clip};
use ggufkit::gguf::Value;
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::{find, Clip, Ctx, Force, On, Out, Projector, BLOCK_KEYS};
use crate::hf::config::{json_u64, MAX_BLOCK_COUNT};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `NemotronH_Nano_VL_V2` / `RADIOModel` (the reference's `NemotronNanoV2VLModel`).
pub const NEMOTRON_VL: Projector = Projector {
    hf_names: &["NemotronH_Nano_VL_V2", "RADIOModel"],
    projector_type: "nemotron_v2_vl",
    vision: true,
    audio: true,
    default_configs: false,
    filter,
    force: &[(On::NamesWhere(audio_f32), Force::Type(GgmlType::F32))],
    prepare,
    hook: Some(hook),
    params,
};

/// The projector type the file gets for its vision encoder.
const PROJECTOR: &str = "nemotron_v2_vl";
/// The projector type of its audio encoder.
const AUDIO_PROJECTOR: &str = "parakeet";

/// The RADIO v2.5-h sizes the class writes into the vision config (`get_vision_config`).
const VIT_H: &[(&str, u64)] = &[
    ("hidden_size", 1280),
    ("intermediate_size", 5120),
    ("num_hidden_layers", 32),
    ("num_attention_heads", 16),
];

/// The image size without `force_image_size`.
const DEFAULT_IMAGE_SIZE: u64 = 512;

/// The image mean and std without a processor config that gives them (ImageNet's).
const DEFAULT_NORM: &[(&str, [f64; 3])] = &[
    ("image_mean", [0.485, 0.456, 0.406]),
    ("image_std", [0.229, 0.224, 0.225]),
];

/// The prefixes `filter_tensors` keeps.
const PREFIXES: &[&str] = &[
    "vision_model.radio_model.model.",
    "mlp1.",
    "sound_encoder.",
    "sound_projection.",
];

/// `filter_tensors`: the tower, the projectors and the audio encoder, without the input
/// conditioner, the video embedder or the batch norms' `num_batches_tracked`; the bare
/// position table gains `.weight`.
fn filter(name: &str) -> Option<String> {
    if name.contains("input_conditioner")
        || name.contains("radio_model.model.patch_generator.video_embedder")
        || !PREFIXES.iter().any(|p| name.starts_with(p))
    {
        return None;
    }
    if name.contains("conv.norm") && name.contains("num_batches") {
        return None;
    }
    let mut name = name.to_string();
    if name.contains("patch_generator.pos_embed") && !name.ends_with(".weight") {
        name.push_str(".weight");
    }
    Some(name)
}

/// `tensor_force_quant`: the audio encoder's and audio projector's biases, norms and
/// convolution weights are F32.
fn audio_f32(hf: &str, gguf: &str) -> bool {
    (hf.contains("sound_encoder") || gguf.starts_with("mm.a."))
        && (gguf.contains("bias")
            || gguf.contains("norm")
            || (gguf.contains("conv") && gguf.contains("weight")))
}

/// `get_vision_config` and `get_audio_config`: ViT-H's sizes and the forced image size in
/// the vision config, ImageNet's mean and std where the processor config has none, the audio encoder's config from `sound_config`, and the name table
/// built for the vision config's block count (the class counts one tower's blocks).
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let image_size = match ctx.hp.raw.get("force_image_size") {
        None => Json::from(DEFAULT_IMAGE_SIZE),
        Some(v) if v.is_u64() => v.clone(),
        Some(v) => {
            return Err(ctx.unsupported(format!(
                "force_image_size {v}: expected a non-negative integer (the image size)"
            )))
        }
    };
    let v = ctx.vision.as_mut().expect("a vision projector");
    for (key, n) in VIT_H {
        v.insert(key.to_string(), Json::from(*n));
    }
    v.insert("image_size".into(), image_size);
    for (key, values) in DEFAULT_NORM {
        ctx.pre
            .entry(key.to_string())
            .or_insert_with(|| Json::from(values.to_vec()));
    }
    let blocks = find(v, BLOCK_KEYS)
        .and_then(json_u64)
        .filter(|n| *n <= MAX_BLOCK_COUNT)
        .ok_or_else(|| ctx.missing("vision_config", BLOCK_KEYS))?;
    ctx.map_blocks = Some(blocks);
    match ctx.hp.raw.get("sound_config") {
        None | Some(Json::Null) => {
            ctx.audio = None;
            ctx.has_audio = false;
        }
        Some(Json::Object(m)) => {
            ctx.audio = Some(m.clone());
            ctx.has_audio = true;
        }
        Some(other) => {
            return Err(ctx.unsupported(format!(
                "sound_config {other}: expected an object (the audio encoder's config)"
            )))
        }
    }
    Ok(())
}

/// A positive integer of the vision config.
fn vision_size(ctx: &Ctx, key: &str) -> Result<u64, ConvertError> {
    let v = ctx
        .tower()
        .get(key)
        .ok_or_else(|| ctx.missing("vision_config", &[key]))?;
    v.as_u64().filter(|n| *n > 0).ok_or_else(|| {
        ctx.unsupported(format!(
            "vision_config.{key} {v}: expected a positive integer"
        ))
    })
}

/// `modify_tensors`: the position table resized to the image's patch grid, the patch
/// embedder as a convolution, the Parakeet convolutions reshaped for ggml.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let mut expr = expr;
    if name.contains("patch_generator.pos_embed") {
        expr = position_table(ctx, &name, expr)?;
    }
    if name.contains("patch_generator.embedder") {
        let p = vision_size(ctx, "patch_size")?;
        let n_embd = vision_size(ctx, "hidden_size")?;
        expr = expr.reshape(&name, vec![n_embd, 3, p, p])?;
    }
    if name.contains("depthwise_conv.weight") {
        expr = depthwise(&name, expr)?;
    }
    let shape = expr.shape().to_vec();
    if name.contains("pointwise_conv")
        && name.ends_with(".weight")
        && shape.len() == 3
        && shape[2] == 1
    {
        expr = expr.reshape(&name, vec![shape[0], shape[1]])?;
    }
    let conv_bias = name.ends_with(".bias")
        && (name.contains("subsampling.layers") || name.contains("pointwise_conv"));
    if conv_bias && shape.len() == 1 {
        expr = expr.reshape(&name, vec![1, shape[0], 1, 1])?;
    }
    // The reference renames a `sound_projection.` tensor that maps to `mm.model.mlp.` to
    // `mm.a.mlp.`; no spelling of the table maps one there.
    Ok(vec![Out::Map(name, expr)])
}

/// The position table (`[1, n·n, C]`) resized to `image_size // patch_size` per side when
/// its side `n = int(sqrt(shape[1]))` differs, as a `[1, n, n, 1280]` grid.
fn position_table(ctx: &Ctx, name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let n_embd = vision_size(ctx, "hidden_size")?;
    let patch = vision_size(ctx, "patch_size")?;
    let image = ctx
        .tower()
        .get("image_size")
        .and_then(Json::as_u64)
        .unwrap_or(DEFAULT_IMAGE_SIZE);
    let target = image / patch;
    let Some(&rows) = expr.shape().get(1) else {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "position table of shape {:?}: expected [1, patches, width]",
                expr.shape()
            ),
        });
    };
    // int(rows ** 0.5): the float square root, truncated.
    let side = (rows as f64).sqrt() as u64;
    if target == side {
        return Ok(expr);
    }
    if target == 0 {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "image size {image} over patch size {patch} is no patch grid to resize the \
                 position table to"
            ),
        });
    }
    let count: u64 = expr.shape().iter().product();
    let grid = side
        .checked_mul(side)
        .and_then(|g| g.checked_mul(n_embd))
        .filter(|g| *g == count);
    if grid.is_none() {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "cannot reshape {:?} to [1, {side}, {side}, {n_embd}] (the {side}x{side} \
                 position grid at the tower's width)",
                expr.shape()
            ),
        });
    }
    expr.reshape(name, vec![1, side * side, n_embd])?
        .bilinear_square(name, side, target)
}

/// `unsqueeze(-1).permute(3, 1, 0, 2)` of a 3-D `[a, b, c]` weight: `[1, b, a, c]`.
fn depthwise(name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let &[a, b, c] = expr.shape() else {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "depthwise convolution weight of shape {:?}: expected 3 dimensions",
                expr.shape()
            ),
        });
    };
    if b == 1 {
        return expr.reshape(name, vec![1, 1, a, c]);
    }
    // Rows of `c` values: output row `j·a + i` is input row `i·b + j`.
    let rows = expr.reshape(name, vec![a * b, c])?;
    let map = (0..b)
        .flat_map(|j| (0..a).map(move |i| i * b + j))
        .collect();
    rows.gather_rows(name, map)?.reshape(name, vec![1, b, a, c])
}

/// `set_gguf_parameters`: the projector types (and the audio encoder's keys) before the base
/// keys, then the vision encoder's epsilon, GELU and the pixel-shuffle scale factor.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    // The base keys (from general.file_type on) go after the class's first keys.
    let start =
        c.md.iter()
            .position(|(k, _)| k == keys::general::FILE_TYPE)
            .unwrap_or(0);
    let base: Vec<(String, Value)> =
        c.md.iter()
            .skip(start)
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
    for (k, _) in &base {
        c.md.remove(k);
    }
    if c.ctx.has_audio {
        let mel = c.aparam(&["num_mel_bins"])?.clone();
        c.u32_json(clip::audio::NUM_MEL_BINS, &mel)?;
        c.md.set(clip::audio::LAYERNORM_EPS, Value::F32(1e-5));
        let factor = c.aparam(&["subsampling_factor"])?.clone();
        c.u32_json(clip::audio::SUBSAMPLING_FACTOR, &factor)?;
        let kernel = c.aparam(&["conv_kernel_size"])?.clone();
        c.u32_json(clip::audio::CONV_KERNEL_SIZE, &kernel)?;
        c.string(clip::audio::PROJECTOR_TYPE, AUDIO_PROJECTOR);
        c.string(clip::vision::PROJECTOR_TYPE, PROJECTOR);
    } else {
        c.string(clip::PROJECTOR_TYPE, PROJECTOR);
    }
    for (k, v) in base {
        c.md.set(k, v);
    }
    c.md.set(clip::vision::LAYERNORM_EPS, Value::F32(1e-6));
    c.bool(clip::USE_GELU, true);
    let ratio = match c.ctx.hp.raw.get("downsample_ratio") {
        None => 0.5,
        Some(v) => v.as_f64().ok_or_else(|| {
            c.ctx
                .unsupported(format!("downsample_ratio {v}: expected a number"))
        })?,
    };
    // int(1.0 / downsample_ratio): truncation toward zero.
    let factor = 1.0 / ratio;
    if !(0.0..4_294_967_296.0).contains(&factor) {
        return Err(c.ctx.unsupported(format!(
            "downsample_ratio {ratio}: 1 / ratio is not a UINT32 scale factor"
        )));
    }
    c.u32(clip::vision::PROJECTOR_SCALE_FACTOR, factor.trunc() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_names() {
        assert_eq!(
            filter("vision_model.radio_model.model.patch_generator.pos_embed").unwrap(),
            "vision_model.radio_model.model.patch_generator.pos_embed.weight"
        );
        for dropped in [
            "vision_model.radio_model.input_conditioner.norm_mean",
            "vision_model.radio_model.model.patch_generator.video_embedder.weight",
            "vision_model.radio_model.summary_idxs",
            "language_model.backbone.norm_f.weight",
            "sound_encoder.encoder.layers.0.conv.norm.num_batches_tracked",
        ] {
            assert!(filter(dropped).is_none(), "{dropped}");
        }
        assert!(filter("mlp1.3.weight").is_some());
        assert!(audio_f32(
            "sound_encoder.encoder.layers.0.conv.depthwise_conv.weight",
            "a.blk.0.conv_dw.weight"
        ));
        assert!(audio_f32(
            "sound_projection.norm.weight",
            "mm.a.norm_pre.weight"
        ));
        assert!(!audio_f32(
            "sound_encoder.encoder.layers.0.feed_forward1.linear1.weight",
            "a.blk.0.ffn_up.weight"
        ));
        assert!(!audio_f32("mlp1.1.weight", "mm.model.mlp.1.weight"));
    }

    #[test]
    fn depthwise_moves_the_middle_axis_first() {
        let x = Expr::constant((0..12).map(|i| i as f32).collect(), vec![2, 3, 2]);
        let y = depthwise("w", x).unwrap();
        assert_eq!(y.shape(), &[1, 3, 2, 2]);
        // out[0, j, i, k] = in[i, j, k]
        assert_eq!(
            y.eval_f32().unwrap(),
            vec![0., 1., 6., 7., 2., 3., 8., 9., 4., 5., 10., 11.]
        );
        let z = depthwise("w", Expr::constant(vec![0.; 6], vec![3, 1, 2])).unwrap();
        assert_eq!(z.shape(), &[1, 1, 3, 2]);
        assert!(depthwise("w", Expr::constant(vec![0.; 6], vec![3, 2])).is_err());
    }
}
