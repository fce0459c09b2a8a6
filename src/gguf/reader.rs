//! A strict, allocation-safe GGUF parser over bytes in memory (usually an mmap), or over
//! the first bytes of a file read on demand (a URL: only the header is read).
//!
//! Every length and count is checked against a hard cap and against the bytes that remain
//! before anything is allocated; all size arithmetic is checked. Tensor layout is validated
//! as gguf.cpp does: aligned offsets, contiguous in declaration order, in bounds.

use super::keys;
use std::path::Path;
use std::sync::Arc;

use ggufkit_quantizers::{traits, GgmlType};

use super::error::{FormatError, GgufError};
use super::metadata::Metadata;
use super::value::{ArrayValue, GgufString, StringArray, Value, ValueType};
use super::{align_up, ByteOrder, TensorInfo, DEFAULT_ALIGNMENT, MAX_DIMS, MAX_TENSOR_NAME};
use crate::cursor::{Cursor, Short};
use crate::mapped::FileBytes;

/// Longest string accepted (gguf.cpp's `GGUF_MAX_STRING_LENGTH`).
pub const MAX_STRING_LEN: u64 = 1 << 30;
/// Most array items accepted (gguf.cpp's `GGUF_MAX_ARRAY_ELEMENTS`).
pub const MAX_ARRAY_LEN: u64 = 1 << 30;
/// Deepest array nesting accepted (llama.cpp accepts none; the spec allows it).
pub const MAX_ARRAY_DEPTH: usize = 4;
/// Largest `general.alignment` accepted.
pub const MAX_ALIGNMENT: u32 = 1 << 20;
/// Most items reserved up front from a count read from the file. A count is only checked
/// against the bytes that remain, and nested arrays and tensor tables cost more memory per
/// item than the file spends, so reserving the full count would let a small file claim
/// several times its size (once per nesting level) before any item is read. Beyond this,
/// vectors grow with the items actually parsed.
const MAX_PREALLOC: usize = 4096;
/// Largest header read from a file read on demand ([`FileBytes::remote`]): its first bytes
/// are read in growing pieces until the header fits, at most this many.
pub const MAX_REMOTE_HEADER: u64 = 64 << 20;
/// The first piece of a remote file read for its header (doubled while the header needs
/// more).
const FIRST_REMOTE_READ: u64 = 256 << 10;

/// A parsed GGUF file: header, metadata, tensor infos, and the bytes they point into.
#[derive(Debug)]
pub struct GgufFile {
    /// GGUF version (1, 2 or 3).
    pub version: u32,
    /// Byte order of the file.
    pub byte_order: ByteOrder,
    /// Data alignment (`general.alignment` or 32).
    pub alignment: u32,
    /// Absolute offset of the tensor data section.
    pub data_offset: u64,
    /// Metadata in file order.
    pub metadata: Metadata,
    /// Tensor infos in file order.
    pub tensors: Vec<TensorInfo>,
    bytes: Arc<FileBytes>,
}

impl GgufFile {
    /// Maps and parses `path`.
    pub fn open(path: &Path) -> Result<GgufFile, GgufError> {
        let bytes = FileBytes::map(path).map_err(|source| GgufError::Io {
            path: Some(path.to_path_buf()),
            source,
        })?;
        GgufFile::parse(bytes).map_err(|e| e.with_path(path))
    }

    /// Parses bytes already in memory, or the header of a file read on demand (a remote
    /// file: its first bytes only, in growing pieces, at most [`MAX_REMOTE_HEADER`]; its
    /// tensors' bytes are read later, when asked for).
    pub fn parse(bytes: Arc<FileBytes>) -> Result<GgufFile, GgufError> {
        let format = |(offset, error)| GgufError::Format {
            path: bytes.path().map(Path::to_path_buf),
            offset,
            error,
        };
        let parsed = match bytes.local() {
            Ok(all) => Parser::new(all, all.len() as u64).parse().map_err(format)?,
            Err(_) => parse_header_on_demand(&bytes).map_err(|e| match e {
                OnDemand::Format(f) => format(f),
                OnDemand::Io(source) => GgufError::Io {
                    path: bytes.path().map(Path::to_path_buf),
                    source,
                },
            })?,
        };
        Ok(GgufFile {
            version: parsed.version,
            byte_order: parsed.byte_order,
            alignment: parsed.alignment,
            data_offset: parsed.data_offset,
            metadata: parsed.metadata,
            tensors: parsed.tensors,
            bytes,
        })
    }

