//! `--tensor-type PATTERN=TYPE` overrides and `--tensor-type-file`, collected with bounded
//! memory.
//!
//! llama-quantize compiles every pattern once and the first pattern that matches a tensor
//! name wins, so a later repeat of a pattern can never apply: repeats are dropped before they
//! are compiled. The file is read token by token (whitespace-separated, as llama-quantize's
//! `>>` extraction does), never held whole, and at most [`MAX_TENSOR_TYPE_PATTERNS`]
//! distinct patterns are compiled: each compiled regex costs kilobytes, so a 20 MB file of
//! tiny patterns would otherwise cost a gigabyte. Large patterns are bounded by their sum:
//! they all share one compile budget ([`crate::patterns`]).

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::{OverrideError, TensorTypeOverride};

/// Most distinct override patterns accepted (a per-tensor list for a 1,000-layer model with
/// a dozen tensors per layer fits).
pub const MAX_TENSOR_TYPE_PATTERNS: usize = 16_384;

/// Longest single `PATTERN=TYPE` item accepted, in bytes.
pub const MAX_TENSOR_TYPE_ITEM: usize = 4096;

/// Why a `--tensor-type` item or a `--tensor-type-file` is refused.
#[derive(Debug, thiserror::Error)]
pub enum TensorTypeError {
    /// An item is refused; `at` says where it came from (`FILE: item N`), if not the
    /// command line.
    #[error("{}{problem}", .at.as_ref().map(|a| format!("{a}: ")).unwrap_or_default())]
    Item {
        /// Where the item came from.
        at: Option<String>,
        /// Why it is refused.
        problem: ItemProblem,
    },
    /// An item of a file is longer than [`MAX_TENSOR_TYPE_ITEM`].
    #[error("{file}: item {item} is longer than {MAX_TENSOR_TYPE_ITEM} bytes")]
    FileItemTooLong {
        /// The file.
        file: String,
        /// The item's number (from 1).
        item: u64,
    },
    /// An item of a file is not UTF-8.
    #[error("{file}: item {item} is not UTF-8")]
    NotUtf8 {
        /// The file.
        file: String,
        /// The item's number (from 1).
        item: u64,
    },
    /// The file cannot be opened.
    #[error("cannot open {}: {source}", .path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: io::Error,
    },
    /// The file cannot be read.
    #[error("cannot read {file}: {source}")]
    Read {
        /// The file.
        file: String,
        /// The system's reason.
        source: io::Error,
    },
}

