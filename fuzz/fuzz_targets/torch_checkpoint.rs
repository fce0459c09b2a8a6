//! PyTorch checkpoint reader (zip container + restricted unpickler): clean errors, every
//! accepted tensor's range inside the file. Seeds: `testdata/hostile-torch/` and the
//! `pytorch_model*.bin` fixtures of `testdata/hf/*-bin/`.
#![no_main]

use std::path::Path;

use ggufkit::mapped::FileBytes;
use ggufkit_converters::torch::checkpoint::read_checkpoint;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let bytes = FileBytes::from_vec(data.to_vec());
    if let Ok(tensors) = read_checkpoint(Path::new("pytorch_model.bin"), &bytes) {
        for t in tensors {
            let _ = t.bytes().len();
        }
    }
});
