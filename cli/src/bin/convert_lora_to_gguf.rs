//! `convert_lora_to_gguf`: gguf-convert under the name of llama.cpp's LoRA converter script
//! (its default `--outtype f32`), so that scripts written for `convert_lora_to_gguf.py` run
//! unchanged.

#![forbid(unsafe_code)]

#[global_allocator]
static ALLOCATOR: ggufkit_cli::ConverterAllocator = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    ggufkit_cli::convert::main_lora()
}
