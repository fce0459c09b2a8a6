//! gguf-convert: a HuggingFace model directory (or a GGUF, or a legacy GGML file) → GGUF, in
//! one pass, byte for byte as llama.cpp's `convert_hf_to_gguf.py` (and, for quantized types,
//! `llama-quantize`) write it; several outputs of one source in one pass; batches of jobs.

use ggufkit::gguf::{keys, ByteOrder};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;

use crate::edge::{exit_with, Failure};
use ggufkit_converters::remote::source::RemoteSource;
use serde_json::json;

use ggufkit::inspect::human_bytes;
use ggufkit::ir::Model;
use ggufkit::pipeline::{self, ExecuteOptions, OutputPlan, ShardPlan, WrittenOutput};
use ggufkit::progress::TensorBar;
use ggufkit::split::{distribute, split_path};
use ggufkit_converters::batch::jobs::{self, JobSpec, OutputSpec};
use ggufkit_converters::batch::plan::{
    parse_memory, parse_size, text_mtp, OutputOptions, PlanError, PlanErrorKind, PlannedOutput,
    Source, SourceOptions, SplitOptions, Target,
};
use ggufkit_converters::batch::progress::{Mode, Progress};
use ggufkit_converters::batch::shard::Shard;
use ggufkit_converters::batch::{run_batch, BatchOptions, Report};
use ggufkit_converters::hf::mistral::MistralFormat;
use ggufkit_converters::hf::Mtp;
use ggufkit_converters::hf::OutType;

