//! Integer tensors written as GGML I32 (`tensor.to(torch.int32)`): lookup tables a class
//! writes itself, such as a hash-routed layer's token id → expert table. Each value is cast
//! as torch casts integers (wrapping to 32 bits); a row at a time, straight from the
//! mapped source.

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
}
