//! The container: magic, version, hyperparameters, vocabulary and tensor records of one
//! GGML / GGMF / GGJT llama file.
//!
//! ```text
//! magic u32 ("lmgg" | "fmgg" | "tjgg" on disk), version u32 (GGMF, GGJT only)
//! n_vocab n_embd n_mult n_head n_layer n_rot ftype        7 × u32
//! n_vocab × { len u32, bytes[len], score f32 (GGMF, GGJT only) }
//! until EOF: { n_dims u32, name_len u32, type u32, ne[n_dims] u32, name[name_len],
//!              zero padding to a multiple of 32 of the file offset (GGJT only), data }
//! ```
//!
//! Parsing checks every length against the bytes left before using it and never sizes an
//! allocation by a count it has not checked that way.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ggufkit::mapped::FileBytes;

use super::cursor::Cursor;
use super::error::{LegacyError, LegacyErrorKind, MAX_NAME_LEN, MAX_TOKEN_LEN};
use super::layout::{ftype_name, layout_for, Layout};

/// The three legacy llama containers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LegacyFormat {
    /// Unversioned `ggml` (no version field, no vocabulary scores, no alignment).
    Ggml,
    /// `ggmf` version 1 (scores, no alignment).
    Ggmf,
    /// `ggjt` versions 1–3 (scores, tensor data aligned to 32 bytes for mmap).
    Ggjt,
}

impl LegacyFormat {
    /// The name the converter prints (`GGML`, `GGMF`, `GGJT`).
    pub fn name(self) -> &'static str {
        match self {
            LegacyFormat::Ggml => "GGML",
            LegacyFormat::Ggmf => "GGMF",
            LegacyFormat::Ggjt => "GGJT",
        }
    }
}

/// A legacy container and version, as detected from the first bytes of a file. The
/// unversioned format counts as version 1 (as the converter counts it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LegacyKind {
    /// The container.
    pub format: LegacyFormat,
    /// Its version (1 for unversioned GGML).
    pub version: u32,
}

impl LegacyKind {
    /// True for the versions that existed: GGML, GGMF v1, GGJT v1–v3.
    pub fn is_supported(self) -> bool {
        match self.format {
            LegacyFormat::Ggml | LegacyFormat::Ggmf => self.version == 1,
            LegacyFormat::Ggjt => (1..=3).contains(&self.version),
        }
    }

    /// Vocabulary items carry a score (all but unversioned GGML).
    pub fn has_scores(self) -> bool {
        self.format != LegacyFormat::Ggml
    }

    /// Tensor data is aligned to 32 file bytes (GGJT only).
    pub fn aligned(self) -> bool {
        self.format == LegacyFormat::Ggjt
    }

    /// Size of magic plus version.
    fn preamble_len(self) -> usize {
        if self.format == LegacyFormat::Ggml {
            4
        } else {
            8
        }
    }
}

impl fmt::Display for LegacyKind {
    /// `GGJTv3`, as the converter's description spells it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.format.name(), self.version)
    }
}

/// Classifies the first bytes of a file: `Some` for the three legacy magics (with the
/// version field as read, checked by [`LegacyKind::is_supported`]), `None` otherwise
/// (including GGUF and GGLA).
pub fn classify(head: &[u8]) -> Option<LegacyKind> {
    let format = match head.get(..4)? {
        b"lmgg" => {
            return Some(LegacyKind {
                format: LegacyFormat::Ggml,
                version: 1,
            })
        }
        b"fmgg" => LegacyFormat::Ggmf,
        b"tjgg" => LegacyFormat::Ggjt,
        _ => return None,
    };
    let v = head.get(4..8)?;
    Some(LegacyKind {
        format,
        version: u32::from_le_bytes([v[0], v[1], v[2], v[3]]),
    })
}

/// The seven header fields after the magic (all stored as 32-bit integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hparams {
    /// Vocabulary size.
    pub n_vocab: u32,
    /// Hidden size.
    pub n_embd: u32,
    /// The feed-forward rounding multiple (unused by the conversion).
    pub n_mult: u32,
    /// Attention heads.
    pub n_head: u32,
    /// Blocks.
    pub n_layer: u32,
    /// Rotary dimensions (ignored by the conversion: it writes n_embd / n_head).
    pub n_rot: u32,
    /// Whole-file type (`llama_ftype`).
    pub ftype: u32,
}

/// One vocabulary item as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct VocabItem {
    /// The bytes (spaces as 0x20, byte tokens as the raw byte, specials empty).
    pub bytes: Vec<u8>,
    /// The score (0.0 for unversioned GGML, which stores none).
    pub score: f32,
}

/// One tensor record.
#[derive(Debug, Clone)]
pub struct Record {
    /// Legacy name (`layers.0.attention.wq.weight`).
    pub name: String,
    /// Absolute offset of the record (its `n_dims` field).
    pub offset: u64,
    /// The type id stored.
    pub type_id: u32,
    /// What the type id means in this file version.
    pub layout: Layout,
    /// Dims, ne0 first.
    pub ne: Vec<u64>,
    /// Absolute offset of the data.
    pub data_offset: usize,
    /// Data size in bytes.
    pub nbytes: usize,
}

