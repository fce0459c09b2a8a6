//! `HYV4ForCausalLM` (arch `hy_v4`, `HYV4Model` in `conversion/hy_v4.py`): Tencent's Hy4.
//!
//! The DeepSeek-V2 class's MLA and MoE layout (see `deepseek2.rs`: `kv_b_proj` split into
//! `k_b` / `v_b`, the MQA-style key sizes, the expert KVs) with:
//!
//! - a gated attention output (`self_attn.linear_gate`) and a learnable sink logit per head
//!   (`self_attn.learnable_sink_param`, written as `attn_sinks.weight`);
//! - independent hyper-connections (iHC): per block a pre-mixer around attention
//!   (`hc_attn_layer.hc_pre.hc_{fn,base,scale}`) and one around the MLP (`hc_mlp_layer`),
//!   and the head's (`model.hc_head.hc_head_*`), each written with a `.weight` suffix; the
//!   `*_fn` matrices stay F32 whatever the outtype, as the `output.weight` head does when
//!   `enable_lm_head_fp32` is set;
//! - DeepSeek sparse attention's indexer on the layers `indexer_types` calls `full` (a
//!   `shared` layer reuses the previous full layer's top-k and carries no indexer tensors);
//!   the per-layer flags are written, and a layer whose tensors disagree with its type is
//!   refused before anything is written;
//! - experts already stacked: `mlp.experts.gate_up_proj` (`[n_expert, 2 * moe, hidden]`,
//!   gate rows first) is split into `ffn_gate_exps` / `ffn_up_exps`, `mlp.experts.down_proj`
//!   is passed as it is;
//! - the dense blocks given by `mlp_layer_types` (a leading run; it must agree with
//!   `first_k_dense_replace` when both are given), sigmoid gating, the routed experts'
//!   SwiGLU clamp per block (`swiglu_limit`, when above 0) and the iHC sizes;
//! - `n_group` / `topk_group` both 1 mean no group routing: neither is written.
//!
//! The next-token-prediction layers (`model.mtp_layers.*`) are not converted. GPT-2 BPE
//! vocabulary, as DeepSeek V2.

use std::collections::{BTreeMap, BTreeSet};

use ggufkit::gguf::keys::{compressed, indexer, llm};
use serde_json::{Map, Value as Json};

use super::deepseek2::{mla_hook, mla_params};
use super::deepseek32::drop_ocr_towers;
use super::{no_extra, Arch, Entry, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::{json_u64, Hparams, MAX_BLOCK_COUNT};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `HYV4Config`'s `num_hidden_layers` default (the per-layer lists are sized by it).
const DEFAULT_LAYERS: u64 = 34;

/// The indexer tensors a `full` layer carries (after `self_attn.indexer.`), all of them.
const INDEXER_SUFFIXES: &[&str] = &[
    "k_norm.bias",
    "k_norm.weight",
    "weights_proj.weight",
    "wk.weight",
    "wq_b.weight",
];

/// gguf-py's `hy_v4` tensor list.
const HY_V4_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::HcHeadFn,
    Tensor::HcHeadBase,
    Tensor::HcHeadScale,
    Tensor::AttnNorm,
    Tensor::AttnSinks,
    Tensor::AttnQA,
    Tensor::AttnQANorm,
    Tensor::AttnQB,
    Tensor::AttnKvAMqa,
    Tensor::AttnKvANorm,
    Tensor::AttnKB,
    Tensor::AttnVB,
    Tensor::AttnOut,
    Tensor::AttnGate,
    Tensor::IndexerKNorm,
    Tensor::IndexerProj,
    Tensor::IndexerAttnK,
    Tensor::IndexerAttnQB,
    Tensor::HcAttnFn,
    Tensor::HcAttnBase,
    Tensor::HcAttnScale,
    Tensor::HcFfnFn,
    Tensor::HcFfnBase,
    Tensor::HcFfnScale,
    Tensor::FfnGateInp,
    Tensor::FfnExpProbsB,
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
];

