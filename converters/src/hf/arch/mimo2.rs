//! `MiMoV2FlashForCausalLM` / `MiMoV2ForCausalLM` (arch `mimo2`, `MimoV2Model` in
//! `conversion/mimo.py`): Xiaomi's MiMo V2 text model.
//!
//! Full and sliding-window attention layers by `hybrid_layer_pattern` (1 = sliding), each
//! kind with its own KV head count (written per block), values `v_head_dim` wide, partial
//! rope (`head_dim * partial_rotary_factor`, truncated), per-head sink logits
//! (`attention_sink_bias`, written as `attn_sinks.weight`) and an optional value scale. Dense
//! blocks then routed experts (per-expert `gate/up/down_proj` stacked in that order) with the
//! router's correction bias.
//!
//! The class always counts three next-token-prediction layers (the checkpoints' number; the
//! config does not say): the block count and `nextn_predict_layers` include them and the
//! sliding pattern and KV head counts are extended with sliding entries, unless `--no-mtp`.
//! The checkpoint's `model.mtp.layers.{i}.*` become blocks `num_hidden_layers + i`. `--mtp`
//! keeps them with the embedding, the final norm and the head.
//!
//! The sliding and full attention shapes must agree but for the KV heads, and the router must
//! be `noaux_tc`, as the reference asserts. FP8 checkpoints (whose tensor-parallel `qkv_proj`
//! scales the reference regroups per rank) are refused. Routed experts stored as MXFP4
//! (`quantization_config.store_dtype`: a `uint8` weight of two E2M1 codes a byte and an
//! E8M0 `weight_scale` per 32 inputs, per expert) are repacked into one GGML MXFP4 tensor
//! per block and projection without dequantizing, written before all others (blocks
//! ascending, projections by name: down, gate, up), and `general.file_type` is then
//! MOSTLY_MXFP4_MOE whatever the outtype. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{attention, llm, mla, rope};
use ggufkit::quantize::ftype::ft;
use serde_json::{Map, Value as Json};

use super::{no_extra, Arch, Entry, Experts, HeadDim, Hooks, ModelType, MtpExport, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

/// The next-token-prediction layers the class counts whatever the checkpoint holds.
const NEXTN_LAYERS: u64 = 3;

/// gguf-py's `mimo2` tensor list.
const MIMO2_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::AttnQkv,
    Tensor::AttnQ,
    Tensor::AttnK,
    Tensor::AttnV,
    Tensor::AttnSinks,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnGate,
    Tensor::FfnDown,
    Tensor::FfnUp,
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnExpProbsB,
    Tensor::LayerOutNorm,
    Tensor::NextnEhProj,
    Tensor::NextnEmbedTokens,
    Tensor::NextnEnorm,
    Tensor::NextnHnorm,
    Tensor::NextnSharedHeadHead,
    Tensor::NextnSharedHeadNorm,
];

