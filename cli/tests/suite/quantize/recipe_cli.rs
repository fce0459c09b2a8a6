//! Recipes round-trip: the recipe `gguf-inspect recipe` reads out of a llama-quantize output
//! quantizes the same source to the same bytes, through `gguf-quantize --recipe`, through
//! `--like`, and through the `--tensor-type-file` llama-quantize reads (`--plain`) with the
//! base type.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use serde_json::Value as Json;
use support::*;

const QUANTIZE: &str = env!("CARGO_BIN_EXE_gguf-quantize");
const INSPECT: &str = env!("CARGO_BIN_EXE_gguf-inspect");

fn run(bin: &str, args: &[String], cwd: &Path) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run tool")
}

fn ok(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn diff_with(out: &Path, golden_manifest: &Path) -> Vec<String> {
    let parsed = GgufFile::open(out).unwrap_or_else(|e| panic!("{e}"));
    let ours = manifest(&parsed, out, None);
    let golden: Json = serde_json::from_slice(&std::fs::read(golden_manifest).unwrap()).unwrap();
    diff_manifests(&ours, &golden)
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// The llama-spm golden llama-quantize commands that succeed, as (variant, options before
/// the input, input, type, manifest).
fn golden_commands() -> Vec<(String, Vec<String>, PathBuf, String, PathBuf)> {
    let fdir = golden_dir("recipe round trips").join("llama-spm");
    let variants: Json =
        serde_json::from_slice(&std::fs::read(fdir.join("variants.json")).unwrap()).unwrap();
    let mut out = Vec::new();
    for v in variants["variants"].as_array().unwrap() {
        if v["tool"] != "llama-quantize" || !v["ok"].as_bool().unwrap() {
            continue;
        }
        let args: Vec<String> = v["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        let at = args
            .iter()
            .position(|a| a.starts_with("{variant:"))
            .unwrap();
        let src = &args[at]["{variant:".len()..args[at].len() - 1];
        out.push((
            v["variant"].as_str().unwrap().to_string(),
            args[..at].to_vec(),
            conv::golden_gguf("llama-spm", src),
            args.last().unwrap().clone(),
            fdir.join(v["manifests"][0].as_str().unwrap()),
        ));
    }
    out
}

/// Only the `--imatrix FILE` of a command's options (the rest is what the recipe records).
fn imatrix_args(opts: &[String]) -> Vec<String> {
    match opts.iter().position(|a| a == "--imatrix") {
        Some(i) => opts[i..i + 2].to_vec(),
        None => Vec::new(),
    }
}

#[test]
fn recipes_of_every_golden_quantization_reproduce_it() {
    let dir = scratch("recipe-golden");
    for f in ["imatrix.gguf", "imatrix.dat"] {
        std::fs::copy(
            testdata(&format!("golden/llama-spm/files/{f}")),
            dir.join(f),
        )
        .unwrap();
    }
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut overrides = 0;
    let mut provenances = 0;
    for (variant, opts, input, ty, golden) in golden_commands() {
        let first = dir.join(format!("{variant}.gguf"));
        let mut argv = vec!["-q".to_string()];
        argv.extend(opts.iter().cloned());
        argv.extend([s(&input), s(&first), ty.clone()]);
        ok(&run(QUANTIZE, &argv, &dir), &variant);
        let recipe = dir.join(format!("{variant}.recipe"));
        let text = ok(&run(INSPECT, &["recipe".into(), s(&first)], &dir), &variant);
        std::fs::write(&recipe, &text).unwrap();
        overrides += text.lines().filter(|l| !l.starts_with('#')).count();
        let plain = dir.join(format!("{variant}.tensor-types"));
        let items = ok(
            &run(
                INSPECT,
                &["recipe".into(), "--plain".into(), s(&first)],
                &dir,
            ),
            &variant,
        );
        std::fs::write(&plain, &items).unwrap();
        let im = imatrix_args(&opts);
        let base = text
            .lines()
            .find_map(|l| l.strip_prefix("# base: "))
            .unwrap()
            .to_string();
        let ways: [(&str, Vec<String>); 3] = [
            ("--recipe", vec!["--recipe".into(), s(&recipe)]),
            ("--like", vec!["--like".into(), s(&first)]),
            (
                "--tensor-type-file",
                vec!["--tensor-type-file".into(), s(&plain)],
            ),
        ];
        for (way, extra) in ways {
            let again = dir.join(format!("{variant}-again.gguf"));
            let mut argv = vec!["-q".to_string()];
            argv.extend(im.iter().cloned());
            argv.extend(extra);
            argv.extend([s(&input), s(&again)]);
            if way == "--tensor-type-file" {
                argv.push(base.clone());
            }
            let o = run(QUANTIZE, &argv, &dir);
            if !o.status.success() {
                failures.push(format!(
                    "{variant} {way}: {}",
                    String::from_utf8_lossy(&o.stderr)
                ));
                continue;
            }
            let d = diff_with(&again, &golden);
            if !d.is_empty() {
                failures.push(format!("{variant} {way}:\n  {}", d.join("\n  ")));
            }
            checked += 1;
        }
        // Provenance: the file is what its source gives with the file's own recipe.
        let mut argv = vec![
            "provenance".to_string(),
            s(&first),
            "--from".into(),
            s(&input),
        ];
        argv.extend(im.iter().cloned());
        let o = run(INSPECT, &argv, &dir);
        let out = String::from_utf8_lossy(&o.stdout);
        if !o.status.success() || !out.contains(": identical against") {
            failures.push(format!(
                "{variant} provenance: {out}{}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        provenances += 1;
        std::fs::remove_file(&first).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 3 * 40, "only {checked} round trips");
    assert!(provenances >= 40, "only {provenances} provenance checks");
    // The options-made variants (pure, leave-output, output/embedding types, tensor-type)
    // need overrides; the plain mixes need none.
    assert!(overrides > 0);
    eprintln!("{checked} recipe round trips, {overrides} overrides in all");
}

#[test]
fn a_plain_mix_has_no_overrides_and_options_become_overrides() {
    let dir = scratch("recipe-shape");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let out = dir.join("o.gguf");
    let quantize = |extra: &[&str], ty: &str| {
        let mut argv: Vec<String> = vec!["-q".into()];
        argv.extend(extra.iter().map(|x| x.to_string()));
        argv.extend([s(&input), s(&out), ty.into()]);
        ok(&run(QUANTIZE, &argv, &dir), ty);
        ok(&run(INSPECT, &["recipe".into(), s(&out)], &dir), "recipe")
    };
    let text = quantize(&[], "Q4_K_M");
    assert_eq!(
        text.lines().filter(|l| !l.starts_with('#')).count(),
        0,
        "{text}"
    );
    assert!(text.contains("# base: Q4_K_M\n# imatrix: no\n"), "{text}");
    let text = quantize(&["--output-tensor-type", "q8_0"], "Q3_K_S");
    let items: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(items, [r"^output\.weight$=q8_0"], "{text}");
    let j: Json = serde_json::from_str(&ok(
        &run(INSPECT, &["recipe".into(), "--json".into(), s(&out)], &dir),
        "json",
    ))
    .unwrap();
    assert_eq!(j["base"], "Q3_K_S");
    assert_eq!(j["overrides"][0]["tensor"], "output.weight");
    assert_eq!(j["overrides"][0]["type"], "q8_0");
}

#[test]
fn recipe_errors_are_usage_errors_naming_the_line() {
    let dir = scratch("recipe-bad");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let recipe = dir.join("r.recipe");
    std::fs::write(&recipe, "# base: Q4_K_M\nffn_down=q9_k\n").unwrap();
    let o = run(
        QUANTIZE,
        &[
            "--recipe".into(),
            s(&recipe),
            s(&input),
            s(&dir.join("o.gguf")),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("r.recipe: line 2: invalid ggml type 'q9_k'"),
        "{err}"
    );
    assert!(!dir.join("o.gguf").exists());
    // --like of a file that is not a quantized GGUF: an input error naming it.
    let o = run(
        QUANTIZE,
        &[
            "--like".into(),
            s(&recipe),
            s(&input),
            s(&dir.join("o.gguf")),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--like"));
}

#[test]
fn budget_mode_writes_the_recipe_it_chose() {
    let dir = scratch("recipe-budget");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let out = dir.join("b.gguf");
    let recipe = dir.join("b.recipe");
    let o = run(
        QUANTIZE,
        &[
            "-q".into(),
            "--target-bpw".into(),
            "5".into(),
            "--recipe-out".into(),
            s(&recipe),
            s(&input),
            s(&out),
        ],
        &dir,
    );
    ok(&o, "budget");
    let again = dir.join("again.gguf");
    let o = run(
        QUANTIZE,
        &[
            "-q".into(),
            "--recipe".into(),
            s(&recipe),
            s(&input),
            s(&again),
        ],
        &dir,
    );
    ok(&o, "recipe");
    // The budget's file records its choice under ggufkit.quantize.*; every tensor is the same.
    let (a, b) = (
        GgufFile::open(&out).unwrap(),
        GgufFile::open(&again).unwrap(),
    );
    assert_eq!(a.tensors.len(), b.tensors.len());
    for (x, y) in a.tensors.iter().zip(&b.tensors) {
        assert_eq!((&x.name, x.ty), (&y.name, y.ty));
        assert_eq!(a.tensor_data(x), b.tensor_data(y), "{}", x.name);
    }
}

/// The README's ladder: recipes read out of an uploader's quants (Q2_K … Q8_0 and a custom
/// layout), a jobs file of recipe outputs (and one `like`), one pass over the source: every
/// file equals the llama-quantize command that made the original, byte for byte.
#[test]
fn batch_outputs_that_are_recipes_reproduce_the_files() {
    let dir = scratch("recipe-batch");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let golden = golden_dir("recipe batch").join("llama-spm");
    let made = |name: &str, args: &[&str]| {
        let out = dir.join(name);
        let mut argv: Vec<String> = vec!["-q".into()];
        argv.extend(args[..args.len() - 1].iter().map(|x| x.to_string()));
        argv.extend([s(&input), s(&out), args[args.len() - 1].into()]);
        ok(&run(QUANTIZE, &argv, &dir), name);
        out
    };
    // The uploader's files (llama-quantize's, which gguf-quantize reproduces byte for byte).
    let ladder = ["Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0"];
    let upstream = dir.join("upstream");
    std::fs::create_dir_all(&upstream).unwrap();
    let mut files: Vec<(String, PathBuf, String)> = Vec::new();
    for q in ladder {
        let f = made(&format!("upstream/model-{q}.gguf"), &[q]);
        files.push((q.to_string(), f, format!("quant-{q}.json")));
    }
    let custom = made(
        "upstream/model-custom.gguf",
        &["--tensor-type", "ffn_down=q8_0", "Q4_K_M"],
    );
    files.push((
        "custom".into(),
        custom,
        "quant-tensortype-ffn_down-q8_0-Q4_K_M.json".into(),
    ));
    let mut outputs = String::new();
    for (q, f, _) in &files {
        let text = ok(&run(INSPECT, &["recipe".into(), s(f)], &dir), q);
        std::fs::write(dir.join(format!("{q}.recipe")), text).unwrap();
        outputs.push_str(&format!(
            "  {{ recipe = \"{q}.recipe\", name = \"model-{q}.gguf\" }},\n"
        ));
    }
    made("q3.gguf", &["Q3_K_L"]);
    outputs.push_str("  { like = \"q3.gguf\", name = \"q3.gguf\" },\n");
    let outdir = dir.join("out");
    std::fs::write(
        dir.join("ladder.toml"),
        format!(
            "[[job]]\nsource = {:?}\noutdir = \"out\"\noutputs = [\n{outputs}]\n",
            s(&input)
        ),
    )
    .unwrap();
    let o = run(
        env!("CARGO_BIN_EXE_gguf-convert"),
        &["--batch".into(), "ladder.toml".into(), "-q".into()],
        &dir,
    );
    ok(&o, "batch");
    files.push(("q3".into(), dir.join("q3.gguf"), "quant-Q3_K_L.json".into()));
    for (q, _, manifest) in &files {
        let file = if q == "q3" {
            "q3.gguf".to_string()
        } else {
            format!("model-{q}.gguf")
        };
        let d = diff_with(&outdir.join(&file), &golden.join(manifest));
        assert!(d.is_empty(), "{file}:\n{}", d.join("\n"));
    }
    // An output with neither a type nor a recipe is refused, naming the job.
    std::fs::write(
        dir.join("bad.toml"),
        format!(
            "[[job]]\nsource = {:?}\noutputs = [{{ name = \"x.gguf\" }}]\n",
            s(&input)
        ),
    )
    .unwrap();
    let o = run(
        env!("CARGO_BIN_EXE_gguf-convert"),
        &["--batch".into(), "bad.toml".into(), "-q".into()],
        &dir,
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("job 1") && err.contains("needs a type"),
        "{err}"
    );
}

/// A recipe type whose blocks do not divide a tensor's rows falls back as llama-quantize's
/// rules say, and the tensor is reported.
#[test]
fn a_recipe_type_that_does_not_divide_a_row_falls_back_and_is_reported() {
    let dir = scratch("recipe-fallback");
    let input = conv::golden_gguf("arcee", "convert-f32");
    let f = GgufFile::open(&input).unwrap();
    let q = f
        .tensors
        .iter()
        .find(|t| t.name == "blk.0.attn_q.weight")
        .unwrap();
    assert_ne!(
        q.dims[0] % 256,
        0,
        "the fixture's rows must not be whole Q4_K blocks"
    );
    let recipe = dir.join("r.recipe");
    std::fs::write(&recipe, "# base: Q4_0\n^blk\\.0\\.attn_q\\.weight$=q4_k\n").unwrap();
    let out = dir.join("o.gguf");
    let o = run(
        QUANTIZE,
        &["--recipe".into(), s(&recipe), s(&input), s(&out)],
        &dir,
    );
    ok(&o, "fallback");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("blk.0.attn_q.weight: its rows are not whole blocks"),
        "{err}"
    );
    let g = GgufFile::open(&out).unwrap();
    let t = g
        .tensors
        .iter()
        .find(|t| t.name == "blk.0.attn_q.weight")
        .unwrap();
    assert_ne!(t.ty, ggufkit::quantizers::GgmlType::Q4_K);
}

/// A run whose conditions differ from the recipe's (no imatrix for a layout made with one,
/// another base type) is warned: the rules may type the tensors the recipe leaves to them
/// otherwise.
#[test]
fn a_run_unlike_the_recipes_conditions_is_warned() {
    let dir = scratch("recipe-warn");
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let recipe = dir.join("r.recipe");
    std::fs::write(&recipe, "# base: Q4_K_M\n# imatrix: yes\n").unwrap();
    let o = run(
        QUANTIZE,
        &[
            "--recipe".into(),
            s(&recipe),
            s(&input),
            s(&dir.join("o.gguf")),
            "Q5_K_M".into(),
        ],
        &dir,
    );
    ok(&o, "warned run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("base file type is Q4_K_M, this run's Q5_K_M"),
        "{err}"
    );
    assert!(err.contains("made with an importance matrix"), "{err}");
}

/// llama-spm's f32 golden file and its Q4_K_M made by gguf-quantize in `dir`.
fn llama_spm_q4_k_m(dir: &Path) -> (PathBuf, PathBuf) {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let q = dir.join("q.gguf");
    let argv: Vec<String> = vec!["-q".into(), s(&input), s(&q), "Q4_K_M".into()];
    ok(&run(QUANTIZE, &argv, dir), "quantize");
    (input, q)
}

/// The tensor `name` of `m` with its bytes changed by `f`.
fn tamper(m: &mut ggufkit::ir::Model, name: &str, f: impl FnOnce(&mut Vec<u8>)) {
    use ggufkit::ir::TensorData;
    let t = m.tensors.iter_mut().find(|t| t.name == name).unwrap();
    let mut bytes = t.data.bytes().unwrap().into_owned();
    f(&mut bytes);
    t.data = TensorData::Owned(std::sync::Arc::new(bytes));
}

/// Provenance: an honest quantization is identical; a swapped row, one ulp in a float tensor
/// and an edited chat template are named exactly, with the size of each difference and the
/// template's diff (exit 1); `--json` says the same.
#[test]
fn provenance_names_exactly_what_differs() {
    use ggufkit::gguf::Value;
    use ggufkit::ir::Model;
    let dir = scratch("recipe-provenance");
    let (input, q) = llama_spm_q4_k_m(&dir);
    let check = |file: &Path, extra: &[&str]| {
        let mut argv = vec!["provenance".into(), s(file), "--from".into(), s(&input)];
        argv.extend(extra.iter().map(|a| a.to_string()));
        run(INSPECT, &argv, &dir)
    };
    let out = ok(&check(&q, &[]), "provenance of an honest file");
    assert!(out.contains(": identical against"), "{out}");

    let f = GgufFile::open(&q).unwrap();
    let mut m = Model::from_gguf(&f);
    let row = {
        let t = m
            .tensors
            .iter()
            .find(|t| t.name == "blk.0.attn_q.weight")
            .unwrap();
        ggufkit::quantizers::row_size(t.ty, t.dims[0] as usize).unwrap()
    };
    tamper(&mut m, "blk.0.attn_q.weight", |b| {
        let (a, rest) = b.split_at_mut(row);
        a.swap_with_slice(&mut rest[..row]);
    });
    tamper(&mut m, "blk.1.attn_norm.weight", |b| {
        let v = f32::from_le_bytes(b[..4].try_into().unwrap());
        b[..4].copy_from_slice(&f32::from_bits(v.to_bits() + 1).to_le_bytes());
    });
    let template = m
        .metadata
        .get("tokenizer.chat_template")
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap();
    m.metadata.set(
        "tokenizer.chat_template",
        Value::from(template.replacen("[INST]", "[INST] (obey the hidden rules)", 1)),
    );
    let bad = dir.join("bad.gguf");
    write_gguf(&m, &bad).unwrap();
    let o = check(&bad, &[]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let named: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("tensor ") || l.starts_with("key "))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        named,
        [
            "tensor blk.0.attn_q.weight",
            "tensor blk.1.attn_norm.weight",
            "key tokenizer.chat_template"
        ],
        "{out}"
    );
    assert!(
        out.contains("tensor blk.0.attn_q.weight: different ("),
        "{out}"
    );
    assert!(
        out.contains(
            "tensor blk.1.attn_norm.weight: different (1 of 1024 bytes, 1 of 256 blocks differ"
        ),
        "{out}"
    );
    assert!(
        out.contains("+++ tokenizer.chat_template (in the file)"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with('+') && l.contains("(obey the hidden rules)")),
        "{out}"
    );
    let summary = out.lines().last().unwrap();
    assert!(summary.contains("DIFFERS"), "{summary}");
    assert!(
        summary.contains("2 different; 30 keys, 1 different"),
        "{summary}"
    );

    let o = check(&bad, &["--json"]);
    assert_eq!(o.status.code(), Some(1));
    let j: Json = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["outcome"], "differs");
    assert_eq!(j["counts"]["different"], 2);
    let verdicts: Vec<(&str, &str)> = j["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["verdict"] != "identical")
        .map(|t| (t["name"].as_str().unwrap(), t["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("blk.0.attn_q.weight", "different"),
            ("blk.1.attn_norm.weight", "different")
        ]
    );
    assert_eq!(j["keys"][0]["key"], "tokenizer.chat_template");
    assert!(j["chat_template_diff"].as_array().unwrap().len() > 3);
}

/// A file whose Q4_K tensors were quantized as a build with fused multiply-adds computes
/// them (llama.cpp on arm64) is "equivalent within rounding": the tensors that came out
/// differently are named as such, nothing is "different", and the exit status is 1 unless
/// `--allow-rounding` is given.
#[test]
fn provenance_tells_a_fused_multiply_add_build_from_a_change() {
    use ggufkit::ir::Model;
    use ggufkit::quantizers::{fused::quantize_rows_fused, GgmlType};
    let dir = scratch("recipe-provenance-fma");
    let (input, q) = llama_spm_q4_k_m(&dir);
    let src = GgufFile::open(&input).unwrap();
    let f = GgufFile::open(&q).unwrap();
    let mut m = Model::from_gguf(&f);
    let mut changed = Vec::new();
    let q4k: Vec<String> = m
        .tensors
        .iter()
        .filter(|t| t.ty == GgmlType::Q4_K)
        .map(|t| t.name.clone())
        .collect();
    assert!(q4k.len() >= 8);
    for name in &q4k {
        let x: Vec<f32> = src
            .tensor_data(src.tensors.iter().find(|t| &t.name == name).unwrap())
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        tamper(&mut m, name, |b| {
            let before = b.clone();
            quantize_rows_fused(GgmlType::Q4_K, &x, b).unwrap();
            if *b != before {
                changed.push(name.clone());
            }
        });
    }
    assert!(!changed.is_empty(), "the fused kernel changed no tensor");
    let fused = dir.join("fused.gguf");
    write_gguf(&m, &fused).unwrap();
    let args = |extra: &[&str]| {
        let mut argv = vec!["provenance".into(), s(&fused), "--from".into(), s(&input)];
        argv.extend(extra.iter().map(|a| a.to_string()));
        argv
    };
    let o = run(INSPECT, &args(&[]), &dir);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let within: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(": equivalent within rounding ("))
        .map(|l| l.split(':').next().unwrap().trim_start_matches("tensor "))
        .collect();
    assert_eq!(within, changed, "{out}");
    assert!(!out.contains(": different"), "{out}");
    assert!(
        out.lines()
            .last()
            .unwrap()
            .contains("equivalent within rounding, not identical"),
        "{out}"
    );
    let o = run(INSPECT, &args(&["--allow-rounding"]), &dir);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Provenance from a HuggingFace directory: every fixture's one-pass `q4_k_m` and its `f16`
/// conversion are identical to what the directory gives; `--via` takes only converter float
/// types.
#[test]
fn provenance_from_huggingface_directories() {
    const CONVERT: &str = env!("CARGO_BIN_EXE_gguf-convert");
    let dir = scratch("recipe-provenance-hf");
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(testdata("hf"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut fixtures = Vec::new();
    for name in &names {
        let work = dir.join(name);
        std::fs::create_dir_all(&work).unwrap();
        let fixture = support::paths::materialize_fixture(name, &work);
        if fixture.join("config.json").is_file() {
            fixtures.push(fixture);
        }
    }
    for fixture in &fixtures {
        for ty in ["q4_k_m", "f16"] {
            let out = dir.join(format!("{ty}.gguf"));
            let _ = std::fs::remove_file(&out);
            let argv = vec![
                s(fixture),
                s(&out),
                "--outtype".into(),
                ty.into(),
                "-q".into(),
            ];
            if !run(CONVERT, &argv, &dir).status.success() {
                continue; // refused as by the reference; the conversion tests cover it
            }
            let mut argv = vec!["provenance".into(), s(&out), "--from".into(), s(fixture)];
            if ty == "f16" {
                // Some fixtures convert to another file type (NVFP4) whatever the outtype.
                argv.extend(["--via".into(), ty.into()]);
            }
            let o = run(INSPECT, &argv, &dir);
            let text = String::from_utf8_lossy(&o.stdout);
            if !o.status.success() || !text.contains(": identical against") {
                failures.push(format!(
                    "{} {ty}: {text}{}",
                    fixture.display(),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 100, "only {checked} conversions checked");
    eprintln!(
        "{checked} conversions of {} fixtures identical by provenance",
        fixtures.len()
    );
    let argv: Vec<String> = vec![
        "provenance".into(),
        "x.gguf".into(),
        "--from".into(),
        s(&fixtures[0]),
        "--via".into(),
        "q4_k_m".into(),
    ];
    assert_eq!(run(INSPECT, &argv, &dir).status.code(), Some(2));
}
