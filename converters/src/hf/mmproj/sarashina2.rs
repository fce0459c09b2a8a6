//! Sarashina2-Vision's vision tower (`Sarashina2VisionForCausalLM`, a remote-code class read
//! from config.json): Qwen2-VL's tower under `visual.`, converted as Qwen2-VL's whatever the
//! config's own `model_type` says (projector type `qwen2vl_merger`); every tensor outside
//! `visual.` (the Llama text model `llm.*`, `norm.*`) is dropped.

use serde_json::Value as Json;

use super::{qwenvl, Ctx, Projector};
use crate::ConvertError;

/// `Sarashina2VisionForCausalLM`.
pub const SARASHINA2: Projector = Projector {
    hf_names: &["Sarashina2VisionForCausalLM"],
    prepare,
    ..qwenvl::QWEN2VL
};

/// The config read as a Qwen2-VL one (`model_type` `qwen2_vl`), then Qwen2-VL's renames.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    if let Some(config) = ctx.hp.raw.as_object_mut() {
        config.insert("model_type".into(), Json::from("qwen2_vl"));
    }
    (qwenvl::QWEN2VL.prepare)(ctx)
}
