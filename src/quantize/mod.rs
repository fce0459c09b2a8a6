//! gguf-quantize: llama-quantize's planner over the model IR.
//!
//! [`plan`] reproduces what llama-quantize decides before it writes anything: the tensor
//! order (block number, then name), each tensor's target type (the `_S/_M/_L` mixture
//! rules, overrides, the row-length fallback), the imatrix slice each tensor uses, and the
//! output metadata. The result is a [`Model`] whose quantized tensors are lazy
//! [`Convert`](crate::ir::Convert) sources, so the ordinary streaming writer produces the
//! file. Every error llama-quantize would hit half-way through the run is raised here,
//! before an output file exists.

mod ftype;
mod imatrix;
pub mod prune;
pub mod rules;
mod tensor_types;

use std::sync::Arc;

use regex::Regex;

pub use ftype::{FileType, FILE_TYPES};
pub use imatrix::{Imatrix, ImatrixError};
pub use tensor_types::{TensorTypeList, MAX_TENSOR_TYPE_ITEM, MAX_TENSOR_TYPE_PATTERNS};

use crate::gguf::{tensor_nbytes, ArrayValue, Metadata, Value};
use crate::ir::{Convert, Model, Tensor, TensorData};
use crate::quantizers::{traits, GgmlType};
use rules::{Category, MixState, ModelFacts, RuleOptions};

/// A `--tensor-type PATTERN=TYPE` override.
#[derive(Debug, Clone)]
pub struct TensorTypeOverride {
    /// The pattern as given (lower-cased, as llama-quantize does).
    pub pattern: String,
    /// The compiled pattern (searched anywhere in the name).
    pub regex: Regex,
    /// The type to use.
    pub ty: GgmlType,
}

impl TensorTypeOverride {
    /// Parses `PATTERN=TYPE`.
    pub fn parse(s: &str) -> Result<TensorTypeOverride, String> {
        let (pat, ty) = s
            .split_once('=')
            .ok_or_else(|| format!("malformed tensor type '{s}': expected PATTERN=TYPE"))?;
        if pat.is_empty() {
            // llama-quantize: "missing tensor name".
            return Err(format!("missing tensor name in '{s}'"));
        }
        let pattern = pat.to_lowercase();
        let ty =
            GgmlType::from_name(ty).ok_or_else(|| format!("invalid ggml type '{ty}' in '{s}'"))?;
        let regex =
            Regex::new(&pattern).map_err(|e| format!("invalid pattern '{pattern}': {e}"))?;
        Ok(TensorTypeOverride { pattern, regex, ty })
    }

    /// Checks `PATTERN=TYPE` as [`TensorTypeOverride::parse`] does, without compiling the
    /// pattern.
    pub fn check_type(s: &str) -> Result<(), String> {
        let (pat, ty) = s
            .split_once('=')
            .ok_or_else(|| format!("malformed tensor type '{s}': expected PATTERN=TYPE"))?;
        if pat.is_empty() {
            return Err(format!("missing tensor name in '{s}'"));
        }
        GgmlType::from_name(ty).ok_or_else(|| format!("invalid ggml type '{ty}' in '{s}'"))?;
        Ok(())
    }
}

/// A `--override-kv KEY=TYPE:VALUE` entry, already converted to what llama-quantize writes.
#[derive(Debug, Clone, PartialEq)]
pub struct KvOverride {
    /// The key.
    pub key: String,
    /// The value as written (int → u32 |v|, float → f32, str ≤ 127 bytes).
    pub value: Value,
}