/// MiMo V2.
pub const MIMO2: Arch = Arch {
    hf_names: &["MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM"],
    model_types: &[ModelType {
        name: "mimo_v2_flash",
        hf_classes: &["MiMoV2FlashForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 152576,
            "hidden_size" => 4096,
            "intermediate_size" => 16384,
            "num_hidden_layers" => 48,
            "num_attention_heads" => 64,
            "num_key_value_heads" => 4,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "tie_word_embeddings" => false,
            "moe_intermediate_size" => 2048,
            "num_experts_per_tok" => 8,
            "n_routed_experts" => 256,
            "routed_scaling_factor" => 1.0,
            "n_group" => 1,
            "topk_group" => 1,
            "norm_topk_prob" => true,
            "bos_token_id" => 1,
            "eos_token_id" => (Json::Null),
            "pad_token_id" => (Json::Null),
            "head_dim" => 192,
            "v_head_dim" => 128,
            "sliding_window" => 129,
            "attention_value_scale" => 0.707,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(prepare),
    }],
    composites: &[],
    gguf: "mimo2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[MIMO2_TENSORS],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        experts: &[MIMO2_EXPERTS],
        mtp: Some(mtp_blocks),
        generate: Some(generate_mxfp4),
        file_type_of: Some(file_type_of),
        mtp_export: Some(MtpExport {
            raw_names: true,
            is_mtp: |_, name| Ok(name.starts_with("model.mtp.layers.")),
            shared: &[
                "model.embed_tokens.weight",
                "model.norm.weight",
                "lm_head.weight",
            ],
        }),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `gate/up/down_proj` under `mlp.experts.{xid}`, stacked in that order.
const MIMO2_EXPERTS: Experts = Experts {
    marker: ".mlp.experts.",
    count_keys: &["n_routed_experts"],
    parts: &["gate_proj", "up_proj", "down_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `MiMoV2FlashConfig.__post_init__`: `num_local_experts` is stored as `n_routed_experts`, a
/// null scaling factor is 1, `sliding_window_size` sets the window to one more, the
/// per-layer lists the file leaves out are filled (full attention on layer 0 and every
/// sixth; one dense MLP then sparse ones), and without `rope_parameters` the class sets one
/// per attention kind (which has no top-level `partial_rotary_factor`).
fn prepare(cfg: &mut Map<String, Json>) -> bool {
    if let Some(v) = cfg.remove("num_local_experts") {
        cfg.insert("n_routed_experts".into(), v);
    }
    if cfg.get("routed_scaling_factor").is_some_and(Json::is_null) {
        cfg.insert("routed_scaling_factor".into(), Json::from(1.0));
    }
    if let Some(w) = cfg.get("sliding_window_size").and_then(Json::as_i64) {
        cfg.insert("sliding_window".into(), Json::from(w.saturating_add(1)));
    }
    let layers = match cfg.get("num_hidden_layers") {
        None => Some(48),
        Some(v) => json_u64(v).filter(|n| *n <= crate::hf::config::MAX_BLOCK_COUNT),
    };
    if let Some(n) = layers {
        if cfg.get("layer_types").is_none_or(Json::is_null) {
            let kinds = (0..n).map(|i| {
                let full = i == 0 || (i + 1) % 6 == 0;
                Json::from(if full {
                    "full_attention"
                } else {
                    "sliding_attention"
                })
            });
            cfg.insert("layer_types".into(), Json::Array(kinds.collect()));
        }
        if cfg.get("mlp_layer_types").is_none_or(Json::is_null) {
            let kinds = (0..n).map(|i| Json::from(if i == 0 { "dense" } else { "sparse" }));
            cfg.insert("mlp_layer_types".into(), Json::Array(kinds.collect()));
        }
    }
    if cfg.get("rope_parameters").is_none_or(Json::is_null) {
        cfg.insert(
            "rope_parameters".into(),
            serde_json::json!({
                "full_attention": {"rope_type": "default", "rope_theta": 5_000_000.0,
                                   "partial_rotary_factor": 0.334},
                "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0,
                                      "partial_rotary_factor": 0.334},
            }),
        );
    }
    true
}

/// `MimoV2Model.filter_tensors`' rename: an `attention_sink` tensor gets a `.weight` suffix.
fn filter(name: &str) -> Option<String> {
    if name.contains("attention_sink") && !name.ends_with(".weight") {
        return Some(format!("{name}.weight"));
    }
    Some(name.to_string())
}

/// The next-token-prediction layers counted: none under `--no-mtp`.
fn nextn_layers(hp: &Hparams) -> u64 {
    if hp.mtp == Mtp::Drop {
        0
    } else {
        NEXTN_LAYERS
    }
}

/// The block count of `MimoV2Model.__init__` and the start of its `modify_tensors`:
/// `model.mtp.layers.{i}.X` is block `num_hidden_layers + i` (`i` below three).
fn mtp_blocks(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    hp.extra_blocks = nextn_layers(hp);
    let n = hp.req_u64(&["num_hidden_layers"])?;
    let mut out = entries;
    for e in &mut out {
        let Some(rest) = e.name.strip_prefix("model.mtp.layers.") else {
            continue;
        };
        let (idx, tail) = rest.split_once('.').unwrap_or((rest, ""));
        let i = idx
            .parse::<u64>()
            .ok()
            .filter(|i| *i < hp.extra_blocks && idx.bytes().all(|b| b.is_ascii_digit()));
        let Some(i) = i else {
            return Err(ConvertError::Tensor {
                name: e.name.clone(),
                problem: format!(
                    "not one of the {} next-token-prediction layers the class counts",
                    hp.extra_blocks
                ),
            });
        };
        e.name = format!("model.layers.{}.{tail}", n + i);
    }
    Ok(out)
}

/// Checks `hparams[a] == hparams[b]` as the reference asserts it.
fn same(hp: &Hparams, a: &str, b: &str) -> Result<(), ConvertError> {
    let x = hp.get(a).ok_or_else(|| hp.missing(&[a]))?;
    let y = hp.get(b).ok_or_else(|| hp.missing(&[b]))?;
    let equal = match (x.as_f64(), y.as_f64()) {
        (Some(p), Some(q)) => p == q,
        _ => x == y,
    };
    if equal {
        Ok(())
    } else {
        Err(ConvertError::out_of_range(
            &hp.path,
            a,
            x,
            format!("the value of {b} ({y}): the converter takes one attention shape"),
        ))
    }
}

/// What the class cannot convert: FP8 checkpoints (their tensor-parallel `qkv_proj` scales
/// need the class's own regrouping).
fn refuse_quantized(hp: &Hparams) -> Result<(), ConvertError> {
    let Some(Json::Object(qc)) = hp.get("quantization_config") else {
        return Ok(());
    };
    if qc.get("quant_method").and_then(Json::as_str) == Some("fp8") {
        return Err(ConvertError::Unsupported(format!(
            "{}: MiMo V2 FP8 checkpoints (tensor-parallel qkv_proj scales) are not converted \
             here",
            hp.path.display()
        )));
    }
    Ok(())
}

/// `_is_mxfp4_packed`: `quantization_config.store_dtype` is `mxfp4`, in ggml's 32-element
/// groups (`mxfp4_block_size`, 32 when absent; another size is refused, as the reference's
/// repacking assumes 32).
fn is_mxfp4_packed(hp: &Hparams) -> Result<bool, ConvertError> {
    let Some(Json::Object(qc)) = hp.get("quantization_config") else {
        return Ok(false);
    };
    if qc.get("store_dtype").and_then(Json::as_str) != Some("mxfp4") {
        return Ok(false);
    }
    match qc.get("mxfp4_block_size") {
        None => Ok(true),
        Some(v) if v.as_f64() == Some(32.0) => Ok(true),
        Some(v) => Err(ConvertError::UnsupportedFeature {
            arch: "MiMoV2ForCausalLM".into(),
            feature: format!(
                "MXFP4 block size {v} (quantization_config.mxfp4_block_size): ggml's MXFP4 \
                 groups are 32 wide"
            ),
        }),
    }
}

/// MOSTLY_MXFP4_MOE for MXFP4-stored experts (`prepare_tensors` sets it whatever the
/// outtype).
fn file_type_of(hp: &Hparams) -> Option<u32> {
    is_mxfp4_packed(hp).ok()?.then_some(ft::MXFP4_MOE)
}

/// The (block, expert, projection) of a routed expert's weight,
/// `model.layers.{bid}.mlp.experts.{xid}.{gate|up|down}_proj.weight`.
fn routed_expert(name: &str) -> Option<(u64, u64, &str)> {
    let rest = name.strip_prefix("model.layers.")?;
    let (bid, rest) = rest.split_once('.')?;
    let rest = rest.strip_prefix("mlp.experts.")?;
    let (xid, rest) = rest.split_once('.')?;
    let proj = rest.strip_suffix("_proj.weight")?;
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u64>().ok())
            .flatten()
    };
    matches!(proj, "gate" | "up" | "down").then_some((number(bid)?, number(xid)?, proj))
}

/// `MimoV2Model.generate_extra_tensors` for MXFP4-stored experts: no `weight_scale` may lie
/// outside the routed experts; per (block, projection), ascending, the `n_routed_experts`
/// experts' packed weights and scales become one `[n_expert, rows, cols]` MXFP4 tensor,
/// written first. Every expert of a group must be there with its scale.
fn generate_mxfp4(
    hp: &Hparams,
    entries: &mut Vec<Entry>,
) -> Result<Vec<(String, Expr)>, ConvertError> {
    use std::collections::{BTreeMap, HashSet};
    if !is_mxfp4_packed(hp)? {
        return Ok(Vec::new());
    }
    let n_experts = hp.req_u64(&["n_routed_experts"])?;
    let stray: Vec<&str> = entries
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| {
            n.ends_with(".weight_scale")
                && routed_expert(n.strip_suffix("_scale").unwrap_or(n)).is_none()
        })
        .collect();
    if let Some(first) = stray.first() {
        return Err(ConvertError::Tensor {
            name: first.to_string(),
            problem: format!(
                "{} MXFP4 tensor(s) outside the routed experts; only the routed experts have \
                 a repack path",
                stray.len()
            ),
        });
    }
    let names: HashSet<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    // (block, projection) -> expert -> (weight name, scale name); a later spelling of one
    // expert (`07` and `7`) replaces the earlier, as the reference's dict does.
    let mut groups: BTreeMap<(u64, String), BTreeMap<u64, (String, String)>> = BTreeMap::new();
    for e in entries.iter() {
        let Some((bid, xid, proj)) = routed_expert(&e.name) else {
            continue;
        };
        let scale = format!("{}_scale", e.name);
        if !names.contains(scale.as_str()) {
            return Err(ConvertError::Tensor {
                problem: format!("missing {scale} for it"),
                name: e.name.clone(),
            });
        }
        groups
            .entry((bid, proj.to_string()))
            .or_default()
            .insert(xid, (e.name.clone(), scale));
    }
    let mut wanted: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for ((bid, proj), experts) in groups {
        let missing: Vec<u64> = (0..n_experts)
            .filter(|x| !experts.contains_key(x))
            .collect();
        if !missing.is_empty() || experts.len() as u64 != n_experts {
            return Err(ConvertError::Tensor {
                name: format!("model.layers.{bid}.mlp.experts.{proj}_proj.weight"),
                problem: format!(
                    "layer {bid} {proj}_proj: {} of {n_experts} experts present{}",
                    experts.len(),
                    missing
                        .first()
                        .map(|m| format!(", first missing is {m}"))
                        .unwrap_or_default()
                ),
            });
        }
        let tensor = match proj.as_str() {
            "gate" => Tensor::FfnGateExp,
            "up" => Tensor::FfnUpExp,
            _ => Tensor::FfnDownExp,
        };
        let name = format!(
            "{}.weight",
            tensor.gguf().replace("{bid}", &bid.to_string())
        );
        wanted.push((name, experts.into_values().collect()));
    }
    crate::hf::prequant::take_mxfp4_experts(entries, wanted)
}

