//! `DeepseekOCRForCausalLM`'s and `UnlimitedOCRForCausalLM`'s text half (arch `deepseek2-ocr`, `DeepseekV2Model` in
//! `conversion/deepseek.py` under an OCR root class).
//!
//! DeepSeek-OCR's language model is DeepSeek-V2 without latent attention (`use_mla` false:
//! plain q/k/v projections) in the config's `language_config`, which the reference reads as
//! `text_config`; that sub-config names `DeepseekV2ForCausalLM` itself, so the DeepSeek-V2
//! class converts it and switches to this architecture when the root names an OCR class
//! (DeepSeek-OCR, DeepSeek-OCR-2, Unlimited-OCR). Then the generic hparams keep the real
//! KV head count (no MQA), `rms_norm_eps` defaults to 1e-6, no MLA sizes are written, and a
//! sliding window (`sliding_window_size` or `sliding_window`) is, for metadata. The class
//! writes a default chat template (the messages' contents concatenated) right after the
//! architecture, which a tokenizer's own template then replaces in place. The SAM and
//! Qwen2 vision towers (`sam_model`, `qwen2_model`) are dropped with the other multimodal
//! tensors.

use ggufkit::gguf::keys::{attention, llm, mla, rope, tokenizer};
use ggufkit::gguf::Value;
use serde_json::Value as Json;

use super::deepseek2::{truthy, DEEPSEEK_EXPERTS, MLA_TENSORS};
use super::{Arch, Extra, Hooks, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The root classes whose DeepSeek-V2 text model is converted as `deepseek2-ocr`.
const OCR_CLASSES: &[&str] = &[
    "DeepseekOCRForCausalLM",
    "DeepseekOCR2ForCausalLM",
    "UnlimitedOCRForCausalLM",
];

/// The chat template the class writes when the tokenizer has none.
const DEFAULT_CHAT_TEMPLATE: &str = "{% for m in messages %}{{m['content']}}{% endfor %}";

/// The tensors beyond [`DECODER`] and [`MLA_TENSORS`] (gguf-py's `deepseek2-ocr` list: no
/// next-token-prediction block).
const OCR_TENSORS: &[Tensor] = &[
    Tensor::AttnQkv,
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnUpShexp,
    Tensor::FfnExpProbsB,
];

/// DeepSeek-OCR's text model.
pub const DEEPSEEK2_OCR: Arch = Arch {
    hf_names: &["DeepseekOCRForCausalLM", "UnlimitedOCRForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "deepseek2-ocr",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, MLA_TENSORS, OCR_TENSORS],
    tensor_overrides: &[],
    filter: drop_vision_towers,
    rules: Rules {
        experts: &[DEEPSEEK_EXPERTS],
        hook: Some(super::deepseek2::hook),
        ..Rules::NONE
    },
    params,
    extra: default_chat_template,
    hooks: Hooks::NONE,
};

/// `DeepseekV2Model.filter_tensors`: the OCR checkpoints' SAM and Qwen2 towers are dropped.
pub(super) fn drop_vision_towers(name: &str) -> Option<String> {
    (!name.contains("sam_model") && !name.contains("qwen2_model")).then(|| name.to_string())
}

/// The DeepSeek-V2 class's switch: a root config naming an OCR class makes it this
/// description.
pub(super) fn when_ocr(hp: &Hparams) -> Result<Option<&'static Arch>, ConvertError> {
    let root = hp
        .raw
        .get("architectures")
        .and_then(|a| a.get(0))
        .and_then(Json::as_str);
    Ok(root
        .is_some_and(|r| OCR_CLASSES.contains(&r))
        .then_some(&DEEPSEEK2_OCR))
}

/// The class's constructor writes the default chat template right after the architecture.
fn default_chat_template(_: &Hparams) -> Result<Extra, ConvertError> {
    Ok(Extra {
        tensors: Vec::new(),
        early_kvs: vec![(
            tokenizer::CHAT_TEMPLATE.to_string(),
            Value::from(DEFAULT_CHAT_TEMPLATE),
        )],
    })
}

/// `DeepseekV2Model.set_gguf_parameters` for an OCR model.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let mut eps = p.hp.clone();
    eps.map
        .entry("rms_norm_eps".to_string())
        .or_insert(Json::from(1e-6));
    p.with_hparams(&eps).generic()?;
    let hp = p.hp;
    let dense = match hp.get("first_k_dense_replace") {
        None | Some(Json::Null) => {
            if hp.get("n_routed_experts").is_none_or(Json::is_null) {
                hp.req_u64(&["num_hidden_layers"])?
            } else {
                0
            }
        }
        Some(_) => hp.req_u64(&["first_k_dense_replace"])?,
    };
    p.u32(llm::LEADING_DENSE_BLOCK_COUNT, dense)?;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    if let Some(q) = hp.find_u64(&["q_lora_rank"])? {
        p.u32(mla::Q_LORA_RANK, q)?;
    }
    p.req_u32(
        llm::EXPERT_FEED_FORWARD_LENGTH,
        &["moe_intermediate_size", "intermediate_size"],
    )?;
    if let Some(n) = hp.find_u64(&["n_routed_experts"])? {
        p.u32(llm::EXPERT_COUNT, n)?;
    }
    let shared = hp.find_u64(&["n_shared_experts"])?.unwrap_or(0);
    p.u32(llm::EXPERT_SHARED_COUNT, shared)?;
    if let Some(s) = hp.find_f64(&["routed_scaling_factor"])? {
        p.f32(mla::EXPERT_WEIGHTS_SCALE, s);
    }
    if truthy(hp.get("norm_topk_prob")) {
        p.bool(mla::EXPERT_WEIGHTS_NORM, true);
    }
    p.req_u32(rope::DIMENSION_COUNT, &["qk_rope_head_dim"])?;
    sliding_window(p)?;
    if let Some(m) = hp.rope.get("mscale_all_dim").filter(|v| !v.is_null()) {
        let m = m.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "rope mscale_all_dim", "a number", m)
        })?;
        p.f32(
            ggufkit::gguf::keys::extra::ROPE_SCALING_YARN_LOG_MUL,
            0.1 * m,
        );
    }
    Ok(())
}