/// Hy4.
pub const HY_V4: Arch = Arch {
    hf_names: &["HYV4ForCausalLM"],
    model_types: &[ModelType {
        name: "hy_v4",
        hf_classes: &["HYV4ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 120832,
            "hidden_size" => 2816,
            "intermediate_size" => 6912,
            "moe_intermediate_size" => 768,
            "num_hidden_layers" => DEFAULT_LAYERS,
            "num_attention_heads" => 32,
            "max_position_embeddings" => 262144,
            "rms_norm_eps" => 1e-5,
            "pad_token_id" => 120002,
            "bos_token_id" => 120000,
            "eos_token_id" => 120025,
            "tie_word_embeddings" => false,
            "n_routed_experts" => 256,
            "n_shared_experts" => 1,
            "num_experts_per_tok" => 8,
            "routed_scaling_factor" => 2.827,
            "norm_topk_prob" => true,
            "n_group" => 1,
            "topk_group" => 1,
            "q_lora_rank" => 1536,
            "kv_lora_rank" => 512,
            "qk_nope_head_dim" => 192,
            "qk_rope_head_dim" => 64,
            "v_head_dim" => 256,
            "index_topk" => 2048,
            "index_head_dim" => 128,
            "index_n_heads" => 16,
            "hc_mult" => 4,
            "hc_magnitude" => 2.0,
            "hc_eps" => 1e-6,
            "swiglu_limit" => 10.0,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::CopyOf("qk_rope_head_dim"),
        kv_heads_key: None,
        prepare: Some(prepare),
    }],
    composites: &[],
    gguf: "hy_v4",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[HY_V4_TENSORS],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        mtp: Some(check_indexers),
        f32_names: &[
            "hc_attn_fn.weight",
            "hc_ffn_fn.weight",
            "output_hc_fn.weight",
        ],
        f32_when: Some(fp32_head),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `HYV4Config.__post_init__`: `num_local_experts` is stored as `n_routed_experts`, the KV
/// heads are the attention heads, and the per-layer lists the file leaves out are filled
/// (one dense MLP then sparse ones; layer 0 and every fourth after it own an indexer).
fn prepare(cfg: &mut Map<String, Json>) -> bool {
    if let Some(v) = cfg.remove("num_local_experts") {
        cfg.insert("n_routed_experts".into(), v);
    }
    let heads = cfg
        .get("num_attention_heads")
        .cloned()
        .unwrap_or(Json::from(32));
    cfg.insert("num_key_value_heads".into(), heads);
    let layers = match cfg.get("num_hidden_layers") {
        None => DEFAULT_LAYERS,
        Some(v) => match json_u64(v) {
            Some(n) if n <= MAX_BLOCK_COUNT => n,
            // The class would fail or build an absurd list: leave the lists as they are.
            _ => return true,
        },
    };
    let mut fill = |key: &str, f: &dyn Fn(u64) -> &'static str| {
        if cfg.get(key).is_none_or(Json::is_null) {
            let list: Vec<Json> = (0..layers).map(|i| Json::from(f(i))).collect();
            cfg.insert(key.into(), Json::Array(list));
        }
    };
    fill("mlp_layer_types", &|i| {
        if i == 0 {
            "dense"
        } else {
            "sparse"
        }
    });
    fill("layer_types", &|_| "indexed_attention");
    fill("indexer_types", &|i| {
        if i == 0 || (i - 1) % 4 == 0 {
            "full"
        } else {
            "shared"
        }
    });
    true
}

/// `HYV4Model.filter_tensors`: the next-token-prediction layers are never read; then the
/// DeepSeek-V2 class's filter.
fn filter(name: &str) -> Option<String> {
    if name.starts_with("model.mtp_layers.") {
        return None;
    }
    drop_ocr_towers(name)
}

/// `HYV4Model.tensor_force_quant`'s config-driven rule: `enable_lm_head_fp32` keeps the
/// head F32.
fn fp32_head(hp: &Hparams, name: &str) -> bool {
    name == "output.weight" && crate::hf::tokenizer::json_truthy_opt(hp.get("enable_lm_head_fp32"))
}

/// `HYV4Model.modify_tensors`, then the DeepSeek-V2 class's.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.ends_with("mlp.experts.gate_up_proj") {
        return split_gate_up(hp, &name, expr);
    }
    let name = with_weight_suffix(name);
    if name.ends_with("kv_b_proj.weight") {
        // `prepare_tensors` splits `kv_b_proj` with as many KV heads as attention heads.
        let mut split = hp.clone();
        let heads = hp.req_u64(&["num_attention_heads"])?;
        split
            .map
            .insert("num_key_value_heads".into(), Json::from(heads));
        return mla_hook(&split, name, expr, true);
    }
    mla_hook(hp, name, expr, true)
}

