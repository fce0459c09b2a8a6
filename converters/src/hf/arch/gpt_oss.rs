//! `GptOssForCausalLM` (arch `gpt-oss`, `GptOssModel` in `conversion/gpt_oss.py`), from
//! unquantized (bf16) checkpoints.
//!
//! The experts come fused per layer: `mlp.experts.gate_up_proj` `[n_expert, n_embd,
//! 2 * n_ff]` with gate and up *interleaved* along the last dimension (gate at even
//! columns, up at odd ones) and `down_proj` `[n_expert, n_ff, n_embd]`, both stored
//! input-major: they are transposed (`transpose(-1, -2)`), then gate/up split by taking
//! every other row; their biases (`gate_up_proj_bias` `[n_expert, 2 * n_ff]`) are split
//! the same way. Attention sinks (`self_attn.sinks`, one per head) become
//! `attn_sinks.weight`, the router `ffn_gate_inp`, `post_attention_layernorm` the
//! attention post-norm. The hparams add the sliding window and the expert FFN size (the
//! per-layer sliding/full pattern is not written). The experts of MXFP4 checkpoints
//! (`*_blocks` / `*_scales`, as OpenAI publishes gpt-oss) are repacked into GGML MXFP4
//! blocks without dequantizing (`prequant::gpt_oss_mxfp4`).

use ggufkit::gguf::keys::{attention, llm};
use serde_json::Value as Json;

use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// gpt-oss.
pub const GPT_OSS: Arch = Arch {
    hf_names: &["GptOssForCausalLM"],
    model_types: &[ModelType {
        name: "gpt_oss",
        hf_classes: &["GptOssForCausalLM"],
        defaults: defaults! {
            "num_hidden_layers" => 36,
            "num_local_experts" => 128,
            "vocab_size" => 201088,
            "hidden_size" => 2880,
            "intermediate_size" => 2880,
            "head_dim" => 64,
            "num_attention_heads" => 64,
            "num_key_value_heads" => 8,
            "sliding_window" => 128,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "num_experts_per_tok" => 4,
            "attention_bias" => true,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "gpt-oss",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
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
        Tensor::AttnSinks,
        Tensor::FfnGateInp,
        Tensor::FfnGateExp,
        Tensor::FfnDownExp,
        Tensor::FfnUpExp,
    ]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        mxfp4: Some(crate::hf::prequant::gpt_oss_mxfp4),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `GptOssModel.filter_tensors`: a sinks tensor gets a `.weight` suffix.
fn filter(name: &str) -> Option<String> {
    if name.contains("sinks") {
        return Some(format!("{name}.weight"));
    }
    Some(name.to_string())
}

/// `GptOssModel.modify_tensors`. The MXFP4 pairs never get here (they are repacked before
/// the tensors are planned); like the reference, nothing is written for them.
fn hook(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let packed = name.contains("_blocks") || name.contains("_scales");
    let (mut name, mut expr) = (name, expr);
    if name.contains("down_proj") {
        if name.ends_with("_bias") {
            name = name.replace("down_proj_bias", "down_proj.bias");
        } else if !packed {
            name = name.replace("down_proj", "down_proj.weight");
            expr = expr.transpose_last2(&name)?;
        } else {
            return Ok(Modified::Drop);
        }
    }
    if !name.contains("gate_up_proj") {
        return Ok(Modified::Pass(name, expr));
    }
    if name.ends_with("_bias") {
        let last = expr.shape().len().saturating_sub(1);
        let gate = expr.clone().strided(&name, last, 0, 2)?;
        let up = expr.strided(&name, last, 1, 2)?;
        return Ok(Modified::Out(vec![
            (name.replace("gate_up_proj_bias", "gate_proj.bias"), gate),
            (name.replace("gate_up_proj_bias", "up_proj.bias"), up),
        ]));
    }
    if packed {
        return Ok(Modified::Drop);
    }
    let gate_name = name.replace("gate_up_proj", "gate_proj.weight");
    let up_name = name.replace("gate_up_proj", "up_proj.weight");
    let t = expr.transpose_last2(&name)?;
    if t.shape().len() != 3 {
        return Err(ConvertError::Tensor {
            name,
            problem: format!(
                "expected [n_expert, n_embd, 2 * n_ff], found {:?}",
                t.shape()
            ),
        });
    }
    let gate = t.clone().strided(&name, 1, 0, 2)?;
    let up = t.strided(&name, 1, 1, 2)?;
    Ok(Modified::Out(vec![(gate_name, gate), (up_name, up)]))
}

/// `GptOssModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let window = p.hp.get("sliding_window").cloned().unwrap_or(Json::Null);
    p.u32_or_list(attention::SLIDING_WINDOW, &window)?;
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["intermediate_size"])
}
