//! DSpark speculative-decoding drafts (`DSparkDraftModel`, `DSparkSpeculator`,
//! `Qwen3DSparkModel`, `Lfm2DSparkDraftModel`, `LingDSparkModel`; arch `dflash`), converted
//! with `--target-model-dir`.
//!
//! A DFlash draft ([`super::dflash`]) with a semi-autoregressive Markov head
//! (`markov_head.markov_w1` / `markov_w2`) and an optional confidence head
//! (`confidence_head.proj`). Two config layouts are read:
//!
//! - the DFlash lineage: a Qwen3 config whose `target_layer_ids` (zero-based) and
//!   `mask_token_id` sit at the root when there is no `dflash_config`;
//! - the speculators layout: the decoder's config nested in `transformer_layer_config`
//!   (merged into the root, its values winning) and `aux_hidden_state_layer_ids` (one-based),
//!   which become the `dflash_config` the DFlash rules read.
//!
//! Beyond DFlash's keys it writes `sample_from_anchor` (the config's, else true for the
//! DFlash lineage and false for the speculators layout, decided on the config as written)
//! and `has_confidence_head` (whether the checkpoint has the head). A draft whose vocabulary
//! is the target's drops its own output head (the target's is used); a reduced draft
//! vocabulary (`draft_vocab_size`) keeps it and needs the `d2t` table (draft id → target id
//! offsets), written last as absolute ids in I64; `t2d` is dropped.

use ggufkit::gguf::keys::draft;
use serde_json::{Map, Value as Json};

use super::{dflash, Arch, Entry, Hooks, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::int_rows::{i64_table, read_i64};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// The DSpark draft (the reference's `DSparkModel`, a DFlash subclass).
pub const DSPARK: Arch = Arch {
    hf_names: &[
        "Qwen3DSparkModel",
        "DSparkDraftModel",
        "DSparkSpeculator",
        "Lfm2DSparkDraftModel",
        "LingDSparkModel",
    ],
    model_types: &[],
    composites: &[],
    gguf: "dflash",
    // The target class's own path, as DFlash's.
    vocab: VocabKind::Qwen2,
    vocab_quirks: super::dflash::FROM_TARGET_CLASS,
    tensors: super::dflash::DFLASH_TENSORS,
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        mtp: Some(confidence_head),
        late: Some(d2t),
        ..Rules::NONE
    },
    params,
    extra: dflash::extra,
    hooks: Hooks {
        adjust: Some(adjust),
        vocab_tail: Some(dflash::mask_token),
        ..Hooks::NONE
    },
};

/// The hparam holding the class's `sample_from_anchor` decision (made on the config as
/// written, before the nested decoder config is merged).
const SAMPLE_FROM_ANCHOR: &str = "sample_from_anchor";

/// The hparam holding whether the checkpoint has a confidence head (its tensors are
/// looked at once they are filtered).
const HAS_CONFIDENCE_HEAD: &str = "has_confidence_head";

/// The draft → target offsets table, after the DFlash filter's `model.` prefix.
const D2T: &str = "model.d2t";

/// `DSparkModel.filter_tensors`: `t2d` (not used at runtime) is dropped, then DFlash's.
fn filter(name: &str) -> Option<String> {
    if name == "t2d" {
        return None;
    }
    dflash::filter(name)
}

