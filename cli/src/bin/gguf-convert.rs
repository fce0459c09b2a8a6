//! `gguf-convert`: see [`ggufkit_cli::convert`].

#![forbid(unsafe_code)]

#[global_allocator]
static ALLOCATOR: ggufkit_cli::ConverterAllocator = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    ggufkit_cli::convert::main()
}
