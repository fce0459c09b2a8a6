//! Ling 3.0 (`bailingmoe3`): the configs its reference class refuses are refused with typed
//! errors before anything is written, and the next-token-prediction switches keep or drop the
//! MTP block as the class's filter does.

use ggufkit_testsupport::golden as support;

use std::path::{Path, PathBuf};

use ggufkit_converters::hf::{read_hf_dir, read_mmproj_dir, HfOptions, Mtp, OutType};
use ggufkit_converters::ConvertError;
use serde_json::{json, Value as Json};

use support::{materialize_fixture as materialize, read_json, scratch};

fn opts(mtp: Mtp) -> HfOptions {
    HfOptions {
        outtype: OutType::F32,
        mtp,
        ..HfOptions::default()
    }
}

/// A fresh copy of `fixture` whose config (or its `text_config`) has `key` set to `value`.
fn with_config(fixture: &str, work: &Path, key: &str, value: Json) -> PathBuf {
    let dir = materialize(fixture, work);
    let path = dir.join("config.json");
    let mut cfg = read_json(&path);
    match cfg.get_mut("text_config") {
        Some(text) => text[key] = value,
        None => cfg[key] = value,
    }
    std::fs::write(&path, cfg.to_string()).unwrap();
    dir
}

fn refusal(dir: &Path) -> ConvertError {
    match read_hf_dir(dir, &opts(Mtp::Keep)) {
        Err(e) => e,
        Ok(_) => panic!("{}: converted", dir.display()),
    }
}

/// KDA LoRA projections, unbounded KDA gates and element-wise attention gates are refused
/// naming the class and the setting.
#[test]
fn unsupported_attention_settings_are_refused() {
    let work = scratch("bailingmoe3-refusals");
    for (key, value, named) in [
        ("no_kda_lora", json!(false), "no_kda_lora"),
        ("kda_safe_gate", json!(false), "kda_safe_gate"),
        (
            "gated_attention_proj_granularity_type",
            json!("element_wise"),
            "gated_attention_proj_granularity_type",
        ),
    ] {
        let dir = with_config("bailingmoe3", &work, key, value);
        match refusal(&dir) {
            ConvertError::UnsupportedFeature { arch, feature } => {
                assert_eq!(arch, "BailingMoeV3ForCausalLM");
                assert!(feature.contains(named), "{key}: {feature}");
            }
            e => panic!("{key}: refused for another reason: {e}"),
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// A forget-gate projection on a full-attention block (every block is one when the group
/// size is 1) is refused naming the tensor; a group size of 0 is out of range.
#[test]
fn layer_groups_are_checked() {
    let work = scratch("bailingmoe3-groups");
    let dir = with_config("bailingmoe3", &work, "layer_group_size", json!(1));
    match refusal(&dir) {
        ConvertError::Tensor { name, problem } => {
            assert_eq!(name, "model.layers.0.attention.f_proj.weight");
            assert!(problem.contains("full-attention layer 0"), "{problem}");
        }
        e => panic!("refused for another reason: {e}"),
    }
    let dir = with_config("bailingmoe3", &work, "layer_group_size", json!(0));
    match refusal(&dir) {
        ConvertError::OutOfRange { key, value, .. } => {
            assert_eq!((key.as_str(), value.as_str()), ("layer_group_size", "0"));
        }
        e => panic!("refused for another reason: {e}"),
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The VL class needs an `mrope_section` whose three sections count the rope pairs.
#[test]
fn vl_rope_sections_are_checked() {
    let work = scratch("bailingmoe3-vl-sections");
    let dir = with_config("bailingmoe3-vl", &work, "mrope_section", Json::Null);
    match refusal(&dir) {
        ConvertError::MissingHparam { keys, .. } => assert_eq!(keys, ["mrope_section"]),
        e => panic!("refused for another reason: {e}"),
    }
    let dir = with_config("bailingmoe3-vl", &work, "mrope_section", json!([2, 2, 2]));
    match refusal(&dir) {
        ConvertError::BadHparam { keys, found, .. } => {
            assert_eq!(keys, ["mrope_section"]);
            assert_eq!(found, "[2, 2, 2]");
        }
        e => panic!("refused for another reason: {e}"),
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `--no-mtp` drops the MTP block (block 3) and its count; `--mtp` keeps it with the
/// embedding and the final norm only.
#[test]
fn mtp_switches_split_the_nextn_block() {
    let dir = ggufkit_testsupport::fixture("bailingmoe3");
    let names = |mtp: Mtp| -> Vec<String> {
        let conv = read_hf_dir(&dir, &opts(mtp)).expect("converts");
        conv.model.tensors.iter().map(|t| t.name.clone()).collect()
    };
    let all = names(Mtp::Keep);
    let trunk = names(Mtp::Drop);
    let draft = names(Mtp::Only);
    assert!(all.iter().any(|n| n == "blk.3.nextn.eh_proj.weight"));
    assert!(trunk.iter().all(|n| !n.starts_with("blk.3.")), "{trunk:?}");
    assert!(draft
        .iter()
        .all(|n| n.starts_with("blk.3.") || n == "token_embd.weight" || n == "output_norm.weight"));
    assert_eq!(trunk.len() + draft.len(), all.len() + 2, "{draft:?}");
}

/// The projector (`--mmproj`) needs a norm-only merger (`disable_merger_proj: true`) and the
/// tower's `out_hidden_size`, as the reference's vision class does.
#[test]
fn projector_config_is_checked() {
    let work = scratch("bailingmoe3-projector");
    for (key, value, named) in [
        ("disable_merger_proj", json!(false), "disable_merger_proj"),
        ("out_hidden_size", Json::Null, "out_hidden_size"),
    ] {
        let dir = materialize("ling3vl", &work);
        let path = dir.join("config.json");
        let mut cfg = read_json(&path);
        cfg["vision_config"][key] = value;
        std::fs::write(&path, cfg.to_string()).unwrap();
        match read_mmproj_dir(&dir, &opts(Mtp::Keep)) {
            Err(ConvertError::UnsupportedFeature { arch, feature }) => {
                assert!(
                    arch.starts_with("BailingMoeV3VLForConditionalGeneration"),
                    "{arch}"
                );
                assert!(feature.contains(named), "{key}: {feature}");
            }
            Err(e) => panic!("{key}: refused for another reason: {e}"),
            Ok(_) => panic!("{key}: converted"),
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}
