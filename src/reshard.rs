//! llama-gguf-split's two operations on existing GGUF files: splitting one file into shards
//! and merging the shards of a split model back into one file, with the shard boundaries,
//! metadata and layout that tool gives them. Both make plans for the output engine
//! ([`crate::pipeline`]): tensor data is copied from the mapped inputs, never decoded, and
//! the shards are written one after another.
//!
//! The tool's rules, as llama.cpp 0c1e570 applies them:
//!
//! * **Boundaries.** By tensor count (the default, 128 per shard): a new shard starts at every
//!   tensor whose index is a non-zero multiple of the limit. By size (`--split-max-size`): a
//!   new shard starts when the tensors of the current one, each counted padded to 32 bytes,
//!   would exceed the limit with the next one (the header does not count). A shard left
//!   without tensors by that rule (a first tensor larger than the limit) is an error.
//!   `--no-tensor-first-split` puts no tensor in the first shard.
//! * **Metadata.** The first shard has every key of the input, the others none; each then gets
//!   `split.no` (u16), `split.tensors.count` (i32) and `split.count` (u16), in that order, at
//!   the end (an input's own `split.*` keys move there).
//! * **Merge.** The first shard's metadata with `split.count` set to 0 and moved to the end
//!   (`split.no` and `split.tensors.count` stay), every shard's tensors in file order.
//! * **Layout.** Every output is laid out with 32-byte alignment whatever `general.alignment`
//!   says; an input whose `general.alignment` is not 32 is refused here instead of written
//!   into a file whose header contradicts its layout.

use std::path::{Path, PathBuf};

use crate::gguf::{align_up, keys, GgufFile, Value, DEFAULT_ALIGNMENT};
use crate::ir::Model;
use crate::split::{open_shards, split_path, SplitError};

/// Where a split puts shard boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// At most this many tensors per shard (`--split-max-tensors`).
    Tensors(u64),
    /// At most this many bytes of (padded) tensor data per shard (`--split-max-size`).
    Bytes(u64),
}

/// How to split a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitRules {
    /// The shard limit.
    pub limit: Limit,
    /// The first shard holds only metadata.
    pub no_tensor_first_split: bool,
}

impl Default for SplitRules {
    /// llama-gguf-split's defaults: 128 tensors per shard.
    fn default() -> Self {
        SplitRules {
            limit: Limit::Tensors(128),
            no_tensor_first_split: false,
        }
    }
}

