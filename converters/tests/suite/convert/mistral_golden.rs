//! Mistral's native format (`--mistral-format`) converts to the reference's bytes.
//!
//! `testdata/hf/mistral-tekken` (one `consolidated.safetensors`, a small `tekken.json`, vision
//! tensors the text conversion drops) and `testdata/hf/mistral-spm` (two
//! `consolidated-0000N-of-00002.safetensors` shards, `tokenizer.model.v3`, `yarn` and
//! `llama_4_scaling` in params.json, so architecture `mistral3`; `mistral-spm-fp8` is the same
//! model with FP8 projections and Mistral's `qscale_weight` scales; `mistral-moe` Mistral's
//! MoE layout, `mistral-moe-fp8` the same with FP8 projections, which the reference refuses)
//! are made by
//! `conformance/make_mistral_fixtures.py`, which also ran the pinned
//! `convert_hf_to_gguf.py --mistral-format` on them and on modified copies (the
//! modifications are made again here) and wrote `testdata/golden/mistral/cases.json`; the
//! cases marked `hf` are an HF directory (`llama-spm`) whose tokenizer is a `tekken.json`,
//! converted without `--mistral-format`.

use std::path::{Path, PathBuf};

use ggufkit::pipeline::{self, ExecuteOptions, OutputPlan, ShardPlan, WriteOptions};
use ggufkit_converters::hf::mistral::MistralFormat;
use ggufkit_converters::hf::{read_hf_dir, HfConversion, HfOptions, OutType};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::golden::{read_json, sha256_file};
use ggufkit_testsupport::{copy_tree, fixture, record, scratch, testdata};

/// Every fixture the generator writes (each must have golden cases here).
const FIXTURES: &[&str] = &[
    "mistral-tekken",
    "mistral-spm",
    "mistral-spm-fp8",
    "mistral-moe",
    "mistral-moe-fp8",
];

/// Cases the reference converts and we refuse on purpose, with what our error says: the
/// reference writes a community template file of llama.cpp's for these tokenizer versions,
/// which ggufkit does not carry.
const REFUSED_ON_PURPOSE: &[(&str, &str)] = &[
    ("mistral-tekken-f32-tekken-v11", "chat_template.jinja"),
    ("mistral-tekken-f32-tekken-v13", "chat_template.jinja"),
];

fn options(outtype: &str, flags: &[&str]) -> HfOptions {
    for f in flags {
        assert!(
            [
                "--disable-mistral-community-chat-template",
                "--vocab-only",
                "--fp8-as-q8"
            ]
            .contains(f),
            "unknown flag {f}"
        );
    }
    HfOptions {
        outtype: OutType::parse(outtype).unwrap(),
        vocab_only: flags.contains(&"--vocab-only"),
        fp8_as_q8: flags.contains(&"--fp8-as-q8"),
        mistral_format: Some(MistralFormat {
            disable_community_chat_template: flags
                .contains(&"--disable-mistral-community-chat-template"),
        }),
        ..HfOptions::default()
    }
}

/// `from` copied into `<scratch>/<name>` (the default `general.name` is the directory's).
fn copy_named(from: &Path, scratch: &Path, name: &str) -> PathBuf {
    let dst = scratch.join(name);
    let _ = std::fs::remove_dir_all(&dst);
    copy_tree(from, &dst);
    dst
}

/// Sets `config.version` of the directory's tekken.json.
fn tekken_version(dir: &Path, v: &str) {
    let path = dir.join("tekken.json");
    let mut j = read_json(&path);
    j["config"]["version"] = v.into();
    std::fs::write(&path, serde_json::to_vec(&j).unwrap()).unwrap();
}

