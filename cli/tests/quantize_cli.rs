//! gguf-quantize takes llama-quantize's own command lines unchanged.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::process::Command;

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-quantize");

#[test]
fn llama_quantize_memory_option_is_accepted_and_changes_nothing() {
    let dir = scratch("q-cli-buffer");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let (a, b) = (dir.join("a.gguf"), dir.join("b.gguf"));
    for (args, out) in [(vec![], &a), (vec!["--max-buffer-size", "1"], &b)] {
        let o = Command::new(BIN)
            .args(&args)
            .arg(&input)
            .arg(out)
            .args(["Q4_K_M", "2"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
    // Like llama-quantize, a size that is not a positive number is refused.
    let o = Command::new(BIN)
        .args(["--max-buffer-size", "0"])
        .arg(&input)
        .arg(dir.join("c.gguf"))
        .arg("Q4_K_M")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.join("c.gguf").exists());
}

#[test]
fn completions_and_man_page_come_from_the_flag_table() {
    let out = |args: &[&str]| Command::new(BIN).args(args).output().unwrap();
    let o = out(&["--completions", "bash"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("gguf-quantize") && text.contains("--imatrix"),
        "{text}"
    );
    let o = out(&["--man"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains(".TH gguf-quantize 1"));
    assert_eq!(out(&["--completions", "tcsh"]).status.code(), Some(2));
    // The short help starts with what the tool does, not the crate's description.
    let o = out(&["-h"]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("Quantize GGUF models"));
}
