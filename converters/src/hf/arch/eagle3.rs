//! EAGLE-3 speculative-decoding drafts (`LlamaForCausalLMEagle3`, `Eagle3LlamaForCausalLM`,
//! `Eagle3Speculator`, `Eagle3DraftModel`; arch `eagle3`).
//!
//! The reference converts them with its Llama class, which becomes an EAGLE-3 draft when
//! the config has a `draft_vocab_size` and one layer (whatever the class is called; a class
//! named like a draft without them is a plain Llama). Such a draft is converted with
//! `--target-model-dir`: from the target's config.json (as written, `text_config` merged)
//! come the target layers the draft reads (the draft config's
//! `eagle_aux_hidden_state_layer_ids`, else `[2, n / 2, n - 3]` of the target's `n` layers),
//! the target's hidden size when the draft does not give it, and the target vocabulary the
//! draft → target token map is checked against; the vocabulary is the target's tokenizer.
//!
//! The checkpoint's one layer is `midlayer.*` (or `layers.0.*` in the speculators layout,
//! whose decoder config is nested in `transformer_layer_config`); `fc` (the fused target
//! features' projection), `input_norm` and each layer's `hidden_norm` are written under the
//! draft's own names; `t2d` is dropped; `d2t` (draft id → target id offsets) is written last
//! as absolute target ids in I64.

use ggufkit::gguf::keys::{arch_key, draft};
use ggufkit::gguf::{ArrayValue, Value};
use serde_json::Value as Json;

use super::{llama, Arch, Entry, Hooks, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::family::QkPermute;
use crate::hf::int_rows::{i64_table, read_i64};
use crate::hf::names::{block_id, Tensor, DECODER};
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The EAGLE-3 draft (the reference's `LlamaModel` switched to `eagle3`).
pub const EAGLE3: Arch = Arch {
    hf_names: &[
        "LlamaForCausalLMEagle3",
        "Eagle3LlamaForCausalLM",
        "Eagle3Speculator",
        "Eagle3DraftModel",
    ],
    model_types: &[],
    composites: &[],
    gguf: "eagle3",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks {
        from_target: true,
        ..VocabQuirks::NONE
    },
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: llama::filter,
    rules: Rules {
        headless_arch: Some("LlamaModel"),
        permute_qk: QkPermute::WeightsAndBiases,
        experts: &[llama::MIXTRAL_EXPERTS],
        rename: Some(rename),
        hook: Some(hook),
        late: Some(d2t),
        ..Rules::NONE
    },
    params: llama::params,
    extra,
    hooks: Hooks {
        adjust: Some(merge_layer_config),
        switch: Some(unless_draft),
        ..Hooks::NONE
    },
};

/// `LlamaModel.index_tensors`: a speculators checkpoint's decoder config, nested in
/// `transformer_layer_config`, is merged into the root (its values win).
pub fn merge_layer_config(hp: &mut Hparams) -> Result<(), ConvertError> {
    hp.merge_into_root("transformer_layer_config");
    Ok(())
}

/// Whether the Llama class takes this config for an EAGLE-3 draft: a `draft_vocab_size`
/// and exactly one layer. A draft without a target model is refused, as the reference's
/// constructor refuses it.
fn is_draft(hp: &Hparams) -> Result<bool, ConvertError> {
    if hp.get("draft_vocab_size").is_none() {
        return Ok(false);
    }
    let layers = hp
        .get("num_hidden_layers")
        .ok_or_else(|| hp.missing(&["num_hidden_layers"]))?;
    let one = json_u64(layers) == Some(1) || layers.as_f64() == Some(1.0);
    if one && hp.target.is_none() {
        return Err(ConvertError::NeedsTarget {
            path: hp.path.clone(),
            class: hp.arch.clone(),
        });
    }
    Ok(one)
}

/// The Llama class's switch: an EAGLE-3 draft's config makes it this description.
pub fn when_draft(hp: &Hparams) -> Result<Option<&'static Arch>, ConvertError> {
    Ok(is_draft(hp)?.then_some(&EAGLE3))
}

/// A class named like a draft whose config is not one's is the plain Llama class.
fn unless_draft(hp: &Hparams) -> Result<Option<&'static Arch>, ConvertError> {
    Ok((!is_draft(hp)?).then_some(&llama::LLAMA))
}

