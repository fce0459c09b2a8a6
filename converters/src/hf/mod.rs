//! HuggingFace model directories → model IR, as llama.cpp's `convert_hf_to_gguf.py` does.
//!
//! [`read_hf_dir`] returns the IR with every tensor already in its output type for the
//! plain outtypes ([`OutType::all`]); quantized outtypes are applied by
//! the caller with `ggufkit::quantize::plan` on the f32 IR. Nothing is read whole: tensors
//! that need no conversion point at byte ranges of the mapped safetensors files (or PyTorch
//! checkpoints, [`crate::torch`], when the directory has no safetensors), the others
//! are lazy transforms computed when the writer asks for them.
//!
//! Modules: [`config`] (config.json and transformers defaults), [`safetensors`] (shards and
//! headers), `family` (the types an architecture is described in), `arch` (the list of families), `tensors` (filtering, transforms,
//! types), `expr` (the lazy transforms), `params` (hparam KVs), [`metadata`] (`general.*`
//! and the file name), `outtype`, `names`, and [`tokenizer`] (vocabulary KVs).

use ggufkit::gguf::keys;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use ggufkit::gguf::{ArrayValue, Metadata, Value};
use ggufkit::ir::{Model, Tensor, TensorData};
use ggufkit::quantizers::GgmlType;

use crate::ConvertError;

mod arch;
pub mod config;
pub(crate) mod expr;
mod family;
mod float_range;
mod generic_config;
mod int_rows;
mod intquant;
pub mod lora;
pub mod metadata;
pub mod mistral;
mod mistral_params;
pub mod mmproj;
mod model_card;
mod model_dir;
mod names;
mod outtype;
mod params;
mod prequant;
pub mod reference;
pub mod safetensors;
mod st_header;
mod tensors;
pub mod tokenizer;
pub mod torch_math;

pub use mmproj::read_mmproj_dir;
pub use model_dir::ModelDir;
pub use outtype::OutType;

/// Options of [`read_hf_dir`] (the converter's command-line switches).
#[derive(Debug, Clone)]
pub struct HfOptions {
    /// `--outtype` (default `auto`).
    pub outtype: OutType,
    /// `--vocab-only`: metadata and vocabulary, no tensors.
    pub vocab_only: bool,
    /// `--metadata`: a JSON file of `general.*` overrides.
    pub metadata_override: Option<PathBuf>,
    /// `--model-name`.
    pub model_name: Option<String>,
    /// Convert even when the tokenizer cannot be converted: the `tokenizer.*` keys are then
    /// missing and [`HfConversion::vocab_error`] says why (diagnostics, `--dry-run`, tests).
    pub allow_missing_vocab: bool,
    /// The base model of a LoRA adapter (`--base`); default: the adapter's
    /// `base_model_name_or_path`, as a directory or a model id in the local HuggingFace cache.
    pub lora_base: Option<PathBuf>,
    /// `--fp8-as-q8`: matrices the checkpoint holds in FP8 (dequantized from
    /// `*_scale_inv`, `qscale_weight` or `weight_scale` scales) are written as Q8_0 whatever
    /// the outtype, as the reference's `tensor_force_quant` does.
    pub fp8_as_q8: bool,
    /// `--mistral-format`: the directory is in Mistral's native format (params.json,
    /// consolidated*.safetensors, tekken.json or tokenizer.model.v*), see [`mistral`].
    pub mistral_format: Option<mistral::MistralFormat>,
    /// `--mtp` / `--no-mtp` (`--no-nextn`): the next-token-prediction layers of a class
    /// with MTP export; any other class refuses both.
    pub mtp: Mtp,
    /// `--allow-unloadable`: write the model even when its hyperparameters contradict its
    /// tensors (llama.cpp's loader refuses such a file; convert_hf_to_gguf.py writes it). By
    /// default the conversion stops, naming each contradiction.
    pub allow_unloadable: bool,
    /// `--target-model-dir`: the model a speculative-decoding draft (EAGLE-3, ...) is
    /// for; the draft takes its tokenizer and some hparams from it. Other models ignore it,
    /// as the reference does.
    pub target: Option<Arc<ModelDir>>,
}