/// The names `HYV4Model.modify_tensors` gives a `.weight` suffix: the stacked `down_proj`,
/// the sink logits and the iHC parameters.
fn with_weight_suffix(name: String) -> String {
    let hc = |prefix: &str| {
        name.rfind(prefix).is_some_and(|i| {
            let rest = &name[i + prefix.len()..];
            ["fn", "base", "scale"].contains(&rest)
        })
    };
    let hc_layer = [".hc_attn_layer.hc_pre.hc_", ".hc_mlp_layer.hc_pre.hc_"]
        .iter()
        .any(|p| hc(p));
    if name.ends_with("mlp.experts.down_proj")
        || name.ends_with(".self_attn.learnable_sink_param")
        || hc(".hc_head.hc_head_")
        || hc_layer
    {
        format!("{name}.weight")
    } else {
        name
    }
}

/// `split_gate_up`: `[n_expert, 2 * moe_intermediate_size, hidden]`, gate rows first, as
/// the block's `ffn_gate_exps` and `ffn_up_exps`.
fn split_gate_up(hp: &Hparams, name: &str, expr: Expr) -> Result<Modified, ConvertError> {
    let moe = hp.req_u64(&["moe_intermediate_size"])?;
    let shape = expr.shape().to_vec();
    if shape.len() != 3 || moe.checked_mul(2) != Some(shape[1]) {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "shape {shape:?} is not [n_expert, 2 * moe_intermediate_size {moe}, hidden]"
            ),
        });
    }
    let bid = block_of(name).ok_or_else(|| ConvertError::Tensor {
        name: name.to_string(),
        problem: "no block number in the name".into(),
    })?;
    let gate = expr.clone().narrow(name, 1, 0, moe)?;
    let up = expr.narrow(name, 1, moe, moe)?;
    Ok(Modified::Out(vec![
        (format!("blk.{bid}.ffn_gate_exps.weight"), gate),
        (format!("blk.{bid}.ffn_up_exps.weight"), up),
    ]))
}

/// The first all-digit part of a dotted name (the converter's block id).
fn block_of(name: &str) -> Option<u64> {
    name.split('.')
        .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

/// `HYV4Model.indexer_is_full`: per layer, whether it owns an indexer; `None` when the
/// checkpoint has no sparse attention. `indexer_types` (`full` / `shared`) decides; without
/// it, the layers `layer_types` calls sparse own one.
fn indexer_is_full(hp: &Hparams) -> Result<Option<Vec<bool>>, ConvertError> {
    let layers = hp.req_u64(&["num_hidden_layers"])?;
    let list = |key: &str| -> Result<Option<&Vec<Json>>, ConvertError> {
        match hp.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Array(a)) => Ok(Some(a)),
            Some(v) => Err(ConvertError::wrong_type(&hp.path, key, "a list", v)),
        }
    };
    let short = |key: &str, len: usize| {
        ConvertError::out_of_range(
            &hp.path,
            key,
            format!("{len} entries"),
            format!("one per layer (num_hidden_layers {layers})"),
        )
    };
    let Some(types) = list("indexer_types")? else {
        let sparse = |t: &Json| {
            matches!(
                t.as_str(),
                Some("sparse_attention" | "deepseek_sparse_attention")
            )
        };
        let layer_types = list("layer_types")?.map_or(&[][..], |a| &a[..]);
        if !layer_types.iter().any(sparse) {
            return Ok(None);
        }
        if (layer_types.len() as u64) < layers {
            return Err(short("layer_types", layer_types.len()));
        }
        check_indexer_hparams(hp)?;
        return Ok(Some(
            layer_types[..layers as usize].iter().map(sparse).collect(),
        ));
    };
    check_indexer_hparams(hp)?;
    if (types.len() as u64) < layers {
        return Err(short("indexer_types", types.len()));
    }
    let types = &types[..layers as usize];
    if let Some(bad) = types
        .iter()
        .find(|t| !matches!(t.as_str(), Some("full" | "shared")))
    {
        return Err(ConvertError::wrong_type(
            &hp.path,
            "indexer_types",
            "\"full\" or \"shared\" per layer",
            bad,
        ));
    }
    let full: Vec<bool> = types.iter().map(|t| t.as_str() == Some("full")).collect();
    if full.first() == Some(&false) {
        return Err(ConvertError::wrong_type(
            &hp.path,
            "indexer_types[0]",
            "\"full\" (nothing precedes layer 0 to share)",
            "\"shared\"",
        ));
    }
    Ok(Some(full))
}

/// `_check_indexer_hparams`: a checkpoint with sparse attention names the indexer's sizes.
fn check_indexer_hparams(hp: &Hparams) -> Result<(), ConvertError> {
    for key in ["index_n_heads", "index_head_dim", "index_topk"] {
        if hp.get(key).is_none() {
            return Err(hp.missing(&[key]));
        }
    }
    Ok(())
}

