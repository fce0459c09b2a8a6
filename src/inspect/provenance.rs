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
/// - over the rows that hold a difference (compared in windows of 16 MiB), its squared error
///   against the source is at most [`WithinRounding::MAX_TENSOR_RATIO`] times the recomputed
///   rows'.
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
    /// RMS difference between the decoded values, over the rows compared in windows that
    /// hold a difference (windows of 16 MiB of output; the other rows are exact).
    pub rms: Option<f64>,
    /// The file's RMS error against the source values, over the same rows.
    pub error_file: Option<f64>,
    /// The recomputed tensor's RMS error against the source values, over the same rows.
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
/// tensors are computed lazily, a window of rows at a time, and their pages released, so
/// memory stays a few windows whatever the model's size). `source` gives the values each
/// tensor was quantized from, under the same names, for the error sizes and the rounding test.
pub fn check(file: &GgufFile, ours: &Model, source: &Model) -> ProvenanceReport {
    let mut report = ProvenanceReport::default();
    let have = Model::from_gguf(file);
    let file_tensors: std::collections::HashMap<&str, &Tensor> =
        have.tensors.iter().map(|t| (t.name.as_str(), t)).collect();
    let source_tensors: std::collections::HashMap<&str, &Tensor> = source
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    for t in &ours.tensors {
        let verdict = match file_tensors.get(t.name.as_str()) {
            None => Verdict::MissingFromFile,
            Some(h) => tensor_verdict(t, h, source_tensors.get(t.name.as_str()).copied()),
        };
        report.tensors.push(TensorVerdict {
            name: t.name.clone(),
            verdict,
        });
    }
    let made: std::collections::HashSet<&str> =
        ours.tensors.iter().map(|t| t.name.as_str()).collect();
    for h in &have.tensors {
        if !made.contains(h.name.as_str()) {
            report.tensors.push(TensorVerdict {
                name: h.name.clone(),
                verdict: Verdict::NotFromSource,
            });
        }
    }
    compare_keys(&have, ours, &mut report);
    report
}

