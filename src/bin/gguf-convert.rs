//! gguf-convert: a HuggingFace model directory (or a GGUF) → GGUF, in one pass, byte for byte
//! as llama.cpp's `convert_hf_to_gguf.py` (and, for quantized types, `llama-quantize`) write it.
//!
//! Built as part of the `ggufkit-converters` package (it needs the readers); the source lives
//! beside the other CLIs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use serde_json::json;

use ggufkit::gguf::GgufFile;
use ggufkit::inspect::human_bytes;
use ggufkit::ir::Model;
use ggufkit::quantize::{plan, FileType, Imatrix, QuantizeOptions, TensorTypeOverride};
use ggufkit::split::{distribute, split_path};
use ggufkit::write::{write_uncommitted, WriteOptions};
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_converters::legacy::{read_legacy, LegacyOptions};

/// Convert a HuggingFace model directory or a legacy GGML/GGMF/GGJT .bin to GGUF, identical to
/// llama.cpp's converters.
///
///   gguf-convert ./Llama-3.2-1B-Instruct                      # auto type, llama.cpp's file name
///   gguf-convert ./my-model out.gguf --outtype f16
///   gguf-convert ./my-model --outtype q4_k_m --outdir models/  # quantized in the same pass
///   gguf-convert ./my-model out.gguf --split-max-size 2G
///   gguf-convert ./my-model --dry-run                          # the plan, nothing written
///   gguf-convert old-llama-7b.bin out.gguf --gqa 1 --eps 1e-6  # a pre-GGUF model
///
/// --outtype takes the converter's types (f32, f16, bf16, q8_0, tq1_0, tq2_0, auto) or any
/// gguf-quantize type (q4_k_m, q6_k, …); a quantized type gives the same file as converting
/// to f32 and then running llama-quantize, without the intermediate file. SRC may also be a
/// GGUF file (then only quantized types make sense).
///
/// Exit status: 0 success; 1 the conversion failed (nothing is written); 2 usage error;
/// 3 the input could not be read.
#[derive(Parser, Debug)]
#[command(name = "gguf-convert", version, about, long_about)]
struct Cli {
    /// The model: a HuggingFace directory (config.json, *.safetensors, tokenizer files; an
    /// HF cache snapshot folder works too) or a GGUF file.
    src: PathBuf,
    /// Output file or directory (default: llama.cpp's name, in --outdir or the model directory).
    out: Option<PathBuf>,
    /// Output type: f32, f16, bf16, q8_0, tq1_0, tq2_0, auto, or a gguf-quantize type.
    #[arg(long, default_value = "auto")]
    outtype: String,
    /// Directory for the output when OUT is not given.
    #[arg(long, value_name = "DIR")]
    outdir: Option<PathBuf>,
    /// Write only the metadata and vocabulary.
    #[arg(long)]
    vocab_only: bool,
    /// JSON file of general.* overrides (llama.cpp's --metadata).
    #[arg(long, value_name = "FILE")]
    metadata: Option<PathBuf>,
    /// general.name (and the base of the default file name).
    #[arg(long)]
    model_name: Option<String>,
    /// Start a new shard after this many tensors.
    #[arg(long, value_name = "N")]
    split_max_tensors: Option<usize>,
    /// Start a new shard before exceeding this size (decimal K/M/G suffixes, e.g. 2G).
    #[arg(long, value_name = "SIZE")]
    split_max_size: Option<String>,
    /// With splitting: the first shard holds only metadata.
    #[arg(long)]
    no_tensor_first_split: bool,
    /// Legacy .bin input: the grouped-query factor n_head / n_head_kv (old files do not
    /// record it; default: inferred from the K projection's shape).
    #[arg(long, value_name = "N")]
    gqa: Option<u32>,
    /// Legacy .bin input: RMS norm epsilon (default 5e-6; LLaMA-2 uses 1e-5).
    #[arg(long, value_name = "EPS")]
    eps: Option<f32>,
    /// Legacy .bin input: context length (default 2048).
    #[arg(long, value_name = "N")]
    context_length: Option<u32>,
    /// Legacy .bin input: take hyperparameters and the tokenizer from this HuggingFace
    /// directory (llama.cpp's --model-metadata-dir / --vocab-dir).
    #[arg(long, value_name = "HF_DIR", alias = "model-metadata-dir")]
    vocab_dir: Option<PathBuf>,
    /// Legacy .bin input: general.description.
    #[arg(long, value_name = "TEXT")]
    desc: Option<String>,
    /// Quantized outtypes: importance matrix (GGUF or .dat).
    #[arg(long, value_name = "FILE")]
    imatrix: Option<PathBuf>,
    /// Quantized outtypes: PATTERN=TYPE overrides (repeatable).
    #[arg(long, value_name = "PATTERN=TYPE")]
    tensor_type: Vec<String>,
    /// Quantized outtypes: no mixture rules.
    #[arg(long)]
    pure: bool,
    /// Quantized outtypes: type of output.weight.
    #[arg(long, value_name = "TYPE")]
    output_tensor_type: Option<String>,
    /// Quantized outtypes: type of token_embd.weight.
    #[arg(long, value_name = "TYPE")]
    token_embedding_type: Option<String>,
    /// Quantized outtypes: leave output.weight unquantized.
    #[arg(long)]
    leave_output_tensor: bool,
    /// Print the plan (every tensor with its source, type and size; the shards) and exit.
    #[arg(long)]
    dry_run: bool,
    /// Print a machine-readable JSON report on stdout.
    #[arg(long)]
    json: bool,
    /// Worker threads (default: all cores). Does not change the output.
    #[arg(long, short = 'j')]
    threads: Option<usize>,
    /// No progress bar or summary.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Replace existing output files.
    #[arg(long, short = 'f')]
    force: bool,
}

