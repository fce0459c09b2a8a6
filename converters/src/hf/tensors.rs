//! The tensor pipeline: source names → filtered, ordered model tensors (`index_tensors`,
//! `filter_tensors`, `dequant_model`) → output tensors with their GGML types
//! (`prepare_tensors`, `modify_tensors`).

use std::collections::HashMap;
use std::path::Path;

use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::config::{json_u64, Hparams};
use super::expr::Expr;
pub(crate) use super::family::Entry;
use super::family::{Arch, Experts, Modified, QkPermute};
use super::names::{block_id, TensorMap};
use super::outtype::{self, OutType};
use super::prequant::Nvfp4Out;
use super::safetensors::{StDtype, StTensor};
use super::ModelDir;
use crate::ConvertError;

/// `TextModel.filter_tensors` + `ModelBase.filter_tensors`, after the class's own filter.
pub(crate) fn filter_name(arch: &Arch, name: &str) -> Option<String> {
    let name = (arch.filter)(name)?;
    const PREFIXES: &[&str] = &[
        "mlp",
        "vit.",
        "vpm.",
        "siglip2.",
        "conformer.",
        "merger.",
        "resampler.",
        "sound_encoder.",
        "sound_projection.",
        "speech_embeddings.",
    ];
    const PARTS: &[&str] = &[
        "visual.",
        "vision.",
        "audio.",
        "talker.",
        "vision_",
        "audio_",
        "token2wav.",
        "code2wav.",
        "projector.",
        "pre_mm_projector_norm",
        "image_newline",
        "view_seperator",
        "patch_embed",
        "patch_embedding",
        "patch_merger.",
        "patch_merge_mlp.",
        "model.connector.",
    ];
    if PREFIXES.iter().any(|p| name.starts_with(p)) || PARTS.iter().any(|p| name.contains(p)) {
        return None;
    }
    let mut name = name;
    if name.ends_with("e_score_correction_bias") {
        name = name.replace("e_score_correction_bias", "e_score_correction.bias");
    }
    Some(name.replace("language_model.", ""))
}

/// The filtered model tensors in order. A name seen twice keeps its first position and its
/// last value (a Python dict).
///
/// Under `--mtp` / `--no-mtp` ([`Hparams::mtp`]) the class's [`super::family::MtpExport`] test
/// then keeps only the next-token-prediction tensors (and the ones they share) or drops them.
pub fn collect(
    arch: &Arch,
    hp: &Hparams,
    sources: Vec<StTensor>,
) -> Result<Vec<Entry>, ConvertError> {
    let mut out: Vec<Entry> = Vec::with_capacity(sources.len());
    let mut pos: HashMap<String, usize> = HashMap::new();
    let export = match hp.mtp {
        super::Mtp::Keep => None,
        _ => arch.rules.mtp_export.as_ref(),
    };
    for t in sources {
        let Some(name) = filter_name(arch, &t.name) else {
            continue;
        };
        if let Some(x) = export {
            let seen = if x.raw_names {
                t.name.as_str()
            } else {
                name.as_str()
            };
            let is_mtp = (x.is_mtp)(hp, seen)?;
            let keep = match hp.mtp {
                super::Mtp::Drop => !is_mtp,
                _ => is_mtp || x.shared.contains(&seen),
            };
            if !keep {
                continue;
            }
        }
        let entry = Entry {
            name: name.clone(),
            dtype: t.dtype,
            expr: Expr::read(t),
            fp8_q8: false,
            type_bid: None,
        };
        match pos.get(&name) {
            Some(&i) => out[i] = entry,
            None => {
                pos.insert(name, out.len());
                out.push(entry);
            }
        }
    }
    Ok(out)
}

/// The quantization of a checkpoint as `prepare_tensors` detects it: `quantization_config`
/// of config.json, completed from `hf_quant_config.json` (ModelOpt) when that lacks a
/// `quant_algo` or `quantized_layers`.
struct QuantInfo<'a> {
    /// config.json's `quantization_config` object, if any.
    config: Option<&'a serde_json::Map<String, Json>>,
    /// The method `dequant_model` acts on: config.json's `quant_method`, or ModelOpt's
    /// producer name when config.json has none and `hf_quant_config.json` exists.
    method: Option<String>,
    /// NVFP4 weights (`quant_algo` NVFP4 or W4A16_NVFP4, compressed-tensors
    /// `nvfp4-pack-quantized` groups, or a layer whose algorithm ends in NVFP4).
    nvfp4: bool,
    /// `quant_method: "mxfp4"` (after `hf_quant_config.json`).
    mxfp4: bool,
    /// NVFP4 in compressed-tensors' layout (`nvfp4-pack-quantized`).
    nvfp4_ct: bool,
    /// The checkpoint-wide `quant_algo` (before an NVFP4 layer or group makes it NVFP4).
    algo: Option<String>,
    /// `quantized_layers`' object entries: module path → `quant_algo`.
    layer_algo: HashMap<String, Option<String>>,
}

fn qstr<'a>(m: Option<&'a serde_json::Map<String, Json>>, key: &str) -> Option<&'a str> {
    m.and_then(|m| m.get(key)).and_then(Json::as_str)
}

