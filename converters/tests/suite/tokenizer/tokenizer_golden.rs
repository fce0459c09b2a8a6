//! Tokenizer metadata against llama.cpp's converter (0c1e570).
//!
//! * `every_fixture_matches_golden`: the ten HF fixtures of `testdata/hf`, every key
//!   `vocab_metadata` returns compared (order, type, value; arrays > 16 items by sha256) with the
//!   `tokenizer.*` entries of `testdata/golden/<fixture>/convert-f32.json`.
//! * The testdata copies (llama-spm, qwen2, phi3) against `tokenizer_expected.json` (the same
//!   golden entries), error cases, hostile `tokenizer.model` inputs and the structural
//!   pre-tokenizer fallback.

use std::path::{Path, PathBuf};

use ggufkit::manifest::kv_entry;
use ggufkit_converters::hf::tokenizer::{
    detect_pre_tokenizer, proto, vocab_metadata, vocab_metadata_report, PreTokenizerHow, VocabKind,
    VocabPath, VocabRequest,
};
use ggufkit_converters::hf::ModelDir;
use ggufkit_converters::ConvertError;
use serde_json::{json, Value as Json};

/// The fixtures, with the kind and architecture their converter class uses.
const FIXTURES: [(&str, VocabKind, &str); 10] = [
    ("llama-spm", VocabKind::Llama, "llama"),
    ("llama-bpe", VocabKind::Llama, "llama"),
    ("mixtral", VocabKind::Llama, "llama"),
    ("qwen2", VocabKind::Qwen2, "qwen2"),
    ("qwen3", VocabKind::Qwen2, "qwen3"),
    // Qwen3MoeModel derives from Qwen2MoeModel, whose set_vocab is TextModel's GPT-2 path.
    ("qwen3moe", VocabKind::Gpt2, "qwen3moe"),
    ("gemma3", VocabKind::Gemma, "gemma3"),
    ("phi3", VocabKind::Phi3, "phi3"),
    ("gpt2", VocabKind::Gpt2, "gpt2"),
    ("bert", VocabKind::Bert, "bert"),
];

use ggufkit_testsupport::{paths, record as record_file};

/// The HF fixtures (`testdata/hf`), each materialized under its own name.
struct Fixtures;

impl Fixtures {
    fn join(&self, name: &str) -> PathBuf {
        paths::fixture(name)
    }
}