/// Why a split or merge cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ReshardError {
    /// `--split-max-tensors 0`.
    #[error("the tensor limit must be at least 1")]
    ZeroTensors,
    /// A `--split-max-size` that is not `N` followed by `M` or `G`.
    #[error("size '{0}': give a positive whole number followed by M (megabytes) or G (gigabytes), e.g. 500M or 2G")]
    BadSize(String),
    /// A shard would hold no tensor.
    #[error("shard {shard} would hold no tensor: tensor '{tensor}' ({bytes} bytes padded) alone exceeds the size limit")]
    EmptyShard {
        /// The shard (counted from 1).
        shard: usize,
        /// The tensor that does not fit.
        tensor: String,
        /// Its padded size.
        bytes: u64,
    },
    /// More shards than `split.count` (u16) can number.
    #[error("{0} shards: a split model has at most 65535")]
    TooManyShards(usize),
    /// More tensors than `split.tensors.count` (i32) can count.
    #[error("{0} tensors: split.tensors.count holds at most 2147483647")]
    TooManyTensors(usize),
    /// The input's `general.alignment` is not 32.
    #[error("{path}: general.alignment is {alignment}; llama-gguf-split lays every file out with 32-byte alignment, so its output would contradict its own header (rewrite the file without general.alignment first)")]
    Alignment {
        /// The file.
        path: PathBuf,
        /// Its alignment.
        alignment: u32,
    },
    /// A merge input that is not the first shard of a split model.
    #[error("{path}: {problem}")]
    NotFirstShard {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The shards could not be read or do not form one model.
    #[error(transparent)]
    Split(#[from] SplitError),
}

/// `--split-max-size`'s value: a positive whole number followed by `M` (10^6 bytes) or `G`
/// (10^9 bytes), as llama-gguf-split reads it.
pub fn parse_max_size(s: &str) -> Result<u64, ReshardError> {
    let bad = || ReshardError::BadSize(s.to_string());
    let (num, mult) = match s.as_bytes().last() {
        Some(b'M') => (&s[..s.len() - 1], 1_000_000u64),
        Some(b'G') => (&s[..s.len() - 1], 1_000_000_000u64),
        _ => return Err(bad()),
    };
    let n: u64 = num.parse().map_err(|_| bad())?;
    if n == 0 || n > i32::MAX as u64 {
        return Err(bad());
    }
    Ok(n * mult)
}

/// The shard of every tensor (`sizes` are their data sizes, `names` name them in errors) and
/// the number of shards.
pub fn assign(
    sizes: &[u64],
    names: &[&str],
    rules: &SplitRules,
) -> Result<(Vec<usize>, usize), ReshardError> {
    if rules.limit == Limit::Tensors(0) {
        return Err(ReshardError::ZeroTensors);
    }
    let mut shard = usize::from(rules.no_tensor_first_split);
    let mut in_shard = 0usize;
    let mut bytes = 0u64;
    let mut shard_of = Vec::with_capacity(sizes.len());
    for (i, &size) in sizes.iter().enumerate() {
        let padded = align_up(size, DEFAULT_ALIGNMENT as u64).unwrap_or(u64::MAX);
        let next = bytes.saturating_add(padded);
        let new_shard = match rules.limit {
            Limit::Bytes(max) => next > max,
            Limit::Tensors(n) => i > 0 && (i as u64).is_multiple_of(n),
        };
        if new_shard {
            if in_shard == 0 {
                return Err(ReshardError::EmptyShard {
                    shard: shard + 1,
                    tensor: names.get(i).copied().unwrap_or("?").to_string(),
                    bytes: padded,
                });
            }
            shard += 1;
            in_shard = 0;
            bytes = padded;
        } else {
            bytes = next;
        }
        in_shard += 1;
        shard_of.push(shard);
    }
    Ok((shard_of, shard + 1))
}

/// Refuses a file whose `general.alignment` is not 32 (see the module documentation).
fn check_alignment(file: &GgufFile, path: &Path) -> Result<(), ReshardError> {
    match file.metadata.get(keys::general::ALIGNMENT) {
        None | Some(Value::U32(32)) => Ok(()),
        Some(_) => Err(ReshardError::Alignment {
            path: path.to_path_buf(),
            alignment: file.alignment,
        }),
    }
}

/// `model` split by `rules` into the shards llama-gguf-split writes, in order.
pub fn split_model(model: &Model, rules: &SplitRules) -> Result<Vec<Model>, ReshardError> {
    let sizes: Vec<u64> = model
        .tensors
        .iter()
        .map(|t| crate::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0))
        .collect();
    let names: Vec<&str> = model.tensors.iter().map(|t| t.name.as_str()).collect();
    let (shard_of, n) = assign(&sizes, &names, rules)?;
    let count = u16::try_from(n).map_err(|_| ReshardError::TooManyShards(n))?;
    let total = i32::try_from(model.tensors.len())
        .map_err(|_| ReshardError::TooManyTensors(model.tensors.len()))?;
    let mut shards: Vec<Model> = (0..n).map(|_| Model::default()).collect();
    shards[0].metadata = model.metadata.clone();
    for (t, &s) in model.tensors.iter().zip(&shard_of) {
        shards[s].tensors.push(t.clone());
    }
    for (i, m) in shards.iter_mut().enumerate() {
        m.metadata.set_last(keys::split::NO, Value::U16(i as u16));
        m.metadata.remove(keys::split::COUNT);
        m.metadata
            .set_last(keys::split::TENSORS_COUNT, Value::I32(total));
        m.metadata.set_last(keys::split::COUNT, Value::U16(count));
    }
    Ok(shards)
}

/// The shards of `file` (read from `path`) as llama-gguf-split writes them for the output
/// prefix `prefix` (`<prefix>-00001-of-0000N.gguf`, …).
pub fn plan_split(
    file: &GgufFile,
    path: &Path,
    rules: &SplitRules,
    prefix: &str,
) -> Result<Vec<(PathBuf, Model)>, ReshardError> {
    check_alignment(file, path)?;
    let shards = split_model(&Model::from_gguf(file), rules)?;
    let n = shards.len();
    Ok(shards
        .into_iter()
        .enumerate()
        .map(|(i, m)| (split_path(prefix, i, n), m))
        .collect())
}