enum Failure {
    Usage(anyhow::Error),
    Input(anyhow::Error),
    Run(anyhow::Error),
}

/// What --outtype asks for.
enum Target {
    /// One of the converter's own types.
    Plain(OutType),
    /// A llama-quantize type, applied to the f32 conversion.
    Quantized(FileType),
}

fn parse_target(s: &str) -> Result<Target> {
    if let Some(t) = OutType::parse(s) {
        return Ok(Target::Plain(t));
    }
    match FileType::parse(s) {
        Some(f) if !f.is_copy() => Ok(Target::Quantized(f)),
        _ => bail!("unknown --outtype '{s}': use f32, f16, bf16, q8_0, tq1_0, tq2_0, auto, or a gguf-quantize type such as q4_k_m"),
    }
}

/// Decimal sizes as llama.cpp's converter reads them: `500M`, `2G`, `1000`.
fn parse_size(s: &str) -> Result<u64> {
    let (num, mult) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1_000),
        Some('M' | 'm') => (&s[..s.len() - 1], 1_000_000),
        Some('G' | 'g') => (&s[..s.len() - 1], 1_000_000_000),
        _ => (s, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| anyhow!("invalid size '{s}' (e.g. 500M, 2G)"))?;
    n.checked_mul(mult)
        .ok_or_else(|| anyhow!("size '{s}' is too large"))
}

/// gguf-py's shard assignment: a new shard starts when the current one has a tensor and
/// either holds `max_tensors` or would exceed `max_size` raw bytes.
fn assign_shards(
    sizes: &[u64],
    max_tensors: Option<usize>,
    max_size: Option<u64>,
    empty_first: bool,
) -> Vec<usize> {
    let mut shard = usize::from(empty_first);
    let (mut count, mut bytes) = (0usize, 0u64);
    sizes
        .iter()
        .map(|&sz| {
            let full =
                max_tensors.is_some_and(|m| count >= m) || max_size.is_some_and(|m| bytes + sz > m);
            if count > 0 && full {
                shard += 1;
                count = 0;
                bytes = 0;
            }
            count += 1;
            bytes += sz;
            shard
        })
        .collect()
}

fn quantize_options(cli: &Cli, ftype: FileType) -> Result<QuantizeOptions, Failure> {
    let usage = |e: String| Failure::Usage(anyhow!(e));
    let ty = |s: &Option<String>| {
        s.as_deref()
            .map(|t| {
                ggufkit::quantizers::GgmlType::from_name(t)
                    .ok_or_else(|| usage(format!("invalid ggml type '{t}'")))
            })
            .transpose()
    };
    let mut o = QuantizeOptions::new(ftype);
    o.pure = cli.pure;
    o.leave_output_tensor = cli.leave_output_tensor;
    o.dry_run = cli.dry_run;
    o.output_tensor_type = ty(&cli.output_tensor_type)?;
    o.token_embedding_type = ty(&cli.token_embedding_type)?;
    for t in &cli.tensor_type {
        o.tensor_types
            .push(TensorTypeOverride::parse(t).map_err(usage)?);
    }
    if let Some(p) = &cli.imatrix {
        let im = Imatrix::load(p).map_err(|e| Failure::Input(e.into()))?;
        o.imatrix = Some((p.to_string_lossy().into_owned(), im));
    }
    Ok(o)
}

