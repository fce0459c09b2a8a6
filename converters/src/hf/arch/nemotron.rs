//! `NemotronForCausalLM` (arch `nemotron`, `NemotronModel(TextModel)` in
//! `conversion/nemotron.py`).
//!
//! A Llama-named decoder without the rotary permutation: LayerNorm with bias written as
//! layernorm1p (1 added to every `*norm.weight`), a squared-ReLU FFN without a gate, partial
//! rotary. The hparams are the generic block, then `vocab_size`, the LayerNorm epsilon, the
//! rotary dimensions `int(partial_rotary_factor * hidden_size) // heads`, and linear rope
//! scaling when a `factor` is given (else none). The vocabulary is SentencePiece (required)
//! with pad 0 and unk 1.

use ggufkit::gguf::keys::{attention, llm, rope, tokenizer as tok};
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The Nemotron class.
pub const NEMOTRON: Arch = Arch {
    hf_names: &["NemotronForCausalLM"],
    model_types: &[ModelType {
        name: "nemotron",
        hf_classes: &["NemotronForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 256000,
            "hidden_size" => 6144,
            "intermediate_size" => 24576,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 48,
            "hidden_act" => "relu2",
            "max_position_embeddings" => 4096,
            "norm_eps" => 1e-5,
            "bos_token_id" => 2,
            "eos_token_id" => 3,
            "rope_theta" => 10000.0,
            "partial_rotary_factor" => 0.5,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "nemotron",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        norm_shift: true,
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `NemotronModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let eps = hp.req_f64(&[
        "layer_norm_eps",
        "layer_norm_epsilon",
        "norm_epsilon",
        "norm_eps",
    ])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    let rp = hp.rope_full();
    let pct = match rp.get("partial_rotary_factor") {
        Some(v) => v.as_f64().ok_or_else(|| ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["rope_parameters.partial_rotary_factor".into()],
            expected: "a number".into(),
            found: v.to_string(),
        })?,
        None => return Err(hp.missing(&["partial_rotary_factor"])),
    };
    let n_embd = hp.req_u64(&["hidden_size", "n_embd"])?;
    let n_head = hp.req_u64(&["num_attention_heads", "n_head"])?;
    if n_head == 0 {
        return Err(hp.missing(&["num_attention_heads", "n_head"]));
    }
    p.u32(
        rope::DIMENSION_COUNT,
        ((pct * n_embd as f64) as u64) / n_head,
    )?;
    // `hparams.get("factor") or rope_parameters.get("factor")`: a falsy value falls through.
    let falsy = |v: &&Json| matches!(v, Json::Null | Json::Bool(false)) || v.as_f64() == Some(0.0);
    let factor = hp
        .get("factor")
        .filter(|v| !falsy(v))
        .or_else(|| rp.get("factor").filter(|v| !falsy(v)));
    match factor {
        None => p.rope_scaling_none(),
        Some(v) => {
            let f = v.as_f64().ok_or_else(|| ConvertError::BadHparam {
                path: hp.path.clone(),
                keys: vec!["factor".into()],
                expected: "a number".into(),
                found: v.to_string(),
            })?;
            p.string(rope::SCALING_TYPE, "linear");
            p.f32(rope::SCALING_FACTOR, f);
        }
    }
    Ok(())
}

/// `NemotronModel.set_vocab`: SentencePiece, then pad 0 and unk 1.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model("Nemotron's vocabulary is SentencePiece")?;
    let path = b.sentencepiece(model)?;
    b.set_u32(tok::PAD_ID, 0);
    b.set_u32(tok::UNK_ID, 1);
    Ok((path, None))
}
