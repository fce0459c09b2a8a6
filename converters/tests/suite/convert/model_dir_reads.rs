//! The model-directory value is the only reader of the shared files: once it has read
//! config.json, tokenizer_config.json, tokenizer.json, tokenizer.model and
//! generation_config.json, a conversion gives the same metadata (vocabulary included) with
//! those files removed from the disk, so no step below the value opens one again.

use std::path::Path;
use std::sync::Arc;

use ggufkit::gguf::Metadata;
use ggufkit_converters::hf::mistral::MistralFormat;
use ggufkit_converters::hf::{read_model_dir, HfOptions, ModelDir, Mtp};
use ggufkit_testsupport::golden::materialize_fixture as materialize;
use ggufkit_testsupport::golden::read_json;
use ggufkit_testsupport::paths::{scratch, testdata};
use ggufkit_testsupport::unloadable::is_unloadable;

/// The files the value reads once, by name.
const SHARED: [&str; 5] = [
    "config.json",
    "tokenizer_config.json",
    "tokenizer.json",
    "tokenizer.model",
    "generation_config.json",
];

/// A vocabulary-only conversion's metadata, or its error's text.
fn metadata(dir: &ModelDir, opts: &HfOptions) -> Result<Metadata, String> {
    read_model_dir(dir, opts)
        .map(|c| c.model.metadata)
        .map_err(|e| e.to_string())
}

/// Reads every shared file through `value` and returns the names of those read whole.
fn read_all(value: &ModelDir) -> Vec<&'static str> {
    let read = [
        value.config_if_present().map(|f| f.is_some()),
        value.tokenizer_config().map(|f| f.is_some()),
        value.tokenizer_json().map(|f| f.is_some()),
        value.tokenizer_model().map(|f| f.is_some()),
        value.generation_config().map(|f| f.is_some()),
    ];
    SHARED
        .into_iter()
        .zip(read)
        .filter_map(|(name, r)| r.unwrap_or(false).then_some(name))
        .collect()
}

/// Whether the reference converted `fixture`'s text model (its golden `convert-f32` run
/// succeeded), and the target fixture a draft is converted with.
fn reference_run(fixture: &str) -> (bool, Option<String>) {
    let golden = testdata("golden").join(fixture);
    if !golden.join("status.json").is_file() {
        return (false, None);
    }
    let status = read_json(&golden.join("status.json"));
    let ok = status["convert-f32"]["ok"].as_bool() == Some(true);
    (ok, super::draft_golden::target_of(fixture))
}

/// One fixture: its conversion from the disk, and from a value whose shared files were read
/// before they were removed. Returns whether the conversion succeeded and the files removed.
fn check(fixture: &str, target: Option<&str>, work: &Path) -> (bool, usize) {
    // A draft converted with `--dspark` is read with it.
    let dspark = super::draft_golden::uses_dspark(&testdata("golden").join(fixture));
    let dir = materialize(fixture, work);
    let native = dir.join("params.json").is_file() && !dir.join("config.json").is_file();
    let opts = HfOptions {
        vocab_only: true,
        allow_unloadable: is_unloadable(&dir),
        mistral_format: native.then(MistralFormat::default),
        target: target.map(|t| Arc::new(ModelDir::new(materialize(t, work)))),
        mtp: if dspark { Mtp::DSpark } else { Mtp::Keep },
        ..HfOptions::default()
    };
    let want = metadata(&ModelDir::new(&dir), &opts);
    let value = ModelDir::new(&dir);
    let removed = read_all(&value);
    for name in &removed {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    let got = metadata(&value, &opts);
    assert!(
        got == want,
        "{fixture}: with {removed:?} read by the value and then removed, the conversion \
         differs:\n from the disk: {want:?}\n from the value: {got:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    (want.is_ok(), removed.len())
}

#[test]
fn no_step_below_the_value_reopens_a_shared_file() {
    let mut fixtures: Vec<String> = std::fs::read_dir(testdata("hf"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // A second seed has its first seed's files.
        .filter(|n| !n.ends_with("-s2"))
        .collect();
    fixtures.sort();
    let work = scratch("model-dir-reads");
    let (mut converted, mut expected, mut removed) = (0, 0, 0);
    let mut refused = Vec::new();
    for f in &fixtures {
        // Drafts are read with their target, as the reference converted them.
        let (reference_ok, target) = reference_run(f);
        let (ok, n) = check(f, target.as_deref(), work.path());
        converted += usize::from(ok);
        expected += usize::from(reference_ok);
        removed += n;
        if reference_ok && !ok {
            refused.push(f.as_str());
        }
    }
    // Every fixture whose text model the reference converted converts here too (both ways
    // the same, checked above, refusals included); the others are projector-only fixtures
    // and the classes the reference refuses. Each has at least config.json (or params.json)
    // and a tokenizer file.
    assert!(
        refused.is_empty(),
        "the reference converted these fixtures, the vocabulary-only reads refused them: \
         {refused:?}"
    );
    assert!(
        expected > 100,
        "only {expected} of {} fixtures have a golden text conversion",
        fixtures.len()
    );
    assert!(removed >= 2 * converted, "{removed} files removed");
}
