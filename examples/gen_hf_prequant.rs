//! Writes a synthetic pre-quantized HuggingFace directory of about the requested size, for
//! the memory benchmark of repacked and dequantized checkpoints (`scripts/bench-prequant.sh`):
//!
//! * `mxfp4`: gpt-oss as OpenAI ships it (`quant_method: mxfp4`): per layer 16 experts of
//!   2048 × 2048 as `gate_up_proj_blocks` / `_scales` and `down_proj_blocks` / `_scales` (U8
//!   E2M1 codes, E8M0 exponents), BF16 attention, router, sinks and biases; the smollm test
//!   tokenizer (49152 tokens, tied embeddings).
//! * `nvfp4`: a Llama (4096 hidden, 14336 FFN) as NVIDIA ModelOpt ships NVFP4
//!   (`hf_quant_config.json`): U8 weights, F8_E4M3 `weight_scale` per 16 inputs, F32
//!   `weight_scale_2` / `input_scale`; the llama-spm test tokenizer.
//! * `gptq`: the same Llama as GPTQ 4-bit (`quant_method: gptq`, groups of 128, no act
//!   order): I32 `qweight` / `qzeros`, F16 `scales`, I32 `g_idx`.
//!
//! `cargo run --release --example gen_hf_prequant -- KIND OUT_DIR SIZE_MB`

mod synth;

use std::path::Path;

use serde_json::json;
use synth::{bf16_weights, Rng, Spec};

/// Llama projections (name, rows, cols) for `hidden` 4096, FFN 14336, 8 KV heads of 128.
const LLAMA: [(&str, u64, u64); 7] = [
    ("self_attn.q_proj", 4096, 4096),
    ("self_attn.k_proj", 1024, 4096),
    ("self_attn.v_proj", 1024, 4096),
    ("self_attn.o_proj", 4096, 4096),
    ("mlp.gate_proj", 14336, 4096),
    ("mlp.up_proj", 14336, 4096),
    ("mlp.down_proj", 4096, 14336),
];
const GPTQ_GROUP: u64 = 128;

fn llama_config(n_layer: u64, quant: Option<serde_json::Value>) -> serde_json::Value {
    let mut c = json!({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
        "intermediate_size": 14336, "num_hidden_layers": n_layer, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 1024,
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "tie_word_embeddings": false, "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 2,
    });
    if let Some(q) = quant {
        c["quantization_config"] = q;
    }
    c
}

/// The Llama's embeddings, norms and head (BF16) and, per layer, each projection's tensors.
fn llama(size_mb: u64, proj: impl Fn(&str, u64, u64) -> Vec<Spec>) -> (u64, Vec<Spec>) {
    let per_layer: u64 = LLAMA
        .iter()
        .flat_map(|(m, r, c)| proj(m, *r, *c))
        .map(|(_, d, s)| s.iter().product::<u64>() * synth::dtype_size(d))
        .sum();
    let n_layer = ((size_mb << 20) / per_layer).max(1);
    let mut t: Vec<Spec> = vec![
        ("model.embed_tokens.weight".into(), "BF16", vec![1024, 4096]),
        ("model.norm.weight".into(), "BF16", vec![4096]),
        ("lm_head.weight".into(), "BF16", vec![1024, 4096]),
    ];
    for l in 0..n_layer {
        let p = format!("model.layers.{l}");
        for n in ["input_layernorm", "post_attention_layernorm"] {
            t.push((format!("{p}.{n}.weight"), "BF16", vec![4096]));
        }
        for (m, r, c) in LLAMA {
            t.extend(proj(&format!("{p}.{m}"), r, c));
        }
    }
    (n_layer, t)
}

