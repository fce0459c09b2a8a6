//! Legacy GGML / GGMF / GGJT llama `.bin` files → model IR, as llama.cpp's
//! `convert_llama_ggml_to_gguf.py` maps them.
//!
//! # What is read
//!
//! * The container is detected from its magic ([`detect`]): unversioned GGML (`lmgg` on
//!   disk), GGMF v1 (`fmgg`), GGJT v1–v3 (`tjgg`). GGUF and GGLA files are refused.
//! * Multi-part models (`x.bin`, `x.bin.1`, …; pre-GGJT llama.cpp) are found and
//!   reassembled as old llama.cpp did: the part count is `n_embd / ne0(tok_embeddings)` of
//!   the first file; `tok_embeddings`, `wo` and `w2` are joined by columns, the other
//!   matrices by rows, vectors taken from the first part. Parts whose headers,
//!   vocabularies or tensor lists disagree are an error.
//! * The block layouts are read per tensor with the rules of the file's version, not from
//!   the whole-file `ftype` (which can lie).
//!
//! # What is produced
//!
//! A [`Model`] with the converter's keys in its order: `general.architecture` = `llama`,
//! `general.name` (the input file name), `general.description`, `general.file_type`, the
//! `llama.*` hyperparameters (feed-forward length from `layers.0.feed_forward.w1`, rope
//! dimensions n_embd / n_head, context length and epsilon from the options) and the
//! vocabulary with scores and inferred token types, then the tensors in file order under
//! their GGUF names.
//!
//! Tensor data stays lazy:
//!
//! * a legacy layout that is a current type (F32, F16, GGJT v2 Q5, everything in GGJT v3) is
//!   a [`TensorData::Mapped`](ggufkit::ir::TensorData::Mapped) range of the input: copied
//!   byte for byte, zero-copy;
//! * a changed layout (the f32-scale Q4_0/Q4_1/Q8_0 of GGJT v1/v2, pairwise-nibble Q5 of
//!   GGJT v1 and older, Q4_2/Q4_3) becomes a
//!   [`TensorData::Derived`](ggufkit::ir::TensorData::Derived) source: repacked into the
//!   current type when that changes no value (every scale an f16 value), otherwise
//!   dequantized exactly to f32 (this module's own dequantizers of the old layouts) and
//!   quantized to [`LegacyOptions::outtype_for_changed_layouts`] (default: the closest
//!   current type), with a warning.
//!
//! # Deliberate differences from the converter
//!
//! * It refuses every quantized file before GGJT v2 and GGJT v2 Q4/Q8 files; these are
//!   converted here as described above.
//! * Without `gqa`, the converter writes `head_count_kv = n_head`, which llama.cpp cannot
//!   load for a grouped-query model; here the count is then taken from the shape of
//!   `layers.0.attention.wk` (with a warning when that differs from `n_head`).
//! * Only the llama `.pth` tensor names are mapped (the converter's map also knows HF
//!   names, which never occur in these files).
//! * With [`LegacyOptions::vocab_dir`], the vocabulary comes from the HF tokenizer converter
//!   ([`crate::hf::tokenizer`], `convert_hf_to_gguf.py`'s rules), not from
//!   `convert_legacy_llama.py`'s vocabulary classes; they agree for SentencePiece models.
//!
//! The converter's output itself cannot be compared directly: with its own gguf-py it
//! writes `ne0` divided by the type size (testdata/golden/README.md "Legacy"); the golden
//! manifests come from the converter with that shape bug fixed.

#![deny(missing_docs)]

mod container;
mod cursor;
mod error;
mod layout;
mod metadata;
mod names;
mod old_quants;
mod parts;
mod tensors;

use ggufkit::gguf::keys;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use ggufkit::gguf::{Metadata, Value};
use ggufkit::ir::Model;
use ggufkit::quantizers::GgmlType;

pub use container::{Hparams, LegacyFormat, LegacyKind};
pub use error::{LegacyError, LegacyErrorKind, MAX_NAME_LEN, MAX_TOKEN_LEN};
pub use layout::Layout;
pub use metadata::{DEFAULT_CONTEXT_LENGTH, DEFAULT_EPS};
pub use tensors::{TensorConversion, TensorReport};

use crate::ConvertError;
use container::ParsedFile;
use parts::SourceTensor;

