//! `gguf-edit split` / `merge` reproduce llama-gguf-split byte for byte: every `split-*` and
//! `merge` case of the golden data (testdata/golden/llama-spm, commands in its commands.txt)
//! run through each of gguf-edit's command-line forms, compared with llama.cpp's manifests.

use ggufkit_testsupport as support;

use std::path::Path;
use std::process::{Command, Output};

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use serde_json::Value as Json;
use support::golden::{golden_gguf, sha256_file};
use support::*;

const EDIT: &str = env!("CARGO_BIN_EXE_gguf-edit");

fn edit(args: &[&str], cwd: &Path) -> Output {
    Command::new(EDIT)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn read_json(p: &Path) -> Json {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The differences between our file and a golden manifest (empty when byte-identical).
fn compare(ours: &Path, golden: &Json) -> Vec<String> {
    let f = GgufFile::open(ours).unwrap_or_else(|e| panic!("{e}"));
    diff_manifests(&manifest(&f, ours, None), golden)
}

/// One golden variant of llama-spm: its tool arguments and manifests.
struct Case {
    variant: String,
    args: Vec<String>,
    manifests: Vec<String>,
}

fn cases() -> Vec<Case> {
    let v = read_json(&testdata("golden/llama-spm/variants.json"));
    let list = v["variants"]
        .as_array()
        .or_else(|| v.as_array())
        .cloned()
        .unwrap_or_default();
    list.iter()
        .filter(|c| c["tool"] == "llama-gguf-split" && c["ok"] == true)
        .map(|c| Case {
            variant: c["variant"].as_str().unwrap().to_string(),
            args: c["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect(),
            manifests: c["manifests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect(),
        })
        .collect()
}

#[test]
fn every_golden_split_and_merge_case_is_byte_identical() {
    let golden = testdata("golden/llama-spm");
    let cases = cases();
    let names: Vec<&str> = cases.iter().map(|c| c.variant.as_str()).collect();
    assert!(
        names.contains(&"split") && names.contains(&"merge"),
        "golden cases: {names:?}"
    );
    let input = golden_gguf("llama-spm", "quant-Q4_K_M");
    let mut failures = Vec::new();
    let mut checked = 0;
    // Each case through llama-gguf-split's own command line and gguf-edit's subcommands.
    for form in ["flags", "subcommand"] {
        let dir = scratch(&format!("split-golden-{form}"));
        std::fs::create_dir_all(dir.join("split")).unwrap();
        for case in &cases {
            // Placeholders: {variant:quant-Q4_K_M}, {variant:split-00001-of-00003}, {out}.
            let out = Path::new(&case.manifests[0]).with_extension("gguf");
            let mut args: Vec<String> = Vec::new();
            for a in &case.args {
                args.push(match a.as_str() {
                    "{variant:quant-Q4_K_M}" => input.to_str().unwrap().to_string(),
                    "{variant:split-00001-of-00003}" => {
                        "split/spm-Q4_K_M-00001-of-00003.gguf".into()
                    }
                    "{out}" => out.to_str().unwrap().to_string(),
                    other if other.starts_with('{') => {
                        panic!("{}: no value for {other}", case.variant)
                    }
                    other => other.to_string(),
                });
            }
            if form == "subcommand" {
                let op = if args.iter().any(|a| a == "--merge") {
                    "merge"
                } else {
                    "split"
                };
                args.retain(|a| a != "--merge" && a != "--split");
                args.insert(0, op.into());
            }
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = edit(&argv, &dir);
            ok(&o);
            for m in &case.manifests {
                let want = read_json(&golden.join(m));
                let file = want["file"].as_str().unwrap();
                let ours = if case.variant == "merge" {
                    dir.join(&out)
                } else {
                    dir.join("split").join(file)
                };
                let d = compare(&ours, &want);
                if !d.is_empty() {
                    failures.push(format!(
                        "{form} {}/{m}:\n  {}",
                        case.variant,
                        d.join("\n  ")
                    ));
                }
                checked += 1;
            }
        }
        let leftovers: Vec<_> = gguf_files_under(&dir)
            .into_iter()
            .chain(
                std::fs::read_dir(dir.join("split"))
                    .unwrap()
                    .flatten()
                    .map(|e| e.path()),
            )
            .filter(|p| p.to_string_lossy().contains(".ggufkit-tmp."))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    record(
        "split_golden",
        checked,
        "llama-gguf-split outputs (split shards, merge) reproduced by gguf-edit",
        &[],
    );
}

/// A split then a merge gives back the input's tensors and, apart from the split keys, its
/// metadata; splitting the merged file again gives the same shards.
#[test]
fn split_merge_round_trip() {
    let dir = scratch("split-roundtrip");
    let input = golden_gguf("llama-spm", "quant-Q4_0");
    for (limit, n) in [
        (vec!["--split-max-size", "1M"], 2usize),
        (vec!["--split-max-tensors", "4"], 6),
    ] {
        let mut args = vec!["split", "-q"];
        args.extend(limit.iter().copied());
        args.extend([input.to_str().unwrap(), "a"]);
        ok(&edit(&args, &dir));
        let first = format!("a-00001-of-{n:05}.gguf");
        assert!(dir.join(&first).is_file(), "{limit:?}: {n} shards expected");
        ok(&edit(&["merge", "-q", &first, "m.gguf"], &dir));
        let (a, m) = (
            GgufFile::open(&input).unwrap(),
            GgufFile::open(&dir.join("m.gguf")).unwrap(),
        );
        assert_eq!(a.tensors.len(), m.tensors.len());
        for (x, y) in a.tensors.iter().zip(&m.tensors) {
            assert_eq!(x.name, y.name);
            assert_eq!(a.tensor_data(x), m.tensor_data(y), "{}", x.name);
        }
        let keys = |f: &GgufFile| -> Vec<String> {
            f.metadata
                .iter()
                .map(|(k, _)| k.to_string())
                .filter(|k| !k.starts_with("split."))
                .collect()
        };
        assert_eq!(keys(&a), keys(&m));
        assert_eq!(m.metadata.get_u16("split.count").unwrap(), 0);
        // Splitting the merged file again gives the same shards.
        let mut args = vec!["split", "-q"];
        args.extend(limit.iter().copied());
        args.extend(["m.gguf", "b"]);
        ok(&edit(&args, &dir));
        for i in 0..n {
            let a = dir.join(format!("a-{:05}-of-{n:05}.gguf", i + 1));
            let b = dir.join(format!("b-{:05}-of-{n:05}.gguf", i + 1));
            assert_eq!(sha256_file(&a), sha256_file(&b), "{limit:?} shard {i}");
        }
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
}

#[test]
fn no_tensor_first_split_dry_run_and_refusals() {
    let dir = scratch("split-options");
    let input = golden_gguf("llama-spm", "quant-Q4_0");
    let inp = input.to_str().unwrap();
    // --no-tensor-first-split: the first shard holds the metadata only.
    ok(&edit(
        &[
            "--split",
            "--no-tensor-first-split",
            "--split-max-tensors",
            "100",
            "-q",
            inp,
            "s",
        ],
        &dir,
    ));
    let first = GgufFile::open(&dir.join("s-00001-of-00002.gguf")).unwrap();
    let second = GgufFile::open(&dir.join("s-00002-of-00002.gguf")).unwrap();
    assert_eq!(first.tensors.len(), 0);
    assert_eq!(second.tensors.len(), 21);
    assert_eq!(second.metadata.len(), 3);
    // --dry-run prints llama-gguf-split's plan and writes nothing.
    let o = edit(&["--split-max-tensors", "10", "--dry-run", inp, "d"], &dir);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("n_split: 3\nsplit 00001: n_tensors = 10"),
        "{out}"
    );
    assert!(!dir.join("d-00001-of-00003.gguf").exists());
    // Bad limits and operations: usage errors.
    let o = edit(&["split", "--split-max-tensors", "0", inp, "z"], &dir);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = edit(&["split", "--split-max-size", "2g", inp, "z"], &dir);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = edit(&["--split", "--merge", inp, "z"], &dir);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Merging a file that is not a first shard.
    let o = edit(&["merge", inp, "z.gguf"], &dir);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("split.count"));
    let o = edit(&["merge", "s-00002-of-00002.gguf", "z.gguf"], &dir);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // An existing merge output is refused (as llama-gguf-split does) unless --force.
    ok(&edit(
        &["merge", "-q", "s-00001-of-00002.gguf", "m.gguf"],
        &dir,
    ));
    let o = edit(&["merge", "s-00001-of-00002.gguf", "m.gguf"], &dir);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    ok(&edit(
        &["merge", "-q", "--force", "s-00001-of-00002.gguf", "m.gguf"],
        &dir,
    ));
    // --delete-splits removes the shards only after the merge is in place.
    ok(&edit(
        &[
            "--merge",
            "--delete-splits",
            "-q",
            "s-00001-of-00002.gguf",
            "m2.gguf",
        ],
        &dir,
    ));
    assert!(dir.join("m2.gguf").is_file());
    assert!(!dir.join("s-00001-of-00002.gguf").exists());
    assert!(!dir.join("s-00002-of-00002.gguf").exists());
    assert_eq!(
        sha256_file(&dir.join("m.gguf")),
        sha256_file(&dir.join("m2.gguf"))
    );
    assert!(!dir.join("z.gguf").exists());
    assert!(!dir.join("z-00001-of-00001.gguf").exists());
}

const QUANTIZE: &str = env!("CARGO_BIN_EXE_gguf-quantize");

/// Every case of testdata/golden/split (conformance/make_split_golden.py: llama-gguf-split's
/// size limit, --no-tensor-first-split, one shard, --dry-run's plan, merges, and
/// llama-quantize of split inputs with and without --keep-split), run in order in one
/// working directory: the same files, byte for byte, and nothing else.
#[test]
fn split_and_keep_split_golden_cases() {
    let golden = testdata("golden/split");
    let cases = read_json(&golden.join("cases.json"));
    let cases = cases["cases"].as_array().unwrap();
    assert!(cases.len() >= 10, "{} cases", cases.len());
    let f32 = golden_gguf("llama-spm", "convert-f32");
    let q4km = golden_gguf("llama-spm", "quant-Q4_K_M");
    let dir = scratch("split-golden-cases");
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let listing = |dir: &Path| -> std::collections::BTreeSet<String> {
        std::fs::read_dir(dir.join("out"))
            .unwrap()
            .flatten()
            .map(|e| format!("out/{}", e.file_name().to_string_lossy()))
            .collect()
    };
    let mut failures = Vec::new();
    let mut files = 0;
    for c in cases {
        let case = c["case"].as_str().unwrap();
        let args: Vec<String> = c["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| match a.as_str().unwrap() {
                "{f32}" => f32.to_str().unwrap().to_string(),
                "{q4km}" => q4km.to_str().unwrap().to_string(),
                other => other.to_string(),
            })
            .collect();
        let before = listing(&dir);
        // llama-gguf-split's bare `IN OUT` (a split by default) is gguf-edit's metadata
        // copy: without any of its flags the command line needs the `split` subcommand.
        let flagless = !args.iter().any(|a| a.starts_with("--"));
        let sub: &[&str] = if flagless { &["split"] } else { &[] };
        let o = match c["tool"].as_str().unwrap() {
            "llama-gguf-split" => Command::new(EDIT)
                .args(sub)
                .args(&args)
                .current_dir(&dir)
                .output(),
            "llama-quantize" => Command::new(QUANTIZE)
                .arg("--quiet")
                .args(&args)
                .current_dir(&dir)
                .output(),
            t => panic!("{case}: unknown tool {t}"),
        }
        .unwrap();
        ok(&o);
        if let Some(want) = c["stdout"].as_str() {
            assert_eq!(String::from_utf8_lossy(&o.stdout), want, "{case}: stdout");
        }
        let outputs = c["outputs"].as_array().unwrap();
        let want: std::collections::BTreeSet<String> = outputs
            .iter()
            .map(|f| f["file"].as_str().unwrap().to_string())
            .collect();
        let new: std::collections::BTreeSet<String> =
            listing(&dir).difference(&before).cloned().collect();
        assert_eq!(new, want, "{case}: files written");
        for (n, f) in outputs.iter().enumerate() {
            let p = dir.join(f["file"].as_str().unwrap());
            if sha256_file(&p) != f["sha256"].as_str().unwrap() {
                let m = read_json(&golden.join(format!("{case}.{n}.json")));
                failures.push(format!(
                    "{case} {}:\n  {}",
                    f["file"],
                    compare(&p, &m).join("\n  ")
                ));
            }
            files += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    record(
        "split_golden_cases",
        files,
        "llama-gguf-split / llama-quantize --keep-split outputs reproduced",
        &[],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
