//! `LlamaForCausalLM`, `MistralForCausalLM`, `MixtralForCausalLM` (`LlamaModel`, arch `llama`).
//!
//! The generic hparams plus `vocab_size` and `rope.dimension_count`; q/k rows permuted from
//! HF's rotate-half layout; Mixtral's per-expert `w1`/`w2`/`w3` stacked into
//! `ffn_{gate,down,up}_exps`; a generated `rope_freqs` tensor for Llama-3 rope.

use ggufkit::gguf::keys::{llm, rope};
use serde_json::Value as Json;

use super::{keep, Arch, Experts, Extra, HeadDim, Hooks, ModelType, QkPermute, Rules, TextType};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::hf::torch_math::torch_pow_f32;
use crate::ConvertError;

/// The llama class.
pub const LLAMA: Arch = Arch {
    hf_names: &[
        "LlamaForCausalLM",
        "LLaMAForCausalLM",
        "MistralForCausalLM",
        "MixtralForCausalLM",
        "LlamaModel",
        // The text model of LLaVA (its tower and projector are dropped).
        "LlavaForConditionalGeneration",
        // SmolVLM's and Idefics3's text model, as their hub configs name it in
        // `text_config.architectures` (the tower and connector are dropped).
        "VLlama3ForCausalLM",
        // Voxtral's text model (its audio tower and projector are dropped).
        "VoxtralForConditionalGeneration",
    ],
    model_types: &[
        ModelType {
            name: "llama",
            hf_classes: &["LlamaForCausalLM", "LLaMAForCausalLM", "LlamaModel"],
            defaults: defaults! {
                "vocab_size" => 32000,
                "hidden_size" => 4096,
                "intermediate_size" => 11008,
                "num_hidden_layers" => 32,
                "num_attention_heads" => 32,
                "max_position_embeddings" => 2048,
                "rms_norm_eps" => 1e-6,
                "rope_theta" => 10000.0,
            },
            head_dim: HeadDim::FillWhenNull,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        },
        ModelType {
            name: "mistral",
            hf_classes: &["MistralForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 32000,
                "hidden_size" => 4096,
                "intermediate_size" => 14336,
                "num_hidden_layers" => 32,
                "num_attention_heads" => 32,
                "num_key_value_heads" => 8,
                "max_position_embeddings" => 131072,
                "rms_norm_eps" => 1e-6,
                "rope_theta" => 10000.0,
                "sliding_window" => 4096,
            },
            head_dim: HeadDim::FillWhenNull,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        },
        ModelType {
            name: "mixtral",
            hf_classes: &["MixtralForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 32000,
                "hidden_size" => 4096,
                "intermediate_size" => 14336,
                "num_hidden_layers" => 32,
                "num_attention_heads" => 32,
                "num_key_value_heads" => 8,
                "max_position_embeddings" => 131072,
                "rms_norm_eps" => 1e-5,
                "rope_theta" => 1e6,
                "num_experts_per_tok" => 2,
                "num_local_experts" => 8,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: Some(super::num_experts_alias),
        },
    ],
    composites: &[
        ("llava", TextType::Named("llama")),
        ("llava_next", TextType::Named("llama")),
        ("voxtral", TextType::Named("llama")),
        (
            "mistral3",
            TextType::NamedWithInit("mistral", MISTRAL3_TEXT_INIT),
        ),
    ],
    gguf: "llama",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[
            Tensor::FfnGateInp,
            Tensor::FfnGateExp,
            Tensor::FfnUpExp,
            Tensor::FfnDownExp,
        ],
    ],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        headless_arch: Some("LlamaModel"),
        permute_qk: QkPermute::WeightsAndBiases,
        experts: &[MIXTRAL_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: rope_freqs,
    hooks: Hooks {
        adjust: Some(super::eagle3::merge_layer_config),
        switch: Some(super::eagle3::when_draft),
        ..Hooks::NONE
    },
};

/// Mixtral's per-expert `w1`/`w2`/`w3`.
pub const MIXTRAL_EXPERTS: Experts = Experts {
    marker: "block_sparse_moe.experts",
    count_keys: &["num_local_experts"],
    parts: &["w1", "w2", "w3"],
    expert_name: "model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight",
    merged_name: "layers.{bid}.feed_forward.experts.{w}.weight",
};

/// `LlamaModel.filter_tensors`: drops SmolVLM's `text_model.` infix.
pub fn filter(name: &str) -> Option<String> {
    keep(&name.replace("text_model.", ""))
}

/// `LlamaModel.set_gguf_parameters`: the generic block, `vocab_size`, the rope dimensions.
pub fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    p.u32(rope::DIMENSION_COUNT, rope_dim(p.hp)?)
}

