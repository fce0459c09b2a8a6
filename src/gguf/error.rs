//! Errors of the GGUF reader and writer.

use std::path::PathBuf;

use super::value::ValueType;

/// What is wrong with a GGUF file. Every variant names the thing at fault (key, tensor).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The file ends before a field that must be there.
    #[error("file is truncated: {what} needs {needed} bytes, only {available} remain")]
    Truncated {
        /// The field being read.
        what: String,
        /// Bytes it needs.
        needed: u64,
        /// Bytes left in the file.
        available: u64,
    },
    /// The first four bytes are not `GGUF`.
    #[error("not a GGUF file: magic is {0:?}, expected \"GGUF\"")]
    BadMagic(String),
    /// A version we do not read.
    #[error("unsupported GGUF version {0} (supported: 1, 2, 3)")]
    UnsupportedVersion(u32),
    /// A count larger than the rest of the file could hold, or than a hard cap.
    #[error("{what} count {count} is impossible: at most {max} fit in the remaining file")]
    CountTooLarge {
        /// Which count.
        what: String,
        /// The declared count.
        count: u64,
        /// The largest count that could be valid here.
        max: u64,
    },
    /// A string longer than the cap or the remaining bytes.
    #[error("{what} has length {len}, but only {max} bytes can be valid here")]
    StringTooLong {
        /// Which string.
        what: String,
        /// Declared length.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// A value type id outside 0..=12.
    #[error("key '{key}': invalid value type {id}")]
    InvalidValueType {
        /// The key.
        key: String,
        /// The id.
        id: u32,
    },
    /// Arrays nested deeper than we accept.
    #[error("key '{key}': arrays nested more than {max} levels deep")]
    NestingTooDeep {
        /// The key.
        key: String,
        /// The depth limit.
        max: usize,
    },
    /// A BOOL byte other than 0 or 1.
    #[error("key '{key}': invalid BOOL byte {byte:#04x}")]
    InvalidBool {
        /// The key.
        key: String,
        /// The byte.
        byte: u8,
    },
    /// A key that is empty, not UTF-8, or holds NUL.
    #[error("invalid key {0}")]
    InvalidKey(String),
    /// The same key twice.
    #[error("duplicate key '{0}'")]
    DuplicateKey(String),
    /// `general.alignment` of the wrong type or value.
    #[error("general.alignment {0}")]
    BadAlignment(String),
    /// A tensor name that is empty, too long, not UTF-8 or holds NUL.
    #[error("invalid tensor name {0}")]
    InvalidTensorName(String),
    /// The same tensor name twice.
    #[error("duplicate tensor '{0}'")]
    DuplicateTensor(String),
    /// Something wrong with a tensor's shape, type or placement.
    #[error("tensor '{name}': {problem}")]
    Tensor {
        /// The tensor.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// A remote file's header larger than the most read for one.
    #[error("the header is larger than the {limit}-byte limit for a file read by URL")]
    HeaderTooLarge {
        /// The limit.
        limit: u64,
    },
    /// Unexpected value type in an array-of-values context.
    #[error("key '{key}': array element type {found} is not allowed")]
    BadArrayElem {
        /// The key.
        key: String,
        /// The element type found.
        found: ValueType,
    },
}

/// A GGUF error with where it happened.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    /// A malformed file.
    #[error("{}: at byte {offset}: {error}", path_str(.path))]
    Format {
        /// The file, when known.
        path: Option<PathBuf>,
        /// Byte offset of the field at fault.
        offset: u64,
        /// What is wrong.
        error: FormatError,
    },
    /// An I/O failure.
    #[error("{}: {source}", path_str(.path))]
    Io {
        /// The file, when known.
        path: Option<PathBuf>,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A request the writer cannot fulfil (e.g. a tensor whose data has the wrong size).
    #[error("{0}")]
    Invalid(String),
}

fn path_str(p: &Option<PathBuf>) -> String {
    p.as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "<memory>".to_string())
}

impl GgufError {
    /// The format error inside, if this is one.
    pub fn format_error(&self) -> Option<&FormatError> {
        match self {
            GgufError::Format { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Attaches a path to an error that has none.
    pub fn with_path(self, p: &std::path::Path) -> Self {
        match self {
            GgufError::Format {
                path: None,
                offset,
                error,
            } => GgufError::Format {
                path: Some(p.to_path_buf()),
                offset,
                error,
            },
            GgufError::Io { path: None, source } => GgufError::Io {
                path: Some(p.to_path_buf()),
                source,
            },
            e => e,
        }
    }
}
