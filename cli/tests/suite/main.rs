//! ggufkit-cli's integration tests, one test binary whose modules are named by the feature
//! they check (the index is in ARCHITECTURE.md, "Tests").

mod batch;
mod convert;
mod edit;
mod inspect;
mod output;
mod quantize;
mod security;