struct Planned {
    model: Model,
    default_name: String,
    sources: Vec<String>,
    notes: Vec<String>,
}

fn is_gguf(p: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    p.is_file()
        && std::fs::File::open(p)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
        && &magic == b"GGUF"
}

fn build(cli: &Cli, target: &Target) -> Result<Planned, Failure> {
    let mut notes = Vec::new();
    let (model, default_name, sources) = if is_gguf(&cli.src) {
        let f = GgufFile::open(&cli.src).map_err(|e| Failure::Input(e.into()))?;
        let stem = cli
            .src
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let sources = f.tensors.iter().map(|t| t.name.clone()).collect();
        (Model::from_gguf(&f), format!("{stem}.gguf"), sources)
    } else if let Some(kind) = ggufkit_converters::legacy::detect(&cli.src) {
        let opts = LegacyOptions {
            gqa: cli.gqa,
            eps: cli.eps,
            context_length: cli.context_length,
            vocab_dir: cli.vocab_dir.clone(),
            outtype_for_changed_layouts: None,
            name: cli.model_name.clone(),
            description: cli.desc.clone(),
        };
        let c = read_legacy(&cli.src, &opts).map_err(|e| Failure::Run(anyhow!("{e}")))?;
        notes.push(format!(
            "legacy {:?} v{} file in {} part(s)",
            kind.format,
            kind.version,
            c.parts.len()
        ));
        notes.extend(c.warnings.iter().cloned());
        let sources = c
            .tensors
            .iter()
            .map(|t| format!("{} ({})", t.legacy_name, t.legacy_layout))
            .collect();
        let stem = cli
            .src
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let model = c.model;
        // Plain outtypes re-type every quantizable tensor, as the quantizer would.
        let as_ftype = match target {
            Target::Plain(OutType::Auto) => None,
            Target::Plain(t) => FileType::parse(t.label()),
            Target::Quantized(f) => Some(*f),
        };
        return match as_ftype {
            None => Ok(Planned {
                model,
                default_name: format!("{stem}.gguf"),
                sources,
                notes,
            }),
            Some(ft) => {
                let mut opts = quantize_options(cli, ft)?;
                opts.allow_requantize = true;
                let p = plan(&model, &opts)
                    .map_err(|e| Failure::Run(anyhow!("{}: {e}", cli.src.display())))?;
                notes.extend(p.warnings.iter().cloned());
                Ok(Planned {
                    model: p.model,
                    default_name: format!("{stem}-{}.gguf", ft.name),
                    sources,
                    notes,
                })
            }
        };
    } else if cli.src.is_dir() {
        let outtype = match target {
            Target::Plain(t) => *t,
            Target::Quantized(_) => OutType::F32,
        };
        let opts = HfOptions {
            outtype,
            vocab_only: cli.vocab_only,
            metadata_override: cli.metadata.clone(),
            model_name: cli.model_name.clone(),
            allow_missing_vocab: cli.dry_run,
        };
        let c = read_hf_dir(&cli.src, &opts)
            .map_err(|e| Failure::Run(anyhow!("{}: {e}", cli.src.display())))?;
        notes.push(format!(
            "architecture {} → {}",
            c.hf_arch,
            c.model.architecture().unwrap_or("?")
        ));
        if let Some(e) = &c.vocab_error {
            notes.push(format!("the tokenizer cannot be converted: {e}"));
        }
        (c.model, c.default_file_name, c.sources)
    } else {
        return Err(Failure::Input(anyhow!(
            "{}: not a HuggingFace model directory, a GGUF file or a legacy GGML/GGMF/GGJT file",
            cli.src.display()
        )));
    };
    match target {
        Target::Plain(_) if is_gguf(&cli.src) => Err(Failure::Usage(anyhow!(
            "a GGUF input needs a quantized --outtype (e.g. q4_k_m); use gguf-quantize for F16/F32/BF16/COPY"
        ))),
        Target::Plain(_) => Ok(Planned { model, default_name, sources, notes }),
        Target::Quantized(ft) => {
            let opts = quantize_options(cli, *ft)?;
            let p = plan(&model, &opts).map_err(|e| Failure::Run(anyhow!("{}: {e}", cli.src.display())))?;
            notes.extend(p.warnings.iter().cloned());
            // The planner reorders tensors; carry each one's source along.
            let by_name: std::collections::HashMap<&str, &str> =
                model.tensors.iter().zip(&sources).map(|(t, s)| (t.name.as_str(), s.as_str())).collect();
            let sources = p.model.tensors.iter().map(|t| by_name.get(t.name.as_str()).unwrap_or(&"").to_string()).collect();
            let default_name = match default_name.rsplit_once("-F32.gguf") {
                Some((stem, "")) => format!("{stem}-{}.gguf", ft.name),
                _ => default_name.trim_end_matches(".gguf").to_string() + &format!("-{}.gguf", ft.name),
            };
            Ok(Planned { model: p.model, default_name, sources, notes })
        }
    }
}