/// The one layer's names (`midlayer.*`, the speculators' `layers.0.*`) as a Llama's.
fn rename(_: &Hparams, name: &str) -> String {
    if let Some(rest) = name.strip_prefix("midlayer.") {
        format!("model.layers.0.{rest}")
    } else if name.starts_with("layers.0.") {
        format!("model.{name}")
    } else {
        name.to_string()
    }
}

/// The draft's own tensors, before the Llama rules.
fn hook(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    Ok(match name.as_str() {
        "fc.weight" => Modified::Named(vec![(name, expr)]),
        "input_norm.weight" => Modified::Named(vec![(
            format!("{}.weight", Tensor::EncOutputNorm.gguf()),
            expr,
        )]),
        // The target → draft map is not used at runtime.
        "t2d" => Modified::Drop,
        _ => match (name.strip_suffix(".hidden_norm.weight"), block_id(&name)) {
            (Some(_), Some(bid)) => {
                let gguf = Tensor::AttnNorm2.gguf().replace("{bid}", &bid.to_string());
                Modified::Named(vec![(format!("{gguf}.weight"), expr)])
            }
            _ => Modified::Pass(name, expr),
        },
    })
}

/// The target's config value `key`, which the reference requires.
fn target_value<'a>(
    cfg: &'a serde_json::Map<String, Json>,
    path: &std::path::Path,
    key: &str,
) -> Result<&'a Json, ConvertError> {
    cfg.get(key)
        .ok_or_else(|| ConvertError::missing_key(path, key, "the draft's target model needs it"))
}

/// An integer of the target's config.
fn target_int(
    cfg: &serde_json::Map<String, Json>,
    path: &std::path::Path,
    key: &str,
) -> Result<i64, ConvertError> {
    let v = target_value(cfg, path, key)?;
    v.as_i64().ok_or_else(|| ConvertError::BadHparam {
        path: path.to_path_buf(),
        keys: vec![key.to_string()],
        expected: "an integer".into(),
        found: v.to_string(),
    })
}

/// A flag of the draft's config.json as written (absent or null: false).
fn raw_flag(hp: &Hparams, key: &str) -> Result<bool, ConvertError> {
    match hp.raw.get(key) {
        None | Some(Json::Null) => Ok(false),
        Some(Json::Bool(b)) => Ok(*b),
        Some(v) => Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec![key.to_string()],
            expected: "true or false".into(),
            found: v.to_string(),
        }),
    }
}

/// The target layers: the draft config's own list when it is a non-empty one, else the
/// reference's choice from the target's layer count (read first: the reference needs it
/// either way).
fn target_layers(hp: &Hparams, n_layers: i64) -> Result<Vec<i32>, ConvertError> {
    let key = "eagle_aux_hidden_state_layer_ids";
    let bad = |v: &Json| ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![key.to_string()],
        expected: "a list of 32-bit layer numbers".into(),
        found: v.to_string(),
    };
    match hp.raw.get(key) {
        Some(Json::Array(ids)) if !ids.is_empty() => ids
            .iter()
            .map(|v| {
                v.as_i64()
                    .and_then(|x| i32::try_from(x).ok())
                    .ok_or_else(|| bad(v))
            })
            .collect(),
        None | Some(Json::Null) | Some(Json::Array(_)) => {
            let derived = [2, n_layers.div_euclid(2), n_layers - 3];
            derived
                .iter()
                .map(|x| i32::try_from(*x).map_err(|_| bad(&Json::from(*x))))
                .collect()
        }
        Some(v) => Err(bad(v)),
    }
}

