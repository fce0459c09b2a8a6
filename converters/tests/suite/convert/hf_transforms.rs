//! Transforms no golden fixture exercises: F16 arithmetic on F16 checkpoints, the Q8_0→F16
//! fallback, FP8 dequantization, fused MoE experts, Llama-3 rope factors.

use ggufkit_testsupport::golden as support;

use ggufkit::quantizers::{f32_to_f16, GgmlType};
use ggufkit_converters::hf::{read_hf_dir, HfConversion, HfOptions, OutType};
use support::{f32s, model_dir, safetensors};

/// Converts a model made of the few tensors a transform needs (not a model llama.cpp could
/// load: hence `allow_unloadable`).
fn convert(dir: &std::path::Path, outtype: OutType) -> HfConversion {
    let opts = HfOptions {
        outtype,
        allow_missing_vocab: true,
        allow_unloadable: true,
        ..HfOptions::default()
    };
    read_hf_dir(dir, &opts).unwrap_or_else(|e| panic!("{e}"))
}

fn tensor_bytes(c: &HfConversion, name: &str) -> (GgmlType, Vec<u64>, Vec<u8>) {
    let t = c
        .model
        .tensors
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tensor {name}"));
    (t.ty, t.dims.clone(), t.data.bytes().unwrap().into_owned())
}

fn f16s(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|x| f32_to_f16(*x).to_le_bytes())
        .collect()
}

#[test]
fn gemma_norm_shift_rounds_in_f16_for_f16_checkpoints() {
    let cfg = r#"{"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
      "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "head_dim": 16,
      "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 4}"#;
    // 1 + 2^-12 is not an f16; it rounds to 1 in f16 arithmetic, to 1.000244 in f32.
    let w = [2f32.powi(-12); 32];
    let files = [(
        "model.safetensors",
        safetensors(&[
            (
                "model.embed_tokens.weight",
                "F16",
                &[6, 32],
                f16s(&[0.25; 192]),
            ),
            ("model.norm.weight", "F16", &[32], f16s(&w)),
        ]),
    )];
    let d = model_dir("gemma-f16", cfg, &files);
    std::fs::write(d.join("tokenizer.model"), b"").unwrap();
    let c = convert(&d, OutType::F16);
    let (ty, _, b) = tensor_bytes(&c, "output_norm.weight");
    assert_eq!(ty, GgmlType::F32);
    assert_eq!(f32::from_le_bytes(b[..4].try_into().unwrap()), 1.0);
    // The embedding is cut to the vocabulary (4 of 6 rows) and kept F16.
    let (ty, dims, b) = tensor_bytes(&c, "token_embd.weight");
    assert_eq!((ty, dims), (GgmlType::F16, vec![32, 4]));
    assert_eq!(b.len(), 4 * 32 * 2);

    let files = [(
        "model.safetensors",
        safetensors(&[
            (
                "model.embed_tokens.weight",
                "F32",
                &[4, 32],
                f32s(&[0.25; 128]),
            ),
            ("model.norm.weight", "F32", &[32], f32s(&w)),
        ]),
    )];
    let d = model_dir("gemma-f32", cfg, &files);
    std::fs::write(d.join("tokenizer.model"), b"").unwrap();
    let c = convert(&d, OutType::F16);
    let (_, _, b) = tensor_bytes(&c, "output_norm.weight");
    assert_eq!(
        f32::from_le_bytes(b[..4].try_into().unwrap()),
        1.0 + 2f32.powi(-12)
    );
}

#[test]
fn q8_0_falls_back_to_f16_for_rows_off_the_block() {
    let cfg = r#"{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
      "hidden_size": 48, "intermediate_size": 64, "num_hidden_layers": 1,
      "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 4}"#;
    let files = [(
        "model.safetensors",
        safetensors(&[
            (
                "model.embed_tokens.weight",
                "F32",
                &[4, 48],
                f32s(&[0.5; 192]),
            ),
            (
                "model.layers.0.mlp.up_proj.weight",
                "F32",
                &[48, 64],
                f32s(&[0.5; 3072]),
            ),
        ]),
    )];
    let d = model_dir("q8-fallback", cfg, &files);
    let c = convert(&d, OutType::Q8_0);
    assert_eq!(tensor_bytes(&c, "token_embd.weight").0, GgmlType::F16);
    assert_eq!(tensor_bytes(&c, "blk.0.ffn_up.weight").0, GgmlType::Q8_0);
    assert_eq!(c.file_type, 7);
}

#[test]
fn fp8_weights_are_dequantized_with_their_block_scales() {
    let cfg = r#"{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
      "hidden_size": 4, "intermediate_size": 4, "num_hidden_layers": 1, "head_dim": 2,
      "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 4,
      "quantization_config": {"quant_method": "fp8", "weight_block_size": [2, 2]}}"#;
    // E4M3 0x38 = 1.0, 0x40 = 2.0.
    let w = vec![
        0x38u8, 0x40, 0x38, 0x40, 0x38, 0x38, 0x38, 0x38, 0x40, 0x40, 0x40, 0x40, 0x38, 0x38, 0x38,
        0x38,
    ];
    let files = [(
        "model.safetensors",
        safetensors(&[
            ("model.layers.0.mlp.up_proj.weight", "F8_E4M3", &[4, 4], w),
            (
                "model.layers.0.mlp.up_proj.weight_scale_inv",
                "F32",
                &[2, 2],
                f32s(&[1.0, 10.0, 100.0, 1000.0]),
            ),
        ]),
    )];
    let d = model_dir("fp8", cfg, &files);
    let c = convert(&d, OutType::F32);
    assert_eq!(c.model.tensors.len(), 1, "the scale tensor is consumed");
    let (ty, dims, b) = tensor_bytes(&c, "blk.0.ffn_up.weight");
    assert_eq!((ty, dims), (GgmlType::F32, vec![4, 4]));
    let v: Vec<f32> = b
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(
        v,
        [1., 2., 10., 20., 1., 1., 10., 10., 200., 200., 2000., 2000., 100., 100., 1000., 1000.]
    );
    // auto: the F8 weight is neither BF16 nor F16, the F32 scale is 2-D but F32 → f16.
    assert_eq!(convert(&d, OutType::Auto).outtype, OutType::F16);
}