/// The generator's modifications (`MODIFY` in make_mistral_fixtures.py).
fn modify(dir: &Path, what: &str) {
    match what {
        "local-template" => std::fs::write(
            dir.join("chat_template.jinja"),
            "{{ bos_token }}{% for m in messages %}[INST]{{ m['content'] }}[/INST]{% endfor %}\n",
        )
        .unwrap(),
        "spm-v1" => {
            std::fs::rename(dir.join("tokenizer.model.v3"), dir.join("tokenizer.model")).unwrap()
        }
        "both-tokenizers" => {
            std::fs::copy(
                testdata("tokenizers/spm/tokenizer.model"),
                dir.join("tokenizer.model.v3"),
            )
            .unwrap();
        }
        "tekken-v3" | "tekken-v11" | "tekken-v13" | "tekken-v15" => {
            tekken_version(dir, &what["tekken-".len()..])
        }
        "no-params" => std::fs::remove_file(dir.join("params.json")).unwrap(),
        "no-tokenizer" => std::fs::remove_file(dir.join("tekken.json")).unwrap(),
        "no-config" => std::fs::remove_file(dir.join("config.json")).unwrap(),
        other => panic!("unknown modification {other}"),
    }
}

/// An HF fixture whose tokenizer.json is replaced by mistral-tekken's tekken.json (the
/// generator's `hf_tekken`): `LlamaModel.set_vocab` reads it as Mistral's vocabulary.
fn hf_tekken(work: &Path, fx: &str) -> PathBuf {
    let dir = copy_named(&fixture(fx), &work.join("hf"), fx);
    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    std::fs::copy(
        fixture("mistral-tekken").join("tekken.json"),
        dir.join("tekken.json"),
    )
    .unwrap();
    dir
}

/// A fixture copy with a modification applied.
fn modified(work: &Path, fx: &str, what: &str) -> PathBuf {
    let dir = copy_named(&fixture(fx), &work.join("modified"), fx);
    modify(&dir, what);
    dir
}

/// Writes a conversion as gguf-convert does (a vocabulary-only file is the header alone).
fn write(conv: HfConversion, out: &Path, vocab_only: bool) {
    let plan = OutputPlan {
        shards: vec![ShardPlan {
            path: out.to_path_buf(),
            model: conv.model,
        }],
        options: WriteOptions {
            vocab_only,
            ..WriteOptions::default()
        },
    };
    let (results, _) = pipeline::execute(&[plan], &ExecuteOptions::default(), &());
    for r in results {
        r.unwrap();
    }
}

