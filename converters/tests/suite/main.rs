//! ggufkit-converters's integration tests, one test binary whose modules are named by the feature
//! they check (the index is in ARCHITECTURE.md, "Tests").

mod batch;
mod convert;
mod errors;
mod remote;
mod repository;
mod security;
mod tokenizer;

// The tokenizer_normalizers fuzz target's input decoder (`security::hardening_hf` replays its
// regression inputs); `normalizers` names `crate::bytes`, so both sit at the crate root.
#[path = "../../../fuzz/fuzz_targets/common/bytes.rs"]
mod bytes;
#[path = "../../../fuzz/fuzz_targets/common/normalizers.rs"]
mod normalizers;
