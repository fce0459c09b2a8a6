//! Split models (gguf-split / `--split-max-*` / `--keep-split`): shard naming, loading every
//! shard of a model, and laying a model out over shards.

use crate::gguf::keys;
use std::path::{Path, PathBuf};

use crate::gguf::{GgufError, GgufFile, Value};
use crate::ir::Model;

/// `<prefix>-NNNNN-of-MMMMM.gguf` (`llama_split_path`; `index` counts from 0).
pub fn split_path(prefix: &str, index: usize, count: usize) -> PathBuf {
    PathBuf::from(format!("{prefix}-{:05}-of-{count:05}.gguf", index + 1))
}

/// Why a split model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    /// A shard could not be read or parsed.
    #[error(transparent)]
    Gguf(#[from] GgufError),
    /// The shards do not form one model.
    #[error("{path}: {problem}")]
    Inconsistent {
        /// The shard at fault.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A big-endian file: llama.cpp reads those only on big-endian hosts, and its tools
    /// stop on them here; its data cannot be read as the little-endian data it claims to be.
    #[error("{0}: a big-endian GGUF file (llama.cpp reads it only on a big-endian host): not supported as an input")]
    BigEndian(PathBuf),
}

/// A split key as an unsigned integer. llama.cpp writes `split.no` / `split.count` as u16 and
/// `split.tensors.count` as i32, and its loader insists on those types; here any integer type
/// is read by value (the number is unambiguous), while a negative number or a non-integer is
/// an error naming the key and the type found.
fn split_key(f: &GgufFile, key: &str, path: &Path) -> Result<Option<u64>, SplitError> {
    match f.metadata.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_int()
            .filter(|i| *i >= 0)
            .map(|i| Some(i as u64))
            .ok_or_else(|| SplitError::Inconsistent {
                path: path.to_path_buf(),
                problem: format!("{key} is not a non-negative integer ({})", v.value_type()),
            }),
    }
}

/// Refuses a big-endian `file` (read from `path`) as an input to split, merge or quantize.
pub fn refuse_big_endian(file: &GgufFile, path: &Path) -> Result<(), SplitError> {
    match file.byte_order {
        crate::gguf::ByteOrder::Big => Err(SplitError::BigEndian(path.to_path_buf())),
        crate::gguf::ByteOrder::Little => Ok(()),
    }
}

/// Opens `path` and, when it is the first shard of a split model, every other shard
/// (named as llama.cpp names them). Returns the shards in order.
pub fn open_shards(path: &Path) -> Result<Vec<GgufFile>, SplitError> {
    open_shards_with(path, &GgufFile::open)
}

/// [`open_shards`] with each shard opened by `open` (a local file mapped, a URL read on
/// demand: the shards' names are made from the first one's by text, so a URL names its
/// siblings as a path does).
pub fn open_shards_with(
    path: &Path,
    open: &dyn Fn(&Path) -> Result<GgufFile, GgufError>,
) -> Result<Vec<GgufFile>, SplitError> {
    let first = open(path)?;
    refuse_big_endian(&first, path)?;
    let count = split_key(&first, keys::split::COUNT, path)?.unwrap_or(1);
    if count <= 1 {
        return Ok(vec![first]);
    }
    let bad = |p: &Path, problem: String| SplitError::Inconsistent {
        path: p.to_path_buf(),
        problem,
    };
    let no = split_key(&first, keys::split::NO, path)?.unwrap_or(0);
    if no != 0 {
        return Err(bad(
            path,
            format!("is shard {} of {count}: open the first shard", no + 1),
        ));
    }
    let name = path.to_string_lossy();
    let suffix = format!("-{:05}-of-{count:05}.gguf", 1);
    let prefix = name
        .strip_suffix(&suffix)
        .ok_or_else(|| bad(path, format!("split file names must end in {suffix}")))?
        .to_string();
    let total = split_key(&first, keys::split::TENSORS_COUNT, path)?;
    let mut shards = vec![first];
    for i in 1..count as usize {
        let p = split_path(&prefix, i, count as usize);
        let f = open(&p)?;
        refuse_big_endian(&f, &p)?;
        let (n, c) = (
            split_key(&f, keys::split::NO, &p)?,
            split_key(&f, keys::split::COUNT, &p)?,
        );
        if n != Some(i as u64) || c != Some(count) {
            return Err(bad(
                &p,
                format!("has split.no {n:?} / split.count {c:?}, expected {i} / {count}"),
            ));
        }
        shards.push(f);
    }
    // As llama.cpp's loader: a tensor name in two shards is an error, whoever reads them.
    let mut seen = std::collections::HashMap::new();
    for (i, s) in shards.iter().enumerate() {
        for t in &s.tensors {
            if let Some(first) = seen.insert(t.name.as_str(), i) {
                return Err(bad(
                    &split_path(&prefix, i, count as usize),
                    format!(
                        "tensor '{}' is duplicated: shard {} holds it too",
                        t.name,
                        first + 1
                    ),
                ));
            }
        }
    }
    let n_tensors: usize = shards.iter().map(|s| s.tensors.len()).sum();
    if let Some(t) = total {
        if t != n_tensors as u64 {
            return Err(bad(
                path,
                format!("split.tensors.count is {t}, the shards hold {n_tensors} tensors"),
            ));
        }
    }
    Ok(shards)
}

/// One model from its shards: the first shard's metadata, every shard's tensors. Also
/// returns, per tensor, its (shard index, data offset), the order `--keep-split` uses.
pub fn merge_shards(shards: &[GgufFile]) -> Result<(Model, Vec<(usize, u64)>), SplitError> {
    let mut model = Model::from_gguf(&shards[0]);
    let mut place: Vec<(usize, u64)> = shards[0].tensors.iter().map(|t| (0, t.offset)).collect();
    let mut seen: std::collections::HashSet<String> =
        model.tensors.iter().map(|t| t.name.clone()).collect();
    for (i, s) in shards.iter().enumerate().skip(1) {
        let m = Model::from_gguf(s);
        for (t, info) in m.tensors.into_iter().zip(&s.tensors) {
            if !seen.insert(t.name.clone()) {
                return Err(SplitError::Inconsistent {
                    path: s.bytes().path().map(Path::to_path_buf).unwrap_or_default(),
                    problem: format!("tensor '{}' also appears in an earlier shard", t.name),
                });
            }
            place.push((i, info.offset));
            model.tensors.push(t);
        }
    }
    Ok((model, place))
}

/// Lays `model` out over shards as llama-quantize's `--keep-split` does: `shard_of[i]` is the
/// shard of tensor `i`. With more than one shard, the first keeps all metadata, the others
/// none, and every shard gets `split.no`, `split.count` (u16) and `split.tensors.count` (i32).
pub fn distribute(model: &Model, shard_of: &[usize]) -> Vec<Model> {
    let n = shard_of.iter().copied().max().map_or(1, |m| m + 1);
    let mut out: Vec<Model> = (0..n).map(|_| Model::default()).collect();
    out[0].metadata = model.metadata.clone();
    for (t, &s) in model.tensors.iter().zip(shard_of) {
        out[s].tensors.push(t.clone());
    }
    if n > 1 {
        for (i, m) in out.iter_mut().enumerate() {
            m.metadata.set_last(keys::split::NO, Value::U16(i as u16));
            m.metadata
                .set_last(keys::split::COUNT, Value::U16(n as u16));
            m.metadata.set_last(
                keys::split::TENSORS_COUNT,
                Value::I32(model.tensors.len() as i32),
            );
        }
    }
    out
}
