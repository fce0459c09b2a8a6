//! `Glm4MoeForCausalLM` and the text model of `Glm4vMoeForConditionalGeneration` (GLM-4.5V)
//! (arch `glm4moe`, `Glm4MoeModel` in `conversion/glm.py`).
//!
//! GLM-4.5: `first_k_dense_replace` dense blocks, then routed experts (per-expert
//! `down/gate/up_proj` stacked in that order) with shared experts and the expert selection
//! bias; q/k/v biases, optional q/k norms, `post_attention_layernorm` as the attention
//! post-norm. The next-token-prediction (MTP) blocks are kept: the block count is
//! `num_hidden_layers + num_nextn_predict_layers`, the MTP block is an ordinary decoder
//! block plus `eh_proj`, `enorm`, `hnorm`, `shared_head.*` (written under `blk.N.nextn.`),
//! and `nextn_predict_layers` is written. The rotary dimensions are `head_dim *
//! partial_rotary_factor` (default 0.5), the gating function always sigmoid. The
//! vocabulary is GPT-2 BPE with GLM's special tokens (`_set_vocab_glm`).

use ggufkit::gguf::keys::{llm, mla, rope};
use serde_json::Value as Json;

use super::deepseek2::MOE_NEXTN_TENSORS;
use super::{keep, no_extra, Arch, Experts, HeadDim, Hooks, ModelType, MtpExport, Rules, TextType};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

/// gguf-py's `MODEL_TENSORS[GLM4_MOE]`, with the NextN (MTP) block's tensors.
pub(super) const GLM4MOE_TENSORS: &[&[Tensor]] = &[
    &[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnPostNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ],
    MOE_NEXTN_TENSORS,
];

