//! Audio Flamingo 3's audio encoder (`AudioFlamingo3ForConditionalGeneration`, projector
//! type `musicflamingo`): a Whisper encoder read as Qwen2-Audio's, except that the
//! convolutions' weights stay F32 at every outtype (the class keeps them out of F16), and a
//! two-layer projector with biases (`multi_modal_projector.linear_{1,2}` →
//! `mm.a.mlp.{1,2}`).

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;

use super::{whisper, Clip, Force, On, Projector};
use crate::ConvertError;

/// `AudioFlamingo3ForConditionalGeneration`.
pub const AUDIO_FLAMINGO3: Projector = Projector {
    hf_names: &["AudioFlamingo3ForConditionalGeneration"],
    projector_type: "musicflamingo",
    // `".conv" in name and ".weight" in name`, before Qwen2-Audio's F16 rule.
    force: &[(On::HfConvWeight, Force::Type(GgmlType::F32))],
    params,
    ..whisper::QWEN2AUDIO
};

/// Qwen2-Audio's keys with the projector type overwritten in place.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    whisper::params(c)?;
    c.string(clip::PROJECTOR_TYPE, "musicflamingo");
    Ok(())
}
