//! gguf-quantize: a drop-in, byte-identical llama-quantize.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;

use crate::edge::{exit_with, Failure};
use serde_json::json;

use ggufkit::inspect::human_bytes;
use ggufkit::pipeline::{self, ExecuteOptions, OutputPlan, ShardPlan, WriteOptions};
use ggufkit::progress::TensorBar;
use ggufkit::quantize::budget::{self, BudgetOptions, BudgetPlan, Metric, Target};
use ggufkit::quantize::{
    default_output_path, plan, FileType, Imatrix, KvOverride, QuantizeOptions, QuantizePlan,
    Recipe, RecipeError, TensorTypeList, FILE_TYPES,
};
use ggufkit::quantizers::GgmlType;
use ggufkit::split::{distribute, merge_shards, open_shards, open_shards_with, split_path};
use ggufkit_converters::remote::config::DEFAULT_CONNECTIONS;

use crate::remote::{gguf_opener, is_url, Transfer};

fn type_list() -> String {
    FILE_TYPES
        .iter()
        .map(|f| format!("  {:<10} {:>2}  {}", f.name, f.id, f.about))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Quantize a GGUF model, byte for byte as llama-quantize (llama.cpp 0c1e570) does.
///
/// Both llama-quantize's form and a flag form work:
///
///   gguf-quantize model-f16.gguf model-Q4_K_M.gguf Q4_K_M
///   gguf-quantize --imatrix imatrix.gguf model-f16.gguf Q4_K_M 8
///   gguf-quantize --type q4_k_m model-f16.gguf model-Q4_K_M.gguf
///
/// When OUT is omitted the output is <input dir>/ggml-model-<TYPE>.gguf. Type names are
/// case-insensitive; llama.cpp's numeric ftype ids work too. Inspect the plan first with
/// --dry-run.
///
/// An existing OUT is replaced, as llama-quantize does (use --no-clobber to refuse), always
/// through a temporary file renamed into place when complete: a failed run leaves the old file
/// untouched. A symlinked OUT replaces the file it points to; /dev/null or a FIFO is written in
/// place; OUT may not be an input (model, shard, imatrix, tensor-type file).
///
/// Budget mode (not llama-quantize's; opt-in): --target-size SIZE or --target-bpw BITS picks
/// each tensor's type among stock types (--budget-types) to minimise the total measured
/// error (imatrix-weighted with --imatrix) within the budget; TYPE is then optional (the
/// base whose rules say which tensors are quantized; default: the largest named k-quant mix
/// whose file fits the budget):
///
///   gguf-quantize --target-size 3.2G --imatrix imatrix.gguf model-f16.gguf out.gguf
///   gguf-quantize --target-bpw 4.5 --dry-run model-f16.gguf
///
/// Recipes (not llama-quantize's options): --like OTHER.gguf quantizes with another file's
/// per-tensor layout (tensors matched by name; a type whose blocks do not divide a row falls
/// back as llama-quantize's rules say, and is reported); --recipe FILE reads the layout
/// `gguf-inspect recipe` prints. TYPE is then optional (the recipe's base file type):
///
///   gguf-quantize --like upstream-Q4_K_M.gguf model-f16.gguf out.gguf
///   gguf-quantize --recipe q4_k_m.recipe model-f16.gguf out.gguf
///
/// Exit status: 0 success; 1 the quantization failed (nothing is written); 2 usage error;
/// 3 the input or imatrix could not be read.
#[derive(Parser, Debug)]
#[command(name = "gguf-quantize", version, about = "Quantize GGUF models, byte for byte as llama-quantize does", long_about, verbatim_doc_comment, after_long_help = format!("Types:\n{}", type_list()))]
struct Cli {
    /// INPUT [OUTPUT] TYPE [NTHREADS], as llama-quantize takes them (TYPE may come from --type).
    #[arg(required = true, num_args = 1..=4, value_name = "ARGS")]
    args: Vec<String>,
    /// The target type (Q4_K_M, q8_0, 15, …) instead of the positional TYPE.
    #[arg(long = "type", short = 't')]
    ftype: Option<String>,
    /// Allow inputs that are already quantized (they are dequantized first).
    #[arg(long)]
    allow_requantize: bool,
    /// Leave output.weight unquantized.
    #[arg(long)]
    leave_output_tensor: bool,
    /// No mixture rules: every quantizable tensor gets the type's default (plus fallback).
    #[arg(long)]
    pure: bool,
    /// Importance matrix: a GGUF imatrix or a legacy .dat.
    #[arg(long, value_name = "FILE")]
    imatrix: Option<PathBuf>,
    /// Use only imatrix entries whose name contains NAME (repeatable).
    #[arg(long, value_name = "NAME", conflicts_with = "exclude_weights")]
    include_weights: Vec<String>,
    /// Drop imatrix entries whose name contains NAME (repeatable).
    #[arg(long, value_name = "NAME")]
    exclude_weights: Vec<String>,
    /// Type of output.weight (a ggml type name such as q8_0).
    #[arg(long, value_name = "TYPE")]
    output_tensor_type: Option<String>,
    /// Type of token_embd.weight.
    #[arg(long, value_name = "TYPE")]
    token_embedding_type: Option<String>,
    /// PATTERN=TYPE: tensors whose name matches PATTERN (a regex, searched) get TYPE;
    /// the first matching pattern wins (repeatable).
    #[arg(long, value_name = "PATTERN=TYPE")]
    tensor_type: Vec<String>,
    /// A file of whitespace-separated PATTERN=TYPE entries.
    #[arg(long, value_name = "FILE")]
    tensor_type_file: Option<PathBuf>,
    /// KEY=TYPE:VALUE metadata to set in the output (TYPE: int, float, bool, str; repeatable).
    #[arg(long, value_name = "KEY=TYPE:VALUE")]
    override_kv: Vec<String>,
    /// A recipe file (`gguf-inspect recipe`'s output, or written by hand): its base file type
    /// is TYPE when none is given; its PATTERN=TYPE items apply after any --tensor-type.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["like", "target_size", "target_bpw"])]
    recipe: Option<PathBuf>,
    /// Quantize with OTHER.gguf's per-tensor layout: its recipe, as `gguf-inspect recipe`
    /// prints it, used as --recipe.
    #[arg(long, value_name = "OTHER.gguf", conflicts_with_all = ["target_size", "target_bpw"])]
    like: Option<PathBuf>,
    /// Write the recipe of the output's layout to FILE (with budget mode: the layout the
    /// budget chose), also with --dry-run.
    #[arg(long, value_name = "FILE")]
    recipe_out: Option<PathBuf>,
    /// Write one output shard per input shard (<OUT>-00001-of-0000N.gguf, …).
    #[arg(long)]
    keep_split: bool,
    /// Comma-separated layer numbers to drop; the remaining blocks are renumbered and
    /// {arch}.block_count updated, as llama-quantize does.
    #[arg(long, value_name = "L0,L1,...", allow_hyphen_values = true)]
    prune_layers: Option<String>,
    /// Budget mode: the output file's size (bytes, or with a suffix: K/M/G/T and
    /// KiB/MiB/GiB/TiB are powers of 1024, KB/MB/GB/TB powers of 1000). Each tensor's type is
    /// chosen to minimise the total error within it; the choice is recorded under
    /// ggufkit.quantize.* in the output.
    #[arg(long, value_name = "SIZE", conflicts_with = "target_bpw")]
    target_size: Option<String>,
    /// Budget mode: bits per weight over all tensors (tensor bytes x 8 / elements).
    #[arg(long, value_name = "BITS")]
    target_bpw: Option<f64>,
    /// Budget mode: the candidate types, comma-separated
    /// (default q2_k,q3_k,iq4_xs,q4_k,q5_k,q6_k,q8_0).
    #[arg(long, value_name = "LIST")]
    budget_types: Option<String>,
    /// Budget mode: the most elements of each tensor measured (whole rows spread evenly;
    /// 0 = every row of every tensor).
    #[arg(long, value_name = "N", default_value_t = budget::DEFAULT_SAMPLE_ELEMENTS)]
    budget_sample: usize,
    /// Budget mode: the share of each tensor's rows measured (at least 4096 elements' worth,
    /// every row of a smaller tensor; 1 = every row up to --budget-sample).
    #[arg(long, value_name = "SHARE", default_value_t = budget::DEFAULT_SAMPLE_SHARE)]
    budget_sample_share: f64,
    /// Budget mode: what is minimised: `kld` (an estimate of the KL divergence each tensor's
    /// error adds to the next-token distributions; default), `output` (each tensor's error
    /// carried through what consumes its output to the residual stream, and through the later
    /// blocks to the logits), `relative` (each tensor's error over its signal) or `absolute`
    /// (the error as it is, the total `gguf-inspect compare` reports).
    #[arg(long, value_name = "METRIC", value_parser = ["kld", "output", "relative", "absolute"], default_value = "kld")]
    budget_metric: String,
    /// Budget mode: do not cap the total error (imatrix-weighted, or squared) at that of
    /// llama-quantize's own mix of TYPE where the budget allows it.
    #[arg(long)]
    budget_no_cap: bool,
    /// Budget mode: where the allocation starts: `mix` (llama-quantize's mix of TYPE, then
    /// the bytes left over spent where the estimate gains most), `free` (the least estimated
    /// error anywhere in the budget) or `auto` (default: `mix` without --imatrix, `free` with
    /// one).
    #[arg(long, value_name = "ANCHOR", value_parser = ["auto", "mix", "free"], default_value = "auto")]
    budget_anchor: String,
    /// Budget mode: the factor a routed expert's error is scaled by (default: the share of
    /// tokens it sees, expert_used_count / expert_count; 1 weighs it as a dense tensor).
    #[arg(long, value_name = "W")]
    budget_expert_weight: Option<f64>,
    /// Budget mode, `--budget-metric output`: weigh each tensor by its output weight to the
    /// power A times the absolute error's to the power 1 - A (1: output-propagated; 0: absolute).
    #[arg(long, value_name = "A", default_value_t = budget::DEFAULT_OUTPUT_EXPONENT)]
    budget_output_exponent: f64,
    /// Print the per-tensor plan (types, sizes, bits per weight) and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Memory for tensors in flight, in MiB (llama-quantize's option; here the bytes computed
    /// ahead of the writer, default 32). Does not change the output.
    #[arg(long, value_name = "MiB", value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_buffer_size: Option<u64>,
    /// Print a machine-readable JSON report on stdout.
    #[arg(long)]
    json: bool,
    /// Worker threads (default: all cores). Does not change the output.
    #[arg(long, short = 'j')]
    threads: Option<usize>,
    /// No progress bar or summary.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Accepted for compatibility: an existing output is replaced by default, as
    /// llama-quantize does (through a temporary file, so a failed run never damages it).
    #[arg(long, short = 'f', hide = true)]
    force: bool,
    /// Refuse to replace an existing output file.
    #[arg(long)]
    no_clobber: bool,
    /// Rename outputs into place without first waiting for them to reach the disk. Faster
    /// where the disk is slower than the conversion; a power failure soon after the run may
    /// then lose or truncate a file (a crash or kill of this process never leaves one).
    #[arg(long)]
    no_sync: bool,
}

#[derive(Clone)]
struct Invocation {
    input: PathBuf,
    output: Option<PathBuf>,
    ftype: FileType,
    threads: Option<usize>,
    /// Budget mode without TYPE: the base is the named mix nearest the budget.
    base_from_budget: bool,
}

fn parse_ftype(s: &str) -> Result<FileType> {
    FileType::parse(s).ok_or_else(|| {
        anyhow!(
            "unknown quantization type '{s}'; valid types: {}",
            FILE_TYPES
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

fn parse_threads(s: &str) -> Result<usize> {
    s.parse().map_err(|_| anyhow!("invalid thread count '{s}'"))
}

/// Resolves llama-quantize's positional grammar; with a recipe, TYPE may be left out.
fn resolve(cli: &Cli, recipe: Option<&Recipe>) -> Result<Invocation> {
    let a = &cli.args;
    let input = PathBuf::from(&a[0]);
    let mut threads = cli.threads;
    let mut base_from_budget = false;
    let (output, ftype) = if let Some(t) = &cli.ftype {
        if a.len() > 3 {
            bail!("too many arguments: with --type give INPUT [OUTPUT] [NTHREADS]");
        }
        let out = a.get(1).map(PathBuf::from);
        if let Some(n) = a.get(2) {
            threads = Some(parse_threads(n)?);
        }
        (out, parse_ftype(t)?)
    } else if budgeted(cli) && a.len() <= 2 && a.get(1).is_none_or(|s| FileType::parse(s).is_none())
    {
        base_from_budget = true;
        (a.get(1).map(PathBuf::from), budget_base())
    } else if let Some(r) =
        recipe.filter(|_| a.len() <= 2 && a.get(1).is_none_or(|s| FileType::parse(s).is_none()))
    {
        (a.get(1).map(PathBuf::from), r.base)
    } else {
        let second = a
            .get(1)
            .ok_or_else(|| anyhow!("missing the quantization type"))?;
        if let Some(ft) = FileType::parse(second) {
            if a.len() > 3 {
                bail!("too many arguments after the type");
            }
            if let Some(n) = a.get(2) {
                threads = Some(parse_threads(n)?);
            }
            (None, ft)
        } else {
            let t = a
                .get(2)
                .ok_or_else(|| anyhow!("missing the quantization type after OUTPUT '{second}'"))?;
            if let Some(n) = a.get(3) {
                threads = Some(parse_threads(n)?);
            }
            (Some(PathBuf::from(second)), parse_ftype(t)?)
        }
    };
    Ok(Invocation {
        input,
        output,
        ftype,
        threads: threads.filter(|n| *n > 0),
        base_from_budget,
    })
}

/// Budget mode is on.
fn budgeted(cli: &Cli) -> bool {
    cli.target_size.is_some() || cli.target_bpw.is_some()
}

/// The base file type of budget mode when none is given, until the input is read (then the
/// named mix nearest the budget replaces it).
fn budget_base() -> FileType {
    FileType::parse("Q4_K_M").expect("Q4_K_M is a file type")
}

/// The budget options, when budget mode is on.
fn budget_options(cli: &Cli) -> Result<Option<BudgetOptions>, Failure> {
    let usage = Failure::Usage;
    let target = match (&cli.target_size, cli.target_bpw) {
        (Some(s), _) => Target::Size(budget::parse_size(s).map_err(|e| usage(anyhow!(e)))?),
        (None, Some(b)) => {
            if !(b.is_finite() && b > 0.0) {
                return Err(usage(anyhow!(budget::BudgetError::BadBpw(b))));
            }
            Target::Bpw(b)
        }
        (None, None) => {
            if cli.budget_types.is_some() {
                return Err(usage(anyhow!(
                    "--budget-types needs --target-size or --target-bpw"
                )));
            }
            return Ok(None);
        }
    };
    if cli.keep_split {
        return Err(usage(anyhow!(
            "--keep-split cannot be combined with --target-size/--target-bpw"
        )));
    }
    if let Some(w) = cli.budget_expert_weight {
        if !(w.is_finite() && w > 0.0) {
            return Err(usage(anyhow!(budget::BudgetError::BadExpertWeight(w))));
        }
    }
    let mut o = BudgetOptions::new(target);
    if let Some(list) = &cli.budget_types {
        o.candidates = list
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| parse_ggml_type(s.trim()))
            .collect::<Result<_>>()
            .map_err(usage)?;
    }
    if !(cli.budget_sample_share > 0.0 && cli.budget_sample_share <= 1.0) {
        return Err(usage(anyhow!(
            "--budget-sample-share must be in (0, 1], got {}",
            cli.budget_sample_share
        )));
    }
    o.sampling = budget::Sampling {
        max_elements: cli.budget_sample,
        share: cli.budget_sample_share,
    };
    o.expert_weight = cli.budget_expert_weight;
    if !(0.0..=1.0).contains(&cli.budget_output_exponent) {
        return Err(usage(anyhow!(budget::BudgetError::BadExponent(
            cli.budget_output_exponent
        ))));
    }
    o.output_exponent = cli.budget_output_exponent;
    o.reference_cap = !cli.budget_no_cap;
    o.anchor = ggufkit::quantize::budget_anchor::Anchor::from_name(&cli.budget_anchor)
        .ok_or_else(|| usage(anyhow!("invalid budget anchor '{}'", cli.budget_anchor)))?;
    o.metric = Metric::from_name(&cli.budget_metric)
        .ok_or_else(|| usage(anyhow!("invalid budget metric '{}'", cli.budget_metric)))?;
    Ok(Some(o))
}

fn parse_ggml_type(s: &str) -> Result<GgmlType> {
    GgmlType::from_name(s).ok_or_else(|| anyhow!("invalid ggml type '{s}'"))
}

/// The recipe of `--recipe` or `--like`, with the name errors give it.
fn load_recipe(cli: &Cli) -> Result<Option<(Recipe, String)>, Failure> {
    if let Some(p) = &cli.recipe {
        let r = Recipe::load(p).map_err(|e| match e {
            RecipeError::Read { .. } => Failure::Input(anyhow!(e)),
            e => Failure::Usage(anyhow!(e)),
        })?;
        return Ok(Some((r, p.display().to_string())));
    }
    let Some(p) = &cli.like else {
        return Ok(None);
    };
    let f = ggufkit::gguf::GgufFile::open(p)
        .with_context(|| format!("--like {}", p.display()))
        .map_err(Failure::Input)?;
    let r = Recipe::of_model(&ggufkit::ir::Model::from_gguf(&f))
        .map_err(|e| Failure::Input(anyhow!("--like {}: {e}", p.display())))?;
    Ok(Some((r, format!("the layout of {}", p.display()))))
}

/// What differs between the run and the recipe's own conditions, which can change the
/// types the rules give to tensors the recipe leaves to them.
fn recipe_warnings(recipe: &Recipe, opts: &QuantizeOptions) -> Vec<String> {
    let mut w = Vec::new();
    if recipe.base.id != opts.ftype.id {
        w.push(format!(
            "the recipe's base file type is {}, this run's {}: tensors it does not name get \
             {}'s rules",
            recipe.base.name, opts.ftype.name, opts.ftype.name
        ));
    }
    if recipe.imatrix != opts.imatrix.is_some() {
        w.push(format!(
            "the recipe's layout was made {} an importance matrix and this run {} one: the \
             rules may type some tensors differently",
            if recipe.imatrix { "with" } else { "without" },
            if recipe.imatrix { "has no" } else { "has" },
        ));
    }
    w
}

/// The layout `p` writes, as a recipe, written to `path`.
fn write_recipe_out(cli: &Cli, path: &std::path::Path, p: &QuantizePlan) -> Result<(), Failure> {
    let r = Recipe::of_model(&p.model).map_err(|e| Failure::Run(anyhow!(e)))?;
    let input = PathBuf::from(&cli.args[0]);
    let inputs: Vec<&std::path::Path> = [Some(input.as_path()), cli.imatrix.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let rules = ggufkit::output::OutputRules {
        inputs: &inputs,
        overwrite: !cli.no_clobber,
        sync: !cli.no_sync,
    };
    ggufkit::output::write_file_atomically(path, r.to_text().as_bytes(), &rules)
        .with_context(|| format!("cannot write {}", path.display()))
        .map_err(Failure::Run)
}

fn build_options(
    cli: &Cli,
    inv: &Invocation,
    recipe: Option<&(Recipe, String)>,
) -> Result<QuantizeOptions, Failure> {
    let usage = Failure::Usage;
    let mut o = QuantizeOptions::new(inv.ftype);
    o.allow_requantize = cli.allow_requantize;
    o.leave_output_tensor = cli.leave_output_tensor;
    o.pure = cli.pure;
    o.dry_run = cli.dry_run;
    if let Some(p) = &cli.prune_layers {
        o.prune_layers = ggufkit::quantize::prune::parse_prune_layers(p)
            .map_err(|e| usage(anyhow!("--prune-layers: {e}")))?;
    }
    o.output_tensor_type = cli
        .output_tensor_type
        .as_deref()
        .map(parse_ggml_type)
        .transpose()
        .map_err(usage)?;
    o.token_embedding_type = cli
        .token_embedding_type
        .as_deref()
        .map(parse_ggml_type)
        .transpose()
        .map_err(usage)?;
    let mut tt = TensorTypeList::new();
    for t in &cli.tensor_type {
        tt.push(t, "").map_err(|e| usage(anyhow!(e)))?;
    }
    if let Some(f) = &cli.tensor_type_file {
        std::fs::File::open(f)
            .with_context(|| format!("cannot read {}", f.display()))
            .map_err(Failure::Input)?;
        tt.read_file(f).map_err(|e| usage(anyhow!(e)))?;
    }
    if let Some((r, origin)) = recipe {
        r.extend(&mut tt, origin).map_err(|e| usage(anyhow!(e)))?;
    }
    o.tensor_types = tt.into_vec();
    for kv in &cli.override_kv {
        o.kv_overrides
            .push(KvOverride::parse(kv).map_err(|e| usage(anyhow!(e)))?);
        // llama-quantize's arithmetic is kept for byte identity, but not silently.
        if let Err(e) = KvOverride::parse_exact(kv) {
            eprintln!("gguf-quantize: warning: {e}; written as llama-quantize writes it");
        }
    }
    if let Some(p) = &cli.imatrix {
        let mut im = Imatrix::load(p).map_err(|e| Failure::Input(e.into()))?;
        im.filter(&cli.include_weights, &cli.exclude_weights);
        o.imatrix = Some((p.to_string_lossy().into_owned(), im));
    }
    Ok(o)
}

fn plan_json(p: &QuantizePlan, b: Option<&BudgetPlan>) -> serde_json::Value {
    let errors = b.map(|b| b.errors.as_slice());
    let mix = |i: usize| b.and_then(|b| b.mix.get(i).copied().flatten());
    json!(p
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| json!({
            "name": t.name,
            "shape": t.dims,
            "from": t.from.name(),
            "to": t.to.name(),
            "in_bytes": t.in_bytes,
            "out_bytes": t.out_bytes,
            "imatrix": t.uses_imatrix,
            "fallback": t.fallback,
            "error": errors.and_then(|e| e.get(i).copied().flatten()),
            "mix_type": mix(i).map(|(t, _)| t.name()),
            "mix_error": mix(i).map(|(_, e)| e),
        }))
        .collect::<Vec<_>>())
}

fn bpw(bytes: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / n as f64
    }
}

fn print_plan(p: &QuantizePlan, b: Option<&BudgetPlan>) {
    let errors = b.map(|b| b.errors.as_slice());
    let w = p.tensors.iter().map(|t| t.name.len()).max().unwrap_or(10);
    for (i, t) in p.tensors.iter().enumerate() {
        let change = if t.from == t.to {
            format!("{} (copy)", t.from.name())
        } else {
            format!("{} -> {}", t.from.name(), t.to.name())
        };
        let mut notes = [(t.uses_imatrix, " imatrix"), (t.fallback, " fallback")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, s)| *s)
            .collect::<String>();
        if let Some(e) = errors.and_then(|e| e.get(i).copied().flatten()) {
            let mix = match b.and_then(|b| b.mix.get(i).copied().flatten()) {
                Some((t, m)) => format!(" (mix {}: {m:.4e})", t.name()),
                None => String::new(),
            };
            notes = format!(" error {e:.4e}{mix}{notes}");
        }
        println!(
            "[{:>4}/{:>4}] {:w$} {:<22} {:<20} {:>11} -> {:>11}{notes}",
            i + 1,
            p.tensors.len(),
            t.name,
            format!("{:?}", t.dims),
            change,
            human_bytes(t.in_bytes),
            human_bytes(t.out_bytes)
        );
    }
}

/// The input model, its shards merged; with `--keep-split` in llama-quantize's order.
struct Input {
    shards: Vec<ggufkit::gguf::GgufFile>,
    model: ggufkit::ir::Model,
    /// Per tensor name, its input shard.
    shard_of: HashMap<String, usize>,
}

fn read_input(
    cli: &Cli,
    inv: &Invocation,
    opts: &mut QuantizeOptions,
    transfer: Option<&Transfer>,
) -> Result<Input, Failure> {
    let shards = match transfer {
        // A URL: the headers are read now, the tensors by range when the engine asks.
        Some(t) => open_shards_with(&inv.input, &gguf_opener(t)),
        None => open_shards(&inv.input),
    }
    .map_err(|e| Failure::Input(e.into()))?;
    let (mut model, place) = merge_shards(&shards).map_err(|e| Failure::Input(e.into()))?;
    if cli.keep_split {
        // llama-quantize orders by (input shard, data offset) and keeps that order.
        let mut idx: Vec<usize> = (0..model.tensors.len()).collect();
        idx.sort_by_key(|&i| place[i]);
        let mut tensors: Vec<Option<ggufkit::ir::Tensor>> =
            model.tensors.into_iter().map(Some).collect();
        model.tensors = idx
            .iter()
            .map(|&i| tensors[i].take().expect("each index once"))
            .collect();
        opts.keep_order = true;
    }
    let shard_of = shards
        .iter()
        .enumerate()
        .flat_map(|(s, f)| f.tensors.iter().map(move |t| (t.name.clone(), s)))
        .collect();
    Ok(Input {
        shards,
        model,
        shard_of,
    })
}

/// The output plan: one file, or with `--keep-split` one shard per input shard.
fn output_plan(cli: &Cli, inv: &Invocation, input: &Input, p: &QuantizePlan) -> OutputPlan {
    let output = inv
        .output
        .clone()
        .unwrap_or_else(|| match is_url(&inv.input) {
            // A URL's default output is in the current directory.
            true => default_output_path(std::path::Path::new("model.gguf"), &inv.ftype),
            false => default_output_path(&inv.input, &inv.ftype),
        });
    let shards = if cli.keep_split {
        let shard_idx: Vec<usize> = p
            .model
            .tensors
            .iter()
            .map(|t| input.shard_of[&t.name])
            .collect();
        let parts = distribute(&p.model, &shard_idx);
        let out_str = output.to_string_lossy();
        let prefix = out_str.strip_suffix(".gguf").unwrap_or(&out_str);
        let n = parts.len();
        parts
            .into_iter()
            .enumerate()
            .map(|(i, model)| ShardPlan {
                path: split_path(prefix, i, n),
                model,
            })
            .collect()
    } else {
        vec![ShardPlan {
            path: output,
            model: p.model.clone(),
        }]
    };
    let inputs: Vec<PathBuf> = input
        .shards
        .iter()
        .filter_map(|s| s.bytes().path().map(PathBuf::from))
        .chain(cli.imatrix.iter().cloned())
        .chain(cli.tensor_type_file.iter().cloned())
        .chain(cli.recipe.iter().cloned())
        .chain(cli.like.iter().cloned())
        .chain(cli.recipe_out.iter().cloned())
        .collect();
    let defaults = WriteOptions::default();
    OutputPlan {
        shards,
        options: WriteOptions {
            inputs,
            overwrite: !cli.no_clobber,
            sync: !cli.no_sync,
            window_bytes: cli
                .max_buffer_size
                .map_or(defaults.window_bytes, |mib| mib << 20),
            ..defaults
        },
    }
}

/// Parse, plan, execute, render.
fn run(cli: Cli) -> Result<ExitCode, Failure> {
    let recipe = load_recipe(&cli)?;
    let inv = resolve(&cli, recipe.as_ref().map(|(r, _)| r)).map_err(Failure::Usage)?;
    let (_, note) = ggufkit::threads::configure(inv.threads);
    if let (Some(note), false) = (note, cli.quiet || cli.json) {
        eprintln!("note: {note}");
    }
    let mut opts = build_options(&cli, &inv, recipe.as_ref())?;
    let quiet = cli.quiet || cli.json;
    let transfer = is_url(&inv.input)
        .then(|| Transfer::start(DEFAULT_CONNECTIONS, !quiet))
        .transpose()?;
    let result = quantize(&cli, &inv, recipe, &mut opts, transfer.as_ref());
    if let Some(t) = transfer {
        t.finish(&inv.input.display().to_string(), !quiet);
    }
    result
}

/// Reads the input, plans, writes the output: the run after the command line is resolved.
fn quantize(
    cli: &Cli,
    inv: &Invocation,
    recipe: Option<(Recipe, String)>,
    opts: &mut QuantizeOptions,
    transfer: Option<&Transfer>,
) -> Result<ExitCode, Failure> {
    let input = read_input(cli, inv, opts, transfer)?;
    let t0 = Instant::now();
    let budget = budget_options(cli)?;
    let mut base = inv.clone();
    if let (Some(b), true) = (&budget, base.base_from_budget) {
        // No TYPE: the named mix nearest the budget is the base and the reference.
        if let Some(ft) =
            ggufkit::quantize::budget_baseline::nearest_mix(&input.model, opts, b.target)
        {
            opts.ftype = ft;
            base.ftype = ft;
        }
    }
    let inv = &base;
    let budget_plan = match budget {
        Some(b) => Some(
            budget::plan_budget(&input.model, opts, &b)
                .map_err(|e| Failure::Run(anyhow!("{}: {e}", inv.input.display())))?,
        ),
        None => None,
    };
    let p = match &budget_plan {
        Some(b) => b.plan.clone(),
        None => plan(&input.model, opts)
            .map_err(|e| Failure::Run(anyhow!("{}: {e}", inv.input.display())))?,
    };
    let mut p = p;
    if let Some((r, _)) = &recipe {
        p.warnings.extend(recipe_warnings(r, opts));
        for t in p.tensors.iter().filter(|t| t.fallback) {
            p.warnings.push(format!(
                "{}: its rows are not whole blocks of its planned type: {} used \
                     (llama-quantize's fallback)",
                t.name,
                t.to.name()
            ));
        }
    }
    if let Some(path) = &cli.recipe_out {
        write_recipe_out(cli, path, &p)?;
    }
    if !cli.quiet && !cli.json {
        for w in &p.warnings {
            eprintln!("warning: {w}");
        }
    }
    if cli.dry_run {
        print_dry_run(cli, inv, &p, budget_plan.as_ref());
        return Ok(ExitCode::SUCCESS);
    }
    let out = output_plan(cli, inv, &input, &p);
    let bar = ggufkit::progress::byte_bar(
        p.out_bytes(),
        cli.quiet || cli.json,
        &format!("quantizing to {}", inv.ftype.name),
    );
    let tensors = p.tensors.iter().map(|t| (t.name.clone(), t.out_bytes));
    let observer = TensorBar::new(&bar, tensors.collect());
    let paths: Vec<PathBuf> = out.shards.iter().map(|s| s.path.clone()).collect();
    let (results, _) = pipeline::execute(&[out], &ExecuteOptions::default(), &observer);
    let written = results
        .into_iter()
        .next()
        .expect("one result per output")
        .map_err(|e| Failure::Run(e.into()))?;
    bar.finish_and_clear();
    print_done(
        cli,
        inv,
        &p,
        budget_plan.as_ref(),
        &paths,
        written.size(),
        t0.elapsed().as_secs_f64(),
    );
    Ok(ExitCode::SUCCESS)
}

/// The `budget` object of a JSON report.
fn budget_json(b: &BudgetPlan) -> serde_json::Value {
    json!({
        "target": b.target.describe(), "file_size": b.file_size, "total_error": b.total_error,
        "metric": b.metric.name(b.weighted), "mix_total_error": b.mix_total,
        "reference": b.reference.as_ref().map(|r| json!({
            "ftype": r.ftype, "fits": r.fits, "reference_error": r.reference_error, "error": r.error,
        })),
        "slack": b.slack.as_ref().map(|s| json!({"unused": s.unused, "reason": s.to_string()})),
        "mix_as_is": b.mix_as_is,
    })
}

/// The summary line of a budget.
fn budget_line(b: &BudgetPlan) -> String {
    let mut line = format!(
        "budget {}: file size {} ({} bytes), total {} {:.6e}",
        b.target.describe(),
        human_bytes(b.file_size),
        b.file_size,
        b.metric.name(b.weighted),
        b.total_error
    );
    if let (Some(m), Some(r)) = (b.mix_total, &b.reference) {
        line.push_str(&format!(" ({m:.6e} for {}'s mix)", r.ftype));
    }
    if let Some(r) = &b.reference {
        let what = if b.weighted {
            "imatrix-weighted"
        } else {
            "squared"
        };
        line.push_str(&format!(
            "; {what} error {:.6e} vs {:.6e} for {}'s mix{}",
            r.error,
            r.reference_error,
            r.ftype,
            if r.fits { "" } else { " (which does not fit)" }
        ));
    }
    if let Some(s) = &b.slack {
        line.push_str(&format!("; {s}"));
    }
    if let (true, Some(r)) = (b.mix_as_is, &b.reference) {
        line.push_str(&format!(
            "; llama-quantize's {} mix as it is (anchored on it, and the budget has \
             no room for ggufkit's keys)",
            r.ftype
        ));
    }
    line
}

fn print_dry_run(cli: &Cli, inv: &Invocation, p: &QuantizePlan, b: Option<&BudgetPlan>) {
    let n = p.n_elements();
    if cli.json {
        let report = json!({
            "input": inv.input, "ftype": inv.ftype.name, "dry_run": true,
            "tensors": plan_json(p, b), "in_bytes": p.in_bytes(), "out_bytes": p.out_bytes(),
            "in_bpw": bpw(p.in_bytes(), n), "out_bpw": bpw(p.out_bytes(), n), "warnings": p.warnings,
            "budget": b.map(budget_json),
        });
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else {
        print_plan(p, b);
        if let Some(b) = b {
            println!("{}", budget_line(b));
        }
        println!(
            "model size: {} ({:.2} bpw) -> {} ({:.2} bpw) as {}",
            human_bytes(p.in_bytes()),
            bpw(p.in_bytes(), n),
            human_bytes(p.out_bytes()),
            bpw(p.out_bytes(), n),
            inv.ftype.name
        );
    }
}

fn print_done(
    cli: &Cli,
    inv: &Invocation,
    p: &QuantizePlan,
    b: Option<&BudgetPlan>,
    outputs: &[PathBuf],
    file_size: u64,
    secs: f64,
) {
    let n = p.n_elements();
    if cli.json {
        let report = json!({
            "input": inv.input, "outputs": outputs, "ftype": inv.ftype.name, "file_type": inv.ftype.id,
            "tensors": plan_json(p, b), "in_bytes": p.in_bytes(), "out_bytes": p.out_bytes(),
            "file_size": file_size, "budget": b.map(budget_json), "in_bpw": bpw(p.in_bytes(), n), "out_bpw": bpw(p.out_bytes(), n),
            "seconds": secs, "warnings": p.warnings,
        });
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else if !cli.quiet {
        if let Some(b) = b {
            eprintln!("{}", budget_line(b));
        }
        eprintln!(
            "{} -> {}: {} ({:.2} bpw) -> {} ({:.2} bpw) as {} in {:.2}s ({}/s)",
            inv.input.display(),
            outputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            human_bytes(p.in_bytes()),
            bpw(p.in_bytes(), n),
            human_bytes(p.out_bytes()),
            bpw(p.out_bytes(), n),
            inv.ftype.name,
            secs,
            human_bytes((p.in_bytes() as f64 / secs.max(1e-9)) as u64),
        );
    }
}

/// The tool's entry point.
pub fn main() -> ExitCode {
    crate::edge::start::<Cli>();
    let cli = Cli::parse();
    exit_with("gguf-quantize", run(cli))
}
