//! Budgeted per-tensor types: `gguf-quantize --target-size` / `--target-bpw`.
//!
//! llama-quantize's mixes (Q4_K_M, …) pick each tensor's type from its name and layer. Given
//! a size budget instead, this module measures what each candidate stock type costs each
//! tensor and picks the types that minimise the total error within the budget:
//!
//! 1. [`plan_budget`] runs llama-quantize's planner once with the base file type to learn
//!    which tensors the mixture rules choose a type for ([`TensorPlan::by_rules`]). Every
//!    other tensor (copies, tensors that stay F32, `--tensor-type`, `--output-tensor-type`,
//!    `--token-embedding-type`) keeps its type, and its bytes count against the budget.
//! 2. [`measure`] quantizes a deterministic sample of each such tensor's rows to every
//!    candidate type (after llama-quantize's row-length fallback) with our bit-exact
//!    kernels, and sums the squared error of the dequantized values, weighted per column by
//!    the imatrix when one is given, scaled to the whole tensor.
//! 3. Each tensor's error is weighed by the [`Metric`] (by default [`Metric::Kld`], an
//!    estimate of the KL divergence it adds to the model's output). [`allocate`] starts every
//!    tensor at its cheapest candidate and upgrades along each tensor's lower convex hull of
//!    (bytes, error) in order of error saved per byte (the Lagrangian solution; a dynamic
//!    programme over the bytes is tried too when the walk is more than [`DP_GAP`] above the
//!    Lagrangian lower bound), then spends what is left on the best single
//!    upgrades that fit. [`allocate_capped`] does so while keeping the total error
//!    `gguf-inspect compare` reports at most that of llama-quantize's own mix of the base
//!    type, where the budget allows ([`BudgetOptions::reference_cap`]).
//! 4. The planner runs again with the chosen types ([`QuantizeOptions::chosen_types`]), so
//!    the imatrix checks, the lazy conversions and the metadata are those of a normal run;
//!    the `ggufkit.quantize.*` keys ([`crate::gguf::keys::ggufkit`]) record the budget.
//!
//! Priors where the measured error alone misleads: a routed-expert tensor (3-D, one matrix
//! per expert) is seen by `expert_used_count / expert_count` of the tokens, so its error is
//! scaled by that share; with an imatrix, a tensor it has no entry for (`token_embd`) is
//! weighted by the imatrix's mean importance so that its error is on the same scale.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use rayon::prelude::*;

use super::budget_anchor::{anchored, Anchor, ANCHOR_MARGIN};
use super::budget_fill::{fill, slack, Slack};
use super::{
    plan, rules, FileType, Imatrix, QuantizeError, QuantizeOptions, QuantizePlan, TensorPlan,
};
use crate::gguf::{align_up, keys, layout, tensor_nbytes, Layout, Metadata, Value};
use crate::ir::{Model, Tensor, TensorData};
use crate::quantizers::{dequantize_rows, quantize_rows, row_size, traits, GgmlType};

/// The stock types a budget chooses from by default: every llama.cpp build loads them, and
/// none needs an imatrix.
pub const DEFAULT_CANDIDATES: &[GgmlType] = &[
    GgmlType::Q2_K,
    GgmlType::Q3_K,
    GgmlType::IQ4_XS,
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
    GgmlType::Q8_0,
];

/// The most elements of one tensor measured by default (whole rows, spread evenly over the
/// tensor).
pub const DEFAULT_SAMPLE_ELEMENTS: usize = 1 << 20;

/// The share of each tensor's rows measured by default: one row in a hundred.
///
/// Measuring a candidate type costs about what quantizing to it does, and there are seven
/// candidates: a hundredth of the rows keeps planning to about a tenth of quantizing. A row's
/// error is a sum over its whole length, so a few rows spread over the tensor estimate the
/// tensor's error per row closely, and every candidate is measured on the same rows, which
/// keeps their order.
pub const DEFAULT_SAMPLE_SHARE: f64 = 0.01;

/// The fewest elements of a tensor measured (whole rows): a tensor this small is measured
/// exactly, and a larger one on at least this many elements whatever its share.
pub const SAMPLE_FLOOR_ELEMENTS: usize = 4096;

/// Which rows of each tensor are measured ([`sample_rows`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// The most elements measured per tensor (whole rows); 0 measures every row.
    pub max_elements: usize,
    /// The share of the rows measured, in (0, 1] (at least [`SAMPLE_FLOOR_ELEMENTS`]).
    pub share: f64,
}

impl Sampling {
    /// Every row of every tensor.
    pub const ALL: Sampling = Sampling {
        max_elements: 0,
        share: 1.0,
    };

    /// At most `max_elements` elements of each tensor, whatever their share.
    pub fn at_most(max_elements: usize) -> Sampling {
        Sampling {
            max_elements,
            share: 1.0,
        }
    }
}

impl Default for Sampling {
    /// [`DEFAULT_SAMPLE_ELEMENTS`] and [`DEFAULT_SAMPLE_SHARE`].
    fn default() -> Self {
        Sampling {
            max_elements: DEFAULT_SAMPLE_ELEMENTS,
            share: DEFAULT_SAMPLE_SHARE,
        }
    }
}

/// The default [`BudgetOptions::output_exponent`].
pub const DEFAULT_OUTPUT_EXPONENT: f64 = 1.0;

/// What the output must fit in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// The whole output file, header included, in bytes.
    Size(u64),
    /// Bits per weight over all tensors (tensor bytes × 8 / elements, as `--dry-run` prints).
    Bpw(f64),
}

impl Target {
    /// The value of the `ggufkit.quantize.budget` key: `size=<bytes>` or `bpw=<bits>`.
    pub fn describe(&self) -> String {
        match self {
            Target::Size(b) => format!("size={b}"),
            Target::Bpw(b) => format!("bpw={b}"),
        }
    }
}

/// How to spend a budget.
#[derive(Debug, Clone)]
pub struct BudgetOptions {
    /// The budget.
    pub target: Target,
    /// The types to choose from (each after the row-length fallback).
    pub candidates: Vec<GgmlType>,
    /// The rows of each tensor measured.
    pub sampling: Sampling,
    /// What the allocation minimises.
    pub metric: Metric,
    /// The factor a routed-expert tensor's error is scaled by; `None`: the share of tokens
    /// an expert sees, `expert_used_count / expert_count` (1 when the model says neither).
    pub expert_weight: Option<f64>,
    /// With [`Metric::Output`]: the exponent `a` of the blend `output^a · absolute^(1−a)` of
    /// each tensor's weight (1: the output-propagated error; 0: the absolute error).
    pub output_exponent: f64,
    /// Keep the total error `gguf-inspect compare` reports (imatrix-weighted, or squared
    /// without an imatrix) at most that of llama-quantize's own mix of the base type, where
    /// some choice within the budget can ([`allocate_capped`]).
    pub reference_cap: bool,
    /// Whether the allocation starts from llama-quantize's mix and moves bytes only by
    /// confident trades ([`super::budget_anchor::anchored`]) or minimises the metric freely.
    pub anchor: Anchor,
}

/// What [`Metric::Kld`] multiplies the input embedding's and the output head's
/// [`output_weight`] by.
///
/// Measured, not derived: on two trained models (2 and 4 layers,
/// `scripts/bench-sensitivity.sh`), the KL divergence each tensor adds when it alone is
/// quantized is proportional to its [`Metric::Output`] error with one factor for the
/// embedding and the output head (whose relative errors are exact) and a 6–20 times smaller
/// one for the blocks' tensors, whose output powers the diagonal imatrix underestimates
/// (trained weights are aligned with their inputs' covariance). Factors from 4 to 16
/// gave nearly the same mixes on those models; 8 is the middle (README, "The default: an
/// estimated KL divergence").
pub const EMBEDDING_OUTPUT_FACTOR: f64 = 8.0;

/// What the allocation minimises (summed over tensors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Each tensor's error carried to where it shows in the model's output
    /// ([`output_weight`]): the (imatrix-weighted) squared error of a layer is the power of
    /// the error in its output; a tensor that adds to the residual stream (`attn_output`,
    /// `ffn_down`) puts it there, a tensor whose output feeds another layer first
    /// (`ffn_up`/`ffn_gate` → `ffn_down`, `attn_q`/`attn_k`/`attn_v` → `attn_output`) passes
    /// on its relative error (error over signal) to that layer's output, the input embedding
    /// adds its mean row error per token; an error in the residual stream then counts by how
    /// much the later blocks, reading the normalised stream, amplify it
    /// ([`ResidualGains`]), and the output head's error against the logits' power.
    Output,
    /// An estimate of the KL divergence each tensor's error adds to the model's next-token
    /// distributions: [`Metric::Output`] with the input embedding's and the output head's
    /// weights multiplied by [`EMBEDDING_OUTPUT_FACTOR`]. The default.
    Kld,
    /// Each tensor's (imatrix-weighted) squared error divided by its mean (imatrix-weighted)
    /// signal per element `Σ w·x² / n`: each layer's output error measured against its own
    /// output scale (so a layer with small activations is not starved), summed over its
    /// elements (so a large tensor still counts by its size).
    Relative,
    /// Each tensor's (imatrix-weighted) squared error as it is.
    Absolute,
}

impl Metric {
    /// The name recorded in `ggufkit.quantize.metric`.
    pub fn name(self, weighted: bool) -> &'static str {
        match (self, weighted) {
            (Metric::Output, true) => "output-propagated imatrix-weighted squared error",
            (Metric::Output, false) => "output-propagated squared error",
            (Metric::Kld, true) => "estimated KL divergence (imatrix-weighted)",
            (Metric::Kld, false) => "estimated KL divergence",
            (Metric::Relative, true) => "relative imatrix-weighted squared error",
            (Metric::Relative, false) => "relative squared error",
            (Metric::Absolute, true) => "imatrix-weighted squared error",
            (Metric::Absolute, false) => "squared error",
        }
    }

    /// The metric of a `--budget-metric` value: `kld`, `output`, `relative` or `absolute`.
    pub fn from_name(s: &str) -> Option<Metric> {
        match s {
            "kld" => Some(Metric::Kld),
            "output" => Some(Metric::Output),
            "relative" => Some(Metric::Relative),
            "absolute" => Some(Metric::Absolute),
            _ => None,
        }
    }
}

/// Where a tensor's output goes, for [`Metric::Output`] (from its GGUF name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// Adds to the residual stream: `attn_output`, `ffn_down` (also `_exps`, `_shexp`), and
    /// any tensor not recognised below.
    Residual,
    /// Feeds the named tensor of the same block, which adds to the residual stream.
    Feeds(String),
    /// The input embedding (`token_embd`): each token adds one row to the residual stream.
    Embedding,
    /// The output head (`output`): its error is in the logits.
    Logits,
}

/// The [`Role`] of the tensor named `name`.
pub fn role(name: &str) -> Role {
    let base = name.strip_suffix(".weight").unwrap_or(name);
    match base {
        "token_embd" => return Role::Embedding,
        "output" => return Role::Logits,
        _ => {}
    }
    let Some((block, part)) = base
        .strip_prefix("blk.")
        .and_then(|r| r.split_once('.'))
        .map(|(n, p)| (format!("blk.{n}."), p))
    else {
        return Role::Residual;
    };
    const ATTN_IN: &[&str] = &[
        "attn_q",
        "attn_k",
        "attn_v",
        "attn_qkv",
        "attn_q_a",
        "attn_q_b",
        "attn_kv_a_mqa",
        "attn_kv_b",
    ];
    if ATTN_IN.contains(&part) {
        return Role::Feeds(format!("{block}attn_output.weight"));
    }
    let suffix = part
        .strip_prefix("ffn_up")
        .or_else(|| part.strip_prefix("ffn_gate"));
    match suffix {
        // `ffn_up`, `ffn_up_exps`, `ffn_gate_shexp` … (not the router `ffn_gate_inp`)
        Some(x) if x.is_empty() || (x.starts_with('_') && !x.starts_with("_inp")) => {
            Role::Feeds(format!("{block}ffn_down{x}.weight"))
        }
        _ => Role::Residual,
    }
}

