//! Jobs files (`gguf-convert --batch jobs.toml`, or `.json`).
//!
//! ```toml
//! outdir = "out"                      # default output directory (relative to this file)
//!
//! [[job]]
//! source = "models/Llama-3.2-1B"      # HF directory, GGUF file or legacy .bin
//! outputs = ["f16", "q8_0", "q4_k_m"] # or "f16,q8_0,q4_k_m"
//! imatrix = "imatrix.gguf"            # options for every output of the job…
//!
//! [[job]]
//! source = "old/llama-7b.bin"            # or "hf://org/name@rev", "https://host/dir/" (remote)
//! gqa = 1
//! eps = 1e-6
//! outdir = "out/legacy"
//! outputs = [
//!   "q4_0",
//!   { type = "q4_k_m", name = "llama-7b-imat.gguf", imatrix = "imat.dat", tensor_type = ["ffn_down=q6_k"] },
//! ]
//! ```
//!
//! An output may be a recipe instead of a type: `{ recipe = "q4_k_m.recipe" }` (a file
//! `gguf-inspect recipe` wrote) or `{ like = "upstream-Q4_K_M.gguf" }` (that file's layout);
//! the recipe's base file type is the output's type unless `type` is given, and its items
//! apply after any `tensor_type`. So one job whose outputs are an uploader's recipes
//! regenerates their set of quants from the base model.
//!
//! The JSON form has the same fields, with `jobs` (or `job`) the list. Relative paths are
//! relative to the jobs file's directory. Unknown fields are errors (a typo must not be
//! silently ignored).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use ggufkit::quantize::Recipe;

use super::plan::{
    parse_size, text_mtp, OutputOptions, PlanError, SourceOptions, SplitOptions, Target,
};

/// A job as resolved from a jobs file or the command line.
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// Name used in reports and progress (default: the source's file name).
    pub label: String,
    /// The source model.
    pub source: PathBuf,
    /// Source options.
    pub source_opts: SourceOptions,
    /// Output directory.
    pub outdir: PathBuf,
    /// The outputs.
    pub outputs: Vec<OutputSpec>,
}

impl JobSpec {
    /// Every file or directory the job reads: the source, its option files and each
    /// output's imatrix. No file the batch writes may be one of them.
    pub fn input_paths(&self) -> Vec<PathBuf> {
        let o = &self.source_opts;
        std::iter::once(&self.source)
            .chain(&o.metadata)
            .chain(&o.vocab_dir)
            .chain(&o.lora_base)
            .chain(&o.target_model_dir)
            .chain(
                self.outputs
                    .iter()
                    .filter_map(|out| out.opts.imatrix.as_ref()),
            )
            .cloned()
            .collect()
    }
}

/// One requested output of a job.
#[derive(Debug, Clone)]
pub struct OutputSpec {
    /// The type.
    pub target: Target,
    /// The type as written in the request.
    pub outtype: String,
    /// File name or path (relative to the job's outdir); default: llama.cpp's name.
    pub name: Option<PathBuf>,
    /// Quantizer options.
    pub opts: OutputOptions,
    /// Splitting.
    pub split: SplitOptions,
}

/// A jobs file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    /// The file cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML/JSON or does not have the expected fields.
    #[error("{path}: {problem}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A value is wrong.
    #[error("{path}: job {job}: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based job number.
        job: usize,
        /// What is wrong.
        problem: String,
    },
}

/// Quantizer and split options, at job level (defaults) or per output.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct OptionFields {
    imatrix: Option<PathBuf>,
    #[serde(alias = "tensor_types")]
    tensor_type: Option<StrOrList>,
    pure: Option<bool>,
    output_tensor_type: Option<String>,
    token_embedding_type: Option<String>,
    leave_output_tensor: Option<bool>,
    override_kv: Option<StrOrList>,
    split_max_size: Option<Size>,
    split_max_tensors: Option<usize>,
    no_tensor_first_split: Option<bool>,
    recipe: Option<PathBuf>,
    like: Option<PathBuf>,
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum StrOrList {
    One(String),
    Many(Vec<String>),
}

