//! `gguf-inspect compare QUANT SOURCE`: how much a quantized file lost against its source.
//!
//! For every tensor of the quantized file and the tensor of the same name in the source
//! (a GGUF, or anything a reader turns into a [`Model`]), both are decoded with our kernels a
//! slab of rows at a time (never the whole tensor in f32) and compared: the squared error
//! `Σ (q − x)²`, its RMSE, the relative error `√(Σ (q − x)² / Σ x²)`, and with an imatrix the
//! importance-weighted error `Σ w_col · (q − x)²` (the expected squared error of the layer's
//! output on the imatrix's activations) and its relative form. It works on files made by any
//! tool: only the tensors' names, shapes and types are used.

use rayon::prelude::*;
use serde_json::{json, Value as Json};

use crate::ir::{Model, Rows, Tensor, TensorData};
use crate::quantize::Imatrix;
use crate::quantizers::{dequantize_rows, row_size, GgmlType};

/// Elements decoded at a time per tensor (per side).
const SLAB_ELEMENTS: usize = 1 << 20;

/// The error of one tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorQuality {
    /// Tensor name.
    pub name: String,
    /// Its type in the quantized file.
    pub ty: GgmlType,
    /// Its type in the source.
    pub source_ty: GgmlType,
    /// Number of elements.
    pub elements: u64,
    /// `Σ (q − x)²`.
    pub squared_error: f64,
    /// `Σ x²` of the source.
    pub signal: f64,
    /// With an imatrix entry for the tensor: `Σ w · (q − x)²` and `Σ w · x²`.
    pub weighted: Option<(f64, f64)>,
}

impl TensorQuality {
    /// Root mean squared error.
    pub fn rmse(&self) -> f64 {
        (self.squared_error / self.elements.max(1) as f64).sqrt()
    }

    /// `√(Σ (q − x)² / Σ x²)` (0 when both are zero).
    pub fn relative(&self) -> f64 {
        ratio_sqrt(self.squared_error, self.signal)
    }

    /// `√(Σ w (q − x)² / Σ w x²)`, with an imatrix entry.
    pub fn weighted_relative(&self) -> Option<f64> {
        self.weighted.map(|(e, s)| ratio_sqrt(e, s))
    }
}

fn ratio_sqrt(e: f64, s: f64) -> f64 {
    if e == 0.0 {
        0.0
    } else {
        (e / s).sqrt()
    }
}

/// The comparison of a quantized file with its source.
#[derive(Debug, Clone, Default)]
pub struct QualityReport {
    /// Per tensor, in the quantized file's order.
    pub tensors: Vec<TensorQuality>,
    /// Tensors that could not be compared and why.
    pub problems: Vec<String>,
    /// An imatrix was given.
    pub imatrix: bool,
}

impl QualityReport {
    /// `Σ (q − x)²` over all tensors.
    pub fn squared_error(&self) -> f64 {
        self.tensors.iter().map(|t| t.squared_error).sum()
    }

    /// `√(Σ (q − x)² / Σ x²)` over all tensors.
    pub fn relative(&self) -> f64 {
        ratio_sqrt(
            self.squared_error(),
            self.tensors.iter().map(|t| t.signal).sum(),
        )
    }

    /// `Σ w (q − x)²` over the tensors with an imatrix entry (`None` without an imatrix).
    pub fn weighted_error(&self) -> Option<f64> {
        self.imatrix.then(|| {
            self.tensors
                .iter()
                .filter_map(|t| t.weighted)
                .map(|(e, _)| e)
                .sum()
        })
    }

    /// `√(Σ w (q − x)² / Σ w x²)` over the tensors with an imatrix entry.
    pub fn weighted_relative(&self) -> Option<f64> {
        let (e, s) = self
            .tensors
            .iter()
            .filter_map(|t| t.weighted)
            .fold((0.0, 0.0), |(a, b), (e, s)| (a + e, b + s));
        self.imatrix.then(|| ratio_sqrt(e, s))
    }