fn quant_info<'a>(hp: &'a Hparams, dir: &Path) -> Result<QuantInfo<'a>, ConvertError> {
    let config = match hp.get("quantization_config") {
        Some(Json::Object(m)) => Some(m),
        _ => None,
    };
    let mut method = qstr(config, "quant_method").map(str::to_string);
    let mut algo = qstr(config, "quant_algo").map(str::to_string);
    let mut format = qstr(config, "format").map(str::to_string);
    let object = |m: Option<&serde_json::Map<String, Json>>, k: &str| {
        m.and_then(|m| m.get(k))
            .and_then(Json::as_object)
            .filter(|o| !o.is_empty())
            .cloned()
    };
    let mut groups = object(config, "config_groups");
    let mut layers = object(config, "quantized_layers");
    let mut dequant_method = method.clone();
    let hfq = dir.join("hf_quant_config.json");
    if (algo.is_none() || layers.is_none()) && hfq.is_file() {
        let j = super::params::read_json(&hfq)?;
        let q = j.get("quantization").and_then(Json::as_object);
        let producer = j
            .get("producer")
            .and_then(|p| p.get("name"))
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_lowercase();
        if method.is_none() {
            method = Some(producer.clone());
            dequant_method = Some(producer);
        }
        algo = qstr(q, "quant_algo").map(str::to_string).or(algo);
        method = qstr(q, "quant_method").map(str::to_string).or(method);
        format = qstr(q, "format").map(str::to_string).or(format);
        groups = object(q, "config_groups").or(groups);
        layers = object(q, "quantized_layers").or(layers);
    }
    let nvfp4_groups = method.as_deref() == Some("compressed-tensors")
        && (format.as_deref() == Some("nvfp4-pack-quantized")
            || format.as_deref() == Some("mixed-precision")
                && groups.as_ref().is_some_and(|g| {
                    g.values()
                        .filter_map(Json::as_object)
                        .all(|g| qstr(Some(g), "format") == Some("nvfp4-pack-quantized"))
                }));
    let nvfp4_layers = layers.as_ref().is_some_and(|l| {
        l.values().filter_map(Json::as_object).any(|v| {
            v.get("quant_algo")
                .and_then(Json::as_str)
                .is_some_and(|a| a.ends_with("NVFP4"))
        })
    });
    let nvfp4 =
        matches!(algo.as_deref(), Some("NVFP4" | "W4A16_NVFP4")) || nvfp4_groups || nvfp4_layers;
    let layer_algo = layers
        .iter()
        .flat_map(|l| l.iter())
        .filter_map(|(k, v)| {
            let v = v.as_object()?;
            let a = v
                .get("quant_algo")
                .and_then(Json::as_str)
                .map(str::to_string);
            Some((k.clone(), a))
        })
        .collect();
    Ok(QuantInfo {
        config,
        method: dequant_method,
        nvfp4,
        mxfp4: method.as_deref() == Some("mxfp4"),
        nvfp4_ct: nvfp4_groups,
        algo,
        layer_algo,
    })
}

/// The file type `prepare_metadata` writes instead of an F32/F16/BF16 outtype's for a
/// checkpoint whose weights stay quantized: MOSTLY_NVFP4 for NVFP4, MOSTLY_MXFP4_MOE for
/// `quant_method: "mxfp4"`.
pub fn packed_file_type(hp: &Hparams, dir: &Path) -> Result<Option<u32>, ConvertError> {
    use ggufkit::quantize::ftype::ft;
    let info = quant_info(hp, dir)?;
    Ok(if info.nvfp4 {
        Some(ft::NVFP4)
    } else if info.mxfp4 {
        Some(ft::MXFP4_MOE)
    } else {
        None
    })
}

/// What a method's rules say about a tensor name.
type RoleOf = fn(&str) -> Option<ScaleRole>;

/// How `dequant_model` treats one tensor name.
enum ScaleRole {
    /// A scale of the weight named here.
    ScaleOf(String),
    /// A tensor the converter drops (activation or KV-cache scales).
    Unused,
    /// A scale whose weight is absent: dropped (ModelOpt).
    Orphan,
}

