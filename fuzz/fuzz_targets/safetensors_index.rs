//! `model.safetensors.index.json`: any bytes as the index of a fixed two-shard model give the
//! shards or a clean error (weight map checked against the shards, names kept inside the
//! model directory).
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ggufkit_converters::hf::safetensors::index_dir;
use libfuzzer_sys::fuzz_target;

const SHARDS: [&str; 2] = [
    "model-00001-of-00002.safetensors",
    "model-00002-of-00002.safetensors",
];

/// A scratch model directory for this process: links to the llama-spm fixture's two shards.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("ggufkit-fuzz-index-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch directory");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/hf/llama-spm");
        for s in SHARDS {
            let link = d.join(s);
            if !link.exists() {
                std::os::unix::fs::symlink(src.join(s).canonicalize().expect("fixture"), &link)
                    .expect("shard link");
            }
        }
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch();
    if std::fs::write(dir.join("model.safetensors.index.json"), data).is_err() {
        return;
    }
    if let Ok(shards) = index_dir(dir) {
        for t in &shards.tensors {
            let _ = t.bytes().expect("a parsed tensor's bytes are readable").len();
        }
    }
});
