//! Integer tensors written as GGML I32 (`tensor.to(torch.int32)`): lookup tables a class
//! writes itself, such as a hash-routed layer's token id → expert table. Each value is cast
//! as torch casts integers (wrapping to 32 bits); a row at a time, straight from the
//! mapped source. Also small integer tables a class reads whole, checks and rewrites before
//! writing them as GGML I64 (a draft model's draft → target token map).

use ggufkit::ir::{DataError, PackRows, Packed, Rows};
use ggufkit::quantizers::GgmlType;

use super::expr::Expr;
use super::safetensors::{StDtype, StTensor};
use crate::ConvertError;

/// The rows of an integer tensor as little-endian i32.
struct I32Rows {
    /// The output's name, for descriptions.
    name: String,
    source: StTensor,
    rows: usize,
    /// Elements per row.
    cols: usize,
}

/// One element of `dtype` (little-endian `bytes`) as torch's `.to(torch.int32)` gives it.
fn to_i32(dtype: StDtype, bytes: &[u8]) -> i32 {
    match dtype {
        StDtype::I64 => i64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])) as i32,
        StDtype::I32 => i32::from_le_bytes(bytes.try_into().unwrap_or([0; 4])),
        StDtype::I16 => i32::from(i16::from_le_bytes(bytes.try_into().unwrap_or([0; 2]))),
        StDtype::I8 => i32::from(bytes[0] as i8),
        StDtype::U8 => i32::from(bytes[0]),
        _ => i32::from(bytes[0] != 0),
    }
}

impl PackRows for I32Rows {
    fn describe(&self) -> String {
        format!(
            "{} from {} ({} → I32)",
            self.name,
            self.source.name,
            self.source.dtype.name()
        )
    }

    fn rows(&self) -> Rows {
        let size = self.source.dtype.size() as usize;
        Rows {
            count: self.rows,
            out_bytes: self.cols * 4,
            in_bytes: self.cols * size,
        }
    }

    fn pack_rows(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, DataError> {
        let size = self.source.dtype.size() as usize;
        let row = self.cols * size;
        let bytes = self
            .source
            .range(range.start * row, range.len() * row)
            .map_err(|e| DataError(format!("{}: {e}", self.describe())))?;
        let mut out = Vec::with_capacity(range.len() * self.cols * 4);
        for x in bytes.chunks_exact(size) {
            out.extend_from_slice(&to_i32(self.source.dtype, x).to_le_bytes());
        }
        Ok(out)
    }

    fn release_rows(&self, range: std::ops::Range<usize>) {
        let row = self.cols * self.source.dtype.size() as usize;
        self.source
            .file
            .release(self.source.offset + range.start * row, range.len() * row);
    }
}

/// `source` cast to I32 as the GGUF tensor `name` (same shape): an integer or boolean
/// tensor; a float one is refused.
pub fn as_i32(name: &str, source: &StTensor) -> Result<Expr, ConvertError> {
    if !matches!(
        source.dtype,
        StDtype::I64 | StDtype::I32 | StDtype::I16 | StDtype::I8 | StDtype::U8 | StDtype::Bool
    ) {
        return Err(ConvertError::Tensor {
            name: source.name.clone(),
            problem: format!(
                "an I32 table must be stored as integers, found {}",
                source.dtype.name()
            ),
        });
    }
    let dim = |v: u64| {
        usize::try_from(v).map_err(|_| ConvertError::Tensor {
            name: source.name.clone(),
            problem: "shape too large".into(),
        })
    };
    let shape = source.shape.clone();
    let (rows, cols) = match shape.split_last() {
        Some((last, outer)) => (
            outer.iter().try_fold(1usize, |a, d| {
                Ok::<_, ConvertError>(a.saturating_mul(dim(*d)?))
            })?,
            dim(*last)?,
        ),
        None => (1, 1),
    };
    let rows_source = I32Rows {
        name: name.to_string(),
        source: source.clone(),
        rows,
        cols,
    };
    Ok(Expr::packed(
        GgmlType::I32,
        shape,
        Packed::new(rows_source),
        vec![source.clone()],
    ))
}

/// An integer table held in memory, written as one row of little-endian i64.
struct I64Table {
    /// The output's name, for descriptions.
    name: String,
    values: std::sync::Arc<Vec<i64>>,
}

impl PackRows for I64Table {
    fn describe(&self) -> String {
        format!("{} ({} I64 values)", self.name, self.values.len())
    }

