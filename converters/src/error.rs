//! Errors of the readers. Every variant names the file, and where it helps the tensor or
//! byte offset, at fault.

use std::path::PathBuf;

/// Why a source model could not be read or converted.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A remote model could not be read (`--remote`): the error names the URL and what the
    /// server did.
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
    /// A file is malformed.
    #[error("{path}{}: {problem}", .offset.map(|o| format!(": at byte {o}")).unwrap_or_default())]
    Format {
        /// The file.
        path: PathBuf,
        /// Byte offset, when known.
        offset: Option<u64>,
        /// What is wrong.
        problem: String,
    },
    /// A safetensors file that is malformed: what the safetensors crate (which the reference
    /// converter reads through) refuses, one variant per cause.
    #[error("{path}{}: {problem}", .offset.map(|o| format!(": at byte {o}")).unwrap_or_default())]
    Safetensors {
        /// The file.
        path: PathBuf,
        /// Byte offset of the fault, when known.
        offset: Option<u64>,
        /// What is wrong.
        problem: SafetensorsProblem,
    },
    /// A JSON file that does not parse (as Python's `json` reads it, where the file allows
    /// `NaN` and `Infinity`).
    #[error("{path}: invalid JSON (line {line}, column {column}): {problem}")]
    BadJson {
        /// The file.
        path: PathBuf,
        /// The line of the first error (1-based).
        line: usize,
        /// Its column (1-based).
        column: usize,
        /// What the parser found.
        problem: String,
    },
    /// A file that must be UTF-8 text is not.
    #[error("{path}: at byte {offset}: not UTF-8")]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The offset of the first byte that is not part of a UTF-8 character.
        offset: u64,
    },
    /// A key a JSON file must have is absent (a config.json hparam is
    /// [`ConvertError::MissingHparam`]).
    #[error("{path}: no {key:?}: {why}")]
    MissingKey {
        /// The file.
        path: PathBuf,
        /// The key (dotted for a nested one).
        key: String,
        /// What needs it, or what to do instead.
        why: String,
    },
    /// A JSON value (a file's top level, a section, a key's value) of the wrong kind.
    #[error("{path}: {key}: expected {expected}, found {found}")]
    WrongType {
        /// The file.
        path: PathBuf,
        /// Where the value is (a key, a dotted path, or "the top level").
        key: String,
        /// What the converter takes.
        expected: String,
        /// The value found, as JSON, or its kind.
        found: String,
    },
    /// A value of the right kind outside the range the output (or the reference) takes.
    #[error("{path}: {key}: {value} is out of range: {allowed}")]
    OutOfRange {
        /// The file the value comes from.
        path: PathBuf,
        /// Where the value is (a key, or what is computed from keys).
        key: String,
        /// The value, as written or computed.
        value: String,
        /// The range taken, or what overflows.
        allowed: String,
    },
    /// A sharded model whose index and shards disagree, or a shard that is not there: the
    /// file at fault (the index, or the shard) and the cause.
    #[error("{path}: {problem}")]
    Shards {
        /// The index or the shard.
        path: PathBuf,
        /// What is wrong.
        problem: ShardProblem,
    },
    /// A tokenizer file whose tokens contradict its vocabulary: the file and the cause.
    #[error("{path}: {problem}")]
    Vocabulary {
        /// The tokenizer file (tokenizer.json, tokenizer.model, tekken.json, …).
        path: PathBuf,
        /// What is wrong.
        problem: VocabProblem,
    },
    /// A file larger than the reader takes for its kind (read whole, so bounded).
    #[error("{path}: larger than {limit_mib} MiB{}", .what.map(|w| format!(": {w}")).unwrap_or_default())]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// The largest size taken, in MiB.
        limit_mib: u64,
        /// What a file of that size cannot be, when it says more.
        what: Option<&'static str>,
    },
    /// A file the conversion needs is not in the directory.
    #[error("{path}: {why}")]
    MissingFile {
        /// The file looked for.
        path: PathBuf,
        /// Why it is needed, and what to do instead.
        why: String,
    },
    /// The tokenizers library (the engine transformers runs) refused a tokenizer or failed
    /// on it.
    #[error("{path}: the tokenizers library {action}: {message}")]
    TokenizerLibrary {
        /// The tokenizer file.
        path: PathBuf,
        /// What it was asked to do (`refuses it`, `failed while loading it`, …).
        action: String,
        /// The library's message.
        message: String,
    },
    /// A tensor cannot be converted.
    #[error("tensor '{name}': {problem}")]
    Tensor {
        /// The source (or GGUF) tensor name.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// Something valid that we do not support (an architecture, a dtype, a tokenizer).
    #[error("{0}")]
    Unsupported(String),
    /// The HF architecture (`architectures[0]`) is not one of the supported ones.
    #[error(
        "model architecture {arch:?} is not supported (nearest supported: {}; \
         `gguf-convert --list-architectures` lists all {supported})",
        .nearest.join(", ")
    )]
    UnsupportedArchitecture {
        /// The HF architecture.
        arch: String,
        /// Up to three supported names nearest to it.
        nearest: Vec<&'static str>,
        /// How many HF architectures are supported.
        supported: usize,
    },
    /// llama.cpp's converter converts this HF architecture; ggufkit does not yet.
    #[error(
        "model architecture {arch:?} is converted by llama.cpp's convert_hf_to_gguf.py but \
         not yet by ggufkit (`gguf-convert --list-architectures` shows what each class \
         converts to)"
    )]
    ArchitectureNotYet {
        /// The HF architecture.
        arch: String,
    },
    /// The HF class has no text model to convert (llama.cpp's converter refuses it too).
    #[error("model architecture {arch:?} has no text model: {why}")]
    NoTextModel {
        /// The HF architecture.
        arch: String,
        /// Why, and what to convert instead.
        why: &'static str,
    },
    /// A speculative-decoding draft converted without the model it drafts for.
    #[error(
        "{}: {class} is a speculative-decoding draft: it needs the target model's directory \
         (--target-model-dir) for its tokenizer and hparams",
        .path.display()
    )]
    NeedsTarget {
        /// The draft's config.json.
        path: PathBuf,
        /// The HF architecture.
        class: String,
    },
    /// A supported architecture uses a feature the converter does not support.
    #[error("{arch}: {feature}")]
    UnsupportedFeature {
        /// The HF architecture.
        arch: String,
        /// The feature, and why it is refused.
        feature: String,
    },
    /// A model directory without weights.
    #[error(
        "{}: no model*.safetensors or pytorch_model*.bin files found",
        .dir.display()
    )]
    NoWeights {
        /// The model directory.
        dir: PathBuf,
    },
    /// A vocabulary larger than the reader accepts.
    #[error("vocab_size {size} is larger than {max}")]
    VocabTooLarge {
        /// The vocabulary size asked for.
        size: u64,
        /// The largest accepted.
        max: usize,
    },
    /// A config.json hparam the converter needs is absent: none of its spellings is there.
    #[error("{path}: could not find any of {keys:?} (needed by the {arch} converter)")]
    MissingHparam {
        /// The config file.
        path: PathBuf,
        /// The spellings looked for, in order.
        keys: Vec<String>,
        /// The HF architecture whose converter needs it.
        arch: String,
    },
    /// A config.json hparam has a value of the wrong type or range.
    #[error("{path}: {keys:?}: expected {expected}, found {found}")]
    BadHparam {
        /// The config file.
        path: PathBuf,
        /// The spellings looked for (the value is the first present).
        keys: Vec<String>,
        /// What the converter takes.
        expected: String,
        /// The value found, as JSON.
        found: String,
    },
    /// An hparam that must be a count is not.
    #[error("hparam {key} = {value} is not a count")]
    NotACount {
        /// The hparam.
        key: String,
        /// Its value, as JSON.
        value: String,
    },
    /// Per-expert tensors of a block whose set was never completed, so never stacked.
    #[error("unprocessed experts: {tensors:?}")]
    UnprocessedExperts {
        /// The source tensor names, sorted.
        tensors: Vec<String>,
    },
    /// Anything else, with context.
    #[error("{0}")]
    Other(String),
    /// A legacy GGML / GGMF / GGJT file that cannot be converted (typed: the file, offset,
    /// tensor and problem).
    #[error(transparent)]
    Legacy(#[from] Box<crate::legacy::LegacyError>),
    /// A PyTorch checkpoint that cannot be read (typed: the file and the problem, e.g. a
    /// global outside the unpickler's allow-list).
    #[error(transparent)]
    Torch(#[from] Box<crate::torch::TorchError>),
    /// The model's hyperparameters contradict its tensors: the file would be refused by
    /// llama.cpp's loader when it creates the tensors, so it is not written.
    #[error(
        "{}: the hyperparameters contradict the tensors (llama.cpp could not load the file): {}",
        .config.display(),
        .problems.join("; ")
    )]
    HparamsContradictTensors {
        /// The file the hyperparameters come from (config.json, params.json, a legacy file).
        config: PathBuf,
        /// Each contradiction, naming the key, its value and the tensor.
        problems: Vec<String>,
    },
}

