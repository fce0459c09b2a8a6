//! Qwen4-Exp (Qwen3.8-Flash-Next): `Qwen4ExpForCausalLM` and the text model of
//! `Qwen4ExpForConditionalGeneration` (arch `qwen4exp`), `conversion/qwen4exp.py`.
//!
//! Qwen3.5-MoE's layers (the gated delta-net with its value heads reordered, gated full
//! attention, routed and shared experts: [`super::qwen3next`]) with three additions:
//!
//! - hyper-connections in place of every layer norm (`*_hyper_connection.hc_norm` and the
//!   mixer before the head, whose `norm.weight` gets Qwen3-Next's `+ 1`, their low-rank input
//!   mixers and injection weights);
//! - the QSA indexer on the full-attention layers: its fused `index_qk_proj` is split into
//!   `indexer.q_proj` (`indexer_n_heads * indexer_head_dim` rows) and `indexer.k_proj` (the
//!   rest), and its `q_layernorm` / `k_layernorm` get `+ 1`;
//! - the hashed n-gram per-layer embedding (PLE) module: `ple.norm_key` / `norm_query` /
//!   `norm_conv` get `+ 1`, `ple.conv1d` is squeezed, the table's row shards
//!   (`…ngram_embedding.shard_{i}`, `split_ngram_parts` of them) become one
//!   `per_layer_token_embd` in index order, written where the last shard arrives, and the
//!   int64 hash constants (`layer_multipliers`, `ngram_heads_offsets`,
//!   `ngram_heads_vocab_sizes`) are not tensors but UINT64 arrays of the metadata, read
//!   exactly from the first tensor of each name.
//!
//! The next-token-prediction block is always dropped (`mtp.*`, `model.mtp.*`) and
//! `--mtp` / `--no-mtp` are refused. Hparams: Qwen3.5's, then the hyper-connection count and
//! rank, the indexer's heads, key length and top-k, a compress ratio per layer (the
//! `indexer_compress_ratio` on layers typed `full_attention`, else 0: transformers retypes
//! them `indexed_attention`, so a config AutoConfig reads writes only zeros), and, when
//! `ple_layer_ids` (1-based) is not empty, the PLE keys: its layers (0-based), n-gram size,
//! heads per n-gram, convolution kernel, the EOS id that resets the hash (the last of a list),
//! the image token id when the config has one, the table's row width (when it has shards)
//! and the three constants.

use ggufkit::gguf::keys::{compressed, indexer, layered, ple};
use serde_json::{json, Map, Value as Json};

use super::qwen::QWEN_EXPERTS;
use super::qwen3next::{qwen35_hook, qwen35_params};
use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules, TextType};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::safetensors::StDtype;
use crate::hf::tensors::Entry;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The GGUF tensors of `qwen4exp` (gguf-py's `MODEL_TENSORS`): no output or layer norms.
const TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::HcHeadNorm,
    Tensor::HcHeadDown,
    Tensor::HcHeadUp,
    Tensor::HcAttnNorm,
    Tensor::HcAttnDown,
    Tensor::HcAttnUp,
    Tensor::HcAttnInject,
    Tensor::HcFfnNorm,
    Tensor::HcFfnDown,
    Tensor::HcFfnUp,
    Tensor::HcFfnInject,
    Tensor::AttnQ,
    Tensor::AttnQNorm,
    Tensor::AttnK,
    Tensor::AttnKNorm,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::IndexerQProj,
    Tensor::IndexerKProj,
    Tensor::IndexerQNorm,
    Tensor::IndexerKNorm,
    Tensor::AttnQkv,
    Tensor::AttnGate,
    Tensor::SsmA,
    Tensor::SsmConv1d,
    Tensor::SsmDt,
    Tensor::SsmNorm,
    Tensor::SsmBeta,
    Tensor::SsmAlpha,
    Tensor::SsmOut,
    Tensor::FfnGateInp,
    Tensor::FfnGateInpShexp,
    Tensor::FfnUpShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnGateExp,
    Tensor::FfnGateUpExp,
    Tensor::PerLayerTokenEmbd,
    Tensor::PleKey,
    Tensor::PleValue,
    Tensor::PleNormKey,
    Tensor::PleNormQuery,
    Tensor::PleNormConv,
    Tensor::PleConv1d,
];

