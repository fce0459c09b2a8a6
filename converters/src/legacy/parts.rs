//! Multi-part models (`model.bin`, `model.bin.1`, …) and the assembly of every tensor from
//! its pieces ("multi-part files").
//!
//! Before GGJT, big llama models were written as several files, each with the full header
//! and vocabulary and a slice of every 2-D tensor. As old llama.cpp did, the number of parts
//! is `n_embd / ne0(tok_embeddings)` of the first file, the other parts are the first path
//! with `.1`, `.2`, … appended, and each 2-D tensor is reassembled:
//!
//! * by columns (each part holds `ne0 / n_parts` of every row) for `tok_embeddings.*`,
//!   `*.attention.wo.weight` and `*.feed_forward.w2.weight`;
//! * by rows (each part holds `ne1 / n_parts` whole rows) for the other 2-D tensors.
//!
//! 1-D tensors are duplicated in every part; the first part's copy is used. All parts must
//! agree on the container, the hyperparameters, the vocabulary and the tensor list (names,
//! order, types, slice shapes).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ggufkit::ir::{DataError, Derive, TensorData};
use ggufkit::mapped::FileBytes;

use super::container::{ParsedFile, Record};
use super::error::{LegacyError, LegacyErrorKind};
use super::layout::Layout;
use crate::ConvertError;

/// How a 2-D tensor is divided between parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// One piece (single-part model, or a 1-D tensor).
    None,
    /// Each part holds whole rows.
    Rows,
    /// Each part holds a slice of every row.
    Columns,
}

/// Which split old llama.cpp applied to a tensor of `n_dims` dims named `name`.
fn split_of(name: &str, n_dims: usize, n_parts: usize) -> Split {
    if n_dims == 1 || n_parts == 1 {
        Split::None
    } else if name.starts_with("tok_embeddings.")
        || name.contains(".attention.wo.weight")
        || name.contains(".feed_forward.w2.weight")
    {
        Split::Columns
    } else {
        Split::Rows
    }
}

/// One tensor of the model with its bytes still in the legacy layout.
#[derive(Clone)]
pub struct SourceTensor {
    /// Legacy name.
    pub name: String,
    /// Type id stored.
    pub type_id: u32,
    /// Its layout.
    pub layout: Layout,
    /// Assembled dims, ne0 first.
    pub ne: Vec<u64>,
    /// The file and record offset of the first piece (for messages).
    pub path: PathBuf,
    /// Record offset in the first part.
    pub offset: u64,
    /// The bytes of each piece: (file, absolute offset, length).
    pub pieces: Vec<(Arc<FileBytes>, usize, usize)>,
    /// How the pieces form the tensor.
    pub split: Split,
}

impl SourceTensor {
    /// The legacy bytes as one lazy source: a mapped range for one piece, an assembly
    /// otherwise.
    pub fn data(&self) -> TensorData {
        let mapped = |(f, o, l): &(Arc<FileBytes>, usize, usize)| TensorData::Mapped {
            file: f.clone(),
            offset: *o,
            len: *l,
        };
        if self.pieces.len() == 1 {
            return mapped(&self.pieces[0]);
        }
        TensorData::Derived(Arc::new(Assemble {
            name: self.name.clone(),
            pieces: self.pieces.iter().map(mapped).collect(),
            split: self.split,
            rows: self.ne.get(1).copied().unwrap_or(1) as usize,
        }))
    }

    /// An error about this tensor.
    pub fn error(&self, kind: LegacyErrorKind) -> ConvertError {
        ConvertError::Legacy(Box::new(LegacyError {
            path: self.path.clone(),
            offset: Some(self.offset),
            tensor: Some(self.name.clone()),
            kind,
        }))
    }
}

/// The path of part `i` (≥ 1) of the model whose first part is `first`.
pub fn part_path(first: &Path, i: usize) -> PathBuf {
    let mut s = OsString::from(first.as_os_str());
    s.push(format!(".{i}"));
    PathBuf::from(s)
}

fn mismatch(
    part: &ParsedFile,
    index: usize,
    offset: Option<u64>,
    tensor: Option<&str>,
    what: String,
) -> ConvertError {
    ConvertError::Legacy(Box::new(LegacyError {
        path: part.path.clone(),
        offset,
        tensor: tensor.map(str::to_string),
        kind: LegacyErrorKind::PartMismatch { part: index, what },
    }))
}

