//! `MiniCPMForCausalLM` (arch `minicpm`) and `MiniCPM3ForCausalLM` (arch `minicpm3`),
//! `MiniCPMModel` and `MiniCPM3Model` in `conversion/minicpm.py`.
//!
//! MiniCPM is remote code (the config is read as written): Llama's names and q/k weight
//! permutation (no biases), the generic hparams and its muP-style scales: the embedding
//! scale `scale_emb`, the residual scale `scale_depth / sqrt(num_hidden_layers)` and the
//! logit scale `hidden_size / dim_model_base`.
//!
//! MiniCPM3 (transformers' `MiniCPM3Config`) has multi-head latent attention under
//! DeepSeek-V2's names, kept as they are (no permutation), and its own hparam block: file
//! type first, then the sizes, `vocab_size`, the q-lora rank (when not null), the kv-lora
//! rank, the key length `qk_nope_head_dim + qk_rope_head_dim` and the rope dimensions
//! `qk_rope_head_dim`; none of MiniCPM's scales.
//!
//! Both write LongRoPE factors given in the rope parameters as `rope_factors_long` /
//! `rope_factors_short` (F32, before the model's tensors): both lists are required once
//! either is non-empty, each of half the rope dimensions (MiniCPM: `hidden_size /
//! num_attention_heads`; MiniCPM3: `qk_rope_head_dim`). Both vocabularies are
//! SentencePiece, `tokenizer.model` required.

use ggufkit::gguf::keys::{attention, llm, mla, rope};

use super::{keep, Arch, Extra, HeadDim, Hooks, ModelType, QkPermute, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The MiniCPM class.
pub const MINICPM: Arch = Arch {
    hf_names: &["MiniCPMForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "minicpm",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        permute_qk: QkPermute::Weights,
        ..Rules::NONE
    },
    params: minicpm_params,
    extra: minicpm_extra,
    hooks: Hooks::NONE,
};

/// The MiniCPM3 class.
pub const MINICPM3: Arch = Arch {
    hf_names: &["MiniCPM3ForCausalLM"],
    model_types: &[ModelType {
        name: "minicpm3",
        hf_classes: &["MiniCPM3ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 73448,
            "hidden_size" => 2560,
            "intermediate_size" => 6400,
            "num_hidden_layers" => 62,
            "num_attention_heads" => 40,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-5,
            "q_lora_rank" => 768,
            "kv_lora_rank" => 256,
            "qk_nope_head_dim" => 64,
            "qk_rope_head_dim" => 32,
            "v_head_dim" => 64,
            "rope_theta" => 10000.0,
            "tie_word_embeddings" => true,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "minicpm3",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQA,
        Tensor::AttnQB,
        Tensor::AttnKvAMqa,
        Tensor::AttnKvB,
        Tensor::AttnQANorm,
        Tensor::AttnKvANorm,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params: minicpm3_params,
    extra: minicpm3_extra,
    hooks: Hooks::NONE,
};

/// `_set_vocab_sentencepiece`: `tokenizer.model` required.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model("MiniCPM's vocabulary is SentencePiece")?;
    Ok((b.sentencepiece(model)?, None))
}

/// `MiniCPMModel.set_gguf_parameters`: the generic block, then the three scales.
fn minicpm_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let scale_emb = hp.req_f64(&["scale_emb"])?;
    p.f32(llm::EMBEDDING_SCALE, scale_emb);
    let depth = hp.req_f64(&["scale_depth"])?;
    let layers = hp.req_u64(&["num_hidden_layers"])?;
    p.f32(llm::RESIDUAL_SCALE, depth / (layers as f64).powf(0.5));
    let hidden = hp.req_u64(&["hidden_size"])?;
    let base = hp.req_f64(&["dim_model_base"])?;
    p.f32(llm::LOGIT_SCALE, hidden as f64 / base);
    Ok(())
}

/// `MiniCPM3Model.set_gguf_parameters`.
fn minicpm3_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.file_type();
    p.req_u32(llm::CONTEXT_LENGTH, &["max_position_embeddings"])?;
    p.req_u32(llm::EMBEDDING_LENGTH, &["hidden_size"])?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["intermediate_size"])?;
    p.req_u32(attention::HEAD_COUNT, &["num_attention_heads"])?;
    p.req_u32(attention::HEAD_COUNT_KV, &["num_key_value_heads"])?;
    let eps = hp.req_f64(&["rms_norm_eps"])?;
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    if let Some(q) = hp.find_u64(&["q_lora_rank"])? {
        p.u32(mla::Q_LORA_RANK, q)?;
    }
    p.req_u32(mla::KV_LORA_RANK, &["kv_lora_rank"])?;
    let nope = hp.req_u64(&["qk_nope_head_dim"])?;
    let rope_dim = hp.req_u64(&["qk_rope_head_dim"])?;
    let key = nope
        .checked_add(rope_dim)
        .ok_or_else(|| ConvertError::NotACount {
            key: "qk_nope_head_dim".into(),
            value: nope.to_string(),
        })?;
    p.u32(attention::KEY_LENGTH, key)?;
    p.u32(rope::DIMENSION_COUNT, rope_dim)
}

/// MiniCPM's rope dimensions: `hidden_size / num_attention_heads`.
fn minicpm_extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    let heads = hp.req_u64(&["num_attention_heads"])?;
    if heads == 0 {
        return Err(ConvertError::NotACount {
            key: "num_attention_heads".into(),
            value: "0".into(),
        });
    }
    let dims = hp.req_u64(&["hidden_size"])? / heads;
    rope_factors(hp, dims)
}

