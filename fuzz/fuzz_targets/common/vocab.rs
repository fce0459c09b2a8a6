//! The vocabulary conversion of one tokenizer directory, once per (kind, architecture).

use std::path::Path;

use ggufkit_converters::hf::tokenizer::{vocab_metadata_report, VocabKind, VocabRequest};
use ggufkit_converters::hf::ModelDir;

/// Runs `vocab_metadata_report` on `dir` for each of `kinds`, discarding the results: the
/// targets look for panics, hangs and unbounded memory, and a clean error is a pass.
pub fn report_each(dir: &Path, hparams: &serde_json::Value, kinds: &[(VocabKind, &str)]) {
    for &(kind, arch) in kinds {
        let req = VocabRequest {
            dir: &ModelDir::new(dir),
            kind,
            arch,
            hparams,
        };
        let _ = vocab_metadata_report(&req);
    }
}
