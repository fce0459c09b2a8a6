//! The GGUF container: values, metadata, a strict reader and a streaming writer.
//!
//! Layout (version 3, little-endian): magic `GGUF`, version u32, tensor count u64, KV count
//! u64, the KV records, the tensor infos (name, n_dims, dims, type, offset), zero padding to
//! the alignment, then the tensor data, each tensor padded to the alignment.

mod error;
#[cfg(test)]
mod key_literals;
pub mod keys;
mod metadata;
mod reader;
mod value;
mod writer;

pub use error::{FormatError, GgufError};
pub use metadata::{describe_type, Metadata, MetadataError};
pub use reader::{
    tensor_nbytes, GgufFile, SizeError, MAX_ALIGNMENT, MAX_ARRAY_DEPTH, MAX_ARRAY_LEN,
    MAX_REMOTE_HEADER, MAX_STRING_LEN,
};
pub use value::{ArrayValue, GgufStr, GgufString, StringArray, Value, ValueType};
pub use writer::{
    layout, layout_in, reorder, swapped_width, write_gguf, DataWriter, Layout, TensorHeader,
};

use ggufkit_quantizers::GgmlType;

/// The alignment used when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u32 = 32;
/// Most dimensions a tensor may have (`GGML_MAX_DIMS`).
pub const MAX_DIMS: usize = 4;
/// Longest tensor name llama.cpp accepts (its names live in a NUL-terminated 64-byte buffer).
pub const MAX_TENSOR_NAME: usize = 63;

/// Byte order of a GGUF file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Little-endian (every file llama.cpp writes).
    Little,
    /// Big-endian (detected from a byte-swapped version field).
    Big,
}

impl ByteOrder {
    /// Appends a number given as its little-endian bytes in this order.
    pub fn put<const N: usize>(self, out: &mut Vec<u8>, le: [u8; N]) {
        match self {
            ByteOrder::Little => out.extend_from_slice(&le),
            ByteOrder::Big => out.extend(le.iter().rev()),
        }
    }
}

/// One tensor info as stored in a file.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    /// Tensor name.
    pub name: String,
    /// Dimensions in GGUF order (ne0 first: the row length).
    pub dims: Vec<u64>,
    /// Element type.
    pub ty: GgmlType,
    /// Offset relative to the data section.
    pub offset: u64,
    /// Data size in bytes (without padding).
    pub nbytes: u64,
    /// Absolute file offset of this tensor info (for error messages).
    pub info_offset: u64,
}

impl TensorInfo {
    /// Number of elements.
    pub fn n_elements(&self) -> u64 {
        self.dims.iter().product()
    }
}

/// Rounds `n` up to a multiple of `align` (a power of two), `None` on overflow.
pub fn align_up(n: u64, align: u64) -> Option<u64> {
    debug_assert!(align.is_power_of_two());
    n.checked_add(align - 1).map(|v| v & !(align - 1))
}
