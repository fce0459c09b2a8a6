//! `InternLM3ForCausalLM` (arch `llama`, `InternLM3Model` in `conversion/internlm.py`;
//! transformers 5 has its config class natively).
//!
//! A Llama layout converted by its own class: Llama's q/k permutation (weights and
//! biases) and hparams (`vocab_size`, rope dimensions), but no Llama-3 `rope_freqs` tensor,
//! vision tensors dropped, and its own SentencePiece vocabulary path.

use super::{llama, no_extra, Arch, HeadDim, Hooks, ModelType, QkPermute, Rules};
use crate::hf::names::DECODER;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The InternLM3 class.
pub const INTERNLM3: Arch = Arch {
    hf_names: &["InternLM3ForCausalLM"],
    model_types: &[ModelType {
        name: "internlm3",
        hf_classes: &["InternLM3ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 128512,
            "hidden_size" => 4096,
            "intermediate_size" => 10240,
            "num_hidden_layers" => 48,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 2,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "head_dim" => 128,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "llama",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params: llama::params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `InternLM3Model.filter_tensors`: no vision tensors.
fn filter(name: &str) -> Option<String> {
    (!name.starts_with("mlp") && !name.starts_with("vision_model")).then(|| name.to_string())
}

/// `InternLM3Model.set_vocab`: SentencePiece (required), `add_space_prefix` from
/// tokenizer_config.json, then its special tokens with `eos` moved to `<|im_end|>`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let path = b.sentencepiece_with_config_specials(
        "InternLM3ForCausalLM needs tokenizer.model",
        "<|im_end|>",
    )?;
    Ok((path, None))
}
