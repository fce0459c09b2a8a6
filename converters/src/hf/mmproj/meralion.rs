//! MERaLiON-2's audio encoder (`MERaLiON2ForConditionalGeneration`, a remote-code class read
//! from config.json; projector type `meralion`): a Whisper encoder under `speech_encoder.`
//! whose config is `speech_config`, read as Qwen2-Audio's (convolution weights F16, their
//! biases `[n, 1]`), then the norm `ln_speech` (`mm.a.norm_pre`) and the gated adapter
//! `speech_audio_adapter.*`: `mlp_adapter.0`, `gate_proj`, `pool_proj` and `out_proj` are
//! `mm.a.mlp.{0,1,2,3}`, any other adapter tensor is dropped. The text decoder
//! (`text_decoder.*`) is not part of the file; the frames the adapter stacks are
//! `speech_mlp_scale_factor` (15 when absent).

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{whisper, Clip, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// The adapter's stack factor when config.json does not give one.
const DEFAULT_SCALE_FACTOR: u64 = 15;

/// The adapter's layers, in `mm.a.mlp.{i}` order.
const ADAPTER_LAYERS: &[&str] = &[
    ".mlp_adapter.0.",
    ".gate_proj.",
    ".pool_proj.",
    ".out_proj.",
];

/// `MERaLiON2ForConditionalGeneration`.
pub const MERALION: Projector = Projector {
    hf_names: &["MERaLiON2ForConditionalGeneration"],
    projector_type: "meralion",
    filter,
    prepare,
    hook: Some(hook),
    params,
    ..whisper::QWEN2AUDIO
};

/// The text decoder dropped, the encoder read as `audio_tower.`, then Qwen2-Audio's rule.
fn filter(name: &str) -> Option<String> {
    if name.starts_with("text_decoder.") {
        return None;
    }
    // Every occurrence replaced, as `str.replace` does.
    let name = if name.starts_with("speech_encoder.") {
        name.replace("speech_encoder.", "audio_tower.")
    } else {
        name.to_string()
    };
    (whisper::QWEN2AUDIO.filter)(&name)
}

/// The tower's config is `speech_config` (whatever `audio_config` says), with Whisper's
/// names for the sizes.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    ctx.audio = ctx
        .hp
        .raw
        .get("speech_config")
        .and_then(Json::as_object)
        .cloned();
    if ctx.audio.is_none() {
        return Err(ctx.unsupported("the config has no speech_config"));
    }
    whisper::prepare(ctx)
}

/// `ln_speech.*` and the adapter's layers named directly; the rest as Qwen2-Audio's.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let suffix = match name.rfind('.') {
        Some(i) => name[i..].to_string(),
        None => format!(".{name}"),
    };
    if name.starts_with("ln_speech.") {
        return Ok(vec![Out::Named(format!("mm.a.norm_pre{suffix}"), expr)]);
    }
    if name.starts_with("speech_audio_adapter.") {
        let layer = ADAPTER_LAYERS.iter().position(|l| name.contains(l));
        return Ok(layer
            .map(|i| vec![Out::Named(format!("mm.a.mlp.{i}{suffix}"), expr)])
            .unwrap_or_default());
    }
    whisper::hook(ctx, name, expr)
}

/// Qwen2-Audio's keys, the projector type overwritten in place, and the stack factor.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    whisper::params(c)?;
    c.string(clip::PROJECTOR_TYPE, "meralion");
    match c.ctx.hp.raw.get("speech_mlp_scale_factor").cloned() {
        Some(v) => c.u32_json(clip::audio::PROJECTOR_STACK_FACTOR, &v),
        None => c.u32(clip::audio::PROJECTOR_STACK_FACTOR, DEFAULT_SCALE_FACTOR),
    }
}