/// Convert a HuggingFace model directory or a legacy GGML/GGMF/GGJT .bin to GGUF, identical to
/// llama.cpp's converters; several types at once; whole batches for CI.
///
///   gguf-convert ./Llama-3.2-1B-Instruct                      # auto type, llama.cpp's file name
///   gguf-convert ./my-model out.gguf --outtype f16
///   gguf-convert ./my-model --outtype q4_k_m --outdir models/  # quantized in the same pass
///   gguf-convert ./my-model out.gguf --split-max-size 2G
///   gguf-convert ./my-model --dry-run                          # the plan, nothing written
///   gguf-convert old-llama-7b.bin out.gguf --gqa 1 --eps 1e-6  # a pre-GGUF model
///
/// Several outputs from one read of the source (each tensor is read and converted to f32 once,
/// then quantized for every output; all files are written in the same pass):
///
///   gguf-convert ./my-model --outtype f16,q8_0,q4_k_m,q2_k --outdir models/
///
/// Vision-language models: the projector file (mmproj) alone, as convert_hf_to_gguf.py
/// --mmproj writes it, or the text model and the projector in one pass:
///
///   gguf-convert ./gemma-3-4b-it --mmproj                     # mmproj-Gemma-3-4B-It-BF16.gguf
///   gguf-convert ./gemma-3-4b-it --outtype q4_k_m,mmproj       # both files, one read
///
/// Models with a multi-token-prediction (MTP / NextN) head: the text model without it (as
/// --no-mtp) and its MTP draft (as --mtp; `mtp:q4_k_m` for another type) in one pass, with
/// `mmproj` too for a model that also has a projector (`--outtype q8_0,mmproj,mtp`):
///
///   gguf-convert ./GLM-4.5-Air --outtype q8_0,mtp             # model + draft, one read
///
/// A batch of jobs (TOML or JSON; see below), with a JSON Lines report:
///
///   gguf-convert --batch jobs.toml --report report.jsonl --max-memory 8G -j 8
///
///   # jobs.toml (relative paths are relative to this file)
///   outdir = "out"
///   [[job]]
///   source = "models/Llama-3.2-1B"
///   outputs = ["f16", "q8_0", "q4_k_m"]
///   [[job]]
///   source = "models/other.gguf"
///   imatrix = "imatrix.gguf"             # any option below, for every output of the job
///   outputs = ["q4_k_m", { type = "q6_k", name = "other-q6.gguf", pure = true }]
///   [[job]]
///   source = "models/gemma-3-4b-it"
///   outputs = ["q4_k_m", "mmproj"]        # the text model and its projector, one read
///   [[job]]
///   source = "models/GLM-4.5-Air"
///   outputs = ["q8_0", "mtp:q8_0"]        # the model without its MTP layers, and its draft
///   [[job]]
///   source = "models/EAGLE3-LLaMA3.1-Instruct-8B"
///   target = "models/Llama-3.1-8B-Instruct"   # a standalone draft's target model
///   outputs = ["f16"]
///
/// Job options: outdir, name, vocab_only, metadata, model_name, target, gqa, eps,
/// context_length, vocab_dir, desc; per job or per output: imatrix, tensor_type, pure, output_tensor_type,
/// token_embedding_type, leave_output_tensor, override_kv, split_max_size, split_max_tensors,
/// no_tensor_first_split.
///
/// The report (--report FILE, or stdout with --json) has one JSON object per line: per output
/// {"type":"output", "output", "outtype", "status": done|skipped|failed|planned, "size",
/// "sha256", "files", "bits_per_weight", "seconds", "error"}; per job {"type":"job", "status":
/// ok|failed, "error", …}; a closing {"type":"summary", …}.
///
/// Batches (and several --outtype values) are resumable: an output whose inputs (source files'
/// sizes and mtimes, option files, options, tool version) have not changed since it was written
/// is skipped, so rerunning an interrupted batch finishes only what is missing. The record lives
/// in OUTDIR/.ggufkit-batch.json. Outputs appear only when complete; temporary files of killed
/// runs are removed. Jobs run concurrently within --threads and --max-memory; the bytes do not
/// depend on either.
///
/// --outtype takes the converter's types (listed under --outtype) or any gguf-quantize type
/// (q4_k_m, q6_k, …); a quantized type gives the same file as converting to f32 and then
/// running llama-quantize, without the intermediate file. SRC may also be a
/// GGUF file (then only quantized types make sense).
///
/// Exit status, one output: 0 success; 1 the conversion failed (nothing is written); 2 usage
/// error; 3 the input could not be read. Several outputs or --batch: 0 every job done (or up to
/// date); 1 some job failed (the others still finish); 2 usage error.
#[derive(Parser, Debug)]
#[command(
    name = "gguf-convert",
    version,
    about = "Convert HuggingFace or legacy GGML models to GGUF, identical to llama.cpp's converters",
    infer_long_args = true,
    long_about,
    verbatim_doc_comment
)]
struct Cli {
    /// The model: a HuggingFace directory (config.json, *.safetensors or pytorch_model*.bin,
    /// tokenizer files; an HF cache snapshot folder works too), a GGUF file or a legacy .bin;
    /// or a model id in
    /// the local HuggingFace cache (`Qwen/Qwen2.5-0.5B-Instruct`, `hf:org/name`), whose
    /// outputs then go to the current directory unless OUT or --outdir says otherwise.
    #[arg(required_unless_present_any = ["batch", "list_architectures"])]
    src: Option<PathBuf>,
    /// With a model id: the branch, tag or commit in the cache (default: main).
    #[arg(long, value_name = "REV")]
    revision: Option<String>,
    /// Output file or directory (default: llama.cpp's name, in --outdir or the model directory).
    /// `{ftype}` / `{FTYPE}` (or `{outtype}`, `{OUTTYPE}`) in the file name become the type,
    /// as in convert_hf_to_gguf.py (a draft or projector output's `mtp:f16` becomes
    /// `mtp-f16`).
    out: Option<PathBuf>,
    /// The output file, as convert_hf_to_gguf.py spells it (same as OUT).
    #[arg(long, value_name = "FILE", conflicts_with = "out")]
    outfile: Option<PathBuf>,
    // Output type(s); the help names the converter's types from the file-type table.
    #[arg(long, default_value = "auto", help = outtype_help())]
    outtype: String,
    /// LoRA adapters (SRC holds adapter_config.json): the base model's directory, as
    /// convert_lora_to_gguf.py's --base (default: the adapter's base_model_name_or_path, a
    /// directory or a model id in the local HuggingFace cache).
    #[arg(long, value_name = "DIR")]
    base: Option<PathBuf>,
    /// LoRA adapters: the base model as a model id in the local HuggingFace cache.
    #[arg(long, value_name = "ID", conflicts_with = "base")]
    base_model_id: Option<String>,
    /// Directory for the outputs when OUT is not given (with --batch: for jobs whose file
    /// sets no outdir).
    #[arg(long, value_name = "DIR")]
    outdir: Option<PathBuf>,
    /// Run the jobs of this TOML or JSON file (see above).
    #[arg(long, value_name = "JOBS_FILE", conflicts_with_all = ["src", "out"])]
    batch: Option<PathBuf>,
    /// With --batch: run only the K-th of N deterministic slices of the jobs (balanced by
    /// source size), e.g. one per CI matrix entry, Kubernetes indexed Job or Slurm array task.
    #[arg(long, value_name = "K/N", requires = "batch")]
    shard: Option<String>,
    /// With --batch: print how the jobs split into N slices (default: --shard's N, else 1)
    /// and exit; with --json as JSON for a scheduler.
    #[arg(long, value_name = "N", requires = "batch", num_args = 0..=1, default_missing_value = "0")]
    plan: Option<usize>,
    /// Several outputs or --batch: append the JSON Lines report to FILE.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Several outputs or --batch: memory budget for tensors in flight and tensors waiting
    /// for another output (binary suffixes: 512M, 4G); mapped inputs are extra. Default: 1G.
    #[arg(long, value_name = "SIZE")]
    max_memory: Option<String>,
    /// Write only the metadata and vocabulary (the weight files may be absent; `auto` is
    /// then F16).
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
    /// Set a metadata key: KEY=TYPE:VALUE with TYPE int, float, bool or str (repeatable).
    #[arg(long, value_name = "KEY=TYPE:VALUE")]
    override_kv: Vec<String>,
    /// Print the plan (every tensor with its source, type and size; the shards) and exit.
    /// With several outputs or --batch: report what would be written or skipped.
    #[arg(long)]
    dry_run: bool,
    /// Print every HuggingFace architecture (config.json `architectures[0]`) that ggufkit or
    /// llama.cpp's converter converts, with the GGUF architecture it converts to (`-`: none;
    /// `(not yet)`: llama.cpp's converter has it, ggufkit not yet; `(refused …)`: both
    /// refuse it) and, for vision/audio
    /// classes, the `--mmproj` projector type and the encoders it writes; then exit (with
    /// --json: a JSON array of {hf, gguf, mmproj, text_status, mmproj_status}).
    /// convert_hf_to_gguf.py's --print-supported-models is the same.
    #[arg(long, alias = "print-supported-models")]
    list_architectures: bool,
    /// Print a machine-readable report on stdout (JSON; JSON Lines with several outputs or
    /// --batch).
    #[arg(long)]
    json: bool,
    /// Worker threads (default: all cores). Does not change the output.
    #[arg(long, short = 'j')]
    threads: Option<usize>,
    /// No progress display or summary.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Replace existing output files; in batches, also rebuild outputs that are up to date.
    #[arg(long, short = 'f')]
    force: bool,
    /// More detail on stderr: after the run, where the time went, phase by phase (reading
    /// the config, the vocabulary, writing tensor data, the final sync, ...); for a batch or
    /// several --outtype values, each phase summed over the jobs.
    #[arg(long, short = 'v')]
    verbose: bool,
    /// Accepted for convert_hf_to_gguf.py's command lines: ggufkit always streams through a
    /// temporary file beside the output, with bounded memory.
    #[arg(long)]
    use_temp_file: bool,
    /// Accepted for convert_hf_to_gguf.py's command lines: ggufkit is always lazy (tensors are
    /// computed a bounded window at a time) and computes the same bytes either way.
    #[arg(long)]
    no_lazy: bool,
    /// Big-endian output, as convert_hf_to_gguf.py --bigendian writes it: header and
    /// F32/F16 data byte-swapped; BF16 and quantized blocks keep their little-endian bytes
    /// (as the reference writes them). llama.cpp loads such files only on big-endian hosts.
    #[arg(long)]
    bigendian: bool,
    /// SRC is a model on the HuggingFace Hub (`org/name` or `org/name@revision`), converted
    /// without downloading its weights: the small files (config, tokenizer, model card,
    /// index) go to the local HuggingFace cache, the safetensors are read by HTTP range
    /// requests straight into the conversion (docs/remote.md). HF_ENDPOINT, HF_TOKEN and
    /// HF_HUB_OFFLINE are honoured. Default output: ./org-name-{ftype}.gguf, general.name the
    /// id, as convert_hf_to_gguf.py --remote writes them.
    #[arg(long)]
    remote: bool,
    /// With --remote: range requests in flight at most.
    #[arg(long, value_name = "N", default_value_t = ggufkit_converters::remote::config::DEFAULT_CONNECTIONS)]
    remote_connections: usize,
    /// Write the multimodal projector (vision / audio encoder) instead of the text model,
    /// as convert_hf_to_gguf.py --mmproj does (file `mmproj-<name>-<TYPE>.gguf`; --outtype
    /// is the projector's type). Both files in one pass: `--outtype q4_k_m,mmproj` (or
    /// `mmproj:f16`), or an output `"mmproj"` in a batch job.
    #[arg(long)]
    mmproj: bool,
    /// SRC is in Mistral's native format: params.json, consolidated*.safetensors, and
    /// tekken.json or tokenizer.model.v* (as convert_hf_to_gguf.py --mistral-format reads it).
    #[arg(long)]
    mistral_format: bool,
    /// With --mistral-format: write no community chat template (a chat_template.jinja in
    /// SRC is still written); tokenize with mistral-common.
    #[arg(long = "disable-mistral-community-chat-template")]
    disable_mistral_community_chat_template: bool,
    /// Write the matrices a pre-quantized FP8 checkpoint holds in FP8 as Q8_0, whatever
    /// --outtype says (the rest follows --outtype), as convert_hf_to_gguf.py does.
    #[arg(long = "fp8-as-q8")]
    fp8_as_q8: bool,
    /// Write the model even when its hyperparameters contradict its tensors (a config.json
    /// hidden_size, head count, head_dim, intermediate_size or layer count the weights do
    /// not have). llama.cpp cannot load such a file, so by default gguf-convert stops and
    /// names each contradiction; convert_hf_to_gguf.py writes it, and so does this switch.
    #[arg(long = "allow-unloadable")]
    allow_unloadable: bool,
    /// Write only the multi-token-prediction (MTP / NextN) head, as a separate GGUF for
    /// speculative decoding (the reference's --mtp): its layers and the tensors it shares
    /// with the model (embeddings, final norm, output), with the model's metadata; the
    /// default file name gets an `mtp-` prefix. Only for the classes the reference exports
    /// MTP for (GLM-4.5 MoE, GLM-4.7-Flash, Qwen3-Next, Qwen3.5, Nemotron-H MoE,
    /// DeepSeek-V3.2, GLM-5). The model and its draft in one pass: `--outtype q8_0,mtp` (or
    /// `mtp:q4_k_m`), or an output `"mtp"` in a batch job.
    #[arg(long)]
    mtp: bool,
    /// Leave the multi-token-prediction (NextN) layers out (the reference's --no-mtp /
    /// --no-nextn): pair with --mtp on a second run to publish model and draft as two files.
    #[arg(long = "no-mtp")]
    no_mtp: bool,
    /// Same as --no-mtp (the reference's other spelling; both may be given).
    #[arg(long = "no-nextn")]
    no_nextn: bool,
    /// Write only the DeepSeek-V4 DSpark draft of a DeepseekV4ForCausalLM checkpoint (its
    /// `mtp.*` stages, arch dflash), as the reference's --dspark does; the draft's
    /// vocabulary is the target's: give --target-model-dir.
    #[arg(long)]
    dspark: bool,
    /// The target model's directory, which a standalone speculative-decoding draft (EAGLE-3)
    /// needs for its tokenizer, hidden size and layer count (the reference's
    /// --target-model-dir, also spelled --target-model); other models ignore it.
    #[arg(long = "target-model-dir", alias = "target-model", value_name = "DIR")]
    target_model_dir: Option<PathBuf>,
    // convert_hf_to_gguf.py's switches for what is not supported yet (refused with the
    // reason, never ignored): --fuse-qkv, --fuse-gate-up-exps,
    // --sentence-transformers-dense-modules.
    #[arg(long = "fuse-qkv", hide = true)]
    fuse_qkv: bool,
    #[arg(long = "fuse-gate-up-exps", hide = true)]
    fuse_gate_up_exps: bool,
    #[arg(long = "sentence-transformers-dense-modules", hide = true)]
    sentence_transformers_dense_modules: bool,
    /// Rename outputs into place without first waiting for them to reach the disk. Faster
    /// where the disk is slower than the conversion; a power failure soon after the run may
    /// then lose or truncate a file (a crash or kill of this process never leaves one).
    #[arg(long)]
    no_sync: bool,
}

