//! gguf-edit: change a GGUF file's metadata without re-converting it. The tensor data is
//! copied as it is (never decoded), and the result equals what gguf-py's
//! `gguf_new_metadata.py` and `gguf_set_metadata.py` write for the same edits.

use ggufkit::gguf::keys;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context};
use clap::Parser;

use ggufkit::edit::copy;
use ggufkit::edit::inplace::{self, Faults, FileLock, Recovery};
use ggufkit::edit::{apply, set_scalar, ChatTemplate, MetadataEdits};
use ggufkit::gguf::{GgufFile, Metadata, Value};
use ggufkit::inspect::human_bytes;
use ggufkit::ir::Model;
use ggufkit::output::OutputRules;
use ggufkit::patterns::PatternBudget;
use ggufkit::pipeline::{self, ExecuteOptions, OutputPlan, ShardPlan, WriteOptions};
use ggufkit::quantize::KvOverride;

use crate::edge::{exit_with, Failure};

mod reshard;

/// The special tokens gguf_new_metadata.py knows, by the name its `--special-token` takes.
const SPECIAL_TOKENS: &[(&str, &str)] = &[
    ("bos", keys::tokenizer::BOS_ID),
    ("eos", keys::tokenizer::EOS_ID),
    ("eot", keys::tokenizer::EOT_ID),
    ("eom", keys::tokenizer::EOM_ID),
    ("unknown", keys::tokenizer::UNK_ID),
    ("seperator", keys::tokenizer::SEP_ID),
    ("padding", keys::tokenizer::PAD_ID),
    ("mask", keys::tokenizer::MASK_ID),
    ("fim_pre", keys::tokenizer::FIM_PRE_ID),
    ("fim_suf", keys::tokenizer::FIM_SUF_ID),
    ("fim_mid", keys::tokenizer::FIM_MID_ID),
    ("fim_pad", keys::tokenizer::FIM_PAD_ID),
    ("fim_rep", keys::tokenizer::FIM_REP_ID),
    ("fim_sep", keys::tokenizer::FIM_SEP_ID),
    ("prefix", keys::tokenizer::PREFIX_ID),
    ("suffix", keys::tokenizer::SUFFIX_ID),
    ("middle", keys::tokenizer::MIDDLE_ID),
];

