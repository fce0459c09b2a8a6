//! Kimi Linear checkpoints the reference converter fails on are refused with the file or
//! hparam at fault: a tiktoken-only tokenizer (the reference runs the tokenizer's remote code
//! for it), no `linear_attn_config` or no `first_k_dense_replace` (the class indexes both).

use std::path::Path;

use ggufkit_converters::hf::{read_hf_dir, HfOptions};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::paths::materialize_fixture;
use ggufkit_testsupport::scratch;

/// The committed fixture, copied into a fresh scratch directory and changed by `edit`.
fn refusal(edit: impl FnOnce(&Path)) -> ConvertError {
    let work = scratch("kimilinear-refusal");
    let dir = materialize_fixture("kimilinear", work.path());
    edit(&dir);
    match read_hf_dir(&dir, &HfOptions::default()) {
        Ok(_) => panic!("{}: conversion unexpectedly succeeded", dir.display()),
        Err(e) => e,
    }
}

/// config.json with `key` removed.
fn remove_hparam(dir: &Path, key: &str) {
    let path = dir.join("config.json");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    cfg.as_object_mut().unwrap().remove(key);
    std::fs::write(&path, cfg.to_string()).unwrap();
}

#[test]
fn a_tiktoken_only_tokenizer_is_refused_naming_tokenizer_json() {
    let e = refusal(|d| {
        std::fs::remove_file(d.join("tokenizer.json")).unwrap();
        std::fs::write(d.join("tiktoken.model"), "IQ== 0\n").unwrap();
    });
    let text = e.to_string();
    assert!(text.contains("tokenizer.json"), "{text}");
}

#[test]
fn without_linear_attention_settings_the_key_is_named() {
    match refusal(|d| remove_hparam(d, "linear_attn_config")) {
        ConvertError::MissingHparam { keys, path, .. } => {
            assert_eq!(keys, ["linear_attn_config"]);
            assert!(path.ends_with("config.json"), "{path:?}");
        }
        other => panic!("expected MissingHparam, got {other:?}"),
    }
}

#[test]
fn without_the_dense_block_count_the_key_is_named() {
    match refusal(|d| remove_hparam(d, "first_k_dense_replace")) {
        ConvertError::MissingHparam { keys, .. } => assert_eq!(keys, ["first_k_dense_replace"]),
        other => panic!("expected MissingHparam, got {other:?}"),
    }
}