/// `target_hidden_size`: the draft config's, else the target's `hidden_size`.
fn target_hidden_size(
    hp: &Hparams,
    cfg: &serde_json::Map<String, Json>,
    path: &std::path::Path,
) -> Result<u32, ConvertError> {
    let (v, from, key) = match hp.raw.get("target_hidden_size").filter(|v| !v.is_null()) {
        Some(v) => (v, hp.path.as_path(), "target_hidden_size"),
        None => (target_value(cfg, path, "hidden_size")?, path, "hidden_size"),
    };
    json_u64(v)
        .and_then(|x| u32::try_from(x).ok())
        .ok_or_else(|| ConvertError::BadHparam {
            path: from.to_path_buf(),
            keys: vec![key.to_string()],
            expected: "a 32-bit count".into(),
            found: v.to_string(),
        })
}

/// The Llama-3 rope factors, and the draft's keys (written by the reference's constructor,
/// right after the architecture).
fn extra(hp: &Hparams) -> Result<super::Extra, ConvertError> {
    let mut out = llama::rope_freqs(hp)?;
    let (cfg, path) = hp.target_config()?;
    target_int(&cfg, &path, "vocab_size")?;
    let n_layers = target_int(&cfg, &path, "num_hidden_layers")?;
    let layers = target_layers(hp, n_layers)?;
    let hidden = target_hidden_size(hp, &cfg, &path)?;
    let key = |k| arch_key(EAGLE3.gguf, k);
    out.early_kvs.extend([
        (
            key(draft::TARGET_LAYERS),
            Value::Array(ArrayValue::I32(layers)),
        ),
        (key(draft::TARGET_HIDDEN_SIZE), Value::U32(hidden)),
        (
            key(draft::NORM_BEFORE_RESIDUAL),
            Value::Bool(raw_flag(hp, "norm_before_residual")?),
        ),
        (
            key(draft::NORM_BEFORE_FC),
            Value::Bool(raw_flag(hp, "norm_before_fc")?),
        ),
    ]);
    Ok(out)
}

/// `prepare_tensors`' `d2t`: the draft → target offsets as absolute target ids (offset plus
/// draft id), each a distinct id of the target vocabulary, written last as I64.
fn d2t(hp: &Hparams, entries: &mut Vec<Entry>) -> Result<Vec<(String, Expr)>, ConvertError> {
    let Some(i) = entries.iter().position(|e| e.name == "d2t") else {
        return Ok(Vec::new());
    };
    let e = entries.remove(i);
    let bad = |problem: String| ConvertError::Tensor {
        name: e.name.clone(),
        problem,
    };
    let source = e
        .expr
        .as_read()
        .ok_or_else(|| bad("expected a stored integer tensor".into()))?
        .clone();
    let (cfg, path) = hp.target_config()?;
    let vocab = target_int(&cfg, &path, "vocab_size")?;
    let mut ids = read_i64(&source)?;
    for (k, id) in ids.iter_mut().enumerate() {
        *id = id.wrapping_add(k as i64);
    }
    if ids.iter().any(|&id| id < 0 || id >= vocab) {
        return Err(bad(format!(
            "EAGLE-3 d2t target ids out of range for target vocab size {vocab}"
        )));
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad("EAGLE-3 d2t contains duplicate target ids".into()));
    }
    Ok(vec![(
        "d2t".to_string(),
        i64_table("d2t", ids, vec![source]),
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_layer_is_renamed_as_a_llama_layer() {
        let hp = crate::hf::config::from_json(
            serde_json::json!({"architectures": ["Eagle3Speculator"]}),
            "config.json".into(),
        )
        .unwrap();
        assert_eq!(
            rename(&hp, "midlayer.self_attn.q_proj.weight"),
            "model.layers.0.self_attn.q_proj.weight"
        );
        assert_eq!(
            rename(&hp, "layers.0.hidden_norm.weight"),
            "model.layers.0.hidden_norm.weight"
        );
        assert_eq!(rename(&hp, "fc.weight"), "fc.weight");
    }
}
