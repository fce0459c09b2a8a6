//! Safetensors shards: which files make up the model, and each file's tensor table.
//!
//! A safetensors file is an 8-byte little-endian header length `N`, `N` bytes of JSON
//! (`{"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`),
//! then the data area the offsets point into. The parser here is strict and bounded: the
//! header length, every offset and every byte count is checked against the file before a
//! tensor is accepted, so a truncated or hostile file gives an error naming the file and
//! the tensor, never a panic or an out-of-range read later.
//!
//! Shard discovery and ordering follow `convert_hf_to_gguf.py` (`index_tensors`): the files
//! `model*.safetensors` in sorted order, or the sorted unique shard names of
//! `model.safetensors.index.json` when it exists; inside a file, tensors sorted by name.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ggufkit::ir::DataError;
use ggufkit::mapped::FileBytes;
use serde_json::Value as Json;

use super::st_header;
use crate::error::SafetensorsProblem;
use crate::{ConvertError, ShardProblem};

/// Largest JSON header we accept (the `safetensors` crate's limit).
pub const MAX_HEADER_LEN: u64 = 100 << 20;

/// Element type of a safetensors tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StDtype {
    /// IEEE binary64.
    F64,
    /// IEEE binary32.
    F32,
    /// bfloat16.
    Bf16,
    /// IEEE binary16.
    F16,
    /// i64.
    I64,
    /// i32.
    I32,
    /// i16.
    I16,
    /// u8.
    U8,
    /// i8.
    I8,
    /// one byte, 0 or 1.
    Bool,
    /// FP8 E4M3 ("fn": no infinities, one NaN pattern).
    F8E4M3,
    /// FP8 E5M2.
    F8E5M2,
    /// FP8 E8M0 (a bare exponent, used for block scales).
    F8E8M0,
}

impl StDtype {
    /// Parses the header's dtype string.
    pub fn parse(s: &str) -> Option<StDtype> {
        Some(match s {
            "F64" => StDtype::F64,
            "F32" => StDtype::F32,
            "BF16" => StDtype::Bf16,
            "F16" => StDtype::F16,
            "I64" => StDtype::I64,
            "I32" => StDtype::I32,
            "I16" => StDtype::I16,
            "U8" => StDtype::U8,
            "I8" => StDtype::I8,
            "BOOL" => StDtype::Bool,
            "F8_E4M3" => StDtype::F8E4M3,
            "F8_E5M2" => StDtype::F8E5M2,
            "F8_E8M0" => StDtype::F8E8M0,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            StDtype::F64 | StDtype::I64 => 8,
            StDtype::F32 | StDtype::I32 => 4,
            StDtype::Bf16 | StDtype::F16 | StDtype::I16 => 2,
            StDtype::U8 | StDtype::I8 | StDtype::Bool => 1,
            StDtype::F8E4M3 | StDtype::F8E5M2 | StDtype::F8E8M0 => 1,
        }
    }

    /// The header spelling.
    pub fn name(self) -> &'static str {
        match self {
            StDtype::F64 => "F64",
            StDtype::F32 => "F32",
            StDtype::Bf16 => "BF16",
            StDtype::F16 => "F16",
            StDtype::I64 => "I64",
            StDtype::I32 => "I32",
            StDtype::I16 => "I16",
            StDtype::U8 => "U8",
            StDtype::I8 => "I8",
            StDtype::Bool => "BOOL",
            StDtype::F8E4M3 => "F8_E4M3",
            StDtype::F8E5M2 => "F8_E5M2",
            StDtype::F8E8M0 => "F8_E8M0",
        }
    }
}

/// One tensor of a safetensors file: where its bytes are, already bounds-checked.
#[derive(Clone)]
pub struct StTensor {
    /// Name in the file.
    pub name: String,
    /// Element type.
    pub dtype: StDtype,
    /// Shape, outermost first (PyTorch order).
    pub shape: Vec<u64>,
    /// The mapped file.
    pub file: Arc<FileBytes>,
    /// Absolute byte offset of the data.
    pub offset: usize,
    /// Data length in bytes (`prod(shape) * dtype.size()`).
    pub len: usize,
}

