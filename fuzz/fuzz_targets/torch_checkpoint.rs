//! PyTorch checkpoint reader (zip container + restricted unpickler): clean errors, every
//! accepted tensor's range inside the file. Two kinds of input: an input that starts with
//! `PK` is the checkpoint file itself (byte-level mutations; seeds: `testdata/hostile-torch/`
//! and the `pytorch_model*.bin` fixtures of `testdata/hf/*-bin/`); any other input drives the
//! structure-aware generator of `common/torch.rs` (pickle opcode sequences in a well-formed
//! archive).
#![no_main]

#[path = "common/bytes.rs"]
mod bytes;
#[path = "common/torch.rs"]
mod torch;

use std::path::Path;

use ggufkit::mapped::FileBytes;
use ggufkit_converters::torch::checkpoint::read_checkpoint;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let file = if data.starts_with(b"PK") {
        data.to_vec()
    } else {
        torch::checkpoint(data)
    };
    let len = file.len();
    let bytes = FileBytes::from_vec(file);
    if let Ok(tensors) = read_checkpoint(Path::new("pytorch_model.bin"), &bytes) {
        for t in tensors {
            assert!(t.bytes().expect("a parsed tensor's bytes are readable").len() <= len);
        }
    }
});
