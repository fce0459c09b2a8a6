//! Speculative-decoding drafts (EAGLE-3, ...) against the reference's output, from
//! `testdata/` alone.
//!
//! `conformance/make_draft_fixtures.py` wrote each draft checkpoint in its vendor's layout
//! in `testdata/hf/<fixture>/` and recorded what `convert_hf_to_gguf.py DRAFT
//! --target-model-dir TARGET` (f32, f16, bf16, q8_0, auto) and `llama-quantize` (Q4_K_M of
//! the f32 file) wrote, in `testdata/golden/<fixture>/`; the target is a committed fixture,
//! named by `target_dir` in the golden `variants.json`. Each test materializes both and
//! compares every variant's whole manifest.

use ggufkit_testsupport::golden as support;

use std::path::Path;
use std::sync::Arc;

use ggufkit::manifest::diff_manifests;
use ggufkit_converters::hf::{read_hf_dir, HfOptions, ModelDir, Mtp, OutType};
use ggufkit_converters::ConvertError;
use serde_json::Value as Json;

use super::golden_variants::{
    check_text_variants, golden_manifest, written_manifest, TEXT_VARIANTS,
};
use support::{materialize_fixture as materialize, read_json, scratch, testdata};

/// The options of a draft conversion to `outtype` with `target` (and `--dspark` when
/// `dspark`).
fn options(outtype: OutType, target: &Path, dspark: bool) -> HfOptions {
    HfOptions {
        outtype,
        target: Some(Arc::new(ModelDir::new(target))),
        mtp: if dspark { Mtp::DSpark } else { Mtp::Keep },
        ..HfOptions::default()
    }
}

/// Whether a fixture's reference conversions were run with `--dspark`.
pub(super) fn uses_dspark(golden: &Path) -> bool {
    let path = golden.join("variants.json");
    if !path.is_file() {
        return false;
    }
    let v = read_json(&path);
    v["variants"].as_array().is_some_and(|vs| {
        vs.iter().any(|x| {
            x["args"]
                .as_array()
                .is_some_and(|a| a.iter().any(|a| a == "--dspark"))
        })
    })
}

/// The target fixture a fixture's golden `variants.json` names (`target_dir`), if any: a
/// draft is converted with it.
pub(super) fn target_of(fixture: &str) -> Option<String> {
    let v = read_json(&testdata(&format!("golden/{fixture}/variants.json")));
    let dir = v["target_dir"].as_str()?;
    dir.rsplit('/').next().map(str::to_owned)
}

/// The target fixture of draft fixture `fixture`.
fn target_fixture(fixture: &str) -> String {
    target_of(fixture).expect("variants.json names target_dir")
}

/// The draft fixture and its target, materialized under `work`.
fn draft_and_target(fixture: &str, work: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let target = materialize(&target_fixture(fixture), work);
    (materialize(fixture, work), target)
}

fn run(fixture: &str) {
    let golden = testdata(&format!("golden/{fixture}"));
    let status = read_json(&golden.join("status.json"));
    for (variant, _, _) in TEXT_VARIANTS {
        let ok = &status[variant]["ok"];
        assert_eq!(
            ok,
            &Json::Bool(true),
            "{fixture} {variant}: not a converted variant"
        );
    }
    let work = scratch(&format!("draft-{fixture}"));
    let (dir, target) = draft_and_target(fixture, &work);
    let dspark = uses_dspark(&golden);
    let problems = check_text_variants(fixture, &golden, &dir, &work, |t| {
        options(t, &target, dspark)
    });
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
        fn every_draft_fixture_has_a_test() {
            let listed = [$($name),*];
            let made = support::fixtures_made_by("make_draft_fixtures.py");
            assert!(!made.is_empty(), "no draft fixture found");
            for n in made {
                assert!(listed.contains(&n.as_str()), "draft fixture {n} has no test");
            }
        }
    };
}

fixtures! {
    eagle3 => "eagle3",
    eagle3_spec => "eagle3-spec",
    dflash => "dflash",
    dflash2 => "dflash2",
    dspark => "dspark",
    dspark_spec => "dspark-spec",
    gemma4_dspark => "gemma4-dspark",
    dsv4_dspark => "dsv4-dspark",
    dsv4_dspark_class => "dsv4-dspark-class",
}

