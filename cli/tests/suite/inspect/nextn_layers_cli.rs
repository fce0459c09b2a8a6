//! A GGUF whose `{arch}.nextn_predict_layers` exceeds its `{arch}.block_count` (llama.cpp's
//! loader refuses it): `gguf-inspect verify` reports it failed and `gguf-quantize` exits
//! non-zero naming the file and both values, writing nothing.

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
fn more_nextn_layers_than_blocks_is_refused() {
    let work = scratch("nextn-layers-cli");
    // GLM-4.5 MoE's conversion: 3 blocks, the last one the next-token-prediction block.
    let input = golden_gguf("glm4moe", "convert-f32");
    let ok = run(
        env!("CARGO_BIN_EXE_gguf-inspect"),
        &[Path::new("verify"), &input],
    );
    assert!(ok.status.success(), "golden file: {}", text(&ok));
    let blocks = ggufkit::gguf::GgufFile::open(&input)
        .unwrap()
        .metadata
        .get_u32("glm4moe.block_count")
        .unwrap();

    let edited = work.join("nextn-past-blocks.gguf");
    let nextn = blocks + 1;
    let o = Command::new(env!("CARGO_BIN_EXE_gguf-edit"))
        .arg(&input)
        .arg(&edited)
        .args([
            "--set",
            &format!("glm4moe.nextn_predict_layers=int:{nextn}"),
            "--force",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "gguf-edit: {}", text(&o));

    let v = run(
        env!("CARGO_BIN_EXE_gguf-inspect"),
        &[Path::new("verify"), &edited],
    );
    let out = text(&v);
    assert!(!v.status.success(), "verify exit 0: {out}");
    assert!(out.contains("FAILED"), "{out}");
    let both = format!(
        "glm4moe.nextn_predict_layers = {nextn} is more than glm4moe.block_count = {blocks}"
    );
    assert!(out.contains(&both), "{out}");

    let q = work.join("q8.gguf");
    let r = run(
        env!("CARGO_BIN_EXE_gguf-quantize"),
        &[&edited, &q, Path::new("Q8_0")],
    );
    let out = text(&r);
    assert!(!r.status.success(), "gguf-quantize exit 0: {out}");
    assert!(out.contains(&both), "{out}");
    assert!(
        out.contains("nextn-past-blocks.gguf"),
        "the file is not named: {out}"
    );
    assert!(!q.exists(), "gguf-quantize wrote {}", q.display());
    let _ = std::fs::remove_dir_all(&work);
}
