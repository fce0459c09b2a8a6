//! `gguf-convert`: see [`ggufkit_cli::convert`].

fn main() -> std::process::ExitCode {
    ggufkit_cli::convert::main()
}
