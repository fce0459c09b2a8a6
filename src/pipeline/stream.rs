//! The streaming loop: a list of tensors computed a bounded *window* at a time, in parallel,
//! while the previous window is written in order by a sink.
//!
//! A large tensor whose rows can be computed independently (a requantized GGUF tensor, a
//! mapped copy) is split into pieces of whole rows, so that neither the window nor the
//! threads' parallelism depends on the largest tensor, and its input pages are released
//! piece by piece. At most two windows are in memory: the one being computed and the one
//! being written. What the sink does with a piece (a file set with digests, or any writer)
//! is its own business; the loop only computes, orders and releases.

use std::borrow::Cow;

use rayon::prelude::*;

use super::PipelineError;
use crate::ir::{Rows, Tensor};

/// One unit of work: a whole tensor, or a range of its rows.
#[derive(Clone, Debug)]
pub struct Piece {
    /// The tensor's index in the list streamed.
    pub tensor: usize,
    /// The row layout and the rows of this piece, for a tensor computed by rows.
    rows: Option<(Rows, std::ops::Range<usize>)>,
    /// Bytes held while it is in flight: its output plus the input it reads.
    cost: u64,
    /// The tensor's last piece (padding, release and progress follow it).
    pub last: bool,
}

/// Bytes of work per piece: small enough that a window holds a piece per thread a few times
/// over, large enough that per-piece overhead is noise.
pub(crate) fn piece_target(window: u64) -> u64 {
    (window / (2 * rayon::current_num_threads().max(1) as u64)).clamp(1 << 20, 8 << 20)
}

/// Splits every tensor that can be computed by rows into pieces of about `target` bytes;
/// `sizes[i]` is tensor `i`'s planned data size.
pub(crate) fn pieces(tensors: &[&Tensor], sizes: &[u64], target: u64) -> Vec<Piece> {
    let mut out = Vec::new();
    for (i, (t, &size)) in tensors.iter().zip(sizes).enumerate() {
        let whole = Piece {
            tensor: i,
            rows: None,
            cost: size,
            last: true,
        };
        let rows = t
            .dims
            .first()
            .and_then(|&ne0| t.data.rows(t.ty, ne0))
            .filter(|r| {
                (r.count as u64).checked_mul(r.out_bytes as u64) == Some(size)
                    && size + (r.count * r.in_bytes) as u64 > target
            });
        let Some(r) = rows else {
            out.push(whole);
            continue;
        };
        let per_row = (r.out_bytes + r.in_bytes).max(1) as u64;
        let step = (target / per_row).max(1) as usize;
        let mut start = 0;
        while start < r.count {
            let end = (start + step).min(r.count);
            out.push(Piece {
                tensor: i,
                rows: Some((r, start..end)),
                cost: (end - start) as u64 * per_row,
                last: end == r.count,
            });
            start = end;
        }
    }
    out
}

/// What the ordered sink gets of a computed piece.
#[derive(Debug)]
pub enum PieceData<'a> {
    /// Its bytes, for the sink to write.
    Bytes(&'a [u8]),
    /// Its length: the placer already wrote it where it belongs.
    Placed(u64),
}

/// Writes a computed piece at its place in the output, from the thread that computed it.
pub type Placer<'p> = dyn Fn(&Piece, &[u8]) -> Result<(), PipelineError> + Sync + 'p;

impl Piece {
    /// Where this piece starts within its tensor's data.
    pub fn offset_in_tensor(&self) -> u64 {
        self.rows.as_ref().map_or(0, |(rows, range)| {
            range.start as u64 * rows.out_bytes as u64
        })
    }
}

/// Computes `tensors` (planned data sizes `sizes`) a window of about `window_bytes` at a
/// time and hands every piece, in order, to `sink`, which writes it (the tensor's index
/// and whether it is its last piece are in the [`Piece`]). A tensor's input pages are
/// released once its piece is written. The first error, of a computation or of the sink,
/// stops the loop.
pub fn stream<S>(
    tensors: &[&Tensor],
    sizes: &[u64],
    window_bytes: u64,
    mut sink: S,
) -> Result<(), PipelineError>
where
    S: FnMut(&Piece, &[u8]) -> Result<(), PipelineError> + Send,
{
    stream_placed(
        tensors,
        sizes,
        window_bytes,
        None,
        |piece, data| match data {
            PieceData::Bytes(bytes) => sink(piece, bytes),
            PieceData::Placed(_) => Err(PipelineError::Internal(
                "a piece was placed without a placer".into(),
            )),
        },
    )
}

/// [`stream`], where a `placer` (when given) writes each piece at its place from the thread
/// that computed it, so that the copies into the file run in parallel too; `sink` then gets
/// each piece's length, in order, to account for it.
pub fn stream_placed<S>(
    tensors: &[&Tensor],
    sizes: &[u64],
    window_bytes: u64,
    placer: Option<&Placer>,
    mut sink: S,
) -> Result<(), PipelineError>
where
    S: FnMut(&Piece, PieceData) -> Result<(), PipelineError> + Send,
{
    let window = window_bytes.max(1);
    let work = pieces(tensors, sizes, piece_target(window));
    type Window<'m> = (usize, usize, Vec<Result<Done<'m>, PipelineError>>);
    let work = &work;
    std::thread::scope(|scope| {
        // A rendezvous channel: the next window is computed while this one is written.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Window>(0);
        let writer = scope.spawn(move || -> Result<(), PipelineError> {
            for (start, end, produced) in rx {
                for (piece, done) in work[start..end].iter().zip(produced) {
                    match done? {
                        Done::Bytes(data) => {
                            sink(piece, PieceData::Bytes(&data))?;
                        }
                        Done::Placed(len) => sink(piece, PieceData::Placed(len))?,
                    }
                    let t = tensors[piece.tensor];
                    if let Some((rows, range)) = &piece.rows {
                        t.data.release_rows(rows, range.clone());
                    }
                    if piece.last {
                        t.data.release();
                    }
                }
            }
            Ok(())
        });
        let n = work.len();
        let mut start = 0;
        while start < n {
            // The window: consecutive pieces up to the byte budget (always at least one).
            let mut end = start + 1;
            let mut budget = work[start].cost;
            while end < n && budget + work[end].cost <= window {
                budget += work[end].cost;
                end += 1;
            }
            let produced: Vec<Result<Done, PipelineError>> = work[start..end]
                .par_iter()
                .map(|p| {
                    let t = tensors[p.tensor];
                    let bytes = match &p.rows {
                        None => t.data.bytes(),
                        Some((rows, range)) => t.data.bytes_rows(rows, range.clone()),
                    }
                    .map_err(|error| PipelineError::Data {
                        tensor: t.name.clone(),
                        error,
                    })?;
                    match placer {
                        Some(place) => {
                            place(p, &bytes)?;
                            Ok(Done::Placed(bytes.len() as u64))
                        }
                        None => Ok(Done::Bytes(bytes)),
                    }
                })
                .collect();
            if tx.send((start, end, produced)).is_err() {
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

/// A computed piece on its way to the ordered sink.
enum Done<'m> {
    Bytes(Cow<'m, [u8]>),
    Placed(u64),
}
