//! Bad inputs give clear errors that name the file or tensor at fault, never panics; HF
//! cache snapshot directories (symlinked files) convert like plain directories.

use ggufkit_testsupport::golden as support;

use std::path::Path;

use ggufkit::ir::TensorData;
use ggufkit_converters::hf::{
    architecture_rows, read_hf_dir, supported_architectures, HfOptions, OutType,
};
use ggufkit_converters::{ConvertError, ShardProblem};
use support::{f32s, model_dir, safetensors, scratch, testdata};

const LLAMA_CONFIG: &str = r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
  "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 8,
  "rms_norm_eps": 1e-5}"#;

fn err(dir: &Path) -> ConvertError {
    match read_hf_dir(
        dir,
        &HfOptions {
            allow_missing_vocab: true,
            ..HfOptions::default()
        },
    ) {
        Ok(_) => panic!("{}: conversion unexpectedly succeeded", dir.display()),
        Err(e) => e,
    }
}

#[test]
fn unknown_architecture_suggests_the_nearest_supported_ones() {
    let d = model_dir(
        "unknown-arch",
        r#"{"architectures": ["Qwen3MoeForCausalLMv2"], "model_type": "fancy"}"#,
        &[],
    );
    let msg = err(&d).to_string();
    assert!(msg.contains("Qwen3MoeForCausalLMv2"), "{msg}");
    assert!(
        msg.contains("nearest supported: Qwen3MoeForCausalLM"),
        "{msg}"
    );
    assert!(msg.contains("--list-architectures"), "{msg}");
    assert!(supported_architectures().contains(&"Qwen3MoeForCausalLM"));
}

/// The first families' classes, with the GGUF architecture the reference's converter registers
/// it under (`conversion/*.py` at 0c1e570; NomicBertModel picks `nomic-bert` at run time),
/// is in the `--list-architectures` table.
#[test]
fn issue_13_classes_are_listed_with_their_gguf_architecture() {
    let table: Vec<(&str, &str)> = architecture_rows()
        .into_iter()
        .filter_map(|r| Some((r.hf, r.gguf?)))
        .collect();
    for (hf, gguf) in [
        ("Olmo2ForCausalLM", "olmo2"),
        ("OlmoForCausalLM", "olmo"),
        ("SmolLM3ForCausalLM", "smollm3"),
        ("GraniteForCausalLM", "granite"),
        ("CohereForCausalLM", "command-r"),
        ("Cohere2ForCausalLM", "cohere2"),
        ("StableLmForCausalLM", "stablelm"),
        ("Starcoder2ForCausalLM", "starcoder2"),
        ("GPTBigCodeForCausalLM", "starcoder"),
        ("PhiForCausalLM", "phi2"),
        ("Exaone4ForCausalLM", "exaone4"),
        ("Glm4ForCausalLM", "glm4"),
        ("GPTNeoXForCausalLM", "gptneox"),
        ("FalconForCausalLM", "falcon"),
        ("SeedOssForCausalLM", "seed_oss"),
        ("ArceeForCausalLM", "arcee"),
        ("ApertusForCausalLM", "apertus"),
        ("Ernie4_5ForCausalLM", "ernie4_5"),
        ("InternLM3ForCausalLM", "llama"),
        ("Gemma3TextModel", "gemma-embedding"),
        ("Mistral3ForConditionalGeneration", "mistral3"),
        ("Ministral3ForCausalLM", "mistral3"),
        ("OlmoeForCausalLM", "olmoe"),
        ("GraniteMoeForCausalLM", "granitemoe"),
        ("PhiMoEForCausalLM", "phimoe"),
        ("Ernie4_5_MoeForCausalLM", "ernie4_5-moe"),
        ("Llama4ForCausalLM", "llama4"),
        ("Llama4ForConditionalGeneration", "llama4"),
        ("Qwen2MoeForCausalLM", "qwen2moe"),
        ("XLMRobertaModel", "bert"),
        ("XLMRobertaForSequenceClassification", "bert"),
        ("ModernBertModel", "modern-bert"),
        ("NomicBertModel", "nomic-bert"),
    ] {
        assert!(
            table.contains(&(hf, gguf)),
            "{hf} -> {gguf} not in the table: {:?}",
            table.iter().filter(|(h, _)| *h == hf).collect::<Vec<_>>()
        );
    }
    // A misspelling of each gets its own class among the suggestions.
    for (typo, want) in [
        ("Olmo2ForCausalLm", "Olmo2ForCausalLM"),
        ("GPTNeoXForCausalLMM", "GPTNeoXForCausalLM"),
        ("Gemma3TextModels", "Gemma3TextModel"),
        ("ModernBERTModel", "ModernBertModel"),
    ] {
        let near = ggufkit_converters::hf::nearest_architectures(typo);
        assert!(near.contains(&want), "{typo}: {near:?}");
    }
}

