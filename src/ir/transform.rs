//! The type-conversion transform: any type we can dequantize → any type we can quantize.

use std::sync::Arc;

use ggufkit_quantizers::{dequantize_rows, quantize_rows, traits, GgmlType};

use super::{DataError, Derive, TensorData};

/// Why a conversion cannot be planned.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConvertError {
    /// We cannot read the source type.
    #[error("cannot read {0} data (no dequantizer)")]
    NoDequantizer(GgmlType),
    /// We cannot produce the target type.
    #[error("cannot produce {0} data (no quantizer)")]
    NoQuantizer(GgmlType),
    /// The row length does not fit the target's blocks.
    #[error("row length {n_per_row} is not a multiple of the {to} block size")]
    RowNotBlockAligned {
        /// Target type.
        to: GgmlType,
        /// Row length.
        n_per_row: usize,
    },
    /// The imatrix does not have one entry per column (per matrix).
    #[error("importance matrix has {len} entries, not a multiple of the row length {n_per_row}")]
    ImatrixLength {
        /// Entries given.
        len: usize,
        /// Row length.
        n_per_row: usize,
    },
}

/// Converts tensor data from one GGML type to another through f32, row by row, the way
/// llama-quantize does (`ggml_quantize_chunk` on the dequantized rows). An imatrix, when
/// given, is the per-column importance (n_per_row values, or one block of rows per expert
/// for 3-D tensors: `imatrix.len() == n_per_row * n_matrices`).
pub struct Convert {
    /// The input.
    pub input: TensorData,
    /// Input type.
    pub from: GgmlType,
    /// Output type.
    pub to: GgmlType,
    /// Row length.
    pub n_per_row: usize,
    /// Rows per matrix (ne1); the imatrix switches per matrix.
    pub rows_per_matrix: usize,
    /// Optional importance weights.
    pub imatrix: Option<Arc<Vec<f32>>>,
}

impl Convert {
    /// Plans a conversion, checking that both kernels exist.
    pub fn new(
        input: TensorData,
        from: GgmlType,
        to: GgmlType,
        n_per_row: usize,
        rows_per_matrix: usize,
        imatrix: Option<Arc<Vec<f32>>>,
    ) -> Result<Convert, ConvertError> {
        if from != GgmlType::F32 && traits(from).dequantize.is_none() {
            return Err(ConvertError::NoDequantizer(from));
        }
        if to != from && traits(to).quantize.is_none() {
            return Err(ConvertError::NoQuantizer(to));
        }
        if !n_per_row.is_multiple_of(traits(to).block_size) {
            return Err(ConvertError::RowNotBlockAligned { to, n_per_row });
        }
        if let Some(im) = &imatrix {
            if im.is_empty() || im.len() % n_per_row.max(1) != 0 {
                return Err(ConvertError::ImatrixLength {
                    len: im.len(),
                    n_per_row,
                });
            }
        }
        Ok(Convert {
            input,
            from,
            to,
            n_per_row,
            rows_per_matrix: rows_per_matrix.max(1),
            imatrix,
        })
    }
}

impl Derive for Convert {
    fn describe(&self) -> String {
        format!(
            "{} → {}{} of {:?}",
            self.from,
            self.to,
            if self.imatrix.is_some() {
                " (imatrix)"
            } else {
                ""
            },
            self.input
        )
    }

    fn compute(&self) -> Result<Vec<u8>, DataError> {
        let raw = self.input.bytes()?;
        let tr_from = traits(self.from);
        if raw.len() % tr_from.type_size != 0 {
            return Err(DataError(format!(
                "{} bytes is not a whole number of {} blocks",
                raw.len(),
                self.from
            )));
        }
        let n = raw.len() / tr_from.type_size * tr_from.block_size;
        let mut floats = vec![0f32; n];
        if self.from == GgmlType::F32 {
            for (f, c) in floats.iter_mut().zip(raw.chunks_exact(4)) {
                *f = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        } else {
            dequantize_rows(self.from, &raw, &mut floats).map_err(|e| DataError(e.to_string()))?;
        }
        drop(raw);
        if self.to == GgmlType::F32 {
            return Ok(floats.iter().flat_map(|f| f.to_le_bytes()).collect());
        }
        let rows = n.checked_div(self.n_per_row).unwrap_or(0);
        let row_bytes = ggufkit_quantizers::row_size(self.to, self.n_per_row).unwrap_or(0);
        let mut out = vec![0u8; rows * row_bytes];
        let per_matrix = self.rows_per_matrix;
        let n_matrices = rows.div_ceil(per_matrix).max(1);
        for m in 0..n_matrices {
            let r0 = m * per_matrix;
            let r1 = ((m + 1) * per_matrix).min(rows);
            let im = self.imatrix.as_ref().map(|im| {
                let start = if im.len() >= (m + 1) * self.n_per_row {
                    m * self.n_per_row
                } else {
                    0
                };
                &im[start..start + self.n_per_row]
            });
            quantize_rows(
                self.to,
                &floats[r0 * self.n_per_row..r1 * self.n_per_row],
                &mut out[r0 * row_bytes..r1 * row_bytes],
                self.n_per_row,
                im,
            )
            .map_err(|e| DataError(e.to_string()))?;
        }
        Ok(out)
    }
}
