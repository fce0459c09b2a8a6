//! The f32 stage of a transform: the values it reads as f32 before encoding them.
//!
//! Most transforms are "some f32 values, then an encoding": llama-quantize's [`Convert`]
//! dequantizes its input and quantizes the rows; a HuggingFace reader evaluates a tensor
//! expression and encodes it as its outtype. When several outputs of one source are written
//! together, the same f32 values are needed by many of them; [`Derive::f32_stage`] lets a
//! transform say which values it reads (a [`StageKey`] that the output engine compares) and
//! how it encodes them ([`Encode`]), so that the values are computed once and encoded for
//! every output. The engine needs no knowledge of the transform's type.
//!
//! [`Convert`]: super::Convert
//! [`Derive::f32_stage`]: super::Derive::f32_stage

use std::path::PathBuf;
use std::sync::Arc;

use ggufkit_quantizers::GgmlType;

use super::{DataError, TensorData};

/// What a transform reads and how it encodes it.
#[derive(Clone)]
pub struct Stage {
    /// The f32 values.
    pub values: F32Values,
    /// Elements per row (ne0).
    pub n_per_row: usize,
    /// Rows per matrix (ne1): values are read in slabs that never cross a matrix.
    pub rows_per_matrix: usize,
    /// How the transform turns the values into its output bytes.
    pub encode: Encode,
}

impl Stage {
    /// The key of the values, row layout included (two stages with equal keys read the very
    /// same f32 values in the same slabs).
    pub fn key(&self) -> (StageKey, usize, usize) {
        (self.values.key(), self.n_per_row, self.rows_per_matrix)
    }
}

/// f32 values a transform starts from.
#[derive(Clone)]
pub enum F32Values {
    /// Tensor data read as elements of `ty` (widened or dequantized to f32).
    Data {
        /// The data.
        data: TensorData,
        /// Its element type.
        ty: GgmlType,
    },
    /// Values a reader computes itself (a HuggingFace tensor expression).
    Computed {
        /// What they are: equal keys mean equal values.
        key: String,
        /// How to compute them.
        source: Arc<dyn ComputeValues>,
    },
}

impl F32Values {
    /// The identity of these values.
    pub fn key(&self) -> StageKey {
        match self {
            F32Values::Data { data, ty } => match data {
                TensorData::Mapped { file, offset, len } => StageKey::Bytes {
                    file: FileKey::of(file),
                    offset: *offset,
                    len: *len,
                    ty: *ty,
                },
                TensorData::Owned(v) => StageKey::Object {
                    addr: Arc::as_ptr(v) as *const u8 as usize,
                    ty: *ty,
                },
                TensorData::Derived(d) => StageKey::Object {
                    addr: Arc::as_ptr(d) as *const u8 as usize,
                    ty: *ty,
                },
            },
            F32Values::Computed { key, .. } => StageKey::Computed(key.clone()),
        }
    }

    /// True when the values are computed whole (a reader's expression, or a transform's
    /// output) rather than read from stored bytes a slab at a time: what reading them costs
    /// in memory.
    pub fn computed_whole(&self) -> bool {
        !matches!(
            self,
            F32Values::Data {
                data: TensorData::Mapped { .. } | TensorData::Owned(_),
                ..
            }
        )
    }

    /// Lets the inputs of the values go (see [`TensorData::release`]).
    pub fn release(&self) {
        match self {
            F32Values::Data { data, .. } => data.release(),
            F32Values::Computed { source, .. } => source.release(),
        }
    }
}

/// Which file a mapped range belongs to: its path, or (for bytes in memory) the object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FileKey {
    /// A file on disk (two mappings of one file are the same values).
    Path(PathBuf),
    /// Bytes in memory, by address (the object is kept alive while the key is used).
    Addr(usize),
}

impl FileKey {
    /// The key of a mapped file.
    pub fn of(file: &Arc<crate::mapped::FileBytes>) -> FileKey {
        match file.path() {
            Some(p) => FileKey::Path(p.to_path_buf()),
            None => FileKey::Addr(Arc::as_ptr(file) as usize),
        }
    }
}