impl From<PlanError> for Failure {
    fn from(e: PlanError) -> Failure {
        let kind = e.kind();
        let e = anyhow!(e.to_string());
        match kind {
            PlanErrorKind::Usage => Failure::Usage(e),
            PlanErrorKind::Input => Failure::Input(e),
            PlanErrorKind::Convert => Failure::Run(e),
        }
    }
}

fn source_options(cli: &Cli) -> SourceOptions {
    SourceOptions {
        vocab_only: cli.vocab_only,
        metadata: cli.metadata.clone(),
        model_name: cli.model_name.clone(),
        gqa: cli.gqa,
        eps: cli.eps,
        context_length: cli.context_length,
        vocab_dir: cli.vocab_dir.clone(),
        desc: cli.desc.clone(),
        dry_run: cli.dry_run,
        big_endian: cli.bigendian,
        lora_base: cli.base.clone(),
        fp8_as_q8: cli.fp8_as_q8,
        mistral_format: cli.mistral_format.then_some(MistralFormat {
            disable_community_chat_template: cli.disable_mistral_community_chat_template,
        }),
        mtp: if cli.mtp {
            Mtp::Only
        } else if cli.dspark {
            Mtp::DSpark
        } else if cli.no_mtp || cli.no_nextn {
            Mtp::Drop
        } else {
            Mtp::Keep
        },
        allow_unloadable: cli.allow_unloadable,
        target_model_dir: cli.target_model_dir.clone(),
    }
}

