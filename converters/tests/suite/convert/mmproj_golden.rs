//! Multimodal projectors (`--mmproj`) against the reference's output, from `testdata/` alone.
//!
//! `conformance/make_mmproj_fixtures.py` built each tiny vision-language (or audio-language)
//! checkpoint in `testdata/hf/<fixture>/` and recorded what llama.cpp's
//! `convert_hf_to_gguf.py --mmproj` wrote for f32, f16, bf16, q8_0 and auto, the default
//! file name, and, where ggufkit converts the text half, the plain text conversions and
//! llama-quantize's Q4_K_M, in `testdata/golden/<fixture>/`. Each test materializes the
//! fixture in a scratch directory of the same name (general.name comes from it) and compares
//! whole manifests (the sha256 of every file). A variant the reference refused must be
//! refused here too.

use ggufkit_testsupport::golden as support;

use std::path::Path;

use ggufkit::manifest::diff_manifests;
use ggufkit_converters::hf::{read_hf_dir, read_mmproj_dir, HfConversion, HfOptions, OutType};
use ggufkit_converters::ConvertError;
use serde_json::Value as Json;

use super::golden_variants::{golden_manifest, report, written_manifest};
use support::{read_json, scratch, testdata};

fn opts(outtype: OutType) -> HfOptions {
    HfOptions {
        outtype,
        ..HfOptions::default()
    }
}

/// Writes a conversion (quantized when `quant` is set) and returns its manifest.
fn write(conv: HfConversion, quant: Option<&str>, out: &Path) -> Result<Json, String> {
    written_manifest(conv.model, quant, out)
}

