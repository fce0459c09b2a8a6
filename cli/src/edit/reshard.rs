//! `gguf-edit split` / `gguf-edit merge` (and llama-gguf-split's own command line,
//! `gguf-edit --split …` / `gguf-edit --merge …`): the library's [`ggufkit::reshard`] plans
//! written by the output engine.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::anyhow;
use clap::Parser;

use ggufkit::gguf::GgufFile;
use ggufkit::inspect::human_bytes;
use ggufkit::ir::Model;
use ggufkit::pipeline::{self, ExecuteOptions, OutputPlan, ShardPlan, WriteOptions};
use ggufkit::reshard::{self, Limit, SplitRules};

use super::refuse_pending;
use crate::edge::Failure;

/// The flags that make a `gguf-edit` command line llama-gguf-split's.
pub const SPLIT_FLAGS: &[&str] = &[
    "--split",
    "--merge",
    "--split-max-tensors",
    "--split-max-size",
    "--no-tensor-first-split",
    "--delete-splits",
];

/// Split a GGUF file into shards, or merge a split model into one file, byte for byte as
/// llama-gguf-split (llama.cpp 0c1e570) does.
///
///   gguf-edit split [OPTIONS] IN OUT_PREFIX     shards OUT_PREFIX-00001-of-0000N.gguf, …
///   gguf-edit merge [OPTIONS] FIRST_SHARD OUT   one file from FIRST_SHARD and its siblings
///   gguf-edit [--split|--merge] [OPTIONS] IN OUT   llama-gguf-split's own command line
///
/// llama-gguf-split's command line works as it is when it has at least one of its flags;
/// its bare `IN OUT` (a split with the defaults) is `gguf-edit split IN OUT`, since
/// `gguf-edit IN OUT` is gguf_new_metadata.py's metadata copy.
///
/// Splitting: at most --split-max-tensors tensors per shard (default 128), or at most
/// --split-max-size bytes of tensor data (N followed by M or G: 10^6 / 10^9 bytes); the first
/// shard holds the metadata. Merging: FIRST_SHARD must be named <prefix>-00001-of-0000N.gguf;
/// the merged file keeps split.no and split.tensors.count and gets split.count 0, as
/// llama-gguf-split's does.
///
/// Tensor data is copied, never decoded; the shards are written one after another through
/// temporary files and renamed into place when the last is complete.
///
/// Exit status: 0 success; 1 the split or merge failed (nothing is written); 2 usage error;
/// 3 an input could not be read.
#[derive(Parser, Debug)]
#[command(name = "gguf-edit split", version, verbatim_doc_comment)]
struct ReshardCli {
    /// Split IN into shards (the default).
    #[arg(long, conflicts_with = "merge")]
    split: bool,
    /// Merge the split model whose first shard is IN into OUT.
    #[arg(long)]
    merge: bool,
    /// At most N tensors per shard (default 128).
    #[arg(long, value_name = "N", conflicts_with = "split_max_size")]
    split_max_tensors: Option<String>,
    /// At most N megabytes (M) or gigabytes (G) of tensor data per shard, e.g. 2G.
    #[arg(long, value_name = "N(M|G)")]
    split_max_size: Option<String>,
    /// Put no tensor in the first shard (it holds only the metadata).
    #[arg(long)]
    no_tensor_first_split: bool,
    /// Print the plan, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// After a merge is complete and in place, delete the shards it was made from.
    #[arg(long)]
    delete_splits: bool,
    /// Merge: replace an existing OUT (llama-gguf-split refuses to).
    #[arg(long, short = 'f')]
    force: bool,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Rename the outputs into place without waiting for them to reach the disk.
    #[arg(long)]
    no_sync: bool,
    /// The file to split, or the first shard to merge.
    input: PathBuf,
    /// Split: the prefix of the shards' names. Merge: the output file.
    output: PathBuf,
}

/// Which operation a command line asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `gguf-edit split`.
    Split,
    /// `gguf-edit merge`.
    Merge,
    /// llama-gguf-split's command line (`--merge` or, by default, a split).
    Flags,
}