impl StTensor {
    /// The raw bytes: borrowed from the mapping (in range by construction), or read from a
    /// remote file.
    pub fn bytes(&self) -> Result<Cow<'_, [u8]>, DataError> {
        self.range(0, self.len)
    }

    /// The raw bytes `start..start + len` of the tensor's data (a remote file reads only
    /// those); a range outside the tensor is an error naming it.
    pub fn range(&self, start: usize, len: usize) -> Result<Cow<'_, [u8]>, DataError> {
        if start.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(DataError(format!(
                "{}: bytes {start}+{len} lie outside the tensor ({} bytes)",
                self.name, self.len
            )));
        }
        self.file
            .range(self.offset + start, len)
            .map_err(|e| DataError(format!("tensor '{}': {e}", self.name)))
    }

    /// Number of elements.
    pub fn n_elements(&self) -> u64 {
        self.shape.iter().product()
    }
}

impl std::fmt::Debug for StTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {:?} @{}+{}",
            self.name,
            self.dtype.name(),
            self.shape,
            self.offset,
            self.len
        )
    }
}

/// Parses the header of a mapped safetensors file; tensors come back sorted by name.
pub fn parse_file(path: &Path, file: &Arc<FileBytes>) -> Result<Vec<StTensor>, ConvertError> {
    let bad = |offset: Option<u64>, problem: SafetensorsProblem| ConvertError::Safetensors {
        path: path.to_path_buf(),
        offset,
        problem,
    };
    let total = file.size();
    if total < 8 {
        return Err(bad(None, SafetensorsProblem::TooShort { len: total }));
    }
    let io = |e: std::io::Error| ConvertError::io(path, e);
    let n = u64::from_le_bytes(
        file.range(0, 8).map_err(io)?[..]
            .try_into()
            .expect("8 bytes"),
    );
    if n > MAX_HEADER_LEN {
        let problem = SafetensorsProblem::HeaderTooLarge {
            len: n,
            limit: MAX_HEADER_LEN,
        };
        return Err(bad(Some(0), problem));
    }
    if n > total - 8 {
        let problem = SafetensorsProblem::HeaderTruncated {
            declared: n,
            available: total - 8,
        };
        return Err(bad(Some(0), problem));
    }
    let data_start = 8 + n;
    let data_len = total - data_start;
    // Read only once the length is known to fit the file (and the limit above).
    let header = file.range(8, n as usize).map_err(io)?;
    let text = std::str::from_utf8(&header).map_err(|e| {
        bad(
            Some(8 + e.valid_up_to() as u64),
            SafetensorsProblem::HeaderNotUtf8(e.to_string()),
        )
    })?;
    let entries = st_header::parse(text)
        .map_err(|e| bad(Some(8), SafetensorsProblem::InvalidHeader(e.to_string())))?;
    let mut out = Vec::with_capacity(entries.len());
    for raw in entries {
        let e = tensor_extent(raw, data_len).map_err(|p| bad(None, p))?;
        out.push(StTensor {
            name: e.name,
            dtype: e.dtype,
            shape: e.shape,
            file: file.clone(),
            offset: (data_start + e.begin) as usize,
            len: e.len as usize,
        });
    }
    check_coverage(&out, data_start, data_len)
        .map_err(|(offset, problem)| bad(Some(offset), problem))?;
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// A header entry checked against the data area: its dtype known, its offsets in order and
/// inside the data area, its size the one its shape and dtype need.
struct Extent {
    name: String,
    dtype: StDtype,
    shape: Vec<u64>,
    /// Its first byte in the data area.
    begin: u64,
    /// Its size in bytes.
    len: u64,
}

fn tensor_extent(raw: st_header::RawTensor, data_len: u64) -> Result<Extent, SafetensorsProblem> {
    let tensor = raw.name;
    let Some(dtype) = StDtype::parse(&raw.dtype) else {
        return Err(SafetensorsProblem::UnsupportedDtype {
            tensor,
            dtype: raw.dtype,
        });
    };
    let (begin, end, shape) = (raw.begin, raw.end, raw.shape);
    if begin > end {
        return Err(SafetensorsProblem::ReversedOffsets { tensor, begin, end });
    }
    if end > data_len {
        return Err(SafetensorsProblem::OutOfBounds {
            tensor,
            begin,
            end,
            data_len,
        });
    }
    let Some(needed) = shape
        .iter()
        .try_fold(dtype.size(), |acc, d| acc.checked_mul(*d))
    else {
        return Err(SafetensorsProblem::ShapeOverflow { tensor, shape });
    };
    if needed != end - begin {
        return Err(SafetensorsProblem::SizeMismatch {
            tensor,
            shape,
            dtype: dtype.name(),
            needed,
            given: end - begin,
        });
    }
    Ok(Extent {
        name: tensor,
        dtype,
        shape,
        begin,
        len: end - begin,
    })
}

/// The data ranges must tile the data area exactly, as the safetensors crate (which
/// llama.cpp's converter reads through) requires: in offset order each tensor starts where
/// the previous one ended, the first at 0, and the last ends at the end of the file. A
/// fault comes back with its file offset.
fn check_coverage(
    tensors: &[StTensor],
    data_start: u64,
    data_len: u64,
) -> Result<(), (u64, SafetensorsProblem)> {
    let mut by_offset: Vec<&StTensor> = tensors.iter().collect();
    by_offset.sort_by_key(|t| (t.offset, t.len));
    let mut covered = 0u64;
    for t in by_offset {
        let begin = t.offset as u64 - data_start;
        let end = begin + t.len as u64;
        if begin != covered {
            let (tensor, previous_end) = (t.name.clone(), covered);
            let problem = if begin < covered {
                SafetensorsProblem::Overlap {
                    tensor,
                    begin,
                    end,
                    previous_end,
                }
            } else {
                SafetensorsProblem::Gap {
                    tensor,
                    begin,
                    end,
                    previous_end,
                }
            };
            return Err((data_start + begin, problem));
        }
        covered = end;
    }
    if covered != data_len {
        let problem = SafetensorsProblem::TrailingBytes {
            extra: data_len - covered,
            data_len,
            covered,
        };
        return Err((data_start + covered, problem));
    }
    Ok(())
}

/// The model's tensors in the converter's order: shard by shard, sorted names within each.
pub struct Shards {
    /// Tensors in order.
    pub tensors: Vec<StTensor>,
    /// The shard files, in order.
    pub files: Vec<PathBuf>,
}

/// One kind of weight file a model directory holds: how its parts are named and read.
pub struct PartFormat {
    /// The index naming the shards (`model.safetensors.index.json`).
    pub index_name: &'static str,
    /// Part file names start with this (`model`)...
    pub prefix: &'static str,
    /// ... and end with this (`.safetensors`).
    pub suffix: &'static str,
    /// Reads one mapped part into its tensors, in the converter's order within the file.
    pub parse: fn(&Path, &Arc<FileBytes>) -> Result<Vec<StTensor>, ConvertError>,
}

/// Safetensors parts: `model*.safetensors`, `model.safetensors.index.json`.
pub const SAFETENSORS: PartFormat = PartFormat {
    index_name: "model.safetensors.index.json",
    prefix: "model",
    suffix: ".safetensors",
    parse: parse_file,
};

/// Whether `dir` holds safetensors weights as the reference decides it (`index_tensors`):
/// a `model*.safetensors` file or `model.safetensors.index.json`. Then they are read, and
/// any PyTorch `.bin` files beside them are ignored.
pub fn is_safetensors(dir: &Path) -> Result<bool, ConvertError> {
    Ok(dir.join(SAFETENSORS.index_name).is_file() || !list_parts(dir, &SAFETENSORS)?.is_empty())
}

/// Finds, maps and parses the shards of `dir`, checking them against the index if any.
pub fn index_dir(dir: &Path) -> Result<Shards, ConvertError> {
    index_parts(dir, &SAFETENSORS)
}

/// One safetensors file beside the model's parts (a sentence-transformers module's
/// weights), mapped and parsed; its tensors sorted by name.
pub fn read_single(path: &Path) -> Result<Vec<StTensor>, ConvertError> {
    let bytes = map_part(path, None)?;
    parse_file(path, &bytes)
}

/// Finds, maps and parses the parts of `dir` in `format`, checking them against its index
/// if any: the parts the index names (sorted, unique), else the files named like parts,
/// sorted.
pub fn index_parts(dir: &Path, format: &PartFormat) -> Result<Shards, ConvertError> {
    let index_path = dir.join(format.index_name);
    let listed = list_parts(dir, format)?;
    let weight_map = read_weight_map(&index_path)?;
    let parts = match &weight_map {
        Some(wm) => shard_names(wm),
        None => listed,
    };
    if parts.is_empty() {
        return Err(ConvertError::NoWeights {
            dir: dir.to_path_buf(),
        });
    }
    let index = weight_map.as_ref().map(|_| index_path.as_path());
    let shards = map_parts(dir, format, &parts, index)?;
    if let Some(wm) = &weight_map {
        check_weight_map(&index_path, wm, &shards.tensors)?;
    }
    Ok(shards)
}

/// The index's `weight_map` (tensor name → shard file name), when the index exists: an
/// object of plain file names, not empty.
fn read_weight_map(index_path: &Path) -> Result<Option<HashMap<String, String>>, ConvertError> {
    if !index_path.is_file() {
        return Ok(None);
    }
    let text = ggufkit::mapped::read_input_to_string(index_path)
        .map_err(|e| ConvertError::io(index_path, e))?;
    let json: Json =
        serde_json::from_str(&text).map_err(|e| ConvertError::bad_json(index_path, &e))?;
    let map = json
        .get("weight_map")
        .and_then(Json::as_object)
        .ok_or_else(|| {
            ConvertError::missing_key(
                index_path,
                "weight_map",
                "the index's object naming each tensor's shard",
            )
        })?;
    let mut wm = HashMap::with_capacity(map.len());
    for (k, v) in map {
        let file = v.as_str().ok_or_else(|| {
            shard_error(
                index_path,
                ShardProblem::EntryNotAFileName { tensor: k.clone() },
            )
        })?;
        if !is_plain_file_name(file) {
            return Err(shard_error(
                index_path,
                ShardProblem::EntryOutsideDirectory {
                    tensor: k.clone(),
                    file: file.to_string(),
                },
            ));
        }
        wm.insert(k.clone(), file.to_string());
    }
    if wm.is_empty() {
        return Err(shard_error(index_path, ShardProblem::EmptyWeightMap));
    }
    Ok(Some(wm))
}

/// A refusal of the shards, about the file at `path`.
fn shard_error(path: &Path, problem: ShardProblem) -> ConvertError {
    ConvertError::Shards {
        path: path.to_path_buf(),
        problem,
    }
}

/// The shard files a weight map names, sorted and unique.
fn shard_names(wm: &HashMap<String, String>) -> Vec<String> {
    wm.values()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Maps and parses each part in order; a part that is not a regular file, or a tensor
/// name a part shares with an earlier one, is refused. `index`: the index that named the
/// parts, if one did (for messages).
fn map_parts(
    dir: &Path,
    format: &PartFormat,
    parts: &[String],
    index: Option<&Path>,
) -> Result<Shards, ConvertError> {
    let mut tensors = Vec::new();
    let mut files = Vec::new();
    // Tensor name → index of the shard that holds it: a name in two shards would give the
    // output two tensors of that name.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let remote = crate::remote::dirs::lookup(dir);
    for part in parts {
        let path = dir.join(part);
        let remote_part = remote.as_ref().filter(|r| r.files.contains(part));
        let bytes = match remote_part.filter(|_| !path.exists()) {
            Some(r) => r.open(part)?,
            None => map_part(&path, index)?,
        };
        let mut t = (format.parse)(&path, &bytes)?;
        for tensor in &t {
            if let Some(&earlier) = seen.get(tensor.name.as_str()) {
                return Err(shard_error(
                    &path,
                    ShardProblem::DuplicateTensor {
                        tensor: tensor.name.clone(),
                        earlier: parts[earlier].clone(),
                    },
                ));
            }
        }
        for tensor in &t {
            seen.insert(tensor.name.clone(), files.len());
        }
        tensors.append(&mut t);
        files.push(path);
    }
    Ok(Shards { tensors, files })
}

/// Maps a local part; one that is not a regular file is refused, saying what is there
/// instead (a directory or a FIFO is not "missing") and which index named it.
fn map_part(path: &Path, index: Option<&Path>) -> Result<Arc<FileBytes>, ConvertError> {
    if !path.is_file() {
        let problem = ShardProblem::NotAFile {
            index: index.map(|i| i.file_name().unwrap_or_default().to_string_lossy().into()),
            found: std::fs::metadata(path).ok().map(|m| file_kind(&m)),
        };
        return Err(shard_error(path, problem));
    }
    FileBytes::map(path).map_err(|e| ConvertError::io(path, e))
}

/// The tensors of the parts are exactly the ones the weight map names: a tensor the map
/// does not name, or one it names that no part holds, is refused.
fn check_weight_map(
    index_path: &Path,
    wm: &HashMap<String, String>,
    tensors: &[StTensor],
) -> Result<(), ConvertError> {
    let present: BTreeSet<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    let mut extra: Vec<&str> = present
        .iter()
        .copied()
        .filter(|n| !wm.contains_key(*n))
        .collect();
    let mut missing: Vec<&str> = wm
        .keys()
        .map(String::as_str)
        .filter(|k| !present.contains(k))
        .collect();
    missing.sort_unstable();
    extra.sort_unstable();
    if !extra.is_empty() {
        let problem = ShardProblem::NotInWeightMap {
            extra: abbreviate(&extra),
            missing: (!missing.is_empty()).then(|| abbreviate(&missing)),
        };
        return Err(shard_error(index_path, problem));
    }
    if !missing.is_empty() {
        let problem = ShardProblem::MissingTensors {
            files: missing.iter().map(|k| wm[*k].clone()).collect(),
            tensors: abbreviate(&missing),
        };
        return Err(shard_error(index_path, problem));
    }
    Ok(())
}

/// Whether an index's shard name is one plain file name: not empty, `.`, `..`, absolute or
/// with a directory part (either separator), so it cannot leave the model directory.
fn is_plain_file_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(n)), None) if n == name
    ) && !name.contains('\\')
}

