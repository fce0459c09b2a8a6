//! Ling 1.0 (BailingMoeForCausalLM) checkpoints ggufkit cannot convert as the reference does
//! are refused naming the tensor and the reason: an untied head under `norm_head`, a fused
//! attention input whose rows are not the configured q, k and v.

use ggufkit_converters::hf::{read_hf_dir, HfOptions};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::golden::{f32s, model_dir, safetensors};

/// A one-layer Ling 1.0 config with `extra` keys appended.
fn config(extra: &str) -> String {
    format!(
        r#"{{"architectures": ["BailingMoeForCausalLM"], "model_type": "bailing_moe",
  "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1,
  "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 4,
  "rms_norm_eps": 1e-6, "first_k_dense_replace": 0, "moe_intermediate_size": 4,
  "num_experts": 2, "num_experts_per_tok": 1, "num_shared_experts": 1,
  "norm_topk_prob": true, "tie_word_embeddings": false{extra}}}"#
    )
}

/// The refusal of a checkpoint of one tensor.
fn refusal(tag: &str, extra: &str, name: &str, shape: &[u64]) -> ConvertError {
    let n = shape.iter().product::<u64>() as usize;
    let st = safetensors(&[(name, "F32", shape, f32s(&vec![0.5; n]))]);
    let d = model_dir(tag, &config(extra), &[("model.safetensors", st)]);
    let opts = HfOptions {
        allow_missing_vocab: true,
        ..HfOptions::default()
    };
    match read_hf_dir(&d, &opts) {
        Ok(_) => panic!("{tag}: conversion unexpectedly succeeded"),
        Err(e) => e,
    }
}

#[test]
fn an_untied_head_under_norm_head_is_refused() {
    match refusal(
        "bailing-norm-head",
        r#", "norm_head": true"#,
        "lm_head.weight",
        &[4, 8],
    ) {
        ConvertError::UnsupportedFeature { arch, feature } => {
            assert_eq!(arch, "BailingMoeForCausalLM");
            assert!(feature.contains("lm_head.weight"), "{feature}");
            assert!(feature.contains("norm_head"), "{feature}");
        }
        other => panic!("expected UnsupportedFeature, got {other:?}"),
    }
}

#[test]
fn a_fused_attention_of_other_rows_is_refused() {
    let name = "model.layers.0.attention.query_key_value.weight";
    // 2 query heads and 1 KV head of 4 make 16 rows; 12 are given.
    match refusal("bailing-qkv-rows", "", name, &[12, 8]) {
        ConvertError::Tensor { name: n, problem } => {
            assert_eq!(n, name);
            assert!(problem.contains("12 rows"), "{problem}");
        }
        other => panic!("expected Tensor, got {other:?}"),
    }
}
