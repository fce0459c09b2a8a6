//! gguf-quantize takes llama-quantize's own command lines unchanged.

mod support;

use std::process::Command;

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-quantize");

#[test]
fn llama_quantize_memory_option_is_accepted_and_changes_nothing() {
    let dir = scratch("q-cli-buffer");
    let input = testdata("gguf/llama-spm-convert-f32.gguf");
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
