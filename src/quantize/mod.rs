//! gguf-quantize: llama-quantize's planner over the model IR.
//!
//! [`plan`] reproduces what llama-quantize decides before it writes anything: the tensor
//! order (block number, then name), each tensor's target type (the `_S/_M/_L` mixture
//! rules, overrides, the row-length fallback), the imatrix slice each tensor uses, and the
//! output metadata. The result is a [`Model`] whose quantized tensors are lazy
//! [`Convert`](crate::ir::Convert) sources, so the ordinary streaming writer produces the
//! file. Every error llama-quantize would hit half-way through the run is raised here,
//! before an output file exists.

pub mod budget;
pub mod budget_anchor;
pub mod budget_baseline;
pub mod budget_fill;
pub mod ftype;
mod imatrix;
pub mod prune;
pub mod recipe;
pub mod rules;
mod tensor_types;

use crate::gguf::keys;
use std::sync::Arc;

use regex::Regex;

pub use ftype::{FileType, FILE_TYPES};
pub use imatrix::{Imatrix, ImatrixError, ImatrixProblem};
pub use recipe::{Recipe, RecipeError, RecipeItem};
pub use rules::RuleError;
pub use tensor_types::{
    ItemProblem, TensorTypeError, TensorTypeList, MAX_TENSOR_TYPE_ITEM, MAX_TENSOR_TYPE_PATTERNS,
};

use crate::gguf::{tensor_nbytes, ArrayValue, Metadata, MetadataError, Value};
use crate::ir::{Convert, ConvertError, Model, Tensor, TensorData};
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

/// A `--tensor-type PATTERN=TYPE` item that cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OverrideError {
    /// No `=`.
    #[error("malformed tensor type '{item}': expected PATTERN=TYPE")]
    Malformed {
        /// The item.
        item: String,
    },
    /// Nothing before the `=` (llama-quantize: "missing tensor name").
    #[error("missing tensor name in '{item}'")]
    MissingName {
        /// The item.
        item: String,
    },
    /// An unknown type name after the `=`.
    #[error("invalid ggml type '{ty}' in '{item}'")]
    InvalidType {
        /// The type name.
        ty: String,
        /// The item.
        item: String,
    },
    /// A pattern that does not fit in the memory the run's patterns may take together.
    #[error("'{item}': {problem}")]
    PatternBudget {
        /// The item.
        item: String,
        /// The budget that is exhausted.
        problem: String,
    },
    /// A pattern the regex engine rejects.
    #[error("invalid pattern '{pattern}': {source}")]
    InvalidPattern {
        /// The pattern (lowercased).
        pattern: String,
        /// The regex engine's reason.
        source: regex::Error,
    },
}

impl TensorTypeOverride {
    /// Parses `PATTERN=TYPE`.
    pub fn parse(s: &str) -> Result<TensorTypeOverride, OverrideError> {
        Self::parse_within(s, &mut crate::patterns::PatternBudget::default())
    }

    /// Parses `PATTERN=TYPE`, compiling the pattern under `budget`, which the other patterns
    /// of the run share (see [`crate::patterns`]).
    pub fn parse_within(
        s: &str,
        budget: &mut crate::patterns::PatternBudget,
    ) -> Result<TensorTypeOverride, OverrideError> {
        use crate::patterns::PatternError;
        let (pat, ty) = Self::split(s)?;
        let pattern = pat.to_lowercase();
        let regex = budget.compile(&pattern).map_err(|e| match e {
            PatternError::Invalid(source) => OverrideError::InvalidPattern {
                pattern: pattern.clone(),
                source,
            },
            PatternError::OverBudget { .. } => OverrideError::PatternBudget {
                item: s.to_string(),
                problem: e.to_string(),
            },
        })?;
        Ok(TensorTypeOverride { pattern, regex, ty })
    }

    /// Checks `PATTERN=TYPE` as [`TensorTypeOverride::parse`] does, without compiling the
    /// pattern.
    pub fn check_type(s: &str) -> Result<(), OverrideError> {
        Self::split(s).map(|_| ())
    }

