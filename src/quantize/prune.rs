//! `--prune-layers`: dropping whole blocks and renumbering the rest, as llama-quantize does.
//!
//! The tensors are visited in llama.cpp's weights order (block number, then name). A tensor's
//! block is the first `blk.N.` in its name. Blocks in the prune list are dropped; blocks
//! below the smallest pruned one keep their number; every other block takes the next free
//! number, in visiting order. `{arch}.block_count` becomes the next free number at the end.
//! The planner still uses the input's own block count for the mixture rules (llama.cpp's
//! `n_layer_all`), and looks imatrix entries up under the tensors' original names.

use std::collections::BTreeMap;
use std::ops::Range;

/// A `--prune-layers` value or a tensor name that pruning cannot handle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PruneError {
    /// A list item that is not a non-negative `int`.
    #[error("invalid layer id '{0}'")]
    InvalidLayerId(String),
    /// A tensor whose block number C's `stoi` rejects.
    #[error("tensor '{tensor}': block number out of range")]
    BlockOutOfRange {
        /// The tensor.
        tensor: String,
    },
}

/// Parses llama-quantize's `--prune-layers` value: comma-separated layer numbers, each read
/// like C's `stoi` (leading blanks, an optional sign, digits; anything after them ignored),
/// none negative; returned sorted without duplicates.
pub fn parse_prune_layers(s: &str) -> Result<Vec<u32>, PruneError> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let id = stoi(item)
            .filter(|&v| v >= 0)
            .ok_or_else(|| PruneError::InvalidLayerId(item.to_string()))?;
        out.push(id as u32);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// C++'s `std::stoi`: `None` where it throws (no digits, or out of `int` range).
fn stoi(s: &str) -> Option<i64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    let mut v: i64 = 0;
    for b in digits[..end].bytes() {
        v = v.checked_mul(10)?.checked_add((b - b'0') as i64)?;
        if v > i32::MAX as i64 + 1 {
            return None;
        }
    }
    let v = if neg { -v } else { v };
    (i32::MIN as i64..=i32::MAX as i64)
        .contains(&v)
        .then_some(v)
}

/// The first `blk.N.` in `name` (the regex `blk\.(\d+)\.`, searched): the byte range of N.
fn block_digits(name: &str) -> Option<Range<usize>> {
    let b = name.as_bytes();
    let mut from = 0;
    while let Some(at) = name[from..].find("blk.") {
        let start = from + at + 4;
        let end = start
            + b[start..]
                .iter()
                .position(|c| !c.is_ascii_digit())
                .unwrap_or(b.len() - start);
        if end > start && b.get(end) == Some(&b'.') {
            return Some(start..end);
        }
        from += at + 1;
    }
    None
}

/// What happens to one tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renamed {
    /// Kept under this name (unchanged for tensors outside any block).
    Keep(String),
    /// Dropped with its block.
    Pruned,
}

/// The renumbering state of one pass over the tensors (llama.cpp's `remap_layer`).
#[derive(Debug, Default)]
pub struct LayerMap {
    /// Original block → new number (`None`: pruned).
    mapped: BTreeMap<u64, Option<u64>>,
    /// The next free block number.
    next_id: u64,
}

impl LayerMap {
    /// A fresh map.
    pub fn new() -> LayerMap {
        LayerMap::default()
    }

    /// Renames the tensor `name` under the sorted, non-empty prune list `prune`. Tensors
    /// must come in weights order. Errors on a block number C's `stoi` rejects.
    pub fn rename(&mut self, name: &str, prune: &[u32]) -> Result<Renamed, PruneError> {
        let Some(r) = block_digits(name) else {
            return Ok(Renamed::Keep(name.to_string()));
        };
        let blk = stoi(&name[r.clone()]).ok_or_else(|| PruneError::BlockOutOfRange {
            tensor: name.to_string(),
        })? as u64;
        let front = prune.first().map_or(u64::MAX, |&p| p as u64);
        let new = match self.mapped.get(&blk) {
            Some(&m) => m,
            None => {
                let m = if prune.contains(&(blk as u32)) && blk <= u32::MAX as u64 {
                    None
                } else if blk < front {
                    self.next_id = blk + 1;
                    Some(blk)
                } else {
                    self.next_id += 1;
                    Some(self.next_id - 1)
                };
                self.mapped.insert(blk, m);
                m
            }
        };
        Ok(match new {
            None => Renamed::Pruned,
            Some(id) => {
                let mut s = name.to_string();
                s.replace_range(r, &id.to_string());
                Renamed::Keep(s)
            }
        })
    }

    /// The block count after renumbering (llama.cpp's final `next_id`).
    pub fn block_count(&self) -> u64 {
        self.next_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_like_stoi() {
        assert_eq!(parse_prune_layers("3,1, 2,3").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_prune_layers("4abc").unwrap(), vec![4]);
        assert_eq!(parse_prune_layers("+5").unwrap(), vec![5]);
        assert!(parse_prune_layers("1,,2").is_err());
        assert!(parse_prune_layers("-1").is_err());
        assert!(parse_prune_layers("x").is_err());
        assert!(parse_prune_layers("99999999999").is_err());
        assert_eq!(
            parse_prune_layers("1,x").unwrap_err().to_string(),
            "invalid layer id 'x'"
        );
    }

    #[test]
    fn renumbers_after_the_first_pruned_block() {
        let prune = [1, 3];
        let mut m = LayerMap::new();
        let names = [
            "token_embd.weight",
            "blk.0.attn_q.weight",
            "blk.1.attn_q.weight",
            "blk.2.attn_q.weight",
            "blk.2.ffn_up.weight",
            "blk.3.attn_q.weight",
            "blk.4.attn_q.weight",
        ];
        let got: Vec<Renamed> = names.iter().map(|n| m.rename(n, &prune).unwrap()).collect();
        let keep = |s: &str| Renamed::Keep(s.to_string());
        assert_eq!(
            got,
            vec![
                keep("token_embd.weight"),
                keep("blk.0.attn_q.weight"),
                Renamed::Pruned,
                keep("blk.1.attn_q.weight"),
                keep("blk.1.ffn_up.weight"),
                Renamed::Pruned,
                keep("blk.2.attn_q.weight"),
            ]
        );
        assert_eq!(m.block_count(), 3);
    }

    #[test]
    fn block_is_found_anywhere_in_the_name() {
        assert_eq!(block_digits("v.blk.12.attn.weight"), Some(6..8));
        assert_eq!(block_digits("blk.x.blk.7.a"), Some(10..11));
        assert_eq!(block_digits("blk.3"), None);
        assert_eq!(block_digits("output.weight"), None);
    }
}
