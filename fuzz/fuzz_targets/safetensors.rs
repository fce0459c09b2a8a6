//! safetensors header parser: clean errors, every accepted tensor's range inside the file.
#![no_main]

use std::path::Path;

use ggufkit::mapped::FileBytes;
use ggufkit_converters::hf::safetensors::parse_file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let bytes = FileBytes::from_vec(data.to_vec());
    if let Ok(tensors) = parse_file(Path::new("fuzz.safetensors"), &bytes) {
        for t in tensors {
            let _ = t.bytes().expect("a parsed tensor's bytes are readable").len();
        }
    }
});
