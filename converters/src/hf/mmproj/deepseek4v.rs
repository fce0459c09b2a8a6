//! DeepSeek-V4-Flash-Vision (`DeepseekV4ForCausalLM --mmproj`, projector type `deepseek4v`,
//! `DeepseekV4FlashVisionModel` in `conversion/deepseek.py`).
//!
//! The checkpoint has no `vision_config`: the tower's sizes are `vision_*` keys at the
//! config's root (`vision_n_layers`, `vision_dim`, `vision_n_heads`, `vision_inter_dim`,
//! `vision_patch_size`, `vision_downsample_ratio`, `vision_min_pixels`), from which the
//! class builds its vision hparams; the image size it writes is `patch × downsample × 16`.
//! A config without vision layers (the text-only release) is refused, as are the two
//! runtime constants the reference asserts (`vision_max_n_token` 384, `vision_max_wh_ratio`
//! 8), which the runtime hard-codes. No preprocessor config is shipped: the normalisation is
//! mean and std 0.5 unless one says otherwise.
//!
//! Tensors: only `vision.`, `aligner.` and `image_*` are kept. The patch embedding is a
//! linear layer over flattened `3 × p × p` patches, written as the equivalent convolution
//! `[out, 3, p, p]`; each block's fused SwiGLU `mlp.w1` is split by rows into its gate (the
//! first half) and up (the second) projections. The aligner's `w1` / `w2` are the projector's
//! `mm.1` / `mm.2`, and the four sentinel embeddings (`image_newline`, `image_start`,
//! `image_end`, `image_pad`) the token rows the runtime inserts around an image.

use ggufkit::gguf::keys::clip;
use serde_json::{Map, Value as Json};

use super::{Clip, Ctx, Out, Projector};
use crate::hf::config::json_u64;
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `DeepseekV4ForCausalLM`'s vision tower and aligner.
pub const DEEPSEEK4V: Projector = Projector {
    hf_names: &["DeepseekV4ForCausalLM"],
    projector_type: "deepseek4v",
    vision: true,
    audio: false,
    // The tower's config is built from root keys: `prepare` fills the empty one.
    default_configs: true,
    filter,
    force: &[],
    prepare,
    hook: Some(hook),
    params,
};

/// The vision RMS norms' eps (torch's default, not the text model's).
const VISION_EPS: f64 = 1e-6;

/// The runtime's fixed limits the class checks the config against: (key, value).
const FIXED: &[(&str, u64)] = &[("vision_max_n_token", 384), ("vision_max_wh_ratio", 8)];

/// The image processor's mean and std when no preprocessor config gives them.
const NORMALISATION: [f64; 3] = [0.5, 0.5, 0.5];

/// Keeps the tower, the aligner and the sentinel embeddings.
fn filter(name: &str) -> Option<String> {
    ["vision.", "aligner.", "image_"]
        .iter()
        .any(|p| name.starts_with(p))
        .then(|| name.to_string())
}

/// `get_vision_config` and `__init__`: the vision hparams from the root keys, the
/// normalisation defaults, the fixed limits checked.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let vision = vision_config(ctx)?;
    for (key, want) in FIXED {
        let v = root(ctx, key)?;
        if v.as_f64() != Some(*want as f64) {
            return Err(ConvertError::out_of_range(
                &ctx.hp.path,
                *key,
                v,
                format!("{want}, the value llama.cpp's runtime is built for"),
            ));
        }
    }
    ctx.vision = Some(vision);
    for k in ["image_mean", "image_std"] {
        ctx.pre
            .entry(k.to_string())
            .or_insert_with(|| Json::from(NORMALISATION.to_vec()));
    }
    Ok(())
}

/// A required root key.
fn root<'a>(ctx: &'a Ctx, key: &str) -> Result<&'a Json, ConvertError> {
    ctx.hp.get(key).ok_or_else(|| ctx.hp.missing(&[key]))
}

/// A required root key as a non-negative integer.
fn root_u64(ctx: &Ctx, key: &str) -> Result<u64, ConvertError> {
    let v = root(ctx, key)?;
    json_u64(v)
        .ok_or_else(|| ConvertError::wrong_type(&ctx.hp.path, key, "a non-negative integer", v))
}

