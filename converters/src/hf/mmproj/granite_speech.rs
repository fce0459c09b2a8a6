//! Granite Speech's audio encoder and projector (`GraniteSpeechForConditionalGeneration`,
//! `GraniteSpeechPlusForConditionalGeneration`; projector type `granite_speech`), in the
//! hub layout: a Conformer encoder under `encoder.` (its config `encoder_config`), the
//! window-QFormer projector under `projector.` and the text model under `language_model.`
//! (left out).
//!
//! Each block's batch norm is folded into a scale and a shift once its four tensors have
//! arrived (`weight / sqrt(running_var + 1e-5)`, `bias - running_mean · scale`), written as
//! the norm's weight and bias; the fused `attn.to_kv` is split into equal-or-first-larger
//! key and value halves (`torch.chunk`); the pointwise and depthwise convolution kernels
//! lose their size-1 axis. Convolution weights are F32. The config's encoder sizes are
//! spelled `hidden_dim`, `num_heads`, `num_layers` and `feedforward_mult`; the class writes
//! the block-attention chunk, kernel and relative-position sizes, and the projector's
//! window, downsampling rate and heads from the root config. Granite Speech Plus also
//! writes the encoder layers the projector concatenates (`cat_hidden_layers`) and refuses
//! a projector whose input width is not the encoder's width times their count plus one.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::{Map, Value as Json};

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::{fold_block_batch_norm, Clip, ConfigValue, Ctx, Force, On, Out, Projector};
use crate::hf::config::json_u64;
use crate::hf::expr::Expr;
use crate::ConvertError;

/// The batch norm's epsilon the class folds with (PyTorch's default, whatever the
/// checkpoint's module had).
const BATCH_NORM_EPS: f32 = 1e-5;

/// The batch norm tensors of one block the class waits for.
const BATCH_NORM_PARTS: &[&str] = &["weight", "bias", "running_mean", "running_var"];

/// `GraniteSpeechForConditionalGeneration`.
pub const GRANITE_SPEECH: Projector = Projector {
    hf_names: &["GraniteSpeechForConditionalGeneration"],
    projector_type: "granite_speech",
    vision: false,
    audio: true,
    default_configs: false,
    filter,
    force: &[(On::HfWhere(conv_weight), Force::Type(GgmlType::F32))],
    prepare,
    hook: Some(hook),
    params,
};

/// `GraniteSpeechPlusForConditionalGeneration`: Granite Speech with the encoder layers the
/// projector concatenates.
pub const GRANITE_SPEECH_PLUS: Projector = Projector {
    hf_names: &["GraniteSpeechPlusForConditionalGeneration"],
    params: plus_params,
    ..GRANITE_SPEECH
};

/// What AutoConfig builds for these classes' configs: the encoder and text configs' defaults
/// (transformers 5's `GraniteSpeechEncoderConfig`, `GraniteSpeechPlusEncoderConfig` and the
/// Granite text config's width).
pub(super) const CONFIG_CLASSES: ConfigClasses = {
    use ConfigValue::Int;
    ConfigClasses {
        composites: &[
            CompositeClass {
                model_type: "granite_speech",
                builds: &[
                    ("encoder_config", "granite_speech_encoder"),
                    ("text_config", "granite"),
                ],
            },
            CompositeClass {
                model_type: "granite_speech_plus",
                builds: &[
                    ("encoder_config", "granite_speech_plus_encoder"),
                    ("text_config", "granite"),
                ],
            },
        ],
        sub_configs: &[
            SubConfigClass {
                model_types: &["granite_speech_encoder", "granite_speech_plus_encoder"],
                values: &[
                    ("input_dim", Int(160)),
                    ("num_layers", Int(10)),
                    ("hidden_dim", Int(1024)),
                    ("feedforward_mult", Int(4)),
                    ("num_heads", Int(8)),
                    ("dim_head", Int(128)),
                    ("output_dim", Int(42)),
                    ("context_size", Int(200)),
                    ("max_pos_emb", Int(512)),
                    ("conv_kernel_size", Int(15)),
                    ("conv_expansion_factor", Int(2)),
                ],
            },
            SubConfigClass {
                model_types: &["granite"],
                values: &[("hidden_size", Int(4096))],
            },
        ],
    }
};

