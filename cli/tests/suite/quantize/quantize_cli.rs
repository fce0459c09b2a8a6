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

/// Every flag of llama-quantize's usage (llama.cpp 0c1e570: `[--help] [--allow-requantize]
/// [--leave-output-tensor] [--pure] [--imatrix] [--include-weights] [--exclude-weights]
/// [--output-tensor-type] [--token-embedding-type] [--tensor-type] [--tensor-type-file]
/// [--prune-layers] [--keep-split] [--override-kv] [--dry-run] [--max-buffer-size]
/// model-f32.gguf [model-quant.gguf] type [nthreads]`), spelled as llama-quantize takes it,
/// and its three positional forms, are accepted; its one combination rule is enforced.
#[test]
fn every_llama_quantize_flag_and_form_is_accepted() {
    let dir = scratch("q-cli-flags");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let input = input.to_str().unwrap();
    let imatrix = testdata("golden/llama-spm/files/imatrix.gguf");
    let imatrix = imatrix.to_str().unwrap();
    let types_file = dir.join("tensor_types.txt");
    std::fs::write(&types_file, "attn_q=q8_0 ffn_down=q6_k\n").unwrap();
    let types_file = types_file.to_str().unwrap();
    let out = dir.join("out.gguf");
    let out = out.to_str().unwrap();
    let flags: &[&[&str]] = &[
        &["--allow-requantize"],
        &["--leave-output-tensor"],
        &["--pure"],
        &["--imatrix", imatrix],
        &[
            "--imatrix",
            imatrix,
            "--include-weights",
            "blk.0.attn_q.weight",
        ],
        &[
            "--imatrix",
            imatrix,
            "--exclude-weights",
            "blk.0.attn_q.weight",
        ],
        &["--output-tensor-type", "q8_0"],
        &["--token-embedding-type", "q4_0"],
        &["--tensor-type", "attn_q=q8_0"],
        &["--tensor-type-file", types_file],
        &["--prune-layers", "1"],
        &["--keep-split"],
        &["--override-kv", "general.name=str:renamed"],
        &["--max-buffer-size", "4"],
    ];
    for f in flags {
        let o = Command::new(BIN)
            .arg("--dry-run")
            .args(*f)
            .args([input, out, "Q4_K_M"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{f:?}: {err}");
    }
    // The positional forms: INPUT TYPE, INPUT OUTPUT TYPE, INPUT OUTPUT TYPE NTHREADS.
    for args in [
        vec![input, "Q4_K_M"],
        vec![input, out, "Q4_K_M"],
        vec![input, out, "Q4_K_M", "2"],
    ] {
        let o = Command::new(BIN)
            .arg("--dry-run")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {err}");
    }
    assert!(
        !std::path::Path::new(out).exists(),
        "--dry-run wrote a file"
    );
    // --help, and llama-quantize's one rule: include and exclude lists exclude each other.
    let o = Command::new(BIN).arg("--help").output().unwrap();
    assert!(o.status.success());
    let o = Command::new(BIN)
        .args(["--dry-run", "--imatrix", imatrix])
        .args(["--include-weights", "a", "--exclude-weights", "b"])
        .args([input, "Q4_K_M"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