/// What becomes of a model's next-token-prediction (MTP, NextN) layers: the reference's
/// `--mtp` and `--no-mtp` / `--no-nextn` (mutually exclusive; only for the model classes
/// with `supports_mtp_export`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mtp {
    /// No switch: the class's own behaviour (GLM-4.5, Qwen3-Next and Nemotron-H keep them).
    #[default]
    Keep,
    /// `--no-mtp` / `--no-nextn`: the MTP tensors are dropped, the block count and the
    /// `nextn_predict_layers` key leave them out.
    Drop,
    /// `--mtp`: only the MTP tensors and the ones they share with the model (embeddings,
    /// final norm, output) are written, with the model's full metadata, under an `mtp-`
    /// prefixed default file name (without size label).
    Only,
    /// `--dspark`: a DeepSeek-V4 checkpoint (`DeepseekV4ForCausalLM`, nothing else) is
    /// converted as its DSpark draft (`DeepseekV4DSparkModel`, arch `dflash`) from its
    /// `mtp.*` stages.
    DSpark,
}

impl Default for HfOptions {
    fn default() -> Self {
        HfOptions {
            outtype: OutType::Auto,
            vocab_only: false,
            metadata_override: None,
            model_name: None,
            allow_missing_vocab: false,
            lora_base: None,
            fp8_as_q8: false,
            mistral_format: None,
            mtp: Mtp::Keep,
            allow_unloadable: false,
            target: None,
        }
    }
}

/// A converted model, ready for the writer.
pub struct HfConversion {
    /// The IR: metadata in llama.cpp's order, tensors in their output types.
    pub model: Model,
    /// `general.file_type`.
    pub file_type: u32,
    /// The resolved outtype (`auto` resolved).
    pub outtype: OutType,
    /// llama.cpp's default output name (`Llama-3.2-1B-Instruct-F16.gguf`).
    pub default_file_name: String,
    /// Per output tensor, its HF source tensor name(s), comma-separated (for `--dry-run`;
    /// the IR tensor's data describes the transform).
    pub sources: Vec<String>,
    /// The HF architecture.
    pub hf_arch: String,
    /// Why the tokenizer keys are missing, when [`HfOptions::allow_missing_vocab`] let the
    /// conversion go on without them.
    pub vocab_error: Option<String>,
    /// How the BPE / WordPiece pre-tokenizer was recognised, where the vocabulary took one of
    /// those paths (read once with the tokenizer, for the CLI's note).
    pub pre_tokenizer: Option<tokenizer::PreTokenizerMatch>,
}

/// The supported HF architecture names (for error messages).
pub fn supported_architectures() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut v: Vec<&'static str> = arch::ALL
            .iter()
            .flat_map(|a| a.hf_names.iter().copied())
            .collect();
        v.sort_unstable();
        v
    })
}

/// The vocabulary path the converter class of an HF architecture name takes (`None` for a
/// name no architecture claims).
pub fn vocab_kind(hf_arch: &str) -> Option<tokenizer::VocabKind> {
    arch::lookup(hf_arch).map(|a| a.vocab)
}

/// One row of `gguf-convert --list-architectures`: an HF class with what it converts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchitectureRow {
    /// The HF architecture name (`architectures[0]`).
    pub hf: &'static str,
    /// The GGUF architecture of its text model, if ggufkit converts it.
    pub gguf: Option<&'static str>,
    /// Its `--mmproj` projector, if ggufkit converts one: the projector type and the
    /// encoders written.
    pub mmproj: Option<(&'static str, Vec<&'static str>)>,
    /// What ggufkit does with the class's text model.
    pub text_status: Status,
    /// What ggufkit does with the class's projector (`--mmproj`).
    pub mmproj_status: Status,
}

/// What ggufkit does with one half (text model or projector) of an HF class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// ggufkit converts it.
    Converted,
    /// llama.cpp's converter converts it; ggufkit does not yet (and refuses it).
    NotYet,
    /// llama.cpp's converter lists the class but refuses every checkpoint of it; so does
    /// ggufkit.
    Refused,
    /// Neither converter has one for the class.
    None,
}

impl Status {
    fn of(ours: bool, reference: bool, refused: bool) -> Status {
        match (ours, reference, refused) {
            (_, true, true) => Status::Refused,
            (true, _, _) => Status::Converted,
            (false, true, false) => Status::NotYet,
            (false, false, _) => Status::None,
        }
    }

