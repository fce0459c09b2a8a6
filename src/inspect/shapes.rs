//! The tensor shapes llama.cpp's loader expects from a file's hyperparameters: a file whose
//! tensors contradict its hyperparameters is refused when llama.cpp creates its tensors
//! (`load_tensors`), after the hyperparameters themselves were accepted. llama-quantize does
//! not create tensors, so it quantizes such a file; `gguf-inspect verify` reports it and the
//! converters refuse to write one.
//!
//! Checked for every architecture:
//! * the blocks (of a file with `blk.N.` tensors): every `blk.N.` tensor has `N` below
//!   `{arch}.block_count` (llama.cpp stops at tensors it did not create) and every block below
//!   it has tensors (or, in a multi-token-prediction draft, every `nextn_predict_layers`
//!   block and no other);
//! * the token embedding: `token_embd.weight` is `embedding_length` wide.
//!
//! Checked for the architectures of [`LAYOUTS`] (the decoder layout most families share), as
//! their `load_arch_tensors` creates them with the layer-0 sizes: the attention projections,
//! the dense feed-forward, the experts and the shared experts.

use super::loadable::scalar_u64;
use crate::gguf::keys;
use crate::gguf::{ArrayValue, Metadata, Value};

/// How an architecture's attention and feed-forward tensors are sized.
struct Layout {
    /// The `general.architecture` values it describes.
    archs: &'static [&'static str],
    /// Rows of `attn_q` and columns of `attn_output`.
    query: Query,
    /// `ffn_up` holds this many feed-forward widths (2 when the gate is fused into it).
    up_widths: u64,
    /// The expert feed-forward width.
    experts: ExpertWidth,
}

/// The query projection's width.
#[derive(Clone, Copy)]
enum Query {
    /// `key_length × head_count` (the keys and values `key_length` / `value_length` ×
    /// `head_count_kv`).
    Heads,
    /// `embedding_length` (the keys and values `value_length × head_count_kv`).
    Embedding,
    /// The query, key and value projections are fused (`attn_qkv`): only `attn_output`
    /// (`embedding_length` square) is checked.
    Fused,
}

/// Where the expert tensors' feed-forward width comes from.
#[derive(Clone, Copy)]
enum ExpertWidth {
    /// `feed_forward_length`.
    FeedForward,
    /// `expert_feed_forward_length`, else `feed_forward_length / expert_used_count`.
    Expert,
}

/// The decoder layouts checked tensor by tensor, from each architecture's
/// `load_arch_tensors` at the reference commit.
const LAYOUTS: &[Layout] = &[
    // llama.cpp/src/models/llama.cpp, gemma.cpp, gemma2.cpp, gemma3.cpp, mistral3.cpp,
    // granite.cpp: `create_tensor_qkv(…, n_embd_head_k * n_head, n_embd_k_gqa, n_embd_v_gqa)`.
    Layout {
        archs: &["llama", "gemma", "gemma2", "gemma3", "mistral3", "granite"],
        query: Query::Heads,
        up_widths: 1,
        experts: ExpertWidth::FeedForward,
    },
    // qwen3.cpp, qwen3moe.cpp.
    Layout {
        archs: &["qwen3", "qwen3moe"],
        query: Query::Heads,
        up_widths: 1,
        experts: ExpertWidth::Expert,
    },
    // qwen2.cpp, qwen2moe.cpp, starcoder2.cpp: `create_tensor_qkv(…, n_embd, n_embd_gqa,
    // n_embd_gqa)` and an `n_embd` square output.
    Layout {
        archs: &["qwen2", "qwen2moe", "starcoder2"],
        query: Query::Embedding,
        up_widths: 1,
        experts: ExpertWidth::Expert,
    },
    // phi3.cpp: fused QKV, `ffn_up` holding the gate and the up projection.
    Layout {
        archs: &["phi3"],
        query: Query::Fused,
        up_widths: 2,
        experts: ExpertWidth::FeedForward,
    },
];