/// `Qwen4ExpForCausalLM` and the text model of `Qwen4ExpForConditionalGeneration`.
pub const QWEN4EXP: Arch = Arch {
    hf_names: &["Qwen4ExpForConditionalGeneration", "Qwen4ExpForCausalLM"],
    model_types: &[ModelType {
        name: "qwen4_exp_text",
        hf_classes: &["Qwen4ExpForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 248320,
            "hidden_size" => 2048,
            "num_hidden_layers" => 40,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 2,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "head_dim" => 256,
            "linear_conv_kernel_dim" => 4,
            "linear_key_head_dim" => 128,
            "linear_value_head_dim" => 128,
            "linear_num_key_heads" => 16,
            "linear_num_value_heads" => 32,
            "moe_intermediate_size" => 512,
            "shared_expert_intermediate_size" => 512,
            "num_experts_per_tok" => 10,
            "num_experts" => 512,
            "hc_count" => 4,
            "hc_lowrank" => 320,
            "ple_conv_kernel_size" => 4,
            "ngram_size" => 3,
            "heads_per_ngram" => 8,
            "split_ngram_parts" => 512,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(prepare),
    }],
    composites: &[("qwen4_exp", TextType::Fixed("qwen4_exp_text"))],
    gguf: "qwen4exp",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[TENSORS],
    tensor_overrides: &[],
    filter: drop_mtp,
    rules: Rules {
        fused_experts: true,
        experts: &[QWEN_EXPERTS],
        hook: Some(hook),
        mtp: Some(ple_pass),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks {
        adjust: Some(refuse_invalid),
        ..Hooks::NONE
    },
};

/// A config `Qwen4ExpTextConfig` refuses is refused: the reference reads it as written when
/// AutoConfig raises, but its tokenizer step builds the config again and fails there.
fn refuse_invalid(hp: &mut Hparams) -> Result<(), ConvertError> {
    let mut cfg = hp.map.clone();
    if prepare(&mut cfg) {
        return Ok(());
    }
    Err(format_err(
        hp,
        "the config fails Qwen4ExpTextConfig's validation (layer types, output gate, \
         hyper-connection count, experts, QSA or PLE settings): transformers refuses to load \
         it"
        .into(),
    ))
}

/// `Qwen4ExpTextConfig.__post_init__` and its `validate_architecture`: `ple_layer_ids`
/// sorted and deduplicated (null: empty), `ple_embed_dim` defaulting to `hidden_size`, the
/// layer types filled from `full_attention_interval` (default 4) and `full_attention`
/// retyped `indexed_attention`. `false` (AutoConfig raises, config.json is read as written)
/// for a config the class refuses.
fn prepare(cfg: &mut Map<String, Json>) -> bool {
    let get_u = |cfg: &Map<String, Json>, k: &str, d: u64| match cfg.get(k) {
        None => Some(d),
        Some(v) => v.as_u64(),
    };
    let Some(n_layer) = get_u(cfg, "num_hidden_layers", 40) else {
        return false;
    };
    let n_layer = n_layer.min(crate::hf::config::MAX_BLOCK_COUNT);
    // ple_layer_ids: sorted(set(...)).
    let mut ple: Vec<i64> = match cfg.get("ple_layer_ids") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(a)) => match a.iter().map(Json::as_i64).collect::<Option<Vec<_>>>() {
            Some(v) => v,
            None => return false,
        },
        Some(_) => return false,
    };
    ple.sort_unstable();
    ple.dedup();
    cfg.insert("ple_layer_ids".into(), json!(ple));
    if cfg.get("ple_embed_dim").is_none_or(Json::is_null) {
        let hidden = cfg.get("hidden_size").cloned().unwrap_or(json!(2048));
        cfg.insert("ple_embed_dim".into(), hidden);
    }
    let types: Vec<String> = match cfg.get("layer_types") {
        None | Some(Json::Null) => {
            let interval = match cfg.remove("full_attention_interval") {
                None => 4,
                Some(v) => match v.as_u64().filter(|i| *i != 0) {
                    Some(i) => i,
                    None => return false,
                },
            };
            (0..n_layer)
                .map(|i| {
                    if (i + 1) % interval != 0 {
                        "linear_attention".into()
                    } else {
                        "indexed_attention".into()
                    }
                })
                .collect()
        }
        Some(Json::Array(a)) => {
            let Some(names) = a.iter().map(Json::as_str).collect::<Option<Vec<_>>>() else {
                return false;
            };
            let full = names.contains(&"full_attention");
            names
                .into_iter()
                .map(|t| match t {
                    "full_attention" if full => "indexed_attention".to_string(),
                    t => t.to_string(),
                })
                .collect()
        }
        Some(_) => return false,
    };
    cfg.insert("layer_types".into(), json!(types));
    validate(cfg, &types, &ple)
}

