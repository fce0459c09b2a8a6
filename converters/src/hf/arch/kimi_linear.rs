//! `KimiLinearForCausalLM` / `KimiLinearModel` (arch `kimi-linear`, `KimiLinearModel` in
//! `conversion/kimi_linear.py`): Kimi Linear, a hybrid of Kimi Delta Attention (KDA, a gated
//! delta-rule linear attention) and multi-head latent attention (MLA), with DeepSeek-V3-style
//! routed experts.
//!
//! Which blocks are MLA is listed (1-based) in `linear_attn_config.full_attn_layers`; the
//! others are KDA. The hparams say so per block: `attention.head_count_kv` is a list with 1
//! for an MLA block (MLA is written as MQA, one KV head) and 0 for a KDA one. A KDA block
//! has q/k/v projections, each followed by a depthwise short convolution (`q_conv1d`, …,
//! stored `[channels, kernel]` or `[channels, 1, kernel]` and written as the 4-D
//! `[1, channels, 1, kernel]` the runtime reads), the forget gate's low-rank pair
//! (`f_a_proj`, `f_b_proj`), its time-step bias (`dt_bias`, written as `ssm_dt.bias`), the
//! decay `A = -exp(A_log)`, the beta projection, the output gate's low-rank pair (`g_a_proj`,
//! `g_b_proj`) and the gated output norm. An MLA block is DeepSeek-V2's, `kv_b_proj` split
//! into `k_b` (transposed per head) and `v_b`.
//!
//! The FFN: `first_k_dense_replace` dense blocks, then routed experts (`w1`/`w2`/`w3` under
//! `block_sparse_moe.experts`, stacked as gate, down, up), the router, its selection bias
//! and shared experts.
//!
//! transformers has the config class (`KimiLinearConfig`), whose `attribute_map` keeps the
//! vendor's spellings (`num_experts`, `num_experts_per_token`, `num_shared_experts`,
//! `moe_renormalize`, `num_expert_group`, `model_max_length`): the DeepSeek-style spellings a
//! config may give instead are stored under those names. The vocabulary is GPT-2 BPE
//! (tokenizer.json); the reference's fallback for a tiktoken-only checkpoint runs the
//! tokenizer's remote code, which is not run here: such a directory is refused for want of
//! tokenizer.json.

use ggufkit::gguf::keys::{attention, kda, llm, mla, rope, ssm};
use serde_json::{Map, Value as Json};

