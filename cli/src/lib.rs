//! The ggufkit command-line tools: each tool is a module whose `main` parses its command line,
//! plans the work with the libraries below (the `ggufkit` core and its output engine, the
//! `ggufkit-converters` readers), executes it and renders the outcome. The binaries in
//! `src/bin/` only call these.
//!
//! * [`convert`]: `gguf-convert` (HF / GGUF / legacy GGML → GGUF; also `convert_hf_to_gguf`).
//! * [`quantize`]: `gguf-quantize` (a drop-in `llama-quantize`).
//! * [`edit`]: `gguf-edit` (metadata edits as gguf-py's `gguf_new_metadata.py` makes them).
//! * [`inspect`]: `gguf-inspect` (dump, manifest, diff, verify, loadability checks).
//! * [`edge`]: what the tools share at their edge: exit codes, error lines, completions.
//!
//! ```no_run
//! // A binary is one line: the tool's module does the rest.
//! fn main() -> std::process::ExitCode {
//!     ggufkit_cli::quantize::main()
//! }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// The converters' allocator. Reading a tokenizer makes a few hundred thousand small
/// allocations on two threads, where glibc's per-thread arenas spend most of their time
/// growing their heaps; mimalloc takes about 40% less CPU there. The converter binaries
/// declare it as their global allocator; the other tools keep the system's, whose peak
/// memory when quantizing is lower.
pub type ConverterAllocator = mimalloc::MiMalloc;

pub mod convert;
pub mod edge;
pub mod edit;
pub mod inspect;
pub mod quantize;
mod remote;
