//! HF conversions against llama.cpp's golden manifests (`testdata/golden/<fixture>/convert-*.json`).
//!
//! Every fixture of `testdata/hf` is converted with every outtype llama.cpp was run
//! with, written with the streaming writer, and its manifest compared. While the tokenizer
//! reader returns an error the `tokenizer.*` keys (and with them the file size, hash, data
//! offset and KV count) cannot match, so the comparison covers every other KV (order, type,
//! value) and the full tensor list; once `vocab_metadata` succeeds it compares the whole
//! manifest, i.e. byte identity.

mod support;

use support::{check_fixture_counted, fixture, golden_dir, record, testdata};

fn run(name: &str) {
    let golden = golden_dir("hf_golden");
    let dir = fixture(name);
    let (problems, checked, partial) = check_fixture_counted(&dir, &golden.join(name), name);
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
    record(
        &format!("hf_golden-{name}"),
        checked,
        "golden conversions matched (whole manifests)",
        &partial,
    );
}

macro_rules! fixtures {
    ($($t:ident => $name:literal),* $(,)?) => {
        $(#[test] fn $t() { run($name); })*

        #[test]
        fn every_fixture_has_a_test() {
            let golden = golden_dir("hf_golden");
            let listed = [$($name),*];
            for e in std::fs::read_dir(testdata("hf")).unwrap().flatten() {
                if !e.path().is_dir() || !golden.join(e.file_name()).is_dir() {
                    continue;
                }
                let n = e.file_name().to_string_lossy().into_owned();
                assert!(listed.contains(&n.as_str()), "fixture {n} has no test");
            }
        }
    };
}

fixtures! {
    llama_spm => "llama-spm",
    llama_bpe => "llama-bpe",
    qwen2 => "qwen2",
    qwen3 => "qwen3",
    qwen3moe => "qwen3moe",
    gemma3 => "gemma3",
    mixtral => "mixtral",
    phi3 => "phi3",
    gpt2 => "gpt2",
    bert => "bert",
}
