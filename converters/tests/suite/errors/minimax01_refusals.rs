//! MiniMax-Text-01 checkpoints the reference converter fails on are refused with the file or
//! hparam at fault: no safetensors index (the class reads the embedding's shard from it), no
//! `chat_template.jinja` (the reference would write its bundled template), layernorm factors
//! the class asserts on.

use std::path::Path;

use ggufkit_converters::hf::{read_hf_dir, HfOptions};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::paths::materialize_fixture;
use ggufkit_testsupport::scratch;

/// The committed fixture, copied into a fresh scratch directory and changed by `edit`.
fn refusal(edit: impl FnOnce(&Path)) -> ConvertError {
    let work = scratch("minimax01-refusal");
    let dir = materialize_fixture("minimax01", work.path());
    edit(&dir);
    match read_hf_dir(&dir, &HfOptions::default()) {
        Ok(_) => panic!("{}: conversion unexpectedly succeeded", dir.display()),
        Err(e) => e,
    }
}

/// config.json with `key` set to `value`.
fn set_hparam(dir: &Path, key: &str, value: f64) {
    let path = dir.join("config.json");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    cfg[key] = value.into();
    std::fs::write(&path, cfg.to_string()).unwrap();
}

#[test]
fn without_an_index_the_index_is_named() {
    let e = refusal(|d| std::fs::remove_file(d.join("model.safetensors.index.json")).unwrap());
    match e {
        ConvertError::MissingFile { path, .. } => {
            assert!(path.ends_with("model.safetensors.index.json"), "{path:?}")
        }
        other => panic!("expected MissingFile, got {other:?}"),
    }
}

#[test]
fn without_a_chat_template_file_the_file_is_named() {
    let e = refusal(|d| std::fs::remove_file(d.join("chat_template.jinja")).unwrap());
    match e {
        ConvertError::MissingFile { path, .. } => {
            assert!(path.ends_with("chat_template.jinja"), "{path:?}")
        }
        other => panic!("expected MissingFile, got {other:?}"),
    }
}

#[test]
fn unequal_alphas_or_a_beta_other_than_one_are_refused() {
    for (key, value, which) in [
        ("layernorm_mlp_alpha", 2.0, "layernorm_mlp_alpha"),
        ("layernorm_linear_attention_beta", 0.5, "layernorm_mlp_beta"),
    ] {
        match refusal(|d| set_hparam(d, key, value)) {
            ConvertError::BadHparam { keys, found, .. } => {
                assert!(keys.iter().any(|k| k == which), "{key}: {keys:?}");
                assert!(found.contains(&format!("{value:?}")), "{key}: {found}");
            }
            other => panic!("{key}: expected BadHparam, got {other:?}"),
        }
    }
}
