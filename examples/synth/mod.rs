//! What the synthetic-checkpoint generators of the memory benchmarks share (gen_hf_fp8,
//! gen_hf_moe, gen_hf_prequant): a tensor list written as one `model.safetensors`, streamed
//! tensor by tensor from a deterministic xorshift generator, the config files, and a test
//! fixture's tokenizer copied beside them.

#![allow(dead_code)]

use std::io::{BufWriter, Write};
use std::path::Path;

/// One tensor to write: name, safetensors dtype, shape.
pub type Spec = (String, &'static str, Vec<u64>);

/// Bytes per element of a safetensors dtype.
pub fn dtype_size(dtype: &str) -> u64 {
    match dtype {
        "U8" | "I8" | "F8_E4M3" | "F8_E5M2" => 1,
        "BF16" | "F16" => 2,
        "F64" | "I64" => 8,
        _ => 4,
    }
}

/// A deterministic xorshift64 stream.
pub struct Rng(u64);

impl Default for Rng {
    fn default() -> Self {
        Rng(0x9E37_79B9_7F4A_7C15)
    }
}

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `[0, 1)` (24 bits).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / 16_777_216.0
    }

    /// `n` random bytes, each passed through `f`.
    pub fn bytes(&mut self, n: usize, f: impl Fn(u8) -> u8, out: &mut Vec<u8>) {
        while out.len() < n {
            for b in self.next_u64().to_le_bytes() {
                if out.len() < n {
                    out.push(f(b));
                }
            }
        }
    }
}

/// Writes `tensors` (sorted by name, as safetensors writers do) to `path`; `fill` appends the
/// bytes of one tensor (`elements · dtype_size` of them) to the buffer it is given. Returns
/// the data size in bytes.
pub fn write_safetensors(
    path: &Path,
    tensors: &mut [Spec],
    mut fill: impl FnMut(&Spec, &mut Rng, &mut Vec<u8>),
) -> u64 {
    tensors.sort();
    let mut header = serde_json::Map::new();
    let mut offset = 0u64;
    for (name, dtype, shape) in tensors.iter() {
        let n = shape.iter().product::<u64>() * dtype_size(dtype);
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}),
        );
        offset += n;
    }
    let mut h = serde_json::to_vec(&header).unwrap();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let f = std::fs::File::create(path).expect("create the safetensors file");
    let mut w = BufWriter::with_capacity(8 << 20, f);
    w.write_all(&(h.len() as u64).to_le_bytes()).unwrap();
    w.write_all(&h).unwrap();
    let mut rng = Rng::default();
    let mut buf = Vec::new();
    for t in tensors.iter() {
        buf.clear();
        fill(t, &mut rng, &mut buf);
        let want = t.2.iter().product::<u64>() * dtype_size(t.1);
        assert_eq!(buf.len() as u64, want, "{}: wrong byte count", t.0);
        w.write_all(&buf).unwrap();
    }
    w.flush().unwrap();
    offset
}

/// BF16 values of a weight (uniform in ±0.035) or of a norm (1), for `n` elements.
pub fn bf16_weights(name: &str, n: usize, rng: &mut Rng, out: &mut Vec<u8>) {
    let norm = name.ends_with("norm.weight");
    for _ in 0..n {
        let r = rng.unit();
        let v = if norm { 1.0 } else { (r - 0.5) * 0.07 };
        out.extend_from_slice(&ggufkit::quantizers::f32_to_bf16(v).to_le_bytes());
    }
}

/// Writes `name` in `dir` as pretty JSON.
pub fn write_json(dir: &Path, name: &str, v: &serde_json::Value) {
    std::fs::write(dir.join(name), serde_json::to_string_pretty(v).unwrap())
        .unwrap_or_else(|e| panic!("write {name}: {e}"));
}

/// Copies the tokenizer files of the test fixture `testdata/hf/<fixture>` into `dir`
/// (following its `shared-files.txt`).
pub fn copy_tokenizer(fixture: &str, dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/hf")
        .join(fixture);
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    if let Ok(shared) = std::fs::read_to_string(src.join("shared-files.txt")) {
        for line in shared.lines() {
            if let Some((k, v)) = line.split_once('=') {
                files.push((k.trim().to_string(), src.join(v.trim())));
            }
        }
    }
    for f in [
        "tokenizer.model",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
    ] {
        if src.join(f).is_file() {
            files.push((f.to_string(), src.join(f)));
        }
    }
    for (name, from) in files {
        if name.starts_with("tokenizer") || name == "special_tokens_map.json" {
            std::fs::copy(&from, dir.join(&name))
                .unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
        }
    }
}
