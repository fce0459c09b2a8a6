//! gguf-convert --mistral-format on a params.json that contradicts itself or the weights:
//! a non-zero exit, an error naming params.json, and no output file.

use std::path::Path;
use std::process::Command;

use ggufkit_testsupport::golden::read_json;
use ggufkit_testsupport::{copy_tree, fixture, scratch};

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");

#[test]
fn contradictory_params_json_writes_nothing() {
    let work = scratch("mistral-params-cli");
    for (i, (key, value, wanted)) in [
        ("n_layers", serde_json::json!(40), "n_layers is 40"),
        ("n_kv_heads", serde_json::json!(3), "n_kv_heads is 3"),
        ("dim", serde_json::json!(0), "dim is 0"),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = work.join(format!("case{i}"));
        let _ = std::fs::remove_dir_all(&dir);
        copy_tree(&fixture("mistral-spm"), &dir);
        let params = dir.join("params.json");
        let mut p = read_json(&params);
        p[key] = value;
        std::fs::write(&params, p.to_string()).unwrap();
        let out = work.join(format!("case{i}.gguf"));
        let run = Command::new(BIN)
            .arg(&dir)
            .args(["--mistral-format", "--outtype", "f32", "--outfile"])
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{key}: exit 0");
        assert!(
            stderr.contains("params.json") && stderr.contains(wanted),
            "{key}: {stderr}"
        );
        assert!(!out.exists(), "{key}: wrote {}", out.display());
        assert_no_gguf(&work);
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// No `.gguf` file (finished or partial) anywhere in `dir`.
fn assert_no_gguf(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".gguf"), "left {name} in {}", dir.display());
    }
}
