//! Phi-4-reasoning-vision (`Phi4ForCausalLMV`) checkpoints the reference converter fails on
//! are refused with the file or key at fault.
//!
//! The text half: the hub's `model_type` (`phi4-siglip`) has no transformers class, so the
//! GPT-2 tokenizer step's `AutoTokenizer` builds a generic config from config.json, which
//! fails on transformers 4's `rope_scaling` of a scaled type; the same config typed `phi3`
//! fails where Phi3Config rejects its rope. The projector: the image processor's patch size
//! and patch-count bounds (the latter also read from config.json's root), the tower's position
//! table and its block count.

use std::path::{Path, PathBuf};

use ggufkit_converters::hf::{read_hf_dir, read_mmproj_dir, HfOptions, OutType};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::paths::materialize_fixture;
use ggufkit_testsupport::scratch;
use serde_json::{json, Value as Json};

/// The committed fixture in a fresh scratch directory, changed by `edit`.
fn fixture(work: &Path, edit: impl FnOnce(&Path)) -> PathBuf {
    let dir = materialize_fixture("phi4v", work);
    edit(&dir);
    dir
}

fn edit_json(path: &Path, f: impl FnOnce(&mut serde_json::Map<String, Json>)) {
    let mut v: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(v.as_object_mut().unwrap());
    std::fs::write(path, v.to_string()).unwrap();
}

fn text(dir: &Path) -> Result<(), ConvertError> {
    read_hf_dir(dir, &HfOptions::default()).map(|_| ())
}

fn projector(dir: &Path) -> Result<ggufkit_converters::hf::HfConversion, ConvertError> {
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    read_mmproj_dir(dir, &opts)
}

/// transformers 4's one-dict `rope_scaling` of a scaled type.
fn v4_longrope(c: &mut serde_json::Map<String, Json>) {
    c.insert(
        "rope_scaling".into(),
        json!({"type": "longrope", "long_factor": [1.0, 1.5], "short_factor": [1.0, 1.125]}),
    );
    c.insert("original_max_position_embeddings".into(), json!(1024));
}

#[test]
fn a_scaled_v4_rope_scaling_is_refused_by_the_tokenizer_step_naming_config_json() {
    let work = scratch("phi4v-refusal-rope");
    let dir = fixture(work.path(), |d| {
        edit_json(&d.join("config.json"), v4_longrope)
    });
    let e = text(&dir).expect_err("the reference refuses it");
    let msg = e.to_string();
    assert!(msg.contains("config.json"), "{msg}");
    assert!(msg.contains("rope_scaling"), "{msg}");
    assert!(msg.contains("AutoTokenizer"), "{msg}");
    // The projector reads no tokenizer: it converts.
    projector(&dir).expect("the projector converts");

    // The same rope under the v5 spelling, or with a model type transformers knows (whose
    // class accepts it), converts.
    let dir = fixture(&work.path().join("v5"), |d| {
        edit_json(&d.join("config.json"), |c| {
            c.remove("rope_scaling");
            c.insert(
                "rope_parameters".into(),
                json!({"rope_type": "longrope", "rope_theta": 250000.0,
                       "original_max_position_embeddings": 1024,
                       "long_factor": [1.0, 1.5], "short_factor": [1.0, 1.125]}),
            );
        })
    });
    text(&dir).expect("the v5 spelling converts");
    let dir = fixture(&work.path().join("phi3"), |d| {
        edit_json(&d.join("config.json"), |c| {
            v4_longrope(c);
            c.insert("model_type".into(), json!("phi3"));
        })
    });
    text(&dir).expect("Phi3Config accepts it");

    // A rope Phi3Config rejects fails in the tokenizer step too.
    let dir = fixture(&work.path().join("phi3-yarn"), |d| {
        edit_json(&d.join("config.json"), |c| {
            c.insert("model_type".into(), json!("phi3"));
            c.insert(
                "rope_scaling".into(),
                json!({"type": "yarn", "factor": 2.0}),
            );
        })
    });
    let msg = text(&dir).expect_err("Phi3Config rejects it").to_string();
    assert!(
        msg.contains("config.json") && msg.contains("Phi3Config"),
        "{msg}"
    );
}

#[test]
fn the_sentencepiece_branch_needs_tokenizer_model() {
    let work = scratch("phi4v-refusal-spm");
    let dir = fixture(work.path(), |d| {
        edit_json(&d.join("tokenizer_config.json"), |t| {
            t.insert("tokenizer_class".into(), json!("LlamaTokenizer"));
        })
    });
    let msg = text(&dir).expect_err("no tokenizer.model").to_string();
    assert!(msg.contains("tokenizer.model"), "{msg}");
}