/// `HYV4Model.prepare_tensors`' check: a `full` layer carries every indexer tensor, a
/// `shared` one none (the tensors pass unchanged).
fn check_indexers(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    let Some(full) = indexer_is_full(hp)? else {
        return Ok(entries);
    };
    let mut present: BTreeMap<u64, BTreeSet<&str>> = BTreeMap::new();
    for e in &entries {
        if let Some((il, suffix)) = indexer_tensor(&e.name) {
            present.entry(il).or_default().insert(suffix);
        }
    }
    let empty = BTreeSet::new();
    for (il, is_full) in full.iter().enumerate() {
        let seen = present.get(&(il as u64)).unwrap_or(&empty);
        let problem = if *is_full {
            let missing: Vec<&str> = INDEXER_SUFFIXES
                .iter()
                .copied()
                .filter(|s| !seen.contains(s))
                .collect();
            let extra = seen.iter().any(|s| !INDEXER_SUFFIXES.contains(s));
            (!missing.is_empty() || extra).then(|| {
                format!(
                    "layer {il} is indexer_types \"full\" but lacks indexer tensors {missing:?}"
                )
            })
        } else {
            (!seen.is_empty()).then(|| {
                format!(
                    "layer {il} is indexer_types \"shared\" but carries indexer tensors {seen:?}"
                )
            })
        };
        if let Some(problem) = problem {
            return Err(ConvertError::Tensor {
                name: format!("model.layers.{il}.self_attn.indexer"),
                problem,
            });
        }
    }
    Ok(entries)
}

/// `model.layers.{il}.self_attn.indexer.{suffix}` → `(il, suffix)`.
fn indexer_tensor(name: &str) -> Option<(u64, &str)> {
    let rest = name.strip_prefix("model.layers.")?;
    let (il, rest) = rest.split_once('.')?;
    if il.is_empty() || !il.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let suffix = rest.strip_prefix("self_attn.indexer.")?;
    Some((il.parse().ok()?, suffix))
}

/// Python's `x == 1` for a JSON value (a number or a boolean).
fn is_one(v: Option<&Json>) -> bool {
    match v {
        Some(Json::Bool(b)) => *b,
        Some(Json::Number(n)) => n.as_f64() == Some(1.0),
        _ => false,
    }
}

/// The leading dense layers: `first_k_dense_replace`, else the leading run of `dense` in
/// `mlp_layer_types` (which must be the only dense layers and agree with the former).
fn leading_dense(hp: &Hparams) -> Result<u64, ConvertError> {
    let derived = match hp.get("mlp_layer_types") {
        None | Some(Json::Null) => None,
        Some(Json::Array(types)) => {
            let dense = |t: &Json| t.as_str() == Some("dense");
            let lead = types.iter().take_while(|t| dense(t)).count();
            if types[lead..].iter().any(dense) {
                return Err(ConvertError::Unsupported(format!(
                    "{}: mlp_layer_types has a dense layer after a sparse one; the converter \
                     expects one leading run of dense layers",
                    hp.path.display()
                )));
            }
            Some(lead as u64)
        }
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "mlp_layer_types",
                "a list",
                v,
            ))
        }
    };
    match (
        hp.get("first_k_dense_replace").filter(|v| !v.is_null()),
        derived,
    ) {
        (Some(v), Some(d)) if json_u64(v) != Some(d) => Err(ConvertError::out_of_range(
            &hp.path,
            "first_k_dense_replace",
            v,
            format!("the leading dense count of mlp_layer_types ({d})"),
        )),
        (Some(v), _) => json_u64(v).ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "first_k_dense_replace", "an integer", v)
        }),
        (None, Some(d)) => Ok(d),
        (None, None) => Err(hp.missing(&["first_k_dense_replace", "mlp_layer_types"])),
    }
}

/// `swiglu_limit` as `float(x or 0.0)`.
fn swiglu_limit(hp: &Hparams) -> Result<f64, ConvertError> {
    match hp.get("swiglu_limit") {
        None | Some(Json::Null) => Ok(0.0),
        Some(Json::Bool(b)) => Ok(if *b { 1.0 } else { 0.0 }),
        Some(v) => v
            .as_f64()
            .ok_or_else(|| ConvertError::wrong_type(&hp.path, "swiglu_limit", "a number", v)),
    }
}