    /// The whole file.
    pub fn bytes(&self) -> &Arc<FileBytes> {
        &self.bytes
    }

    /// The stored bytes of tensor `t` (in the file's byte order) in a mapped or owned file.
    /// A file read on demand has no bytes in memory: this is empty for it, and
    /// [`GgufFile::read_tensor`] reads them.
    pub fn tensor_data(&self, t: &TensorInfo) -> &[u8] {
        let start = (self.data_offset + t.offset) as usize;
        self.local_bytes()
            .get(start..start + t.nbytes as usize)
            .unwrap_or_default()
    }

    /// The stored bytes of tensor `t`: borrowed from a mapped file, read for a remote one.
    pub fn read_tensor(&self, t: &TensorInfo) -> Result<std::borrow::Cow<'_, [u8]>, GgufError> {
        let start = (self.data_offset + t.offset) as usize;
        self.bytes
            .range(start, t.nbytes as usize)
            .map_err(|source| GgufError::Io {
                path: self.bytes.path().map(Path::to_path_buf),
                source,
            })
    }

    /// The whole file in memory (mapped or owned); empty for a file read on demand, whose
    /// bytes are read by range ([`GgufFile::read_tensor`], [`FileBytes::range`]).
    pub fn local_bytes(&self) -> &[u8] {
        self.bytes.local().unwrap_or_default()
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The file size in bytes.
    pub fn file_size(&self) -> u64 {
        self.bytes.size()
    }

    /// `general.architecture`, if present.
    pub fn architecture(&self) -> Option<&str> {
        self.metadata.get_str(keys::general::ARCHITECTURE).ok()
    }
}

struct Parsed {
    version: u32,
    byte_order: ByteOrder,
    alignment: u32,
    data_offset: u64,
    metadata: Metadata,
    tensors: Vec<TensorInfo>,
}

type PResult<T> = Result<T, (u64, FormatError)>;

/// A read past the end, as a format error at its offset.
fn truncated(short: Short, what: &dyn Fn() -> String) -> (u64, FormatError) {
    (
        short.offset,
        FormatError::Truncated {
            what: what(),
            needed: short.needed,
            available: short.available,
        },
    )
}

/// Why the header of a file read on demand could not be parsed.
enum OnDemand {
    Format((u64, FormatError)),
    Io(std::io::Error),
}

/// The header of a remote file: its first bytes read in growing pieces until the parser no
/// longer runs past the end of what was read. Counts and lengths are checked against the
/// whole file's size, as for a local file; allocations against the bytes read.
fn parse_header_on_demand(bytes: &FileBytes) -> Result<Parsed, OnDemand> {
    let size = bytes.size();
    let mut n = FIRST_REMOTE_READ.min(size);
    loop {
        let prefix = bytes.range(0, n as usize).map_err(OnDemand::Io)?;
        match Parser::new(&prefix, size).parse() {
            Err((_, FormatError::Truncated { .. })) if n < size => {
                if n >= MAX_REMOTE_HEADER {
                    return Err(OnDemand::Format((
                        0,
                        FormatError::HeaderTooLarge {
                            limit: MAX_REMOTE_HEADER,
                        },
                    )));
                }
                n = n.saturating_mul(2).min(size).min(MAX_REMOTE_HEADER);
            }
            r => return r.map_err(OnDemand::Format),
        }
    }
}

struct Parser<'a> {
    c: Cursor<'a>,
    /// The whole file's size (`c` may hold only its first bytes: a remote file's header).
    file_len: u64,
    /// Version 1 stores counts, lengths and dims as u32.
    narrow: bool,
}

impl<'a> Parser<'a> {
    fn new(buf: &'a [u8], file_len: u64) -> Self {
        Parser {
            c: Cursor::new(buf),
            file_len,
            narrow: false,
        }
    }

