//! Whole-tensor entry points: row-parallel quantize and dequantize over the registry.

use rayon::prelude::*;

use crate::kernel::Unrepresentable;
use crate::registry::{traits, GgmlType};

/// Why a quantize/dequantize request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuantError {
    /// The row length is not a multiple of the type's block size.
    RowNotBlockAligned {
        /// The type.
        ty: GgmlType,
        /// Elements per row.
        n_per_row: usize,
    },
    /// We have no quantizer for the type.
    NoQuantizer(GgmlType),
    /// We have no dequantizer for the type.
    NoDequantizer(GgmlType),
    /// The type cannot be produced without an importance matrix.
    ImatrixRequired(GgmlType),
    /// The imatrix length differs from the row length.
    ImatrixLength {
        /// Elements per row.
        expected: usize,
        /// Length given.
        got: usize,
    },
    /// A row holds a block the type cannot represent (llama.cpp aborts on it).
    Unrepresentable {
        /// The type.
        ty: GgmlType,
        /// The row (0-based) within the call.
        row: usize,
        /// The block and the reason.
        detail: Unrepresentable,
    },
    /// Source or destination buffers do not have the sizes the shape implies.
    BufferSize {
        /// Bytes or elements expected.
        expected: usize,
        /// Bytes or elements given.
        got: usize,
    },
}

impl std::fmt::Display for QuantError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuantError::RowNotBlockAligned { ty, n_per_row } => write!(
                f,
                "row length {n_per_row} is not a multiple of the {ty} block size {}",
                ty.block_size()
            ),
            QuantError::NoQuantizer(t) => write!(f, "quantizing to {t} is not supported"),
            QuantError::NoDequantizer(t) => write!(f, "dequantizing {t} is not supported"),
            QuantError::ImatrixRequired(t) => {
                write!(f, "quantizing to {t} requires an importance matrix")
            }
            QuantError::ImatrixLength { expected, got } => write!(
                f,
                "importance matrix has {got} entries, the row has {expected}"
            ),
            QuantError::Unrepresentable { ty, row, detail } => write!(
                f,
                "row {row}, {detail}: the values cannot be quantized to {ty} \
                 (llama.cpp aborts on this input)"
            ),
            QuantError::BufferSize { expected, got } => {
                write!(f, "buffer has size {got}, expected {expected}")
            }
        }
    }
}

impl std::error::Error for QuantError {}

/// Bytes of one row of `n_per_row` elements of `ty` (`ggml_row_size`), or `None` when the
/// row is not a whole number of blocks or the size overflows.
pub fn row_size(ty: GgmlType, n_per_row: usize) -> Option<usize> {
    let t = traits(ty);
    if !n_per_row.is_multiple_of(t.block_size) {
        return None;
    }
    (n_per_row / t.block_size).checked_mul(t.type_size)
}

/// Quantizes `src` (`nrows × n_per_row` f32, row-major) into `dst` as `ty`, rows in
/// parallel (`ggml_quantize_chunk`). The result does not depend on the thread count.
pub fn quantize_rows(
    ty: GgmlType,
    src: &[f32],
    dst: &mut [u8],
    n_per_row: usize,
    imatrix: Option<&[f32]>,
) -> Result<(), QuantError> {
    let t = traits(ty);
    let quantize = t.quantize.ok_or(QuantError::NoQuantizer(ty))?;
    let rs = row_size(ty, n_per_row).ok_or(QuantError::RowNotBlockAligned { ty, n_per_row })?;
    if n_per_row == 0 {
        return Ok(());
    }
    if !src.len().is_multiple_of(n_per_row) {
        return Err(QuantError::BufferSize {
            expected: src.len() / n_per_row * n_per_row,
            got: src.len(),
        });
    }
    let nrows = src.len() / n_per_row;
    if dst.len() != nrows * rs {
        return Err(QuantError::BufferSize {
            expected: nrows * rs,
            got: dst.len(),
        });
    }
    if t.requires_imatrix && imatrix.is_none() {
        return Err(QuantError::ImatrixRequired(ty));
    }
    if let Some(im) = imatrix {
        if im.len() != n_per_row {
            return Err(QuantError::ImatrixLength {
                expected: n_per_row,
                got: im.len(),
            });
        }
    }
    let imatrix = if t.uses_imatrix { imatrix } else { None };
    match src
        .par_chunks(n_per_row)
        .zip(dst.par_chunks_mut(rs))
        .with_min_len(1)
        .enumerate()
        .map(|(row, (s, d))| quantize.quantize_row(s, d, imatrix).map_err(|e| (row, e)))
        .find_map_first(Result::err)
    {
        None => Ok(()),
        Some((row, detail)) => Err(QuantError::Unrepresentable { ty, row, detail }),
    }
}

/// Dequantizes `src` (whole blocks of `ty`) into `dst`, in parallel over blocks.
pub fn dequantize_rows(ty: GgmlType, src: &[u8], dst: &mut [f32]) -> Result<(), QuantError> {
    let t = traits(ty);
    let dequantize = t.dequantize.ok_or(QuantError::NoDequantizer(ty))?;
    if !dst.len().is_multiple_of(t.block_size) {
        return Err(QuantError::RowNotBlockAligned {
            ty,
            n_per_row: dst.len(),
        });
    }
    let nblocks = dst.len() / t.block_size;
    if src.len() != nblocks * t.type_size {
        return Err(QuantError::BufferSize {
            expected: nblocks * t.type_size,
            got: src.len(),
        });
    }
    // Chunks of 64 KiB of output keep the parallel overhead negligible.
    let blocks_per_chunk = (16384 / t.block_size).max(1);
    src.par_chunks(blocks_per_chunk * t.type_size)
        .zip(dst.par_chunks_mut(blocks_per_chunk * t.block_size))
        .for_each(|(s, d)| dequantize(s, d));
    Ok(())
}
