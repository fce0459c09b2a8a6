//! `convert_hf_to_gguf`: gguf-convert under the name of llama.cpp's converter script, so that
//! scripts written for `convert_hf_to_gguf.py` run unchanged.

#![forbid(unsafe_code)]

#[global_allocator]
static ALLOCATOR: ggufkit_cli::ConverterAllocator = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    ggufkit_cli::convert::main()
}