    /// Machine-readable report.
    pub fn to_json(&self) -> Json {
        json!({
            "ok": self.problems.is_empty(),
            "problems": self.problems,
            "tensors": self.tensors.iter().map(|t| json!({
                "name": t.name, "type": t.ty.name(), "source_type": t.source_ty.name(),
                "elements": t.elements, "squared_error": t.squared_error, "rmse": t.rmse(),
                "relative_error": t.relative(),
                "weighted_error": t.weighted.map(|w| w.0),
                "weighted_relative_error": t.weighted_relative(),
            })).collect::<Vec<_>>(),
            "total": {
                "elements": self.tensors.iter().map(|t| t.elements).sum::<u64>(),
                "squared_error": self.squared_error(),
                "relative_error": self.relative(),
                "weighted_error": self.weighted_error(),
                "weighted_relative_error": self.weighted_relative(),
                "weighted_tensors": self.tensors.iter().filter(|t| t.weighted.is_some()).count(),
            },
        })
    }

    /// The text table and totals.
    pub fn to_text(&self) -> String {
        let w = self
            .tensors
            .iter()
            .map(|t| t.name.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let mut s = format!(
            "{:w$}  {:<8} {:>11} {:>10} {:>11} {:>10}\n",
            "tensor", "type", "rmse", "rel err", "weighted", "w rel err"
        );
        let opt =
            |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |x| format!("{x:.prec$e}"));
        for t in &self.tensors {
            s += &format!(
                "{:w$}  {:<8} {:>11.4e} {:>10.4e} {:>11} {:>10}\n",
                t.name,
                t.ty.name(),
                t.rmse(),
                t.relative(),
                opt(t.weighted.map(|x| x.0), 4),
                opt(t.weighted_relative(), 3),
            );
        }
        s += &format!(
            "total: {} tensors, squared error {:.6e}, relative error {:.6e}",
            self.tensors.len(),
            self.squared_error(),
            self.relative()
        );
        if let (Some(e), Some(r)) = (self.weighted_error(), self.weighted_relative()) {
            s += &format!(
                "; weighted error {e:.6e}, weighted relative error {r:.6e} ({} tensors with imatrix entries)",
                self.tensors.iter().filter(|t| t.weighted.is_some()).count()
            );
        }
        s.push('\n');
        for p in &self.problems {
            s += &format!("problem: {p}\n");
        }
        s
    }
}

/// Dimensions without trailing 1s (llama-quantize drops them).
fn trimmed(dims: &[u64]) -> &[u64] {
    let n = crate::quantize::rules::n_dims(dims);
    &dims[..n.min(dims.len())]
}

/// One side's rows: read a range at a time, or from the whole bytes.
enum Side<'a> {
    Rows(&'a TensorData, Rows),
    Whole(std::borrow::Cow<'a, [u8]>),
}

impl Side<'_> {
    fn open(t: &Tensor, n: usize, nrows: usize) -> Result<Side<'_>, String> {
        let rb = row_size(t.ty, n)
            .ok_or_else(|| format!("rows of {n} elements are not whole {} blocks", t.ty.name()))?;
        if let Some(r) = t.data.rows(t.ty, n as u64) {
            if r.count == nrows && r.out_bytes == rb {
                return Ok(Side::Rows(&t.data, r));
            }
        }
        let b = t.data.bytes().map_err(|e| e.to_string())?;
        if b.len() as u64 != rb as u64 * nrows as u64 {
            return Err(format!(
                "{} bytes of data, expected {}",
                b.len(),
                rb * nrows
            ));
        }
        Ok(Side::Whole(b))
    }

    fn decode(
        &self,
        ty: GgmlType,
        n: usize,
        range: std::ops::Range<usize>,
        out: &mut [f32],
    ) -> Result<(), String> {
        let rb = row_size(ty, n).unwrap_or(0);
        let bytes = match self {
            Side::Rows(d, r) => d.bytes_rows(r, range).map_err(|e| e.to_string())?,
            Side::Whole(b) => std::borrow::Cow::Borrowed(&b[range.start * rb..range.end * rb]),
        };
        if ty == GgmlType::F32 {
            for (v, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            Ok(())
        } else {
            dequantize_rows(ty, &bytes, out).map_err(|e| e.to_string())
        }
    }
}