/// `dequant_model` for the checkpoint formats we read: FP8 (and int8) weights with their
/// scales are replaced by their F32 dequantization `weight.float() * scale` (the scale
/// per tensor, per channel or per block), unused activation scales are dropped; other
/// quantized checkpoints are refused. With `fp8_as_q8`, the weights dequantized from FP8
/// are marked for Q8_0 ([`Entry::fp8_q8`]).
///
/// * `quant_method: "fp8"`: `<weight>_scale_inv` (any rank: one value, per row, or blocks of
///   `weight_block_size`) and Mistral's `<module>.qscale_weight`; `activation_scale` and
///   `qscale_act` are dropped.
/// * `"compressed-tensors"` with one config group in format `float-quantized`,
///   `int-quantized` or `naive-quantized`, strategy `channel` or `block`
///   (`block_structure`): `<weight>_scale`. Other tensors (an `input_scale`) are left for
///   the mapping, which refuses them, as the reference does.
/// * `"gptq"` and compressed-tensors `pack-quantized` weights are dequantized by
///   [`super::intquant`].
/// * `"modelopt"` (FP8; `hf_quant_config.json`): `<weight>_scale`; `input_scale`,
///   `k_scale`, `v_scale` are dropped.
pub fn dequantize(
    arch: &Arch,
    hp: &Hparams,
    dir: &Path,
    entries: Vec<Entry>,
    fp8_as_q8: bool,
) -> Result<(Vec<Entry>, Vec<Nvfp4Out>), ConvertError> {
    let info = quant_info(hp, dir)?;
    let mut entries = entries;
    let mut nvfp4 = Vec::new();
    if info.nvfp4 {
        // Repacked before dequant_model, which is skipped when no scale is left.
        let qk_heads = if arch.rules.permute_qk == QkPermute::WeightsAndBiases {
            match hp.find_u64(&["n_heads", "num_attention_heads"])? {
                Some(n) => Some((n, hp.find_u64(&["n_kv_heads", "num_key_value_heads"])?)),
                None => None,
            }
        } else {
            None
        };
        let cfg = super::prequant::Nvfp4Config {
            compressed_tensors: info.nvfp4_ct,
            n_experts: hp
                .find_u64(&["num_local_experts", "num_experts"])?
                .unwrap_or(0),
            algo: info.algo.clone(),
            layer_algo: info.layer_algo.clone(),
            qk_heads,
        };
        nvfp4 = super::prequant::nvfp4(&mut entries, &cfg)?;
        let left = entries
            .iter()
            .any(|e| e.name.ends_with(".weight_scale") || e.name.ends_with(".weight_scale_inv"));
        if !left {
            return Ok((entries, nvfp4));
        }
    }
    // A class with its own dequant_model (DeepSeek V4's `.scale` pairs) replaces this one.
    if let Some(own) = arch.rules.dequant {
        if arch.rules.dequant_when.is_none_or(|applies| applies(hp)) {
            return own(hp, entries).map(|e| (e, nvfp4));
        }
    }
    // gpt-oss skips dequant_model for its MXFP4 checkpoints (the experts are repacked).
    if info.mxfp4 && arch.rules.mxfp4.is_some() {
        return Ok((entries, nvfp4));
    }
    let Some(method) = info.method.as_deref() else {
        return Ok((entries, nvfp4));
    };
    dequant_method(hp, info.config, method, entries, fp8_as_q8).map(|e| (e, nvfp4))
}

/// `dequant_model` for one `quant_method` (see [`dequantize`]).
fn dequant_method(
    hp: &Hparams,
    qc: Option<&serde_json::Map<String, Json>>,
    method: &str,
    entries: Vec<Entry>,
    fp8_as_q8: bool,
) -> Result<Vec<Entry>, ConvertError> {
    match quant_scheme(hp, qc, method)? {
        Scheme::PackQuantized { bits, group_size } => {
            super::intquant::pack_quantized(entries, bits, group_size)
        }
        Scheme::Gptq { bits, v1 } => super::intquant::gptq(entries, bits, v1),
        Scheme::Scaled { block, role, fp8 } => {
            attach_scales(entries, method == "modelopt", block, role, fp8, fp8_as_q8)
        }
    }
}

/// How a `quant_method` stores its weights.
enum Scheme {
    /// Each weight with scale tensors beside it: the block shape of a scale element (`None`:
    /// one scale per row or per tensor), which names are scales of which weight, and whether
    /// the weights are FP8 (`None`: as their own dtype says), for `--fp8-as-q8`.
    Scaled {
        block: Option<Vec<u64>>,
        role: RoleOf,
        fp8: Option<bool>,
    },
    /// compressed-tensors' packed integers in groups.
    PackQuantized { bits: u64, group_size: u64 },
    /// GPTQ (`v1`: zero points stored minus one).
    Gptq { bits: u64, v1: bool },
}

/// A `quantization_config` key the method needs is absent.
fn cfg_missing(hp: &Hparams, key: &str) -> ConvertError {
    hp.missing(&[&format!("quantization_config.{key}")])
}

/// A block shape (`weight_block_size`, `block_structure`): `None` when absent or null.
fn parse_block(
    hp: &Hparams,
    v: Option<&Json>,
    key: &str,
) -> Result<Option<Vec<u64>>, ConvertError> {
    match v {
        None | Some(Json::Null) => Ok(None),
        Some(x @ Json::Array(a)) => a
            .iter()
            .map(json_u64)
            .collect::<Option<Vec<u64>>>()
            .map(Some)
            .ok_or_else(|| cfg_invalid(hp, key, x, "a list of non-negative integers")),
        Some(x) => Err(cfg_invalid(hp, key, x, "a list of non-negative integers")),
    }
}

/// A `quantization_config` value that is present but unusable, named at its own key.
fn cfg_invalid(hp: &Hparams, key: &str, v: &Json, want: &str) -> ConvertError {
    ConvertError::format(
        &hp.path,
        None,
        format!("quantization_config.{key} is {v}: not {want}"),
    )
}

/// A non-negative integer `quantization_config` value: missing when absent or null,
/// invalid when present as anything else.
fn cfg_u64(hp: &Hparams, key: &str, v: Option<&Json>) -> Result<u64, ConvertError> {
    match v {
        None | Some(Json::Null) => Err(cfg_missing(hp, key)),
        Some(x) => x
            .as_u64()
            .ok_or_else(|| cfg_invalid(hp, key, x, "a non-negative integer")),
    }
}