/// `DSparkModel.__init__`: the `sample_from_anchor` decision, the nested decoder config
/// merged, both layouts' target layers and mask token as a `dflash_config` (when the config
/// has none), the Markov head type and the draft vocabulary checked.
fn adjust(hp: &mut Hparams) -> Result<(), ConvertError> {
    let anchor = match hp.get(SAMPLE_FROM_ANCHOR) {
        Some(v) => dflash::truthy(v),
        None => {
            hp.get("transformer_layer_config").is_none()
                && hp.get("aux_hidden_state_layer_ids").is_none()
        }
    };
    hp.merge_into_root("transformer_layer_config");
    hp.map
        .insert(SAMPLE_FROM_ANCHOR.to_string(), Json::Bool(anchor));
    if !hp.map.contains_key("dflash_config") {
        let cfg = normalised_dflash_config(hp)?;
        hp.map
            .insert("dflash_config".to_string(), Json::Object(cfg));
    }
    let head = hp
        .get("markov_head_type")
        .cloned()
        .unwrap_or(Json::from("vanilla"));
    if head != "vanilla" {
        return Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["markov_head_type".into()],
            expected: "'vanilla' (the only Markov head supported)".into(),
            found: head.to_string(),
        });
    }
    let (draft_vocab, vocab) = vocab_sizes(hp)?;
    if draft_vocab > vocab {
        return Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["draft_vocab_size".into()],
            expected: format!("at most vocab_size {vocab}"),
            found: draft_vocab.to_string(),
        });
    }
    Ok(())
}

/// The `dflash_config` of a config without one: from the speculators'
/// `aux_hidden_state_layer_ids` (one-based, made zero-based) and the root `mask_token_id`
/// (null when absent), else the root's `target_layer_ids` and `mask_token_id` that exist.
fn normalised_dflash_config(hp: &Hparams) -> Result<Map<String, Json>, ConvertError> {
    let mut cfg = Map::new();
    if let Some(aux) = hp.get("aux_hidden_state_layer_ids") {
        let bad = || ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["aux_hidden_state_layer_ids".into()],
            expected: "a list of layer numbers".into(),
            found: aux.to_string(),
        };
        let ids = aux
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|v| v.as_i64().and_then(|i| i.checked_sub(1)).map(Json::from))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let mask = hp.get("mask_token_id").cloned().unwrap_or(Json::Null);
        cfg.insert("mask_token_id".into(), mask);
        cfg.insert("target_layer_ids".into(), Json::Array(ids));
    } else {
        for key in ["target_layer_ids", "mask_token_id"] {
            if let Some(v) = hp.get(key) {
                cfg.insert(key.into(), v.clone());
            }
        }
    }
    Ok(cfg)
}

/// `(draft_vocab_size or vocab_size, vocab_size)`: a missing, null or zero
/// `draft_vocab_size` is the whole vocabulary.
fn vocab_sizes(hp: &Hparams) -> Result<(u64, u64), ConvertError> {
    let vocab = hp.req_u64(&["vocab_size"])?;
    let draft = match hp.get("draft_vocab_size") {
        None | Some(Json::Null) => vocab,
        Some(v) => match json_u64(v) {
            Some(0) => vocab,
            Some(n) => n,
            None => {
                return Err(ConvertError::BadHparam {
                    path: hp.path.clone(),
                    keys: vec!["draft_vocab_size".into()],
                    expected: "a count".into(),
                    found: v.to_string(),
                })
            }
        },
    };
    Ok((draft, vocab))
}

/// Records whether the filtered checkpoint has a confidence head (the reference looks for
/// `confidence_head.proj` among its tensor names).
pub(super) fn confidence_head(
    hp: &mut Hparams,
    entries: Vec<Entry>,
) -> Result<Vec<Entry>, ConvertError> {
    let has = entries
        .iter()
        .any(|e| e.name.contains("confidence_head.proj"));
    hp.map
        .insert(HAS_CONFIDENCE_HEAD.to_string(), Json::Bool(has));
    Ok(entries)
}

/// `DSparkModel.modify_tensors`: the draft's own output head is dropped when the draft
/// vocabulary is the target's; everything else goes through DFlash's rules.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let (draft_vocab, vocab) = vocab_sizes(hp)?;
    if draft_vocab == vocab && name.ends_with("lm_head.weight") {
        return Ok(Modified::Drop);
    }
    dflash::hook(hp, name, expr)
}

/// `DSparkModel.set_gguf_parameters`: DFlash's keys, then the anchor and confidence-head
/// flags.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    dflash::params(p)?;
    let flag = |key| p.hp.get(key).and_then(Json::as_bool).unwrap_or(false);
    let (anchor, confidence) = (flag(SAMPLE_FROM_ANCHOR), flag(HAS_CONFIDENCE_HEAD));
    p.bool(draft::SAMPLE_FROM_ANCHOR, anchor);
    p.bool(draft::HAS_CONFIDENCE_HEAD, confidence);
    Ok(())
}