#[test]
fn fused_moe_experts_are_split_into_gate_and_up() {
    let cfg = r#"{"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
      "hidden_size": 4, "intermediate_size": 8, "moe_intermediate_size": 2, "head_dim": 2,
      "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
      "num_local_experts": 2, "num_experts_per_tok": 1, "vocab_size": 4}"#;
    let gate_up: Vec<f32> = (0..2 * 4 * 4).map(|i| i as f32).collect();
    let files = [(
        "model.safetensors",
        safetensors(&[
            (
                "model.layers.0.mlp.experts.down_proj",
                "F32",
                &[2, 4, 2],
                f32s(&[1.0; 16]),
            ),
            (
                "model.layers.0.mlp.experts.gate_up_proj",
                "F32",
                &[2, 4, 4],
                f32s(&gate_up),
            ),
        ]),
    )];
    let d = model_dir("fused-moe", cfg, &files);
    let c = convert(&d, OutType::F32);
    let names: Vec<&str> = c.model.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "blk.0.ffn_down_exps.weight",
            "blk.0.ffn_gate_exps.weight",
            "blk.0.ffn_up_exps.weight"
        ]
    );
    let (_, dims, b) = tensor_bytes(&c, "blk.0.ffn_up_exps.weight");
    assert_eq!(dims, vec![4, 2, 2]);
    let v: Vec<f32> = b
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(
        v,
        [8., 9., 10., 11., 12., 13., 14., 15., 24., 25., 26., 27., 28., 29., 30., 31.]
    );
    // Two experts of 8+8+8 parameters and nothing shared: "2x" + pretty(24).
    assert_eq!(
        c.model.metadata.get_str("general.size_label").unwrap(),
        "2x0.02K"
    );
}

#[test]
fn llama3_rope_generates_rope_freqs_first() {
    let cfg = r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
      "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
      "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 4,
      "rope_theta": 500000.0, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0,
      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}"#;
    let files = [(
        "model.safetensors",
        safetensors(&[("model.norm.weight", "F32", &[32], f32s(&[1.0; 32]))]),
    )];
    let d = model_dir("llama3-rope", cfg, &files);
    let c = convert(&d, OutType::F16);
    assert_eq!(c.model.tensors[0].name, "rope_freqs.weight");
    let (ty, dims, b) = tensor_bytes(&c, "rope_freqs.weight");
    assert_eq!((ty, dims), (GgmlType::F32, vec![8]));
    let v: Vec<f32> = b
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(v[0], 1.0);
    assert_eq!(v[7], 8.0);
    let md = &c.model.metadata;
    assert_eq!(md.get_f32("llama.rope.freq_base").unwrap(), 500000.0);
    assert!(md.get("llama.rope.scaling.type").is_none());
    assert_eq!(md.get_u32("llama.attention.key_length").unwrap(), 16);
}

#[test]
fn model_card_front_matter_feeds_general_metadata() {
    let card = support::scratch("card");
    let d = card.join("qwen2");
    std::fs::create_dir_all(&d).unwrap();
    for e in std::fs::read_dir(support::testdata("hf/qwen2"))
        .unwrap()
        .flatten()
    {
        std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
    }
    std::fs::write(
        d.join("README.md"),
        "---\nlicense: apache-2.0\nlanguage:\n- en\nbase_model: Qwen/Qwen2.5-0.5B\ntags:\n- chat\n\
         pipeline_tag: text-generation\n---\n# Qwen2\n",
    )
    .unwrap();
    let c = convert(&d, OutType::Bf16);
    let keys: Vec<(String, String)> = c
        .model
        .metadata
        .iter()
        .filter(|(k, _)| k.starts_with("general."))
        .map(|(k, v)| (k.to_string(), format!("{v:?}")))
        .collect();
    let want = [
        ("general.architecture", "\"qwen2\""),
        ("general.type", "\"model\""),
        ("general.name", "\"Qwen2\""),
        ("general.size_label", "\"140K\""),
        ("general.license", "\"apache-2.0\""),
        ("general.base_model.count", "1"),
        ("general.base_model.0.name", "\"Qwen2.5 0.5B\""),
        ("general.base_model.0.organization", "\"Qwen\""),
        (
            "general.base_model.0.repo_url",
            "\"https://huggingface.co/Qwen/Qwen2.5-0.5B\"",
        ),
        ("general.tags", "[\"chat\", \"text-generation\"]"),
        ("general.languages", "[\"en\"]"),
    ];
    for ((k, v), (wk, wv)) in keys.iter().zip(want) {
        assert_eq!(k, wk);
        assert!(v.contains(wv.trim_matches('"')), "{k}: {v} vs {wv}");
    }
}
