//! What can be wrong with a legacy file, and where.
//!
//! Every problem is a [`LegacyErrorKind`] (so tests and callers can match on it) wrapped in
//! a [`LegacyError`] that names the file, the absolute byte offset of the field at fault
//! when there is one, and the tensor when the problem belongs to one.

use std::fmt;
use std::path::PathBuf;

use super::container::LegacyKind;

/// A legacy file (or one part of a multi-part model) that cannot be converted.
#[derive(Debug, Clone, PartialEq)]
pub struct LegacyError {
    /// The file at fault (for multi-part models, the part).
    pub path: PathBuf,
    /// Absolute byte offset of the field at fault, when the problem has one.
    pub offset: Option<u64>,
    /// The legacy name of the tensor at fault, when the problem belongs to one.
    pub tensor: Option<String>,
    /// What is wrong.
    pub kind: LegacyErrorKind,
}

impl fmt::Display for LegacyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(o) = self.offset {
            write!(f, ": at byte {o}")?;
        }
        if let Some(t) = &self.tensor {
            write!(f, ": tensor '{t}'")?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for LegacyError {}

/// Longest vocabulary item the converter accepts (`assert itemlen < 4096` in
/// `convert_llama_ggml_to_gguf.py`).
pub const MAX_TOKEN_LEN: u32 = 4096;
/// Longest tensor name the converter accepts (`assert name_len < 4096`).
pub const MAX_NAME_LEN: u32 = 4096;

/// The problems a legacy reader detects.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LegacyErrorKind {
    /// The file ends inside a field.
    #[error("file ends inside {what}: {need} bytes needed, {available} left")]
    Truncated {
        /// The field being read.
        what: String,
        /// Bytes it needs.
        need: u64,
        /// Bytes left in the file.
        available: u64,
    },
    /// A file read on demand (by URL): a legacy file is read mapped, whole.
    #[error("{0}")]
    NotLocal(String),
    /// The first four bytes are no legacy magic.
    #[error("unknown magic {0:02x?}: not a GGML, GGMF or GGJT file")]
    BadMagic([u8; 4]),
    /// The file is GGUF already.
    #[error("the file is already in GGUF format")]
    AlreadyGguf,
    /// A GGLA LoRA adapter (no vocabulary, no hyperparameters of a model).
    #[error("GGLA LoRA adapters are not models and are not supported")]
    LoraAdapter,
    /// A GGMF or GGJT version that never existed.
    #[error("{kind} is not a known version (GGMF: 1, GGJT: 1 to 3)")]
    UnsupportedVersion {
        /// Magic and the version read.
        kind: LegacyKind,
    },
    /// The whole-file type (`ftype`) is not one of llama.cpp's, or not one this version had.
    #[error("file type {ftype} does not exist in {kind} files")]
    UnknownFtype {
        /// The value read.
        ftype: u32,
        /// The container.
        kind: LegacyKind,
    },
    /// A hyperparameter that makes the model impossible.
    #[error("hyperparameter {name} = {value}: {problem}")]
    BadHparam {
        /// Field name (`n_head`, …).
        name: &'static str,
        /// Its value.
        value: u32,
        /// Why it is impossible.
        problem: &'static str,
    },
    /// `n_vocab` needs more bytes than the file has left (checked before reading any item).
    #[error("n_vocab {n_vocab} needs at least {need} bytes, only {available} left")]
    VocabTooLarge {
        /// The count read.
        n_vocab: u32,
        /// Smallest number of bytes that many items take.
        need: u64,
        /// Bytes left.
        available: u64,
    },
    /// Fewer than the three special tokens (`<unk>`, `<s>`, `</s>`).
    #[error("vocabulary has {0} items; at least 3 are required")]
    TooFewTokens(u32),
    /// A vocabulary item longer than the converter's limit.
    #[error("vocabulary item {index} has length {len} (limit {MAX_TOKEN_LEN})")]
    TokenTooLong {
        /// Token id.
        index: u32,
        /// Length read.
        len: u32,
    },
    /// `n_dims` other than 1 or 2 (llama tensors are vectors and matrices).
    #[error("{0} dimensions; llama tensors have 1 or 2")]
    BadDimCount(u32),
    /// A tensor name longer than the converter's limit.
    #[error("tensor name length {0} (limit {MAX_NAME_LEN})")]
    NameTooLong(u32),
    /// A tensor name that is not UTF-8.
    #[error("tensor name is not UTF-8: {0:02x?}")]
    NameNotUtf8(Vec<u8>),
    /// A dimension that is zero or negative (dims are stored as i32).
    #[error("dimension {index} is {value}; dims are between 1 and 2^31-1")]
    BadDim {
        /// Which dimension (0 = ne0).
        index: usize,
        /// The value read, as the i32 it is stored as.
        value: i64,
    },
    /// Element count × block bytes does not fit in memory (`usize`). Two dims below 2^31
    /// at no more than 4 bytes per element always fit in 64 bits, so on 64-bit hosts a
    /// huge tensor is reported as [`LegacyErrorKind::DataPastEof`] instead.
    #[error("size of a {type_name} tensor of dims {dims:?} overflows")]
    SizeOverflow {
        /// Dims (ne0 first).
        dims: Vec<u64>,
        /// Element type.
        type_name: String,
    },
    /// A type id no ggml ever had.
    #[error("unknown tensor type id {0}")]
    UnknownType(u32),
    /// Q4_2 / Q4_3: removed with the block-layout change of GGJT v2.
    #[error("tensor type {name} (id {id}) was removed before {kind}")]
    RemovedType {
        /// Type id.
        id: u32,
        /// Its old name.
        name: &'static str,
        /// The container.
        kind: LegacyKind,
    },
    /// A type that never occurs in files of this version (k-quants before GGJT v3; the
    /// intermediate Q8_1/Q8_K; types invented after GGUF replaced these formats).
    #[error("tensor type {name} (id {id}) does not occur in {kind} files")]
    TypeNotInFormat {
        /// Type id.
        id: u32,
        /// Its name.
        name: String,
        /// The container.
        kind: LegacyKind,
    },
    /// A row that is not a whole number of blocks.
    #[error("row length {ne0} is not a multiple of the {layout} block size {block}")]
    RowNotBlockAligned {
        /// Row length.
        ne0: u64,
        /// The block layout.
        layout: String,
        /// Its block size.
        block: usize,
    },
    /// Tensor data that runs past the end of the file.
    #[error("data at {start}..{end} runs past the end of the file ({file_len} bytes)")]
    DataPastEof {
        /// Data start (after padding).
        start: u64,
        /// Data end.
        end: u64,
        /// File size.
        file_len: u64,
    },
    /// Two tensors with the same name.
    #[error("duplicate tensor name")]
    DuplicateTensor,
    /// A name the llama tensor map does not know (or a block index ≥ `n_layer`).
    #[error(
        "no GGUF name for this tensor (not a llama tensor, or its block is >= n_layer {n_layer})"
    )]
    UnknownTensor {
        /// The file's `n_layer`.
        n_layer: u32,
    },
    /// A tensor the conversion needs is absent.
    #[error("required tensor '{0}' is missing")]
    MissingTensor(&'static str),
    /// `--gqa` that no head count between 1 and 255 satisfies.
    #[error("no n_head_kv in 1..=255 gives n_head {n_head} / n_head_kv = gqa {gqa}")]
    Gqa {
        /// `n_head`.
        n_head: u32,
        /// The factor asked for.
        gqa: u32,
    },
    /// A shape that contradicts the hyperparameters where the conversion depends on it.
    #[error("shape {dims:?} does not fit the model: {problem}")]
    BadShape {
        /// Dims (ne0 first).
        dims: Vec<u64>,
        /// Why.
        problem: String,
    },
    /// A part of a multi-part model that does not exist.
    #[error("part {part} of a {n_parts}-part model is missing")]
    MissingPart {
        /// Part number (1-based suffix).
        part: usize,
        /// How many parts the model has.
        n_parts: usize,
    },
    /// A part whose header, vocabulary or tensor list differs from the first part's.
    #[error("part {part} does not match part 0: {what}")]
    PartMismatch {
        /// Part number.
        part: usize,
        /// What differs.
        what: String,
    },
    /// The model metadata directory (`vocab_dir`) is unusable or contradicts the file.
    #[error("model metadata: {0}")]
    Metadata(String),
}
