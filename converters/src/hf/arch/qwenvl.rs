//! The text models of the Qwen vision-language classes: `Qwen2VLForConditionalGeneration` /
//! `Qwen2_5_VLForConditionalGeneration` (arch `qwen2vl`, `Qwen2VLModel` in
//! `conversion/qwenvl.py`), `Qwen3VLForConditionalGeneration` (arch `qwen3vl`,
//! `Qwen3VLTextModel` in `conversion/qwen3vl.py`) and `Qwen3VLMoeForConditionalGeneration`
//! (arch `qwen3vlmoe`, `Qwen3VLMoeTextModel`, a `Qwen3MoeModel`).
//!
//! Qwen2-VL's text model is Qwen2's decoder under another architecture name: the generic
//! hparams (with the M-RoPE `rope.dimension_sections` from `mrope_section`), no pooling KV,
//! Qwen2's vocabulary path. Qwen3-VL's is Qwen3's (q/k norms, the reranker refusal) plus
//! `n_deepstack_layers`, the number of the vision tower's `deepstack_visual_indexes`. Both
//! strip a `thinker.` level from tensor names (Omni checkpoints); the towers' tensors are
//! dropped by the generic multimodal filter.
//!
//! Qwen3-VL-MoE's text model is Qwen3-MoE's (GPT-2 BPE vocabulary, the expert FFN size; no
//! `norm_topk_prob` KV: llama.cpp's `qwen3vlmoe` always renormalizes the top-k weights) plus
//! the deepstack count of the root `vision_config` only. Its experts come fused and
//! input-major (the hub layout): `mlp.experts.gate_up_proj` `[n_expert, n_embd, 2 * n_ff]`
//! is split into gate and up halves along the last axis and each transposed, and
//! `mlp.experts.down_proj` `[n_expert, n_ff, n_embd]` is transposed; per-expert checkpoints
//! are stacked as Qwen3-MoE's. A dense layer (`mlp_only_layers`, `decoder_sparse_step`) has
//! no tensor in the `qwen3vlmoe` list and is refused, as by the reference.
//!
//! transformers 5 builds Qwen2-VL's and Qwen2.5-VL's `text_config` from the root keys when a
//! (hub) config.json is flat ([`TextType::Flat`]).

use ggufkit::gguf::keys::llm;
use serde_json::Value as Json;

