//! The core's readers under memory limits: inputs whose size in memory would
//! outgrow the file (a `--tensor-type-file` of millions of tiny patterns), run again in a
//! child process under `ulimit -v` so an amplification fails the test.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::time::Duration;

use ggufkit::quantize::{TensorTypeList, MAX_TENSOR_TYPE_PATTERNS};
use support::limits::{assert_memory_limited, run_under_limits};
use support::scratch;

const CHILD: &str = "GGUFKIT_HARDENING_READER_CHILD";

fn check_tensor_type_files() {
    let d = scratch("tensor-type-file");
    // 20 MB of distinct tiny patterns: each compiled regex costs kilobytes.
    let distinct = d.join("distinct.txt");
    let mut text = String::with_capacity(21 << 20);
    let mut i = 0u64;
    while text.len() < 20 << 20 {
        text.push_str(&format!("p{i}=q8_0\n"));
        i += 1;
    }
    std::fs::write(&distinct, &text).unwrap();
    drop(text);
    let e = TensorTypeList::new()
        .read_file(&distinct)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "more than {MAX_TENSOR_TYPE_PATTERNS} distinct tensor type patterns"
        )),
        "{e}"
    );
    assert!(e.contains("distinct.txt: item 16385"), "{e}");
    // 20 MB of one repeated pattern: one compiled override, first one wins.
    let repeated = d.join("repeated.txt");
    let line = "blk\\.0\\.attn_v=q8_0 ATTN_Q=q4_0\n";
    std::fs::write(&repeated, line.repeat((20 << 20) / line.len())).unwrap();
    let mut l = TensorTypeList::new();
    l.read_file(&repeated).unwrap();
    let v = l.into_vec();
    assert_eq!(v.len(), 2);
    assert_eq!(v[1].pattern, "attn_q");
    // An item without a pattern is refused as llama-quantize refuses it.
    let bad = d.join("bad.txt");
    std::fs::write(&bad, "a=q8_0 =q4_0").unwrap();
    let e = TensorTypeList::new()
        .read_file(&bad)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("item 2") && e.contains("missing tensor name"),
        "{e}"
    );
}

#[test]
fn tensor_type_files_stay_small() {
    check_tensor_type_files();
}

#[test]
fn reader_inputs_under_limits() {
    run_under_limits(
        module_path!(),
        "reader_inputs_inner",
        CHILD,
        256 * 1024,
        Duration::from_secs(120),
    );
}

#[test]
#[ignore = "run by reader_inputs_under_limits in a memory-limited child"]
fn reader_inputs_inner() {
    assert_memory_limited(CHILD);
    check_tensor_type_files();
}

// ---------------------------------------------------------------------------------------
// Files llama.cpp cannot load: `verify` reports them, `plan` (llama-quantize) refuses those
// its loader stops at.

use ggufkit::gguf::{ArrayValue, GgufFile, Value};
use ggufkit::inspect::{verify_file, verify_split_siblings};
use ggufkit::ir::Model;
use ggufkit::quantize::{plan, FileType, QuantizeOptions};
use ggufkit::write::{write_model, WriteOptions};

fn qwen2() -> Model {
    let f = GgufFile::open(&conv::golden_gguf("qwen2", "convert-f32")).unwrap();
    Model::from_gguf(&f)
}

/// Writes `m`, verifies it, and tries to plan a Q8_0 quantization of it.
fn verify_and_plan(tag: &str, m: &Model) -> (Vec<String>, Result<(), String>) {
    let dir = scratch(tag);
    let out = dir.join("m.gguf");
    write_model(m, &out, &WriteOptions::default()).unwrap();
    let f = GgufFile::open(&out).unwrap();
    let mut r = verify_file(&f);
    verify_split_siblings(&out, &f, &mut r);
    let q = plan(
        &Model::from_gguf(&f),
        &QuantizeOptions::new(FileType::parse("Q8_0").unwrap()),
    )
    .map(|_| ())
    .map_err(|e| e.to_string());
    (r.errors, q)
}

/// A change to the model, by test case.
type Edit = Box<dyn Fn(&mut Model)>;

#[test]
fn unloadable_files_fail_verify_and_quantize() {
    let (errors, q) = verify_and_plan("ok", &qwen2());
    assert!(errors.is_empty(), "{errors:?}");
    assert!(q.is_ok(), "{q:?}");

    let edits: Vec<(&str, Edit, &str, bool)> = vec![
        (
            "unknown-arch",
            Box::new(|m| m.metadata.set("general.architecture", "qwen9")),
            "unknown model architecture: 'qwen9'",
            true,
        ),
        (
            "empty-arch",
            Box::new(|m| m.metadata.set("general.architecture", "")),
            "unknown model architecture: ''",
            true,
        ),
        (
            "no-block-count",
            Box::new(|m| {
                m.metadata.remove("qwen2.block_count");
            }),
            "qwen2.block_count is missing",
            true,
        ),
        (
            "no-context-length",
            Box::new(|m| {
                m.metadata.remove("qwen2.context_length");
            }),
            "qwen2.context_length is missing",
            true,
        ),
        (
            "tokens-as-integers",
            Box::new(|m| {
                m.metadata.set(
                    "tokenizer.ggml.tokens",
                    Value::Array(ArrayValue::U32(vec![1, 2, 3])),
                )
            }),
            "tokenizer.ggml.tokens is an array of U32",
            false,
        ),
        (
            "split-count-3",
            Box::new(|m| m.metadata.set("split.count", Value::U16(3))),
            "split.count = 3",
            false,
        ),
        (
            "missing-layer-tensor",
            Box::new(|m| m.tensors.retain(|t| t.name != "blk.1.attn_q.weight")),
            "missing tensor 'blk.1.attn_q.weight'",
            false,
        ),
    ];
    for (tag, edit, needle, quantize_refuses) in edits {
        let mut m = qwen2();
        edit(&mut m);
        let (errors, q) = verify_and_plan(tag, &m);
        assert!(
            errors.iter().any(|e| e.contains(needle)),
            "{tag}: {needle:?} not in {errors:?}"
        );
        if quantize_refuses {
            let e = q.expect_err(tag);
            assert!(e.contains(needle), "{tag}: {e}");
        }
    }
}
