//! GLM-ASR's audio encoder (`GlmasrModel`, a remote-code class read from config.json;
//! projector type `glma`): a Whisper encoder under `audio_encoder.whisper.` (config
//! `whisper_config`) read as `audio_tower.` with Qwen2-Audio's rules (convolution weights
//! F16, their biases `[n, 1]`), the adapter `audio_encoder.{layer_norm, adapting.0,
//! adapting.2}` read as `audio.multi_modal_projector.{ln_pre, linear_1, linear_2}`, and the
//! two rows of `audio_encoder.audio_bos_eos_token` written as `v.boi` / `v.eoi`. The text
//! model (`model.*`, `lm_head.*`) is not part of the file; the frames the adapter stacks are
//! config.json's `merge_factor` (required).

use ggufkit::gguf::keys::clip;

use super::{whisper, Clip, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `GlmasrModel`.
pub const GLMASR: Projector = Projector {
    hf_names: &["GlmasrModel"],
    projector_type: "glma",
    filter,
    hook: Some(hook),
    params,
    ..whisper::QWEN2AUDIO
};

/// The text model dropped; the encoder and adapter renamed to the names the table maps.
fn filter(name: &str) -> Option<String> {
    if name.starts_with("model.") || name.starts_with("lm_head.") {
        return None;
    }
    // Each rename replaces every occurrence, as `str.replace` does.
    let mut name = name.to_string();
    if name.starts_with("audio_encoder.whisper.") {
        name = name.replace("audio_encoder.whisper.", "audio_tower.");
    }
    if name.contains("audio_encoder.layer_norm.") || name.contains("audio_encoder.proj.") {
        name = name.replace("audio_encoder.", "audio_encoder.adapting.");
    }
    if name.starts_with("audio_encoder.adapting.") {
        name = name.replace("audio_encoder.adapting.", "audio.multi_modal_projector.");
        for (from, to) in [
            (".layer_norm.", ".ln_pre."),
            (".0.", ".linear_1."),
            (".2.", ".linear_2."),
        ] {
            name = name.replace(from, to);
        }
    }
    Some(name)
}

/// The begin / end rows split off; the convolutions' biases as Qwen2-Audio's.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.starts_with("audio_encoder.audio_bos_eos_token.") {
        return ["model.vision.boi", "model.vision.eoi"]
            .iter()
            .enumerate()
            .map(|(i, to)| {
                let row = expr.clone().narrow(&name, 0, i as u64, 1)?;
                let shape = row.shape()[1..].to_vec();
                Ok(Out::Map(to.to_string(), row.reshape(&name, shape)?))
            })
            .collect();
    }
    whisper::hook(ctx, name, expr)
}

/// Qwen2-Audio's keys with the projector type overwritten in place, and the stack factor.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    whisper::params(c)?;
    c.string(clip::PROJECTOR_TYPE, "glma");
    let merge = c
        .ctx
        .hp
        .raw
        .get("merge_factor")
        .cloned()
        .ok_or_else(|| c.ctx.missing("config", &["merge_factor"]))?;
    c.u32_json(clip::audio::PROJECTOR_STACK_FACTOR, &merge)
}
