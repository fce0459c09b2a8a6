//! Hostile and unusual tokenizer files, the converters' side: tokenizer.json components that the
//! `tokenizers` crate trusts (Precompiled charsmaps, FixedLength, Strip), the config.json
//! sub-config merge (`text_config`, `llm_config`, `language_config`, …), padding the
//! vocabulary beyond what the token embedding holds, and the values the reference refuses.
//!
//! `hostile_tokenizers_under_limits` runs the tokenizer cases again in a child process under
//! `ulimit -v` so an allocation sized by a charsmap's declared trie size fails the test.

use ggufkit_testsupport::golden as support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ggufkit::gguf::{ArrayValue, Value};
use ggufkit_converters::hf::tokenizer::{
    detect_pre_tokenizer, vocab_metadata_report, VocabKind, VocabRequest,
};
use ggufkit_converters::hf::ModelDir;
use ggufkit_converters::hf::{read_hf_dir, HfOptions};
use ggufkit_converters::ConvertError;
use serde_json::{json, Value as Json};
use support::limits::{assert_memory_limited, run_under_limits};
use support::{scratch, testdata};

// The tokenizer_normalizers fuzz target's input decoder, to replay its regression inputs.
use crate::normalizers;

// ---------------------------------------------------------------------------------------
// Helpers.

/// A small byte-level BPE tokenizer.json with the given normalizer, pre-tokenizer and decoder.
fn tokenizer_json(normalizer: Json, pre: Json, decoder: Json) -> Json {
    json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": normalizer,
        "pre_tokenizer": pre,
        "post_processor": null,
        "decoder": decoder,
        "model": {"type": "BPE", "dropout": null, "unk_token": null,
            "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false,
            "byte_fallback": false, "vocab": {"a": 0, "b": 1, "ab": 2, "x": 3}, "merges": ["a b"]}
    })
}

fn byte_level() -> Json {
    json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})
}

fn write_dir(tag: &str, files: &[(&str, Vec<u8>)]) -> ggufkit_testsupport::Scratch {
    let d = scratch(tag);
    for (name, bytes) in files {
        std::fs::write(d.join(name), bytes).unwrap();
    }
    d
}

fn vocab(dir: &Path, kind: VocabKind) -> Result<Vec<(String, Value)>, ConvertError> {
    let hparams = json!({});
    let req = VocabRequest {
        dir: &ModelDir::new(dir),
        kind,
        arch: "llama",
        hparams: &hparams,
    };
    vocab_metadata_report(&req).map(|r| r.keys)
}

fn tokens(keys: &[(String, Value)]) -> Vec<String> {
    let v = keys
        .iter()
        .find(|(k, _)| k == "tokenizer.ggml.tokens")
        .map(|(_, v)| v)
        .expect("tokens");
    match v {
        Value::Array(ArrayValue::String(t)) => {
            t.iter().map(|s| s.to_lossy().into_owned()).collect()
        }
        v => panic!("{v:?}"),
    }
}

