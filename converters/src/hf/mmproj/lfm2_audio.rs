//! LFM2-Audio's audio encoder (`Lfm2AudioForConditionalGeneration`, a remote-code class
//! read from config.json; projector type `lfm2a`): a FastConformer under `conformer.` whose
//! config is `encoder`, the adapter `audio_adapter.model.*` and the audio-output embedding
//! `audio_embedding.*`. The LFM2 text model (`lfm.*`), the depthformer, its linear and
//! embeddings, the codebook offsets and the training loss weights are not part of the file.
//!
//! The reference's Conformer base class folds each block's batch norm into a scale and a
//! shift once the block has five batch norm tensors (the four it reads and the step
//! counter), gives the subsampling convolutions' biases two trailing axes of one, and drops
//! the size-1 axis of the depthwise and pointwise convolution kernels (refusing a kernel
//! without it). Convolution tensors of the audio parts are F32.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::{fold_block_batch_norm, Clip, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// The batch norms' epsilon the class folds with (PyTorch's default).
const BATCH_NORM_EPS: f32 = 1e-5;

/// The batch norm tensors of a block the class waits for (weight, bias, the two running
/// statistics and the step counter).
const BATCH_NORM_TENSORS: usize = 5;

/// The suffixes the class's name mapping tries.
const SUFFIXES: &[&str] = &[
    ".weight",
    ".bias",
    ".input_max",
    ".input_min",
    ".output_max",
    ".output_min",
];

/// `Lfm2AudioForConditionalGeneration`.
pub const LFM2_AUDIO: Projector = Projector {
    hf_names: &["Lfm2AudioForConditionalGeneration"],
    projector_type: "lfm2a",
    vision: false,
    audio: true,
    default_configs: false,
    filter,
    force: &[(On::HfWhere(audio_conv), Force::Type(GgmlType::F32))],
    prepare,
    hook: Some(hook),
    params,
};

/// `ConformerAudioModel.tensor_force_quant`: an audio tensor with `.conv` in its name, or
/// with `_conv` and `.weight`.
fn audio_conv(name: &str) -> bool {
    let audio = [
        "audio",
        "codebook",
        "conformer",
        "depth_embedding",
        "depthformer",
        "depth_linear",
    ]
    .iter()
    .any(|p| name.contains(p));
    audio && (name.contains(".conv") || (name.contains("_conv") && name.contains(".weight")))
}

/// The text model, the audio-output generator and the loss weights dropped.
fn filter(name: &str) -> Option<String> {
    let dropped = name.starts_with("lfm.")
        || name.contains("audio_loss_weight")
        || [
            "codebook_offsets",
            "depth_embeddings",
            "depth_linear",
            "depthformer",
        ]
        .iter()
        .any(|p| name.contains(p));
    (!dropped).then(|| name.to_string())
}

/// The tower's config is `encoder`, with the base class's names for its sizes (its
/// feed-forward length is the width, as the reference writes it).
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let Some(mut a) = ctx.hp.raw.get("encoder").and_then(Json::as_object).cloned() else {
        return Err(ctx.unsupported("the config has no encoder"));
    };
    let get = |key: &str| {
        a.get(key)
            .cloned()
            .ok_or_else(|| ctx.missing("encoder", &[key]))
    };
    let (width, heads) = (get("d_model")?, get("n_heads")?);
    a.insert("hidden_size".into(), width.clone());
    a.insert("intermediate_size".into(), width);
    a.insert("num_attention_heads".into(), heads);
    ctx.audio = Some(a);
    Ok(())
}

/// The batch norms folded, the convolution tensors reshaped, the rest mapped.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains("batch_norm") {
        return batch_norm(ctx, name, expr);
    }
    let s = expr.shape().to_vec();
    let weight = name.ends_with(".weight");
    let expr = if name.starts_with("conformer.pre_encode.conv.") && name.ends_with(".bias") {
        // `data[:, None, None]`
        let Some((&first, rest)) = s.split_first() else {
            return Err(shape_error(&name, &s, "a tensor of at least one axis"));
        };
        let shape = [&[first, 1, 1][..], rest].concat();
        expr.reshape(&name, shape)?
    } else if name.contains("conv.depthwise_conv") && weight {
        if s.len() != 3 || s[1] != 1 {
            return Err(shape_error(&name, &s, "[channels, 1, kernel]"));
        }
        expr.reshape(&name, vec![s[0], s[2]])?
    } else if name.contains("conv.pointwise_conv") && weight {
        if s.len() != 3 || s[2] != 1 {
            return Err(shape_error(&name, &s, "[out, in, 1]"));
        }
        expr.reshape(&name, vec![s[0], s[1]])?
    } else {
        expr
    };
    Ok(vec![Out::MapWith(name, expr, SUFFIXES)])
}

/// The reference's refusal of a convolution tensor of another shape.
fn shape_error(name: &str, shape: &[u64], want: &str) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem: format!("shape {shape:?}: the LFM2-Audio projector reads {want}"),
    }
}

/// One of a block's batch norm tensors: held until the block has five, then the fold.
fn batch_norm(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let prefix_of = |bid: u64| format!("conformer.layers.{bid}.conv.batch_norm");
    let folded = fold_block_batch_norm(
        ctx,
        name,
        expr,
        prefix_of,
        BATCH_NORM_TENSORS,
        BATCH_NORM_EPS,
    )?;
    Ok(match folded {
        Some((prefix, scale, shift)) => vec![
            Out::MapWith(format!("{prefix}.weight"), scale, SUFFIXES),
            Out::MapWith(format!("{prefix}.bias"), shift, SUFFIXES),
        ],
        None => Vec::new(),
    })
}

/// `LFM2AudioModel.set_gguf_parameters` after the base keys.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    use clip::audio as ca;
    c.string(clip::PROJECTOR_TYPE, "lfm2a");
    let mel = c.aparam(&["feat_in"])?.clone();
    c.u32_json(ca::NUM_MEL_BINS, &mel)?;
    c.f32_json(ca::LAYERNORM_EPS, &Json::from(1e-5))
}