/// Change a GGUF file's metadata (name, description, chat template, special tokens, any key)
/// without re-converting it.
///
/// Forms:
///
///   gguf-edit IN OUT [EDITS]           a copy with new metadata (gguf_new_metadata.py's command line)
///   gguf-edit --in-place FILE [EDITS]  the same, replacing FILE
///   gguf-edit set FILE KEY VALUE       change one number or boolean (gguf_set_metadata.py's command line)
///   gguf-edit split [OPTIONS] IN PREFIX, gguf-edit merge [OPTIONS] FIRST_SHARD OUT,
///   gguf-edit --split|--merge [OPTIONS] IN OUT
///                                      llama-gguf-split (see gguf-edit split --help)
///   gguf-edit recover FILE             finish an in-place edit that was interrupted
///
/// In place: when the new header (metadata and tensor infos, padded) has exactly the old
/// one's size, only the header bytes are rewritten (milliseconds, whatever the file size),
/// through a journal FILE.gguf-edit-journal that makes a crash recoverable: the next
/// gguf-edit on FILE (or gguf-edit recover FILE) finishes the edit. Otherwise FILE is
/// rewritten through a temporary file renamed over it. --dry-run says which.
///
/// The tensor data is copied byte for byte. The output equals what gguf-py's scripts write
/// for the same edits. With several named chat templates, gguf-py's order of
/// tokenizer.chat_templates varies from run to run; here it is the order given.
///
/// Exit status: 0 success; 1 the edit failed (nothing is written); 2 usage error; 3 the input
/// could not be read.
#[derive(Parser, Debug)]
#[command(name = "gguf-edit", version, verbatim_doc_comment)]
struct Cli {
    /// The input GGUF file (with --in-place: the file to edit).
    input: PathBuf,
    /// The output file (not with --in-place).
    output: Option<PathBuf>,
    /// Edit INPUT itself: rewrite its header in place when the new one has the same size,
    /// else write the new file beside it and rename it over INPUT.
    #[arg(long)]
    in_place: bool,
    /// general.name.
    #[arg(long, value_name = "NAME")]
    general_name: Option<String>,
    /// general.description.
    #[arg(long, value_name = "TEXT")]
    general_description: Option<String>,
    /// A chat template (or a JSON list of {"name", "template"} objects); replaces every
    /// tokenizer.chat_template* key.
    #[arg(long, value_name = "TEMPLATE")]
    chat_template: Option<String>,
    /// The chat_template of a tokenizer_config.json (a string or named templates).
    #[arg(long, value_name = "FILE")]
    chat_template_config: Option<PathBuf>,
    /// A Jinja file holding the chat template.
    #[arg(long, value_name = "FILE")]
    chat_template_file: Option<PathBuf>,
    /// tokenizer.ggml.pre.
    #[arg(long, value_name = "NAME")]
    pre_tokenizer: Option<String>,
    /// Leave KEY out (repeatable).
    #[arg(long, value_name = "KEY")]
    remove_metadata: Vec<String>,
    /// Leave out every key that matches the regular expression (searched; repeatable).
    #[arg(long, value_name = "REGEX")]
    remove_matching: Vec<String>,
    /// Set a special token by its text: NAME is bos, eos, eot, eom, unknown, seperator,
    /// padding, mask, fim_pre, fim_suf, fim_mid, fim_pad, fim_rep, fim_sep, prefix, suffix or
    /// middle (repeatable).
    #[arg(long, num_args = 2, value_names = ["NAME", "TOKEN"], action = clap::ArgAction::Append)]
    special_token: Vec<String>,
    /// Set a special token by id (repeatable).
    #[arg(long, num_args = 2, value_names = ["NAME", "ID"], action = clap::ArgAction::Append)]
    special_token_by_id: Vec<String>,
    /// Set KEY to VALUE of TYPE (int, float, bool, str), as --override-kv does (repeatable).
    #[arg(long, value_name = "KEY=TYPE:VALUE")]
    set: Vec<String>,
    /// Replace an existing OUT (gguf_new_metadata.py asks instead).
    #[arg(long, short = 'f')]
    force: bool,
    /// Show the keys that would change (and, with --in-place, whether the header is
    /// rewritten in place), write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print what changed, key by key.
    #[arg(long, short = 'v')]
    verbose: bool,
    /// No summary.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Rename the output into place without waiting for it to reach the disk.
    #[arg(long)]
    no_sync: bool,
}

/// `gguf-edit set`: gguf_set_metadata.py's command line.
#[derive(Parser, Debug)]
#[command(name = "gguf-edit set", version, allow_negative_numbers = true)]
struct SetCli {
    /// The GGUF file to change.
    model: PathBuf,
    /// The key (it must exist and hold a number or a boolean).
    key: String,
    /// The new value.
    value: String,
    /// Show the change, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Accepted for compatibility (nothing is asked here).
    #[arg(long)]
    force: bool,
    /// Accepted for compatibility.
    #[arg(long)]
    verbose: bool,
    /// Say nothing unless something fails.
    #[arg(long, short = 'q')]
    quiet: bool,
}

fn usage(e: impl Into<anyhow::Error>) -> Failure {
    Failure::Usage(e.into())
}

fn open(path: &Path) -> Result<GgufFile, Failure> {
    GgufFile::open(path).map_err(|e| Failure::Input(e.into()))
}

