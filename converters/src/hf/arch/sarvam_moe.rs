//! `SarvamMoEForCausalLM` (arch `bailingmoe2`, `SarvamMoEModel` in
//! `conversion/bailingmoe.py`; also registered under its `auto_map` spelling
//! `modeling_sarvam_moe.SarvamMoEForCausalLM`).
//!
//! Sarvam-MoE is Ling 2.0's layout (`super::bailingmoe2`) with two differences: the rotary
//! embedding covers the whole head (the rope dimension count is overwritten, in place, with
//! `head_dim`, else `hidden_size / num_attention_heads`), and the selection bias
//! (`….expert_bias`) is made zero-mean (`t - t.mean()`, in the tensor's own dtype) before it
//! is written.
//!
//! transformers types `model_type: "sarvam_moe"` (`SarvamMoEConfig`), whose `attribute_map`
//! stores `num_experts` / `num_local_experts` as `n_routed_experts` and
//! `num_shared_experts` as `n_shared_experts`: the dict the converter reads then has
//! neither spelling it asks for, so the reference refuses every such config (a missing
//! hparam), and so does this description. A config AutoConfig cannot type (no or another
//! `model_type`) is read as written and converted.

use ggufkit::gguf::keys::rope;
use ggufkit::quantizers::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use serde_json::{Map, Value as Json};

use super::bailingmoe2::{self, BAILINGMOE2};
use super::{Arch, HeadDim, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::{Expr, Work};
use crate::hf::params::Params;
use crate::ConvertError;

/// Sarvam-MoE.
pub const SARVAM_MOE: Arch = Arch {
    hf_names: &[
        "SarvamMoEForCausalLM",
        "modeling_sarvam_moe.SarvamMoEForCausalLM",
    ],
    model_types: &[ModelType {
        name: "sarvam_moe",
        hf_classes: &[
            "SarvamMoEForCausalLM",
            "modeling_sarvam_moe.SarvamMoEForCausalLM",
        ],
        defaults: defaults! {
            "vocab_size" => 262144,
            "hidden_size" => 4096,
            "intermediate_size" => 8192,
            "num_hidden_layers" => 19,
            "num_attention_heads" => 64,
            "num_key_value_heads" => 4,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-6,
            "moe_intermediate_size" => 1024,
            "num_experts_per_tok" => 6,
            "n_shared_experts" => 1,
            "n_routed_experts" => 128,
            "routed_scaling_factor" => 2.5,
            "first_k_dense_replace" => 1,
            "norm_topk_prob" => true,
            "num_nextn_predict_layers" => 0,
            "head_dim" => 64,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(attribute_map),
    }],
    rules: Rules {
        hook: Some(zero_mean_expert_bias),
        ..BAILINGMOE2.rules
    },
    params,
    ..BAILINGMOE2
};

/// `SarvamMoEConfig.attribute_map`: the spellings config.json may use, stored (and shown
/// by `to_dict()`) under the config's own names.
fn attribute_map(cfg: &mut Map<String, Json>) -> bool {
    for (alias, attr) in [
        ("num_local_experts", "n_routed_experts"),
        ("num_mtp_layers", "num_nextn_predict_layers"),
        ("num_experts", "n_routed_experts"),
        ("num_shared_experts", "n_shared_experts"),
        ("use_qkv_bias", "attention_bias"),
    ] {
        if let Some(v) = cfg.remove(alias) {
            cfg.insert(attr.into(), v);
        }
    }
    true
}

/// `SarvamMoEModel.filter_tensors`: the selection bias (named `….expert_bias.bias` by
/// Ling 2.0's filter) minus its mean.
fn zero_mean_expert_bias(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if !name.ends_with(".expert_bias.bias") {
        return Ok(Modified::Pass(name, expr));
    }
    let values = expr.eval_f32().map_err(|e| ConvertError::Tensor {
        name: name.clone(),
        problem: e.to_string(),
    })?;
    let shape = expr.shape().to_vec();
    let centred = zero_mean(&values, expr.work());
    Ok(Modified::Pass(name, Expr::constant(centred, shape)))
}

/// `t - t.mean()` as torch computes it for a tensor of dtype `work`: the sum in f32 divided
/// by the count, rounded to the dtype, then each difference rounded to the dtype.
fn zero_mean(values: &[f32], work: Work) -> Vec<f32> {
    let round: fn(f32) -> f32 = match work {
        Work::Bf16 => |x| bf16_to_f32(f32_to_bf16(x)),
        Work::F16 => |x| f16_to_f32(f32_to_f16(x)),
        Work::F32 => |x| x,
    };
    let mut sum = 0f32;
    for v in values {
        sum += v;
    }
    let mean = round(sum / values.len().max(1) as f32);
    values.iter().map(|v| round(v - mean)).collect()
}

/// `SarvamMoEModel.set_gguf_parameters`: Ling 2.0's keys, with the rope dimension count
/// overwritten by the full head size.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    bailingmoe2::params(p)?;
    let hp = p.hp;
    let head_dim = match hp.get("head_dim") {
        Some(v) if !v.is_null() => hp.req_u64(&["head_dim"])?,
        _ => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            hp.req_u64(&["hidden_size"])?
                .checked_div(heads)
                .ok_or_else(|| hp.missing(&["num_attention_heads"]))?
        }
    };
    p.u32(rope::DIMENSION_COUNT, head_dim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_is_taken_and_subtracted_in_the_tensors_dtype() {
        // 1 + 2^-8 is not a bfloat16: the mean rounds to 1 before it is subtracted.
        let v = [1.0f32, 1.0, 1.0, 1.0078125];
        let got = zero_mean(&v, Work::Bf16);
        assert_eq!(got, vec![0.0, 0.0, 0.0, 0.0078125]);
        let got = zero_mean(&v, Work::F32);
        assert_eq!(got[0], -0.001953125);
    }

    #[test]
    fn config_spellings_are_stored_under_the_configs_names() {
        let mut cfg = serde_json::json!({"num_experts": 4, "num_shared_experts": 1})
            .as_object()
            .cloned()
            .unwrap();
        assert!(attribute_map(&mut cfg));
        assert_eq!(cfg.get("n_routed_experts"), Some(&Json::from(4)));
        assert_eq!(cfg.get("n_shared_experts"), Some(&Json::from(1)));
        assert!(cfg.get("num_experts").is_none());
    }
}
