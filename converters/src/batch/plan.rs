//! From a source path and an output request to the output's lazy [`Model`]: the planning
//! half of `gguf-convert`, shared by single conversions and batches so both produce the
//! same file for the same request.
//!
//! A [`Source`] is opened once per job. Quantized outputs are planned (with
//! `ggufkit::quantize::plan`) from the source's *base* model, the same object for every
//! output of the job, which is what lets the batch engine compute each base tensor's f32
//! values once ([`super::share`]).

use ggufkit::gguf::keys;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ggufkit::gguf::GgufFile;
use ggufkit::ir::Model;
use ggufkit::quantize::{plan, FileType, Imatrix, KvOverride, QuantizeOptions, TensorTypeList};
use ggufkit::quantizers::GgmlType;

use crate::hf::{read_hf_dir, read_mmproj_dir, HfOptions, OutType};
use crate::legacy::{read_legacy, LegacyOptions};

/// Why an output cannot be planned. Every variant names the value, option or file at
/// fault; [`PlanError::kind`] says whose fault it is (for the CLI's exit status).
#[derive(Debug, Clone, thiserror::Error)]
pub enum PlanError {
    /// An `--outtype` that is no known type.
    #[error(
        "unknown --outtype '{0}': use {names}, or a gguf-quantize type such as q4_k_m",
        names = OutType::names()
    )]
    UnknownOutType(String),
    /// A projector type the reference's converter does not offer.
    #[error("unknown projector type 'mmproj:{0}': a projector is written as one of {names} (as convert_hf_to_gguf.py --mmproj)", names = OutType::names())]
    UnknownMmprojType(String),
    /// A projector of a source that is not a HuggingFace directory.
    #[error("{}: a multimodal projector (mmproj) is converted from a HuggingFace model directory", .0.display())]
    MmprojNeedsHfSource(PathBuf),
    /// An MTP draft type that is neither a converter type nor a quantized one.
    #[error("unknown MTP draft type 'mtp:{0}': use a converter type ({names}) or a gguf-quantize type such as q4_k_m", names = OutType::names())]
    UnknownMtpType(String),
    /// An MTP draft of a source that is not a HuggingFace directory.
    #[error("{}: a multi-token-prediction draft (mtp) is converted from a HuggingFace model directory", .0.display())]
    MtpNeedsHfSource(PathBuf),
    /// `--mtp` (every output is the draft) with an `mtp` output among others.
    #[error("--mtp makes every output the MTP draft; to write the model and its draft in one pass, name the draft as an output instead (e.g. --outtype q8_0,mtp)")]
    MtpOnlyWithDraftOutput,
    /// A split size that is not a size.
    #[error("invalid size '{0}' (e.g. 500M, 2G)")]
    InvalidSize(String),
    /// A split size that does not fit 64 bits.
    #[error("size '{0}' is too large")]
    SizeTooLarge(String),
    /// A memory budget that is not a size.
    #[error("invalid memory size '{0}' (e.g. 512M, 4G)")]
    InvalidMemory(String),
    /// `--shard` that is not K/N.
    #[error("--shard takes K/N with 1 <= K <= N, not '{0}'")]
    InvalidShard(String),
    /// A malformed `--override-kv` entry (the quantizer's message names it).
    #[error("{0}")]
    KvOverride(String),
    /// A malformed `--tensor-type` entry (the quantizer's message names it).
    #[error("{0}")]
    TensorType(String),
    /// An `--output-tensor-type` / `--token-embedding-type` that is no ggml type.
    #[error("invalid ggml type '{0}'")]
    GgmlType(String),
    /// Quantizer options with a plain outtype.
    #[error(
        "quantizer options (imatrix, tensor types, pure, …) need a quantized outtype, not {0}"
    )]
    QuantizerOptionsNeedQuantizedType(String),
    /// A plain outtype for a GGUF source.
    #[error("a GGUF input needs a quantized --outtype (e.g. q4_k_m); use gguf-quantize for F16/F32/BF16/COPY")]
    GgufNeedsQuantizedType,
    /// The importance matrix cannot be read.
    #[error("{error}")]
    Imatrix {
        /// The imatrix file.
        path: PathBuf,
        /// What is wrong (its message names the file).
        error: String,
    },
    /// The source is none of the formats we read.
    #[error("{}: not a HuggingFace model directory, a GGUF file or a legacy GGML/GGMF/GGJT file", .0.display())]
    UnknownSource(PathBuf),
    /// The GGUF source cannot be read.
    #[error("{error}")]
    Gguf {
        /// The source.
        path: PathBuf,
        /// What is wrong (its message names the file).
        error: String,
    },
    /// The HuggingFace directory cannot be converted.
    #[error("{}: {error}", path.display())]
    Hf {
        /// The source directory.
        path: PathBuf,
        /// What is wrong.
        error: String,
    },
    /// The legacy file cannot be converted.
    #[error("{error}")]
    Legacy {
        /// The source.
        path: PathBuf,
        /// What is wrong (its message names the file).
        error: String,
    },
    /// The quantizer cannot plan this output from the source.
    #[error("{}: {error}", path.display())]
    Quantize {
        /// The source.
        path: PathBuf,
        /// What is wrong.
        error: String,
    },
}