/// What a kind's writer made: the number of layers, the tensors to write and the test
/// tokenizer to copy.
type Kind = (u64, Vec<Spec>, &'static str);

/// A Llama as NVIDIA ModelOpt ships NVFP4.
fn nvfp4(dir: &Path, size_mb: u64) -> Kind {
    let (n, t) = llama(size_mb, |m, r, c| {
        vec![
            (format!("{m}.weight"), "U8", vec![r, c / 2]),
            (format!("{m}.weight_scale"), "F8_E4M3", vec![r, c / 16]),
            (format!("{m}.weight_scale_2"), "F32", vec![]),
            (format!("{m}.input_scale"), "F32", vec![]),
        ]
    });
    synth::write_json(dir, "config.json", &llama_config(n, None));
    synth::write_json(
        dir,
        "hf_quant_config.json",
        &json!({"producer": {"name": "modelopt", "version": "0.29.0"},
                "quantization": {"quant_algo": "NVFP4", "group_size": 16,
                                 "exclude_modules": ["lm_head"]}}),
    );
    (n, t, "llama-spm")
}

/// The same Llama as GPTQ 4-bit.
fn gptq(dir: &Path, size_mb: u64) -> Kind {
    let (n, t) = llama(size_mb, |m, r, c| {
        vec![
            (format!("{m}.qweight"), "I32", vec![c / 8, r]),
            (format!("{m}.qzeros"), "I32", vec![c / GPTQ_GROUP, r / 8]),
            (format!("{m}.scales"), "F16", vec![c / GPTQ_GROUP, r]),
            (format!("{m}.g_idx"), "I32", vec![c]),
        ]
    });
    let q = json!({"quant_method": "gptq", "bits": 4, "group_size": GPTQ_GROUP,
                   "desc_act": false, "sym": true, "checkpoint_format": "gptq"});
    synth::write_json(dir, "config.json", &llama_config(n, Some(q)));
    (n, t, "llama-spm")
}

/// gpt-oss as OpenAI ships it (MXFP4 experts).
fn mxfp4(dir: &Path, size_mb: u64) -> Kind {
    let (hidden, ff, experts, n_head, n_kv, hd) = (2048u64, 2048u64, 16u64, 32u64, 8u64, 64u64);
    let layer = |l: u64| -> Vec<Spec> {
        let p = format!("model.layers.{l}");
        let e = format!("{p}.mlp.experts");
        let mut t: Vec<Spec> = vec![
            (format!("{p}.input_layernorm.weight"), "BF16", vec![hidden]),
            (
                format!("{p}.post_attention_layernorm.weight"),
                "BF16",
                vec![hidden],
            ),
            (format!("{p}.self_attn.sinks"), "BF16", vec![n_head]),
            (
                format!("{p}.mlp.router.weight"),
                "BF16",
                vec![experts, hidden],
            ),
            (format!("{p}.mlp.router.bias"), "BF16", vec![experts]),
            (
                format!("{e}.gate_up_proj_blocks"),
                "U8",
                vec![experts, 2 * ff, hidden / 32, 16],
            ),
            (
                format!("{e}.gate_up_proj_scales"),
                "U8",
                vec![experts, 2 * ff, hidden / 32],
            ),
            (
                format!("{e}.gate_up_proj_bias"),
                "BF16",
                vec![experts, 2 * ff],
            ),
            (
                format!("{e}.down_proj_blocks"),
                "U8",
                vec![experts, hidden, ff / 32, 16],
            ),
            (
                format!("{e}.down_proj_scales"),
                "U8",
                vec![experts, hidden, ff / 32],
            ),
            (format!("{e}.down_proj_bias"), "BF16", vec![experts, hidden]),
        ];
        for (m, r, c) in [
            ("q_proj", n_head * hd, hidden),
            ("k_proj", n_kv * hd, hidden),
            ("v_proj", n_kv * hd, hidden),
            ("o_proj", hidden, n_head * hd),
        ] {
            t.push((format!("{p}.self_attn.{m}.weight"), "BF16", vec![r, c]));
            t.push((format!("{p}.self_attn.{m}.bias"), "BF16", vec![r]));
        }
        t
    };
    let bytes = |t: &[Spec]| -> u64 {
        t.iter()
            .map(|(_, d, s)| s.iter().product::<u64>() * synth::dtype_size(d))
            .sum()
    };
    let n = ((size_mb << 20) / bytes(&layer(0))).max(1);
    let mut t: Vec<Spec> = vec![
        (
            "model.embed_tokens.weight".into(),
            "BF16",
            vec![49152, hidden],
        ),
        ("model.norm.weight".into(), "BF16", vec![hidden]),
    ];
    for l in 0..n {
        t.extend(layer(l));
    }
    let types: Vec<&str> = (0..n)
        .map(|l| {
            if l % 2 == 0 {
                "sliding_attention"
            } else {
                "full_attention"
            }
        })
        .collect();
    synth::write_json(
        dir,
        "config.json",
        &json!({
            "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
            "attention_bias": true, "head_dim": hd, "hidden_act": "silu",
            "hidden_size": hidden, "intermediate_size": ff, "layer_types": types,
            "max_position_embeddings": 131072, "num_attention_heads": n_head,
            "num_experts_per_tok": 4, "num_hidden_layers": n,
            "num_key_value_heads": n_kv, "num_local_experts": experts,
            "rms_norm_eps": 1e-5,
            "rope_parameters": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                "original_max_position_embeddings": 4096, "rope_theta": 150000.0,
                "rope_type": "yarn", "truncate": false},
            "sliding_window": 128, "swiglu_limit": 7.0, "tie_word_embeddings": true,
            "vocab_size": 49152, "bos_token_id": 1, "eos_token_id": 2,
            "quantization_config": {"quant_method": "mxfp4",
                "modules_to_not_convert": ["model.layers.*.self_attn",
                    "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]},
        }),
    );
    (n, t, "gptoss")
}

/// Fills each tensor with plausible values for its dtype and writes `model.safetensors`.
fn write_weights(dir: &Path, tensors: &mut [Spec]) -> u64 {
    synth::write_safetensors(
        &dir.join("model.safetensors"),
        tensors,
        |(name, dtype, shape), rng: &mut Rng, out| {
            let n = shape.iter().product::<u64>() as usize;
            match *dtype {
                "BF16" => bf16_weights(name, n, rng, out),
                // E4M3 block scales within [2^-6, 2^1) (no NaN); E8M0 exponents 2^-7..2^0.
                "F8_E4M3" => rng.bytes(n, |b| 0x18 | (b & 0x27), out),
                "U8" if name.ends_with("_scales") => rng.bytes(n, |b| 120 + (b & 7), out),
                "U8" => rng.bytes(n, |b| b, out),
                "F16" => {
                    for _ in 0..n {
                        let v = 1e-3 + rng.unit() * 1e-3;
                        let h = ggufkit::quantizers::f32_to_f16(v);
                        out.extend_from_slice(&h.to_le_bytes());
                    }
                }
                "I32" if name.ends_with("g_idx") => {
                    for i in 0..n as u64 {
                        out.extend_from_slice(&((i / GPTQ_GROUP) as i32).to_le_bytes());
                    }
                }
                "I32" => rng.bytes(n * 4, |b| b, out),
                _ => {
                    for _ in 0..n {
                        let v = 1e-3 + rng.unit() * 1e-3;
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
        },
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: gen_hf_prequant mxfp4|nvfp4|gptq OUT_DIR SIZE_MB");
        std::process::exit(2);
    }
    let dir = Path::new(&args[2]);
    let size_mb: u64 = args[3].parse().expect("SIZE_MB");
    std::fs::create_dir_all(dir).expect("create OUT_DIR");
    let (n_layer, mut tensors, tokenizer) = match args[1].as_str() {
        "nvfp4" => nvfp4(dir, size_mb),
        "gptq" => gptq(dir, size_mb),
        "mxfp4" => mxfp4(dir, size_mb),
        k => {
            eprintln!("unknown kind {k}: mxfp4, nvfp4 or gptq");
            std::process::exit(2);
        }
    };
    let bytes = write_weights(dir, &mut tensors);
    synth::copy_tokenizer(tokenizer, dir);
    eprintln!(
        "{}: {} layers, {bytes} bytes of weights",
        dir.display(),
        n_layer
    );
}
