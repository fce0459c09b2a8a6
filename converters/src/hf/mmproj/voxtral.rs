//! Voxtral's audio encoder (`VoxtralForConditionalGeneration`, projector type `voxtral`): a
//! Whisper encoder read as Qwen2-Audio's (convolution weights F16, their biases `[n, 1]`)
//! whose projector is two linear layers (`multi_modal_projector.linear_{1,2}` →
//! `mm.a.mlp.{1,2}`) over four stacked frames. The stack factor is the class's constant, 4
//! (the released encoder's FFN width over its width), whatever the config says.

use ggufkit::gguf::keys::clip;

use super::{whisper, Clip, Projector};
use crate::ConvertError;

/// The frames the projector stacks, fixed by the class.
const STACK_FACTOR: u64 = 4;

/// `VoxtralForConditionalGeneration`.
pub const VOXTRAL: Projector = Projector {
    hf_names: &["VoxtralForConditionalGeneration"],
    projector_type: "voxtral",
    params,
    ..whisper::QWEN2AUDIO
};

/// Qwen2-Audio's keys, the projector type overwritten in place, and the stack factor.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    whisper::params(c)?;
    c.string(clip::PROJECTOR_TYPE, "voxtral");
    c.u32(clip::audio::PROJECTOR_STACK_FACTOR, STACK_FACTOR)
}