/// The layer-0 hyperparameters the loader sizes tensors with.
struct Sizes {
    embd: u64,
    heads: u64,
    kv_heads: u64,
    head_k: u64,
    head_v: u64,
    ff: u64,
    ff_exp: Option<u64>,
    ff_shexp: Option<u64>,
    experts: u64,
    used: u64,
}

/// The contradictions between `md`'s hyperparameters and the tensors (name and dimensions,
/// ne0 first) that llama.cpp's loader stops at; empty when there are none or the file is
/// not a model llama.cpp loads with them (a projector, an adapter, a file without tensors).
pub fn shape_problems<'a>(
    md: &Metadata,
    tensors: impl IntoIterator<Item = (&'a str, &'a [u64])>,
) -> Vec<String> {
    let tensors: Vec<(&str, &[u64])> = tensors.into_iter().collect();
    let Ok(arch) = md.get_str(keys::general::ARCHITECTURE) else {
        return Vec::new();
    };
    let adapter = md.get_str(keys::general::TYPE).ok() == Some("adapter");
    if tensors.is_empty() || arch == "clip" || adapter {
        return Vec::new();
    }
    let mut out = Vec::new();
    block_problems(md, arch, &tensors, &mut out);
    embedding_problems(md, arch, &tensors, &mut out);
    if let Some(layout) = LAYOUTS.iter().find(|l| l.archs.contains(&arch)) {
        if let Some(sizes) = sizes(md, arch) {
            layout_problems(layout, &sizes, arch, &tensors, &mut out);
        }
    }
    out
}

/// Every `blk.N.` tensor below the block count, and every block with a tensor.
fn block_problems(md: &Metadata, arch: &str, tensors: &[(&str, &[u64])], out: &mut Vec<String>) {
    let key = keys::arch_key(arch, keys::llm::BLOCK_COUNT);
    let Some(blocks) = md.get(&key).and_then(scalar_u64) else {
        return;
    };
    if blocks > super::loadable::MAX_LAYERS {
        return;
    }
    // Encoder-decoder files name their blocks `enc.blk.N` / `dec.blk.N`.
    if !tensors.iter().any(|(name, _)| block_of(name).is_some()) {
        return;
    }
    let mut seen = vec![false; blocks as usize];
    for (name, _) in tensors {
        let Some(n) = block_of(name) else { continue };
        match seen.get_mut(n as usize) {
            Some(s) => *s = true,
            None => {
                out.push(format!(
                    "tensor '{name}' is in block {n} but {key} is {blocks} (llama.cpp creates \
                     blocks 0 to {} only and stops at the tensors left over)",
                    blocks.saturating_sub(1)
                ));
                return;
            }
        }
    }
    // A multi-token-prediction draft holds only the last `nextn_predict_layers` blocks.
    let nextn = md
        .get(&keys::arch_key(arch, keys::mla::NEXTN_PREDICT_LAYERS))
        .and_then(scalar_u64)
        .unwrap_or(0);
    let first_nextn = blocks.saturating_sub(nextn) as usize;
    if nextn > 0 && seen.iter().take(first_nextn).all(|s| !s) {
        return;
    }
    // A block whose per-layer head and FFN counts are both 0 has no tensors (an empty
    // layer of a per-layer-shaped model: llama.cpp creates none for it).
    let empty_layer = |i: usize| {
        [keys::attention::HEAD_COUNT, keys::llm::FEED_FORWARD_LENGTH]
            .iter()
            .all(|k| layer_value(md, &keys::arch_key(arch, k), i) == Some(0))
    };
    // A recurrent-stack model (`hrm.layers_per_stack`) counts cache slots as blocks: its
    // file holds the two stacks' `2 * layers_per_stack` physical blocks, which the later
    // slots alias.
    let physical = md
        .get(&keys::arch_key(arch, keys::hrm::LAYERS_PER_STACK))
        .and_then(scalar_u64)
        .map_or(seen.len(), |lps| {
            (lps.saturating_mul(2)).min(seen.len() as u64) as usize
        });
    if let Some(missing) = seen
        .iter()
        .take(physical)
        .enumerate()
        .position(|(i, s)| !s && !empty_layer(i))
    {
        let present = seen.iter().filter(|s| **s).count();
        out.push(format!(
            "{key} is {blocks} but no tensor is in block {missing} (the tensors fill {present} \
             blocks; llama.cpp requires every block's tensors)"
        ));
    }
}

