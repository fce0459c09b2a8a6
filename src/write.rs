//! Streams a [`Model`] into a GGUF file: plan the layout, write the header, then pull the
//! tensors in order, a bounded window of them computed in parallel, each written as soon as
//! its turn comes. The output appears only when complete ([`AtomicOutput`]).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::gguf::{layout, reorder, ByteOrder, GgufError, Layout};
use crate::ir::{DataError, Model, Rows};
use crate::output::{AtomicOutput, OutputError, OutputRules};

/// Options of [`write_model`].
pub struct WriteOptions<'a> {
    /// Files the output must not replace.
    pub inputs: Vec<PathBuf>,
    /// Allow replacing an existing output.
    pub overwrite: bool,
    /// Sync the output to disk before renaming it into place (`--no-sync` turns it off).
    pub sync: bool,
    /// Bytes computed together, in parallel, ahead of the writer: each piece's output plus the
    /// input it reads (a run holds at most two such windows: the memory bound).
    pub window_bytes: u64,
    /// Called after each tensor is written with (tensor index, bytes written so far).
    pub progress: Option<&'a (dyn Fn(usize, u64) + Sync)>,
    /// Byte order of the file ([`crate::gguf::reorder`]); the layout's header must have been
    /// made in the same order.
    pub byte_order: ByteOrder,
    /// Byte order of the data the model's tensors produce.
    pub data_order: ByteOrder,
}