/// Compares one tensor pair, a slab of rows at a time.
fn compare_tensor(
    q: &Tensor,
    s: &Tensor,
    imatrix: Option<&[f32]>,
) -> Result<TensorQuality, String> {
    if trimmed(&q.dims) != trimmed(&s.dims) {
        return Err(format!(
            "shape {:?} in the quantized file, {:?} in the source",
            q.dims, s.dims
        ));
    }
    let n = q.dims.first().copied().unwrap_or(1) as usize;
    let elements = q.n_elements();
    let nrows = if n == 0 {
        0
    } else {
        (elements / n as u64) as usize
    };
    let rows_per_matrix = q.dims.get(1).copied().unwrap_or(1).max(1) as usize;
    let ne2 = q.dims.get(2).copied().unwrap_or(1) as usize;
    let im = imatrix.filter(|v| v.len() as u64 == n as u64 * ne2 as u64);
    let mut t = TensorQuality {
        name: q.name.clone(),
        ty: q.ty,
        source_ty: s.ty,
        elements,
        squared_error: 0.0,
        signal: 0.0,
        weighted: im.map(|_| (0.0, 0.0)),
    };
    if nrows == 0 {
        return Ok(t);
    }
    let (qs, ss) = (Side::open(q, n, nrows)?, Side::open(s, n, nrows)?);
    let slab = (SLAB_ELEMENTS / n).max(1);
    let mut a = vec![0f32; slab.min(nrows) * n];
    let mut b = vec![0f32; slab.min(nrows) * n];
    let mut r0 = 0;
    while r0 < nrows {
        let r1 = (r0 + slab).min(nrows);
        let len = (r1 - r0) * n;
        let (ra, rb) = rayon::join(
            || qs.decode(q.ty, n, r0..r1, &mut a[..len]),
            || ss.decode(s.ty, n, r0..r1, &mut b[..len]),
        );
        ra?;
        rb?;
        let per_row: Vec<[f64; 4]> = (r0..r1)
            .into_par_iter()
            .map(|r| {
                let k = r - r0;
                let (y, x) = (&a[k * n..(k + 1) * n], &b[k * n..(k + 1) * n]);
                let w = im.map(|im| {
                    let m = r / rows_per_matrix;
                    &im[m * n..(m + 1) * n]
                });
                let mut acc = [0f64; 4];
                for j in 0..n {
                    let (xv, yv) = (x[j] as f64, y[j] as f64);
                    let d = yv - xv;
                    acc[0] += d * d;
                    acc[1] += xv * xv;
                    if let Some(w) = w {
                        let wj = w[j] as f64;
                        acc[2] += wj * (d * d);
                        acc[3] += wj * (xv * xv);
                    }
                }
                acc
            })
            .collect();
        for acc in per_row {
            t.squared_error += acc[0];
            t.signal += acc[1];
            if let Some(w) = &mut t.weighted {
                w.0 += acc[2];
                w.1 += acc[3];
            }
        }
        r0 = r1;
    }
    if let TensorData::Mapped { .. } = q.data {
        q.data.release();
    }
    s.data.release();
    Ok(t)
}