use super::deepseek2::split_kv_b_with;
use super::{keep, no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::{Hparams, MAX_BLOCK_COUNT};
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The tensors beyond [`DECODER`] (gguf-py's `kimi-linear` list).
const KIMI_LINEAR_TENSORS: &[Tensor] = &[
    Tensor::AttnQkv,
    Tensor::AttnQA,
    Tensor::AttnQB,
    Tensor::AttnKvAMqa,
    Tensor::AttnKvB,
    Tensor::AttnKB,
    Tensor::AttnVB,
    Tensor::AttnQANorm,
    Tensor::AttnKvANorm,
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::SsmConv1dQ,
    Tensor::SsmConv1dK,
    Tensor::SsmConv1dV,
    Tensor::SsmFA,
    Tensor::SsmFB,
    Tensor::SsmBeta,
    Tensor::SsmA,
    Tensor::SsmGA,
    Tensor::SsmGB,
    Tensor::SsmDt,
    Tensor::SsmNorm,
    Tensor::FfnExpProbsB,
    Tensor::FfnGateShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnUpShexp,
];

/// Kimi Linear.
pub const KIMI_LINEAR: Arch = Arch {
    hf_names: &["KimiLinearForCausalLM", "KimiLinearModel"],
    model_types: &[ModelType {
        name: "kimi_linear",
        hf_classes: &["KimiLinearForCausalLM", "KimiLinearModel"],
        // KimiLinearConfig's defaults, under the names `to_dict()` shows.
        defaults: defaults! {
            "vocab_size" => 163840,
            "hidden_size" => 2304,
            "intermediate_size" => 9216,
            "moe_intermediate_size" => 1024,
            "num_hidden_layers" => 27,
            "num_attention_heads" => 32,
            "num_shared_experts" => 1,
            "routed_scaling_factor" => 2.446,
            "kv_lora_rank" => 512,
            "q_lora_rank" => Json::Null,
            "qk_rope_head_dim" => 64,
            "v_head_dim" => 128,
            "qk_nope_head_dim" => 128,
            "num_expert_group" => 1,
            "topk_group" => 1,
            "num_experts_per_token" => 8,
            "moe_renormalize" => true,
            "model_max_length" => 1048576,
            "rms_norm_eps" => 1e-5,
            "tie_word_embeddings" => false,
            "num_experts" => 256,
        },
        head_dim: HeadDim::CopyOf("qk_rope_head_dim"),
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(attribute_map),
    }],
    composites: &[],
    gguf: "kimi-linear",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, KIMI_LINEAR_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[KIMI_EXPERTS],
        hook: Some(hook),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `KimiLinearConfig.attribute_map`: (config.json spelling, the attribute it sets).
const ALIASES: &[(&str, &str)] = &[
    ("max_position_embeddings", "model_max_length"),
    ("norm_topk_prob", "moe_renormalize"),
    ("n_group", "num_expert_group"),
    ("num_local_experts", "num_experts"),
    ("num_experts_per_tok", "num_experts_per_token"),
    ("n_shared_experts", "num_shared_experts"),
];

/// Stores each aliased key under its attribute; a config that gives both keeps the
/// attribute's own value.
fn attribute_map(cfg: &mut Map<String, Json>) -> bool {
    for (alias, attr) in ALIASES {
        if let Some(v) = cfg.remove(*alias) {
            cfg.entry(*attr).or_insert(v);
        }
    }
    true
}

/// Per-expert `w1/w2/w3` under `block_sparse_moe.experts.{xid}`, stacked as gate, down, up.
const KIMI_EXPERTS: Experts = Experts {
    marker: "block_sparse_moe.experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["w1", "w2", "w3"],
    expert_name: "model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.block_sparse_moe.experts.{w}.weight",
};

/// The short convolutions' weights.
const CONV_SUFFIXES: [&str; 3] = [".q_conv1d.weight", ".k_conv1d.weight", ".v_conv1d.weight"];

/// `KimiLinearModel.modify_tensors` before the generic steps: the convolutions made 4-D,
/// `A = -exp(A_log)`, `dt_bias` renamed to the `dt_proj` bias, `kv_b_proj` split.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let mut expr = expr;
    if CONV_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        expr = conv_4d(&name, expr)?;
    }
    if name.ends_with(".A_log") {
        expr = expr.neg_exp();
    }
    let name = match name.strip_suffix(".dt_bias") {
        Some(stem) => format!("{stem}.dt_proj.bias"),
        None => name,
    };
    if name.contains("block_sparse_moe.experts") || !name.ends_with("kv_b_proj.weight") {
        return Ok(Modified::Pass(name, expr));
    }
    let (k, v) = split_kv_b_with(hp, &name, expr, &["n_embd_head_v_mla", "v_head_dim"])?;
    Ok(Modified::Out(vec![
        (name.replace("kv_b_proj", "k_b_proj"), k),
        (name.replace("kv_b_proj", "v_b_proj"), v),
    ]))
}

/// A KDA block's short convolution made 4-D ([`conv_4d`]; a rank other than 2 or 3 is an
/// error naming the tensor) and its `dt_bias` renamed to the `dt_proj` bias; any other
/// tensor as it is. Kimi K3's and GLM-5-Next's hooks start with it.
pub(super) fn kda_conv_and_dt_bias(
    name: String,
    expr: Expr,
) -> Result<(String, Expr), ConvertError> {
    let mut expr = expr;
    if CONV_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        if !matches!(expr.shape().len(), 2 | 3) {
            return Err(ConvertError::Tensor {
                problem: format!("unexpected conv1d rank {}", expr.shape().len()),
                name,
            });
        }
        expr = conv_4d(&name, expr)?;
    }
    let name = match name.strip_suffix(".dt_bias") {
        Some(stem) => format!("{stem}.dt_proj.bias"),
        None => name,
    };
    Ok((name, expr))
}