/// The number of parts the first file says the model has.
fn count_parts(first: &ParsedFile) -> Result<usize, ConvertError> {
    let Some(tok) = first.record("tok_embeddings.weight") else {
        return Ok(1);
    };
    let n_embd = u64::from(first.hparams.n_embd);
    let ne0 = tok.ne[0];
    if n_embd % ne0 != 0 {
        return Err(ConvertError::Legacy(Box::new(LegacyError {
            path: first.path.clone(),
            offset: Some(tok.offset),
            tensor: Some(tok.name.clone()),
            kind: LegacyErrorKind::BadShape {
                dims: tok.ne.clone(),
                problem: format!(
                    "n_embd {n_embd} is not a multiple of ne0 {ne0}, so the part count cannot be known"
                ),
            },
        })));
    }
    Ok((n_embd / ne0) as usize)
}

/// Opens the other parts of the model whose first part is `first` and checks that they
/// agree with it. Returns all parts, the first one first.
pub fn open_parts(
    first: ParsedFile,
    warnings: &mut Vec<String>,
) -> Result<Vec<ParsedFile>, ConvertError> {
    let n_parts = count_parts(&first)?;
    let mut parts = vec![first];
    if n_parts == 1 {
        let p1 = part_path(&parts[0].path, 1);
        if p1.exists() {
            warnings.push(format!(
                "{} exists, but {} holds whole tensors (tok_embeddings is n_embd wide): \
                 converted as a single-part model",
                p1.display(),
                parts[0].path.display()
            ));
        }
        return Ok(parts);
    }
    for i in 1..n_parts {
        let path = part_path(&parts[0].path, i);
        if !path.exists() {
            return Err(ConvertError::Legacy(Box::new(LegacyError {
                path,
                offset: None,
                tensor: None,
                kind: LegacyErrorKind::MissingPart { part: i, n_parts },
            })));
        }
        let part = ParsedFile::open(&path)?;
        check_part(&parts[0], &part, i)?;
        parts.push(part);
    }
    Ok(parts)
}

fn check_part(first: &ParsedFile, part: &ParsedFile, i: usize) -> Result<(), ConvertError> {
    if part.kind != first.kind {
        return Err(mismatch(
            part,
            i,
            Some(0),
            None,
            format!("container {} vs {}", part.kind, first.kind),
        ));
    }
    let header_at = if first.kind.format == super::container::LegacyFormat::Ggml {
        4
    } else {
        8
    };
    if part.hparams != first.hparams {
        return Err(mismatch(
            part,
            i,
            Some(header_at),
            None,
            format!("hyperparameters {:?} vs {:?}", part.hparams, first.hparams),
        ));
    }
    if let Some(k) = (0..first.vocab.len()).find(|&k| {
        let (a, b) = (&part.vocab[k], &first.vocab[k]);
        a.bytes != b.bytes || a.score.to_bits() != b.score.to_bits()
    }) {
        return Err(mismatch(
            part,
            i,
            None,
            None,
            format!("vocabulary item {k}"),
        ));
    }
    if part.records.len() != first.records.len() {
        return Err(mismatch(
            part,
            i,
            None,
            None,
            format!("{} tensors vs {}", part.records.len(), first.records.len()),
        ));
    }
    for (r, r0) in part.records.iter().zip(&first.records) {
        let fail = |what: String| mismatch(part, i, Some(r.offset), Some(&r.name), what);
        if r.name != r0.name {
            return Err(fail(format!(
                "tensor '{}' where part 0 has '{}'",
                r.name, r0.name
            )));
        }
        if r.type_id != r0.type_id {
            return Err(fail(format!("type id {} vs {}", r.type_id, r0.type_id)));
        }
        if r.ne != r0.ne {
            return Err(fail(format!("slice dims {:?} vs {:?}", r.ne, r0.ne)));
        }
    }
    Ok(())
}