fn compare_keys(have: &Model, ours: &Model, report: &mut ProvenanceReport) {
    let have = &have.metadata;
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
                    if k.starts_with(crate::gguf::keys::tokenizer::CHAT_TEMPLATE) {
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

/// Output bytes compared per window of rows.
const WINDOW_BYTES: usize = 16 << 20;

/// What the windows of one tensor add up to.
#[derive(Default)]
struct Tally {
    diff: Difference,
    /// Sum of squared differences between the decoded values.
    se: f64,
    /// Elements decoded.
    n: u64,
    /// Squared errors against the source: the recomputed tensor's, the file's.
    e_ours: f64,
    e_file: f64,
    /// Every differing window could be decoded, with source values.
    measured: bool,
    /// Every differing block passed the block test of [`WithinRounding`].
    blocks_ok: bool,
}

impl Tally {
    /// Adds a window: `want` (recomputed) and `got` (the file) of type `ty`, and the source
    /// values of the same elements when known.
    fn add(&mut self, ty: GgmlType, want: &[u8], got: &[u8], source: Option<Vec<f32>>) {
        let tr = traits(ty);
        let (bs, ts) = if tr.block_size > 1 {
            (tr.block_size, tr.type_size)
        } else {
            (1, tr.type_size.max(1))
        };
        self.diff.bytes += want.len() as u64;
        self.diff.blocks += (want.len() / ts) as u64;
        if want == got {
            return;
        }
        self.diff.bytes_differ += want.iter().zip(got).filter(|(a, b)| a != b).count() as u64
            + want.len().abs_diff(got.len()) as u64;
        let differing: Vec<usize> = want
            .chunks(ts)
            .zip(got.chunks(ts))
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, _)| i)
            .collect();
        self.diff.blocks_differ += differing.len() as u64;
        let (a, b) = rayon::join(|| decode(ty, want), || decode(ty, got));
        let (Some(a), Some(b)) = (a, b) else {
            self.measured = false;
            return;
        };
        if a.len() != b.len() {
            self.measured = false;
            return;
        }
        for (&x, &y) in a.iter().zip(&b) {
            let d = (x as f64 - y as f64).abs();
            self.diff.max_abs = Some(self.diff.max_abs.unwrap_or(0.0).max(d));
            self.se += d * d;
        }
        self.n += a.len() as u64;
        let Some(x) = source.filter(|x| x.len() == a.len()) else {
            self.measured = false;
            return;
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
        self.e_ours += sq(&a, 0..a.len());
        self.e_file += sq(&b, 0..b.len());
        if bs > 1 {
            self.blocks_ok &= differing.iter().all(|&i| {
                let r = i * bs..(i + 1) * bs;
                let scale: f64 = x[r.clone()].iter().map(|&v| (v as f64) * (v as f64)).sum();
                sq(&b, r.clone()) <= WithinRounding::MAX_BLOCK_RATIO * sq(&a, r) + 1e-9 * scale
            });
        } else {
            self.blocks_ok = false;
        }
    }

    fn verdict(mut self) -> Verdict {
        if self.diff.bytes_differ == 0 {
            return Verdict::Identical;
        }
        // The figures cover the windows that differ (the others are exact).
        let n = self.n.max(1) as f64;
        if self.n > 0 {
            self.diff.rms = Some((self.se / n).sqrt());
        }
        if !self.measured {
            return Verdict::Different(self.diff);
        }
        self.diff.error_ours = Some((self.e_ours / n).sqrt());
        self.diff.error_file = Some((self.e_file / n).sqrt());
        let within = self.blocks_ok
            && self.e_file.is_finite()
            && (self.diff.blocks_differ as f64)
                <= WithinRounding::MAX_BLOCK_FRACTION * self.diff.blocks as f64
            && self.e_file <= WithinRounding::MAX_TENSOR_RATIO * self.e_ours;
        if within {
            Verdict::WithinRounding(self.diff)
        } else {
            Verdict::Different(self.diff)
        }
    }
}

fn tensor_verdict(t: &Tensor, h: &Tensor, source: Option<&Tensor>) -> Verdict {
    if h.ty != t.ty || h.dims != t.dims {
        return Verdict::Layout {
            file: (h.ty, h.dims.clone()),
            ours: (t.ty, t.dims.clone()),
        };
    }
    let ne0 = t.dims.first().copied().unwrap_or(1);
    let mut tally = Tally {
        measured: true,
        blocks_ok: true,
        ..Default::default()
    };
    // Row windows of the recomputed tensor, the file's and the source's alike.
    let rows = (t.data.rows(t.ty, ne0), h.data.rows(h.ty, ne0));
    let source_rows = source.and_then(|s| s.data.rows(s.ty, ne0).map(|r| (s, r)));
    let (Some(ours), Some(theirs)) = rows else {
        let (want, got) = match (t.data.bytes(), h.data.bytes()) {
            (Ok(w), Ok(g)) => (w, g),
            (Err(e), _) | (_, Err(e)) => return Verdict::Failed(e.to_string()),
        };
        let x = source.and_then(|s| decode(s.ty, &s.data.bytes().ok()?));
        tally.add(t.ty, &want, &got, x);
        return tally.verdict();
    };
    if ours.count != theirs.count || ours.out_bytes != theirs.out_bytes {
        return Verdict::Failed("the file's rows do not match the recomputed ones".into());
    }
    let step = (WINDOW_BYTES / ours.out_bytes.max(1)).max(1);
    let mut start = 0;
    while start < ours.count {
        let r = start..(start + step).min(ours.count);
        let (want, got) = match (
            t.data.bytes_rows(&ours, r.clone()),
            h.data.bytes_rows(&theirs, r.clone()),
        ) {
            (Ok(w), Ok(g)) => (w, g),
            (Err(e), _) | (_, Err(e)) => return Verdict::Failed(e.to_string()),
        };
        let x = || {
            let (s, sr) = source_rows.as_ref()?;
            let b = s.data.bytes_rows(sr, r.clone()).ok()?;
            let v = decode(s.ty, &b);
            s.data.release_rows(sr, r.clone());
            v
        };
        let x = if want != got { x() } else { None };
        tally.add(t.ty, &want, &got, x);
        t.data.release_rows(&ours, r.clone());
        h.data.release_rows(&theirs, r.clone());
        start = r.end;
    }
    tally.verdict()
}
