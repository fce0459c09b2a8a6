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

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ConvertError::Io {
            path: path.into(),
            source,
        }
    }
}