    /// The status as `--list-architectures --json` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Converted => "converted",
            Status::NotYet => "not yet",
            Status::Refused => "refused",
            Status::None => "none",
        }
    }
}

/// Every HF class that ggufkit or llama.cpp's converter converts (a text model or a
/// projector), sorted by name.
pub fn architecture_rows() -> Vec<ArchitectureRow> {
    let mut names: Vec<&'static str> = arch::ALL
        .iter()
        .flat_map(|a| a.hf_names.iter().copied())
        .chain(mmproj::ALL.iter().flat_map(|p| p.hf_names.iter().copied()))
        .chain(reference::TEXT_CLASSES.iter().copied())
        .chain(reference::MMPROJ_CLASSES.iter().copied())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|hf| {
            let gguf = arch::lookup(hf).map(|a| a.gguf);
            let mmproj = mmproj::lookup(hf).map(|p| (p.projector_type, p.encoders()));
            ArchitectureRow {
                hf,
                text_status: Status::of(
                    gguf.is_some(),
                    reference::converts_text(hf),
                    reference::text_refusal(hf).is_some(),
                ),
                mmproj_status: Status::of(mmproj.is_some(), reference::converts_mmproj(hf), false),
                gguf,
                mmproj,
            }
        })
        .collect()
}

/// The error for an HF class with no text converter: one the reference always refuses is
/// refused with its reason, one it converts is "not yet"; any other name is unknown, with
/// the nearest supported names.
pub(crate) fn unsupported_architecture(name: &str) -> ConvertError {
    if let Some(why) = reference::text_refusal(name) {
        ConvertError::NoTextModel {
            arch: name.to_string(),
            why,
        }
    } else if reference::converts_text(name) {
        ConvertError::ArchitectureNotYet {
            arch: name.to_string(),
        }
    } else {
        ConvertError::UnsupportedArchitecture {
            arch: name.to_string(),
            nearest: nearest_architectures(name),
            supported: supported_architectures().len(),
        }
    }
}

/// Up to three supported names nearest to `name` (case-insensitive edit distance; names
/// sharing a prefix with it first).
pub fn nearest_architectures(name: &str) -> Vec<&'static str> {
    let lower = name.to_lowercase();
    let stem: String = lower.chars().take(4).collect();
    let mut scored: Vec<(usize, &'static str)> = supported_architectures()
        .iter()
        .map(|c| {
            let cl = c.to_lowercase();
            let d = edit_distance(&lower, &cl);
            let bonus = if !stem.is_empty() && cl.starts_with(&stem) {
                0
            } else {
                1
            };
            (bonus * 1000 + d, *c)
        })
        .collect();
    scored.sort_unstable();
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Converts the HF model in `dir`.
pub fn read_hf_dir(dir: &Path, opts: &HfOptions) -> Result<HfConversion, ConvertError> {
    read_model_dir(&ModelDir::new(dir), opts)
}

/// Converts the HF model of the directory value `dir`: every step below reads the shared
/// files (config.json, the tokenizer files, generation_config.json) through it.
pub fn read_model_dir(dir: &ModelDir, opts: &HfOptions) -> Result<HfConversion, ConvertError> {
    if lora::is_adapter(dir) {
        if opts.mtp != Mtp::Keep {
            return Err(ConvertError::Unsupported(
                "--mtp / --no-nextn are not supported for a LoRA adapter".into(),
            ));
        }
        let base = match &opts.lora_base {
            Some(b) => b.clone(),
            None => lora::base_from_config(dir)?,
        };
        return lora::read_lora_dir(dir, &base, opts);
    }
    if let Some(format) = opts.mistral_format {
        return mistral::read_mistral_dir(dir, opts, format);
    }
    if !dir.has_file(model_dir::CONFIG)
        && !dir.config_path().exists()
        && dir.has_file("params.json")
    {
        return Err(ConvertError::MissingFile {
            path: dir.config_path(),
            why: "missing config.json, but params.json is there: this looks like Mistral's \
                  native format; convert it with --mistral-format"
                .into(),
        });
    }
    let index_phase = ggufkit::timing::phase("read: config and tensor index");
    let mut hp = config::load(dir)?;
    hp.target = opts.target.clone();
    if opts.mtp == Mtp::DSpark {
        dspark_class(&mut hp)?;
    }
    let arch = arch::lookup(&hp.arch).ok_or_else(|| unsupported_architecture(&hp.arch))?;
    let arch = class_decisions(&mut hp, arch)?;
    // The reference reads `.bin` parts only when there are no safetensors weights.
    let shards = if safetensors::is_safetensors(dir)? {
        safetensors::index_dir(dir)
    } else {
        crate::torch::index_dir(dir)
    };
    let shards = match shards {
        // A vocabulary needs no weights: the reference writes it from a directory that has
        // none (but not from one whose index names a missing shard).
        Err(ConvertError::NoWeights { .. }) if opts.vocab_only => safetensors::Shards {
            tensors: Vec::new(),
            files: Vec::new(),
        },
        r => r?,
    };
    drop(index_phase);
    convert_dir(dir, opts, hp, arch, shards, None)
}

/// The class's own pass over its hparams and the description it switches to for this
/// config ([`family::Hooks`]), in its constructor's order.
fn class_decisions(
    hp: &mut config::Hparams,
    arch: &'static arch::Arch,
) -> Result<&'static arch::Arch, ConvertError> {
    if let Some(adjust) = arch.hooks.adjust {
        adjust(hp)?;
    }
    Ok(match arch.hooks.switch {
        Some(switch) => switch(hp)?.unwrap_or(arch),
        None => arch,
    })
}