/// The container of `path` judged from its first 8 bytes: `Some` for the GGML, GGMF and
/// GGJT magics (the version as read; [`LegacyKind::is_supported`] says whether it is one
/// that existed), `None` for anything else, including GGUF and unreadable files.
pub fn detect(path: &Path) -> Option<LegacyKind> {
    let mut head = Vec::with_capacity(8);
    ggufkit::mapped::open_input(path)
        .ok()?
        .take(8)
        .read_to_end(&mut head)
        .ok()?;
    container::classify(&head)
}

/// Options of [`read_legacy`], the converter's command-line options.
#[derive(Debug, Clone, Default)]
pub struct LegacyOptions {
    /// `--gqa`: the grouped-query factor n_head / n_head_kv. `None`: taken from the shape
    /// of `layers.0.attention.wk` (the converter assumes 1).
    pub gqa: Option<u32>,
    /// `--eps`: RMS norm epsilon (default [`DEFAULT_EPS`]: 5e-6; LLaMA-2 uses 1e-5).
    pub eps: Option<f32>,
    /// `--context-length`: default [`DEFAULT_CONTEXT_LENGTH`] (2048).
    pub context_length: Option<u32>,
    /// `--model-metadata-dir` (and `--vocab-dir`): an HF model directory whose
    /// `config.json` (or Meta `params.json`) gives the hyperparameters and whose tokenizer
    /// gives the vocabulary. `gqa`, `eps` and `context_length` are then ignored.
    pub vocab_dir: Option<PathBuf>,
    /// The type for tensors whose legacy block layout no current type has. `None`: an
    /// exact repack where possible, otherwise the closest current type (q4_0 for Q4_0 and
    /// Q4_2, q4_1 for Q4_1 and Q4_3, q5_0, q5_1, q8_0). `Some(t)`: every such tensor is
    /// dequantized and quantized to `t` (`F32` keeps the exact dequantization). Rows that do
    /// not fit `t`'s blocks are written as F32.
    pub outtype_for_changed_layouts: Option<GgmlType>,
    /// `--name`: `general.name` (default: the input file name).
    pub name: Option<String>,
    /// `--desc`: `general.description` (default: "converted from legacy GGJTv3 MOSTLY_Q4_0
    /// format" and the like).
    pub description: Option<String>,
    /// `--allow-unloadable`: write the model even when the header's hyperparameters (or
    /// `--gqa`) contradict the tensors, as the reference does; by default it is refused.
    pub allow_unloadable: bool,
}

/// The result of [`read_legacy`].
pub struct LegacyConversion {
    /// The model, tensors lazy.
    pub model: Model,
    /// Things the user should know: lossy requantization, inferred values, shapes
    /// llama.cpp will refuse, ignored options.
    pub warnings: Vec<String>,
    /// The container of the input.
    pub kind: LegacyKind,
    /// The header of the (first) input file.
    pub hparams: Hparams,
    /// The files read, the first part first.
    pub parts: Vec<PathBuf>,
    /// One entry per output tensor, in output order.
    pub tensors: Vec<TensorReport>,
}

impl std::fmt::Debug for LegacyConversion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacyConversion")
            .field("kind", &self.kind)
            .field("hparams", &self.hparams)
            .field("parts", &self.parts)
            .field("warnings", &self.warnings)
            .field("tensors", &self.tensors.len())
            .finish()
    }
}