/// Opens the shards of the split model whose first shard is `first`, as llama-gguf-split's
/// merge finds them: the file must have `split.count` ≥ 1 and be named
/// `<prefix>-00001-of-<count>.gguf`; the others are `<prefix>-NNNNN-of-<count>.gguf`.
pub fn open_for_merge(first: &Path) -> Result<Vec<GgufFile>, ReshardError> {
    let not_first = |problem: String| ReshardError::NotFirstShard {
        path: first.to_path_buf(),
        problem,
    };
    let head = GgufFile::open(first).map_err(SplitError::from)?;
    let count = match head.metadata.get(keys::split::COUNT) {
        None => {
            return Err(not_first(
                "no split.count: not a shard of a split model".into(),
            ))
        }
        Some(v) => v.as_int().unwrap_or(-1),
    };
    if count < 1 {
        return Err(not_first(format!(
            "split.count is {count}: not a shard of a split model (a merged file has 0)"
        )));
    }
    let suffix = split_path("", 0, count as usize);
    if !first
        .to_string_lossy()
        .ends_with(&*suffix.to_string_lossy())
    {
        return Err(not_first(format!(
            "the first shard's name must end in {}",
            suffix.display()
        )));
    }
    drop(head);
    let shards = open_shards(first)?;
    check_alignment(&shards[0], first)?;
    Ok(shards)
}

/// The merged model llama-gguf-split writes for `shards` (see the module documentation).
pub fn merge_model(shards: &[GgufFile]) -> Result<Model, ReshardError> {
    let (mut model, _) = crate::split::merge_shards(shards)?;
    model.metadata.set_last(keys::split::COUNT, Value::U16(0));
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(limit: Limit, first: bool) -> SplitRules {
        SplitRules {
            limit,
            no_tensor_first_split: first,
        }
    }

    #[test]
    fn tensor_limit_starts_a_shard_at_every_multiple() {
        let sizes = [1u64; 21];
        let names = [""; 21];
        let (s, n) = assign(&sizes, &names, &rules(Limit::Tensors(10), false)).unwrap();
        assert_eq!(n, 3);
        assert_eq!(s[9], 0);
        assert_eq!(s[10], 1);
        assert_eq!(s[20], 2);
        let (s, n) = assign(&sizes, &names, &rules(Limit::Tensors(10), true)).unwrap();
        assert_eq!((s[0], s[20], n), (1, 3, 4));
        assert!(matches!(
            assign(&sizes, &names, &rules(Limit::Tensors(0), false)),
            Err(ReshardError::ZeroTensors)
        ));
        // No tensors: one metadata-only shard.
        assert_eq!(
            assign(&[], &[], &rules(Limit::Tensors(10), false)).unwrap(),
            (vec![], 1)
        );
    }

    #[test]
    fn size_limit_counts_padded_tensors_and_refuses_empty_shards() {
        // 40 bytes count as 64.
        let sizes = [40u64, 40, 40, 200, 10];
        let names = ["a", "b", "c", "d", "e"];
        let (s, n) = assign(&sizes, &names, &rules(Limit::Bytes(128), false)).unwrap();
        assert_eq!(s, vec![0, 0, 1, 2, 3]);
        assert_eq!(n, 4);
        let e = assign(&[200], &["big"], &rules(Limit::Bytes(128), false)).unwrap_err();
        assert!(e.to_string().contains("'big'"), "{e}");
        let e = assign(&[200], &["big"], &rules(Limit::Bytes(128), true)).unwrap_err();
        assert!(
            matches!(e, ReshardError::EmptyShard { shard: 2, .. }),
            "{e}"
        );
    }

    #[test]
    fn max_size_is_decimal_megabytes_or_gigabytes() {
        assert_eq!(parse_max_size("500M").unwrap(), 500_000_000);
        assert_eq!(parse_max_size("2G").unwrap(), 2_000_000_000);
        for bad in ["", "M", "0M", "-1G", "1.5G", "2g", "100", "12K", "1GG"] {
            assert!(parse_max_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn split_keys_go_last_in_llama_gguf_split_order() {
        let mut m = Model::default();
        m.metadata.set("general.architecture", "llama");
        m.metadata.set(keys::split::COUNT, Value::U16(0));
        m.metadata.set("general.name", "x");
        let shards = split_model(&m, &SplitRules::default()).unwrap();
        assert_eq!(shards.len(), 1);
        let keys: Vec<&str> = shards[0].metadata.iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [
                "general.architecture",
                "general.name",
                "split.no",
                "split.tensors.count",
                "split.count"
            ]
        );
        assert_eq!(
            shards[0].metadata.get(keys::split::COUNT),
            Some(&Value::U16(1))
        );
    }
}
