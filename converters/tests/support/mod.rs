//! Shared helpers of the converters' integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

#[path = "../../../tests/support/limits.rs"]
pub mod limits;
#[path = "../../../tests/support/paths.rs"]
mod paths;
#[allow(unused_imports)]
pub use paths::{golden_dir, root, scratch, testdata};

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use ggufkit::write::{write_model, WriteOptions};
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use serde_json::Value as Json;

/// The HuggingFace fixtures of `../shared/fixtures/hf` that the golden data covers.
pub const FIXTURES: [&str; 10] = [
    "llama-spm",
    "llama-bpe",
    "qwen2",
    "qwen3",
    "qwen3moe",
    "gemma3",
    "mixtral",
    "phi3",
    "gpt2",
    "bert",
];

/// llama-quantize target types with no quantizer yet (none: every ftype is supported).
pub const NOT_YET: &[&str] = &[];

/// Converts `dir` with `outtype`, writes the GGUF into `scratch`, and returns its manifest
/// and, when the tokenizer could not be converted, why.
pub fn convert_manifest(dir: &Path, outtype: OutType, scratch: &Path) -> (Json, Option<String>) {
    let opts = HfOptions {
        outtype,
        allow_missing_vocab: true,
        ..HfOptions::default()
    };
    let conv = read_hf_dir(dir, &opts)
        .unwrap_or_else(|e| panic!("{}: conversion failed: {e}", dir.display()));
    let out = scratch.join(&conv.default_file_name);
    write_model(&conv.model, &out, &WriteOptions::default())
        .unwrap_or_else(|e| panic!("{}: writing failed: {e}", out.display()));
    let file = GgufFile::open(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let m = manifest(&file, &out, None);
    let _ = std::fs::remove_file(&out);
    (m, conv.vocab_error)
}

/// Differences between our manifest and the golden one. With `full`, the whole manifest
/// (llama.cpp's bytes); without, everything except what the tokenizer keys decide: the
/// non-`tokenizer.*` KVs in order and the complete tensor list (names, types, shapes,
/// offsets, sizes, hashes).
pub fn compare(ours: &Json, golden: &Json, full: bool) -> Vec<String> {
    if full {
        return diff_manifests(ours, golden);
    }
    let mut d = Vec::new();
    let kvs = |m: &Json| -> Vec<Json> {
        m["kv"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|e| !e[0].as_str().unwrap_or_default().starts_with("tokenizer."))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (kvs(ours), kvs(golden));
    for i in 0..a.len().max(b.len()) {
        if a.get(i) != b.get(i) {
            d.push(format!(
                "kv[{i}]: ours {} vs golden {}",
                a.get(i).map_or("(none)".into(), Json::to_string),
                b.get(i).map_or("(none)".into(), Json::to_string)
            ));
        }
    }
    if ours["n_tensors"] != golden["n_tensors"] {
        d.push(format!(
            "n_tensors: ours {} vs golden {}",
            ours["n_tensors"], golden["n_tensors"]
        ));
    }
    let empty = Vec::new();
    let (a, b) = (
        ours["tensors"].as_array().unwrap_or(&empty),
        golden["tensors"].as_array().unwrap_or(&empty),
    );
    for i in 0..a.len().max(b.len()) {
        if a.get(i) != b.get(i) {
            d.push(format!(
                "tensors[{i}]: ours {} vs golden {}",
                a.get(i).map_or("(none)".into(), Json::to_string),
                b.get(i).map_or("(none)".into(), Json::to_string)
            ));
        }
    }
    d
}

/// Reads a JSON file.
pub fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The outtypes a fixture has golden conversions for (`convert-<t>.json`).
pub fn golden_outtypes(dir: &Path) -> Vec<(String, OutType)> {
    let mut v: Vec<(String, OutType)> = ["f32", "f16", "bf16", "q8_0", "tq1_0", "tq2_0"]
        .iter()
        .filter(|t| dir.join(format!("convert-{t}.json")).is_file())
        .map(|t| (t.to_string(), OutType::parse(t).unwrap()))
        .collect();
    v.sort_by_key(|(t, _)| t.clone());
    v
}

/// Converts `fixture` for every golden outtype in `expected` and returns all differences.
pub fn check_fixture(fixture: &Path, expected: &Path, tag: &str) -> Vec<String> {
    let scratch = scratch(tag);
    let mut problems = Vec::new();
    let types = golden_outtypes(expected);
    assert!(
        !types.is_empty(),
        "no golden conversions in {}",
        expected.display()
    );
    for (t, ty) in types {
        let golden = read_json(&expected.join(format!("convert-{t}.json")));
        let (ours, vocab_error) = convert_manifest(fixture, ty, &scratch);
        let full = vocab_error.is_none();
        let diffs = compare(&ours, &golden, full);
        eprintln!(
            "{tag} {t}: {} ({})",
            if diffs.is_empty() {
                "match"
            } else {
                "MISMATCH"
            },
            if full {
                "full manifest"
            } else {
                "tokenizer keys skipped: tokenizer not converted"
            }
        );
        problems.extend(diffs.into_iter().map(|d| format!("{tag} {t}: {d}")));
    }
    // `--outtype auto` gave a file identical to one of the variants (status.json).
    let status = expected.join("status.json");
    if status.is_file() {
        let same = read_json(&status)["convert-auto"]["identical_to"][0]
            .as_str()
            .map(str::to_string);
        if let Some(v) = same {
            let golden = read_json(&expected.join(format!("{v}.json")));
            let (ours, vocab_error) = convert_manifest(fixture, OutType::Auto, &scratch);
            let diffs = compare(&ours, &golden, vocab_error.is_none());
            eprintln!(
                "{tag} auto (= {v}): {}",
                if diffs.is_empty() {
                    "match"
                } else {
                    "MISMATCH"
                }
            );
            problems.extend(diffs.into_iter().map(|d| format!("{tag} auto: {d}")));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    problems
}

/// A safetensors file: `(name, dtype, shape, data)` in order, data concatenated.
pub fn safetensors(tensors: &[(&str, &str, &[u64], Vec<u8>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let begin = data.len();
        data.extend_from_slice(bytes);
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [begin, data.len()]}),
        );
    }
    let h = serde_json::to_vec(&Json::Object(header)).unwrap();
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&data);
    out
}

/// Little-endian f32 bytes.
pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A scratch model directory with `config.json` and the given files.
pub fn model_dir(tag: &str, config: &str, files: &[(&str, Vec<u8>)]) -> PathBuf {
    let d = scratch(tag);
    std::fs::write(d.join("config.json"), config).unwrap();
    for (name, bytes) in files {
        std::fs::write(d.join(name), bytes).unwrap();
    }
    d
}
