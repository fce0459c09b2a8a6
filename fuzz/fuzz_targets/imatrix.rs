//! imatrix loader (GGUF imatrix and legacy .dat): clean errors, no panics, no huge allocations.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ggufkit::quantize::Imatrix::parse(data.to_vec());
});