/// `(testdata/golden, the fixtures)`; both are part of the repository.
fn shared(test: &str) -> (PathBuf, Fixtures) {
    (paths::golden_dir(test), Fixtures)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ggufkit-tok-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn copy_dir(from: &Path, to: &Path, skip: &[&str]) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if e.path().is_file() && !n.ends_with(".safetensors") && !skip.contains(&n.as_ref()) {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

fn read_json(p: &Path) -> Json {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The raw config.json as hparams (every fixture states the values the tokenizer reads; a
/// converter passes config.json merged with the transformers defaults).
fn request_keys(dir: &Path, kind: VocabKind, arch: &str) -> Result<Vec<Json>, ConvertError> {
    let hparams = read_json(&dir.join("config.json"));
    let keys = vocab_metadata(&VocabRequest {
        dir: &ModelDir::new(dir),
        kind,
        arch,
        hparams: &hparams,
    })?;
    Ok(keys.iter().map(|(k, v)| kv_entry(k, v)).collect())
}

fn short(v: &Json) -> String {
    let s = v.to_string();
    if s.len() > 160 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(150).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

/// Entry-by-entry differences.
fn diff(ours: &[Json], golden: &[Json]) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..ours.len().max(golden.len()) {
        match (ours.get(i), golden.get(i)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) => {
                out.push(format!("#{i}: ours {} / golden {}", short(a), short(b)))
            }
            (Some(a), None) => out.push(format!("#{i}: extra {}", short(a))),
            (None, Some(b)) => out.push(format!("#{i}: missing {}", short(b))),
            (None, None) => {}
        }
    }
    out
}

fn golden_tokenizer_entries(manifest: &Path) -> Vec<Json> {
    read_json(manifest)["kv"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e[0].as_str().unwrap().starts_with("tokenizer."))
        .cloned()
        .collect()
}

#[test]
fn every_fixture_matches_golden() {
    let (golden, fixtures) = shared("every_fixture_matches_golden");
    let mut failures = Vec::new();
    for (name, kind, arch) in FIXTURES {
        let want = golden_tokenizer_entries(&golden.join(name).join("convert-f32.json"));
        assert!(
            !want.is_empty(),
            "{name}: golden manifest has no tokenizer keys"
        );
        match request_keys(&fixtures.join(name), kind, arch) {
            Ok(ours) => {
                let d = diff(&ours, &want);
                if d.is_empty() {
                    eprintln!("{name}: {} tokenizer keys match", want.len());
                } else {
                    failures.push(format!("{name}:\n  {}", d.join("\n  ")));
                }
            }
            Err(e) => failures.push(format!("{name}: error: {e}")),
        }
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    record_file::record(
        "tokenizer_golden",
        FIXTURES.len(),
        "fixtures' tokenizer keys matched llama.cpp's",
        &[],
    );
}

#[test]
fn testdata_fixtures_match_expected() {
    let expected: Json = serde_json::from_str(include_str!("tokenizer_expected.json")).unwrap();
    for (name, kind, arch) in [
        ("llama-spm", VocabKind::Llama, "llama"),
        ("qwen2", VocabKind::Qwen2, "qwen2"),
        ("phi3", VocabKind::Phi3, "phi3"),
    ] {
        let dir = paths::testdata("hf").join(name);
        let ours = request_keys(&dir, kind, arch).unwrap();
        let want = expected[name].as_array().unwrap();
        let d = diff(&ours, want);
        assert!(d.is_empty(), "{name}:\n  {}", d.join("\n  "));
    }
}

#[test]
fn path_and_detection_are_reported() {
    let dir = paths::testdata("hf/qwen2");
    let hparams = read_json(&dir.join("config.json"));
    let r = vocab_metadata_report(&VocabRequest {
        dir: &ModelDir::new(&dir),
        kind: VocabKind::Qwen2,
        arch: "qwen2",
        hparams: &hparams,
    })
    .unwrap();
    assert_eq!(r.path, VocabPath::SentencePiece);
    assert!(r.pre.is_none());
}

/// A copy of testdata/hf/llama-spm without its weights, for the error cases.
fn llama_spm_copy(name: &str) -> PathBuf {
    let d = scratch(name);
    copy_dir(&paths::testdata("hf/llama-spm"), &d, &[]);
    d
}

#[test]
fn malformed_tokenizer_model_is_a_clear_error() {
    let d = llama_spm_copy("badproto");
    let cases: [(&[u8], &str); 4] = [
        (b"this is not a protobuf at all", "tokenizer.model"),
        (&[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f], "remain"),
        (&[0x0b, 0x00], "group"),
        (&[], "no pieces"),
    ];
    for (bytes, words) in cases {
        std::fs::write(d.join("tokenizer.model"), bytes).unwrap();
        let e = request_keys(&d, VocabKind::Llama, "llama").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, ConvertError::Format { .. }), "{msg}");
        assert!(msg.contains("tokenizer.model"), "{msg}");
        assert!(msg.contains(words), "{msg} (wanted {words})");
    }
}

#[test]
fn truncated_and_corrupted_tokenizer_model_never_panics() {
    let good = std::fs::read(paths::testdata("hf/llama-spm/tokenizer.model")).unwrap();
    let full = proto::parse_model(&good).unwrap();
    assert_eq!(full.pieces.len(), 1000);
    let mut errors = 0;
    for cut in 0..good.len() {
        match proto::parse_model(&good[..cut]) {
            Ok(m) => assert!(m.pieces.len() <= full.pieces.len()),
            Err(_) => errors += 1,
        }
    }
    assert!(
        errors > good.len() / 2,
        "most cuts must be errors ({errors})"
    );
    // Every single-byte corruption: decode or fail, never panic, never more pieces than bytes.
    let mut bad = good.clone();
    for i in 0..good.len() {
        for x in [0x00u8, 0xff, 0x80, 0x0a] {
            bad[i] = x;
            if let Ok(m) = proto::parse_model(&bad) {
                assert!(m.pieces.len() <= bad.len() / 2);
            }
        }
        bad[i] = good[i];
    }
}

#[test]
fn hostile_vocab_size_is_refused_not_allocated() {
    let d = llama_spm_copy("hugevocab");
    let hparams = json!({"vocab_size": 1u64 << 40});
    let e = vocab_metadata(&VocabRequest {
        dir: &ModelDir::new(&d),
        kind: VocabKind::Llama,
        arch: "llama",
        hparams: &hparams,
    })
    .unwrap_err();
    assert!(e.to_string().contains("vocab_size"), "{e}");
    let hparams = json!({"vocab_size": "many"});
    assert!(vocab_metadata(&VocabRequest {
        dir: &ModelDir::new(&d),
        kind: VocabKind::Llama,
        arch: "llama",
        hparams: &hparams,
    })
    .is_err());
}

/// GPT-2's byte → char table (`bytes_to_unicode`).
fn byte_level_alphabet() -> Vec<String> {
    let mut out = Vec::new();
    let mut n = 0u32;
    for b in 0u32..256 {
        let printable =
            (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b);
        let c = if printable {
            char::from_u32(b).unwrap()
        } else {
            n += 1;
            char::from_u32(255 + n).unwrap()
        };
        out.push(c.to_string());
    }
    out
}

/// A small byte-level BPE tokenizer.json with the given pre-tokenizer.
fn synthetic_tokenizer(dir: &Path, pre_tokenizer: Json) {
    let mut vocab = serde_json::Map::new();
    vocab.insert("<|endoftext|>".into(), json!(0));
    for (i, c) in byte_level_alphabet().into_iter().enumerate() {
        vocab.insert(c, json!(i + 1));
    }
    vocab.insert("Ġt".into(), json!(257));
    let tj = json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [{"id": 0, "content": "<|endoftext|>", "single_word": false, "lstrip": false,
                          "rstrip": false, "normalized": false, "special": true}],
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                  "ignore_merges": false, "vocab": vocab, "merges": [["Ġ", "t"]]}
    });
    std::fs::write(dir.join("tokenizer.json"), tj.to_string()).unwrap();
    std::fs::write(
        dir.join("tokenizer_config.json"),
        json!({"tokenizer_class": "GPT2Tokenizer", "eos_token": "<|endoftext|>",
               "clean_up_tokenization_spaces": false})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("config.json"),
        json!({"vocab_size": 260}).to_string(),
    )
    .unwrap();
}

