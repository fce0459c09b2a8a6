//! `ArceeForCausalLM` (arch `arcee`, `ArceeModel(LlamaModel)` in `conversion/llama.py`).
//!
//! Llama's conversion (ReLU² MLP: `up_proj` and `down_proj` only) plus the
//! sentence-transformers pooling type when the directory has one.

use super::{llama, Arch, QkPermute, Rules};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// The Arcee class.
pub const ARCEE: Arch = Arch {
    hf_names: &["ArceeForCausalLM"],
    gguf: "arcee",
    vocab: VocabKind::Llama,
    tensors: &[TENSORS],
    filter: llama::filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params,
    extra: llama::rope_freqs,
};

/// Llama's names without `ffn_gate` (the architecture has none).
const TENSORS: &[(&str, &str)] = &[
    ("model.embed_tokens", "token_embd"),
    ("model.norm", "output_norm"),
    ("lm_head", "output"),
    ("model.layers.{bid}.input_layernorm", "blk.{bid}.attn_norm"),
    ("model.layers.{bid}.self_attn.q_proj", "blk.{bid}.attn_q"),
    ("model.layers.{bid}.self_attn.k_proj", "blk.{bid}.attn_k"),
    ("model.layers.{bid}.self_attn.v_proj", "blk.{bid}.attn_v"),
    (
        "model.layers.{bid}.self_attn.o_proj",
        "blk.{bid}.attn_output",
    ),
    (
        "model.layers.{bid}.post_attention_layernorm",
        "blk.{bid}.ffn_norm",
    ),
    ("model.layers.{bid}.mlp.up_proj", "blk.{bid}.ffn_up"),
    ("model.layers.{bid}.mlp.down_proj", "blk.{bid}.ffn_down"),
];

fn params(p: &mut Params) -> Result<(), ConvertError> {
    llama::params(p)?;
    p.pooling()
}
