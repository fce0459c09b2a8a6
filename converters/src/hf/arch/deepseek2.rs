//! `DeepseekV2ForCausalLM` / `DeepseekV3ForCausalLM` / `YoutuForCausalLM` / Youtu-VL's text
//! half (arch `deepseek2`, `DeepseekV2Model` in `conversion/deepseek.py`).
//!
//! Multi-head latent attention (MLA): queries through a low-rank `q_a_proj` / `q_b_proj`
//! pair with a norm between (or one `q_proj` when `q_lora_rank` is null), keys and values
//! through the shared `kv_a_proj_with_mqa` (which also carries the rope key) and
//! `kv_b_proj`. The converter writes `kv_b_proj` whole *and* split for the absorbed form:
//! viewed as `[n_kv_head, qk_nope + v_head, kv_lora_rank]`, the first `qk_nope_head_dim`
//! rows of each head become `attn_k_b` transposed to `[n_kv_head, kv_lora_rank, qk_nope]`,
//! the other `v_head_dim` rows `attn_v_b` (`[n_kv_head, v_head, kv_lora_rank]`), and the
//! whole tensor is not written at all. The hparams say MQA: one KV head of size
//! `kv_lora_rank + qk_rope_head_dim` (values `kv_lora_rank`), the decompressed sizes in
//! the `_mla` keys.
//!
//! FFN: `first_k_dense_replace` dense blocks, then routed experts (per-expert
//! `down/gate/up_proj` stacked in that order), shared experts, expert groups, the expert
//! selection bias (`e_score_correction_bias`), routed scaling and top-k normalisation as
//! KVs. Next-token-prediction layers (`model.layers.N` at or past `num_hidden_layers`) are
//! dropped, as is a tied `lm_head`. The vocabulary is GPT-2 BPE only (Kimi's tiktoken path
//! needs the tokenizer's remote code).

use ggufkit::gguf::keys::{attention, extra, llm, mla, rope};
use serde_json::Value as Json;

use super::{
    keep, no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Modified, MtpExport, Rules, TextType,
};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
pub(super) use crate::hf::tokenizer::json_truthy_opt as truthy;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

/// MLA attention's tensors (with [`DECODER`] and [`MOE_NEXTN_TENSORS`], gguf-py's `deepseek2` list,
/// which has both the dense and the expert FFN and the next-token-prediction tensors).
pub(super) const MLA_TENSORS: &[Tensor] = &[
    Tensor::AttnQA,
    Tensor::AttnQB,
    Tensor::AttnKvAMqa,
    Tensor::AttnKvB,
    Tensor::AttnKB,
    Tensor::AttnVB,
    Tensor::AttnQANorm,
    Tensor::AttnKvANorm,
];

/// Routed and shared experts with the expert-selection bias, and the next-token-prediction
/// block's tensors (DeepSeek V3 and GLM-4.5 share them).
pub(super) const MOE_NEXTN_TENSORS: &[Tensor] = &[
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnUpShexp,
    Tensor::FfnExpProbsB,
    Tensor::NextnEhProj,
    Tensor::NextnEmbedTokens,
    Tensor::NextnEnorm,
    Tensor::NextnHnorm,
    Tensor::NextnSharedHeadHead,
    Tensor::NextnSharedHeadNorm,
];