/// A tensor that adds to the residual stream: `attn_output` and `ffn_down` (also `_exps`,
/// `_shexp`) of block `n`: `Some((n, 0))` for attention, `Some((n, 1))` for the feed-forward
/// part (their order in the stream).
pub fn writes_residual(name: &str) -> Option<(u64, u8)> {
    let base = name.strip_suffix(".weight").unwrap_or(name);
    let (n, part) = base.strip_prefix("blk.")?.split_once('.')?;
    let n: u64 = n.parse().ok()?;
    if part == "attn_output" {
        Some((n, 0))
    } else if part.starts_with("ffn_down") {
        Some((n, 1))
    } else {
        None
    }
}

/// A norm applied to a sub-block's output before it is added to the residual stream
/// (`post_attention_norm`, `post_ffw_norm` of block `n`): the sub-block of
/// [`writes_residual`] it normalises.
pub fn post_norm_of(name: &str) -> Option<(u64, u8)> {
    let base = name.strip_suffix(".weight").unwrap_or(name);
    let (n, part) = base.strip_prefix("blk.")?.split_once('.')?;
    let n: u64 = n.parse().ok()?;
    match part {
        "post_attention_norm" => Some((n, 0)),
        "post_ffw_norm" => Some((n, 1)),
        _ => None,
    }
}

/// Architectures whose graph multiplies the input embedding by `sqrt(n_embd)` without a
/// metadata key saying so (llama.cpp's graphs of these architectures).
const SQRT_EMBEDDING_SCALED: &[&str] = &[
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3n",
    "gemma4",
    "gemma-embedding",
    "afmoe",
];

/// The factor the input embedding's power is multiplied by before the first block: the
/// square of `{arch}.embedding_scale` when the metadata has it, `n_embd` for the
/// architectures that scale by `sqrt(n_embd)`, else 1.
pub fn embedding_power_scale(metadata: &Metadata, n_embd: u64) -> f64 {
    let arch = metadata.get_str(keys::general::ARCHITECTURE).unwrap_or("");
    let key = keys::arch_key(arch, keys::llm::EMBEDDING_SCALE);
    if let Some(s) = metadata.get(&key).and_then(Value::as_float) {
        if s.is_finite() && s != 0.0 {
            return s * s;
        }
    }
    if SQRT_EMBEDDING_SCALED.contains(&arch) {
        n_embd.max(1) as f64
    } else {
        1.0
    }
}

/// How much an error added to the residual stream at each point shows in the model's
/// output, for [`Metric::Output`].
///
/// The stream starts as the token's embedding row (power `embedding`, per token) and each
/// sub-block (attention, then feed-forward, of each block in order) adds its output (power
/// `S`, the sum of the `Σ w·x²` of its writers, [`writes_residual`]; a routed expert's scaled
/// by the share of tokens it sees): the power before sub-block `m` is `P_m = embedding +
/// Σ_{k<m} S_k` (uncorrelated additions). A sub-block reads the normalised stream, so an
/// error `Δ` in the stream is a relative error `|Δ|²/P_m` of its input, which it passes on
/// as an error of power `S_m·|Δ|²/P_m` in its output (gain 1 in relative terms): the error
/// grows by `(1 + S_m/P_m)` at each later sub-block (the linearised residual stream,
/// uncorrelated terms). At the end the output head reads it as a relative error of the
/// logits `|Δ|²/P_end`. So the gain of an error added after sub-block `m` is
/// `Π_{k>m} (1 + S_k/P_k) / P_end`, and the embedding's is the product over all sub-blocks.
/// Early errors matter most where the stream is still small (the embedding, the first
/// block).
///
/// A sub-block whose output is normalised before it joins the stream (a post-norm of weights
/// `g`, [`post_norm_of`]) adds `Σ g²` per token whatever its writers' power, and an error in
/// its writers' output reaches the stream as a relative error: their gain is multiplied by
/// `Σ g² / S`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResidualGains {
    /// The gain of each writer tensor (by name).
    pub writers: HashMap<String, f64>,
    /// The gain of an error in the embedding row.
    pub embedding: f64,
    /// The gain at the end of the stream, `1 / P_end` (for tensors not placed).
    pub end: f64,
}

impl ResidualGains {
    /// The gains for an embedding row power `embedding` and the output power of every
    /// writer tensor in `signals` (other names are ignored), routed experts' (`_exps`)
    /// scaled by `routed_share`.
    pub fn new(embedding: f64, signals: &HashMap<String, f64>, routed_share: f64) -> Self {
        Self::with_post_norms(embedding, signals, routed_share, &HashMap::new())
    }

    /// [`ResidualGains::new`] where the sub-blocks in `post_norms` normalise their output
    /// before adding it to the stream, each with its norm's `Σ g²`.
    pub fn with_post_norms(
        embedding: f64,
        signals: &HashMap<String, f64>,
        routed_share: f64,
        post_norms: &HashMap<(u64, u8), f64>,
    ) -> Self {
        // Sub-blocks in stream order, each with its power and writers.
        let mut subs: Vec<((u64, u8), f64, Vec<String>)> = Vec::new();
        for (name, &s) in signals {
            let Some(at) = writes_residual(name) else {
                continue;
            };
            let s = if name.contains("_exps") {
                s * routed_share
            } else {
                s
            };
            match subs.iter_mut().find(|(k, ..)| *k == at) {
                Some((_, p, w)) => {
                    *p += s;
                    w.push(name.clone());
                }
                None => subs.push((at, s, vec![name.clone()])),
            }
        }
        subs.sort_by_key(|s| s.0);
        let tiny = f64::MIN_POSITIVE;
        // Power before each sub-block, and at the end.
        let mut before = Vec::with_capacity(subs.len());
        let mut p = embedding.max(0.0);
        for (at, s, _) in &subs {
            before.push(p.max(tiny));
            p += match post_norms.get(at) {
                Some(&q) if q > 0.0 && *s > 0.0 => q,
                _ => s.max(0.0),
            };
        }
        let end = 1.0 / p.max(tiny);
        // Gain after sub-block m: the product over the later ones, from the end backwards.
        let mut writers = HashMap::new();
        let mut g = end;
        for (m, (at, s, names)) in subs.iter().enumerate().rev() {
            let (added, relative) = match post_norms.get(at) {
                Some(&q) if q > 0.0 && *s > 0.0 => (q, q / s),
                _ => (s.max(0.0), 1.0),
            };
            for n in names {
                writers.insert(n.clone(), g * relative);
            }
            g *= 1.0 + added / before[m];
        }
        ResidualGains {
            writers,
            embedding: g,
            end,
        }
    }
}

/// The factor [`Metric::Output`] multiplies a tensor's measured error by: with `signal` its
/// own output power (`Σ w·x²`, same weights as the error), `rows` its rows per matrix,
/// `signals` the output power of the tensors it may feed, `gains` the residual stream's
/// ([`ResidualGains`]) and `tied` whether the embedding is also the output head:
///
/// * [`Role::Residual`]: its writer's gain (the end's when it is not a known writer);
/// * [`Role::Feeds`] `c`: `signals[c] / signal` times `c`'s gain — its relative error becomes
///   the consumer's (a product `silu(gate)·up` and an attention-weighted mean of values
///   pass a relative error on), whose output adds to the residual stream;
/// * [`Role::Embedding`]: the embedding's gain over `rows` (a token adds one of its rows);
///   plus `1 / signal` when `tied`;
/// * [`Role::Logits`]: `1 / signal` (the relative error of the logits).
pub fn output_weight(
    name: &str,
    signal: f64,
    rows: u64,
    signals: &HashMap<String, f64>,
    gains: &ResidualGains,
    tied: bool,
) -> f64 {
    let rel = |s: f64| if s > 0.0 { 1.0 / s } else { 1.0 };
    let gain = |n: &str| gains.writers.get(n).copied().unwrap_or(gains.end);
    match role(name) {
        Role::Residual => gain(name),
        Role::Feeds(c) => match signals.get(&c) {
            Some(&sc) if sc > 0.0 && signal > 0.0 => sc / signal * gain(&c),
            _ => gain(&c),
        },
        Role::Embedding => {
            gains.embedding / rows.max(1) as f64 + if tied { rel(signal) } else { 0.0 }
        }
        Role::Logits => rel(signal),
    }
}

impl BudgetOptions {
    /// [`DEFAULT_CANDIDATES`] and the default [`Sampling`] for `target`.
    pub fn new(target: Target) -> Self {
        BudgetOptions {
            target,
            candidates: DEFAULT_CANDIDATES.to_vec(),
            sampling: Sampling::default(),
            metric: Metric::Kld,
            expert_weight: None,
            output_exponent: DEFAULT_OUTPUT_EXPONENT,
            reference_cap: true,
            anchor: Anchor::Auto,
        }
    }
}

