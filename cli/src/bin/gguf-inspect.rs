//! `gguf-inspect`: see [`ggufkit_cli::inspect`].

fn main() -> std::process::ExitCode {
    ggufkit_cli::inspect::main()
}