    /// The pattern and the type of `PATTERN=TYPE`.
    fn split(s: &str) -> Result<(&str, GgmlType), OverrideError> {
        let item = || s.to_string();
        let (pat, ty) = s
            .split_once('=')
            .ok_or_else(|| OverrideError::Malformed { item: item() })?;
        if pat.is_empty() {
            return Err(OverrideError::MissingName { item: item() });
        }
        let ty = GgmlType::from_name(ty).ok_or_else(|| OverrideError::InvalidType {
            ty: ty.to_string(),
            item: item(),
        })?;
        Ok((pat, ty))
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

/// A `--override-kv KEY=TYPE:VALUE` item that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvOverrideError {
    /// No `=` or no `:`.
    #[error("malformed override '{item}': expected KEY=TYPE:VALUE")]
    Malformed {
        /// The item.
        item: String,
    },
    /// An empty key or one longer than 127 bytes.
    #[error("override key '{key}' must be 1 to 127 bytes")]
    KeyLength {
        /// The key.
        key: String,
    },
    /// A value that does not parse as its type.
    #[error("invalid {ty} '{value}' in '{item}'{hint}")]
    InvalidValue {
        /// `int`, `float` or `bool`.
        ty: &'static str,
        /// The value.
        value: String,
        /// The item.
        item: String,
        /// What the type accepts, where worth saying (` (true or false)`).
        hint: &'static str,
    },
    /// A string value longer than 127 bytes.
    #[error("string override for '{key}' is longer than 127 bytes")]
    StringTooLong {
        /// The key.
        key: String,
    },
    /// A value its GGUF type cannot hold (refused by [`KvOverride::parse_exact`]).
    #[error("'{value}' in '{item}' does not fit {gguf_type}{why}")]
    OutOfRange {
        /// The value.
        value: String,
        /// The item.
        item: String,
        /// The GGUF type it would be written as.
        gguf_type: &'static str,
        /// What it would become.
        why: String,
    },
    /// A type other than `int`, `float`, `bool`, `str`.
    #[error("invalid override type '{ty}' in '{item}' (int, float, bool, str)")]
    InvalidType {
        /// The type.
        ty: String,
        /// The item.
        item: String,
    },
}

impl KvOverride {
    /// Parses `KEY=TYPE:VALUE` as [`KvOverride::parse`] does, refusing a value that its GGUF
    /// type cannot hold instead of writing llama-quantize's conversion of it: an `int`
    /// outside 0..=4294967295 (UINT32) or a finite `float` beyond f32's range (FLOAT32).
    /// Every writer but gguf-quantize (which must write what llama-quantize writes) uses this.
    pub fn parse_exact(s: &str) -> Result<KvOverride, KvOverrideError> {
        let kv = Self::parse(s)?;
        let val = s
            .split_once('=')
            .and_then(|(_, r)| r.split_once(':'))
            .map_or("", |(_, v)| v);
        let out = |gguf_type, why: String| KvOverrideError::OutOfRange {
            value: val.to_string(),
            item: s.to_string(),
            gguf_type,
            why,
        };
        match &kv.value {
            Value::U32(u) => {
                let v: i64 = val.parse().unwrap_or_default();
                if u64::try_from(v).ok() != Some(u64::from(*u)) {
                    return Err(out(
                        "UINT32 (0 to 4294967295)",
                        format!(" (llama-quantize would write {u})"),
                    ));
                }
            }
            Value::F32(f) if !f.is_finite() => {
                let v: f64 = val.parse().unwrap_or_default();
                if v.is_finite() {
                    return Err(out("FLOAT32", format!(" (it would become {f})")));
                }
            }
            _ => {}
        }
        Ok(kv)
    }