/// Why a budget cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum BudgetError {
    /// A size that does not parse.
    #[error(
        "invalid size '{0}': expected a number with an optional suffix \
         (B; K, M, G, T or KiB, MiB, GiB, TiB = powers of 1024; KB, MB, GB, TB = powers of 1000)"
    )]
    BadSize(String),
    /// A bits-per-weight target that is not a positive finite number.
    #[error("invalid bits per weight {0}: must be a positive number")]
    BadBpw(f64),
    /// An expert weight that is not a positive finite number.
    #[error("invalid expert weight {0}: must be a positive number")]
    BadExpertWeight(f64),
    /// An output exponent outside [0, 1].
    #[error("invalid output exponent {0}: must be between 0 and 1")]
    BadExponent(f64),
    /// A base file type that does not quantize.
    #[error("a budget needs a quantized base type, not {0}")]
    BaseNotQuantized(&'static str),
    /// No candidate type given.
    #[error("no candidate types")]
    NoCandidates,
    /// A candidate type we cannot produce.
    #[error("candidate type {0} cannot be produced (no quantizer)")]
    BadCandidate(GgmlType),
    /// The budget cannot hold even the smallest choice.
    #[error("the budget ({budget} bytes) is below the smallest possible output ({needed} bytes)")]
    TooSmall {
        /// What was asked (in the budget's units: file bytes, or tensor bytes for bpw).
        budget: u64,
        /// The smallest that fits.
        needed: u64,
    },
    /// A tensor no candidate type can hold.
    #[error("tensor '{0}': no candidate type fits its rows")]
    NoCandidate(String),
    /// A tensor whose rows cannot be measured.
    #[error("tensor '{tensor}': {problem}")]
    Measure {
        /// The tensor.
        tensor: String,
        /// What went wrong.
        problem: MeasureError,
    },
    /// The planner refused the input or the chosen types.
    #[error(transparent)]
    Plan(#[from] QuantizeError),
    /// The output cannot be laid out.
    #[error("cannot lay out the output: {0}")]
    Layout(String),
}

/// Why a tensor's candidate errors cannot be measured.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The data cannot be read.
    #[error("{0}")]
    Data(#[from] crate::ir::DataError),
    /// The data does not have the size its shape and type imply.
    #[error("{got} bytes of data, expected {expected}")]
    Size {
        /// Bytes the shape implies.
        expected: u64,
        /// Bytes there are.
        got: u64,
    },
    /// The source type cannot be decoded or a row cannot be quantized.
    #[error("{0}")]
    Kernel(#[from] crate::quantizers::QuantError),
}

/// Parses a size: a number with an optional suffix, case-insensitive. `B` or none: bytes;
/// `K`, `M`, `G`, `T` and `KiB` … `TiB`: powers of 1024; `KB` … `TB`: powers of 1000.
pub fn parse_size(s: &str) -> Result<u64, BudgetError> {
    let bad = || BudgetError::BadSize(s.to_string());
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let num: f64 = num.parse().map_err(|_| bad())?;
    let mult: f64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return Err(bad()),
    };
    let v = (num * mult).floor();
    if !v.is_finite() || v <= 0.0 || v >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(v as u64)
}

/// Rows of a tensor to measure, spread evenly from the first: `share` of them, at least
/// [`SAMPLE_FLOOR_ELEMENTS`] elements' worth (every row of a tensor that small), at most
/// `max_elements`' worth (at least one row); every row when `max_elements` is 0.
pub fn sample_rows(nrows: usize, n_per_row: usize, sampling: Sampling) -> Vec<usize> {
    let n = n_per_row.max(1);
    if sampling.max_elements == 0 || nrows == 0 {
        return (0..nrows).collect();
    }
    let share = if sampling.share > 0.0 && sampling.share <= 1.0 {
        sampling.share
    } else {
        1.0
    };
    let by_share = (nrows as f64 * share).ceil() as usize;
    let floor = SAMPLE_FLOOR_ELEMENTS.div_ceil(n);
    let cap = (sampling.max_elements / n).max(1);
    let k = by_share.max(floor).min(cap).clamp(1, nrows);
    if k == nrows {
        return (0..nrows).collect();
    }
    (0..k).map(|i| i * nrows / k).collect()
}

/// Decodes `src` (whole rows of `ty`) into `dst`.
fn decode_into(ty: GgmlType, src: &[u8], dst: &mut [f32]) -> Result<(), MeasureError> {
    if ty == GgmlType::F32 {
        for (v, c) in dst.iter_mut().zip(src.chunks_exact(4)) {
            *v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        Ok(())
    } else {
        Ok(dequantize_rows(ty, src, dst)?)
    }
}

/// The f32 values of rows `rows` of a tensor of `ty` with rows of `n_per_row` elements,
/// read a row at a time where the data allows it.
pub fn read_rows(
    data: &TensorData,
    ty: GgmlType,
    n_per_row: usize,
    nrows: usize,
    rows: &[usize],
) -> Result<Vec<f32>, MeasureError> {
    let rb = row_size(ty, n_per_row)
        .ok_or(crate::quantizers::QuantError::RowNotBlockAligned { ty, n_per_row })?;
    let expected = (rb as u64).saturating_mul(nrows as u64);
    let mut out = vec![0f32; rows.len().saturating_mul(n_per_row)];
    match data.rows(ty, n_per_row as u64) {
        Some(layout) if layout.count == nrows && layout.out_bytes == rb => {
            for (k, &r) in rows.iter().enumerate() {
                let b = data.read_rows_copy(&layout, r..r + 1)?;
                decode_into(ty, &b, &mut out[k * n_per_row..(k + 1) * n_per_row])?;
            }
        }
        _ => {
            let all = data.bytes()?;
            if all.len() as u64 != expected {
                return Err(MeasureError::Size {
                    expected,
                    got: all.len() as u64,
                });
            }
            for (k, &r) in rows.iter().enumerate() {
                decode_into(
                    ty,
                    &all[r * rb..(r + 1) * rb],
                    &mut out[k * n_per_row..(k + 1) * n_per_row],
                )?;
            }
        }
    }
    Ok(out)
}

/// The candidate types for rows of `ne0` elements: each after llama-quantize's row-length
/// fallback, without repeats, without types needing an imatrix when there is none.
pub fn resolve_candidates(ne0: u64, candidates: &[GgmlType], has_imatrix: bool) -> Vec<GgmlType> {
    let mut v: Vec<GgmlType> = Vec::new();
    for &c in candidates {
        let Ok((t, _)) = rules::fallback(ne0, c) else {
            continue;
        };
        let tr = traits(t);
        if tr.quantize.is_none() || (tr.requires_imatrix && !has_imatrix) || v.contains(&t) {
            continue;
        }
        v.push(t);
    }
    v
}

/// The error of quantizing `tensor` to each of `types` (already resolved, see
/// [`resolve_candidates`]): the sum over its elements of `w · (x − q(x))²`, `w` the column's
/// importance from `imatrix` (`n_per_row × matrices` values) or 1, measured on the rows
/// [`sample_rows`] picks and scaled to the whole tensor.
pub fn measure(
    tensor: &Tensor,
    imatrix: Option<&[f32]>,
    types: &[GgmlType],
    sampling: Sampling,
) -> Result<Vec<f64>, MeasureError> {
    measure_with_signal(tensor, imatrix, types, sampling).map(|(e, _)| e)
}

/// [`measure`], and the tensor's signal `Σ w · x²` on the same rows, scaled the same way.
pub fn measure_with_signal(
    tensor: &Tensor,
    imatrix: Option<&[f32]>,
    types: &[GgmlType],
    sampling: Sampling,
) -> Result<(Vec<f64>, f64), MeasureError> {
    let n = tensor.dims.first().copied().unwrap_or(1) as usize;
    let rows_per_matrix = tensor.dims.get(1).copied().unwrap_or(1).max(1) as usize;
    let nrows = (tensor.n_elements() / (n.max(1) as u64)) as usize;
    if n == 0 || nrows == 0 {
        return Ok((vec![0.0; types.len()], 0.0));
    }
    let picked = sample_rows(nrows, n, sampling);
    let values = read_rows(&tensor.data, tensor.ty, n, nrows, &picked)?;
    tensor.data.release();
    let im_of = |row: usize| -> Option<&[f32]> {
        let im = imatrix?;
        let m = row / rows_per_matrix;
        im.get(m * n..(m + 1) * n)
    };
    let scale = nrows as f64 / picked.len() as f64;
    let mut signal = 0f64;
    for (k, &r) in picked.iter().enumerate() {
        let im = im_of(r);
        for (j, &x) in values[k * n..(k + 1) * n].iter().enumerate() {
            let w = im.map_or(1.0, |w| w[j] as f64);
            signal += w * ((x as f64) * (x as f64));
        }
    }
    let errors = types
        .par_iter()
        .map(|&t| {
            let rb = row_size(t, n).ok_or(crate::quantizers::QuantError::RowNotBlockAligned {
                ty: t,
                n_per_row: n,
            })?;
            let per_row: Vec<Result<f64, MeasureError>> = picked
                .par_iter()
                .enumerate()
                .map(|(k, &r)| {
                    let x = &values[k * n..(k + 1) * n];
                    let im = im_of(r);
                    let mut q = vec![0u8; rb];
                    quantize_rows(t, x, &mut q, n, im)?;
                    let mut y = vec![0f32; n];
                    dequantize_rows(t, &q, &mut y)?;
                    let mut e = 0f64;
                    for j in 0..n {
                        let d = (x[j] as f64) - (y[j] as f64);
                        let w = im.map_or(1.0, |w| w[j] as f64);
                        e += w * (d * d);
                    }
                    Ok(e)
                })
                .collect();
            let mut sum = 0f64;
            for e in per_row {
                sum += e?;
            }
            Ok(sum * scale)
        })
        .collect::<Result<Vec<f64>, MeasureError>>()?;
    Ok((errors, signal * scale))
}

/// One option of one tensor: its cost in the budget's units and its error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    /// Bytes it costs.
    pub cost: u64,
    /// Its error.
    pub error: f64,
}

/// `f64` ordered by `total_cmp`, for the heap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slope(f64);
impl Eq for Slope {}
impl PartialOrd for Slope {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Slope {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Indices of the lower convex hull of `opts` (by cost, then error), error strictly
/// decreasing and the error saved per byte decreasing from one point to the next.
fn hull(opts: &[Choice]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..opts.len()).collect();
    idx.sort_by(|&a, &b| {
        opts[a]
            .cost
            .cmp(&opts[b].cost)
            .then(opts[a].error.total_cmp(&opts[b].error))
    });
    let mut h: Vec<usize> = Vec::new();
    for i in idx {
        if let Some(&last) = h.last() {
            let lower = opts[i].error.partial_cmp(&opts[last].error) == Some(Ordering::Less);
            if !lower || opts[i].cost == opts[last].cost {
                continue;
            }
        }
        // Error saved per byte from a to b.
        let gain = |a: usize, b: usize| {
            (opts[a].error - opts[b].error) / (opts[b].cost - opts[a].cost) as f64
        };
        while h.len() >= 2 && gain(h[h.len() - 2], h[h.len() - 1]) <= gain(h[h.len() - 1], i) {
            h.pop();
        }
        h.push(i);
    }
    h
}

/// Picks one option per tensor minimising the total error with total cost at most `limit`.
/// Returns the index of the chosen option of each tensor.
///
/// Two solutions are computed and the better kept: the greedy walk along each tensor's lower
/// convex hull (the Lagrangian solution; optimal but for the last, indivisible step), and,
/// when the walk is more than [`DP_GAP`] above the relaxation's lower bound, a
/// dynamic programme over the budget above the cheapest choice in at most
/// [`DP_STEPS`] steps, costs rounded up (so it never overspends; it matters when a few large
/// tensors dominate the file, as a 49k-token embedding does in a small model). Each is then
/// topped up with the best single upgrades that still fit.
pub fn allocate(tensors: &[Vec<Choice>], limit: u64) -> Result<Vec<usize>, BudgetError> {
    allocate_with(tensors, limit, true)
}

/// [`allocate`], with the dynamic programme or (`exact` false) the greedy walk alone: the
/// Lagrangian solution, in `O(n log n)`, for the many allocations of a search.
fn allocate_with(
    tensors: &[Vec<Choice>],
    limit: u64,
    exact: bool,
) -> Result<Vec<usize>, BudgetError> {
    let mut cheapest = Vec::with_capacity(tensors.len());
    let mut used: u64 = 0;
    for (i, opts) in tensors.iter().enumerate() {
        let k = (0..opts.len())
            .min_by(|&a, &b| {
                opts[a]
                    .cost
                    .cmp(&opts[b].cost)
                    .then(opts[a].error.total_cmp(&opts[b].error))
            })
            .ok_or_else(|| BudgetError::NoCandidate(format!("#{i}")))?;
        cheapest.push(k);
        used = used.saturating_add(opts[k].cost);
    }
    if used > limit {
        return Err(BudgetError::TooSmall {
            budget: limit,
            needed: used,
        });
    }
    let total = |c: &[usize]| -> (u64, f64) {
        c.iter()
            .zip(tensors)
            .fold((0, 0.0), |(b, e), (&k, o)| (b + o[k].cost, e + o[k].error))
    };
    let mut best: Option<(f64, Vec<usize>)> = None;
    let (walked, bound) = greedy(tensors, limit - used);
    let mut candidates = vec![walked];
    let mut i = 0;
    while i < candidates.len() {
        let mut c = std::mem::take(&mut candidates[i]);
        let (cost, _) = total(&c);
        top_up(tensors, &mut c, limit - cost);
        let (_, err) = total(&c);
        // The programme can only gain what lies between the greedy walk and the Lagrangian
        // lower bound: it runs when that is more than DP_GAP of the error.
        if exact && i == 0 && err - bound > DP_GAP * err.abs() {
            candidates.push(programme(tensors, &cheapest, limit - used));
        }
        if best.as_ref().is_none_or(|(e, _)| err < *e) {
            best = Some((err, c));
        }
        i += 1;
    }
    Ok(best.map(|(_, c)| c).unwrap_or(cheapest))
}

/// The share of the total error below which the dynamic programme is not run: when the
/// greedy walk's error is within it of the Lagrangian lower bound (the fractional solution
/// along the hulls, below every choice's error), no choice can do better by more.
pub const DP_GAP: f64 = 1e-3;

/// [`allocate`] under a second constraint where it can be met: the total of `capped` (a
/// second error per option, same shape as `tensors`) at most `cap`. When no choice within
/// `limit` meets the cap: with `near`, the one closest to it (the least capped total),
/// otherwise the unconstrained one. `reference`, a choice known to fit both (the base type's
/// mix, when it fits), is kept when nothing better is found.
///
/// Lagrangian relaxation of the cap: options cost `error + λ·capped` (λ scaled so that both
/// totals weigh alike at the unconstrained choice), the smallest λ whose allocation meets the
/// cap found by doubling then bisection on the greedy allocations (the search's many
/// allocations skip the dynamic programme, which costs `O(tensors × steps)` each), then the
/// full [`allocate`] at that λ where it meets the cap too; of that allocation and
/// `reference`, the one with the lower total `error` is returned.
pub fn allocate_capped(
    tensors: &[Vec<Choice>],
    capped: &[Vec<f64>],
    cap: f64,
    limit: u64,
    reference: Option<&[usize]>,
    near: bool,
) -> Result<Vec<usize>, BudgetError> {
    let total = |c: &[usize], f: &dyn Fn(usize, usize) -> f64| -> f64 {
        c.iter().enumerate().map(|(i, &k)| f(i, k)).sum()
    };
    let error = |c: &[usize]| total(c, &|i, k| tensors[i][k].error);
    let over = |c: &[usize]| total(c, &|i, k| capped[i][k]);
    let free = allocate(tensors, limit)?;
    if over(&free) <= cap {
        return Ok(free);
    }
    let blend_with = |lambda: f64, scale: f64, exact: bool| -> Result<Vec<usize>, BudgetError> {
        let curves: Vec<Vec<Choice>> = tensors
            .iter()
            .zip(capped)
            .map(|(opts, c)| {
                opts.iter()
                    .zip(c)
                    .map(|(o, &c)| Choice {
                        cost: o.cost,
                        error: lambda * o.error + scale * c,
                    })
                    .collect()
            })
            .collect();
        allocate_with(&curves, limit, exact)
    };
    let blend = |lambda: f64, scale: f64| blend_with(lambda, scale, false);
    // The least capped total within the limit: when even that is over the cap, no choice
    // meets it.
    let least = blend_with(0.0, 1.0, true)?;
    if over(&least) > cap && near {
        return Ok(least);
    }
    if over(&least) > cap {
        return Ok(match reference {
            Some(r) if error(r) < error(&free) => r.to_vec(),
            _ => free,
        });
    }
    let scale = match (error(&free), over(&free)) {
        (e, c) if e > 0.0 && c > 0.0 => e / c,
        _ => 1.0,
    };
    let with = |lambda: f64| blend(1.0, lambda * scale);
    let mut hi: f64 = 1.0;
    let mut best = least;
    let mut found = false;
    for _ in 0..64 {
        let c = with(hi)?;
        if over(&c) <= cap {
            best = c;
            found = true;
            break;
        }
        hi *= 2.0;
    }
    if found {
        let mut lo = 0.0;
        for _ in 0..24 {
            let mid = (lo + hi) / 2.0;
            let c = with(mid)?;
            if over(&c) <= cap {
                hi = mid;
                best = c;
            } else {
                lo = mid;
            }
        }
        // The dynamic programme at that λ, where it meets the cap with a lower error.
        let exact = blend_with(1.0, hi * scale, true)?;
        if over(&exact) <= cap && error(&exact) < error(&best) {
            best = exact;
        }
    }
    if let Some(r) = reference {
        if error(r) < error(&best) {
            best = r.to_vec();
        }
    }
    Ok(best)
}

/// Most steps of the dynamic programme's budget axis.
pub const DP_STEPS: usize = 1 << 16;

/// The greedy walk along the hulls, spending at most `slack` above the cheapest choices, and
/// the Lagrangian lower bound on the error of any choice within it: the walk's steps taken in
/// order of error saved per byte until the first that does not fit, and that one in part
/// (the optimum of the relaxation where a tensor may mix two neighbouring hull points).
fn greedy(tensors: &[Vec<Choice>], mut remaining: u64) -> (Vec<usize>, f64) {
    let hulls: Vec<Vec<usize>> = tensors.iter().map(|o| hull(o)).collect();
    let mut pos = vec![0usize; tensors.len()];
    let step = |i: usize, p: usize| -> Option<(Slope, u64)> {
        let (a, b) = (&tensors[i][hulls[i][p]], &tensors[i][*hulls[i].get(p + 1)?]);
        let dc = b.cost - a.cost;
        Some((Slope((a.error - b.error) / dc as f64), dc))
    };
    let mut heap: BinaryHeap<(Slope, std::cmp::Reverse<usize>)> = BinaryHeap::new();
    for i in 0..tensors.len() {
        if let Some((s, _)) = step(i, 0) {
            heap.push((s, std::cmp::Reverse(i)));
        }
    }
    let start: f64 = (0..tensors.len())
        .map(|i| hulls[i].first().map_or(0.0, |&k| tensors[i][k].error))
        .sum();
    // The relaxation's error: `bound` while every step so far fitted, then fixed.
    let mut bound = start;
    let mut relaxed = true;
    while let Some((_, std::cmp::Reverse(i))) = heap.pop() {
        let Some((Slope(s), dc)) = step(i, pos[i]) else {
            continue;
        };
        if dc > remaining {
            if relaxed {
                bound -= s * remaining as f64;
                relaxed = false;
            }
            continue;
        }
        remaining -= dc;
        if relaxed {
            bound -= s * dc as f64;
        }
        pos[i] += 1;
        if let Some((s, _)) = step(i, pos[i]) {
            heap.push((s, std::cmp::Reverse(i)));
        }
    }
    let picks = (0..tensors.len()).map(|i| hulls[i][pos[i]]).collect();
    (picks, bound)
}

/// Most cells times options of one run of the dynamic programme: [`DP_STEPS`] steps for up
/// to 2,048 options in all (a small model's tensors, where the programme matters), fewer
/// steps for more, so that planning a model of thousands of tensors stays a fraction of
/// quantizing it (there each tensor's steps are small beside the budget, and the greedy walk
/// is near the optimum anyway).
pub const DP_WORK: usize = DP_STEPS * 2048;

/// The dynamic programme: exact on costs rounded up to `slack / steps`.
fn programme(tensors: &[Vec<Choice>], cheapest: &[usize], slack: u64) -> Vec<usize> {
    let n = tensors.len();
    if n == 0 || slack == 0 || tensors.iter().any(|o| o.len() > u8::MAX as usize) {
        return cheapest.to_vec();
    }
    // Options another one dominates (no dearer, no worse, and cheaper or better) never win.
    let useful: Vec<Vec<usize>> = tensors
        .iter()
        .map(|opts| {
            (0..opts.len())
                .filter(|&b| {
                    let ob = &opts[b];
                    !opts.iter().any(|a| {
                        a.cost <= ob.cost
                            && a.error <= ob.error
                            && (a.cost < ob.cost || a.error < ob.error)
                    })
                })
                .collect()
        })
        .collect();
    let options: usize = useful.iter().map(Vec::len).sum::<usize>().max(1);
    // At most 256 MiB of back-pointers, at most DP_WORK cells times options.
    let steps = (DP_STEPS as u64)
        .min(((256usize << 20) / n).max(16) as u64)
        .min((DP_WORK / options).max(16) as u64);
    let unit = slack.div_ceil(steps).max(1);
    let cap = (slack / unit) as usize;
    let units =
        |i: usize, o: &Choice| -> u64 { (o.cost - tensors[i][cheapest[i]].cost).div_ceil(unit) };
    let mut dp = vec![0f64; cap + 1];
    let mut next = vec![0f64; cap + 1];
    let mut back = vec![0u8; n * (cap + 1)];
    for (i, opts) in tensors.iter().enumerate() {
        let row = &mut back[i * (cap + 1)..(i + 1) * (cap + 1)];
        next.fill(f64::INFINITY);
        row.fill(cheapest[i] as u8);
        // Option by option over the budget axis (the first best option wins, as in order).
        for &k in &useful[i] {
            let u = units(i, &opts[k]) as usize;
            if u > cap {
                continue;
            }
            let e = opts[k].error;
            for ((slot, arg), &prev) in next[u..]
                .iter_mut()
                .zip(row[u..].iter_mut())
                .zip(&dp[..=cap - u])
            {
                // Branch-free, so that the loop vectorizes.
                let v = prev + e;
                let better = v < *slot;
                *slot = if better { v } else { *slot };
                *arg = if better { k as u8 } else { *arg };
            }
        }
        std::mem::swap(&mut dp, &mut next);
    }
    let mut choice = vec![0usize; n];
    let mut c = cap;
    for i in (0..n).rev() {
        let k = back[i * (cap + 1) + c] as usize;
        choice[i] = k;
        c -= units(i, &tensors[i][k]) as usize;
    }
    choice
}

/// Spends `remaining` on the best single upgrades (error saved per byte) that fit.
fn top_up(tensors: &[Vec<Choice>], choice: &mut [usize], mut remaining: u64) {
    loop {
        let mut best: Option<(f64, usize, usize, u64)> = None;
        for (i, opts) in tensors.iter().enumerate() {
            let cur = opts[choice[i]];
            for (j, o) in opts.iter().enumerate() {
                if o.cost <= cur.cost || o.cost - cur.cost > remaining || o.error >= cur.error {
                    continue;
                }
                let dc = o.cost - cur.cost;
                let gain = (cur.error - o.error) / dc as f64;
                if best.is_none_or(|(g, ..)| gain > g) {
                    best = Some((gain, i, j, dc));
                }
            }
        }
        let Some((_, i, j, dc)) = best else { break };
        choice[i] = j;
        remaining -= dc;
    }
}

/// The budgeted choice against llama-quantize's own mix of the base type, in the units of
/// `gguf-inspect compare`'s total (the budgeted tensors only: the others are the same in
/// both).
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceComparison {
    /// The base file type (`Q4_K_M`, …).
    pub ftype: &'static str,
    /// Its mix fits in the budget (then, with [`BudgetOptions::reference_cap`], `error` is
    /// at most `reference_error`; it may be without fitting too).
    pub fits: bool,
    /// The mix's total error.
    pub reference_error: f64,
    /// The chosen types' total error.
    pub error: f64,
}

/// A budgeted plan.
#[derive(Debug, Clone)]
pub struct BudgetPlan {
    /// The comparison with llama-quantize's mix of the base type, when every budgeted
    /// tensor's type in that mix is among the candidates measured.
    pub reference: Option<ReferenceComparison>,
    /// The plan to execute (types chosen, metadata recorded).
    pub plan: QuantizePlan,
    /// Per planned tensor (same order): the measured error of its chosen type, when the
    /// budget chose it.
    pub errors: Vec<Option<f64>>,
    /// The total measured error of the chosen types.
    pub total_error: f64,
    /// The size of the output file.
    pub file_size: u64,
    /// The errors are imatrix-weighted.
    pub weighted: bool,
    /// What was minimised.
    pub metric: Metric,
    /// The budget.
    pub target: Target,
    /// Bytes of the budget left unused beyond [`super::budget_fill::SLACK_TOLERANCE`] of it,
    /// and why; `None` when the file uses the budget.
    pub slack: Option<Slack>,
    /// Per planned tensor (same order), for the tensors the budget chose: the type
    /// llama-quantize's mix of the base type gives it and that type's error in the metric
    /// (when every budgeted tensor's mix type was measured).
    pub mix: Vec<Option<(GgmlType, f64)>>,
    /// The metric's total over the budgeted tensors for llama-quantize's mix, to set beside
    /// [`BudgetPlan::total_error`].
    pub mix_total: Option<f64>,
    /// The plan is llama-quantize's mix of the base type as it is, byte for byte, without
    /// the `ggufkit.quantize.*` keys: anchored on the mix, with a budget the mix fits only
    /// without those keys (a budget of the mix's own file size), where adding them would
    /// cost a downgrade.
    pub mix_as_is: bool,
}

fn meta_int(md: &crate::gguf::Metadata, key: &str) -> Option<i128> {
    md.get(key).and_then(Value::as_int)
}

/// Plans quantizing `input` as [`plan`] does, with the types of the tensors the mixture
/// rules would choose for picked to minimise the total error within `budget` instead.
///
/// The phases:
/// 1. [`check_budget`]: the options make sense;
/// 2. the base plan, llama-quantize's own mix of the base type: which tensors its rules type
///    (those the budget types) and what the others cost;
/// 3. [`budget_metadata`]: the output's metadata, whose size does not depend on the types;
/// 4. [`measure_all`]: each budgeted tensor's candidate types, their costs and their errors
///    on sampled rows;
/// 5. [`Signals::measure`]: for the output-weighted metrics, the power of the tensors a
///    budgeted one feeds and of the residual stream;
/// 6. [`weigh`]: each candidate's error weighted by the metric;
/// 7. [`allocate_within`]: the limit and the allocation (capped at the reference mix's
///    error when asked);
/// 8. [`replan`]: the plan made again with the chosen types.
pub fn plan_budget(
    input: &Model,
    opts: &QuantizeOptions,
    budget: &BudgetOptions,
) -> Result<BudgetPlan, BudgetError> {
    check_budget(opts, budget)?;
    let mut base_opts = opts.clone();
    base_opts.chosen_types = None;
    let base = plan(input, &base_opts)?;
    let weighting = Weighting::new(input, opts, budget);
    let weighted = weighting.imatrix.is_some();
    let metadata = budget_metadata(&base, opts, budget, weighted);
    let base_layout =
        layout(&metadata, &base.model.headers()).map_err(|e| BudgetError::Layout(e.to_string()))?;
    let alignment = base_layout.alignment;
    let cost = |ty: GgmlType, dims: &[u64], name: &str| -> Result<u64, BudgetError> {
        let n = tensor_nbytes(ty, dims).map_err(|e| BudgetError::Layout(format!("{name}: {e}")))?;
        match budget.target {
            Target::Size(_) => align_up(n, alignment)
                .ok_or_else(|| BudgetError::Layout(format!("{name}: size overflows"))),
            Target::Bpw(_) => Ok(n),
        }
    };
    let by_name: HashMap<&str, &Tensor> =
        input.tensors.iter().map(|t| (t.name.as_str(), t)).collect();
    let (fixed, measured) = measure_all(&base, &by_name, weighting.imatrix, budget, &cost)?;
    let signals = Signals::measure(&base, &measured, &by_name, weighting.imatrix, budget)?;
    let weighed = weigh(&base, measured, &signals, &weighting, budget);
    let picks = allocate_within(&weighed, &base, &base_layout, fixed, budget, weighted)?;
    let (p, error_of) = if picks.mix_as_is {
        // llama-quantize's own file: its plan and metadata, without our keys.
        let error_of = weighed
            .budgeted
            .iter()
            .zip(&picks.picks)
            .map(|((i, _, options), &k)| (*i, options[k].error))
            .collect();
        (base.clone(), error_of)
    } else {
        replan(input, opts, &base, &weighed, &picks.picks, metadata)?
    };
    let file_size = layout(&p.model.metadata, &p.model.headers())
        .map_err(|e| BudgetError::Layout(e.to_string()))?
        .file_size;
    let errors: Vec<Option<f64>> = (0..p.tensors.len())
        .map(|i| error_of.get(&i).copied())
        .collect();
    let total_error = errors.iter().flatten().sum();
    // The mix's type and metric error per budgeted tensor, to show beside the choice.
    let mut mix: Vec<Option<(GgmlType, f64)>> = vec![None; p.tensors.len()];
    if let Some(r) = &weighed.reference {
        for ((i, types, options), &k) in weighed.budgeted.iter().zip(r) {
            if let Some(slot) = mix.get_mut(*i) {
                *slot = Some((types[k], options[k].error));
            }
        }
    }
    let mix_total = weighed
        .reference
        .as_ref()
        .map(|_| mix.iter().flatten().map(|(_, e)| e).sum());
    let reference = weighed.reference.as_ref().map(|r| ReferenceComparison {
        ftype: opts.ftype.name,
        fits: picks.reference_fits,
        reference_error: weighed.compare_total(r),
        error: weighed.compare_total(&picks.picks),
    });
    Ok(BudgetPlan {
        reference,
        plan: p,
        errors,
        total_error,
        file_size,
        weighted,
        metric: budget.metric,
        target: budget.target,
        slack: picks.slack,
        mix,
        mix_total,
        mix_as_is: picks.mix_as_is,
    })
}

/// Phase 1: refuses options the budget cannot work with.
fn check_budget(opts: &QuantizeOptions, budget: &BudgetOptions) -> Result<(), BudgetError> {
    if !opts.ftype.default_type.is_some_and(|t| t.is_quantized()) {
        return Err(BudgetError::BaseNotQuantized(opts.ftype.name));
    }
    if let Target::Bpw(b) = budget.target {
        if !(b.is_finite() && b > 0.0) {
            return Err(BudgetError::BadBpw(b));
        }
    }
    if let Some(w) = budget.expert_weight {
        if !(w.is_finite() && w > 0.0) {
            return Err(BudgetError::BadExpertWeight(w));
        }
    }
    if !(0.0..=1.0).contains(&budget.output_exponent) {
        return Err(BudgetError::BadExponent(budget.output_exponent));
    }
    if budget.candidates.is_empty() {
        return Err(BudgetError::NoCandidates);
    }
    if let Some(&t) = budget
        .candidates
        .iter()
        .find(|t| traits(**t).quantize.is_none())
    {
        return Err(BudgetError::BadCandidate(t));
    }
    Ok(())
}

/// What weighs the measured errors besides the metric: the imatrix, the typical column
/// importance (for tensors the imatrix has no entry for), and the share of the routed
/// experts a token uses.
struct Weighting<'a> {
    imatrix: Option<&'a Imatrix>,
    mean_importance: f64,
    routed_share: f64,
}

impl<'a> Weighting<'a> {
    fn new(input: &Model, opts: &'a QuantizeOptions, budget: &BudgetOptions) -> Self {
        let imatrix = opts
            .imatrix
            .as_ref()
            .map(|(_, im)| im)
            .filter(|im| !im.entries.is_empty());
        let mean_importance = imatrix.map_or(1.0, |im| {
            let means: Vec<f64> = im
                .entries
                .values()
                .filter(|v| !v.is_empty())
                .map(|v| v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64)
                .collect();
            if means.is_empty() {
                1.0
            } else {
                means.iter().sum::<f64>() / means.len() as f64
            }
        });
        let md = &input.metadata;
        let arch = md.get_str(keys::general::ARCHITECTURE).unwrap_or("");
        let n_expert = meta_int(md, &keys::arch_key(arch, keys::llm::EXPERT_COUNT)).unwrap_or(0);
        let n_used = meta_int(md, &keys::arch_key(arch, keys::llm::EXPERT_USED_COUNT)).unwrap_or(0);
        let routed_share = match budget.expert_weight {
            Some(w) => w,
            None if n_expert > 0 && n_used > 0 && n_used <= n_expert => {
                n_used as f64 / n_expert as f64
            }
            None => 1.0,
        };
        Weighting {
            imatrix,
            mean_importance,
            routed_share,
        }
    }
}

/// Phase 3: the base plan's metadata with the `ggufkit.quantize.*` keys that record the
/// budget, the tool, the metric and the candidates.
fn budget_metadata(
    base: &QuantizePlan,
    opts: &QuantizeOptions,
    budget: &BudgetOptions,
    weighted: bool,
) -> Metadata {
    let mut metadata = base.model.metadata.clone();
    metadata.set_last(keys::ggufkit::BUDGET, Value::from(budget.target.describe()));
    metadata.set_last(
        keys::ggufkit::TOOL,
        Value::from(format!(
            "ggufkit gguf-quantize {}",
            env!("CARGO_PKG_VERSION")
        )),
    );
    let mut metric = budget.metric.name(weighted).to_string();
    if budget.metric == Metric::Output && budget.output_exponent != 1.0 {
        metric = format!(
            "{metric}^{a} x {}^{}",
            Metric::Absolute.name(weighted),
            1.0 - budget.output_exponent,
            a = budget.output_exponent
        );
    }
    if let Some(w) = budget.expert_weight {
        metric = format!("{metric} (expert weight {w})");
    }
    // The mix can be an anchor when each tensor the budget types has its mix type among
    // the candidates.
    let mix_measured = base.tensors.iter().filter(|t| t.by_rules).all(|t| {
        let ne0 = t.dims.first().copied().unwrap_or(1);
        resolve_candidates(ne0, &budget.candidates, weighted).contains(&t.to)
    });
    if budget.anchor.on_mix(weighted) && mix_measured {
        metric = format!(
            "{metric}; anchored on {}'s mix where it fits",
            opts.ftype.name
        );
    } else if budget.reference_cap {
        metric = format!(
            "{metric}; total error at most {}'s where the budget allows",
            opts.ftype.name
        );
    }
    metadata.set_last(keys::ggufkit::METRIC, Value::from(metric));
    let names: Vec<&str> = budget.candidates.iter().map(|t| t.name()).collect();
    metadata.set_last(keys::ggufkit::CANDIDATES, Value::from(names.join(",")));
    metadata
}

/// Phase 4: the bytes of the tensors the budget does not type, and the measurements of
/// those it does.
fn measure_all(
    base: &QuantizePlan,
    by_name: &HashMap<&str, &Tensor>,
    imatrix: Option<&Imatrix>,
    budget: &BudgetOptions,
    cost: &CostFn<'_>,
) -> Result<(u64, Vec<Measured>), BudgetError> {
    let mut fixed: u64 = 0;
    let mut measured: Vec<Measured> = Vec::new();
    for (i, tp) in base.tensors.iter().enumerate() {
        if !tp.by_rules {
            fixed = fixed.saturating_add(cost(tp.to, &tp.dims, &tp.name)?);
            continue;
        }
        measured.push(measure_planned(i, tp, by_name, imatrix, budget, cost)?);
    }
    Ok((fixed, measured))
}

/// Phase 5, for [`Metric::Output`] and [`Metric::Kld`]: the output power of every tensor a
/// budgeted one may feed and of every tensor adding to the residual stream, and the input
/// embedding's mean row power (empty for the other metrics).
#[derive(Default)]
struct Signals {
    /// Output power by tensor name.
    by_name: HashMap<String, f64>,
    /// The embedding's mean row power.
    embedding: f64,
    /// The output projection is the embedding (no logits tensor of its own).
    tied: bool,
    /// `Σ g²` of each sub-block's post-norm ([`post_norm_of`]).
    post_norms: HashMap<(u64, u8), f64>,
}

impl Signals {
    fn measure(
        base: &QuantizePlan,
        measured: &[Measured],
        by_name: &HashMap<&str, &Tensor>,
        imatrix: Option<&Imatrix>,
        budget: &BudgetOptions,
    ) -> Result<Signals, BudgetError> {
        let mut out = Signals::default();
        if !matches!(budget.metric, Metric::Output | Metric::Kld) {
            return Ok(out);
        }
        let signals = &mut out.by_name;
        let mut wanted: std::collections::HashSet<String> = Default::default();
        for m in measured {
            if let Role::Feeds(c) = role(&base.tensors[m.index].name) {
                wanted.insert(c);
            }
        }
        out.tied = !base.tensors.iter().any(|t| role(&t.name) == Role::Logits);
        for m in measured {
            signals.insert(base.tensors[m.index].name.clone(), m.signal);
        }
        for tp in &base.tensors {
            if let Some(at) = post_norm_of(&tp.name) {
                if let Some(src) = by_name.get(tp.source.as_str()) {
                    let (_, g2) =
                        measure_with_signal(src, None, &[], Sampling::ALL).map_err(|problem| {
                            BudgetError::Measure {
                                tensor: tp.name.clone(),
                                problem,
                            }
                        })?;
                    out.post_norms.insert(at, g2);
                }
                continue;
            }
            let r = role(&tp.name);
            let needed = wanted.contains(&tp.name)
                || writes_residual(&tp.name).is_some()
                || r == Role::Embedding;
            if !needed || signals.contains_key(&tp.name) {
                continue;
            }
            if let Some(src) = by_name.get(tp.source.as_str()) {
                let im = imatrix_entry(imatrix, tp, src);
                let (_, s) =
                    measure_with_signal(src, im, &[], budget.sampling).map_err(|problem| {
                        BudgetError::Measure {
                            tensor: tp.name.clone(),
                            problem,
                        }
                    })?;
                signals.insert(tp.name.clone(), s);
            }
        }
        if let Some(tp) = base
            .tensors
            .iter()
            .find(|t| role(&t.name) == Role::Embedding)
        {
            let rows = tp.dims.get(1).copied().unwrap_or(1).max(1) as f64;
            let n_embd = tp.dims.first().copied().unwrap_or(1);
            out.embedding = out.by_name.get(&tp.name).copied().unwrap_or(0.0) / rows
                * embedding_power_scale(&base.model.metadata, n_embd);
        }
        Ok(out)
    }
}

/// The budgeted tensors' options, weighted by the metric.
struct Weighed {
    /// Per budgeted tensor: its index in the plan, its candidate types and their options.
    budgeted: Vec<(usize, Vec<GgmlType>, Vec<Choice>)>,
    /// Per budgeted tensor: each option's error as `gguf-inspect compare` totals it (tensors
    /// without an imatrix entry do not count in an imatrix-weighted total).
    compare_errors: Vec<Vec<f64>>,
    /// Per budgeted tensor, the option llama-quantize's mix of the base type picks, when
    /// every one of them is a candidate.
    reference: Option<Vec<usize>>,
}

impl Weighed {
    /// The options' curves, as the allocator takes them.
    fn curves(&self) -> Vec<Vec<Choice>> {
        self.budgeted.iter().map(|(_, _, o)| o.clone()).collect()
    }

    /// The `gguf-inspect compare` total of the options `picks`.
    fn compare_total(&self, picks: &[usize]) -> f64 {
        picks
            .iter()
            .zip(&self.compare_errors)
            .map(|(&k, e)| e[k])
            .sum()
    }
}

/// Phase 6: every budgeted tensor's options, errors weighted by the metric.
fn weigh(
    base: &QuantizePlan,
    measured: Vec<Measured>,
    signals: &Signals,
    weighting: &Weighting,
    budget: &BudgetOptions,
) -> Weighed {
    let gains = ResidualGains::with_post_norms(
        signals.embedding,
        &signals.by_name,
        weighting.routed_share,
        &signals.post_norms,
    );
    let weighted = weighting.imatrix.is_some();
    let mut budgeted = Vec::new();
    let mut compare_errors = Vec::new();
    let mut reference: Vec<Option<usize>> = Vec::new();
    for m in measured {
        let tp = &base.tensors[m.index];
        let counted = !weighted || m.weighted;
        compare_errors.push(
            m.errors
                .iter()
                .map(|&e| if counted { e } else { 0.0 })
                .collect(),
        );
        reference.push(m.types.iter().position(|&t| t == tp.to));
        let mut w = metric_weight(&m, &tp.name, signals, &gains, weighting, budget);
        if m.matrices > 1 {
            w *= weighting.routed_share;
        }
        let options = m
            .costs
            .iter()
            .zip(&m.errors)
            .map(|(&cost, &e)| Choice { cost, error: e * w })
            .collect();
        budgeted.push((m.index, m.types, options));
    }
    Weighed {
        budgeted,
        compare_errors,
        reference: reference.into_iter().collect(),
    }
}

/// The weight the metric gives the squared error of tensor `name`.
fn metric_weight(
    m: &Measured,
    name: &str,
    signals: &Signals,
    gains: &ResidualGains,
    weighting: &Weighting,
    budget: &BudgetOptions,
) -> f64 {
    let unweighted_in_weighted = weighting.imatrix.is_some() && !m.weighted;
    match budget.metric {
        Metric::Kld => {
            let out = output_weight(
                name,
                m.signal,
                m.rows,
                &signals.by_name,
                gains,
                signals.tied,
            );
            match role(name) {
                Role::Embedding | Role::Logits => out * EMBEDDING_OUTPUT_FACTOR,
                _ => out,
            }
        }
        Metric::Output => {
            let a = budget.output_exponent;
            let out = output_weight(
                name,
                m.signal,
                m.rows,
                &signals.by_name,
                gains,
                signals.tied,
            );
            let abs = if unweighted_in_weighted {
                weighting.mean_importance
            } else {
                1.0
            };
            if a == 1.0 {
                out
            } else {
                out.powf(a) * abs.powf(1.0 - a)
            }
        }
        Metric::Relative if m.signal > 0.0 => m.n_elements as f64 / m.signal,
        Metric::Relative => 1.0,
        Metric::Absolute if unweighted_in_weighted => weighting.mean_importance,
        Metric::Absolute => 1.0,
    }
}

/// The allocation: an option per budgeted tensor, and whether llama-quantize's mix fits.
struct Allocation {
    picks: Vec<usize>,
    reference_fits: bool,
    /// Bytes left unused beyond the tolerance, and why.
    slack: Option<Slack>,
    /// The picks are llama-quantize's mix, to be written as it is, without our keys
    /// ([`BudgetPlan::mix_as_is`]).
    mix_as_is: bool,
}

/// The error of a budget no choice fits: the budget in its own units and the bytes (or bits'
/// worth of bytes) the cheapest choice of every budgeted tensor needs beside the fixed ones.
fn too_small(
    curves: &[Vec<Choice>],
    base: &QuantizePlan,
    base_layout: &Layout,
    fixed: u64,
    budget: &BudgetOptions,
) -> BudgetError {
    let (budget_units, extra) = match budget.target {
        Target::Size(s) => (s, base_layout.data_offset()),
        Target::Bpw(b) => ((b * base.n_elements() as f64 / 8.0) as u64, 0),
    };
    let smallest = curves
        .iter()
        .map(|o| o.iter().map(|c| c.cost).min().unwrap_or(0))
        .sum::<u64>()
        .saturating_add(fixed);
    BudgetError::TooSmall {
        budget: budget_units,
        needed: smallest.saturating_add(extra),
    }
}

/// Phase 7: the bytes the budgeted tensors may use (the budget less the header and the
/// fixed tensors), and the options picked within them; with `reference_cap`, the total
/// error is capped at the reference mix's where the budget allows.
fn allocate_within(
    weighed: &Weighed,
    base: &QuantizePlan,
    base_layout: &Layout,
    fixed: u64,
    budget: &BudgetOptions,
    weighted: bool,
) -> Result<Allocation, BudgetError> {
    let curves = weighed.curves();
    let too_small = || too_small(&curves, base, base_layout, fixed, budget);
    let limit = match budget.target {
        Target::Size(s) => s.checked_sub(base_layout.data_offset().saturating_add(fixed)),
        Target::Bpw(b) => {
            let n: u64 = base.n_elements();
            ((b * n as f64 / 8.0).floor() as u64).checked_sub(fixed)
        }
    };
    let Some(limit) = limit else {
        return Err(too_small());
    };
    let reference_bytes = weighed
        .reference
        .as_ref()
        .map(|r| r.iter().zip(&curves).map(|(&k, o)| o[k].cost).sum::<u64>());
    let reference_fits = reference_bytes.is_some_and(|b| b <= limit);
    // What our `ggufkit.quantize.*` keys add to llama-quantize's header: a mix that misses the
    // limit by no more than that would fit in a file llama-quantize wrote.
    let our_keys = match budget.target {
        Target::Size(_) => layout(&base.model.metadata, &base.model.headers())
            .map(|l| base_layout.data_offset().saturating_sub(l.data_offset()))
            .unwrap_or(0),
        Target::Bpw(_) => 0,
    };
    let reference_near = reference_bytes.is_some_and(|b| b <= limit.saturating_add(our_keys));
    if let Some(r) = weighed
        .reference
        .as_ref()
        .filter(|_| budget.anchor.on_mix(weighted) && reference_near && !reference_fits)
    {
        // The mix fits only without our keys: it is kept as llama-quantize writes it rather
        // than made worse by the downgrade that would pay for them.
        return Ok(Allocation {
            picks: r.clone(),
            reference_fits: true,
            slack: None,
            mix_as_is: true,
        });
    }
    let on_mix = weighed
        .reference
        .as_ref()
        .filter(|_| budget.anchor.on_mix(weighted) && reference_near)
        .and_then(|r| anchored(&curves, r, limit, ANCHOR_MARGIN));
    let picks = match (on_mix, &weighed.reference) {
        (Some(c), _) => Ok(c),
        (None, Some(r)) if budget.reference_cap => allocate_capped(
            &curves,
            &weighed.compare_errors,
            weighed.compare_total(r),
            limit,
            reference_fits.then_some(r.as_slice()),
            reference_near,
        ),
        _ => allocate(&curves, limit),
    };
    let mut picks = picks.map_err(|e| match e {
        BudgetError::TooSmall { .. } => too_small(),
        e => e,
    })?;
    // The bytes the allocation left: spent on upgrades that lower the metric without raising
    // the capped total (an allocation held by the cap leaves tensors the capped total does
    // not count at their cheapest type).
    let spend = |picks: &mut Vec<usize>| -> u64 {
        let used: u64 = picks.iter().zip(&curves).map(|(&k, o)| o[k].cost).sum();
        fill(
            &curves,
            &weighed.compare_errors,
            picks,
            limit.saturating_sub(used),
        )
    };
    let mut unused = spend(&mut picks);
    // A free allocation never keeps a choice its own estimate rates worse than
    // llama-quantize's mix at the budget's size: then the mix is kept (as it is when only our
    // keys keep it from fitting, else with the bytes left spent). On weights that lie on a
    // quantization grid (a dequantized quant) the mix's types can reproduce them almost
    // exactly, and a cap the mix alone meets leaves the rest of the allocation to tensors the
    // capped total does not count.
    let metric_total =
        |p: &[usize]| -> f64 { p.iter().zip(&curves).map(|(&k, o)| o[k].error).sum() };
    if let Some(r) = weighed.reference.as_ref().filter(|_| reference_near) {
        if metric_total(r) < metric_total(&picks) {
            if !reference_fits {
                return Ok(Allocation {
                    picks: r.clone(),
                    reference_fits: true,
                    slack: None,
                    mix_as_is: true,
                });
            }
            picks = r.clone();
            unused = spend(&mut picks);
        }
    }
    let budget_bytes = match budget.target {
        Target::Size(s) => s,
        Target::Bpw(b) => (b * base.n_elements() as f64 / 8.0) as u64,
    };
    Ok(Allocation {
        slack: slack(&curves, &picks, unused, budget_bytes),
        picks,
        reference_fits,
        mix_as_is: false,
    })
}

/// Phase 8: the plan made again with the picked types (by input tensor name), its metadata
/// `metadata` with `general.file_type` of the most common quantized type (by elements); and
/// each budgeted tensor's weighted error, by plan index.
fn replan(
    input: &Model,
    opts: &QuantizeOptions,
    base: &QuantizePlan,
    weighed: &Weighed,
    picks: &[usize],
    mut metadata: Metadata,
) -> Result<(QuantizePlan, HashMap<usize, f64>), BudgetError> {
    let mut chosen: HashMap<String, GgmlType> = HashMap::new();
    let mut error_of: HashMap<usize, f64> = HashMap::new();
    for ((i, types, options), &k) in weighed.budgeted.iter().zip(picks) {
        chosen.insert(base.tensors[*i].source.clone(), types[k]);
        error_of.insert(*i, options[k].error);
    }
    let mut final_opts = opts.clone();
    final_opts.chosen_types = Some(Arc::new(chosen));
    let mut p = plan(input, &final_opts)?;
    let mut by_type: Vec<(GgmlType, u64)> = Vec::new();
    for t in p.tensors.iter().filter(|t| t.to.is_quantized()) {
        let n: u64 = t.dims.iter().product();
        match by_type.iter_mut().find(|(ty, _)| *ty == t.to) {
            Some((_, c)) => *c += n,
            None => by_type.push((t.to, n)),
        }
    }
    if let Some((ty, _)) = by_type.iter().max_by_key(|(_, n)| *n) {
        metadata.set_last(
            keys::general::FILE_TYPE,
            Value::U32(FileType::for_tensor_type(*ty)),
        );
    }
    p.model.metadata = metadata;
    Ok((p, error_of))
}

/// What a tensor of a type and shape costs in the budget's units.
type CostFn<'a> = dyn Fn(GgmlType, &[u64], &str) -> Result<u64, BudgetError> + 'a;

/// One budgeted tensor's measurements, before the metric weighs them.
struct Measured {
    /// Its index in the plan.
    index: usize,
    /// The resolved candidate types.
    types: Vec<GgmlType>,
    /// Each type's cost.
    costs: Vec<u64>,
    /// Each type's (imatrix-weighted) squared error.
    errors: Vec<f64>,
    /// `Σ w·x²` with the same weights.
    signal: f64,
    /// Its elements.
    n_elements: u64,
    /// Rows per matrix.
    rows: u64,
    /// Matrices (experts).
    matrices: u64,
    /// The errors are imatrix-weighted.
    weighted: bool,
}

/// The imatrix entry of a planned tensor, when it has one of the right length.
fn imatrix_entry<'a>(
    imatrix: Option<&'a super::Imatrix>,
    tp: &TensorPlan,
    src: &Tensor,
) -> Option<&'a [f32]> {
    let ne0 = src.dims.first().copied().unwrap_or(1);
    let ne2 = src.dims.get(2).copied().unwrap_or(1);
    imatrix
        .and_then(|im| im.entries.get(tp.source.as_str()))
        .filter(|v| v.len() as u64 == ne0 * ne2)
        .map(|v| v.as_slice())
}

