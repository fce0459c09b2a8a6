//! gguf-quantize reproduces llama-quantize's output byte for byte: the core cases use the
//! llama-spm files in testdata/, the full suite every quantize command in the golden set.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use serde_json::Value as Json;
use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-quantize");

fn quantize(args: &[String], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(["--quiet", "--force"])
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run gguf-quantize")
}

fn compare(out: &Path, golden_manifest: &Path) -> Vec<String> {
    let parsed = GgufFile::open(out).unwrap_or_else(|e| panic!("{e}"));
    let ours = manifest(&parsed, out, None);
    let golden: Json = serde_json::from_slice(&std::fs::read(golden_manifest).unwrap()).unwrap();
    diff_manifests(&ours, &golden)
}

/// Copies the imatrix files into `dir`, which is used as the working directory so that the
/// relative name stored in `quantize.imatrix.file` matches llama.cpp's.
fn workdir(name: &str, imatrix_dir: &Path) -> ggufkit_testsupport::Scratch {
    let dir = scratch(name);
    for f in ["imatrix.gguf", "imatrix.dat"] {
        let src = imatrix_dir.join(f);
        if src.exists() {
            std::fs::copy(&src, dir.join(f)).unwrap();
        }
    }
    dir
}

#[test]
fn core_llama_spm_quantizations_match_golden() {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let dir = workdir("q-core", &testdata("golden/llama-spm/files"));
    std::fs::copy(
        testdata("golden/llama-spm/files/imatrix.gguf"),
        dir.join("imatrix.gguf"),
    )
    .unwrap();
    let cases: &[(&str, &[&str])] = &[
        ("quant-Q4_0", &["Q4_0"]),
        ("quant-Q4_K_M", &["Q4_K_M"]),
        ("quant-Q6_K", &["q6_k"]),
        ("quant-Q2_K", &["Q2_K"]),
        ("quant-Q3_K_M", &["12"]),
        ("quant-IQ4_XS", &["IQ4_XS"]),
        ("quant-TQ1_0", &["TQ1_0"]),
        ("quant-pure-Q4_K_M", &["--pure", "Q4_K_M"]),
        (
            "quant-imatrix-Q4_K_M",
            &["--imatrix", "imatrix.gguf", "Q4_K_M"],
        ),
        (
            "quant-imatrixdat-Q4_K_M",
            &["--imatrix", "imatrix.dat", "Q4_K_M"],
        ),
        (
            "quant-imatrix-IQ2_XXS",
            &["--imatrix", "imatrix.gguf", "IQ2_XXS"],
        ),
        (
            "quant-imatrix-IQ3_XXS",
            &["--imatrix", "imatrix.gguf", "IQ3_XXS"],
        ),
    ];
    let mut failures = Vec::new();
    for (variant, args) in cases {
        let out = dir.join(format!("{variant}.gguf"));
        let (opts, ty) = args.split_at(args.len() - 1);
        let mut argv: Vec<String> = opts.iter().map(|s| s.to_string()).collect();
        argv.extend([
            input.to_str().unwrap().to_string(),
            out.to_str().unwrap().to_string(),
            ty[0].to_string(),
        ]);
        let o = quantize(&argv, &dir);
        if !o.status.success() {
            failures.push(format!(
                "{variant}: failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
            continue;
        }
        let d = compare(&out, &testdata(&format!("golden/llama-spm/{variant}.json")));
        if !d.is_empty() {
            failures.push(format!("{variant}:\n  {}", d.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn q2_k_s_without_imatrix_fails_like_llama_quantize_and_writes_nothing() {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let dir = scratch("q-q2ks");
    let out = dir.join("out.gguf");
    let o = quantize(
        &[
            input.to_str().unwrap().into(),
            out.to_str().unwrap().into(),
            "Q2_K_S".into(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("blk.0.attn_k.weight") && err.contains("importance matrix"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "output or temp file left behind"
    );
}

/// Target types whose quantizers (IQ1–IQ3) are not written yet: those golden variants must
/// fail with a clear message instead of producing anything, and are reported as not run.
use conv::{NOT_YET, NOT_YET_REASON};

#[test]
fn every_golden_quantize_command_matches() {
    let golden = golden_dir("every_golden_quantize_command_matches");
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut not_run = Vec::new();
    for fx in conv::FIXTURES {
        let fdir = golden.join(fx);
        let variants: Json =
            serde_json::from_slice(&std::fs::read(fdir.join("variants.json")).unwrap()).unwrap();
        let dir = workdir(&format!("q-golden-{fx}"), &fdir.join("files"));
        for v in variants["variants"].as_array().unwrap() {
            if v["tool"] != "llama-quantize" {
                continue;
            }
            let name = v["variant"].as_str().unwrap();
            let out = dir.join(format!("{name}.gguf"));
            let argv: Vec<String> = v["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    let a = a.as_str().unwrap();
                    if a == "{out}" {
                        out.to_str().unwrap().to_string()
                    } else if let Some(src) = a
                        .strip_prefix("{variant:")
                        .and_then(|s| s.strip_suffix('}'))
                    {
                        // llama.cpp's own file, remade by our converter and checked
                        // against its manifest's sha256.
                        let p = conv::golden_gguf(fx, src);
                        p.to_str().unwrap().to_string()
                    } else {
                        a.to_string()
                    }
                })
                .collect();
            let target = argv.last().unwrap().to_uppercase();
            let o = quantize(&argv, &dir);
            let ok = v["ok"].as_bool().unwrap();
            if NOT_YET.contains(&target.as_str()) {
                not_run.push((format!("{fx}/{name}"), NOT_YET_REASON.to_string()));
                let err = String::from_utf8_lossy(&o.stderr);
                if o.status.success()
                    || !(err.contains("not supported yet") || err.contains("importance matrix"))
                {
                    failures.push(format!(
                        "{fx}/{name}: expected a clear 'not supported yet' failure, got {err}"
                    ));
                }
                continue;
            }
            checked += 1;
            match (ok, o.status.success()) {
                (true, true) => {
                    let d = compare(&out, &fdir.join(v["manifests"][0].as_str().unwrap()));
                    if !d.is_empty() {
                        failures.push(format!(
                            "{fx}/{name}:\n  {}",
                            d.iter().take(5).cloned().collect::<Vec<_>>().join("\n  ")
                        ));
                    }
                    std::fs::remove_file(&out).unwrap();
                }
                (false, false) => assert!(!out.exists(), "{fx}/{name}: failed run left an output"),
                (true, false) => failures.push(format!(
                    "{fx}/{name}: failed: {}",
                    String::from_utf8_lossy(&o.stderr)
                )),
                (false, true) => failures.push(format!(
                    "{fx}/{name}: llama-quantize failed but we succeeded"
                )),
            }
        }
    }
    eprintln!("checked {checked} golden quantize commands");
    assert!(checked > 200, "only {checked} commands found");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    record(
        "quantize_golden",
        checked,
        "golden llama-quantize commands matched through gguf-quantize",
        &not_run,
    );
}

/// Writes llama-spm f32 as three shards (10 tensors each, like llama-gguf-split) into `dir`.
fn write_shards(dir: &Path) -> PathBuf {
    use ggufkit::ir::Model;
    use ggufkit::split::{distribute, split_path};
    use ggufkit_testsupport::write_gguf;
    let f = GgufFile::open(&conv::golden_gguf("llama-spm", "convert-f32")).unwrap();
    let model = Model::from_gguf(&f);
    let shard_of: Vec<usize> = (0..model.tensors.len()).map(|i| i / 10).collect();
    let prefix = dir.join("spm").to_str().unwrap().to_string();
    for (i, part) in distribute(&model, &shard_of).iter().enumerate() {
        write_gguf(part, &split_path(&prefix, i, 3)).unwrap();
    }
    split_path(&prefix, 0, 3)
}

#[test]
fn split_input_quantizes_like_the_merged_file() {
    let dir = scratch("q-split-in");
    let first = write_shards(&dir);
    let out = dir.join("out.gguf");
    let o = quantize(
        &[
            first.to_str().unwrap().into(),
            out.to_str().unwrap().into(),
            "Q4_K_M".into(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = compare(&out, &testdata("golden/llama-spm/quant-Q4_K_M.json"));
    assert!(d.is_empty(), "{}", d.join("\n"));
}

#[test]
fn keep_split_writes_one_shard_per_input_shard() {
    let dir = scratch("q-keep-split");
    let first = write_shards(&dir);
    let out = dir.join("q.gguf");
    let o = quantize(
        &[
            "--keep-split".into(),
            first.to_str().unwrap().into(),
            out.to_str().unwrap().into(),
            "Q4_0".into(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut total = 0;
    for i in 1..=3 {
        let p = dir.join(format!("q-{i:05}-of-00003.gguf"));
        let f = GgufFile::open(&p).unwrap();
        assert_eq!(f.metadata.get_u16("split.no").unwrap(), i as u16 - 1);
        assert_eq!(f.metadata.get_u16("split.count").unwrap(), 3);
        assert_eq!(f.metadata.get_i32("split.tensors.count").unwrap(), 21);
        assert_eq!(
            f.metadata.get("general.architecture").is_some(),
            i == 1,
            "only shard 1 has the model metadata"
        );
        total += f.tensors.len();
    }
    assert_eq!(total, 21);
}

#[test]
fn broken_split_sets_are_refused() {
    let dir = scratch("q-split-bad");
    let first = write_shards(&dir);
    let run = |first: &Path| {
        let o = quantize(
            &[
                first.to_str().unwrap().into(),
                dir.join("o.gguf").to_str().unwrap().into(),
                "Q4_0".into(),
            ],
            &dir,
        );
        assert_eq!(
            o.status.code(),
            Some(3),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!dir.join("o.gguf").exists());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // Opening a later shard.
    let e = run(&dir.join("spm-00002-of-00003.gguf"));
    assert!(e.contains("open the first shard"), "{e}");
    // A missing shard.
    std::fs::rename(dir.join("spm-00003-of-00003.gguf"), dir.join("moved.gguf")).unwrap();
    let e = run(&first);
    assert!(e.contains("spm-00003-of-00003.gguf"), "{e}");
    // A shard from another set (wrong split.no).
    std::fs::copy(
        dir.join("spm-00002-of-00003.gguf"),
        dir.join("spm-00003-of-00003.gguf"),
    )
    .unwrap();
    let e = run(&first);
    assert!(e.contains("expected 2 / 3"), "{e}");
}
