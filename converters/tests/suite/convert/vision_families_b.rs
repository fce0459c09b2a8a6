//! Config rules of CogVLM's and Janus-Pro's conversions that their fixtures do not exercise,
//! each checked against what the reference does with the same edit (recorded here from
//! running it): CogVLM's text model needs the key/value head count (the hub configs have
//! none), its projector does not; Janus-Pro's tower sizes its feed-forward layer from
//! `mlp_ratio`, rounding half to even, and flags a SiLU activation; MiniCPM-V 4.6 reads its
//! downsample mode and image size from the preprocessor config.

use std::path::Path;

use ggufkit::gguf::{ArrayValue, Value};
use ggufkit_converters::hf::{read_hf_dir, read_mmproj_dir, HfOptions, OutType};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::golden as support;
use serde_json::Value as Json;
use support::scratch;

fn opts() -> HfOptions {
    HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    }
}

fn edit_config(dir: &Path, f: impl FnOnce(&mut Json)) {
    let p = dir.join("config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut cfg);
    std::fs::write(&p, cfg.to_string()).unwrap();
}

/// The reference: `KeyError: could not find any of: ['n_kv_heads', 'num_key_value_heads']`
/// for the text model; the `--mmproj` file is written.
#[test]
fn cogvlm_text_needs_the_kv_head_count() {
    let work = scratch("cogvlm-no-kv-heads");
    let dir = support::materialize_fixture("cogvlm", &work);
    edit_config(&dir, |c| {
        c.as_object_mut().unwrap().remove("num_key_value_heads");
    });
    match read_hf_dir(&dir, &opts()) {
        Err(ConvertError::MissingHparam { keys, arch, .. }) => {
            assert_eq!(keys, ["n_kv_heads", "num_key_value_heads"]);
            assert!(arch.contains("CogVLM"), "{arch}");
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("converted without num_key_value_heads"),
    }
    let projector = read_mmproj_dir(&dir, &opts()).expect("the projector converts");
    assert_eq!(
        projector.model.metadata.get("clip.projector_type"),
        Some(&Value::from("cogvlm"))
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// The reference writes `clip.vision.feed_forward_length = 24` (16 * 1.53125 = 24.5, half
/// to even) and `clip.use_silu = true` for this edit.
#[test]
fn janus_mlp_ratio_rounds_half_to_even_and_silu_is_flagged() {
    let work = scratch("janus-mlp-ratio");
    let dir = support::materialize_fixture("janus", &work);
    edit_config(&dir, |c| {
        let v = &mut c["vision_config"];
        v["mlp_ratio"] = Json::from(1.53125);
        v["hidden_act"] = Json::from("silu");
        v.as_object_mut().unwrap().remove("intermediate_size");
    });
    let conv = read_mmproj_dir(&dir, &opts()).expect("converts");
    let md = &conv.model.metadata;
    assert_eq!(
        md.get("clip.vision.feed_forward_length"),
        Some(&Value::U32(24))
    );
    assert_eq!(md.get("clip.use_silu"), Some(&Value::Bool(true)));
    assert_eq!(md.get("clip.use_gelu"), None);
    // A ratio that is not a number is a typed error naming both keys.
    edit_config(&dir, |c| {
        c["vision_config"]["mlp_ratio"] = Json::from("wide")
    });
    match read_mmproj_dir(&dir, &opts()) {
        Err(ConvertError::BadHparam { keys, .. }) => {
            assert_eq!(
                keys,
                ["vision_config.hidden_size", "vision_config.mlp_ratio"]
            );
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("converted with a text mlp_ratio"),
    }
    let _ = std::fs::remove_dir_all(&work);
}

fn edit_json(path: &Path, f: impl FnOnce(&mut Json)) {
    let mut v: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, v.to_string()).unwrap();
}

/// The reference, for `downsample_mode` `4x`, `scale_resolution` 30.7 and a top-level
/// `insert_layer_id` 2: `clip.vision.image_size = 30`, `scale_factor = 2`,
/// `wa_layer_indexes = [2]` and no `v.vit_merger.*` tensor; `8x` is a `ValueError`.
#[test]
fn minicpmv46_downsample_modes_and_merger_index() {
    let work = scratch("minicpmv46-modes");
    let dir = support::materialize_fixture("minicpmv46", &work);
    let pre = dir.join("preprocessor_config.json");
    edit_json(&pre, |p| {
        p["downsample_mode"] = Json::from("4x");
        p["scale_resolution"] = Json::from(30.7);
    });
    edit_config(&dir, |c| c["insert_layer_id"] = Json::from(2));
    let conv = read_mmproj_dir(&dir, &opts()).expect("converts");
    let md = &conv.model.metadata;
    assert_eq!(md.get("clip.vision.image_size"), Some(&Value::U32(30)));
    assert_eq!(
        md.get("clip.vision.projector.scale_factor"),
        Some(&Value::U32(2))
    );
    match md.get("clip.vision.wa_layer_indexes") {
        Some(Value::Array(ArrayValue::I32(a))) => assert_eq!(a, &vec![2]),
        other => panic!("wa_layer_indexes: {other:?}"),
    }
    assert!(conv
        .model
        .tensors
        .iter()
        .all(|t| !t.name.contains("vit_merger")));
    assert!(conv
        .model
        .tensors
        .iter()
        .any(|t| t.name.starts_with("v.blk.")));
    edit_json(&pre, |p| p["downsample_mode"] = Json::from("8x"));
    match read_mmproj_dir(&dir, &opts()) {
        Err(ConvertError::UnsupportedFeature { feature, .. }) => {
            assert!(feature.contains("8x"), "{feature}")
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("converted with downsample_mode 8x"),
    }
    let _ = std::fs::remove_dir_all(&work);
}