/// Converts a model directory once its hparams, architecture and weights are known (the HF
/// and Mistral-native readers share it); `mistral` selects Mistral's tokenizer files and
/// chat-template rules instead of the HF vocabulary paths.
///
/// The phases, in the reference's order: the MTP switches, the model's tensors
/// (`index_tensors`, `filter_tensors`, the class's whole-list pass), the outtype and file
/// type, `dequant_model` and `prepare_tensors`, the metadata (`general.*`, the hparam KVs),
/// the default file name, then the vocabulary.
fn convert_dir(
    dir: &ModelDir,
    opts: &HfOptions,
    mut hp: config::Hparams,
    arch: &'static arch::Arch,
    shards: safetensors::Shards,
    mistral: Option<tokenizer::mistral::TemplateChoice>,
) -> Result<HfConversion, ConvertError> {
    apply_mtp_switch(opts, &mut hp, arch, mistral.is_some())?;
    let plan_phase = ggufkit::timing::phase("read: tensor plan");
    let entries = tensors::collect(arch, &hp, shards.tensors)?;
    let entries = match arch.rules.mtp {
        Some(rename) => rename(&mut hp, entries)?,
        None => entries,
    };
    let hp = hp;
    let outtype = match opts.outtype {
        OutType::Auto => {
            outtype::resolve_auto(entries.iter().map(|e| (e.expr.shape().len(), e.dtype)))
        }
        t => t,
    };
    let (file_type, label) = file_type_and_label(&hp, dir, arch, outtype, opts.vocab_only)?;
    let (entries, nvfp4) = tensors::dequantize(arch, &hp, dir, entries, opts.fp8_as_q8)?;
    let (planned, early_kvs, a16) = if opts.vocab_only {
        (Vec::new(), Vec::new(), Vec::new())
    } else {
        let extra = (arch.extra)(&hp)?;
        let (planned, a16) = tensors::plan(arch, &hp, dir, outtype, nvfp4, extra.tensors, entries)?;
        (planned, extra.early_kvs, a16)
    };
    let gguf_arch = arch.gguf_arch(&hp);
    let head = ModelHead {
        gguf_arch,
        early_kvs,
        file_type,
        a16,
    };
    drop(plan_phase);
    let metadata_phase = ggufkit::timing::phase("read: metadata");
    let (mut md, meta) = model_metadata(dir, opts, &hp, arch, &planned, head)?;
    let default_file_name = default_file_name(&meta, &hp, opts, label);
    drop(metadata_phase);
    let vocab_phase = ggufkit::timing::phase("read: vocabulary");
    let vocab = match mistral {
        // The reference writes Mistral's vocabulary as it is: no padding to params.json's
        // vocab_size.
        Some(choice) => {
            tokenizer::mistral::vocab_metadata(dir, gguf_arch, choice).map(|k| (k, None))
        }
        None => {
            if arch.vocab_quirks.pads_to_vocab_size && !opts.allow_unloadable {
                check_vocab_padding(&hp, &planned)?;
            }
            let hparams = hp.to_json();
            let (kind, vocab_arch) = vocab_class(&hp, arch, gguf_arch)?;
            let vocab_dir = vocab_dir(dir, &hp, arch)?;
            vocab_dir.prefetch_tokenizer_json();
            let req = tokenizer::VocabRequest {
                dir: vocab_dir,
                kind,
                arch: vocab_arch,
                hparams: &hparams,
            };
            tokenizer::vocab_metadata_report(&req).map(|r| (r.keys, r.pre))
        }
    };
    let (vocab_error, pre_tokenizer) = match vocab {
        Ok((kvs, pre)) => {
            for (k, v) in kvs {
                md.set(k, v);
            }
            if let Some(tail) = arch.hooks.vocab_tail {
                for (k, v) in tail(&hp)? {
                    md.set(k, v);
                }
            }
            (None, pre)
        }
        Err(e) if opts.allow_missing_vocab => (Some(e.to_string()), None),
        Err(e) => return Err(e),
    };
    drop(vocab_phase);

    let _check_phase = ggufkit::timing::phase("read: loadability check");
    let (sources, tensors) = to_ir_all(planned);
    let hparams_file = if mistral.is_some() {
        "params.json"
    } else {
        "config.json"
    };
    if !opts.allow_unloadable {
        crate::loadable::check_loadable(&dir.join(hparams_file), &md, &tensors)?;
    }
    Ok(HfConversion {
        model: Model {
            metadata: md,
            tensors,
        },
        file_type,
        outtype,
        default_file_name,
        sources,
        hf_arch: hp.arch.clone(),
        vocab_error,
        pre_tokenizer,
    })
}