#[test]
fn structure_recognises_an_unhashed_smollm_pipeline() {
    let d = scratch("synth-smollm");
    synthetic_tokenizer(
        &d,
        json!({"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": true},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]}),
    );
    let m = detect_pre_tokenizer(&d).unwrap();
    assert_eq!(m.name, "smollm");
    assert!(
        matches!(
            m.how,
            PreTokenizerHow::Structure {
                rule: "digits-bytelevel",
                ..
            }
        ),
        "{m}"
    );
    // The whole GPT-2 path works with it, padding ids 258, 259 as [PAD<i>].
    let keys = request_keys(&d, VocabKind::Gpt2, "gpt2").unwrap();
    assert_eq!(keys[0], json!(["tokenizer.ggml.model", "STRING", "gpt2"]));
    assert_eq!(keys[1], json!(["tokenizer.ggml.pre", "STRING", "smollm"]));
    assert_eq!(keys[2][2]["len"], json!(260));
    assert_eq!(
        keys[4],
        json!(["tokenizer.ggml.merges", "ARRAY",
        {"array_type": "STRING", "len": 1, "values": ["Ġ t"]}])
    );
}

#[test]
fn unknown_pre_tokenizer_is_a_clear_error() {
    let d = scratch("synth-unknown");
    synthetic_tokenizer(&d, json!({"type": "Whitespace"}));
    let e = detect_pre_tokenizer(&d).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("not recognized"), "{msg}");
    assert!(msg.contains("chkhsh"), "{msg}");
    assert!(msg.contains("Whitespace"), "{msg}");
    assert!(msg.contains("tokenizer.json"), "{msg}");
    assert!(request_keys(&d, VocabKind::Gpt2, "gpt2").is_err());
}

