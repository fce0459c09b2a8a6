//! A finite JSON value beyond f32's range, written as a FLOAT32, is refused in every
//! converter path as the reference refuses it (gguf-py's `struct.pack("<f")` raises
//! OverflowError): a LoRA adapter's `lora_alpha`, a projector's
//! `vision_config.layer_norm_eps` and an `image_mean` entry.

use std::path::Path;

use ggufkit_converters::hf::lora::read_lora_dir;
use ggufkit_converters::hf::mmproj::read_mmproj_dir;
use ggufkit_converters::hf::{HfOptions, OutType};
use ggufkit_testsupport::{copy_tree, scratch, testdata};

/// `file` of `dir` with `from` replaced by `to` (once).
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let p = dir.join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from), "{file}: no {from}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}

fn message(e: ggufkit_converters::ConvertError) -> String {
    e.to_string()
}

#[test]
fn float32_overflow_is_refused_in_adapters_and_projectors() {
    let work = scratch("float-overflow");
    let lora = work.join("lora");
    copy_tree(&testdata("lora/llama-lora"), &lora);
    let cfg = std::fs::read_to_string(lora.join("adapter_config.json")).unwrap();
    let mut j: serde_json::Value = serde_json::from_str(&cfg).unwrap();
    j["lora_alpha"] = serde_json::json!(1e300);
    std::fs::write(lora.join("adapter_config.json"), j.to_string()).unwrap();
    let base = testdata("hf/llama-spm");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let Err(e) = read_lora_dir(&lora, &base, &opts) else {
        panic!("lora_alpha 1e300 accepted");
    };
    let e = message(e);
    assert!(
        e.contains("adapter.lora.alpha") && e.contains("too large"),
        "{e}"
    );

    for (file, from, to, key) in [
        (
            "config.json",
            "\"layer_norm_eps\": 1e-06",
            "\"layer_norm_eps\": 1e300",
            "eps",
        ),
        ("preprocessor_config.json", "0.5", "1e300", "image_mean[0]"),
    ] {
        let dir = work.join(format!("vl-{key}"));
        copy_tree(&testdata("hf/gemma3-vl"), &dir);
        edit(&dir, file, from, to);
        let Err(e) = read_mmproj_dir(&dir, &HfOptions::default()) else {
            panic!("{file}: 1e300 accepted");
        };
        let e = message(e);
        assert!(e.contains(key) && e.contains("too large"), "{file}: {e}");
    }
    // The fixtures themselves convert.
    assert!(read_mmproj_dir(&testdata("hf/gemma3-vl"), &HfOptions::default()).is_ok());
}