/// A convolution `[channels, kernel]` or `[channels, 1, kernel]` as `[1, channels, 1,
/// kernel]` (the same values in the same order); other ranks are left as they are.
pub(super) fn conv_4d(name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let (channels, kernel) = match *expr.shape() {
        [c, k] | [c, _, k] => (c, k),
        _ => return Ok(expr),
    };
    expr.reshape(name, vec![1, channels, 1, kernel])
}

/// `KimiLinearModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    // The generic block runs with one KV head: MLA is written as MQA.
    let mut mqa = p.hp.clone();
    mqa.map.insert("num_key_value_heads".into(), Json::from(1));
    p.with_hparams(&mqa).generic()?;
    let hp = p.hp;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let la = linear_attn_config(hp)?;
    let kv = head_count_kv(hp, la)?;
    p.i32s(attention::HEAD_COUNT_KV, kv);
    if let Some(k) = la_u64(hp, la, "short_conv_kernel_size")? {
        p.u32(ssm::CONV_KERNEL, k)?;
    }
    if let Some(d) = la_u64(hp, la, "head_dim")? {
        p.u32(kda::HEAD_DIM, d)?;
    }
    mla_params(p)?;
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    p.req_u32(llm::EXPERT_SHARED_COUNT, &["num_shared_experts"])?;
    p.req_u32(llm::LEADING_DENSE_BLOCK_COUNT, &["first_k_dense_replace"])?;
    let scale = hp.req_f64(&["routed_scaling_factor"])?;
    p.f32(mla::EXPERT_WEIGHTS_SCALE, scale);
    Ok(())
}

/// The MLA keys: the ranks, the rope and key sizes, the decompressed head sizes.
fn mla_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    if let Some(q) = hp.find_u64(&["q_lora_rank", "n_lora_q"])? {
        p.u32(mla::Q_LORA_RANK, q)?;
    }
    let kv_lora = hp.req_u64(&["kv_lora_rank", "n_lora_kv"])?;
    p.u32(mla::KV_LORA_RANK, kv_lora)?;
    let nope = hp.find_u64(&["qk_nope_head_dim"])?;
    let rope_dim = hp.req_u64(&["qk_rope_head_dim", "n_rot"])?;
    p.u32(rope::DIMENSION_COUNT, rope_dim)?;
    let overflow = |what: &str, a: u64| {
        ConvertError::out_of_range(
            &hp.path,
            what,
            format!("{a} + {rope_dim}"),
            "a sum that fits 64 bits",
        )
    };
    let key_len = kv_lora
        .checked_add(rope_dim)
        .ok_or_else(|| overflow("kv_lora_rank + qk_rope_head_dim", kv_lora))?;
    p.u32(attention::KEY_LENGTH, key_len)?;
    if let Some(k) = hp.find_u64(&["n_embd_head_k_mla"])? {
        p.u32(mla::KEY_LENGTH_MLA, k)?;
    } else if let Some(nope) = nope {
        let k = nope
            .checked_add(rope_dim)
            .ok_or_else(|| overflow("qk_nope_head_dim + qk_rope_head_dim", nope))?;
        p.u32(mla::KEY_LENGTH_MLA, k)?;
    }
    if let Some(v) = hp.find_u64(&["n_embd_head_v_mla"])? {
        p.u32(mla::VALUE_LENGTH_MLA, v)?;
    } else if let Some(v) = hp.find_u64(&["v_head_dim"])? {
        p.u32(mla::VALUE_LENGTH_MLA, v)?;
    }
    Ok(())
}

/// `linear_attn_config`, which the class requires.
pub(super) fn linear_attn_config(hp: &Hparams) -> Result<&Map<String, Json>, ConvertError> {
    match hp.get("linear_attn_config") {
        Some(Json::Object(m)) => Ok(m),
        None | Some(Json::Null) => Err(hp.missing(&["linear_attn_config"])),
        Some(v) => Err(ConvertError::wrong_type(
            &hp.path,
            "linear_attn_config",
            "an object",
            v,
        )),
    }
}

