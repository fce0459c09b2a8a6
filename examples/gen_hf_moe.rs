//! Writes a synthetic HuggingFace Mixtral directory (config.json, bf16 model.safetensors with
//! the experts stored one tensor per expert, the llama-spm test tokenizer) of about the
//! requested size, for the expert-stacking memory benchmark (`scripts/bench-moe.sh`).
//!
//! `cargo run --release --example gen_hf_moe -- OUT_DIR SIZE_MB`
//!
//! 16 experts of 3 x 1536 x 2048 per layer: one layer is about 300 MB of bf16, its stacked
//! `ffn_*_exps` tensors are [16, 1536, 2048] (100 MB in bf16, 53 MB in q8_0).

use std::io::{BufWriter, Write};
use std::path::Path;

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

    let mut tensors: Vec<(String, Vec<u64>)> =
        vec![("model.embed_tokens.weight".into(), vec![vocab, hidden])];
    for l in 0..n_layer {
        let p = format!("model.layers.{l}");
        tensors.push((format!("{p}.input_layernorm.weight"), vec![hidden]));
        tensors.push((format!("{p}.post_attention_layernorm.weight"), vec![hidden]));
        tensors.push((format!("{p}.self_attn.q_proj.weight"), vec![hidden, hidden]));
        tensors.push((format!("{p}.self_attn.k_proj.weight"), vec![kv, hidden]));
        tensors.push((format!("{p}.self_attn.v_proj.weight"), vec![kv, hidden]));
        tensors.push((format!("{p}.self_attn.o_proj.weight"), vec![hidden, hidden]));
        tensors.push((
            format!("{p}.block_sparse_moe.gate.weight"),
            vec![experts, hidden],
        ));
        for x in 0..experts {
            let e = format!("{p}.block_sparse_moe.experts.{x}");
            tensors.push((format!("{e}.w1.weight"), vec![inter, hidden]));
            tensors.push((format!("{e}.w2.weight"), vec![hidden, inter]));
            tensors.push((format!("{e}.w3.weight"), vec![inter, hidden]));
        }
    }
    tensors.push(("model.norm.weight".into(), vec![hidden]));
    tensors.push(("lm_head.weight".into(), vec![vocab, hidden]));
    tensors.sort();

    let mut header = serde_json::Map::new();
    let mut offset = 0u64;
    for (name, shape) in &tensors {
        let n = shape.iter().product::<u64>() * 2;
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + n]}),
        );
        offset += n;
    }
    let mut h = serde_json::to_vec(&header).unwrap();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let f = std::fs::File::create(dir.join("model.safetensors")).expect("create model.safetensors");
    let mut w = BufWriter::with_capacity(8 << 20, f);
    w.write_all(&(h.len() as u64).to_le_bytes()).unwrap();
    w.write_all(&h).unwrap();
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    for (name, shape) in &tensors {
        let n = shape.iter().product::<u64>();
        let norm = name.ends_with("norm.weight");
        let mut buf = Vec::with_capacity(n as usize * 2);
        for _ in 0..n {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let v = if norm {
                1.0
            } else {
                ((s >> 40) as f32 / 16_777_216.0 - 0.5) * 0.07
            };
            buf.extend_from_slice(&ggufkit::quantizers::f32_to_bf16(v).to_le_bytes());
        }
        w.write_all(&buf).unwrap();
    }
    w.flush().unwrap();
    let config = serde_json::json!({
        "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": hidden,
        "intermediate_size": inter, "num_hidden_layers": n_layer, "num_attention_heads": 16,
        "num_key_value_heads": 4, "head_dim": 128, "vocab_size": vocab,
        "max_position_embeddings": 4096, "num_local_experts": experts, "num_experts_per_tok": 2,
        "rms_norm_eps": 1e-5, "rope_theta": 1000000.0, "tie_word_embeddings": false,
        "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 2,
    });
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    let tok = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hf/llama-spm");
    for f in [
        "tokenizer.model",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
    ] {
        std::fs::copy(tok.join(f), dir.join(f)).expect("copy tokenizer file");
    }
    eprintln!(
        "{}: {n_layer} layers of {experts} experts, {} bytes of bf16 weights",
        dir.display(),
        offset
    );
}
