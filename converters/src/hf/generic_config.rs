//! transformers' generic `PreTrainedConfig`, as its tokenizer loader builds one from a
//! config.json whose `model_type` it has no class for (or that has none): the checks that make
//! it fail, so that the classes whose `set_vocab` loads the tokenizer with `AutoTokenizer`
//! refuse such checkpoints where the reference fails on them.

use std::path::Path;

use serde_json::{Map, Value as Json};

use super::config::{json_u64, Hparams};
use crate::error::ConvertError;

/// The rope types whose standardization, in a generic config, reads
/// `max_position_embeddings` before it is set.
const SCALED_ROPES: [&str; 3] = ["llama3", "yarn", "longrope"];

/// Whether a generic config fails on the rope: transformers 4's one-dict `rope_scaling` of a
/// scaled type without `rope_parameters`.
pub(crate) fn scaled_rope_scaling_fails(raw: &Map<String, Json>) -> bool {
    let params_absent = raw.get("rope_parameters").is_none_or(Json::is_null);
    let scaled = raw
        .get("rope_scaling")
        .and_then(Json::as_object)
        .is_some_and(|m| {
            !m.is_empty()
                && !m.values().all(Json::is_object)
                && SCALED_ROPES.contains(
                    &m.get("rope_type")
                        .or_else(|| m.get("type"))
                        .and_then(Json::as_str)
                        .unwrap_or("default"),
                )
        });
    params_absent && scaled
}

/// The tokenizer loader's generic config (used for a config without `model_type`) checks
/// `layer_types` and `mlp_layer_types`: known kinds, as many as `num_hidden_layers`; the
/// reference fails when it does not accept them.
pub(crate) fn check_layer_lists(hp: &Hparams) -> Result<(), ConvertError> {
    check_layer_lists_of(&hp.raw, &hp.path)
}

/// [`check_layer_lists`] on config.json as written (`raw`, read from `path`), for a step
/// that has the file rather than the merged hparams (a class's vocabulary step).
pub(crate) fn check_layer_lists_of(raw: &Json, path: &Path) -> Result<(), ConvertError> {
    if raw.get("model_type").is_some() {
        return Ok(());
    }
    const ATTN: &[&str] = &[
        "full_attention",
        "sliding_attention",
        "chunked_attention",
        "window_attention",
        "indexed_attention",
        "compressed_sparse_attention",
        "heavily_compressed_attention",
        "minimax_m3_sparse",
        "conv",
        "moe",
        "hybrid",
        "hybrid_sliding",
        "reference_sliding_attention",
        "linear_attention",
    ];
    for (key, allowed) in [
        ("layer_types", ATTN),
        ("mlp_layer_types", &["sparse", "dense"]),
    ] {
        let Some(Json::Array(kinds)) = raw.get(key) else {
            return Ok(());
        };
        let known = kinds
            .iter()
            .all(|k| k.as_str().is_some_and(|s| allowed.contains(&s)));
        let n = raw.get("num_hidden_layers").and_then(json_u64);
        if !known || n.is_some_and(|n| n != kinds.len() as u64) {
            return Err(ConvertError::out_of_range(
                path,
                key,
                Json::Array(kinds.clone()),
                "known layer kinds, one per num_hidden_layers layer (transformers' check, \
                 which the reference's tokenizer loading runs)",
            ));
        }
    }
    Ok(())
}
