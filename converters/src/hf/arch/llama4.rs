//! `Llama4ForCausalLM` and the text part of `Llama4ForConditionalGeneration` (arch `llama4`,
//! `Llama4Model` in `conversion/llama.py`, a `LlamaModel` subclass).
//!
//! No rotary permutation of q/k; a GPT-2 BPE vocabulary; `intermediate_size` is the experts'
//! FFN width and `intermediate_size_mlp` the dense layers' (swapped back for the KVs). The
//! routed experts come stacked input-major: `feed_forward.experts.gate_up_proj` is
//! `[n_expert, n_embd, 2 * n_ff]`, transposed and split into gate and up halves, and
//! `feed_forward.experts.down_proj` is transposed. MoE layers are every
//! `interleave_moe_layer_step`-th; the no-rope and chunked-attention layouts are not written
//! (llama.cpp derives them), except that a model whose layers are all full attention gets
//! `sliding_window = 0`.

use ggufkit::gguf::keys::{attention, llm};
use serde_json::{json, Map, Value as Json};

use super::{llama, Arch, HeadDim, Hooks, ModelType, Modified, Rules, TextType};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::json_truthy as truthy;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Llama 4 class.
pub const LLAMA4: Arch = Arch {
    hf_names: &["Llama4ForConditionalGeneration", "Llama4ForCausalLM"],
    model_types: &[ModelType {
        name: "llama4_text",
        hf_classes: &["Llama4ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 202048,
            "hidden_size" => 5120,
            "intermediate_size" => 8192,
            "intermediate_size_mlp" => 16384,
            "num_hidden_layers" => 48,
            "num_attention_heads" => 40,
            "num_key_value_heads" => 8,
            "head_dim" => 128,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 500000.0,
            "num_experts_per_tok" => 1,
            "num_local_experts" => 16,
            "interleave_moe_layer_step" => 1,
            "no_rope_layer_interval" => 4,
            "attention_chunk_size" => 8192,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(derive_layer_types),
    }],
    composites: &[("llama4", TextType::Fixed("llama4_text"))],
    gguf: "llama4",
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
        Tensor::FfnGateInp,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::FfnGateExp,
        Tensor::FfnDownExp,
        Tensor::FfnUpExp,
        Tensor::FfnGateShexp,
        Tensor::FfnDownShexp,
        Tensor::FfnUpShexp,
    ]],
    tensor_overrides: &[],
    filter: llama::filter,
    rules: Rules {
        // Inherited from LlamaModel: Mixtral-style per-expert tensors would be stacked too.
        experts: &[llama::MIXTRAL_EXPERTS],
        hook: Some(split_experts),
        ..Rules::NONE
    },
    params,
    extra: llama::rope_freqs,
    hooks: Hooks::NONE,
};

/// `Llama4TextConfig.__post_init__`: without `layer_types`, a layer is chunked attention
/// when it uses rope (`no_rope_layers`, by default every `no_rope_layer_interval`-th layer
/// has none) and `attention_chunk_size` is set, full attention otherwise. Runs before the
/// plain defaults, so it applies them itself.
fn derive_layer_types(cfg: &mut Map<String, Json>) -> bool {
    if cfg.get("layer_types").is_some_and(|v| !v.is_null()) {
        return true;
    }
    let n_layers = cfg
        .get("num_hidden_layers")
        .map_or(Some(48), json_u64)
        .unwrap_or(0)
        .min(crate::hf::config::MAX_BLOCK_COUNT);
    let chunked = match cfg.get("attention_chunk_size") {
        None => true,
        Some(v) => !v.is_null(),
    };
    let no_rope: Vec<bool> = match cfg.get("no_rope_layers").and_then(Json::as_array) {
        Some(a) if !a.is_empty() => a.iter().map(truthy).collect(),
        _ => {
            let interval = cfg
                .get("no_rope_layer_interval")
                .map_or(Some(4), json_u64)
                .unwrap_or(4);
            (0..n_layers)
                .map(|i| interval == 0 || (i + 1) % interval != 0)
                .collect()
        }
    };
    let types: Vec<Json> = no_rope
        .into_iter()
        .map(|rope| {
            json!(if rope && chunked {
                "chunked_attention"
            } else {
                "full_attention"
            })
        })
        .collect();
    cfg.insert("layer_types".into(), Json::Array(types));
    true
}

/// `Llama4Model.set_gguf_parameters`, with `intermediate_size` swapped back as its
/// `__init__` does.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let mut hp: Hparams = p.hp.clone();
    let moe = hp
        .map
        .get("intermediate_size")
        .cloned()
        .ok_or_else(|| hp.missing(&["intermediate_size"]))?;
    let mlp = hp
        .map
        .get("intermediate_size_mlp")
        .cloned()
        .ok_or_else(|| hp.missing(&["intermediate_size_mlp"]))?;
    hp.map.insert("intermediate_size_moe".into(), moe.clone());
    hp.map.insert("intermediate_size".into(), mlp);
    let mut q = p.with_hparams(&hp);
    llama::params(&mut q)?;
    q.req_u32(
        llm::INTERLEAVE_MOE_LAYER_STEP,
        &["interleave_moe_layer_step"],
    )?;
    q.u32_or_list(llm::EXPERT_FEED_FORWARD_LENGTH, &moe)?;
    match hp.get("layer_types") {
        None => {}
        // Every layer full attention (MobileLLM-style): no sliding window.
        Some(Json::Array(types)) if types.iter().all(|t| t.as_str() == Some("full_attention")) => {
            q.u32(attention::SLIDING_WINDOW, 0)?;
        }
        Some(Json::Array(_)) => {}
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "layer_types",
                "a list",
                v,
            ))
        }
    }
    Ok(())
}