/// Whose fault a [`PlanError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanErrorKind {
    /// The request itself is wrong (an unknown type, a malformed override).
    Usage,
    /// The source (or a file an option names) cannot be read.
    Input,
    /// The source was read but this output cannot be made from it.
    Convert,
}

impl PlanError {
    /// Whose fault it is.
    pub fn kind(&self) -> PlanErrorKind {
        use PlanError::*;
        match self {
            UnknownOutType(_)
            | UnknownMmprojType(_)
            | MmprojNeedsHfSource(_)
            | UnknownMtpType(_)
            | MtpNeedsHfSource(_)
            | MtpOnlyWithDraftOutput
            | InvalidSize(_)
            | SizeTooLarge(_)
            | InvalidMemory(_)
            | InvalidShard(_)
            | KvOverride(_)
            | TensorType(_)
            | GgmlType(_)
            | QuantizerOptionsNeedQuantizedType(_)
            | GgufNeedsQuantizedType => PlanErrorKind::Usage,
            Imatrix { .. } | UnknownSource(_) | Gguf { .. } => PlanErrorKind::Input,
            Hf { .. } | Legacy { .. } | Quantize { .. } => PlanErrorKind::Convert,
        }
    }
}

/// What `--outtype` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// One of the converter's own types ([`OutType::all`]).
    Plain(OutType),
    /// A llama-quantize type, applied to the f32 conversion.
    Quantized(FileType),
    /// The multimodal projector (`convert_hf_to_gguf.py --mmproj`) in one of the
    /// converter's own types (`mmproj` is `auto`, `mmproj:f16`, …).
    Mmproj(OutType),
    /// The multi-token-prediction draft (`convert_hf_to_gguf.py --mtp`): `mtp` is `auto`,
    /// `mtp:q8_0` a converter type, `mtp:q4_k_m` a llama-quantize type of its f32
    /// conversion. A job with a draft output writes its text outputs without the MTP
    /// layers (as `--no-mtp`).
    Mtp(DraftType),
}

/// The type of an MTP draft output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftType {
    /// One of the converter's own types (`--mtp --outtype q8_0`).
    Plain(OutType),
    /// A llama-quantize type applied to the draft's f32 conversion.
    Quantized(FileType),
}

/// The value of a `KIND:TYPE` output (`mmproj:f16`) when `s` starts with `KIND:` (any case).
fn kind_value<'a>(s: &'a str, kind: &str) -> Option<&'a str> {
    let n = kind.len() + 1;
    s.get(..n)
        .filter(|p| p[..kind.len()].eq_ignore_ascii_case(kind) && p.ends_with(':'))
        .map(|_| &s[n..])
}

impl Target {
    /// Parses one `--outtype` value (`mmproj` and `mmproj:TYPE` name the projector).
    pub fn parse(s: &str) -> Result<Target, PlanError> {
        if s.eq_ignore_ascii_case("mmproj") {
            return Ok(Target::Mmproj(OutType::Auto));
        }
        if let Some(t) = kind_value(s, "mmproj") {
            return OutType::parse(t)
                .map(Target::Mmproj)
                .ok_or_else(|| PlanError::UnknownMmprojType(t.to_string()));
        }
        if s.eq_ignore_ascii_case("mtp") {
            return Ok(Target::Mtp(DraftType::Plain(OutType::Auto)));
        }
        if let Some(t) = kind_value(s, "mtp") {
            if let Some(o) = OutType::parse(t) {
                return Ok(Target::Mtp(DraftType::Plain(o)));
            }
            return match FileType::parse(t) {
                Some(f) if !f.is_copy() => Ok(Target::Mtp(DraftType::Quantized(f))),
                _ => Err(PlanError::UnknownMtpType(t.to_string())),
            };
        }
        if let Some(t) = OutType::parse(s) {
            return Ok(Target::Plain(t));
        }
        match FileType::parse(s) {
            Some(f) if !f.is_copy() => Ok(Target::Quantized(f)),
            _ => Err(PlanError::UnknownOutType(s.to_string())),
        }
    }

    /// A short name for reports (`F16`, `Q4_K_M`, `auto`).
    pub fn label(&self) -> String {
        match self {
            Target::Plain(OutType::Auto) => "auto".into(),
            Target::Plain(t) => t.label().into(),
            Target::Quantized(f) => f.name.into(),
            Target::Mmproj(OutType::Auto) => "mmproj".into(),
            Target::Mmproj(t) => format!("mmproj:{}", t.label()),
            Target::Mtp(DraftType::Plain(OutType::Auto)) => "mtp".into(),
            Target::Mtp(DraftType::Plain(t)) => format!("mtp:{}", t.label()),
            Target::Mtp(DraftType::Quantized(f)) => format!("mtp:{}", f.name),
        }
    }
}