use super::qwen::{moe_params, QWEN3, QWEN_EXPERTS};
use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules, TextType};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `Qwen2VLTextConfig` / `Qwen2_5_VLTextConfig`'s defaults (transformers 5; the same).
macro_rules! qwen2vl_text {
    ($name:literal) => {
        ModelType {
            name: $name,
            hf_classes: &[
                "Qwen2VLForConditionalGeneration",
                "Qwen2VLModel",
                "Qwen2_5_VLForConditionalGeneration",
            ],
            defaults: defaults! {
                "vocab_size" => 152064,
                "hidden_size" => 8192,
                "intermediate_size" => 29568,
                "num_hidden_layers" => 80,
                "num_attention_heads" => 64,
                "num_key_value_heads" => 8,
                "max_position_embeddings" => 32768,
                "rms_norm_eps" => 1e-5,
                "rope_theta" => 1000000.0,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        }
    };
}

/// The text model of Qwen2-VL and Qwen2.5-VL (arch `qwen2vl`).
pub const QWEN2VL: Arch = Arch {
    // `Qwen2VLModel`, the base model (no LM head), is registered for the text model too, and
    // so is Qwen2.5-Omni (`Qwen2_5OmniModel`): its thinker's `text_config` (the generic
    // `thinker_config` rename) and `thinker.` tensors; the talker and token2wav are dropped
    // by the generic multimodal filter.
    hf_names: &[
        "Qwen2VLForConditionalGeneration",
        "Qwen2VLModel",
        "Qwen2_5_VLForConditionalGeneration",
        "Qwen2_5OmniModel",
    ],
    model_types: &[
        qwen2vl_text!("qwen2_vl_text"),
        qwen2vl_text!("qwen2_5_vl_text"),
    ],
    composites: &[
        ("qwen2_vl", TextType::Flat("qwen2_vl_text")),
        ("qwen2_5_vl", TextType::Flat("qwen2_5_vl_text")),
    ],
    gguf: "qwen2vl",
    vocab: VocabKind::Qwen2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: strip_thinker_prefix,
    rules: Rules::NONE,
    params: |p| p.generic(),
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The text model of Qwen3-VL (arch `qwen3vl`).
pub const QWEN3VL: Arch = Arch {
    hf_names: &["Qwen3VLForConditionalGeneration"],
    model_types: &[ModelType {
        name: "qwen3_vl_text",
        hf_classes: &["Qwen3VLForConditionalGeneration"],
        defaults: defaults! {
            "vocab_size" => 151936,
            "hidden_size" => 4096,
            "intermediate_size" => 22016,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 32,
            "head_dim" => 128,
            "max_position_embeddings" => 128000,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 500000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[("qwen3_vl", TextType::Fixed("qwen3_vl_text"))],
    gguf: "qwen3vl",
    vocab: VocabKind::Qwen2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: strip_thinker,
    rules: Rules::NONE,
    params: qwen3vl_params,
    extra: QWEN3.extra,
    hooks: Hooks::NONE,
};

/// The text model of Qwen3-VL-MoE (arch `qwen3vlmoe`).
pub const QWEN3VLMOE: Arch = Arch {
    hf_names: &["Qwen3VLMoeForConditionalGeneration"],
    model_types: &[ModelType {
        name: "qwen3_vl_moe_text",
        hf_classes: &["Qwen3VLMoeForConditionalGeneration"],
        // `Qwen3VLMoeTextConfig` (transformers 5): `num_experts` is stored as
        // `num_local_experts`, `head_dim` is `hidden_size / num_attention_heads` when unset.
        defaults: defaults! {
            "vocab_size" => 151936,
            "hidden_size" => 2048,
            "intermediate_size" => 5632,
            "num_hidden_layers" => 24,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 16,
            "max_position_embeddings" => 128000,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 500000.0,
            "moe_intermediate_size" => 1408,
            "num_experts_per_tok" => 4,
            "num_local_experts" => 60,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(super::num_experts_alias),
    }],
    composites: &[("qwen3_vl_moe", TextType::Fixed("qwen3_vl_moe_text"))],
    gguf: "qwen3vlmoe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[MOE_DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: strip_thinker,
    rules: Rules {
        // The class's own split of the fused experts replaces Qwen2-MoE's (which would
        // read them output-major); per-expert tensors are stacked as Qwen2-MoE's.
        hook: Some(split_fused_experts),
        experts: &[QWEN_EXPERTS],
        ..Rules::NONE
    },
    params: qwen3vlmoe_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn terr(name: &str, problem: String) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem,
    }
}

/// `Qwen3VLMoeTextModel.modify_tensors`: the input-major fused experts. A name ending in
/// `mlp.experts.down_proj` (with or without `.weight`) is transposed to `[n_expert, n_embd,
/// n_ff]`; `mlp.experts.gate_up_proj` (`[n_expert, n_embd, 2 * n_ff]`) is halved along its
/// last axis into `gate_proj` and `up_proj`, each transposed. Both are 3-D (the reference's
/// `permute(0, 2, 1)`); other shapes are refused with the tensor named.
fn split_fused_experts(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let is = |part: &str| {
        name.ends_with(&format!("mlp.experts.{part}"))
            || name.ends_with(&format!("mlp.experts.{part}.weight"))
    };
    let (down, gate_up) = (is("down_proj"), is("gate_up_proj"));
    if !down && !gate_up {
        return Ok(Modified::Pass(name, expr));
    }
    let s = expr.shape().to_vec();
    if down {
        if s.len() != 3 {
            return Err(terr(
                &name,
                format!("fused down_proj of shape {s:?}: expected [n_expert, n_ff, n_embd]"),
            ));
        }
        let mapped = if name.ends_with(".weight") {
            name.clone()
        } else {
            format!("{name}.weight")
        };
        let t = expr.transpose_last2(&name)?;
        return Ok(Modified::Out(vec![(mapped, t)]));
    }
    if s.len() != 3 || !s[2].is_multiple_of(2) {
        return Err(terr(
            &name,
            format!("unexpected gate_up_proj shape {s:?}: expected [n_expert, n_embd, 2 * n_ff]"),
        ));
    }
    let half = s[2] / 2;
    let gate = expr.clone().narrow(&name, 2, 0, half)?;
    let up = expr.narrow(&name, 2, half, half)?;
    // `name.removesuffix(".weight").rsplit(".", 1)[0]`: the `mlp.experts` prefix.
    let base = name.strip_suffix(".weight").unwrap_or(&name);
    let base = base.rsplit_once('.').map_or(base, |(b, _)| b);
    Ok(Modified::Out(vec![
        (
            format!("{base}.gate_proj.weight"),
            gate.transpose_last2(&name)?,
        ),
        (format!("{base}.up_proj.weight"), up.transpose_last2(&name)?),
    ]))
}

/// `Qwen3VLMoeTextModel.set_gguf_parameters`: Qwen2-MoE's hparams, then the number of
/// deepstack layers of the root `vision_config` (not an Omni thinker's).
fn qwen3vlmoe_params(p: &mut Params) -> Result<(), ConvertError> {
    moe_params(p)?;
    let n = deepstack_layers(p.hp, p.hp.get("vision_config"), typed_vision(p.hp))?;
    p.u32(llm::NUM_DEEPSTACK_LAYERS, n)
}

/// `len(vision_config.get("deepstack_visual_indexes", []))`. With `typed` (the root
/// `vision_config` of a `qwen3_vl` / `qwen3_vl_moe` config, which AutoConfig builds as a
/// vision config class) an absent or null config, or one without the key, has the class
/// default (`[8, 16, 24]`); otherwise (an Omni thinker's, a config AutoConfig does not know)
/// the dict is read as written. What the reference cannot take the length of is refused.
fn deepstack_layers(hp: &Hparams, vision: Option<&Json>, typed: bool) -> Result<u64, ConvertError> {
    let bad = |what: String| Err(ConvertError::format(&hp.path, None, what));
    match vision {
        None | Some(Json::Null) if typed => Ok(DEFAULT_DEEPSTACK_LAYERS),
        None => Ok(0),
        Some(Json::Object(m)) => match m.get("deepstack_visual_indexes") {
            None if typed => Ok(DEFAULT_DEEPSTACK_LAYERS),
            None => Ok(0),
            Some(Json::Array(a)) => Ok(a.len() as u64),
            Some(other) => bad(format!(
                "vision_config.deepstack_visual_indexes is {other}, not a list"
            )),
        },
        Some(other) => bad(format!("vision_config is {other}, not an object")),
    }
}

/// Whether the root `vision_config` is built by AutoConfig (a `qwen3_vl` / `qwen3_vl_moe`
/// config).
fn typed_vision(hp: &Hparams) -> bool {
    matches!(
        hp.raw.get("model_type").and_then(Json::as_str),
        Some("qwen3_vl" | "qwen3_vl_moe")
    )
}

/// `Qwen3VLVisionConfig` / `Qwen3VLMoeVisionConfig`'s `deepstack_visual_indexes`
/// (`[8, 16, 24]`): three layers.
const DEFAULT_DEEPSTACK_LAYERS: u64 = 3;

/// `Qwen2VLModel.filter_tensors`: drops a leading `thinker.` (and, as the reference's
/// `replace`, every other occurrence in such a name).
fn strip_thinker_prefix(name: &str) -> Option<String> {
    Some(if name.starts_with("thinker.") {
        name.replace("thinker.", "")
    } else {
        name.to_string()
    })
}

/// Drops the `thinker.` level of Omni checkpoints' names.
fn strip_thinker(name: &str) -> Option<String> {
    Some(name.replace("thinker.", ""))
}

/// Qwen3's hparams, then the number of deepstack layers (the vision config's
/// `deepstack_visual_indexes`; the thinker's vision config in an Omni config).
fn qwen3vl_params(p: &mut Params) -> Result<(), ConvertError> {
    (QWEN3.params)(p)?;
    let n = match p.hp.get("thinker_config") {
        Some(t) => deepstack_layers(p.hp, t.get("vision_config"), false)?,
        None => deepstack_layers(p.hp, p.hp.get("vision_config"), typed_vision(p.hp))?,
    };
    p.u32(llm::NUM_DEEPSTACK_LAYERS, n)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn hp(cfg: Json) -> Hparams {
        crate::hf::config::from_json(cfg, "config.json".into()).unwrap()
    }

    fn moe() -> Hparams {
        hp(
            json!({"architectures": ["Qwen3VLMoeForConditionalGeneration"],
                  "model_type": "qwen3_vl_moe", "text_config": {}}),
        )
    }

    #[test]
    fn fused_experts_split_like_the_reference() {
        // 1 expert, n_embd 2, 2 * n_ff = 4: rows are inputs, columns gate (0, 1) then up (2, 3).
        let x: Vec<f32> = (0..8).map(|i| i as f32).collect();
        let e = Expr::constant(x, vec![1, 2, 4]);
        let name = "model.layers.1.mlp.experts.gate_up_proj".to_string();
        let Modified::Out(out) = split_fused_experts(&moe(), name, e).unwrap() else {
            panic!("not split")
        };
        assert_eq!(out[0].0, "model.layers.1.mlp.experts.gate_proj.weight");
        assert_eq!(out[1].0, "model.layers.1.mlp.experts.up_proj.weight");
        assert_eq!(out[0].1.shape(), &[1, 2, 2]);
        assert_eq!(out[0].1.eval_f32().unwrap(), [0., 4., 1., 5.]);
        assert_eq!(out[1].1.eval_f32().unwrap(), [2., 6., 3., 7.]);
        // With `.weight`: the same names.
        let e = Expr::constant(vec![0.; 8], vec![1, 2, 4]);
        let name = "model.layers.0.mlp.experts.gate_up_proj.weight".to_string();
        let Modified::Out(out) = split_fused_experts(&moe(), name, e).unwrap() else {
            panic!("not split")
        };
        assert_eq!(out[1].0, "model.layers.0.mlp.experts.up_proj.weight");

        // down_proj [1, n_ff 3, n_embd 2] -> [1, 2, 3], `.weight` added, written as it is.
        let down = Expr::constant(vec![0., 1., 2., 3., 4., 5.], vec![1, 3, 2]);
        let name = "model.layers.1.mlp.experts.down_proj".to_string();
        let Modified::Out(out) = split_fused_experts(&moe(), name, down).unwrap() else {
            panic!("not passed")
        };
        assert_eq!(out[0].0, "model.layers.1.mlp.experts.down_proj.weight");
        assert_eq!(out[0].1.shape(), &[1, 2, 3]);
        assert_eq!(out[0].1.eval_f32().unwrap(), [0., 2., 4., 1., 3., 5.]);

        // Anything else goes on (per-expert tensors are stacked later).
        let e = Expr::constant(vec![0.; 4], vec![2, 2]);
        let name = "model.layers.0.mlp.experts.0.down_proj.weight".to_string();
        assert!(matches!(
            split_fused_experts(&moe(), name, e).unwrap(),
            Modified::Pass(..)
        ));
    }

    #[test]
    fn odd_or_flat_fused_experts_are_refused_with_the_name() {
        for (name, shape) in [
            ("model.layers.0.mlp.experts.gate_up_proj", vec![1, 2, 3]),
            ("model.layers.0.mlp.experts.gate_up_proj", vec![2, 4]),
            ("model.layers.0.mlp.experts.gate_up_proj", vec![1, 1, 2, 4]),
            ("model.layers.0.mlp.experts.down_proj", vec![2, 4]),
        ] {
            let n: u64 = shape.iter().product();
            let e = Expr::constant(vec![0.; n as usize], shape.clone());
            let err = match split_fused_experts(&moe(), name.to_string(), e) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{name} {shape:?} accepted"),
            };
            assert!(err.contains(name), "{err}");
        }
    }

    #[test]
    fn deepstack_count_follows_autoconfig() {
        let typed = |v: Option<Json>| {
            let mut cfg = json!({"architectures": ["Qwen3VLMoeForConditionalGeneration"],
                                 "model_type": "qwen3_vl_moe", "text_config": {}});
            if let Some(v) = v {
                cfg["vision_config"] = v;
            }
            let h = hp(cfg);
            deepstack_layers(&h, h.get("vision_config"), typed_vision(&h))
        };
        assert_eq!(typed(None).unwrap(), 3);
        assert_eq!(typed(Some(Json::Null)).unwrap(), 3);
        assert_eq!(typed(Some(json!({"depth": 2}))).unwrap(), 3);
        assert_eq!(
            typed(Some(json!({"deepstack_visual_indexes": [1, 2]}))).unwrap(),
            2
        );
        assert_eq!(
            typed(Some(json!({"deepstack_visual_indexes": []}))).unwrap(),
            0
        );
        assert!(typed(Some(json!({"deepstack_visual_indexes": 3}))).is_err());
        assert!(typed(Some(json!([1]))).is_err());
        // A config AutoConfig does not know (no model_type) is read as written.
        let h = hp(json!({"architectures": ["Qwen3VLMoeForConditionalGeneration"]}));
        assert_eq!(deepstack_layers(&h, None, typed_vision(&h)).unwrap(), 0);
        assert!(deepstack_layers(&h, Some(&Json::Null), typed_vision(&h)).is_err());
    }
}
