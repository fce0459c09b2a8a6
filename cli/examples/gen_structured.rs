//! Writes a copy of an F32 GGUF whose weight matrices have the structure that makes
//! per-tensor type choice matter (for `scripts/bench-budget.sh`): each matrix is scaled by a
//! log-normal factor of its own, each of its columns by a log-normal factor (σ 0.5), and
//! about one column in 200 is an outlier column ×6. Norms, biases and metadata are copied.
//!
//! `cargo run --release -p ggufkit-cli --example gen_structured -- IN-f32.gguf OUT.gguf [SEED]`
//!
//! Deterministic: the same input and seed give the same bytes.

use std::sync::Arc;

use ggufkit::gguf::GgufFile;
use ggufkit::ir::{Model, TensorData};
use ggufkit::quantizers::GgmlType;
use ggufkit::write::{write_model, WriteOptions};

/// xorshift64* with Box–Muller normals.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((v >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: gen_structured IN-f32.gguf OUT.gguf [SEED]");
        std::process::exit(2);
    }
    let seed: u64 = args.get(3).map_or(1, |s| s.parse().expect("SEED"));
    let f = GgufFile::open(std::path::Path::new(&args[1])).expect("input");
    let mut m = Model::from_gguf(&f);
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    for t in &mut m.tensors {
        let is_matrix = t.dims.iter().filter(|&&d| d > 1).count() >= 2;
        if t.ty != GgmlType::F32 || !is_matrix || !t.name.ends_with(".weight") {
            continue;
        }
        let n = t.dims[0] as usize;
        let bytes = t.data.bytes().expect("data");
        let tensor_scale = (0.7 * rng.normal()).exp();
        let cols: Vec<f64> = (0..n)
            .map(|_| {
                let s = (0.5 * rng.normal()).exp();
                if rng.uniform() < 0.005 {
                    s * 6.0
                } else {
                    s
                }
            })
            .collect();
        let out: Vec<u8> = bytes
            .chunks_exact(4)
            .enumerate()
            .flat_map(|(i, c)| {
                let v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64;
                ((v * tensor_scale * cols[i % n]) as f32).to_le_bytes()
            })
            .collect();
        t.data = TensorData::Owned(Arc::new(out));
    }
    let opts = WriteOptions {
        overwrite: true,
        ..Default::default()
    };
    let layout = write_model(&m, std::path::Path::new(&args[2]), &opts).expect("write");
    eprintln!("{}: {} bytes", args[2], layout.file_size);
}