fn output_options(cli: &Cli) -> OutputOptions {
    OutputOptions {
        imatrix: cli.imatrix.clone(),
        imatrix_name: None,
        tensor_types: cli.tensor_type.clone(),
        pure: cli.pure,
        output_tensor_type: cli.output_tensor_type.clone(),
        token_embedding_type: cli.token_embedding_type.clone(),
        leave_output_tensor: cli.leave_output_tensor,
        override_kv: cli.override_kv.clone(),
        dry_run: cli.dry_run,
    }
}

fn split_options(cli: &Cli) -> Result<SplitOptions, Failure> {
    Ok(SplitOptions {
        max_tensors: cli.split_max_tensors,
        max_size: cli.split_max_size.as_deref().map(parse_size).transpose()?,
        no_tensor_first_split: cli.no_tensor_first_split,
    })
}

fn output_path(cli: &Cli, src: &Path, default_name: &str, ftype: &str) -> Result<PathBuf, Failure> {
    Ok(match &cli.out {
        Some(o) if o.is_dir() => o.join(default_name),
        Some(o) => {
            let name = o.file_name().map(|n| n.to_string_lossy().into_owned());
            match name.filter(|n| n.contains(['{', '}'])) {
                Some(n) => o.with_file_name(fill_template(&n, ftype).map_err(Failure::Usage)?),
                None => o.clone(),
            }
        }
        None => cli.outdir.as_deref().unwrap_or(src).join(default_name),
    })
}

/// The one file a run will write when OUT names it outright (not a directory, a name
/// template, standard output or a split); `None` when the name is only known after the
/// model is read, or when nothing is written (`--dry-run`).
fn named_single_output<'a>(cli: &'a Cli, split: &SplitOptions) -> Option<&'a Path> {
    let out = cli.out.as_deref()?;
    let named = !cli.dry_run
        && split.max_tensors.is_none()
        && split.max_size.is_none()
        && out.as_os_str() != "-"
        && !out.is_dir()
        && !out.to_string_lossy().contains(['{', '}']);
    named.then_some(out)
}

