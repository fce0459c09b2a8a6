//! ggufkit's integration tests, one test binary whose modules are named by the feature
//! they check (the index is in ARCHITECTURE.md, "Tests").

mod gguf;
mod security;