/// The MTP switch of the text outputs of a job whose outputs are `targets`: with an MTP
/// draft among them, the text model is written without its MTP layers (as the reference's
/// `--no-mtp`, the other half of a release), unless `--mtp` asked for drafts only.
pub fn text_mtp(
    mtp: crate::hf::Mtp,
    targets: impl IntoIterator<Item = Target>,
) -> Result<crate::hf::Mtp, PlanError> {
    use crate::hf::Mtp;
    let draft = targets.into_iter().any(|t| matches!(t, Target::Mtp(_)));
    match (draft, mtp) {
        (false, m) => Ok(m),
        (true, Mtp::Only) => Err(PlanError::MtpOnlyWithDraftOutput),
        (true, _) => Ok(Mtp::Drop),
    }
}

/// Decimal sizes as llama.cpp's converter reads them: `500M`, `2G`, `1000`.
pub fn parse_size(s: &str) -> Result<u64, PlanError> {
    let bad = || PlanError::InvalidSize(s.to_string());
    let (num, mult) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1_000),
        Some('M' | 'm') => (&s[..s.len() - 1], 1_000_000),
        Some('G' | 'g') => (&s[..s.len() - 1], 1_000_000_000),
        _ => (s, 1),
    };
    let n: u64 = num.parse().map_err(|_| bad())?;
    n.checked_mul(mult)
        .ok_or_else(|| PlanError::SizeTooLarge(s.to_string()))
}

/// Binary sizes for memory budgets: `512M`, `4G`, `1.5G` (powers of 1024), or bytes.
pub fn parse_memory(s: &str) -> Result<u64, PlanError> {
    let bad = || PlanError::InvalidMemory(s.to_string());
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        Some('T' | 't') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    if !n.is_finite() || n <= 0.0 || n * mult as f64 > u64::MAX as f64 / 2.0 {
        return Err(bad());
    }
    Ok((n * mult as f64) as u64)
}

/// Splitting settings (gguf-py's `--split-max-*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitOptions {
    /// Start a new shard after this many tensors.
    pub max_tensors: Option<usize>,
    /// Start a new shard before exceeding this many bytes.
    pub max_size: Option<u64>,
    /// The first shard holds only metadata.
    pub no_tensor_first_split: bool,
}

impl SplitOptions {
    /// True when any limit is set. A limit of 0 means "no limit", as in
    /// convert_hf_to_gguf.py, whose defaults for both options are 0.
    pub fn splitting(&self) -> bool {
        self.max_tensors.is_some_and(|m| m > 0) || self.max_size.is_some_and(|m| m > 0)
    }

    /// gguf-py's shard assignment: a new shard starts when the current one has a tensor and
    /// either holds `max_tensors` or would exceed `max_size` raw bytes.
    pub fn assign(&self, sizes: &[u64]) -> Vec<usize> {
        if !self.splitting() {
            return vec![0; sizes.len()];
        }
        let mut shard = usize::from(self.no_tensor_first_split);
        let (mut count, mut bytes) = (0usize, 0u64);
        sizes
            .iter()
            .map(|&sz| {
                let full = self.max_tensors.is_some_and(|m| m > 0 && count >= m)
                    || self
                        .max_size
                        .is_some_and(|m| m > 0 && bytes.saturating_add(sz) > m);
                if count > 0 && full {
                    shard += 1;
                    count = 0;
                    bytes = 0;
                }
                count += 1;
                bytes = bytes.saturating_add(sz);
                shard
            })
            .collect()
    }
}

/// Options of the source (they apply to every output of a job).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceOptions {
    /// HF: write only the metadata and vocabulary.
    pub vocab_only: bool,
    /// HF: JSON file of `general.*` overrides (llama.cpp's `--metadata`).
    pub metadata: Option<PathBuf>,
    /// `general.name` (and the base of the default file name).
    pub model_name: Option<String>,
    /// Legacy: n_head / n_head_kv.
    pub gqa: Option<u32>,
    /// Legacy: RMS norm epsilon.
    pub eps: Option<f32>,
    /// Legacy: context length.
    pub context_length: Option<u32>,
    /// Legacy: HF directory with hyperparameters and tokenizer.
    pub vocab_dir: Option<PathBuf>,
    /// Legacy: `general.description`.
    pub desc: Option<String>,
    /// Planning only: tolerate a tokenizer that cannot be converted.
    pub dry_run: bool,
    /// convert_hf_to_gguf.py's `--bigendian`: every output in big-endian byte order.
    pub big_endian: bool,
    /// HF: the base model of a LoRA adapter (convert_lora_to_gguf.py's `--base`).
    pub lora_base: Option<PathBuf>,
    /// HF: `--fp8-as-q8` (FP8 matrices of the checkpoint written as Q8_0).
    pub fp8_as_q8: bool,
    /// HF: `--mistral-format` (Mistral's native layout), with its chat-template switch.
    pub mistral_format: Option<crate::hf::mistral::MistralFormat>,
    /// HF: `--mtp` / `--no-mtp` (the next-token-prediction layers).
    pub mtp: crate::hf::Mtp,
    /// HF: `--allow-unloadable` (write a model whose hyperparameters contradict its tensors).
    pub allow_unloadable: bool,
    /// HF: `--target-model-dir` (the model a speculative-decoding draft source is for).
    pub target_model_dir: Option<PathBuf>,
}

