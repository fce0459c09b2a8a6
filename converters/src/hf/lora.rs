//! PEFT LoRA adapters, as `convert_lora_to_gguf.py` converts them: the adapter's `lora_A` /
//! `lora_B` pairs under the base model's GGUF names (`<name>.lora_a`, `<name>.lora_b`), the
//! base model's tensor rules applied to `B`, and only the adapter keys as metadata
//! (`general.type = adapter`, `adapter.type = lora`, `adapter.lora.alpha`).

use std::collections::HashMap;
use std::path::Path;

use ggufkit::gguf::{keys, ArrayValue, Metadata, Value};
use ggufkit::ir::Model;
use ggufkit::mapped::FileBytes;
use serde_json::Value as Json;

use super::expr::Expr;
use super::safetensors::{parse_file, StTensor};
use super::tensors::{self, Entry, LoraPair};
use super::{arch, config, metadata, to_ir_all, HfConversion, HfOptions, OutType};
use crate::ConvertError;

/// The adapter file a PEFT directory holds.
const ADAPTER_CONFIG: &str = "adapter_config.json";

/// True when `dir` holds a PEFT adapter (`adapter_config.json`).
pub fn is_adapter(dir: &Path) -> bool {
    dir.join(ADAPTER_CONFIG).is_file()
}

/// The base model named by the adapter's `base_model_name_or_path`: a directory, or a model
/// id in the local HuggingFace cache (the reference downloads it; nothing is downloaded here).
pub fn base_from_config(dir: &Path) -> Result<std::path::PathBuf, ConvertError> {
    let cfg_path = dir.join(ADAPTER_CONFIG);
    let lparams = super::params::read_json(&cfg_path)?;
    let Some(id) = lparams
        .get("base_model_name_or_path")
        .and_then(Json::as_str)
    else {
        return Err(ConvertError::missing_key(
            &cfg_path,
            "base_model_name_or_path",
            "give the base model's directory with --base",
        ));
    };
    let local = Path::new(id);
    if local.join("config.json").is_file() {
        return Ok(local.to_path_buf());
    }
    crate::hub::resolve(id, None).map_err(|e| {
        ConvertError::format(
            &cfg_path,
            None,
            format!(
                "the base model '{id}' is neither a directory nor in the local HuggingFace \
                 cache ({e}): give its directory with --base"
            ),
        )
    })
}

/// The role of one adapter tensor.
enum Part {
    A,
    B,
    /// Not part of a pair (mergekit's layer norms; anything else is refused).
    Plain,
}

/// The base model's name of an adapter tensor, and its role (`get_base_tensor_name`).
fn base_name(name: &str) -> (String, Part) {
    let name = name.replace("base_model.model.", "");
    for (from, part) in [
        (".lora_A.weight", Part::A),
        (".lora_B.weight", Part::B),
        (".lora_embedding_A", Part::A),
        (".lora_embedding_B", Part::B),
    ] {
        if name.contains(from) {
            return (name.replace(from, ".weight"), part);
        }
    }
    (name, Part::Plain)
}

/// Converts the adapter in `dir` for the base model in `base`.
pub fn read_lora_dir(
    dir: &Path,
    base: &Path,
    opts: &HfOptions,
) -> Result<HfConversion, ConvertError> {
    let hp = config::load(&super::ModelDir::new(base))?;
    let arch = arch::lookup(&hp.arch).ok_or_else(|| super::unsupported_architecture(&hp.arch))?;
    let cfg_path = dir.join(ADAPTER_CONFIG);
    let lparams = super::params::read_json(&cfg_path)?;
    let alpha = lparams
        .get("lora_alpha")
        .and_then(Json::as_f64)
        .ok_or_else(|| ConvertError::format(&cfg_path, None, "no numeric \"lora_alpha\""))?;
    let invocation = alora_tokens(&lparams, &cfg_path)?;

    // safetensors first, else a PyTorch checkpoint (read without running its pickle).
    let st = dir.join("adapter_model.safetensors");
    let (path, is_torch) = if st.is_file() || !dir.join("adapter_model.bin").is_file() {
        (st, false)
    } else {
        (dir.join("adapter_model.bin"), true)
    };
    if !path.is_file() {
        return Err(ConvertError::MissingFile {
            path,
            why: "missing adapter_model.safetensors (or adapter_model.bin)".into(),
        });
    }
    let bytes = FileBytes::map(&path).map_err(|e| ConvertError::io(&path, e))?;
    let read = if is_torch {
        crate::torch::checkpoint::read_checkpoint(&path, &bytes)?
    } else {
        parse_file(&path, &bytes)?
    };
    let (plain, pairs) = pair_up(arch, &path, read)?;

    // convert_lora_to_gguf.py's choices; its `auto` fails (a LoRA tensor has no `dim()`).
    let outtype = match opts.outtype {
        t @ (OutType::F32 | OutType::F16 | OutType::Bf16 | OutType::Q8_0) => t,
        t => {
            return Err(ConvertError::format(
                &cfg_path,
                None,
                format!(
                    "--outtype {}: a LoRA adapter converts to f32, f16, bf16 or q8_0 (the \
                     reference's `auto` fails on adapters)",
                    t.label().to_lowercase()
                ),
            ))
        }
    };
    let planned = tensors::plan_lora(
        arch,
        &hp,
        &super::ModelDir::new(base),
        outtype,
        plain,
        pairs,
    )?;

    let mut md = Metadata::new();
    md.set(keys::general::ARCHITECTURE, arch.gguf_arch(&hp));
    md.set(keys::general::TYPE, "adapter");
    md.set("adapter.type", "lora");
    // The model card is the adapter's; the parameter count of an adapter is not exact, which
    // the reference signals with a negative total (no size label).
    let mut meta = metadata::load(
        &super::ModelDir::new(dir),
        &Json::Null,
        opts.metadata_override.as_deref(),
        opts.model_name.as_deref(),
        -1,
    )?;
    if meta.name.is_none() {
        meta.name = Some(metadata::dir_name(dir));
    }
    metadata::write(&meta, &mut md);
    md.set("adapter.lora.alpha", Value::F32(alpha as f32));
    if let Some(tokens) = invocation {
        md.set(
            "adapter.alora.invocation_tokens",
            Value::Array(ArrayValue::U32(tokens)),
        );
    }
    md.set(keys::general::QUANTIZATION_VERSION, Value::U32(2));
    super::float_range::refuse_f32_overflow(&cfg_path, &md)?;
    let default_file_name = metadata::file_name(
        &meta,
        meta.size_label.as_deref(),
        Some(outtype.label()),
        Some("LoRA"),
    ) + ".gguf";

    let (sources, tensors) = to_ir_all(planned);
    Ok(HfConversion {
        model: Model {
            metadata: md,
            tensors,
        },
        file_type: outtype.file_type(),
        outtype,
        default_file_name,
        sources,
        hf_arch: hp.arch.clone(),
        vocab_error: None,
        pre_tokenizer: None,
    })
}

