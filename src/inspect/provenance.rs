//! `gguf-inspect provenance FILE --from SOURCE`: is a quantized file what its claimed source
//! gives? The caller plans quantizing the source with the file's recipe
//! ([`crate::quantize::Recipe`]); [`check`] computes each planned tensor in memory, one at a
//! time (never a whole re-quantized file), compares it with the file's and sorts each tensor
//! into one of three verdicts:
//!
//! - **identical**: the same type, shape and bytes;
//! - **equivalent within rounding**: a quantized tensor whose bytes differ the way a build
//!   that fuses multiply-adds makes them differ (llama.cpp's arm64 and clang builds contract
//!   `a*b + c` into one rounding, so their quantizer picks another level or sub-scale where
//!   two choices are within an ulp of each other). Such a change cannot make a block
//!   noticeably worse: see [`WithinRounding`] for the exact test;
//! - **different**, with the size of the difference: bytes and blocks that differ, the largest
//!   and RMS difference of the decoded values, and both versions' RMS error against the source.
//!
//! Metadata keys are compared value by value, and a changed chat template is shown as a
//! unified diff.

use serde_json::{json, Value as Json};

use crate::gguf::{GgufFile, Value};
use crate::inspect::compare::decode;
use crate::inspect::dump::format_value_short;
use crate::inspect::textdiff::unified;
use crate::ir::{Model, Tensor};
use crate::quantizers::{traits, GgmlType};

/// The limits of "equivalent within rounding" for a quantized tensor whose bytes differ from
/// the recomputed ones.
///
/// A fused multiply-add changes a result by at most an ulp, so a quantizer built with them
/// decides differently only where two choices tie within rounding: a level at a midpoint, a
/// sub-scale at a half-step, a scale search whose candidates score the same. Each such change
/// is local (one block) and leaves the block's error against the source about where it was.
/// A tensor is equivalent when all of these hold:
///
/// - it has the recomputed tensor's type and shape, and the type is a block-quantized one
///   (a float tensor is a plain conversion, which no build computes differently);
/// - at most [`WithinRounding::MAX_BLOCK_FRACTION`] of its blocks differ;
/// - in every block that differs, the decoded values' squared error against the source is at
///   most [`WithinRounding::MAX_BLOCK_RATIO`] times the recomputed block's (plus a tiny
///   absolute slack for blocks that are almost exact);
/// - over the whole tensor, its squared error against the source is at most
///   [`WithinRounding::MAX_TENSOR_RATIO`] times the recomputed tensor's.
///
/// A swapped row, an edited weight or a tensor quantized from other values fails these by
/// orders of magnitude. A change as small as a tie-break (one weight moved to the next level
/// where both were about equally close) is, by construction, within rounding.
#[derive(Debug, Clone, Copy)]
pub struct WithinRounding;

impl WithinRounding {
    /// Largest fraction of a tensor's blocks that may differ.
    pub const MAX_BLOCK_FRACTION: f64 = 0.05;
    /// Largest ratio of a differing block's squared error to the recomputed block's.
    pub const MAX_BLOCK_RATIO: f64 = 1.25;
    /// Largest ratio of the tensor's squared error to the recomputed tensor's.
    pub const MAX_TENSOR_RATIO: f64 = 1.01;
}

/// How a differing tensor differs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Difference {
    /// Bytes that differ (plus the difference in length).
    pub bytes_differ: u64,
    /// The recomputed tensor's size in bytes.
    pub bytes: u64,
    /// Blocks that differ (elements, for float types).
    pub blocks_differ: u64,
    /// Blocks in the tensor.
    pub blocks: u64,
    /// Largest absolute difference between the decoded values of the file and the
    /// recomputed tensor (`None` when either cannot be decoded).
    pub max_abs: Option<f64>,
    /// RMS difference between the decoded values.
    pub rms: Option<f64>,
    /// The file's RMS error against the source values.
    pub error_file: Option<f64>,
    /// The recomputed tensor's RMS error against the source values.
    pub error_ours: Option<f64>,
}

/// The verdict on one tensor.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Same type, shape and bytes.
    Identical,
    /// Differs only as a build with fused multiply-adds would ([`WithinRounding`]).
    WithinRounding(Difference),
    /// Differs.
    Different(Difference),
    /// Another type or shape than the recomputed tensor's.
    Layout {
        /// The file's type and shape.
        file: (GgmlType, Vec<u64>),
        /// The recomputed type and shape.
        ours: (GgmlType, Vec<u64>),
    },
    /// Recomputed from the source but absent from the file.
    MissingFromFile,
    /// In the file but not made from the source.
    NotFromSource,
    /// The recomputed tensor could not be made (the reason).
    Failed(String),
}

