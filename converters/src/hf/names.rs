//! HF tensor name → GGUF tensor name (`TensorNameMap`).
//!
//! Each architecture declares a table of `(HF spelling, GGUF base name)` pairs, with
//! `{bid}` standing for the block number; the map expands it for every block. A lookup tries
//! the full name, then the name without a trailing `.weight` / `.bias`, re-appending that
//! suffix to the GGUF name. GGUF names map to themselves, so a name that is already mapped
//! (stacked experts, GPT-2's double mapping) passes through.

use std::collections::HashMap;

/// The expanded name table of one architecture and block count.
pub struct TensorMap {
    map: HashMap<String, String>,
}

impl TensorMap {
    /// Expands `table` for blocks `0..n_blocks`. Later entries win, as in gguf-py.
    pub fn new(tables: &[&[(&str, &str)]], n_blocks: u64) -> TensorMap {
        let mut map = HashMap::new();
        for (hf, gguf) in tables.iter().flat_map(|t| t.iter()) {
            if hf.contains("{bid}") || gguf.contains("{bid}") {
                for bid in 0..n_blocks {
                    let b = bid.to_string();
                    let g = gguf.replace("{bid}", &b);
                    map.insert(g.clone(), g.clone());
                    map.insert(hf.replace("{bid}", &b), g);
                }
            } else {
                map.insert(gguf.to_string(), gguf.to_string());
                map.insert(hf.to_string(), gguf.to_string());
            }
        }
        TensorMap { map }
    }

    /// The GGUF name of `name`, if the table knows it.
    pub fn get(&self, name: &str) -> Option<String> {
        if let Some(g) = self.map.get(name) {
            return Some(g.clone());
        }
        for suffix in [".weight", ".bias"] {
            if let Some(base) = name.strip_suffix(suffix) {
                if let Some(g) = self.map.get(base) {
                    return Some(format!("{g}{suffix}"));
                }
            }
        }
        None
    }
}

/// The block id of a tensor name: its first dot-separated part made only of digits.
pub fn block_id(name: &str) -> Option<u64> {
    name.split('.')
        .find(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_with_and_without_suffix() {
        let m = TensorMap::new(
            &[&[
                ("model.embed_tokens", "token_embd"),
                ("model.layers.{bid}.self_attn.q_proj", "blk.{bid}.attn_q"),
            ]],
            2,
        );
        assert_eq!(
            m.get("model.embed_tokens.weight").unwrap(),
            "token_embd.weight"
        );
        assert_eq!(
            m.get("model.layers.1.self_attn.q_proj.bias").unwrap(),
            "blk.1.attn_q.bias"
        );
        assert_eq!(m.get("blk.1.attn_q.weight").unwrap(), "blk.1.attn_q.weight");
        assert!(m.get("model.layers.2.self_attn.q_proj.weight").is_none());
        assert_eq!(block_id("model.layers.12.mlp"), Some(12));
        assert_eq!(block_id("lm_head.weight"), None);
    }
}