/// `alora_invocation_tokens` (an aLoRA's activation tokens); an `invocation_string` without
/// them needs the base model's tokenizer, which is not run here.
fn alora_tokens(lparams: &Json, path: &Path) -> Result<Option<Vec<u32>>, ConvertError> {
    let tokens = match lparams.get("alora_invocation_tokens") {
        None | Some(Json::Null) => None,
        Some(Json::Array(a)) if a.is_empty() => None,
        Some(Json::Array(a)) => Some(
            a.iter()
                .map(|t| t.as_u64().and_then(|t| u32::try_from(t).ok()))
                .collect::<Option<Vec<u32>>>()
                .ok_or_else(|| {
                    ConvertError::format(path, None, "alora_invocation_tokens are not token ids")
                })?,
        ),
        Some(v) => {
            return Err(ConvertError::wrong_type(
                path,
                "alora_invocation_tokens",
                "an array",
                v,
            ))
        }
    };
    let string = lparams
        .get("invocation_string")
        .and_then(Json::as_str)
        .filter(|s| !s.is_empty());
    if tokens.is_none() && string.is_some() {
        return Err(ConvertError::format(
            path,
            None,
            "invocation_string without alora_invocation_tokens: tokenizing it with the base \
             model's tokenizer is not supported; add the token ids as alora_invocation_tokens",
        ));
    }
    Ok(tokens)
}

/// Splits the adapter's tensors into plain ones (in file order) and A/B pairs (in the order
/// their first half appears), after the base model's name filter.
fn pair_up(
    arch: &arch::Arch,
    path: &Path,
    tensors: Vec<StTensor>,
) -> Result<(Vec<Entry>, Vec<LoraPair>), ConvertError> {
    let mut plain = Vec::new();
    let mut order: Vec<String> = Vec::new();
    let mut halves: HashMap<String, (Option<Expr>, Option<Expr>)> = HashMap::new();
    for t in tensors {
        let (base, part) = base_name(&t.name);
        let Some(base) = tensors::filter_name(arch, &base) else {
            continue;
        };
        let dtype = t.dtype;
        match part {
            Part::Plain if t.name.contains(".base_layer.weight") => {}
            Part::Plain if t.name.contains("_layernorm") || t.name.contains(".norm") => {
                plain.push(Entry {
                    name: base,
                    expr: Expr::read(t),
                    dtype,
                    fp8_q8: false,
                    type_bid: None,
                })
            }
            Part::Plain => {
                let hint = if t.name.contains(".embed_tokens.weight")
                    || t.name.contains(".lm_head.weight")
                {
                    " (embeddings in an adapter: new tokens added during fine-tuning are not \
                     supported)"
                } else {
                    ""
                };
                return Err(ConvertError::format(
                    path,
                    None,
                    format!(
                        "unexpected tensor '{}': not a lora_A or lora_B tensor{hint}",
                        t.name
                    ),
                ));
            }
            Part::A | Part::B => {
                let slot = halves.entry(base.clone()).or_insert_with(|| {
                    order.push(base.clone());
                    (None, None)
                });
                let e = Some(Expr::read(t));
                if matches!(part, Part::A) {
                    slot.0 = e;
                } else {
                    slot.1 = e;
                }
            }
        }
    }
    let mut pairs = Vec::with_capacity(order.len());
    for name in order {
        let Some((Some(a), Some(b))) = halves.remove(&name) else {
            return Err(ConvertError::format(
                path,
                None,
                format!("'{name}' has only one of lora_A and lora_B"),
            ));
        };
        pairs.push(LoraPair { name, a, b });
    }
    Ok((plain, pairs))
}
