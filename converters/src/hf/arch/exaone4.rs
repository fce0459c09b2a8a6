//! `Exaone4ForCausalLM` (arch `exaone4`, `Exaone4Model` in `conversion/exaone.py`).
//!
//! Norms after attention and FFN (no pre-norms), q/k norms, the generic hparams plus
//! `vocab_size`, the sliding window with its per-layer pattern (from `layer_types`, else
//! from `sliding_window_pattern` as an "LLLG" string or a period), and Llama-3 rope factors
//! (default factor 16).

use ggufkit::gguf::keys::{attention, llm};
use serde_json::{Map, Value as Json};

use super::{keep, llama, Arch, Extra, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The EXAONE 4 class.
pub const EXAONE4: Arch = Arch {
    hf_names: &["Exaone4ForCausalLM"],
    model_types: &[ModelType {
        name: "exaone4",
        hf_classes: &["Exaone4ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 102400,
            "hidden_size" => 4096,
            "intermediate_size" => 16384,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            // A field of its own (not copied from the head count when absent).
            "num_key_value_heads" => 32,
            "max_position_embeddings" => 2048,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "sliding_window" => 4096,
            "sliding_window_pattern" => 4,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(derive_layer_types),
    }],
    composites: &[],
    gguf: "exaone4",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::Output,
        Tensor::OutputNorm,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::AttnPostNorm,
        Tensor::FfnPostNorm,
        Tensor::FfnGate,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra,
    hooks: Hooks::NONE,
};

/// `Exaone4Model.generate_extra_tensors`: Llama-3 rope factors (default factor 16).
pub(super) fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    llama::llama3_rope_freqs(hp, 16.0)
}

/// `Exaone4Model.set_gguf_parameters`.
pub(super) fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let hp = p.hp;
    let sw = match hp.get("sliding_window") {
        None | Some(Json::Null) => return Ok(()),
        Some(v) => json_u64(v).ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "sliding_window", "a non-negative integer", v)
        })?,
    };
    p.u32(attention::SLIDING_WINDOW, sw)?;
    if let Some(pattern) = p.layer_types_pattern()? {
        p.bools(attention::SLIDING_WINDOW_PATTERN, pattern);
        return Ok(());
    }
    let n_layers = hp.req_u64(&["num_hidden_layers"])?;
    let pattern: Vec<bool> = match hp.get("sliding_window_pattern") {
        // "LLLG": local where the letter is L, repeating.
        Some(Json::String(s)) if !s.is_empty() => {
            let c: Vec<char> = s.chars().collect();
            (0..n_layers)
                .map(|i| c[(i % c.len() as u64) as usize] == 'L')
                .collect()
        }
        Some(Json::Number(n)) => match n.as_u64() {
            Some(0) => {
                return Err(ConvertError::out_of_range(
                    &hp.path,
                    "sliding_window_pattern",
                    0,
                    "at least 1 (the layer index is taken modulo it)",
                ))
            }
            Some(k) => (0..n_layers).map(|i| (i + 1) % k != 0).collect(),
            None => Vec::new(),
        },
        _ => Vec::new(),
    };
    if pattern.len() as u64 == n_layers {
        p.bools(attention::SLIDING_WINDOW_PATTERN, pattern);
    }
    Ok(())
}

/// `Exaone4Config`'s derived `layer_types` (sliding except every `sliding_window_pattern`-th
/// layer). False when the config class would raise (no sliding window, or a pattern that is
/// not a positive integer), which makes the converter fall back to the raw config.json.
pub(super) fn derive_layer_types(cfg: &mut Map<String, Json>) -> bool {
    if cfg.get("layer_types").is_some_and(|v| !v.is_null()) {
        return true;
    }
    let sw_null = match cfg.get("sliding_window") {
        Some(v) => v.is_null(),
        None => false, // default 4096
    };
    let pattern = match cfg.get("sliding_window_pattern") {
        None => Some(4),
        Some(v) => v.as_u64(),
    };
    let (Some(k), false) = (pattern, sw_null) else {
        return false;
    };
    if k == 0 {
        return false;
    }
    let n = cfg
        .get("num_hidden_layers")
        .and_then(Json::as_u64)
        .unwrap_or(32)
        .min(crate::hf::config::MAX_BLOCK_COUNT);
    let types: Vec<Json> = (0..n)
        .map(|i| {
            serde_json::json!(if (i + 1) % k != 0 {
                "sliding_attention"
            } else {
                "full_attention"
            })
        })
        .collect();
    cfg.insert("layer_types".into(), Json::Array(types));
    true
}
