//! The model IR: what readers produce and the GGUF writer consumes.
//!
//! A [`Model`] is ordered metadata plus an ordered list of [`Tensor`]s. A tensor knows its
//! GGUF name, dims (GGUF order, ne0 first), element type, and a *lazy* [`TensorData`]:
//!
//! * [`TensorData::Mapped`]: a byte range of a memory-mapped input file that already holds
//!   the tensor in its final type (copying a GGUF, an f16 safetensors tensor to f16);
//! * [`TensorData::Owned`]: small bytes made in memory (generated tensors, tests);
//! * [`TensorData::Derived`]: a [`Derive`] transform of other sources (dequantize,
//!   requantize, bf16→f16, the rotary q/k permutation, stacking experts…).
//!
//! Nothing is computed until the writer asks for a tensor's bytes with
//! [`TensorData::bytes`], one tensor (or a bounded window of tensors, in parallel) at a
//! time, so peak memory is bounded by a few tensors and never by the model. Readers (HF
//! safetensors, legacy GGML, GGUF itself) and transforms (the quantizer, the converter's
//! outtype) all build and rewrite the same IR, and one writer serialises it.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use ggufkit_quantizers::GgmlType;

use crate::gguf::{GgufFile, Metadata, TensorHeader};
use crate::mapped::FileBytes;

mod transform;
pub use transform::{Convert, ConvertError};

/// A transform that computes a tensor's bytes from other sources.
pub trait Derive: Send + Sync {
    /// One line saying what this does (for `--dry-run` plans and errors).
    fn describe(&self) -> String;
    /// Computes the bytes.
    fn compute(&self) -> Result<Vec<u8>, DataError>;
    /// The concrete transform, for callers that recognise some transforms and reorganise
    /// the work (the batch converter shares the f32 stage of a [`Convert`] between several
    /// outputs). `None` unless a transform opts in.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
    /// Tells the inputs that this tensor's bytes will not be needed again, so that mapped
    /// pages can be dropped from memory (see [`TensorData::release`]). Default: nothing.
    fn release(&self) {}
}

/// Why a tensor's bytes could not be produced.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct DataError(pub String);

/// Where a tensor's bytes come from.
#[derive(Clone)]
pub enum TensorData {
    /// A byte range of a mapped file, already in the tensor's final type.
    Mapped {
        /// The file.
        file: Arc<FileBytes>,
        /// Absolute start.
        offset: usize,
        /// Length in bytes.
        len: usize,
    },
    /// Bytes in memory.
    Owned(Arc<Vec<u8>>),
    /// Computed on demand.
    Derived(Arc<dyn Derive>),
}

impl TensorData {
    /// The bytes: borrowed for mapped and owned data, computed for derived data.
    pub fn bytes(&self) -> Result<Cow<'_, [u8]>, DataError> {
        match self {
            TensorData::Mapped { file, offset, len } => {
                let end = offset
                    .checked_add(*len)
                    .filter(|e| *e <= file.len())
                    .ok_or_else(|| DataError(format!("{self:?} lies outside its file")))?;
                Ok(Cow::Borrowed(&file[*offset..end]))
            }
            TensorData::Owned(v) => Ok(Cow::Borrowed(v.as_slice())),
            TensorData::Derived(d) => d.compute().map(Cow::Owned),
        }
    }

    /// Drops the mapped pages behind this tensor from the process (they are re-read from the
    /// file if touched again). The writer calls it once a tensor is written, so that peak
    /// memory stays a window of tensors rather than every input page ever read.
    pub fn release(&self) {
        match self {
            TensorData::Mapped { file, offset, len } => file.release(*offset, *len),
            TensorData::Owned(_) => {}
            TensorData::Derived(d) => d.release(),
        }
    }

    /// A description of the source for plans.
    pub fn describe(&self) -> String {
        format!("{self:?}")
    }
}

impl fmt::Debug for TensorData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorData::Mapped { file, offset, len } => {
                let p = file
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "<memory>".into());
                write!(f, "{p} bytes {offset}..{}", offset + len)
            }
            TensorData::Owned(v) => write!(f, "{} bytes in memory", v.len()),
            TensorData::Derived(d) => f.write_str(&d.describe()),
        }
    }
}

/// One tensor of a model.
#[derive(Clone, Debug)]
pub struct Tensor {
    /// GGUF name.
    pub name: String,
    /// Dimensions in GGUF order (ne0 first).
    pub dims: Vec<u64>,
    /// Element type of `data`.
    pub ty: GgmlType,
    /// The bytes, lazily.
    pub data: TensorData,
}

impl Tensor {
    /// Number of elements.
    pub fn n_elements(&self) -> u64 {
        self.dims.iter().product()
    }

    /// The writer's view.
    pub fn header(&self) -> TensorHeader {
        TensorHeader {
            name: self.name.clone(),
            dims: self.dims.clone(),
            ty: self.ty,
        }
    }
}

/// A model: ordered metadata and ordered tensors.
#[derive(Clone, Debug, Default)]
pub struct Model {
    /// Metadata in output order.
    pub metadata: Metadata,
    /// Tensors in output order.
    pub tensors: Vec<Tensor>,
}

impl Model {
    /// `general.architecture`, if set.
    pub fn architecture(&self) -> Option<&str> {
        self.metadata.get_str("general.architecture").ok()
    }

    /// A model whose tensors point into a parsed GGUF file (no data is copied).
    pub fn from_gguf(file: &GgufFile) -> Model {
        let tensors = file
            .tensors
            .iter()
            .map(|t| Tensor {
                name: t.name.clone(),
                dims: t.dims.clone(),
                ty: t.ty,
                data: TensorData::Mapped {
                    file: file.bytes().clone(),
                    offset: (file.data_offset + t.offset) as usize,
                    len: t.nbytes as usize,
                },
            })
            .collect();
        Model {
            metadata: file.metadata.clone(),
            tensors,
        }
    }

    /// The writer's view of the tensors.
    pub fn headers(&self) -> Vec<TensorHeader> {
        self.tensors.iter().map(Tensor::header).collect()
    }
}