/// The storage scheme of `quant_method` from its `quantization_config`; the methods and
/// variants the reference refuses are refused.
fn quant_scheme(
    hp: &Hparams,
    qc: Option<&serde_json::Map<String, Json>>,
    method: &str,
) -> Result<Scheme, ConvertError> {
    let unsupported = |what: String| Err(ConvertError::Unsupported(what));
    match method {
        "fp8" => Ok(Scheme::Scaled {
            block: parse_block(
                hp,
                qc.and_then(|q| q.get("weight_block_size")),
                "weight_block_size",
            )?,
            role: |name| {
                if let Some(w) = name.strip_suffix("_scale_inv") {
                    return Some(ScaleRole::ScaleOf(w.to_string()));
                }
                if let Some(b) = name.strip_suffix("qscale_weight") {
                    if b.ends_with('.') {
                        return Some(ScaleRole::ScaleOf(format!("{b}weight")));
                    }
                }
                [".activation_scale", "_activation_scale", ".qscale_act"]
                    .iter()
                    .any(|s| name.ends_with(s))
                    .then_some(ScaleRole::Unused)
            },
            fp8: Some(true),
        }),
        "compressed-tensors" => compressed_tensors_scheme(hp, qc),
        "modelopt" => Ok(Scheme::Scaled {
            block: None,
            role: |name| {
                if let Some(b) = name.strip_suffix(".weight_scale") {
                    return Some(ScaleRole::ScaleOf(format!("{b}.weight")));
                }
                [".input_scale", ".k_scale", ".v_scale"]
                    .iter()
                    .any(|s| name.ends_with(s))
                    .then_some(ScaleRole::Unused)
            },
            // FP8 when the weight's own dtype is.
            fp8: None,
        }),
        "gptq" => {
            let bits = cfg_u64(hp, "bits", qc.and_then(|q| q.get("bits")))?;
            // `checkpoint_format` "gptq" (the default) stores zero points minus one.
            let v1 = match qc.and_then(|q| q.get("checkpoint_format")) {
                None => true,
                Some(f) => f.as_str() == Some("gptq"),
            };
            Ok(Scheme::Gptq { bits, v1 })
        }
        "bitnet" => unsupported(format!(
            "quantized checkpoints with quant_method {method:?} are not supported"
        )),
        m => unsupported(format!(
            "quantized checkpoints with quant_method {m:?} are not supported (nor by \
                 the reference)"
        )),
    }
}

/// compressed-tensors' scheme: one config group, whose `format` and weight `strategy` the
/// reference takes.
fn compressed_tensors_scheme(
    hp: &Hparams,
    qc: Option<&serde_json::Map<String, Json>>,
) -> Result<Scheme, ConvertError> {
    let unsupported = |what: String| Err(ConvertError::Unsupported(what));
    let format = qstr(qc, "format").ok_or_else(|| cfg_missing(hp, "format"))?;
    let groups = qc
        .and_then(|q| q.get("config_groups"))
        .and_then(Json::as_object)
        .ok_or_else(|| cfg_missing(hp, "config_groups"))?;
    if groups.len() > 1 {
        return unsupported(
            "compressed-tensors checkpoints with more than one config group are not \
                 supported (nor by the reference)"
                .into(),
        );
    }
    let group = groups.keys().next().cloned().unwrap_or_default();
    let weights_key = |k: &str| format!("config_groups.{group}.weights.{k}");
    let weights = groups
        .values()
        .next()
        .and_then(|g| g.get("weights"))
        .and_then(Json::as_object)
        .ok_or_else(|| cfg_missing(hp, "config_groups.*.weights"))?;
    if format == "pack-quantized" {
        let strategy = weights.get("strategy").and_then(Json::as_str);
        if strategy != Some("group") {
            return unsupported(format!(
                "compressed-tensors pack-quantized weight strategy {strategy:?} is not \
                 supported (the reference takes \"group\")"
            ));
        }
        let ty = weights.get("type").map_or(Some("int"), Json::as_str);
        if ty != Some("int") {
            return unsupported(format!(
                "compressed-tensors pack-quantized weights of type {ty:?} are not \
                 supported (the reference takes \"int\")"
            ));
        }
        let int = |k: &str| cfg_u64(hp, &weights_key(k), weights.get(k));
        return Ok(Scheme::PackQuantized {
            bits: int("num_bits")?,
            group_size: int("group_size")?,
        });
    }
    if !matches!(
        format,
        "float-quantized" | "int-quantized" | "naive-quantized"
    ) {
        return unsupported(format!(
            "compressed-tensors format {format:?} is not supported (only \
                 float-quantized, int-quantized and naive-quantized)"
        ));
    }
    let strategy = weights.get("strategy").and_then(Json::as_str);
    if !matches!(strategy, Some("channel" | "block")) {
        return unsupported(format!(
            "compressed-tensors weight strategy {strategy:?} is not supported (the \
                 reference takes \"channel\" and \"block\")"
        ));
    }
    if !matches!(weights.get("group_size"), None | Some(Json::Null)) {
        return unsupported(
            "compressed-tensors weights with a group_size are not supported (nor \
                 by the reference)"
                .into(),
        );
    }
    let is_fp8 = format == "float-quantized"
        && weights.get("type").and_then(Json::as_str) == Some("float")
        && weights.get("num_bits").and_then(Json::as_u64) == Some(8);
    Ok(Scheme::Scaled {
        block: parse_block(
            hp,
            weights.get("block_structure"),
            &weights_key("block_structure"),
        )?,
        role: |name| {
            name.strip_suffix(".weight_scale")
                .map(|b| ScaleRole::ScaleOf(format!("{b}.weight")))
        },
        fp8: Some(is_fp8),
    })
}

