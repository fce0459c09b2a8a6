//! `gguf-convert`: see [`ggufkit_cli::convert`].

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ggufkit_cli::convert::main()
}
