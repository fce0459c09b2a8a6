//! Mistral's native model directories (`--mistral-format`): `params.json` for the hparams,
//! `consolidated.safetensors` (or `consolidated-0000N-of-0000M.safetensors`: every
//! `consolidated*.safetensors`, in name order, no index) for the weights, and `tekken.json`
//! or a versioned SentencePiece model for the vocabulary, as the reference's
//! `convert_hf_to_gguf.py --mistral-format` reads them (`MistralModel`).
//!
//! params.json is the hparams dict as written: no transformers defaults, so a key it lacks
//! is not written (a missing `head_dim` is refused, as the reference fails without
//! `hidden_size`). Mistral's FP8 checkpoints (`quantization.qformat_weight` `fp8_e4m3`, with
//! `qscale_weight` / `qscale_act` tensors) are dequantized as the reference does, by
//! treating them as `quant_method: fp8`. The text model of a vision checkpoint (Pixtral:
//! `vision_encoder` in params.json) is converted with the vision tensors dropped. The MoE
//! layout (`moe` in params.json, Mistral Large 3) is converted as the reference converts it,
//! as DeepSeek-V2 (`MistralMoeModel`, see [`moe_hparams`]).
//! params.json is checked against the weights' shapes before anything is converted
//! (`mistral_params.rs`).
//! `general.*` comes from the directory as for an HF model (its README.md model card and a
//! config.json beside params.json when there is one).

use std::path::Path;

use serde_json::{json, Map, Value as Json};

use super::config::{self, Hparams};
use super::safetensors::{self, PartFormat};
use super::tokenizer::mistral::TemplateChoice;
use super::{arch, HfConversion, HfOptions, ModelDir};
use crate::ConvertError;

/// `--mistral-format` and what goes with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MistralFormat {
    /// `--disable-mistral-community-chat-template`: write no chat template unless the
    /// directory has its own `chat_template.jinja`.
    pub disable_community_chat_template: bool,
}

/// The weights of a native directory: `consolidated*.safetensors`, sorted by name. The
/// reference reads no index for them (an empty index name never names a file).
const CONSOLIDATED: PartFormat = PartFormat {
    index_name: "",
    prefix: "consolidated",
    suffix: ".safetensors",
    parse: safetensors::parse_file,
};

/// Largest params.json read (the real ones are a few hundred bytes).
const MAX_PARAMS_BYTES: u64 = 4 << 20;

/// Reads `dir/params.json` as the hparams.
pub fn load_params(dir: &ModelDir) -> Result<Hparams, ConvertError> {
    let path = dir.join("params.json");
    if !path.is_file() {
        return Err(ConvertError::MissingFile {
            path,
            why: "missing params.json: not a Mistral native model directory (--mistral-format \
                  reads params.json, consolidated*.safetensors and tekken.json or \
                  tokenizer.model.v*)"
                .into(),
        });
    }
    let len = std::fs::metadata(&path)
        .map_err(|e| ConvertError::io(&path, e))?
        .len();
    if len > MAX_PARAMS_BYTES {
        return Err(ConvertError::FileTooLarge {
            path,
            limit_mib: MAX_PARAMS_BYTES >> 20,
            what: Some("not a model configuration"),
        });
    }
    let text =
        ggufkit::mapped::read_input_to_string(&path).map_err(|e| ConvertError::io(&path, e))?;
    let raw: Json = serde_json::from_str(&config::python_json(&text))
        .map_err(|e| ConvertError::bad_json(&path, &e))?;
    let Json::Object(mut map) = raw else {
        return Err(ConvertError::format(
            &path,
            None,
            "params.json is not a JSON object",
        ));
    };
    if map.get("moe").is_some_and(|m| !m.is_null()) {
        moe_hparams(dir, &path, &mut map)?;
    }
    if let Some(q) = map.get("quantization").filter(|q| !q.is_null()) {
        let format = q.get("qformat_weight").and_then(Json::as_str);
        if format != Some("fp8_e4m3") {
            return Err(ConvertError::format(
                &path,
                None,
                format!(
                    "quantization.qformat_weight {}: only fp8_e4m3 is read",
                    q.get("qformat_weight").unwrap_or(&Json::Null)
                ),
            ));
        }
        map.insert(
            "quantization_config".into(),
            json!({
                "activation_scheme": "static",
                "quant_method": "fp8",
                "weight_block_size": null,
            }),
        );
    }
    // TextModel merges a `text_config` into the root.
    if let Some(Json::Object(tc)) = map.get("text_config").cloned() {
        for (k, v) in tc {
            map.insert(k, v);
        }
    }
    let rope = config::normalise_rope(&map);
    // `general.*` reads config.json, not params.json: keep that one as the raw config.
    let raw = match dir.config_if_present() {
        Ok(Some(card)) => card.clone(),
        _ => Json::Object(Map::new()),
    };
    Ok(Hparams {
        raw,
        map,
        rope,
        arch: "Mistral (params.json)".into(),
        path,
        extra_blocks: 0,
        mtp: super::Mtp::Keep,
        target: None,
        derived: serde_json::Map::new(),
    })
}