/// GLM-4.5 (MoE).
pub const GLM4MOE: Arch = Arch {
    hf_names: &["Glm4MoeForCausalLM", "Glm4vMoeForConditionalGeneration"],
    model_types: &[
        ModelType {
            name: "glm4_moe",
            hf_classes: &["Glm4MoeForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 151552,
                "hidden_size" => 4096,
                "intermediate_size" => 10944,
                "num_hidden_layers" => 46,
                "num_attention_heads" => 96,
                "num_key_value_heads" => 8,
                "max_position_embeddings" => 131072,
                "rms_norm_eps" => 1e-5,
                "rope_theta" => 10000.0,
                "partial_rotary_factor" => 0.5,
                "attention_bias" => false,
                "moe_intermediate_size" => 1408,
                "num_experts_per_tok" => 8,
                "n_shared_experts" => 1,
                "n_routed_experts" => 128,
                "routed_scaling_factor" => 1.0,
                "n_group" => 1,
                "topk_group" => 1,
                "first_k_dense_replace" => 1,
                "norm_topk_prob" => true,
                "use_qk_norm" => false,
                "num_nextn_predict_layers" => 1,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: None,
            prepare: None,
        },
        // `Glm4vMoeTextConfig`: no q/k norms and no next-token-prediction layers unless the
        // config lists them; its rope is NeoX-ordered already (no q/k regrouping).
        ModelType {
            name: "glm4v_moe_text",
            hf_classes: &["Glm4vMoeForConditionalGeneration"],
            defaults: defaults! {
                "vocab_size" => 151424,
                "hidden_size" => 4096,
                "intermediate_size" => 10944,
                "num_hidden_layers" => 46,
                "num_attention_heads" => 96,
                "num_key_value_heads" => 8,
                "max_position_embeddings" => 65536,
                "rms_norm_eps" => 1e-5,
                "rope_theta" => 10000.0,
                "partial_rotary_factor" => 0.5,
                "attention_bias" => true,
                "moe_intermediate_size" => 1408,
                "num_experts_per_tok" => 8,
                "n_shared_experts" => 1,
                "n_routed_experts" => 128,
                "routed_scaling_factor" => 1.0,
                "n_group" => 1,
                "topk_group" => 1,
                "first_k_dense_replace" => 1,
                "norm_topk_prob" => true,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: None,
            prepare: None,
        },
    ],
    composites: &[("glm4v_moe", TextType::Fixed("glm4v_moe_text"))],
    gguf: "glm4moe",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: GLM4MOE_TENSORS,
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[GLM_EXPERTS],
        nextn_blocks: true,
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp: is_past_main_layers,
            shared: GLM_MTP_SHARED,
        }),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}`, stacked in that order.
pub(super) const GLM_EXPERTS: Experts = Experts {
    marker: "mlp.experts",
    count_keys: &["n_routed_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `Glm4MoeModel.set_gguf_parameters`.
pub(super) fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let head_dim = match hp.find_u64(&["head_dim"])? {
        Some(d) => d,
        None => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            hp.req_u64(&["hidden_size"])?
                .checked_div(heads)
                .ok_or_else(|| hp.missing(&["num_attention_heads"]))?
        }
    };
    let factor = match hp.rope.get("partial_rotary_factor") {
        None => 0.5,
        Some(v) => v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "partial_rotary_factor", "a number", v)
        })?,
    };
    p.u32(rope::DIMENSION_COUNT, (head_dim as f64 * factor) as u64)?;
    if let Some(n) = hp.find_u64(&["n_routed_experts"])? {
        p.u32(llm::EXPERT_COUNT, n)?;
    }
    if let Some(n) = hp.find_u64(&["moe_intermediate_size"])? {
        p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, n)?;
    }
    if let Some(n) = hp.find_u64(&["n_shared_experts"])? {
        p.u32(llm::EXPERT_SHARED_COUNT, n)?;
    }
    if let Some(n) = hp.find_u64(&["first_k_dense_replace"])? {
        p.u32(llm::LEADING_DENSE_BLOCK_COUNT, n)?;
    }
    // ExpertGatingFuncType.SIGMOID
    p.u32(llm::EXPERT_GATING_FUNC, 2)?;
    if let Some(s) = hp.find_f64(&["routed_scaling_factor"])? {
        p.f32(mla::EXPERT_WEIGHTS_SCALE, s);
    }
    match hp.get("norm_topk_prob") {
        None | Some(Json::Null) => {}
        Some(Json::Bool(b)) => p.bool(mla::EXPERT_WEIGHTS_NORM, *b),
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "norm_topk_prob",
                "a boolean",
                v,
            ))
        }
    }
    if let Some(n) = hp
        .find_u64(&["num_nextn_predict_layers"])?
        .filter(|_| hp.mtp != Mtp::Drop)
    {
        p.u32(mla::NEXTN_PREDICT_LAYERS, n)?;
    }
    Ok(())
}

/// The `filter_tensors` test of the GLM-4.5 family: `re.match(r"model\.layers\.(\d+)\.")`
/// with a block at or past `num_hidden_layers` (the first block-count key present).
pub(crate) fn is_past_main_layers(
    hp: &crate::hf::config::Hparams,
    name: &str,
) -> Result<bool, ConvertError> {
    let Some(rest) = name.strip_prefix("model.layers.") else {
        return Ok(false);
    };
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    if digits.is_empty() || rest.as_bytes().get(digits.len()) != Some(&b'.') {
        return Ok(false);
    }
    let n = hp
        .find_u64(crate::hf::params::BLOCK_COUNT_KEYS)?
        .ok_or_else(|| hp.missing(crate::hf::params::BLOCK_COUNT_KEYS))?;
    // An index too long for u64 is past any layer count.
    Ok(digits.parse::<u64>().map_or(true, |i| i >= n))
}

/// The tensors the GLM-4.5 family's `--mtp` keeps besides the MTP layers.
pub(crate) const GLM_MTP_SHARED: &[&str] = &[
    "model.embed_tokens.weight",
    "model.norm.weight",
    "lm_head.weight",
];

/// `_set_vocab_glm` (GLM-4.5): GPT-2 BPE with bos = `[gMASK]`, eot = `<|user|>`, unk =
/// `<|endoftext|>` and eom = `<|observation|>` when the special-token files do not set them.
pub(super) fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.gpt2_with_added_specials(|find| {
        Ok(vec![
            ("bos", find("[gMASK]")?),
            ("eot", find("<|user|>")?),
            ("unk", find("<|endoftext|>")?),
            ("eom", find("<|observation|>")?),
        ])
    })
}