/// `hybrid_layer_pattern` extended with a sliding entry per counted MTP layer.
fn hybrid_pattern(hp: &Hparams) -> Result<Vec<i32>, ConvertError> {
    let key = "hybrid_layer_pattern";
    let list = match hp.get(key) {
        Some(Json::Array(a)) => a,
        Some(v) => return Err(ConvertError::wrong_type(&hp.path, key, "a list", v)),
        None => return Err(hp.missing(&[key])),
    };
    let mut out = list
        .iter()
        .map(|v| v.as_i64().and_then(|i| i32::try_from(i).ok()))
        .collect::<Option<Vec<i32>>>()
        .ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, key, "a list of 0 / 1", Json::Array(list.clone()))
        })?;
    out.extend(std::iter::repeat_n(1, nextn_layers(hp) as usize));
    Ok(out)
}

/// `MimoV2Model.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    refuse_quantized(hp)?;
    p.generic()?;
    same(hp, "swa_head_dim", "head_dim")?;
    same(hp, "swa_num_attention_heads", "num_attention_heads")?;
    same(hp, "swa_v_head_dim", "v_head_dim")?;
    let method = hp
        .get("topk_method")
        .ok_or_else(|| hp.missing(&["topk_method"]))?;
    if method.as_str() != Some("noaux_tc") {
        return Err(ConvertError::wrong_type(
            &hp.path,
            "topk_method",
            "\"noaux_tc\"",
            method,
        ));
    }
    let kv = hp.req_u64(&["num_key_value_heads"])?;
    let kv_swa = hp.req_u64(&["swa_num_key_value_heads"])?;
    let hybrid = hybrid_pattern(hp)?;
    let per_block = hybrid
        .iter()
        .map(|s| if *s == 1 { kv_swa } else { kv })
        .map(|n| {
            i32::try_from(n).map_err(|_| {
                ConvertError::out_of_range(&hp.path, "num_key_value_heads", n, "an INT32")
            })
        })
        .collect::<Result<Vec<i32>, ConvertError>>()?;
    p.i32s(attention::HEAD_COUNT_KV, per_block);
    p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])?;
    p.i32s(attention::SLIDING_WINDOW_PATTERN, hybrid);
    p.req_u32(attention::VALUE_LENGTH, &["v_head_dim"])?;
    p.req_u32(llm::EXPERT_COUNT, &["n_routed_experts"])?;
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    let head_dim = hp.req_u64(&["head_dim"])?;
    let factor = hp
        .rope
        .get("partial_rotary_factor")
        .ok_or_else(|| hp.missing(&["rope_parameters.partial_rotary_factor"]))?;
    let factor = factor.as_f64().ok_or_else(|| {
        ConvertError::wrong_type(&hp.path, "partial_rotary_factor", "a number", factor)
    })?;
    let dims = head_dim as f64 * factor;
    if !(0.0..4294967296.0).contains(&dims) {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "head_dim * partial_rotary_factor",
            dims,
            "a dimension count that fits a UINT32",
        ));
    }
    p.u32(rope::DIMENSION_COUNT, dims.trunc() as u64)?;
    let eps = match hp.get("layernorm_epsilon") {
        None => 1e-5,
        Some(v) => v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "layernorm_epsilon", "a number", v)
        })?,
    };
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    if let Some(v) = hp.get("attention_value_scale").filter(|v| !v.is_null()) {
        let v = v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "attention_value_scale", "a number", v)
        })?;
        p.f32(attention::VALUE_SCALE, v);
    }
    let nextn = nextn_layers(hp);
    if nextn > 0 {
        p.u32(mla::NEXTN_PREDICT_LAYERS, nextn)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn hp(cfg: Json) -> Hparams {
        crate::hf::config::from_json(cfg, PathBuf::from("config.json")).unwrap()
    }

    #[test]
    fn the_config_class_fills_its_lists_and_rope() {
        let h = hp(json!({"architectures": ["MiMoV2FlashForCausalLM"],
                          "model_type": "mimo_v2_flash", "num_hidden_layers": 7,
                          "num_local_experts": 5, "routed_scaling_factor": null,
                          "sliding_window_size": 128}));
        assert_eq!(h.get("n_routed_experts"), Some(&json!(5)));
        assert_eq!(h.get("routed_scaling_factor"), Some(&json!(1.0)));
        assert_eq!(h.get("sliding_window"), Some(&json!(129)));
        let full: Vec<bool> = h
            .get("layer_types")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t == "full_attention")
            .collect();
        assert_eq!(full, [true, false, false, false, false, true, false]);
        // The class's own rope dict has no top-level factor: the reference fails on it too.
        assert!(h.rope.get("partial_rotary_factor").is_none());
    }

    #[test]
    fn mtp_layers_follow_the_main_ones() {
        let mut h = hp(json!({"architectures": ["MiMoV2ForCausalLM"], "num_hidden_layers": 4}));
        let entry = |name: &str| Entry {
            name: name.into(),
            expr: crate::hf::expr::Expr::constant(vec![0.0], vec![1]),
            dtype: crate::hf::safetensors::StDtype::F32,
            fp8_q8: false,
            type_bid: None,
        };
        let out = mtp_blocks(
            &mut h,
            vec![
                entry("model.mtp.layers.2.enorm.weight"),
                entry("model.norm.weight"),
            ],
        )
        .unwrap();
        assert_eq!(out[0].name, "model.layers.6.enorm.weight");
        assert_eq!(out[1].name, "model.norm.weight");
        assert_eq!(h.extra_blocks, 3);
        let err = mtp_blocks(&mut h, vec![entry("model.mtp.layers.3.enorm.weight")]);
        assert!(matches!(err, Err(ConvertError::Tensor { .. })));
    }

    #[test]
    fn sinks_get_a_weight_suffix() {
        assert_eq!(
            filter("model.layers.1.self_attn.attention_sink_bias").unwrap(),
            "model.layers.1.self_attn.attention_sink_bias.weight"
        );
        assert_eq!(filter("model.norm.weight").unwrap(), "model.norm.weight");
    }

    #[test]
    fn quantized_checkpoints_are_refused() {
        let fp8 = hp(json!({"architectures": ["MiMoV2ForCausalLM"],
                            "quantization_config": {"quant_method": "fp8"}}));
        assert!(matches!(
            refuse_quantized(&fp8),
            Err(ConvertError::Unsupported(_))
        ));
        let mx = hp(json!({"architectures": ["MiMoV2ForCausalLM"],
                           "quantization_config": {"store_dtype": "mxfp4"}}));
        assert!(refuse_quantized(&mx).is_ok());
        assert_eq!(file_type_of(&mx), Some(ft::MXFP4_MOE));
        let mx64 = hp(json!({"architectures": ["MiMoV2ForCausalLM"],
                             "quantization_config": {"store_dtype": "mxfp4",
                                                     "mxfp4_block_size": 64}}));
        assert!(matches!(
            is_mxfp4_packed(&mx64),
            Err(ConvertError::UnsupportedFeature { .. })
        ));
    }

    #[test]
    fn routed_expert_names_are_parsed_as_the_reference_matches_them() {
        let n = "model.layers.3.mlp.experts.12.down_proj.weight";
        assert_eq!(routed_expert(n), Some((3, 12, "down")));
        assert_eq!(
            routed_expert("model.layers.3.mlp.experts.1.w1_proj.weight"),
            None
        );
        assert_eq!(
            routed_expert("model.mtp.layers.0.mlp.experts.1.up_proj.weight"),
            None
        );
        assert_eq!(
            routed_expert("model.layers.3.mlp.shared_experts.up_proj.weight"),
            None
        );
    }

    #[test]
    fn attention_shapes_must_agree() {
        let h = hp(
            json!({"architectures": ["MiMoV2ForCausalLM"], "head_dim": 8,
                          "swa_head_dim": 16, "v_head_dim": 4, "swa_v_head_dim": 4.0}),
        );
        assert!(matches!(
            same(&h, "swa_head_dim", "head_dim"),
            Err(ConvertError::OutOfRange { .. })
        ));
        assert!(same(&h, "swa_v_head_dim", "v_head_dim").is_ok());
        assert!(matches!(
            same(&h, "swa_num_attention_heads", "num_attention_heads"),
            Err(ConvertError::MissingHparam { .. })
        ));
    }
}