#[test]
fn mistral_native_models_equal_the_reference() {
    let cases = read_json(&testdata("golden/mistral/cases.json"));
    let cases = cases.as_object().expect("cases.json is an object");
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let work = scratch("mistral-golden");
    let (mut same, mut refused) = (0, 0);
    // Checked as our deliberate refusals (REFUSED_ON_PURPOSE), not as the reference's bytes.
    let mut deliberate = 0;
    let mut seen_fixtures = Vec::new();
    for (name, case) in cases {
        let field = |k: &str| case[k].as_str().unwrap_or_else(|| panic!("{name}: no {k}"));
        let (fx, outtype) = (field("fixture"), field("outtype"));
        let flags: Vec<&str> = case["flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        let hf = case["hf"] == true;
        let dir = match case.get("modify").and_then(|m| m.as_str()) {
            Some(what) => modified(&work, fx, what),
            None if hf => hf_tekken(&work, fx),
            None => fixture(fx),
        };
        let mut opts = options(outtype, &flags);
        if hf {
            opts.mistral_format = None;
        } else {
            seen_fixtures.push(fx.to_string());
        }
        let result = read_hf_dir(&dir, &opts);
        if let Some((_, says)) = REFUSED_ON_PURPOSE.iter().find(|(n, _)| n == name) {
            let e = match result {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{name}: expected our refusal"),
            };
            assert!(e.contains(says), "{name}: {e}");
            deliberate += 1;
            continue;
        }
        if case["ok"] == false {
            assert!(
                result.is_err(),
                "{name}: the reference refuses it ({}), we converted it",
                case["error_tail"]
            );
            refused += 1;
            continue;
        }
        let conv = result.unwrap_or_else(|e| panic!("{name}: conversion failed: {e}"));
        let out = work.join("out.gguf");
        write(conv, &out, flags.contains(&"--vocab-only"));
        assert_eq!(
            sha256_file(&out),
            field("sha256"),
            "{name}: differs from the reference"
        );
        std::fs::remove_file(&out).unwrap();
        same += 1;
    }
    for fx in FIXTURES {
        assert!(seen_fixtures.iter().any(|s| s == fx), "{fx} has no case");
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(same >= 15 && refused >= 3, "{same} same, {refused} refused");
    record(
        "mistral_golden",
        same + refused,
        &format!(
            "Mistral native-format conversions matched (sha256) or refused as by the reference; \
             {deliberate} refused on purpose (the reference writes llama.cpp's own community \
             template file there)"
        ),
        &[],
    );
}

/// Every fixture directory the generator writes is checked here.
#[test]
fn every_mistral_fixture_has_a_test() {
    let mut found: Vec<String> = std::fs::read_dir(testdata("hf"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("params.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut listed: Vec<String> = FIXTURES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}

fn convert(dir: &Path, flags: &[&str]) -> Result<HfConversion, ConvertError> {
    read_hf_dir(dir, &options("f32", flags))
}

fn error(dir: &Path) -> String {
    match convert(dir, &[]) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{}: converted", dir.display()),
    }
}

/// What the two fixtures become: the architecture, the Tekken and SentencePiece keys.
#[test]
fn mistral_fixtures_have_the_expected_keys() {
    use ggufkit::gguf::Value;
    let t = convert(&fixture("mistral-tekken"), &[]).unwrap();
    let md = &t.model.metadata;
    assert_eq!(t.model.architecture(), Some("llama"));
    assert_eq!(md.get_str("tokenizer.ggml.model").unwrap(), "gpt2");
    assert_eq!(md.get_str("tokenizer.ggml.pre").unwrap(), "tekken");
    assert_eq!(
        md.get_str("tokenizer.chat_template").unwrap(),
        "mistral-v7-tekken"
    );
    assert_eq!(md.get("llama.vocab_size"), Some(&Value::U32(340)));
    assert_eq!(
        md.get("tokenizer.ggml.padding_token_id"),
        Some(&Value::U32(11))
    );
    // The vision tensors are dropped; q/k are not permuted (same bytes as the source).
    assert!(t.model.tensors.iter().all(|x| !x.name.contains("vision")));
    assert_eq!(t.model.tensors.len(), 1 + 1 + 9);

    let s = convert(&fixture("mistral-spm"), &[]).unwrap();
    let md = &s.model.metadata;
    assert_eq!(s.model.architecture(), Some("mistral3"));
    assert_eq!(md.get_str("tokenizer.ggml.model").unwrap(), "llama");
    assert_eq!(md.get_str("tokenizer.chat_template").unwrap(), "mistral-v3");
    assert_eq!(md.get_str("mistral3.rope.scaling.type").unwrap(), "yarn");
    assert_eq!(
        md.get("mistral3.attention.temperature_scale"),
        Some(&Value::F32(0.1))
    );
    // No pad piece: pad is eos.
    assert_eq!(
        md.get("tokenizer.ggml.padding_token_id"),
        Some(&Value::U32(2))
    );
}

/// Mistral's MoE layout is written as DeepSeek-V2: MLA tensors (kv_b split into k_b / v_b),
/// the experts stacked, the shared experts and router mapped, the params.json keys renamed,
/// yarn's keys with the temperature length and the 0.1 log multiplier.
#[test]
fn mistral_moe_is_deepseek2() {
    use ggufkit::gguf::Value;
    let c = convert(&fixture("mistral-moe"), &[]).unwrap();
    let md = &c.model.metadata;
    assert_eq!(c.model.architecture(), Some("deepseek2"));
    assert_eq!(md.get("deepseek2.expert_count"), Some(&Value::U32(2)));
    assert_eq!(
        md.get("deepseek2.expert_shared_count"),
        Some(&Value::U32(1))
    );
    assert_eq!(
        md.get("deepseek2.attention.head_count_kv"),
        Some(&Value::U32(1))
    );
    assert_eq!(
        md.get("deepseek2.leading_dense_block_count"),
        Some(&Value::U32(1))
    );
    assert_eq!(
        md.get("deepseek2.attention.temperature_length"),
        Some(&Value::U32(4096))
    );
    assert_eq!(
        md.get("deepseek2.rope.scaling.yarn_log_multiplier"),
        Some(&Value::F32(0.1))
    );
    let dims = |n: &str| -> Vec<u64> {
        let t = c.model.tensors.iter().find(|t| t.name == n);
        t.unwrap_or_else(|| panic!("no {n}")).dims.clone()
    };
    assert_eq!(dims("blk.1.attn_k_b.weight"), [2, 4, 2]);
    assert_eq!(dims("blk.1.attn_v_b.weight"), [4, 2, 2]);
    assert_eq!(dims("blk.1.ffn_down_exps.weight"), [4, 8, 2]);
    assert_eq!(dims("blk.1.ffn_gate_inp.weight"), [8, 2]);
    assert_eq!(dims("blk.1.ffn_up_shexp.weight"), [8, 4]);
    assert_eq!(dims("blk.0.ffn_gate.weight"), [8, 12]);
}

/// A quantized Mistral MoE (FP8 projections with `qscale_weight` / `qscale_act`, as
/// Mistral ships FP8) is refused, as by the reference (`MistralMoeModel` has no
/// `dequant_model`: its renamed `input_scale` / `weight_scale` tensors cannot be mapped;
/// cases `mistral-moe-fp8-*` in cases.json): before any tensor is read, naming params.json
/// and why.
#[test]
fn quantized_mistral_moe_is_refused_as_by_the_reference() {
    let cases = read_json(&testdata("golden/mistral/cases.json"));
    for outtype in ["f32", "f16", "bf16", "q8_0"] {
        let case = &cases[format!("mistral-moe-fp8-{outtype}")];
        assert_eq!(case["ok"], false, "{outtype}: the reference converted it");
        let tail = case["error_tail"][0].as_str().unwrap();
        assert!(tail.contains("Can not map tensor"), "{tail}");
        let e = read_hf_dir(&fixture("mistral-moe-fp8"), &options(outtype, &[]))
            .err()
            .unwrap_or_else(|| panic!("{outtype}: converted"))
            .to_string();
        assert!(e.contains("params.json"), "{e}");
        assert!(e.contains("\"quantization\""), "{e}");
        assert!(e.contains("MistralMoeModel"), "{e}");
    }
}

/// Refusals name the file at fault.
#[test]
fn mistral_refusals_name_the_file() {
    let work = scratch("mistral-refusals");
    let e = error(&modified(&work, "mistral-tekken", "no-params"));
    assert!(e.contains("params.json"), "{e}");
    let e = error(&modified(&work, "mistral-tekken", "no-tokenizer"));
    assert!(e.contains("tokenizer file"), "{e}");

    // No weights.
    let dir = copy_named(&fixture("mistral-tekken"), &work, "no-weights");
    std::fs::remove_file(dir.join("consolidated.safetensors")).unwrap();
    let e = error(&dir);
    assert!(e.contains("consolidated.safetensors"), "{e}");

    // A MoE params.json (the reference's DeepSeek-V2 path) without a config.json beside it,
    // which the reference fails on.
    let dir = copy_named(&fixture("mistral-tekken"), &work, "moe");
    let mut p = read_json(&dir.join("params.json"));
    p["moe"] = serde_json::json!({"num_experts": 4, "num_experts_per_tok": 2});
    std::fs::write(dir.join("params.json"), p.to_string()).unwrap();
    let e = error(&dir);
    assert!(e.contains("moe") && e.contains("params.json"), "{e}");

    // Without head_dim the reference fails (it looks for hidden_size).
    let dir = copy_named(&fixture("mistral-tekken"), &work, "no-head-dim");
    let mut p = read_json(&dir.join("params.json"));
    p.as_object_mut().unwrap().remove("head_dim");
    std::fs::write(dir.join("params.json"), p.to_string()).unwrap();
    let e = error(&dir);
    assert!(
        e.contains("hidden_size") && e.contains("params.json"),
        "{e}"
    );

    // Broken tekken.json files: each error names tekken.json.
    for (what, edit) in [
        ("bad base64", r#""token_bytes": "AA==""#),
        ("no pad token", r#""<pad>""#),
        ("unknown version", r#""version": "v7""#),
    ] {
        let dir = copy_named(&fixture("mistral-tekken"), &work, "bad-tekken");
        let path = dir.join("tekken.json");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(edit), "{what}");
        let broken = match what {
            "bad base64" => text.replacen(edit, r#""token_bytes": "A*==""#, 1),
            "no pad token" => text.replacen(edit, r#""<nopad>""#, 1),
            _ => text.replacen(edit, r#""version": "v9""#, 1),
        };
        std::fs::write(&path, broken).unwrap();
        let e = error(&dir);
        assert!(e.contains("tekken.json"), "{what}: {e}");
    }

    // A params.json directory converted without --mistral-format: the error says so.
    let e = match read_hf_dir(&fixture("mistral-tekken"), &HfOptions::default()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("converted without --mistral-format"),
    };
    assert!(e.contains("--mistral-format"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// `fx` copied to `<work>/<name>` with params.json's `key` set to `value`.
fn with_param(work: &Path, fx: &str, name: &str, key: &str, value: serde_json::Value) -> PathBuf {
    let dir = copy_named(&fixture(fx), work, name);
    let path = dir.join("params.json");
    let mut p = read_json(&path);
    p[key] = value;
    std::fs::write(&path, p.to_string()).unwrap();
    dir
}

/// A params.json that contradicts itself or the weights is refused before any tensor is
/// planned, naming params.json and the contradiction (the CLI side, a non-zero exit and no
/// output file, is `cli/tests/suite/convert/mistral_params_cli.rs`).
#[test]
fn contradictory_mistral_params_are_refused() {
    use serde_json::json;
    let work = scratch("mistral-bad-params");
    let cases: &[(&str, &str, serde_json::Value, &[&str])] = &[
        ("dim", "mistral-spm", json!(0), &["dim is 0"]),
        ("n_heads", "mistral-spm", json!(0), &["n_heads is 0"]),
        (
            "n_kv_heads",
            "mistral-spm",
            json!(3),
            &["n_kv_heads is 3", "n_heads is 2"],
        ),
        (
            "n_kv_heads",
            "mistral-tekken",
            json!(3),
            &["n_kv_heads is 3", "divide"],
        ),
        ("n_kv_heads", "mistral-spm", json!(0), &["n_kv_heads is 0"]),
        (
            "head_dim",
            "mistral-spm",
            json!(8),
            &["head_dim 8", "attention.wq"],
        ),
        ("head_dim", "mistral-moe", json!(0), &["head_dim is 0"]),
        (
            "hidden_dim",
            "mistral-spm",
            json!(16),
            &["hidden_dim is 16", "w1"],
        ),
        (
            "hidden_dim",
            "mistral-moe",
            json!(10),
            &["hidden_dim is 10", "w1"],
        ),
        (
            "dim",
            "mistral-tekken",
            json!(16),
            &["dim is 16", "tok_embeddings"],
        ),
        (
            "n_layers",
            "mistral-spm",
            json!(40),
            &["n_layers is 40 but the weights have 2 layers"],
        ),
        (
            "n_layers",
            "mistral-moe",
            json!(3),
            &["n_layers is 3 but the weights have 2 layers"],
        ),
        ("n_layers", "mistral-spm-fp8", json!(5), &["n_layers is 5"]),
        (
            "dim",
            "mistral-spm",
            json!(-8),
            &["dim is -8", "non-negative integer"],
        ),
    ];
    for (i, (key, fx, value, wanted)) in cases.iter().enumerate() {
        let dir = with_param(&work, fx, &format!("case{i}"), key, value.clone());
        let e = error(&dir);
        assert!(e.contains("params.json"), "{key}={value} on {fx}: {e}");
        for w in *wanted {
            assert!(e.contains(w), "{key}={value} on {fx}: {e} lacks {w:?}");
        }
    }
    // The unmodified fixtures still pass the checks.
    for fx in FIXTURES
        .iter()
        .filter(|f| !f.starts_with("mistral-moe-fp8"))
    {
        convert(&fixture(fx), &[]).unwrap_or_else(|e| panic!("{fx}: {e}"));
    }
    let _ = std::fs::remove_dir_all(&work);
}