/// Reads the legacy llama model whose (first) file is `path` and maps it to the IR: the
/// parts opened and assembled, the tensors named, the hyperparameters and vocabulary (from
/// the file, or a metadata directory), the shapes checked, each tensor planned, then the
/// metadata.
pub fn read_legacy(path: &Path, opts: &LegacyOptions) -> Result<LegacyConversion, ConvertError> {
    check_changed_layout_type(opts)?;
    let mut warnings = Vec::new();
    let first = ParsedFile::open(path)?;
    let (kind, hp) = (first.kind, first.hparams);
    let parts = parts::open_parts(first, &mut warnings)?;
    let sources = parts::assemble(&parts)?;
    let part_paths: Vec<PathBuf> = parts.iter().map(|p| p.path.clone()).collect();
    let vocab = std::mem::take(&mut parts.into_iter().next().expect("one part").vocab);

    let named = map_names(&sources, hp.n_layer)?;
    let n_ff = feed_forward_length(path, &sources)?;
    let file = FileFacts {
        path,
        kind,
        hp: &hp,
        n_ff,
        sources: &sources,
        vocab: &vocab,
    };
    let (params, vocab_kv) = params_and_vocab(&file, opts, &mut warnings)?;
    check_shapes(&sources, &hp, &params, &mut warnings);
    let mut out_tensors = Vec::with_capacity(sources.len());
    let mut reports = Vec::with_capacity(sources.len());
    for (src, gguf_name) in sources.iter().zip(&named) {
        let (t, r) = tensors::plan(
            src,
            gguf_name,
            opts.outtype_for_changed_layouts,
            &mut warnings,
        );
        out_tensors.push(t);
        reports.push(r);
    }
    let file_type = output_ftype(hp.ftype, &reports, &sources, &mut warnings);
    let md = legacy_metadata(&file, opts, file_type, &params, vocab_kv);
    // The hyperparameters come from the file's header (and `--gqa`): refused when its
    // tensors contradict them, as llama.cpp's loader would refuse the GGUF file.
    if !opts.allow_unloadable {
        crate::loadable::check_loadable(path, &md, &out_tensors)?;
    }
    Ok(LegacyConversion {
        model: Model {
            metadata: md,
            tensors: out_tensors,
        },
        warnings,
        kind,
        hparams: hp,
        parts: part_paths,
        tensors: reports,
    })
}

/// What the file gives the later phases: its path and kind, its hyperparameters, the
/// feed-forward length, the assembled tensors and the vocabulary.
struct FileFacts<'a> {
    path: &'a Path,
    kind: LegacyKind,
    hp: &'a Hparams,
    n_ff: u32,
    sources: &'a [SourceTensor],
    vocab: &'a [container::VocabItem],
}

/// A type for changed-layout tensors must be one the converter can produce.
fn check_changed_layout_type(opts: &LegacyOptions) -> Result<(), ConvertError> {
    if let Some(t) = opts.outtype_for_changed_layouts {
        if !tensors::can_produce(t) {
            return Err(ConvertError::Unsupported(format!(
                "cannot write changed-layout tensors as {t} (no quantizer, or it needs an importance matrix)"
            )));
        }
    }
    Ok(())
}

/// The feed-forward length: the second dimension of `layers.0.feed_forward.w1.weight`.
fn feed_forward_length(path: &Path, sources: &[SourceTensor]) -> Result<u32, ConvertError> {
    const W1: &str = "layers.0.feed_forward.w1.weight";
    let w1 = sources.iter().find(|s| s.name == W1).ok_or_else(|| {
        ConvertError::Legacy(Box::new(LegacyError {
            path: path.to_path_buf(),
            offset: None,
            tensor: None,
            kind: LegacyErrorKind::MissingTensor(W1),
        }))
    })?;
    match w1.ne.get(1).map(|&v| u32::try_from(v)) {
        Some(Ok(v)) => Ok(v),
        _ => Err(w1.error(LegacyErrorKind::BadShape {
            dims: w1.ne.clone(),
            problem: "layers.0.feed_forward.w1 must be [n_embd, n_ff]".into(),
        })),
    }
}

/// The model's hyperparameters and vocabulary keys: from the metadata directory when one
/// is given (the options it overrides are reported), else from the file and the options.
fn params_and_vocab(
    file: &FileFacts,
    opts: &LegacyOptions,
    warnings: &mut Vec<String>,
) -> Result<(metadata::ModelParams, Vec<(String, Value)>), ConvertError> {
    let hp = file.hp;
    if let Some(dir) = &opts.vocab_dir {
        for (set, name) in [
            (opts.gqa.is_some(), "gqa"),
            (opts.eps.is_some(), "eps"),
            (opts.context_length.is_some(), "context_length"),
        ] {
            if set {
                warnings.push(format!(
                    "{name} is ignored: the metadata directory gives it"
                ));
            }
        }
        return metadata::from_dir(dir, hp, file.n_ff);
    }
    let wk = file
        .sources
        .iter()
        .find(|s| s.name == "layers.0.attention.wk.weight");
    let n_head_kv = head_count_kv(file.path, hp, opts.gqa, wk, warnings)?;
    let params = metadata::ModelParams {
        n_ctx: opts.context_length.unwrap_or(DEFAULT_CONTEXT_LENGTH),
        n_embd: hp.n_embd,
        n_layer: hp.n_layer,
        n_ff: file.n_ff,
        n_head: hp.n_head,
        n_head_kv,
        eps: opts.eps.unwrap_or(DEFAULT_EPS as f32),
    };
    if file.kind.format == LegacyFormat::Ggml {
        warnings.push(
            "unversioned GGML files store no vocabulary scores (all 0): use vocab_dir for a usable tokenizer"
                .into(),
        );
    }
    Ok((params, metadata::file_vocab(file.vocab)))
}