#[test]
fn unreadable_tokenizer_json_is_a_format_error() {
    let d = scratch("badjson");
    std::fs::write(d.join("config.json"), b"{}").unwrap();
    std::fs::write(d.join("tokenizer.json"), b"{\"model\": ").unwrap();
    let e = request_keys(&d, VocabKind::Gpt2, "gpt2").unwrap_err();
    match &e {
        ConvertError::BadJson {
            path, line, column, ..
        } => {
            assert_eq!(path, &d.join("tokenizer.json"), "{e}");
            assert_eq!((*line, *column), (1, 10), "{e}");
        }
        _ => panic!("{e}"),
    }
    std::fs::write(
        d.join("tokenizer.json"),
        b"{\"model\": {\"type\": \"Nope\"}}",
    )
    .unwrap();
    let e = request_keys(&d, VocabKind::Gpt2, "gpt2").unwrap_err();
    assert!(e.to_string().contains("tokenizer.json"), "{e}");
}

#[test]
fn perturbed_llama_bpe_is_recognised_by_structure() {
    let (_, fixtures) = shared("perturbed_llama_bpe_is_recognised_by_structure");
    let src = fixtures.join("llama-bpe");
    let d = scratch("perturbed-bpe");
    copy_dir(&src, &d, &["tokenizer.json"]);
    // Swap the ids of "3" and "4": a "fine-tuned" vocabulary with the same pipeline.
    let mut tj = read_json(&src.join("tokenizer.json"));
    let vocab = tj["model"]["vocab"].as_object_mut().unwrap();
    let (three, four) = (vocab["3"].clone(), vocab["4"].clone());
    vocab.insert("3".into(), four);
    vocab.insert("4".into(), three);
    std::fs::write(d.join("tokenizer.json"), tj.to_string()).unwrap();

    let original = detect_pre_tokenizer(&src).unwrap();
    assert_eq!(original.name, "smollm");
    assert_eq!(original.how, PreTokenizerHow::Hash);

    let m = detect_pre_tokenizer(&d).unwrap();
    assert_ne!(
        m.chkhsh, original.chkhsh,
        "the perturbation must change the hash"
    );
    assert_eq!(m.name, "smollm");
    assert!(
        matches!(
            m.how,
            PreTokenizerHow::Structure {
                rule: "digits-bytelevel",
                ..
            }
        ),
        "{m}"
    );
    let keys = request_keys(&d, VocabKind::Llama, "llama").unwrap();
    assert!(keys.contains(&json!(["tokenizer.ggml.pre", "STRING", "smollm"])));
}

#[test]
fn bert_from_vocab_txt_matches_tokenizer_json() {
    let (golden, fixtures) = shared("bert_from_vocab_txt_matches_tokenizer_json");
    let d = scratch("bert-vocab-txt");
    copy_dir(&fixtures.join("bert"), &d, &["tokenizer.json"]);
    let m = detect_pre_tokenizer(&d).unwrap();
    assert_eq!(m.name, "jina-v2-en");
    assert_eq!(m.how, PreTokenizerHow::Hash);
    let ours = request_keys(&d, VocabKind::Bert, "bert").unwrap();
    let want = golden_tokenizer_entries(&golden.join("bert/convert-f32.json"));
    // Without tokenizer.json there is no post-processor or added-token table to read, so the
    // special ids come from config.json only; the vocabulary itself must be identical.
    for k in [
        "tokenizer.ggml.model",
        "tokenizer.ggml.pre",
        "tokenizer.ggml.tokens",
        "tokenizer.ggml.token_type",
    ] {
        let a = ours.iter().find(|e| e[0] == k).unwrap();
        let b = want.iter().find(|e| e[0] == k).unwrap();
        assert_eq!(a, b, "{k}");
    }
}

