//! `convert_hf_to_gguf`: gguf-convert under the name of llama.cpp's converter script, for
//! scripts that call it by that name (its command line is accepted unchanged).

#[path = "gguf-convert.rs"]
mod gguf_convert;

fn main() -> std::process::ExitCode {
    gguf_convert::main()
}
