//! convert_hf_to_gguf.py's own command lines work unchanged: `--outfile` with `{ftype}`
//! templates, argparse's unique-prefix abbreviations, the flags that change nothing here, and
//! the alias binary; flags for what is not supported yet are refused, never ignored;
//! `--bigendian` writes what the reference writes.

use ggufkit_testsupport::golden as support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");
const ALIAS: &str = env!("CARGO_BIN_EXE_convert_hf_to_gguf");
const QUANTIZE: &str = env!("CARGO_BIN_EXE_gguf-quantize");
const EDIT: &str = env!("CARGO_BIN_EXE_gguf-edit");

fn run(bin: &str, args: &[&str], cwd: &Path) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn the_reference_command_lines_work_unchanged() {
    let dir = scratch("reference-cli");
    let model = testdata("hf/qwen2");
    let m = model.to_str().unwrap();
    // The reference README's form, with the alias binary: --outfile and --outtype.
    let o = run(
        ALIAS,
        &[m, "--outfile", "plain.gguf", "--outtype", "q8_0"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Abbreviated flags and a templated name give the same file.
    let o = run(
        BIN,
        &[m, "--outf", "t-{ftype}-{FTYPE}.gguf", "--outt", "q8_0"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = std::fs::read(dir.join("plain.gguf")).unwrap();
    assert!(a == std::fs::read(dir.join("t-q8_0-Q8_0.gguf")).unwrap());
    // auto resolves before the template is filled; flags that change nothing are accepted.
    let o = run(
        BIN,
        &[
            m,
            "--outfile",
            "auto-{ftype}.gguf",
            "--use-temp-file",
            "--no-lazy",
            "--verbose",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.join("auto-bf16.gguf").is_file());
    // Not supported yet: refused with a usage error, nothing written.
    for flag in [
        "--fuse-qkv",
        "--fuse-gate-up-exps",
        "--sentence-transformers-dense-modules",
    ] {
        let o = run(BIN, &[m, "--outfile", "no.gguf", flag], &dir);
        assert_eq!(o.status.code(), Some(2), "{flag}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(flag.trim_start_matches('-')));
    }
    // --dspark is only for a DeepSeek-V4 checkpoint: refused like the reference (exit 1).
    let o = run(BIN, &[m, "--outfile", "no.gguf", "--dspark"], &dir);
    assert_eq!(o.status.code(), Some(1), "--dspark");
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--dspark is only supported for DeepseekV4ForCausalLM"));
    // A class without MTP export refuses the MTP switches like the reference (exit 1),
    // naming the class (cli/tests/suite/convert/mtp_golden.rs has the families that export it).
    for flag in ["--mtp", "--no-mtp", "--no-nextn"] {
        let o = run(BIN, &[m, "--outfile", "no.gguf", flag], &dir);
        assert_eq!(o.status.code(), Some(1), "{flag}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("--mtp / --no-nextn are not supported for Qwen2ForCausalLM"),
            "{err}"
        );
    }
    // --mmproj of a text-only model: refused like the reference (exit 1), naming the class.
    let o = run(BIN, &[m, "--outfile", "no.gguf", "--mmproj"], &dir);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("text-only") && err.contains("ForCausalLM"),
        "{err}"
    );
    // A bad template or an ambiguous abbreviation is a usage error.
    for args in [
        vec![m, "--outfile", "x-{oops}.gguf"],
        vec![m, "--out", "x.gguf"],
    ] {
        let o = run(BIN, &args, &dir);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    assert!(!dir.join("no.gguf").exists());
}

/// `--vocab-only` of a directory that holds the tokenizer and config but no weights writes
/// the same file as from the whole checkpoint (given the same type), as the reference does (the golden
/// `convert-vocab-only` case of testdata/golden/cli); an index naming a shard that is not
/// there is still an error naming it, as in the reference.
#[test]
fn vocab_only_needs_no_weight_files() {
    let cases = read_json(&testdata("golden/cli/cases.json"));
    let want = cases["convert-vocab-only"]["files"]["vocab.gguf"]["sha256"]
        .as_str()
        .expect("the golden vocab-only case");
    let dir = scratch("vocab-only-no-weights");
    let model = materialize_fixture("llama-spm", &dir);
    let index = std::fs::read(model.join("model.safetensors.index.json")).unwrap();
    for e in std::fs::read_dir(&model).unwrap() {
        let p = e.unwrap().path();
        if p.to_string_lossy().contains(".safetensors") {
            std::fs::remove_file(p).unwrap();
        }
    }
    // The golden file's `auto` came from the BF16 weights; with none to look at, `auto` is
    // F16 (as in the reference), so the type is named.
    let o = run(
        BIN,
        &[
            "llama-spm",
            "--vocab-only",
            "--outtype",
            "bf16",
            "--outfile",
            "vocab.gguf",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(sha256_file(&dir.join("vocab.gguf")), want);
    // Without --vocab-only the same directory is refused.
    let o = run(BIN, &["llama-spm", "--outfile", "full.gguf"], &dir);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no model*.safetensors"));
    // An index whose shards are gone: refused, naming the shard.
    std::fs::write(model.join("model.safetensors.index.json"), index).unwrap();
    let o = run(
        BIN,
        &["llama-spm", "--vocab-only", "--outfile", "v2.gguf"],
        &dir,
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("model-00001-of-00002.safetensors"), "{err}");
    assert!(!dir.join("v2.gguf").exists() && !dir.join("full.gguf").exists());
}

/// `--mistral-format` (and `--disable-mistral-community-chat-template`) on Mistral's native
/// layout write what the reference writes (testdata/golden/mistral, made by
/// conformance/make_mistral_fixtures.py); a native directory without the flag, or an HF one
/// with it, is refused with a message saying which.
#[test]
fn mistral_format_command_lines_equal_the_reference() {
    let cases = read_json(&testdata("golden/mistral/cases.json"));
    let dir = scratch("reference-mistral");
    let model = ggufkit_testsupport::fixture("mistral-tekken");
    let m = model.to_str().unwrap();
    for (flags, case) in [
        (&[][..], "mistral-tekken-f32"),
        (
            &["--disable-mistral-community-chat-template"][..],
            "mistral-tekken-f32-no-community-template",
        ),
    ] {
        let out = format!("{case}.gguf");
        let mut args = vec![m, "--mistral-format", "--outfile", &out, "--outtype", "f32"];
        args.extend(flags);
        let o = run(ALIAS, &args, &dir);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            sha256_file(&dir.join(&out)),
            cases[case]["sha256"].as_str().unwrap(),
            "{case}"
        );
    }
    let o = run(BIN, &[m, "--outfile", "no.gguf"], &dir);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--mistral-format"));
    let hf = testdata("hf/qwen2");
    let o = run(
        BIN,
        &[
            hf.to_str().unwrap(),
            "--mistral-format",
            "--outfile",
            "no.gguf",
        ],
        &dir,
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("params.json"));
    assert!(!dir.join("no.gguf").exists());
}

/// `--bigendian` equals convert_hf_to_gguf.py --bigendian for every outtype
/// (testdata/golden/bigendian, made by conformance/make_bigendian_golden.py), written alone
/// and several outtypes in one pass.
#[test]
fn bigendian_outputs_equal_the_reference() {
    let cases = read_json(&testdata("golden/bigendian/cases.json"));
    let cases = cases.as_object().expect("cases.json is an object");
    assert!(cases.len() >= 10, "{} cases", cases.len());
    let dir = scratch("reference-bigendian");
    let mut failures = Vec::new();
    for (name, case) in cases {
        let model = testdata(&format!("hf/{}", case["fixture"].as_str().unwrap()));
        let out = dir.join(format!("{name}.gguf"));
        let mut args = vec![
            model.to_str().unwrap().to_string(),
            "--outfile".into(),
            out.to_str().unwrap().into(),
        ];
        args.extend(
            case["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string()),
        );
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
    }
    assert!(
        failures.is_empty(),
        "differ from the reference: {failures:?}"
    );
    // llama.cpp's tools cannot read a big-endian file on this host: neither do ours, rather
    // than quantize its byte-swapped data.
    let be = dir.join("qwen2-f16.gguf");
    let be = be.to_str().unwrap();
    for (bin, args) in [
        (QUANTIZE, vec![be, "q.gguf", "Q4_K_M"]),
        (BIN, vec![be, "--outtype", "q4_k_m", "--outfile", "q.gguf"]),
        (EDIT, vec!["split", "--split-max-tensors", "4", be, "sp"]),
    ] {
        let o = run(bin, &args, &dir);
        assert!(!o.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("big-endian"),
            "{args:?}"
        );
    }
    assert!(!dir.join("q.gguf").exists());
    // Several outtypes in one pass (named by a template) go through the joint writer: the
    // same bytes.
    let model = testdata("hf/qwen2");
    let o = run(
        BIN,
        &[
            model.to_str().unwrap(),
            "--outfile",
            "joint/q-{FTYPE}.gguf",
            "--outtype",
            "f16,q8_0",
            "--bigendian",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let joint = dir.join("joint");
    for (file, case) in [("q-F16.gguf", "qwen2-f16"), ("q-Q8_0.gguf", "qwen2-q8_0")] {
        assert_eq!(
            sha256_file(&joint.join(file)),
            cases[case]["sha256"].as_str().unwrap(),
            "{file}"
        );
    }
}

/// `--fp8-as-q8` on the command line writes what convert_hf_to_gguf.py --fp8-as-q8 writes
/// (testdata/golden/fp8, made by conformance/make_fp8_fixtures.py).
#[test]
fn fp8_as_q8_equals_the_reference() {
    let cases = read_json(&testdata("golden/fp8/cases.json"));
    let dir = scratch("reference-cli-fp8");
    let mut checked = 0;
    for (name, case) in cases.as_object().expect("cases.json is an object") {
        if case["fp8_as_q8"] != true || case["ok"] != true {
            continue;
        }
        let model = ggufkit_testsupport::fixture(case["fixture"].as_str().unwrap());
        let outtype = case["outtype"].as_str().unwrap();
        let out = format!("{name}.gguf");
        let o = run(
            BIN,
            &[
                model.to_str().unwrap(),
                "--outfile",
                &out,
                "--outtype",
                outtype,
                "--fp8-as-q8",
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            sha256_file(&dir.join(&out)),
            case["sha256"].as_str().unwrap(),
            "{name}"
        );
        checked += 1;
    }
    assert!(checked >= 8, "{checked} cases");
    let _ = std::fs::remove_dir_all(&dir);
}