/// `HYV4Model.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let mut hp = p.hp.clone();
    if is_one(hp.get("n_group")) && is_one(hp.get("topk_group")) {
        hp.map.remove("n_group");
        hp.map.remove("topk_group");
    }
    let dense = leading_dense(&hp)?;
    hp.map
        .insert("first_k_dense_replace".into(), Json::from(dense));
    // DeepseekV2Model: MLA is written as MQA.
    hp.map.insert("num_key_value_heads".into(), Json::from(1));
    hp.map
        .entry("rms_norm_eps")
        .or_insert_with(|| Json::from(1e-6));
    let mut q = p.with_hparams(&hp);
    q.generic()?;
    mla_params(&mut q)?;
    // ExpertGatingFuncType.SIGMOID
    q.u32(llm::EXPERT_GATING_FUNC, 2)?;
    let limit = swiglu_limit(&hp)?;
    if limit > 0.0 {
        let blocks = usize::try_from(q.block_count()?).unwrap_or(usize::MAX);
        q.f32s(llm::SWIGLU_CLAMP_EXP, vec![limit as f32; blocks]);
    }
    q.req_u32(compressed::HC_COUNT, &["hc_mult"])?;
    q.f32(compressed::HC_EPSILON, hp.req_f64(&["hc_eps"])?);
    q.f32(compressed::HC_MAGNITUDE, hp.req_f64(&["hc_magnitude"])?);
    if let Some(full) = indexer_is_full(&hp)? {
        q.req_u32(indexer::HEAD_COUNT, &["index_n_heads"])?;
        q.req_u32(indexer::KEY_LENGTH, &["index_head_dim"])?;
        q.req_u32(indexer::TOP_K, &["index_topk"])?;
        q.bools(indexer::TYPES, full);
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

    fn base(extra: Json) -> Json {
        let mut cfg = json!({"architectures": ["HYV4ForCausalLM"], "model_type": "hy_v4",
                             "num_hidden_layers": 6, "num_attention_heads": 4,
                             "num_key_value_heads": 8});
        for (k, v) in extra.as_object().unwrap() {
            cfg[k] = v.clone();
        }
        cfg
    }

    #[test]
    fn the_config_class_fills_the_per_layer_lists_and_the_kv_heads() {
        let h = hp(base(json!({"num_local_experts": 5})));
        assert_eq!(h.get("n_routed_experts"), Some(&json!(5)));
        assert_eq!(h.get("num_key_value_heads"), Some(&json!(4)));
        assert_eq!(
            h.get("indexer_types"),
            Some(&json!([
                "full", "full", "shared", "shared", "shared", "full"
            ]))
        );
        assert_eq!(
            h.get("mlp_layer_types"),
            Some(&json!([
                "dense", "sparse", "sparse", "sparse", "sparse", "sparse"
            ]))
        );
        assert_eq!(h.get("head_dim"), Some(&json!(64)));
    }

    #[test]
    fn indexer_types_are_checked_as_the_class_does() {
        let full = indexer_is_full(&hp(base(json!({})))).unwrap().unwrap();
        assert_eq!(full, [true, true, false, false, false, true]);
        let shared_first =
            base(json!({"indexer_types": ["shared", "full", "full", "full", "full", "full"]}));
        assert!(matches!(
            indexer_is_full(&hp(shared_first)),
            Err(ConvertError::WrongType { .. })
        ));
        let short = base(json!({"indexer_types": ["full"]}));
        assert!(matches!(
            indexer_is_full(&hp(short)),
            Err(ConvertError::OutOfRange { .. })
        ));
        let unknown =
            base(json!({"indexer_types": ["full", "dense", "full", "full", "full", "full"]}));
        assert!(matches!(
            indexer_is_full(&hp(unknown)),
            Err(ConvertError::WrongType { .. })
        ));
        // Without the config class (no model_type), layer_types decides.
        let raw = json!({"architectures": ["HYV4ForCausalLM"], "num_hidden_layers": 2,
                         "index_n_heads": 2, "index_head_dim": 8, "index_topk": 4,
                         "layer_types": ["sparse_attention", "full_attention"]});
        assert_eq!(indexer_is_full(&hp(raw)).unwrap(), Some(vec![true, false]));
        let none = json!({"architectures": ["HYV4ForCausalLM"], "num_hidden_layers": 2});
        assert_eq!(indexer_is_full(&hp(none)).unwrap(), None);
    }

    #[test]
    fn leading_dense_layers_come_from_the_mlp_types_or_the_explicit_count() {
        assert_eq!(leading_dense(&hp(base(json!({})))).unwrap(), 1);
        let two = base(
            json!({"mlp_layer_types": ["dense", "dense", "sparse", "sparse", "sparse", "sparse"]}),
        );
        assert_eq!(leading_dense(&hp(two)).unwrap(), 2);
        let gap = base(
            json!({"mlp_layer_types": ["dense", "sparse", "dense", "sparse", "sparse", "sparse"]}),
        );
        assert!(matches!(
            leading_dense(&hp(gap)),
            Err(ConvertError::Unsupported(_))
        ));
        let disagree = base(json!({"first_k_dense_replace": 3}));
        assert!(matches!(
            leading_dense(&hp(disagree)),
            Err(ConvertError::OutOfRange { .. })
        ));
        let raw = json!({"architectures": ["HYV4ForCausalLM"], "num_hidden_layers": 2});
        assert!(matches!(
            leading_dense(&hp(raw)),
            Err(ConvertError::MissingHparam { .. })
        ));
    }

    #[test]
    fn hc_sinks_and_stacked_down_get_a_weight_suffix() {
        for (from, to) in [
            (
                "model.hc_head.hc_head_fn",
                "model.hc_head.hc_head_fn.weight",
            ),
            (
                "model.layers.2.hc_attn_layer.hc_pre.hc_scale",
                "model.layers.2.hc_attn_layer.hc_pre.hc_scale.weight",
            ),
            (
                "model.layers.2.hc_mlp_layer.hc_pre.hc_base",
                "model.layers.2.hc_mlp_layer.hc_pre.hc_base.weight",
            ),
            (
                "model.layers.1.mlp.experts.down_proj",
                "model.layers.1.mlp.experts.down_proj.weight",
            ),
            (
                "model.layers.0.self_attn.learnable_sink_param",
                "model.layers.0.self_attn.learnable_sink_param.weight",
            ),
            (
                "model.layers.0.hc_attn_layer.hc_pre.hc_other",
                "model.layers.0.hc_attn_layer.hc_pre.hc_other",
            ),
            ("model.norm.weight", "model.norm.weight"),
        ] {
            assert_eq!(with_weight_suffix(from.to_string()), to);
        }
    }

    #[test]
    fn fused_experts_split_gate_first() {
        let h = hp(base(json!({"moe_intermediate_size": 1})));
        // 2 experts, rows [gate, up], hidden 2.
        let x = Expr::constant(vec![1., 2., 3., 4., 5., 6., 7., 8.], vec![2, 2, 2]);
        let Modified::Out(out) =
            split_gate_up(&h, "model.layers.3.mlp.experts.gate_up_proj", x).unwrap()
        else {
            panic!("not split");
        };
        assert_eq!(out[0].0, "blk.3.ffn_gate_exps.weight");
        assert_eq!(out[0].1.eval_f32().unwrap(), [1., 2., 5., 6.]);
        assert_eq!(out[1].0, "blk.3.ffn_up_exps.weight");
        assert_eq!(out[1].1.eval_f32().unwrap(), [3., 4., 7., 8.]);
        let wrong = Expr::constant(vec![0.; 12], vec![2, 3, 2]);
        assert!(split_gate_up(&h, "model.layers.3.mlp.experts.gate_up_proj", wrong).is_err());
    }

    #[test]
    fn an_fp32_head_is_asked_for_by_the_config() {
        let on = hp(base(json!({"enable_lm_head_fp32": true})));
        assert!(fp32_head(&on, "output.weight"));
        assert!(!fp32_head(&on, "token_embd.weight"));
        assert!(!fp32_head(&hp(base(json!({}))), "output.weight"));
    }

    #[test]
    fn group_routing_of_one_group_is_not_routing() {
        assert!(is_one(Some(&json!(1))));
        assert!(is_one(Some(&json!(1.0))));
        assert!(is_one(Some(&json!(true))));
        assert!(!is_one(Some(&json!(2))));
        assert!(!is_one(None));
    }

    #[test]
    fn indexer_tensor_names_are_recognised() {
        assert_eq!(
            indexer_tensor("model.layers.12.self_attn.indexer.wk.weight"),
            Some((12, "wk.weight"))
        );
        assert_eq!(
            indexer_tensor("model.layers.1.self_attn.q_a_proj.weight"),
            None
        );
        assert_eq!(
            indexer_tensor("model.layers.x.self_attn.indexer.wk.weight"),
            None
        );
    }
}