impl KvOverride {
    /// Parses `KEY=TYPE:VALUE` with TYPE one of `int`, `float`, `bool`, `str`.
    pub fn parse(s: &str) -> Result<KvOverride, String> {
        let (key, rest) = s
            .split_once('=')
            .ok_or_else(|| format!("malformed override '{s}': expected KEY=TYPE:VALUE"))?;
        if key.is_empty() || key.len() > 127 {
            return Err(format!("override key '{key}' must be 1 to 127 bytes"));
        }
        let (ty, val) = rest
            .split_once(':')
            .ok_or_else(|| format!("malformed override '{s}': expected KEY=TYPE:VALUE"))?;
        let value = match ty {
            "int" => {
                let v: i64 = val
                    .parse()
                    .map_err(|_| format!("invalid int '{val}' in '{s}'"))?;
                Value::U32(v.unsigned_abs() as u32)
            }
            "float" => Value::F32(
                val.parse::<f64>()
                    .map_err(|_| format!("invalid float '{val}' in '{s}'"))? as f32,
            ),
            "bool" => match val {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err(format!("invalid bool '{val}' in '{s}' (true or false)")),
            },
            "str" => {
                if val.len() > 127 {
                    return Err(format!(
                        "string override for '{key}' is longer than 127 bytes"
                    ));
                }
                Value::from(val)
            }
            _ => {
                return Err(format!(
                    "invalid override type '{ty}' in '{s}' (int, float, bool, str)"
                ))
            }
        };
        Ok(KvOverride {
            key: key.to_string(),
            value,
        })
    }
}

/// What to do (llama-quantize's parameters).
#[derive(Debug, Clone)]
pub struct QuantizeOptions {
    /// The target file type.
    pub ftype: FileType,
    /// Allow inputs that are already quantized.
    pub allow_requantize: bool,
    /// Keep `output.weight` as it is.
    pub leave_output_tensor: bool,
    /// No mixture rules: every quantizable tensor gets the default type.
    pub pure: bool,
    /// The imatrix (already filtered) and the path as given on the command line.
    pub imatrix: Option<(String, Imatrix)>,
    /// `--output-tensor-type`.
    pub output_tensor_type: Option<GgmlType>,
    /// `--token-embedding-type`.
    pub token_embedding_type: Option<GgmlType>,
    /// `--tensor-type` overrides, first match wins.
    pub tensor_types: Vec<TensorTypeOverride>,
    /// `--override-kv` entries in order.
    pub kv_overrides: Vec<KvOverride>,
    /// Planning only: a missing imatrix is a warning, not an error.
    pub dry_run: bool,
    /// Keep the input's tensor order (`--keep-split` orders by shard and offset) instead of
    /// llama.cpp's block-then-name order.
    pub keep_order: bool,
    /// `--prune-layers`: blocks to drop, sorted and deduplicated (see [`prune`]).
    pub prune_layers: Vec<u32>,
}

impl QuantizeOptions {
    /// Options for `ftype` with everything else at llama-quantize's defaults.
    pub fn new(ftype: FileType) -> Self {
        QuantizeOptions {
            ftype,
            allow_requantize: false,
            leave_output_tensor: false,
            pure: false,
            imatrix: None,
            output_tensor_type: None,
            token_embedding_type: None,
            tensor_types: Vec::new(),
            kv_overrides: Vec::new(),
            dry_run: false,
            keep_order: false,
            prune_layers: Vec::new(),
        }
    }
}

/// The decision for one tensor.
#[derive(Debug, Clone)]
pub struct TensorPlan {
    /// Name.
    pub name: String,
    /// GGUF dims.
    pub dims: Vec<u64>,
    /// Input type.
    pub from: GgmlType,
    /// Output type (equal to `from` when the bytes are copied).
    pub to: GgmlType,
    /// Input bytes.
    pub in_bytes: u64,
    /// Output bytes.
    pub out_bytes: u64,
    /// An imatrix entry is used.
    pub uses_imatrix: bool,
    /// The row-length fallback changed the type.
    pub fallback: bool,
}

/// The plan of a whole run.
#[derive(Debug, Clone)]
pub struct QuantizePlan {
    /// The output model (lazy: nothing is computed yet).
    pub model: Model,
    /// One entry per output tensor, in output order.
    pub tensors: Vec<TensorPlan>,
    /// Things the user should know (missing imatrix entries, fallbacks…).
    pub warnings: Vec<String>,
}

impl QuantizePlan {
    /// Total input tensor bytes.
    pub fn in_bytes(&self) -> u64 {
        self.tensors.iter().map(|t| t.in_bytes).sum()
    }

    /// Total output tensor bytes.
    pub fn out_bytes(&self) -> u64 {
        self.tensors.iter().map(|t| t.out_bytes).sum()
    }