#[test]
fn missing_config_json() {
    let d = scratch("no-config");
    let msg = err(&d).to_string();
    assert!(msg.contains("config.json"), "{msg}");
}

#[test]
fn index_naming_a_missing_shard() {
    let shard = safetensors(&[("model.norm.weight", "F32", &[32], f32s(&[1.0; 32]))]);
    let index = r#"{"weight_map": {"model.norm.weight": "model-00001-of-00002.safetensors",
        "lm_head.weight": "model-00002-of-00002.safetensors"}}"#;
    let d = model_dir(
        "missing-shard",
        LLAMA_CONFIG,
        &[
            ("model-00001-of-00002.safetensors", shard),
            ("model.safetensors.index.json", index.as_bytes().to_vec()),
        ],
    );
    match err(&d) {
        ConvertError::Shards {
            path,
            problem: ShardProblem::NotAFile { index, found: None },
        } => {
            assert_eq!(path, d.join("model-00002-of-00002.safetensors"));
            assert_eq!(index.as_deref(), Some("model.safetensors.index.json"));
        }
        e => panic!("not a missing shard: {e:?}"),
    }
}

#[test]
fn index_and_shards_disagree() {
    let shard = safetensors(&[
        ("model.norm.weight", "F32", &[32], f32s(&[1.0; 32])),
        ("extra.weight", "F32", &[1], f32s(&[1.0])),
    ]);
    let index = r#"{"weight_map": {"model.norm.weight": "model.safetensors"}}"#;
    let d = model_dir(
        "index-mismatch",
        LLAMA_CONFIG,
        &[
            ("model.safetensors", shard),
            ("model.safetensors.index.json", index.as_bytes().to_vec()),
        ],
    );
    match err(&d) {
        ConvertError::Shards {
            path,
            problem: ShardProblem::NotInWeightMap { extra, missing },
        } => {
            assert_eq!(path, d.join("model.safetensors.index.json"));
            assert!(extra.contains("extra.weight"), "{extra}");
            assert_eq!(missing, None);
        }
        e => panic!("not a weight map mismatch: {e:?}"),
    }
}

#[test]
fn truncated_safetensors_header() {
    let mut bytes = safetensors(&[("model.norm.weight", "F32", &[32], f32s(&[1.0; 32]))]);
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    bytes.truncate(8 + header_len / 2);
    let d = model_dir(
        "truncated-header",
        LLAMA_CONFIG,
        &[("model.safetensors", bytes)],
    );
    let msg = err(&d).to_string();
    assert!(
        msg.contains("model.safetensors") && msg.contains("truncated"),
        "{msg}"
    );

    let d = model_dir(
        "tiny-file",
        LLAMA_CONFIG,
        &[("model.safetensors", vec![1, 2, 3])],
    );
    let msg = err(&d).to_string();
    assert!(
        msg.contains("model.safetensors") && msg.contains("too short"),
        "{msg}"
    );

    let mut huge = u64::MAX.to_le_bytes().to_vec();
    huge.extend_from_slice(b"{}");
    let d = model_dir("huge-header", LLAMA_CONFIG, &[("model.safetensors", huge)]);
    let msg = err(&d).to_string();
    assert!(msg.contains("header length"), "{msg}");
}

