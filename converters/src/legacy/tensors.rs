//! What each legacy tensor becomes: a byte copy, an exact repack, or a dequantization
//! (exact, to f32) followed by quantization to a current type, as lazy IR sources.

use std::sync::Arc;

use ggufkit::ir::{DataError, Derive, Tensor, TensorData};
use ggufkit::quantizers::{quantize_rows, row_size, traits, GgmlType};

use super::layout::Layout;
use super::old_quants::{dequantize, inexact_blocks, repack};
use super::parts::SourceTensor;

/// What the conversion does with one tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorConversion {
    /// The legacy layout is a current type: the bytes are copied unchanged.
    Copied,
    /// An old layout re-encoded in its current type without changing any value (f32
    /// scales that are f16 values; pairwise nibbles reordered).
    Repacked,
    /// An old layout dequantized to f32 exactly as the old runtime did, then quantized to
    /// `to` (lossy unless `to` is F32).
    Dequantized {
        /// The output type.
        to: GgmlType,
    },
}

/// One output tensor and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorReport {
    /// GGUF name.
    pub name: String,
    /// Legacy name.
    pub legacy_name: String,
    /// The type id in the legacy file.
    pub legacy_type_id: u32,
    /// The legacy block layout, described.
    pub legacy_layout: String,
    /// Number of files it was assembled from (1 unless the model is multi-part).
    pub parts: usize,
    /// Output type.
    pub ty: GgmlType,
    /// What was done.
    pub conversion: TensorConversion,
}

/// Plans one tensor. `target` is the caller's type for changed layouts (`None`: exact
/// repack where possible, else the closest current type).
pub fn plan(
    src: &SourceTensor,
    gguf_name: &str,
    target: Option<GgmlType>,
    warnings: &mut Vec<String>,
) -> (Tensor, TensorReport) {
    let input = src.data();
    let ne0 = src.ne[0] as usize;
    let (ty, data, conversion) = match src.layout {
        Layout::Current(t) => (t, input, TensorConversion::Copied),
        layout => {
            let inexact = match target {
                None if layout.repackable() => src
                    .pieces
                    .iter()
                    .map(|(f, o, l)| {
                        f.range(*o, *l)
                            .map_or(usize::MAX, |b| inexact_blocks(layout, &b))
                    })
                    .sum(),
                _ => usize::MAX,
            };
            if inexact == 0 {
                let to = layout.closest();
                let d = OldLayout {
                    input,
                    layout,
                    ne0,
                    action: Action::Repack,
                    name: src.name.clone(),
                };
                (
                    to,
                    TensorData::Derived(Arc::new(d)),
                    TensorConversion::Repacked,
                )
            } else {
                let wanted = target.unwrap_or(layout.closest());
                let to = if ne0.is_multiple_of(wanted.block_size()) {
                    wanted
                } else {
                    warnings.push(format!(
                        "tensor '{}': row length {ne0} is not a multiple of the {wanted} block size; \
                         written as f32 instead",
                        src.name
                    ));
                    GgmlType::F32
                };
                if to != GgmlType::F32 {
                    let why = match (target, layout.repackable()) {
                        (Some(_), _) => "as asked".to_string(),
                        (None, false) => "no current type has its block layout".to_string(),
                        (None, true) => {
                            let total: usize = src.pieces.iter().map(|p| p.2).sum::<usize>()
                                / layout.block_bytes();
                            format!(
                                "{inexact} of {total} blocks have scales that are not f16 values"
                            )
                        }
                    };
                    warnings.push(format!(
                        "tensor '{}': {layout} dequantized and requantized to {to} ({why}); \
                         this is lossy",
                        src.name
                    ));
                }
                let d = OldLayout {
                    input,
                    layout,
                    ne0,
                    action: Action::Through(to),
                    name: src.name.clone(),
                };
                (
                    to,
                    TensorData::Derived(Arc::new(d)),
                    TensorConversion::Dequantized { to },
                )
            }
        }
    };
    let tensor = Tensor {
        name: gguf_name.to_string(),
        dims: src.ne.clone(),
        ty,
        data,
    };
    let report = TensorReport {
        name: gguf_name.to_string(),
        legacy_name: src.name.clone(),
        legacy_type_id: src.type_id,
        legacy_layout: src.layout.to_string(),
        parts: src.pieces.len(),
        ty,
        conversion,
    };
    (tensor, report)
}

/// True when `t` can be the target of a dequantize-and-quantize conversion.
pub fn can_produce(t: GgmlType) -> bool {
    let tr = traits(t);
    t == GgmlType::F32 || (tr.quantize.is_some() && !tr.requires_imatrix)
}

enum Action {
    Repack,
    Through(GgmlType),
}

/// An old block layout turned into a current type.
struct OldLayout {
    input: TensorData,
    layout: Layout,
    ne0: usize,
    action: Action,
    name: String,
}

impl Derive for OldLayout {
    fn describe(&self) -> String {
        match self.action {
            Action::Repack => format!(
                "'{}': {} repacked exactly of {:?}",
                self.name, self.layout, self.input
            ),
            Action::Through(t) => format!(
                "'{}': {} → f32 → {t} of {:?}",
                self.name, self.layout, self.input
            ),
        }
    }

    fn compute(&self) -> Result<Vec<u8>, DataError> {
        let raw = self.input.bytes()?;
        let to = match self.action {
            Action::Repack => {
                return repack(self.layout, &raw).ok_or_else(|| {
                    DataError(format!(
                        "{}: a scale is no longer an f16 value (input changed?)",
                        self.describe()
                    ))
                })
            }
            Action::Through(t) => t,
        };
        let (bs, bb) = (self.layout.block_size(), self.layout.block_bytes());
        let in_row = self.ne0 / bs * bb;
        let out_row = if to == GgmlType::F32 {
            Some(self.ne0 * 4)
        } else {
            row_size(to, self.ne0)
        };
        let out_row = out_row
            .filter(|_| in_row > 0 && raw.len() % in_row == 0)
            .ok_or_else(|| {
                DataError(format!(
                    "{}: {} bytes are not whole rows",
                    self.describe(),
                    raw.len()
                ))
            })?;
        let rows = raw.len() / in_row;
        let mut out = vec![0u8; rows * out_row];
        // Slabs of whole rows, about 1 Mi floats, keep the f32 working set small.
        let slab = ((1 << 20) / self.ne0).max(1);
        let mut floats = vec![0f32; slab.min(rows) * self.ne0];
        let mut r0 = 0;
        while r0 < rows {
            let r1 = (r0 + slab).min(rows);
            let f = &mut floats[..(r1 - r0) * self.ne0];
            dequantize(self.layout, &raw[r0 * in_row..r1 * in_row], f);
            let dst = &mut out[r0 * out_row..r1 * out_row];
            if to == GgmlType::F32 {
                for (c, v) in dst.chunks_exact_mut(4).zip(f.iter()) {
                    c.copy_from_slice(&v.to_le_bytes());
                }
            } else {
                quantize_rows(to, f, dst, self.ne0, None)
                    .map_err(|e| DataError(format!("{}: {e}", self.describe())))?;
            }
            r0 = r1;
        }
        Ok(out)
    }
}