/// The root config's defaults (`GraniteSpeechConfig`): the projector's window and rate.
const ROOT_DEFAULTS: &[(&str, u64)] = &[("window_size", 15), ("downsample_rate", 5)];

/// The QFormer config's defaults (`Blip2QFormerConfig`) the class reads.
const QFORMER_DEFAULTS: &[(&str, u64)] =
    &[("num_attention_heads", 12), ("encoder_hidden_size", 1408)];

/// `"encoder" in name or "projector" in name`, with `.conv` and `.weight`: F32.
fn conv_weight(name: &str) -> bool {
    (name.contains("encoder") || name.contains("projector"))
        && name.contains(".conv")
        && name.contains(".weight")
}

/// The attention-distance tables and the batch norms' counters are not written.
fn filter(name: &str) -> Option<String> {
    if name.contains("attention_dists") || name.contains("num_batches_tracked") {
        return None;
    }
    Some(name.to_string())
}

/// The tower's config is `encoder_config` (filled with its class's defaults as AutoConfig
/// builds it), with the base class's names for its sizes.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let raw = ctx.hp.raw.clone();
    let mut a = match raw.get("encoder_config") {
        Some(Json::Object(m)) => m.clone(),
        _ => super::defaults::built(&raw, "encoder_config")
            .ok_or_else(|| ctx.unsupported("the config has no encoder_config"))?,
    };
    super::defaults::fill(&raw, "encoder_config", &mut a);
    let n = |a: &Map<String, Json>, key: &str| {
        a.get(key)
            .cloned()
            .ok_or_else(|| ctx.missing("encoder_config", &[key]))
    };
    let hidden = n(&a, "hidden_dim")?;
    let mult = n(&a, "feedforward_mult")?;
    let ffn = match (json_u64(&hidden), json_u64(&mult)) {
        (Some(h), Some(m)) => h.checked_mul(m).map(Json::from),
        _ => None,
    }
    .ok_or_else(|| {
        ConvertError::wrong_type(
            &ctx.hp.path,
            "encoder_config.hidden_dim * feedforward_mult",
            "integers whose product fits",
            Json::Array(vec![hidden.clone(), mult.clone()]),
        )
    })?;
    let heads = n(&a, "num_heads")?;
    let layers = n(&a, "num_layers")?;
    a.insert("hidden_size".into(), hidden);
    a.insert("intermediate_size".into(), ffn);
    a.insert("num_attention_heads".into(), heads);
    a.insert("num_hidden_layers".into(), layers);
    ctx.audio = Some(a);
    Ok(())
}

/// The batch norms folded, the fused key/value split, the convolution kernels squeezed.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains("batch_norm") && name.contains("encoder.layers.") {
        return batch_norm(ctx, name, expr);
    }
    if name.contains(".attn.to_kv.weight") {
        // `chunk(2, dim=0)`: the first part has the larger half.
        let rows = expr.shape().first().copied().unwrap_or(0);
        let first = rows.div_ceil(2);
        let k = expr.clone().narrow(&name, 0, 0, first)?;
        let v = expr.narrow(&name, 0, first, rows - first)?;
        return Ok(vec![
            Out::Map(name.replace("to_kv", "to_k"), k),
            Out::Map(name.replace("to_kv", "to_v"), v),
        ]);
    }
    let s = expr.shape().to_vec();
    let weight = name.ends_with(".weight");
    let expr = if weight
        && (name.contains("up_conv") || name.contains("down_conv"))
        && s.len() == 3
        && s[2] == 1
    {
        expr.reshape(&name, vec![s[0], s[1]])?
    } else {
        expr
    };
    let s = expr.shape().to_vec();
    let expr = if weight && name.contains("depth_conv") && s.len() == 3 && s[1] == 1 {
        expr.reshape(&name, vec![s[0], s[2]])?
    } else {
        expr
    };
    Ok(vec![Out::Map(name, expr)])
}

