//! The model IR: what readers produce and the GGUF writer consumes.
//!
//! A [`Model`] is ordered metadata plus an ordered list of [`Tensor`]s. A tensor knows its
//! GGUF name, dims (GGUF order, ne0 first), element type, and a *lazy* [`TensorData`]:
//!
//! * [`TensorData::Mapped`]: a byte range of a memory-mapped input file that already holds
//!   the tensor in its final type (copying a GGUF, an f16 safetensors tensor to f16);
//! * [`TensorData::Owned`]: small bytes made in memory (generated tensors, tests);
//! * [`TensorData::Derived`]: a [`Derive`] transform of other sources (dequantize,
//!   requantize, bf16→f16, the rotary q/k permutation, stacking experts…), among them
//!   [`Packed`]: already-quantized source blocks moved into GGML's layout (MXFP4, NVFP4),
//!   written without dequantizing.
//!
//! Nothing is computed until the writer asks for a tensor's bytes with
//! [`TensorData::bytes`], one tensor (or a bounded window of tensors, in parallel) at a
//! time, so peak memory is bounded by a few tensors and never by the model. Readers (HF
//! safetensors, legacy GGML, GGUF itself) and transforms (the quantizer, the converter's
//! outtype) all build and rewrite the same IR, and one writer serialises it.

use crate::gguf::keys;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use ggufkit_quantizers::GgmlType;

use crate::gguf::{GgufFile, Metadata, TensorHeader};
use crate::mapped::FileBytes;

mod packed;
mod stage;
mod transform;
pub use packed::{PackRows, Packed};
pub use stage::{ComputeValues, Elements, Encode, EncodeFn, F32Values, FileKey, Stage, StageKey};
pub use transform::{Convert, ConvertError};

