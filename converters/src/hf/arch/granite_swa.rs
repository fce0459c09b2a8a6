//! Granite with interleaved sliding-window attention (`GraniteSWAModel` and
//! `GraniteMoeSWAModel` in `conversion/granite.py`, arch `granite_swa`).
//!
//! Both are Granite (its multipliers written as scales, `head_dim` ignored, q/k permuted)
//! plus the sliding window, a per-layer sliding pattern (from `layer_types`, else every
//! fourth layer full attention) and, when the config has `no_rope_layers` (1 = RoPE,
//! 0 = NoPE), a per-layer rope pattern. Attention sinks (`self_attn.sinks`, one per head)
//! become `attn_sinks.weight`. The MoE class keeps the routed experts' gate and up halves
//! fused (`ffn_gate_up_exps`, from `experts.gate_up_proj` or Granite-MoE's
//! `input_linear.weight`), and the shared MLP's too (`ffn_up_shexp`). A Llama-3 rope gets
//! its `rope_freqs` tensor, which this architecture has.

use ggufkit::gguf::keys::{attention, llm};
use serde_json::{Map, Value as Json};

use super::{granite, llama, Arch, HeadDim, Hooks, ModelType, Modified, QkPermute, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The tensors both classes write beyond the Llama decoder's.
const SWA_TENSORS: &[Tensor] = &[
    Tensor::AttnSinks,
    Tensor::FfnGateInp,
    Tensor::FfnGateUpExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpShexp,
    Tensor::FfnDownShexp,
];

/// `GraniteSWAForCausalLM` (arch `granite_swa`).
pub const GRANITE_SWA: Arch = Arch {
    hf_names: &["GraniteSWAForCausalLM"],
    model_types: &[ModelType {
        name: "granite_swa",
        hf_classes: &["GraniteSWAForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 100352,
            "hidden_size" => 2560,
            "intermediate_size" => 8192,
            "num_hidden_layers" => 24,
            "num_attention_heads" => 20,
            "num_key_value_heads" => 4,
            "max_position_embeddings" => 8192,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "bos_token_id" => 100257,
            "eos_token_id" => 100257,
            "tie_word_embeddings" => true,
            "embedding_multiplier" => 1.0,
            "logits_scaling" => 1.0,
            "residual_multiplier" => 1.0,
            "attention_multiplier" => 1.0,
            "sliding_window" => 128,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(derive_layer_types_24),
    }],
    composites: &[],
    gguf: "granite_swa",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, SWA_TENSORS],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params,
    extra: llama::rope_freqs,
    hooks: Hooks::NONE,
};

/// `GraniteMoeSWAForCausalLM` (arch `granite_swa`).
pub const GRANITE_MOE_SWA: Arch = Arch {
    hf_names: &["GraniteMoeSWAForCausalLM"],
    model_types: &[ModelType {
        name: "granitemoe_swa",
        hf_classes: &["GraniteMoeSWAForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 32000,
            "hidden_size" => 4096,
            "intermediate_size" => 11008,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "max_position_embeddings" => 2048,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "embedding_multiplier" => 1.0,
            "logits_scaling" => 1.0,
            "residual_multiplier" => 1.0,
            "attention_multiplier" => 1.0,
            "num_local_experts" => 8,
            "num_experts_per_tok" => 2,
            "shared_intermediate_size" => 0,
            "sliding_window" => 128,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(derive_layer_types_32),
    }],
    composites: &[],
    gguf: "granite_swa",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, SWA_TENSORS],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        hook: Some(moe_hook),
        ..Rules::NONE
    },
    params: moe_params,
    extra: llama::rope_freqs,
    hooks: Hooks::NONE,
};

/// `GraniteSWAConfig.__post_init__` (24 layers by default).
fn derive_layer_types_24(cfg: &mut Map<String, Json>) -> bool {
    derive_layer_types(cfg, 24)
}

/// `GraniteMoeSWAConfig.__post_init__` (32 layers by default).
fn derive_layer_types_32(cfg: &mut Map<String, Json>) -> bool {
    derive_layer_types(cfg, 32)
}

/// The config classes' derived `layer_types` when it is absent or null: layer `i` is full
/// attention when `i % 4 == 0`, sliding otherwise.
fn derive_layer_types(cfg: &mut Map<String, Json>, default_layers: u64) -> bool {
    if cfg.get("layer_types").is_some_and(|v| !v.is_null()) {
        return true;
    }
    let n = match cfg.get("num_hidden_layers") {
        None => default_layers,
        Some(v) => match v.as_u64() {
            Some(n) => n,
            // AutoConfig's strict class refuses a non-integer layer count.
            None => return false,
        },
    }
    .min(crate::hf::config::MAX_BLOCK_COUNT);
    let types = (0..n)
        .map(|i| {
            Json::from(if i % 4 == 0 {
                "full_attention"
            } else {
                "sliding_attention"
            })
        })
        .collect();
    cfg.insert("layer_types".into(), Json::Array(types));
    true
}

/// `GraniteSWAModel.filter_tensors`: a sinks tensor gets a `.weight` suffix, then
/// Granite's filter.
fn filter(name: &str) -> Option<String> {
    if name.ends_with("sinks") {
        return granite::filter(&format!("{name}.weight"));
    }
    granite::filter(name)
}

