//! Config variants of the architecture fixtures against the reference, from `testdata/` alone.
//!
//! `conformance/make_fixtures.py --variants` patched each fixture's config.json (rope scaling
//! of every kind the reference reads, transformers 4 spellings, partial rotary, sliding-window
//! layouts, soft-capping and multipliers, tied/untied heads, absent keys that transformers
//! fills in, special token ids...), reusing the fixture's safetensors and tokenizer, and
//! recorded what `convert_hf_to_gguf.py` wrote for f32 and bf16 in
//! `testdata/golden/variants/<fixture>/<variant>.json`: the patch, the f32 manifest relative
//! to the fixture's golden `convert-f32.json` (an entry equal to one of the base's is its
//! index, consecutive ones a run `"a-b"`; `"=base"` for an unchanged tensor list) and the bf16
//! file's size and sha256, or the reference's error when it refused the variant. Each test
//! applies the patches to a scratch copy of the fixture, converts, and compares whole files.

use ggufkit_testsupport::golden as support;

use std::path::Path;

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use ggufkit_converters::hf::{read_hf_dir, HfOptions, ModelDir, Mtp, OutType};
use ggufkit_testsupport::write_gguf;
use serde_json::{json, Value as Json};
use support::{materialize_fixture, read_json, scratch, testdata};

/// Expands a list relative to `base` (indices, runs `"a-b"`, explicit entries).
fn expand(rel: &Json, base: &Json) -> Result<Vec<Json>, String> {
    let base = base.as_array().ok_or("base list missing")?;
    if rel == "=base" {
        return Ok(base.clone());
    }
    let mut out = Vec::new();
    for e in rel.as_array().ok_or("relative list missing")? {
        match e.as_str() {
            Some(run) => {
                let (a, b) = run
                    .split_once('-')
                    .ok_or_else(|| format!("bad run {run}"))?;
                let (a, b): (usize, usize) = (
                    a.parse().map_err(|_| format!("bad run {run}"))?,
                    b.parse().map_err(|_| format!("bad run {run}"))?,
                );
                out.extend(
                    base.get(a..=b)
                        .ok_or_else(|| format!("run {run} out of range"))?
                        .iter()
                        .cloned(),
                );
            }
            None => out.push(e.clone()),
        }
    }
    Ok(out)
}

/// The reference's f32 manifest of a variant, rebuilt from its record and the base manifest.
fn expected_f32(rec: &Json, base: &Json) -> Result<Json, String> {
    let kv = expand(&rec["kv"], &base["kv"])?;
    let tensors = expand(&rec["tensors"], &base["tensors"])?;
    Ok(json!({
        "size": rec["size"],
        "sha256": rec["sha256"],
        "version": base["version"],
        "alignment": base["alignment"],
        "data_offset": rec["data_offset"],
        "n_kv": kv.len(),
        "n_tensors": tensors.len(),
        "kv": kv,
        "tensors": tensors,
    }))
}

