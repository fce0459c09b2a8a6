//! Reads a GGUF and writes it back unchanged through the IR and the streaming writer (the
//! round-trip copy measured by `scripts/bench.sh`).
//!
//! `cargo run --release --example roundtrip -- IN.gguf OUT.gguf`

use ggufkit::gguf::GgufFile;
use ggufkit::ir::Model;
use ggufkit::write::{write_model, WriteOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: roundtrip IN.gguf OUT.gguf");
        std::process::exit(2);
    }
    let input = std::path::PathBuf::from(&args[1]);
    let file = GgufFile::open(&input).unwrap_or_else(|e| panic!("{e}"));
    let opts = WriteOptions {
        inputs: vec![input],
        overwrite: true,
        ..Default::default()
    };
    write_model(
        &Model::from_gguf(&file),
        std::path::Path::new(&args[2]),
        &opts,
    )
    .unwrap_or_else(|e| panic!("{e}"));
}
