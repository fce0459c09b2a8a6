//! Legacy GGML/GGMF/GGJT test files: a writer that records where every field lies, splitting
//! into parts, and manifests of the models read from them.

use std::path::{Path, PathBuf};

pub use crate::paths::{golden_dir, root, scratch, testdata};
pub use crate::record::record;

use crate::engine::write_gguf;

use ggufkit::gguf::GgufFile;
use ggufkit::ir::Model;
use ggufkit::manifest::{manifest, sha256_hex};
use serde_json::Value as Json;

/// llama.cpp's manifests of the legacy conversions (`testdata/golden/legacy`).
pub fn legacy_golden() -> PathBuf {
    golden_dir("legacy golden").join("legacy")
}

/// Writes `model` to `path` and returns the manifest of the file written.
pub fn write_and_manifest(model: &Model, path: &Path) -> Json {
    let _ = std::fs::remove_file(path);
    write_gguf(model, path).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    let f = GgufFile::open(path).unwrap_or_else(|e| panic!("re-reading {}: {e}", path.display()));
    manifest(&f, path, None)
}

/// sha256 of the bytes of every tensor of a model (computing derived ones), in order.
pub fn tensor_hashes(model: &Model) -> Vec<(String, String)> {
    model
        .tensors
        .iter()
        .map(|t| {
            let b = t.data.bytes().unwrap_or_else(|e| panic!("{}: {e}", t.name));
            (t.name.clone(), sha256_hex(&b))
        })
        .collect()
}

/// Reads a JSON file.
pub fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------
// Legacy files, field by field.

/// What a span of a legacy file holds (for the truncation oracle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// The magic.
    Magic,
    /// A fixed-size field read as a whole (version, hparam, length, score, record header
    /// field, dim) or a variable-length body (token, name).
    Field,
    /// A tensor's padding and data, checked as a whole before reading.
    Data,
}

/// A legacy file being written, with the spans of its fields.
#[derive(Default, Clone)]
pub struct Bin {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// (start, end, what) for every field, in order.
    pub spans: Vec<(usize, usize, Span)>,
}

impl Bin {
    /// Appends a field.
    pub fn field(&mut self, b: &[u8], what: Span) -> &mut Self {
        let s = self.bytes.len();
        self.bytes.extend_from_slice(b);
        self.spans.push((s, self.bytes.len(), what));
        self
    }

    /// Appends a u32 field.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.field(&v.to_le_bytes(), Span::Field)
    }

    /// Appends an f32 field.
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.field(&v.to_le_bytes(), Span::Field)
    }
}

/// One tensor record.
#[derive(Debug, Clone, PartialEq)]
pub struct RawTensor {
    /// Legacy name.
    pub name: String,
    /// Type id.
    pub type_id: u32,
    /// Dims, ne0 first.
    pub ne: Vec<u32>,
    /// Data bytes.
    pub data: Vec<u8>,
}

/// A legacy llama file.
#[derive(Debug, Clone, PartialEq)]
pub struct LegacyFile {
    /// `lmgg`, `fmgg` or `tjgg` (as on disk).
    pub magic: [u8; 4],
    /// Version field (absent for `lmgg`).
    pub version: Option<u32>,
    /// n_vocab, n_embd, n_mult, n_head, n_layer, n_rot, ftype.
    pub hparams: [u32; 7],
    /// Vocabulary items (bytes, score); scores are written unless the magic is `lmgg`.
    pub vocab: Vec<(Vec<u8>, f32)>,
    /// Tensor records.
    pub tensors: Vec<RawTensor>,
}

impl LegacyFile {
    /// True for GGJT (32-byte aligned data).
    pub fn aligned(&self) -> bool {
        &self.magic == b"tjgg"
    }

    /// True unless unversioned GGML.
    pub fn scores(&self) -> bool {
        &self.magic != b"lmgg"
    }

    /// The file, with spans.
    pub fn build(&self) -> Bin {
        let mut b = Bin::default();
        b.field(&self.magic, Span::Magic);
        if let Some(v) = self.version {
            b.u32(v);
        }
        for h in self.hparams {
            b.u32(h);
        }
        for (t, s) in &self.vocab {
            b.u32(t.len() as u32);
            b.field(t, Span::Field);
            if self.scores() {
                b.f32(*s);
            }
        }
        for t in &self.tensors {
            b.u32(t.ne.len() as u32)
                .u32(t.name.len() as u32)
                .u32(t.type_id);
            for &d in &t.ne {
                b.u32(d);
            }
            b.field(t.name.as_bytes(), Span::Field);
            let mut data = Vec::new();
            if self.aligned() {
                let pad = (32 - b.bytes.len() % 32) % 32;
                data.resize(pad, 0);
            }
            data.extend_from_slice(&t.data);
            b.field(&data, Span::Data);
        }
        b
    }

