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
        /// The GGUF file.
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
    /// How much a quantized file lost against its source: per tensor the RMSE, the relative
    /// error sqrt(sum (q-x)^2 / sum x^2) and, with --imatrix, the importance-weighted squared
    /// error sum w_col (q-x)^2 and its relative form; then totals. Works on files made by
    /// any tool. Exit 0 when every tensor could be compared.
    ///
    /// Example: gguf-inspect compare model-Q4_K_M.gguf model-f16.gguf --imatrix imatrix.gguf
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
    /// Check that a quantized file is what its claimed source gives: its recipe is read, the
    /// source (an f32/f16/bf16 GGUF) is quantized with it a tensor at a time in memory, and
    /// every tensor and metadata key is compared. Exit 0 identical, 1 something differs.
    ///
    /// Example: gguf-inspect provenance model-Q4_K_M.gguf --from model-f16.gguf
    Provenance {
        /// The quantized GGUF file.
        file: PathBuf,
        /// The source it claims: a GGUF file.
        #[arg(long, value_name = "SOURCE")]
        from: PathBuf,
        /// The importance matrix the file was made with.
        #[arg(long, value_name = "FILE")]
        imatrix: Option<PathBuf>,
    },
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
            imatrix,
        } => provenance(file, from, imatrix),
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
    let f = open(&file)?;
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

/// `provenance`: the file against its source quantized with the file's recipe, a tensor
/// at a time; exit 1 when a tensor or a metadata key differs.
fn provenance(file: PathBuf, from: PathBuf, imatrix: Option<PathBuf>) -> Result<ExitCode> {
    use ggufkit::quantize::{plan, Imatrix, QuantizeOptions, Recipe, TensorTypeList};
    let f = open(&file)?;
    let have = Model::from_gguf(&f);
    let recipe = Recipe::of_model(&have).with_context(|| file.display().to_string())?;
    let src = Model::from_gguf(&open(&from)?);
    let mut opts = QuantizeOptions::new(recipe.base);
    let mut tt = TensorTypeList::new();
    recipe.extend(&mut tt, &file.display().to_string())?;
    opts.tensor_types = tt.into_vec();
    if let Some(p) = &imatrix {
        let name = have
            .metadata
            .get(ggufkit::gguf::keys::quantize::IMATRIX_FILE)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| p.display().to_string());
        opts.imatrix = Some((name, Imatrix::load(p)?));
    }
    let p = plan(&src, &opts).with_context(|| from.display().to_string())?;
    let mut differ = Vec::new();
    for t in &p.model.tensors {
        let Some(h) = have.tensors.iter().find(|h| h.name == t.name) else {
            differ.push(format!("tensor {}: not in {}", t.name, file.display()));
            continue;
        };
        let (want, got) = (t.data.bytes()?, h.data.bytes()?);
        if h.ty != t.ty || h.dims != t.dims || want != got {
            let n = want.iter().zip(got.iter()).filter(|(a, b)| a != b).count();
            differ.push(format!(
                "tensor {}: different ({} of {} bytes differ)",
                t.name,
                n + want.len().abs_diff(got.len()),
                want.len()
            ));
        }
    }
    for h in &have.tensors {
        if !p.model.tensors.iter().any(|t| t.name == h.name) {
            differ.push(format!("tensor {}: not made from the source", h.name));
        }
    }
    for (k, v) in have.metadata.iter() {
        match p.model.metadata.get(k) {
            Some(w) if w == v => {}
            Some(_) => differ.push(format!("key {k}: different")),
            None => differ.push(format!("key {k}: not written from the source")),
        }
    }
    for (k, _) in p.model.metadata.iter() {
        if have.metadata.get(k).is_none() {
            differ.push(format!("key {k}: missing"));
        }
    }
    for d in &differ {
        println!("{d}");
    }
    println!(
        "{}: {} against {} ({} tensors, {} keys)",
        file.display(),
        if differ.is_empty() {
            "identical"
        } else {
            "DIFFERS"
        },
        from.display(),
        have.tensors.len(),
        have.metadata.iter().count()
    );
    Ok(if differ.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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