/// llama-gguf-split accepts `--split_max_tensors` for `--split-max-tensors`.
fn normalise(arg: OsString) -> OsString {
    match arg.to_str() {
        Some(s) if s.starts_with("--") => {
            let (name, value) = match s.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (s, None),
            };
            let name = name.replace('_', "-");
            match value {
                Some(v) => format!("{name}={v}").into(),
                None => name.into(),
            }
        }
        _ => arg,
    }
}

/// True when `args` (without the program name) is llama-gguf-split's command line.
pub fn is_split_command_line(args: &[OsString]) -> bool {
    args.iter().map(|a| normalise(a.clone())).any(|a| {
        SPLIT_FLAGS
            .iter()
            .any(|f| a == *f || a.to_string_lossy().starts_with(&format!("{f}=")))
    })
}

/// Runs `gguf-edit split|merge ARGS` (`op` says which) or llama-gguf-split's `ARGS`.
pub fn main(op: Op, args: &[OsString]) -> Result<ExitCode, Failure> {
    let name = match op {
        Op::Merge => "gguf-edit merge",
        _ => "gguf-edit split",
    };
    let cli = ReshardCli::parse_from(
        std::iter::once(OsString::from(name)).chain(args.iter().cloned().map(normalise)),
    );
    let merge = match op {
        Op::Split if cli.merge => {
            return Err(Failure::Usage(anyhow!(
                "gguf-edit split does not take --merge"
            )))
        }
        Op::Merge if cli.split => {
            return Err(Failure::Usage(anyhow!(
                "gguf-edit merge does not take --split"
            )))
        }
        Op::Merge => true,
        _ => cli.merge,
    };
    if merge {
        run_merge(&cli)
    } else {
        run_split(&cli)
    }
}

fn rules(cli: &ReshardCli) -> Result<SplitRules, Failure> {
    let usage = |e: anyhow::Error| Failure::Usage(e);
    let limit =
        match (&cli.split_max_tensors, &cli.split_max_size) {
            (_, Some(s)) => Limit::Bytes(reshard::parse_max_size(s).map_err(|e| usage(e.into()))?),
            (Some(n), None) => {
                Limit::Tensors(n.trim().parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(
                    || {
                        usage(anyhow!(
                            "--split-max-tensors '{n}': give a whole number of at least 1"
                        ))
                    },
                )?)
            }
            (None, None) => SplitRules::default().limit,
        };
    Ok(SplitRules {
        limit,
        no_tensor_first_split: cli.no_tensor_first_split,
    })
}

fn open(path: &Path) -> Result<GgufFile, Failure> {
    refuse_pending(path)?;
    let file = GgufFile::open(path).map_err(|e| Failure::Input(e.into()))?;
    // llama-gguf-split cannot read a big-endian file on this host either.
    ggufkit::split::refuse_big_endian(&file, path).map_err(|e| Failure::Input(e.into()))?;
    Ok(file)
}

/// Writes `shards` as one output through the engine; returns the written files.
fn write(
    shards: Vec<(PathBuf, Model)>,
    inputs: Vec<PathBuf>,
    overwrite: bool,
    sync: bool,
) -> Result<pipeline::WrittenOutput, Failure> {
    let plan = OutputPlan {
        shards: shards
            .into_iter()
            .map(|(path, model)| ShardPlan { path, model })
            .collect(),
        options: WriteOptions {
            inputs,
            overwrite,
            sync,
            ..WriteOptions::default()
        },
    };
    let (results, _) = pipeline::execute(&[plan], &ExecuteOptions::default(), &());
    results
        .into_iter()
        .next()
        .ok_or_else(|| Failure::Run(anyhow!("the engine returned no result")))?
        .map_err(|e| Failure::Run(e.into()))
}