/// Quantizer options of one output (llama-quantize's switches).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputOptions {
    /// Importance matrix (GGUF or `.dat`) to read.
    pub imatrix: Option<PathBuf>,
    /// The imatrix name stored in `quantize.imatrix.file` (default: `imatrix` as given).
    pub imatrix_name: Option<String>,
    /// `PATTERN=TYPE` overrides, first match wins.
    pub tensor_types: Vec<String>,
    /// No mixture rules.
    pub pure: bool,
    /// Type of `output.weight`.
    pub output_tensor_type: Option<String>,
    /// Type of `token_embd.weight`.
    pub token_embedding_type: Option<String>,
    /// Keep `output.weight` as it is.
    pub leave_output_tensor: bool,
    /// `KEY=TYPE:VALUE` metadata overrides (llama-quantize's `--override-kv`).
    pub override_kv: Vec<String>,
    /// Planning only: a missing imatrix is a warning.
    pub dry_run: bool,
}

impl OutputOptions {
    /// True when any quantizer-only option is set (they make no sense for plain outtypes
    /// of a HuggingFace source).
    pub fn has_quantizer_options(&self) -> bool {
        self.imatrix.is_some()
            || !self.tensor_types.is_empty()
            || self.pure
            || self.output_tensor_type.is_some()
            || self.token_embedding_type.is_some()
            || self.leave_output_tensor
    }

    /// The parsed `--override-kv` entries.
    pub fn kv_overrides(&self) -> Result<Vec<KvOverride>, PlanError> {
        self.override_kv
            .iter()
            .map(|s| KvOverride::parse_exact(s).map_err(|e| PlanError::KvOverride(e.to_string())))
            .collect()
    }

    /// llama-quantize's options for `ftype` (loads the imatrix).
    pub fn quantize_options(&self, ftype: FileType) -> Result<QuantizeOptions, PlanError> {
        let ty = |s: &Option<String>| {
            s.as_deref()
                .map(|t| GgmlType::from_name(t).ok_or_else(|| PlanError::GgmlType(t.to_string())))
                .transpose()
        };
        let mut o = QuantizeOptions::new(ftype);
        o.pure = self.pure;
        o.leave_output_tensor = self.leave_output_tensor;
        o.dry_run = self.dry_run;
        o.output_tensor_type = ty(&self.output_tensor_type)?;
        o.token_embedding_type = ty(&self.token_embedding_type)?;
        // As on the command line: repeats dropped, counted and compiled under one budget.
        let mut list = TensorTypeList::new();
        for t in &self.tensor_types {
            list.push(t, "")
                .map_err(|e| PlanError::TensorType(e.to_string()))?;
        }
        o.tensor_types = list.into_vec();
        o.kv_overrides = self.kv_overrides()?;
        if let Some(p) = &self.imatrix {
            let im = Imatrix::load(p).map_err(|e| PlanError::Imatrix {
                path: p.clone(),
                error: e.to_string(),
            })?;
            let name = self
                .imatrix_name
                .clone()
                .unwrap_or_else(|| p.to_string_lossy().into_owned());
            o.imatrix = Some((name, im));
        }
        Ok(o)
    }
}

/// The kind of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A HuggingFace model directory.
    Hf,
    /// A GGUF file.
    Gguf,
    /// A legacy GGML/GGMF/GGJT `.bin`.
    Legacy,
}

/// The model quantized outputs are planned from, made once per source.
pub struct Base {
    /// HF: the f32 conversion; GGUF: the file; legacy: the file as read.
    pub model: Model,
    /// llama.cpp's default output name for this model (before the type suffix).
    pub default_name: String,
    /// Per tensor, where it comes from (for `--dry-run`).
    pub sources: Vec<String>,
    /// Things the user should know.
    pub notes: Vec<String>,
}

/// An opened source model.
pub struct Source {
    /// The path as given.
    pub path: PathBuf,
    /// What it is.
    pub kind: SourceKind,
    /// Its options.
    pub opts: SourceOptions,
    /// For a remote source (its weights read by range), what pins them (a commit, ETags):
    /// part of every output's fingerprint.
    pub remote: Option<String>,
    base: OnceLock<Base>,
    /// The f32 conversion of the MTP draft (made on first use by quantized drafts).
    draft_base: OnceLock<Base>,
}

/// One planned output.
pub struct PlannedOutput {
    /// The output model (lazy tensors, output order).
    pub model: Model,
    /// llama.cpp's default file name for it.
    pub default_name: String,
    /// Per tensor, where it comes from.
    pub sources: Vec<String>,
    /// Things the user should know.
    pub notes: Vec<String>,
}

