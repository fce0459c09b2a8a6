//! The base file type of a budget given without one: the named mix nearest the budget.
//!
//! A budget's base type says which tensors llama-quantize's rules quantize, and its mix is
//! the reference the budget's total error is capped at and compared with. When the user names
//! none, [`nearest_mix`] takes the largest of llama-quantize's k-quant mixes ([`MIXES`]) whose
//! own file fits the budget: the mix someone with that much room would otherwise use.

use super::budget::Target;
use super::{plan, FileType, QuantizeOptions};
use crate::gguf::layout;

/// The named mixes a budget may take as its base, smallest first.
pub const MIXES: &[&str] = &[
    "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K",
];

/// What a mix's file measures against `target`: its file size in bytes (as llama-quantize
/// writes it) or its bits per weight over all tensors; `None` when it cannot be planned.
fn measure(input: &crate::ir::Model, opts: &QuantizeOptions, target: Target) -> Option<f64> {
    let p = plan(input, opts).ok()?;
    match target {
        Target::Size(_) => layout(&p.model.metadata, &p.model.headers())
            .ok()
            .map(|l| l.file_size as f64),
        Target::Bpw(_) => {
            let n = p.n_elements();
            (n > 0).then(|| p.out_bytes() as f64 * 8.0 / n as f64)
        }
    }
}

/// The largest of [`MIXES`] whose file (as llama-quantize writes it with `opts`' other
/// options) fits `target`; when none fits, the smallest that can be planned; `None` when no
/// mix can be planned (the caller keeps its default).
pub fn nearest_mix(
    input: &crate::ir::Model,
    opts: &QuantizeOptions,
    target: Target,
) -> Option<FileType> {
    let limit = match target {
        Target::Size(s) => s as f64,
        Target::Bpw(b) => b,
    };
    // (measure, mix) of the smallest mix, and of the largest that fits.
    let mut smallest: Option<(f64, FileType)> = None;
    let mut best: Option<(f64, FileType)> = None;
    for name in MIXES {
        let Some(ft) = FileType::parse(name) else {
            continue;
        };
        let mut o = opts.clone();
        o.ftype = ft;
        o.chosen_types = None;
        let Some(m) = measure(input, &o, target) else {
            continue;
        };
        if smallest.is_none_or(|(s, _)| m < s) {
            smallest = Some((m, ft));
        }
        if m <= limit && best.is_none_or(|(b, _)| m > b) {
            best = Some((m, ft));
        }
    }
    best.or(smallest).map(|(_, ft)| ft)
}