/// A parsed legacy file: everything but the tensor data, which stays in the mapping.
pub struct ParsedFile {
    /// The file.
    pub path: PathBuf,
    /// Its bytes (memory-mapped).
    pub bytes: Arc<FileBytes>,
    /// Container and version.
    pub kind: LegacyKind,
    /// The header.
    pub hparams: Hparams,
    /// The vocabulary, `n_vocab` items.
    pub vocab: Vec<VocabItem>,
    /// Tensor records in file order.
    pub records: Vec<Record>,
}

impl ParsedFile {
    /// Maps and parses `path`.
    pub fn open(path: &Path) -> Result<ParsedFile, crate::ConvertError> {
        let bytes = FileBytes::map(path).map_err(|e| crate::ConvertError::io(path, e))?;
        Ok(ParsedFile::parse(path, bytes)?)
    }

    /// Parses bytes that came from `path`.
    pub fn parse(path: &Path, bytes: Arc<FileBytes>) -> Result<ParsedFile, Box<LegacyError>> {
        let local = bytes.local().map_err(|e| {
            Box::new(LegacyError {
                path: path.to_path_buf(),
                offset: None,
                tensor: None,
                kind: LegacyErrorKind::NotLocal(e.to_string()),
            })
        })?;
        let mut c = Cursor::new(local, path);
        let kind = read_preamble(&mut c)?;
        let hparams = read_hparams(&mut c, kind)?;
        let vocab = read_vocab(&mut c, kind, hparams.n_vocab)?;
        let mut records = Vec::new();
        let mut seen = HashSet::new();
        while !c.at_end() {
            let r = read_record(&mut c, kind)?;
            if !seen.insert(r.name.clone()) {
                return Err(Box::new(LegacyError {
                    path: path.to_path_buf(),
                    offset: Some(r.offset),
                    tensor: Some(r.name),
                    kind: LegacyErrorKind::DuplicateTensor,
                }));
            }
            records.push(r);
        }
        Ok(ParsedFile {
            path: path.to_path_buf(),
            bytes: bytes.clone(),
            kind,
            hparams,
            vocab,
            records,
        })
    }

    /// The record named `name`.
    pub fn record(&self, name: &str) -> Option<&Record> {
        self.records.iter().find(|r| r.name == name)
    }
}

fn read_preamble(c: &mut Cursor) -> Result<LegacyKind, LegacyError> {
    let magic = c.take(4, || "the magic".into())?;
    let magic: [u8; 4] = [magic[0], magic[1], magic[2], magic[3]];
    match &magic {
        b"GGUF" => return Err(c.error_at(0, LegacyErrorKind::AlreadyGguf)),
        b"algg" => return Err(c.error_at(0, LegacyErrorKind::LoraAdapter)),
        b"lmgg" | b"fmgg" | b"tjgg" => {}
        _ => return Err(c.error_at(0, LegacyErrorKind::BadMagic(magic))),
    }
    let version = if &magic == b"lmgg" {
        1
    } else {
        c.u32("the version")?
    };
    let format = match &magic {
        b"lmgg" => LegacyFormat::Ggml,
        b"fmgg" => LegacyFormat::Ggmf,
        _ => LegacyFormat::Ggjt,
    };
    let kind = LegacyKind { format, version };
    if !kind.is_supported() {
        return Err(c.error_at(4, LegacyErrorKind::UnsupportedVersion { kind }));
    }
    debug_assert_eq!(c.pos(), kind.preamble_len());
    Ok(kind)
}

fn read_hparams(c: &mut Cursor, kind: LegacyKind) -> Result<Hparams, LegacyError> {
    let at = c.pos();
    let mut f = [0u32; 7];
    const NAMES: [&str; 7] = [
        "n_vocab", "n_embd", "n_mult", "n_head", "n_layer", "n_rot", "ftype",
    ];
    for (v, name) in f.iter_mut().zip(NAMES) {
        *v = c.u32(&format!("hyperparameter {name}"))?;
    }
    let hp = Hparams {
        n_vocab: f[0],
        n_embd: f[1],
        n_mult: f[2],
        n_head: f[3],
        n_layer: f[4],
        n_rot: f[5],
        ftype: f[6],
    };
    let field = |i: usize| at + 4 * i;
    if ftype_name(kind, hp.ftype).is_none() {
        return Err(c.error_at(
            field(6),
            LegacyErrorKind::UnknownFtype {
                ftype: hp.ftype,
                kind,
            },
        ));
    }
    let bad = |i: usize, value: u32, problem: &'static str| {
        c.error_at(
            field(i),
            LegacyErrorKind::BadHparam {
                name: NAMES[i],
                value,
                problem,
            },
        )
    };
    if hp.n_embd == 0 || hp.n_embd > i32::MAX as u32 {
        return Err(bad(1, hp.n_embd, "must be between 1 and 2^31-1"));
    }
    if hp.n_head == 0 || hp.n_head > hp.n_embd {
        return Err(bad(3, hp.n_head, "must be between 1 and n_embd"));
    }
    if hp.n_layer == 0 || hp.n_layer > i32::MAX as u32 {
        return Err(bad(4, hp.n_layer, "must be between 1 and 2^31-1"));
    }
    Ok(hp)
}

