//! The fixtures whose reference conversion llama.cpp cannot load: their hyperparameters, as
//! the reference writes them, contradict their tensors. gguf-convert refuses them by default;
//! their goldens are what the reference writes, so the golden suites convert them with
//! `allow_unloadable` (and check that the default refuses them).

use std::path::Path;

/// Each fixture, and the contradiction in the file the reference writes from it.
pub const UNLOADABLE_FIXTURES: &[(&str, &str)] = &[
    (
        "qwen3moe-nvfp4",
        "64-wide NVFP4 experts in a 32-wide model (NVFP4 rows are whole 64-value blocks)",
    ),
    (
        "granitehybrid-attn",
        "feed_forward_length is intermediate_size, the dense MLP is shared_intermediate_size",
    ),
    (
        "granitehybrid-attn-s2",
        "feed_forward_length is intermediate_size, the dense MLP is shared_intermediate_size",
    ),
    (
        "nomicbert",
        "embedding_length and block_count are BERT's defaults (768, 12), not n_embd / n_layer",
    ),
    (
        "nomicbert-s2",
        "embedding_length and block_count are BERT's defaults (768, 12), not n_embd / n_layer",
    ),
    (
        "minicpmv46-text",
        "block_count counts the config's MTP layer, whose tensors the class drops",
    ),
    (
        "minicpmv46-text-s2",
        "block_count counts the config's MTP layer, whose tensors the class drops",
    ),
];

/// Whether the fixture directory `dir` (named after its fixture) is one of
/// [`UNLOADABLE_FIXTURES`].
pub fn is_unloadable(dir: &Path) -> bool {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    UNLOADABLE_FIXTURES.iter().any(|(f, _)| *f == name)
}