/// The identity of some f32 values, compared by the output engine.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StageKey {
    /// A byte range of a file, read as `ty`.
    Bytes {
        /// The file.
        file: FileKey,
        /// Absolute start.
        offset: usize,
        /// Length in bytes.
        len: usize,
        /// Element type.
        ty: GgmlType,
    },
    /// The output of one object (in-memory bytes or a transform), read as `ty`.
    Object {
        /// The object's address (kept alive while the key is used).
        addr: usize,
        /// Element type.
        ty: GgmlType,
    },
    /// Values a reader computes, by the reader's own canonical description.
    Computed(String),
}

/// The element type of values a reader computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elements {
    /// f32.
    F32,
    /// IEEE binary16 bits.
    F16,
    /// bfloat16 bits.
    Bf16,
}

/// A reader's computation of f32 values ([`F32Values::Computed`]).
pub trait ComputeValues: Send + Sync {
    /// The values, as little-endian elements of the returned type.
    fn compute(&self) -> Result<(Elements, Vec<u8>), DataError>;
    /// Lets the inputs' mapped pages go. Default: nothing.
    fn release(&self) {}
}

/// gguf-py's encoder of f32 values (or another reader's): values, type, row length.
pub type EncodeFn = fn(&[f32], GgmlType, usize) -> Result<Vec<u8>, DataError>;

/// How a transform makes its output from f32 values.
#[derive(Clone)]
pub enum Encode {
    /// The f32 values as they are.
    AsF32,
    /// llama-quantize's conversion from f32 ([`super::Convert`] with an f32 input).
    Quantize {
        /// Target type.
        to: GgmlType,
        /// Row length.
        n_per_row: usize,
        /// Rows per matrix (the imatrix switches per matrix).
        rows_per_matrix: usize,
        /// Importance weights.
        imatrix: Option<Arc<Vec<f32>>>,
    },
    /// A reader's own encoder (gguf-py's `quants.quantize` for HuggingFace outtypes).
    Reader {
        /// The encoder's name: two encoders of one name give the same bytes.
        name: &'static str,
        /// Target type.
        to: GgmlType,
        /// Row length.
        n_per_row: usize,
        /// The encoder.
        encode: EncodeFn,
    },
}

impl Encode {
    /// The type of the encoded bytes.
    pub fn out_type(&self) -> GgmlType {
        match self {
            Encode::AsF32 => GgmlType::F32,
            Encode::Quantize { to, .. } | Encode::Reader { to, .. } => *to,
        }
    }

    /// Output bytes of a row of `n_per_row` values.
    pub fn row_bytes(&self, n_per_row: usize) -> Option<usize> {
        match self {
            Encode::AsF32 => n_per_row.checked_mul(4),
            _ => ggufkit_quantizers::row_size(self.out_type(), n_per_row),
        }
    }

    /// True when `self` and `other` give the same bytes from the same f32 values.
    pub fn same_as(&self, other: &Encode) -> bool {
        match (self, other) {
            (Encode::AsF32, Encode::AsF32) => true,
            (
                Encode::Quantize {
                    to: t1,
                    n_per_row: n1,
                    rows_per_matrix: r1,
                    imatrix: i1,
                },
                Encode::Quantize {
                    to: t2,
                    n_per_row: n2,
                    rows_per_matrix: r2,
                    imatrix: i2,
                },
            ) => {
                let same_im = match (i1, i2) {
                    (None, None) => true,
                    (Some(x), Some(y)) => {
                        Arc::ptr_eq(x, y)
                            || (x.len() == y.len()
                                && x.iter()
                                    .zip(y.iter())
                                    .all(|(p, q)| p.to_bits() == q.to_bits()))
                    }
                    _ => false,
                };
                t1 == t2 && n1 == n2 && r1 == r2 && same_im
            }
            (
                Encode::Reader {
                    name: a,
                    to: t1,
                    n_per_row: n1,
                    ..
                },
                Encode::Reader {
                    name: b,
                    to: t2,
                    n_per_row: n2,
                    ..
                },
            ) => a == b && t1 == t2 && n1 == n2,
            _ => false,
        }
    }
}