fn read_vocab(
    c: &mut Cursor,
    kind: LegacyKind,
    n_vocab: u32,
) -> Result<Vec<VocabItem>, LegacyError> {
    let at = c.pos();
    let per_item: u64 = if kind.has_scores() { 8 } else { 4 };
    let need = u64::from(n_vocab) * per_item;
    if need > c.remaining() as u64 {
        return Err(c.error_at(
            at - 28,
            LegacyErrorKind::VocabTooLarge {
                n_vocab,
                need,
                available: c.remaining() as u64,
            },
        ));
    }
    if n_vocab < 3 {
        return Err(c.error_at(at - 28, LegacyErrorKind::TooFewTokens(n_vocab)));
    }
    // Bounded by the check above: n_vocab ≤ remaining / 4.
    let mut items = Vec::with_capacity(n_vocab as usize);
    for index in 0..n_vocab {
        let len_at = c.pos();
        let len = c.u32(&format!("the length of vocabulary item {index}"))?;
        if len >= MAX_TOKEN_LEN {
            return Err(c.error_at(len_at, LegacyErrorKind::TokenTooLong { index, len }));
        }
        let bytes = c
            .take(len as usize, || format!("vocabulary item {index}"))?
            .to_vec();
        let score = if kind.has_scores() {
            c.f32(|| format!("the score of vocabulary item {index}"))?
        } else {
            0.0
        };
        items.push(VocabItem { bytes, score });
    }
    Ok(items)
}

fn read_record(c: &mut Cursor, kind: LegacyKind) -> Result<Record, LegacyError> {
    let offset = c.pos();
    let n_dims = c.u32("a tensor record header (n_dims)")?;
    if !(1..=2).contains(&n_dims) {
        return Err(c.error_at(offset, LegacyErrorKind::BadDimCount(n_dims)));
    }
    let name_len = c.u32("a tensor record header (name length)")?;
    if name_len >= MAX_NAME_LEN {
        return Err(c.error_at(offset + 4, LegacyErrorKind::NameTooLong(name_len)));
    }
    let type_id = c.u32("a tensor record header (type)")?;
    let mut ne = Vec::with_capacity(n_dims as usize);
    for i in 0..n_dims {
        ne.push(c.u32(&format!("tensor dimension {i}"))?);
    }
    let name_at = c.pos();
    let raw_name = c.take(name_len as usize, || "a tensor name".into())?;
    let name = std::str::from_utf8(raw_name)
        .map_err(|_| c.error_at(name_at, LegacyErrorKind::NameNotUtf8(raw_name.to_vec())))?
        .to_string();
    let fail = |at: usize, kind: LegacyErrorKind| {
        let mut e = c.error_at(at, kind);
        e.tensor = Some(name.clone());
        e
    };
    for (index, &v) in ne.iter().enumerate() {
        if v == 0 || v > i32::MAX as u32 {
            return Err(fail(
                offset + 12 + 4 * index,
                LegacyErrorKind::BadDim {
                    index,
                    value: i64::from(v as i32),
                },
            ));
        }
    }
    let ne: Vec<u64> = ne.into_iter().map(u64::from).collect();
    let layout = layout_for(kind, type_id).map_err(|k| fail(offset + 8, k))?;
    if !ne[0].is_multiple_of(layout.block_size() as u64) {
        return Err(fail(
            offset + 12,
            LegacyErrorKind::RowNotBlockAligned {
                ne0: ne[0],
                layout: layout.to_string(),
                block: layout.block_size(),
            },
        ));
    }
    let nbytes = ne
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .map(|n| n / layout.block_size() as u64)
        .and_then(|blocks| blocks.checked_mul(layout.block_bytes() as u64))
        .filter(|&n| usize::try_from(n).is_ok())
        .ok_or_else(|| {
            fail(
                offset + 12,
                LegacyErrorKind::SizeOverflow {
                    dims: ne.clone(),
                    type_name: layout.to_string(),
                },
            )
        })?;
    let pos = c.pos() as u64;
    let start = if kind.aligned() {
        pos.div_ceil(32) * 32
    } else {
        pos
    };
    let file_len = (c.pos() + c.remaining()) as u64;
    let end = start + nbytes; // both < 2^63: no overflow
    if end > file_len {
        return Err(fail(
            pos as usize,
            LegacyErrorKind::DataPastEof {
                start,
                end,
                file_len,
            },
        ));
    }
    c.take((end - pos) as usize, || "tensor data".into())?;
    Ok(Record {
        name,
        offset: offset as u64,
        type_id,
        layout,
        ne,
        data_offset: start as usize,
        nbytes: nbytes as usize,
    })
}