#[test]
fn the_image_processor_gives_the_patch_size() {
    let work = scratch("phi4v-refusal-patch");
    for (case, value) in [("absent", None), ("null", Some(Json::Null))] {
        let dir = fixture(&work.path().join(case), |d| {
            edit_json(&d.join("preprocessor_config.json"), |p| {
                match &value {
                    None => p.remove("patch_size"),
                    Some(v) => p.insert("patch_size".into(), v.clone()),
                };
            })
        });
        match projector(&dir).map(|_| ()).expect_err("refused") {
            ConvertError::MissingKey { path, key, .. } => {
                assert_eq!(key, "patch_size");
                assert!(path.ends_with("preprocessor_config.json"), "{path:?}");
            }
            e => panic!("{case}: {e}"),
        }
    }
    // A float patch size makes sizes the reference cannot write as UINT32.
    let dir = fixture(&work.path().join("float"), |d| {
        edit_json(&d.join("preprocessor_config.json"), |p| {
            p.insert("patch_size".into(), json!(4.0));
        })
    });
    let msg = projector(&dir)
        .map(|_| ())
        .expect_err("refused")
        .to_string();
    assert!(msg.contains("patch_size"), "{msg}");
}

#[test]
fn the_patch_count_bounds_fall_back_to_the_config_root() {
    let work = scratch("phi4v-refusal-bounds");
    let min_pixels = |dir: &Path| {
        let conv = projector(dir).expect("converts");
        conv.model
            .metadata
            .get("clip.vision.image_min_pixels")
            .cloned()
    };
    // Only in config.json (the fixture's root has the same bounds): the same value.
    let dir = fixture(&work.path().join("root"), |d| {
        edit_json(&d.join("preprocessor_config.json"), |p| {
            p.remove("min_num_patches");
        })
    });
    let base = fixture(&work.path().join("base"), |_| {});
    assert_eq!(min_pixels(&dir), min_pixels(&base));
    assert!(min_pixels(&base).is_some());
    // Nowhere, or null in the image processor's config: refused, naming the key.
    for (case, edit) in [
        ("nowhere", (true, None)),
        ("null", (false, Some(Json::Null))),
    ] {
        let dir = fixture(&work.path().join(case), |d| {
            edit_json(&d.join("preprocessor_config.json"), |p| {
                match &edit.1 {
                    None => p.remove("max_num_patches"),
                    Some(v) => p.insert("max_num_patches".into(), v.clone()),
                };
            });
            if edit.0 {
                edit_json(&d.join("config.json"), |c| {
                    c.remove("max_num_patches");
                });
            }
        });
        match projector(&dir).map(|_| ()).expect_err("refused") {
            ConvertError::MissingKey { key, .. } => assert_eq!(key, "max_num_patches"),
            e => panic!("{case}: {e}"),
        }
    }
}

#[test]
fn the_position_table_is_required() {
    let work = scratch("phi4v-refusal-table");
    let dir = fixture(work.path(), |d| {
        // The table renamed in the safetensors header (same length: the file stays valid).
        let path = d.join("model.safetensors");
        let mut bytes = std::fs::read(&path).unwrap();
        let from = b"embeddings.position_embedding.weight";
        let to = b"embeddings.position_embeddinG.weight";
        let at = bytes
            .windows(from.len())
            .position(|w| w == from)
            .expect("the table's name");
        bytes[at..at + to.len()].copy_from_slice(to);
        std::fs::write(&path, bytes).unwrap();
    });
    match projector(&dir).map(|_| ()).expect_err("refused") {
        ConvertError::Tensor { name, .. } => assert!(name.contains("position_embedding"), "{name}"),
        e => panic!("{e}"),
    }
}

#[test]
fn the_tower_needs_two_blocks_given_as_an_integer() {
    let work = scratch("phi4v-refusal-blocks");
    for (case, n) in [
        ("one", json!(1)),
        ("float", json!(3.0)),
        ("text", json!("3")),
    ] {
        let dir = fixture(&work.path().join(case), |d| {
            edit_json(&d.join("config.json"), |c| {
                c["vision_config"]["num_hidden_layers"] = n.clone();
            })
        });
        let msg = projector(&dir)
            .map(|_| ())
            .expect_err("refused")
            .to_string();
        assert!(msg.contains("num_hidden_layers"), "{case}: {msg}");
    }
}
