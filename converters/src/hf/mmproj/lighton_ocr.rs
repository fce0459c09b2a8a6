//! LightOnOCR (`LightOnOCRForConditionalGeneration`, projector type `lightonocr`): Pixtral's
//! tower and the Mistral 3 projector under their own prefixes (`model.vision_encoder.`,
//! `model.vision_projection.`), converted as the Pixtral projector is but without the
//! `[IMG_BREAK]` embedding row, and with its own projector type.

use ggufkit::gguf::keys::clip;

use super::pixtral::{self, LLAVA_PIXTRAL};
use super::{Clip, Ctx, Projector};
use crate::ConvertError;

/// `LightOnOCRForConditionalGeneration`.
pub const LIGHTON_OCR: Projector = Projector {
    hf_names: &["LightOnOCRForConditionalGeneration"],
    projector_type: "lightonocr",
    filter,
    prepare,
    params,
    ..LLAVA_PIXTRAL
};

/// The checkpoint's prefixes renamed to the Pixtral projector's.
fn filter(name: &str) -> Option<String> {
    Some(
        name.replace("model.vision_encoder.", "vision_tower.")
            .replace("model.vision_projection.", "multi_modal_projector."),
    )
}

/// The Pixtral tower's checks; no break token is looked up (the embedding row stays out).
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    pixtral::pixtral_tower(ctx)
}

/// Pixtral's keys, then this class's projector type in place of `pixtral`.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    pixtral::params(c)?;
    c.string(clip::PROJECTOR_TYPE, "lightonocr");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_become_pixtral_names() {
        assert_eq!(
            filter("model.vision_encoder.ln_pre.weight").as_deref(),
            Some("vision_tower.ln_pre.weight")
        );
        assert_eq!(
            filter("model.vision_projection.linear_1.weight").as_deref(),
            Some("multi_modal_projector.linear_1.weight")
        );
    }
}
