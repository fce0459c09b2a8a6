//! Every option that takes regular expressions compiles them under one memory budget: 400
//! patterns of `pN[a-z]{120000}` (each under the engine's own limit, 9 KB of text together)
//! are refused quickly and in bounded memory by gguf-quantize (`--tensor-type`,
//! `--tensor-type-file`), gguf-edit (`--remove-matching`) and a batch job's `tensor_type`,
//! and nothing is written.

use ggufkit_testsupport::golden::golden_gguf;
use ggufkit_testsupport::scratch;

use std::path::Path;
use std::process::{Command, Output};

/// Runs `bin args` under a 2 GiB address-space limit and a 60 s timeout.
fn limited(bin: &str, args: &[&str], cwd: &Path) -> Output {
    let script = "ulimit -v 2097152; exec timeout 60 \"$@\"";
    Command::new("bash")
        .args(["-c", script, "bash", bin])
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn huge(i: usize) -> String {
    format!("p{i}[a-z]{{120000}}")
}

#[test]
fn huge_patterns_are_refused_by_every_option_that_takes_them() {
    let work = scratch("pattern-budget");
    let src = golden_gguf("llama-spm", "convert-f32");
    let src = src.to_str().unwrap();
    let file: String = (0..400).map(|i| format!("{}=q8_0\n", huge(i))).collect();
    std::fs::write(work.join("types.txt"), &file).unwrap();
    let items: Vec<String> = (0..400).map(|i| format!("{}=q8_0", huge(i))).collect();
    let jobs = serde_json::json!({"outdir": "out", "jobs": [{"source": src, "outputs": [
        {"type": "q8_0", "tensor_type": items}]}]});
    std::fs::write(work.join("jobs.json"), jobs.to_string()).unwrap();
    let mut tensor_type: Vec<String> = Vec::new();
    for i in 0..400 {
        tensor_type.push("--tensor-type".into());
        tensor_type.push(format!("{}=q8_0", huge(i)));
    }
    let mut remove: Vec<String> = Vec::new();
    for i in 0..400 {
        remove.push("--remove-matching".into());
        remove.push(huge(i));
    }
    let tt: Vec<&str> = tensor_type.iter().map(String::as_str).collect();
    let rm: Vec<&str> = remove.iter().map(String::as_str).collect();
    let quantize = env!("CARGO_BIN_EXE_gguf-quantize");
    let edit = env!("CARGO_BIN_EXE_gguf-edit");
    let convert = env!("CARGO_BIN_EXE_gguf-convert");
    let cases: Vec<(&str, &str, Vec<&str>)> = vec![
        (
            "--tensor-type-file",
            quantize,
            vec!["--tensor-type-file", "types.txt", src, "out.gguf", "q8_0"],
        ),
        (
            "--tensor-type",
            quantize,
            [tt.clone(), vec![src, "out.gguf", "q8_0"]].concat(),
        ),
        (
            "--remove-matching",
            edit,
            [vec![src, "out.gguf"], rm.clone()].concat(),
        ),
        ("batch tensor_type", convert, vec!["--batch", "jobs.json"]),
    ];
    for (what, bin, args) in cases {
        let o = limited(bin, &args, &work);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(1..=3)),
            "{what}: {:?}\n{err}",
            o.status
        );
        assert!(err.contains("MiB compiled"), "{what}: {err}");
        assert!(!work.join("out.gguf").exists(), "{what}");
    }
    std::fs::remove_dir_all(&work).unwrap();
}
