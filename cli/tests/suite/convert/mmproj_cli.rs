//! `gguf-convert --mmproj` as convert_hf_to_gguf.py's command line (the projector alone,
//! its default name and outtype), and beyond the reference: the text model and the
//! projector from one pass over the checkpoint (`--outtype q4_k_m,mmproj`, a batch output
//! `"mmproj"`), byte-identical to the two separate runs and to the reference's files.

use ggufkit_testsupport::golden as support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");
const FIXTURE: &str = "gemma3-vl";

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn golden_sha(variant: &str) -> String {
    golden_sha_of(FIXTURE, variant)
}

fn golden_sha_of(fixture: &str, variant: &str) -> String {
    let st = read_json(&testdata(&format!("golden/{fixture}/status.json")));
    st[variant]["sha256"]
        .as_str()
        .unwrap_or_else(|| panic!("{fixture} {variant}: no sha256"))
        .to_string()
}

fn gguf_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".gguf"))
        .collect();
    v.sort();
    v
}

/// The reference's command lines: `--mmproj` alone (default name and type, in the model
/// directory) and with `--outtype` / `--outfile`.
#[test]
fn mmproj_alone_equals_the_reference() {
    let work = scratch("mmproj-cli-alone");
    let dir = materialize_fixture(FIXTURE, &work);
    let d = dir.to_str().unwrap();
    ok(&run(&[d, "--mmproj"], &work));
    let st = read_json(&testdata(&format!("golden/{FIXTURE}/status.json")));
    let name = st["mmproj-default-name"]["file_name"].as_str().unwrap();
    assert_eq!(gguf_names(&dir), vec![name.to_string()]);
    assert_eq!(
        sha256_file(&dir.join(name)),
        golden_sha("mmproj-default-name")
    );
    for t in ["f32", "f16", "q8_0"] {
        let out = work.join(format!("p-{t}.gguf"));
        ok(&run(
            &[
                d,
                "--mmproj",
                "--outtype",
                t,
                "--outfile",
                out.to_str().unwrap(),
            ],
            &work,
        ));
        assert_eq!(sha256_file(&out), golden_sha(&format!("mmproj-{t}")), "{t}");
    }
    // A quantized projector is not the reference's; the hint names the one-pass form.
    let o = run(&[d, "--mmproj", "--outtype", "q4_k_m"], &work);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("q4_k_m,mmproj"));
    let o = run(&[d, "--outtype", "mmproj:q4_k_m"], &work);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&work);
}