/// Why a safetensors file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SafetensorsProblem {
    /// Shorter than the 8-byte header length.
    #[error("safetensors file is {len} bytes, too short for the 8-byte header length")]
    TooShort {
        /// The file's length.
        len: u64,
    },
    /// The header length is beyond the limit (the safetensors crate's 100 MB).
    #[error("safetensors header length {len} exceeds the {limit}-byte limit")]
    HeaderTooLarge {
        /// The declared header length.
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// The header length runs past the end of the file.
    #[error(
        "truncated safetensors header: it declares {declared} bytes but only {available} follow"
    )]
    HeaderTruncated {
        /// The declared header length.
        declared: u64,
        /// The bytes after the length.
        available: u64,
    },
    /// The header is not UTF-8.
    #[error("safetensors header is not UTF-8: {0}")]
    HeaderNotUtf8(String),
    /// The header is not the JSON object of tensor entries the format defines.
    #[error("invalid safetensors header: {0}")]
    InvalidHeader(String),
    /// A tensor's dtype is not one the reader knows.
    #[error("tensor '{tensor}': unsupported dtype {dtype:?}")]
    UnsupportedDtype {
        /// The tensor.
        tensor: String,
        /// The dtype string.
        dtype: String,
    },
    /// A tensor's data_offsets end before they begin.
    #[error("tensor '{tensor}': data_offsets [{begin}, {end}] are reversed")]
    ReversedOffsets {
        /// The tensor.
        tensor: String,
        /// First offset.
        begin: u64,
        /// Second offset.
        end: u64,
    },
    /// A tensor's data lies past the end of the file.
    #[error(
        "tensor '{tensor}': declared data range [{begin}, {end}) exceeds the file's data area \
         of {data_len} bytes (file truncated?)"
    )]
    OutOfBounds {
        /// The tensor.
        tensor: String,
        /// First offset.
        begin: u64,
        /// Second offset.
        end: u64,
        /// Bytes after the header.
        data_len: u64,
    },
    /// A tensor's shape has more bytes than 64 bits count.
    #[error("tensor '{tensor}': shape {shape:?} overflows")]
    ShapeOverflow {
        /// The tensor.
        tensor: String,
        /// Its shape.
        shape: Vec<u64>,
    },
    /// A tensor's shape and dtype need another size than its data_offsets give.
    #[error("tensor '{tensor}': shape {shape:?} of {dtype} needs {needed} bytes but data_offsets give {given}")]
    SizeMismatch {
        /// The tensor.
        tensor: String,
        /// Its shape.
        shape: Vec<u64>,
        /// Its dtype.
        dtype: &'static str,
        /// Bytes the shape needs.
        needed: u64,
        /// Bytes the offsets give.
        given: u64,
    },
    /// Two tensors' data overlap.
    #[error(
        "tensor '{tensor}': data_offsets [{begin}, {end}] overlaps the data of the tensor \
         before it (which ends at {previous_end})"
    )]
    Overlap {
        /// The later tensor.
        tensor: String,
        /// First offset.
        begin: u64,
        /// Second offset.
        end: u64,
        /// Where the earlier tensor's data ends.
        previous_end: u64,
    },
    /// Bytes between two tensors' data (or before the first) belong to no tensor.
    #[error(
        "tensor '{tensor}': data_offsets [{begin}, {end}] leaves a gap after the data of the \
         tensor before it (which ends at {previous_end})"
    )]
    Gap {
        /// The later tensor.
        tensor: String,
        /// First offset.
        begin: u64,
        /// Second offset.
        end: u64,
        /// Where the earlier tensor's data ends.
        previous_end: u64,
    },
    /// Bytes after the last tensor's data.
    #[error(
        "{extra} bytes after the last tensor's data (the data area is {data_len} bytes, the \
         tensors cover {covered})"
    )]
    TrailingBytes {
        /// Bytes past the last tensor.
        extra: u64,
        /// Bytes after the header.
        data_len: u64,
        /// Bytes the tensors cover.
        covered: u64,
    },
}