/// `validate_architecture`: the checks a config must pass for AutoConfig to build it.
fn validate(cfg: &Map<String, Json>, types: &[String], ple: &[i64]) -> bool {
    let int = |k: &str, d: i64| match cfg.get(k) {
        None => Some(d),
        Some(v) => v.as_i64(),
    };
    if types
        .iter()
        .any(|t| t != "linear_attention" && t != "indexed_attention")
    {
        return false;
    }
    let gate = match cfg.get("output_gate_type") {
        Some(Json::String(s)) => s.as_str(),
        _ => match cfg.get("hidden_act") {
            None => "silu",
            Some(Json::String(s)) => s.as_str(),
            Some(_) => return false,
        },
    };
    if gate != "sigmoid" && gate != "silu" {
        return false;
    }
    let (Some(hc), Some(experts), Some(used), Some(moe), Some(shared)) = (
        int("hc_count", 4),
        int("num_experts", 512),
        int("num_experts_per_tok", 10),
        int("moe_intermediate_size", 512),
        int("shared_expert_intermediate_size", 512),
    ) else {
        return false;
    };
    if hc <= 1 || experts <= 0 || used <= 0 || used > experts || moe <= 0 || shared <= 0 {
        return false;
    }
    if !validate_qsa(cfg) {
        return false;
    }
    if ple.is_empty() {
        return true;
    }
    let (Some(ngram), Some(per), Some(dim), Some(n_layer)) = (
        int("ngram_size", 3),
        int("heads_per_ngram", 8),
        cfg.get("ple_embed_dim").and_then(Json::as_i64),
        int("num_hidden_layers", 40),
    ) else {
        return false;
    };
    let heads = (ngram - 1).saturating_mul(per);
    if heads <= 0 || dim <= 0 || dim % heads != 0 {
        return false;
    }
    if ple.iter().any(|l| *l < 1 || *l > n_layer) {
        return false;
    }
    if ple
        .iter()
        .any(|l| types.get(*l as usize - 1).map(String::as_str) != Some("linear_attention"))
    {
        return false;
    }
    !matches!(cfg.get("eos_token_id"), None | Some(Json::Null))
        && cfg.get("eos_token_id") != Some(&json!([]))
}

/// The QSA fields: all or none, positive, one key head, a budget of whole blocks, and the
/// rotary dimensions within the index head.
fn validate_qsa(cfg: &Map<String, Json>) -> bool {
    const FIELDS: [&str; 5] = [
        "indexer_n_heads",
        "indexer_kv_heads",
        "indexer_head_dim",
        "indexer_budget",
        "indexer_compress_ratio",
    ];
    let values: Vec<Option<&Json>> = FIELDS
        .iter()
        .map(|k| cfg.get(*k).filter(|v| !v.is_null()))
        .collect();
    if values.iter().all(Option::is_none) {
        return true;
    }
    let Some(v) = values
        .iter()
        .map(|v| v.and_then(Json::as_i64))
        .collect::<Option<Vec<i64>>>()
    else {
        return false;
    };
    if v.iter().any(|x| *x <= 0) || v[1] != 1 || v[3] % v[4] != 0 {
        return false;
    }
    let factor = cfg
        .get("rope_parameters")
        .and_then(|r| r.get("partial_rotary_factor"))
        .and_then(Json::as_f64)
        .unwrap_or(1.0);
    let head_dim = cfg.get("head_dim").and_then(Json::as_f64).unwrap_or(256.0);
    ((head_dim * factor) as i64) <= v[2]
}