/// An optional non-negative integer of `linear_attn_config`.
fn la_u64(hp: &Hparams, la: &Map<String, Json>, key: &str) -> Result<Option<u64>, ConvertError> {
    match la.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => crate::hf::config::json_u64(v).map(Some).ok_or_else(|| {
            ConvertError::wrong_type(
                &hp.path,
                format!("linear_attn_config.{key}"),
                "a non-negative integer",
                v,
            )
        }),
    }
}

/// Per block: 1 (the one MQA head) for a block listed, 1-based, in `full_attn_layers`, 0
/// for a KDA block.
pub(super) fn head_count_kv(
    hp: &Hparams,
    la: &Map<String, Json>,
) -> Result<Vec<i32>, ConvertError> {
    let full = match la.get("full_attn_layers") {
        Some(Json::Array(a)) => a,
        None => return Err(hp.missing(&["linear_attn_config.full_attn_layers"])),
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "linear_attn_config.full_attn_layers",
                "a list of block numbers",
                v,
            ))
        }
    };
    let n = hp.req_u64(&["num_hidden_layers"])?;
    if n > MAX_BLOCK_COUNT {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "num_hidden_layers",
            n,
            format!("at most {MAX_BLOCK_COUNT} blocks"),
        ));
    }
    // Python's `in` compares by value: 2 and 2.0 both name block 2.
    let listed = |block: u64| full.iter().any(|x| x.as_f64() == Some(block as f64));
    Ok((1..=n).map(|b| i32::from(listed(b))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(cfg: Json) -> Hparams {
        crate::hf::config::from_json(cfg, "config.json".into()).unwrap()
    }

    #[test]
    fn deepseek_spellings_are_stored_under_the_vendor_names() {
        let h = hp(serde_json::json!({
            "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear",
            "n_shared_experts": 2, "num_experts_per_tok": 3, "max_position_embeddings": 77,
            "num_local_experts": 5, "num_shared_experts": 4,
        }));
        // The attribute's own value wins over its alias.
        assert_eq!(h.get("num_shared_experts"), Some(&Json::from(4)));
        assert_eq!(h.get("num_experts_per_token"), Some(&Json::from(3)));
        assert_eq!(h.get("model_max_length"), Some(&Json::from(77)));
        assert_eq!(h.get("num_experts"), Some(&Json::from(5)));
        assert_eq!(h.get("n_shared_experts"), None);
        // Defaults: head_dim is the rope head size, KV heads the attention heads.
        assert_eq!(h.get("head_dim"), Some(&Json::from(64)));
        assert_eq!(h.get("num_key_value_heads"), Some(&Json::from(32)));
    }

    #[test]
    fn full_attention_blocks_have_the_one_kv_head() {
        let h = hp(serde_json::json!({
            "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear",
            "num_hidden_layers": 5,
            "linear_attn_config": {"full_attn_layers": [2, 5.0]},
        }));
        let la = linear_attn_config(&h).unwrap();
        assert_eq!(head_count_kv(&h, la).unwrap(), [0, 1, 0, 0, 1]);
        let huge = hp(serde_json::json!({
            "architectures": ["KimiLinearForCausalLM"], "num_hidden_layers": 1u64 << 40,
            "linear_attn_config": {"full_attn_layers": []},
        }));
        let la = linear_attn_config(&huge).unwrap();
        assert!(matches!(
            head_count_kv(&huge, la),
            Err(ConvertError::OutOfRange { .. })
        ));
    }

    #[test]
    fn a_config_without_linear_attention_settings_is_refused() {
        let h = hp(serde_json::json!({"architectures": ["KimiLinearForCausalLM"]}));
        assert!(matches!(
            linear_attn_config(&h),
            Err(ConvertError::MissingHparam { .. })
        ));
    }

    #[test]
    fn convolutions_become_four_dimensional() {
        let three = Expr::constant(vec![0.; 24], vec![6, 1, 4]);
        assert_eq!(conv_4d("c", three).unwrap().shape(), [1, 6, 1, 4]);
        let two = Expr::constant(vec![0.; 24], vec![6, 4]);
        assert_eq!(conv_4d("c", two).unwrap().shape(), [1, 6, 1, 4]);
        let one = Expr::constant(vec![0.; 6], vec![6]);
        assert_eq!(conv_4d("c", one).unwrap().shape(), [6]);
    }
}
