//! Writes a synthetic HuggingFace Mixtral directory (config.json, bf16 model.safetensors with
//! the experts stored one tensor per expert, the llama-spm test tokenizer) of about the
//! requested size, for the expert-stacking memory benchmark (`scripts/bench-moe.sh`).
//!
//! `cargo run --release --example gen_hf_moe -- OUT_DIR SIZE_MB`
//!
//! 16 experts of 3 x 1536 x 2048 per layer: one layer is about 300 MB of bf16, its stacked
//! `ffn_*_exps` tensors are [16, 1536, 2048] (100 MB in bf16, 53 MB in q8_0).

mod synth;

use std::path::Path;

use synth::Spec;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: gen_hf_moe OUT_DIR SIZE_MB");
        std::process::exit(2);
    }
    let dir = Path::new(&args[1]);
    let size_mb: u64 = args[2].parse().expect("SIZE_MB");
    std::fs::create_dir_all(dir).expect("create OUT_DIR");
    let (hidden, inter, vocab, experts, kv) = (2048u64, 1536u64, 1024u64, 16u64, 512u64);
    let per_layer =
        (2 * hidden * hidden + 2 * kv * hidden + experts * 3 * hidden * inter + experts * hidden)
            * 2;
    let n_layer = ((size_mb << 20) / per_layer).max(1);

    let mut tensors: Vec<Spec> = vec![(
        "model.embed_tokens.weight".into(),
        "BF16",
        vec![vocab, hidden],
    )];
    for l in 0..n_layer {
        let p = format!("model.layers.{l}");
        tensors.push((format!("{p}.input_layernorm.weight"), "BF16", vec![hidden]));
        tensors.push((
            format!("{p}.post_attention_layernorm.weight"),
            "BF16",
            vec![hidden],
        ));
        tensors.push((
            format!("{p}.self_attn.q_proj.weight"),
            "BF16",
            vec![hidden, hidden],
        ));
        tensors.push((
            format!("{p}.self_attn.k_proj.weight"),
            "BF16",
            vec![kv, hidden],
        ));
        tensors.push((
            format!("{p}.self_attn.v_proj.weight"),
            "BF16",
            vec![kv, hidden],
        ));
        tensors.push((
            format!("{p}.self_attn.o_proj.weight"),
            "BF16",
            vec![hidden, hidden],
        ));
        tensors.push((
            format!("{p}.block_sparse_moe.gate.weight"),
            "BF16",
            vec![experts, hidden],
        ));
        for x in 0..experts {
            let e = format!("{p}.block_sparse_moe.experts.{x}");
            tensors.push((format!("{e}.w1.weight"), "BF16", vec![inter, hidden]));
            tensors.push((format!("{e}.w2.weight"), "BF16", vec![hidden, inter]));
            tensors.push((format!("{e}.w3.weight"), "BF16", vec![inter, hidden]));
        }
    }
    tensors.push(("model.norm.weight".into(), "BF16", vec![hidden]));
    tensors.push(("lm_head.weight".into(), "BF16", vec![vocab, hidden]));
    let offset = synth::write_safetensors(
        &dir.join("model.safetensors"),
        &mut tensors,
        |(name, _, shape), rng, out| {
            synth::bf16_weights(name, shape.iter().product::<u64>() as usize, rng, out)
        },
    );
    let config = serde_json::json!({
        "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": hidden,
        "intermediate_size": inter, "num_hidden_layers": n_layer, "num_attention_heads": 16,
        "num_key_value_heads": 4, "head_dim": 128, "vocab_size": vocab,
        "max_position_embeddings": 4096, "num_local_experts": experts, "num_experts_per_tok": 2,
        "rms_norm_eps": 1e-5, "rope_theta": 1000000.0, "tie_word_embeddings": false,
        "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 2,
    });
    synth::write_json(dir, "config.json", &config);
    synth::copy_tokenizer("llama-spm", dir);
    eprintln!(
        "{}: {n_layer} layers of {experts} experts, {} bytes of bf16 weights",
        dir.display(),
        offset
    );
}