/// Each weight's scales folded into it as a dequantization ([`Expr::dequant`]), the other
/// scale tensors dropped; `orphans_dropped`: a scale whose weight is absent is dropped
/// (ModelOpt) rather than refused.
fn attach_scales(
    entries: Vec<Entry>,
    orphans_dropped: bool,
    block: Option<Vec<u64>>,
    role: RoleOf,
    fp8: Option<bool>,
    fp8_as_q8: bool,
) -> Result<Vec<Entry>, ConvertError> {
    let pos: HashMap<String, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.name.clone(), i))
        .collect();
    let mut entries: Vec<Option<Entry>> = entries.into_iter().map(Some).collect();
    for i in 0..entries.len() {
        let name = match &entries[i] {
            Some(e) => e.name.clone(),
            None => continue,
        };
        let role = match role(&name) {
            Some(ScaleRole::ScaleOf(w)) if orphans_dropped && !pos.contains_key(&w) => {
                ScaleRole::Orphan
            }
            Some(r) => r,
            None => continue,
        };
        let wname = match role {
            ScaleRole::Unused | ScaleRole::Orphan => {
                entries[i] = None;
                continue;
            }
            ScaleRole::ScaleOf(w) => w,
        };
        let wi = *pos.get(&wname).ok_or_else(|| ConvertError::Tensor {
            name: name.clone(),
            problem: format!("scale without its weight '{wname}'"),
        })?;
        let scale = entries[i].take().expect("present").expr;
        let w = entries[wi].as_mut().ok_or_else(|| ConvertError::Tensor {
            name: wname.clone(),
            problem: "weight scaled twice".into(),
        })?;
        let is_fp8 = fp8.unwrap_or(matches!(w.dtype, StDtype::F8E4M3 | StDtype::F8E5M2));
        w.expr = Expr::dequant(&wname, w.expr.clone(), scale, block.clone())?;
        w.fp8_q8 |= fp8_as_q8 && is_fp8;
    }
    Ok(entries.into_iter().flatten().collect())
}

/// One output tensor, planned.
pub struct Planned {
    /// GGUF name.
    pub name: String,
    /// Values (PyTorch-order shape).
    pub expr: Expr,
    /// Output type.
    pub ty: GgmlType,
}

/// The `modify_tensors` state of one conversion.
struct Modifier<'a> {
    arch: &'a Arch,
    hp: &'a Hparams,
    dir: &'a ModelDir,
    map: TensorMap,
    /// Buffered stack members per (stack index, block).
    experts: HashMap<(usize, u64), Vec<(String, Expr)>>,
    /// Members of [`super::family::Rules::stacked`] seen so far, per stack.
    stacked: HashMap<usize, Vec<Option<Expr>>>,
    vocab_rows: Option<u64>,
    /// `token_embd.weight`, kept for [`super::family::Rules::omit_tied_output`].
    tok_embd: Option<Expr>,
}

fn terr(name: &str, problem: impl Into<String>) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem: problem.into(),
    }
}

impl<'a> Modifier<'a> {
    fn new(arch: &'a Arch, hp: &'a Hparams, dir: &'a ModelDir) -> Result<Self, ConvertError> {
        Ok(Modifier {
            arch,
            hp,
            dir,
            map: TensorMap::new(arch.tensors, arch.tensor_overrides, hp.block_count()?),
            experts: HashMap::new(),
            stacked: HashMap::new(),
            vocab_rows: None,
            tok_embd: None,
        })
    }

    fn map_name(&self, name: &str) -> Result<String, ConvertError> {
        self.map.get(name).ok_or_else(|| {
            terr(
                name,
                format!(
                    "can not map tensor (no {} tensor has this name)",
                    self.arch.gguf
                ),
            )
        })
    }

    /// Gemma 3's real vocabulary size: config `vocab_size` with a SentencePiece model,
    /// else the tokenizer.json vocabulary plus its added tokens.
    fn vocab_rows(&mut self) -> Result<u64, ConvertError> {
        if let Some(n) = self.vocab_rows {
            return Ok(n);
        }
        let n = if self.dir.has_file(super::model_dir::TOKENIZER_MODEL) {
            self.hp.req_u64(&["vocab_size"])?
        } else {
            let tj = self.dir.tokenizer_json()?.ok_or_else(|| {
                ConvertError::io(
                    self.dir.tokenizer_json_path(),
                    std::io::Error::from(std::io::ErrorKind::NotFound),
                )
            })?;
            let vocab = tj
                .get("model")
                .and_then(|m| m.get("vocab"))
                .map(|v| match v {
                    Json::Object(m) => m.len(),
                    Json::Array(a) => a.len(),
                    _ => 0,
                })
                .unwrap_or(0);
            let added = tj
                .get("added_tokens")
                .and_then(Json::as_array)
                .map_or(0, Vec::len);
            (vocab + added) as u64
        };
        self.vocab_rows = Some(n);
        Ok(n)
    }