/// The fixtures store merges as `[a, b]` pairs (transformers >= 4.45); the older `"a b"` string
/// form must give the same `tokenizer.ggml.merges`.
#[test]
fn merges_in_string_form_give_the_same_keys() {
    let (golden, fixtures) = shared("merges_in_string_form_give_the_same_keys");
    let src = fixtures.join("gpt2");
    let d = scratch("string-merges");
    copy_dir(&src, &d, &["tokenizer.json"]);
    let mut tj = read_json(&src.join("tokenizer.json"));
    let merges = tj["model"]["merges"].as_array().unwrap();
    assert!(merges[0].is_array(), "the fixture uses the [a, b] form");
    let strings: Vec<Json> = merges
        .iter()
        .map(|m| {
            json!(format!(
                "{} {}",
                m[0].as_str().unwrap(),
                m[1].as_str().unwrap()
            ))
        })
        .collect();
    tj["model"]["merges"] = Json::Array(strings);
    std::fs::write(d.join("tokenizer.json"), tj.to_string()).unwrap();
    let ours = request_keys(&d, VocabKind::Gpt2, "gpt2").unwrap();
    let want = golden_tokenizer_entries(&golden.join("gpt2/convert-f32.json"));
    let d = diff(&ours, &want);
    assert!(d.is_empty(), "{}", d.join("\n"));
}

fn keys_with(dir: &Path, kind: VocabKind, arch: &str, hparams: Json) -> Vec<(String, Json)> {
    vocab_metadata(&VocabRequest {
        dir: &ModelDir::new(dir),
        kind,
        arch,
        hparams: &hparams,
    })
    .unwrap()
    .iter()
    .map(|(k, v)| (k.clone(), kv_entry(k, v)[2].clone()))
    .collect()
}