/// Why the shards of a model (or the index naming them) were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardProblem {
    /// A `weight_map` value that is not a string.
    #[error("weight_map entry '{tensor}' is not a file name")]
    EntryNotAFileName {
        /// The tensor of the entry.
        tensor: String,
    },
    /// A `weight_map` value that is a path, not a file name of the directory.
    #[error("weight_map entry '{tensor}' names a file outside the model directory: {file:?}")]
    EntryOutsideDirectory {
        /// The tensor of the entry.
        tensor: String,
        /// The file it names.
        file: String,
    },
    /// The `weight_map` names no shard.
    #[error("the weight_map is empty: the index names no shard")]
    EmptyWeightMap,
    /// A shard is missing, or is not a regular file.
    #[error(
        "shard{} {}",
        .index.as_ref().map(|i| format!(" named by {i}")).unwrap_or_default(),
        .found.map_or("is missing".to_string(), |k| format!("is {k}, not a regular file"))
    )]
    NotAFile {
        /// The index that named the shard (its file name), when one did.
        index: Option<String>,
        /// What is there instead (a directory, a FIFO, …); `None` when nothing is.
        found: Option<&'static str>,
    },
    /// A tensor name that an earlier shard holds too.
    #[error("tensor '{tensor}' is also in {earlier}")]
    DuplicateTensor {
        /// The tensor.
        tensor: String,
        /// The earlier shard's file name.
        earlier: String,
    },
    /// Tensors of the shards that the weight map does not name (and, when there are, the
    /// tensors it names that no shard holds).
    #[error(
        "mismatch between weight map and model parts: tensors {extra} are in the shards but not in the weight map{}",
        .missing.as_ref().map(|m| format!("; tensors {m} are missing")).unwrap_or_default()
    )]
    NotInWeightMap {
        /// The unnamed tensors (a shortened list).
        extra: String,
        /// The named tensors no shard holds (a shortened list), if any.
        missing: Option<String>,
    },
    /// Tensors the weight map names that no shard holds.
    #[error("missing or incomplete model files {files:?}: tensors {tensors} not found")]
    MissingTensors {
        /// The shards the weight map names for them.
        files: std::collections::BTreeSet<String>,
        /// The tensors (a shortened list).
        tensors: String,
    },
}