fn terr(name: &str, problem: String) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem,
    }
}

/// `Llama4Model.modify_tensors`: the input-major fused experts. `gate_up_proj`
/// (`[.., n_in, 2 * n_ff]`) is transposed and split into gate and up halves; a name ending
/// in `down_proj` (the stacked experts' has no `.weight`) gets `.weight` and is transposed.
fn split_experts(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.contains("gate_up_proj") {
        let s = expr.shape().to_vec();
        let Some(&cols) = s.last().filter(|_| s.len() >= 2) else {
            return Err(terr(
                &name,
                format!("gate_up_proj of shape {s:?} cannot be split"),
            ));
        };
        if cols % 2 != 0 {
            return Err(terr(
                &name,
                format!("gate_up_proj of shape {s:?}: {cols} columns do not halve"),
            ));
        }
        // Columns first, then the transpose: the same values as the reference's
        // transpose-then-split, without materializing the whole transposed stack per half.
        let half = cols / 2;
        let axis = s.len() - 1;
        let gate = expr.clone().narrow(&name, axis, 0, half)?;
        let up = expr.narrow(&name, axis, half, half)?;
        let (gate, up) = (gate.transpose_last2(&name)?, up.transpose_last2(&name)?);
        return Ok(Modified::Out(vec![
            (name.replace("gate_up_proj", "gate_proj.weight"), gate),
            (name.replace("gate_up_proj", "up_proj.weight"), up),
        ]));
    }
    if name.ends_with("down_proj") {
        let t = expr.transpose_last2(&name)?;
        return Ok(Modified::Pass(format!("{name}.weight"), t));
    }
    Ok(Modified::Pass(name, expr))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp() -> Hparams {
        crate::hf::config::from_json(
            json!({"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text"}),
            "config.json".into(),
        )
        .unwrap()
    }

    #[test]
    fn fused_experts_split_like_transpose_then_halve() {
        // 1 expert, n_in 2, 2 * n_ff = 4: rows are inputs, columns gate (0, 1) then up (2, 3).
        let x: Vec<f32> = (0..8).map(|i| i as f32).collect();
        let e = Expr::constant(x, vec![1, 2, 4]);
        let name = "model.layers.1.feed_forward.experts.gate_up_proj".to_string();
        let Modified::Out(out) = split_experts(&hp(), name, e).unwrap() else {
            panic!("not split")
        };
        assert_eq!(
            out[0].0,
            "model.layers.1.feed_forward.experts.gate_proj.weight"
        );
        assert_eq!(
            out[1].0,
            "model.layers.1.feed_forward.experts.up_proj.weight"
        );
        assert_eq!(out[0].1.shape(), &[1, 2, 2]);
        assert_eq!(out[0].1.eval_f32().unwrap(), [0., 4., 1., 5.]);
        assert_eq!(out[1].1.eval_f32().unwrap(), [2., 6., 3., 7.]);

        let down = Expr::constant(vec![0., 1., 2., 3., 4., 5.], vec![1, 3, 2]);
        let name = "model.layers.1.feed_forward.experts.down_proj".to_string();
        let Modified::Pass(n, d) = split_experts(&hp(), name, down).unwrap() else {
            panic!("not passed")
        };
        assert_eq!(n, "model.layers.1.feed_forward.experts.down_proj.weight");
        assert_eq!(d.eval_f32().unwrap(), [0., 2., 4., 1., 3., 5.]);
    }

    #[test]
    fn odd_or_flat_gate_up_is_refused() {
        let name = "model.layers.0.feed_forward.experts.gate_up_proj".to_string();
        let odd = Expr::constant(vec![0.0; 6], vec![1, 2, 3]);
        assert!(split_experts(&hp(), name.clone(), odd).is_err());
        let flat = Expr::constant(vec![0.0; 4], vec![4]);
        assert!(split_experts(&hp(), name, flat).is_err());
    }

    #[test]
    fn layer_types_follow_the_no_rope_layout() {
        let mut cfg = Map::new();
        cfg.insert("num_hidden_layers".into(), json!(5));
        assert!(derive_layer_types(&mut cfg));
        let chunked = |cfg: &Map<String, Json>| -> Vec<bool> {
            cfg["layer_types"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t == "chunked_attention")
                .collect()
        };
        assert_eq!(chunked(&cfg), [true, true, true, false, true]);
        let mut cfg = Map::new();
        cfg.insert("num_hidden_layers".into(), json!(2));
        cfg.insert("attention_chunk_size".into(), Json::Null);
        derive_layer_types(&mut cfg);
        assert_eq!(chunked(&cfg), [false, false]);
        let mut cfg = Map::new();
        cfg.insert("no_rope_layers".into(), json!([0, 1]));
        derive_layer_types(&mut cfg);
        assert_eq!(chunked(&cfg), [false, true]);
        // An explicit list is kept.
        let mut cfg = Map::new();
        cfg.insert("layer_types".into(), json!(["full_attention"]));
        cfg.insert("num_hidden_layers".into(), json!(3));
        derive_layer_types(&mut cfg);
        assert_eq!(chunked(&cfg), [false]);
    }
}
