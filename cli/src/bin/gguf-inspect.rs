//! `gguf-inspect`: see [`ggufkit_cli::inspect`].

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ggufkit_cli::inspect::main()
}