/// Why a vocabulary was refused: its tokens and ids contradict each other.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VocabProblem {
    /// A token's id is not below the vocabulary size.
    #[error("token id {id} is not below vocab_size {vocab_size} (token {token:?}{written})")]
    IdBeyondVocab {
        /// The id.
        id: u64,
        /// The vocabulary size.
        vocab_size: usize,
        /// The token.
        token: String,
        /// The id as the file wrote it, when it differs (`, written as …`), else empty.
        written: String,
    },
    /// A token whose text is an added token's, at an id that is not that added token.
    #[error("token {id} {text:?} has the text of an added token but is not one")]
    AddedTextNotAdded {
        /// The id.
        id: u64,
        /// The text.
        text: String,
    },
    /// A named special token that is not in the vocabulary.
    #[error("special token {token:?} is not in the vocabulary")]
    SpecialNotInVocab {
        /// The token.
        token: String,
    },
    /// An id below the vocabulary size that no token has.
    #[error("the vocabulary has no token {id}")]
    NoTokenWithId {
        /// The id.
        id: u64,
    },
    /// An added token whose id lies outside the vocabulary.
    #[error("added token {token:?}: id {id} is outside the vocabulary of {size}")]
    AddedTokenOutside {
        /// The token.
        token: String,
        /// Its id, as written (any integer the file holds).
        id: String,
        /// The vocabulary size.
        size: usize,
    },
    /// A special token the vocabulary path needs is not among the added tokens.
    #[error("the vocabulary needs the added token {token:?} (a special token)")]
    NeedsAddedToken {
        /// The token.
        token: String,
    },
    /// A special token the file has no id for, so its id cannot be written.
    #[error("the tokenizer has no {kind} token (id {id}): its id cannot be written")]
    NoSpecialToken {
        /// Which special token (bos, eos, …).
        kind: &'static str,
        /// The id the file gives.
        id: i64,
    },
}

