//! Streams a [`Model`] into a GGUF file: plan the layout, write the header, then pull the
//! tensors in order, a bounded window of them computed in parallel, each written as soon as
//! its turn comes. The output appears only when complete ([`AtomicOutput`]).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::gguf::{layout, GgufError, Layout};
use crate::ir::{DataError, Model};
use crate::output::{AtomicOutput, OutputError, OutputRules};

/// Options of [`write_model`].
pub struct WriteOptions<'a> {
    /// Files the output must not replace.
    pub inputs: Vec<PathBuf>,
    /// Allow replacing an existing output.
    pub overwrite: bool,
    /// Sync the output to disk before renaming it into place (`--no-sync` turns it off).
    pub sync: bool,
    /// Output bytes computed together, in parallel, ahead of the writer (a run holds at most
    /// two such windows: the memory bound).
    pub window_bytes: u64,
    /// Called after each tensor is written with (tensor index, bytes written so far).
    pub progress: Option<&'a (dyn Fn(usize, u64) + Sync)>,
}

impl Default for WriteOptions<'_> {
    fn default() -> Self {
        WriteOptions {
            inputs: Vec::new(),
            overwrite: false,
            sync: true,
            window_bytes: 64 << 20,
            progress: None,
        }
    }
}

impl WriteOptions<'_> {
    /// The output rules these options give, for `inputs` (borrowed from `self.inputs`).
    pub fn rules<'p>(&self, inputs: &'p [&'p Path]) -> OutputRules<'p> {
        OutputRules {
            inputs,
            overwrite: self.overwrite,
            sync: self.sync,
        }
    }
}

/// Why writing a model failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The layout is invalid or the file could not be written.
    #[error(transparent)]
    Gguf(#[from] GgufError),
    /// The output could not be created or committed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A tensor's data could not be produced.
    #[error("tensor '{tensor}': {error}")]
    Data {
        /// The tensor.
        tensor: String,
        /// What failed.
        error: DataError,
    },
}

/// Writes `model` to `target` and returns the layout that was written.
pub fn write_model(
    model: &Model,
    target: &Path,
    opts: &WriteOptions,
) -> Result<Layout, WriteError> {
    let (out, plan) = write_uncommitted(model, target, opts)?;
    out.commit()?;
    Ok(plan)
}

/// Writes `model` completely to a temporary file for `target`; the caller commits it (so
/// that several outputs can appear together, or not at all).
pub fn write_uncommitted(
    model: &Model,
    target: &Path,
    opts: &WriteOptions,
) -> Result<(AtomicOutput, Layout), WriteError> {
    let plan = layout(&model.metadata, &model.headers())?;
    let inputs: Vec<&Path> = opts.inputs.iter().map(PathBuf::as_path).collect();
    let mut out = AtomicOutput::create(target, &opts.rules(&inputs))?;
    let io_err = |e: std::io::Error| {
        WriteError::Gguf(GgufError::Io {
            path: Some(target.to_path_buf()),
            source: e,
        })
    };
    write_stream(model, &plan, &mut out, opts).map_err(|e| match e {
        WriteError::Gguf(g) => WriteError::Gguf(g.with_path(target)),
        e => e,
    })?;
    std::io::Write::flush(&mut out).map_err(io_err)?;
    Ok((out, plan))
}

/// Writes a planned model to any writer (the body of [`write_model`]).
///
/// Tensors are computed a window at a time (in parallel) while the previous window is being
/// written, so computing and writing overlap; at most two windows are in memory.
pub fn write_stream<W: std::io::Write + Send>(
    model: &Model,
    plan: &Layout,
    out: &mut W,
    opts: &WriteOptions,
) -> Result<(), WriteError> {
    out.write_all(&plan.header)
        .map_err(|source| GgufError::Io { path: None, source })?;
    type Window<'m> = (usize, Vec<Result<Cow<'m, [u8]>, WriteError>>);
    std::thread::scope(|scope| {
        // A rendezvous channel: the next window is computed while this one is written.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Window>(0);
        let writer = scope.spawn(move || -> Result<(), WriteError> {
            let zeros = vec![0u8; plan.alignment as usize];
            let mut written = plan.header.len() as u64;
            for (start, produced) in rx {
                for (i, data) in (start..).zip(produced) {
                    let data = data?;
                    crate::gguf::write_tensor_padded(out, plan, i, &data, &zeros).map_err(|e| {
                        match e {
                            GgufError::Invalid(msg) => WriteError::Data {
                                tensor: model.tensors[i].name.clone(),
                                error: DataError(msg),
                            },
                            e => WriteError::Gguf(e),
                        }
                    })?;
                    written += data.len() as u64;
                    drop(data);
                    model.tensors[i].data.release();
                    if let Some(p) = opts.progress {
                        p(i, written);
                    }
                }
            }
            Ok(())
        });
        let n = model.tensors.len();
        let mut start = 0;
        while start < n {
            // The window: consecutive tensors up to the byte budget (always at least one).
            let mut end = start + 1;
            let mut budget = plan.sizes[start];
            while end < n && budget + plan.sizes[end] <= opts.window_bytes.max(1) {
                budget += plan.sizes[end];
                end += 1;
            }
            let produced: Vec<Result<Cow<[u8]>, WriteError>> = model.tensors[start..end]
                .par_iter()
                .map(|t| {
                    t.data.bytes().map_err(|error| WriteError::Data {
                        tensor: t.name.clone(),
                        error,
                    })
                })
                .collect();
            if tx.send((start, produced)).is_err() {
                break; // the writer stopped on an error, which join reports
            }
            start = end;
        }
        drop(tx);
        writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
