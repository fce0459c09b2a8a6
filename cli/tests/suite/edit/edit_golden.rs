//! The metadata-editing golden data (`testdata/golden/edit`, made by
//! `conformance/make_edit_golden.py` with gguf-py's `gguf_new_metadata.py` and
//! `gguf_set_metadata.py`) stays usable: its inputs are GGUF files our converter writes, so they
//! must still come out with the recorded sha256, and every case names a manifest that is there;
//! and gguf-edit, given each case's command line, writes the same bytes gguf-py wrote.

use ggufkit_testsupport as support;

use std::process::Command;

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");
const EDIT: &str = env!("CARGO_BIN_EXE_gguf-edit");

#[test]
fn gguf_edit_reproduces_gguf_py_byte_for_byte() {
    let dir = golden_dir("edit golden").join("edit");
    let cases: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap()).unwrap();
    let scratch = scratch("edit-golden");
    let inputs = cases["inputs"].as_object().expect("inputs");
    assert!(!inputs.is_empty());
    for (name, input) in inputs {
        let out = scratch.join(format!("{name}.gguf"));
        let fixture = input["fixture"].as_str().unwrap();
        // "f16+bigendian": converted with --bigendian.
        let outtype = input["outtype"].as_str().unwrap();
        let (outtype, big) = match outtype.strip_suffix("+bigendian") {
            Some(t) => (t, true),
            None => (outtype, false),
        };
        let o = Command::new(BIN)
            .arg(testdata("hf").join(fixture))
            .arg(&out)
            .args(["--outtype", outtype, "--quiet"])
            .args(big.then_some("--bigendian"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            support::golden::sha256_file(&out),
            input["sha256"].as_str().unwrap(),
            "{name}: the edit cases' input changed; rerun conformance/make_edit_golden.py"
        );
    }
    let list = cases["cases"].as_array().expect("cases");
    assert!(list.len() >= 16, "{} cases", list.len());
    let testdata_dir = testdata("");
    // Golden files are read from their unpacked copy.
    let golden = testdata("golden");
    let mut failures = Vec::new();
    for c in list {
        let case = c["case"].as_str().unwrap();
        let input = scratch.join(format!("{}.gguf", c["input"].as_str().unwrap()));
        assert!(input.is_file(), "{case}: no input");
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("{case}.json"))).unwrap())
                .unwrap();
        assert_eq!(manifest["sha256"], c["sha256"], "{case}");
        let args: Vec<String> = c["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                a.as_str()
                    .unwrap()
                    .replace("{testdata}/golden", golden.to_str().unwrap())
                    .replace(
                        "{testdata}",
                        testdata_dir.to_str().unwrap().trim_end_matches('/'),
                    )
            })
            .collect();
        let out = scratch.join(format!("out-{case}.gguf"));
        let mut cmd = Command::new(EDIT);
        match c["script"].as_str().unwrap() {
            "gguf_new_metadata.py" => cmd.arg(&input).arg(&out),
            "gguf_set_metadata.py" => {
                std::fs::copy(&input, &out).unwrap();
                cmd.arg("set").arg(&out)
            }
            other => panic!("{case}: unknown script {other}"),
        };
        let o = cmd.args(&args).arg("--quiet").output().unwrap();
        if !o.status.success() {
            failures.push(format!("{case}: {}", String::from_utf8_lossy(&o.stderr)));
            continue;
        }
        let got = support::golden::sha256_file(&out);
        if got != c["sha256"].as_str().unwrap() {
            failures.push(format!(
                "{case}: wrote {got}, gguf-py wrote {}",
                c["sha256"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    record(
        "edit_golden",
        list.len(),
        "gguf-py metadata-edit cases reproduced byte for byte by gguf-edit",
        &[],
    );
}