impl Verdict {
    /// The verdict's name in reports (`identical`, `within-rounding`, `different`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Identical => "identical",
            Verdict::WithinRounding(_) => "within-rounding",
            Verdict::Different(_) => "different",
            Verdict::Layout { .. } => "layout",
            Verdict::MissingFromFile => "missing",
            Verdict::NotFromSource => "extra",
            Verdict::Failed(_) => "failed",
        }
    }
}

/// One tensor's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorVerdict {
    /// Tensor name.
    pub name: String,
    /// What was found.
    pub verdict: Verdict,
}

/// A metadata key that differs.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyDifference {
    /// The key.
    pub key: String,
    /// Its value in the file (`None`: absent).
    pub file: Option<String>,
    /// The value the source gives (`None`: not written from the source).
    pub ours: Option<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, Default)]
pub struct ProvenanceReport {
    /// Every tensor, in the recomputed order, then the file's extra tensors.
    pub tensors: Vec<TensorVerdict>,
    /// Keys that differ, in the file's order, then those missing from it.
    pub keys: Vec<KeyDifference>,
    /// The unified diff of every chat template that differs (source → file).
    pub template_diff: Vec<String>,
    /// Metadata keys compared.
    pub keys_compared: usize,
}

/// The overall outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every tensor and key identical.
    Identical,
    /// Some tensors within rounding, everything else identical.
    WithinRounding,
    /// Something differs.
    Differs,
}

impl ProvenanceReport {
    /// Counts of tensors per verdict: identical, within rounding, other.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for t in &self.tensors {
            match t.verdict {
                Verdict::Identical => c.0 += 1,
                Verdict::WithinRounding(_) => c.1 += 1,
                _ => c.2 += 1,
            }
        }
        c
    }

    /// The overall outcome.
    pub fn outcome(&self) -> Outcome {
        let (_, within, other) = self.counts();
        if other > 0 || !self.keys.is_empty() {
            Outcome::Differs
        } else if within > 0 {
            Outcome::WithinRounding
        } else {
            Outcome::Identical
        }
    }

    /// One line per tensor or key that is not identical, then the template diff.
    pub fn detail_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for t in &self.tensors {
            let line = match &t.verdict {
                Verdict::Identical => continue,
                Verdict::WithinRounding(d) => {
                    format!(
                        "tensor {}: equivalent within rounding ({})",
                        t.name,
                        size(d)
                    )
                }
                Verdict::Different(d) => format!("tensor {}: different ({})", t.name, size(d)),
                Verdict::Layout { file, ours } => format!(
                    "tensor {}: different layout ({} {:?} in the file, {} {:?} from the source)",
                    t.name, file.0, file.1, ours.0, ours.1
                ),
                Verdict::MissingFromFile => {
                    format!(
                        "tensor {}: made from the source but not in the file",
                        t.name
                    )
                }
                Verdict::NotFromSource => format!("tensor {}: not made from the source", t.name),
                Verdict::Failed(why) => format!("tensor {}: cannot recompute: {why}", t.name),
            };
            out.push(line);
        }
        for k in &self.keys {
            out.push(match (&k.file, &k.ours) {
                (Some(f), Some(o)) => format!(
                    "key {}: different ({f} in the file, {o} from the source)",
                    k.key
                ),
                (Some(f), None) => format!("key {}: not written from the source ({f})", k.key),
                (None, Some(o)) => {
                    format!("key {}: missing from the file ({o} from the source)", k.key)
                }
                (None, None) => format!("key {}: different", k.key),
            });
        }
        out.extend(self.template_diff.iter().cloned());
        out
    }

    /// The summary line.
    pub fn summary(&self, file: &str, source: &str) -> String {
        let (same, within, other) = self.counts();
        let verdict = match self.outcome() {
            Outcome::Identical => "identical",
            Outcome::WithinRounding => "equivalent within rounding, not identical",
            Outcome::Differs => "DIFFERS",
        };
        format!(
            "{file}: {verdict} against {source} ({} tensors: {same} identical, {within} within \
             rounding, {other} different; {} keys, {} different)",
            self.tensors.len(),
            self.keys_compared,
            self.keys.len()
        )
    }

    /// The report as JSON.
    pub fn to_json(&self, file: &str, source: &str) -> Json {
        let (same, within, other) = self.counts();
        let tensors: Vec<Json> = self
            .tensors
            .iter()
            .map(|t| {
                let mut j = json!({"name": t.name, "verdict": t.verdict.name()});
                match &t.verdict {
                    Verdict::WithinRounding(d) | Verdict::Different(d) => {
                        j["bytes_differ"] = json!(d.bytes_differ);
                        j["bytes"] = json!(d.bytes);
                        j["blocks_differ"] = json!(d.blocks_differ);
                        j["blocks"] = json!(d.blocks);
                        j["max_abs_difference"] = json!(d.max_abs);
                        j["rms_difference"] = json!(d.rms);
                        j["rms_error_file"] = json!(d.error_file);
                        j["rms_error_source_quantized"] = json!(d.error_ours);
                    }
                    Verdict::Layout { file, ours } => {
                        j["file"] = json!({"type": file.0.to_string(), "dims": file.1});
                        j["from_source"] = json!({"type": ours.0.to_string(), "dims": ours.1});
                    }
                    Verdict::Failed(why) => j["error"] = json!(why),
                    _ => {}
                }
                j
            })
            .collect();
        let keys: Vec<Json> = self
            .keys
            .iter()
            .map(|k| json!({"key": k.key, "file": k.file, "from_source": k.ours}))
            .collect();
        json!({
            "file": file,
            "source": source,
            "outcome": match self.outcome() {
                Outcome::Identical => "identical",
                Outcome::WithinRounding => "within-rounding",
                Outcome::Differs => "differs",
            },
            "counts": {"identical": same, "within_rounding": within, "different": other,
                       "keys_compared": self.keys_compared, "keys_different": self.keys.len()},
            "tensors": tensors,
            "keys": keys,
            "chat_template_diff": self.template_diff,
        })
    }
}

