//! `gguf-quantize`: see [`ggufkit_cli::quantize`].

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ggufkit_cli::quantize::main()
}
