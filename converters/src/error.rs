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
    /// Anything else, with context.
    #[error("{0}")]
    Other(String),
    /// A legacy GGML / GGMF / GGJT file that cannot be converted (typed: the file, offset,
    /// tensor and problem).
    #[error(transparent)]
    Legacy(#[from] Box<crate::legacy::LegacyError>),
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