/// convert_hf_to_gguf.py's output name templates (Python `str.format` with `ftype`/`outtype`
/// lower case, `FTYPE`/`OUTTYPE` upper case, `{}` lower case, `{{`/`}}` for braces).
fn fill_template(name: &str, ftype: &str) -> Result<String, anyhow::Error> {
    let mut out = String::new();
    let mut rest = name;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(t) = tail.strip_prefix("{{") {
            out.push('{');
            rest = t;
        } else if let Some(t) = tail.strip_prefix("}}") {
            out.push('}');
            rest = t;
        } else if let Some(end) = tail.strip_prefix('{').and_then(|t| t.find('}')) {
            match &tail[1..1 + end] {
                "" | "ftype" | "outtype" => out.push_str(&ftype.to_lowercase()),
                "FTYPE" | "OUTTYPE" => out.push_str(&ftype.to_uppercase()),
                other => bail!("unknown placeholder {{{other}}} in the output name '{name}' (use {{ftype}} or {{FTYPE}})"),
            }
            rest = &tail[end + 2..];
        } else {
            bail!("unbalanced brace in the output name '{name}' (write {{{{ or }}}} for a literal brace)");
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The llama file type name (`F16`, `Q8_0`, `Q4_K_M`…) a planned model records.
fn ftype_label(model: &Model, fallback: &str) -> String {
    model
        .metadata
        .get(keys::general::FILE_TYPE)
        .and_then(|v| v.as_int())
        .and_then(|id| {
            ggufkit::quantize::FILE_TYPES
                .iter()
                .find(|f| i128::from(f.id) == id)
        })
        .map_or_else(|| fallback.to_uppercase(), |f| f.name.to_string())
}

fn set_threads(cli: &Cli) -> usize {
    let (n, note) = ggufkit::threads::configure(cli.threads);
    if let Some(note) = note {
        notes_push(cli, &note);
    }
    n
}

/// The option files of a run (metadata, imatrix, vocabulary directory), which no output may
/// replace, besides the source's own files.
fn option_inputs(cli: &Cli) -> Vec<PathBuf> {
    cli.metadata
        .iter()
        .chain(&cli.imatrix)
        .chain(&cli.batch)
        .chain(&cli.report)
        .cloned()
        .collect()
}

/// Several outputs or a jobs file: the batch runner.
fn run_many(cli: &Cli, jobs: Vec<JobSpec>) -> Result<ExitCode, Failure> {
    let threads = set_threads(cli);
    let max_memory = match &cli.max_memory {
        Some(m) => parse_memory(m)?,
        None => 1 << 30,
    };
    let mut sinks: Vec<Box<dyn std::io::Write + Send>> = Vec::new();
    if let Some(r) = &cli.report {
        // Appended to, so never one of the run's inputs (the jobs file, a source, …).
        let mut inputs: Vec<PathBuf> = cli
            .metadata
            .iter()
            .chain(&cli.imatrix)
            .chain(&cli.batch)
            .cloned()
            .collect();
        inputs.extend(jobs.iter().flat_map(JobSpec::input_paths));
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        let f = ggufkit::output::append::open_append(r, &inputs)
            .with_context(|| format!("cannot open the report {}", r.display()))
            .map_err(Failure::Usage)?;
        sinks.push(Box::new(f));
    }
    if cli.json {
        sinks.push(Box::new(std::io::stdout()));
    }
    let report = Report::new(sinks);
    let progress = Progress::new(Mode::auto(cli.quiet), jobs.len());
    // One client for the jobs whose source is remote (its progress line when not quiet).
    let transfer = jobs
        .iter()
        .any(|j| RemoteSource::parse(&j.source).is_some())
        .then(|| crate::remote::Transfer::start(cli.remote_connections, !cli.quiet && !cli.json))
        .transpose()?;
    let opts = BatchOptions {
        max_memory,
        threads,
        force: cli.force,
        dry_run: cli.dry_run,
        sync: !cli.no_sync,
        inputs: option_inputs(cli),
        remote: transfer.as_ref().map(|t| t.client().clone()),
    };
    let t0 = Instant::now();
    let sum = run_batch(&jobs, &opts, &report, &progress);
    if let Some(t) = transfer {
        t.finish("sources", !cli.quiet && !cli.json);
    }
    if cli.verbose && !cli.dry_run {
        print_phases(
            "phase timings (wall seconds, each phase summed over the jobs):",
            t0.elapsed().as_secs_f64(),
        );
    }
    if !cli.quiet {
        eprintln!(
            "gguf-convert: {} job(s): {} output(s) written, {} up to date, {} failed{} in {:.2}s",
            sum.jobs,
            sum.written,
            sum.skipped,
            sum.failed,
            if sum.failed_jobs > 0 {
                format!(" ({} job(s) failed)", sum.failed_jobs)
            } else {
                String::new()
            },
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(if sum.failed_jobs > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `SRC --outtype a,b,c`: one job.
fn inline_job(cli: &Cli, src: &Path, types: &[String]) -> Result<JobSpec, Failure> {
    // OUT with `{ftype}`: one file per type, named by the template (in OUT's directory).
    let template = cli.out.as_ref().filter(|o| !o.is_dir()).and_then(|o| {
        let name = o.file_name()?.to_string_lossy().into_owned();
        name.contains(['{', '}']).then_some(name)
    });
    let outdir = match (&cli.out, &cli.outdir) {
        (Some(o), _) if o.is_dir() => o.clone(),
        (Some(o), _) if template.is_some() => o
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
        (Some(o), _) => {
            return Err(Failure::Usage(anyhow!(
                "{}: with several --outtype values OUT must be a directory or a name with \
                 {{ftype}} (or use --outdir)",
                o.display()
            )))
        }
        (None, Some(d)) => d.clone(),
        (None, None) if src.is_dir() => src.to_path_buf(),
        (None, None) => src
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    };
    let split = split_options(cli)?;
    let outputs = types
        .iter()
        .map(|t| {
            let name = match &template {
                Some(n) if t.eq_ignore_ascii_case("auto") => {
                    return Err(Failure::Usage(anyhow!(
                        "{n}: `auto` among several --outtype values has no name of its own \
                         before the model is read; name the type instead"
                    )))
                }
                // `mtp:f16` names its file `…-mtp-f16…`: no colon in a file name.
                Some(n) => Some(PathBuf::from(
                    fill_template(n, &t.replace(':', "-")).map_err(Failure::Usage)?,
                )),
                None => None,
            };
            Ok(OutputSpec {
                target: Target::parse(t)?,
                outtype: t.clone(),
                name,
                opts: output_options(cli),
                split: split.clone(),
            })
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    if (cli.mtp || cli.no_mtp || cli.no_nextn)
        && outputs
            .iter()
            .any(|o| matches!(o.target, Target::Mmproj(_)))
    {
        // The reference's projector classes have no MTP export.
        return Err(Failure::Usage(anyhow!(
            "--mtp / --no-nextn are not supported for a projector (mmproj)"
        )));
    }
    let mut source_opts = source_options(cli);
    // With a draft among the outputs, the text outputs leave the MTP layers out.
    source_opts.mtp = text_mtp(source_opts.mtp, outputs.iter().map(|o| o.target))?;
    Ok(JobSpec {
        label: src
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| src.display().to_string()),
        source: src.to_path_buf(),
        source_opts,
        outdir,
        outputs,
    })
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    if cli.remote && cli.batch.is_some() {
        return Err(Failure::Usage(anyhow!(
            "--remote does not take --batch: a job's source names a remote model as \
             \"hf://org/name[@revision]\" (or an https:// directory) in the jobs file"
        )));
    }
    if let Some(b) = cli.batch.clone() {
        return run_batch_file(&cli, &b);
    }
    refuse_unsupported(&cli)?;
    let mut cli = cli;
    if cli.remote {
        return run_remote(cli);
    }
    if cli.src.as_deref().is_some_and(crate::remote::is_url) {
        return run_plain_dir(cli);
    }
    let src = resolve_source(&mut cli)?;
    run_outtypes(&cli, &src)
}

/// `--remote org/name[@revision]`: the snapshot's small files fetched, its weights read over
/// HTTP; named as the reference names a remote model (general.name the id, default file
/// `./org-name-{ftype}.gguf`).
fn run_remote(mut cli: Cli) -> Result<ExitCode, Failure> {
    let spec = cli
        .src
        .clone()
        .expect("clap requires SRC without --batch")
        .to_string_lossy()
        .into_owned();
    let progress = !cli.quiet && !cli.json;
    let remote = crate::remote::open(
        &spec,
        cli.revision.as_deref(),
        cli.remote_connections,
        progress,
    )?;
    notes_push(&cli, &format!("{}: {}", remote.id, remote.dir.display()));
    cli.revision = None;
    cli.src = Some(remote.dir.clone());
    if cli.outfile.is_some() {
        cli.out = cli.outfile.take();
    }
    if cli.out.is_none() && cli.outdir.is_none() {
        cli.out = Some(remote.default_out());
    }
    cli.model_name = Some(remote.id.clone());
    let src = resolve_source(&mut cli)?;
    let result = run_outtypes(&cli, &src);
    remote.finish(progress);
    result
}

/// SRC an `http://` or `https://` directory of HF files: its small files fetched by name into
/// a temporary directory named like the URL's last segment (removed after the run), its
/// safetensors read by range. The default output is `./<name>-{ftype}.gguf`.
fn run_plain_dir(mut cli: Cli) -> Result<ExitCode, Failure> {
    let url = cli
        .src
        .clone()
        .expect("checked by the caller")
        .to_string_lossy()
        .into_owned();
    let progress = !cli.quiet && !cli.json;
    let transfer = crate::remote::Transfer::start(cli.remote_connections, progress)?;
    let scratch = crate::remote::ScratchDir::new().map_err(|e| Failure::Run(e.into()))?;
    let plain = ggufkit_converters::remote::fetch_plain_dir(
        transfer.client().clone(),
        &url,
        scratch.path(),
    )
    .map_err(|e| Failure::Input(e.into()))?;
    notes_push(
        &cli,
        &format!("{}: {}", plain.url, plain.weights.join(", ")),
    );
    let name = plain
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    cli.src = Some(plain.dir.clone());
    if cli.outfile.is_some() {
        cli.out = cli.outfile.take();
    }
    if cli.out.is_none() && cli.outdir.is_none() {
        cli.out = Some(PathBuf::from(format!("{name}-{{ftype}}.gguf")));
    }
    let result = resolve_source(&mut cli).and_then(|src| run_outtypes(&cli, &src));
    transfer.finish(&plain.url, progress);
    result
}

/// `--batch FILE`: its jobs (this shard's, with `--shard`), planned (`--plan`) or run.
fn run_batch_file(cli: &Cli, b: &Path) -> Result<ExitCode, Failure> {
    let mut jobs = jobs::load(b, cli.outdir.as_deref()).map_err(|e| Failure::Usage(e.into()))?;
    let shard = cli.shard.as_deref().map(Shard::parse).transpose()?;
    if let Some(n) = cli.plan {
        let count = match (n, shard) {
            (0, Some(s)) => s.count,
            (0, None) => 1,
            (n, _) => n,
        };
        print_plan(&jobs, count, cli.json);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(s) = shard {
        jobs = ggufkit_converters::batch::shard::select(jobs, s);
        notes_push(
            cli,
            &format!("shard {}/{}: {} job(s)", s.index, s.count, jobs.len()),
        );
    }
    run_many(cli, jobs)
}

/// Refuses the reference converter's options ggufkit does not support, and contradictory ones.
fn refuse_unsupported(cli: &Cli) -> Result<(), Failure> {
    for (on, what) in [
        (cli.fuse_qkv, "--fuse-qkv is not supported yet"),
        (
            cli.fuse_gate_up_exps,
            "--fuse-gate-up-exps is not supported yet",
        ),
        (
            cli.sentence_transformers_dense_modules,
            "--sentence-transformers-dense-modules is not supported yet",
        ),
        (
            [cli.mtp, cli.no_mtp || cli.no_nextn, cli.dspark]
                .iter()
                .filter(|b| **b)
                .count()
                > 1,
            "--mtp, --no-nextn, and --dspark are mutually exclusive",
        ),
        (
            cli.dspark && cli.mmproj,
            "--dspark writes the DeepSeek-V4 DSpark draft, not a projector (mmproj)",
        ),
        (
            cli.mmproj && (cli.mtp || cli.no_mtp || cli.no_nextn),
            "--mtp / --no-nextn are not supported for a projector (mmproj)",
        ),
    ] {
        if on {
            return Err(Failure::Usage(anyhow!("{what}")));
        }
    }
    Ok(())
}

/// Normalises the options (`--outfile` is OUT; `--base-model-id` resolved) and resolves SRC:
/// a model id in the local HuggingFace cache becomes its snapshot directory (outputs then
/// go to the current directory unless told otherwise).
fn resolve_source(cli: &mut Cli) -> Result<PathBuf, Failure> {
    if cli.outfile.is_some() {
        cli.out = cli.outfile.take();
    }
    if cli.use_temp_file || cli.no_lazy {
        notes_push(
            cli,
            "--use-temp-file / --no-lazy change nothing here: outputs always stream through a temporary file with bounded memory",
        );
    }
    if let Some(id) = cli.base_model_id.clone() {
        let dir = ggufkit_converters::hub::resolve(&id, None)
            .map_err(|e| Failure::Input(anyhow!("--base-model-id {id}: {e}")))?;
        cli.base = Some(dir);
    }
    let mut src = cli.src.clone().expect("clap requires SRC without --batch");
    let id = src
        .to_str()
        .and_then(ggufkit_converters::hub::model_id)
        .map(str::to_string);
    if let Some(id) = id {
        src = ggufkit_converters::hub::resolve(&id, cli.revision.as_deref())
            .map_err(|e| Failure::Input(e.into()))?;
        notes_push(cli, &format!("{id}: {}", src.display()));
        if cli.out.is_none() && cli.outdir.is_none() {
            // Never write into the cache.
            cli.outdir = Some(PathBuf::from("."));
        }
    } else if cli.revision.is_some() {
        return Err(Failure::Usage(anyhow!(
            "--revision goes with a HuggingFace model id, not a path"
        )));
    }
    Ok(src)
}

/// `--outtype`'s list: one output, a projector (`--mmproj`), or several outputs in one pass.
fn run_outtypes(cli: &Cli, src: &Path) -> Result<ExitCode, Failure> {
    let types =
        jobs::split_types(&cli.outtype).map_err(|e| Failure::Usage(anyhow!("--outtype: {e}")))?;
    if types.is_empty() {
        return Err(Failure::Usage(anyhow!("--outtype is empty")));
    }
    if cli.mmproj {
        // convert_hf_to_gguf.py --mmproj: --outtype is the projector's type.
        let [t] = types.as_slice() else {
            return Err(Failure::Usage(anyhow!(
                "--mmproj takes one --outtype (the projector's); for the text model and its \
                 projector in one pass, name both: --outtype {},mmproj",
                types[0]
            )));
        };
        return match Target::parse(t)? {
            Target::Plain(o) => run_one(cli, src, Target::Mmproj(o)),
            Target::Mmproj(o) => run_one(cli, src, Target::Mmproj(o)),
            Target::Mtp(_) => Err(Failure::Usage(anyhow!(
                "--mmproj --outtype {t}: --mmproj writes the projector alone; for the model, its \
                 projector and its MTP draft in one pass, name the outputs: \
                 --outtype q8_0,mmproj,mtp"
            ))),
            Target::Quantized(f) => Err(Failure::Usage(anyhow!(
                "--mmproj --outtype {t}: a projector is written as one of {} (as \
                 convert_hf_to_gguf.py --mmproj); for a {} text model and its projector in \
                 one pass use --outtype {t},mmproj",
                OutType::names(),
                f.name
            ))),
        };
    }
    if types.len() > 1 {
        let job = inline_job(cli, src, &types)?;
        return run_many(cli, vec![job]);
    }
    run_one(cli, src, Target::parse(&types[0])?)
}

/// One output laid out over its shard files.
struct Layout {
    /// Per tensor: its data size.
    sizes: Vec<u64>,
    /// Per tensor: its shard.
    shard_of: Vec<usize>,
    /// The shards' models.
    parts: Vec<Model>,
    /// The shards' paths.
    paths: Vec<PathBuf>,
}

impl Layout {
    fn new(cli: &Cli, model: &Model, output: &Path, split: &SplitOptions) -> Layout {
        let sizes: Vec<u64> = model
            .tensors
            .iter()
            .map(|t| ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0))
            .collect();
        let shard_of = split.assign(&sizes);
        let mut parts = distribute(model, &shard_of);
        if split.splitting() && parts.len() == 1 && !model.tensors.is_empty() {
            notes_push(cli, "model fits in one shard: not splitting");
        }
        if parts.is_empty() {
            parts.push(model.clone());
        }
        let n = parts.len();
        let paths: Vec<PathBuf> = if n == 1 {
            vec![output.to_path_buf()]
        } else {
            let s = output.to_string_lossy();
            let prefix = s.strip_suffix(".gguf").unwrap_or(&s).to_string();
            (0..n).map(|i| split_path(&prefix, i, n)).collect()
        };
        Layout {
            sizes,
            shard_of,
            parts,
            paths,
        }
    }

    fn total_bytes(&self) -> u64 {
        self.sizes.iter().sum()
    }
}

/// One output, written directly (the reference path): plan, execute, render.
fn run_one(cli: &Cli, src: &Path, target: Target) -> Result<ExitCode, Failure> {
    set_threads(cli);
    let mut split = split_options(cli)?;
    if cli.vocab_only && split.no_tensor_first_split {
        return Err(Failure::Usage(anyhow!(
            "--vocab-only cannot be written with --no-tensor-first-split"
        )));
    }
    if cli.vocab_only {
        // No tensors, one shard: the reference writes the single file under the name given
        // (no -0000N-of-0000M suffix), whatever the size or count limits.
        split = SplitOptions::default();
    }
    if let Some(out) = named_single_output(cli, &split) {
        // A file that is there already is refused before the model is read, not after.
        let rules = ggufkit::output::OutputRules {
            inputs: &[],
            overwrite: cli.force,
            sync: false,
        };
        ggufkit::output::check(out, &rules).map_err(|e| Failure::Run(e.into()))?;
    }
    let t0 = Instant::now();
    let source = Source::open(src, source_options(cli))?;
    let p = source.plan_output(target, &output_options(cli))?;
    let ftype = ftype_label(&p.model, &cli.outtype);
    let output = output_path(cli, src, &p.default_name, &ftype)?;
    let layout = Layout::new(cli, &p.model, &output, &split);
    if cli.dry_run {
        print_dry_run(cli, src, &p, &layout);
        return Ok(ExitCode::SUCCESS);
    }
    if let (None, Some(dir)) = (&cli.out, &cli.outdir) {
        // As with several outputs (a batch job creates its outdir): --outdir is created.
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::Run(anyhow!("--outdir {}: {e}", dir.display())))?;
    }
    if !cli.quiet && !cli.json {
        for n in &p.notes {
            eprintln!("note: {n}");
        }
    }
    let plan = OutputPlan {
        shards: layout
            .parts
            .iter()
            .zip(&layout.paths)
            .map(|(model, path)| ShardPlan {
                path: path.clone(),
                model: model.clone(),
            })
            .collect(),
        options: pipeline::WriteOptions {
            inputs: source
                .files()
                .into_iter()
                .chain(option_inputs(cli))
                .collect(),
            overwrite: cli.force,
            sync: !cli.no_sync,
            vocab_only: cli.vocab_only,
            byte_order: if cli.bigendian {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            },
            ..Default::default()
        },
    };
    let bar =
        ggufkit::progress::byte_bar(layout.total_bytes(), cli.quiet || cli.json, "converting");
    let names = p.model.tensors.iter().map(|t| t.name.clone());
    let observer = TensorBar::new(&bar, names.zip(layout.sizes.iter().copied()).collect());
    let (results, _) = pipeline::execute(&[plan], &ExecuteOptions::default(), &observer);
    let written = results
        .into_iter()
        .next()
        .expect("one result per output")
        .map_err(|e| Failure::Run(e.into()))?;
    bar.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    print_done(cli, src, &p, &layout, &written, secs);
    if cli.verbose {
        print_phases("phase timings (wall seconds):", secs);
    }
    Ok(ExitCode::SUCCESS)
}

/// `--verbose`: where the run's wall time went, phase by phase (on stderr, also with
/// `--json`) under `heading`; "other" is the rest (start-up, planning the output, the
/// report), none when jobs that ran side by side make the phases add up to more than the run.
fn print_phases(heading: &str, total: f64) {
    let phases = ggufkit::timing::take();
    let timed: f64 = phases.iter().map(|(_, d)| d.as_secs_f64()).sum();
    eprintln!("{heading}");
    for (name, d) in &phases {
        let s = d.as_secs_f64();
        eprintln!(
            "  {name:<32} {s:>8.3}  {:>5.1}%",
            100.0 * s / total.max(1e-9)
        );
    }
    let other = (total - timed).max(0.0);
    eprintln!(
        "  {:<32} {other:>8.3}  {:>5.1}%",
        "other",
        100.0 * other / total.max(1e-9)
    );
    eprintln!("  {:<32} {total:>8.3}", "total");
}

/// `--outtype`'s help: the converter's types come from the file-type table.
fn outtype_help() -> String {
    format!(
        "Output type(s): {}, or a gguf-quantize type; comma-separated for several outputs in \
         one pass (e.g. f16,q8_0,q4_k_m); `mmproj[:TYPE]` adds the projector, `mtp[:TYPE]` the \
         multi-token-prediction draft (then the text outputs leave the MTP layers out, as \
         --no-mtp): --outtype q8_0,mmproj,mtp",
        OutType::names()
    )
}

/// `--dry-run` of one output: every tensor with its source, type and size; the shards.
fn print_dry_run(cli: &Cli, src: &Path, p: &PlannedOutput, layout: &Layout) {
    let (sizes, shard_of) = (&layout.sizes, &layout.shard_of);
    if cli.json {
        let report = json!({
            "source": src, "outputs": layout.paths, "dry_run": true, "notes": p.notes,
            "tensors": p.model.tensors.iter().zip(&p.sources).zip(shard_of).map(|((t, s), sh)| json!({
                "name": t.name, "source": s, "type": t.ty.name(), "shape": t.dims,
                "bytes": ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0), "shard": sh,
                "transform": t.data.describe(),
            })).collect::<Vec<_>>(),
            "tensor_bytes": layout.total_bytes(),
        });
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
        return;
    }
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
    for (i, path) in layout.paths.iter().enumerate() {
        let n = shard_of.iter().filter(|s| **s == i).count();
        let bytes = sizes
            .iter()
            .zip(shard_of)
            .filter(|(_, s)| **s == i)
            .map(|(b, _)| b)
            .sum();
        println!("{}: {n} tensors, {}", path.display(), human_bytes(bytes));
    }
}

/// The report of one written output: JSON, or a line on stderr.
fn print_done(
    cli: &Cli,
    src: &Path,
    p: &PlannedOutput,
    layout: &Layout,
    written: &WrittenOutput,
    secs: f64,
) {
    let paths = &layout.paths;
    let file_size = written.size();
    if cli.json {
        let total_bytes = layout.total_bytes();
        let n_elements: u64 = p.model.tensors.iter().map(|t| t.n_elements()).sum();
        let report = json!({
            "source": src, "outputs": paths, "file_size": file_size, "tensor_bytes": total_bytes,
            "bits_per_weight": if n_elements > 0 { total_bytes as f64 * 8.0 / n_elements as f64 } else { 0.0 },
            "tensors": p.model.tensors.len(), "seconds": secs, "notes": p.notes,
        });
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else if !cli.quiet {
        let n_parts = paths.len();
        eprintln!(
            "{} -> {} ({} in {} file{}) in {:.2}s",
            src.display(),
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
}

/// `--plan`: the slices of the jobs list.
fn print_plan(jobs: &[JobSpec], count: usize, json: bool) {
    let plan = ggufkit_converters::batch::shard::plan_json(jobs, count.max(1));
    if json {
        println!("{}", serde_json::to_string_pretty(&plan).expect("json"));
        return;
    }
    for s in plan["shards"].as_array().into_iter().flatten() {
        println!(
            "shard {}: {} job(s), {}",
            s["shard"].as_str().unwrap_or("?"),
            s["jobs"].as_array().map_or(0, Vec::len),
            human_bytes(s["source_bytes"].as_u64().unwrap_or(0))
        );
        for j in s["jobs"].as_array().into_iter().flatten() {
            println!(
                "  #{} {} ({})",
                j["index"],
                j["label"].as_str().unwrap_or("?"),
                human_bytes(j["source_bytes"].as_u64().unwrap_or(0))
            );
        }
    }
}

fn notes_push(cli: &Cli, msg: &str) {
    if !cli.quiet && !cli.json {
        eprintln!("note: {msg}");
    }
}

/// `convert_lora_to_gguf`: gguf-convert with that script's default `--outtype f32`.
pub fn main_lora() -> ExitCode {
    crate::edge::start::<Cli>();
    let cmd = <Cli as clap::CommandFactory>::command()
        .name("convert_lora_to_gguf")
        .mut_arg("outtype", |a| a.default_value("f32"));
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&cmd.get_matches()) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    exit_with("convert_lora_to_gguf", run(cli))
}

/// The tool's entry point.
pub fn main() -> ExitCode {
    crate::edge::start::<Cli>();
    let cli = Cli::parse();
    if cli.list_architectures {
        list_architectures(cli.json);
        return ExitCode::SUCCESS;
    }
    exit_with("gguf-convert", run(cli))
}

/// `--list-architectures`: every HF class ggufkit or llama.cpp's converter converts, with
/// the GGUF architecture of its text model and its projector (`--json`: one object per
/// class, with `text_status` / `mmproj_status` `converted`, `not yet`, `refused` or `none`).
fn list_architectures(json: bool) {
    let table = ggufkit_converters::hf::architecture_rows();
    if json {
        let rows: Vec<serde_json::Value> = table
            .iter()
            .map(|r| {
                let mmproj = r
                    .mmproj
                    .as_ref()
                    .map(|(t, enc)| serde_json::json!({"projector_type": t, "encoders": enc}));
                serde_json::json!({
                    "hf": r.hf,
                    "gguf": r.gguf,
                    "mmproj": mmproj,
                    "text_status": r.text_status.as_str(),
                    "mmproj_status": r.mmproj_status.as_str(),
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
        return;
    }
    // `HF-class gguf-arch`, then for projector classes `mmproj: TYPE (encoders)`; `-` where
    // neither converter has a text model, `(not yet)` where only llama.cpp's converts it.
    use ggufkit_converters::hf::Status;
    for r in table {
        let text = match (r.gguf, r.text_status) {
            (Some(g), Status::Refused) => format!("{g} (refused, as by llama.cpp)"),
            (Some(g), _) => g.to_string(),
            (None, Status::NotYet) => "(not yet)".to_string(),
            (None, Status::Refused) => "(refused: no text model)".to_string(),
            (None, _) => "-".to_string(),
        };
        let line = format!("{:<40} {text}", r.hf);
        match (&r.mmproj, r.mmproj_status) {
            (Some((t, enc)), _) => println!("{line:<52} mmproj: {t} ({})", enc.join(", ")),
            (None, Status::NotYet) => println!("{line:<52} mmproj: (not yet)"),
            (None, _) => println!("{line}"),
        }
    }
}
