//! Gemma 3n (`Gemma3NModel` of `conversion/gemma.py`, a `Gemma3Model` subclass): the text
//! model of `Gemma3nForConditionalGeneration` (vision and audio towers filtered out, as
//! every text model filters them) and `Gemma3nForCausalLM`.
//!
//! What it changes from Gemma 3:
//! * no norm shift (Gemma 3n's RMSNorm multiplies by `w`, not `1 + w`), no embedding cut;
//! * `embed_tokens` and `embed_tokens_per_layer` are padded with zero rows up to
//!   `vocab_size` (the per-layer table has `vocab_size_per_layer_input` rows: the audio and
//!   vision tokens get no per-layer embedding);
//! * the three `altup_projections.{i}` and `altup_unembed_projections.{i}` matrices are
//!   stacked into `altup_proj` / `altup_unembd_proj` (`altup_num_inputs` must be 4);
//! * HF names ending in `_scale` (`altup.correct_output_scale`) get `.weight`;
//! * the vocabulary is sized by `vocab_size`, not `vocab_size_per_layer_input`
//!   (`tokenizer::sentencepiece`);
//! * after Gemma 3's KVs: AltUp's active index and input count, the per-layer input size,
//!   the KV-sharing layer count, the activation sparsity scales (the standard normal
//!   quantile of each layer's sparsity, as torch computes it in f32) and the sliding-window
//!   pattern from `layer_types`.

use ggufkit::gguf::keys::{attention, layered};
use serde_json::{json, Map, Value as Json};

use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules, Stacked, TextType};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::hf::torch_math::torch_normal_icdf_f32;
use crate::ConvertError;

