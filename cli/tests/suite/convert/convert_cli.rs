//! gguf-convert end to end against llama.cpp's outputs: every golden conversion, every
//! golden quantization produced in one pass from the HF directory, and every legacy file.

use ggufkit_testsupport::golden as support;

use std::path::Path;
use std::process::{Command, Output};

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use serde_json::Value as Json;
use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");

fn convert(args: &[String], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(["--quiet", "--force"])
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn diff_file(out: &Path, golden: &Path) -> Vec<String> {
    let f = GgufFile::open(out).unwrap_or_else(|e| panic!("{e}"));
    diff_manifests(&manifest(&f, out, None), &read_json(golden))
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

#[test]
fn every_golden_conversion_and_one_pass_quantization_matches() {
    let golden = golden_dir("every_golden_conversion_and_one_pass_quantization_matches");
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut not_run = Vec::new();
    for fx in FIXTURES {
        let fdir = golden.join(fx);
        let variants = read_json(&fdir.join("variants.json"));
        let work = scratch(&format!("cli-{fx}"));
        for f in ["imatrix.gguf", "imatrix.dat"] {
            let src = fdir.join("files").join(f);
            if src.exists() {
                std::fs::copy(&src, work.join(f)).unwrap();
            }
        }
        // The fixture directory under its own name (general.name comes from it).
        let model = fixture(fx);
        for v in variants["variants"].as_array().unwrap() {
            let name = v["variant"].as_str().unwrap();
            let args: Vec<String> = v["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            let out = work.join(format!("{name}.gguf"));
            // Map the reference command onto gguf-convert.
            let argv: Vec<String> = match v["tool"].as_str().unwrap() {
                "convert_hf_to_gguf.py" => {
                    let t = args[args.iter().position(|a| a == "--outtype").unwrap() + 1].clone();
                    vec![s(&model), s(&out), "--outtype".into(), t]
                }
                // llama-quantize on the f32 conversion == gguf-convert straight to that type.
                "llama-quantize" if args.iter().any(|a| a == "{variant:convert-f32}") => {
                    let mut a: Vec<String> = args
                        .iter()
                        .filter(|a| !a.starts_with('{'))
                        .cloned()
                        .collect();
                    let ftype = a.pop().unwrap();
                    // Q8_0/TQ1_0/TQ2_0 name the converter's own types in gguf-convert (as in
                    // convert_hf_to_gguf.py); llama-quantize's are tested through gguf-quantize.
                    if NOT_YET.contains(&ftype.as_str()) {
                        not_run.push((format!("{fx}/{name}"), NOT_YET_REASON.to_string()));
                        continue;
                    }
                    if ["Q8_0", "TQ1_0", "TQ2_0"].contains(&ftype.as_str()) {
                        continue;
                    }
                    let mut argv = vec![s(&model), s(&out), "--outtype".into(), ftype];
                    argv.extend(a);
                    argv
                }
                _ => continue,
            };
            checked += 1;
            let o = convert(&argv, &work);
            match (v["ok"].as_bool().unwrap(), o.status.success()) {
                (true, true) => {
                    // `convert-auto` keeps no manifest of its own: status.json names the
                    // variant it is byte-identical to.
                    let manifest = match v["manifests"][0].as_str() {
                        Some(m) => m.to_string(),
                        None => {
                            let status = read_json(&fdir.join("status.json"));
                            format!(
                                "{}.json",
                                status[name]["identical_to"][0]
                                    .as_str()
                                    .expect("identical_to")
                            )
                        }
                    };
                    let d = diff_file(&out, &fdir.join(manifest));
                    if !d.is_empty() {
                        failures.push(format!(
                            "{fx}/{name}:\n  {}",
                            d.into_iter().take(4).collect::<Vec<_>>().join("\n  ")
                        ));
                    }
                    let _ = std::fs::remove_file(&out);
                }
                (false, false) => assert!(!out.exists(), "{fx}/{name}: a failed run left output"),
                (true, false) => failures.push(format!(
                    "{fx}/{name}: failed: {}",
                    String::from_utf8_lossy(&o.stderr)
                )),
                (false, true) => {
                    failures.push(format!("{fx}/{name}: llama.cpp failed, we did not"))
                }
            }
        }
    }
    eprintln!("checked {checked} golden commands through gguf-convert");
    assert!(checked > 200, "only {checked} commands");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    record(
        "convert_cli-golden",
        checked,
        "golden commands matched through gguf-convert (conversions and one-pass quantizations)",
        &not_run,
    );
}

#[test]
fn every_legacy_file_converts_like_llama_cpp() {
    let golden = golden_dir("every_legacy_file_converts_like_llama_cpp");
    let work = scratch("cli-legacy");
    let mut n = 0;
    for e in std::fs::read_dir(golden.join("legacy")).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "json") || p.file_name().unwrap() == "status.json" {
            continue;
        }
        let stem = p.file_stem().unwrap().to_str().unwrap();
        let src = legacy_dir().join(format!("{stem}.bin"));
        let out = work.join(format!("{stem}.gguf"));
        let o = convert(
            &[
                s(&src),
                s(&out),
                "--gqa".into(),
                "2".into(),
                "--eps".into(),
                "1e-5".into(),
            ],
            &work,
        );
        assert!(
            o.status.success(),
            "{stem}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let d = diff_file(&out, &p);
        assert!(d.is_empty(), "{stem}:\n{}", d.join("\n"));
        n += 1;
    }
    assert_eq!(n, 11);
    record(
        "convert_cli-legacy",
        n,
        "legacy files converted by gguf-convert matched llama.cpp's manifests",
        &[],
    );
}

#[test]
fn legacy_v2_q4_0_that_llama_cpp_refuses_is_converted() {
    let work = scratch("cli-legacy-v2");
    let out = work.join("v2.gguf");
    let src = testdata("legacy/ggjt-v2-q4_0.bin");
    let o = convert(
        &[
            s(&src),
            s(&out),
            "--gqa".into(),
            "2".into(),
            "--eps".into(),
            "1e-5".into(),
        ],
        &work,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Its blocks are repacked exactly: the tensors equal the GGJT v3 file's.
    let v3 = work.join("v3.gguf");
    let o = convert(
        &[
            s(&testdata("legacy/ggjt-v3-q4_0.bin")),
            s(&v3),
            "--gqa".into(),
            "2".into(),
            "--eps".into(),
            "1e-5".into(),
        ],
        &work,
    );
    assert!(o.status.success());
    let (a, b) = (GgufFile::open(&out).unwrap(), GgufFile::open(&v3).unwrap());
    assert_eq!(a.tensors.len(), b.tensors.len());
    for (x, y) in a.tensors.iter().zip(&b.tensors) {
        assert_eq!((x.ty, &x.dims), (y.ty, &y.dims));
        assert_eq!(a.tensor_data(x), b.tensor_data(y), "{}", x.name);
    }
}

#[test]
fn no_sync_writes_the_same_file() {
    let work = scratch("cli-no-sync");
    let model = testdata("hf/llama-spm");
    let golden = testdata("golden/llama-spm/convert-f32.json");
    for (name, extra) in [("synced.gguf", None), ("unsynced.gguf", Some("--no-sync"))] {
        let mut args = vec![
            s(&model),
            s(&work.join(name)),
            "--outtype".into(),
            "f32".into(),
        ];
        args.extend(extra.map(String::from));
        let o = convert(&args, &work);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let synced = std::fs::read(work.join("synced.gguf")).unwrap();
    assert_eq!(synced, std::fs::read(work.join("unsynced.gguf")).unwrap());
    // general.name follows the directory name, which is the fixture's here.
    let diffs = diff_file(&work.join("unsynced.gguf"), &golden);
    assert!(diffs.is_empty(), "{diffs:#?}");
    let names: Vec<_> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "temporary files left: {names:?}");
}

#[test]
fn dry_run_json_lists_sources_and_writes_nothing() {
    let work = scratch("cli-dry");
    let model = testdata("hf/llama-spm");
    let o = convert(
        &[
            s(&model),
            s(&work.join("x.gguf")),
            "--outtype".into(),
            "q4_k_m".into(),
            "--dry-run".into(),
            "--json".into(),
        ],
        &work,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Json = serde_json::from_slice(&o.stdout).unwrap();
    let tensors = j["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 21);
    let q = tensors
        .iter()
        .find(|t| t["name"] == "blk.0.attn_q.weight")
        .unwrap();
    assert_eq!(q["type"], "q4_K");
    assert_eq!(q["source"], "model.layers.0.self_attn.q_proj.weight");
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
}

/// A missing `--outdir` is created for one output as for several (a dry run creates
/// nothing), and the file in it is the one an explicit path gets.
#[test]
fn a_missing_outdir_is_created_for_one_output() {
    let work = scratch("cli-outdir");
    let model = testdata("hf/llama-spm");
    let outdir = work.join("new").join("sub");
    let args = |extra: &[&str]| {
        let mut a = vec![s(&model), "--outtype".into(), "f16".into()];
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let o = convert(&args(&["--outdir", &s(&outdir), "--dry-run"]), &work);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !work.join("new").exists(),
        "a dry run created the directory"
    );
    let o = convert(&args(&["--outdir", &s(&outdir)]), &work);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let files: Vec<_> = std::fs::read_dir(&outdir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let explicit = work.join("explicit.gguf");
    let o = convert(
        &[args(&[])[..3].to_vec(), vec![s(&explicit)]].concat(),
        &work,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read(files[0].path()).unwrap(),
        std::fs::read(&explicit).unwrap()
    );
}

#[test]
fn bad_arguments_and_inputs_have_distinct_exit_codes() {
    let work = scratch("cli-bad");
    let model = testdata("hf/llama-spm");
    let o = convert(&[s(&model), "--outtype".into(), "q9_z".into()], &work);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown --outtype"));
    let o = convert(
        &[s(&work.join("missing")), "--outtype".into(), "f16".into()],
        &work,
    );
    assert_eq!(o.status.code(), Some(3));
    std::fs::write(work.join("junk.bin"), b"not a model at all").unwrap();
    let o = convert(&[s(&work.join("junk.bin")), s(&work.join("o.gguf"))], &work);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!work.join("o.gguf").exists());
}

/// An OUT that exists is refused (without `--force`) before SRC is read: a source that
/// would fail to read does not get to say so, and the existing file is kept.
#[test]
fn an_existing_output_is_refused_before_the_model_is_read() {
    let work = scratch("cli-exists-early");
    std::fs::write(work.join("junk.bin"), b"not a model at all").unwrap();
    let out = work.join("o.gguf");
    std::fs::write(&out, b"keep me").unwrap();
    let o = Command::new(BIN)
        .args([s(&work.join("junk.bin")), s(&out), "--quiet".into()])
        .current_dir(&work)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("already exists"), "{err}");
    assert!(
        !err.contains("junk.bin"),
        "the source was read first: {err}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    // With --force the source is read, and its error is the one reported.
    let o = convert(&[s(&work.join("junk.bin")), s(&out)], &work);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
}

#[test]
fn list_architectures_prints_every_class_and_unknown_ones_get_suggestions() {
    let work = scratch("cli-archs");
    let o = convert(&["--list-architectures".into()], &work);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for (hf, gguf) in [
        ("LlamaForCausalLM", "llama"),
        ("Olmo2ForCausalLM", "olmo2"),
        ("GPTNeoXForCausalLM", "gptneox"),
        ("CohereForCausalLM", "command-r"),
    ] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == [hf, gguf]),
            "{hf} -> {gguf} missing:\n{text}"
        );
    }
    // Projector classes: the text architecture (`-` when none) and the projector with the
    // encoders it writes.
    for (hf, gguf, mmproj) in [
        (
            "Gemma3ForConditionalGeneration",
            "gemma3",
            "gemma3 (vision)",
        ),
        (
            "Qwen2VLForConditionalGeneration",
            "qwen2vl",
            "qwen2vl_merger (vision)",
        ),
        (
            "Qwen3VLForConditionalGeneration",
            "qwen3vl",
            "qwen3vl_merger (vision)",
        ),
        (
            "Qwen3VLMoeForConditionalGeneration",
            "qwen3vlmoe",
            "qwen3vl_merger (vision)",
        ),
        ("LlavaForConditionalGeneration", "llama", "pixtral (vision)"),
        (
            "Qwen2AudioForConditionalGeneration",
            "qwen2",
            "qwen2a (audio)",
        ),
        ("SmolVLMForConditionalGeneration", "-", "idefics3 (vision)"),
        ("InternVisionModel", "-", "internvl (vision)"),
        ("UltravoxModel", "(refused:", "ultravox (audio)"),
    ] {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(hf))
            .unwrap_or_else(|| panic!("{hf} missing:\n{text}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[1], gguf, "{line}");
        assert!(line.ends_with(&format!("mmproj: {mmproj}")), "{line}");
    }
    let o = convert(&["--list-architectures".into(), "--json".into()], &work);
    let j: Json = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j.as_array().unwrap().len(), text.lines().count());
    let row = |hf: &str| {
        j.as_array()
            .unwrap()
            .iter()
            .find(|r| r["hf"] == hf)
            .unwrap_or_else(|| panic!("{hf}"))
            .clone()
    };
    assert_eq!(
        row("Qwen2AudioForConditionalGeneration"),
        serde_json::json!({"hf": "Qwen2AudioForConditionalGeneration", "gguf": "qwen2",
            "mmproj": {"projector_type": "qwen2a", "encoders": ["audio"]},
            "text_status": "converted", "mmproj_status": "converted"})
    );
    assert_eq!(row("LlamaForCausalLM")["mmproj_status"], "none");
    // Every class of llama.cpp's converter's two maps is listed, with its status.
    let reference: Json =
        serde_json::from_str(&std::fs::read_to_string(testdata("reference-classes.json")).unwrap())
            .unwrap();
    for (map, half, key) in [
        ("text", "gguf", "text_status"),
        ("mmproj", "mmproj", "mmproj_status"),
    ] {
        for class in reference[map].as_object().unwrap().keys() {
            let r = row(class);
            let refused =
                map == "text" && ggufkit_converters::hf::reference::text_refusal(class).is_some();
            let want = if refused {
                "refused"
            } else if !r[half].is_null() {
                "converted"
            } else {
                "not yet"
            };
            assert_eq!(r[key], want, "{class}");
            if want == "not yet" && map == "text" {
                let line = text
                    .lines()
                    .find(|l| l.split_whitespace().next() == Some(class));
                assert!(
                    line.is_some_and(|l| l.contains("(not yet)")),
                    "{class}: {line:?}"
                );
            }
        }
    }
    assert_eq!(row("Idefics3ForConditionalGeneration")["gguf"], Json::Null);
    assert_eq!(row("LlamaForCausalLM")["mmproj"], Json::Null);
    // convert_hf_to_gguf.py's spelling, through both binary names, prints the same list.
    for bin in [BIN, env!("CARGO_BIN_EXE_convert_hf_to_gguf")] {
        let o = Command::new(bin)
            .arg("--print-supported-models")
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(String::from_utf8_lossy(&o.stdout), text, "{bin}");
    }

    // A misspelt class: refused before anything is written, with the nearest names.
    let model = work.join("m");
    std::fs::create_dir_all(&model).unwrap();
    std::fs::write(
        model.join("config.json"),
        r#"{"architectures": ["Olmo2ForCausalLMX"], "num_hidden_layers": 1}"#,
    )
    .unwrap();
    let o = convert(&[s(&model), s(&work.join("o.gguf"))], &work);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Olmo2ForCausalLMX") && err.contains("nearest supported: Olmo2ForCausalLM"),
        "{err}"
    );
    assert!(!work.join("o.gguf").exists());
}
