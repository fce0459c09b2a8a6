//! A MoE GGUF whose `{arch}.expert_used_count` exceeds `{arch}.expert_count` (llama.cpp's
//! loader refuses it): `gguf-inspect verify` reports it failed, `gguf-quantize` exits non-zero
//! and writes nothing.

use std::path::Path;
use std::process::{Command, Output};

use ggufkit_testsupport::golden::golden_gguf;
use ggufkit_testsupport::scratch;

fn run(bin: &str, args: &[&Path]) -> Output {
    Command::new(bin).args(args).output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn more_experts_used_than_present_is_refused() {
    let work = scratch("expert-counts-cli");
    let input = golden_gguf("mixtral", "convert-f32");
    let edited = work.join("used-9-of-4.gguf");
    let o = Command::new(env!("CARGO_BIN_EXE_gguf-edit"))
        .arg(&input)
        .arg(&edited)
        .args([
            "--set",
            "llama.expert_count=int:4",
            "--set",
            "llama.expert_used_count=int:9",
            "--force",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "gguf-edit: {}", text(&o));

    // The unedited file verifies: what fails below is the edit.
    let ok = run(
        env!("CARGO_BIN_EXE_gguf-inspect"),
        &[Path::new("verify"), &input],
    );
    assert!(ok.status.success(), "golden file: {}", text(&ok));

    let v = run(
        env!("CARGO_BIN_EXE_gguf-inspect"),
        &[Path::new("verify"), &edited],
    );
    let out = text(&v);
    assert!(!v.status.success(), "verify exit 0: {out}");
    assert!(out.contains("FAILED"), "{out}");
    assert!(out.contains("expert_used_count"), "{out}");

    let q = work.join("q8.gguf");
    let r = run(
        env!("CARGO_BIN_EXE_gguf-quantize"),
        &[&edited, &q, Path::new("Q8_0")],
    );
    let out = text(&r);
    assert!(!r.status.success(), "gguf-quantize exit 0: {out}");
    assert!(out.contains("expert_used_count"), "{out}");
    assert!(!q.exists(), "gguf-quantize wrote {}", q.display());
    let _ = std::fs::remove_dir_all(&work);
}
