//! `gguf-quantize`: see [`ggufkit_cli::quantize`].

fn main() -> std::process::ExitCode {
    ggufkit_cli::quantize::main()
}