/// Every draft family has fixtures drawn from two seeds (in different layouts and
/// options), so a second-seed variant of each is checked without a fixture of its own.
#[test]
fn every_draft_family_has_two_seeds() {
    let mut seeds: std::collections::BTreeMap<String, std::collections::BTreeSet<u64>> =
        Default::default();
    for f in support::fixtures_made_by("make_draft_fixtures.py") {
        let golden = testdata(&format!("golden/{f}"));
        let seed = read_json(&golden.join("variants.json"))["seed"]
            .as_u64()
            .unwrap_or_else(|| panic!("{f}: variants.json has no seed"));
        let m = read_json(&golden.join("convert-f32.json"));
        let arch = m["kv"]
            .as_array()
            .and_then(|kv| kv.iter().find(|e| e[0] == "general.architecture"))
            .and_then(|e| e[2].as_str())
            .unwrap_or_else(|| panic!("{f}: no general.architecture"))
            .to_string();
        seeds.entry(arch).or_default().insert(seed);
    }
    let single: Vec<_> = seeds.iter().filter(|(_, s)| s.len() < 2).collect();
    assert!(
        single.is_empty(),
        "draft families with one seed: {single:?}"
    );
}

/// Edits the config.json of the fixture copy `dir`.
fn set_config(dir: &Path, edit: impl FnOnce(&mut serde_json::Map<String, Json>)) {
    let path = dir.join("config.json");
    let mut cfg: Json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(cfg.as_object_mut().unwrap());
    std::fs::write(&path, serde_json::to_vec_pretty(&cfg).unwrap()).unwrap();
}

/// Without `--target-model-dir` an EAGLE-3 draft is refused, naming its config and class.
#[test]
fn a_draft_without_its_target_is_refused() {
    let work = scratch("draft-no-target");
    let (dir, _) = draft_and_target("eagle3", &work);
    let err = read_hf_dir(&dir, &HfOptions::default())
        .err()
        .expect("refused");
    match err {
        ConvertError::NeedsTarget { path, class } => {
            assert_eq!(path, dir.join("config.json"));
            assert_eq!(class, "LlamaForCausalLMEagle3");
        }
        e => panic!("unexpected error: {e}"),
    }
}

/// The reference takes any Llama-class config with a `draft_vocab_size` and one layer for
/// an EAGLE-3 draft, whatever its class is called.
#[test]
fn a_llama_class_with_a_draft_config_is_eagle3() {
    let work = scratch("draft-as-llama");
    let (dir, target) = draft_and_target("eagle3", &work);
    set_config(&dir, |c| {
        c.insert(
            "architectures".into(),
            serde_json::json!(["LlamaForCausalLM"]),
        );
    });
    let golden = testdata("golden/eagle3");
    let want = golden_manifest(
        &golden,
        "convert-f32",
        &read_json(&golden.join("status.json"))["convert-f32"],
    );
    let c = read_hf_dir(&dir, &options(OutType::F32, &target, false)).unwrap();
    let m = written_manifest(c.model, None, &work.join("out.gguf")).unwrap();
    let d = diff_manifests(&support::as_read_back(&m), &want);
    assert!(d.is_empty(), "{d:?}");
}

/// A `d2t` whose target ids fall outside the target's vocabulary is refused (the
/// reference's ValueError), naming the tensor.
#[test]
fn d2t_beyond_the_target_vocabulary_is_refused() {
    let work = scratch("draft-d2t-range");
    let (dir, target) = draft_and_target("eagle3", &work);
    set_config(&target, |c| {
        c.insert("vocab_size".into(), Json::from(16));
    });
    let err = read_hf_dir(&dir, &options(OutType::F32, &target, false))
        .err()
        .expect("refused");
    match err {
        ConvertError::Tensor { name, problem } => {
            assert_eq!(name, "d2t");
            assert!(
                problem.contains("out of range for target vocab size 16"),
                "{problem}"
            );
        }
        e => panic!("unexpected error: {e}"),
    }
}