/// The vision hparams the class builds from the root keys.
fn vision_config(ctx: &Ctx) -> Result<Map<String, Json>, ConvertError> {
    let layers = ctx
        .hp
        .get("vision_n_layers")
        .cloned()
        .unwrap_or(Json::from(0));
    if layers.as_f64() == Some(0.0) {
        return Err(
            ctx.unsupported("vision_n_layers is absent or 0: this checkpoint has no vision tower")
        );
    }
    let patch = root_u64(ctx, "vision_patch_size")?;
    let ratio = root_u64(ctx, "vision_downsample_ratio")?;
    let image_size = patch
        .checked_mul(ratio)
        .and_then(|x| x.checked_mul(16))
        .ok_or_else(|| {
            ConvertError::out_of_range(
                &ctx.hp.path,
                "vision_patch_size * vision_downsample_ratio * 16",
                format!("{patch} * {ratio} * 16"),
                "a product that fits 64 bits",
            )
        })?;
    let mut v = Map::new();
    for (to, from) in [
        ("hidden_size", "vision_dim"),
        ("num_attention_heads", "vision_n_heads"),
        ("intermediate_size", "vision_inter_dim"),
        ("min_pixels", "vision_min_pixels"),
    ] {
        v.insert(to.into(), root(ctx, from)?.clone());
    }
    v.insert("num_hidden_layers".into(), layers);
    v.insert("patch_size".into(), Json::from(patch));
    v.insert("image_size".into(), Json::from(image_size));
    v.insert("downsample_ratio".into(), Json::from(ratio));
    let theta = ctx.hp.get("vision_rope_theta").cloned();
    v.insert("rope_theta".into(), theta.unwrap_or(Json::from(10000.0)));
    Ok(v)
}

/// `modify_tensors`: the patch embedding as a convolution, the fused SwiGLU split.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let expr = if name == "vision.patch_embed.proj.weight" {
        patch_as_conv(ctx, &name, expr)?
    } else {
        expr
    };
    if !name.contains(".mlp.w1.") {
        return Ok(vec![Out::Map(name, expr)]);
    }
    let (gate, up) = chunk_rows(&name, expr)?;
    Ok(vec![
        Out::Map(name.replace("w1", "w1_gate"), gate),
        Out::Map(name.replace("w1", "w1_up"), up),
    ])
}

/// `[out, 3 * p * p]` as `[out, 3, p, p]`.
fn patch_as_conv(ctx: &Ctx, name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let p = ctx
        .tower()
        .get("patch_size")
        .and_then(json_u64)
        .expect("set by prepare");
    let out = expr.shape().first().copied().unwrap_or(0);
    expr.reshape(name, vec![out, 3, p, p])
}

/// `torch.chunk(x, 2, dim=0)`: the first `ceil(rows / 2)` rows, then the rest; a tensor of
/// fewer than two rows has no second chunk.
fn chunk_rows(name: &str, expr: Expr) -> Result<(Expr, Expr), ConvertError> {
    let rows = expr.shape().first().copied().unwrap_or(0);
    if rows < 2 {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("a fused gate and up projection of {rows} rows"),
        });
    }
    let first = rows.div_ceil(2);
    let gate = expr.clone().narrow(name, 0, 0, first)?;
    let up = expr.narrow(name, 0, first, rows - first)?;
    Ok((gate, up))
}

/// `set_gguf_parameters` after the base keys.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    use clip::vision as cv;
    c.string(clip::PROJECTOR_TYPE, "deepseek4v");
    c.f32_json(cv::LAYERNORM_EPS, &Json::from(VISION_EPS))?;
    c.bool(clip::USE_SILU, true);
    let ratio = c.vparam(&["downsample_ratio"])?.clone();
    c.u32_json(cv::PROJECTOR_SCALE_FACTOR, &ratio)?;
    let min_pixels = c.vparam(&["min_pixels"])?.clone();
    c.u32_json(cv::IMAGE_MIN_PIXELS, &min_pixels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tower_aligner_and_sentinels_are_kept() {
        assert!(filter("vision.blocks.0.attn.wqkv.weight").is_some());
        assert!(filter("aligner.w1.weight").is_some());
        assert!(filter("image_newline").is_some());
        assert!(filter("model.layers.0.attn.wq_a.weight").is_none());
        assert!(filter("embed.weight").is_none());
    }

    #[test]
    fn the_fused_swiglu_splits_like_torch_chunk() {
        let x = Expr::constant((0..10).map(|i| i as f32).collect(), vec![5, 2]);
        let (g, u) = chunk_rows("w1", x).unwrap();
        assert_eq!(g.shape(), [3, 2]);
        assert_eq!(u.eval_f32().unwrap(), [6., 7., 8., 9.]);
        let one = Expr::constant(vec![0.; 2], vec![1, 2]);
        assert!(matches!(
            chunk_rows("w1", one),
            Err(ConvertError::Tensor { .. })
        ));
    }
}