    /// Bytes of the file after the current position.
    fn remaining(&self) -> u64 {
        self.file_len.saturating_sub(self.c.pos() as u64)
    }

    fn fail<T>(&self, at: usize, e: FormatError) -> PResult<T> {
        Err((at as u64, e))
    }

    fn take(&mut self, n: u64, what: &dyn Fn() -> String) -> PResult<&'a [u8]> {
        self.c.take(n).map_err(|short| truncated(short, what))
    }

    fn fixed<const N: usize>(&mut self, what: &dyn Fn() -> String) -> PResult<[u8; N]> {
        self.c.le_array().map_err(|short| truncated(short, what))
    }

    fn u32(&mut self, what: &dyn Fn() -> String) -> PResult<u32> {
        Ok(u32::from_le_bytes(self.fixed(what)?))
    }

    fn u64(&mut self, what: &dyn Fn() -> String) -> PResult<u64> {
        Ok(u64::from_le_bytes(self.fixed(what)?))
    }

    /// A count or length: u32 in v1, u64 after.
    fn len(&mut self, what: &dyn Fn() -> String) -> PResult<u64> {
        if self.narrow {
            self.u32(what).map(u64::from)
        } else {
            self.u64(what)
        }
    }

    fn string(&mut self, what: &dyn Fn() -> String) -> PResult<&'a [u8]> {
        let at = self.c.pos();
        let len = self.len(what)?;
        let max = MAX_STRING_LEN.min(self.remaining());
        if len > max {
            return self.fail(
                at,
                FormatError::StringTooLong {
                    what: what(),
                    len,
                    max,
                },
            );
        }
        self.take(len, what)
    }

    /// The whole header, in the order of the file: magic and version, the counts, the
    /// metadata, the alignment it sets, the tensor infos; then the layout they describe.
    fn parse(mut self) -> PResult<Parsed> {
        let version = self.magic_and_version()?;
        let (n_tensors, n_kv) = self.counts()?;
        let (metadata, alignment_at) = self.metadata(n_kv)?;
        let alignment = self.alignment(&metadata, alignment_at)?;
        let tensors = self.tensor_infos(n_tensors)?;
        let end_of_infos = self.c.pos() as u64;
        let data_offset = align_up(end_of_infos, alignment as u64).ok_or((
            end_of_infos,
            FormatError::BadAlignment("padding overflows".into()),
        ))?;
        self.check_layout(&tensors, data_offset, alignment)?;
        Ok(Parsed {
            version,
            byte_order: if self.c.is_big_endian() {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            },
            alignment,
            data_offset,
            metadata,
            tensors,
        })
    }

    /// The magic and the version (1 to 3); a version whose low half is zero is a
    /// big-endian file, which switches the cursor's byte order.
    fn magic_and_version(&mut self) -> PResult<u32> {
        let magic = self.take(4, &|| "magic".into())?;
        if magic != b"GGUF" {
            let shown = magic
                .iter()
                .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
                .collect();
            return self.fail(0, FormatError::BadMagic(shown));
        }
        let raw_version = self.u32(&|| "version".into())?;
        let version = if raw_version & 0xFFFF == 0 && raw_version != 0 {
            // A big-endian file read as little-endian: the version's bytes are swapped.
            self.c.set_big_endian(true);
            raw_version.swap_bytes()
        } else {
            raw_version
        };
        if !(1..=3).contains(&version) {
            return self.fail(4, FormatError::UnsupportedVersion(version));
        }
        self.narrow = version == 1;
        Ok(version)
    }

    /// The tensor and metadata counts, each refused when the bytes left could not hold that
    /// many entries (so nothing is ever allocated from an untrusted count).
    fn counts(&mut self) -> PResult<(u64, u64)> {
        let at = self.c.pos();
        let n_tensors = self.len(&|| "tensor count".into())?;
        let n_kv = self.len(&|| "metadata count".into())?;
        // Each KV needs at least a key length, a type id and one value byte; each tensor info
        // a name length, n_dims, a type and an offset.
        let w = if self.narrow { 4 } else { 8 };
        let min_kv = w + 4 + 1;
        let min_ti = w + 4 + 4 + 8;
        let max_kv = self.remaining() / min_kv;
        if n_kv > max_kv {
            return self.fail(
                at + w as usize,
                FormatError::CountTooLarge {
                    what: "metadata".into(),
                    count: n_kv,
                    max: max_kv,
                },
            );
        }
        let max_ti = self.remaining() / min_ti;
        if n_tensors > max_ti {
            return self.fail(
                at,
                FormatError::CountTooLarge {
                    what: "tensor".into(),
                    count: n_tensors,
                    max: max_ti,
                },
            );
        }
        Ok((n_tensors, n_kv))
    }

    /// The `n_kv` metadata entries (keys non-empty, NUL-free UTF-8 and unique), and the
    /// offset of `general.alignment`'s entry, if any.
    fn metadata(&mut self, n_kv: u64) -> PResult<(Metadata, usize)> {
        let mut metadata = Metadata::new();
        let mut alignment_at = 0;
        for i in 0..n_kv {
            let at = self.c.pos();
            let key_bytes = self.string(&|| format!("key of metadata entry {i}"))?;
            let key = match std::str::from_utf8(key_bytes) {
                Ok(k) if !k.is_empty() && !k.contains('\0') => k.to_string(),
                Ok("") => {
                    return self.fail(at, FormatError::InvalidKey(format!("(empty) at entry {i}")))
                }
                _ => {
                    return self.fail(
                        at,
                        FormatError::InvalidKey(format!(
                            "{} at entry {i} (NUL or invalid UTF-8)",
                            quoted(key_bytes)
                        )),
                    )
                }
            };
            if key == keys::general::ALIGNMENT {
                alignment_at = at;
            }
            let vt_at = self.c.pos();
            let vt = self.u32(&|| format!("type of key '{key}'"))?;
            let vt = ValueType::from_id(vt).map_or_else(
                || {
                    self.fail(
                        vt_at,
                        FormatError::InvalidValueType {
                            key: key.clone(),
                            id: vt,
                        },
                    )
                },
                Ok,
            )?;
            let value = self.value(vt, &key, 0)?;
            if !metadata.push_unique(key.clone(), value) {
                return self.fail(at, FormatError::DuplicateKey(key));
            }
        }
        Ok((metadata, alignment_at))
    }

    /// The tensor data alignment: `general.alignment`, a power-of-two UINT32 no larger than
    /// the maximum, or the default.
    fn alignment(&self, metadata: &Metadata, alignment_at: usize) -> PResult<u32> {
        match metadata.get(keys::general::ALIGNMENT) {
            None => Ok(DEFAULT_ALIGNMENT),
            Some(Value::U32(a)) if a.is_power_of_two() && *a <= MAX_ALIGNMENT => Ok(*a),
            Some(Value::U32(a)) => self.fail(
                alignment_at,
                FormatError::BadAlignment(format!(
                    "is {a}: must be a power of two no larger than {MAX_ALIGNMENT}"
                )),
            ),
            Some(v) => self.fail(
                alignment_at,
                FormatError::BadAlignment(format!(
                    "has type {}, must be UINT32",
                    super::metadata::describe_type(v)
                )),
            ),
        }
    }

    /// The `n_tensors` tensor infos, names unique.
    fn tensor_infos(&mut self, n_tensors: u64) -> PResult<Vec<TensorInfo>> {
        let reserve = (n_tensors as usize).min(MAX_PREALLOC);
        let mut tensors: Vec<TensorInfo> = Vec::with_capacity(reserve);
        let mut names = std::collections::HashSet::with_capacity(reserve);
        for i in 0..n_tensors {
            let t = self.tensor_info(i)?;
            if !names.insert(t.name.clone()) {
                return self.fail(t.info_offset as usize, FormatError::DuplicateTensor(t.name));
            }
            tensors.push(t);
        }
        Ok(tensors)
    }

    fn value(&mut self, vt: ValueType, key: &str, depth: usize) -> PResult<Value> {
        let what = || format!("value of key '{key}'");
        Ok(match vt {
            ValueType::U8 => Value::U8(self.take(1, &what)?[0]),
            ValueType::I8 => Value::I8(self.take(1, &what)?[0] as i8),
            ValueType::U16 => Value::U16(u16::from_le_bytes(self.fixed(&what)?)),
            ValueType::I16 => Value::I16(i16::from_le_bytes(self.fixed(&what)?)),
            ValueType::U32 => Value::U32(u32::from_le_bytes(self.fixed(&what)?)),
            ValueType::I32 => Value::I32(i32::from_le_bytes(self.fixed(&what)?)),
            ValueType::F32 => Value::F32(f32::from_le_bytes(self.fixed(&what)?)),
            ValueType::U64 | ValueType::I64 | ValueType::F64 if self.narrow => {
                return self.fail(
                    self.c.pos() - 4,
                    FormatError::InvalidValueType {
                        key: key.into(),
                        id: vt as u32,
                    },
                )
            }
            ValueType::U64 => Value::U64(u64::from_le_bytes(self.fixed(&what)?)),
            ValueType::I64 => Value::I64(i64::from_le_bytes(self.fixed(&what)?)),
            ValueType::F64 => Value::F64(f64::from_le_bytes(self.fixed(&what)?)),
            ValueType::Bool => {
                let at = self.c.pos();
                match self.take(1, &what)?[0] {
                    0 => Value::Bool(false),
                    1 => Value::Bool(true),
                    byte => {
                        return self.fail(
                            at,
                            FormatError::InvalidBool {
                                key: key.into(),
                                byte,
                            },
                        )
                    }
                }
            }
            ValueType::String => Value::String(GgufString(self.string(&what)?.to_vec())),
            ValueType::Array => Value::Array(self.array(key, depth)?),
        })
    }

    /// An array at nesting level `depth` (0 for a key's own array).
    fn array(&mut self, key: &str, depth: usize) -> PResult<ArrayValue> {
        let (et, count) = self.array_header(key, depth)?;
        self.array_items(key, depth, et, count)
    }

    /// An array's element type and count: refused when the type is not one, would nest
    /// too deep, is 64-bit in a version-1 file, or when the bytes left could not hold
    /// `count` items of it.
    fn array_header(&mut self, key: &str, depth: usize) -> PResult<(ValueType, u64)> {
        let at = self.c.pos();
        let what = || format!("array of key '{key}'");
        let et = self.u32(&what)?;
        let et = ValueType::from_id(et).map_or_else(
            || {
                self.fail(
                    at,
                    FormatError::InvalidValueType {
                        key: key.into(),
                        id: et,
                    },
                )
            },
            Ok,
        )?;
        // Rejected on the declared type, so that an empty innermost array cannot smuggle in
        // one more level, and before the count, so that the error names the real fault.
        if et == ValueType::Array && depth + 1 >= MAX_ARRAY_DEPTH {
            return self.fail(
                at,
                FormatError::NestingTooDeep {
                    key: key.into(),
                    max: MAX_ARRAY_DEPTH,
                },
            );
        }
        if self.narrow && matches!(et, ValueType::U64 | ValueType::I64 | ValueType::F64) {
            return self.fail(
                at,
                FormatError::InvalidValueType {
                    key: key.into(),
                    id: et as u32,
                },
            );
        }
        let count_at = self.c.pos();
        let count = self.len(&what)?;
        let min_item = match et {
            ValueType::String => {
                if self.narrow {
                    4
                } else {
                    8
                }
            }
            ValueType::Array => {
                if self.narrow {
                    8
                } else {
                    12
                }
            }
            t => t.scalar_size().unwrap_or(1) as u64,
        };
        let max = (self.remaining() / min_item).min(MAX_ARRAY_LEN);
        if count > max {
            return self.fail(
                count_at,
                FormatError::CountTooLarge {
                    what: format!("array item (key '{key}')"),
                    count,
                    max,
                },
            );
        }
        Ok((et, count))
    }

    /// `count` items of type `et` (checked by [`Self::array_header`]).
    fn array_items(
        &mut self,
        key: &str,
        depth: usize,
        et: ValueType,
        count: u64,
    ) -> PResult<ArrayValue> {
        let what = || format!("array of key '{key}'");
        let n = count as usize;
        macro_rules! nums {
            ($variant:ident, $t:ty) => {{
                const W: usize = std::mem::size_of::<$t>();
                let raw = self.take((n * W) as u64, &what)?;
                let big = self.c.is_big_endian();
                ArrayValue::$variant(
                    raw.chunks_exact(W)
                        .map(|c| {
                            let mut a = [0u8; W];
                            a.copy_from_slice(c);
                            if big {
                                a.reverse();
                            }
                            <$t>::from_le_bytes(a)
                        })
                        .collect(),
                )
            }};
        }
        Ok(match et {
            ValueType::U8 => ArrayValue::U8(self.take(count, &what)?.to_vec()),
            ValueType::I8 => {
                ArrayValue::I8(self.take(count, &what)?.iter().map(|&b| b as i8).collect())
            }
            ValueType::U16 => nums!(U16, u16),
            ValueType::I16 => nums!(I16, i16),
            ValueType::U32 => nums!(U32, u32),
            ValueType::I32 => nums!(I32, i32),
            ValueType::F32 => nums!(F32, f32),
            ValueType::U64 => nums!(U64, u64),
            ValueType::I64 => nums!(I64, i64),
            ValueType::F64 => nums!(F64, f64),
            ValueType::Bool => {
                let raw = self.take(count, &what)?;
                if let Some(i) = raw.iter().position(|&b| b > 1) {
                    return self.fail(
                        self.c.pos() - raw.len() + i,
                        FormatError::InvalidBool {
                            key: key.into(),
                            byte: raw[i],
                        },
                    );
                }
                ArrayValue::Bool(raw.iter().map(|&b| b == 1).collect())
            }
            ValueType::String => {
                let mut v = StringArray::with_capacity(n.min(MAX_PREALLOC), 0);
                for _ in 0..n {
                    v.push(self.string(&what)?);
                }
                ArrayValue::String(v)
            }
            ValueType::Array => {
                let mut v = Vec::with_capacity(n.min(MAX_PREALLOC));
                for _ in 0..n {
                    v.push(self.array(key, depth + 1)?);
                }
                ArrayValue::Array(v)
            }
        })
    }

    fn tensor_info(&mut self, i: u64) -> PResult<TensorInfo> {
        let at = self.c.pos();
        let raw = self.string(&|| format!("name of tensor {i}"))?;
        let name = match std::str::from_utf8(raw) {
            Ok("") => {
                return self.fail(
                    at,
                    FormatError::InvalidTensorName(format!("(empty) at tensor {i}")),
                )
            }
            Ok(n) if n.contains('\0') || n.len() > MAX_TENSOR_NAME => {
                return self.fail(
                    at,
                    FormatError::InvalidTensorName(format!(
                        "{} of tensor {i} ({} bytes): names must be at most {MAX_TENSOR_NAME} \
                         bytes without NUL",
                        quoted(raw),
                        raw.len()
                    )),
                )
            }
            Ok(n) => n.to_string(),
            Err(_) => {
                return self.fail(
                    at,
                    FormatError::InvalidTensorName(format!(
                        "{} of tensor {i} (invalid UTF-8)",
                        quoted(raw)
                    )),
                )
            }
        };
        let what = || format!("info of tensor '{name}'");
        let bad = |problem: String| FormatError::Tensor {
            name: name.clone(),
            problem,
        };
        let nd_at = self.c.pos();
        let n_dims = self.u32(&what)?;
        if n_dims as usize > MAX_DIMS {
            return self.fail(
                nd_at,
                bad(format!("{n_dims} dimensions (at most {MAX_DIMS})")),
            );
        }
        let mut dims = Vec::with_capacity(n_dims as usize);
        for d in 0..n_dims {
            let dat = self.c.pos();
            let ne = self.len(&what)?;
            if ne > i64::MAX as u64 {
                return self.fail(
                    dat,
                    bad(format!("dimension {d} is negative ({})", ne as i64)),
                );
            }
            dims.push(ne);
        }
        let ty_at = self.c.pos();
        let ty_id = self.u32(&what)?;
        let ty = GgmlType::from_id(ty_id).map_or_else(
            || self.fail(ty_at, bad(format!("unknown or removed type id {ty_id}"))),
            Ok,
        )?;
        let offset = self.u64(&what)?;
        let nbytes = tensor_nbytes(ty, &dims).map_err(|p| (ty_at as u64, bad(p.to_string())))?;
        Ok(TensorInfo {
            name,
            dims,
            ty,
            offset,
            nbytes,
            info_offset: at as u64,
        })
    }

    fn check_layout(
        &self,
        tensors: &[TensorInfo],
        data_offset: u64,
        alignment: u32,
    ) -> PResult<()> {
        let file_size = self.file_len;
        let mut expected = 0u64;
        for t in tensors {
            let bad = |problem: String| {
                (
                    t.info_offset,
                    FormatError::Tensor {
                        name: t.name.clone(),
                        problem,
                    },
                )
            };
            if t.offset % alignment as u64 != 0 {
                return Err(bad(format!(
                    "offset {} is not a multiple of the alignment {alignment}",
                    t.offset
                )));
            }
            if t.offset != expected {
                return Err(bad(format!(
                    "offset {} out of place, expected {expected} (tensors must be contiguous, in order)",
                    t.offset
                )));
            }
            let end = data_offset
                .checked_add(t.offset)
                .and_then(|s| s.checked_add(t.nbytes))
                .ok_or_else(|| bad("data range overflows".into()))?;
            if end > file_size {
                return Err(bad(format!(
                    "data ends at byte {end}, past the end of the file ({file_size} bytes)"
                )));
            }
            let padded = align_up(t.nbytes, alignment as u64)
                .ok_or_else(|| bad("padded size overflows".into()))?;
            expected = expected
                .checked_add(padded)
                .ok_or_else(|| bad("running data size overflows".into()))?;
        }
        Ok(())
    }
}