impl StrOrList {
    fn into_vec(self) -> Vec<String> {
        match self {
            StrOrList::One(s) => vec![s],
            StrOrList::Many(v) => v,
        }
    }
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Size {
    Bytes(u64),
    Text(String),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OutputEntry {
    Type(String),
    Full(Box<OutputTable>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputTable {
    #[serde(rename = "type", alias = "outtype", default)]
    ty: Option<String>,
    #[serde(alias = "path", alias = "file")]
    name: Option<PathBuf>,
    #[serde(flatten)]
    opts: OptionFields,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Outputs {
    Text(String),
    List(Vec<OutputEntry>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobTable {
    source: PathBuf,
    name: Option<String>,
    outdir: Option<PathBuf>,
    #[serde(alias = "outtype")]
    outputs: Outputs,
    vocab_only: Option<bool>,
    bigendian: Option<bool>,
    metadata: Option<PathBuf>,
    model_name: Option<String>,
    gqa: Option<u32>,
    eps: Option<f32>,
    context_length: Option<u32>,
    vocab_dir: Option<PathBuf>,
    desc: Option<String>,
    /// A draft source's target model (`--target-model-dir`).
    #[serde(alias = "target")]
    target_model_dir: Option<PathBuf>,
    #[serde(flatten)]
    opts: OptionFields,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobsFile {
    outdir: Option<PathBuf>,
    #[serde(alias = "jobs")]
    job: Vec<JobTable>,
}

// serde's `flatten` does not combine with `deny_unknown_fields` on the outer struct, so
// the flattened tables are checked by hand (see `check_fields`).
const JOB_FIELDS: &[&str] = &[
    "source",
    "name",
    "outdir",
    "outputs",
    "outtype",
    "vocab_only",
    "bigendian",
    "metadata",
    "model_name",
    "gqa",
    "eps",
    "context_length",
    "vocab_dir",
    "desc",
    "target_model_dir",
    "target",
];
const OUTPUT_FIELDS: &[&str] = &["type", "outtype", "name", "path", "file"];
const OPTION_FIELDS: &[&str] = &[
    "imatrix",
    "tensor_type",
    "tensor_types",
    "pure",
    "output_tensor_type",
    "token_embedding_type",
    "leave_output_tensor",
    "override_kv",
    "split_max_size",
    "split_max_tensors",
    "no_tensor_first_split",
    "recipe",
    "like",
];

/// A field of a jobs file that is not one of the known ones (or a missing required one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// The top level is not a table.
    #[error("the top level must be a table/object")]
    NotATable,
    /// An unknown top-level field.
    #[error("unknown top-level field '{0}' (expected outdir and [[job]] entries)")]
    UnknownTopLevel(String),
    /// No `job`/`jobs` list.
    #[error("no jobs: add [[job]] entries (\"jobs\": [...] in JSON)")]
    NoJobs,
    /// An unknown field of a job.
    #[error("job {job}: unknown field '{field}'")]
    UnknownJobField {
        /// 1-based job number.
        job: usize,
        /// The field.
        field: String,
    },
    /// An unknown field of an output of a job.
    #[error("job {job}: output: unknown field '{field}'")]
    UnknownOutputField {
        /// 1-based job number.
        job: usize,
        /// The field.
        field: String,
    },
}

fn check_fields(v: &serde_json::Value) -> Result<(), FieldError> {
    let obj = v.as_object().ok_or(FieldError::NotATable)?;
    if let Some(k) = obj
        .keys()
        .find(|k| !["outdir", "job", "jobs"].contains(&k.as_str()))
    {
        return Err(FieldError::UnknownTopLevel(k.clone()));
    }
    let jobs = obj
        .get("job")
        .or_else(|| obj.get("jobs"))
        .ok_or(FieldError::NoJobs)?;
    for (i, j) in jobs.as_array().into_iter().flatten().enumerate() {
        for k in j.as_object().into_iter().flat_map(|o| o.keys()) {
            if !JOB_FIELDS.contains(&k.as_str()) && !OPTION_FIELDS.contains(&k.as_str()) {
                return Err(FieldError::UnknownJobField {
                    job: i + 1,
                    field: k.clone(),
                });
            }
        }
        let outs = j.get("outputs").or_else(|| j.get("outtype"));
        for o in outs.and_then(|o| o.as_array()).into_iter().flatten() {
            for k in o.as_object().into_iter().flat_map(|o| o.keys()) {
                if !OUTPUT_FIELDS.contains(&k.as_str()) && !OPTION_FIELDS.contains(&k.as_str()) {
                    return Err(FieldError::UnknownOutputField {
                        job: i + 1,
                        field: k.clone(),
                    });
                }
            }
        }
    }
    Ok(())
}

fn size(s: &Option<Size>) -> Result<Option<u64>, PlanError> {
    match s {
        None => Ok(None),
        Some(Size::Bytes(b)) => Ok(Some(*b)),
        Some(Size::Text(t)) => parse_size(t).map(Some),
    }
}

fn resolve(dir: &Path, p: &Path) -> PathBuf {
    // A remote source (`hf://org/name`, a URL) is not a path.
    if p.is_absolute() || crate::remote::source::RemoteSource::parse(p).is_some() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// Merges per-output option fields over the job's.
fn merged(job: &OptionFields, out: &OptionFields) -> OptionFields {
    OptionFields {
        imatrix: out.imatrix.clone().or_else(|| job.imatrix.clone()),
        tensor_type: out.tensor_type.clone().or_else(|| job.tensor_type.clone()),
        pure: out.pure.or(job.pure),
        output_tensor_type: out
            .output_tensor_type
            .clone()
            .or_else(|| job.output_tensor_type.clone()),
        token_embedding_type: out
            .token_embedding_type
            .clone()
            .or_else(|| job.token_embedding_type.clone()),
        leave_output_tensor: out.leave_output_tensor.or(job.leave_output_tensor),
        override_kv: out.override_kv.clone().or_else(|| job.override_kv.clone()),
        split_max_size: out
            .split_max_size
            .clone()
            .or_else(|| job.split_max_size.clone()),
        split_max_tensors: out.split_max_tensors.or(job.split_max_tensors),
        no_tensor_first_split: out.no_tensor_first_split.or(job.no_tensor_first_split),
        // An output's own recipe (or layout) replaces the job's.
        recipe: if out.recipe.is_some() || out.like.is_some() {
            out.recipe.clone()
        } else {
            job.recipe.clone()
        },
        like: if out.recipe.is_some() || out.like.is_some() {
            out.like.clone()
        } else {
            job.like.clone()
        },
    }
}

/// The recipe an output names (`recipe = FILE` or `like = OTHER.gguf`), if any.
fn output_recipe(dir: &Path, o: &OptionFields) -> Result<Option<Recipe>, String> {
    match (&o.recipe, &o.like) {
        (Some(_), Some(_)) => Err("an output takes recipe or like, not both".into()),
        (Some(p), None) => Recipe::load(&resolve(dir, p))
            .map(Some)
            .map_err(|e| e.to_string()),
        (None, Some(p)) => {
            let p = resolve(dir, p);
            let f = ggufkit::gguf::GgufFile::open(&p)
                .map_err(|e| format!("like {}: {e}", p.display()))?;
            Recipe::of_model(&ggufkit::ir::Model::from_gguf(&f))
                .map(Some)
                .map_err(|e| format!("like {}: {e}", p.display()))
        }
        (None, None) => Ok(None),
    }
}

/// The output of type `outtype` (or, when none is given, its recipe's base file type).
fn output_spec(
    dir: &Path,
    outtype: Option<&str>,
    name: Option<PathBuf>,
    o: &OptionFields,
) -> Result<OutputSpec, String> {
    let recipe = output_recipe(dir, o)?;
    let outtype = match (outtype, &recipe) {
        (Some(t), _) => t.to_string(),
        (None, Some(r)) => r.base.name.to_string(),
        (None, None) => return Err("an output needs a type (or a recipe or like)".into()),
    };
    let mut tensor_types = o
        .tensor_type
        .clone()
        .map(StrOrList::into_vec)
        .unwrap_or_default();
    tensor_types.extend(
        recipe
            .iter()
            .flat_map(|r| r.items.iter().map(|i| i.to_item())),
    );
    output_spec_typed(dir, &outtype, name, o, tensor_types).map_err(|e| e.to_string())
}

fn output_spec_typed(
    dir: &Path,
    outtype: &str,
    name: Option<PathBuf>,
    o: &OptionFields,
    tensor_types: Vec<String>,
) -> Result<OutputSpec, PlanError> {
    Ok(OutputSpec {
        target: Target::parse(outtype)?,
        outtype: outtype.to_string(),
        name,
        opts: OutputOptions {
            // Read relative to the jobs file, but stored in the output as written (as
            // llama-quantize stores its argument).
            imatrix: o.imatrix.as_ref().map(|p| resolve(dir, p)),
            imatrix_name: o.imatrix.as_ref().map(|p| p.to_string_lossy().into_owned()),
            tensor_types,
            pure: o.pure.unwrap_or(false),
            output_tensor_type: o.output_tensor_type.clone(),
            token_embedding_type: o.token_embedding_type.clone(),
            leave_output_tensor: o.leave_output_tensor.unwrap_or(false),
            override_kv: o
                .override_kv
                .clone()
                .map(StrOrList::into_vec)
                .unwrap_or_default(),
            dry_run: false,
        },
        split: SplitOptions {
            max_tensors: o.split_max_tensors,
            max_size: size(&o.split_max_size)?,
            no_tensor_first_split: o.no_tensor_first_split.unwrap_or(false),
        },
    })
}

/// An empty item in a list of types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("type list {list:?}: item {item} is empty (a stray comma?)")]
pub struct EmptyTypeItem {
    /// The list as given.
    pub list: String,
    /// 1-based position of the empty item.
    pub item: usize,
}

/// Splits `"f16,q8_0"` into types; an empty item (`"q4_k_m,,"`, `",f16"`, `""`) is an error.
pub fn split_types(s: &str) -> Result<Vec<String>, EmptyTypeItem> {
    s.split(',')
        .map(str::trim)
        .enumerate()
        .map(|(i, t)| {
            if t.is_empty() {
                Err(EmptyTypeItem {
                    list: s.to_string(),
                    item: i + 1,
                })
            } else {
                Ok(t.to_string())
            }
        })
        .collect()
}

/// Reads a jobs file. `default_outdir` (the command line's `--outdir`) applies to jobs
/// with no `outdir` when the file sets none either; the last resort is the file's directory.
pub fn load(path: &Path, default_outdir: Option<&Path>) -> Result<Vec<JobSpec>, JobsError> {
    let text = std::fs::read_to_string(path).map_err(|source| JobsError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let syntax = |problem: String| JobsError::Syntax {
        path: path.to_path_buf(),
        problem,
    };
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let value: serde_json::Value = if is_json {
        serde_json::from_str(&text).map_err(|e| syntax(e.to_string()))?
    } else {
        toml::from_str(&text).map_err(|e| syntax(e.to_string().trim_end().to_string()))?
    };
    check_fields(&value).map_err(|e| syntax(e.to_string()))?;
    let file: JobsFile = serde_json::from_value(value).map_err(|e| syntax(e.to_string()))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    if file.job.is_empty() {
        return Err(syntax("no jobs".into()));
    }
    let top_outdir = file
        .outdir
        .as_ref()
        .map(|o| resolve(&dir, o))
        .or_else(|| default_outdir.map(Path::to_path_buf))
        .unwrap_or_else(|| dir.clone());
    let mut jobs = Vec::new();
    for (i, j) in file.job.into_iter().enumerate() {
        let invalid = |problem: String| JobsError::Invalid {
            path: path.to_path_buf(),
            job: i + 1,
            problem,
        };
        let source = resolve(&dir, &j.source);
        let entries: Vec<OutputEntry> = match j.outputs {
            Outputs::Text(t) => split_types(&t)
                .map_err(|e| invalid(e.to_string()))?
                .into_iter()
                .map(OutputEntry::Type)
                .collect(),
            Outputs::List(l) => l,
        };
        if entries.is_empty() {
            return Err(invalid("no outputs".into()));
        }
        let mut outputs = Vec::new();
        for e in entries {
            let spec = match e {
                OutputEntry::Type(t) => {
                    output_spec(&dir, Some(&t), None, &j.opts).map_err(invalid)?
                }
                OutputEntry::Full(o) => {
                    let m = merged(&j.opts, &o.opts);
                    output_spec(&dir, o.ty.as_deref(), o.name, &m).map_err(invalid)?
                }
            };
            outputs.push(spec);
        }
        let label = j.name.unwrap_or_else(|| {
            source
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| source.display().to_string())
        });
        jobs.push(JobSpec {
            label,
            outdir: j
                .outdir
                .map(|o| resolve(&dir, &o))
                .unwrap_or_else(|| top_outdir.clone()),
            source_opts: SourceOptions {
                vocab_only: j.vocab_only.unwrap_or(false),
                metadata: j.metadata.map(|m| resolve(&dir, &m)),
                model_name: j.model_name,
                gqa: j.gqa,
                eps: j.eps,
                context_length: j.context_length,
                vocab_dir: j.vocab_dir.map(|v| resolve(&dir, &v)),
                desc: j.desc,
                dry_run: false,
                big_endian: j.bigendian.unwrap_or(false),
                lora_base: None,
                fp8_as_q8: false,
                mistral_format: None,
                // The text outputs leave the MTP layers to a draft output (`mtp`).
                mtp: text_mtp(Default::default(), outputs.iter().map(|o| o.target))
                    .map_err(|e| invalid(e.to_string()))?,
                allow_unloadable: false,
                target_model_dir: j.target_model_dir.map(|t| resolve(&dir, &t)),
            },
            source,
            outputs,
        });
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ggufkit-jobs-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn toml_and_json_forms() {
        let p = write(
            "a.toml",
            r#"
outdir = "out"
[[job]]
source = "m"
outputs = "f16, q8_0"
imatrix = "im.gguf"
[[job]]
source = "/abs/x.gguf"
outdir = "o2"
split_max_size = "2G"
outputs = ["q4_0", { type = "q4_k_m", name = "x.gguf", pure = true, tensor_type = "ffn_down=q8_0" }]
"#,
        );
        let jobs = load(&p, None).unwrap();
        let dir = p.parent().unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].outdir, dir.join("out"));
        assert_eq!(jobs[0].source, dir.join("m"));
        assert_eq!(jobs[0].outputs.len(), 2);
        assert_eq!(jobs[0].outputs[1].opts.imatrix, Some(dir.join("im.gguf")));
        assert_eq!(jobs[1].source, PathBuf::from("/abs/x.gguf"));
        assert_eq!(jobs[1].outdir, dir.join("o2"));
        let o = &jobs[1].outputs[1];
        assert!(o.opts.pure && o.opts.tensor_types == ["ffn_down=q8_0"]);
        assert_eq!(o.split.max_size, Some(2_000_000_000));
        assert_eq!(o.name.as_deref(), Some(Path::new("x.gguf")));
        let j = write(
            "a.json",
            r#"{"jobs": [{"source": "m", "outputs": ["q4_0"], "gqa": 2, "eps": 1e-5}]}"#,
        );
        let jobs = load(&j, Some(Path::new("/tmp/o"))).unwrap();
        assert_eq!(jobs[0].outdir, PathBuf::from("/tmp/o"));
        assert_eq!(jobs[0].source_opts.gqa, Some(2));
    }

    #[test]
    fn mistakes_are_reported() {
        for (text, want) in [
            (
                "[[job]]\nsource = \"m\"\noutputs = [\"q4_0\"]\nimatrx = \"x\"\n",
                "unknown field 'imatrx'",
            ),
            (
                "[[job]]\nsource = \"m\"\noutputs = [\"q9_9\"]\n",
                "unknown --outtype",
            ),
            ("[[job]]\nsource = \"m\"\noutputs = []\n", "no outputs"),
            ("[[job]]\noutputs = [\"q4_0\"]\n", "source"),
            ("outdir = \"x\"\n", "no jobs"),
            ("[[job]\n", "job"),
            (
                "[[job]]\nsource = \"m\"\noutputs = [{ type = \"q4_0\", bogus = 1 }]\n",
                "unknown field 'bogus'",
            ),
        ] {
            let p = write("bad.toml", text);
            let e = load(&p, None).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
