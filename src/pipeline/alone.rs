//! One output written alone: each shard streamed by [`crate::write::write_stream`] (a bounded
//! window of tensors, large ones in pieces of rows, computed in parallel ahead of the
//! writer), then every shard renamed into place together.

use std::path::Path;
use std::time::Instant;

use super::writer::{Files, Hashing};
use super::{Observer, OutputPlan, PipelineError, WrittenOutput};
use crate::gguf::GgufError;
use crate::ir::Model;
use crate::output::AtomicOutput;
use crate::write::{write_stream, WriteError, WriteOptions as StreamOptions};

/// Writes `plan` (output `index` of the run).
pub fn write(
    plan: &OutputPlan,
    index: usize,
    t0: Instant,
    observer: &dyn Observer,
) -> Result<WrittenOutput, PipelineError> {
    let mut files = Files::plan(plan)?;
    observer.output_started(index);
    // Tensor data bytes written once each tensor is done, for the observer.
    let mut done = Vec::with_capacity(files.sizes.len() + 1);
    done.push(0u64);
    for s in &files.sizes {
        done.push(done.last().copied().unwrap_or(0) + s);
    }
    let mut first = 0;
    for (s, shard) in plan.shards.iter().enumerate() {
        if files.options().vocab_only {
            files.create(s)?;
        } else {
            let tell =
                |i: usize, _: u64| observer.tensor_written(index, first + i, done[first + i + 1]);
            stream_shard(&mut files, s, &shard.model, &tell)?;
        }
        // One shard open at a time; all of them appear together at the end.
        files.finish_shard(s)?;
        first += shard.model.tensors.len();
    }
    files.commit(index, t0, observer)
}

/// Creates shard `s` and streams `model` into it.
fn stream_shard(
    files: &mut Files,
    s: usize,
    model: &Model,
    tell: &(dyn Fn(usize, u64) + Sync),
) -> Result<(), PipelineError> {
    let opts = StreamOptions {
        window_bytes: files.options().window_bytes,
        progress: Some(tell),
        byte_order: files.options().byte_order,
        data_order: files.options().data_order,
        ..StreamOptions::default()
    };
    let owned = files.options().inputs.clone();
    let inputs: Vec<&Path> = owned.iter().map(|p| p.as_path()).collect();
    let rules = files.rules(&inputs);
    let shard = &mut files.shards[s];
    let target = shard.path.clone();
    let mut out = AtomicOutput::create(&target, &rules)?;
    let mut w = Hashing {
        inner: &mut out,
        hasher: shard.hasher.as_mut(),
    };
    write_stream(model, &shard.layout, &mut w, &opts).map_err(|e| match e {
        WriteError::Gguf(g) => PipelineError::Gguf(g.with_path(&target)),
        e => e.into(),
    })?;
    std::io::Write::flush(&mut out).map_err(|source| GgufError::Io {
        path: Some(target.clone()),
        source,
    })?;
    shard.out = Some(out);
    Ok(())
}