/// Why one `PATTERN=TYPE` item is refused.
#[derive(Debug, thiserror::Error)]
pub enum ItemProblem {
    /// Longer than [`MAX_TENSOR_TYPE_ITEM`] bytes.
    #[error("tensor type item of {0} bytes (more than {MAX_TENSOR_TYPE_ITEM})")]
    TooLong(usize),
    /// One distinct pattern more than [`MAX_TENSOR_TYPE_PATTERNS`].
    #[error("more than {MAX_TENSOR_TYPE_PATTERNS} distinct tensor type patterns")]
    TooManyPatterns,
    /// The item itself is malformed.
    #[error(transparent)]
    Override(#[from] OverrideError),
}

/// Collects overrides in order, dropping repeated patterns (the first one wins anyway); all
/// of them are compiled under one memory budget ([`crate::patterns`]).
#[derive(Debug, Default)]
pub struct TensorTypeList {
    items: Vec<TensorTypeOverride>,
    seen: HashSet<String>,
    budget: crate::patterns::PatternBudget,
}

impl TensorTypeList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one `PATTERN=TYPE` item (`where_` names its origin in errors, empty for the
    /// command line).
    pub fn push(&mut self, item: &str, where_: &str) -> Result<(), TensorTypeError> {
        self.push_item(item)
            .map_err(|problem| TensorTypeError::Item {
                at: (!where_.is_empty()).then(|| where_.to_string()),
                problem,
            })
    }

    fn push_item(&mut self, item: &str) -> Result<(), ItemProblem> {
        if item.len() > MAX_TENSOR_TYPE_ITEM {
            return Err(ItemProblem::TooLong(item.len()));
        }
        let pattern = item.split_once('=').map(|(p, _)| p.to_lowercase());
        if let Some(p) = &pattern {
            if self.seen.contains(p) {
                // Still a valid item: check the type as llama-quantize does.
                TensorTypeOverride::check_type(item)?;
                return Ok(());
            }
        }
        if self.items.len() >= MAX_TENSOR_TYPE_PATTERNS {
            return Err(ItemProblem::TooManyPatterns);
        }
        let o = TensorTypeOverride::parse_within(item, &mut self.budget)?;
        self.seen.insert(o.pattern.clone());
        self.items.push(o);
        Ok(())
    }

    /// Adds every whitespace-separated item of `r` (a `--tensor-type-file` called `name`).
    pub fn read(&mut self, r: impl Read, name: &str) -> Result<(), TensorTypeError> {
        let mut r = BufReader::new(r);
        let mut item: Vec<u8> = Vec::new();
        let mut n = 0u64;
        loop {
            let buf = r.fill_buf().map_err(|source| TensorTypeError::Read {
                file: name.to_string(),
                source,
            })?;
            if buf.is_empty() {
                break;
            }
            let len = buf.len();
            for &b in buf {
                if b.is_ascii_whitespace() {
                    if !item.is_empty() {
                        n += 1;
                        self.push_bytes(&item, name, n)?;
                        item.clear();
                    }
                } else {
                    if item.len() >= MAX_TENSOR_TYPE_ITEM {
                        return Err(TensorTypeError::FileItemTooLong {
                            file: name.to_string(),
                            item: n + 1,
                        });
                    }
                    item.push(b);
                }
            }
            r.consume(len);
        }
        if !item.is_empty() {
            self.push_bytes(&item, name, n + 1)?;
        }
        Ok(())
    }

    /// Adds every item of the file at `path`.
    pub fn read_file(&mut self, path: &Path) -> Result<(), TensorTypeError> {
        let f = crate::mapped::open_input(path).map_err(|source| TensorTypeError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        self.read(f, &path.display().to_string())
    }

    fn push_bytes(&mut self, item: &[u8], name: &str, n: u64) -> Result<(), TensorTypeError> {
        let s = std::str::from_utf8(item).map_err(|_| TensorTypeError::NotUtf8 {
            file: name.to_string(),
            item: n,
        })?;
        self.push(s, &format!("{name}: item {n}"))
    }

    /// The overrides, in order.
    pub fn into_vec(self) -> Vec<TensorTypeOverride> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_dropped_and_order_kept() {
        let mut l = TensorTypeList::new();
        l.read(
            "attn_v=q8_0\n ffn=q4_0 ATTN_V=q5_0\tffn=bad".as_bytes(),
            "f",
        )
        .unwrap_err();
        let mut l = TensorTypeList::new();
        l.read("attn_v=q8_0\n ffn=q4_0 ATTN_V=q5_0\t".as_bytes(), "f")
            .unwrap();
        let v = l.into_vec();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].pattern, "attn_v");
        assert_eq!(v[1].pattern, "ffn");
    }

    #[test]
    fn large_patterns_share_one_budget() {
        // 9 KB of text; each pattern alone is under the engine's limit.
        let text: String = (0..400)
            .map(|i| format!("p{i}[a-z]{{120000}}=q8_0\n"))
            .collect();
        let e = TensorTypeList::new()
            .read(text.as_bytes(), "f")
            .unwrap_err();
        assert!(e.to_string().contains("MiB compiled"), "{e}");
        assert!(e.to_string().starts_with("f: item "), "{e}");
    }

    #[test]
    fn too_many_patterns() {
        let mut text = String::new();
        for i in 0..=MAX_TENSOR_TYPE_PATTERNS {
            text.push_str(&format!("p{i}=q8_0\n"));
        }
        let e = TensorTypeList::new()
            .read(text.as_bytes(), "f")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "f: item {}: more than 16384 distinct tensor type patterns",
                MAX_TENSOR_TYPE_PATTERNS + 1
            )
        );
    }
}