fn is_gguf(p: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    p.is_file()
        && std::fs::File::open(p)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
        && &magic == b"GGUF"
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Source {
    /// Recognises `path` (nothing is converted yet).
    pub fn open(path: &Path, opts: SourceOptions) -> Result<Source, PlanError> {
        let kind = if is_gguf(path) {
            SourceKind::Gguf
        } else if crate::legacy::detect(path).is_some() {
            SourceKind::Legacy
        } else if path.is_dir() {
            SourceKind::Hf
        } else {
            return Err(PlanError::UnknownSource(path.to_path_buf()));
        };
        Ok(Source {
            path: path.to_path_buf(),
            kind,
            opts,
            remote: None,
            base: OnceLock::new(),
            draft_base: OnceLock::new(),
        })
    }

    /// Every file the source consists of (outputs must never replace one; resumable
    /// batches fingerprint them).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v = list_files(&self.path);
        if self.kind == SourceKind::Hf {
            // A LoRA adapter is converted against its base model, whose files are read too
            // (--base, else the adapter's base_model_name_or_path).
            if crate::hf::lora::is_adapter(&self.path) {
                let base = match &self.opts.lora_base {
                    Some(b) => Some(b.clone()),
                    None => crate::hf::lora::base_from_config(&self.path).ok(),
                };
                if let Some(base) = base.filter(|b| b.is_dir()) {
                    v.extend(list_files(&base));
                }
            }
            v.extend(hf_subdir_inputs(&self.path));
            // The converter reads no GGUF file, and outputs are often written beside the
            // model: earlier outputs, batch state and temporary files are not inputs.
            v.retain(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                !name.ends_with(".gguf")
                    && !name.contains(ggufkit::output::TEMP_MARKER)
                    && !name.starts_with(super::state::STATE_FILE)
            });
        }
        if self.kind == SourceKind::Legacy {
            // Multi-part models: x.bin.1, x.bin.2, …
            for i in 1.. {
                let mut p = self.path.clone().into_os_string();
                p.push(format!(".{i}"));
                let p = PathBuf::from(p);
                if !p.is_file() {
                    break;
                }
                v.push(p);
            }
            if let Some(d) = &self.opts.vocab_dir {
                v.extend(list_files(d));
            }
        }
        // The general.* overrides file (--metadata, or a batch job's `metadata`).
        if let Some(m) = &self.opts.metadata {
            v.push(m.clone());
        }
        v
    }

    /// The reader's options for `outtype`, with the MTP switch `mtp`.
    fn hf_options(&self, outtype: OutType, mtp: crate::hf::Mtp) -> HfOptions {
        HfOptions {
            outtype,
            vocab_only: self.opts.vocab_only,
            metadata_override: self.opts.metadata.clone(),
            model_name: self.opts.model_name.clone(),
            allow_missing_vocab: self.opts.dry_run,
            lora_base: self.opts.lora_base.clone(),
            fp8_as_q8: self.opts.fp8_as_q8,
            mistral_format: self.opts.mistral_format,
            mtp,
            allow_unloadable: self.opts.allow_unloadable,
            target: self
                .opts
                .target_model_dir
                .as_ref()
                .map(|d| std::sync::Arc::new(crate::hf::ModelDir::new(d))),
        }
    }

    fn read_hf(&self, outtype: OutType) -> Result<Base, PlanError> {
        self.read_hf_mtp(outtype, self.opts.mtp)
    }

    fn read_hf_mtp(&self, outtype: OutType, mtp: crate::hf::Mtp) -> Result<Base, PlanError> {
        let opts = self.hf_options(outtype, mtp);
        let c = read_hf_dir(&self.path, &opts).map_err(|e| PlanError::Hf {
            path: self.path.clone(),
            error: e.to_string(),
        })?;
        let mut notes = vec![format!(
            "architecture {} → {}",
            c.hf_arch,
            c.model.architecture().unwrap_or("?")
        )];
        if let Some(e) = &c.vocab_error {
            notes.push(format!("the tokenizer cannot be converted: {e}"));
        }
        // Say how a BPE pre-tokenizer was recognised (by llama.cpp's hash, or by structure
        // when the hash is unknown).
        if c.model.metadata.get_str(keys::tokenizer::MODEL) == Ok("gpt2") {
            // The conversion recognised it already where the vocabulary took the BPE path; a
            // family's own vocabulary code that writes a BPE model is checked here.
            let m = match c.pre_tokenizer {
                Some(m) => Some(m),
                None => crate::hf::tokenizer::detect_pre_tokenizer(&self.path).ok(),
            };
            if let Some(m) = m {
                notes.push(format!("pre-tokenizer: {m}"));
            }
        }
        Ok(Base {
            model: c.model,
            default_name: c.default_file_name,
            sources: c.sources,
            notes,
        })
    }

    fn make_base(&self) -> Result<Base, PlanError> {
        match self.kind {
            SourceKind::Gguf => {
                let f = GgufFile::open(&self.path).map_err(|e| PlanError::Gguf {
                    path: self.path.clone(),
                    error: e.to_string(),
                })?;
                ggufkit::split::refuse_big_endian(&f, &self.path).map_err(|e| PlanError::Gguf {
                    path: self.path.clone(),
                    error: e.to_string(),
                })?;
                Ok(Base {
                    sources: f.tensors.iter().map(|t| t.name.clone()).collect(),
                    model: Model::from_gguf(&f),
                    default_name: format!("{}.gguf", stem(&self.path)),
                    notes: Vec::new(),
                })
            }
            SourceKind::Legacy => {
                let opts = LegacyOptions {
                    gqa: self.opts.gqa,
                    eps: self.opts.eps,
                    context_length: self.opts.context_length,
                    vocab_dir: self.opts.vocab_dir.clone(),
                    outtype_for_changed_layouts: None,
                    name: self.opts.model_name.clone(),
                    description: self.opts.desc.clone(),
                    allow_unloadable: self.opts.allow_unloadable,
                };
                let c = read_legacy(&self.path, &opts).map_err(|e| PlanError::Legacy {
                    path: self.path.clone(),
                    error: e.to_string(),
                })?;
                let kind = crate::legacy::detect(&self.path);
                let mut notes = Vec::new();
                if let Some(kind) = kind {
                    notes.push(format!(
                        "legacy {:?} v{} file in {} part(s)",
                        kind.format,
                        kind.version,
                        c.parts.len()
                    ));
                }
                notes.extend(c.warnings.iter().cloned());
                Ok(Base {
                    sources: c
                        .tensors
                        .iter()
                        .map(|t| format!("{} ({})", t.legacy_name, t.legacy_layout))
                        .collect(),
                    model: c.model,
                    default_name: format!("{}.gguf", stem(&self.path)),
                    notes,
                })
            }
            SourceKind::Hf => self.read_hf(OutType::F32),
        }
    }

    /// The base model (made on first use, then shared by every output of the source).
    pub fn base(&self) -> Result<&Base, PlanError> {
        if let Some(b) = self.base.get() {
            return Ok(b);
        }
        let b = self.make_base()?;
        Ok(self.base.get_or_init(|| b))
    }

    /// Plans one output.
    pub fn plan_output(
        &self,
        target: Target,
        opts: &OutputOptions,
    ) -> Result<PlannedOutput, PlanError> {
        // For a GGUF input the converter's quantized outtypes are llama-quantize types.
        let target = match (self.kind, target) {
            (
                SourceKind::Gguf,
                Target::Plain(t @ (OutType::Q8_0 | OutType::Tq1_0 | OutType::Tq2_0)),
            ) => FileType::parse(t.label()).map_or(target, Target::Quantized),
            _ => target,
        };
        match (self.kind, target) {
            (_, Target::Mmproj(t)) => self.plan_mmproj(t, opts),
            (_, Target::Mtp(t)) => self.plan_draft(t, opts),
            (SourceKind::Gguf, Target::Plain(_)) => {
                self.base()?;
                Err(PlanError::GgufNeedsQuantizedType)
            }
            (SourceKind::Hf, Target::Quantized(f)) if crate::hf::lora::is_adapter(&self.path) => {
                Err(PlanError::Hf {
                    path: self.path.clone(),
                    error: format!(
                        "a LoRA adapter converts to f32, f16, bf16 or q8_0 (as \
                         convert_lora_to_gguf.py); {} is not available",
                        f.name
                    ),
                })
            }
            (SourceKind::Legacy, Target::Plain(OutType::Auto)) => self.plan_legacy(None, opts),
            // Plain outtypes re-type every quantizable tensor, as the quantizer would.
            (SourceKind::Legacy, Target::Plain(t)) => {
                self.plan_legacy(FileType::parse(t.label()), opts)
            }
            (SourceKind::Legacy, Target::Quantized(f)) => self.plan_legacy(Some(f), opts),
            (SourceKind::Hf, Target::Plain(t)) => self.plan_hf_plain(t, target, opts),
            (SourceKind::Hf | SourceKind::Gguf, Target::Quantized(ft)) => {
                self.plan_quantized(ft, opts)
            }
        }
    }

    /// A projector file (`--mmproj`): only from a HuggingFace directory, never quantized.
    fn plan_mmproj(&self, t: OutType, opts: &OutputOptions) -> Result<PlannedOutput, PlanError> {
        if self.kind != SourceKind::Hf {
            return Err(PlanError::MmprojNeedsHfSource(self.path.clone()));
        }
        if opts.has_quantizer_options() {
            return Err(PlanError::QuantizerOptionsNeedQuantizedType(
                Target::Mmproj(t).label(),
            ));
        }
        // A projector has no MTP layers: a draft among the job's outputs changes nothing here.
        let hf = self.hf_options(t, crate::hf::Mtp::Keep);
        let c = read_mmproj_dir(&self.path, &hf).map_err(|e| PlanError::Hf {
            path: self.path.clone(),
            error: e.to_string(),
        })?;
        let mut model = c.model;
        apply_kv_overrides(&mut model, opts)?;
        Ok(PlannedOutput {
            model,
            default_name: c.default_file_name,
            sources: c.sources,
            notes: vec![format!("projector of {} → clip", c.hf_arch)],
        })
    }

    /// The MTP draft (`--mtp`): only from a HuggingFace directory; a converter type is read
    /// as such, a quantized type planned from the draft's f32 conversion.
    fn plan_draft(&self, t: DraftType, opts: &OutputOptions) -> Result<PlannedOutput, PlanError> {
        use crate::hf::Mtp;
        if self.kind != SourceKind::Hf {
            return Err(PlanError::MtpNeedsHfSource(self.path.clone()));
        }
        match t {
            DraftType::Plain(o) => {
                if opts.has_quantizer_options() {
                    return Err(PlanError::QuantizerOptionsNeedQuantizedType(
                        Target::Mtp(t).label(),
                    ));
                }
                let b = self.read_hf_mtp(o, Mtp::Only)?;
                let mut model = b.model;
                apply_kv_overrides(&mut model, opts)?;
                Ok(PlannedOutput {
                    model,
                    default_name: b.default_name,
                    sources: b.sources,
                    notes: b.notes,
                })
            }
            DraftType::Quantized(ft) => {
                let base = match self.draft_base.get() {
                    Some(b) => b,
                    None => {
                        let b = self.read_hf_mtp(OutType::F32, Mtp::Only)?;
                        self.draft_base.get_or_init(|| b)
                    }
                };
                self.quantize_base(base, ft, opts)
            }
        }
    }

    /// A legacy GGML file: as read (`as_ftype` `None`), or planned by the quantizer for a
    /// file type.
    fn plan_legacy(
        &self,
        as_ftype: Option<FileType>,
        opts: &OutputOptions,
    ) -> Result<PlannedOutput, PlanError> {
        let base = self.base()?;
        let stem = stem(&self.path);
        let mut notes = base.notes.clone();
        match as_ftype {
            None => {
                let mut model = base.model.clone();
                apply_kv_overrides(&mut model, opts)?;
                Ok(PlannedOutput {
                    model,
                    default_name: format!("{stem}.gguf"),
                    sources: base.sources.clone(),
                    notes,
                })
            }
            Some(ft) => {
                let mut qo = opts.quantize_options(ft)?;
                qo.allow_requantize = true;
                let p = plan(&base.model, &qo).map_err(|e| PlanError::Quantize {
                    path: self.path.clone(),
                    error: e.to_string(),
                })?;
                notes.extend(p.warnings.iter().cloned());
                Ok(PlannedOutput {
                    sources: reorder_sources(&base.model, &base.sources, &p.model),
                    model: p.model,
                    default_name: format!("{stem}-{}.gguf", ft.name),
                    notes,
                })
            }
        }
    }

    /// A HuggingFace directory at a converter outtype: the f32 base read once for every
    /// output, the other outtypes read on their own.
    fn plan_hf_plain(
        &self,
        t: OutType,
        target: Target,
        opts: &OutputOptions,
    ) -> Result<PlannedOutput, PlanError> {
        if opts.has_quantizer_options() {
            return Err(PlanError::QuantizerOptionsNeedQuantizedType(target.label()));
        }
        let b = if t == OutType::F32 {
            let b = self.base()?;
            Base {
                model: b.model.clone(),
                default_name: b.default_name.clone(),
                sources: b.sources.clone(),
                notes: b.notes.clone(),
            }
        } else {
            self.read_hf(t)?
        };
        let mut model = b.model;
        apply_kv_overrides(&mut model, opts)?;
        Ok(PlannedOutput {
            model,
            default_name: b.default_name,
            sources: b.sources,
            notes: b.notes,
        })
    }

    /// A llama-quantize file type of the f32 base (HuggingFace) or of the GGUF input.
    fn plan_quantized(
        &self,
        ft: FileType,
        opts: &OutputOptions,
    ) -> Result<PlannedOutput, PlanError> {
        self.quantize_base(self.base()?, ft, opts)
    }

    /// `base` (an f32 conversion or a GGUF input) planned by the quantizer for `ft`.
    fn quantize_base(
        &self,
        base: &Base,
        ft: FileType,
        opts: &OutputOptions,
    ) -> Result<PlannedOutput, PlanError> {
        let qo = opts.quantize_options(ft)?;
        let p = plan(&base.model, &qo).map_err(|e| PlanError::Quantize {
            path: self.path.clone(),
            error: e.to_string(),
        })?;
        let mut notes = base.notes.clone();
        notes.extend(p.warnings.iter().cloned());
        let default_name = match base.default_name.rsplit_once("-F32.gguf") {
            Some((stem, "")) => format!("{stem}-{}.gguf", ft.name),
            _ => format!(
                "{}-{}.gguf",
                base.default_name.trim_end_matches(".gguf"),
                ft.name
            ),
        };
        Ok(PlannedOutput {
            sources: reorder_sources(&base.model, &base.sources, &p.model),
            model: p.model,
            default_name,
            notes,
        })
    }
}