#[test]
fn tensor_range_beyond_the_file() {
    let mut bytes = safetensors(&[
        (
            "model.embed_tokens.weight",
            "F32",
            &[8, 32],
            f32s(&[0.5; 256]),
        ),
        ("model.norm.weight", "F32", &[32], f32s(&[1.0; 32])),
    ]);
    bytes.truncate(bytes.len() - 16);
    let d = model_dir("short-data", LLAMA_CONFIG, &[("model.safetensors", bytes)]);
    let msg = err(&d).to_string();
    assert!(
        msg.contains("model.safetensors") && msg.contains("model.norm.weight"),
        "{msg}"
    );
    assert!(msg.contains("exceeds"), "{msg}");
}

#[test]
fn inconsistent_shape_and_offsets() {
    let mut bytes = safetensors(&[("model.norm.weight", "F32", &[32], f32s(&[1.0; 32]))]);
    // Claim 33 elements for 32 elements' bytes.
    let text = String::from_utf8_lossy(&bytes).replace("[32]", "[33]");
    bytes = text.into_bytes();
    let d = model_dir("bad-shape", LLAMA_CONFIG, &[("model.safetensors", bytes)]);
    let msg = err(&d).to_string();
    assert!(
        msg.contains("model.norm.weight") && msg.contains("needs"),
        "{msg}"
    );
}

#[test]
fn unmappable_tensor_is_named() {
    let bytes = safetensors(&[("model.mystery.weight", "F32", &[2, 2], f32s(&[0.0; 4]))]);
    let d = model_dir("unmappable", LLAMA_CONFIG, &[("model.safetensors", bytes)]);
    let msg = err(&d).to_string();
    assert!(msg.contains("model.mystery.weight"), "{msg}");
}

#[test]
fn hf_cache_snapshot_with_symlinks() {
    let src = testdata("hf/qwen2");
    let cache = scratch("hf-cache");
    let root = cache.join("models--org--qwen2");
    let blobs = root.join("blobs");
    let snap = root.join("snapshots").join("0123abcd");
    std::fs::create_dir_all(&blobs).unwrap();
    std::fs::create_dir_all(&snap).unwrap();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let blob = blobs.join(format!("blob-{}", e.file_name().to_string_lossy()));
        std::fs::copy(e.path(), &blob).unwrap();
        std::os::unix::fs::symlink(&blob, snap.join(e.file_name())).unwrap();
    }
    let opts = HfOptions {
        outtype: OutType::Bf16,
        allow_missing_vocab: true,
        ..HfOptions::default()
    };
    let direct = read_hf_dir(&src, &opts).unwrap();
    let cached = read_hf_dir(&snap, &opts).unwrap();
    assert_eq!(direct.model.tensors.len(), cached.model.tensors.len());
    for (a, b) in direct.model.tensors.iter().zip(&cached.model.tensors) {
        assert_eq!((&a.name, &a.dims, a.ty), (&b.name, &b.dims, b.ty));
        assert_eq!(
            a.data.bytes().unwrap(),
            b.data.bytes().unwrap(),
            "{}",
            a.name
        );
    }
}

#[test]
fn unconverted_tensors_are_mapped_not_copied() {
    let opts = HfOptions {
        outtype: OutType::Bf16,
        allow_missing_vocab: true,
        ..HfOptions::default()
    };
    let conv = read_hf_dir(&testdata("hf/qwen2"), &opts).unwrap();
    let t = conv
        .model
        .tensors
        .iter()
        .find(|t| t.name == "blk.0.attn_q.weight")
        .unwrap();
    assert!(matches!(t.data, TensorData::Mapped { .. }), "{:?}", t.data);
    let norm = conv
        .model
        .tensors
        .iter()
        .find(|t| t.name == "blk.0.attn_norm.weight")
        .unwrap();
    assert!(matches!(norm.data, TensorData::Derived(_)));
    assert_eq!(conv.sources.len(), conv.model.tensors.len());
    assert_eq!(conv.default_file_name, "Qwen2-140K-BF16.gguf");
}