/// `MistralMoeModel.__init__`: params.json's keys copied to the HF names DeepSeek-V2's
/// conversion reads (`dim` → `hidden_size`, `moe.num_experts` → `n_routed_experts`, …), the
/// top-level ones it needs given defaults, and the routing fixed (no top-k method, top-k
/// probabilities normalised, softmax scoring). Refused as the reference fails: without a
/// config.json beside params.json (`DeepseekV2Model.__init__` reads the HF config too) or
/// without a `yarn` section; and a quantized MoE checkpoint, whose FP8 scales the class does
/// not dequantize (it has no `dequant_model` of its own, and fails with "Can not map tensor"
/// on the scales it renames `input_scale` / `weight_scale`: cases `mistral-moe-fp8-*`).
fn moe_hparams(
    dir: &ModelDir,
    path: &Path,
    map: &mut Map<String, Json>,
) -> Result<(), ConvertError> {
    let refuse = |why: &str| ConvertError::UnsupportedFeature {
        arch: "Mistral native format".into(),
        feature: format!(
            "{}: a mixture-of-experts model (\"moe\") {why}",
            path.display()
        ),
    };
    if !dir.has_file(super::model_dir::CONFIG) {
        return Err(refuse(
            "needs a config.json beside params.json: the reference's MistralMoeModel reads the \
             HF config too (DeepseekV2Model.__init__) and fails without one",
        ));
    }
    if !map.get("yarn").is_some_and(Json::is_object) {
        return Err(refuse(
            "needs a \"yarn\" section (the reference reads yarn.original_max_position_embeddings)",
        ));
    }
    if map.get("quantization").is_some_and(|q| !q.is_null()) {
        return Err(refuse(
            "with \"quantization\" is not converted: the reference's MistralMoeModel does not \
             dequantize Mistral's FP8 scales (it fails to map them as input_scale / weight_scale \
             tensors)",
        ));
    }
    if !map.get("moe").is_some_and(Json::is_object) {
        return Err(refuse("has a \"moe\" entry that is not an object"));
    }
    for (from, to) in [
        ("dim", "hidden_size"),
        ("norm_eps", "rms_norm_eps"),
        ("n_kv_heads", "num_key_value_heads"),
        ("n_layers", "num_hidden_layers"),
        ("n_heads", "num_attention_heads"),
        ("hidden_dim", "intermediate_size"),
    ] {
        if let Some(v) = map.get(from).cloned() {
            map.insert(to.into(), v);
        }
    }
    let max_pos = map
        .get("max_position_embeddings")
        .cloned()
        .unwrap_or(json!(128_000));
    let max_seq = map.get("max_seq_len").cloned().unwrap_or(max_pos.clone());
    let activation = map.get("activation").cloned().unwrap_or(json!("silu"));
    let tied = map.get("tied_embeddings").cloned().unwrap_or(json!(false));
    let model_type = map
        .get("model_type")
        .cloned()
        .unwrap_or(json!("transformer"));
    map.insert("model_type".into(), model_type);
    map.insert("hidden_act".into(), activation);
    map.insert("tie_word_embeddings".into(), tied);
    map.insert("max_seq_len".into(), max_seq);
    map.insert("max_position_embeddings".into(), max_pos);
    let moe = map
        .get("moe")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    for (from, to) in [
        ("route_every_n", "moe_layer_freq"),
        ("first_k_dense_replace", "first_k_dense_replace"),
        ("num_experts_per_tok", "num_experts_per_tok"),
        ("num_experts", "n_routed_experts"),
        ("expert_hidden_dim", "moe_intermediate_size"),
        ("routed_scale", "routed_scaling_factor"),
        ("num_shared_experts", "n_shared_experts"),
        ("num_expert_groups", "n_group"),
        ("num_expert_groups_per_tok", "topk_group"),
    ] {
        if let Some(v) = moe.get(from) {
            map.insert(to.into(), v.clone());
        }
    }
    map.insert("topk_method".into(), Json::Null);
    map.insert("norm_topk_prob".into(), json!(true));
    map.insert("scoring_func".into(), json!("softmax"));
    Ok(())
}

/// Converts the Mistral native model in `dir`.
pub fn read_mistral_dir(
    dir: &ModelDir,
    opts: &HfOptions,
    format: MistralFormat,
) -> Result<HfConversion, ConvertError> {
    let hp = load_params(dir)?;
    let arch = arch::mistral_native(&hp);
    let parts = dir.join("consolidated.safetensors");
    let has_parts = std::fs::read_dir(dir)
        .map_err(|e| ConvertError::io(dir.path(), e))?
        .flatten()
        .any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(CONSOLIDATED.prefix) && name.ends_with(CONSOLIDATED.suffix)
        });
    if !has_parts {
        return Err(ConvertError::MissingFile {
            path: parts,
            why: "missing: a Mistral native model keeps its weights in consolidated.safetensors \
                  or consolidated-0000N-of-0000M.safetensors"
                .into(),
        });
    }
    let shards = safetensors::index_parts(dir, &CONSOLIDATED)?;
    super::mistral_params::check(&hp.path, &hp.map, &shards.tensors)?;
    let choice = TemplateChoice {
        mistral_format: true,
        disable_community: format.disable_community_chat_template,
    };
    super::convert_dir(dir, opts, hp, arch, shards, Some(choice))
}