/// The class's `filter_tensors` with `no_mtp` set: the next-token-prediction block
/// (`mtp.*`, `model.mtp.*`) is never written.
fn drop_mtp(name: &str) -> Option<String> {
    if name.starts_with("mtp.") || name.starts_with("model.mtp.") {
        None
    } else {
        Some(name.to_string())
    }
}

/// The name the PLE table's entry carries between the class pass and the hook.
const PLE_TABLE: &str = "per_layer_token_embd.weight";

/// The int64 hash constants and the metadata names they are kept under.
const CONSTANTS: [&str; 3] = [
    "ple_embedding.layer_multipliers",
    "ple_embedding.ngram_heads_offsets",
    "ple_embedding.ngram_heads_vocab_sizes",
];

fn format_err(hp: &Hparams, what: String) -> ConvertError {
    ConvertError::format(&hp.path, None, what)
}

/// The class's whole-list work: the n-gram table's shards become one entry where the
/// `split_ngram_parts`-th distinct shard arrives (refused when a shard arrives after it, as
/// the reference then writes the table twice, or when fewer arrive), and the hash constants
/// and the table's row width are kept for [`params`].
fn ple_pass(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    for suffix in CONSTANTS {
        if let Some(e) = entries.iter().find(|e| e.name.ends_with(suffix)) {
            let values = read_ints(&e.name, &e.expr)?;
            hp.derived.insert(suffix.to_string(), json!(values));
        }
    }
    let mut out = Vec::with_capacity(entries.len());
    let mut shards: Vec<(u64, Entry)> = Vec::new();
    let mut emitted = false;
    for e in entries {
        let Some(idx) = shard_index(&e.name) else {
            out.push(e);
            continue;
        };
        if emitted {
            return Err(format_err(
                hp,
                format!(
                    "{}: a PLE embedding shard after the table was complete (the reference \
                     writes per_layer_token_embd twice)",
                    e.name
                ),
            ));
        }
        let parts = hp
            .find_u64(&["split_ngram_parts"])?
            .ok_or_else(|| hp.missing(&["split_ngram_parts"]))?;
        let row = e.expr.shape().last().copied().unwrap_or(1);
        hp.derived.insert("ple_row_dim".into(), json!(row));
        match shards.iter_mut().find(|(i, _)| *i == idx) {
            Some(slot) => slot.1 = e,
            None => shards.push((idx, e)),
        }
        if (shards.len() as u64) < parts {
            continue;
        }
        emitted = true;
        shards.sort_by_key(|(i, _)| *i);
        out.push(table_entry(hp, row, std::mem::take(&mut shards))?);
    }
    if !shards.is_empty() {
        let parts = hp.find_u64(&["split_ngram_parts"])?.unwrap_or(0);
        return Err(format_err(
            hp,
            format!(
                "got {} PLE embedding shards, expected {parts}",
                shards.len()
            ),
        ));
    }
    Ok(out)
}

/// `…ngram_embedding.shard_{i}…` → `i`.
fn shard_index(name: &str) -> Option<u64> {
    if !name.contains(".ngram_embedding.shard_") {
        return None;
    }
    let (_, tail) = name.rsplit_once(".shard_")?;
    let digits = tail.split('.').next().unwrap_or("");
    digits.parse().ok()
}

/// The shards, in index order, as one `(rows, row)` table.
fn table_entry(hp: &Hparams, row: u64, shards: Vec<(u64, Entry)>) -> Result<Entry, ConvertError> {
    let mut parts = Vec::with_capacity(shards.len());
    let mut first: Option<Entry> = None;
    for (_, e) in shards {
        let shape = e.expr.shape();
        if shape.len() != 2 || shape[1] != row {
            return Err(format_err(
                hp,
                format!(
                    "PLE shard {} has shape {shape:?}, expected rows of {row}",
                    e.name
                ),
            ));
        }
        parts.push(e.expr.clone());
        first.get_or_insert(e);
    }
    let first = first.expect("at least one shard");
    Ok(Entry {
        name: PLE_TABLE.to_string(),
        expr: Expr::cat_rows(PLE_TABLE, parts)?,
        ..first
    })
}

