//! Writes a synthetic HuggingFace Llama directory (config.json, one bf16 safetensors file,
//! and the tokenizer files of a small fixture) of about the requested size, for benchmarks.
//!
//! `cargo run --release --example gen_hf_model -- OUT_DIR SIZE_MB testdata/hf/llama-spm`
//!
//! The vocabulary (and so the embedding rows) comes from the fixture; the layers are
//! Llama-2-ish (hidden 2048, 32 heads, 8 KV heads, FFN 5632) and their count follows from the
//! size. Values are deterministic pseudo-random bf16 (~N(0, 0.02)).

use std::io::Write;
use std::path::Path;

fn noise(seed: u64, n: usize, out: &mut impl Write) -> std::io::Result<()> {
    let mut s = seed | 1;
    let mut buf = Vec::with_capacity(1 << 20);
    for _ in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let u = (s >> 40) as f32 / (1u64 << 24) as f32;
        let v = (u - 0.5) * 0.07;
        buf.extend_from_slice(&ggufkit::quantizers::f32_to_bf16(v).to_le_bytes());
        if buf.len() >= 1 << 20 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: gen_hf_model OUT_DIR SIZE_MB FIXTURE_DIR");
        std::process::exit(2);
    }
    let (out, size_mb, fixture) = (
        Path::new(&args[1]),
        args[2].parse::<u64>().expect("SIZE_MB"),
        Path::new(&args[3]),
    );
    std::fs::create_dir_all(out)?;
    let mut config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture.join("config.json"))?).expect("config.json");
    let vocab = config["vocab_size"].as_u64().expect("vocab_size");
    let (embd, ff, heads, kv_heads) = (2048u64, 5632u64, 32u64, 8u64);
    let head_dim = embd / heads;
    let per_layer =
        (2 * embd * embd + 2 * kv_heads * head_dim * embd + 3 * embd * ff + 2 * embd) * 2;
    let fixed = (2 * vocab * embd + embd) * 2;
    let layers = ((size_mb << 20).saturating_sub(fixed) / per_layer).max(1);
    config["hidden_size"] = embd.into();
    config["intermediate_size"] = ff.into();
    config["num_attention_heads"] = heads.into();
    config["num_key_value_heads"] = kv_heads.into();
    config["head_dim"] = head_dim.into();
    config["num_hidden_layers"] = layers.into();
    std::fs::write(
        out.join("config.json"),
        serde_json::to_vec_pretty(&config).expect("json"),
    )?;
    for f in [
        "tokenizer.model",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "generation_config.json",
    ] {
        if fixture.join(f).is_file() {
            std::fs::copy(fixture.join(f), out.join(f))?;
        }
    }
    let mut tensors: Vec<(String, Vec<u64>)> = vec![
        ("model.embed_tokens.weight".into(), vec![vocab, embd]),
        ("lm_head.weight".into(), vec![vocab, embd]),
        ("model.norm.weight".into(), vec![embd]),
    ];
    for l in 0..layers {
        let p = format!("model.layers.{l}");
        tensors.extend([
            (format!("{p}.input_layernorm.weight"), vec![embd]),
            (format!("{p}.post_attention_layernorm.weight"), vec![embd]),
            (format!("{p}.self_attn.q_proj.weight"), vec![embd, embd]),
            (
                format!("{p}.self_attn.k_proj.weight"),
                vec![kv_heads * head_dim, embd],
            ),
            (
                format!("{p}.self_attn.v_proj.weight"),
                vec![kv_heads * head_dim, embd],
            ),
            (format!("{p}.self_attn.o_proj.weight"), vec![embd, embd]),
            (format!("{p}.mlp.gate_proj.weight"), vec![ff, embd]),
            (format!("{p}.mlp.up_proj.weight"), vec![ff, embd]),
            (format!("{p}.mlp.down_proj.weight"), vec![embd, ff]),
        ]);
    }
    let mut header = serde_json::Map::new();
    let mut offset = 0u64;
    for (name, shape) in &tensors {
        let n: u64 = shape.iter().product::<u64>() * 2;
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + n]}),
        );
        offset += n;
    }
    let mut h = serde_json::to_vec(&serde_json::Value::Object(header)).expect("json");
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(out.join("model.safetensors"))?);
    f.write_all(&(h.len() as u64).to_le_bytes())?;
    f.write_all(&h)?;
    for (i, (_, shape)) in tensors.iter().enumerate() {
        noise(
            i as u64 * 0x9E37_79B9 + 7,
            shape.iter().product::<u64>() as usize,
            &mut f,
        )?;
    }
    f.flush()?;
    eprintln!(
        "{}: {layers} layers, {} bytes of bf16 tensors",
        out.display(),
        offset
    );
    Ok(())
}
