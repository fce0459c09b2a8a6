//! The refusals of the text halves of Sarashina2-Vision, HunyuanOCR and MiniCPM-V 4.6 (their
//! fixtures `sarashina2-text`, `hunyuanvl-text`, `minicpmv46-text`), each checked against what
//! the reference does with the same edit (recorded here from running it; the config variants
//! of these fixtures record the same outcomes): a typed error naming the key or file at
//! fault, and no output.

use std::path::Path;

use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::golden as support;
use serde_json::Value as Json;
use support::scratch;

fn opts() -> HfOptions {
    HfOptions {
        outtype: OutType::F32,
        allow_unloadable: true,
        ..HfOptions::default()
    }
}

fn edit_config(dir: &Path, f: impl FnOnce(&mut Json)) {
    let p = dir.join("config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut cfg);
    std::fs::write(&p, cfg.to_string()).unwrap();
}

/// The fixture `name` with `edit` applied to its config.json, converted.
fn convert_edited(name: &str, edit: impl FnOnce(&mut Json)) -> Result<(), ConvertError> {
    let work = scratch(&format!("{name}-refusal"));
    let dir = support::materialize_fixture(name, &work);
    edit_config(&dir, edit);
    let out = read_hf_dir(&dir, &opts()).map(|_| ());
    let _ = std::fs::remove_dir_all(&work);
    out
}

/// The reference: `KeyError: could not find any of: ['n_kv_heads', 'num_key_value_heads']`
/// (the remote-code config is read as written, without Llama's defaults).
#[test]
fn sarashina2_text_needs_the_kv_head_count() {
    let r = convert_edited("sarashina2-text", |c| {
        c["text_config"]
            .as_object_mut()
            .unwrap()
            .remove("num_key_value_heads");
    });
    match r {
        Err(ConvertError::MissingHparam { keys, .. }) => {
            assert_eq!(keys, ["n_kv_heads", "num_key_value_heads"]);
        }
        Err(e) => panic!("another error: {e}"),
        Ok(()) => panic!("converted without num_key_value_heads"),
    }
}

/// The reference: `KeyError: "Missing required keys in rope_parameters for
/// 'rope_type'='dynamic': {'factor'}"`, raised by transformers when the tokenizer loads the
/// config (AutoConfig's own failure is caught, that one is not).
#[test]
fn hunyuanvl_text_xdrope_without_factor_is_refused() {
    let r = convert_edited("hunyuanvl-text", |c| {
        c["rope_scaling"].as_object_mut().unwrap().remove("factor");
    });
    match r {
        Err(e @ ConvertError::Format { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("config.json") && msg.contains("factor"),
                "{msg}"
            );
        }
        Err(e) => panic!("another error: {e}"),
        Ok(()) => panic!("converted without factor"),
    }
}

/// The reference: `KeyError: 'alpha'` (the class reads XD-RoPE's alpha without a default).
#[test]
fn hunyuanvl_text_xdrope_without_alpha_is_refused() {
    let r = convert_edited("hunyuanvl-text", |c| {
        c["rope_scaling"].as_object_mut().unwrap().remove("alpha");
    });
    match r {
        Err(e) => assert!(e.to_string().contains("alpha"), "{e}"),
        Ok(()) => panic!("converted without alpha"),
    }
}

/// The reference: `AssertionError` (no MTP layer counted: the class drops the `mtp.*`
/// tensors the count would come from).
#[test]
fn minicpmv46_text_without_the_mtp_count_is_refused() {
    let r = convert_edited("minicpmv46-text", |c| {
        c["text_config"]
            .as_object_mut()
            .unwrap()
            .remove("mtp_num_hidden_layers");
    });
    match r {
        Err(e) => assert!(e.to_string().contains("mtp_num_hidden_layers"), "{e}"),
        Ok(()) => panic!("converted without mtp_num_hidden_layers"),
    }
}
