//! The files of one output: its shards, checked up front, created one after another as the
//! tensors reach them (one file of an output open at a time), hashed on the way when asked,
//! and renamed into place together.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::stream::Piece;
use super::{hex, Observer, OutputPlan, PipelineError, WriteOptions, WrittenFile, WrittenOutput};
use crate::gguf::{layout_in, reorder, DataWriter, GgufError, Layout};
use crate::ir::DataError;
use crate::output::{AtomicOutput, FinishedOutput, OutputRules, PlacedWriter};
use ggufkit_quantizers::GgmlType;

/// A writer that hashes what goes through it (when it has a hasher).
pub struct Hashing<'a, W: Write> {
    /// Where the bytes go.
    pub inner: &'a mut W,
    /// The running digest, if any.
    pub hasher: Option<&'a mut Sha256>,
}

impl<W: Write> Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        if let Some(h) = &mut self.hasher {
            h.update(&buf[..n]);
        }
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// One shard file.
pub struct Shard {
    /// Open while its tensors are being written.
    pub out: Option<AtomicOutput>,
    /// Complete, waiting to be renamed with the output's other shards.
    pub finished: Option<FinishedOutput>,
    /// Its layout.
    pub layout: Layout,
    /// Its digest so far.
    pub hasher: Option<Sha256>,
    /// Its file size.
    pub size: u64,
    /// Where it goes.
    pub path: PathBuf,
}

/// The files of one output and where each of its tensors goes.
pub struct Files {
    /// The shards in order.
    pub shards: Vec<Shard>,
    /// Shards before this one are finished; this one is open or not yet opened.
    current: usize,
    /// Per tensor of the output: (shard, index in shard).
    pub place: Vec<(usize, usize)>,
    /// Per tensor: its data size.
    pub sizes: Vec<u64>,
    /// Per tensor: its name.
    pub names: Vec<String>,
    /// Per tensor: its type.
    types: Vec<GgmlType>,
    /// Tensor elements in all.
    pub n_elements: u64,
    /// Checks sizes and pads the tensor data of the open shard.
    data: DataWriter,
    opts: WriteOptions,
}

impl Files {
    /// Lays out every shard and checks every target against the output rules; creates
    /// nothing.
    pub fn plan(plan: &OutputPlan) -> Result<Files, PipelineError> {
        let opts = plan.options.clone();
        let mut f = Files {
            shards: Vec::new(),
            current: 0,
            place: Vec::new(),
            sizes: Vec::new(),
            names: Vec::new(),
            types: Vec::new(),
            n_elements: 0,
            data: DataWriter::default(),
            opts,
        };
        for (si, s) in plan.shards.iter().enumerate() {
            let headers = if f.opts.vocab_only {
                Vec::new()
            } else {
                s.model.headers()
            };
            let layout = layout_in(&s.model.metadata, &headers, f.opts.byte_order)
                .map_err(|e| e.with_path(&s.path))?;
            crate::output::check(&s.path, &f.rules(&f.input_refs()))?;
            let size = if f.opts.vocab_only {
                layout.header_len as u64
            } else {
                layout.file_size
            };
            for (j, t) in headers.iter().enumerate() {
                f.place.push((si, j));
                f.sizes.push(layout.sizes[j]);
                f.names.push(t.name.clone());
                f.types.push(t.ty);
                f.n_elements += t.dims.iter().product::<u64>();
            }
            f.shards.push(Shard {
                out: None,
                finished: None,
                layout,
                hasher: f.opts.digest.then(Sha256::new),
                size,
                path: s.path.clone(),
            });
        }
        Ok(f)
    }

    /// The write options.
    pub fn options(&self) -> &WriteOptions {
        &self.opts
    }

    fn input_refs(&self) -> Vec<&Path> {
        self.opts.inputs.iter().map(PathBuf::as_path).collect()
    }

