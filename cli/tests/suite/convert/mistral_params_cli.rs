//! gguf-convert on hyperparameters that contradict themselves or the weights (a Mistral
//! params.json, an HF config.json): a non-zero exit, an error naming the file and the
//! contradiction, and no output file; `--allow-unloadable` writes what the reference writes,
//! which `gguf-inspect verify` then reports.

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

/// An HF config.json whose sizes the weights do not have: the reference writes a file
/// llama.cpp cannot load; gguf-convert refuses it unless `--allow-unloadable`.
#[test]
fn contradictory_config_json_writes_nothing() {
    const VERIFY: &str = env!("CARGO_BIN_EXE_gguf-inspect");
    let work = scratch("config-json-contradictions");
    for (i, (key, value, wanted)) in [
        (
            "hidden_size",
            serde_json::json!(512),
            "llama.embedding_length is 512",
        ),
        (
            "hidden_size",
            serde_json::json!(0),
            "llama.embedding_length is 0",
        ),
        (
            "num_key_value_heads",
            serde_json::json!(4),
            "blk.0.attn_k.weight",
        ),
        (
            "intermediate_size",
            serde_json::json!(516),
            "blk.0.ffn_down.weight",
        ),
        (
            "num_hidden_layers",
            serde_json::json!(3),
            "no tensor is in block 2",
        ),
        ("head_dim", serde_json::json!(128), "blk.0.attn_k.weight"),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = work.join(format!("case{i}")).join("llama-spm");
        let _ = std::fs::remove_dir_all(&dir);
        copy_tree(&fixture("llama-spm"), &dir);
        let config = dir.join("config.json");
        let mut c = read_json(&config);
        c[key] = value.clone();
        std::fs::write(&config, c.to_string()).unwrap();
        let out = work.join(format!("case{i}.gguf"));
        let convert = |extra: &[&str]| {
            Command::new(BIN)
                .arg(&dir)
                .args(["--outtype", "f32", "--outfile"])
                .arg(&out)
                .args(extra)
                .output()
                .unwrap()
        };
        let run = convert(&[]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        let case = format!("{key}={value}");
        assert!(!run.status.success(), "{case}: exit 0");
        assert!(
            stderr.contains("config.json")
                && stderr.contains("contradict")
                && stderr.contains(wanted),
            "{case}: {stderr}"
        );
        assert!(!out.exists(), "{case}: wrote {}", out.display());
        assert_no_gguf(&work);
        let run = convert(&["--allow-unloadable"]);
        assert!(
            run.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let verify = Command::new(VERIFY)
            .arg("verify")
            .arg(&out)
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&verify.stdout).into_owned()
            + &String::from_utf8_lossy(&verify.stderr);
        assert!(!verify.status.success(), "{case}: verify passed: {report}");
        assert!(report.contains(wanted), "{case}: {report}");
        std::fs::remove_file(&out).unwrap();
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