    fn modify(
        &mut self,
        name: String,
        expr: Expr,
        bid: Option<u64>,
    ) -> Result<Vec<(String, Expr)>, ConvertError> {
        let out = self.modify_inner(name, expr, bid)?;
        if !self.arch.rules.omit_tied_output {
            return Ok(out);
        }
        let mut kept = Vec::with_capacity(out.len());
        for (name, expr) in out {
            if name == "output.weight" {
                if let Some(embd) = &self.tok_embd {
                    if same_values(embd, &expr)? {
                        continue;
                    }
                }
            } else if name == "token_embd.weight" {
                self.tok_embd = Some(expr.clone());
            }
            kept.push((name, expr));
        }
        Ok(kept)
    }

    fn modify_inner(
        &mut self,
        name: String,
        expr: Expr,
        bid: Option<u64>,
    ) -> Result<Vec<(String, Expr)>, ConvertError> {
        let rules = &self.arch.rules;
        let hp = self.hp;
        let name = match rules.rename {
            Some(r) => r(hp, &name),
            None => name,
        };
        let (mut name, mut expr) = match rules.hook {
            None => (name, expr),
            Some(h) => match h(hp, name, expr)? {
                Modified::Pass(n, e) => (n, e),
                Modified::Drop => return Ok(Vec::new()),
                Modified::Out(v) => {
                    return v
                        .into_iter()
                        .map(|(n, e)| Ok((self.map_name(&n)?, e)))
                        .collect()
                }
                Modified::Named(v) => return Ok(v),
            },
        };
        if let Some(i) = rules.stacked.iter().position(|s| name.contains(s.marker)) {
            return self.stack_member(i, name, expr);
        }
        if rules.headless_arch == Some(hp.arch.as_str()) {
            name = format!("model.{name}");
        }
        expr = permute_qk(hp, &name, expr, rules.permute_qk)?;
        if rules.slice_embeddings && name.contains("embed_tokens.weight") {
            let rows = expr.shape().first().copied().unwrap_or(0);
            let n = self.vocab_rows()?.min(rows);
            expr = expr.narrow(&name, 0, 0, n)?;
        }
        if rules.norm_shift && name.ends_with("norm.weight") {
            expr = expr.add_scalar(1.0);
        }
        if rules.transpose.iter().any(|s| name.ends_with(s)) {
            expr = expr.transpose(&name)?;
        }
        if rules.fused_experts {
            if name.ends_with("mlp.experts.down_proj")
                || name.ends_with("mlp.experts.down_proj.weight")
            {
                let mapped = if name.ends_with(".weight") {
                    name.clone()
                } else {
                    format!("{name}.weight")
                };
                return Ok(vec![(self.map_name(&mapped)?, expr)]);
            }
            if name.ends_with("mlp.experts.gate_up_proj")
                || name.ends_with("mlp.experts.gate_up_proj.weight")
            {
                let s = expr.shape().to_vec();
                if s.len() < 3 || !s[s.len() - 2].is_multiple_of(2) {
                    return Err(terr(&name, format!("unexpected gate_up_proj shape {s:?}")));
                }
                let axis = s.len() - 2;
                let n_ff = s[axis] / 2;
                let base = name
                    .trim_end_matches(".weight")
                    .trim_end_matches(".gate_up_proj");
                let gate = expr.clone().narrow(&name, axis, 0, n_ff)?;
                let up = expr.narrow(&name, axis, n_ff, n_ff)?;
                return Ok(vec![
                    (self.map_name(&format!("{base}.gate_proj.weight"))?, gate),
                    (self.map_name(&format!("{base}.up_proj.weight"))?, up),
                ]);
            }
        }
        if let Some(i) = rules.experts.iter().position(|ex| name.contains(ex.marker)) {
            return self.buffer_expert(i, name, expr, bid);
        }
        Ok(vec![(self.map_name(&name)?, expr)])
    }

    /// One member of a [`super::family::Stacked`] group: the stack once every member is in.
    fn stack_member(
        &mut self,
        index: usize,
        name: String,
        expr: Expr,
    ) -> Result<Vec<(String, Expr)>, ConvertError> {
        let st = &self.arch.rules.stacked[index];
        let member = (0..st.count)
            .find(|i| name.contains(&format!(".{i}.")))
            .ok_or_else(|| {
                terr(
                    &name,
                    format!(
                        "unknown member of {} (expected .0. to .{}.)",
                        st.merged_name,
                        st.count.saturating_sub(1)
                    ),
                )
            })?;
        let slots = self
            .stacked
            .entry(index)
            .or_insert_with(|| vec![None; st.count]);
        slots[member] = Some(expr);
        if slots.iter().any(Option::is_none) {
            return Ok(Vec::new());
        }
        let parts: Vec<Expr> = slots.iter().flatten().cloned().collect();
        let stacked = Expr::stack(st.merged_name, parts)?;
        Ok(vec![(self.map_name(st.merged_name)?, stacked)])
    }