/// Entry `i` of a per-layer integer array KV; `None` when the KV is absent, a scalar, or
/// not integers.
fn layer_value(md: &Metadata, key: &str, i: usize) -> Option<i64> {
    match md.get(key)? {
        Value::Array(ArrayValue::I32(v)) => v.get(i).map(|&x| i64::from(x)),
        Value::Array(ArrayValue::U32(v)) => v.get(i).map(|&x| i64::from(x)),
        _ => None,
    }
}

/// The block index of a `blk.N.` tensor name.
fn block_of(name: &str) -> Option<u64> {
    name.strip_prefix("blk.")?.split('.').next()?.parse().ok()
}

/// `token_embd.weight` is `embedding_length` wide. (Its rows are not compared with the
/// token list: several families' files hold more embedding rows than tokens.)
fn embedding_problems(
    md: &Metadata,
    arch: &str,
    tensors: &[(&str, &[u64])],
    out: &mut Vec<String>,
) {
    let Some((name, dims)) = tensors.iter().find(|(n, _)| *n == "token_embd.weight") else {
        return;
    };
    // The loader takes the embedding's width from `features_length` where a file has one
    // (an audio decoder's code embedding; its `embedding_length` is the output width).
    let features = keys::arch_key(arch, keys::llm::FEATURES_LENGTH);
    let key = if md.get(&features).is_some() {
        features
    } else {
        keys::arch_key(arch, keys::llm::EMBEDDING_LENGTH)
    };
    if let (Some(embd), Some(&width)) = (md.get(&key).and_then(scalar_u64), dims.first()) {
        if width != embd {
            out.push(format!(
                "{key} is {embd} but tensor '{name}' has shape {dims:?} (which means {width})"
            ));
        }
    }
}

/// The layer-0 sizes of `arch` (None when a size the layout needs is missing or the heads
/// are zero: the loader's own checks report those).
fn sizes(md: &Metadata, arch: &str) -> Option<Sizes> {
    let get = |k: &str| md.get(&keys::arch_key(arch, k));
    let first = |k: &str| get(k).and_then(scalar_u64);
    let embd = first(keys::llm::EMBEDDING_LENGTH)?;
    let heads = first(keys::attention::HEAD_COUNT)?;
    if heads == 0 || get(keys::layered::KEY_LENGTH_SWA).is_some() {
        return None;
    }
    let kv_heads = first(keys::attention::HEAD_COUNT_KV).unwrap_or(heads);
    let head_k = first(keys::attention::KEY_LENGTH).unwrap_or(embd / heads);
    let head_v = first(keys::attention::VALUE_LENGTH).unwrap_or(embd / heads);
    Some(Sizes {
        embd,
        heads,
        kv_heads,
        head_k,
        head_v,
        ff: first(keys::llm::FEED_FORWARD_LENGTH).unwrap_or(0),
        ff_exp: first(keys::llm::EXPERT_FEED_FORWARD_LENGTH).filter(|&n| n > 0),
        ff_shexp: first(keys::llm::EXPERT_SHARED_FEED_FORWARD_LENGTH).filter(|&n| n > 0),
        experts: first(keys::llm::EXPERT_COUNT).unwrap_or(0),
        used: first(keys::llm::EXPERT_USED_COUNT).unwrap_or(0),
    })
}