/// DeepSeek V2 / V3.
pub const DEEPSEEK2: Arch = Arch {
    hf_names: &[
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
        "KimiVLForConditionalGeneration",
        "KimiK25ForConditionalGeneration",
        "YoutuForCausalLM",
        "YoutuVLForConditionalGeneration",
    ],
    model_types: &[
        ModelType {
            name: "deepseek_v2",
            hf_classes: &["DeepseekV2ForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 32000,
                "hidden_size" => 4096,
                "intermediate_size" => 11008,
                "num_hidden_layers" => 32,
                "num_attention_heads" => 32,
                "max_position_embeddings" => 2048,
                "rms_norm_eps" => 1e-6,
                "rope_theta" => 10000.0,
                "first_k_dense_replace" => 0,
                "kv_lora_rank" => 512,
                "q_lora_rank" => 1536,
                "n_group" => Json::Null,
                "n_routed_experts" => 64,
                "n_shared_experts" => 2,
                "qk_nope_head_dim" => 128,
                "qk_rope_head_dim" => 64,
                "routed_scaling_factor" => 1.0,
                "topk_group" => Json::Null,
                "norm_topk_prob" => false,
                "v_head_dim" => 128,
                "num_experts_per_tok" => Json::Null,
                "moe_intermediate_size" => 1407,
            },
            head_dim: HeadDim::CopyOf("qk_rope_head_dim"),
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        },
        ModelType {
            name: "deepseek_v3",
            hf_classes: &["DeepseekV3ForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 129280,
                "hidden_size" => 7168,
                "intermediate_size" => 18432,
                "moe_intermediate_size" => 2048,
                "num_hidden_layers" => 61,
                "num_attention_heads" => 128,
                "num_key_value_heads" => 128,
                "n_shared_experts" => 1,
                "n_routed_experts" => 256,
                "routed_scaling_factor" => 2.5,
                "kv_lora_rank" => 512,
                "q_lora_rank" => 1536,
                "qk_rope_head_dim" => 64,
                "v_head_dim" => 128,
                "qk_nope_head_dim" => 128,
                "n_group" => 8,
                "topk_group" => 4,
                "num_experts_per_tok" => 8,
                "first_k_dense_replace" => 3,
                "norm_topk_prob" => true,
                "max_position_embeddings" => 4096,
                "rms_norm_eps" => 1e-6,
                "rope_theta" => 10000.0,
            },
            head_dim: HeadDim::CopyOf("qk_rope_head_dim"),
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        },
        // Youtu-LLM: MLA attention with a dense FFN in every block (no routed experts, so
        // every block is a leading dense one and the expert FFN size is `intermediate_size`).
        ModelType {
            name: "youtu",
            hf_classes: &["YoutuForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 128256,
                "hidden_size" => 2048,
                "intermediate_size" => 6144,
                "num_hidden_layers" => 32,
                "num_attention_heads" => 16,
                "num_key_value_heads" => 16,
                "kv_lora_rank" => 512,
                "q_lora_rank" => 1536,
                "qk_rope_head_dim" => 64,
                "v_head_dim" => 128,
                "qk_nope_head_dim" => 128,
                "max_position_embeddings" => 131072,
                "rms_norm_eps" => 1e-6,
                "rope_theta" => 10000.0,
                "tie_word_embeddings" => true,
                "attention_bias" => false,
            },
            head_dim: HeadDim::CopyOf("qk_rope_head_dim"),
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        },
    ],
    // Kimi-K2.5's text_config names `kimi_k2`, which transformers builds as `deepseek_v3`.
    composites: &[(
        "kimi_k25",
        TextType::NamedRenamed("deepseek_v3", &[("kimi_k2", "deepseek_v3")]),
    )],
    gguf: "deepseek2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, MLA_TENSORS, MOE_NEXTN_TENSORS],
    tensor_overrides: &[],
    filter: super::deepseek_ocr::drop_vision_towers,
    rules: Rules {
        experts: &[DEEPSEEK_EXPERTS],
        hook: Some(hook),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks {
        switch: Some(super::deepseek_ocr::when_ocr),
        ..Hooks::NONE
    },
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}`, stacked in that order.
pub(super) const DEEPSEEK_EXPERTS: Experts = Experts {
    marker: "mlp.experts",
    count_keys: &["n_routed_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// Whether `name` starts like `re.match(r"model.layers.(\d+)", name)` with a block number
/// at or past `n_layers` (`.` matches any character).
pub(super) fn is_past_layers(name: &str, n_layers: u64) -> bool {
    let b = name.as_bytes();
    let prefix = b"model.layers.";
    if b.len() <= prefix.len() {
        return false;
    }
    let head_ok = prefix.iter().zip(b).all(|(p, c)| *p == b'.' || p == c);
    if !head_ok {
        return false;
    }
    let digits: String = name[prefix.len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    // An index too long for u64 is past any layer count.
    !digits.is_empty() && digits.parse::<u64>().map_or(true, |i| i >= n_layers)
}

/// `DeepseekV2Model.modify_tensors` before the generic steps: a tied `lm_head` and the
/// next-token-prediction layers are dropped, `kv_b_proj` is split into `k_b_proj`
/// (transposed per head) and `v_b_proj`.
pub(super) fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    mla_hook(hp, name, expr, true)
}

/// The MLA class's tensor step; `skip_mtp`: drop the blocks past `num_hidden_layers`.
pub(super) fn mla_hook(
    hp: &Hparams,
    name: String,
    expr: Expr,
    skip_mtp: bool,
) -> Result<Modified, ConvertError> {
    if hp.get("tie_word_embeddings") == Some(&Json::Bool(true))
        && (name == "lm_head.weight" || name == "model.lm_head.weight")
    {
        return Ok(Modified::Drop);
    }
    if skip_mtp && is_past_layers(&name, hp.req_u64(&["num_hidden_layers"])?) {
        return Ok(Modified::Drop);
    }
    if name.contains("mlp.experts") || !name.ends_with("kv_b_proj.weight") {
        return Ok(Modified::Pass(name, expr));
    }
    let (k, v) = split_kv_b(hp, &name, expr)?;
    Ok(Modified::Out(vec![
        (name.replace("kv_b_proj", "k_b_proj"), k),
        (name.replace("kv_b_proj", "v_b_proj"), v),
    ]))
}

/// `kv_b_proj` `[n_kv * (nope + v), rank]` → `k_b` `[n_kv, rank, nope]`, `v_b`
/// `[n_kv, v, rank]`.
pub(super) fn split_kv_b(
    hp: &Hparams,
    name: &str,
    expr: Expr,
) -> Result<(Expr, Expr), ConvertError> {
    split_kv_b_with(hp, name, expr, &["v_head_dim"])
}

/// [`split_kv_b`] with the value head size read from the first of `v_keys`.
pub(super) fn split_kv_b_with(
    hp: &Hparams,
    name: &str,
    expr: Expr,
    v_keys: &[&str],
) -> Result<(Expr, Expr), ConvertError> {
    let n_kv = hp.req_u64(&["num_key_value_heads"])?;
    let v_dim = hp.req_u64(v_keys)?;
    let nope = hp.req_u64(&["qk_nope_head_dim"])?;
    let shape = expr.shape().to_vec();
    let per_head = v_dim.checked_add(nope);
    let rows = per_head.and_then(|p| p.checked_mul(n_kv));
    if shape.len() != 2 || rows != Some(shape[0]) {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "shape {shape:?} is not [num_key_value_heads {n_kv} * (v_head_dim {v_dim} + \
                 qk_nope_head_dim {nope}), kv_lora_rank]"
            ),
        });
    }
    let per_head = per_head.unwrap_or(0);
    let kv = expr.reshape(name, vec![n_kv, per_head, shape[1]])?;
    let k = kv.clone().narrow(name, 1, 0, nope)?.transpose_last2(name)?;
    let v = kv.narrow(name, 1, nope, v_dim)?;
    Ok((k, v))
}

/// `DeepseekV2Model.set_gguf_parameters`, after the refusal of a config the class's
/// tokenizer step cannot load.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    tokenizer_config_refusal(p.hp)?;
    p.generic()?;
    mla_params(p)
}

/// The `model_type`s of this class's configs that transformers builds with their own config
/// class; any other (the remote-code Youtu-VL and Kimi-VL types, or none) is read by the
/// tokenizer loader as a generic `PreTrainedConfig`.
const TYPED_CONFIGS: &[&str] = &["deepseek_v2", "deepseek_v3", "youtu", "kimi_k25"];

/// The class loads its tokenizer with `AutoTokenizer`, which reads config.json; for a
/// `model_type` transformers has no class for, that is a generic config, which fails on
/// transformers 4's `rope_scaling` of a scaled type without `rope_parameters` (and, for a
/// config without `model_type`, on unknown layer kinds), so the reference refuses the model.
fn tokenizer_config_refusal(hp: &Hparams) -> Result<(), ConvertError> {
    let Some(raw) = hp.raw.as_object() else {
        return Ok(());
    };
    let model_type = raw.get("model_type").and_then(Json::as_str);
    if model_type.is_some_and(|t| TYPED_CONFIGS.contains(&t)) {
        return Ok(());
    }
    crate::hf::generic_config::check_layer_lists(hp)?;
    if crate::hf::generic_config::scaled_rope_scaling_fails(raw) {
        return Err(ConvertError::format(
            &hp.path,
            None,
            "transformers reads this config as a generic PreTrainedConfig (its model_type has \
             no config class), whose rope_scaling standardization needs \
             max_position_embeddings before it is set; the class loads its tokenizer with \
             AutoTokenizer, so the reference refuses it",
        ));
    }
    Ok(())
}

/// The config keys MLA's cache and head widths come from, and the GGUF keys they are
/// written under (the full-attention layers' set, or another layer kind's).
pub(super) struct MlaLengthKeys {
    /// The cache's rank, the rope and nope parts of a query/key head, and the value head, in
    /// the config.
    pub rank: &'static str,
    pub rope: &'static str,
    pub nope: &'static str,
    pub v_head: &'static str,
    /// The rank, the cache's key and value lengths, and the MLA head's key and value lengths.
    pub rank_key: &'static str,
    pub key_length: &'static str,
    pub value_length: &'static str,
    pub key_length_mla: &'static str,
    pub value_length_mla: &'static str,
}

/// DeepSeek-V2's keys.
const MLA_LENGTHS: MlaLengthKeys = MlaLengthKeys {
    rank: "kv_lora_rank",
    rope: "qk_rope_head_dim",
    nope: "qk_nope_head_dim",
    v_head: "v_head_dim",
    rank_key: mla::KV_LORA_RANK,
    key_length: attention::KEY_LENGTH,
    value_length: attention::VALUE_LENGTH,
    key_length_mla: mla::KEY_LENGTH_MLA,
    value_length_mla: mla::VALUE_LENGTH_MLA,
};

/// MLA's lengths: the compressed cache holds the rank plus the rope part per key and the rank
/// per value; the decompressed head holds nope + rope per key and the value head's width.
/// `rank` is the config's (or its default).
pub(super) fn mla_lengths(
    p: &mut Params,
    rank: u64,
    keys: &MlaLengthKeys,
) -> Result<(), ConvertError> {
    let hp = p.hp;
    let rope = hp.req_u64(&[keys.rope])?;
    let nope = hp.req_u64(&[keys.nope])?;
    let sum = |a: u64, b: u64| {
        a.checked_add(b).ok_or_else(|| {
            ConvertError::out_of_range(
                &hp.path,
                format!(
                    "{} + {}, {} + {}",
                    keys.rank, keys.rope, keys.nope, keys.rope
                ),
                format!("{rank} + {rope}, {nope} + {rope}"),
                "sums that fit 64 bits",
            )
        })
    };
    p.u32(keys.rank_key, rank)?;
    p.u32(keys.key_length, sum(rank, rope)?)?;
    p.u32(keys.value_length, rank)?;
    p.u32(keys.key_length_mla, sum(nope, rope)?)?;
    p.req_u32(keys.value_length_mla, &[keys.v_head])?;
    Ok(())
}

/// What `DeepseekV2Model.set_gguf_parameters` writes after the generic block (which it
/// runs with `num_key_value_heads` set to 1).
pub(super) fn mla_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    if hp.get("num_key_value_heads").is_some() {
        p.u32(attention::HEAD_COUNT_KV, 1)?;
    }
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
    let kv_lora = hp.find_u64(&["kv_lora_rank"])?.unwrap_or(512);
    mla_lengths(p, kv_lora, &MLA_LENGTHS)?;
    let moe_ff = hp.req_u64(&["moe_intermediate_size", "intermediate_size"])?;
    p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, moe_ff)?;
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
    let rope_dim = hp.req_u64(&["qk_rope_head_dim"])?;
    p.u32(rope::DIMENSION_COUNT, rope_dim)?;
    if let Some(m) = hp.rope.get("mscale_all_dim").filter(|v| !v.is_null()) {
        let m = m.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "rope mscale_all_dim", "a number", m)
        })?;
        p.f32(extra::ROPE_SCALING_YARN_LOG_MUL, 0.1 * m);
    }
    Ok(())
}

/// `Glm4MoeLiteForCausalLM` (GLM-4.7-Flash, `Glm4MoeLiteModel` in `conversion/glm.py`):
/// the DeepSeek-V2 layout with GLM's vocabulary, whose next-token-prediction blocks are
/// kept (counted in the block count, `nextn_predict_layers` written) when
/// `num_nextn_predict_layers` is above 0. Its config has no `first_k_dense_replace` (it
/// lists `mlp_layer_types`), so the leading dense block count written is 0.
pub const GLM4MOE_LITE: Arch = Arch {
    hf_names: &["Glm4MoeLiteForCausalLM"],
    model_types: &[ModelType {
        name: "glm4_moe_lite",
        hf_classes: &["Glm4MoeLiteForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 154880,
            "hidden_size" => 2048,
            "intermediate_size" => 10240,
            "moe_intermediate_size" => 1536,
            "num_hidden_layers" => 47,
            "num_attention_heads" => 20,
            "num_key_value_heads" => 20,
            "n_shared_experts" => 1,
            "n_routed_experts" => 64,
            "routed_scaling_factor" => 1.8,
            "kv_lora_rank" => 512,
            "q_lora_rank" => 768,
            "qk_rope_head_dim" => 64,
            "v_head_dim" => 256,
            "qk_nope_head_dim" => 192,
            "n_group" => 1,
            "topk_group" => 1,
            "num_experts_per_tok" => 4,
            "norm_topk_prob" => true,
            "max_position_embeddings" => 202752,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "deepseek2",
    vocab: VocabKind::Own(super::glm4moe::set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, MLA_TENSORS, MOE_NEXTN_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[DEEPSEEK_EXPERTS],
        hook: Some(lite_hook),
        nextn_blocks: true,
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp: super::glm4moe::is_past_main_layers,
            shared: super::glm4moe::GLM_MTP_SHARED,
        }),
        ..Rules::NONE
    },
    params: lite_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The kept next-token-prediction blocks: none under `--no-mtp` (`skip_mtp`).
fn lite_nextn(hp: &Hparams) -> Result<u64, ConvertError> {
    if hp.mtp == Mtp::Drop {
        return Ok(0);
    }
    Ok(hp.find_u64(&["num_nextn_predict_layers"])?.unwrap_or(0))
}

fn lite_hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let skip = lite_nextn(hp)? == 0;
    mla_hook(hp, name, expr, skip)
}

fn lite_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    mla_params(p)?;
    let nextn = lite_nextn(p.hp)?;
    if nextn > 0 {
        p.u32(mla::NEXTN_PREDICT_LAYERS, nextn)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_token_prediction_layers_are_recognised() {
        assert!(is_past_layers("model.layers.3.eh_proj.weight", 3));
        assert!(is_past_layers(
            "model.layers.12.mlp.experts.0.up_proj.weight",
            3
        ));
        assert!(!is_past_layers("model.layers.2.eh_proj.weight", 3));
        assert!(!is_past_layers("model.norm.weight", 3));
        // `.` in the reference's pattern matches any character.
        assert!(is_past_layers("modelXlayersY7.weight", 3));
        assert!(is_past_layers("model.layers.99999999999999999999999.x", 3));
    }

    #[test]
    fn kv_b_splits_per_head_into_transposed_k_and_v() {
        let cfg = serde_json::json!({
            "architectures": ["DeepseekV2ForCausalLM"],
            "num_key_value_heads": 2, "v_head_dim": 1, "qk_nope_head_dim": 2,
        });
        let hp = crate::hf::config::from_json(cfg, "config.json".into()).unwrap();
        // 2 heads of (2 nope + 1 v) rows, rank 2: row r holds [10r, 10r + 1].
        let x: Vec<f32> = (0..6)
            .flat_map(|r| [10. * r as f32, 10. * r as f32 + 1.])
            .collect();
        let kv = Expr::constant(x, vec![6, 2]);
        let (k, v) = split_kv_b(&hp, "kv_b_proj.weight", kv.clone()).unwrap();
        assert_eq!(k.shape(), [2, 2, 2]);
        assert_eq!(v.shape(), [2, 1, 2]);
        // k_b per head: the nope rows transposed, [rank, nope].
        assert_eq!(
            k.eval_f32().unwrap(),
            [0., 10., 1., 11., 30., 40., 31., 41.]
        );
        assert_eq!(v.eval_f32().unwrap(), [20., 21., 50., 51.]);
        let wrong = Expr::constant(vec![0.; 10], vec![5, 2]);
        assert!(split_kv_b(&hp, "kv_b_proj.weight", wrong).is_err());
    }

    #[test]
    fn kimi_k2_text_config_is_built_as_deepseek_v3() {
        let cfg = serde_json::json!({
            "architectures": ["KimiK25ForConditionalGeneration"],
            "model_type": "kimi_k25",
            "text_config": {"model_type": "kimi_k2", "hidden_size": 8},
        });
        let hp = crate::hf::config::from_json(cfg, "config.json".into()).unwrap();
        // DeepseekV3Config's defaults fill what the file leaves out.
        assert_eq!(hp.get("max_position_embeddings"), Some(&Json::from(4096)));
        assert_eq!(hp.get("routed_scaling_factor"), Some(&Json::from(2.5)));
        assert_eq!(hp.get("hidden_size"), Some(&Json::from(8)));
        assert_eq!(hp.get("model_type"), Some(&Json::from("deepseek_v3")));
    }

    #[test]
    fn truthiness_follows_python() {
        assert!(!truthy(None));
        assert!(!truthy(Some(&Json::Null)));
        assert!(!truthy(Some(&serde_json::json!(false))));
        assert!(truthy(Some(&serde_json::json!(true))));
        assert!(!truthy(Some(&serde_json::json!(0))));
    }
}