    /// Parses `KEY=TYPE:VALUE` with TYPE one of `int`, `float`, `bool`, `str`.
    pub fn parse(s: &str) -> Result<KvOverride, KvOverrideError> {
        let malformed = || KvOverrideError::Malformed {
            item: s.to_string(),
        };
        let (key, rest) = s.split_once('=').ok_or_else(malformed)?;
        if key.is_empty() || key.len() > 127 {
            return Err(KvOverrideError::KeyLength {
                key: key.to_string(),
            });
        }
        let (ty, val) = rest.split_once(':').ok_or_else(malformed)?;
        let invalid = |ty: &'static str, hint: &'static str| KvOverrideError::InvalidValue {
            ty,
            value: val.to_string(),
            item: s.to_string(),
            hint,
        };
        let value = match ty {
            "int" => {
                let v: i64 = val.parse().map_err(|_| invalid("int", ""))?;
                Value::U32(v.unsigned_abs() as u32)
            }
            "float" => Value::F32(val.parse::<f64>().map_err(|_| invalid("float", ""))? as f32),
            "bool" => match val {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err(invalid("bool", " (true or false)")),
            },
            "str" => {
                if val.len() > 127 {
                    return Err(KvOverrideError::StringTooLong {
                        key: key.to_string(),
                    });
                }
                Value::from(val)
            }
            _ => {
                return Err(KvOverrideError::InvalidType {
                    ty: ty.to_string(),
                    item: s.to_string(),
                })
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
    /// Types chosen by a size budget ([`budget`]), keyed by the tensor's input name: they
    /// replace the mixture rules' choice (an explicit `--tensor-type`,
    /// `--output-tensor-type` or `--token-embedding-type` still wins). `None` (the default)
    /// is llama-quantize's behaviour.
    pub chosen_types: Option<Arc<std::collections::HashMap<String, GgmlType>>>,
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
            chosen_types: None,
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
    /// The tensor's name in the input (differs from `name` after `--prune-layers`).
    pub source: String,
    /// The type came from the mixture rules or the file type's default (or a budget's
    /// choice replacing them), not from an explicit option and not a copy: the tensors a
    /// size budget may choose a type for.
    pub by_rules: bool,
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
    /// A metadata value the rules need is missing or of the wrong type.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// A hyperparameter that is not an integer.
    #[error("metadata key '{key}' is not an integer")]
    NotAnInteger {
        /// The key.
        key: String,
    },
    /// `--prune-layers` cannot renumber a tensor.
    #[error(transparent)]
    Prune(#[from] prune::PruneError),
    /// A tensor cannot be converted as planned.
    #[error("tensor '{tensor}': {problem}")]
    Tensor {
        /// The tensor.
        tensor: String,
        /// What is wrong.
        problem: TensorProblem,
    },
}

/// Why one tensor cannot be converted as planned.
#[derive(Debug, thiserror::Error)]
pub enum TensorProblem {
    /// The type rules fail on it.
    #[error(transparent)]
    Rule(#[from] rules::RuleError),
    /// Its imatrix entry has the wrong length.
    #[error("imatrix size {imatrix} is different from tensor size {tensor}")]
    ImatrixSize {
        /// Entries in the imatrix.
        imatrix: usize,
        /// Elements per row times matrices.
        tensor: u64,
    },
    /// Its target type needs an imatrix that is missing or has no entry for it.
    #[error(
        "quantizing to {to} requires an importance matrix (--imatrix){}",
        if *.imatrix_given { ", and the imatrix has no usable entry for it" } else { "" }
    )]
    ImatrixRequired {
        /// The target type.
        to: GgmlType,
        /// An imatrix was given (without a usable entry).
        imatrix_given: bool,
    },
    /// It is quantized already and `--allow-requantize` is not set.
    #[error("requantizing from type {0} is disabled (use --allow-requantize)")]
    Requantize(GgmlType),
    /// Its shape gives no valid byte size.
    #[error("{0}")]
    Size(crate::gguf::SizeError),
    /// Its data type cannot be converted (integer types).
    #[error("cannot convert {from} data to {to}")]
    Unconvertible {
        /// The source type.
        from: GgmlType,
        /// The target type.
        to: GgmlType,
    },
    /// We have no quantizer for the target type.
    #[error("quantizing to {0} is not supported yet")]
    Unsupported(GgmlType),
    /// It has a fourth dimension above 1 and would change type: llama-quantize converts
    /// only its first `ne0 · ne1 · ne2` elements and then aborts on the size check (the
    /// convolution kernels of some projector files).
    #[error(
        "a tensor with a fourth dimension of {ne3} cannot change type: llama-quantize \
         converts only its first three dimensions and aborts"
    )]
    FourthDimension {
        /// The product of the dimensions past the third.
        ne3: u64,
    },
    /// The conversion cannot be set up.
    #[error(transparent)]
    Convert(#[from] ConvertError),
}

fn first_or_scalar_u32(md: &Metadata, key: &str) -> Result<Option<i64>, QuantizeError> {
    match md.get(key) {
        None => Ok(None),
        Some(Value::Array(ArrayValue::U32(v))) => Ok(v.first().map(|x| *x as i64)),
        Some(Value::Array(ArrayValue::I32(v))) => Ok(v.first().map(|x| *x as i64)),
        Some(v) => v
            .as_int()
            .map(|i| Some(i as i64))
            .ok_or_else(|| QuantizeError::NotAnInteger {
                key: key.to_string(),
            }),
    }
}

/// The keys llama-quantize's hparams loading (`load_arch_hparams`) requires beyond the
/// generic ones, for the architectures whose files can lack them: DeepSeek-V2's loader
/// wants `attention.q_lora_rank` unless the block count is one of its "lite" models' (26 or
/// 27 blocks, or 48 with a 128256-token vocabulary), so a converted DeepSeek-V2 without
/// q-lora of another depth cannot be quantized.
fn required_arch_keys(md: &Metadata, arch: &str, n_layer: i64) -> Result<(), QuantizeError> {
    if arch != "deepseek2" {
        return Ok(());
    }
    use keys::{attention, llm, mla};
    let key = |k: &str| keys::arch_key(arch, k);
    let n_vocab = match first_or_scalar_u32(md, &key(llm::VOCAB_SIZE))? {
        Some(n) => n,
        None => match md.get(keys::tokenizer::TOKENS) {
            Some(Value::Array(a)) => a.len() as i64,
            _ => 0,
        },
    };
    let nextn = first_or_scalar_u32(md, &key(mla::NEXTN_PREDICT_LAYERS))?.unwrap_or(0);
    let n = n_layer - nextn;
    let lite = n == 27 || n == 26 || (n == 48 && n_vocab == 128256);
    let mut required = vec![
        attention::LAYERNORM_RMS_EPS,
        mla::KV_LORA_RANK,
        llm::EXPERT_FEED_FORWARD_LENGTH,
        llm::EXPERT_SHARED_COUNT,
    ];
    if !lite {
        required.insert(1, mla::Q_LORA_RANK);
    }
    match required.into_iter().map(key).find(|k| md.get(k).is_none()) {
        Some(k) => Err(QuantizeError::Input(format!("key not found in model: {k}"))),
        None => Ok(()),
    }
}

fn model_facts(md: &Metadata) -> Result<ModelFacts, QuantizeError> {
    let arch = md.get_str(keys::general::ARCHITECTURE)?.to_string();
    let key = |k: &str| keys::arch_key(&arch, k);
    let n_layer = first_or_scalar_u32(md, &key(keys::llm::BLOCK_COUNT))?.unwrap_or(0);
    let n_head = first_or_scalar_u32(md, &key(keys::attention::HEAD_COUNT))?.unwrap_or(0);
    let n_head_kv =
        first_or_scalar_u32(md, &key(keys::attention::HEAD_COUNT_KV))?.unwrap_or(n_head);
    let n_expert = first_or_scalar_u32(md, &key(keys::llm::EXPERT_COUNT))?.unwrap_or(0);
    required_arch_keys(md, &arch, n_layer)?;
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
    if let Ok(ft) = input.metadata.get_u32(keys::general::FILE_TYPE) {
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
/// output) with `opts`, in the phases of llama-quantize's `llama_model_quantize_impl`:
///
/// 1. [`load_facts`]: the architecture and hyperparameters the rules need, refusing a file
///    llama.cpp's loader would refuse;
/// 2. [`visiting_order`]: the tensors in the order they are typed, renamed by
///    `--prune-layers`;
/// 3. per tensor, [`Typing::choose`] picks its type and [`encode`] checks it against the
///    imatrix and the input and makes its lazy data;
/// 4. [`output_metadata`]: the input's metadata with the quantization's keys.
pub fn plan(input: &Model, opts: &QuantizeOptions) -> Result<QuantizePlan, QuantizeError> {
    let facts = load_facts(&input.metadata)?;
    let (order, layers) = visiting_order(input, opts)?;
    let imatrix = opts
        .imatrix
        .as_ref()
        .map(|(_, im)| im)
        .filter(|im| !im.entries.is_empty());
    let names = order.iter().map(|(_, n)| n.as_str());
    let mut typing = Typing::new(opts, &facts, imatrix.is_some(), names);
    let mut warnings = Vec::new();
    let mut tensors = Vec::with_capacity(order.len());
    let mut plans = Vec::with_capacity(order.len());
    for (info, name) in &order {
        let choice = typing.choose(info, name)?;
        let (tensor, plan) = encode(info, name, choice, opts, imatrix, &mut warnings)?;
        tensors.push(tensor);
        plans.push(plan);
    }
    if typing.state.n_fallback > 0 {
        warnings.push(format!(
            "{} of {} tensors required fallback quantization",
            typing.state.n_fallback,
            plans.len()
        ));
    }
    Ok(QuantizePlan {
        model: Model {
            metadata: output_metadata(input, opts, imatrix, &facts, &layers),
            tensors,
        },
        tensors: plans,
        warnings,
    })
}

/// Phase 1: what llama-quantize loads first, the architecture and the hyperparameters.
fn load_facts(md: &Metadata) -> Result<ModelFacts, QuantizeError> {
    if let Some(p) = crate::inspect::loadable::arch_problems(md)
        .into_iter()
        .next()
    {
        return Err(QuantizeError::Input(p));
    }
    model_facts(md)
}

/// The tensors to write in visiting order, each with its output name.
type Visit<'m> = Vec<(&'m Tensor, String)>;

/// Phase 2: the tensors to write, in the order they are typed (llama.cpp's weights order
/// unless `keep_order`), each with its output name; `--prune-layers` drops the pruned
/// layers' tensors and renumbers the others (in weights order, whatever the visiting order).
fn visiting_order<'m>(
    input: &'m Model,
    opts: &QuantizeOptions,
) -> Result<(Visit<'m>, prune::LayerMap), QuantizeError> {
    let mut sorted: Vec<usize> = (0..input.tensors.len()).collect();
    sorted.sort_by(|&a, &b| rules::weights_order(&input.tensors[a].name, &input.tensors[b].name));
    // `None`: pruned.
    let mut names: Vec<Option<String>> =
        input.tensors.iter().map(|t| Some(t.name.clone())).collect();
    let mut layers = prune::LayerMap::new();
    if !opts.prune_layers.is_empty() {
        for &i in &sorted {
            names[i] = match layers.rename(&input.tensors[i].name, &opts.prune_layers)? {
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
    let order = visit
        .into_iter()
        .filter_map(|i| names[i].take().map(|n| (&input.tensors[i], n)))
        .collect();
    Ok((order, layers))
}

/// A tensor's output type and how it was chosen.
#[derive(Clone, Copy)]
struct Choice {
    to: GgmlType,
    /// Chosen by llama-quantize's mixture rules (or a budget), not by an override.
    by_rules: bool,
    /// The type was replaced by its fallback (rows not whole blocks).
    fell_back: bool,
}

/// Phase 3a: how each tensor's type is chosen, in visiting order (llama-quantize's
/// `llama_tensor_get_type`, with the overrides before it and the fallback after it); the
/// mixture rules count what they have seen.
struct Typing<'a> {
    opts: &'a QuantizeOptions,
    facts: &'a ModelFacts,
    rule_opts: RuleOptions,
    state: MixState,
}

impl<'a> Typing<'a> {
    fn new<'n>(
        opts: &'a QuantizeOptions,
        facts: &'a ModelFacts,
        has_imatrix: bool,
        names: impl Iterator<Item = &'n str>,
    ) -> Self {
        Typing {
            opts,
            facts,
            rule_opts: RuleOptions {
                ftype: opts.ftype.id,
                has_imatrix,
                output_tensor_type: opts.output_tensor_type,
                token_embedding_type: opts.token_embedding_type,
            },
            state: MixState::new(names),
        }
    }

    /// The type of `info`, written as `name`: its own type when it is not quantized (COPY,
    /// or a tensor llama-quantize leaves alone); else the token-embedding or output
    /// override; else the file type's default when that is not a quantized type; else a
    /// `--tensor-type` match, a budget's choice, the default under `--pure`, or the mixture
    /// rules, replaced by its fallback when its rows are not whole blocks.
    fn choose(&mut self, info: &Tensor, name: &str) -> Result<Choice, QuantizeError> {
        let opts = self.opts;
        let keep = Choice {
            to: info.ty,
            by_rules: false,
            fell_back: false,
        };
        let quantizable = rules::allows_quantization(
            name,
            &info.dims,
            &self.facts.arch,
            opts.leave_output_tensor,
        );
        if opts.ftype.is_copy() || !quantizable {
            return Ok(keep);
        }
        let cat = Category::of(name);
        let regex_match = || opts.tensor_types.iter().find(|o| o.regex.is_match(name));
        match (opts.token_embedding_type, opts.output_tensor_type) {
            (Some(e), _)
                if cat == Category::TokenEmbd
                    && !(name == "per_layer_token_embd.weight" && regex_match().is_some()) =>
            {
                return Ok(Choice { to: e, ..keep });
            }
            (_, Some(o)) if cat == Category::Output => return Ok(Choice { to: o, ..keep }),
            _ => {}
        }
        let default = opts.ftype.default_type.expect("COPY handled above");
        if !default.is_quantized() {
            return Ok(Choice {
                to: default,
                ..keep
            });
        }
        let tensor_err = |problem: TensorProblem| QuantizeError::Tensor {
            tensor: name.to_string(),
            problem,
        };
        let (to, by_rules) = match regex_match() {
            Some(o) => (o.ty, false),
            None => {
                let chosen = opts
                    .chosen_types
                    .as_ref()
                    .and_then(|c| c.get(info.name.as_str()).copied());
                let to = match chosen {
                    Some(c) => c,
                    None if opts.pure => default,
                    None => rules::mixture(
                        &mut self.state,
                        self.facts,
                        &self.rule_opts,
                        name,
                        &info.dims,
                        cat,
                        default,
                    )
                    .map_err(|e| tensor_err(e.into()))?,
                };
                (to, true)
            }
        };
        let ne0 = info.dims.first().copied().unwrap_or(1);
        let (to, fell_back) = rules::fallback(ne0, to).map_err(|e| tensor_err(e.into()))?;
        if fell_back {
            self.state.n_fallback += 1;
        }
        Ok(Choice {
            to,
            by_rules,
            fell_back,
        })
    }
}

/// Phase 3b: tensor `info`, written as `name` of type `choice.to`: its imatrix slice (looked
/// up under its input name), the checks llama-quantize makes before quantizing it (an
/// imatrix the type requires, a requantization allowed, a type that can be produced), its
/// lazy data and its plan row.
fn encode(
    info: &Tensor,
    name: &str,
    choice: Choice,
    opts: &QuantizeOptions,
    imatrix: Option<&Imatrix>,
    warnings: &mut Vec<String>,
) -> Result<(Tensor, TensorPlan), QuantizeError> {
    let to = choice.to;
    let tensor_err = |problem: TensorProblem| QuantizeError::Tensor {
        tensor: name.to_string(),
        problem,
    };
    let quantize = to != info.ty;
    let im_slice = if quantize {
        let im_slice = imatrix_slice(info, name, imatrix, warnings)?;
        if rules::requires_imatrix(name, to, opts.ftype.id) && im_slice.is_none() {
            let problem = TensorProblem::ImatrixRequired {
                to,
                imatrix_given: imatrix.is_some(),
            };
            if opts.dry_run {
                warnings.push(format!("{name}: {problem}"));
            } else {
                return Err(tensor_err(problem));
            }
        }
        if info.ty.is_quantized() && !opts.allow_requantize {
            return Err(tensor_err(TensorProblem::Requantize(info.ty)));
        }
        let ne3 = info.dims.iter().skip(3).product::<u64>();
        if ne3 > 1 {
            let problem = TensorProblem::FourthDimension { ne3 };
            if opts.dry_run {
                warnings.push(format!("{name}: {problem}"));
            } else {
                return Err(tensor_err(problem));
            }
        }
        im_slice
    } else {
        None
    };
    let size = |ty| tensor_nbytes(ty, &info.dims).map_err(|e| tensor_err(TensorProblem::Size(e)));
    let out_bytes = size(to)?;
    let in_bytes = size(info.ty)?;
    let data = if quantize {
        if !info.ty.is_float() && !info.ty.is_quantized() {
            return Err(tensor_err(TensorProblem::Unconvertible {
                from: info.ty,
                to,
            }));
        }
        if traits(to).quantize.is_none() {
            return Err(tensor_err(TensorProblem::Unsupported(to)));
        }
        let n_per_row = info.dims.first().copied().unwrap_or(1) as usize;
        let rows_per_matrix = info.dims.get(1).copied().unwrap_or(1) as usize;
        let conv = Convert::new(
            info.data.clone(),
            info.ty,
            to,
            n_per_row,
            rows_per_matrix,
            im_slice.clone(),
        )
        .map_err(|e| tensor_err(e.into()))?;
        TensorData::Derived(Arc::new(conv))
    } else {
        info.data.clone()
    };
    // llama-quantize writes every tensor with ggml_n_dims: trailing dimensions of 1 are
    // dropped (a converter's [8, 1] norm becomes [8]).
    let mut dims = info.dims.clone();
    while dims.len() > 1 && dims.last() == Some(&1) {
        dims.pop();
    }
    let plan = TensorPlan {
        name: name.to_string(),
        dims: dims.clone(),
        from: info.ty,
        to,
        in_bytes,
        out_bytes,
        uses_imatrix: im_slice.is_some(),
        fallback: choice.fell_back,
        source: info.name.clone(),
        by_rules: choice.by_rules && quantize,
    };
    let tensor = Tensor {
        name: name.to_string(),
        dims,
        ty: to,
        data,
    };
    Ok((tensor, plan))
}

/// The imatrix values of a tensor being quantized, looked up under its input name (before
/// `--prune-layers`): none (with a warning) when the imatrix has no entry for it or, for the
/// token embedding, an entry of another size; a size mismatch is an error for any other
/// tensor.
fn imatrix_slice(
    info: &Tensor,
    name: &str,
    imatrix: Option<&Imatrix>,
    warnings: &mut Vec<String>,
) -> Result<Option<Arc<Vec<f32>>>, QuantizeError> {
    let Some(im) = imatrix else {
        return Ok(None);
    };
    let ne0 = info.dims.first().copied().unwrap_or(1);
    let ne2 = info.dims.get(2).copied().unwrap_or(1);
    match im.entries.get(info.name.as_str()) {
        None => warnings.push(format!("no imatrix entry for {name}")),
        Some(v) if v.len() as u64 == ne0 * ne2 => return Ok(Some(Arc::new(v.clone()))),
        Some(v) if rules::is_token_embd(name) => warnings.push(format!(
            "imatrix size {} differs from tensor size {} for {name}: quantized without it",
            v.len(),
            ne0 * ne2
        )),
        Some(v) => {
            return Err(QuantizeError::Tensor {
                tensor: name.to_string(),
                problem: TensorProblem::ImatrixSize {
                    imatrix: v.len(),
                    tensor: ne0 * ne2,
                },
            })
        }
    }
    Ok(None)
}

/// Phase 4: the output's metadata: the input's, with the quantization version and the file
/// type last, the split keys removed, the `--override-kv` values, the imatrix's provenance
/// and, after `--prune-layers`, the new block count.
fn output_metadata(
    input: &Model,
    opts: &QuantizeOptions,
    imatrix: Option<&Imatrix>,
    facts: &ModelFacts,
    layers: &prune::LayerMap,
) -> Metadata {
    let mut md = input.metadata.clone();
    md.set_last(keys::general::QUANTIZATION_VERSION, Value::U32(2));
    let file_type = if opts.ftype.is_copy() {
        copy_file_type(input)
    } else {
        opts.ftype.id
    };
    md.set_last(keys::general::FILE_TYPE, Value::U32(file_type));
    for k in [
        keys::split::NO,
        keys::split::COUNT,
        keys::split::TENSORS_COUNT,
    ] {
        md.remove(k);
    }
    for o in &opts.kv_overrides {
        md.set_last(o.key.clone(), o.value.clone());
    }
    if let (Some((path, _)), Some(im)) = (&opts.imatrix, imatrix) {
        md.set_last(
            keys::quantize::IMATRIX_FILE,
            Value::from(truncate_127(path)),
        );
        if let Some(d) = im.datasets.first() {
            md.set_last(
                keys::quantize::IMATRIX_DATASET,
                Value::from(truncate_127(d)),
            );
        }
        md.set_last(
            keys::quantize::IMATRIX_ENTRIES_COUNT,
            Value::U32(im.entries.len() as u32),
        );
        if im.chunk_count > 0 {
            md.set_last(
                keys::quantize::IMATRIX_CHUNKS_COUNT,
                Value::U32(im.chunk_count),
            );
        }
    }
    if !opts.prune_layers.is_empty() {
        md.set_last(
            keys::arch_key(&facts.arch, keys::llm::BLOCK_COUNT),
            Value::U32(layers.block_count() as u32),
        );
    }
    md
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kv_err(s: &str) -> String {
        KvOverride::parse(s).unwrap_err().to_string()
    }

    fn tt_err(s: &str) -> String {
        TensorTypeOverride::parse(s).unwrap_err().to_string()
    }

    /// The messages are the CLI's (scripts and tests match them).
    #[test]
    fn option_errors_say_what_the_cli_always_said() {
        assert_eq!(
            kv_err("a"),
            "malformed override 'a': expected KEY=TYPE:VALUE"
        );
        assert_eq!(
            kv_err("a=int"),
            "malformed override 'a=int': expected KEY=TYPE:VALUE"
        );
        assert_eq!(kv_err("=int:1"), "override key '' must be 1 to 127 bytes");
        assert_eq!(kv_err("a=int:x"), "invalid int 'x' in 'a=int:x'");
        assert_eq!(kv_err("a=float:x"), "invalid float 'x' in 'a=float:x'");
        assert_eq!(
            kv_err("a=bool:1"),
            "invalid bool '1' in 'a=bool:1' (true or false)"
        );
        assert_eq!(
            kv_err(&format!("a=str:{}", "x".repeat(128))),
            "string override for 'a' is longer than 127 bytes"
        );
        assert_eq!(
            kv_err("a=u8:1"),
            "invalid override type 'u8' in 'a=u8:1' (int, float, bool, str)"
        );
        assert_eq!(KvOverride::parse("a=int:-7").unwrap().value, Value::U32(7));
        assert_eq!(
            tt_err("attn"),
            "malformed tensor type 'attn': expected PATTERN=TYPE"
        );
        assert_eq!(tt_err("=q4_0"), "missing tensor name in '=q4_0'");
        assert_eq!(tt_err("a=q9"), "invalid ggml type 'q9' in 'a=q9'");
        assert!(tt_err("a(=q4_0").starts_with("invalid pattern 'a(': "));
        assert!(TensorTypeOverride::check_type("a(=q4_0").is_ok());
        assert_eq!(
            TensorTypeOverride::parse("ATTN=Q4_K").unwrap().ty,
            GgmlType::Q4_K
        );
    }

    #[test]
    fn tensor_problems_say_what_the_cli_always_said() {
        let e = QuantizeError::Tensor {
            tensor: "blk.0.ffn_up.weight".into(),
            problem: TensorProblem::ImatrixRequired {
                to: GgmlType::IQ2_XS,
                imatrix_given: true,
            },
        };
        assert_eq!(
            e.to_string(),
            "tensor 'blk.0.ffn_up.weight': quantizing to iq2_xs requires an importance matrix \
             (--imatrix), and the imatrix has no usable entry for it"
        );
        let no_imatrix = TensorProblem::ImatrixRequired {
            to: GgmlType::IQ1_S,
            imatrix_given: false,
        };
        assert_eq!(
            no_imatrix.to_string(),
            "quantizing to iq1_s requires an importance matrix (--imatrix)"
        );
        assert_eq!(
            TensorProblem::Requantize(GgmlType::Q4_0).to_string(),
            "requantizing from type q4_0 is disabled (use --allow-requantize)"
        );
        assert_eq!(
            TensorProblem::Unconvertible {
                from: GgmlType::I32,
                to: GgmlType::Q8_0
            }
            .to_string(),
            "cannot convert i32 data to q8_0"
        );
        assert_eq!(
            TensorProblem::ImatrixSize {
                imatrix: 3,
                tensor: 4
            }
            .to_string(),
            "imatrix size 3 is different from tensor size 4"
        );
    }
}