fn size(d: &Difference) -> String {
    let mut s = format!(
        "{} of {} bytes, {} of {} blocks differ",
        d.bytes_differ, d.bytes, d.blocks_differ, d.blocks
    );
    if let (Some(m), Some(r)) = (d.max_abs, d.rms) {
        s.push_str(&format!("; values differ by up to {m:.3e}, rms {r:.3e}"));
    }
    if let (Some(f), Some(o)) = (d.error_file, d.error_ours) {
        s.push_str(&format!(
            "; rms error against the source {f:.3e} (recomputed: {o:.3e})"
        ));
    }
    s
}

/// Compares `file` with `ours` (the source planned and quantized with the file's recipe;
/// tensors are computed lazily, one at a time). `source` gives the values each tensor was
/// quantized from, under the same names, for the error sizes and the rounding test.
pub fn check(file: &GgufFile, ours: &Model, source: &Model) -> ProvenanceReport {
    let mut report = ProvenanceReport::default();
    let file_tensors: std::collections::HashMap<&str, &crate::gguf::TensorInfo> =
        file.tensors.iter().map(|t| (t.name.as_str(), t)).collect();
    let source_tensors: std::collections::HashMap<&str, &Tensor> = source
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    for t in &ours.tensors {
        let verdict = match file_tensors.get(t.name.as_str()) {
            None => Verdict::MissingFromFile,
            Some(h) => tensor_verdict(
                t,
                h.ty,
                &h.dims,
                file.tensor_data(h),
                source_tensors.get(t.name.as_str()).copied(),
            ),
        };
        report.tensors.push(TensorVerdict {
            name: t.name.clone(),
            verdict,
        });
    }
    let made: std::collections::HashSet<&str> =
        ours.tensors.iter().map(|t| t.name.as_str()).collect();
    for h in &file.tensors {
        if !made.contains(h.name.as_str()) {
            report.tensors.push(TensorVerdict {
                name: h.name.clone(),
                verdict: Verdict::NotFromSource,
            });
        }
    }
    compare_keys(file, ours, &mut report);
    report
}