/// `--override-kv` for outputs the quantizer does not plan (it applies them itself).
fn apply_kv_overrides(model: &mut Model, opts: &OutputOptions) -> Result<(), PlanError> {
    for o in opts.kv_overrides()? {
        model.metadata.set_last(o.key, o.value);
    }
    Ok(())
}

/// The planner reorders tensors; carry each one's source description along.
fn reorder_sources(base: &Model, sources: &[String], out: &Model) -> Vec<String> {
    let by_name: HashMap<&str, &str> = base
        .tensors
        .iter()
        .zip(sources)
        .map(|(t, s)| (t.name.as_str(), s.as_str()))
        .collect();
    out.tensors
        .iter()
        .map(|t| by_name.get(t.name.as_str()).unwrap_or(&"").to_string())
        .collect()
}

/// The files of a directory (not recursive), or the path itself.
/// The files below a HuggingFace directory that a conversion reads: the extra chat templates
/// (`additional_chat_templates/*.jinja`) and the sentence-transformers modules' configs
/// (`<path>/config.json` of each entry of modules.json, the pooling settings).
fn hf_subdir_inputs(dir: &Path) -> Vec<PathBuf> {
    let mut v = list_files(&dir.join("additional_chat_templates"))
        .into_iter()
        .filter(|p| p.is_file())
        .collect::<Vec<_>>();
    let modules = std::fs::read(dir.join("modules.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
    for m in modules
        .as_ref()
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(p) = m.get("path").and_then(serde_json::Value::as_str) {
            let cfg = dir.join(p).join("config.json");
            if cfg.is_file() {
                v.push(cfg);
            }
        }
    }
    v
}

fn list_files(p: &Path) -> Vec<PathBuf> {
    if p.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(p)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_file())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    } else {
        vec![p.to_path_buf()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message about an unknown type names every converter outtype the file-type
    /// table offers, and each of them parses as a plain, projector and draft type.
    #[test]
    fn unknown_type_messages_list_every_outtype() {
        let messages = [
            PlanError::UnknownOutType("x".into()).to_string(),
            PlanError::UnknownMmprojType("x".into()).to_string(),
            PlanError::UnknownMtpType("x".into()).to_string(),
        ];
        let mut n = 0;
        for t in OutType::all() {
            let name = t.name();
            for m in &messages {
                assert!(m.contains(name), "{name} missing from: {m}");
            }
            assert_eq!(Target::parse(name).unwrap(), Target::Plain(t));
            assert_eq!(
                Target::parse(&format!("mmproj:{name}")).unwrap(),
                Target::Mmproj(t)
            );
            assert_eq!(
                Target::parse(&format!("mtp:{name}")).unwrap(),
                Target::Mtp(DraftType::Plain(t))
            );
            n += 1;
        }
        assert!(n >= 7, "only {n} outtypes");
    }

    #[test]
    fn sizes_and_targets() {
        assert_eq!(parse_size("2G").unwrap(), 2_000_000_000);
        assert_eq!(parse_memory("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_memory("512M").unwrap(), 512 << 20);
        assert!(parse_memory("0").is_err() && parse_memory("x").is_err());
        assert_eq!(Target::parse("q4_k_m").unwrap().label(), "Q4_K_M");
        assert_eq!(Target::parse("F16").unwrap().label(), "F16");
        assert!(matches!(
            Target::parse("q9"),
            Err(PlanError::UnknownOutType(_))
        ));
        assert_eq!(
            Target::parse("mmproj").unwrap(),
            Target::Mmproj(OutType::Auto)
        );
        assert_eq!(Target::parse("MMPROJ:f32").unwrap().label(), "mmproj:F32");
        assert!(matches!(
            Target::parse("mmproj:q4_k_m"),
            Err(PlanError::UnknownMmprojType(_))
        ));
        assert!(matches!(
            Target::parse("copy"),
            Err(PlanError::UnknownOutType(_))
        ));
    }

    #[test]
    fn mtp_draft_targets() {
        use crate::hf::Mtp;
        assert_eq!(
            Target::parse("MTP").unwrap(),
            Target::Mtp(DraftType::Plain(OutType::Auto))
        );
        assert_eq!(Target::parse("mtp").unwrap().label(), "mtp");
        assert_eq!(Target::parse("mtp:q8_0").unwrap().label(), "mtp:Q8_0");
        assert_eq!(Target::parse("Mtp:Q4_K_M").unwrap().label(), "mtp:Q4_K_M");
        for bad in ["mtp:q9", "mtp:copy", "mtp:"] {
            assert!(
                matches!(Target::parse(bad), Err(PlanError::UnknownMtpType(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Target::parse("mtpx"),
            Err(PlanError::UnknownOutType(_))
        ));
        // A draft among the outputs: the text outputs leave the MTP layers out.
        let draft = Target::parse("mtp").unwrap();
        let text = Target::parse("q8_0").unwrap();
        assert_eq!(text_mtp(Mtp::Keep, [text, draft]).unwrap(), Mtp::Drop);
        assert_eq!(text_mtp(Mtp::Drop, [text, draft]).unwrap(), Mtp::Drop);
        assert_eq!(text_mtp(Mtp::Keep, [text]).unwrap(), Mtp::Keep);
        assert_eq!(text_mtp(Mtp::Only, [text]).unwrap(), Mtp::Only);
        assert!(matches!(
            text_mtp(Mtp::Only, [text, draft]),
            Err(PlanError::MtpOnlyWithDraftOutput)
        ));
    }

    #[test]
    fn shards_follow_gguf_py() {
        let s = SplitOptions {
            max_tensors: Some(2),
            ..Default::default()
        };
        assert_eq!(s.assign(&[1, 1, 1, 1, 1]), vec![0, 0, 1, 1, 2]);
        let s = SplitOptions {
            max_size: Some(10),
            no_tensor_first_split: true,
            ..Default::default()
        };
        assert_eq!(s.assign(&[6, 6, 20, 1]), vec![1, 2, 3, 4]);
        assert_eq!(SplitOptions::default().assign(&[5, 5]), vec![0, 0]);
    }
}
