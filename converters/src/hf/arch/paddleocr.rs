//! `PaddleOCRVLForConditionalGeneration`'s text half (arch `paddleocr`, `PaddleOCRModel` in
//! `conversion/ernie.py`).
//!
//! The ERNIE 4.5 text model under its own GGUF architecture: the same vocabulary, renames,
//! splits and hparams. transformers builds the config as `paddleocr_vl` with a
//! `paddleocr_vl_text` text config (ERNIE 4.5's defaults); the vision tower (`visual.`) and
//! the projector (`mlp_AR.`) are dropped with the other multimodal tensors.

use super::ernie4_5::ERNIE4_5;
use super::{Arch, HeadDim, ModelType, TextType};

/// The PaddleOCR-VL text model.
pub const PADDLEOCR: Arch = Arch {
    hf_names: &["PaddleOCRVLForConditionalGeneration"],
    model_types: &[ModelType {
        name: "paddleocr_vl_text",
        hf_classes: &["PaddleOCRVLForConditionalGeneration"],
        defaults: defaults! {
            "vocab_size" => 103424,
            "hidden_size" => 1024,
            "intermediate_size" => 3072,
            "num_hidden_layers" => 18,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 2,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 500000.0,
            "use_bias" => false,
            "head_dim" => 128,
            "tie_word_embeddings" => true,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[("paddleocr_vl", TextType::Fixed("paddleocr_vl_text"))],
    gguf: "paddleocr",
    ..ERNIE4_5
};