/// [`params`] for a remote-code subclass read from config.json as written (no config class
/// fills the key/value head count): `LlamaModel.modify_tensors` looks up both head counts
/// for every tensor, so a config without them is refused as the reference fails on it.
pub fn remote_params(p: &mut Params) -> Result<(), ConvertError> {
    p.hp.req_u64(&["n_heads", "num_attention_heads"])?;
    p.hp.req_u64(&["n_kv_heads", "num_key_value_heads"])?;
    params(p)
}

/// The same lookup before any tensor is read: `LlamaModel.modify_tensors` makes it for the
/// first tensor, before a q/k permutation could fail on a missing count
/// ([`super::Hooks::adjust`]).
pub fn require_head_counts(hp: &mut Hparams) -> Result<(), ConvertError> {
    hp.req_u64(&["n_heads", "num_attention_heads"])?;
    hp.req_u64(&["n_kv_heads", "num_key_value_heads"])?;
    Ok(())
}

/// `head_dim`, else `hidden_size / num_attention_heads`.
pub fn rope_dim(hp: &Hparams) -> Result<u64, ConvertError> {
    if let Some(d) = hp.find_u64(&["head_dim"])? {
        return Ok(d);
    }
    let hidden = hp.req_u64(&["hidden_size"])?;
    let heads = hp.req_u64(&["num_attention_heads"])?;
    if heads == 0 {
        return Err(hp.missing(&["num_attention_heads"]));
    }
    Ok(hidden / heads)
}

/// Largest rotary dimension a Llama-3 rope table is built for (real head sizes are ≤ 512).
const MAX_ROPE_DIM: u64 = 1 << 16;

/// Llama-3 rope: `rope_freqs.weight`, one factor per rotary dimension pair.
pub fn rope_freqs(hp: &Hparams) -> Result<Extra, ConvertError> {
    llama3_rope_freqs(hp, 8.0)
}

/// For the Llama subclasses whose GGUF architecture has no `rope_freqs` tensor (Granite,
/// Granite-MoE, Granite 4 hybrid): a Llama-3 rope is refused, as the reference fails to map
/// the `rope_freqs` tensor it makes for it.
pub fn no_rope_freqs(hp: &Hparams) -> Result<Extra, ConvertError> {
    let extra = rope_freqs(hp)?;
    if extra.tensors.is_empty() {
        return Ok(extra);
    }
    Err(ConvertError::UnsupportedFeature {
        arch: hp.arch.clone(),
        feature: "rope_type \"llama3\": this architecture has no rope_freqs tensor \
                  (the reference fails on it too)"
            .into(),
    })
}