/// `GraniteSWAModel.set_gguf_parameters`: Granite's, then the sliding window, its per-layer
/// pattern and the rope pattern.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    granite::granite_params(p)?;
    let hp = p.hp;
    let window = hp.req_u64(&["sliding_window"])?;
    p.u32(attention::SLIDING_WINDOW, window)?;
    let pattern = match p.layer_types_pattern()? {
        Some(types) if !types.is_empty() => types,
        // An empty list is false in Python: the period-4 pattern over the blocks.
        _ => (0..p.block_count()?).map(|i| i % 4 != 0).collect(),
    };
    p.bools(attention::SLIDING_WINDOW_PATTERN, pattern);
    if let Some(rope) = rope_pattern(hp)? {
        p.bools(attention::ROPE_PATTERN, rope);
    }
    Ok(())
}

/// `no_rope_layers` as booleans (`bool(x)`: 1 = RoPE, 0 = NoPE), when it is a non-empty
/// list.
fn rope_pattern(hp: &Hparams) -> Result<Option<Vec<bool>>, ConvertError> {
    let bad = |v: &Json| ConvertError::wrong_type(&hp.path, "no_rope_layers", "a list of 0/1", v);
    match hp.get("no_rope_layers") {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Array(items)) if items.is_empty() => Ok(None),
        Some(Json::Array(items)) => items
            .iter()
            .map(|x| match x {
                Json::Bool(b) => Ok(*b),
                Json::Number(n) => Ok(n.as_f64().is_some_and(|f| f != 0.0)),
                other => Err(bad(other)),
            })
            .collect::<Result<Vec<bool>, _>>()
            .map(Some),
        Some(v) => Err(bad(v)),
    }
}

/// `GraniteMoeSWAModel.set_gguf_parameters`: the SWA class's, then the shared expert's FFN
/// size when set and non-zero.
fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    params(p)?;
    if let Some(v) =
        p.hp.get("shared_intermediate_size")
            .filter(|v| granite::truthy(v))
    {
        let v = v.clone();
        p.u32_or_list(llm::EXPERT_SHARED_FEED_FORWARD_LENGTH, &v)?;
    }
    Ok(())
}

/// Checks that a merged gate+up tensor has `2 * n_ff` rows (its second-to-last dimension).
fn check_merged(name: &str, expr: &Expr, n_ff: u64) -> Result<(), ConvertError> {
    let s = expr.shape();
    if s.len() < 2 || s[s.len() - 2] != n_ff.saturating_mul(2) {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("merged gate+up tensor of shape {s:?} is not 2 * {n_ff} rows"),
        });
    }
    Ok(())
}

/// `GraniteMoeSWAModel.modify_tensors`: the experts and the shared MLP, their gate and up
/// halves kept fused.
fn moe_hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    const ROUTED_GATE_UP: [&str; 2] = [
        "block_sparse_moe.experts.gate_up_proj",
        "block_sparse_moe.input_linear.weight",
    ];
    let out = |base: &str, expr: Expr| -> Result<Modified, ConvertError> {
        let bid = block_id(&name).ok_or_else(|| ConvertError::Tensor {
            name: name.clone(),
            problem: "an expert tensor outside a numbered block".into(),
        })?;
        Ok(Modified::Out(vec![(
            format!("blk.{bid}.{base}.weight"),
            expr,
        )]))
    };
    if ROUTED_GATE_UP.iter().any(|s| name.ends_with(s)) {
        check_merged(&name, &expr, hp.req_u64(&["intermediate_size"])?)?;
        return out("ffn_gate_up_exps", expr);
    }
    if name.ends_with("block_sparse_moe.experts.down_proj") {
        return out("ffn_down_exps", expr);
    }
    if name.ends_with("shared_mlp.input_linear.weight") {
        // `hparams.get("shared_intermediate_size", intermediate_size)`: a key that is
        // present wins, whatever its value.
        let n_ff = match hp.get("shared_intermediate_size") {
            Some(_) => hp.req_u64(&["shared_intermediate_size"])?,
            None => hp.req_u64(&["intermediate_size"])?,
        };
        check_merged(&name, &expr, n_ff)?;
        return out("ffn_up_shexp", expr);
    }
    if name.ends_with("shared_mlp.output_linear.weight") {
        return out("ffn_down_shexp", expr);
    }
    Ok(Modified::Pass(name, expr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinks_get_a_weight_suffix() {
        assert_eq!(
            filter("model.layers.3.self_attn.sinks").as_deref(),
            Some("model.layers.3.self_attn.sinks.weight")
        );
        assert_eq!(filter("encoder.layers.0.x.weight"), None);
    }

    #[test]
    fn missing_layer_types_are_full_every_fourth_layer() {
        let mut cfg = Map::new();
        cfg.insert("num_hidden_layers".into(), Json::from(6));
        assert!(derive_layer_types_24(&mut cfg));
        let types: Vec<&str> = cfg["layer_types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "full_attention",
                "sliding_attention",
                "sliding_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention"
            ]
        );
        let mut absent = Map::new();
        assert!(derive_layer_types_32(&mut absent));
        assert_eq!(absent["layer_types"].as_array().unwrap().len(), 32);
        let mut kept = Map::new();
        kept.insert(
            "layer_types".into(),
            serde_json::json!(["sliding_attention"]),
        );
        assert!(derive_layer_types_24(&mut kept));
        assert_eq!(
            kept["layer_types"],
            serde_json::json!(["sliding_attention"])
        );
    }
}