/// A tensor's values as exact integers (`int(x)` of its int64 view: floats truncated).
fn read_ints(name: &str, expr: &Expr) -> Result<Vec<i64>, ConvertError> {
    let terr = |problem: String| ConvertError::Tensor {
        name: name.to_string(),
        problem,
    };
    let t = expr
        .as_read()
        .ok_or_else(|| terr("not a plain tensor of the checkpoint".into()))?;
    let bytes = t.bytes().map_err(|e| terr(e.to_string()))?;
    let ints = match t.dtype {
        StDtype::I64 => bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        StDtype::I32 => bytes
            .chunks_exact(4)
            .map(|c| i64::from(i32::from_le_bytes(c.try_into().expect("4 bytes"))))
            .collect(),
        _ => expr
            .eval_f32()
            .map_err(|e| terr(e.to_string()))?
            .into_iter()
            .map(|x| x as i64)
            .collect(),
    };
    Ok(ints)
}

/// `Qwen4ExpTextModel.modify_tensors`, then Qwen3.5's.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if CONSTANTS.iter().any(|c| name.ends_with(c)) {
        return Ok(Modified::Drop);
    }
    if name == PLE_TABLE {
        return Ok(Modified::Named(vec![(name, expr)]));
    }
    if name.contains(".indexer.index_qk_proj.weight") {
        let n_q = hp
            .req_u64(&["indexer_n_heads"])?
            .checked_mul(hp.req_u64(&["indexer_head_dim"])?)
            .ok_or_else(|| format_err(hp, "indexer q projection size overflows".into()))?;
        let rows = expr.shape().first().copied().unwrap_or(0);
        let bid = block_id(&name).unwrap_or(0);
        let q = expr.clone().narrow(&name, 0, 0, n_q.min(rows))?;
        let k = expr.narrow(&name, 0, n_q.min(rows), rows.saturating_sub(n_q))?;
        return Ok(Modified::Out(vec![
            (format!("blk.{bid}.indexer.q_proj.weight"), q),
            (format!("blk.{bid}.indexer.k_proj.weight"), k),
        ]));
    }
    const SHIFTED: [&str; 5] = [
        ".ple.norm_key.weight",
        ".ple.norm_query.weight",
        ".ple.norm_conv.weight",
        ".indexer.q_layernorm.weight",
        ".indexer.k_layernorm.weight",
    ];
    if SHIFTED.iter().any(|s| name.ends_with(s)) {
        return Ok(Modified::Out(vec![(name, expr.add_scalar(1.0))]));
    }
    if name.ends_with(".ple.conv1d.weight") {
        let squeezed = expr.squeeze(&name)?;
        return Ok(Modified::Out(vec![(name, squeezed)]));
    }
    qwen35_hook(hp, name, expr)
}

/// A non-negative count for a UINT32 key.
fn req(hp: &Hparams, key: &str) -> Result<u64, ConvertError> {
    match hp.get(key) {
        None => Err(hp.missing(&[key])),
        Some(v) => json_u64(v).ok_or_else(|| ConvertError::wrong_type(&hp.path, key, "a count", v)),
    }
}

/// `Qwen4ExpTextModel.set_gguf_parameters`: Qwen3.5's, then the class's own keys.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    qwen35_params(p)?;
    let hp = p.hp;
    p.u32(compressed::HC_COUNT, req(hp, "hc_count")?)?;
    p.u32(compressed::HC_LOW_RANK, req(hp, "hc_lowrank")?)?;
    let n_layer = req(hp, "num_hidden_layers")?;
    p.u32(indexer::HEAD_COUNT, req(hp, "indexer_n_heads")?)?;
    p.u32(indexer::KEY_LENGTH, req(hp, "indexer_head_dim")?)?;
    p.u32(indexer::TOP_K, req(hp, "indexer_budget")?)?;
    compress_ratios(p, n_layer)?;
    ple_params(p)
}

