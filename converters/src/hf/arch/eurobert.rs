//! `EuroBertModel` and `JinaEmbeddingsV5Model` (arch `eurobert`, `EuroBertModel(TextModel)`
//! in `conversion/bert.py`).
//!
//! A bidirectional Llama-shaped encoder: separate q/k/v (no rotary permutation), a SwiGLU
//! FFN, RMS norms. The tensors lose a `model.` prefix; the hparams are the generic block,
//! `causal = false`, rope scaling `none` and the sentence-transformers pooling type. The
//! vocabulary is GPT-2 BPE with `add_bos` false set first.

use ggufkit::gguf::keys::{attention, tokenizer as tok};

use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The EuroBERT classes (jina-embeddings-v5 registers its own name for the same class).
pub const EUROBERT: Arch = Arch {
    hf_names: &["EuroBertModel", "JinaEmbeddingsV5Model"],
    model_types: &[ModelType {
        name: "eurobert",
        hf_classes: &["EuroBertModel"],
        defaults: defaults! {
            "vocab_size" => 128256,
            "hidden_size" => 768,
            "intermediate_size" => 3072,
            "num_hidden_layers" => 12,
            "num_attention_heads" => 12,
            "num_key_value_heads" => 12,
            "hidden_act" => "silu",
            "max_position_embeddings" => 8192,
            "rms_norm_eps" => 1e-5,
            "pad_token_id" => 128001,
            "bos_token_id" => 128000,
            "eos_token_id" => 128001,
            "rope_theta" => 10000.0,
            "head_dim" => 64,
            "mask_token_id" => 128002,
            "classifier_pooling" => "late",
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "eurobert",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter,
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `EuroBertModel.filter_tensors`: the `model.` prefix goes.
fn filter(name: &str) -> Option<String> {
    Some(name.strip_prefix("model.").unwrap_or(name).to_string())
}

/// `EuroBertModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.bool(attention::CAUSAL, false);
    p.rope_scaling_none();
    p.pooling()
}

/// `EuroBertModel.set_vocab`: `add_bos` false, then GPT-2 BPE.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.set_bool(tok::ADD_BOS, false);
    b.gpt2()
}
