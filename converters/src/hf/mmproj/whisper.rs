//! Whisper-style audio encoders (`WhisperEncoderModel`): Qwen2-Audio. Projector type
//! `qwen2a`; the convolutions' weights always F16 and their biases stored as `[n, 1]`; the
//! projector's `multi_modal_projector.linear` becomes `mm.a.fc`.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::{Clip, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Qwen2AudioForConditionalGeneration`.
pub const QWEN2AUDIO: Projector = Projector {
    hf_names: &["Qwen2AudioForConditionalGeneration"],
    projector_type: "qwen2a",
    vision: false,
    audio: true,
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

/// Whisper's names for the sizes.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let a = ctx.audio.as_mut().expect("an audio projector");
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
                    arch: "Qwen2AudioForConditionalGeneration (--mmproj)".into(),
                    feature: format!("audio_config has no {from:?}"),
                })?;
            a.insert(to.into(), v);
        }
    }
    Ok(())
}

fn hook(_: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains("conv1.bias") || name.contains("conv2.bias") {
        let n = expr.shape().to_vec();
        let mut shape = n.clone();
        shape.push(1);
        let e = expr.reshape(&name, shape)?;
        return Ok(vec![Out::Map(name, e)]);
    }
    Ok(vec![Out::Map(name, expr)])
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
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
