//! Benchmark (not a test): recording N outputs in a batch state directory, as a batch of N
//! outputs does (a pending record before each commit, the completed one after).
//!
//!   cargo run --release -p ggufkit-converters --example bench_batch_state -- 2000

use std::time::Instant;

use ggufkit::pipeline::WrittenFile;
use ggufkit_converters::batch::state::{record_for, settle, store};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let dir = std::env::temp_dir().join(format!("ggufkit-state-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t0 = Instant::now();
    for i in 0..n {
        let path = dir.join(format!("model-{i:05}-Q4_K_M.gguf"));
        let files = [WrittenFile {
            path: path.clone(),
            size: 123_456_789,
            sha256: "ab".repeat(32),
        }];
        store(
            &path,
            Some(&record_for("f".repeat(64).as_str(), &files, false)),
        )
        .unwrap();
        store(
            &path,
            Some(&record_for("f".repeat(64).as_str(), &files, true)),
        )
        .unwrap();
    }
    settle(&dir).unwrap();
    let secs = t0.elapsed().as_secs_f64();
    let size = std::fs::metadata(dir.join(".ggufkit-batch.json"))
        .unwrap()
        .len();
    println!("{n} outputs recorded in {secs:.2} s; state file {size} bytes");
    std::fs::remove_dir_all(&dir).unwrap();
}
