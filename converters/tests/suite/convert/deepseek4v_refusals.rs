//! DeepSeek-V4-Flash-Vision projectors the reference refuses are refused with the cause:
//! a config without vision layers (the text-only release), and the two runtime limits the
//! class asserts (`vision_max_n_token`, `vision_max_wh_ratio`), absent or other than the
//! values llama.cpp's runtime is built for.

use ggufkit_testsupport::golden as support;

use std::path::Path;

use ggufkit_converters::hf::{read_mmproj_dir, HfOptions};
use ggufkit_converters::ConvertError;
use serde_json::Value as Json;

/// The committed projector fixture with its config.json changed by `edit`, refused.
fn refusal(edit: impl FnOnce(&mut serde_json::Map<String, Json>)) -> ConvertError {
    let work = support::scratch("deepseek4v-refusal");
    let dir = support::materialize_fixture("deepseek4-vl", &work);
    edit_config(&dir, edit);
    match read_mmproj_dir(&dir, &HfOptions::default()) {
        Ok(_) => panic!("{}: converted", dir.display()),
        Err(e) => e,
    }
}

fn edit_config(dir: &Path, f: impl FnOnce(&mut serde_json::Map<String, Json>)) {
    let p = dir.join("config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(cfg.as_object_mut().unwrap());
    std::fs::write(&p, cfg.to_string()).unwrap();
}

#[test]
fn a_checkpoint_without_vision_layers_is_refused_with_the_class_named() {
    match refusal(|c| {
        c.remove("vision_n_layers");
    }) {
        ConvertError::UnsupportedFeature { arch, feature } => {
            assert!(arch.contains("DeepseekV4ForCausalLM"), "{arch}");
            assert!(feature.contains("vision_n_layers"), "{feature}");
        }
        e => panic!("expected UnsupportedFeature, got {e:?}"),
    }
}

#[test]
fn other_runtime_limits_are_refused_with_the_key_named() {
    match refusal(|c| {
        c.insert("vision_max_n_token".into(), Json::from(512));
    }) {
        ConvertError::OutOfRange { key, value, .. } => {
            assert_eq!(key, "vision_max_n_token");
            assert_eq!(value, "512");
        }
        e => panic!("expected OutOfRange, got {e:?}"),
    }
    match refusal(|c| {
        c.remove("vision_max_wh_ratio");
    }) {
        ConvertError::MissingHparam { keys, .. } => assert_eq!(keys, ["vision_max_wh_ratio"]),
        e => panic!("expected MissingHparam, got {e:?}"),
    }
}