/// One of a block's batch norm tensors: held until the block has four, then the fold.
fn batch_norm(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let prefix_of = |bid: u64| format!("encoder.layers.{bid}.conv.batch_norm");
    let folded = fold_block_batch_norm(
        ctx,
        name,
        expr,
        prefix_of,
        BATCH_NORM_PARTS.len(),
        BATCH_NORM_EPS,
    )?;
    Ok(match folded {
        Some((prefix, scale, shift)) => vec![
            Out::Map(format!("{prefix}.weight"), scale),
            Out::Map(format!("{prefix}.bias"), shift),
        ],
        None => Vec::new(),
    })
}

/// A value of the root config, else the class's default.
fn root(c: &Clip, key: &str, default: Option<u64>) -> Result<Json, ConvertError> {
    c.ctx
        .hp
        .raw
        .get(key)
        .cloned()
        .or(default.map(Json::from))
        .ok_or_else(|| c.ctx.missing("config", &[key]))
}

/// A value of `projector_config` (`Blip2QFormerConfig`'s default when absent).
fn qformer(c: &Clip, key: &str) -> Result<Json, ConvertError> {
    let default = QFORMER_DEFAULTS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| Json::from(*v));
    let pc = c.ctx.hp.raw.get("projector_config");
    match pc {
        Some(Json::Object(m)) => m.get(key).cloned().or(default),
        // AutoConfig builds a missing (or null) one from its defaults.
        None | Some(Json::Null) => default,
        Some(_) => None,
    }
    .ok_or_else(|| c.ctx.missing("projector_config", &[key]))
}

/// `GraniteSpeechMmprojModel.set_gguf_parameters` after the base keys.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    use clip::audio as ca;
    c.string(clip::PROJECTOR_TYPE, "granite_speech");
    let mel = c.aparam(&["input_dim"])?.clone();
    c.u32_json(ca::NUM_MEL_BINS, &mel)?;
    c.f32_json(ca::LAYERNORM_EPS, &Json::from(1e-5))?;
    for (key, from) in [
        (ca::CHUNK_SIZE, "context_size"),
        (ca::CONV_KERNEL_SIZE, "conv_kernel_size"),
        (ca::MAX_POS_EMB, "max_pos_emb"),
    ] {
        let v = c.aparam(&[from])?.clone();
        c.u32_json(key, &v)?;
    }
    for (key, from) in [
        (ca::PROJECTOR_WINDOW_SIZE, "window_size"),
        (ca::PROJECTOR_DOWNSAMPLE_RATE, "downsample_rate"),
    ] {
        let default = ROOT_DEFAULTS
            .iter()
            .find(|(k, _)| *k == from)
            .map(|(_, v)| *v);
        let v = root(c, from, default)?;
        c.u32_json(key, &v)?;
    }
    let heads = qformer(c, "num_attention_heads")?;
    c.u32_json(ca::PROJECTOR_HEAD_COUNT, &heads)
}

/// Granite Speech Plus: the base keys, then the concatenated layers when the encoder config
/// names any, checked against the projector's input width.
fn plus_params(c: &mut Clip) -> Result<(), ConvertError> {
    params(c)?;
    let layers = c
        .ctx
        .audio
        .as_ref()
        .and_then(|a| a.get("cat_hidden_layers"))
        .cloned()
        .unwrap_or(Json::Null);
    if !crate::hf::tokenizer::json_truthy(&layers) {
        return Ok(());
    }
    c.numbers(clip::audio::FEATURE_LAYERS, &layers)?;
    let count = layers.as_array().map(Vec::len).unwrap_or(0) as u64;
    let hidden = c.aparam(&["hidden_dim"])?.clone();
    let projector = qformer(c, "encoder_hidden_size")?;
    let expected = json_u64(&hidden).and_then(|h| h.checked_mul(count + 1));
    if expected.is_none() || json_u64(&projector) != expected {
        return Err(c.ctx.unsupported(format!(
            "projector_config.encoder_hidden_size {projector} is not the encoder's \
             hidden_dim ({hidden}) times the {count} concatenated layers plus one"
        )));
    }
    Ok(())
}