fn compare_keys(file: &GgufFile, ours: &Model, report: &mut ProvenanceReport) {
    let have = Model::from_gguf(file).metadata;
    for (k, v) in have.iter() {
        report.keys_compared += 1;
        match ours.metadata.get(k) {
            Some(w) if w == v => {}
            Some(w) => {
                report.keys.push(KeyDifference {
                    key: k.to_string(),
                    file: Some(format_value_short(v)),
                    ours: Some(format_value_short(w)),
                });
                if let (Value::String(a), Value::String(b)) = (w, v) {
                    if k.starts_with("tokenizer.chat_template") {
                        report.template_diff.extend(unified(
                            &a.to_lossy(),
                            &b.to_lossy(),
                            &format!("{k} (from the source)"),
                            &format!("{k} (in the file)"),
                        ));
                    }
                }
            }
            None => report.keys.push(KeyDifference {
                key: k.to_string(),
                file: Some(format_value_short(v)),
                ours: None,
            }),
        }
    }
    for (k, w) in ours.metadata.iter() {
        if have.get(k).is_none() {
            report.keys.push(KeyDifference {
                key: k.to_string(),
                file: None,
                ours: Some(format_value_short(w)),
            });
        }
    }
}

fn tensor_verdict(
    t: &Tensor,
    ty: GgmlType,
    dims: &[u64],
    got: &[u8],
    source: Option<&Tensor>,
) -> Verdict {
    if ty != t.ty || dims != t.dims.as_slice() {
        return Verdict::Layout {
            file: (ty, dims.to_vec()),
            ours: (t.ty, t.dims.clone()),
        };
    }
    let want = match t.data.bytes() {
        Ok(b) => b,
        Err(e) => return Verdict::Failed(e.to_string()),
    };
    if want.as_ref() == got {
        return Verdict::Identical;
    }
    let tr = traits(ty);
    let (bs, ts) = if tr.block_size > 1 {
        (tr.block_size, tr.type_size)
    } else {
        (1, tr.type_size.max(1))
    };
    let mut d = Difference {
        bytes_differ: want.iter().zip(got).filter(|(a, b)| a != b).count() as u64
            + want.len().abs_diff(got.len()) as u64,
        bytes: want.len() as u64,
        blocks: (want.len() / ts) as u64,
        ..Default::default()
    };
    let differing: Vec<usize> = want
        .chunks(ts)
        .zip(got.chunks(ts))
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, _)| i)
        .collect();
    d.blocks_differ = differing.len() as u64;
    let src_values = source.and_then(|s| {
        let b = s.data.bytes().ok()?;
        decode(s.ty, &b)
    });
    let (a, b) = rayon::join(|| decode(ty, &want), || decode(ty, got));
    let (Some(a), Some(b)) = (a, b) else {
        return Verdict::Different(d);
    };
    if a.len() != b.len() {
        return Verdict::Different(d);
    }
    let (mut max_abs, mut se) = (0f64, 0f64);
    for (&x, &y) in a.iter().zip(&b) {
        let diff = (x as f64 - y as f64).abs();
        max_abs = max_abs.max(diff);
        se += diff * diff;
    }
    let n = a.len().max(1) as f64;
    d.max_abs = Some(max_abs);
    d.rms = Some((se / n).sqrt());
    let Some(x) = src_values.filter(|x| x.len() == a.len()) else {
        return Verdict::Different(d);
    };
    let sq = |v: &[f32], r: std::ops::Range<usize>| -> f64 {
        v[r.clone()]
            .iter()
            .zip(&x[r])
            .map(|(&q, &s)| {
                let e = q as f64 - s as f64;
                e * e
            })
            .sum()
    };
    let (e_ours, e_file) = (sq(&a, 0..a.len()), sq(&b, 0..b.len()));
    d.error_ours = Some((e_ours / n).sqrt());
    d.error_file = Some((e_file / n).sqrt());
    if bs == 1 || !e_file.is_finite() {
        return Verdict::Different(d);
    }
    let blocks_ok = differing.iter().all(|&i| {
        let r = i * bs..(i + 1) * bs;
        let scale: f64 = x[r.clone()]
            .iter()
            .map(|&v| (v as f64) * (v as f64))
            .sum::<f64>();
        sq(&b, r.clone()) <= WithinRounding::MAX_BLOCK_RATIO * sq(&a, r) + 1e-9 * scale
    });
    let within = blocks_ok
        && (d.blocks_differ as f64) <= WithinRounding::MAX_BLOCK_FRACTION * d.blocks as f64
        && e_file <= WithinRounding::MAX_TENSOR_RATIO * e_ours;
    if within {
        Verdict::WithinRounding(d)
    } else {
        Verdict::Different(d)
    }
}
