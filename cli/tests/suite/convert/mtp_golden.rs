//! `--mtp`, `--no-mtp` / `--no-nextn` and `--dspark` as convert_hf_to_gguf.py has them
//! (testdata/golden/mtp/cases.json, made by conformance/make_mtp_golden.py): byte-identical
//! outputs per family, flag and outtype, the one-pass Q4_K_M equal to llama-quantize's of the
//! reference f32 output (and gguf-quantize's of ours), the `mtp-` default file name, the
//! reference's refusals, and the draft as an output of its own (`--outtype q8_0,mtp`, a batch
//! job's `mtp` output) beside the text model written without its MTP layers.

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
        if case["allow_requantize"] == true {
            // The conversion's f32 stage holds quantized tensors: like llama-quantize
            // without --allow-requantize, the one pass refuses them; gguf-quantize with it
            // (below) gives the reference's file.
            let e = String::from_utf8_lossy(&o.stderr);
            assert!(
                !o.status.success() && e.contains("--allow-requantize"),
                "{name}: {e}"
            );
            assert!(!out.exists(), "{name}: a refused conversion left a file");
        } else {
            assert!(
                o.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            if sha256_file(&out) != case["sha256"].as_str().unwrap() {
                failures.push(name.clone());
            }
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
            // A family whose f32 file holds quantized tensors was quantized with
            // --allow-requantize.
            let mut qargs = vec![f32.to_str().unwrap(), q.to_str().unwrap(), "Q4_K_M"];
            if case["allow_requantize"] == true {
                qargs.insert(0, "--allow-requantize");
            }
            let o = run(QUANTIZE, &qargs, &dir);
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

/// The `.gguf` files in `dir`, by name.
fn gguf_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".gguf"))
        .collect();
    v.sort();
    v
}

/// The sha256 the reference recorded for `case`.
fn golden_sha(cases: &[(String, serde_json::Value)], case: &str) -> String {
    let (_, c) = cases
        .iter()
        .find(|(k, _)| k == case)
        .unwrap_or_else(|| panic!("no case {case}"));
    c["sha256"].as_str().unwrap().to_string()
}