    fn buffer_expert(
        &mut self,
        index: usize,
        name: String,
        expr: Expr,
        bid: Option<u64>,
    ) -> Result<Vec<(String, Expr)>, ConvertError> {
        let ex: &Experts = &self.arch.rules.experts[index];
        let bid = bid.ok_or_else(|| terr(&name, "expert tensor without a block number"))?;
        let n = self.hp.req_u64(ex.count_keys)?;
        let buf = self.experts.entry((index, bid)).or_default();
        buf.push((name, expr));
        if (buf.len() as u64) < n.saturating_mul(ex.parts.len() as u64) {
            return Ok(Vec::new());
        }
        let mut buf: HashMap<String, Expr> = self
            .experts
            .remove(&(index, bid))
            .unwrap_or_default()
            .into_iter()
            .collect();
        let mut out = Vec::new();
        for w in ex.parts {
            let mut parts = Vec::with_capacity(n as usize);
            for xid in 0..n {
                let ename = ex
                    .expert_name
                    .replace("{bid}", &bid.to_string())
                    .replace("{xid}", &xid.to_string())
                    .replace("{w}", w);
                let e = buf
                    .remove(&ename)
                    .ok_or_else(|| terr(&ename, "expert tensor missing from its layer"))?;
                parts.push(e);
            }
            let merged = ex
                .merged_name
                .replace("{bid}", &bid.to_string())
                .replace("{w}", w);
            let stacked = Expr::stack(&merged, parts)?;
            out.push((self.map_name(&merged)?, stacked));
        }
        if let Some(k) = buf.keys().next() {
            return Err(terr(k, "unexpected tensor among the experts of its layer"));
        }
        Ok(out)
    }
}

/// `torch.equal`: same shape and equal values (read now, at plan time).
fn same_values(a: &Expr, b: &Expr) -> Result<bool, ConvertError> {
    if a.shape() != b.shape() {
        return Ok(false);
    }
    let values = |e: &Expr| {
        e.eval_f32().map_err(|err| ConvertError::Tensor {
            name: e.describe(),
            problem: err.to_string(),
        })
    };
    Ok(values(a)? == values(b)?)
}

/// Tensors the converter skips by name.
fn skipped(name: &str) -> bool {
    [
        ".attention.masked_bias",
        ".attention.bias",
        ".rotary_emb.inv_freq",
    ]
    .iter()
    .any(|s| name.ends_with(s))
}

/// `prepare_tensors`: the tensors the class repacks (already-quantized, in their own type)
/// first, then generated tensors, then the model's, then the ones the class writes after
/// them ([`super::family::Rules::late`]), each mapped, transformed and given its
/// output type. Also returns the GGUF names of the `W4A16_NVFP4` weights (`_prec_a4`).
pub fn plan(
    arch: &Arch,
    hp: &Hparams,
    dir: &ModelDir,
    outtype: OutType,
    nvfp4: Vec<Nvfp4Out>,
    generated: Vec<(String, Expr)>,
    entries: Vec<Entry>,
) -> Result<(Vec<Planned>, Vec<String>), ConvertError> {
    let mut entries = entries;
    let mut a16 = Vec::new();
    let packed = match arch.rules.mxfp4 {
        Some(repack) => repack(&mut entries)?,
        None => Vec::new(),
    };
    let own = match arch.rules.generate {
        Some(generate) => generate(hp, &mut entries)?,
        None => Vec::new(),
    };
    let late = match arch.rules.late {
        Some(late) => late(hp, &mut entries)?,
        None => Vec::new(),
    };
    let mut m = Modifier::new(arch, hp, dir)?;
    let mut out: Vec<Planned> = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut push = |name: String,
                    expr: Expr,
                    bid: Option<u64>,
                    fp8_q8: bool,
                    source: Option<StDtype>|
     -> Result<(), ConvertError> {
        if seen.insert(name.clone(), ()).is_some() {
            return Err(terr(&name, "duplicated tensor name"));
        }
        let shape = expr.shape();
        let row = shape.last().copied().unwrap_or(1);
        let forced = match (arch.rules.force_type, source) {
            (Some(force), Some(dtype)) => force(&name, dtype, shape.len()),
            _ => None,
        };
        let ty = if let Some((ty, _)) = expr.as_packed() {
            // Written by the class itself, in its own type (`raw_dtype`).
            ty
        } else if forced_f32(arch, hp, &name) {
            GgmlType::F32
        } else if fp8_q8 && shape.len() >= 2 {
            outtype::forced_q8(&name, row)
        } else if let Some(ty) = forced {
            outtype::class_forced(ty, &name, shape.len(), row)
        } else if arch.rules.quantize_all_matrices {
            outtype::choose_forced(outtype, &name, shape.len(), row)
        } else {
            outtype::choose(outtype, &name, shape.len(), row, bid)
        };
        out.push(Planned { name, expr, ty });
        Ok(())
    };
    // The repacked tensors go to the writer before everything else: NVFP4 weights (mapped
    // by name only), each with its per-tensor factors; then MXFP4 experts.
    for o in nvfp4 {
        let bid = block_id(&o.name);
        let name = m.map_name(&o.name)?;
        if o.a16 {
            a16.push(name.clone());
        }
        push(name.clone(), o.weight, bid, false, None)?;
        for (suffix, expr) in o.scales {
            push(name.replace(".weight", suffix), expr, bid, false, None)?;
        }
    }
    for (name, expr) in packed {
        let bid = block_id(&name);
        push(m.map_name(&name)?, expr, bid, false, None)?;
    }
    for (name, expr) in own {
        let bid = block_id(&name);
        push(name, expr, bid, false, None)?;
    }
    for (name, expr) in generated {
        push(name, expr, None, false, None)?;
    }
    for e in entries {
        if skipped(&e.name) {
            continue;
        }
        let bid = block_id(&e.name);
        let (fp8_q8, source) = (e.fp8_q8, e.dtype);
        let type_bid = e.type_bid.unwrap_or(bid);
        for (name, expr) in m.modify(e.name, e.expr, bid)? {
            push(name, expr, type_bid, fp8_q8, Some(source))?;
        }
    }
    for (name, expr) in late {
        let bid = block_id(&name);
        push(name, expr, bid, false, None)?;
    }
    let mut left: Vec<String> = m.experts.into_values().flatten().map(|(n, _)| n).collect();
    if !left.is_empty() {
        left.sort();
        return Err(ConvertError::UnprocessedExperts { tensors: left });
    }
    Ok((out, a16))
}

