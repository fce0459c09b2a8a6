//! HF conversions of the small fixtures in `testdata/hf` against the expected manifests in
//! `testdata/golden` (llama.cpp's golden manifests).

use ggufkit_testsupport::golden as support;

use support::{check_fixture, testdata};

fn run(fixture: &str) {
    let problems = check_fixture(
        &testdata("hf").join(fixture),
        &testdata("golden").join(fixture),
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
