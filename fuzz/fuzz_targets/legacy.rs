//! Legacy GGML/GGMF/GGJT reader: any bytes give a model or a clean error, and every tensor of
//! an accepted model can be produced.
#![no_main]

use ggufkit_converters::legacy::{read_legacy, LegacyOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("ggufkit-fuzz-legacy-{}.bin", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(c) = read_legacy(&path, &LegacyOptions::default()) {
        for t in &c.model.tensors {
            let _ = t.data.bytes();
        }
    }
    let _ = std::fs::remove_file(&path);
});