/// `--outtype q4_k_m,mmproj` writes the quantized text model and the projector in one pass,
/// byte for byte what two separate runs write; both equal the reference's files.
#[test]
fn text_and_projector_in_one_pass_equal_two_runs() {
    let work = scratch("mmproj-cli-one-pass");
    let dir = materialize_fixture(FIXTURE, &work);
    let d = dir.to_str().unwrap();
    let (one, two) = (work.join("one"), work.join("two"));
    std::fs::create_dir_all(&one).unwrap();
    std::fs::create_dir_all(&two).unwrap();
    for (types, outdir) in [
        ("q8_0,mmproj", &one),
        ("q8_0", &two),
        ("q4_k_m,mmproj:f16", &one),
        ("q4_k_m", &two),
    ] {
        ok(&run(
            &[
                d,
                "--outtype",
                types,
                "--outdir",
                outdir.to_str().unwrap(),
                "-q",
            ],
            &work,
        ));
    }
    for t in ["f16", "auto"] {
        let mut args = vec![d, "--mmproj", "--outdir", two.to_str().unwrap(), "-q"];
        if t != "auto" {
            args.extend(["--outtype", t]);
        }
        ok(&run(&args, &work));
    }
    let names = gguf_names(&one);
    assert_eq!(names.len(), 4, "{names:?}");
    assert_eq!(names, gguf_names(&two));
    for n in &names {
        assert_eq!(
            std::fs::read(one.join(n)).unwrap(),
            std::fs::read(two.join(n)).unwrap(),
            "{n}: one pass differs from its own run"
        );
    }
    let sha = |n: &str| sha256_file(&one.join(n));
    let find = |suffix: &str| {
        names
            .iter()
            .find(|n| n.ends_with(suffix))
            .unwrap_or_else(|| panic!("no *{suffix} in {names:?}"))
            .clone()
    };
    assert_eq!(sha(&find("-Q8_0.gguf")), golden_sha("convert-q8_0"));
    assert_eq!(sha("mmproj-Gemma3-Vl-BF16.gguf"), golden_sha("mmproj-auto"));
    assert_eq!(sha("mmproj-Gemma3-Vl-F16.gguf"), golden_sha("mmproj-f16"));
    let st = read_json(&testdata(&format!("golden/{FIXTURE}/status.json")));
    if st["quant-Q4_K_M"]["ok"] == serde_json::Value::Bool(true) {
        assert_eq!(sha(&find("-Q4_K_M.gguf")), golden_sha("quant-Q4_K_M"));
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// A batch job's output list takes `mmproj` entries; the report names them.
#[test]
fn batch_output_of_type_mmproj() {
    let work = scratch("mmproj-cli-batch");
    let dir = materialize_fixture(FIXTURE, &work);
    let jobs = work.join("jobs.toml");
    std::fs::write(
        &jobs,
        format!(
            "outdir = \"out\"\n[[job]]\nsource = \"{}\"\noutputs = [\"q8_0\", \"mmproj:f32\", {{ type = \"mmproj\", name = \"proj.gguf\" }}]\n",
            dir.display()
        ),
    )
    .unwrap();
    let report = work.join("report.jsonl");
    ok(&run(
        &[
            "--batch",
            jobs.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
            "-q",
        ],
        &work,
    ));
    let out = work.join("out");
    assert_eq!(
        sha256_file(&out.join("mmproj-Gemma3-Vl-F32.gguf")),
        golden_sha("mmproj-f32")
    );
    assert_eq!(
        sha256_file(&out.join("proj.gguf")),
        golden_sha("mmproj-auto")
    );
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains("\"outtype\":\"mmproj:f32\""), "{text}");
    let _ = std::fs::remove_dir_all(&work);
}

/// Every projector fixture whose text half the reference converts (its golden data has the
/// text variants): `--outtype q4_k_m,mmproj` (and `q8_0,mmproj`) writes the same two files
/// as the separate runs, and both are the reference's (llama-quantize's Q4_K_M of its f32
/// text file; its `--mmproj` auto file).
#[test]
fn one_pass_equals_two_runs_for_every_family() {
    let mut families = Vec::new();
    for e in std::fs::read_dir(testdata("golden")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let commands = std::fs::read_to_string(e.path().join("commands.txt")).unwrap_or_default();
        if !commands.contains("generated by conformance/make_mmproj_fixtures.py") {
            continue;
        }
        let st = read_json(&e.path().join("status.json"));
        // (text-only fixtures, with no projector golden, are not projector families; a
        // fixture without a llama-quantize record has nothing to compare the one pass with)
        if st["convert-q8_0"]["ok"] == serde_json::Value::Bool(true)
            && st["mmproj-auto"]["ok"] == serde_json::Value::Bool(true)
            && st["quant-Q4_K_M"]["sha256"].is_string()
        {
            families.push(name);
        }
    }
    families.sort();
    for want in [
        "gemma3-vl",
        "gemma3n-vl",
        "gemma4-vl",
        "gemma4unified-vl",
        "internvl3",
        "llava-pixtral",
        "qwen25vl",
        "qwen2audio",
        "qwen2vl",
        "qwen2vl-model",
        "qwen3vl",
        "qwen3vlmoe",
    ] {
        assert!(families.iter().any(|f| f == want), "{want}: {families:?}");
    }
    let work = scratch("mmproj-cli-one-pass-all");
    for fixture in &families {
        let dir = materialize_fixture(fixture, &work);
        let d = dir.to_str().unwrap();
        let (one, two) = (
            work.join(format!("{fixture}-one")),
            work.join(format!("{fixture}-two")),
        );
        std::fs::create_dir_all(&one).unwrap();
        std::fs::create_dir_all(&two).unwrap();
        for (args, outdir) in [
            (vec!["--outtype", "q4_k_m,mmproj"], &one),
            (vec!["--outtype", "q8_0,mmproj"], &one),
            (vec!["--outtype", "q4_k_m"], &two),
            (vec!["--outtype", "q8_0"], &two),
            (vec!["--mmproj"], &two),
        ] {
            let mut a = vec![d];
            a.extend(args);
            a.extend(["--outdir", outdir.to_str().unwrap(), "-q"]);
            ok(&run(&a, &work));
        }
        let names = gguf_names(&one);
        assert_eq!(names.len(), 3, "{fixture}: {names:?}");
        assert_eq!(names, gguf_names(&two), "{fixture}");
        for n in &names {
            assert_eq!(
                sha256_file(&one.join(n)),
                sha256_file(&two.join(n)),
                "{fixture} {n}: one pass differs from its own run"
            );
        }
        let find = |f: &dyn Fn(&str) -> bool| {
            let n = names
                .iter()
                .find(|n| f(n))
                .unwrap_or_else(|| panic!("{names:?}"));
            sha256_file(&one.join(n))
        };
        let mmproj = |n: &str| n.starts_with("mmproj-");
        assert_eq!(
            find(&|n| mmproj(n)),
            golden_sha_of(fixture, "mmproj-auto"),
            "{fixture} projector"
        );
        assert_eq!(
            find(&|n| !mmproj(n) && n.ends_with("-Q8_0.gguf")),
            golden_sha_of(fixture, "convert-q8_0"),
            "{fixture} q8_0"
        );
        assert_eq!(
            find(&|n| !mmproj(n) && n.ends_with("-Q4_K_M.gguf")),
            golden_sha_of(fixture, "quant-Q4_K_M"),
            "{fixture} q4_k_m"
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// Qwen 3.5 / 3.6 (dense and MoE) and the GLM-4V family: `--outtype q8_0,mmproj` writes the
/// text model and the projector in one pass, and both are the reference's files (its q8_0
/// text conversion and its `--mmproj` auto file); without a llama-quantize record these
/// fixtures are not yet in `one_pass_equals_two_runs_for_every_family`.
#[test]
fn qwen35_and_glm4v_text_and_projector_in_one_pass() {
    let work = scratch("mmproj-cli-qwen35-glm4v-one-pass");
    for fixture in ["qwen35-vl", "qwen35moe-vl", "glm4v", "glm4vmoe", "glmocr"] {
        let dir = materialize_fixture(fixture, &work);
        let out = work.join(format!("{fixture}-out"));
        std::fs::create_dir_all(&out).unwrap();
        ok(&run(
            &[
                dir.to_str().unwrap(),
                "--outtype",
                "q8_0,mmproj",
                "--outdir",
                out.to_str().unwrap(),
                "-q",
            ],
            &work,
        ));
        let names = gguf_names(&out);
        assert_eq!(names.len(), 2, "{fixture}: {names:?}");
        for n in &names {
            let variant = if n.starts_with("mmproj-") {
                "mmproj-auto"
            } else {
                assert!(n.ends_with("-Q8_0.gguf"), "{fixture}: {n}");
                "convert-q8_0"
            };
            assert_eq!(
                sha256_file(&out.join(n)),
                golden_sha_of(fixture, variant),
                "{fixture} {n}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}