/// A transform that computes a tensor's bytes from other sources.
pub trait Derive: Send + Sync {
    /// One line saying what this does (for `--dry-run` plans and errors).
    fn describe(&self) -> String;
    /// Computes the bytes.
    fn compute(&self) -> Result<Vec<u8>, DataError>;
    /// When the output is an encoding of f32 values (dequantize then quantize, evaluate
    /// then encode): which values, and how they are encoded. The output engine computes
    /// values that several outputs read once and encodes them for each (see [`Stage`]); the
    /// encoding must give exactly the bytes of [`Derive::compute`]. Default: `None` (the
    /// transform is always computed on its own).
    fn f32_stage(&self) -> Option<Stage> {
        None
    }
    /// Tells the inputs that this tensor's bytes will not be needed again, so that mapped
    /// pages can be dropped from memory (see [`TensorData::release`]). Default: nothing.
    fn release(&self) {}
    /// When the output can be computed a range of whole rows at a time (each row depending
    /// only on its own input row), its row layout; the writer then splits a large tensor
    /// into pieces computed in parallel and written in order. Default: `None` (whole tensor).
    fn rows(&self) -> Option<Rows> {
        None
    }
    /// The output bytes of rows `range` (only called when [`Derive::rows`] is `Some`).
    fn compute_rows(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, DataError> {
        let _ = range;
        Err(DataError(format!(
            "{} cannot be computed by rows",
            self.describe()
        )))
    }
    /// Tells the inputs that rows `range` will not be needed again. Default: nothing.
    fn release_rows(&self, range: std::ops::Range<usize>) {
        let _ = range;
    }
}

/// The row layout of a tensor whose output can be produced a range of whole rows at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    /// Number of rows.
    pub count: usize,
    /// Output bytes per row.
    pub out_bytes: usize,
    /// Input bytes read per row besides the output (0 when the output bytes are the input's
    /// own mapped bytes): what a piece in flight holds in memory on top of its output.
    pub in_bytes: usize,
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
            TensorData::Mapped { file, offset, len } => file
                .range(*offset, *len)
                .map_err(|e| DataError(format!("{self:?}: {e}"))),
            TensorData::Owned(v) => Ok(Cow::Borrowed(v.as_slice())),
            TensorData::Derived(d) => d.compute().map(Cow::Owned),
        }
    }

    /// The row layout of this data as a tensor of type `ty` with rows of `ne0` elements, when
    /// it can be produced a range of rows at a time (see [`Derive::rows`]).
    pub fn rows(&self, ty: GgmlType, ne0: u64) -> Option<Rows> {
        let whole = |len: usize| {
            let row = ggufkit_quantizers::row_size(ty, usize::try_from(ne0).ok()?)?;
            // `then`, not `then_some`: the division must not run for a zero row size.
            (row > 0 && len.is_multiple_of(row)).then(|| Rows {
                count: len / row,
                out_bytes: row,
                in_bytes: 0,
            })
        };
        match self {
            TensorData::Mapped { len, .. } => whole(*len),
            TensorData::Owned(v) => whole(v.len()),
            TensorData::Derived(d) => d.rows(),
        }
    }

    /// The bytes of rows `range`, for the layout `rows` that [`TensorData::rows`] gave.
    pub fn bytes_rows(
        &self,
        rows: &Rows,
        range: std::ops::Range<usize>,
    ) -> Result<Cow<'_, [u8]>, DataError> {
        let span = |len: usize| {
            let start = range.start.checked_mul(rows.out_bytes)?;
            let end = range.end.checked_mul(rows.out_bytes)?;
            (start <= end && end <= len).then_some(start..end)
        };
        let outside = || DataError(format!("rows {range:?} lie outside {self:?}"));
        match self {
            // Only the rows asked for: a remote file reads just those bytes.
            TensorData::Mapped { file, offset, len } => {
                let r = span(*len).ok_or_else(outside)?;
                file.range(offset + r.start, r.len())
                    .map_err(|e| DataError(format!("{self:?}: {e}")))
            }
            TensorData::Owned(_) => {
                let all = self.bytes()?;
                let r = span(all.len()).ok_or_else(outside)?;
                Ok(match all {
                    Cow::Borrowed(b) => Cow::Borrowed(&b[r]),
                    Cow::Owned(v) => Cow::Owned(v[r].to_vec()),
                })
            }
            TensorData::Derived(d) => d.compute_rows(range).map(Cow::Owned),
        }
    }

    /// [`TensorData::bytes_rows`], copied out of a mapped file by a positioned read
    /// ([`crate::mapped::FileBytes::read_copy`]) rather than through its mapping: for a few
    /// scattered rows, which would otherwise map the pages around each.
    pub fn read_rows_copy(
        &self,
        rows: &Rows,
        range: std::ops::Range<usize>,
    ) -> Result<Cow<'_, [u8]>, DataError> {
        match self {
            TensorData::Mapped { file, offset, len } => {
                let start = range.start.checked_mul(rows.out_bytes);
                let end = range.end.checked_mul(rows.out_bytes);
                match (start, end) {
                    (Some(s), Some(e)) if s <= e && e <= *len => file
                        .read_copy(offset + s, e - s)
                        .map_err(|e| DataError(format!("{self:?}: {e}"))),
                    _ => Err(DataError(format!("rows {range:?} lie outside {self:?}"))),
                }
            }
            _ => self.bytes_rows(rows, range),
        }
    }

    /// Drops the mapped pages behind rows `range` (see [`TensorData::release`]).
    pub fn release_rows(&self, rows: &Rows, range: std::ops::Range<usize>) {
        match self {
            TensorData::Mapped { file, offset, len } => {
                let start = range.start.saturating_mul(rows.out_bytes).min(*len);
                let end = range.end.saturating_mul(rows.out_bytes).min(*len);
                file.release(offset + start, end - start);
            }
            TensorData::Owned(_) => {}
            TensorData::Derived(d) => d.release_rows(range),
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

    /// The f32 stage this tensor's bytes are made from ([`Derive::f32_stage`]), when its
    /// transform encodes to this tensor's type; for a transform without one whose output is
    /// f32, that output itself (so outputs holding the same transform share it).
    pub fn f32_stage(&self) -> Option<Stage> {
        let TensorData::Derived(d) = &self.data else {
            return None;
        };
        let n_per_row = self.dims.first().copied().unwrap_or(1).max(1) as usize;
        let rows_per_matrix = self.dims.get(1).copied().unwrap_or(1).max(1) as usize;
        match d.f32_stage() {
            Some(s) if s.encode.out_type() == self.ty => Some(s),
            Some(_) => None,
            None if self.ty == GgmlType::F32 => Some(Stage {
                values: F32Values::Data {
                    data: self.data.clone(),
                    ty: GgmlType::F32,
                },
                n_per_row,
                rows_per_matrix,
                encode: Encode::AsF32,
            }),
            None => None,
        }
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
        self.metadata.get_str(keys::general::ARCHITECTURE).ok()
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
