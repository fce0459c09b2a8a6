//! CogVLM's vision tower (`CogVLMForCausalLM`, projector type `cogvlm`, a remote-code class
//! read from config.json): the EVA2-CLIP encoder and the GLU projector, all under
//! `model.vision.`. The encoder has a convolutional patch embedding, a bare class-embedding
//! parameter, a position table and blocks with a fused qkv; the projector is one linear
//! (`linear_proj.linear_proj`), a layer norm, a gated MLP (`gate_proj`, `dense_h_to_4h`,
//! `dense_4h_to_h`), and the `boi` / `eoi` rows placed around an image. Every tensor outside
//! `model.vision.` (the text model and its visual experts) is dropped.

use ggufkit::gguf::keys::clip;

use super::{Clip, Ctx, Projector};
use crate::ConvertError;

/// `CogVLMForCausalLM`.
pub const COGVLM: Projector = Projector {
    hf_names: &["CogVLMForCausalLM"],
    projector_type: "cogvlm",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[],
    prepare,
    hook: None,
    params,
};

/// The tower and projector: the names under `model.vision.`.
fn filter(name: &str) -> Option<String> {
    name.starts_with("model.vision.").then(|| name.to_string())
}

/// The class reads the tower's config as written.
fn prepare(_ctx: &mut Ctx) -> Result<(), ConvertError> {
    Ok(())
}

/// The tower's layer-norm epsilon (default 1e-6), then the projector type.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.vision_eps(1e-6)?;
    c.string(clip::PROJECTOR_TYPE, "cogvlm");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_keeps_only_the_vision_prefix() {
        assert_eq!(
            filter("model.vision.boi").as_deref(),
            Some("model.vision.boi")
        );
        assert_eq!(
            filter("model.layers.0.self_attn.vision_expert_dense.weight"),
            None
        );
        assert_eq!(filter("model.embed_tokens.weight"), None);
        assert_eq!(filter("vision.linear_proj.gate_proj.weight"), None);
    }
}