/// Padded standard base64, six bits at a time.
fn b64(b: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let (mut out, mut acc, mut bits) = (String::new(), 0u32, 0u32);
    for &x in b {
        acc = (acc << 8 | u32::from(x)) & 0xffff;
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(A[(acc >> bits & 63) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(A[(acc << (6 - bits) & 63) as usize] as char);
    }
    while out.len() % 4 != 0 {
        out.push('=');
    }
    out
}

/// A SentencePiece charsmap from trie units and a normalized blob.
fn charsmap(units: &[u32], normalized: &[u8]) -> Vec<u8> {
    let mut b = ((units.len() * 4) as u32).to_le_bytes().to_vec();
    for u in units {
        b.extend_from_slice(&u.to_le_bytes());
    }
    b.extend_from_slice(normalized);
    b
}

/// A double-array trie (darts-clone layout) mapping the byte `from` to the replacement at
/// offset `value` of the normalized blob.
fn one_rule(from: u8, value: u32) -> Vec<u32> {
    let mut t = vec![0u32; 512];
    t[0] = 256 << 10; // root: children at 256 ^ byte
    let child = 256 ^ from as usize;
    t[child] = from as u32 | 1 << 8 | (from as u32) << 10; // label, leaf, offset -> 256
    t[256] = value;
    t
}

fn precompiled(map: &[u8]) -> Json {
    json!({"type": "Precompiled", "precompiled_charsmap": b64(map)})
}

/// Hostile tokenizer.json components and the words the refusal must contain.
fn hostile_tokenizers() -> Vec<(&'static str, Json, &'static [&'static str])> {
    let bl = byte_level;
    let tj = |n: Json| tokenizer_json(n, bl(), Json::Null);
    let mut huge_trie = one_rule(b'a', 0);
    huge_trie[0] = 1 << 30; // root base far outside the 512 units
    let mut bad_child = one_rule(b'a', 0);
    bad_child[256 ^ 0x61] = 0x61 | 1 << 8 | 0x1f_ffff << 10; // next unit outside
    vec![
        (
            "issue-6-bytes",
            json!({"version": "1.0", "normalizer":
                {"type": "Precompiled", "precompiled_charsmap": "AAAA////"},
                "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}),
            &[
                "normalizer (Precompiled)",
                "4278190080-byte trie",
                "only 2 bytes follow",
            ],
        ),
        (
            "trie-size-past-end",
            tj(precompiled(&[16, 0, 0, 0, 1, 2, 3, 4])),
            &["16-byte trie", "only 4 bytes follow"],
        ),
        (
            "trie-size-not-units",
            tj(precompiled(&[2, 0, 0, 0, 1, 2, 3, 4])),
            &["2-byte trie", "4-byte units"],
        ),
        ("too-short", tj(precompiled(&[1, 0])), &["shorter than"]),
        (
            "empty-trie",
            tj(precompiled(&charsmap(&[], b"x\0"))),
            &["empty trie"],
        ),
        (
            "root-outside",
            tj(precompiled(&charsmap(&huge_trie, b"x\0"))),
            &["trie root pointing at unit 1048576"],
        ),
        (
            "child-outside",
            tj(precompiled(&charsmap(&bad_child, b"x\0"))),
            &["trie node (unit 353)", "outside its 512 units"],
        ),
        (
            "value-past-blob",
            tj(precompiled(&charsmap(&one_rule(b'a', 9), b"x\0"))),
            &["trie value 9", "2-byte normalized blob"],
        ),
        (
            "value-inside-char",
            tj(precompiled(&charsmap(&one_rule(b'a', 1), "é\0".as_bytes()))),
            &["trie value 1"],
        ),
        (
            "blob-not-utf8",
            tj(precompiled(&charsmap(&one_rule(b'a', 0), b"\xff\0"))),
            &["not UTF-8"],
        ),
        (
            "not-base64",
            tj(json!({"type": "Precompiled", "precompiled_charsmap": "AA*A"})),
            &["not base64"],
        ),
        (
            "precompiled-in-sequence",
            tj(json!({"type": "Sequence", "normalizers": [
                {"type": "NFKC"},
                {"type": "Sequence", "normalizers": [
                    {"type": "Precompiled", "precompiled_charsmap": "AAAA////"}]}]})),
            &["normalizer.normalizers[1].normalizers[0] (Precompiled)"],
        ),
        (
            // Fuzz finding (tokenizer_normalizers): the charsmap's transform indexed past the
            // alignments an empty Prepend left behind.
            "prepend-empty-then-precompiled",
            tj(json!({"type": "Sequence", "normalizers": [
                {"type": "NFKC"},
                {"type": "Prepend", "prepend": ""},
                precompiled(&charsmap(&one_rule(b'e', 0), b" \0"))]})),
            &["normalizer.normalizers[1] (Prepend)", "prepend is empty"],
        ),
        (
            // Fuzz finding (tokenizer_normalizers): an empty pattern inserts "x" at the start
            // aligned to nothing; Nmt's filter then indexed past the alignments.
            "replace-empty-then-nmt",
            tj(json!({"type": "Sequence", "normalizers": [
                {"type": "Replace", "pattern": {"String": ""}, "content": "x"},
                {"type": "Nmt"}]})),
            &[
                "normalizer.normalizers[0] (Replace)",
                "the pattern is the empty string",
                "normalizer.normalizers[1] (Nmt)",
            ],
        ),
        (
            "replace-anchor-then-byte-level",
            tj(json!({"type": "Replace", "pattern": {"Regex": "^"}, "content": "\u{2581}"})),
            &[
                "normalizer (Replace)",
                "the regex \"^\" can match the empty string",
                "pre_tokenizer (ByteLevel)",
            ],
        ),
        (
            "replace-lookahead-then-nfc",
            tokenizer_json(
                json!({"type": "Sequence", "normalizers": [
                    {"type": "Replace", "pattern": {"Regex": "(?=a)"}, "content": "x"},
                    {"type": "Sequence", "normalizers": [{"type": "NFC"}]}]}),
                json!({"type": "Whitespace"}),
                Json::Null,
            ),
            &[
                "may match the empty string",
                "normalizer.normalizers[1].normalizers[0] (NFC)",
            ],
        ),
        (
            "replace-misspelt-empty-then-byte-level",
            tj(json!({"type": "Replce", "pattern": {"Regex": "a*"}, "content": "x"})),
            &["normalizer (Replace)", "can match the empty string"],
        ),
        (
            // Found by random pipelines: the empty normalized form matches at every byte.
            "added-token-normalized-to-empty",
            {
                let mut t = tj(json!({"type": "Replace", "pattern": {"String": "<x>"},
                    "content": ""}));
                t["added_tokens"] = json!([{"id": 4, "content": "<x>", "single_word": false,
                    "lstrip": false, "rstrip": false, "normalized": true, "special": false}]);
                t
            },
            &["added token 4 \"<x>\" is normalized", "empty string"],
        ),
        (
            "fixed-length-0",
            tokenizer_json(
                Json::Null,
                json!({"type": "Sequence", "pretokenizers": [
                    {"type": "FixedLength", "length": 0}]}),
                Json::Null,
            ),
            &["pre_tokenizer.pretokenizers[0] (FixedLength)", "length 0"],
        ),
        (
            "strip-from-end",
            tokenizer_json(
                Json::Null,
                bl(),
                json!({"type": "Strip", "content": "a", "start": 0, "stop": 3}),
            ),
            &["decoder (Strip)", "stop = 3"],
        ),
    ]
}

fn check_hostile_tokenizers() {
    for (name, tj, needles) in hostile_tokenizers() {
        let d = write_dir(
            &format!("tok-{name}"),
            &[("tokenizer.json", serde_json::to_vec(&tj).unwrap())],
        );
        for kind in [VocabKind::Gpt2, VocabKind::Llama] {
            let e = match vocab(&d, kind) {
                Ok(_) => panic!("{name}: accepted"),
                Err(e) => e,
            };
            let msg = e.to_string();
            assert!(matches!(e, ConvertError::Format { .. }), "{name}: {msg}");
            let file = d.join("tokenizer.json").display().to_string();
            assert!(msg.starts_with(&file), "{name}: {msg}");
            for n in needles {
                assert!(msg.contains(n), "{name}: {n:?} not in {msg}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Tokenizer components the `tokenizers` crate trusts.

#[test]
fn hostile_tokenizer_components_are_refused() {
    check_hostile_tokenizers();
}

#[test]
fn hostile_tokenizers_under_limits() {
    run_under_limits(
        module_path!(),
        "hostile_tokenizers_inner",
        "GGUFKIT_HARDENING_CHILD",
        512 * 1024,
        Duration::from_secs(120),
    );
}

#[test]
#[ignore = "run by hostile_tokenizers_under_limits in a memory-limited child"]
fn hostile_tokenizers_inner() {
    assert_memory_limited("GGUFKIT_HARDENING_CHILD");
    check_hostile_tokenizers();
    check_vocab_padding_refused();
    check_big_config_refused();
}

/// The tokenizer.json files the tokenizer_json fuzz target panicked on
/// (testdata/fuzz-regressions/tokenizer_json/) are refused with an error naming the file, on
/// the GPT-2 and llama-hf paths, without a tokenizer_config.json and with one naming each
/// class the target tries (the class decides whether the pipeline is rebuilt: a top level
/// that is not an object panicked there).
#[test]
fn tokenizer_json_fuzz_regressions_are_refused() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(testdata("fuzz-regressions/tokenizer_json"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(file).unwrap();
        for class in [
            None,
            Some("GPT2Tokenizer"),
            Some("Qwen2TokenizerFast"),
            Some("LlamaTokenizer"),
            Some("PreTrainedTokenizerFast"),
            Some("NoSuchTokenizer"),
        ] {
            let mut inputs = vec![("tokenizer.json", bytes.clone())];
            if let Some(c) = class {
                let tc = json!({"tokenizer_class": c, "eos_token": "<fuzz-eos>"});
                inputs.push(("tokenizer_config.json", tc.to_string().into_bytes()));
            }
            let d = write_dir(
                &format!("fuzzreg-tj-{name}-{}", class.unwrap_or("none")),
                &inputs,
            );
            for kind in [VocabKind::Gpt2, VocabKind::Llama] {
                let e = match vocab(&d, kind) {
                    Ok(_) => panic!("{name} ({class:?}, {kind:?}): accepted"),
                    Err(e) => e,
                };
                let msg = e.to_string();
                // A file error about tokenizer.json: malformed, not JSON, a top level of
                // the wrong kind, or refused by the tokenizers library.
                assert!(
                    matches!(
                        e,
                        ConvertError::Format { .. }
                            | ConvertError::BadJson { .. }
                            | ConvertError::WrongType { .. }
                            | ConvertError::TokenizerLibrary { .. }
                    ),
                    "{name}: {msg}"
                );
                let path = d.join("tokenizer.json").display().to_string();
                assert!(msg.starts_with(&path), "{name}: {msg}");
            }
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}

/// A tokenizer.json whose top level is not an object names what it is.
#[test]
fn a_tokenizer_json_that_is_not_an_object_is_refused() {
    for (text, kind) in [
        ("\"\"", "a string"),
        ("[]", "an array"),
        ("7", "a number"),
        ("null", "null"),
        ("true", "a boolean"),
    ] {
        let d = write_dir("tok-not-object", &[("tokenizer.json", text.into())]);
        match vocab(&d, VocabKind::Gpt2).unwrap_err() {
            ConvertError::WrongType {
                path,
                key,
                expected,
                found,
            } => {
                assert_eq!(path, d.join("tokenizer.json"), "{text}");
                assert_eq!(key, "the top level", "{text}");
                assert_eq!(expected, "an object", "{text}");
                assert_eq!(found, kind, "{text}");
            }
            e => panic!("{text}: {e}"),
        }
    }
}

/// A Replace that can match the empty string is kept when nothing remaps the text after it
/// (one that marks the start for a Metaspace pre-tokenizer), and so are the Replace patterns
/// real tokenizers use before other normalizers and ByteLevel: the tokenizers library loads
/// them and encodes the probe text (these pipelines are in no llama.cpp table, so the
/// pre-tokenizer is then not recognized, after the chkhsh was computed).
#[test]
fn replace_patterns_that_cannot_break_alignments_are_accepted() {
    for (tag, normalizer, pre) in [
        (
            "anchor-then-metaspace",
            json!({"type": "Sequence", "normalizers": [
                {"type": "NFC"},
                {"type": "Replace", "pattern": {"Regex": "(?<!\\n)^"}, "content": "\u{2581}"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"},
                {"type": "Prepend", "prepend": "\u{2581}"}]}),
            json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "never",
                "split": true}),
        ),
        (
            "nonempty-then-byte-level",
            json!({"type": "Sequence", "normalizers": [
                {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
                {"type": "Replace", "pattern": {"Regex": "\\s+|[\\n\\r\\t]"}, "content": " "},
                {"type": "Replace", "pattern": {"String": "``"}, "content": "\""},
                {"type": "NFKC"},
                {"type": "Strip", "strip_left": true, "strip_right": true}]}),
            byte_level(),
        ),
    ] {
        let tj = tokenizer_json(normalizer, pre, Json::Null);
        let d = write_dir(
            &format!("tok-replace-{tag}"),
            &[("tokenizer.json", serde_json::to_vec(&tj).unwrap())],
        );
        if let Err(e) = detect_pre_tokenizer(&d) {
            let msg = e.to_string();
            assert!(msg.contains("is not in llama.cpp's table"), "{tag}: {msg}");
        }
    }
}

/// A token tokenizer_config.json adds as normalized, which the file's normalizer removes, is
/// refused too (the configured tokens are added after loading).
#[test]
fn a_configured_token_normalized_to_nothing_is_refused() {
    let tj = tokenizer_json(
        json!({"type": "Replace", "pattern": {"String": "<y>"}, "content": ""}),
        byte_level(),
        Json::Null,
    );
    let tc = json!({"tokenizer_class": "PreTrainedTokenizerFast", "added_tokens_decoder": {
        "4": {"content": "<y>", "single_word": false, "lstrip": false, "rstrip": false,
              "normalized": true, "special": false}}});
    let d = write_dir(
        "tok-configured-empty",
        &[
            ("tokenizer.json", serde_json::to_vec(&tj).unwrap()),
            ("tokenizer_config.json", serde_json::to_vec(&tc).unwrap()),
        ],
    );
    let e = vocab(&d, VocabKind::Gpt2).unwrap_err().to_string();
    assert!(
        e.contains("added token 4 \"<y>\" is normalized") && e.contains("empty string"),
        "{e}"
    );
}

/// The inputs the tokenizer_normalizers fuzz target panicked on
/// (testdata/fuzz-regressions/tokenizer_normalizers/), decoded by the target's own generator,
/// are refused on the GPT-2 and llama-hf paths with an error naming the file and the
/// component at fault.
#[test]
fn tokenizer_normalizers_fuzz_regressions_are_refused() {
    let expected = [
        (
            "prepend-empty-then-precompiled",
            "normalizer.normalizers[1] (Prepend)",
        ),
        (
            "replace-empty-pattern-then-nmt",
            "normalizer.normalizers[0] (Replace)",
        ),
    ];
    let dir = testdata("fuzz-regressions/tokenizer_normalizers");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        expected.map(|(n, _)| n.to_string()),
        "one expectation per input"
    );
    for (name, needle) in expected {
        let tj = normalizers::tokenizer_json(&std::fs::read(dir.join(name)).unwrap());
        let d = write_dir(
            &format!("fuzzreg-tn-{name}"),
            &[("tokenizer.json", serde_json::to_vec(&tj).unwrap())],
        );
        for kind in [VocabKind::Gpt2, VocabKind::Llama] {
            let e = match vocab(&d, kind) {
                Ok(_) => panic!("{name} ({kind:?}): accepted"),
                Err(e) => e,
            };
            let msg = e.to_string();
            assert!(matches!(e, ConvertError::Format { .. }), "{name}: {msg}");
            let path = d.join("tokenizer.json").display().to_string();
            assert!(msg.starts_with(&path), "{name}: {msg}");
            assert!(msg.contains(needle), "{name}: {needle:?} not in {msg}");
        }
    }
}

#[test]
fn a_valid_precompiled_charsmap_is_used() {
    // 'b' -> "x": the normalizer runs in the chkhsh probe and in the added-token round trip.
    let map = charsmap(&one_rule(b'b', 0), b"x\0");
    let mut tj = tokenizer_json(precompiled(&map), byte_level(), Json::Null);
    tj["added_tokens"] = json!([{"id": 4, "content": "<b>", "single_word": false,
        "lstrip": false, "rstrip": false, "normalized": false, "special": false}]);
    let d = write_dir(
        "tok-precompiled-ok",
        &[("tokenizer.json", serde_json::to_vec(&tj).unwrap())],
    );
    let keys = vocab(&d, VocabKind::Gpt2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tokens(&keys), ["a", "b", "ab", "x", "<b>"]);
}

#[test]
fn strip_from_the_start_is_accepted() {
    // llama's decoder: Strip(" ", 1, 0).
    let tj = tokenizer_json(
        Json::Null,
        byte_level(),
        json!({"type": "Sequence", "decoders": [
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}),
    );
    let d = write_dir(
        "tok-strip-start",
        &[("tokenizer.json", serde_json::to_vec(&tj).unwrap())],
    );
    let keys = vocab(&d, VocabKind::Gpt2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tokens(&keys), ["a", "b", "ab", "x"]);
}

// ---------------------------------------------------------------------------------------
// config.json: sub-configs merge as AutoConfig + TextModel merge them.

/// The qwen2 fixture with its config.json edited by `edit`.
fn qwen2_with(tag: &str, edit: impl FnOnce(&mut Json)) -> ggufkit_testsupport::Scratch {
    let src = testdata("hf/qwen2");
    let d = scratch(tag);
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
    }
    let mut cfg: Json =
        serde_json::from_slice(&std::fs::read(src.join("config.json")).unwrap()).unwrap();
    edit(&mut cfg);
    std::fs::write(d.join("config.json"), serde_json::to_vec(&cfg).unwrap()).unwrap();
    d
}

fn convert(dir: &Path) -> Result<ggufkit_converters::hf::HfConversion, ConvertError> {
    read_hf_dir(dir, &HfOptions::default())
}

/// (block_count, embedding_length, token count) of a conversion.
fn shape_of(dir: &Path) -> (u32, u32, usize) {
    let c = convert(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let md = &c.model.metadata;
    let n_tokens = match md.get("tokenizer.ggml.tokens") {
        Some(Value::Array(a)) => a.len(),
        v => panic!("{v:?}"),
    };
    (
        md.get_u32("qwen2.block_count").unwrap(),
        md.get_u32("qwen2.embedding_length").unwrap(),
        n_tokens,
    )
}

#[test]
fn empty_text_config_keeps_the_root_values() {
    let real = (2, 64, 1024);
    for key in [
        "text_config",
        "llm_config",
        "language_config",
        "lm_config",
        "lfm",
    ] {
        let d = qwen2_with(&format!("tc-empty-{key}"), |c| c[key] = json!({}));
        assert_eq!(shape_of(&d), real, "{key}: {{}}");
    }
    let d = qwen2_with("tc-empty-thinker", |c| {
        c["thinker_config"] = json!({"text_config": {}})
    });
    assert_eq!(shape_of(&d), real, "thinker_config.text_config: {{}}");
}

#[test]
fn nested_config_values_win_over_the_root() {
    // A text class keeps text_config as written (no class defaults in it); its keys then
    // replace the root's. The fixture has 2 layers; a nested count of 1 must be used (the
    // tensors of layer 1 are then left over, which the converter reports).
    for key in ["text_config", "llm_config", "language_config"] {
        let d = qwen2_with(&format!("tc-layers-{key}"), |c| {
            c[key] = json!({"num_hidden_layers": 1})
        });
        let msg = match convert(&d) {
            Ok(c) => panic!(
                "{key}: converted with block_count {:?}",
                c.model.metadata.get_u32("qwen2.block_count")
            ),
            Err(e) => e.to_string(),
        };
        assert!(msg.contains("model.layers.1."), "{key}: {msg}");
    }
    // The last rename present wins, in the reference's order.
    let d = qwen2_with("tc-order", |c| {
        c["llm_config"] = json!({"num_hidden_layers": 1});
        c["language_config"] = json!({"num_hidden_layers": 2});
    });
    assert_eq!(shape_of(&d), (2, 64, 1024));
}

#[test]
fn a_text_config_that_is_not_an_object_is_refused() {
    for (key, v) in [
        ("text_config", json!(null)),
        ("text_config", json!("x")),
        ("llm_config", json!([1])),
        ("thinker_config", json!({})),
    ] {
        let d = qwen2_with(&format!("tc-bad-{key}-{}", v.to_string().len()), |c| {
            c[key] = v.clone()
        });
        let msg = match convert(&d) {
            Ok(_) => panic!("{key} = {v}: accepted"),
            Err(e) => e.to_string(),
        };
        assert!(msg.contains("config.json"), "{msg}");
        assert!(msg.contains("text_config"), "{msg}");
    }
}

// ---------------------------------------------------------------------------------------
// Memory stays proportional to what is written.

fn check_vocab_padding_refused() {
    // The fixture's token embedding has 1,024 rows: padding beyond them is refused before a
    // single padding token is built (2^24 of them cost about a gigabyte).
    for n in [1u64 << 24, 1025] {
        let d = qwen2_with(&format!("vocab-pad-{n}"), |c| c["vocab_size"] = json!(n));
        let msg = match convert(&d) {
            Ok(_) => panic!("vocab_size {n}: accepted"),
            Err(e) => e.to_string(),
        };
        assert!(msg.contains("config.json"), "{msg}");
        assert!(
            msg.contains(&format!("vocab_size {n} is larger than the 1024 rows")),
            "{msg}"
        );
    }
}

fn check_big_config_refused() {
    // 5 MiB of `0,` would be a ~100 MB JSON tree, held three times.
    let mut cfg = String::from(r#"{"architectures": ["Qwen2ForCausalLM"], "x": ["#);
    cfg.push_str(&"0,".repeat(5 << 19));
    cfg.push_str("0]}");
    let d = write_dir("big-config", &[("config.json", cfg.into_bytes())]);
    let msg = match convert(&d) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    assert!(msg.contains("config.json: larger than 4 MiB"), "{msg}");
}

#[test]
fn vocab_padding_beyond_the_embedding_is_refused() {
    check_vocab_padding_refused();
    // Padding up to the embedding's rows is what the reference does and stays accepted.
    let d = qwen2_with("vocab-pad-ok", |c| c["vocab_size"] = json!(1024));
    assert_eq!(shape_of(&d), (2, 64, 1024));
    // Padding beyond them is a contradiction llama.cpp's loader stops at: `allow_unloadable`
    // writes the vocabulary padded as the reference pads it.
    let d = qwen2_with("vocab-pad-unloadable", |c| c["vocab_size"] = json!(1025));
    assert!(matches!(
        convert(&d),
        Err(ConvertError::HparamsContradictTensors { .. })
    ));
    let allow = HfOptions {
        allow_unloadable: true,
        ..HfOptions::default()
    };
    let c = read_hf_dir(&d, &allow).unwrap();
    match c.model.metadata.get("tokenizer.ggml.tokens") {
        Some(Value::Array(a)) => assert_eq!(a.len(), 1025),
        v => panic!("{v:?}"),
    }
}

#[test]
fn a_huge_config_json_is_refused() {
    check_big_config_refused();
}

// ---------------------------------------------------------------------------------------
// Refused where the reference refuses.

#[test]
fn float_hparams_beyond_f32_are_refused() {
    // gguf-py's struct.pack("<f", 1e308) raises OverflowError; a cast would write inf.
    for (k, v, key) in [
        (
            "rms_norm_eps",
            json!(1e308),
            "qwen2.attention.layer_norm_rms_epsilon",
        ),
        ("rope_theta", json!(1e39), "qwen2.rope.freq_base"),
    ] {
        let d = qwen2_with(&format!("f32-{k}"), |c| {
            c[k] = v.clone();
            if k == "rope_theta" {
                c["rope_parameters"]["rope_theta"] = v.clone();
            }
        });
        let msg = match convert(&d) {
            Ok(_) => panic!("{k} = {v}: accepted"),
            Err(e) => e.to_string(),
        };
        assert!(
            msg.contains(key) && msg.contains("too large for a FLOAT32"),
            "{msg}"
        );
    }
    // Small values round to what the reference writes.
    let d = qwen2_with("f32-small", |c| c["rms_norm_eps"] = json!(1e-50));
    convert(&d).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn broken_bpe_models_are_refused_on_the_gpt2_path() {
    let with_model = |tag: &str, model: Json| {
        let mut tj = tokenizer_json(Json::Null, byte_level(), Json::Null);
        tj["model"] = model;
        write_dir(tag, &[("tokenizer.json", serde_json::to_vec(&tj).unwrap())])
    };
    let bpe = |merges: Json| {
        json!({"type": "BPE", "dropout": null, "unk_token": null,
            "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false,
            "byte_fallback": false, "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": merges})
    };
    for (tag, model, needle) in [
        ("merges-empty", bpe(json!([])), "model.merges is empty"),
        (
            "merges-dup",
            bpe(json!(["a b", "a b"])),
            "model.merges[1] repeats merge \"a b\" of model.merges[0]",
        ),
        (
            "merges-dup-pairs",
            bpe(json!([["a", "b"], ["a", "b"]])),
            "model.merges[1] repeats",
        ),
        (
            "wordpiece",
            json!({"type": "WordPiece", "unk_token": "a", "continuing_subword_prefix": "##",
                "max_input_chars_per_word": 100, "vocab": {"a": 0, "b": 1, "ab": 2}}),
            "model type \"WordPiece\" on the GPT-2 (BPE) vocabulary path",
        ),
    ] {
        let d = with_model(&format!("bpe-{tag}"), model);
        let msg = match vocab(&d, VocabKind::Gpt2) {
            Ok(_) => panic!("{tag}: accepted"),
            Err(e) => e.to_string(),
        };
        assert!(msg.contains(needle), "{tag}: {msg}");
    }
}

#[test]
fn a_token_id_past_vocab_size_is_named() {
    // The tokenizers library renumbers an added token written past the vocabulary to the
    // next free id; when vocab_size leaves no room for it the reference stops on an
    // assertion (see `added_tokens_past_the_vocabulary_as_the_reference`), and this refusal
    // names the token and the id the file gives it.
    let mut tj = tokenizer_json(Json::Null, byte_level(), Json::Null);
    tj["added_tokens"] = json!([{"id": 10, "content": "<x>", "single_word": false,
        "lstrip": false, "rstrip": false, "normalized": false, "special": true}]);
    let d = write_dir(
        "added-past",
        &[
            ("tokenizer.json", serde_json::to_vec(&tj).unwrap()),
            ("config.json", br#"{"vocab_size": 4}"#.to_vec()),
        ],
    );
    let hparams = json!({"vocab_size": 4});
    let req = VocabRequest {
        dir: &ModelDir::new(&d),
        kind: VocabKind::Gpt2,
        arch: "gpt2",
        hparams: &hparams,
    };
    let msg = match vocab_metadata_report(&req) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        msg.contains("\"<x>\"") && msg.contains("written with id 10"),
        "{msg}"
    );
}

#[test]
fn a_directory_shard_is_not_called_missing() {
    let d = qwen2_with("shard-dir", |_| {});
    std::fs::write(
        d.join("model.safetensors.index.json"),
        r#"{"weight_map": {"model.norm.weight": "model-00001-of-00001.safetensors"}}"#,
    )
    .unwrap();
    std::fs::create_dir(d.join("model-00001-of-00001.safetensors")).unwrap();
    let msg = match convert(&d) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    assert!(msg.contains("is a directory, not a regular file"), "{msg}");
    assert!(!msg.contains("missing"), "{msg}");
}

#[cfg(unix)]
#[test]
fn a_fifo_config_json_is_not_called_missing() {
    let d = qwen2_with("config-fifo", |_| {});
    let config = d.join("config.json");
    std::fs::remove_file(&config).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&config)
        .status()
        .unwrap();
    assert!(made.success());
    // Nothing writes to the FIFO: a reader that opened it would block here.
    let msg = match convert(&d) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        msg.contains("config.json is a FIFO, not a regular file"),
        "{msg}"
    );
    assert!(!msg.contains("missing"), "{msg}");
}

#[test]
fn empty_outtype_items_are_refused() {
    use ggufkit_converters::batch::jobs::split_types;
    assert_eq!(split_types("f16, q8_0").unwrap(), ["f16", "q8_0"]);
    for bad in ["q4_k_m,,", "q4_k_m,", ",f16", "", "f16,,q8_0"] {
        let e = split_types(bad).unwrap_err().to_string();
        assert!(e.contains("is empty"), "{bad:?}: {e}");
    }
}

/// Zero rows appended to the token embedding (`model.embed_tokens.weight`, and `lm_head`
/// when present) of a safetensors file, as conformance/make_added_token_golden.py does.
fn pad_embedding(path: &Path, rows: u64) {
    let b = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, Json> = serde_json::from_slice(&b[8..8 + n]).unwrap();
    let data = &b[8 + n..];
    let mut entries: Vec<(&String, &Json)> = header
        .iter()
        .filter(|(k, _)| *k != "__metadata__")
        .collect();
    entries.sort_by_key(|(_, v)| v["data_offsets"][0].as_u64().unwrap());
    let mut out = serde_json::Map::new();
    let mut blob = Vec::new();
    for (k, v) in entries {
        let (s, e) = (
            v["data_offsets"][0].as_u64().unwrap() as usize,
            v["data_offsets"][1].as_u64().unwrap() as usize,
        );
        let mut v = v.clone();
        let begin = blob.len();
        blob.extend_from_slice(&data[s..e]);
        if k == "model.embed_tokens.weight" || k == "lm_head.weight" {
            let (r, c) = (
                v["shape"][0].as_u64().unwrap(),
                v["shape"][1].as_u64().unwrap(),
            );
            let width = (e - s) as u64 / (r * c);
            blob.resize(blob.len() + (width * c * (rows - r)) as usize, 0);
            v["shape"] = json!([rows, c]);
        }
        v["data_offsets"] = json!([begin, blob.len()]);
        out.insert(k.clone(), v);
    }
    if let Some(m) = header.get("__metadata__") {
        out.insert("__metadata__".into(), m.clone());
    }
    let mut h = serde_json::to_vec(&out).unwrap();
    h.resize(h.len().next_multiple_of(8), b' ');
    let mut file = (h.len() as u64).to_le_bytes().to_vec();
    file.extend(h);
    file.extend(blob);
    std::fs::write(path, file).unwrap();
}

/// Added tokens written with an id past the vocabulary (testdata/golden/added-tokens, made
/// by conformance/make_added_token_golden.py with the pinned reference): the tokenizers
/// library renumbers such a token to the next free id. Where `vocab_size` leaves room the
/// reference accepts it, and the output is byte-identical to the reference's; where it does
/// not, the reference stops on an assertion and the refusal here names the token, the id it
/// got and the id the file gives it.
#[test]
fn added_tokens_past_the_vocabulary_as_the_reference() {
    let cases = support::read_json(&testdata("golden/added-tokens/cases.json"));
    let cases = cases.as_object().unwrap();
    assert!(cases.len() >= 2);
    for (name, case) in cases {
        let work = scratch(&format!("added-past-{name}"));
        let d = work.join(name);
        support::copy_tree(&support::fixture(case["fixture"].as_str().unwrap()), &d);
        let id = case["id"].as_u64().unwrap();
        let token = json!({"content": case["token"], "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true});
        let edit = |file: &str, f: &dyn Fn(&mut Json)| {
            let p = d.join(file);
            let mut j: Json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            f(&mut j);
            std::fs::write(&p, serde_json::to_vec(&j).unwrap()).unwrap();
        };
        edit("tokenizer.json", &|j| {
            let mut t = token.clone();
            t["id"] = json!(id);
            j["added_tokens"].as_array_mut().unwrap().push(t);
        });
        edit("tokenizer_config.json", &|j| {
            j["added_tokens_decoder"][id.to_string()] = token.clone();
        });
        edit("config.json", &|j| {
            j["vocab_size"] = case["vocab_size"].clone()
        });
        pad_embedding(
            &d.join("model.safetensors"),
            case["embedding_rows"].as_u64().unwrap(),
        );
        let opts = HfOptions {
            outtype: ggufkit_converters::hf::OutType::F32,
            ..HfOptions::default()
        };
        match (read_hf_dir(&d, &opts), case.get("sha256")) {
            (Ok(conv), Some(want)) => {
                let out = work.join("out.gguf");
                ggufkit::write::write_model(
                    &conv.model,
                    &out,
                    &ggufkit::write::WriteOptions::default(),
                )
                .unwrap();
                assert_eq!(
                    std::fs::metadata(&out).unwrap().len(),
                    case["size"].as_u64().unwrap(),
                    "{name}"
                );
                assert_eq!(
                    &Json::from(support::sha256_file(&out)),
                    want,
                    "{name}: not the reference's bytes"
                );
            }
            (Err(e), None) => {
                let msg = e.to_string();
                let vocab_size = case["vocab_size"].as_u64().unwrap();
                for needle in [
                    format!("token id {vocab_size} is not below vocab_size {vocab_size}"),
                    format!("{:?}", case["token"].as_str().unwrap()),
                    format!("written with id {id}"),
                ] {
                    assert!(msg.contains(&needle), "{name}: {needle} not in: {msg}");
                }
            }
            (Ok(_), None) => panic!("{name}: accepted, the reference refuses it"),
            (Err(e), Some(_)) => panic!("{name}: refused, the reference accepts it: {e}"),
        }
        let _ = std::fs::remove_dir_all(&work);
    }
}

/// One case of testdata/golden/added-tokens/classes.json: its base's fixture's config.json
/// and tokenizer_config.json with the base's shared tokenizer.json (by default the llama-bpe
/// fixture's with the smollm tokenizer.json; a case may name another of the golden's
/// `bases`), `tokenizer_class` set to `class` ("none" removes it), then the case's edits (the
/// generator's format, see conformance/make_added_token_class_golden.py).
fn class_case_dir(work: &Path, golden: &Json, case: &Json, class: &str) -> PathBuf {
    let edits = &case["edits"];
    let d = work.join("model");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let base = match case.get("base").and_then(Json::as_str) {
        Some(b) => &golden["bases"][b],
        None => golden,
    };
    let fixture = support::fixture(base["fixture"].as_str().unwrap());
    let read = |p: &Path| -> Json { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
    let mut tj = read(&testdata(base["tokenizer"].as_str().unwrap()));
    let mut tc = read(&fixture.join("tokenizer_config.json"));
    let mut cf = read(&fixture.join("config.json"));
    match class {
        "none" => {
            tc.as_object_mut().unwrap().remove("tokenizer_class");
        }
        c => tc["tokenizer_class"] = json!(c),
    }
    // serde_json's objects here are sorted: keys whose order matters are written last, in
    // the edit's order.
    let mut tc_tail: Vec<(String, Json)> = Vec::new();
    for e in edits.as_array().unwrap() {
        let (op, arg) = e.as_object().unwrap().iter().next().unwrap();
        match op.as_str() {
            "tj_add" => tj["added_tokens"].as_array_mut().unwrap().push(arg.clone()),
            "tj_set" => {
                let t = tj["added_tokens"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|t| t["content"] == arg[0])
                    .unwrap();
                t[arg[1].as_str().unwrap()] = arg[2].clone();
            }
            "tc_add" => tc["added_tokens_decoder"][arg[0].as_str().unwrap()] = arg[1].clone(),
            "tc_set" => {
                tc["added_tokens_decoder"][arg[0].as_str().unwrap()][arg[1].as_str().unwrap()] =
                    arg[2].clone()
            }
            "tc_drop" => {
                tc.as_object_mut().unwrap().remove(arg.as_str().unwrap());
            }
            "tc" if arg.is_array() => {
                // [[key, value], ...]: new keys in this order, after the others.
                for kv in arg.as_array().unwrap() {
                    let k = kv[0].as_str().unwrap().to_string();
                    tc_tail.retain(|(t, _)| *t != k);
                    tc_tail.push((k, kv[1].clone()));
                }
            }
            "tc" | "config" => {
                let target = if op == "tc" { &mut tc } else { &mut cf };
                for (k, v) in arg.as_object().unwrap() {
                    target[k] = v.clone();
                }
            }
            other => panic!("unknown edit {other}"),
        }
    }
    // gguf-convert --vocab-only still reads the checkpoint's tensor list (the reference does
    // not need one): the fixture's safetensors files (and index), linked.
    let fixture_name = fixture.file_name().unwrap().to_string_lossy().to_string();
    for e in std::fs::read_dir(&fixture).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if !(name.ends_with(".safetensors") || name.ends_with(".safetensors.index.json")) {
            continue;
        }
        let st = work.join(format!("{fixture_name}-{name}"));
        if !st.exists() {
            std::fs::copy(fixture.join(&name), &st).unwrap();
        }
        std::fs::hard_link(&st, d.join(&name))
            .or_else(|_| std::fs::copy(&st, d.join(&name)).map(|_| ()))
            .unwrap();
    }
    for (k, _) in &tc_tail {
        tc.as_object_mut().unwrap().remove(k);
    }
    let mut tc_text = serde_json::to_string(&tc).unwrap();
    tc_text.pop(); // the closing brace
    for (k, v) in &tc_tail {
        if !tc_text.ends_with('{') {
            tc_text.push(',');
        }
        tc_text += &format!("{}:{}", json!(k), v);
    }
    tc_text.push('}');
    std::fs::write(d.join("tokenizer_config.json"), tc_text).unwrap();
    for (name, j) in [("tokenizer.json", &tj), ("config.json", &cf)] {
        std::fs::write(d.join(name), serde_json::to_vec(j).unwrap()).unwrap();
    }
    d
}

/// Added tokens when tokenizer.json and tokenizer_config.json disagree, per tokenizer_class
/// (testdata/golden/added-tokens/classes.json, made by
/// conformance/make_added_token_class_golden.py with the pinned reference): `--vocab-only`
/// output byte-identical to the reference's for every case and class. Where the reference
/// stops because the class's own pipeline gives a chkhsh it does not know (Qwen2Tokenizer
/// over the smollm vocabulary), the detection here must not find that hash either.
#[test]
fn added_tokens_by_tokenizer_class_as_the_reference() {
    let golden = support::read_json(&testdata("golden/added-tokens/classes.json"));
    let cases = golden["cases"].as_object().unwrap();
    assert!(cases.len() >= 10);
    let work = scratch("added-by-class");
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, case) in cases {
        for (class, want) in case["classes"].as_object().unwrap() {
            let d = class_case_dir(&work, &golden, case, class);
            let what = format!("{name} / {class}");
            if let Some(refused) = want.get("refused").and_then(Json::as_str) {
                let needle = if refused.contains("'None' is not an instance of 'bool'") {
                    // GPT2Tokenizer's ByteLevel given `"add_prefix_space": null`, or
                    // BertTokenizer's normalizer `"do_lower_case": null`.
                    Some(" is null: ".to_string())
                } else {
                    // A named token that is neither a string nor an AddedToken.
                    refused
                        .strip_prefix("TypeError: Special token ")
                        .and_then(|r| r.split(' ').next())
                        .map(|k| format!("{k:?}"))
                };
                if let Some(needle) = needle {
                    let opts = HfOptions {
                        vocab_only: true,
                        ..HfOptions::default()
                    };
                    match read_hf_dir(&d, &opts) {
                        Ok(_) => failures.push(format!("{what}: accepted, the reference refuses")),
                        Err(e) => {
                            let msg = e.to_string();
                            assert!(
                                msg.contains("tokenizer_config.json") && msg.contains(&needle),
                                "{what}: {needle} not in {msg}"
                            );
                        }
                    }
                    checked += 1;
                    continue;
                }
                assert!(
                    refused.contains("pre-tokenizer was not recognized"),
                    "{what}: a refusal this test does not know: {refused}"
                );
                let config: Json =
                    serde_json::from_slice(&std::fs::read(d.join("config.json")).unwrap()).unwrap();
                let bert = case.get("base").and_then(Json::as_str) == Some("bert");
                let req = VocabRequest {
                    dir: &ModelDir::new(&d),
                    kind: if bert {
                        VocabKind::Bert
                    } else {
                        VocabKind::Llama
                    },
                    arch: if bert { "bert" } else { "llama" },
                    hparams: &config,
                };
                match vocab_metadata_report(&req) {
                    Ok(r) => {
                        let pre = r.pre.expect("a BPE path");
                        if matches!(
                            pre.how,
                            ggufkit_converters::hf::tokenizer::PreTokenizerHow::Hash
                        ) {
                            failures.push(format!(
                                "{what}: chkhsh {} found, the reference's is unknown",
                                pre.chkhsh
                            ));
                        }
                    }
                    Err(e) => assert!(e.to_string().contains("not recognized"), "{what}: {e}"),
                }
                checked += 1;
                continue;
            }
            let opts = HfOptions {
                outtype: ggufkit_converters::hf::OutType::F32,
                vocab_only: true,
                ..HfOptions::default()
            };
            let conv = match read_hf_dir(&d, &opts) {
                Ok(c) => c,
                Err(e) => {
                    failures.push(format!("{what}: refused, the reference accepts it: {e}"));
                    continue;
                }
            };
            let out = work.join("out.gguf");
            let _ = std::fs::remove_file(&out);
            ggufkit::write::write_model(
                &conv.model,
                &out,
                &ggufkit::write::WriteOptions::default(),
            )
            .unwrap();
            // The library's writer pads a file without tensors to the alignment; the CLI (and
            // the reference) end after the metadata. Compare the reference's length, then
            // require the rest to be that padding.
            let mut bytes = std::fs::read(&out).unwrap();
            let size = want["size"].as_u64().unwrap() as usize;
            let padding_ok = bytes.len() >= size
                && bytes.len() - size < 32
                && bytes.len().is_multiple_of(32)
                && bytes[size..].iter().all(|b| *b == 0);
            bytes.truncate(size);
            std::fs::write(&out, &bytes).unwrap();
            let sha = support::sha256_file(&out);
            if want["sha256"] != sha.as_str() || !padding_ok {
                failures.push(format!("{what}: not the reference's bytes ({sha})"));
                if let Ok(keep) = std::env::var("GGUFKIT_KEEP_FAILED") {
                    let _ =
                        std::fs::copy(&out, Path::new(&keep).join(format!("{name}-{class}.gguf")));
                    let _ =
                        std::fs::create_dir_all(Path::new(&keep).join(format!("{name}-{class}")));
                    for f in ["tokenizer.json", "tokenizer_config.json", "config.json"] {
                        let _ = std::fs::copy(
                            d.join(f),
                            Path::new(&keep).join(format!("{name}-{class}")).join(f),
                        );
                    }
                }
            }
            checked += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 150, "{checked}");
}