/// `Gemma3nForCausalLM`, `Gemma3nForConditionalGeneration` (arch `gemma3n`).
pub const GEMMA3N: Arch = Arch {
    hf_names: &["Gemma3nForCausalLM", "Gemma3nForConditionalGeneration"],
    model_types: &[ModelType {
        name: "gemma3n_text",
        hf_classes: &["Gemma3nForCausalLM", "Gemma3nForConditionalGeneration"],
        defaults: defaults! {
            "vocab_size" => 262400,
            "vocab_size_per_layer_input" => 262144,
            "hidden_size" => 2048,
            "hidden_size_per_layer_input" => 256,
            "num_hidden_layers" => 35,
            "num_attention_heads" => 8,
            "num_key_value_heads" => 2,
            "head_dim" => 256,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 1e6,
            "rope_local_base_freq" => 10000.0,
            "sliding_window" => 512,
            "final_logit_softcapping" => 30.0,
            "altup_active_idx" => 0,
            "altup_num_inputs" => 4,
            "num_kv_shared_layers" => 15,
            "laurel_rank" => 64,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(post_init),
    }],
    composites: &[("gemma3n", TextType::Fixed("gemma3n_text"))],
    gguf: "gemma3n",
    vocab: VocabKind::Gemma,
    // The class hides `vocab_size_per_layer_input` during `set_vocab`.
    vocab_quirks: VocabQuirks {
        spm_size_keys: &["vocab_size"],
        ..VocabQuirks::NONE
    },
    tensors: &[
        DECODER,
        &[
            Tensor::AttnQkv,
            Tensor::AttnQNorm,
            Tensor::AttnKNorm,
            Tensor::AttnPostNorm,
            Tensor::FfnPostNorm,
            Tensor::PerLayerTokenEmbd,
            Tensor::PerLayerModelProj,
            Tensor::PerLayerInpGate,
            Tensor::PerLayerProj,
            Tensor::PerLayerProjNorm,
            Tensor::PerLayerPostNorm,
            Tensor::AltupProj,
            Tensor::AltupUnembdProj,
            Tensor::AltupCorrectCoef,
            Tensor::AltupCorrectScale,
            Tensor::AltupPredictCoef,
            Tensor::AltupRouter,
            Tensor::AltupRouterNorm,
            Tensor::LaurelL,
            Tensor::LaurelR,
            Tensor::LaurelPostNorm,
        ],
    ],
    tensor_overrides: &[],
    filter: scale_weight,
    rules: Rules {
        hook: Some(pad_embeddings),
        // `altup_unembed_projections` first: the class tests for it before the other.
        stacked: &[
            Stacked {
                marker: "altup_unembed_projections",
                count: 3,
                merged_name: "model.altup_unembed_projections.weight",
            },
            Stacked {
                marker: "altup_projections",
                count: 3,
                merged_name: "model.altup_projections.weight",
            },
        ],
        ..Rules::NONE
    },
    params: gemma3n_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Gemma3nTextConfig.__post_init__`: per-layer FFN sizes, the default layer types (every
/// fifth layer global) and sparsity pattern (the first 10 of more than 10 layers sparse at
/// 0.95); `false` (AutoConfig raises) when a list does not have one value per layer or the
/// hidden size is not a multiple of the head count.
fn post_init(cfg: &mut Map<String, Json>) -> bool {
    let n = match cfg.get("num_hidden_layers") {
        None => 35,
        Some(v) => match json_u64(v) {
            Some(n) => n.min(crate::hf::config::MAX_BLOCK_COUNT),
            None => return false,
        },
    };
    let per_layer = |v: Json| Json::Array(vec![v; n as usize]);
    match cfg.get("intermediate_size").cloned() {
        Some(Json::Array(a)) if a.len() as u64 != n => return false,
        Some(Json::Array(_)) => {}
        None => {
            cfg.insert("intermediate_size".into(), per_layer(json!(16384)));
        }
        Some(v) => {
            cfg.insert("intermediate_size".into(), per_layer(v));
        }
    }
    if cfg.get("layer_types").is_none_or(Json::is_null) {
        let types = (0..n)
            .map(|i| {
                json!(if (i + 1) % 5 == 0 {
                    "full_attention"
                } else {
                    "sliding_attention"
                })
            })
            .collect();
        cfg.insert("layer_types".into(), Json::Array(types));
    }
    if cfg
        .get("activation_sparsity_pattern")
        .is_none_or(Json::is_null)
    {
        let sparse = if n > 10 { 10 } else { 0 };
        let pattern = (0..n)
            .map(|i| json!(if i < sparse { 0.95 } else { 0.0 }))
            .collect();
        cfg.insert("activation_sparsity_pattern".into(), Json::Array(pattern));
    }
    match cfg.get("activation_sparsity_pattern") {
        Some(Json::Array(a)) if a.len() as u64 == n => {}
        _ => return false,
    }
    let get = |k: &str, d: u64| cfg.get(k).map_or(Some(d), json_u64);
    matches!(
        (get("hidden_size", 2048), get("num_attention_heads", 8)),
        (Some(h), Some(a)) if a != 0 && h % a == 0
    )
}

/// `filter_tensors`: `…_scale` names get `.weight`.
fn scale_weight(name: &str) -> Option<String> {
    Some(if name.ends_with("_scale") {
        format!("{name}.weight")
    } else {
        name.to_string()
    })
}

/// The token embeddings and per-layer embeddings, padded with zero rows to `vocab_size`
/// and mapped as they are (no Gemma 3 cut, no norm shift).
fn pad_embeddings(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if !(name.contains("embed_tokens.weight") || name.contains("embed_tokens_per_layer")) {
        return Ok(Modified::Pass(name, expr));
    }
    let vocab = hp.find_u64(&["vocab_size"])?.unwrap_or(262400);
    if expr.shape().len() != 2 {
        return Err(ConvertError::Tensor {
            name,
            problem: format!("expected a 2-D embedding, found shape {:?}", expr.shape()),
        });
    }
    let rows = expr.shape()[0];
    let expr = if rows < vocab {
        expr.pad_rows(&name, vocab)?
    } else {
        expr
    };
    Ok(Modified::Out(vec![(name, expr)]))
}

fn gemma3n_params(p: &mut Params) -> Result<(), ConvertError> {
    super::gemma::gemma3_params(p)?;
    let hp = p.hp;
    if hp.req_u64(&["altup_num_inputs"])? != 4 {
        return Err(ConvertError::Unsupported(
            "gemma3n: only altup_num_inputs = 4 is supported (as by the reference)".into(),
        ));
    }
    p.req_u32("altup.active_idx", &["altup_active_idx"])?;
    p.req_u32("altup.num_inputs", &["altup_num_inputs"])?;
    p.req_u32(
        layered::EMBEDDING_LENGTH_PER_LAYER_INPUT,
        &["hidden_size_per_layer_input"],
    )?;
    p.req_u32(layered::SHARED_KV_LAYERS, &["num_kv_shared_layers"])?;
    let pattern = match hp.get("activation_sparsity_pattern") {
        Some(Json::Array(a)) => a,
        _ => return Err(hp.missing(&["activation_sparsity_pattern"])),
    };
    let mut scales = Vec::with_capacity(pattern.len());
    for v in pattern {
        let s = v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "activation_sparsity_pattern", "numbers", v)
        })?;
        scales.push(torch_normal_icdf_f32(s as f32));
    }
    p.f32s("activation_sparsity_scale", scales);
    let swa = p
        .layer_types_pattern()?
        .ok_or_else(|| hp.missing(&["layer_types"]))?;
    p.bools(attention::SLIDING_WINDOW_PATTERN, swa);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values torch 2.15 gives for `Normal(0, 1).icdf(torch.tensor(p))` (f32 values as
    /// Python prints them widened to f64).
    #[test]
    #[allow(clippy::excessive_precision)]
    fn icdf_matches_torch() {
        for (p, want) in [
            (0.95f32, 1.644_853_591_918_945_3f32),
            (0.75, 0.674_489_736_557_006_8),
            (0.5, 0.0),
            (0.9, 1.281_551_480_293_274),
            (0.99, 2.326_348_304_748_535),
            (0.1, -1.281_551_599_502_563_5),
            (0.05, -1.644_853_591_918_945_3),
            // Where two Newton steps of the textbook erfinv land one float off MKL's.
            (0.8454, f32::from_bits(0x3f82_29d9)),
            (0.3, f32::from_bits(0xbf06_3f1c)),
        ] {
            assert_eq!(
                torch_normal_icdf_f32(p).to_bits(),
                want.to_bits(),
                "p = {p}"
            );
        }
        assert_eq!(torch_normal_icdf_f32(0.0), f32::NEG_INFINITY);
        assert_eq!(torch_normal_icdf_f32(1.0), f32::INFINITY);
    }

    #[test]
    fn post_init_fills_the_per_layer_lists() {
        let mut cfg = Map::new();
        cfg.insert("num_hidden_layers".into(), json!(12));
        cfg.insert("intermediate_size".into(), json!(64));
        assert!(post_init(&mut cfg));
        assert_eq!(cfg["intermediate_size"], Json::Array(vec![json!(64); 12]));
        assert_eq!(cfg["layer_types"][4], json!("full_attention"));
        assert_eq!(cfg["layer_types"][3], json!("sliding_attention"));
        assert_eq!(cfg["activation_sparsity_pattern"][9], json!(0.95));
        assert_eq!(cfg["activation_sparsity_pattern"][10], json!(0.0));
        let mut bad = Map::new();
        bad.insert("num_hidden_layers".into(), json!(3));
        bad.insert("activation_sparsity_pattern".into(), json!([0.5]));
        assert!(!post_init(&mut bad));
    }
}
