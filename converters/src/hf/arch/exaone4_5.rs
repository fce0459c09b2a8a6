//! The text model of `Exaone4_5_ForConditionalGeneration` (EXAONE 4.5; arch `exaone4`,
//! `Exaone4_5_TextModel` in `conversion/exaone.py`).
//!
//! EXAONE 4's conversion of the composite's `text_config` (an `exaone4` config; the hub's
//! `exaone4_5_text` spelling is read as `exaone4`), the text model under
//! `model.language_model.` and the vision tower dropped. With `num_nextn_predict_layers` > 0
//! (null counts as 0) the next-token-prediction layers follow the main ones
//! (`num_hidden_layers + num_nextn_predict_layers` blocks, and `nextn_predict_layers`
//! written): `mtp.layers.{i}.*` becomes block `num_hidden_layers + i`, or, with
//! `mtp_share_layers`, every MTP block gets a copy; `mtp.fc`, `mtp.pre_fc_norm_embedding`,
//! `mtp.pre_fc_norm_hidden` and `mtp.norm` (the `eh_proj`, `enorm`, `hnorm`,
//! `shared_head.norm` every MTP block shares) are written once per MTP block, and any other
//! `mtp.*` tensor is left out. Without MTP layers every `mtp.*` tensor is left out.
//!
//! The reference builds the vocabulary with `AutoTokenizer`, which builds the composite
//! config with its typed sub-configs and, unlike the hparams reader, has no fallback to
//! config.json as written: a config those classes reject (EXAONE 4's derived `layer_types`
//! without a sliding window or with a pattern that is not a period, a tower size of the
//! wrong type) refuses the text half, where the projector still converts.

use ggufkit::gguf::keys::mla;
use serde_json::Value as Json;

use super::{exaone4, keep, Arch, Entry, Hooks, Rules, TextType};
use crate::hf::config::Hparams;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The EXAONE 4.5 text model.
pub const EXAONE4_5: Arch = Arch {
    hf_names: &["Exaone4_5_ForConditionalGeneration"],
    model_types: &[],
    composites: &[(
        "exaone4_5",
        TextType::NamedRenamed("exaone4", &[("exaone4_5_text", "exaone4")]),
    )],
    gguf: "exaone4",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::Output,
        Tensor::OutputNorm,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::AttnPostNorm,
        Tensor::FfnPostNorm,
        Tensor::FfnGate,
        Tensor::FfnUp,
        Tensor::FfnDown,
        Tensor::NextnEhProj,
        Tensor::NextnEnorm,
        Tensor::NextnHnorm,
        Tensor::NextnSharedHeadNorm,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        nextn_blocks: true,
        mtp: Some(mtp_entries),
        ..Rules::NONE
    },
    params,
    extra: exaone4::extra,
    hooks: Hooks {
        adjust: Some(refuse_unbuildable_config),
        ..Hooks::NONE
    },
};

/// The `mtp.*` tensors the MTP blocks share, and the name each takes in every MTP block.
const MTP_SHARED: &[(&str, &str)] = &[
    ("mtp.fc", "eh_proj"),
    ("mtp.pre_fc_norm_embedding", "enorm"),
    ("mtp.pre_fc_norm_hidden", "hnorm"),
    ("mtp.norm", "shared_head.norm"),
];

/// `num_nextn_predict_layers` as the class reads it (`int(value or 0)`).
fn nextn_layers(hp: &Hparams) -> Result<u64, ConvertError> {
    Ok(hp.find_u64(&["num_nextn_predict_layers"])?.unwrap_or(0))
}

