//! The tokenizer_normalizers target's input decoder: bytes that choose a tokenizer.json's
//! normalizer (Precompiled charsmaps raw, with a consistent header and arbitrary trie, or a
//! valid trie with bytes edited; every other normalizer with parameters from the input;
//! nested Sequences), pre-tokenizer and decoder around a small byte-fallback BPE model.
//! Shared with the converters' tests, which replay testdata/fuzz-regressions/
//! tokenizer_normalizers/ through it (the including crate declares `mod bytes` for
//! common/bytes.rs at its root).
#![allow(dead_code)]

use serde_json::{json, Value as Json};

use crate::bytes::{b64, Bytes};

/// A darts-clone trie with a few rules `byte -> replacement`, then the input's edits.
fn trie(d: &mut Bytes) -> Vec<u8> {
    let mut units = vec![0u32; 512];
    units[0] = 256 << 10;
    let mut blob = Vec::new();
    for _ in 0..(d.u8() % 4) {
        let from = d.u8() | 1;
        let child = 256 ^ from as usize;
        let v = blob.len() as u32;
        blob.extend_from_slice(d.text().as_bytes());
        blob.push(0);
        let leaf = 256 ^ (from as usize) ^ (from as usize); // base of the child = 256
        units[child] = from as u32 | 1 << 8 | (from as u32) << 10;
        units[leaf] = v;
    }
    for _ in 0..(d.u8() % 4) {
        let i = d.u32() as usize % units.len();
        units[i] ^= d.u32();
    }
    let mut b = ((units.len() * 4) as u32).to_le_bytes().to_vec();
    for u in units {
        b.extend_from_slice(&u.to_le_bytes());
    }
    b.extend_from_slice(&blob);
    b
}

fn precompiled(d: &mut Bytes) -> Json {
    let map = match d.u8() % 4 {
        // Anything at all.
        0 => {
            let n = d.u8() as usize;
            d.take(n)
        }
        // A consistent size, arbitrary units and blob.
        1 => {
            let units = (d.u8() % 64) as usize;
            let mut b = ((units * 4) as u32).to_le_bytes().to_vec();
            b.extend(d.take(units * 4));
            let n = d.u8() as usize % 16;
            b.extend(d.take(n));
            b
        }
        // A working trie, then edited.
        _ => trie(d),
    };
    json!({"type": "Precompiled", "precompiled_charsmap": b64(&map)})
}

fn normalizer(d: &mut Bytes, depth: u32) -> Json {
    match d.u8() % 16 {
        0..=3 => precompiled(d),
        4 => json!({"type": "NFC"}),
        5 => json!({"type": "NFKC"}),
        6 => json!({"type": "NFD"}),
        7 => json!({"type": "Lowercase"}),
        8 => json!({"type": "Nmt"}),
        9 => {
            json!({"type": "Strip", "strip_left": d.u8() & 1 == 1, "strip_right": d.u8() & 1 == 1})
        }
        10 => json!({"type": "StripAccents"}),
        11 => {
            // A pattern text that starts with '/' is a regex (the rest of it).
            let p = d.text();
            let pattern = match p.strip_prefix('/') {
                Some(re) => json!({"Regex": re}),
                None => json!({"String": p}),
            };
            json!({"type": "Replace", "pattern": pattern, "content": d.text()})
        }
        12 => json!({"type": "Prepend", "prepend": d.text()}),
        13 => json!({"type": "BertNormalizer", "clean_text": d.u8() & 1 == 1,
            "handle_chinese_chars": d.u8() & 1 == 1, "strip_accents": null,
            "lowercase": d.u8() & 1 == 1}),
        14 => json!({"type": "ByteLevel"}),
        _ if depth < 3 => {
            let n = d.u8() % 4;
            let v: Vec<Json> = (0..n).map(|_| normalizer(d, depth + 1)).collect();
            json!({"type": "Sequence", "normalizers": v})
        }
        _ => Json::Null,
    }
}

fn pre_tokenizer(d: &mut Bytes) -> Json {
    match d.u8() % 6 {
        0 => {
            json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})
        }
        1 => {
            json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "first", "split": d.u8() & 1 == 1})
        }
        2 => json!({"type": "FixedLength", "length": d.u8() % 4}),
        3 => json!({"type": "Whitespace"}),
        4 => json!({"type": "Sequence", "pretokenizers": [pre_tokenizer(d)]}),
        _ => Json::Null,
    }
}

fn decoder(d: &mut Bytes) -> Json {
    match d.u8() % 6 {
        0 => json!({"type": "Strip", "content": " ", "start": d.u8() % 3, "stop": d.u8() % 3}),
        1 => json!({"type": "ByteFallback"}),
        2 => json!({"type": "Fuse"}),
        3 => json!({"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "}),
        4 => json!({"type": "Sequence", "decoders": [decoder(d), decoder(d)]}),
        _ => json!({"type": "ByteLevel"}),
    }
}

/// The tokenizer.json the input `data` describes.
pub fn tokenizer_json(data: &[u8]) -> Json {
    let mut d = Bytes(data);
    let norm = normalizer(&mut d, 0);
    let pre = pre_tokenizer(&mut d);
    let dec = decoder(&mut d);
    let added = d.text();
    json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [{"id": 5, "content": format!("<{added}>"), "single_word": false,
            "lstrip": false, "rstrip": false, "normalized": false, "special": false}],
        "normalizer": norm, "pre_tokenizer": pre, "post_processor": null, "decoder": dec,
        "model": {"type": "BPE", "dropout": null, "unk_token": null,
            "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false,
            "byte_fallback": true, "vocab": {"a": 0, "b": 1, "ab": 2, " ": 3, "<0x41>": 4},
            "merges": ["a b"]}
    })
}
