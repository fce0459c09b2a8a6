//! The command lines llama.cpp documents (its quantize README's examples, the big-endian
//! conversion of docs/build-s390x.md, the conversion example with a local directory) and
//! convert_hf_to_gguf.py's own options (`--vocab-only`, `--model-name`, `--metadata FILE`,
//! `--split-max-tensors`, `--split-max-size`, `--no-tensor-first-split`, default file names
//! with each), run unchanged against `convert_hf_to_gguf` and `gguf-quantize`: the same exit
//! status and the same files, byte for byte, as the reference gave
//! (testdata/golden/cli/cases.json, made by conformance/make_cli_golden.py).

use ggufkit_testsupport::golden::{copy_tree, read_json, scratch, sha256_file, testdata};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const CONVERT: &str = env!("CARGO_BIN_EXE_convert_hf_to_gguf");
const QUANTIZE: &str = env!("CARGO_BIN_EXE_gguf-quantize");

fn files(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out
}

fn run(tool: &str, args: &[&str], cwd: &Path) -> std::process::Output {
    let bin = if tool == "convert" { CONVERT } else { QUANTIZE };
    Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The working directory every case starts from, made with our own converter (its output
/// for this fixture equals the reference's: the golden suites check it).
fn inputs(root: &Path) -> PathBuf {
    let dir = root.join("inputs");
    copy_tree(&testdata("hf/llama-spm"), &dir.join("llama-spm"));
    for (name, outtype) in [
        ("input-model-f32.gguf", "f32"),
        ("llama-spm-bf16.gguf", "bf16"),
    ] {
        let o = run(
            "convert",
            &["llama-spm", "--outtype", outtype, "--outfile", name],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    std::fs::copy(
        testdata("golden/llama-spm/files/imatrix.gguf"),
        dir.join("imatrix.gguf"),
    )
    .unwrap();
    std::fs::copy(
        testdata("golden/cli/metadata.json"),
        dir.join("metadata.json"),
    )
    .unwrap();
    dir
}

#[test]
fn documented_command_lines_give_the_reference_files() {
    let cases = read_json(&testdata("golden/cli/cases.json"));
    let cases = cases.as_object().expect("cases.json is an object");
    assert!(cases.len() >= 25, "{} cases", cases.len());
    let root = scratch("reference-commands");
    let inputs = inputs(&root);
    let mut failures = Vec::new();
    for (name, case) in cases {
        let work = root.join(name);
        copy_tree(&inputs, &work);
        let before = files(&work);
        let args: Vec<&str> = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let o = run(case["tool"].as_str().unwrap(), &args, &work);
        let want_ok = case["status"] == 0;
        if o.status.success() != want_ok {
            failures.push(format!(
                "{name}: exit {:?}, the reference's {}: {}",
                o.status.code(),
                case["status"],
                String::from_utf8_lossy(&o.stderr)
            ));
            continue;
        }
        let made: Vec<PathBuf> = files(&work).difference(&before).cloned().collect();
        let expected = case["files"].as_object().unwrap();
        let names: Vec<String> = made.iter().map(|p| p.display().to_string()).collect();
        let want: Vec<&String> = expected.keys().collect();
        if names.iter().collect::<Vec<_>>() != want {
            failures.push(format!(
                "{name}: made {names:?}, the reference made {want:?}"
            ));
            continue;
        }
        for (rel, f) in expected {
            if sha256_file(&work.join(rel)) != f["sha256"].as_str().unwrap() {
                failures.push(format!("{name}: {rel} differs from the reference's"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