/// The edits the command line asks for, checked against the input's vocabulary.
fn edits(cli: &Cli, md: &Metadata) -> Result<MetadataEdits, Failure> {
    let mut e = MetadataEdits::default();
    if let Some(n) = cli.general_name.as_deref().filter(|s| !s.is_empty()) {
        e.set(keys::general::NAME, Value::from(n));
    }
    if let Some(d) = cli.general_description.as_deref().filter(|s| !s.is_empty()) {
        e.set(keys::general::DESCRIPTION, Value::from(d));
    }
    if let Some(t) = cli.chat_template.as_deref().filter(|s| !s.is_empty()) {
        e.chat_template = Some(ChatTemplate::from_text(t).map_err(usage)?);
    }
    if let Some(p) = &cli.chat_template_config {
        let text = ggufkit::mapped::read_input_to_string(p)
            .with_context(|| format!("cannot read {}", p.display()))
            .map_err(Failure::Input)?;
        let config: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{}: not JSON", p.display()))
            .map_err(Failure::Input)?;
        match config.get("chat_template") {
            Some(t) if !t.is_null() && t.as_str() != Some("") => {
                e.chat_template = Some(ChatTemplate::from_json(t).map_err(usage)?)
            }
            _ => {}
        }
    }
    if let Some(p) = &cli.chat_template_file {
        let text = ggufkit::mapped::read_input_to_string(p)
            .with_context(|| format!("cannot read {}", p.display()))
            .map_err(Failure::Input)?;
        e.chat_template = Some(ChatTemplate::One(text));
    }
    if let Some(p) = cli.pre_tokenizer.as_deref().filter(|s| !s.is_empty()) {
        e.set(keys::tokenizer::PRE, Value::from(p));
    }
    e.remove = cli.remove_metadata.clone();
    // Every pattern of the run is compiled under one memory budget.
    let mut budget = PatternBudget::default();
    for pattern in &cli.remove_matching {
        let re = budget
            .compile(pattern)
            .map_err(|err| usage(anyhow!("--remove-matching '{pattern}': {err}")))?;
        e.remove.extend(
            md.iter()
                .filter(|(k, _)| re.is_match(k))
                .map(|(k, _)| k.to_string()),
        );
    }
    let tokens = token_texts(md);
    for pair in cli.special_token.chunks(2) {
        let (name, token) = (&pair[0], &pair[1]);
        let Some(key) = special_key(name) else {
            eprintln!("gguf-edit: warning: unknown special token \"{name}\", ignored");
            continue;
        };
        let id = tokens
            .iter()
            .position(|t| t == token)
            .ok_or_else(|| Failure::Run(anyhow!("unable to find \"{token}\" in the token list")))?;
        e.set(key, Value::U32(id as u32));
    }
    for pair in cli.special_token_by_id.chunks(2) {
        let (name, id) = (&pair[0], &pair[1]);
        let Some(key) = special_key(name) else {
            eprintln!("gguf-edit: warning: unknown special token \"{name}\", ignored");
            continue;
        };
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            return Err(usage(anyhow!("token id \"{id}\" is not a valid id")));
        }
        let n: usize = id
            .parse()
            .ok()
            .filter(|&n| n < tokens.len())
            .ok_or_else(|| Failure::Run(anyhow!("token id {id} is not within the token list")))?;
        e.set(key, Value::U32(n as u32));
    }
    for item in &cli.set {
        let kv = KvOverride::parse_exact(item).map_err(usage)?;
        e.set(&kv.key, kv.value);
    }
    Ok(e)
}

fn special_key(name: &str) -> Option<&'static str> {
    SPECIAL_TOKENS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, k)| *k)
}

/// The token texts of `tokenizer.ggml.tokens` (empty when there is no vocabulary).
fn token_texts(md: &Metadata) -> Vec<String> {
    match md.get(keys::tokenizer::TOKENS) {
        Some(Value::Array(ggufkit::gguf::ArrayValue::String(list))) => {
            list.iter().map(|s| s.to_lossy().into_owned()).collect()
        }
        _ => Vec::new(),
    }
}

/// One line per key that differs between `old` and `new`.
fn key_diff(old: &Metadata, new: &Metadata) -> Vec<String> {
    let mut lines = Vec::new();
    for (k, v) in old.iter() {
        match new.get(k) {
            None => lines.push(format!("- {k}")),
            Some(n) if n != v => lines.push(format!("~ {k}: {} → {}", show(v), show(n))),
            _ => {}
        }
    }
    for (k, v) in new.iter() {
        if old.get(k).is_none() {
            lines.push(format!("+ {k} = {}", show(v)));
        }
    }
    lines
}