/// MiniCPM3's rope dimensions: `qk_rope_head_dim`, read only when there are factors.
fn minicpm3_extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    if !has_factors(hp) {
        return Ok(Extra::default());
    }
    let dims = hp.req_u64(&["qk_rope_head_dim"])?;
    rope_factors(hp, dims)
}

/// Whether either factor list is present and non-empty (the class's truthiness test).
fn has_factors(hp: &Hparams) -> bool {
    ["long_factor", "short_factor"].iter().any(|k| {
        hp.rope
            .get(*k)
            .is_some_and(|v| v.as_array().is_some_and(|a| !a.is_empty()))
    })
}

/// One factor list as f32 values, refused unless every entry is a number.
fn factor_list(hp: &Hparams, key: &str) -> Result<Option<Vec<f32>>, ConvertError> {
    let Some(v) = hp.rope.get(key).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let bad = || ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![format!("rope_scaling.{key}")],
        expected: "a list of numbers".into(),
        found: v.to_string(),
    };
    v.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|x| x.as_f64().map(|f| f as f32).ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// `generate_extra_tensors`: the LongRoPE factors, both lists required once either is
/// non-empty, each of `rope_dims / 2` entries.
fn rope_factors(hp: &Hparams, rope_dims: u64) -> Result<Extra, ConvertError> {
    if !has_factors(hp) {
        return Ok(Extra::default());
    }
    let long = factor_list(hp, "long_factor")?;
    let short = factor_list(hp, "short_factor")?;
    let (Some(long), Some(short)) = (long, short) else {
        return Err(hp.missing(&["rope_scaling.long_factor", "rope_scaling.short_factor"]));
    };
    if long.len() != short.len() || long.len() as f64 != rope_dims as f64 / 2.0 {
        return Err(ConvertError::format(
            &hp.path,
            None,
            format!(
                "rope long and short factors must have {} entries, found {} and {}",
                rope_dims as f64 / 2.0,
                long.len(),
                short.len()
            ),
        ));
    }
    let n = long.len() as u64;
    Ok(Extra {
        tensors: vec![
            (
                "rope_factors_long.weight".into(),
                Expr::constant(long, vec![n]),
            ),
            (
                "rope_factors_short.weight".into(),
                Expr::constant(short, vec![n]),
            ),
        ],
        early_kvs: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{minicpm3_extra, minicpm_extra};
    use crate::hf::config::Hparams;

    /// The hparams of a config as written.
    fn rope_of(cfg: serde_json::Value) -> Hparams {
        crate::hf::config::from_json(cfg, std::path::PathBuf::from("config.json")).unwrap()
    }

    fn cfg(rope: serde_json::Value) -> serde_json::Value {
        json!({
            "architectures": ["MiniCPMForCausalLM"],
            "hidden_size": 64, "num_attention_heads": 4,
            "rope_scaling": rope,
        })
    }

    /// Eight factors for 16 rope dimensions make the two tensors; none makes nothing.
    #[test]
    fn minicpm_rope_factors() {
        let f: Vec<f64> = (0..8).map(|i| 1.0 + i as f64 / 8.0).collect();
        let hp = rope_of(cfg(
            json!({"type": "longrope", "long_factor": f, "short_factor": f}),
        ));
        let extra = minicpm_extra(&hp).unwrap();
        let names: Vec<_> = extra.tensors.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["rope_factors_long.weight", "rope_factors_short.weight"]
        );
        assert_eq!(extra.tensors[0].1.shape(), [8]);
        let none = minicpm_extra(&rope_of(cfg(json!({"type": "linear", "factor": 2.0}))));
        assert!(none.unwrap().tensors.is_empty());
    }

    /// A single list, lists of different lengths, or lists not half the rope dimensions are
    /// refused, as the reference refuses them.
    #[test]
    fn minicpm_rope_factors_refused() {
        let f: Vec<f64> = vec![1.0; 8];
        let only_long = rope_of(cfg(json!({"type": "longrope", "long_factor": f})));
        assert!(minicpm_extra(&only_long).is_err());
        let uneven = rope_of(cfg(
            json!({"type": "longrope", "long_factor": f, "short_factor": [1.0]}),
        ));
        assert!(minicpm_extra(&uneven).is_err());
        let short: Vec<f64> = vec![1.0; 4];
        let wrong = rope_of(cfg(
            json!({"type": "longrope", "long_factor": short, "short_factor": short}),
        ));
        assert!(minicpm_extra(&wrong).is_err());
    }

    /// MiniCPM3 sizes its factors by `qk_rope_head_dim`, not by the heads.
    #[test]
    fn minicpm3_rope_factors_follow_the_rope_head() {
        let hp = rope_of(json!({
            "architectures": ["MiniCPM3ForCausalLM"],
            "hidden_size": 64, "num_attention_heads": 4, "qk_rope_head_dim": 8,
            "rope_scaling": {"type": "longrope", "long_factor": [1.0, 1.5, 2.0, 2.5],
                             "short_factor": [1.0, 1.0, 1.0, 1.0]},
        }));
        assert_eq!(minicpm3_extra(&hp).unwrap().tensors.len(), 2);
        assert!(minicpm_extra(&hp).is_err());
    }
}
