//! gguf-inspect: look inside GGUF files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use ggufkit::gguf::GgufFile;
use ggufkit::inspect::{
    compare_with_source, diff_files, dump_json, dump_text, quality_report, verify_file,
    CompareReport, Thresholds,
};
use ggufkit::ir::Model;
use ggufkit::manifest::{manifest, to_pretty};
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_converters::legacy::{read_legacy, LegacyOptions};

/// Look inside GGUF files: dump their contents, compare two files, check one, or print the
/// manifest used to compare against llama.cpp.
///
/// Exit status: 0 success (files identical, file valid); 1 a difference or a problem was
/// found; 2 usage error; 3 an input could not be read or is not a valid GGUF.
#[derive(Parser)]
#[command(
    name = "gguf-inspect",
    version,
    about = "Look inside GGUF files: dump, manifest, diff, verify, compare",
    long_about
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print the header, every metadata key (long arrays abbreviated) and a table of tensors
    /// with types, shapes, offsets and sizes, plus totals and bits per weight.
    ///
    /// Example: gguf-inspect dump model.gguf
    Dump {
        /// The GGUF file, or its http:// or https:// URL (only the header is read).
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print the manifest JSON (per-tensor sha256, every metadata key) in the format of
    /// testdata/golden/README.md, for comparing a file with llama.cpp's output.
    ///
    /// Example: gguf-inspect manifest out.gguf -o out.json
    Manifest {
        /// The GGUF file.
        file: PathBuf,
        /// Value of the "file" field (default: the file name).
        #[arg(long)]
        name: Option<String>,
        /// Write to this file instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Compare two files: metadata keys added, removed or changed, tensors added or removed,
    /// and per tensor whether type, shape or bytes differ. Exit 0 only when identical.
    ///
    /// A changed value is shown as `old -> new`; an array by its lengths and the items that
    /// differ; a long string by where it differs, or, when it has several lines (a chat
    /// template), as a unified diff.
    ///
    /// Example: gguf-inspect diff model.gguf edited.gguf
    Diff {
        /// First file.
        a: PathBuf,
        /// Second file.
        b: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check a file: everything the reader validates (offsets, sizes, alignment, names,
    /// types), zero padding, the keys llama.cpp requires, and a NaN/Inf scan of every tensor
    /// we can decode. Exit 0 only when no problem was found.
    ///
    /// Example: gguf-inspect verify model.gguf
    Verify {
        /// The GGUF file.
        file: PathBuf,
        /// Also compare every tensor with its source (a HuggingFace directory, a legacy .bin or
        /// another GGUF): RMSE, max abs error and cosine similarity of the dequantized
        /// values, worst tensors listed.
        #[arg(long, value_name = "SRC")]
        against: Option<PathBuf>,
        /// With --against: fail when a tensor's RMSE exceeds this.
        #[arg(long, requires = "against")]
        max_rmse: Option<f64>,
        /// With --against: fail when any element's absolute error exceeds this.
        #[arg(long, requires = "against")]
        max_abs: Option<f64>,
        /// With --against: fail when a tensor's cosine similarity is below this.
        #[arg(long, requires = "against")]
        min_cosine: Option<f64>,
        /// With --against: how many of the worst tensors to list.
        #[arg(long, default_value_t = 5)]
        worst: usize,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print a quantized file's per-tensor layout as a recipe: its base file type
    /// (`general.file_type`) and, one `PATTERN=TYPE` a line, the tensors whose type differs
    /// from what llama-quantize's rules pick for that type. `gguf-quantize --recipe` reads
    /// it; with --plain the comment lines are left out, giving the `--tensor-type-file`
    /// llama-quantize reads (run it with the base type as TYPE).
    ///
    /// Example: gguf-inspect recipe model-Q4_K_M.gguf > q4_k_m.recipe
    Recipe {
        /// The quantized GGUF file.
        file: PathBuf,
        /// Only the PATTERN=TYPE items (llama-quantize's --tensor-type-file).
        #[arg(long, conflicts_with = "json")]
        plain: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check that a quantized file is what its claimed source gives. The file's recipe is read
    /// (its base type and per-tensor overrides, as `recipe` prints it), the source is
    /// converted (a HuggingFace directory or cache id) or read (a GGUF) and quantized with
    /// that recipe a tensor at a time in memory, and every tensor and metadata key is
    /// compared. Each tensor is identical, equivalent within rounding (bytes that differ only
    /// as a build with fused multiply-adds makes them differ, as llama.cpp's arm64 builds do:
    /// a few blocks, none of them further from the source), or different, with the size of
    /// the difference. A changed chat template is shown as a diff.
    ///
    /// Exit status: 0 identical (or, with --allow-rounding, equivalent within rounding); 1
    /// something differs; 2 usage; 3 an input cannot be read.
    ///
    /// Examples:
    ///   gguf-inspect provenance model-Q4_K_M.gguf --from model-f16.gguf
    ///   gguf-inspect provenance model-Q4_K_M.gguf --from ./Llama-3.2-1B-Instruct --json
    ///   gguf-inspect provenance model-IQ2_XXS.gguf --from org/name --imatrix imatrix.gguf
    Provenance {
        /// The quantized GGUF file.
        file: PathBuf,
        /// The source it claims: a GGUF file (f32/f16/bf16), a HuggingFace directory, or a
        /// model id in the local HuggingFace cache (org/name, hf:org/name).
        #[arg(long, value_name = "SOURCE")]
        from: PathBuf,
        /// With a model id: the branch, tag or commit to use (default: main).
        #[arg(long, value_name = "REV")]
        revision: Option<String>,
        /// With a HuggingFace source: the converter outtype the file was made from (one of
        /// gguf-convert's types but `auto`). Default: the file's own type when the converter
        /// writes it (a plain conversion), else f32 (what `gguf-convert --outtype q4_k_m`
        /// quantizes from; a bf16 checkpoint gives the same values through bf16, while f16
        /// rounds them).
        #[arg(long, value_name = "TYPE", value_parser = via_types())]
        via: Option<String>,
        /// The importance matrix the file was made with.
        #[arg(long, value_name = "FILE")]
        imatrix: Option<PathBuf>,
        /// Accept tensors equivalent within rounding (exit 0 when nothing else differs). A
        /// change that small is also what moving a weight to a neighbouring level at a tie
        /// looks like, so it is not accepted by default.
        #[arg(long)]
        allow_rounding: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// How much a quantized file lost against its source: per tensor the RMSE, the relative
    /// error sqrt(sum (q-x)^2 / sum x^2) and, with --imatrix, the importance-weighted squared
    /// error sum w_col (q-x)^2 and its relative form; then totals. Works on files made by
    /// any tool. Exit 0 when every tensor could be compared.
    ///
    /// Example: gguf-inspect compare model-Q4_K_M.gguf model-f16.gguf --imatrix imatrix.gguf
    Compare {
        /// The quantized GGUF file.
        quant: PathBuf,
        /// Its source: a GGUF, a HuggingFace directory or a legacy .bin.
        source: PathBuf,
        /// Importance matrix (GGUF or legacy .dat) for the weighted error.
        #[arg(long, value_name = "FILE")]
        imatrix: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn open(p: &std::path::Path) -> Result<GgufFile> {
    GgufFile::open(p).map_err(anyhow::Error::from)
}

/// The reference model of `verify --against`: tensors under their GGUF names, in f32 for a
/// HuggingFace directory, as stored otherwise.
fn load_source(src: &std::path::Path) -> Result<Model> {
    if src.is_dir() {
        let opts = HfOptions {
            outtype: OutType::F32,
            allow_missing_vocab: true,
            ..Default::default()
        };
        return Ok(read_hf_dir(src, &opts)
            .with_context(|| format!("cannot read {}", src.display()))?
            .model);
    }
    if ggufkit_converters::legacy::detect(src).is_some() {
        let c = read_legacy(src, &LegacyOptions::default())
            .with_context(|| format!("cannot read {}", src.display()))?;
        return Ok(c.model);
    }
    let f = GgufFile::open(src).with_context(|| format!("cannot read {}", src.display()))?;
    Ok(Model::from_gguf(&f))
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Dump { file, json } => dump(file, json),
        Cmd::Manifest { file, name, output } => write_manifest(file, name, output),
        Cmd::Diff { a, b, json } => diff(a, b, json),
        Cmd::Compare {
            quant,
            source,
            imatrix,
            json,
        } => compare(quant, source, imatrix, json),
        Cmd::Recipe { file, plain, json } => recipe(file, plain, json),
        Cmd::Provenance {
            file,
            from,
            revision,
            via,
            imatrix,
            allow_rounding,
            json,
        } => provenance(ProvenanceArgs {
            file,
            from,
            revision,
            via,
            imatrix,
            allow_rounding,
            json,
        }),
        Cmd::Verify {
            file,
            against,
            max_rmse,
            max_abs,
            min_cosine,
            worst,
            json,
        } => {
            let thresholds = Thresholds {
                max_rmse,
                max_abs,
                min_cosine,
            };
            verify(file, against, thresholds, worst, json)
        }
    }
}

/// `dump`: the header, metadata and tensor table.
fn dump(file: PathBuf, json: bool) -> Result<ExitCode> {
    let f = if crate::remote::is_url(&file) {
        // Only the header is read (no tensor byte).
        let transfer = crate::remote::Transfer::start(
            ggufkit_converters::remote::config::DEFAULT_CONNECTIONS,
            false,
        )
        .map_err(crate::edge::Failure::into_error)?;
        let f = crate::remote::gguf_opener(&transfer)(&file)?;
        transfer.finish("", false);
        f
    } else {
        open(&file)?
    };
    let shown = file.display().to_string();
    if json {
        println!("{}", serde_json::to_string_pretty(&dump_json(&f, &shown))?);
    } else {
        print!("{}", dump_text(&f, &shown));
    }
    Ok(ExitCode::SUCCESS)
}

/// `manifest`: the JSON manifest, printed or written to `output`.
fn write_manifest(
    file: PathBuf,
    name: Option<String>,
    output: Option<PathBuf>,
) -> Result<ExitCode> {
    let f = open(&file)?;
    let text = to_pretty(&manifest(&f, &file, name.as_deref()));
    match output {
        // Under the output rules: never the GGUF file read (compared by file
        // identity), written through a temporary file renamed into place.
        Some(o) => {
            let inputs = [file.as_path()];
            let rules = ggufkit::output::OutputRules {
                inputs: &inputs,
                overwrite: true,
                sync: false,
            };
            ggufkit::output::write_file_atomically(&o, (text + "\n").as_bytes(), &rules)
                .with_context(|| format!("cannot write {}", o.display()))?
        }
        None => println!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `diff`: what differs between two files; exit 1 unless identical.
fn diff(a: PathBuf, b: PathBuf, json: bool) -> Result<ExitCode> {
    let (fa, fb) = (open(&a)?, open(&b)?);
    let d = diff_files(&fa, &fb);
    if json {
        println!("{}", serde_json::to_string_pretty(&d.to_json())?);
    } else {
        print!("{}", d.to_text());
    }
    Ok(if d.is_identical() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `compare`: the quantization error against the source; exit 1 when a tensor could not be
/// compared.
fn compare(
    quant: PathBuf,
    source: PathBuf,
    imatrix: Option<PathBuf>,
    json: bool,
) -> Result<ExitCode> {
    let q = Model::from_gguf(&open(&quant)?);
    let src = load_source(&source)?;
    let im = imatrix
        .as_deref()
        .map(ggufkit::quantize::Imatrix::load)
        .transpose()?;
    let r = quality_report(&q, &src, im.as_ref());
    if json {
        println!("{}", serde_json::to_string_pretty(&r.to_json())?);
    } else {
        print!("{}", r.to_text());
    }
    Ok(if r.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `recipe`: the file's layout as a base file type and overrides.
fn recipe(file: PathBuf, plain: bool, json: bool) -> Result<ExitCode> {
    let model = Model::from_gguf(&open(&file)?);
    let r = match ggufkit::quantize::Recipe::of_model(&model) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gguf-inspect: error: {}: {e}", file.display());
            return Ok(ExitCode::from(1));
        }
    };
    if json {
        let items: Vec<_> = r
            .items
            .iter()
            .map(|i| serde_json::json!({"pattern": i.pattern, "tensor": i.tensor, "type": i.ty.name()}))
            .collect();
        let j = serde_json::json!({
            "file": file, "base": r.base.name, "file_type": r.base.id, "imatrix": r.imatrix,
            "overrides": items, "tensor_type_file": r.items_text(),
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else if plain {
        print!("{}", r.items_text());
    } else {
        print!("{}", r.to_text());
    }
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `provenance`.
struct ProvenanceArgs {
    file: PathBuf,
    from: PathBuf,
    revision: Option<String>,
    via: Option<String>,
    imatrix: Option<PathBuf>,
    allow_rounding: bool,
    json: bool,
}

/// Where `provenance`'s source is: a HuggingFace directory (a cache id resolved) or a file.
fn provenance_source_path(a: &ProvenanceArgs) -> Result<(PathBuf, String)> {
    let id = a
        .from
        .to_str()
        .filter(|_| !a.from.exists())
        .and_then(ggufkit_converters::hub::model_id)
        .map(str::to_string);
    match id {
        Some(id) => Ok((
            ggufkit_converters::hub::resolve(&id, a.revision.as_deref())?,
            id,
        )),
        None if a.revision.is_some() => {
            anyhow::bail!("--revision goes with a HuggingFace model id, not a path")
        }
        None => Ok((a.from.clone(), a.from.display().to_string())),
    }
}

/// `--via`'s values: the converter's outtypes but `auto` (the file-type table's rows).
fn via_types() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        OutType::all()
            .filter(|t| *t != OutType::Auto)
            .map(OutType::name),
    )
}

/// The converter outtype `provenance` converts a HuggingFace source to: `--via`, else the
/// file's own type when the converter writes it, else f32.
fn provenance_outtype(a: &ProvenanceArgs, file_type: Option<u32>) -> OutType {
    let by_name = |n: &str| OutType::parse(n).unwrap_or(OutType::F32);
    match &a.via {
        Some(v) => by_name(v),
        None => OutType::all()
            .filter(|t| *t != OutType::Auto)
            .find(|t| Some(t.file_type()) == file_type)
            .unwrap_or(OutType::F32),
    }
}

/// `provenance`: the file against what its source gives (see
/// [`ggufkit::inspect::provenance`]). A file of a type the converter writes is compared with
/// the conversion itself; a quantized file with the conversion (or GGUF) quantized by the
/// file's recipe. A `Q8_0` file can be either, and gets the closer of the two.
fn provenance(a: ProvenanceArgs) -> Result<ExitCode> {
    use ggufkit::inspect::provenance::{check, Outcome, ProvenanceReport};
    let f = open(&a.file)?;
    let file_type = file_type_of(&Model::from_gguf(&f));
    let (path, label) = provenance_source_path(&a)?;
    let report: ProvenanceReport = if path.is_dir() {
        let outtype = provenance_outtype(&a, file_type);
        let opts = HfOptions {
            outtype,
            ..Default::default()
        };
        let converted = read_hf_dir(&path, &opts)
            .with_context(|| format!("cannot read {}", path.display()))?
            .model;
        let converted_type = file_type_of(&converted);
        if converted_type == file_type {
            let direct = check(&f, &converted, &converted);
            if direct.outcome() == Outcome::Identical || !quantize_type(file_type) {
                direct
            } else {
                // Q8_0 (or a ternary type) made by llama-quantize rather than the converter.
                let base = if [OutType::F32, OutType::F16, OutType::Bf16].contains(&outtype) {
                    converted
                } else {
                    let opts = HfOptions {
                        outtype: OutType::F32,
                        ..Default::default()
                    };
                    read_hf_dir(&path, &opts)?.model
                };
                let requantized = provenance_quantized(&a, &f, &base, &label)?;
                if requantized.outcome() == Outcome::Differs {
                    direct
                } else {
                    requantized
                }
            }
        } else {
            provenance_quantized(&a, &f, &converted, &label)?
        }
    } else {
        let src =
            GgufFile::open(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let src = Model::from_gguf(&src);
        if file_type_of(&src) == file_type {
            check(&f, &src, &src)
        } else {
            provenance_quantized(&a, &f, &src, &label)?
        }
    };
    let file_label = a.file.display().to_string();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.to_json(&file_label, &label))?
        );
    } else {
        for line in report.detail_lines() {
            println!("{line}");
        }
        println!("{}", report.summary(&file_label, &label));
    }
    Ok(match report.outcome() {
        Outcome::Identical => ExitCode::SUCCESS,
        Outcome::WithinRounding if a.allow_rounding => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

/// A model's `general.file_type`.
fn file_type_of(m: &Model) -> Option<u32> {
    use ggufkit::gguf::keys::general::FILE_TYPE;
    m.metadata
        .get(FILE_TYPE)
        .and_then(|v| v.as_int())
        .and_then(|i| u32::try_from(i).ok())
}

/// Whether llama-quantize writes file type `id`.
fn quantize_type(id: Option<u32>) -> bool {
    id.is_some_and(|id| ggufkit::quantize::FileType::parse(&id.to_string()).is_some())
}

/// The file against `src` quantized with the file's recipe, a tensor at a time.
fn provenance_quantized(
    a: &ProvenanceArgs,
    f: &GgufFile,
    src: &Model,
    label: &str,
) -> Result<ggufkit::inspect::provenance::ProvenanceReport> {
    use ggufkit::quantize::{plan, Imatrix, QuantizeOptions, Recipe, TensorTypeList};
    let have = Model::from_gguf(f);
    let recipe = Recipe::of_model(&have).with_context(|| a.file.display().to_string())?;
    let mut opts = QuantizeOptions::new(recipe.base);
    let mut tt = TensorTypeList::new();
    recipe.extend(&mut tt, &a.file.display().to_string())?;
    opts.tensor_types = tt.into_vec();
    if let Some(p) = &a.imatrix {
        // The file records the imatrix under the name it was given; the key must match.
        let name = have
            .metadata
            .get(ggufkit::gguf::keys::quantize::IMATRIX_FILE)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| p.display().to_string());
        opts.imatrix = Some((name, Imatrix::load(p)?));
    }
    let p = plan(src, &opts).with_context(|| label.to_string())?;
    Ok(ggufkit::inspect::provenance::check(f, &p.model, src))
}

/// `verify`: the file's own checks, an interrupted in-place edit, and with `against` the
/// comparison with its source; exit 1 on any error or threshold violated.
fn verify(
    file: PathBuf,
    against: Option<PathBuf>,
    thresholds: Thresholds,
    worst: usize,
    json: bool,
) -> Result<ExitCode> {
    let parsed = GgufFile::open(&file);
    let mut report = match &parsed {
        Ok(f) => {
            let mut r = verify_file(f);
            ggufkit::inspect::verify_split_siblings(&file, f, &mut r);
            r
        }
        Err(e) => ggufkit::inspect::VerifyReport {
            errors: vec![e.to_string()],
            ..Default::default()
        },
    };
    let journal = ggufkit::edit::inplace::journal_path(&file);
    if journal.exists() {
        report.errors.insert(
            0,
            format!(
                "an in-place edit of this file was interrupted ({} exists): its header \
                 may be torn; run `gguf-edit recover {}`",
                journal.display(),
                file.display()
            ),
        );
    }
    let comparison = match (&parsed, &against) {
        (Ok(f), Some(src)) => Some(compare_with_source(f, &load_source(src)?)),
        _ => None,
    };
    let compare_ok = comparison
        .as_ref()
        .is_none_or(|c| c.problems.is_empty() && c.violations(&thresholds).is_empty());
    if json {
        let mut j = report.to_json();
        if let Some(c) = &comparison {
            j["against"] = c.to_json(&thresholds);
            j["ok"] = serde_json::json!(report.ok() && compare_ok);
        }
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        print_verify(
            &file,
            &report,
            comparison.as_ref(),
            &thresholds,
            worst,
            compare_ok,
        );
    }
    Ok(if report.ok() && compare_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `verify`'s text report.
fn print_verify(
    file: &Path,
    report: &ggufkit::inspect::VerifyReport,
    comparison: Option<&CompareReport>,
    thresholds: &Thresholds,
    worst: usize,
    compare_ok: bool,
) {
    if let Some(c) = comparison {
        for p in &c.problems {
            println!("error: {p}");
        }
        for v in c.violations(thresholds) {
            println!("error: {v}");
        }
        println!("worst tensors against the source:");
        for e in c.worst(worst) {
            println!(
                "  {:<40} {:<8} rmse {:.4e}  max abs {:.4e}  cosine {:.6}",
                e.name,
                e.ty.name(),
                e.rmse,
                e.max_abs,
                e.cosine
            );
        }
    }
    for e in &report.errors {
        println!("error: {e}");
    }
    for w in &report.warnings {
        println!("warning: {w}");
    }
    for (n, nan, inf) in &report.non_finite {
        println!("error: tensor '{n}' has {nan} NaN and {inf} Inf values");
    }
    println!(
        "{}: {} ({} tensors scanned)",
        file.display(),
        if report.ok() && compare_ok {
            "OK"
        } else {
            "FAILED"
        },
        report.scanned
    );
}

/// The tool's entry point.
pub fn main() -> ExitCode {
    crate::edge::start::<Cli>();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gguf-inspect: error: {}", crate::edge::describe(&e));
            ExitCode::from(3)
        }
    }
}
