//! The text models of the Qwen vision-language classes: `Qwen2VLForConditionalGeneration` /
//! `Qwen2_5_VLForConditionalGeneration` (arch `qwen2vl`, `Qwen2VLModel` in
//! `conversion/qwenvl.py`) and `Qwen3VLForConditionalGeneration` (arch `qwen3vl`,
//! `Qwen3VLTextModel` in `conversion/qwen3vl.py`).
//!
//! Qwen2-VL's text model is Qwen2's decoder under another architecture name: the generic
//! hparams (with the M-RoPE `rope.dimension_sections` from `mrope_section`), no pooling KV,
//! Qwen2's vocabulary path. Qwen3-VL's is Qwen3's (q/k norms, the reranker refusal) plus
//! `n_deepstack_layers`, the number of the vision tower's `deepstack_visual_indexes`. Both
//! strip a `thinker.` level from tensor names (Omni checkpoints); the towers' tensors are
//! dropped by the generic multimodal filter.
//!
//! transformers 5 builds Qwen2-VL's and Qwen2.5-VL's `text_config` from the root keys when a
//! (hub) config.json is flat ([`TextType::Flat`]).

use ggufkit::gguf::keys::llm;
use serde_json::Value as Json;

use super::qwen::QWEN3;
use super::{no_extra, Arch, HeadDim, ModelType, Rules, TextType};
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `Qwen2VLTextConfig` / `Qwen2_5_VLTextConfig`'s defaults (transformers 5; the same).
macro_rules! qwen2vl_text {
    ($name:literal) => {
        ModelType {
            name: $name,
            hf_classes: &[
                "Qwen2VLForConditionalGeneration",
                "Qwen2_5_VLForConditionalGeneration",
            ],
            defaults: defaults! {
                "vocab_size" => 152064,
                "hidden_size" => 8192,
                "intermediate_size" => 29568,
                "num_hidden_layers" => 80,
                "num_attention_heads" => 64,
                "num_key_value_heads" => 8,
                "max_position_embeddings" => 32768,
                "rms_norm_eps" => 1e-5,
                "rope_theta" => 1000000.0,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        }
    };
}

/// The text model of Qwen2-VL and Qwen2.5-VL (arch `qwen2vl`).
pub const QWEN2VL: Arch = Arch {
    hf_names: &[
        "Qwen2VLForConditionalGeneration",
        "Qwen2_5_VLForConditionalGeneration",
    ],
    model_types: &[
        qwen2vl_text!("qwen2_vl_text"),
        qwen2vl_text!("qwen2_5_vl_text"),
    ],
    composites: &[
        ("qwen2_vl", TextType::Flat("qwen2_vl_text")),
        ("qwen2_5_vl", TextType::Flat("qwen2_5_vl_text")),
    ],
    gguf: "qwen2vl",
    vocab: VocabKind::Qwen2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: strip_thinker,
    rules: Rules::NONE,
    params: |p| p.generic(),
    extra: no_extra,
};

/// The text model of Qwen3-VL (arch `qwen3vl`).
pub const QWEN3VL: Arch = Arch {
    hf_names: &["Qwen3VLForConditionalGeneration"],
    model_types: &[ModelType {
        name: "qwen3_vl_text",
        hf_classes: &["Qwen3VLForConditionalGeneration"],
        defaults: defaults! {
            "vocab_size" => 151936,
            "hidden_size" => 4096,
            "intermediate_size" => 22016,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 32,
            "head_dim" => 128,
            "max_position_embeddings" => 128000,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 500000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[("qwen3_vl", TextType::Fixed("qwen3_vl_text"))],
    gguf: "qwen3vl",
    vocab: VocabKind::Qwen2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: strip_thinker,
    rules: Rules::NONE,
    params: qwen3vl_params,
    extra: QWEN3.extra,
};

/// Drops the `thinker.` level of Omni checkpoints' names.
fn strip_thinker(name: &str) -> Option<String> {
    Some(name.replace("thinker.", ""))
}

/// Qwen3's hparams, then the number of deepstack layers (the vision config's
/// `deepstack_visual_indexes`; the thinker's vision config in an Omni config).
fn qwen3vl_params(p: &mut Params) -> Result<(), ConvertError> {
    (QWEN3.params)(p)?;
    let vision = match p.hp.get("thinker_config") {
        Some(t) => t.get("vision_config"),
        None => p.hp.get("vision_config"),
    };
    let n = vision
        .and_then(|v| v.get("deepstack_visual_indexes"))
        .map(|v| match v {
            Json::Array(a) => Ok(a.len() as u64),
            other => Err(ConvertError::format(
                &p.hp.path,
                None,
                format!("vision_config.deepstack_visual_indexes is {other}, not a list"),
            )),
        })
        .transpose()?
        .unwrap_or(0);
    p.u32(llm::NUM_DEEPSTACK_LAYERS, n)
}