/// A compress ratio per layer: `indexer_compress_ratio` on `full_attention` layers, else 0.
fn compress_ratios(p: &mut Params, n_layer: u64) -> Result<(), ConvertError> {
    let hp = p.hp;
    let ratio = hp
        .get("indexer_compress_ratio")
        .ok_or_else(|| hp.missing(&["indexer_compress_ratio"]))?;
    let types = match hp.get("layer_types") {
        Some(Json::Array(t)) => t,
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "layer_types",
                "a list",
                v,
            ))
        }
        None => return Err(hp.missing(&["layer_types"])),
    };
    let mut out = Vec::with_capacity(n_layer as usize);
    for i in 0..n_layer as usize {
        let t = types
            .get(i)
            .ok_or_else(|| format_err(hp, format!("layer_types has no entry for layer {i}")))?;
        if t.as_str() == Some("full_attention") {
            let r = ratio
                .as_i64()
                .and_then(|r| i32::try_from(r).ok())
                .ok_or_else(|| {
                    ConvertError::wrong_type(&hp.path, "indexer_compress_ratio", "an INT32", ratio)
                })?;
            out.push(r);
        } else {
            out.push(0);
        }
    }
    p.i32s(compressed::COMPRESS_RATIOS, out);
    Ok(())
}

/// The PLE keys, when `ple_layer_ids` lists a layer.
fn ple_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let ids = match hp.get("ple_layer_ids") {
        Some(Json::Array(a)) => a,
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "ple_layer_ids",
                "a list",
                v,
            ))
        }
        None => return Err(hp.missing(&["ple_layer_ids"])),
    };
    if ids.is_empty() {
        return Ok(());
    }
    let layers = ids
        .iter()
        .map(|v| v.as_i64().and_then(|i| i32::try_from(i - 1).ok()))
        .collect::<Option<Vec<i32>>>()
        .ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "ple_layer_ids", "INT32 layer ids", json!(ids))
        })?;
    p.i32s(ple::LAYERS, layers);
    p.u32(ple::NGRAM_SIZE, req(hp, "ngram_size")?)?;
    p.u32(ple::HEADS_PER_NGRAM, req(hp, "heads_per_ngram")?)?;
    p.u32(ple::CONV_KERNEL, req(hp, "ple_conv_kernel_size")?)?;
    p.u32(ple::EOS_TOKEN_ID, eos_token_id(hp)?)?;
    if let Some(img) = hp.get("image_token_id").filter(|v| !v.is_null()) {
        let id = json_u64(img).ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "image_token_id", "a token id", img)
        })?;
        p.u32(ple::IMAGE_TOKEN_ID, id)?;
    }
    if let Some(row) = hp.derived.get("ple_row_dim").and_then(Json::as_u64) {
        p.u32(layered::EMBEDDING_LENGTH_PER_LAYER_INPUT, row)?;
    }
    for (suffix, key) in CONSTANTS.iter().zip([
        ple::LAYER_MULTIPLIERS,
        ple::HEAD_OFFSETS,
        ple::HEAD_VOCAB_SIZES,
    ]) {
        let values = hp.derived.get(*suffix).ok_or_else(|| {
            format_err(
                hp,
                format!("PLE constant {suffix:?} missing from the checkpoint"),
            )
        })?;
        let ints = values
            .as_array()
            .map(|a| a.iter().map(Json::as_u64).collect::<Option<Vec<u64>>>())
            .unwrap_or_default()
            .ok_or_else(|| {
                format_err(
                    hp,
                    format!("PLE constant {suffix:?} holds a negative value (not a UINT64)"),
                )
            })?;
        p.u64s(key, ints);
    }
    Ok(())
}

/// The EOS id the hash resets on: the last of a list (the primary one), required.
fn eos_token_id(hp: &Hparams) -> Result<u64, ConvertError> {
    let v = match hp.get("eos_token_id") {
        None | Some(Json::Null) => {
            return Err(format_err(
                hp,
                "eos_token_id is required: the PLE hash resets its n-grams on it".into(),
            ))
        }
        Some(Json::Array(a)) => a
            .last()
            .ok_or_else(|| format_err(hp, "eos_token_id is an empty list".into()))?,
        Some(v) => v,
    };
    json_u64(v).ok_or_else(|| ConvertError::wrong_type(&hp.path, "eos_token_id", "a token id", v))
}