impl Default for WriteOptions<'_> {
    fn default() -> Self {
        WriteOptions {
            inputs: Vec::new(),
            overwrite: false,
            sync: true,
            window_bytes: 32 << 20,
            progress: None,
            byte_order: ByteOrder::Little,
            data_order: ByteOrder::Little,
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
    out.commit()?;
    Ok(plan)
}

/// One unit of work of the writer: a whole tensor, or a range of its rows.
#[derive(Clone, Debug)]
struct Piece {
    tensor: usize,
    /// The row layout and the rows of this piece, for a tensor computed by rows.
    rows: Option<(Rows, std::ops::Range<usize>)>,
    /// Bytes held while it is in flight: its output plus the input it reads.
    cost: u64,
    /// The tensor's last piece (padding, release and progress follow it).
    last: bool,
}

/// Bytes of work per piece: small enough that a window holds a piece per thread a few times
/// over, large enough that per-piece overhead is noise.
fn piece_target(window: u64) -> u64 {
    (window / (2 * rayon::current_num_threads().max(1) as u64)).clamp(1 << 20, 8 << 20)
}

/// Splits every tensor that can be computed by rows into pieces of about `target` bytes.
fn pieces(model: &Model, plan: &Layout, target: u64) -> Vec<Piece> {
    let mut out = Vec::new();
    for (i, t) in model.tensors.iter().enumerate() {
        let whole = Piece {
            tensor: i,
            rows: None,
            cost: plan.sizes[i],
            last: true,
        };
        let rows = t
            .dims
            .first()
            .and_then(|&ne0| t.data.rows(t.ty, ne0))
            .filter(|r| {
                (r.count as u64).checked_mul(r.out_bytes as u64) == Some(plan.sizes[i])
                    && plan.sizes[i] + (r.count * r.in_bytes) as u64 > target
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

/// Writes a planned model to any writer (the body of [`write_model`]).
///
/// Tensors are computed a window at a time (in parallel) while the previous window is being
/// written, so computing and writing overlap; at most two windows are in memory. A large
/// tensor whose rows can be computed independently (a requantized GGUF tensor, a mapped
/// copy) is split into pieces of whole rows, so that neither the window nor the threads'
/// parallelism depends on the largest tensor, and its input pages are released piece by
/// piece.
pub fn write_stream<W: std::io::Write + Send>(
    model: &Model,
    plan: &Layout,
    out: &mut W,
    opts: &WriteOptions,
) -> Result<(), WriteError> {
    out.write_all(&plan.header)
        .map_err(|source| GgufError::Io { path: None, source })?;
    let window = opts.window_bytes.max(1);
    let work = pieces(model, plan, piece_target(window));
    type Window<'m> = (usize, usize, Vec<Result<Cow<'m, [u8]>, WriteError>>);
    let work = &work;
    std::thread::scope(|scope| {
        // A rendezvous channel: the next window is computed while this one is written.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Window>(0);
        let writer = scope.spawn(move || -> Result<(), WriteError> {
            let zeros = vec![0u8; plan.alignment as usize];
            let mut written = plan.header.len() as u64;
            let mut in_tensor = 0u64;
            for (start, end, produced) in rx {
                for (piece, data) in work[start..end].iter().zip(produced) {
                    let i = piece.tensor;
                    let data = data?;
                    let bad = |got: u64| WriteError::Data {
                        tensor: model.tensors[i].name.clone(),
                        error: DataError(format!(
                            "produced {got} bytes, {} were planned",
                            plan.sizes[i]
                        )),
                    };
                    in_tensor += data.len() as u64;
                    if in_tensor > plan.sizes[i] || (piece.last && in_tensor != plan.sizes[i]) {
                        return Err(bad(in_tensor));
                    }
                    let ty = model.tensors[i].ty;
                    let bytes = reorder(ty, opts.data_order, opts.byte_order, &data);
                    out.write_all(&bytes)
                        .map_err(|source| GgufError::Io { path: None, source })?;
                    written += data.len() as u64;
                    drop(bytes);
                    drop(data);
                    if let Some((rows, range)) = &piece.rows {
                        model.tensors[i].data.release_rows(rows, range.clone());
                    }
                    if piece.last {
                        let pad = (plan.alignment - in_tensor % plan.alignment) % plan.alignment;
                        out.write_all(&zeros[..pad as usize])
                            .map_err(|source| GgufError::Io { path: None, source })?;
                        written += pad;
                        in_tensor = 0;
                        model.tensors[i].data.release();
                        if let Some(p) = opts.progress {
                            p(i, written);
                        }
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
            let produced: Vec<Result<Cow<[u8]>, WriteError>> = work[start..end]
                .par_iter()
                .map(|p| {
                    let t = &model.tensors[p.tensor];
                    match &p.rows {
                        None => t.data.bytes(),
                        Some((rows, range)) => t.data.bytes_rows(rows, range.clone()),
                    }
                    .map_err(|error| WriteError::Data {
                        tensor: t.name.clone(),
                        error,
                    })
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ggufkit_quantizers::GgmlType;

    use super::*;
    use crate::gguf::Metadata;
    use crate::ir::{Convert, Tensor, TensorData};

    /// Deterministic noise.
    fn values(n: usize, seed: u32) -> Vec<f32> {
        let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x as f32 / u32::MAX as f32) - 0.5
            })
            .collect()
    }

    fn f32_bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Tensors split into pieces of rows give exactly the bytes of whole-tensor computation,
    /// across matrix boundaries (a per-matrix imatrix) and for plain copies.
    #[test]
    fn pieces_of_rows_write_the_same_bytes_as_whole_tensors() {
        let (ne0, ne1, ne2) = (512usize, 700usize, 3usize);
        let src = f32_bytes(&values(ne0 * ne1 * ne2, 7));
        let imatrix: Vec<f32> = values(ne0 * ne2, 9).iter().map(|v| v.abs()).collect();
        let convert = Convert::new(
            TensorData::Owned(Arc::new(src.clone())),
            GgmlType::F32,
            GgmlType::Q4_K,
            ne0,
            ne1,
            Some(Arc::new(imatrix.clone())),
        )
        .unwrap();
        // A conversion of a transform computed by rows (a converter's stage, quantized in the
        // same pass) is computed by rows too.
        let stage = Convert::new(
            TensorData::Owned(Arc::new(src.clone())),
            GgmlType::F32,
            GgmlType::F16,
            ne0,
            ne1,
            None,
        )
        .unwrap();
        let staged = Convert::new(
            TensorData::Derived(Arc::new(stage)),
            GgmlType::F16,
            GgmlType::Q4_K,
            ne0,
            ne1,
            Some(Arc::new(imatrix)),
        )
        .unwrap();
        assert!(crate::ir::Derive::rows(&staged).is_some());
        let model = Model {
            metadata: Metadata::default(),
            tensors: vec![
                Tensor {
                    name: "staged".into(),
                    dims: vec![ne0 as u64, ne1 as u64, ne2 as u64],
                    ty: GgmlType::Q4_K,
                    data: TensorData::Derived(Arc::new(staged)),
                },
                Tensor {
                    name: "experts".into(),
                    dims: vec![ne0 as u64, ne1 as u64, ne2 as u64],
                    ty: GgmlType::Q4_K,
                    data: TensorData::Derived(Arc::new(convert)),
                },
                Tensor {
                    name: "copy".into(),
                    dims: vec![ne0 as u64, (ne1 * ne2) as u64],
                    ty: GgmlType::F32,
                    data: TensorData::Owned(Arc::new(src)),
                },
            ],
        };
        let plan = layout(&model.metadata, &model.headers()).unwrap();
        let mut expected = plan.header.clone();
        for (i, t) in model.tensors.iter().enumerate() {
            let b = t.data.bytes().unwrap();
            expected.extend_from_slice(&b);
            let pad = (plan.alignment - plan.sizes[i] % plan.alignment) % plan.alignment;
            expected.resize(expected.len() + pad as usize, 0);
        }
        for window in [1u64, 3 << 20, 1 << 30] {
            let split = pieces(&model, &plan, piece_target(window));
            if window < 1 << 30 {
                assert!(split.len() > 4, "window {window}: {} pieces", split.len());
            }
            let mut got = Vec::new();
            let opts = WriteOptions {
                window_bytes: window,
                ..Default::default()
            };
            write_stream(&model, &plan, &mut got, &opts).unwrap();
            assert!(got == expected, "window {window}: bytes differ");
        }
    }

    /// A tensor with a zero-length row (ne0 = 0) has no row layout; writing it must not
    /// divide by zero (found by the gguf_parse fuzz target;
    /// testdata/fuzz-regressions/gguf_parse/write-zero-row-size.gguf).
    #[test]
    fn zero_length_rows_are_written_whole() {
        let model = Model {
            metadata: Metadata::default(),
            tensors: vec![Tensor {
                name: "empty".into(),
                dims: vec![0, 7],
                ty: GgmlType::F32,
                data: TensorData::Owned(Arc::new(Vec::new())),
            }],
        };
        let plan = layout(&model.metadata, &model.headers()).unwrap();
        let mut out = Vec::new();
        write_stream(&model, &plan, &mut out, &WriteOptions::default()).unwrap();
        assert_eq!(out, plan.header);
        let file = crate::gguf::GgufFile::parse(crate::mapped::FileBytes::from_vec(
            std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/testdata/fuzz-regressions/gguf_parse/write-zero-row-size.gguf"
            ))
            .unwrap(),
        ))
        .unwrap();
        let m = Model::from_gguf(&file);
        let plan = layout(&m.metadata, &m.headers()).unwrap();
        let mut out = Vec::new();
        write_stream(&m, &plan, &mut out, &WriteOptions::default()).unwrap();
    }
}