    /// Total elements.
    pub fn n_elements(&self) -> u64 {
        self.tensors
            .iter()
            .map(|t| t.dims.iter().product::<u64>())
            .sum()
    }
}

/// Why a quantization cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum QuantizeError {
    /// The input lacks something the rules need, or holds something they reject.
    #[error("{0}")]
    Input(String),
    /// A tensor cannot be converted as planned.
    #[error("tensor '{tensor}': {problem}")]
    Tensor {
        /// The tensor.
        tensor: String,
        /// What is wrong.
        problem: String,
    },
}

fn first_or_scalar_u32(md: &Metadata, key: &str) -> Result<Option<i64>, QuantizeError> {
    match md.get(key) {
        None => Ok(None),
        Some(Value::Array(ArrayValue::U32(v))) => Ok(v.first().map(|x| *x as i64)),
        Some(Value::Array(ArrayValue::I32(v))) => Ok(v.first().map(|x| *x as i64)),
        Some(v) => v
            .as_int()
            .map(|i| Some(i as i64))
            .ok_or_else(|| QuantizeError::Input(format!("metadata key '{key}' is not an integer"))),
    }
}

fn model_facts(md: &Metadata) -> Result<ModelFacts, QuantizeError> {
    let arch = md
        .get_str("general.architecture")
        .map_err(|e| QuantizeError::Input(e.to_string()))?
        .to_string();
    let key = |k: &str| format!("{arch}.{k}");
    let n_layer = first_or_scalar_u32(md, &key("block_count"))?.unwrap_or(0);
    let n_head = first_or_scalar_u32(md, &key("attention.head_count"))?.unwrap_or(0);
    let n_head_kv = first_or_scalar_u32(md, &key("attention.head_count_kv"))?.unwrap_or(n_head);
    let n_expert = first_or_scalar_u32(md, &key("expert_count"))?.unwrap_or(0);
    Ok(ModelFacts {
        is_70b: arch == "llama" && n_layer == 80 && n_head != n_head_kv,
        n_gqa: if n_head_kv == 0 {
            0
        } else {
            n_head / n_head_kv
        },
        arch,
        n_layer,
        n_expert,
    })
}

/// The `general.file_type` COPY writes: the input's own, or the guessed type | 1024.
fn copy_file_type(input: &Model) -> u32 {
    if let Ok(ft) = input.metadata.get_u32("general.file_type") {
        return ft;
    }
    let mut counts: Vec<(GgmlType, usize)> = Vec::new();
    let mut order: Vec<&Tensor> = input.tensors.iter().collect();
    order.sort_by(|a, b| rules::weights_order(&a.name, &b.name));
    let (mut best, mut best_n) = (GgmlType::F32, 0);
    for t in order {
        let n = match counts.iter_mut().find(|(ty, _)| *ty == t.ty) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                counts.push((t.ty, 1));
                1
            }
        };
        if n > best_n {
            best = t.ty;
            best_n = n;
        }
    }
    FileType::for_tensor_type(best) | 1024
}

