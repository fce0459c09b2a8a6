//! tokenizer.json built around a normalizer (and pre-tokenizer and decoder) chosen by the
//! input: Precompiled charsmaps raw, with a consistent header and arbitrary trie, or a valid
//! trie with bytes flipped; every other normalizer with parameters from the input (Replace
//! patterns literal or regex); nested Sequences (common/normalizers.rs, which the converters'
//! tests also use to replay testdata/fuzz-regressions/tokenizer_normalizers/). Each file gives tokenizer keys or a clean error on the GPT-2 and llama-hf
//! vocabulary paths (the `tokenizers` crate loads it, encodes the chkhsh probe and round-trips
//! an unnormalized added token). A panic anywhere aborts (libFuzzer's hook runs before any
//! `catch_unwind`), so this finds what the tokenizer.json checks miss.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ggufkit_converters::hf::tokenizer::VocabKind;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

#[path = "common/bytes.rs"]
mod bytes;
#[path = "common/normalizers.rs"]
mod normalizers;
#[path = "common/vocab.rs"]
mod vocab;

fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("ggufkit-fuzz-tn-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch directory");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let tj = normalizers::tokenizer_json(data);
    let dir = scratch();
    if std::fs::write(dir.join("tokenizer.json"), tj.to_string()).is_err() {
        return;
    }
    let hparams = json!({});
    // On a thread of its own: the `tokenizers` crate's BPE keeps a thread-local cache per model
    // instance that it never frees, so on libFuzzer's one thread the run grew to 2 GB and
    // stopped out of memory (round 9). A conversion builds a handful of tokenizers, so the
    // converter itself does not need this (a thread per call cost the address-space-limited
    // hostile corpus its margin).
    std::thread::scope(|s| {
        s.spawn(|| {
            let kinds = [(VocabKind::Gpt2, "gpt2"), (VocabKind::Llama, "llama")];
            vocab::report_each(dir, &hparams, &kinds);
        });
    });
});
