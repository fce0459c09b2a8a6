//! Writes a synthetic llama-shaped GGUF of about the requested size, for benchmarks.
//!
//! `cargo run --release --example gen_model -- OUT.gguf SIZE_MB [f32|f16|bf16] [N_EMBD]`
//!
//! `N_EMBD` (default 2048; the feed-forward width is 2.75 times it) sets the hidden size: a
//! small one gives many layers (nine tensors each) for the size, to time what grows with the
//! number of tensors.
//!
//! Tensor data is generated lazily (deterministic pseudo-random values, ~N(0, 0.02)), so the
//! generator itself needs little memory.

use std::sync::Arc;

use ggufkit::gguf::Value;
use ggufkit::ir::{DataError, Derive, Model, Tensor, TensorData};
use ggufkit::quantizers::{f32_to_bf16, f32_to_f16, GgmlType};
use ggufkit::write::{write_model, WriteOptions};

struct Noise {
    seed: u64,
    n: usize,
    ty: GgmlType,
}

impl Derive for Noise {
    fn describe(&self) -> String {
        format!("{} pseudo-random {} values", self.n, self.ty)
    }

    fn compute(&self) -> Result<Vec<u8>, DataError> {
        let mut s = self.seed | 1;
        let mut out = Vec::with_capacity(self.n * 4);
        for _ in 0..self.n {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 40) as f32 / (1u64 << 24) as f32;
            let v = (u - 0.5) * 0.07;
            match self.ty {
                GgmlType::F32 => out.extend(v.to_le_bytes()),
                GgmlType::F16 => out.extend(f32_to_f16(v).to_le_bytes()),
                _ => out.extend(f32_to_bf16(v).to_le_bytes()),
            }
        }
        Ok(out)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: gen_model OUT.gguf SIZE_MB [f32|f16|bf16] [N_EMBD]");
        std::process::exit(2);
    }
    let size_mb: u64 = args[2].parse().expect("SIZE_MB");
    let ty = match args.get(3).map(String::as_str).unwrap_or("f16") {
        "f32" => GgmlType::F32,
        "bf16" => GgmlType::BF16,
        _ => GgmlType::F16,
    };
    let n_embd: u64 = args.get(4).map_or(2048, |s| s.parse().expect("N_EMBD"));
    let (n_ff, n_vocab) = (n_embd * 11 / 4, 32000u64);
    let esize = ty.type_size() as u64;
    let per_layer = (4 * n_embd * n_embd + 3 * n_embd * n_ff) * esize;
    let fixed = 2 * n_vocab * n_embd * esize;
    let n_layer = ((size_mb << 20).saturating_sub(fixed) / per_layer).max(1);
    let mut m = Model::default();
    let md = &mut m.metadata;
    md.set("general.architecture", "llama");
    md.set("general.name", "bench");
    md.set("llama.block_count", Value::U32(n_layer as u32));
    md.set("llama.context_length", Value::U32(4096));
    md.set("llama.embedding_length", Value::U32(n_embd as u32));
    md.set("llama.feed_forward_length", Value::U32(n_ff as u32));
    md.set("llama.attention.head_count", Value::U32(32));
    md.set("llama.attention.head_count_kv", Value::U32(32));
    md.set("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5));
    md.set("llama.rope.dimension_count", Value::U32(64));
    md.set(
        "general.file_type",
        Value::U32(if ty == GgmlType::F32 { 0 } else { 1 }),
    );
    let mut seed = 1u64;
    let mut add = |m: &mut Model, name: String, dims: Vec<u64>, ty: GgmlType| {
        seed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(7);
        let n = dims.iter().product::<u64>() as usize;
        m.tensors.push(Tensor {
            name,
            dims,
            ty,
            data: TensorData::Derived(Arc::new(Noise { seed, n, ty })),
        });
    };
    add(
        &mut m,
        "token_embd.weight".into(),
        vec![n_embd, n_vocab],
        ty,
    );
    for l in 0..n_layer {
        add(
            &mut m,
            format!("blk.{l}.attn_norm.weight"),
            vec![n_embd],
            GgmlType::F32,
        );
        for t in ["attn_q", "attn_k", "attn_v", "attn_output"] {
            add(
                &mut m,
                format!("blk.{l}.{t}.weight"),
                vec![n_embd, n_embd],
                ty,
            );
        }
        add(
            &mut m,
            format!("blk.{l}.ffn_norm.weight"),
            vec![n_embd],
            GgmlType::F32,
        );
        add(
            &mut m,
            format!("blk.{l}.ffn_gate.weight"),
            vec![n_embd, n_ff],
            ty,
        );
        add(
            &mut m,
            format!("blk.{l}.ffn_up.weight"),
            vec![n_embd, n_ff],
            ty,
        );
        add(
            &mut m,
            format!("blk.{l}.ffn_down.weight"),
            vec![n_ff, n_embd],
            ty,
        );
    }
    add(
        &mut m,
        "output_norm.weight".into(),
        vec![n_embd],
        GgmlType::F32,
    );
    add(&mut m, "output.weight".into(), vec![n_embd, n_vocab], ty);
    let opts = WriteOptions {
        overwrite: true,
        ..Default::default()
    };
    let layout = write_model(&m, std::path::Path::new(&args[1]), &opts).expect("write");
    eprintln!(
        "{}: {} layers, {} bytes",
        args[1], n_layer, layout.file_size
    );
}
