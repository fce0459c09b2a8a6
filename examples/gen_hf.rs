//! Writes a synthetic HuggingFace llama directory (config.json, bf16 model.safetensors, the
//! llama-spm test tokenizer) of about the requested size, for the converter benchmark.
//!
//! `cargo run --release --example gen_hf -- OUT_DIR SIZE_MB`

use std::io::{BufWriter, Write};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: gen_hf OUT_DIR SIZE_MB");
        std::process::exit(2);
    }
    let dir = Path::new(&args[1]);
    let size_mb: u64 = args[2].parse().expect("SIZE_MB");
    std::fs::create_dir_all(dir).expect("create OUT_DIR");
    let (hidden, inter, vocab) = (2048u64, 5632u64, 1024u64);
    let per_layer = (4 * hidden * hidden + 3 * hidden * inter + 2 * hidden) * 2;
    let n_layer = ((size_mb << 20) / per_layer).max(1);

    let mut tensors: Vec<(String, Vec<u64>)> =
        vec![("model.embed_tokens.weight".into(), vec![vocab, hidden])];
    for l in 0..n_layer {
        let p = format!("model.layers.{l}");
        tensors.push((format!("{p}.input_layernorm.weight"), vec![hidden]));
        tensors.push((format!("{p}.post_attention_layernorm.weight"), vec![hidden]));
        for t in ["q_proj", "k_proj", "v_proj", "o_proj"] {
            tensors.push((format!("{p}.self_attn.{t}.weight"), vec![hidden, hidden]));
        }
        tensors.push((format!("{p}.mlp.gate_proj.weight"), vec![inter, hidden]));
        tensors.push((format!("{p}.mlp.up_proj.weight"), vec![inter, hidden]));
        tensors.push((format!("{p}.mlp.down_proj.weight"), vec![hidden, inter]));
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
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
        "intermediate_size": inter, "num_hidden_layers": n_layer, "num_attention_heads": 32,
        "num_key_value_heads": 32, "head_dim": 64, "vocab_size": vocab, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
        "bos_token_id": 1, "eos_token_id": 2,
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
        "{}: {n_layer} layers, {} bytes of bf16 weights",
        dir.display(),
        offset
    );
}
