//! Legacy (Meta `.pth`) tensor names → GGUF names: the `llama-pth` entries of gguf-py's
//! llama tensor map, with `.weight` / `.bias` stripped and re-appended as its
//! `get_name(…, try_suffixes=(".weight", ".bias"))` does. Block numbers must be below
//! `n_layer` (the map is built for `n_layer` blocks).
//!
//! The converter would also accept the map's names from other checkpoints (HF
//! `model.layers.N.self_attn.q_proj`, …); no legacy llama file contains them, and their
//! layouts would need other handling, so they are refused here.

/// Whole-model names.
const GLOBAL: [(&str, &str); 4] = [
    ("tok_embeddings", "token_embd"),
    ("norm", "output_norm"),
    ("output", "output"),
    ("rope.freqs", "rope_freqs"),
];

/// Per-block names, after `layers.N.`.
const BLOCK: [(&str, &str); 10] = [
    ("attention_norm", "attn_norm"),
    ("attention.wq", "attn_q"),
    ("attention.wk", "attn_k"),
    ("attention.wv", "attn_v"),
    ("attention.wo", "attn_output"),
    ("attention.inner_attention.rope.freqs", "attn_rot_embd"),
    ("ffn_norm", "ffn_norm"),
    ("feed_forward.w1", "ffn_gate"),
    ("feed_forward.w2", "ffn_down"),
    ("feed_forward.w3", "ffn_up"),
];

fn base_name(base: &str, n_layer: u32) -> Option<String> {
    if let Some((_, g)) = GLOBAL.iter().find(|(l, _)| *l == base) {
        return Some((*g).to_string());
    }
    let rest = base.strip_prefix("layers.")?;
    let (num, tail) = rest.split_once('.')?;
    // The map holds the decimal spelling of each block number only.
    let bid: u32 = num.parse().ok().filter(|_| !num.starts_with('+'))?;
    if bid.to_string() != num || bid >= n_layer {
        return None;
    }
    let (_, g) = BLOCK.iter().find(|(l, _)| *l == tail)?;
    Some(format!("blk.{bid}.{g}"))
}

/// The GGUF name of a legacy tensor, `None` when the llama map has none.
pub fn gguf_name(legacy: &str, n_layer: u32) -> Option<String> {
    if let Some(n) = base_name(legacy, n_layer) {
        return Some(n);
    }
    for suffix in [".weight", ".bias"] {
        if let Some(base) = legacy.strip_suffix(suffix) {
            if let Some(n) = base_name(base, n_layer) {
                return Some(n + suffix);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::gguf_name;

    #[test]
    fn llama_names() {
        let m = |n: &str| gguf_name(n, 2);
        assert_eq!(
            m("tok_embeddings.weight").as_deref(),
            Some("token_embd.weight")
        );
        assert_eq!(m("norm.weight").as_deref(), Some("output_norm.weight"));
        assert_eq!(m("output.weight").as_deref(), Some("output.weight"));
        assert_eq!(
            m("layers.1.attention.wk.weight").as_deref(),
            Some("blk.1.attn_k.weight")
        );
        assert_eq!(
            m("layers.0.feed_forward.w1.weight").as_deref(),
            Some("blk.0.ffn_gate.weight")
        );
        assert_eq!(
            m("layers.0.feed_forward.w2.weight").as_deref(),
            Some("blk.0.ffn_down.weight")
        );
        assert_eq!(
            m("layers.0.feed_forward.w3.weight").as_deref(),
            Some("blk.0.ffn_up.weight")
        );
        assert_eq!(
            m("layers.0.attention_norm.weight").as_deref(),
            Some("blk.0.attn_norm.weight")
        );
        assert_eq!(
            m("layers.1.ffn_norm.bias").as_deref(),
            Some("blk.1.ffn_norm.bias")
        );
        assert_eq!(m("rope.freqs").as_deref(), Some("rope_freqs"));
        assert_eq!(m("layers.2.attention.wq.weight"), None, "block >= n_layer");
        assert_eq!(m("layers.01.attention.wq.weight"), None);
        assert_eq!(m("layers.+1.attention.wq.weight"), None);
        assert_eq!(m("layers.0.attention.wq.weight.weight"), None);
        assert_eq!(m("model.embed_tokens.weight"), None);
        assert_eq!(m(""), None);
    }
}