impl ConvertError {
    /// A format error in `path`.
    pub fn format(
        path: impl Into<PathBuf>,
        offset: Option<u64>,
        problem: impl Into<String>,
    ) -> Self {
        ConvertError::Format {
            path: path.into(),
            offset,
            problem: problem.into(),
        }
    }

    /// A JSON parse error in `path`.
    pub fn bad_json(path: impl Into<PathBuf>, e: &serde_json::Error) -> Self {
        ConvertError::BadJson {
            path: path.into(),
            line: e.line(),
            column: e.column(),
            problem: e.to_string(),
        }
    }

    /// A value at `key` of `path` that is not `expected` (`found`: the value or its kind).
    pub fn wrong_type(
        path: impl Into<PathBuf>,
        key: impl Into<String>,
        expected: impl Into<String>,
        found: impl std::fmt::Display,
    ) -> Self {
        ConvertError::WrongType {
            path: path.into(),
            key: key.into(),
            expected: expected.into(),
            found: found.to_string(),
        }
    }

    /// `key` absent from `path`, needed for `why`.
    pub fn missing_key(
        path: impl Into<PathBuf>,
        key: impl Into<String>,
        why: impl Into<String>,
    ) -> Self {
        ConvertError::MissingKey {
            path: path.into(),
            key: key.into(),
            why: why.into(),
        }
    }

    /// A value at `key` of `path` outside the range `allowed`.
    pub fn out_of_range(
        path: impl Into<PathBuf>,
        key: impl Into<String>,
        value: impl std::fmt::Display,
        allowed: impl Into<String>,
    ) -> Self {
        ConvertError::OutOfRange {
            path: path.into(),
            key: key.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ConvertError::Io {
            path: path.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Each typed variant keeps what a test matches on (file, position, key, values) and a
    /// message that names the file first.
    #[test]
    fn typed_variants_carry_their_facts() {
        let e = serde_json::from_str::<serde_json::Value>("{\n  \"a\": ").unwrap_err();
        match ConvertError::bad_json("d/x.json", &e) {
            ConvertError::BadJson {
                ref path,
                line,
                column,
                ref problem,
            } => {
                assert_eq!(path, Path::new("d/x.json"));
                assert_eq!((line, column), (2, 7));
                assert!(problem.contains("EOF"), "{problem}");
            }
            other => panic!("{other}"),
        }
        let e = ConvertError::bad_json("d/x.json", &e).to_string();
        assert!(
            e.starts_with("d/x.json: invalid JSON (line 2, column 7): "),
            "{e}"
        );

        let e = ConvertError::wrong_type("c.json", "sliding_window", "an integer", "\"x\"");
        assert!(matches!(&e, ConvertError::WrongType { key, found, .. }
            if key == "sliding_window" && found == "\"x\""));
        assert_eq!(
            e.to_string(),
            "c.json: sliding_window: expected an integer, found \"x\""
        );

        let e = ConvertError::out_of_range("c.json", "llama.vocab_size", 1u64 << 40, "a UINT32");
        assert!(matches!(&e, ConvertError::OutOfRange { value, .. } if value == "1099511627776"));
        assert_eq!(
            e.to_string(),
            "c.json: llama.vocab_size: 1099511627776 is out of range: a UINT32"
        );

        let e = ConvertError::missing_key("i.json", "weight_map", "the index names no shard");
        assert!(matches!(&e, ConvertError::MissingKey { key, .. } if key == "weight_map"));
        assert_eq!(
            e.to_string(),
            "i.json: no \"weight_map\": the index names no shard"
        );

        let e = ConvertError::NotUtf8 {
            path: "t.json".into(),
            offset: 3,
        };
        assert_eq!(e.to_string(), "t.json: at byte 3: not UTF-8");
    }
}