/// The output's metadata: architecture, name, description, file type, the hyperparameter
/// keys, then the vocabulary.
fn legacy_metadata(
    file: &FileFacts,
    opts: &LegacyOptions,
    file_type: u32,
    params: &metadata::ModelParams,
    vocab_kv: Vec<(String, Value)>,
) -> Metadata {
    let kind = file.kind;
    let ftype_label = layout::ftype_name(kind, file.hp.ftype).expect("checked by the parser");
    let mut md = Metadata::new();
    md.set(keys::general::ARCHITECTURE, metadata::ARCH);
    let name = opts.name.clone().or_else(|| {
        file.path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
    });
    if let Some(name) = name {
        md.set(keys::general::NAME, name);
    }
    md.set(
        keys::general::DESCRIPTION,
        opts.description
            .clone()
            .unwrap_or_else(|| format!("converted from legacy {kind} {ftype_label} format")),
    );
    md.set(keys::general::FILE_TYPE, Value::U32(file_type));
    for (k, v) in params.keys() {
        md.set(k, v);
    }
    if opts.vocab_dir.is_some() {
        // The converter writes these two before an override vocabulary; the tokenizer
        // converter's values (if it gives them) replace them in place.
        md.set(keys::tokenizer::MODEL, "llama");
        md.set(keys::tokenizer::PRE, "default");
    }
    for (k, v) in vocab_kv {
        md.set(k, v);
    }
    md
}

/// GGUF names for every tensor; unknown names abort, as in the converter.
fn map_names(sources: &[SourceTensor], n_layer: u32) -> Result<Vec<String>, ConvertError> {
    let mut seen = HashSet::new();
    sources
        .iter()
        .map(|s| {
            let n = names::gguf_name(&s.name, n_layer)
                .ok_or_else(|| s.error(LegacyErrorKind::UnknownTensor { n_layer }))?;
            if !seen.insert(n.clone()) {
                return Err(s.error(LegacyErrorKind::DuplicateTensor));
            }
            Ok(n)
        })
        .collect()
}

/// `llama.attention.head_count_kv` from `--gqa`, or from the shape of `wk` without it.
fn head_count_kv(
    path: &Path,
    hp: &Hparams,
    gqa: Option<u32>,
    wk: Option<&SourceTensor>,
    warnings: &mut Vec<String>,
) -> Result<u32, ConvertError> {
    let from_shape = wk.and_then(|wk| metadata::n_head_kv_from_shape(hp, wk));
    match gqa {
        Some(g) => {
            let kv = metadata::n_head_kv_from_gqa(hp.n_head, g).ok_or_else(|| {
                ConvertError::Legacy(Box::new(LegacyError {
                    path: path.to_path_buf(),
                    offset: None,
                    tensor: None,
                    kind: LegacyErrorKind::Gqa {
                        n_head: hp.n_head,
                        gqa: g,
                    },
                }))
            })?;
            if let Some(s) = from_shape.filter(|&s| s != kv) {
                warnings.push(format!(
                    "gqa {g} gives n_head_kv {kv}, but layers.0.attention.wk implies {s}"
                ));
            }
            Ok(kv)
        }
        None => match from_shape {
            Some(kv) => {
                if kv != hp.n_head {
                    warnings.push(format!(
                        "n_head_kv = {kv} taken from the shape of layers.0.attention.wk (as gqa {})",
                        hp.n_head / kv
                    ));
                }
                Ok(kv)
            }
            None => Ok(hp.n_head),
        },
    }
}

