//! One output written alone: its tensors streamed in order ([`super::stream`]: a bounded
//! window of tensors, large ones in pieces of rows, computed in parallel ahead of the
//! writer) into its files, shard after shard, then every shard renamed into place together.

use std::time::Instant;

use super::stream::{stream_placed, Piece, PieceData, Placer};
use super::writer::Files;
use super::{Observer, OutputPlan, PipelineError, WrittenOutput};
use crate::ir::Tensor;

/// Writes `plan` (output `index` of the run).
pub fn write(
    plan: &OutputPlan,
    index: usize,
    t0: Instant,
    observer: &dyn Observer,
) -> Result<WrittenOutput, PipelineError> {
    let mut files = Files::plan(plan)?;
    observer.output_started(index);
    let data_phase = crate::timing::phase("write: tensor data");
    // A vocab-only file has no tensor data: committing creates its headers.
    if !files.options().vocab_only {
        let tensors: Vec<&Tensor> = plan.tensors().collect();
        let sizes = files.sizes.clone();
        let window = files.options().window_bytes;
        // Tensor data bytes written so far, for the observer.
        let mut written = 0u64;
        // Where it can, each thread writes what it computed at its place in the file.
        let placement = files.placement()?;
        let placer = placement
            .as_ref()
            .map(|p| move |piece: &Piece, data: &[u8]| p.place(piece, data));
        stream_placed(
            &tensors,
            &sizes,
            window,
            placer.as_ref().map(|p| p as &Placer),
            |piece, data| {
                let len = match data {
                    PieceData::Bytes(bytes) => {
                        files.write_piece(piece.tensor, bytes, piece.last)?;
                        bytes.len() as u64
                    }
                    PieceData::Placed(len) => {
                        files.placed_piece(piece.tensor, len, piece.last)?;
                        len
                    }
                };
                written += len;
                if piece.last {
                    observer.tensor_written(index, piece.tensor, written);
                }
                Ok(())
            },
        )?;
    }
    drop(data_phase);
    let _commit = crate::timing::phase("write: sync and commit");
    files.commit(index, t0, observer)
}
