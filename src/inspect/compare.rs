//! `gguf-inspect verify OUT --against SRC`: how far each output tensor is from its source.

use serde_json::{json, Value as Json};

use crate::gguf::GgufFile;
use crate::ir::Model;
use crate::quantizers::{dequantize_rows, GgmlType};

/// Error statistics of one tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorError {
    /// Tensor name.
    pub name: String,
    /// Output type.
    pub ty: GgmlType,
    /// Root mean squared error.
    pub rmse: f64,
    /// Largest absolute error.
    pub max_abs: f64,
    /// Cosine similarity (1 when both are all-zero).
    pub cosine: f64,
}

/// The comparison of an output file with its source.
#[derive(Debug, Clone, Default)]
pub struct CompareReport {
    /// Per-tensor statistics, in output order.
    pub tensors: Vec<TensorError>,
    /// Structural problems (missing tensors, shape mismatches, undecodable types).
    pub problems: Vec<String>,
}

/// Limits that make `verify --against` fail.
#[derive(Debug, Clone, Copy, Default)]
pub struct Thresholds {
    /// Largest acceptable RMSE of any tensor.
    pub max_rmse: Option<f64>,
    /// Largest acceptable absolute error of any element.
    pub max_abs: Option<f64>,
    /// Smallest acceptable cosine similarity of any tensor.
    pub min_cosine: Option<f64>,
}

impl CompareReport {
    /// Tensors that break a threshold, with the reason.
    pub fn violations(&self, t: &Thresholds) -> Vec<String> {
        let mut v = Vec::new();
        for e in &self.tensors {
            if t.max_rmse.is_some_and(|m| e.rmse > m) {
                v.push(format!(
                    "{}: rmse {:.3e} > {:.3e}",
                    e.name,
                    e.rmse,
                    t.max_rmse.unwrap_or_default()
                ));
            }
            if t.max_abs.is_some_and(|m| e.max_abs > m) {
                v.push(format!(
                    "{}: max abs error {:.3e} > {:.3e}",
                    e.name,
                    e.max_abs,
                    t.max_abs.unwrap_or_default()
                ));
            }
            if t.min_cosine
                .is_some_and(|m| e.cosine < m || e.cosine.is_nan())
            {
                v.push(format!(
                    "{}: cosine {:.6} < {:.6}",
                    e.name,
                    e.cosine,
                    t.min_cosine.unwrap_or_default()
                ));
            }
        }
        v
    }

    /// The `n` tensors with the largest RMSE.
    pub fn worst(&self, n: usize) -> Vec<&TensorError> {
        let mut v: Vec<&TensorError> = self.tensors.iter().collect();
        v.sort_by(|a, b| b.rmse.total_cmp(&a.rmse));
        v.truncate(n);
        v
    }

    /// Machine-readable report.
    pub fn to_json(&self, t: &Thresholds) -> Json {
        let violations = self.violations(t);
        json!({
            "ok": self.problems.is_empty() && violations.is_empty(),
            "problems": self.problems,
            "violations": violations,
            "tensors": self.tensors.iter().map(|e| json!({
                "name": e.name, "type": e.ty.name(), "rmse": e.rmse, "max_abs": e.max_abs, "cosine": e.cosine,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Decodes `bytes` of `ty` into f32 (`None` for types we cannot decode).
pub(crate) fn decode(ty: GgmlType, bytes: &[u8]) -> Option<Vec<f32>> {
    match ty {
        GgmlType::F32 => Some(
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        _ => {
            let t = crate::quantizers::traits(ty);
            t.dequantize?;
            let mut out = vec![0f32; bytes.len() / t.type_size * t.block_size];
            dequantize_rows(ty, bytes, &mut out).ok()?;
            Some(out)
        }
    }
}

fn stats(name: &str, ty: GgmlType, a: &[f32], b: &[f32]) -> TensorError {
    let (mut se, mut max_abs, mut dot, mut na, mut nb) = (0f64, 0f64, 0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (x as f64, y as f64);
        let d = x - y;
        se += d * d;
        max_abs = max_abs.max(d.abs());
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let n = a.len().max(1) as f64;
    let cosine = if na == 0.0 && nb == 0.0 {
        1.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    };
    TensorError {
        name: name.to_string(),
        ty,
        rmse: (se / n).sqrt(),
        max_abs,
        cosine,
    }
}

/// Compares every tensor of `out` with the tensor of the same name in `source`.
pub fn compare_with_source(out: &GgufFile, source: &Model) -> CompareReport {
    let by_name: std::collections::HashMap<&str, &crate::ir::Tensor> = source
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    let mut report = CompareReport::default();
    let out_names: std::collections::HashSet<&str> =
        out.tensors.iter().map(|t| t.name.as_str()).collect();
    for t in &source.tensors {
        if !out_names.contains(t.name.as_str()) {
            report.problems.push(format!(
                "tensor '{}' of the source is missing from the output",
                t.name
            ));
        }
    }
    // One tensor at a time (each decoded once), rows of it in parallel inside the decoders.
    let results: Vec<Result<TensorError, String>> = out
        .tensors
        .iter()
        .map(|o| {
            let s = by_name
                .get(o.name.as_str())
                .ok_or_else(|| format!("tensor '{}' is not in the source", o.name))?;
            if s.dims != o.dims {
                return Err(format!(
                    "tensor '{}': shape {:?} in the output, {:?} in the source",
                    o.name, o.dims, s.dims
                ));
            }
            let src_bytes = s
                .data
                .bytes()
                .map_err(|e| format!("tensor '{}': source: {e}", o.name))?;
            let (a, b) = rayon::join(
                || decode(o.ty, out.tensor_data(o)),
                || decode(s.ty, &src_bytes),
            );
            match (a, b) {
                (Some(a), Some(b)) if a.len() == b.len() => Ok(stats(&o.name, o.ty, &a, &b)),
                (Some(_), Some(_)) => Err(format!("tensor '{}': element counts differ", o.name)),
                _ => Err(format!(
                    "tensor '{}': cannot decode {} or {}",
                    o.name, o.ty, s.ty
                )),
            }
        })
        .collect();
    for r in results {
        match r {
            Ok(e) => report.tensors.push(e),
            Err(p) => report.problems.push(p),
        }
    }
    report
}