/// `Exaone4_5_TextModel.modify_tensors`' renaming of the next-token-prediction tensors.
fn mtp_entries(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    let n_nextn = nextn_layers(hp)?;
    let n_main = hp.req_u64(&["num_hidden_layers"])?;
    let share = hp.find_bool(&["mtp_share_layers"])?.unwrap_or(false);
    let n_blocks = n_main.saturating_add(n_nextn);
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        if !e.name.starts_with("mtp.") {
            out.push(e);
            continue;
        }
        if n_nextn == 0 {
            continue;
        }
        // The block number the reference goes on with: the name's first all-digit part,
        // 0 when it has none.
        let bid = match e
            .name
            .split('.')
            .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            None => None,
            Some(p) => Some(p.parse::<u64>().map_err(|_| ConvertError::Tensor {
                name: e.name.clone(),
                problem: "next-token-prediction layer number out of range".into(),
            })?),
        };
        if e.name.contains(".layers.") {
            let mtp_bid = bid.unwrap_or(0);
            let from = format!("mtp.layers.{mtp_bid}");
            if share {
                for k in 0..n_nextn {
                    let b = n_main.saturating_add(k);
                    out.push(Entry {
                        name: e.name.replace(&from, &format!("model.layers.{b}")),
                        expr: e.expr.clone(),
                        dtype: e.dtype,
                        fp8_q8: e.fp8_q8,
                        type_bid: Some(bid),
                    });
                }
                continue;
            }
            let name = e.name.replace(
                &from,
                &format!("model.layers.{}", mtp_bid.saturating_add(n_main)),
            );
            out.push(Entry {
                name,
                type_bid: Some(bid),
                ..e
            });
            continue;
        }
        let (stem, suffix) = e.name.rsplit_once('.').unwrap_or((e.name.as_str(), ""));
        let Some((_, to)) = MTP_SHARED.iter().find(|(from, _)| *from == stem) else {
            continue;
        };
        for b in n_main..n_blocks {
            out.push(Entry {
                name: format!("model.layers.{b}.{to}.{suffix}"),
                expr: e.expr.clone(),
                dtype: e.dtype,
                fp8_q8: e.fp8_q8,
                type_bid: Some(bid),
            });
        }
    }
    Ok(out)
}

/// The tower config's keys typed as integers (`Exaone4_5_VisionConfig`).
const VISION_INTS: &[&str] = &[
    "depth",
    "hidden_size",
    "intermediate_size",
    "num_heads",
    "in_channels",
    "spatial_merge_size",
    "window_size",
    "out_hidden_size",
    "num_key_value_heads",
];

/// Refuses a config `Exaone4_5_Config` cannot be built from (see the module comment).
fn refuse_unbuildable_config(hp: &mut Hparams) -> Result<(), ConvertError> {
    let path = hp.path.clone();
    if let Some(Json::Object(tc)) = hp.raw.get("text_config") {
        let layers = match tc.get("num_hidden_layers") {
            None => 32,
            Some(v) => v.as_i64().unwrap_or(0),
        };
        if tc.get("layer_types").is_none_or(Json::is_null) && layers > 0 {
            let window = tc.get("sliding_window");
            if window.is_some_and(Json::is_null) {
                return Err(ConvertError::format(
                    &path,
                    None,
                    "text_config: no sliding window and no layer_types: EXAONE 4's config \
                     derives the layer types with a period of 0 (the reference fails)",
                ));
            }
            let pattern = tc.get("sliding_window_pattern");
            match pattern {
                None => {}
                Some(Json::Number(n)) if n.as_i64().is_some_and(|k| k != 0) => {}
                Some(v) => {
                    return Err(ConvertError::wrong_type(
                        &path,
                        "text_config.sliding_window_pattern",
                        "a non-zero integer period (EXAONE 4's config derives layer_types \
                         from it; the reference fails)",
                        v,
                    ))
                }
            }
        }
    }
    if let Some(Json::Object(vc)) = hp.raw.get("vision_config") {
        for key in VISION_INTS {
            if let Some(v) = vc.get(*key) {
                if v.as_i64().is_none() {
                    return Err(ConvertError::wrong_type(
                        &path,
                        format!("vision_config.{key}"),
                        "an integer (the reference's tokenizer step builds the typed config)",
                        v,
                    ));
                }
            }
        }
        if let Some(v) = vc.get("fullatt_block_indexes") {
            if !v.is_array() {
                return Err(ConvertError::wrong_type(
                    &path,
                    "vision_config.fullatt_block_indexes",
                    "a list (the reference's tokenizer step builds the typed config)",
                    v,
                ));
            }
        }
    }
    Ok(())
}

/// `Exaone4_5_TextModel.set_gguf_parameters`: EXAONE 4's, then the MTP layer count.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    exaone4::params(p)?;
    let n = nextn_layers(p.hp)?;
    if n > 0 {
        p.u32(mla::NEXTN_PREDICT_LAYERS, n)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_mtp_tensors_are_the_four_the_class_remaps() {
        let stems: Vec<&str> = MTP_SHARED.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            stems,
            [
                "mtp.fc",
                "mtp.pre_fc_norm_embedding",
                "mtp.pre_fc_norm_hidden",
                "mtp.norm"
            ]
        );
    }
}