/// The part files of `format` in `dir` (`model*.safetensors`), sorted (symlinks followed,
/// as in HF cache snapshots).
fn list_parts(dir: &Path, format: &PartFormat) -> Result<Vec<String>, ConvertError> {
    let rd = std::fs::read_dir(dir).map_err(|e| ConvertError::io(dir, e))?;
    let mut parts = Vec::new();
    for e in rd {
        let e = e.map_err(|e| ConvertError::io(dir, e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(format.prefix) && name.ends_with(format.suffix) {
            parts.push(name);
        }
    }
    // A snapshot directory whose weights are remote (`--remote`) lists them too.
    if let Some(r) = crate::remote::dirs::lookup(dir) {
        parts.extend(
            r.files
                .iter()
                .filter(|n| n.starts_with(format.prefix) && n.ends_with(format.suffix))
                .cloned(),
        );
    }
    parts.sort();
    parts.dedup();
    Ok(parts)
}

fn abbreviate(names: &[&str]) -> String {
    const SHOW: usize = 8;
    let mut s = names
        .iter()
        .take(SHOW)
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOW {
        s.push_str(&format!(" and {} more", names.len() - SHOW));
    }
    s
}

/// What kind of file system object `m` describes, for messages.
pub(crate) fn file_kind(m: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if m.is_dir() {
        "a directory"
    } else if m.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parse_file` on a file of these bytes: its problem and offset, or the tensor count.
    fn parse(bytes: Vec<u8>) -> Result<usize, (Option<u64>, SafetensorsProblem)> {
        match parse_file(Path::new("m.safetensors"), &FileBytes::from_vec(bytes)) {
            Ok(t) => Ok(t.len()),
            Err(ConvertError::Safetensors {
                offset, problem, ..
            }) => Err((offset, problem)),
            Err(e) => panic!("not a safetensors problem: {e}"),
        }
    }

    /// A file whose header is `header` (JSON) and whose data area is `data` bytes.
    fn file(header: &str, data: usize) -> Vec<u8> {
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(header.as_bytes());
        b.resize(b.len() + data, 0);
        b
    }

    #[test]
    fn each_fault_is_its_own_problem() {
        use SafetensorsProblem as P;
        assert_eq!(parse(vec![1, 2]), Err((None, P::TooShort { len: 2 })));
        let e = parse(u64::MAX.to_le_bytes().to_vec()).unwrap_err();
        assert!(matches!(e, (Some(0), P::HeaderTooLarge { .. })), "{e:?}");
        let e = parse(100u64.to_le_bytes().to_vec()).unwrap_err();
        let truncated = P::HeaderTruncated {
            declared: 100,
            available: 0,
        };
        assert_eq!(e, (Some(0), truncated));
        let e = parse(file("[]", 0)).unwrap_err();
        assert!(matches!(e, (Some(8), P::InvalidHeader(_))), "{e:?}");
        let t = |dtype: &str, shape: &str, a: u64, b: u64| {
            format!(
                r#"{{"t": {{"dtype": "{dtype}", "shape": {shape}, "data_offsets": [{a}, {b}]}}}}"#
            )
        };
        assert_eq!(parse(file(&t("F32", "[2]", 0, 8), 8)), Ok(1));
        let e = parse(file(&t("Q9", "[2]", 0, 8), 8)).unwrap_err();
        assert!(matches!(e, (None, P::UnsupportedDtype { .. })), "{e:?}");
        let e = parse(file(&t("F32", "[2]", 8, 0), 8)).unwrap_err();
        assert!(matches!(e, (None, P::ReversedOffsets { .. })), "{e:?}");
        let e = parse(file(&t("F32", "[2]", 0, 8), 4)).unwrap_err();
        assert!(
            matches!(e, (None, P::OutOfBounds { data_len: 4, .. })),
            "{e:?}"
        );
        let e = parse(file(&t("F32", "[3]", 0, 8), 8)).unwrap_err();
        assert!(
            matches!(
                e,
                (
                    None,
                    P::SizeMismatch {
                        needed: 12,
                        given: 8,
                        ..
                    }
                )
            ),
            "{e:?}"
        );
        let header = t("F32", "[2]", 4, 12);
        let e = parse(file(&header, 12)).unwrap_err();
        let at = 8 + header.len() as u64;
        assert!(
            matches!(e, (Some(o), P::Gap { .. }) if o == at + 4),
            "{e:?}"
        );
        let e = parse(file(&t("F32", "[2]", 0, 8), 10)).unwrap_err();
        assert!(matches!(e, (_, P::TrailingBytes { extra: 2, .. })), "{e:?}");
    }
}