/// The resolved candidate types of one planned tensor, their costs and errors.
fn measure_planned(
    index: usize,
    tp: &TensorPlan,
    by_name: &HashMap<&str, &Tensor>,
    imatrix: Option<&super::Imatrix>,
    budget: &BudgetOptions,
    cost: &CostFn<'_>,
) -> Result<Measured, BudgetError> {
    let src = by_name
        .get(tp.source.as_str())
        .ok_or_else(|| BudgetError::NoCandidate(tp.name.clone()))?;
    let ne0 = src.dims.first().copied().unwrap_or(1);
    let im = imatrix_entry(imatrix, tp, src);
    let types = resolve_candidates(ne0, &budget.candidates, im.is_some());
    if types.is_empty() {
        return Err(BudgetError::NoCandidate(tp.name.clone()));
    }
    let (errors, signal) =
        measure_with_signal(src, im, &types, budget.sampling).map_err(|problem| {
            BudgetError::Measure {
                tensor: tp.name.clone(),
                problem,
            }
        })?;
    let costs = types
        .iter()
        .map(|t| cost(*t, &src.dims, &tp.name))
        .collect::<Result<Vec<u64>, BudgetError>>()?;
    Ok(Measured {
        index,
        types,
        costs,
        errors,
        signal,
        n_elements: src.n_elements(),
        rows: src.dims.get(1).copied().unwrap_or(1).max(1),
        matrices: src.dims.get(2).copied().unwrap_or(1),
        weighted: im.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_and_decimal_suffixes() {
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert_eq!(parse_size("3.2G").unwrap(), (3.2f64 * 1073741824.0) as u64);
        assert_eq!(parse_size("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("1.5 MB").unwrap(), 1_500_000);
        assert_eq!(parse_size("10m").unwrap(), 10 << 20);
        assert_eq!(parse_size("7KB").unwrap(), 7000);
        for bad in ["", "G", "1.2.3G", "5X", "-3G", "0"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sampled_rows_are_spread_and_deterministic() {
        let at_most = Sampling::at_most;
        assert_eq!(sample_rows(4, 8, Sampling::ALL), vec![0, 1, 2, 3]);
        assert_eq!(sample_rows(4, 8, at_most(1000)), vec![0, 1, 2, 3]);
        // A cap below the floor wins; at least one row.
        assert_eq!(sample_rows(10, 8, at_most(40)), vec![0, 2, 4, 6, 8]);
        assert_eq!(sample_rows(10, 8, at_most(3)), vec![0]);
        // The default share: a hundredth of the rows, at least 4096 elements' worth.
        let d = Sampling::default();
        // 64 rows of 64: 4096 elements, the floor: every row.
        assert_eq!(sample_rows(64, 64, d), (0..64).collect::<Vec<_>>());
        // 512 rows of 512: a hundredth is 6 rows, the floor 8.
        assert_eq!(
            sample_rows(512, 512, d),
            (0..8).map(|i| i * 64).collect::<Vec<_>>()
        );
        // 14336 rows of 4096: a hundredth, 144 rows, under the 1 Mi cap (256 rows).
        let rows = sample_rows(14336, 4096, d);
        assert_eq!(rows.len(), 144);
        assert_eq!(rows, sample_rows(14336, 4096, d));
        // 262144 rows of 640: a hundredth (2622 rows) is over the cap (1638 rows).
        assert_eq!(sample_rows(262144, 640, d).len(), (1 << 20) / 640);
        // A share out of range measures every row up to the cap.
        let odd = Sampling {
            max_elements: 1 << 20,
            share: 0.0,
        };
        assert_eq!(sample_rows(100, 64, odd).len(), 100);
    }

    fn c(cost: u64, error: f64) -> Choice {
        Choice { cost, error }
    }

    /// Exhaustive optimum, for small cases.
    fn brute(t: &[Vec<Choice>], limit: u64) -> f64 {
        fn go(t: &[Vec<Choice>], i: usize, left: u64) -> f64 {
            if i == t.len() {
                return 0.0;
            }
            t[i].iter()
                .filter(|o| o.cost <= left)
                .map(|o| o.error + go(t, i + 1, left - o.cost))
                .fold(f64::INFINITY, f64::min)
        }
        go(t, 0, limit)
    }

    #[test]
    fn allocation_respects_the_budget_and_is_near_optimal() {
        // Deterministic pseudo-random convex-ish curves.
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        for _case in 0..40 {
            let t: Vec<Vec<Choice>> = (0..5)
                .map(|_| {
                    let scale = 1.0 + 10.0 * rnd();
                    [34u64, 44, 52, 60, 68, 84]
                        .iter()
                        .map(|&b| {
                            c(
                                b,
                                scale * (2f64).powf(-(b as f64) / 8.0) * (0.9 + 0.2 * rnd()),
                            )
                        })
                        .collect()
                })
                .collect();
            let min: u64 = t
                .iter()
                .map(|o| o.iter().map(|c| c.cost).min().unwrap())
                .sum();
            for limit in [min, min + 17, min + 40, min + 80, min + 400] {
                let pick = allocate(&t, limit).unwrap();
                let cost: u64 = pick.iter().zip(&t).map(|(&k, o)| o[k].cost).sum();
                let err: f64 = pick.iter().zip(&t).map(|(&k, o)| o[k].error).sum();
                assert!(cost <= limit, "cost {cost} > limit {limit}");
                let best = brute(&t, limit);
                assert!(err <= best * 1.01 + 1e-12, "err {err} vs optimum {best}");
            }
        }
        // One large tensor dominates: the greedy walk would upgrade the small one first and
        // then lack the bytes for the large one's step.
        let a = vec![c(100, 10.0), c(190, 0.0)];
        let b = vec![c(10, 3.0), c(20, 1.0)];
        assert_eq!(allocate(&[a, b], 200).unwrap(), vec![1, 0]);
        assert!(matches!(
            allocate(&[vec![c(10, 1.0)], vec![c(10, 1.0)]], 19),
            Err(BudgetError::TooSmall {
                budget: 19,
                needed: 20
            })
        ));
    }

    /// A deterministic ~N(0, scale) matrix with an outlier column, as an F32 tensor.
    fn matrix(name: &str, ne0: usize, ne1: usize, scale: f32, seed: u64) -> Tensor {
        let mut s = seed | 1;
        let mut bytes = Vec::with_capacity(ne0 * ne1 * 4);
        for i in 0..ne0 * ne1 {
            let mut acc = 0f32;
            for _ in 0..4 {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                acc += (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            }
            let col = if i % ne0 == 3 { 8.0 } else { 1.0 };
            bytes.extend((acc * scale * col).to_le_bytes());
        }
        Tensor {
            name: name.into(),
            dims: vec![ne0 as u64, ne1 as u64],
            ty: GgmlType::F32,
            data: TensorData::Owned(std::sync::Arc::new(bytes)),
        }
    }

    #[test]
    fn budget_beats_a_fixed_type_at_the_same_size() {
        // Two tensors of the same shape, one 30 times larger: a fixed Q4_K for both spends
        // as many bytes on the small one as on the large one.
        let types = resolve_candidates(256, DEFAULT_CANDIDATES, false);
        let t = [
            matrix("a", 256, 16, 1.0, 1),
            matrix("b", 256, 16, 1.0 / 30.0, 2),
        ];
        let curves: Vec<Vec<Choice>> = t
            .iter()
            .map(|t| {
                let e = measure(t, None, &types, Sampling::ALL).unwrap();
                types
                    .iter()
                    .zip(e)
                    .map(|(ty, error)| Choice {
                        cost: tensor_nbytes(*ty, &t.dims).unwrap(),
                        error,
                    })
                    .collect()
            })
            .collect();
        let q4 = types.iter().position(|t| *t == GgmlType::Q4_K).unwrap();
        let fixed_cost: u64 = curves.iter().map(|c| c[q4].cost).sum();
        let fixed_error: f64 = curves.iter().map(|c| c[q4].error).sum();
        let pick = allocate(&curves, fixed_cost).unwrap();
        let cost: u64 = pick.iter().zip(&curves).map(|(&k, c)| c[k].cost).sum();
        let error: f64 = pick.iter().zip(&curves).map(|(&k, c)| c[k].error).sum();
        assert!(cost <= fixed_cost);
        assert!(
            error < 0.5 * fixed_error,
            "budget {error} vs fixed q4_k {fixed_error} ({:?})",
            pick.iter().map(|&k| types[k]).collect::<Vec<_>>()
        );
        // The large tensor gets more bits than the small one.
        assert!(curves[0][pick[0]].cost > curves[1][pick[1]].cost);
    }

    #[test]
    fn sampled_rows_keep_the_ranking_and_the_scale() {
        let types = resolve_candidates(256, DEFAULT_CANDIDATES, false);
        let t = matrix("a", 256, 64, 1.0, 3);
        let full = measure(&t, None, &types, Sampling::ALL).unwrap();
        let sampled = measure(&t, None, &types, Sampling::at_most(256 * 16)).unwrap();
        let rank = |e: &[f64]| {
            let mut i: Vec<usize> = (0..e.len()).collect();
            i.sort_by(|&a, &b| e[a].total_cmp(&e[b]));
            i
        };
        assert_eq!(rank(&full), rank(&sampled));
        for (f, s) in full.iter().zip(&sampled) {
            assert!((s / f - 1.0).abs() < 0.25, "{s} vs {f}");
        }
        // The imatrix weights the columns: all weight on column 3 (the outlier column).
        let mut im = vec![0f32; 256];
        im[3] = 1.0;
        let w = measure(&t, Some(&im), &[GgmlType::Q8_0], Sampling::ALL).unwrap();
        assert!(w[0] > 0.0 && w[0] < full[types.len() - 1]);
    }

    #[test]
    fn candidates_follow_the_row_fallback() {
        // 96 columns: k-quants fall back (Q4_K → Q5_0, Q6_K → Q8_0 …), IQ4_XS → IQ4_NL.
        let c = resolve_candidates(96, DEFAULT_CANDIDATES, false);
        assert!(c.iter().all(|t| 96 % t.block_size() == 0), "{c:?}");
        assert!(c.contains(&GgmlType::Q5_0) && c.contains(&GgmlType::IQ4_NL));
        // Types that need an imatrix are only candidates with one.
        assert!(resolve_candidates(256, &[GgmlType::IQ2_XS], false).is_empty());
        assert_eq!(
            resolve_candidates(256, &[GgmlType::IQ2_XS], true),
            vec![GgmlType::IQ2_XS]
        );
    }

    #[test]
    fn roles_follow_the_tensor_names() {
        assert_eq!(role("token_embd.weight"), Role::Embedding);
        assert_eq!(role("output.weight"), Role::Logits);
        assert_eq!(role("blk.3.attn_output.weight"), Role::Residual);
        assert_eq!(role("blk.3.ffn_down.weight"), Role::Residual);
        for (name, consumer) in [
            ("blk.3.attn_q.weight", "blk.3.attn_output.weight"),
            ("blk.3.attn_k.weight", "blk.3.attn_output.weight"),
            ("blk.3.attn_v.weight", "blk.3.attn_output.weight"),
            ("blk.3.attn_qkv.weight", "blk.3.attn_output.weight"),
            ("blk.3.ffn_up.weight", "blk.3.ffn_down.weight"),
            ("blk.12.ffn_gate.weight", "blk.12.ffn_down.weight"),
            ("blk.0.ffn_up_exps.weight", "blk.0.ffn_down_exps.weight"),
            ("blk.0.ffn_gate_shexp.weight", "blk.0.ffn_down_shexp.weight"),
        ] {
            assert_eq!(role(name), Role::Feeds(consumer.into()), "{name}");
        }
        // The router and unknown tensors are taken to write the residual stream.
        assert_eq!(role("blk.0.ffn_gate_inp.weight"), Role::Residual);
        assert_eq!(role("blk.0.ssm_out.weight"), Role::Residual);
        assert_eq!(writes_residual("blk.0.ffn_down_exps.weight"), Some((0, 1)));
        assert_eq!(writes_residual("blk.11.attn_output.weight"), Some((11, 0)));
        assert_eq!(writes_residual("blk.1.attn_v.weight"), None);
        assert_eq!(writes_residual("output.weight"), None);
    }

    fn signals(list: &[(&str, f64)]) -> HashMap<String, f64> {
        list.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    #[test]
    fn the_lagrangian_bound_lies_below_every_choice_within_the_limit() {
        let mut seed = 777u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        for _case in 0..40 {
            let t: Vec<Vec<Choice>> = (0..5)
                .map(|_| {
                    let scale = 1.0 + 10.0 * rnd();
                    let size = 1 + (rnd() * 8.0) as u64;
                    [34u64, 44, 52, 60, 68, 84]
                        .iter()
                        .map(|&b| c(b * size, scale * (2f64).powf(-(b as f64) / 8.0)))
                        .collect()
                })
                .collect();
            let min: u64 = t.iter().map(|o| o[0].cost).sum();
            for extra in [0, 17, 40, 80, 400, 4000] {
                let (walk, bound) = greedy(&t, extra);
                let err: f64 = walk.iter().zip(&t).map(|(&k, o)| o[k].error).sum();
                let best = brute(&t, min + extra);
                assert!(
                    bound <= best + 1e-9,
                    "bound {bound} above the optimum {best}"
                );
                assert!(best <= err + 1e-9);
                // The allocation, programme run or skipped by the bound, stays near it.
                let pick = allocate(&t, min + extra).unwrap();
                let got: f64 = pick.iter().zip(&t).map(|(&k, o)| o[k].error).sum();
                assert!(got <= best * 1.01 + 1e-9, "{got} vs optimum {best}");
            }
        }
    }

    #[test]
    fn a_post_norm_makes_its_writers_error_relative() {
        let s = signals(&[
            ("blk.0.attn_output.weight", 2.0),
            ("blk.0.ffn_down.weight", 4.0),
            ("blk.1.attn_output.weight", 3.0),
        ]);
        // blk.0's feed-forward output is normalised with Σg² = 100: it adds 100 to the
        // stream, and an error in ffn_down's output (power 4) reaches it as 100 / 4 times.
        let post: HashMap<(u64, u8), f64> = [((0, 1), 100.0)].into_iter().collect();
        let g = ResidualGains::with_post_norms(1.0, &s, 1.0, &post);
        // Powers before the sub-blocks: 1, 3, 103; end 106.
        let end = 1.0 / 106.0;
        assert_eq!(g.end, end);
        assert_eq!(g.writers["blk.1.attn_output.weight"], end);
        let after_ffn0 = end * (1.0 + 3.0 / 103.0);
        assert_eq!(g.writers["blk.0.ffn_down.weight"], after_ffn0 * 100.0 / 4.0);
        let attn0 = after_ffn0 * (1.0 + 100.0 / 3.0);
        assert_eq!(g.writers["blk.0.attn_output.weight"], attn0);
        assert_eq!(g.embedding, attn0 * (1.0 + 2.0 / 1.0));
        // Without post-norms, as before.
        assert_eq!(
            ResidualGains::with_post_norms(1.0, &s, 1.0, &HashMap::new()),
            ResidualGains::new(1.0, &s, 1.0)
        );
        assert_eq!(
            post_norm_of("blk.3.post_attention_norm.weight"),
            Some((3, 0))
        );
        assert_eq!(post_norm_of("blk.3.post_ffw_norm.weight"), Some((3, 1)));
        assert_eq!(post_norm_of("blk.3.ffn_norm.weight"), None);
    }

    #[test]
    fn the_embedding_scale_comes_from_the_metadata_or_the_architecture() {
        let md = |arch: &str, scale: Option<f32>| {
            let mut m = Metadata::default();
            m.set_last(keys::general::ARCHITECTURE, Value::from(arch.to_string()));
            if let Some(s) = scale {
                m.set_last(
                    keys::arch_key(arch, keys::llm::EMBEDDING_SCALE),
                    Value::F32(s),
                );
            }
            m
        };
        assert_eq!(embedding_power_scale(&md("llama", None), 640), 1.0);
        assert_eq!(embedding_power_scale(&md("gemma3", None), 640), 640.0);
        assert_eq!(
            embedding_power_scale(&md("granite", Some(12.0)), 640),
            144.0
        );
    }

    #[test]
    fn residual_gains_grow_towards_the_start_of_the_stream() {
        let s = signals(&[
            ("blk.0.attn_output.weight", 2.0),
            ("blk.0.ffn_down.weight", 4.0),
            ("blk.0.ffn_down_exps.weight", 8.0),
            ("blk.1.attn_output.weight", 3.0),
            ("blk.0.ffn_up.weight", 40.0),
        ]);
        // Embedding row power 1; powers before the sub-blocks: 1, 3, 3 + 4 + 8/4 = 9; end 12.
        let g = ResidualGains::new(1.0, &s, 0.25);
        let end = 1.0 / 12.0;
        assert_eq!(g.end, end);
        assert_eq!(g.writers["blk.1.attn_output.weight"], end);
        let ffn0 = end * (1.0 + 3.0 / 9.0);
        assert_eq!(g.writers["blk.0.ffn_down.weight"], ffn0);
        assert_eq!(g.writers["blk.0.ffn_down_exps.weight"], ffn0);
        let attn0 = ffn0 * (1.0 + 6.0 / 3.0);
        assert_eq!(g.writers["blk.0.attn_output.weight"], attn0);
        assert_eq!(g.embedding, attn0 * (1.0 + 2.0 / 1.0));
        assert!(!g.writers.contains_key("blk.0.ffn_up.weight"));
        let w = |name: &str, signal: f64, rows: u64, tied: bool| {
            output_weight(name, signal, rows, &s, &g, tied)
        };
        assert_eq!(w("blk.0.ffn_down.weight", 4.0, 8, false), ffn0);
        // ffn_up's relative error (error / 40) reaches the stream at ffn_down's power 4.
        assert_eq!(w("blk.0.ffn_up.weight", 40.0, 8, false), 4.0 / 40.0 * ffn0);
        assert_eq!(w("blk.0.attn_v.weight", 0.5, 8, false), 2.0 / 0.5 * attn0);
        // No consumer known: as if it wrote the end of the stream.
        assert_eq!(w("blk.7.attn_q.weight", 0.5, 8, false), end);
        // The embedding counts per token (one of its 1000 rows), plus its logits when tied.
        assert_eq!(
            w("token_embd.weight", 50.0, 1000, false),
            g.embedding / 1000.0
        );
        assert_eq!(
            w("token_embd.weight", 50.0, 1000, true),
            g.embedding / 1000.0 + 1.0 / 50.0
        );
        assert_eq!(w("output.weight", 20.0, 1000, false), 1.0 / 20.0);
        let empty = ResidualGains::new(0.0, &HashMap::new(), 1.0);
        assert!(empty.end.is_finite() && empty.embedding == empty.end);
    }

    #[test]
    fn the_output_metric_ranks_differently_from_relative_and_absolute() {
        // One upgrade fits. A = blk.0.ffn_up: signal 10, its upgrade saves 1.0 of error (10 %
        // of its signal), but it feeds a weak ffn_down (output power 0.1), so the residual
        // stream sees 1 % of 0.1. B = blk.1.attn_output: signal 1, its upgrade saves 0.05
        // (5 %), all of which goes to the residual stream. Both write at its end here (B's
        // signal is not given, so no later block amplifies ffn_down's error).
        let signals = signals(&[("blk.0.ffn_down.weight", 0.1)]);
        let g = ResidualGains::new(1.0, &signals, 1.0);
        assert_eq!(g.writers["blk.0.ffn_down.weight"], g.end);
        let n = 1000.0;
        let curves = |wa: f64, wb: f64| {
            vec![
                vec![c(10, 2.0 * wa), c(20, 1.0 * wa)],
                vec![c(10, 0.10 * wb), c(20, 0.05 * wb)],
            ]
        };
        let upgraded = |wa: f64, wb: f64| {
            let pick = allocate(&curves(wa, wb), 30).unwrap();
            if pick == [1, 0] {
                "A"
            } else {
                assert_eq!(pick, [0, 1]);
                "B"
            }
        };
        // Absolute: 1.0 > 0.05. Relative (n / signal): 100 > 50.
        assert_eq!(upgraded(1.0, 1.0), "A");
        assert_eq!(upgraded(n / 10.0, n / 1.0), "A");
        // Output: A saves 1.0 · 0.1 / 10 = 0.01 of the residual's power, B 0.05.
        let wa = output_weight("blk.0.ffn_up.weight", 10.0, 8, &signals, &g, false);
        let wb = output_weight("blk.1.attn_output.weight", 1.0, 8, &signals, &g, false);
        assert_eq!(upgraded(wa, wb), "B");
        assert_eq!(Metric::from_name("output"), Some(Metric::Output));
        assert_eq!(Metric::from_name("relative"), Some(Metric::Relative));
        assert_eq!(Metric::from_name("absolute"), Some(Metric::Absolute));
        assert_eq!(Metric::from_name("kld"), Some(Metric::Kld));
        assert_eq!(Metric::from_name("kl"), None);
        let defaults = BudgetOptions::new(Target::Bpw(4.0));
        assert_eq!(defaults.metric, Metric::Kld);
        assert!(defaults.reference_cap);
    }

    /// Two tensors, three options each; `capped` counts only the first tensor's error (as an
    /// imatrix-weighted total leaves out a tensor the imatrix has no entry for).
    fn capped_case() -> (Vec<Vec<Choice>>, Vec<Vec<f64>>) {
        let t = vec![
            vec![c(10, 4.0), c(20, 2.0), c(30, 1.0)],
            vec![c(10, 8.0), c(20, 3.0), c(30, 2.5)],
        ];
        let capped = vec![vec![4.0, 2.0, 1.0], vec![0.0, 0.0, 0.0]];
        (t, capped)
    }

    #[test]
    fn the_cap_holds_where_it_can_and_gives_way_where_it_cannot() {
        let (t, capped) = capped_case();
        let over = |p: &[usize]| -> f64 { p.iter().enumerate().map(|(i, &k)| capped[i][k]).sum() };
        let err = |p: &[usize]| -> f64 { p.iter().enumerate().map(|(i, &k)| t[i][k].error).sum() };
        // Free: within 40 bytes, the second option of each (error 5, capped total 2).
        let free = allocate(&t, 40).unwrap();
        assert_eq!(free, vec![1, 1]);
        // A cap the free choice meets changes nothing.
        assert_eq!(
            allocate_capped(&t, &capped, 2.0, 40, None, false).unwrap(),
            free
        );
        // Capped at 1.5: the first tensor needs its third option, which leaves the second
        // its first (error 9, worse than the free 5, but the only choice meeting the cap).
        let p = allocate_capped(&t, &capped, 1.5, 40, None, false).unwrap();
        assert_eq!(p, vec![2, 0]);
        assert!(over(&p) <= 1.5);
        assert_eq!(err(&p), 9.0);
        // A reference meeting both is returned when nothing better is found.
        let reference = [2usize, 0];
        let p = allocate_capped(&t, &capped, 1.5, 40, Some(&reference), false).unwrap();
        assert_eq!(p, reference);
        // Capped at 1 within 30 bytes: no choice meets it. Without `near`, the free choice;
        // with it, the least capped total.
        assert_eq!(
            allocate_capped(&t, &capped, 1.0, 30, None, false).unwrap(),
            allocate(&t, 30).unwrap()
        );
        let near = allocate_capped(&t, &capped, 1.0, 30, None, true).unwrap();
        assert_eq!(over(&near), 2.0);
        assert_eq!(near[0], 1);
    }

    #[test]
    fn the_hull_drops_dominated_and_concave_points() {
        let o = [c(10, 5.0), c(20, 1.0), c(15, 4.5), c(30, 2.0), c(25, 0.5)];
        // (15, 4.5) lies above the line from (10, 5) to (20, 1); (30, 2) is dominated.
        assert_eq!(hull(&o), vec![0, 1, 4]);
    }
}
