//! `--mtp`, `--no-mtp` / `--no-nextn` and `--dspark` as convert_hf_to_gguf.py has them
//! (testdata/golden/mtp/cases.json, made by conformance/make_mtp_golden.py): byte-identical
//! outputs per family, flag and outtype, the one-pass Q4_K_M equal to llama-quantize's of the
//! reference f32 output (and gguf-quantize's of ours), the `mtp-` default file name, and the
//! reference's refusals.

use ggufkit_testsupport::golden as support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");
const QUANTIZE: &str = env!("CARGO_BIN_EXE_gguf-quantize");

fn run(bin: &str, args: &[&str], cwd: &Path) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn cases() -> Vec<(String, serde_json::Value)> {
    let cases = read_json(&testdata("golden/mtp/cases.json"));
    cases
        .as_object()
        .expect("cases.json is an object")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn args_of(case: &serde_json::Value) -> Vec<String> {
    case["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// A writable copy of a fixture in `dir`, named like it.
fn copy_fixture(name: &str, dir: &Path) -> PathBuf {
    let src = ggufkit_testsupport::fixture(name);
    let dst = dir.join(name);
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() && e.file_name() != "shared-files.txt" {
            std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
        }
    }
    dst
}

/// Every family × flag × outtype the reference wrote, byte for byte; Q4_K_M in one pass and
/// through gguf-quantize from our f32 output.
#[test]
fn mtp_outputs_equal_the_reference() {
    let cases = cases();
    let dir = scratch("mtp-golden");
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, case) in &cases {
        if case["ok"] != true || case.get("default_name").is_some() {
            continue;
        }
        let model = ggufkit_testsupport::fixture(case["fixture"].as_str().unwrap());
        let out = dir.join(format!("{name}.gguf"));
        let mut args = vec![
            model.to_str().unwrap().to_string(),
            "--outfile".into(),
            out.to_str().unwrap().into(),
        ];
        args.extend(args_of(case));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(BIN, &args, &dir);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        if sha256_file(&out) != case["sha256"].as_str().unwrap() {
            failures.push(name.clone());
        }
        checked += 1;
        if let Some(from) = case.get("quantized_from").and_then(|v| v.as_str()) {
            // gguf-quantize on our f32 output (equal to the reference's when the f32 case
            // passes) gives llama-quantize's file too.
            let f32 = dir.join(format!("{from}.gguf"));
            if !f32.exists() {
                failures.push(format!("{name}: {from} was not made first"));
                continue;
            }
            let q = dir.join(format!("{name}-requant.gguf"));
            let o = run(
                QUANTIZE,
                &[f32.to_str().unwrap(), q.to_str().unwrap(), "Q4_K_M"],
                &dir,
            );
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            if sha256_file(&q) != case["sha256"].as_str().unwrap() {
                failures.push(format!("{name} (gguf-quantize)"));
            }
        }
    }
    assert!(checked >= 60, "{checked} cases");
    assert!(
        failures.is_empty(),
        "differ from the reference: {failures:?}"
    );
}

/// Without --outfile, --mtp writes `mtp-<Name>-<TYPE>.gguf` (no size label) beside the
/// model; --no-nextn keeps the usual name.
#[test]
fn mtp_default_names_equal_the_reference() {
    let dir = scratch("mtp-names");
    let mut checked = 0;
    for (name, case) in cases() {
        let Some(expected) = case.get("default_name").and_then(|v| v.as_str()) else {
            continue;
        };
        let model = copy_fixture(case["fixture"].as_str().unwrap(), &dir);
        let mut args = vec![model.to_str().unwrap().to_string()];
        args.extend(args_of(&case));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(BIN, &args, &dir);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let made: Vec<String> = std::fs::read_dir(&model)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".gguf"))
            .collect();
        assert_eq!(made, vec![expected.to_string()], "{name}");
        assert_eq!(
            sha256_file(&model.join(expected)),
            case["sha256"].as_str().unwrap(),
            "{name}"
        );
        checked += 1;
    }
    assert!(checked >= 3, "{checked} cases");
}

/// What the reference refuses (a class without MTP export, the switches together, --dspark
/// for a class other than DeepseekV4ForCausalLM) is refused, with no output.
#[test]
fn mtp_refusals_equal_the_reference() {
    let dir = scratch("mtp-refused");
    let mut checked = 0;
    for (name, case) in cases() {
        if case["ok"] != false {
            continue;
        }
        let model = ggufkit_testsupport::fixture(case["fixture"].as_str().unwrap());
        let out = dir.join("refused.gguf");
        let mut args = vec![
            model.to_str().unwrap().to_string(),
            "--outfile".into(),
            out.to_str().unwrap().into(),
        ];
        let flags = args_of(&case);
        args.extend(flags.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(BIN, &args, &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name}: accepted");
        assert!(!out.exists(), "{name}: wrote a file");
        let reference = case["error"].as_str().unwrap();
        // The reason, as the reference gives it.
        let expected = if reference.contains("mutually exclusive") {
            "--mtp, --no-nextn, and --dspark are mutually exclusive"
        } else if reference.contains("--dspark is only supported") {
            "--dspark is only supported for DeepseekV4ForCausalLM"
        } else {
            assert!(reference.contains("are not supported for"), "{reference}");
            "--mtp / --no-nextn are not supported for"
        };
        assert!(err.contains(expected), "{name}: {err}");
        checked += 1;
    }
    assert!(checked >= 7, "{checked} cases");
}

/// --no-nextn is --no-mtp's other spelling, and a projector has no MTP export.
#[test]
fn mtp_switch_spellings_and_projectors() {
    let dir = scratch("mtp-spellings");
    let model = ggufkit_testsupport::fixture("glm4moe");
    let m = model.to_str().unwrap();
    let mut files = Vec::new();
    for flag in ["--no-mtp", "--no-nextn"] {
        let out = dir.join(format!("{flag}.gguf"));
        let o = run(
            BIN,
            &[
                m,
                flag,
                "--outtype",
                "f16",
                "--outfile",
                out.to_str().unwrap(),
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        files.push(sha256_file(&out));
    }
    assert_eq!(files[0], files[1]);
    let o = run(
        BIN,
        &[m, "--no-nextn", "--no-mtp", "--outtype", "f16"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let vl = ggufkit_testsupport::fixture("gemma3-vl");
    let v = vl.to_str().unwrap();
    for args in [
        vec![v, "--mmproj", "--mtp", "--outfile", "p.gguf"],
        vec![v, "--outtype", "f16,mmproj", "--no-mtp", "--outdir", "o"],
    ] {
        let o = run(BIN, &args, &dir);
        assert!(!o.status.success(), "{args:?} accepted");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("not supported for a projector"), "{err}");
    }
}