/// Llama-3 rope factors with `default_factor` when the rope dict has no `factor` (8 for
/// Llama, 16 for EXAONE 4).
pub fn llama3_rope_freqs(hp: &Hparams, default_factor: f64) -> Result<Extra, ConvertError> {
    let rp = hp.rope_full();
    if rp.is_empty() {
        return Ok(Extra::default());
    }
    let is_llama3 = rp
        .get("rope_type")
        .and_then(Json::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("llama3"));
    if !is_llama3 {
        return Ok(Extra::default());
    }
    let num = |k: &str, d: f64| rp.get(k).and_then(Json::as_f64).unwrap_or(d);
    let base = num("rope_theta", 10000.0);
    let dim = rope_dim(hp)?;
    if dim > MAX_ROPE_DIM {
        // One factor is computed per dimension pair: the config must not size that alone.
        return Err(ConvertError::out_of_range(
            &hp.path,
            "rope dimension (head_dim)",
            dim,
            format!("at most {MAX_ROPE_DIM}"),
        ));
    }
    let factor = num("factor", default_factor);
    let low = num("low_freq_factor", 1.0);
    let high = num("high_freq_factor", 4.0);
    let old_ctx = num("original_max_position_embeddings", 8192.0);
    let values = llama3_factors(base, dim, factor, low, high, old_ctx);
    let n = values.len() as u64;
    Ok(Extra {
        tensors: vec![("rope_freqs.weight".into(), Expr::constant(values, vec![n]))],
        early_kvs: Vec::new(),
    })
}

/// The text config `Mistral3Config` builds when a file has none (Mistral Small 3.1's sizes).
const MISTRAL3_TEXT_INIT: &str = r#"{"attention_dropout": 0.0, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 5120, "initializer_range": 0.02, "intermediate_size": 32768,
    "max_position_embeddings": 131072, "model_type": "mistral", "num_attention_heads": 32,
    "num_hidden_layers": 40, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
    "rope_theta": 1000000000.0, "sliding_window": null, "use_cache": true, "vocab_size": 131072}"#;

/// The Llama-3 frequency factors, evaluated as the converter's torch code evaluates them:
/// every tensor operation in f32 with the Python scalars rounded to f32, and a Python
/// scalar divided by a tensor computed as `tensor.reciprocal() * scalar` (torch's
/// `__rdiv__`), and `base ** exponents` as torch's pow kernel computes the whole tensor
/// ([`torch_pow_f32`]: an element's result depends on its index). Each factor is stored
/// as f32.
pub fn llama3_factors(
    base: f64,
    dim: u64,
    factor: f64,
    low: f64,
    high: f64,
    old_ctx: f64,
) -> Vec<f32> {
    let recip = |x: f32| 1.0f32 / x;
    let (low_wl, high_wl) = ((old_ctx / low) as f32, (old_ctx / high) as f32);
    let two_pi = (2.0 * std::f64::consts::PI) as f32;
    let (f_factor, f_low, f_span) = (factor as f32, low as f32, (high - low) as f32);
    let exponents: Vec<f32> = (0..dim).step_by(2).map(|k| k as f32 / dim as f32).collect();
    torch_pow_f32(base as f32, &exponents)
        .into_iter()
        .map(|p| {
            let freq = recip(p);
            let wavelen = recip(freq) * two_pi;
            if wavelen < high_wl {
                1.0
            } else if wavelen > low_wl {
                f_factor
            } else {
                let smooth = (recip(wavelen) * old_ctx as f32 - f_low) / f_span;
                recip((1.0 - smooth) / f_factor + smooth)
            }
        })
        .collect()
}

#[cfg(test)]
mod llama3_rope_tests {
    use super::llama3_factors;

    /// torch's `base ** exponents` runs SLEEF's powf on the vector body: with head size 96
    /// (48 frequencies, 32 of them in the body) two configurations land a body frequency in
    /// the smoothing band one float off libm's `powf` (values measured with torch 2.15).
    #[test]
    fn factors_follow_torchs_vector_pow() {
        let f = llama3_factors(500000.0, 96, 8.0, 1.0, 4.0, 4096.0);
        assert_eq!(f[19].to_bits(), 0x3f90_19df);
        let f = llama3_factors(50000.0, 96, 32.0, 1.0, 4.0, 8192.0);
        assert_eq!(f[28].to_bits(), 0x4007_6d1a);
    }
}

#[cfg(test)]
mod composite_tests {
    use super::MISTRAL3_TEXT_INIT;

    #[test]
    fn mistral3_text_init_is_an_object_with_its_width() {
        let m: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(MISTRAL3_TEXT_INIT).unwrap();
        assert_eq!(m["hidden_size"], 5120);
        assert_eq!(m["model_type"], "mistral");
    }
}
