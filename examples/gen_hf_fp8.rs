//! Writes a synthetic pre-quantized FP8 HuggingFace llama directory (config.json with
//! `quantization_config: {quant_method: fp8, weight_block_size: [128, 128]}`, one
//! model.safetensors whose projections are F8_E4M3 with F32 `weight_scale_inv` blocks as
//! DeepSeek-V3 / Qwen3-FP8 ship them, BF16 embeddings and norms, the llama-spm test
//! tokenizer) of about the requested size, for the FP8 memory benchmark
//! (`scripts/bench-fp8.sh`).
//!
//! `cargo run --release --example gen_hf_fp8 -- OUT_DIR SIZE_MB`

mod synth;

use std::path::Path;

use synth::Spec;

const BLOCK: u64 = 128;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: gen_hf_fp8 OUT_DIR SIZE_MB");
        std::process::exit(2);
    }
    let dir = Path::new(&args[1]);
    let size_mb: u64 = args[2].parse().expect("SIZE_MB");
    std::fs::create_dir_all(dir).expect("create OUT_DIR");
    let (hidden, inter, vocab) = (4096u64, 14336u64, 1024u64);
    let (n_head, n_kv, head_dim) = (32u64, 8u64, 128u64);
    let kv = n_kv * head_dim;
    let mats = [
        ("self_attn.q_proj", hidden, hidden),
        ("self_attn.k_proj", kv, hidden),
        ("self_attn.v_proj", kv, hidden),
        ("self_attn.o_proj", hidden, hidden),
        ("mlp.gate_proj", inter, hidden),
        ("mlp.up_proj", inter, hidden),
        ("mlp.down_proj", hidden, inter),
    ];
    let per_layer: u64 = mats.iter().map(|(_, r, c)| r * c).sum();
    let n_layer = ((size_mb << 20) / per_layer).max(1);

    // (name, dtype, shape)
    let mut tensors: Vec<Spec> = vec![
        (
            "model.embed_tokens.weight".into(),
            "BF16",
            vec![vocab, hidden],
        ),
        ("model.norm.weight".into(), "BF16", vec![hidden]),
        ("lm_head.weight".into(), "BF16", vec![vocab, hidden]),
    ];
    for l in 0..n_layer {
        let p = format!("model.layers.{l}");
        tensors.push((format!("{p}.input_layernorm.weight"), "BF16", vec![hidden]));
        tensors.push((
            format!("{p}.post_attention_layernorm.weight"),
            "BF16",
            vec![hidden],
        ));
        for (m, r, c) in mats {
            tensors.push((format!("{p}.{m}.weight"), "F8_E4M3", vec![r, c]));
            tensors.push((
                format!("{p}.{m}.weight_scale_inv"),
                "F32",
                vec![r.div_ceil(BLOCK), c.div_ceil(BLOCK)],
            ));
        }
    }
    let offset = synth::write_safetensors(
        &dir.join("model.safetensors"),
        &mut tensors,
        |(name, dtype, shape), rng, out| {
            let n = shape.iter().product::<u64>() as usize;
            match *dtype {
                // |x| <= 240 (no NaN): exponent field at most 14.
                "F8_E4M3" => rng.bytes(n, |b| b & 0xF7, out),
                "F32" => {
                    for _ in 0..n {
                        let v = 1e-4 + rng.unit() * 1e-4;
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
                _ => synth::bf16_weights(name, n, rng, out),
            }
        },
    );
    let config = serde_json::json!({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
        "intermediate_size": inter, "num_hidden_layers": n_layer, "num_attention_heads": n_head,
        "num_key_value_heads": n_kv, "head_dim": head_dim, "vocab_size": vocab,
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "tie_word_embeddings": false, "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 2,
        "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic",
                                "fmt": "e4m3", "weight_block_size": [BLOCK, BLOCK]},
    });
    synth::write_json(dir, "config.json", &config);
    synth::copy_tokenizer("llama-spm", dir);
    eprintln!(
        "{}: {n_layer} layers, {offset} bytes of weights",
        dir.display()
    );
}