/// Plans quantizing `input` (a GGUF file through [`Model::from_gguf`], or a converter's
/// output) with `opts`.
pub fn plan(input: &Model, opts: &QuantizeOptions) -> Result<QuantizePlan, QuantizeError> {
    // llama-quantize loads the architecture and the hyperparameters first.
    if let Some(p) = crate::inspect::loadable::arch_problems(&input.metadata)
        .into_iter()
        .next()
    {
        return Err(QuantizeError::Input(p));
    }
    let facts = model_facts(&input.metadata)?;
    let mut sorted: Vec<usize> = (0..input.tensors.len()).collect();
    sorted.sort_by(|&a, &b| rules::weights_order(&input.tensors[a].name, &input.tensors[b].name));
    // Names after --prune-layers (renumbered in weights order; `None`: pruned).
    let mut names: Vec<Option<String>> =
        input.tensors.iter().map(|t| Some(t.name.clone())).collect();
    let mut layers = prune::LayerMap::new();
    if !opts.prune_layers.is_empty() {
        for &i in &sorted {
            names[i] = match layers
                .rename(&input.tensors[i].name, &opts.prune_layers)
                .map_err(QuantizeError::Input)?
            {
                prune::Renamed::Keep(n) => Some(n),
                prune::Renamed::Pruned => None,
            };
        }
    }
    let visit: Vec<usize> = if opts.keep_order {
        (0..input.tensors.len()).collect()
    } else {
        sorted
    };
    let order: Vec<(&Tensor, &str)> = visit
        .into_iter()
        .filter_map(|i| names[i].as_deref().map(|n| (&input.tensors[i], n)))
        .collect();

    let imatrix = opts
        .imatrix
        .as_ref()
        .map(|(_, im)| im)
        .filter(|im| !im.entries.is_empty());
    let rule_opts = RuleOptions {
        ftype: opts.ftype.id,
        has_imatrix: imatrix.is_some(),
        output_tensor_type: opts.output_tensor_type,
        token_embedding_type: opts.token_embedding_type,
    };
    let mut state = MixState::new(order.iter().map(|(_, n)| *n));
    let mut warnings = Vec::new();
    let mut tensors = Vec::with_capacity(order.len());
    let mut plans = Vec::with_capacity(order.len());

    for (info, name) in order {
        let cat = Category::of(name);
        let tensor_err = |problem: String| QuantizeError::Tensor {
            tensor: name.to_string(),
            problem,
        };
        let mut fell_back = false;
        let to = if opts.ftype.is_copy()
            || !rules::allows_quantization(name, &info.dims, &facts.arch, opts.leave_output_tensor)
        {
            info.ty
        } else {
            let regex_match = || opts.tensor_types.iter().find(|o| o.regex.is_match(name));
            match (opts.token_embedding_type, opts.output_tensor_type) {
                (Some(e), _)
                    if cat == Category::TokenEmbd
                        && !(name == "per_layer_token_embd.weight" && regex_match().is_some()) =>
                {
                    e
                }
                (_, Some(o)) if cat == Category::Output => o,
                _ => {
                    let default = opts.ftype.default_type.expect("COPY handled above");
                    if default.is_quantized() {
                        let t = match regex_match() {
                            Some(o) => o.ty,
                            None if opts.pure => default,
                            None => rules::mixture(
                                &mut state, &facts, &rule_opts, name, &info.dims, cat, default,
                            )
                            .map_err(tensor_err)?,
                        };
                        let ne0 = info.dims.first().copied().unwrap_or(1);
                        let (t, fb) = rules::fallback(ne0, t).map_err(tensor_err)?;
                        if fb {
                            state.n_fallback += 1;
                            fell_back = true;
                        }
                        t
                    } else {
                        default
                    }
                }
            }
        };
        let requires_imatrix = rules::requires_imatrix(name, to, opts.ftype.id);
        let quantize = to != info.ty;
        let mut im_slice = None;
        if quantize {
            if let Some(im) = imatrix {
                let ne0 = info.dims.first().copied().unwrap_or(1);
                let ne2 = info.dims.get(2).copied().unwrap_or(1);
                // Looked up under the tensor's name in the input (before --prune-layers).
                match im.entries.get(info.name.as_str()) {
                    None => warnings.push(format!("no imatrix entry for {name}")),
                    Some(v) if v.len() as u64 == ne0 * ne2 => im_slice = Some(Arc::new(v.clone())),
                    Some(v) if rules::is_token_embd(name) => warnings.push(format!(
                        "imatrix size {} differs from tensor size {} for {name}: quantized without it",
                        v.len(),
                        ne0 * ne2
                    )),
                    Some(v) => {
                        return Err(tensor_err(format!(
                            "imatrix size {} is different from tensor size {}",
                            v.len(),
                            ne0 * ne2
                        )))
                    }
                }
            }
            if requires_imatrix && im_slice.is_none() {
                let msg = format!(
                    "quantizing to {} requires an importance matrix (--imatrix){}",
                    to.name(),
                    if imatrix.is_some() {
                        ", and the imatrix has no usable entry for it"
                    } else {
                        ""
                    }
                );
                if opts.dry_run {
                    warnings.push(format!("{name}: {msg}"));
                } else {
                    return Err(tensor_err(msg));
                }
            }
            if info.ty.is_quantized() && !opts.allow_requantize {
                return Err(tensor_err(format!(
                    "requantizing from type {} is disabled (use --allow-requantize)",
                    info.ty.name()
                )));
            }
        }
        let out_bytes = tensor_nbytes(to, &info.dims).map_err(tensor_err)?;
        let in_bytes = tensor_nbytes(info.ty, &info.dims).map_err(tensor_err)?;
        let mapped = info.data.clone();
        let data = if quantize {
            if !info.ty.is_float() && !info.ty.is_quantized() {
                return Err(tensor_err(format!(
                    "cannot convert {} data to {}",
                    info.ty.name(),
                    to.name()
                )));
            }
            if traits(to).quantize.is_none() {
                return Err(tensor_err(format!(
                    "quantizing to {} is not supported yet",
                    to.name()
                )));
            }
            let n_per_row = info.dims.first().copied().unwrap_or(1) as usize;
            let rows_per_matrix = info.dims.get(1).copied().unwrap_or(1) as usize;
            let conv = Convert::new(
                mapped,
                info.ty,
                to,
                n_per_row,
                rows_per_matrix,
                im_slice.clone(),
            )
            .map_err(|e| tensor_err(e.to_string()))?;
            TensorData::Derived(Arc::new(conv))
        } else {
            mapped
        };
        // llama-quantize writes every tensor with ggml_n_dims: trailing dimensions of 1 are
        // dropped (a converter's [8, 1] norm becomes [8]).
        let mut dims = info.dims.clone();
        while dims.len() > 1 && dims.last() == Some(&1) {
            dims.pop();
        }
        plans.push(TensorPlan {
            name: name.to_string(),
            dims: dims.clone(),
            from: info.ty,
            to,
            in_bytes,
            out_bytes,
            uses_imatrix: im_slice.is_some(),
            fallback: fell_back,
        });
        tensors.push(Tensor {
            name: name.to_string(),
            dims,
            ty: to,
            data,
        });
    }
    if state.n_fallback > 0 {
        warnings.push(format!(
            "{} of {} tensors required fallback quantization",
            state.n_fallback,
            plans.len()
        ));
    }

    let mut md = input.metadata.clone();
    md.set_last("general.quantization_version", Value::U32(2));
    let file_type = if opts.ftype.is_copy() {
        copy_file_type(input)
    } else {
        opts.ftype.id
    };
    md.set_last("general.file_type", Value::U32(file_type));
    for k in ["split.no", "split.count", "split.tensors.count"] {
        md.remove(k);
    }
    for o in &opts.kv_overrides {
        md.set_last(o.key.clone(), o.value.clone());
    }
    if let (Some((path, _)), Some(im)) = (&opts.imatrix, imatrix) {
        md.set_last("quantize.imatrix.file", Value::from(truncate_127(path)));
        if let Some(d) = im.datasets.first() {
            md.set_last("quantize.imatrix.dataset", Value::from(truncate_127(d)));
        }
        md.set_last(
            "quantize.imatrix.entries_count",
            Value::U32(im.entries.len() as u32),
        );
        if im.chunk_count > 0 {
            md.set_last("quantize.imatrix.chunks_count", Value::U32(im.chunk_count));
        }
    }
    if !opts.prune_layers.is_empty() {
        md.set_last(
            format!("{}.block_count", facts.arch),
            Value::U32(layers.block_count() as u32),
        );
    }
    Ok(QuantizePlan {
        model: Model {
            metadata: md,
            tensors,
        },
        tensors: plans,
        warnings,
    })
}

/// llama-quantize copies override strings into a 128-byte buffer.
fn truncate_127(s: &str) -> String {
    let mut end = s.len().min(127);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// The output name llama-quantize uses when none is given: `<input dir>/ggml-model-<NAME>.gguf`.
pub fn default_output_path(input: &std::path::Path, ftype: &FileType) -> std::path::PathBuf {
    let name = format!("ggml-model-{}.gguf", ftype.name);
    match input.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join(name),
        _ => std::path::PathBuf::from(name),
    }
}
