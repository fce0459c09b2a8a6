//! convert_hf_to_gguf.py's own command lines work unchanged: `--outfile` with `{ftype}`
//! templates, argparse's unique-prefix abbreviations, the flags that change nothing here, and
//! the alias binary; flags for what is not supported yet are refused, never ignored.

use ggufkit_testsupport::golden as support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");
const ALIAS: &str = env!("CARGO_BIN_EXE_convert_hf_to_gguf");

fn run(bin: &str, args: &[&str], cwd: &Path) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn the_reference_command_lines_work_unchanged() {
    let dir = scratch("reference-cli");
    let model = testdata("hf/qwen2");
    let m = model.to_str().unwrap();
    // The reference README's form, with the alias binary: --outfile and --outtype.
    let o = run(
        ALIAS,
        &[m, "--outfile", "plain.gguf", "--outtype", "q8_0"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Abbreviated flags and a templated name give the same file.
    let o = run(
        BIN,
        &[m, "--outf", "t-{ftype}-{FTYPE}.gguf", "--outt", "q8_0"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = std::fs::read(dir.join("plain.gguf")).unwrap();
    assert!(a == std::fs::read(dir.join("t-q8_0-Q8_0.gguf")).unwrap());
    // auto resolves before the template is filled; flags that change nothing are accepted.
    let o = run(
        BIN,
        &[
            m,
            "--outfile",
            "auto-{ftype}.gguf",
            "--use-temp-file",
            "--no-lazy",
            "--verbose",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.join("auto-bf16.gguf").is_file());
    // Not supported yet: refused with a usage error, nothing written.
    for flag in ["--mmproj", "--bigendian", "--remote", "--mistral-format"] {
        let o = run(BIN, &[m, "--outfile", "no.gguf", flag], &dir);
        assert_eq!(o.status.code(), Some(2), "{flag}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(flag.trim_start_matches('-')));
    }
    // A bad template or an ambiguous abbreviation is a usage error.
    for args in [
        vec![m, "--outfile", "x-{oops}.gguf"],
        vec![m, "--out", "x.gguf"],
    ] {
        let o = run(BIN, &args, &dir);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    assert!(!dir.join("no.gguf").exists());
}