fn show(v: &Value) -> String {
    let text = match v {
        Value::String(s) => format!("{:?}", s.to_lossy()),
        Value::Array(a) => format!("[{} items]", a.len()),
        other => format!("{other:?}"),
    };
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// Writes `file` with `metadata` to `target` through the output engine (tensor data copied
/// from the mapped input); `replacing` allows replacing the input itself. `option_inputs`
/// are the other files the run read (chat template files), which the output may never
/// replace. Returns the size.
#[allow(clippy::too_many_arguments)]
fn write(
    file: &GgufFile,
    metadata: Metadata,
    input: &Path,
    option_inputs: &[PathBuf],
    target: &Path,
    replacing: bool,
    overwrite: bool,
    sync: bool,
) -> Result<u64, Failure> {
    let mut all_inputs: Vec<PathBuf> = option_inputs.to_vec();
    if !replacing {
        all_inputs.push(input.to_path_buf());
    }
    // The data section as it is, copied by the kernel, when that gives the same bytes.
    if let Some(layout) = copy::plan(file, &metadata) {
        let inputs: Vec<&Path> = all_inputs.iter().map(PathBuf::as_path).collect();
        let rules = OutputRules {
            inputs: &inputs,
            overwrite: overwrite || replacing,
            sync,
        };
        return copy::write(file, &layout, input, target, &rules)
            .map_err(|e| Failure::Run(e.into()));
    }
    let mut model = Model::from_gguf(file);
    model.metadata = metadata;
    let plan = OutputPlan {
        shards: vec![ShardPlan {
            path: target.to_path_buf(),
            model,
        }],
        options: WriteOptions {
            inputs: all_inputs,
            overwrite: overwrite || replacing,
            sync,
            // gguf_new_metadata.py keeps a big-endian file big-endian, bytes copied as they are.
            byte_order: file.byte_order,
            data_order: file.byte_order,
            ..WriteOptions::default()
        },
    };
    let (results, _) = pipeline::execute(&[plan], &ExecuteOptions::default(), &());
    let written = results
        .into_iter()
        .next()
        .ok_or_else(|| Failure::Run(anyhow!("the engine returned no result")))?
        .map_err(|e| Failure::Run(e.into()))?;
    Ok(written.size())
}

/// How an in-place edit is written.
enum InPlace {
    /// Only the header changes: (old header, new header), the same size.
    Header(Vec<u8>, Vec<u8>),
    /// The file is rewritten through a temporary copy, for this reason.
    Copy(inplace::NotInPlace),
}

/// Whether `file` with `metadata` can be written by rewriting its header alone.
fn in_place_plan(file: &GgufFile, metadata: &Metadata) -> Result<InPlace, Failure> {
    let model = Model::from_gguf(file);
    let layout =
        ggufkit::gguf::layout(metadata, &model.headers()).map_err(|e| Failure::Run(e.into()))?;
    Ok(match inplace::fits(file, &layout) {
        Ok(()) => {
            let old = file.local_bytes()[..file.data_offset as usize].to_vec();
            InPlace::Header(old, layout.header)
        }
        Err(why) => InPlace::Copy(why),
    })
}

fn describe_in_place(path: &Path, how: &InPlace) -> String {
    match how {
        InPlace::Header(_, new) => format!(
            "in place: the {}-byte header of {} is rewritten, the tensor data stays where it is",
            new.len(),
            path.display()
        ),
        InPlace::Copy(why) => format!(
            "not in place: {why}; {} is rewritten through a temporary file",
            path.display()
        ),
    }
}

/// Locks `path` for an in-place change (see [`FileLock`]): taken before the file is read
/// and held until the change is on disk, so no other ggufkit writer replaces or rewrites
/// the file in between.
fn lock(path: &Path) -> Result<FileLock, Failure> {
    FileLock::acquire(path, false).map_err(|e| match e {
        ggufkit::output::lock::LockError::Io { .. } => Failure::Input(e.into()),
        _ => Failure::Run(e.into()),
    })
}

/// Opens the locked file for writing as well; fails before anything is written.
fn upgrade(lock: &mut FileLock) -> Result<(), Failure> {
    lock.upgrade().map_err(|e| Failure::Run(e.into()))
}

/// Finishes an interrupted in-place edit of the locked file, if there is one.
fn finish_interrupted(lock: &mut FileLock, quiet: bool) -> Result<(), Failure> {
    let path = lock.path().to_path_buf();
    let path = path.as_path();
    if !inplace::pending(path) {
        return Ok(());
    }
    upgrade(lock)?;
    let r =
        inplace::recover(lock, true, &mut Faults::none()).map_err(|e| Failure::Run(e.into()))?;
    if !quiet {
        match r {
            Recovery::Clean => {}
            Recovery::Discarded => eprintln!(
                "gguf-edit: {}: an in-place edit was interrupted before it touched the file; its journal is removed",
                path.display()
            ),
            Recovery::RolledForward => eprintln!(
                "gguf-edit: {}: an interrupted in-place edit is finished (the journal's new header written)",
                path.display()
            ),
        }
    }
    Ok(())
}

/// A file whose in-place edit was interrupted may have a torn header: not an input.
fn refuse_pending(path: &Path) -> Result<(), Failure> {
    let j = ggufkit::edit::inplace::journal_path(path);
    if j.exists() {
        return Err(Failure::Input(anyhow!(
            "{}: an in-place edit of this file was interrupted ({} exists); run `gguf-edit recover {}` first",
            path.display(),
            j.display(),
            path.display()
        )));
    }
    Ok(())
}

/// Writes `metadata` into the locked file in place: the header alone when `how` allows,
/// else a streamed copy renamed over it. `option_inputs` as for [`write`]. Returns the bytes
/// written.
fn write_in_place(
    file: GgufFile,
    metadata: Metadata,
    mut lock: FileLock,
    option_inputs: &[PathBuf],
    how: InPlace,
    sync: bool,
) -> Result<u64, Failure> {
    let path = lock.path().to_path_buf();
    let path = path.as_path();
    refuse_option_input(path, option_inputs)?;
    match how {
        InPlace::Header(old, new) => {
            drop(file);
            if old != new {
                upgrade(&mut lock)?;
                inplace::rewrite_header(&lock, &old, &new, sync, &mut Faults::none())
                    .map_err(|e| Failure::Run(e.into()))?;
            }
            Ok(new.len() as u64)
        }
        InPlace::Copy(_) => write(&file, metadata, path, option_inputs, path, true, true, sync),
    }
}

/// The files a run reads besides IN (the chat template files): no output may replace one.
fn option_inputs(cli: &Cli) -> Vec<PathBuf> {
    cli.chat_template_config
        .iter()
        .chain(&cli.chat_template_file)
        .cloned()
        .collect()
}

/// An in-place edit whose FILE is also one of its option files is refused (by file identity,
/// as every output is): the header rewrite would replace a file the run read.
fn refuse_option_input(path: &Path, option_inputs: &[PathBuf]) -> Result<(), Failure> {
    let inputs: Vec<&Path> = option_inputs.iter().map(PathBuf::as_path).collect();
    let rules = OutputRules {
        inputs: &inputs,
        overwrite: true,
        sync: false,
    };
    ggufkit::output::check(path, &rules).map_err(|e| Failure::Run(e.into()))
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    let target = match (&cli.output, cli.in_place) {
        (Some(_), true) => return Err(usage(anyhow!("--in-place takes one file, not IN and OUT"))),
        (None, false) => return Err(usage(anyhow!("give IN and OUT, or --in-place FILE"))),
        (Some(out), false) => out.clone(),
        (None, true) => cli.input.clone(),
    };
    let mut held = None;
    if cli.in_place && !cli.dry_run {
        let mut l = lock(&cli.input)?;
        finish_interrupted(&mut l, cli.quiet)?;
        held = Some(l);
    } else {
        refuse_pending(&cli.input)?;
    }
    let file = open(&cli.input)?;
    let edits = edits(&cli, &file.metadata)?;
    let new = apply(&file.metadata, &edits).map_err(|e| Failure::Input(e.into()))?;
    let diff = key_diff(&file.metadata, &new);
    let how = if cli.in_place {
        Some(in_place_plan(&file, &new)?)
    } else {
        None
    };
    if cli.dry_run || cli.verbose {
        for line in &diff {
            println!("{line}");
        }
        if let Some(how) = &how {
            println!("{}", describe_in_place(&target, how));
        }
    }
    if cli.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    if !cli.in_place && !cli.force && target.exists() && target.is_file() {
        return Err(usage(anyhow!(
            "{} exists (--force replaces it)",
            target.display()
        )));
    }
    let (size, mode) = match how {
        Some(how) => {
            let mode = match how {
                InPlace::Header(..) => "header rewritten in place",
                InPlace::Copy(_) => "rewritten",
            };
            let lock = held.ok_or_else(|| Failure::Run(anyhow!("the file is not locked")))?;
            (
                write_in_place(file, new, lock, &option_inputs(&cli), how, !cli.no_sync)?,
                mode,
            )
        }
        None => (
            write(
                &file,
                new,
                &cli.input,
                &option_inputs(&cli),
                &target,
                false,
                cli.force,
                !cli.no_sync,
            )?,
            "written",
        ),
    };
    if !cli.quiet {
        eprintln!(
            "gguf-edit: {} ({} {}, {} key{} changed)",
            target.display(),
            human_bytes(size),
            mode,
            diff.len(),
            if diff.len() == 1 { "" } else { "s" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn run_set(cli: SetCli) -> Result<ExitCode, Failure> {
    let mut held = None;
    if cli.dry_run {
        refuse_pending(&cli.model)?;
    } else {
        let mut l = lock(&cli.model)?;
        finish_interrupted(&mut l, cli.quiet)?;
        held = Some(l);
    }
    let file = open(&cli.model)?;
    let Some(value) = set_scalar(&file.metadata, &cli.key, &cli.value).map_err(|e| match e {
        ggufkit::edit::EditError::NoSuchKey(_) => Failure::Run(e.into()),
        _ => Failure::Usage(e.into()),
    })?
    else {
        if !cli.quiet {
            eprintln!("gguf-edit: {} already holds {}", cli.key, cli.value);
        }
        return Ok(ExitCode::SUCCESS);
    };
    if !cli.quiet {
        let old = file.metadata.get(&cli.key).map(show).unwrap_or_default();
        eprintln!("gguf-edit: {}: {old} → {}", cli.key, show(&value));
    }
    let mut md = file.metadata.clone();
    md.set(cli.key.as_str(), value);
    let how = in_place_plan(&file, &md)?;
    if cli.dry_run {
        println!("{}", describe_in_place(&cli.model, &how));
        return Ok(ExitCode::SUCCESS);
    }
    let lock = held.ok_or_else(|| Failure::Run(anyhow!("the file is not locked")))?;
    write_in_place(file, md, lock, &[], how, true)?;
    Ok(ExitCode::SUCCESS)
}

/// `gguf-edit recover FILE`: finishes an interrupted in-place edit.
fn run_recover(args: &[std::ffi::OsString]) -> Result<ExitCode, Failure> {
    let [file] = args else {
        return Err(usage(anyhow!("usage: gguf-edit recover FILE")));
    };
    let path = Path::new(file);
    let mut l = lock(path)?;
    if inplace::pending(path) {
        upgrade(&mut l)?;
    }
    let r = inplace::recover(&l, true, &mut Faults::none()).map_err(|e| Failure::Run(e.into()))?;
    let what = match r {
        Recovery::Clean => "no interrupted edit",
        Recovery::Discarded => {
            "the interrupted edit had not touched the file; its journal is removed"
        }
        Recovery::RolledForward => "the interrupted edit is finished",
    };
    eprintln!("gguf-edit: {}: {what}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// The tool's entry point.
pub fn main() -> ExitCode {
    crate::edge::start::<Cli>();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match args.get(1).and_then(|a| a.to_str()) {
        Some("split") => {
            return exit_with("gguf-edit", reshard::main(reshard::Op::Split, &args[2..]))
        }
        Some("merge") => {
            return exit_with("gguf-edit", reshard::main(reshard::Op::Merge, &args[2..]))
        }
        Some("recover") => return exit_with("gguf-edit", run_recover(&args[2..])),
        _ => {}
    }
    if reshard::is_split_command_line(&args[1..]) {
        return exit_with("gguf-edit", reshard::main(reshard::Op::Flags, &args[1..]));
    }
    if args.get(1).is_some_and(|a| a == "set") {
        let set = SetCli::parse_from(
            std::iter::once(std::ffi::OsString::from("gguf-edit set"))
                .chain(args[2..].iter().cloned()),
        );
        return exit_with("gguf-edit", run_set(set));
    }
    let cli = Cli::parse();
    exit_with("gguf-edit", run(cli))
}