/// Every tensor of the model, assembled from its parts, in the first part's order.
pub fn assemble(parts: &[ParsedFile]) -> Result<Vec<SourceTensor>, ConvertError> {
    let n = parts.len();
    let first = &parts[0];
    first
        .records
        .iter()
        .enumerate()
        .map(|(k, r0)| {
            let split = split_of(&r0.name, r0.ne.len(), n);
            let piece = |p: &ParsedFile, r: &Record| (p.bytes.clone(), r.data_offset, r.nbytes);
            let pieces = match split {
                Split::None => vec![piece(first, r0)],
                _ => parts.iter().map(|p| piece(p, &p.records[k])).collect(),
            };
            let mut ne = r0.ne.clone();
            match split {
                Split::None => {}
                Split::Columns => ne[0] *= n as u64,
                Split::Rows => ne[1] *= n as u64,
            }
            let t = SourceTensor {
                name: r0.name.clone(),
                type_id: r0.type_id,
                layout: r0.layout,
                ne,
                path: first.path.clone(),
                offset: r0.offset,
                pieces,
                split,
            };
            if ne_too_big(&t) {
                return Err(t.error(LegacyErrorKind::SizeOverflow {
                    dims: t.ne.clone(),
                    type_name: t.layout.to_string(),
                }));
            }
            Ok(t)
        })
        .collect()
}

/// An assembled tensor too large to hold in memory (only possible with absurd part counts).
fn ne_too_big(t: &SourceTensor) -> bool {
    let total: Option<usize> = t.pieces.iter().try_fold(0usize, |a, p| a.checked_add(p.2));
    total.is_none() || t.ne.iter().any(|&d| d > i64::MAX as u64)
}

/// Joins the pieces of a multi-part tensor.
struct Assemble {
    name: String,
    pieces: Vec<TensorData>,
    split: Split,
    /// Rows of the assembled tensor (for column splits: rows of every piece).
    rows: usize,
}

impl Derive for Assemble {
    fn describe(&self) -> String {
        format!(
            "'{}' joined by {} from {} parts",
            self.name,
            if self.split == Split::Columns {
                "columns"
            } else {
                "rows"
            },
            self.pieces.len()
        )
    }

    fn compute(&self) -> Result<Vec<u8>, DataError> {
        let pieces = self
            .pieces
            .iter()
            .map(TensorData::bytes)
            .collect::<Result<Vec<_>, _>>()?;
        let total = pieces.iter().map(|p| p.len()).sum();
        let mut out = Vec::with_capacity(total);
        match self.split {
            Split::None | Split::Rows => pieces.iter().for_each(|p| out.extend_from_slice(p)),
            Split::Columns => {
                let rows = self.rows.max(1);
                for p in &pieces {
                    if p.len() % rows != 0 || p.len() != pieces[0].len() {
                        return Err(DataError(format!(
                            "{}: a piece of {} bytes is not {rows} equal rows",
                            self.describe(),
                            p.len()
                        )));
                    }
                }
                let rb = pieces[0].len() / rows;
                for r in 0..rows {
                    for p in &pieces {
                        out.extend_from_slice(&p[r * rb..(r + 1) * rb]);
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_rules_of_old_llama_cpp() {
        assert_eq!(split_of("tok_embeddings.weight", 2, 2), Split::Columns);
        assert_eq!(
            split_of("layers.3.attention.wo.weight", 2, 2),
            Split::Columns
        );
        assert_eq!(
            split_of("layers.3.feed_forward.w2.weight", 2, 2),
            Split::Columns
        );
        assert_eq!(
            split_of("layers.3.feed_forward.w1.weight", 2, 2),
            Split::Rows
        );
        assert_eq!(split_of("output.weight", 2, 2), Split::Rows);
        assert_eq!(split_of("norm.weight", 1, 2), Split::None);
        assert_eq!(split_of("output.weight", 2, 1), Split::None);
    }

    #[test]
    fn columns_interleave_rows() {
        let a = TensorData::Owned(Arc::new(vec![1, 2, 3, 4]));
        let b = TensorData::Owned(Arc::new(vec![5, 6, 7, 8]));
        let cols = Assemble {
            name: "t".into(),
            pieces: vec![a.clone(), b.clone()],
            split: Split::Columns,
            rows: 2,
        };
        assert_eq!(cols.compute().unwrap(), vec![1, 2, 5, 6, 3, 4, 7, 8]);
        let rows = Assemble {
            split: Split::Rows,
            ..cols
        };
        assert_eq!(rows.compute().unwrap(), vec![1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn part_paths_append_the_number() {
        assert_eq!(
            part_path(Path::new("/m/ggml-model-f16.bin"), 2),
            PathBuf::from("/m/ggml-model-f16.bin.2")
        );
    }
}