fn output_path(cli: &Cli, default_name: &str) -> PathBuf {
    match &cli.out {
        Some(o) if o.is_dir() => o.join(default_name),
        Some(o) => o.clone(),
        None => cli.outdir.as_deref().unwrap_or(&cli.src).join(default_name),
    }
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    let target = parse_target(&cli.outtype).map_err(Failure::Usage)?;
    if let Some(n) = cli.threads.filter(|n| *n > 0) {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global();
    }
    let max_size = cli
        .split_max_size
        .as_deref()
        .map(parse_size)
        .transpose()
        .map_err(Failure::Usage)?;
    let splitting = cli.split_max_tensors.is_some() || max_size.is_some();
    if cli.vocab_only && splitting {
        return Err(Failure::Usage(anyhow!("--vocab-only cannot be split")));
    }
    let t0 = Instant::now();
    let p = build(&cli, &target)?;
    let output = output_path(&cli, &p.default_name);
    let sizes: Vec<u64> = p
        .model
        .tensors
        .iter()
        .map(|t| ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0))
        .collect();
    let shard_of = if splitting {
        assign_shards(
            &sizes,
            cli.split_max_tensors,
            max_size,
            cli.no_tensor_first_split,
        )
    } else {
        vec![0; sizes.len()]
    };
    let mut parts = distribute(&p.model, &shard_of);
    if splitting && parts.len() == 1 && !p.model.tensors.is_empty() {
        notes_push(&cli, "model fits in one shard: not splitting");
    }
    if parts.is_empty() {
        parts.push(p.model.clone());
    }
    let n_parts = parts.len();
    let paths: Vec<PathBuf> = if n_parts == 1 {
        vec![output.clone()]
    } else {
        let s = output.to_string_lossy();
        let prefix = s.strip_suffix(".gguf").unwrap_or(&s).to_string();
        (0..n_parts)
            .map(|i| split_path(&prefix, i, n_parts))
            .collect()
    };
    let total_bytes: u64 = sizes.iter().sum();
    let n_elements: u64 = p.model.tensors.iter().map(|t| t.n_elements()).sum();

    if cli.dry_run {
        if cli.json {
            let report = json!({
                "source": cli.src, "outputs": paths, "dry_run": true, "notes": p.notes,
                "tensors": p.model.tensors.iter().zip(&p.sources).zip(&shard_of).map(|((t, s), sh)| json!({
                    "name": t.name, "source": s, "type": t.ty.name(), "shape": t.dims,
                    "bytes": ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0), "shard": sh,
                    "transform": t.data.describe(),
                })).collect::<Vec<_>>(),
                "tensor_bytes": total_bytes,
            });
            println!("{}", serde_json::to_string_pretty(&report).expect("json"));
        } else {
            for n in &p.notes {
                println!("note: {n}");
            }
            let w = p
                .model
                .tensors
                .iter()
                .map(|t| t.name.len())
                .max()
                .unwrap_or(4);
            for (i, (t, s)) in p.model.tensors.iter().zip(&p.sources).enumerate() {
                println!(
                    "[{:>4}/{:>4}] {:w$} {:<8} {:<22} {:>11}  <- {s}",
                    i + 1,
                    p.model.tensors.len(),
                    t.name,
                    t.ty.name(),
                    format!("{:?}", t.dims),
                    human_bytes(sizes[i]),
                );
            }
            for (i, path) in paths.iter().enumerate() {
                let n = shard_of.iter().filter(|s| **s == i).count();
                println!(
                    "{}: {n} tensors, {}",
                    path.display(),
                    human_bytes(
                        sizes
                            .iter()
                            .zip(&shard_of)
                            .filter(|(_, s)| **s == i)
                            .map(|(b, _)| b)
                            .sum()
                    )
                );
            }
        }
        return Ok(ExitCode::SUCCESS);
    }

    if !cli.quiet && !cli.json {
        for n in &p.notes {
            eprintln!("note: {n}");
        }
    }
    let bar = ggufkit::progress::byte_bar(total_bytes, cli.quiet || cli.json, "converting");
    let mut done = 0usize;
    let mut pending = Vec::new();
    let mut file_sizes = Vec::new();
    for (part, path) in parts.iter().zip(&paths) {
        let offset = done;
        let tick = |i: usize, _w: u64| {
            let t = &part.tensors[i];
            bar.inc(ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0));
            bar.set_prefix(format!("[{}/{}] {}", offset + i + 1, sizes.len(), t.name));
        };
        let wopts = WriteOptions {
            inputs: input_files(&cli.src),
            overwrite: cli.force,
            progress: Some(&tick),
            ..Default::default()
        };
        let (out, layout) = if cli.vocab_only {
            write_vocab_only(part, path, &wopts).map_err(Failure::Run)?
        } else {
            let (out, layout) =
                write_uncommitted(part, path, &wopts).map_err(|e| Failure::Run(e.into()))?;
            (out, layout.file_size)
        };
        file_sizes.push(layout);
        pending.push(out);
        done += part.tensors.len();
    }
    for out in pending {
        out.commit().map_err(|e| Failure::Run(e.into()))?;
    }
    bar.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let file_size: u64 = file_sizes.iter().sum();
    if cli.json {
        let report = json!({
            "source": cli.src, "outputs": paths, "file_size": file_size, "tensor_bytes": total_bytes,
            "bits_per_weight": if n_elements > 0 { total_bytes as f64 * 8.0 / n_elements as f64 } else { 0.0 },
            "tensors": p.model.tensors.len(), "seconds": secs, "notes": p.notes,
        });
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else if !cli.quiet {
        eprintln!(
            "{} -> {} ({} in {} file{}) in {:.2}s",
            cli.src.display(),
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            human_bytes(file_size),
            n_parts,
            if n_parts == 1 { "" } else { "s" },
            secs
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn notes_push(cli: &Cli, msg: &str) {
    if !cli.quiet && !cli.json {
        eprintln!("note: {msg}");
    }
}

/// Every file of the source (outputs must never replace one).
fn input_files(src: &Path) -> Vec<PathBuf> {
    if src.is_dir() {
        std::fs::read_dir(src)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_file())
                    .collect()
            })
            .unwrap_or_default()
    } else {
        vec![src.to_path_buf()]
    }
}

/// `--vocab-only`: gguf-py writes the header and KVs and stops (no tensor infos, no padding).
fn write_vocab_only(
    model: &Model,
    path: &Path,
    opts: &WriteOptions,
) -> Result<(ggufkit::output::AtomicOutput, u64)> {
    use std::io::Write;
    let layout = ggufkit::gguf::layout(&model.metadata, &[])?;
    let inputs: Vec<&Path> = opts.inputs.iter().map(PathBuf::as_path).collect();
    let mut out = ggufkit::output::AtomicOutput::create(path, &inputs, opts.overwrite)?;
    let unpadded = &layout.header[..layout.header_len];
    out.write_all(unpadded)
        .with_context(|| format!("cannot write {}", path.display()))?;
    out.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok((out, unpadded.len() as u64))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(c) => c,
        Err(Failure::Usage(e)) => {
            eprintln!("gguf-convert: error: {e:#}\n(see gguf-convert --help)");
            ExitCode::from(2)
        }
        Err(Failure::Input(e)) => {
            eprintln!("gguf-convert: error: {e:#}");
            ExitCode::from(3)
        }
        Err(Failure::Run(e)) => {
            eprintln!("gguf-convert: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