/// Applies a variant's patch to the config.json in `dir` (top-level keys replaced, `null`
/// deletes; a composite config is patched in `text_config`).
fn apply_patch(dir: &Path, patch: &Json) {
    let path = dir.join("config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let target = if cfg.get("text_config").is_some() {
        &mut cfg["text_config"]
    } else {
        &mut cfg
    };
    let obj = target.as_object_mut().unwrap();
    for (k, v) in patch.as_object().expect("patch is an object") {
        if v.is_null() {
            obj.remove(k);
        } else {
            obj.insert(k.clone(), v.clone());
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
}

/// Converts `dir` to `outtype`, writes `out`, returns its manifest (the file is removed).
///
/// A variant whose config contradicts the weights (a key removed that the tensors need, such
/// as `num_key_value_heads` of a GQA model) makes the reference write a file llama.cpp cannot
/// load: it is refused by default, and converted with `allow_unloadable` to compare with what
/// the reference wrote.
fn convert(dir: &Path, outtype: OutType, out: &Path, draft: &HfOptions) -> Result<Json, String> {
    let opts = HfOptions {
        outtype,
        ..draft.clone()
    };
    let conv = match read_hf_dir(dir, &opts) {
        Err(ggufkit_converters::ConvertError::HparamsContradictTensors { problems, .. }) => {
            eprintln!("{}: unloadable ({})", dir.display(), problems.join("; "));
            let opts = HfOptions {
                allow_unloadable: true,
                ..opts
            };
            read_hf_dir(dir, &opts)
        }
        r => r,
    }
    .map_err(|e| e.to_string())?;
    write_gguf(&conv.model, out).map_err(|e| e.to_string())?;
    let file = GgufFile::open(out).map_err(|e| e.to_string())?;
    let m = manifest(&file, out, None);
    let _ = std::fs::remove_file(out);
    Ok(m)
}

/// A draft fixture's (`make_draft_fixtures.py`) conversion options: its target model
/// (materialized under `work`) and the switches its reference conversions had (`--dspark`);
/// the defaults for any other fixture.
fn draft_options(fixture: &str, work: &Path) -> HfOptions {
    let Some(target) = super::draft_golden::target_of(fixture) else {
        return HfOptions::default();
    };
    let target = materialize_fixture(&target, &work.join("target"));
    HfOptions {
        target: Some(std::sync::Arc::new(ModelDir::new(&target))),
        mtp: if super::draft_golden::uses_dspark(&testdata(&format!("golden/{fixture}"))) {
            Mtp::DSpark
        } else {
            Mtp::Keep
        },
        ..HfOptions::default()
    }
}

/// Every variant recorded for `fixture`, sorted by name.
fn variant_records(fixture: &str) -> Vec<Json> {
    let dir = testdata(&format!("golden/variants/{fixture}"));
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    names.iter().map(|p| read_json(p)).collect()
}

fn run(fixture: &str) {
    // A fixture the reference refuses as it is (gptneox) has no base: its records list
    // every entry.
    let base_path = testdata(&format!("golden/{fixture}/convert-f32.json"));
    let base_f32 = if base_path.is_file() {
        read_json(&base_path)
    } else {
        json!({"version": 3, "alignment": 32, "kv": [], "tensors": []})
    };
    let work = scratch(&format!("variants-{fixture}"));
    let draft = draft_options(fixture, &work);
    let records = variant_records(fixture);
    assert!(!records.is_empty(), "{fixture}: no variants");
    let mut problems = Vec::new();
    let (mut identical, mut refused) = (0, 0);
    for rec in &records {
        let name = rec["variant"].as_str().unwrap().to_string();
        let vdir = work.join(&name);
        let dir = materialize_fixture(fixture, &vdir);
        apply_patch(&dir, &rec["patch"]);
        for (t, outtype) in [("f32", OutType::F32), ("bf16", OutType::Bf16)] {
            let want = &rec[t];
            if want.is_null() {
                continue;
            }
            let out = vdir.join(format!("out-{t}.gguf"));
            let ours = convert(&dir, outtype, &out, &draft);
            if want["ok"] != Json::Bool(true) {
                match ours {
                    Ok(_) => problems.push(format!(
                        "{name} {t}: the reference refused ({}), we converted",
                        want["error"]
                    )),
                    Err(e) => {
                        refused += 1;
                        eprintln!("{fixture} {name}: refused like the reference ({e})");
                    }
                }
                assert!(!out.exists(), "{name}: a refused conversion left a file");
                continue;
            }
            let ours = match ours {
                Ok(m) => m,
                Err(e) => {
                    problems.push(format!("{name} {t}: we refused: {e}"));
                    continue;
                }
            };
            // The file's sha256 decides; the manifest comparison only explains a difference
            // (serde_json may read a long float one ulp off).
            let d = if ours["sha256"] == want["sha256"] && ours["size"] == want["size"] {
                Vec::new()
            } else if t == "f32" {
                match expected_f32(want, &base_f32) {
                    Ok(w) => diff_manifests(&support::as_read_back(&ours), &w),
                    Err(e) => vec![format!("bad record: {e}")],
                }
            } else {
                ["size", "sha256"]
                    .iter()
                    .filter(|k| ours[**k] != want[**k])
                    .map(|k| format!("{k}: ours {} vs golden {}", ours[*k], want[*k]))
                    .collect()
            };
            if d.is_empty() {
                identical += 1;
            } else {
                eprintln!("{fixture} {name} {t}: MISMATCH");
            }
            problems.extend(d.into_iter().map(|x| format!("{name} {t}: {x}")));
        }
        let _ = std::fs::remove_dir_all(&vdir);
    }
    let _ = std::fs::remove_dir_all(&work);
    eprintln!(
        "{fixture}: {} variants, {identical} files byte-identical, {refused} refused like the reference",
        records.len()
    );
    assert!(
        problems.is_empty(),
        "{fixture}: {} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

macro_rules! fixtures {
    ($($t:ident => $name:literal),* $(,)?) => {
        $(#[test] fn $t() { run($name); })*

        #[test]
        fn every_variant_fixture_has_a_test() {
            let listed = [$($name),*];
            for e in std::fs::read_dir(testdata("golden/variants")).unwrap().flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                assert!(listed.contains(&n.as_str()), "variants of {n} have no test");
            }
        }
    };
}

fixtures! {
    dsv4_dspark => "dsv4-dspark",
    apertus => "apertus",
    arcee => "arcee",
    cohere => "cohere",
    cohere2 => "cohere2",
    embeddinggemma => "embeddinggemma",
    ernie4_5 => "ernie4_5",
    ernie4_5moe => "ernie4_5moe",
    exaone4 => "exaone4",
    falcon => "falcon",
    gemma3 => "gemma3",
    gemma3n => "gemma3n",
    gemma4 => "gemma4",
    gemma4moe => "gemma4moe",
    glm4 => "glm4",
    gptbigcode => "gptbigcode",
    gptneox => "gptneox",
    granite => "granite",
    granitemoe => "granitemoe",
    granitemoeshared => "granitemoeshared",
    internlm3 => "internlm3",
    llama_bpe => "llama-bpe",
    llama_spm => "llama-spm",
    llama4 => "llama4",
    modernbert => "modernbert",
    nomicbert => "nomicbert",
    llama4_vl => "llama4-vl",
    ministral3 => "ministral3",
    mistral3 => "mistral3",
    mixtral => "mixtral",
    olmo => "olmo",
    olmo2 => "olmo2",
    olmo3 => "olmo3",
    olmoe => "olmoe",
    phi2 => "phi2",
    phi3 => "phi3",
    phimoe => "phimoe",
    qwen2 => "qwen2",
    qwen2moe => "qwen2moe",
    qwen3 => "qwen3",
    qwen3moe => "qwen3moe",
    seedoss => "seedoss",
    smollm3 => "smollm3",
    stablelm_2 => "stablelm-2",
    starcoder2 => "starcoder2",
    xlmroberta => "xlmroberta",
    maincoder => "maincoder",
    nanbeige => "nanbeige",
    mellum => "mellum",
    internlm2 => "internlm2",
    orion => "orion",
    pangu => "pangu",
    xverse => "xverse",
    spark2_5 => "spark2_5",
    maple => "maple",
    smallthinker => "smallthinker",
    plm => "plm",
    kormo => "kormo",
    iquestcoder => "iquestcoder",
    minimax_m3 => "minimax-m3",
    hyv3 => "hyv3",
    kimik3 => "kimik3",
    glm5next_text => "glm5next-text",
    rwkv7 => "rwkv7",
    minimax01 => "minimax01",
    bailingmoe => "bailingmoe",
    sarvam_untyped => "sarvam-untyped",
    qwen4exp => "qwen4exp",
    lfm2_colbert => "lfm2-colbert",
    lfm2_bidir => "lfm2-bidir",
    plamo2 => "plamo2",
    plamo3 => "plamo3",
    chameleon => "chameleon",
    rugpt3xl => "rugpt3xl",
    step35 => "step35",
    dots3 => "dots3",
    nemotronhpuzzle => "nemotronhpuzzle",
    graniteswitch => "graniteswitch",
    youtuvl_text => "youtuvl-text",
    paddleocr_text => "paddleocr-text",
    sarashina2_text => "sarashina2-text",
    hunyuanvl_text => "hunyuanvl-text",
    minicpmv46_text => "minicpmv46-text",
}
