//! Whisper-style audio encoders (`WhisperEncoderModel`): Qwen2-Audio and Ultravox. The
//! convolutions' weights always F16 and their biases stored as `[n, 1]`; the projector's
//! `multi_modal_projector.*` is read as `audio.multi_modal_projector.*`. Qwen2-Audio
//! (projector type `qwen2a`) has one linear layer, `mm.a.fc`; Ultravox (`ultravox`, a
//! remote-code class read from config.json) stacks `stack_factor` frames into an RMSNorm,
//! SwiGLU MLP, RMSNorm (`mm.a.norm_pre`, `mm.a.mlp.{1,2}`, `mm.a.norm_mid`).

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::{Clip, ConfigValue, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Qwen2AudioForConditionalGeneration`.
pub const QWEN2AUDIO: Projector = Projector {
    hf_names: &["Qwen2AudioForConditionalGeneration"],
    projector_type: "qwen2a",
    vision: false,
    audio: true,
    default_configs: false,
    filter: |n| {
        Some(if n.starts_with("multi_modal_projector") {
            format!("audio.{n}")
        } else {
            n.to_string()
        })
    },
    // `".conv" in name and ".weight" in name`.
    force: &[(On::HfConvWeight, Force::Type(GgmlType::F16))],
    prepare,
    hook: Some(hook),
    params,
};

/// `UltravoxModel`: Qwen2-Audio's class with its own projector type and stack factor.
pub const ULTRAVOX: Projector = Projector {
    hf_names: &["UltravoxModel"],
    projector_type: "ultravox",
    params: ultravox_params,
    ..QWEN2AUDIO
};

/// Qwen2-Audio's composite class and, for the keys the converter reads, the transformers 5
/// defaults of the audio encoder config it builds when config.json has none.
pub(super) const CONFIG_CLASSES: ConfigClasses = {
    use ConfigValue::{Int, Text};
    ConfigClasses {
        composites: &[CompositeClass {
            model_type: "qwen2_audio",
            builds: &[("audio_config", "qwen2_audio_encoder")],
        }],
        sub_configs: &[SubConfigClass {
            model_types: &["qwen2_audio_encoder"],
            values: &[
                ("activation_function", Text("gelu")),
                ("d_model", Int(1280)),
                ("encoder_attention_heads", Int(20)),
                ("encoder_ffn_dim", Int(5120)),
                ("encoder_layers", Int(32)),
                ("max_source_positions", Int(1500)),
                ("num_mel_bins", Int(128)),
            ],
        }],
    }
};

/// Whisper's names for the sizes, given to the tower the reference reads as its own hparams:
/// the audio config, unless config.json also has a `vision_config` (which the reference then
/// takes instead, leaving the audio config without them).
pub(super) fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let class = ctx.class.clone();
    let vision_first = ctx
        .hp
        .raw
        .get("vision_config")
        .is_some_and(|v| !v.is_null());
    let Some(a) = ctx.audio.as_mut() else {
        return Err(ctx.unsupported("the config has no audio_config"));
    };
    if vision_first {
        return Ok(());
    }
    if !a.contains_key("hidden_size") && !a.contains_key("intermediate_size") {
        for (to, from) in [
            ("hidden_size", "d_model"),
            ("intermediate_size", "encoder_ffn_dim"),
            ("num_attention_heads", "encoder_attention_heads"),
        ] {
            let v = a
                .get(from)
                .cloned()
                .ok_or_else(|| ConvertError::UnsupportedFeature {
                    arch: format!("{class} (--mmproj)"),
                    feature: format!("audio_config has no {from:?}"),
                })?;
            a.insert(to.into(), v);
        }
    }
    Ok(())
}

/// The convolutions' biases stored as `[n, 1]`.
pub(super) fn hook(_: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains("conv1.bias") || name.contains("conv2.bias") {
        let n = expr.shape().to_vec();
        let mut shape = n.clone();
        shape.push(1);
        let e = expr.reshape(&name, shape)?;
        return Ok(vec![Out::Map(name, e)]);
    }
    Ok(vec![Out::Map(name, expr)])
}

/// Qwen2-Audio's keys: its projector type, the mel bins and the layer-norm epsilon.
pub(super) fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "qwen2a");
    let mel = c.aparam(&["num_mel_bins"])?.clone();
    c.u32_json(clip::audio::NUM_MEL_BINS, &mel)?;
    let eps = c
        .ctx
        .tower()
        .get("layer_norm_eps")
        .cloned()
        .unwrap_or(Json::from(1e-5));
    c.f32_json(clip::audio::LAYERNORM_EPS, &eps)
}

/// Qwen2-Audio's keys, the projector type overwritten in place (the reference writes
/// `qwen2a`, then `ultravox` under the same key), and the frames stacked per step.
fn ultravox_params(c: &mut Clip) -> Result<(), ConvertError> {
    params(c)?;
    c.string(clip::PROJECTOR_TYPE, "ultravox");
    let stack = c
        .ctx
        .hp
        .raw
        .get("stack_factor")
        .cloned()
        .ok_or_else(|| c.ctx.missing("config", &["stack_factor"]))?;
    c.u32_json(clip::audio::PROJECTOR_STACK_FACTOR, &stack)
}