/// Whether the class's `tensor_force_quant` keeps output tensor `name` F32
/// (`Rules::f32_names`, `Rules::f32_when`).
fn forced_f32(arch: &Arch, hp: &Hparams, name: &str) -> bool {
    arch.rules.f32_names.iter().any(|s| name.contains(s))
        || arch.rules.f32_when.is_some_and(|f| f(hp, name))
}

/// A LoRA adapter's tensors: for `W = B·A`, the pair under the base model's name of `W`.
pub struct LoraPair {
    /// The base model's (HF) tensor name.
    pub name: String,
    /// `lora_A`: `[r, in]`.
    pub a: Expr,
    /// `lora_B`: `[out, r]`.
    pub b: Expr,
}

/// convert_lora_to_gguf.py's `prepare_tensors`: the adapter's plain tensors (layer norms
/// that mergekit adds) first, as the base model would write them, then every pair mapped by
/// the base model's rules applied to `B` (row operations only: a rule that touches the
/// columns of `W` has no LoRA form here and is refused), written as `<name>.lora_a` and
/// `<name>.lora_b`.
pub fn plan_lora(
    arch: &Arch,
    hp: &Hparams,
    dir: &ModelDir,
    outtype: OutType,
    plain: Vec<Entry>,
    pairs: Vec<LoraPair>,
) -> Result<Vec<Planned>, ConvertError> {
    let mut m = Modifier::new(arch, hp, dir)?;
    let mut out: Vec<Planned> = Vec::new();
    let mut push = |name: String, expr: Expr, bid: Option<u64>| {
        let shape = expr.shape();
        let row = shape.last().copied().unwrap_or(1);
        let ty = if forced_f32(arch, hp, &name) {
            GgmlType::F32
        } else if arch.rules.quantize_all_matrices {
            outtype::choose_forced(outtype, &name, shape.len(), row)
        } else {
            outtype::choose(outtype, &name, shape.len(), row, bid)
        };
        out.push(Planned { name, expr, ty });
    };
    for e in plain {
        let bid = block_id(&e.name);
        for (name, expr) in m.modify(e.name.clone(), e.expr, bid)? {
            if !name.contains("_norm") || expr.shape().len() != 1 {
                return Err(terr(
                    &e.name,
                    "a LoRA adapter holds only lora_A/lora_B pairs and layer norms",
                ));
            }
            push(name, expr, bid);
        }
    }
    for p in pairs {
        let bid = block_id(&p.name);
        let rank = p.a.shape().first().copied();
        if p.a.shape().len() != 2 || p.b.shape().len() != 2 || p.b.shape().get(1).copied() != rank {
            return Err(terr(
                &p.name,
                format!(
                    "lora_A {:?} and lora_B {:?} are not [r, in] and [out, r]",
                    p.a.shape(),
                    p.b.shape()
                ),
            ));
        }
        for (name, b) in m.modify(p.name.clone(), p.b, bid)? {
            if !b.rows_only() || b.shape().get(1).copied() != rank {
                return Err(terr(
                    &p.name,
                    format!(
                        "the {} converter transforms this tensor's columns ({}): no LoRA \
                         adapter form is supported for it",
                        arch.gguf,
                        b.describe()
                    ),
                ));
            }
            // llm_build_inp_embd uses the token embedding's A transposed.
            let a = if name.contains("token_embd.weight") {
                p.a.clone().transpose(&name)?
            } else {
                p.a.clone()
            };
            push(format!("{name}.lora_a"), a, bid);
            push(format!("{name}.lora_b"), b, bid);
        }
    }
    if !m.experts.is_empty() {
        return Err(terr(
            "experts",
            "expert tensors are stacked across files: no LoRA adapter form is supported",
        ));
    }
    Ok(out)
}

/// Llama's q/k head permutation (the reference's `undo_permute`) of `q_proj` / `k_proj`
/// weights (and biases with [`QkPermute::WeightsAndBiases`]); other tensors pass unchanged.
pub(crate) fn permute_qk(
    hp: &Hparams,
    name: &str,
    expr: Expr,
    mode: QkPermute,
) -> Result<Expr, ConvertError> {
    let biases = mode == QkPermute::WeightsAndBiases;
    let is = |proj: &str| {
        name.ends_with(&format!("{proj}.weight"))
            || (biases && name.ends_with(&format!("{proj}.bias")))
    };
    if mode == QkPermute::No || !(is("q_proj") || is("k_proj")) {
        return Ok(expr);
    }
    let n_head = hp.req_u64(&["n_heads", "num_attention_heads"])?;
    if is("q_proj") {
        return expr.permute_heads(name, n_head);
    }
    let n_kv = hp
        .find_u64(&["n_kv_heads", "num_key_value_heads"])?
        .unwrap_or(n_head);
    expr.permute_heads(name, n_kv)
}