/// Each block's attention and feed-forward tensors against `layout` and `s`.
fn layout_problems(
    layout: &Layout,
    s: &Sizes,
    arch: &str,
    tensors: &[(&str, &[u64])],
    out: &mut Vec<String>,
) {
    let (q, o_in, k, v) = match layout.query {
        Query::Heads => (
            Some(s.head_k * s.heads),
            s.head_k * s.heads,
            s.head_k * s.kv_heads,
            s.head_v * s.kv_heads,
        ),
        Query::Embedding => (
            Some(s.embd),
            s.embd,
            s.head_v * s.kv_heads,
            s.head_v * s.kv_heads,
        ),
        Query::Fused => (None, s.embd, 0, 0),
    };
    let ff_exp = match layout.experts {
        ExpertWidth::FeedForward => Some(s.ff),
        ExpertWidth::Expert => s.ff_exp.or((s.used > 0).then(|| s.ff / s.used)),
    };
    let ff_shexp = s.ff_shexp.unwrap_or(s.ff);
    let e = s.experts;
    let d = s.embd;
    let mut expected: Vec<(&str, Vec<u64>)> = vec![
        ("attn_output.weight", vec![o_in, d]),
        ("ffn_gate.weight", vec![d, s.ff]),
        ("ffn_up.weight", vec![d, s.ff * layout.up_widths]),
        ("ffn_down.weight", vec![s.ff, d]),
        ("ffn_gate_shexp.weight", vec![d, ff_shexp]),
        ("ffn_up_shexp.weight", vec![d, ff_shexp]),
        ("ffn_down_shexp.weight", vec![ff_shexp, d]),
    ];
    if let Some(q) = q {
        expected.push(("attn_q.weight", vec![d, q]));
        expected.push(("attn_k.weight", vec![d, k]));
        expected.push(("attn_v.weight", vec![d, v]));
    }
    if e > 0 {
        expected.push(("ffn_gate_inp.weight", vec![d, e]));
        if let Some(f) = ff_exp {
            expected.push(("ffn_gate_exps.weight", vec![d, f, e]));
            expected.push(("ffn_up_exps.weight", vec![d, f, e]));
            expected.push(("ffn_down_exps.weight", vec![f, d, e]));
        }
    }
    for (name, dims) in tensors {
        let Some(rest) = name.strip_prefix("blk.") else {
            continue;
        };
        let Some((_, suffix)) = rest.split_once('.') else {
            continue;
        };
        let Some((_, want)) = expected.iter().find(|(s, _)| *s == suffix) else {
            continue;
        };
        if *dims != want.as_slice() {
            out.push(format!(
                "tensor '{name}' has shape {dims:?} but {arch}'s hyperparameters (embedding \
                 {d}, {} heads of {} / {} kv heads, feed-forward {}{}) make it {want:?}",
                s.heads,
                s.head_k,
                s.kv_heads,
                s.ff,
                if e > 0 {
                    format!(", {e} experts")
                } else {
                    String::new()
                }
            ));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::Value;

    fn md(pairs: &[(&str, Value)]) -> Metadata {
        let mut m = Metadata::new();
        for (k, v) in pairs {
            m.set(*k, v.clone());
        }
        m
    }

    /// A two-block llama: embedding 8, 2 heads of 4, 1 kv head, feed-forward 12, 5 tokens.
    fn llama() -> (Metadata, Vec<(String, Vec<u64>)>) {
        let m = md(&[
            ("general.architecture", Value::from("llama")),
            ("llama.block_count", Value::U32(2)),
            ("llama.embedding_length", Value::U32(8)),
            ("llama.attention.head_count", Value::U32(2)),
            ("llama.attention.head_count_kv", Value::U32(1)),
            ("llama.feed_forward_length", Value::U32(12)),
        ]);
        let mut t = vec![("token_embd.weight".to_string(), vec![8, 5])];
        for b in 0..2 {
            for (n, d) in [
                ("attn_q.weight", vec![8, 8]),
                ("attn_k.weight", vec![8, 4]),
                ("attn_v.weight", vec![8, 4]),
                ("attn_output.weight", vec![8, 8]),
                ("ffn_gate.weight", vec![8, 12]),
                ("ffn_up.weight", vec![8, 12]),
                ("ffn_down.weight", vec![12, 8]),
            ] {
                t.push((format!("blk.{b}.{n}"), d));
            }
        }
        (m, t)
    }

    fn problems(m: &Metadata, t: &[(String, Vec<u64>)]) -> Vec<String> {
        shape_problems(m, t.iter().map(|(n, d)| (n.as_str(), d.as_slice())))
    }

    #[test]
    fn a_consistent_file_has_no_problem() {
        let (m, t) = llama();
        assert_eq!(problems(&m, &t), Vec::<String>::new());
    }

    #[test]
    fn each_contradicting_size_is_named() {
        for (key, value, wanted) in [
            ("llama.embedding_length", 16, "llama.embedding_length is 16"),
            ("llama.block_count", 3, "no tensor is in block 2"),
            (
                "llama.block_count",
                1,
                "'blk.1.attn_q.weight' is in block 1",
            ),
            ("llama.feed_forward_length", 16, "'blk.0.ffn_gate.weight'"),
            ("llama.attention.head_count_kv", 2, "'blk.0.attn_k.weight'"),
            ("llama.attention.key_length", 8, "'blk.0.attn_q.weight'"),
        ] {
            let (mut m, t) = llama();
            m.set(key, Value::U32(value));
            let p = problems(&m, &t);
            assert!(p.iter().any(|s| s.contains(wanted)), "{key}={value}: {p:?}");
        }
    }

    /// A block whose per-layer head and FFN counts are 0 may hold no tensor; one with
    /// either count non-zero may not.
    #[test]
    fn an_empty_layer_of_per_layer_counts_holds_no_tensor() {
        let (mut m, t) = llama();
        m.set("llama.block_count", Value::U32(3));
        assert!(problems(&m, &t)
            .iter()
            .any(|s| s.contains("no tensor is in block 2")));
        m.set(
            "llama.attention.head_count",
            Value::Array(ArrayValue::I32(vec![2, 2, 0])),
        );
        m.set(
            "llama.feed_forward_length",
            Value::Array(ArrayValue::I32(vec![12, 12, 0])),
        );
        assert!(!problems(&m, &t)
            .iter()
            .any(|s| s.contains("no tensor is in block")));
        m.set(
            "llama.feed_forward_length",
            Value::Array(ArrayValue::I32(vec![12, 12, 4])),
        );
        assert!(problems(&m, &t)
            .iter()
            .any(|s| s.contains("no tensor is in block 2")));
    }

    /// A draft of the last block (`nextn_predict_layers` 1) lacks the blocks before it.
    #[test]
    fn a_multi_token_prediction_draft_holds_only_its_blocks() {
        let (mut m, t) = llama();
        let draft: Vec<_> = t
            .into_iter()
            .filter(|(n, _)| !n.starts_with("blk.0."))
            .collect();
        assert!(problems(&m, &draft)
            .iter()
            .any(|s| s.contains("no tensor is in block 0")));
        m.set("llama.nextn_predict_layers", Value::U32(1));
        assert_eq!(problems(&m, &draft), Vec::<String>::new());
    }

    #[test]
    fn projectors_adapters_and_empty_files_are_not_checked() {
        let (m, t) = llama();
        let mut clip = m.clone();
        clip.set("general.architecture", Value::from("clip"));
        let mut adapter = m.clone();
        adapter.set("general.type", Value::from("adapter"));
        adapter.set("llama.embedding_length", Value::U32(99));
        assert!(problems(&clip, &t).is_empty());
        assert!(problems(&adapter, &t).is_empty());
        let mut wrong = m.clone();
        wrong.set("llama.embedding_length", Value::U32(99));
        assert!(problems(&wrong, &[]).is_empty());
    }
}