/// The directory whose tokenizer the vocabulary is built from: the model's own, or the
/// target model's for a class that reads it there ([`family::VocabQuirks::from_target`]).
fn vocab_dir<'a>(
    dir: &'a ModelDir,
    hp: &'a config::Hparams,
    arch: &arch::Arch,
) -> Result<&'a ModelDir, ConvertError> {
    if !arch.vocab_quirks.from_target {
        return Ok(dir);
    }
    hp.target
        .as_deref()
        .ok_or_else(|| ConvertError::NeedsTarget {
            path: hp.path.clone(),
            class: hp.arch.clone(),
        })
}

/// The vocabulary path and the architecture whose vocabulary quirks apply: the class's
/// own, or its target model class's ([`family::VocabQuirks::target_class`]).
fn vocab_class(
    hp: &config::Hparams,
    arch: &'static arch::Arch,
    gguf_arch: &'static str,
) -> Result<(tokenizer::VocabKind, &'static str), ConvertError> {
    if !arch.vocab_quirks.target_class {
        return Ok((arch.vocab, gguf_arch));
    }
    let (cfg, path) = hp.target_config()?;
    let target = config::from_json(serde_json::Value::Object(cfg), path)?;
    let class = arch::lookup(&target.arch).ok_or_else(|| unsupported_architecture(&target.arch))?;
    Ok(if std::ptr::eq(class, arch) {
        (arch.vocab, gguf_arch)
    } else {
        (class.vocab, class.gguf)
    })
}

/// `--dspark`: the class becomes the DeepSeek-V4 DSpark draft's; refused for any
/// checkpoint but a `DeepseekV4ForCausalLM` one.
fn dspark_class(hp: &mut config::Hparams) -> Result<(), ConvertError> {
    use arch::deepseek4_dspark::{DEEPSEEK4_DSPARK, DSPARK_SOURCE_CLASS};
    if hp.arch != DSPARK_SOURCE_CLASS {
        return Err(ConvertError::Unsupported(format!(
            "--dspark is only supported for {DSPARK_SOURCE_CLASS}, not {}",
            hp.arch
        )));
    }
    hp.arch = DEEPSEEK4_DSPARK.hf_names[0].to_string();
    Ok(())
}