/// Warnings for tensors llama.cpp would refuse: missing ones, and shapes that contradict
/// the hyperparameters written.
fn check_shapes(
    sources: &[SourceTensor],
    hp: &Hparams,
    p: &metadata::ModelParams,
    warnings: &mut Vec<String>,
) {
    let embd = u64::from(p.n_embd);
    let kv = embd / u64::from(p.n_head) * u64::from(p.n_head_kv);
    let ff = u64::from(p.n_ff);
    let vocab = u64::from(hp.n_vocab);
    let mut expected: Vec<(String, Vec<u64>)> = vec![
        ("tok_embeddings.weight".into(), vec![embd, vocab]),
        ("norm.weight".into(), vec![embd]),
        ("output.weight".into(), vec![embd, vocab]),
    ];
    // Each block has 9 tensors: looking at more blocks than the file has tensors would only
    // list missing ones (and n_layer comes from the file).
    let n_layer = p.n_layer.min(hp.n_layer);
    let blocks = n_layer.min(u32::try_from(sources.len()).unwrap_or(u32::MAX));
    if blocks < n_layer {
        warnings.push(format!(
            "n_layer is {n_layer} but the file has only {} tensors (llama.cpp will not load the result)",
            sources.len()
        ));
    }
    for i in 0..blocks {
        let l = |s: &str| format!("layers.{i}.{s}.weight");
        expected.extend([
            (l("attention.wq"), vec![embd, embd]),
            (l("attention.wk"), vec![embd, kv]),
            (l("attention.wv"), vec![embd, kv]),
            (l("attention.wo"), vec![embd, embd]),
            (l("attention_norm"), vec![embd]),
            (l("feed_forward.w1"), vec![embd, ff]),
            (l("feed_forward.w2"), vec![ff, embd]),
            (l("feed_forward.w3"), vec![embd, ff]),
            (l("ffn_norm"), vec![embd]),
        ]);
    }
    let by_name: HashMap<&str, &SourceTensor> =
        sources.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut missing = Vec::new();
    for (name, dims) in &expected {
        match by_name.get(name.as_str()) {
            None => missing.push(name.as_str()),
            Some(s) if &s.ne != dims => warnings.push(format!(
                "tensor '{name}' has dims {:?}, llama.cpp expects {dims:?} from the hyperparameters",
                s.ne
            )),
            Some(_) => {}
        }
    }
    if !missing.is_empty() {
        warnings.push(format!(
            "{} llama tensor(s) missing (llama.cpp will not load the result): {}{}",
            missing.len(),
            missing[..missing.len().min(5)].join(", "),
            if missing.len() > 5 { ", …" } else { "" }
        ));
    }
}

/// `general.file_type`: the legacy value, unless the tensors with changed layouts all
/// became one type other than the one the legacy value names (Q4_2/Q4_3 files, whose file
/// types no longer exist, or a caller's outtype): then that type's pure file type.
fn output_ftype(
    ftype: u32,
    reports: &[TensorReport],
    sources: &[SourceTensor],
    warnings: &mut Vec<String>,
) -> u32 {
    if let Some(main) = layout::ftype_main_type(ftype) {
        let odd: Vec<&SourceTensor> = sources
            .iter()
            .filter(|s| s.ne.len() == 2 && s.type_id != main && s.layout.is_changed())
            .collect();
        if let Some(s) = odd.first() {
            warnings.push(format!(
                "the file type ({ftype}) does not match {} 2-D tensor(s) (first: '{}', type id {}); \
                 each tensor was read with the layout of its own type",
                odd.len(),
                s.name,
                s.type_id
            ));
        }
    }
    // The legacy value describes the changed tensors when their type is the one it names.
    let main = layout::ftype_main_type(ftype);
    let changed: Vec<(GgmlType, u32)> = reports
        .iter()
        .zip(sources)
        .filter(|(_, s)| s.layout.is_changed())
        .map(|(r, s)| (r.ty, s.type_id))
        .collect();
    let Some(&(to, _)) = changed.first() else {
        return ftype;
    };
    let uniform = changed
        .iter()
        .all(|&(t, id)| t == to && main.is_none_or(|m| m == id));
    if !uniform || layout::ftype_current_type(ftype) == Some(to) {
        return ftype;
    }
    match layout::ftype_of(to) {
        Some(f) => {
            warnings.push(format!(
                "general.file_type is {f} (all converted tensors are {to}) instead of the legacy {ftype}"
            ));
            f
        }
        None => ftype,
    }
}