/// `sliding_window_size or sliding_window`, written when truthy.
fn sliding_window(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let pick = ["sliding_window_size", "sliding_window"]
        .iter()
        .find_map(|k| hp.get(k).filter(|v| truthy(Some(v))).map(|v| (*k, v)));
    if let Some((key, v)) = pick {
        let n = crate::hf::config::json_u64(v)
            .ok_or_else(|| ConvertError::wrong_type(&hp.path, key, "a positive integer", v))?;
        p.u32(attention::SLIDING_WINDOW, n)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(cfg: Json) -> Hparams {
        crate::hf::config::from_json(cfg, "config.json".into()).unwrap()
    }

    #[test]
    fn an_ocr_root_switches_the_deepseek_v2_text_model() {
        let ocr = hp(serde_json::json!({
            "architectures": ["DeepseekOCR2ForCausalLM"],
            "language_config": {"architectures": ["DeepseekV2ForCausalLM"]},
        }));
        assert!(when_ocr(&ocr).unwrap().is_some());
        let plain = hp(serde_json::json!({"architectures": ["DeepseekV2ForCausalLM"]}));
        assert!(when_ocr(&plain).unwrap().is_none());
    }

    #[test]
    fn the_vision_towers_are_dropped() {
        assert!(drop_vision_towers("model.sam_model.blocks.0.attn.qkv.weight").is_none());
        assert!(drop_vision_towers("model.qwen2_model.layers.0.mlp.weight").is_none());
        assert!(drop_vision_towers("model.layers.0.mlp.gate_proj.weight").is_some());
    }
}
