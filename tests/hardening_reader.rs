//! Hardening II (issue 22), the core's reader side: inputs whose size in memory would
//! outgrow the file (a `--tensor-type-file` of millions of tiny patterns), run again in a
//! child process under `ulimit -v` so an amplification fails the test.

mod support;

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
    let e = TensorTypeList::new().read_file(&distinct).unwrap_err();
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
    let e = TensorTypeList::new().read_file(&bad).unwrap_err();
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
