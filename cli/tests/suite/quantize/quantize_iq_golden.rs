//! gguf-quantize reproduces llama-quantize on the IQ1–IQ3 ftypes (with and without an
//! imatrix) and on `--prune-layers`: the cases and manifests of testdata/quantize/iq, made by
//! scripts/make-iq-golden.sh with the reference llama-quantize. A case the reference refused
//! must fail here too (exit status 1, nothing written).

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::process::Command;

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use serde_json::Value as Json;
use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-quantize");

#[test]
fn iq_ftypes_and_pruning_match_llama_quantize() {
    let dir = testdata("quantize/iq");
    let cases: Json = serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap())
        .expect("cases.json parses");
    let work = scratch("q-iq-golden");
    // The names llama-quantize saw: the imatrix path is stored as given.
    std::fs::copy(
        conv::golden_gguf("llama-spm", "convert-f32"),
        work.join("llama-spm-f32.gguf"),
    )
    .unwrap();
    std::fs::copy(
        testdata("golden/llama-spm/files/imatrix.gguf"),
        work.join("imatrix.gguf"),
    )
    .unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases["cases"].as_array().unwrap() {
        let name = case["variant"].as_str().unwrap();
        let args: Vec<&str> = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let (opts, ty) = args.split_at(args.len() - 1);
        let out = work.join(format!("{name}.gguf"));
        let o = Command::new(BIN)
            .args(["--quiet", "--force"])
            .args(opts)
            .args(["llama-spm-f32.gguf", out.to_str().unwrap(), ty[0]])
            .current_dir(&work)
            .output()
            .expect("run gguf-quantize");
        checked += 1;
        let stderr = String::from_utf8_lossy(&o.stderr);
        if case["ok"].as_bool().unwrap() {
            if !o.status.success() {
                failures.push(format!("{name}: failed: {stderr}"));
                continue;
            }
            let golden: Json = serde_json::from_slice(
                &std::fs::read(dir.join(case["manifest"].as_str().unwrap())).unwrap(),
            )
            .unwrap();
            let ours = manifest(&GgufFile::open(&out).unwrap(), &out, None);
            let d = diff_manifests(&ours, &golden);
            if !d.is_empty() {
                failures.push(format!(
                    "{name}:\n  {}",
                    d.iter().take(6).cloned().collect::<Vec<_>>().join("\n  ")
                ));
            }
            std::fs::remove_file(&out).unwrap();
        } else if o.status.code() != Some(1) || out.exists() {
            failures.push(format!(
                "{name}: llama-quantize refused it ({}), we exited with {:?}: {stderr}",
                case["error"].as_str().unwrap_or(""),
                o.status.code()
            ));
        }
    }
    assert!(checked >= 20, "only {checked} cases");
    assert!(
        failures.is_empty(),
        "{} of {checked} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
