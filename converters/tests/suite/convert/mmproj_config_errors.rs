//! Projector configs the reference cannot convert (a missing or malformed key its class
//! reads) are refused with a typed error naming the key, never a panic: Granite 4 Vision's
//! QFormer rate and deepstack map, Youtu-VL's full-attention blocks and activation, and the
//! image processor's pixel bounds HunyuanOCR and PaddleOCR-VL write.

use ggufkit_testsupport::golden as support;

use std::path::Path;

use ggufkit_converters::hf::{read_mmproj_dir, HfOptions, OutType};
use ggufkit_converters::ConvertError;
use serde_json::Value as Json;

use support::scratch;

fn refusal(dir: &Path) -> ConvertError {
    let opts = HfOptions {
        outtype: OutType::F16,
        ..HfOptions::default()
    };
    match read_mmproj_dir(dir, &opts) {
        Ok(_) => panic!("{}: converted", dir.display()),
        Err(e) => e,
    }
}

fn edit_json(path: &Path, f: impl FnOnce(&mut Json)) {
    let mut v: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, v.to_string()).unwrap();
}

fn fixture(name: &str, work: &Path, case: &str) -> std::path::PathBuf {
    support::materialize_fixture(name, &work.join(case))
}

#[test]
fn granite4_vision_rate_and_deepstack_map() {
    let work = scratch("mmproj-config-errors-granite4v");
    let dir = fixture("granite4v", &work, "no-rate");
    edit_json(&dir.join("config.json"), |c| {
        c.as_object_mut().unwrap().remove("downsample_rate");
    });
    match refusal(&dir) {
        ConvertError::MissingHparam { keys, .. } => assert_eq!(keys, vec!["downsample_rate"]),
        e => panic!("{e}"),
    }
    let dir = fixture("granite4v", &work, "bad-rate");
    edit_json(&dir.join("config.json"), |c| {
        c["downsample_rate"] = Json::from("1/2/3")
    });
    match refusal(&dir) {
        ConvertError::BadHparam { keys, found, .. } => {
            assert_eq!(keys, vec!["downsample_rate"]);
            assert_eq!(found, "\"1/2/3\"");
        }
        e => panic!("{e}"),
    }
    let dir = fixture("granite4v", &work, "bad-map");
    edit_json(&dir.join("config.json"), |c| {
        c["deepstack_layer_map"] = serde_json::json!([[1]])
    });
    match refusal(&dir) {
        ConvertError::BadHparam { keys, found, .. } => {
            assert_eq!(keys, vec!["deepstack_layer_map"]);
            assert_eq!(found, "[1]");
        }
        e => panic!("{e}"),
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn youtuvl_full_attention_blocks_and_activation() {
    let work = scratch("mmproj-config-errors-youtuvl");
    let dir = fixture("youtuvl", &work, "no-blocks");
    edit_json(&dir.join("config.json"), |c| {
        c["vision_config"]
            .as_object_mut()
            .unwrap()
            .remove("fullatt_block_indexes");
    });
    match refusal(&dir) {
        ConvertError::MissingHparam { keys, .. } => {
            assert_eq!(keys, vec!["vision_config.fullatt_block_indexes"])
        }
        e => panic!("{e}"),
    }
    let dir = fixture("youtuvl", &work, "relu");
    edit_json(&dir.join("config.json"), |c| {
        c["vision_config"]["hidden_act"] = Json::from("ReLU")
    });
    match refusal(&dir) {
        ConvertError::UnsupportedFeature { arch, feature } => {
            assert!(arch.contains("YoutuVLForConditionalGeneration"), "{arch}");
            assert!(feature.contains("relu"), "{feature}");
        }
        e => panic!("{e}"),
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn pixel_bounds_are_required() {
    let work = scratch("mmproj-config-errors-pixels");
    for (name, key) in [
        ("hunyuanvl", "max_pixels"),
        ("paddleocr-vl", "min_pixels"),
        ("exaone45-vl", "min_pixels"),
        ("exaone45-vl", "max_pixels"),
        ("dotsocr-vl", "min_pixels"),
        ("dotsocr-vl", "max_pixels"),
        ("mimo-vl", "min_pixels"),
        ("mimo-vl", "max_pixels"),
    ] {
        let dir = fixture(name, &work, key);
        edit_json(&dir.join("preprocessor_config.json"), |p| {
            p.as_object_mut().unwrap().remove(key);
        });
        match refusal(&dir) {
            ConvertError::MissingKey { path, key: k, .. } => {
                assert_eq!(k, key);
                assert!(path.ends_with("preprocessor_config.json"), "{path:?}");
            }
            e => panic!("{name}: {e}"),
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// Step3-VL's projector is converted for Step3-VL-10B's tower only: the reference asserts
/// `(understand_projector_stride, image_size, width, layers) == (2, 728, 1536, 47)` from
/// config.json, so any other value is refused; so is a tower config without a width to
/// derive the feed-forward size from.
#[test]
fn step3vl_only_the_published_tower() {
    let work = scratch("mmproj-config-errors-stepvl");
    for (case, edit) in [
        (
            "stride",
            ("understand_projector_stride", None, Json::from(1)),
        ),
        (
            "image",
            ("vision_config", Some("image_size"), Json::from(448)),
        ),
        (
            "width",
            ("vision_config", Some("hidden_size"), Json::from(1024)),
        ),
        (
            "layers",
            ("vision_config", Some("num_hidden_layers"), Json::from(46)),
        ),
    ] {
        let dir = fixture("stepvl", &work, case);
        edit_json(&dir.join("config.json"), |c| match edit {
            (k, None, v) => c[k] = v,
            (k, Some(sub), v) => c[k][sub] = v,
        });
        match refusal(&dir) {
            ConvertError::UnsupportedFeature { feature, .. } => {
                assert!(feature.contains("Step3-VL-10B"), "{case}: {feature}")
            }
            e => panic!("{case}: {e}"),
        }
    }
    let dir = fixture("stepvl", &work, "no-width");
    edit_json(&dir.join("config.json"), |c| {
        let v = c["vision_config"].as_object_mut().unwrap();
        v.remove("hidden_size");
        v.remove("intermediate_size");
    });
    match refusal(&dir) {
        ConvertError::BadHparam { keys, .. } => {
            assert_eq!(
                keys,
                vec!["vision_config.hidden_size", "vision_config.width"]
            )
        }
        e => panic!("{e}"),
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// MiMo's audio encoder is a model of its own in `audio_tokenizer/` (its config.json and one
/// `model.safetensors`, as the reference loads them): without the directory, either file,
/// or with a directory that is a file or a truncated weight file, the projector is refused
/// with an error naming what is missing or broken, as the reference fails on it.
#[test]
fn mimo_audio_tokenizer_is_read_from_its_directory() {
    let work = scratch("mmproj-config-errors-mimo");
    let sub = "audio_tokenizer";
    let dir = fixture("mimo-vl", &work, "no-dir");
    std::fs::remove_dir_all(dir.join(sub)).unwrap();
    match refusal(&dir) {
        ConvertError::MissingFile { path, .. } => assert!(path.ends_with(sub), "{path:?}"),
        e => panic!("{e}"),
    }
    let dir = fixture("mimo-vl", &work, "a-file");
    std::fs::remove_dir_all(dir.join(sub)).unwrap();
    std::fs::write(dir.join(sub), b"{}").unwrap();
    match refusal(&dir) {
        ConvertError::Format { path, problem, .. } => {
            assert!(path.ends_with(sub), "{path:?}");
            assert!(problem.contains("not a directory"), "{problem}");
        }
        e => panic!("{e}"),
    }
    let dir = fixture("mimo-vl", &work, "no-weights");
    std::fs::remove_file(dir.join(sub).join("model.safetensors")).unwrap();
    match refusal(&dir) {
        ConvertError::MissingFile { path, .. } => {
            assert!(
                path.ends_with(format!("{sub}/model.safetensors")),
                "{path:?}"
            )
        }
        e => panic!("{e}"),
    }
    let dir = fixture("mimo-vl", &work, "no-config");
    std::fs::remove_file(dir.join(sub).join("config.json")).unwrap();
    match refusal(&dir) {
        ConvertError::Format { path, .. } => {
            assert!(path.ends_with(format!("{sub}/config.json")), "{path:?}")
        }
        e => panic!("{e}"),
    }
    let dir = fixture("mimo-vl", &work, "cut-weights");
    let weights = dir.join(sub).join("model.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() - 100]).unwrap();
    match refusal(&dir) {
        ConvertError::Safetensors { path, .. } => assert_eq!(path, weights),
        e => panic!("{e}"),
    }
    let _ = std::fs::remove_dir_all(&work);
}