    /// The file's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.build().bytes
    }

    /// Parses a legacy llama file (test-side reader: trusts its input, panics otherwise).
    pub fn parse(bytes: &[u8]) -> LegacyFile {
        let mut pos = 0usize;
        let u32_at = |pos: &mut usize| {
            let v = u32::from_le_bytes(bytes[*pos..*pos + 4].try_into().unwrap());
            *pos += 4;
            v
        };
        let magic: [u8; 4] = bytes[..4].try_into().unwrap();
        pos += 4;
        let version = (&magic != b"lmgg").then(|| u32_at(&mut pos));
        let mut hparams = [0u32; 7];
        for h in &mut hparams {
            *h = u32_at(&mut pos);
        }
        let mut f = LegacyFile {
            magic,
            version,
            hparams,
            vocab: Vec::new(),
            tensors: Vec::new(),
        };
        for _ in 0..hparams[0] {
            let n = u32_at(&mut pos) as usize;
            let t = bytes[pos..pos + n].to_vec();
            pos += n;
            let s = if f.scores() {
                f32::from_bits(u32_at(&mut pos))
            } else {
                0.0
            };
            f.vocab.push((t, s));
        }
        while pos < bytes.len() {
            let n_dims = u32_at(&mut pos);
            let name_len = u32_at(&mut pos) as usize;
            let type_id = u32_at(&mut pos);
            let ne: Vec<u32> = (0..n_dims).map(|_| u32_at(&mut pos)).collect();
            let name = String::from_utf8(bytes[pos..pos + name_len].to_vec()).unwrap();
            pos += name_len;
            if f.aligned() {
                pos = pos.div_ceil(32) * 32;
            }
            let (bs, bb) = block_geometry(f.generation(), type_id);
            let n: usize = ne.iter().map(|&d| d as usize).product::<usize>() / bs * bb;
            f.tensors.push(RawTensor {
                name,
                type_id,
                ne,
                data: bytes[pos..pos + n].to_vec(),
            });
            pos += n;
        }
        f
    }

    /// Block-layout generation: 0 before GGJT v2, 1 for v2, 2 for v3.
    pub fn generation(&self) -> u8 {
        match (&self.magic, self.version) {
            (b"tjgg", Some(2)) => 1,
            (b"tjgg", Some(3)) => 2,
            _ => 0,
        }
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> &RawTensor {
        self.tensors.iter().find(|t| t.name == name).unwrap()
    }

    /// The tensor named `name`, mutably.
    pub fn tensor_mut(&mut self, name: &str) -> &mut RawTensor {
        self.tensors.iter_mut().find(|t| t.name == name).unwrap()
    }
}

/// (elements, bytes) per block of type `id` in files of generation `g`.
pub fn block_geometry(g: u8, id: u32) -> (usize, usize) {
    match (id, g) {
        (0, _) => (1, 4),
        (1, _) => (1, 2),
        (2, 2) => (32, 18),
        (2, _) => (32, 20),
        (3, 2) => (32, 20),
        (3, _) => (32, 24),
        (4, _) => (16, 10),
        (5, _) => (16, 12),
        (6, _) => (32, 22),
        (7, _) => (32, 24),
        (8, 2) => (32, 34),
        (8, _) => (32, 36),
        (10, _) => (256, 84),
        (11, _) => (256, 110),
        (12, _) => (256, 144),
        (13, _) => (256, 176),
        (14, _) => (256, 210),
        _ => panic!("type {id}"),
    }
}

/// Splits a single-part model into `n` parts the way pre-GGJT llama.cpp wrote them:
/// `tok_embeddings`, `wo` and `w2` by columns, other 2-D tensors by rows, 1-D duplicated.
pub fn split_into_parts(f: &LegacyFile, n: usize) -> Vec<LegacyFile> {
    let g = f.generation();
    (0..n)
        .map(|p| {
            let mut part = f.clone();
            for t in &mut part.tensors {
                if t.ne.len() < 2 {
                    continue;
                }
                let (bs, bb) = block_geometry(g, t.type_id);
                let row_bytes = t.ne[0] as usize / bs * bb;
                let rows = t.ne[1] as usize;
                let by_columns = t.name.starts_with("tok_embeddings.")
                    || t.name.contains(".attention.wo.weight")
                    || t.name.contains(".feed_forward.w2.weight");
                if by_columns {
                    let prb = row_bytes / n;
                    t.data = (0..rows)
                        .flat_map(|r| {
                            t.data[r * row_bytes + p * prb..r * row_bytes + (p + 1) * prb].to_vec()
                        })
                        .collect();
                    t.ne[0] /= n as u32;
                } else {
                    let pr = rows / n;
                    t.data = t.data[p * pr * row_bytes..(p + 1) * pr * row_bytes].to_vec();
                    t.ne[1] /= n as u32;
                }
            }
            part
        })
        .collect()
}

/// Writes the parts of a model as `dir/name`, `dir/name.1`, …; returns the first path.
pub fn write_parts(dir: &Path, name: &str, parts: &[LegacyFile]) -> PathBuf {
    for (i, p) in parts.iter().enumerate() {
        let file = if i == 0 {
            name.to_string()
        } else {
            format!("{name}.{i}")
        };
        std::fs::write(dir.join(file), p.bytes()).unwrap();
    }
    dir.join(name)
}
