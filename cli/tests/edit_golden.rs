//! The metadata-editing golden data (`testdata/golden/edit`, made by
//! `conformance/make_edit_golden.py` with gguf-py's `gguf_new_metadata.py` and
//! `gguf_set_metadata.py`) stays usable: its inputs are GGUF files our converter writes, so they
//! must still come out with the recorded sha256, and every case names a manifest that is there.
//! (`gguf-edit`, which must reproduce each case byte for byte, is not written yet.)

use ggufkit_testsupport as support;

use std::process::Command;

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");

#[test]
fn edit_golden_inputs_are_reproducible() {
    let dir = golden_dir("edit golden").join("edit");
    let cases: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap()).unwrap();
    let scratch = scratch("edit-golden");
    let inputs = cases["inputs"].as_object().expect("inputs");
    assert!(!inputs.is_empty());
    for (name, input) in inputs {
        let out = scratch.join(format!("{name}.gguf"));
        let fixture = input["fixture"].as_str().unwrap();
        let o = Command::new(BIN)
            .arg(testdata("hf").join(fixture))
            .arg(&out)
            .args(["--outtype", input["outtype"].as_str().unwrap(), "--quiet"])
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
    for c in list {
        let case = c["case"].as_str().unwrap();
        assert!(inputs.contains_key(c["input"].as_str().unwrap()), "{case}");
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("{case}.json"))).unwrap())
                .unwrap();
        assert_eq!(manifest["sha256"], c["sha256"], "{case}");
    }
    record(
        "edit_golden",
        list.len(),
        "gguf-py metadata-edit cases with reproducible inputs (gguf-edit not written yet)",
        &[],
    );
}
