//! The type-conversion transform: any type we can dequantize → any type we can quantize.

use std::sync::Arc;

use ggufkit_quantizers::{dequantize_rows, quantize_rows, traits, GgmlType, QuantError};

use super::{DataError, Derive, Encode, F32Values, Rows, Stage, TensorData};

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

impl Convert {
    /// The input's row layout, when its rows can be read one range at a time: stored data
    /// (mapped or in memory), or a transform computed by rows whose output rows are rows of
    /// this conversion's input type (a converter's F32 stage of a BF16 weight, quantized in
    /// the same pass: it is never whole in memory either).
    fn input_rows(&self) -> Option<Rows> {
        match &self.input {
            TensorData::Derived(d) => d.rows().filter(|r| {
                ggufkit_quantizers::row_size(self.from, self.n_per_row) == Some(r.out_bytes)
            }),
            data => data.rows(self.from, self.n_per_row as u64),
        }
    }

    /// Converts the rows in `raw`, the first of which is row `first_row` of the tensor (it
    /// decides which matrix's imatrix applies).
    fn convert(&self, raw: &[u8], first_row: usize) -> Result<Vec<u8>, DataError> {
        let tr_from = traits(self.from);
        let n_per_row = self.n_per_row.max(1);
        let in_row = ggufkit_quantizers::row_size(self.from, n_per_row)
            .filter(|r| *r > 0 && raw.len().is_multiple_of(*r))
            .ok_or_else(|| {
                DataError(format!(
                    "{} bytes is not a whole number of {}-element {} rows",
                    raw.len(),
                    n_per_row,
                    tr_from.name
                ))
            })?;
        let rows = raw.len() / in_row;
        let out_row = ggufkit_quantizers::row_size(self.to, n_per_row).unwrap_or(0);
        let mut out = vec![0u8; rows * out_row];
        // Work in slabs of whole rows (about 4 Mi floats) that never cross a matrix boundary,
        // so the f32 working set stays small whatever the tensor size.
        let slab_rows = ((4 << 20) / n_per_row).clamp(1, self.rows_per_matrix);
        let mut floats = vec![0f32; slab_rows.min(rows.max(1)) * n_per_row];
        let mut r0 = 0;
        while r0 < rows {
            let matrix = (first_row + r0) / self.rows_per_matrix;
            let matrix_end = (matrix + 1) * self.rows_per_matrix - first_row;
            let r1 = (r0 + slab_rows).min(rows).min(matrix_end);
            let src = &raw[r0 * in_row..r1 * in_row];
            let f = &mut floats[..(r1 - r0) * n_per_row];
            if self.from == GgmlType::F32 {
                for (v, c) in f.iter_mut().zip(src.chunks_exact(4)) {
                    *v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                }
            } else {
                dequantize_rows(self.from, src, f).map_err(|e| DataError(e.to_string()))?;
            }
            let dst = &mut out[r0 * out_row..r1 * out_row];
            if self.to == GgmlType::F32 {
                for (c, v) in dst.chunks_exact_mut(4).zip(f.iter()) {
                    c.copy_from_slice(&v.to_le_bytes());
                }
            } else {
                let im = self.imatrix.as_ref().map(|im| {
                    let start = if im.len() >= (matrix + 1) * n_per_row {
                        matrix * n_per_row
                    } else {
                        0
                    };
                    &im[start..start + n_per_row]
                });
                quantize_rows(self.to, f, dst, n_per_row, im).map_err(|e| match e {
                    // Name the row within the tensor, not within this slab.
                    QuantError::Unrepresentable { ty, row, detail } => {
                        let row = row + r0;
                        DataError(QuantError::Unrepresentable { ty, row, detail }.to_string())
                    }
                    e => DataError(e.to_string()),
                })?;
            }
            r0 = r1;
        }
        Ok(out)
    }
}

impl Derive for Convert {
    fn release(&self) {
        self.input.release();
    }

    /// The input's values (for an f32 input that is itself an f32 stage, that stage's
    /// values), quantized as [`Convert::compute`] does.
    fn f32_stage(&self) -> Option<Stage> {
        let own = F32Values::Data {
            data: self.input.clone(),
            ty: self.from,
        };
        let values = match &self.input {
            TensorData::Derived(d) if self.from == GgmlType::F32 => match d.f32_stage() {
                Some(s)
                    if matches!(s.encode, Encode::AsF32)
                        && s.n_per_row == self.n_per_row
                        && s.rows_per_matrix == self.rows_per_matrix =>
                {
                    s.values
                }
                _ => own,
            },
            _ => own,
        };
        Some(Stage {
            values,
            n_per_row: self.n_per_row,
            rows_per_matrix: self.rows_per_matrix,
            encode: Encode::Quantize {
                to: self.to,
                n_per_row: self.n_per_row,
                rows_per_matrix: self.rows_per_matrix,
                imatrix: self.imatrix.clone(),
            },
        })
    }

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
        self.convert(&raw, 0)
    }

    fn rows(&self) -> Option<Rows> {
        let input = self.input_rows()?;
        Some(Rows {
            count: input.count,
            out_bytes: ggufkit_quantizers::row_size(self.to, self.n_per_row)?,
            in_bytes: input.out_bytes.checked_add(input.in_bytes)?,
        })
    }

    fn compute_rows(&self, range: std::ops::Range<usize>) -> Result<Vec<u8>, DataError> {
        let input = self
            .input_rows()
            .ok_or_else(|| DataError(format!("{} cannot be computed by rows", self.describe())))?;
        let first = range.start;
        let raw = self.input.bytes_rows(&input, range)?;
        self.convert(&raw, first)
    }

    fn release_rows(&self, range: std::ops::Range<usize>) {
        if let Some(input) = self.input_rows() {
            self.input.release_rows(&input, range);
        }
    }
}