/// `--mtp` / `--no-mtp`: refused for a class without MTP export (and for Mistral's native
/// format), else recorded in the hparams the class's filters read.
fn apply_mtp_switch(
    opts: &HfOptions,
    hp: &mut config::Hparams,
    arch: &arch::Arch,
    mistral: bool,
) -> Result<(), ConvertError> {
    if mistral && opts.mtp == Mtp::DSpark {
        return Err(ConvertError::Unsupported(
            "--dspark is only supported for DeepseekV4ForCausalLM, not a Mistral-format \
             checkpoint"
                .into(),
        ));
    }
    if !matches!(opts.mtp, Mtp::Keep | Mtp::DSpark) {
        if arch.rules.mtp_export.is_none() || mistral {
            return Err(ConvertError::Unsupported(format!(
                "--mtp / --no-nextn are not supported for {}",
                hp.arch
            )));
        }
        hp.mtp = opts.mtp;
    }
    Ok(())
}

/// `general.file_type` and the file name's type label (`prepare_metadata`): a checkpoint
/// whose weights stay quantized is labelled with their file type rather than a float
/// outtype's.
fn file_type_and_label(
    hp: &config::Hparams,
    dir: &Path,
    arch: &arch::Arch,
    outtype: OutType,
    vocab_only: bool,
) -> Result<(u32, &'static str), ConvertError> {
    let label = |ft: u32| ggufkit::quantize::ftype::LlamaFtype::by_id(ft).map_or("", |f| f.name);
    // A class that sets the file type in `prepare_tensors` (which a vocabulary does not run).
    if let Some(ft) = arch.rules.file_type.filter(|_| !vocab_only) {
        return Ok((ft, label(ft)));
    }
    if let Some(ft) = arch.rules.file_type_of.and_then(|f| f(hp)) {
        if !vocab_only {
            return Ok((ft, label(ft)));
        }
    }
    Ok(match tensors::packed_file_type(hp, dir)? {
        Some(ft) if matches!(outtype, OutType::F32 | OutType::F16 | OutType::Bf16) => {
            (ft, label(ft))
        }
        _ => (outtype.file_type(), outtype.label()),
    })
}

/// What the metadata phase needs besides the hparams and the planned tensors.
struct ModelHead {
    /// `general.architecture` (and the key prefix).
    gguf_arch: &'static str,
    /// KVs the class adds while its tensors are generated (before `general.type`).
    early_kvs: Vec<(String, Value)>,
    /// `general.file_type`.
    file_type: u32,
    /// The W4A16_NVFP4 weights (`_prec_a4`).
    a16: Vec<String>,
}

/// The model's metadata before the vocabulary, in the reference's order: the architecture
/// and the class's early KVs, `general.type`, the `general.*` block, the hparam KVs, the
/// quantization version and the NVFP4 precision lists; and the `general.*` values (for the
/// file name).
fn model_metadata(
    dir: &ModelDir,
    opts: &HfOptions,
    hp: &config::Hparams,
    arch: &arch::Arch,
    planned: &[tensors::Planned],
    head: ModelHead,
) -> Result<(Metadata, metadata::ModelMeta), ConvertError> {
    let mut md = Metadata::new();
    md.set(keys::general::ARCHITECTURE, head.gguf_arch);
    for (k, v) in head.early_kvs {
        md.set(k, v);
    }
    md.set(keys::general::TYPE, "model");
    let meta = metadata::write_general(
        dir,
        &hp.raw,
        opts,
        planned.iter().map(|p| (p.name.as_str(), p.expr.shape())),
        &mut md,
    )?;
    (arch.params)(&mut params::Params::new(
        hp,
        head.gguf_arch,
        dir,
        head.file_type,
        &mut md,
    ))?;
    md.set(keys::general::QUANTIZATION_VERSION, Value::U32(2));
    let mut a16 = head.a16;
    if !a16.is_empty() {
        // `_prec_a4`: the W4A16_NVFP4 weights, sorted, each with 4-bit activations off.
        a16.sort();
        a16.dedup();
        let off = vec![false; a16.len()];
        md.set(
            keys::general::TENSOR_EXTRA_NAME,
            Value::Array(ArrayValue::String(a16.iter().map(String::as_str).collect())),
        );
        md.set(
            keys::general::TENSOR_EXTRA_PREC_A4,
            Value::Array(ArrayValue::Bool(off)),
        );
    }
    check_f32_overflow(hp, &md)?;
    Ok((md, meta))
}