/// Compares every tensor of `quant` with the tensor of the same name in `source`, weighting
/// by `imatrix` (entries looked up by tensor name) when given.
pub fn quality_report(quant: &Model, source: &Model, imatrix: Option<&Imatrix>) -> QualityReport {
    let by_name: std::collections::HashMap<&str, &Tensor> = source
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    let mut report = QualityReport {
        imatrix: imatrix.is_some(),
        ..Default::default()
    };
    for q in &quant.tensors {
        let Some(s) = by_name.get(q.name.as_str()) else {
            report
                .problems
                .push(format!("tensor '{}' is not in the source", q.name));
            continue;
        };
        let im = imatrix.and_then(|im| im.entries.get(q.name.as_str()).map(|v| v.as_slice()));
        match compare_tensor(q, s, im) {
            Ok(t) => report.tensors.push(t),
            Err(p) => report.problems.push(format!("tensor '{}': {p}", q.name)),
        }
    }
    let names: std::collections::HashSet<&str> =
        quant.tensors.iter().map(|t| t.name.as_str()).collect();
    for s in &source.tensors {
        if !names.contains(s.name.as_str()) {
            report.problems.push(format!(
                "tensor '{}' of the source is not in the quantized file",
                s.name
            ));
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn owned(name: &str, dims: &[u64], ty: GgmlType, bytes: Vec<u8>) -> Tensor {
        Tensor {
            name: name.into(),
            dims: dims.to_vec(),
            ty,
            data: TensorData::Owned(Arc::new(bytes)),
        }
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// A Q8_0 block with scale 1 holds the integers 0..31 exactly; a source of k + 0.25
    /// therefore has an error of exactly 0.25 per element (numbers worked out by hand).
    #[test]
    fn known_q8_0_error() {
        let mut block = vec![0x00, 0x3c]; // f16 1.0
        block.extend((0..32).map(|k| k as u8));
        let rows = 2;
        let quant_bytes: Vec<u8> = (0..rows).flat_map(|_| block.clone()).collect();
        let src: Vec<f32> = (0..rows)
            .flat_map(|_| (0..32).map(|k| k as f32 + 0.25))
            .collect();
        let q = owned("w", &[32, 2], GgmlType::Q8_0, quant_bytes);
        let s = owned("w", &[32, 2], GgmlType::F32, f32s(&src));
        let qm = Model {
            tensors: vec![q],
            ..Default::default()
        };
        let sm = Model {
            tensors: vec![s],
            ..Default::default()
        };
        let mut im = Imatrix::default();
        im.entries
            .insert("w".into(), (0..32).map(|j| j as f32).collect());
        let r = quality_report(&qm, &sm, Some(&im));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        let t = &r.tensors[0];
        assert_eq!(t.squared_error, 64.0 * 0.0625);
        assert_eq!(t.rmse(), 0.25);
        let signal: f64 = 2.0 * (0..32).map(|k| (k as f64 + 0.25).powi(2)).sum::<f64>();
        assert_eq!(t.signal, signal);
        assert!((t.relative() - (4.0 / signal).sqrt()).abs() < 1e-15);
        // Σ_j j · 0.0625 over 32 columns, two rows: 2 · 0.0625 · 496 = 62.
        assert_eq!(t.weighted.unwrap().0, 62.0);
        assert_eq!(r.weighted_error(), Some(62.0));
        let j = r.to_json();
        assert_eq!(j["total"]["squared_error"], 4.0);
        assert_eq!(j["total"]["weighted_tensors"], 1);
        assert!(r.to_text().contains("weighted error 6.200000e1"));
    }

    #[test]
    fn mismatches_are_reported_not_fatal() {
        let q = Model {
            tensors: vec![
                owned("a", &[4, 1], GgmlType::F32, f32s(&[1.0, 2.0, 3.0, 4.0])),
                owned("b", &[4], GgmlType::F32, f32s(&[0.0; 4])),
            ],
            ..Default::default()
        };
        let s = Model {
            tensors: vec![
                owned("a", &[4], GgmlType::F32, f32s(&[1.0, 2.0, 3.0, 5.0])),
                owned("c", &[4], GgmlType::F32, f32s(&[0.0; 4])),
            ],
            ..Default::default()
        };
        let r = quality_report(&q, &s, None);
        assert_eq!(r.tensors.len(), 1);
        assert_eq!(r.tensors[0].squared_error, 1.0);
        assert_eq!(r.weighted_error(), None);
        assert_eq!(r.problems.len(), 2, "{:?}", r.problems);
    }
}