const GEMMA3N_CONFIG: &str = r#"{"architectures": ["Gemma3nForCausalLM"],
  "model_type": "gemma3n_text", "hidden_size": 4, "intermediate_size": 8,
  "num_hidden_layers": 1, "num_attention_heads": 1, "num_key_value_heads": 1, "head_dim": 4,
  "vocab_size": 8, "num_kv_shared_layers": 0, "layer_types": ["full_attention"],
  "hidden_size_per_layer_input": 2}"#;

/// Gemma 3n stacks `altup_projections.{0,1,2}`: another member is refused naming it (the
/// reference raises "Unknown name"), and so is any AltUp input count but 4 (its assert).
#[test]
fn gemma3n_refuses_unknown_altup_members_and_other_input_counts() {
    let w = f32s(&[0.0; 16]);
    let member = |i: u32| format!("model.altup_projections.{i}.weight");
    let (m0, m3) = (member(0), member(3));
    let st = safetensors(&[
        (m0.as_str(), "F32", &[4, 4], w.clone()),
        (m3.as_str(), "F32", &[4, 4], w.clone()),
    ]);
    let d = model_dir(
        "gemma3n-altup-member",
        GEMMA3N_CONFIG,
        &[("model.safetensors", st)],
    );
    let msg = err(&d).to_string();
    assert!(msg.contains(&m3), "{msg}");

    let st = safetensors(&[(m0.as_str(), "F32", &[4, 4], w)]);
    let cfg = GEMMA3N_CONFIG.replace(
        r#""vocab_size": 8"#,
        r#""vocab_size": 8, "altup_num_inputs": 3"#,
    );
    let d = model_dir("gemma3n-altup-inputs", &cfg, &[("model.safetensors", st)]);
    let msg = err(&d).to_string();
    assert!(msg.contains("altup_num_inputs"), "{msg}");
}

/// A scratch copy of a committed fixture, to be edited.
fn fixture_copy(name: &str) -> std::path::PathBuf {
    let dir = scratch(&format!("{name}-edited")).join(name);
    ggufkit_testsupport::copy_tree(&ggufkit_testsupport::fixture(name), &dir);
    dir
}

/// Grok without tokenizer.model takes GPT-2 BPE only with chat_template.jinja beside
/// tokenizer.json (the reference exits otherwise): the missing file is named.
#[test]
fn grok_without_sentencepiece_needs_the_chat_template() {
    let d = fixture_copy("grok");
    std::fs::remove_file(d.join("tokenizer.model")).unwrap();
    match read_hf_dir(&d, &HfOptions::default()) {
        Err(ConvertError::MissingFile { path, why }) => {
            assert!(path.ends_with("chat_template.jinja"), "{}", path.display());
            assert!(why.contains("tokenizer.json"), "{why}");
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("converted without chat_template.jinja"),
    }
}

/// Arctic's table is `vocab_size` long and holds every piece of tokenizer.model: a smaller
/// `vocab_size` is refused, naming config.json and the key (the reference fails indexing).
#[test]
fn arctic_vocab_size_below_the_pieces_is_refused() {
    let d = fixture_copy("arctic");
    let path = d.join("config.json");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    cfg["vocab_size"] = serde_json::json!(999);
    std::fs::write(&path, cfg.to_string()).unwrap();
    match read_hf_dir(&d, &HfOptions::default()) {
        Err(ConvertError::OutOfRange { path, key, .. }) => {
            assert!(path.ends_with("config.json"), "{}", path.display());
            assert_eq!(key, "vocab_size");
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("converted a table shorter than the model's pieces"),
    }
}
