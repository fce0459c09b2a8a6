//! config.json → hparams: any JSON gives hparams or a clean error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = ggufkit_converters::hf::config::from_json(json, "config.json".into());
    }
});