    fn rows(&self) -> Rows {
        Rows {
            count: 1,
            out_bytes: self.values.len() * 8,
            in_bytes: 0,
        }
    }

    fn pack_rows(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, DataError> {
        let mut out = Vec::with_capacity(range.len() * self.values.len() * 8);
        for _ in range {
            for v in self.values.iter() {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        Ok(out)
    }

    fn release_rows(&self, _: std::ops::Range<usize>) {}
}

/// The values of integer (or boolean) tensor `source` as torch's `.to(torch.int64)` gives
/// them, read whole: for a small table a class checks before writing (the read is the
/// tensor's stored size, which the safetensors header check bounded by the file). A float
/// tensor is refused.
pub fn read_i64(source: &StTensor) -> Result<Vec<i64>, ConvertError> {
    let size = source.dtype.size() as usize;
    let cast: fn(&[u8]) -> i64 = match source.dtype {
        StDtype::I64 => |b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
        StDtype::I32 => |b| i64::from(i32::from_le_bytes(b.try_into().unwrap_or([0; 4]))),
        StDtype::I16 => |b| i64::from(i16::from_le_bytes(b.try_into().unwrap_or([0; 2]))),
        StDtype::I8 => |b| i64::from(b[0] as i8),
        StDtype::U8 => |b| i64::from(b[0]),
        StDtype::Bool => |b| i64::from(b[0] != 0),
        other => {
            return Err(ConvertError::Tensor {
                name: source.name.clone(),
                problem: format!(
                    "an integer table must be stored as integers, found {}",
                    other.name()
                ),
            })
        }
    };
    let bytes = source
        .range(0, source.len)
        .map_err(|e| ConvertError::Tensor {
            name: source.name.clone(),
            problem: e.to_string(),
        })?;
    Ok(bytes.chunks_exact(size).map(cast).collect())
}

/// `values` as the 1-D GGML I64 tensor `name`, made from `inputs` (for `--dry-run`).
pub fn i64_table(name: &str, values: Vec<i64>, inputs: Vec<StTensor>) -> Expr {
    let shape = vec![values.len() as u64];
    Expr::packed(
        GgmlType::I64,
        shape,
        Packed::new(I64Table {
            name: name.to_string(),
            values: std::sync::Arc::new(values),
        }),
        inputs,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_cast_as_torch_casts_them() {
        assert_eq!(to_i32(StDtype::I64, &(-3i64).to_le_bytes()), -3);
        assert_eq!(to_i32(StDtype::I64, &(1i64 << 32 | 7).to_le_bytes()), 7);
        assert_eq!(to_i32(StDtype::I8, &[0xff]), -1);
        assert_eq!(to_i32(StDtype::U8, &[0xff]), 255);
        assert_eq!(to_i32(StDtype::I16, &(-2i16).to_le_bytes()), -2);
        assert_eq!(to_i32(StDtype::Bool, &[2]), 1);
    }

    #[test]
    fn an_i64_table_is_one_row_of_little_endian_values() {
        let t = I64Table {
            name: "d2t".into(),
            values: std::sync::Arc::new(vec![-1, 2]),
        };
        assert_eq!(t.rows().count, 1);
        assert_eq!(t.rows().out_bytes, 16);
        let bytes = t.pack_rows(0..1).unwrap();
        assert_eq!(&bytes[..8], &(-1i64).to_le_bytes());
        assert_eq!(&bytes[8..], &2i64.to_le_bytes());
    }
}