/// The target's layer count is required, as the reference reads it first.
#[test]
fn a_target_without_a_layer_count_is_refused() {
    let work = scratch("draft-target-layers");
    let (dir, target) = draft_and_target("eagle3", &work);
    set_config(&target, |c| {
        c.remove("num_hidden_layers");
    });
    let err = read_hf_dir(&dir, &options(OutType::F32, &target, false))
        .err()
        .expect("refused");
    match err {
        ConvertError::MissingKey { path, key, .. } => {
            assert_eq!(path, target.join("config.json"));
            assert_eq!(key, "num_hidden_layers");
        }
        e => panic!("unexpected error: {e}"),
    }
}

/// A DSpark draft with a reduced vocabulary needs its `d2t` table (the reference's
/// ValueError), named in the error.
#[test]
fn a_reduced_dspark_vocabulary_without_d2t_is_refused() {
    let work = scratch("dspark-no-d2t");
    // The speculators fixture has no `d2t`: its vocabulary is the target's.
    let (dir, target) = draft_and_target("dspark-spec", &work);
    set_config(&dir, |c| {
        c.insert("draft_vocab_size".into(), Json::from(40));
    });
    let err = read_hf_dir(&dir, &options(OutType::F32, &target, false))
        .err()
        .expect("refused");
    match err {
        ConvertError::Tensor { name, problem } => {
            assert_eq!(name, "model.d2t");
            assert_eq!(
                problem,
                "draft_vocab_size 40 < vocab_size 1024 but no d2t table found"
            );
        }
        e => panic!("unexpected error: {e}"),
    }
}

/// The DeepSeek-V4 DSpark draft's refusals, as the reference's: no target tokenizer, a
/// checkpoint whose `mtp.*` stage is a NextN layer (its `e_proj` has no `dflash` name), and
/// `--dspark` for another class.
#[test]
fn dspark_refusals_equal_the_reference() {
    let work = scratch("dsv4-dspark-refused");
    let (dir, target) = draft_and_target("dsv4-dspark", &work);
    let no_target = HfOptions {
        mtp: Mtp::DSpark,
        ..HfOptions::default()
    };
    match read_hf_dir(&dir, &no_target).err().expect("refused") {
        ConvertError::NeedsTarget { class, .. } => assert_eq!(class, "DeepseekV4DSparkModel"),
        e => panic!("unexpected error: {e}"),
    }
    match read_hf_dir(&target, &options(OutType::F32, &target, true))
        .err()
        .expect("refused")
    {
        ConvertError::Tensor { name, .. } => assert_eq!(name, "layers.0.e_proj.weight"),
        e => panic!("unexpected error: {e}"),
    }
    let qwen3 = materialize("qwen3", &work);
    let err = read_hf_dir(&qwen3, &options(OutType::F32, &target, true))
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("--dspark is only supported for DeepseekV4ForCausalLM"),
        "{err}"
    );
}

/// The class named by its config inherits DeepSeek-V4's MTP switches, which its own filter
/// undoes: `--no-mtp` writes the same file, `--mtp` keeps no block and is refused.
#[test]
fn dspark_class_mtp_switches_equal_the_reference() {
    let work = scratch("dsv4-dspark-class-mtp");
    let (dir, target) = draft_and_target("dsv4-dspark-class", &work);
    let golden = testdata("golden/dsv4-dspark-class");
    let want = golden_manifest(
        &golden,
        "convert-f32",
        &read_json(&golden.join("status.json"))["convert-f32"],
    );
    let drop = HfOptions {
        mtp: Mtp::Drop,
        ..options(OutType::F32, &target, false)
    };
    let c = read_hf_dir(&dir, &drop).unwrap();
    let m = written_manifest(c.model, None, &work.join("out.gguf")).unwrap();
    let d = diff_manifests(&support::as_read_back(&m), &want);
    assert!(d.is_empty(), "{d:?}");
    let only = HfOptions {
        mtp: Mtp::Only,
        ..options(OutType::F32, &target, false)
    };
    assert!(read_hf_dir(&dir, &only).is_err());
}