#[test]
fn llama_without_tokenizer_model_takes_the_llama_hf_path() {
    let d = llama_spm_copy("llama-hf");
    std::fs::remove_file(d.join("tokenizer.model")).unwrap();
    let hparams = read_json(&d.join("config.json"));
    let r = vocab_metadata_report(&VocabRequest {
        dir: &ModelDir::new(&d),
        kind: VocabKind::Llama,
        arch: "llama",
        hparams: &hparams,
    })
    .unwrap();
    assert_eq!(r.path, VocabPath::LlamaHf);
    let get = |k: &str| {
        r.keys
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    use ggufkit::gguf::{ArrayValue, Value};
    let Value::Array(ArrayValue::String(tokens)) = get("tokenizer.ggml.tokens") else {
        panic!()
    };
    let Value::Array(ArrayValue::I32(types)) = get("tokenizer.ggml.token_type") else {
        panic!()
    };
    let Value::Array(ArrayValue::F32(scores)) = get("tokenizer.ggml.scores") else {
        panic!()
    };
    // The base vocabulary only (no [PAD] rows), the SentencePiece pieces in the same order.
    let spm = proto::parse_model(
        &std::fs::read(paths::testdata("hf/llama-spm/tokenizer.model")).unwrap(),
    )
    .unwrap();
    assert_eq!(tokens.len(), 1000);
    for (i, p) in spm.pieces.iter().enumerate() {
        assert_eq!(
            tokens.get(i).and_then(|t| t.as_str()),
            Some(p.piece.as_str()),
            "token {i}"
        );
        let want = if p.piece.starts_with("<0x") {
            6
        } else if i < 3 {
            3 // <unk> <s> </s>: named special tokens, CONTROL
        } else {
            1
        };
        assert_eq!(types[i], want, "type of {i} {:?}", p.piece);
    }
    assert!(scores.iter().all(|s| *s == -1000.0));
    assert_eq!(get("tokenizer.ggml.model").as_str(), Some("llama"));
}

#[test]
fn codellama_and_gemma_extra_special_vocabularies() {
    let d = llama_spm_copy("codellama");
    let keys = keys_with(&d, VocabKind::Llama, "llama", json!({"vocab_size": 32016}));
    let names: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
    let n = names.len();
    assert_eq!(names[n - 2], "tokenizer.chat_template");
    assert_eq!(
        keys[n - 1],
        ("tokenizer.ggml.eot_token_id".into(), json!(32010))
    );
    assert_eq!(keys[2].1["len"], json!(32016));
    assert_eq!(
        names
            .iter()
            .filter(|k| **k == "tokenizer.ggml.add_bos_token")
            .count(),
        1,
        "rewritten keys keep one position"
    );

    let gemma = ggufkit_converters::hf::vocab_kind("GemmaForCausalLM").unwrap();
    let keys = keys_with(&d, gemma, "gemma", json!({"vocab_size": 1024}));
    let n = keys.len();
    assert_eq!(
        keys[n - 2],
        ("tokenizer.ggml.eot_token_id".into(), json!(107))
    );
    assert_eq!(
        keys[n - 1],
        ("tokenizer.ggml.add_space_prefix".into(), json!(false))
    );
    let keys = keys_with(&d, VocabKind::Gemma, "gemma2", json!({"vocab_size": 1024}));
    assert!(!keys.iter().any(|(k, _)| k == "tokenizer.ggml.eot_token_id"));
}

#[test]
fn chat_template_files() {
    let d = llama_spm_copy("jinja");
    let mut tc = read_json(&d.join("tokenizer_config.json"));
    tc.as_object_mut().unwrap().remove("chat_template");
    std::fs::write(d.join("tokenizer_config.json"), tc.to_string()).unwrap();
    let hp = json!({"vocab_size": 1024});
    let last = |keys: &[(String, Json)]| keys.last().cloned().unwrap();

    // No template anywhere: no key.
    let keys = keys_with(&d, VocabKind::Llama, "llama", hp.clone());
    assert!(!keys
        .iter()
        .any(|(k, _)| k.starts_with("tokenizer.chat_template")));

    // chat_template.json, then chat_template.jinja (read in text mode: CRLF -> LF) wins over it.
    std::fs::write(
        d.join("chat_template.json"),
        r#"{"chat_template": "from json"}"#,
    )
    .unwrap();
    let keys = keys_with(&d, VocabKind::Llama, "llama", hp.clone());
    assert_eq!(
        last(&keys),
        ("tokenizer.chat_template".into(), json!("from json"))
    );
    std::fs::write(d.join("chat_template.jinja"), "{{ a }}\r\n{{ b }}").unwrap();
    let keys = keys_with(&d, VocabKind::Llama, "llama", hp.clone());
    assert_eq!(
        last(&keys),
        ("tokenizer.chat_template".into(), json!("{{ a }}\n{{ b }}"))
    );

    // additional_chat_templates/*.jinja: named templates, the list, then the default.
    std::fs::create_dir(d.join("additional_chat_templates")).unwrap();
    std::fs::write(d.join("additional_chat_templates/tool-use.jinja"), "T").unwrap();
    let keys = keys_with(&d, VocabKind::Llama, "llama", hp);
    let n = keys.len();
    assert_eq!(
        keys[n - 3],
        ("tokenizer.chat_template.tool_use".into(), json!("T"))
    );
    assert_eq!(
        keys[n - 2],
        (
            "tokenizer.chat_templates".into(),
            json!({"array_type": "STRING", "len": 1, "values": ["tool_use"]})
        )
    );
    assert_eq!(
        keys[n - 1],
        ("tokenizer.chat_template".into(), json!("{{ a }}\n{{ b }}"))
    );
}