/// `--outtype q8_0,q4_k_m,mtp:f16,mtp:q4_k_m`: the text model without its MTP layers and
/// the MTP draft, in one pass, each file equal to the reference run that makes it alone
/// (`--no-mtp --outtype q8_0`, …, `--mtp --outtype f16`, llama-quantize of `--mtp` f32).
#[test]
fn mtp_draft_outputs_equal_the_reference_runs_alone() {
    let cases = cases();
    let mut checked = 0;
    for fixture in [
        "glm4moe",
        "glm4moelite",
        "qwen3next",
        "qwen35",
        "qwen35moe",
        "nemotronh",
        "hyv3",
        "mimo2",
        "step35",
        "bailingmoe3",
        "dots3",
        "glm5next-text",
    ] {
        let dir = scratch(&format!("mtp-draft-{fixture}"));
        let out = dir.join("out");
        let model = ggufkit_testsupport::fixture(fixture);
        let o = run(
            BIN,
            &[
                model.to_str().unwrap(),
                "--outtype",
                "q8_0,q4_k_m,mtp:f16,mtp:q4_k_m",
                "--outdir",
                out.to_str().unwrap(),
            ],
            &dir,
        );
        assert!(
            o.status.success(),
            "{fixture}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let files = gguf_files(&out);
        assert_eq!(files.len(), 4, "{fixture}: {files:?}");
        // Default names: the draft's have the reference's `mtp-` prefix.
        let pick = |draft: bool, ty: &str| {
            files
                .iter()
                .find(|n| n.starts_with("mtp-") == draft && n.ends_with(&format!("-{ty}.gguf")))
                .unwrap_or_else(|| panic!("{fixture}: no {ty} file (draft {draft}) in {files:?}"))
                .clone()
        };
        for (draft, ty, case) in [
            (false, "Q8_0", "--no-mtp-q8_0"),
            (false, "Q4_K_M", "--no-mtp-q4_k_m"),
            (true, "F16", "--mtp-f16"),
            (true, "Q4_K_M", "--mtp-q4_k_m"),
        ] {
            let name = pick(draft, ty);
            assert_eq!(
                sha256_file(&out.join(&name)),
                golden_sha(&cases, &format!("{fixture}{case}")),
                "{fixture}: {name} differs from the reference's {case}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 48);
}

/// A batch job's `mtp` output (auto type) is the reference's `--mtp` file and its text
/// output the `--no-mtp` one; `--mtp` together with a draft output is a usage error, and a
/// source that is no HuggingFace directory has no draft.
#[test]
fn mtp_draft_in_batch_jobs_and_its_refusals() {
    let cases = cases();
    let dir = scratch("mtp-draft-batch");
    let model = ggufkit_testsupport::fixture("qwen35");
    let jobs = dir.join("jobs.toml");
    std::fs::write(
        &jobs,
        format!(
            "outdir = \"out\"\n[[job]]\nsource = {:?}\noutputs = [\"bf16\", \
             {{ type = \"mtp\", name = \"draft.gguf\" }}]\n",
            model.to_str().unwrap()
        ),
    )
    .unwrap();
    let o = run(BIN, &["--batch", jobs.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The fixture's weights are bf16, so `auto` is bf16 for the draft.
    assert_eq!(
        sha256_file(&dir.join("out/draft.gguf")),
        golden_sha(&cases, "qwen35--mtp-bf16")
    );
    let text: Vec<String> = gguf_files(&dir.join("out"))
        .into_iter()
        .filter(|n| n != "draft.gguf")
        .collect();
    assert_eq!(text.len(), 1, "{text:?}");
    assert_eq!(
        sha256_file(&dir.join("out").join(&text[0])),
        golden_sha(&cases, "qwen35--no-mtp-bf16")
    );

    let m = model.to_str().unwrap();
    let o = run(
        BIN,
        &[m, "--mtp", "--outtype", "q8_0,mtp", "--outdir", "x"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("name the draft as an output"), "{err}");
    let o = run(BIN, &[m, "--outtype", "q8_0,mtp:q9", "--outdir", "x"], &dir);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("mtp:q9"), "{err}");
    let gguf = dir.join("out").join(&text[0]);
    let o = run(
        BIN,
        &[
            gguf.to_str().unwrap(),
            "--outtype",
            "q8_0,mtp",
            "--outdir",
            "y",
        ],
        &dir,
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("HuggingFace model directory"), "{err}");
    assert!(!dir.join("x").exists());
}

/// With several outputs, `{ftype}` in `--outfile` names each file after its type, a draft's
/// `mtp:f16` as `mtp-f16` (no colon in a file name).
#[test]
fn ftype_template_names_draft_outputs_without_a_colon() {
    let dir = scratch("mtp-ftype-template");
    let model = ggufkit_testsupport::fixture("glm4moe");
    let o = run(
        BIN,
        &[
            model.to_str().unwrap(),
            "--outtype",
            "q8_0,mtp:f16",
            "--outfile",
            "out/x-{ftype}.gguf",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        gguf_files(&dir.join("out")),
        vec!["x-mtp-f16.gguf".to_string(), "x-q8_0.gguf".to_string()]
    );
}

/// DeepSeek V4's model and its MTP draft in one pass (`--outtype q8_0,mtp`): the text file
/// is the reference's `--no-mtp --outtype q8_0` and the draft its `--mtp` file (the class
/// keeps every source type, so the draft's `auto` type writes what `--mtp` does with any
/// outtype).
#[test]
fn deepseek4_model_and_draft_in_one_pass() {
    let cases = cases();
    let dir = scratch("mtp-deepseek4-pass");
    let out = dir.join("out");
    let model = ggufkit_testsupport::fixture("deepseek4");
    let o = run(
        BIN,
        &[
            model.to_str().unwrap(),
            "--outtype",
            "q8_0,mtp",
            "--outdir",
            out.to_str().unwrap(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let files = gguf_files(&out);
    assert_eq!(files.len(), 2, "{files:?}");
    let draft = files
        .iter()
        .find(|n| n.starts_with("mtp-"))
        .expect("a draft");
    let text = files
        .iter()
        .find(|n| !n.starts_with("mtp-"))
        .expect("a model");
    assert_eq!(
        sha256_file(&out.join(text)),
        golden_sha(&cases, "deepseek4--no-mtp-q8_0"),
        "{text}"
    );
    assert_eq!(
        sha256_file(&out.join(draft)),
        golden_sha(&cases, "deepseek4--mtp-f32"),
        "{draft}"
    );
}