/// A name or key from the file for an error message: escaped, and cut to its first 64 bytes
/// so that a hostile 1 GiB key cannot turn into a multi-GiB message.
fn quoted(raw: &[u8]) -> String {
    const SHOWN: usize = 64;
    let head = format!(
        "{:?}",
        String::from_utf8_lossy(&raw[..raw.len().min(SHOWN)])
    );
    if raw.len() > SHOWN {
        format!("{head}... ({} bytes)", raw.len())
    } else {
        head
    }
}

/// The byte size of a tensor of `ty` with GGUF dims `dims`, with every product checked
/// (no division by a zero dimension).
///
/// The product of the non-zero dims must fit in i64 even when another dim is zero: the tensor
/// is then empty, but row counts and strides computed from its shape would still overflow.
pub fn tensor_nbytes(ty: GgmlType, dims: &[u64]) -> Result<u64, SizeError> {
    let tr = traits(ty);
    let mut count: u64 = 1;
    for &d in dims.iter().filter(|&&d| d != 0) {
        count = count
            .checked_mul(d)
            .filter(|c| *c <= i64::MAX as u64)
            .ok_or_else(|| SizeError::ElementCount(dims.to_vec()))?;
    }
    if dims.contains(&0) {
        count = 0;
    }
    let ne0 = dims.first().copied().unwrap_or(1);
    if ne0 % tr.block_size as u64 != 0 {
        return Err(SizeError::RowNotBlockAligned { ne0, ty });
    }
    (count / tr.block_size as u64)
        .checked_mul(tr.type_size as u64)
        .filter(|n| *n <= i64::MAX as u64)
        .ok_or_else(|| SizeError::ByteSize {
            dims: dims.to_vec(),
            ty,
        })
}

/// Why a tensor shape has no valid byte size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// The product of the dims does not fit in i64.
    #[error("element count of shape {0:?} overflows")]
    ElementCount(Vec<u64>),
    /// The row length is not a whole number of blocks.
    #[error("row length {ne0} is not a multiple of the {} block size {}", .ty.name(), .ty.block_size())]
    RowNotBlockAligned {
        /// The row length.
        ne0: u64,
        /// The type.
        ty: GgmlType,
    },
    /// The byte size does not fit in i64.
    #[error("byte size of shape {dims:?} as {} overflows", .ty.name())]
    ByteSize {
        /// The dims.
        dims: Vec<u64>,
        /// The type.
        ty: GgmlType,
    },
}
