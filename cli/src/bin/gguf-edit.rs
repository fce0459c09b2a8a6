//! `gguf-edit`: see [`ggufkit_cli::edit`].

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ggufkit_cli::edit::main()
}