/// The size llama-gguf-split reports for a shard: its padded header plus its tensors'
/// unpadded data, in whole megabytes (10^6).
fn reported_megabytes(model: &Model) -> Result<u64, Failure> {
    let layout = ggufkit::gguf::layout(&model.metadata, &model.headers())
        .map_err(|e| Failure::Run(e.into()))?;
    Ok((layout.data_offset() + layout.sizes.iter().sum::<u64>()) / 1_000_000)
}

fn run_split(cli: &ReshardCli) -> Result<ExitCode, Failure> {
    if cli.delete_splits {
        return Err(Failure::Usage(anyhow!("--delete-splits is for --merge")));
    }
    let rules = rules(cli)?;
    let file = open(&cli.input)?;
    let prefix = cli.output.to_string_lossy().into_owned();
    let shards = reshard::plan_split(&file, &cli.input, &rules, &prefix)
        .map_err(|e| Failure::Run(e.into()))?;
    if !cli.quiet || cli.dry_run {
        println!("n_split: {}", shards.len());
        for (i, (_, m)) in shards.iter().enumerate() {
            println!(
                "split {:05}: n_tensors = {}, total_size = {}M",
                i + 1,
                m.tensors.len(),
                reported_megabytes(m)?
            );
        }
    }
    if cli.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    let written = write(shards, vec![cli.input.clone()], true, !cli.no_sync)?;
    if !cli.quiet {
        for f in &written.files {
            eprintln!(
                "gguf-edit: wrote {} ({})",
                f.path.display(),
                human_bytes(f.size)
            );
        }
        eprintln!(
            "gguf-edit: {} shards written with a total of {} tensors",
            written.files.len(),
            file.tensors.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn run_merge(cli: &ReshardCli) -> Result<ExitCode, Failure> {
    if cli.split_max_tensors.is_some() || cli.split_max_size.is_some() || cli.no_tensor_first_split
    {
        return Err(Failure::Usage(anyhow!(
            "--split-max-tensors, --split-max-size and --no-tensor-first-split are for splitting"
        )));
    }
    refuse_pending(&cli.input)?;
    let shards = reshard::open_for_merge(&cli.input).map_err(|e| Failure::Input(e.into()))?;
    let model = reshard::merge_model(&shards).map_err(|e| Failure::Run(e.into()))?;
    let paths: Vec<PathBuf> = shards
        .iter()
        .filter_map(|s| s.bytes().path().map(PathBuf::from))
        .collect();
    if !cli.quiet || cli.dry_run {
        println!(
            "merge: {} shards, {} tensors -> {}",
            shards.len(),
            model.tensors.len(),
            cli.output.display()
        );
    }
    if cli.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    if !cli.force && cli.output.exists() {
        return Err(Failure::Usage(anyhow!(
            "{} exists (--force replaces it)",
            cli.output.display()
        )));
    }
    let written = write(
        vec![(cli.output.clone(), model)],
        paths.clone(),
        cli.force,
        !cli.no_sync,
    )?;
    drop(shards);
    if !cli.quiet {
        eprintln!(
            "gguf-edit: {} ({}) merged from {} shards",
            cli.output.display(),
            human_bytes(written.size()),
            paths.len()
        );
    }
    if cli.delete_splits {
        for p in &paths {
            std::fs::remove_file(p)
                .map_err(|e| Failure::Run(anyhow!("cannot delete {}: {e}", p.display())))?;
            if !cli.quiet {
                eprintln!("gguf-edit: deleted {}", p.display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_gguf_split_spellings_are_recognised() {
        let v = |s: &[&str]| s.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(is_split_command_line(&v(&["--merge", "a", "b"])));
        assert!(is_split_command_line(&v(&[
            "--split_max_tensors",
            "3",
            "a",
            "b"
        ])));
        assert!(is_split_command_line(&v(&[
            "--split-max-size=2G",
            "a",
            "b"
        ])));
        assert!(!is_split_command_line(&v(&[
            "a",
            "b",
            "--general-name",
            "x"
        ])));
        assert_eq!(
            normalise("--split_max_size=1_0G".into()),
            "--split-max-size=1_0G"
        );
        assert_eq!(normalise("in_file.gguf".into()), "in_file.gguf");
    }
}
