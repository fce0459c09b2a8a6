//! HF conversions of the small fixtures in `testdata/hf` against the expected manifests in
//! `testdata/hf-expected` (copies of llama.cpp's golden manifests): runs without `shared/`.

mod support;

use support::{check_fixture, testdata};

fn run(fixture: &str) {
    let problems = check_fixture(
        &testdata("hf").join(fixture),
        &testdata("hf-expected").join(fixture),
        &format!("core-{fixture}"),
    );
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn llama_spm() {
    run("llama-spm");
}

#[test]
fn qwen2() {
    run("qwen2");
}

#[test]
fn phi3() {
    run("phi3");
}