fn run(fixture: &str) {
    let golden = testdata(&format!("golden/{fixture}"));
    let status = read_json(&golden.join("status.json"));
    let work = scratch(&format!("mmproj-{fixture}"));
    let dir = support::materialize_fixture(fixture, &work);
    let mut problems = Vec::new();
    let mut checked = 0;
    let variants = [
        ("mmproj-f32", "f32", true, None),
        ("mmproj-f16", "f16", true, None),
        ("mmproj-q8_0", "q8_0", true, None),
        ("mmproj-auto", "auto", true, None),
        ("mmproj-default-name", "auto", true, None),
        ("convert-f32", "f32", false, None),
        ("convert-f16", "f16", false, None),
        ("convert-bf16", "bf16", false, None),
        ("convert-q8_0", "q8_0", false, None),
        ("convert-auto", "auto", false, None),
        ("quant-Q4_K_M", "f32", false, Some("q4_k_m")),
    ];
    for (variant, t, mmproj, quant) in variants {
        let st = &status[variant];
        if st.is_null() {
            continue;
        }
        checked += 1;
        let o = opts(OutType::parse(t).unwrap());
        let conv = if mmproj {
            read_mmproj_dir(&dir, &o)
        } else {
            read_hf_dir(&dir, &o)
        };
        let out = work.join(format!("{variant}.gguf"));
        if st["ok"] != Json::Bool(true) {
            // The reference's failure is the converter's, or llama-quantize's on its output.
            let refused = match conv {
                Ok(c) if quant.is_some() => write(c, quant, &out).err(),
                Ok(_) => None,
                Err(e) => Some(e.to_string()),
            };
            match refused {
                None => problems.push(format!("{variant}: the reference failed, we converted")),
                Some(e) => eprintln!("{fixture} {variant}: refused like the reference ({e})"),
            }
            continue;
        }
        let conv = match conv {
            Ok(c) => c,
            Err(e) => {
                problems.push(format!("{variant}: conversion failed: {e}"));
                continue;
            }
        };
        if let Some(name) = st["file_name"].as_str() {
            if conv.default_file_name != name {
                problems.push(format!(
                    "{variant}: default name {} instead of {name}",
                    conv.default_file_name
                ));
            }
        }
        let want = golden_manifest(&golden, variant, st);
        match write(conv, quant, &out) {
            Err(e) => problems.push(format!("{variant}: writing failed: {e}")),
            Ok(m) => {
                let mut d = diff_manifests(&m, &want);
                if m["sha256"] == want["sha256"] {
                    // The same bytes: a KV line can still differ where serde_json parses
                    // the golden's shortest float repr one f64 ulp off (image means).
                    d.retain(|x| !x.starts_with("kv["));
                }
                problems.extend(report(fixture, variant, d));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    // Text-only fixtures (no projector converter: Qwen2.5-Omni) have six.
    assert!(checked >= 5, "{fixture}: only {checked} golden variants");
    assert!(
        problems.is_empty(),
        "{fixture}: {} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

macro_rules! fixtures {
    ($($t:ident => $name:literal),* $(,)?) => {
        $(#[test] fn $t() { run($name); })*

        #[test]
        fn every_generated_fixture_has_a_test() {
            let listed = [$($name),*];
            for n in support::fixtures_made_by("make_mmproj_fixtures.py") {
                assert!(listed.contains(&n.as_str()), "fixture {n} has no test");
            }
        }
    };
}

fixtures! {
    gemma3_vl => "gemma3-vl",
    llava_pixtral => "llava-pixtral",
    mistral3_vl => "mistral3-vl",
    smolvlm => "smolvlm",
    idefics3 => "idefics3",
    smolvlm2_hub => "smolvlm2-hub",
    idefics3_hub => "idefics3-hub",
    qwen2vl => "qwen2vl",
    qwen2vl_model => "qwen2vl-model",
    qwen25vl => "qwen25vl",
    qwen3vl => "qwen3vl",
    qwen3vlmoe => "qwen3vlmoe",
    qwen35_vl => "qwen35-vl",
    qwen35moe_vl => "qwen35moe-vl",
    qwen4exp_vl => "qwen4exp-vl",
    glm4v => "glm4v",
    glm4vmoe => "glm4vmoe",
    glmocr => "glmocr",
    glm5next => "glm5next",
    qwen2audio => "qwen2audio",
    qwen25omni => "qwen25omni",
    qwen3asr => "qwen3asr",
    qwen3omni => "qwen3omni",
    internvl3 => "internvl3",
    ultravox => "ultravox",
    gemma4_vl => "gemma4-vl",
    gemma4unified_vl => "gemma4unified-vl",
    gemma4_vision => "gemma4-vision",
    gemma3n_vl => "gemma3n-vl",
    gemma3n_vl_hf => "gemma3n-vl-hf",
    voxtral => "voxtral",
    audioflamingo3 => "audioflamingo3",
    meralion2 => "meralion2",
    glmasr => "glmasr",
    sarashina2_vl => "sarashina2-vl",
    kimik25_vl => "kimik25-vl",
    kimivl => "kimivl",
    llama4_vision => "llama4-vision",
    lfm2vl => "lfm2vl",
    lightonocr => "lightonocr",
    granite4v => "granite4v",
    youtuvl => "youtuvl",
    hunyuanvl => "hunyuanvl",
    paddleocr_vl => "paddleocr-vl",
    deepseek4_vl => "deepseek4-vl",
    cogvlm => "cogvlm",
    janus => "janus",
    minimax_m3_vl => "minimax-m3-vl",
    minicpmv46 => "minicpmv46",
    ling3vl => "ling3vl",
    exaone45_vl => "exaone45-vl",
    stepvl => "stepvl",
    step3p7 => "step3p7",
    deepseekocr_vl => "deepseekocr-vl",
    deepseekocr2_vl => "deepseekocr2-vl",
    dotsocr_vl => "dotsocr-vl",
    phi4v => "phi4v",
    nemotron_vl => "nemotron-vl",
    nemotron_omni => "nemotron-omni",
    granitespeech => "granitespeech",
    lfm2audio => "lfm2audio",
    mimo_vl => "mimo-vl",
}

fn refusal(dir: &Path) -> ConvertError {
    match read_mmproj_dir(dir, &opts(OutType::F16)) {
        Ok(_) => panic!("{}: converted", dir.display()),
        Err(e) => e,
    }
}

fn edit_config(dir: &Path, f: impl FnOnce(&mut Json)) {
    let p = dir.join("config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut cfg);
    std::fs::write(&p, cfg.to_string()).unwrap();
}

/// A text-only model, a class without a projector converter and a tower the reference does
/// not convert are refused with the class named (and nothing planned).
#[test]
fn refusals_name_the_class() {
    let work = scratch("mmproj-refusals");
    // A text-only model.
    let dir = support::materialize_fixture("gemma3", &work);
    let e = refusal(&dir).to_string();
    assert!(
        e.contains("Gemma3ForCausalLM") && e.contains("text-only"),
        "{e}"
    );
    // A vision-language class with no projector converter.
    let dir = support::materialize_fixture("gemma3-vl", &work);
    edit_config(&dir, |c| {
        c["architectures"] = Json::from(vec!["FooVLForConditionalGeneration"])
    });
    let e = refusal(&dir).to_string();
    assert!(
        e.contains("FooVLForConditionalGeneration") && e.contains("Gemma3ForConditionalGeneration"),
        "{e}"
    );
    // No preprocessor config: the image mean and std are missing.
    let dir = support::materialize_fixture("gemma3-vl", &work.join("nopre"));
    std::fs::remove_file(dir.join("preprocessor_config.json")).unwrap();
    let e = refusal(&dir).to_string();
    assert!(
        e.contains("image_mean") && e.contains("Gemma3ForConditionalGeneration"),
        "{e}"
    );
    // A LLaVA checkpoint with a CLIP tower: the reference converts Pixtral towers only.
    let dir = support::materialize_fixture("llava-pixtral", &work);
    edit_config(&dir, |c| {
        c["vision_config"]["model_type"] = Json::from("clip_vision_model")
    });
    let e = refusal(&dir).to_string();
    assert!(
        e.contains("LlavaForConditionalGeneration") && e.contains("clip_vision_model"),
        "{e}"
    );
    // An audio class whose config holds only a vision_config: refused, not a panic (the
    // encoder a class writes must have its config).
    let dir = support::materialize_fixture("qwen2audio", &work);
    edit_config(&dir, |c| {
        let a = c["audio_config"].take();
        c["vision_config"] = a;
    });
    let e = refusal(&dir).to_string();
    assert!(e.contains("audio_config"), "{e}");
    // A tensor the projector table lacks is named.
    let dir = support::materialize_fixture("smolvlm", &work);
    let st = dir.join("model.safetensors");
    let bytes = std::fs::read(&st).unwrap();
    let needle = b"model.vision_model.post_layernorm.weight";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap();
    let mut edited = bytes.clone();
    edited[at..at + needle.len()].copy_from_slice(b"model.vision_model.post_layernorm.wxyzab");
    std::fs::write(&st, edited).unwrap();
    let e = refusal(&dir).to_string();
    assert!(
        e.contains("post_layernorm.wxyzab") && e.contains("SmolVLM"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// The fixture's checkpoint rewritten with per-expert tensors
/// (`mlp.experts.{x}.{gate,up,down}_proj.weight`, output-major, bf16).
fn per_expert_checkpoint(st: &Path) {
    let bytes = std::fs::read(st).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Json = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let data = &bytes[8 + n..];
    let mut out: Vec<(String, Vec<u64>, Vec<u8>)> = Vec::new();
    let mut split = 0;
    for (name, t) in header.as_object().unwrap() {
        if name == "__metadata__" {
            continue;
        }
        assert_eq!(t["dtype"], "BF16", "{name}");
        let shape: Vec<u64> = t["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let off = |i: usize| t["data_offsets"][i].as_u64().unwrap() as usize;
        let raw = &data[off(0)..off(1)];
        // Columns [c0, c0 + w) of expert x of a [E, R, C] tensor, transposed: [w, R].
        let cols_t = |x: u64, c0: u64, w: u64| {
            let mut v = Vec::new();
            for j in c0..c0 + w {
                for i in 0..shape[1] {
                    let k = (((x * shape[1] + i) * shape[2] + j) * 2) as usize;
                    v.extend_from_slice(&raw[k..k + 2]);
                }
            }
            v
        };
        if let Some(base) = name.strip_suffix("gate_up_proj") {
            let half = shape[2] / 2;
            for x in 0..shape[0] {
                let s = vec![half, shape[1]];
                out.push((
                    format!("{base}{x}.gate_proj.weight"),
                    s.clone(),
                    cols_t(x, 0, half),
                ));
                out.push((
                    format!("{base}{x}.up_proj.weight"),
                    s,
                    cols_t(x, half, half),
                ));
            }
            split += 1;
        } else if let Some(base) = name.strip_suffix("down_proj") {
            for x in 0..shape[0] {
                let s = vec![shape[2], shape[1]];
                out.push((
                    format!("{base}{x}.down_proj.weight"),
                    s,
                    cols_t(x, 0, shape[2]),
                ));
            }
            split += 1;
        } else {
            out.push((name.clone(), shape.clone(), raw.to_vec()));
        }
    }
    assert_eq!(split, 4, "two layers of fused experts");
    let tensors: Vec<(&str, &str, &[u64], Vec<u8>)> = out
        .iter()
        .map(|(n, s, d)| (n.as_str(), "BF16", s.as_slice(), d.clone()))
        .collect();
    std::fs::write(st, support::safetensors(&tensors)).unwrap();
}

/// Qwen3-VL-MoE with per-expert tensors (Qwen2-MoE's stacking) converts to the same file
/// as the fused hub layout (so did the reference: its f32 file from this rewrite was the
/// golden `convert-f32`); a vision config without `deepstack_visual_indexes` has
/// AutoConfig's default `[8, 16, 24]`: 3 deepstack layers (the reference's f32 file for that
/// config, `convert_hf_to_gguf.py qwen3vlmoe --outtype f32` after deleting the key, had
/// sha256 9e1e91d6…).
#[test]
fn qwen3vlmoe_per_expert_tensors_and_default_deepstack() {
    let work = scratch("mmproj-qwen3vlmoe-experts");
    let dir = support::materialize_fixture("qwen3vlmoe", &work);
    per_expert_checkpoint(&dir.join("model.safetensors"));
    let status = read_json(&testdata("golden/qwen3vlmoe/status.json"));
    let conv = read_hf_dir(&dir, &opts(OutType::F32)).unwrap();
    let m = write(conv, None, &work.join("a.gguf")).unwrap();
    assert_eq!(m["sha256"], status["convert-f32"]["sha256"]);
    edit_config(&dir, |c| {
        c["vision_config"]
            .as_object_mut()
            .unwrap()
            .remove("deepstack_visual_indexes");
    });
    let conv = read_hf_dir(&dir, &opts(OutType::F32)).unwrap();
    let m = write(conv, None, &work.join("b.gguf")).unwrap();
    assert_eq!(
        m["sha256"],
        "9e1e91d669beaab6bfe4526ae19933bd92bba4cfdfff73939f4c59ed74a6ec00"
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// The remote-code families read config.json as written: InternVL's image and patch sizes
/// may be lists (their first value is used: the same file as the golden one); a tower
/// activation other than GELU / SiLU, a missing or zero `downsample_ratio`, Ultravox without
/// `stack_factor` or a Whisper config without its sizes are refused with the class named.
#[test]
fn internvl_and_ultravox_config_edges() {
    let work = scratch("mmproj-remote-code-edges");
    let dir = support::materialize_fixture("internvl3", &work);
    let status = read_json(&testdata("golden/internvl3/status.json"));
    edit_config(&dir, |c| {
        c["vision_config"]["image_size"] = serde_json::json!([28, 28]);
        c["vision_config"]["patch_size"] = serde_json::json!([7, 7]);
    });
    let conv = read_mmproj_dir(&dir, &opts(OutType::F16)).unwrap();
    let m = write(conv, None, &work.join("a.gguf")).unwrap();
    assert_eq!(m["sha256"], status["mmproj-f16"]["sha256"]);
    for (edit, words) in [
        (
            &(|c: &mut Json| c["vision_config"]["hidden_act"] = Json::from("relu"))
                as &dyn Fn(&mut Json),
            &["InternVisionModel", "hidden_act", "relu"][..],
        ),
        (
            &|c: &mut Json| {
                c.as_object_mut().unwrap().remove("downsample_ratio");
            },
            &["InternVisionModel", "downsample_ratio"],
        ),
        (
            &|c: &mut Json| c["downsample_ratio"] = Json::from(0.0),
            &["InternVisionModel", "downsample_ratio"],
        ),
        (
            &|c: &mut Json| c["vision_config"]["image_size"] = serde_json::json!([]),
            &["InternVisionModel", "image_size"],
        ),
    ] {
        let dir = support::materialize_fixture("internvl3", &work.join("edit"));
        edit_config(&dir, edit);
        let e = refusal(&dir).to_string();
        assert!(words.iter().all(|w| e.contains(w)), "{e}");
    }
    for (edit, words) in [
        (
            &(|c: &mut Json| {
                c.as_object_mut().unwrap().remove("stack_factor");
            }) as &dyn Fn(&mut Json),
            &["UltravoxModel", "stack_factor"][..],
        ),
        (
            &|c: &mut Json| {
                c["audio_config"].as_object_mut().unwrap().remove("d_model");
            },
            &["UltravoxModel", "d_model"],
        ),
    ] {
        let dir = support::materialize_fixture("ultravox", &work.join("edit"));
        edit_config(&dir, edit);
        let e = refusal(&dir).to_string();
        assert!(words.iter().all(|w| e.contains(w)), "{e}");
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The Whisper-encoder families read their own config keys: MERaLiON-2's tower config is
/// `speech_config` (refused without it, whatever `audio_config` holds) and its stack factor
/// `speech_mlp_scale_factor`, 15 when absent; GLM-ASR's `merge_factor` is required and its
/// `audio_bos_eos_token` must have the begin and end rows (refused naming the tensor).
#[test]
fn whisper_family_config_edges() {
    use ggufkit::gguf::keys::clip::audio;
    use ggufkit::gguf::Value;
    let work = scratch("mmproj-whisper-family-edges");
    let dir = support::materialize_fixture("meralion2", &work);
    edit_config(&dir, |c| {
        c.as_object_mut().unwrap().remove("speech_mlp_scale_factor");
    });
    let conv = read_mmproj_dir(&dir, &opts(OutType::F32)).unwrap();
    let md = &conv.model.metadata;
    assert_eq!(md.get(audio::PROJECTOR_STACK_FACTOR), Some(&Value::U32(15)));
    edit_config(&dir, |c| {
        let a = c.as_object_mut().unwrap().remove("speech_config").unwrap();
        c["audio_config"] = a;
    });
    let e = refusal(&dir).to_string();
    assert!(
        e.contains("MERaLiON2ForConditionalGeneration") && e.contains("speech_config"),
        "{e}"
    );
    let dir = support::materialize_fixture("glmasr", &work.join("edit"));
    edit_config(&dir, |c| {
        c.as_object_mut().unwrap().remove("merge_factor");
    });
    let e = refusal(&dir).to_string();
    assert!(
        e.contains("GlmasrModel") && e.contains("merge_factor"),
        "{e}"
    );
    let dir = support::materialize_fixture("glmasr", &work.join("edit"));
    let st = dir.join("model.safetensors");
    let bytes = std::fs::read(&st).unwrap();
    let needle = br#""audio_encoder.audio_bos_eos_token.weight":{"dtype":"BF16","shape":[2,16]"#;
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the begin / end rows in the header");
    // One row of twice the width: the same bytes, no end row.
    let mut one_row = bytes.clone();
    one_row[at + needle.len() - 5..at + needle.len() - 1].copy_from_slice(b"1,32");
    std::fs::write(&st, &one_row).unwrap();
    match read_mmproj_dir(&dir, &opts(OutType::F32)) {
        Ok(_) => panic!("a one-row audio_bos_eos_token converted"),
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("audio_bos_eos_token"), "{e}");
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// GLM-5V's optional keys: with a null `swiglu_limit` in the tower's config and without a
/// token budget in the preprocessor config, the clamp and the pixel bounds are not written
/// (the spatial merge size still is); a tower config without `swiglu_limit` has the class's
/// default (10), as transformers builds it; a budget that is not a whole number is refused,
/// naming it.
#[test]
fn glm5v_optional_keys_and_bad_budget() {
    use ggufkit::gguf::keys::clip::vision;
    use ggufkit::gguf::Value;
    let work = scratch("mmproj-glm5v-edges");
    let dir = support::materialize_fixture("glm5next", &work);
    edit_config(&dir, |c| {
        c["vision_config"]
            .as_object_mut()
            .unwrap()
            .remove("swiglu_limit");
    });
    let conv = read_mmproj_dir(&dir, &opts(OutType::F32)).unwrap();
    assert_eq!(
        conv.model.metadata.get(vision::SWIGLU_CLAMP),
        Some(&Value::F32(10.0))
    );
    edit_config(&dir, |c| c["vision_config"]["swiglu_limit"] = Json::Null);
    let pre = dir.join("preprocessor_config.json");
    let mut p: Json = serde_json::from_str(&std::fs::read_to_string(&pre).unwrap()).unwrap();
    for k in ["min_image_tokens", "max_image_tokens"] {
        p.as_object_mut().unwrap().remove(k);
    }
    std::fs::write(&pre, p.to_string()).unwrap();
    let conv = read_mmproj_dir(&dir, &opts(OutType::F32)).unwrap();
    let md = &conv.model.metadata;
    assert!(md.get(vision::SWIGLU_CLAMP).is_none());
    assert!(md.get(vision::IMAGE_MIN_PIXELS).is_none());
    assert!(md.get(vision::IMAGE_MAX_PIXELS).is_none());
    assert!(md.get(vision::SPATIAL_MERGE_SIZE).is_some());
    p["max_image_tokens"] = Json::from("many");
    std::fs::write(&pre, p.to_string()).unwrap();
    let e = refusal(&dir).to_string();
    assert!(e.contains("max_image_tokens"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// GLM-4.1V's M-RoPE regrouping needs the q/k rows to be whole heads of the configured
/// count: a config whose kv head count the `k_proj` rows do not have is refused with the
/// tensor named, not converted with misplaced rows.
#[test]
fn glm4v_mrope_regrouping_checks_the_heads() {
    let work = scratch("mmproj-glm4v-mrope-heads");
    let dir = support::materialize_fixture("glm4v", &work);
    edit_config(&dir, |c| {
        c["text_config"]["num_key_value_heads"] = Json::from(2);
    });
    let e = match read_hf_dir(&dir, &opts(OutType::F32)) {
        Ok(_) => panic!("converted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("k_proj") && e.contains("M-RoPE"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// Qwen3-ASR's vocabulary step reads tokenizer_config.json whatever the tokenizer: without
/// it the text model is refused with the file named (the reference fails opening it); with
/// no `<|im_end|>` among its added tokens, BOS and EOS stay as the special-token files set
/// them while the ChatML template is still written.
#[test]
fn qwen3asr_reads_tokenizer_config() {
    use ggufkit::gguf::keys::tokenizer as tk;
    use ggufkit::gguf::Value;
    let work = scratch("mmproj-qwen3asr-tc");
    let dir = support::materialize_fixture("qwen3asr", &work);
    let tc = dir.join("tokenizer_config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&tc).unwrap()).unwrap();
    let conv = read_hf_dir(&dir, &opts(OutType::F32)).unwrap();
    assert_eq!(
        conv.model.metadata.get(tk::EOS_ID),
        Some(&Value::U32(999)),
        "<|im_end|> is the EOS token"
    );
    cfg["added_tokens_decoder"]
        .as_object_mut()
        .unwrap()
        .remove("999");
    std::fs::write(&tc, cfg.to_string()).unwrap();
    let conv = read_hf_dir(&dir, &opts(OutType::F32)).unwrap();
    let md = &conv.model.metadata;
    assert_ne!(md.get(tk::EOS_ID), Some(&Value::U32(999)));
    assert!(md.get(tk::CHAT_TEMPLATE).is_some());
    std::fs::remove_file(&tc).unwrap();
    let e = match read_hf_dir(&dir, &opts(OutType::F32)) {
        Ok(_) => panic!("converted without tokenizer_config.json"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("tokenizer_config.json"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// `config` with a composite-variant patch applied: `remove` and `set` name dotted
/// `sub_config.key` paths.
fn patched(config: &Json, patch: &Json) -> Json {
    let mut cfg = config.clone();
    let split = |k: &str| {
        k.split_once('.')
            .map(|(a, b)| (a.to_string(), b.to_string()))
    };
    // A key without a dot is a top-level key.
    for k in patch["remove"].as_array().expect("remove") {
        let k = k.as_str().unwrap();
        let Some((outer, inner)) = split(k) else {
            cfg.as_object_mut().expect("config").remove(k);
            continue;
        };
        cfg[&outer]
            .as_object_mut()
            .expect("sub-config")
            .remove(&inner);
    }
    for (k, v) in patch["set"].as_object().expect("set") {
        match split(k) {
            Some((outer, inner)) => cfg[&outer][&inner] = v.clone(),
            None => cfg[k] = v.clone(),
        }
    }
    cfg
}

/// Applies a composite-variant patch's `files` (file name relative to `dir` → a patch of
/// that JSON file, as [`patched`] applies one) and returns each file's path and former text.
fn patch_other_files(dir: &Path, patch: &Json) -> Vec<(std::path::PathBuf, String)> {
    let Some(files) = patch.get("files").and_then(Json::as_object) else {
        return Vec::new();
    };
    files
        .iter()
        .map(|(name, fpatch)| {
            let path = dir.join(name);
            let text = std::fs::read_to_string(&path).unwrap();
            let json: Json = serde_json::from_str(&text).expect("a JSON file");
            std::fs::write(&path, patched(&json, fpatch).to_string()).unwrap();
            (path, text)
        })
        .collect()
}

/// Converts `dir` (text half or `--mmproj`, f32) and compares with the reference's record
/// `want` (`ok` and `sha256`, or its refusal); a difference goes to `problems`.
fn compare_f32(dir: &Path, mmproj: bool, want: &Json, what: &str, problems: &mut Vec<String>) {
    compare_f32_with(dir, mmproj, &opts(OutType::F32), want, what, problems);
}

/// [`compare_f32`] with the given options.
fn compare_f32_with(
    dir: &Path,
    mmproj: bool,
    o: &HfOptions,
    want: &Json,
    what: &str,
    problems: &mut Vec<String>,
) {
    let conv = if mmproj {
        read_mmproj_dir(dir, o)
    } else {
        read_hf_dir(dir, o)
    };
    let out = dir.with_extension("out.gguf");
    match (want["ok"] == Json::Bool(true), conv) {
        (true, Ok(c)) => match write(c, None, &out) {
            Ok(m) if m["sha256"] == want["sha256"] => {}
            Ok(_) => problems.push(format!("{what}: other bytes")),
            Err(e) => problems.push(format!("{what}: writing failed: {e}")),
        },
        (true, Err(e)) => problems.push(format!("{what}: we refused: {e}")),
        (false, Ok(_)) => problems.push(format!(
            "{what}: the reference refused ({}), we converted",
            want["error"]
        )),
        (false, Err(_)) => {}
    }
}

/// The outputs of fixture `fixture`'s variants worth comparing: the text half only where the
/// fixture's own golden has one (the reference environment converted no text half of some:
/// their tokenizer needs what its venv lacks), the projector only where it has one.
fn outputs_of(fixture: &str) -> Vec<(&'static str, bool)> {
    let status = read_json(&testdata(&format!("golden/{fixture}/status.json")));
    [
        ("text-f32", false, "convert-f32"),
        ("mmproj-f32", true, "mmproj-f32"),
    ]
    .into_iter()
    .filter(|(_, _, base)| status.get(*base).is_some())
    .map(|(key, mmproj, _)| (key, mmproj))
    .collect()
}

/// Composite-config variants (`conformance/make_composite_variants.py`): every vision- or
/// audio-language fixture with `text_config.architectures` removed (where present) or set to
/// the top-level class, `vision_config.architectures` set to the top-level class,
/// `audio_config.architectures` set to an unregistered class (which the reference ignores),
/// and each sub-config removed in turn. The text half (where the fixture's own golden has one)
/// and the `--mmproj` file are the reference's bytes, or refused where it refused.
///
/// A config without a sub-config is read as transformers builds it, with the class's default
/// sub-config (a full-size tower or text model). A projector reads only the tower's sizes and
/// the text width from it, and converts. A text half whose default sizes and vocabulary
/// contradict the checkpoint's tensors is a file llama.cpp cannot load: the reference writes
/// it, ggufkit refuses it by default ([`ConvertError::HparamsContradictTensors`]) and writes
/// the reference's bytes with `allow_unloadable`, as the architecture variants do.
#[test]
fn composite_config_variants() {
    let rec = read_json(&testdata("golden/composite-variants.json"));
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut unloadable = Vec::new();
    let allow = HfOptions {
        allow_unloadable: true,
        ..opts(OutType::F32)
    };
    for (fixture, variants) in rec.as_object().expect("fixtures") {
        let outputs = outputs_of(fixture);
        let work = scratch(&format!("composite-{fixture}"));
        let dir = support::materialize_fixture(fixture, &work);
        let cfg_path = dir.join("config.json");
        let base: Json = serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap())
            .expect("config.json");
        for (name, v) in variants.as_object().expect("variants") {
            std::fs::write(&cfg_path, patched(&base, &v["patch"]).to_string()).unwrap();
            // other JSON files of the fixture the patch changes (`files`), restored below
            let others = patch_other_files(&dir, &v["patch"]);
            for &(key, mmproj) in &outputs {
                checked += 1;
                let what = format!("{fixture} {name} {key}");
                let contradicts = !mmproj
                    && v[key]["ok"] == Json::Bool(true)
                    && matches!(
                        read_hf_dir(&dir, &opts(OutType::F32)),
                        Err(ConvertError::HparamsContradictTensors { .. })
                    );
                if contradicts {
                    unloadable.push(what.clone());
                }
                let o = if contradicts {
                    &allow
                } else {
                    &opts(OutType::F32)
                };
                compare_f32_with(&dir, mmproj, o, &v[key], &what, &mut problems);
            }
            for (path, text) in others {
                std::fs::write(path, text).unwrap();
            }
        }
        let _ = std::fs::remove_dir_all(&work);
    }
    assert!(checked >= 60, "only {checked} outputs compared");
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
    // Only text halves of a config without its text_config are unloadable.
    let stray: Vec<&String> = unloadable
        .iter()
        .filter(|w| !w.contains(" text-config-absent text-"))
        .collect();
    assert!(stray.is_empty(), "unloadable outputs: {stray:?}");
}

/// Second-seed projector fixtures (`conformance/make_projector_seed_fixtures.py`): every
/// transformers-built vision- or audio-language fixture again with seed 29 and FFN widths
/// off the multiples of 8 in each sub-config; the text half and `--mmproj` (f32) are the
/// reference's bytes, or refused where it refused.
#[test]
fn projector_seed_fixtures() {
    let rec = read_json(&testdata("golden/projector-seeds.json"));
    let mut problems = Vec::new();
    let mut checked = 0;
    for (fixture, want) in rec.as_object().expect("fixtures") {
        let base = fixture.strip_suffix("-s2").expect("an -s2 fixture");
        let work = scratch(&format!("projector-seed-{fixture}"));
        let dir = support::materialize_fixture(fixture, &work);
        for (key, mmproj) in outputs_of(base) {
            checked += 1;
            compare_f32(
                &dir,
                mmproj,
                &want[key],
                &format!("{fixture} {key}"),
                &mut problems,
            );
        }
        let _ = std::fs::remove_dir_all(&work);
    }
    assert!(checked >= 30, "only {checked} outputs compared");
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Configs the reference refuses for the MoonViT, Llama 4 and LFM2-VL projectors are refused
/// with the variant of their cause: Kimi-K2.5's q/k regrouping with heads whose size is not a
/// multiple of 4 (the fused tensor named), Llama 4's tower with another activation than GELU
/// (the class named), LFM2-VL's `vision_feature_layer` before the first block (the key named).
#[test]
fn new_vision_families_refuse_what_the_reference_refuses() {
    let work = scratch("mmproj-refusals-vision");
    let dir = support::materialize_fixture("kimik25-vl", &work);
    edit_config(&dir, |c| {
        c["vision_config"]["num_attention_heads"] = Json::from(16)
    });
    match refusal(&dir) {
        ConvertError::Tensor { name, .. } => assert!(name.contains("wqkv"), "{name}"),
        e => panic!("{e}"),
    }
    let dir = support::materialize_fixture("llama4-vision", &work);
    edit_config(&dir, |c| {
        c["vision_config"]["hidden_act"] = Json::from("silu")
    });
    match refusal(&dir) {
        ConvertError::UnsupportedFeature { arch, feature } => {
            assert!(arch.contains("Llama4ForConditionalGeneration"), "{arch}");
            assert!(feature.contains("silu"), "{feature}");
        }
        e => panic!("{e}"),
    }
    let dir = support::materialize_fixture("lfm2vl", &work);
    edit_config(&dir, |c| c["vision_feature_layer"] = Json::from(-10));
    match refusal(&dir) {
        ConvertError::BadHparam { keys, found, .. } => {
            assert_eq!(keys, vec!["vision_feature_layer".to_string()]);
            assert_eq!(found, "-10");
        }
        e => panic!("{e}"),
    }
    let _ = std::fs::remove_dir_all(&work);
}