/// `DSparkModel.prepare_tensors`' `d2t`: required when the draft vocabulary is reduced; the
/// offsets made absolute (offset plus draft id), one per draft token, each a distinct id of
/// the draft config's `vocab_size`, written last as I64.
fn d2t(hp: &Hparams, entries: &mut Vec<Entry>) -> Result<Vec<(String, Expr)>, ConvertError> {
    let (draft_vocab, vocab) = vocab_sizes(hp)?;
    let bad = |problem: String| ConvertError::Tensor {
        name: D2T.to_string(),
        problem,
    };
    let Some(i) = entries.iter().position(|e| e.name == D2T) else {
        if draft_vocab < vocab {
            return Err(bad(format!(
                "draft_vocab_size {draft_vocab} < vocab_size {vocab} but no d2t table found"
            )));
        }
        return Ok(Vec::new());
    };
    let e = entries.remove(i);
    let source = e
        .expr
        .as_read()
        .ok_or_else(|| bad("expected a stored integer tensor".into()))?
        .clone();
    let mut ids = read_i64(&source)?;
    if ids.len() as u64 != draft_vocab {
        return Err(bad(format!(
            "d2t size {} does not match draft_vocab_size {draft_vocab}",
            ids.len()
        )));
    }
    for (k, id) in ids.iter_mut().enumerate() {
        *id = id.wrapping_add(k as i64);
    }
    if ids.iter().any(|&id| id < 0 || id as u64 >= vocab) {
        return Err(bad(format!(
            "d2t target ids out of range for target vocab size {vocab}"
        )));
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad("d2t contains duplicate target ids".into()));
    }
    Ok(vec![(
        "d2t".to_string(),
        i64_table("d2t", ids, vec![source]),
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hparams(v: Json) -> Hparams {
        crate::hf::config::from_json(v, "config.json".into()).unwrap()
    }

    #[test]
    fn the_speculators_layout_becomes_a_dflash_config() {
        let mut hp = hparams(serde_json::json!({
            "architectures": ["DSparkSpeculator"],
            "aux_hidden_state_layer_ids": [1, 5],
            "mask_token_id": 7,
            "transformer_layer_config": {"vocab_size": 10, "hidden_size": 8},
        }));
        adjust(&mut hp).unwrap();
        assert_eq!(hp.get(SAMPLE_FROM_ANCHOR), Some(&Json::Bool(false)));
        assert_eq!(
            hp.get("dflash_config"),
            Some(&serde_json::json!({"mask_token_id": 7, "target_layer_ids": [0, 4]}))
        );
        assert_eq!(hp.get("vocab_size"), Some(&Json::from(10)));
    }

    #[test]
    fn the_dflash_lineage_samples_from_the_anchor() {
        let mut hp = hparams(serde_json::json!({
            "architectures": ["DSparkDraftModel"],
            "target_layer_ids": [0, 2],
            "vocab_size": 10,
        }));
        adjust(&mut hp).unwrap();
        assert_eq!(hp.get(SAMPLE_FROM_ANCHOR), Some(&Json::Bool(true)));
        assert_eq!(
            hp.get("dflash_config"),
            Some(&serde_json::json!({"target_layer_ids": [0, 2]}))
        );
    }

    #[test]
    fn another_markov_head_or_a_larger_draft_vocabulary_is_refused() {
        for (key, v) in [
            ("markov_head_type", serde_json::json!("gated")),
            ("draft_vocab_size", serde_json::json!(11)),
        ] {
            let mut hp = hparams(serde_json::json!({
                "architectures": ["DSparkDraftModel"],
                "vocab_size": 10,
                key: v,
            }));
            match adjust(&mut hp) {
                Err(ConvertError::BadHparam { keys, .. }) => assert_eq!(keys, vec![key]),
                r => panic!("{key}: {:?}", r.err()),
            }
        }
    }
}