    /// The output rules of these files.
    pub fn rules<'a>(&self, inputs: &'a [&'a Path]) -> OutputRules<'a> {
        OutputRules {
            inputs,
            overwrite: self.opts.overwrite,
            sync: self.opts.sync,
        }
    }

    /// Creates shard `s` and writes its header (all of it, or the unpadded header of a
    /// vocab-only file).
    pub fn create(&mut self, s: usize) -> Result<(), PipelineError> {
        let inputs = self.input_refs();
        let rules = self.rules(&inputs);
        let mut out = AtomicOutput::create(&self.shards[s].path, &rules)?;
        drop(inputs);
        let vocab_only = self.opts.vocab_only;
        let shard = &mut self.shards[s];
        let head = if vocab_only {
            &shard.layout.header[..shard.layout.header_len]
        } else {
            &shard.layout.header[..]
        };
        Hashing {
            inner: &mut out,
            hasher: shard.hasher.as_mut(),
        }
        .write_all(head)
        .map_err(|source| GgufError::Io {
            path: Some(shard.path.clone()),
            source,
        })?;
        shard.out = Some(out);
        Ok(())
    }

    /// Makes shard `s` the open one: finishes the shards before it (creating those not yet
    /// created, such as a tensor-less first shard) and creates `s` with its header.
    pub fn advance_to(&mut self, s: usize) -> Result<(), PipelineError> {
        while self.current < s || (self.current == s && self.shards[s].out.is_none()) {
            let c = self.current;
            if self.shards[c].out.is_none() && self.shards[c].finished.is_none() {
                self.create(c)?;
            }
            if c == s {
                break;
            }
            self.finish_shard(c)?;
            self.current += 1;
        }
        Ok(())
    }

    /// Closes shard `s` (flushed and synced, not yet renamed).
    pub fn finish_shard(&mut self, s: usize) -> Result<(), PipelineError> {
        let shard = &mut self.shards[s];
        if let Some(out) = shard.out.take() {
            shard.finished = Some(out.finish()?);
        }
        Ok(())
    }

    /// Writes tensor `i` whole (its data, then its padding) into its shard.
    pub fn write(&mut self, i: usize, data: &[u8]) -> Result<(), PipelineError> {
        self.write_piece(i, data, true)
    }

    /// Writes the next bytes of tensor `i` into its shard (in the output's byte order,
    /// hashed when asked); `last` marks its final piece, which its padding follows. The
    /// tensor's bytes must add up to its planned size.
    pub fn write_piece(&mut self, i: usize, data: &[u8], last: bool) -> Result<(), PipelineError> {
        let (s, j) = self.place[i];
        self.advance_to(s)?;
        let shard = &mut self.shards[s];
        let out = shard.out.as_mut().expect("open until committed");
        let data = reorder(
            self.types[i],
            self.opts.data_order,
            self.opts.byte_order,
            data,
        );
        let mut w = Hashing {
            inner: out,
            hasher: shard.hasher.as_mut(),
        };
        match self.data.put(&mut w, &shard.layout, j, &data, last) {
            Ok(_) => Ok(()),
            Err(GgufError::Invalid(msg)) => Err(PipelineError::Data {
                tensor: self.names[i].clone(),
                error: DataError(msg),
            }),
            Err(e) => Err(PipelineError::Gguf(e.with_path(&shard.path))),
        }
    }

    /// Sets the output up for writes at their place from the computing threads
    /// ([`Placement`]) when it can take them: one shard, no digest, data in the output's byte
    /// order already, and a temporary file of ours. Creates the shard with its header and
    /// gives it its full length (the padding between tensors is then zeros already).
    pub fn placement(&mut self) -> Result<Option<Placement>, PipelineError> {
        if self.shards.len() != 1
            || self.opts.digest
            || self.opts.vocab_only
            || self.opts.data_order != self.opts.byte_order
        {
            return Ok(None);
        }
        self.advance_to(0)?;
        let shard = &mut self.shards[0];
        let out = shard
            .out
            .as_mut()
            .ok_or_else(|| PipelineError::Internal("the shard is not open".into()))?;
        let Some(writer) = out.placed()? else {
            return Ok(None);
        };
        writer.set_len(shard.size)?;
        let base = shard.layout.data_offset();
        Ok(Some(Placement {
            writer,
            starts: shard.layout.offsets.iter().map(|o| base + o).collect(),
            sizes: self.sizes.clone(),
            names: self.names.clone(),
        }))
    }

    /// Accounts for `len` bytes of tensor `i` that a [`Placement`] wrote, with
    /// [`Files::write_piece`]'s size checks.
    pub fn placed_piece(&mut self, i: usize, len: u64, last: bool) -> Result<(), PipelineError> {
        let (s, j) = self.place[i];
        let shard = &self.shards[s];
        match self.data.account(&shard.layout, j, len, last) {
            Ok(_) => Ok(()),
            Err(GgufError::Invalid(msg)) => Err(PipelineError::Data {
                tensor: self.names[i].clone(),
                error: DataError(msg),
            }),
            Err(e) => Err(PipelineError::Gguf(e.with_path(&shard.path))),
        }
    }

    /// Closes every shard (creating those not yet created), asks the observer, and renames
    /// them all into place.
    pub fn commit(
        &mut self,
        index: usize,
        t0: Instant,
        observer: &dyn Observer,
    ) -> Result<WrittenOutput, PipelineError> {
        if let Some(last) = self.shards.len().checked_sub(1) {
            self.advance_to(last)?;
            self.finish_shard(last)?;
        }
        let files = self
            .shards
            .iter_mut()
            .map(|s| WrittenFile {
                path: s.path.clone(),
                size: s.size,
                sha256: s
                    .hasher
                    .take()
                    .map_or_else(String::new, |h| hex(&h.finalize())),
            })
            .collect();
        let mut done = WrittenOutput {
            files,
            tensor_bytes: self.sizes.iter().sum(),
            n_elements: self.n_elements,
            seconds: 0.0,
        };
        observer
            .before_commit(index, &done)
            .map_err(PipelineError::Refused)?;
        for s in &mut self.shards {
            let finished = s
                .finished
                .take()
                .ok_or_else(|| PipelineError::Internal("a shard was committed twice".into()))?;
            finished.commit(self.opts.sync)?;
        }
        done.seconds = t0.elapsed().as_secs_f64();
        observer.output_committed(index, &done);
        Ok(done)
    }

    /// Drops every file (their temporary files are removed).
    pub fn abandon(&mut self) {
        for s in &mut self.shards {
            s.out = None;
            s.finished = None;
        }
    }
}

/// Writes the pieces of a one-shard output at their offsets, from any thread.
pub struct Placement {
    writer: PlacedWriter,
    /// Per tensor: where its data starts in the file.
    starts: Vec<u64>,
    /// Per tensor: its planned data size.
    sizes: Vec<u64>,
    /// Per tensor: its name.
    names: Vec<String>,
}

impl Placement {
    /// Writes `data`, the bytes of `piece`, where they belong. Bytes beyond the tensor's
    /// planned size are refused before anything is written (they would land on the next
    /// tensor's data).
    pub fn place(&self, piece: &Piece, data: &[u8]) -> Result<(), PipelineError> {
        let t = piece.tensor;
        let (Some(&start), Some(&planned)) = (self.starts.get(t), self.sizes.get(t)) else {
            return Err(PipelineError::Internal(format!(
                "tensor {t} is not in the layout"
            )));
        };
        let at = piece.offset_in_tensor();
        let end = at + data.len() as u64;
        if end > planned {
            return Err(PipelineError::Data {
                tensor: self.names[t].clone(),
                error: DataError(format!(
                    "tensor {t} produced {end} bytes, {planned} were planned"
                )),
            });
        }
        Ok(self.writer.write_at(data, start + at)?)
    }
}
