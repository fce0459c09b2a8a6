//! `Jais2ForCausalLM` (arch `jais2`, `Jais2Model(TextModel)` in `conversion/jais.py`).
//!
//! A Llama-named decoder with LayerNorm (with bias), biased attention and a gate-less
//! squared-ReLU FFN, and no rotary permutation. The hparams are the generic block plus the
//! rotary dimensions, `head_dim` (else `hidden_size / num_attention_heads`). The vocabulary
//! is GPT-2 BPE. Jais2Config fills `head_dim` and the kv head count, and refuses a hidden
//! size that is not a multiple of the head count (the reference then reads config.json as
//! written).

use ggufkit::gguf::keys::rope;
use serde_json::{Map, Value as Json};

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::json_u64;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// Jais2Config's `hidden_size` default.
const HIDDEN_SIZE: u64 = 3328;
/// Jais2Config's `num_attention_heads` default.
const NUM_HEADS: u64 = 26;

/// The Jais 2 class.
pub const JAIS2: Arch = Arch {
    hf_names: &["Jais2ForCausalLM"],
    model_types: &[ModelType {
        name: "jais2",
        hf_classes: &["Jais2ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 150272,
            "hidden_size" => HIDDEN_SIZE,
            "intermediate_size" => 26624,
            "num_hidden_layers" => 32,
            "num_attention_heads" => NUM_HEADS,
            "hidden_act" => "relu2",
            "max_position_embeddings" => 8192,
            "bos_token_id" => 0,
            "eos_token_id" => 150024,
            "attention_bias" => true,
            "mlp_bias" => true,
            "layer_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(validate),
    }],
    composites: &[],
    gguf: "jais2",
    vocab: VocabKind::Gpt2,
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
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Jais2Config's architecture check: `hidden_size` (default 3328) must be a multiple of
/// `num_attention_heads` (default 26); `false` (AutoConfig raises) otherwise.
fn validate(cfg: &mut Map<String, Json>) -> bool {
    let get = |k: &str, d: u64| match cfg.get(k) {
        None => Some(d),
        Some(v) => json_u64(v),
    };
    match (
        get("hidden_size", HIDDEN_SIZE),
        get("num_attention_heads", NUM_HEADS),
    ) {
        (Some(h), Some(n)) => n != 0 && h % n == 0,
        _ => false,
    }
}

/// `Jais2Model.set_gguf_parameters`: the generic block, then the rotary dimensions.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let head_dim = match p.hp.find_u64(&["head_dim"])? {
        Some(d) => d,
        None => {
            let hidden = p.hp.req_u64(&["hidden_size"])?;
            let heads = p.hp.req_u64(&["num_attention_heads"])?;
            hidden
                .checked_div(heads)
                .ok_or_else(|| ConvertError::NotACount {
                    key: "num_attention_heads".into(),
                    value: heads.to_string(),
                })?
        }
    };
    p.u32(rope::DIMENSION_COUNT, head_dim)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map};

    use super::validate;

    /// The hidden size must be a multiple of the head count, defaults included.
    #[test]
    fn jais2_hidden_size_multiple_of_heads() {
        let cfg = |v: serde_json::Value| -> Map<String, serde_json::Value> {
            v.as_object().unwrap().clone()
        };
        assert!(validate(&mut cfg(json!({}))));
        assert!(validate(&mut cfg(
            json!({"hidden_size": 64, "num_attention_heads": 4})
        )));
        assert!(!validate(&mut cfg(
            json!({"hidden_size": 30, "num_attention_heads": 4})
        )));
        assert!(!validate(&mut cfg(json!({"hidden_size": 64}))));
        assert!(!validate(&mut cfg(json!({"num_attention_heads": 0}))));
    }
}
