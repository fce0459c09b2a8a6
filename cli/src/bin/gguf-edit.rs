//! `gguf-edit`: see [`ggufkit_cli::edit`].

fn main() -> std::process::ExitCode {
    ggufkit_cli::edit::main()
}