/// llama.cpp's default output name: the MTP head's own (no size label, also under
/// `--vocab-only`), a vocabulary's, or the model's.
fn default_file_name(
    meta: &metadata::ModelMeta,
    hp: &config::Hparams,
    opts: &HfOptions,
    label: &str,
) -> String {
    let stem = if hp.mtp == Mtp::Only {
        format!("mtp-{}", metadata::file_name(meta, None, Some(label), None))
    } else if opts.vocab_only {
        metadata::file_name(meta, None, None, Some("vocab"))
    } else {
        let kind = meta.lora_params.then_some("LoRA");
        metadata::file_name(meta, meta.size_label.as_deref(), Some(label), kind)
    };
    stem + ".gguf"
}

/// gguf-py packs FLOAT32 values with `struct.pack("<f", x)`, which raises OverflowError for a
/// finite value beyond f32's range (`rms_norm_eps: 1e308`): the reference refuses what a
/// plain cast would write as `inf`. JSON holds no infinities, so an infinite FLOAT32 here
/// always comes from such an overflow.
fn check_f32_overflow(hp: &config::Hparams, md: &Metadata) -> Result<(), ConvertError> {
    for (k, v) in md.iter() {
        if let Value::F32(x) = v {
            if x.is_infinite() {
                return Err(ConvertError::format(
                    &hp.path,
                    None,
                    format!(
                        "{k}: the value is too large for a FLOAT32 (the reference refuses it: \
                         float too large to pack)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The vocabulary is padded with `[PAD<i>]` tokens up to config `vocab_size`; llama.cpp needs
/// one token embedding row per token, so padding beyond the rows of `token_embd.weight` gives
/// a file it cannot load, and a hostile `vocab_size` would build millions of tokens for a
/// small model. Refused before the vocabulary is built (no check without tensors, as with
/// `--vocab-only`), as one of the contradictions `allow_unloadable` lets through (the
/// vocabulary builders still bound the count).
fn check_vocab_padding(
    hp: &config::Hparams,
    planned: &[tensors::Planned],
) -> Result<(), ConvertError> {
    let Some(rows) = planned
        .iter()
        .find(|p| p.name == "token_embd.weight")
        .and_then(|p| p.expr.shape().first().copied())
    else {
        return Ok(());
    };
    let Some(n) = hp.find_u64(&["vocab_size"]).ok().flatten() else {
        return Ok(());
    };
    if n > rows {
        return Err(ConvertError::HparamsContradictTensors {
            config: hp.path.clone(),
            problems: vec![format!(
                "vocab_size {n} is larger than the {rows} rows of the token embedding \
                 (token_embd.weight): refusing to pad the vocabulary with {} tokens that have \
                 no embedding",
                n - rows
            )],
        });
    }
    Ok(())
}

/// A planned tensor as an IR tensor: a mapped byte range when the source already has the
/// output type and needs no transform, a lazy transform otherwise.
/// The planned tensors as IR, with their HF source names (for `--dry-run`).
pub(crate) fn to_ir_all(planned: Vec<tensors::Planned>) -> (Vec<String>, Vec<Tensor>) {
    planned
        .into_iter()
        .map(|p| {
            let mut names = Vec::new();
            p.expr.sources(&mut names);
            (names.join(", "), to_ir(p))
        })
        .unzip()
}

fn to_ir(p: tensors::Planned) -> Tensor {
    let dims: Vec<u64> = if p.expr.shape().is_empty() {
        vec![1]
    } else {
        p.expr.shape().iter().rev().copied().collect()
    };
    if let Some((ty, packed)) = p.expr.as_packed().filter(|(ty, _)| *ty == p.ty) {
        return Tensor {
            name: p.name,
            dims,
            ty,
            data: TensorData::Derived(Arc::new(packed.clone())),
        };
    }
    let direct = p.expr.as_read().filter(|t| {
        matches!(
            (t.dtype, p.ty),
            (safetensors::StDtype::F32, GgmlType::F32)
                | (safetensors::StDtype::F16, GgmlType::F16)
                | (safetensors::StDtype::Bf16, GgmlType::BF16)
        )
    });
    let data = match direct {
        Some(t) => TensorData::Mapped {
            file: t.file.clone(),
            offset: t.offset,
            len: t.len,
        },
        None => TensorData::Derived(Arc::new(expr::Materialize {
            expr: p.expr,
            out: p.ty,
        })),
    };
    Tensor {
        name: p.name,
        dims,
        ty: p.ty,
        data,
    }
}
