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
//! `vision_encoder` in params.json) is converted with the vision tensors dropped; the MoE
//! layout (`moe` in params.json, which the reference converts as DeepSeek-V2) is refused.
//! `general.*` comes from the directory as for an HF model (its README.md model card and a
//! config.json beside params.json when there is one).

use std::path::Path;

use serde_json::{json, Map, Value as Json};

use super::config::{self, Hparams};
use super::safetensors::{self, PartFormat};
use super::tokenizer::mistral::TemplateChoice;
use super::{arch, HfConversion, HfOptions};
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
pub fn load_params(dir: &Path) -> Result<Hparams, ConvertError> {
    let path = dir.join("params.json");
    if !path.is_file() {
        return Err(ConvertError::format(
            &path,
            None,
            "missing params.json: not a Mistral native model directory (--mistral-format \
             reads params.json, consolidated*.safetensors and tekken.json or \
             tokenizer.model.v*)",
        ));
    }
    let len = std::fs::metadata(&path)
        .map_err(|e| ConvertError::io(&path, e))?
        .len();
    if len > MAX_PARAMS_BYTES {
        return Err(ConvertError::format(
            &path,
            None,
            format!(
                "larger than {} MiB: not a model configuration",
                MAX_PARAMS_BYTES >> 20
            ),
        ));
    }
    let text =
        ggufkit::mapped::read_input_to_string(&path).map_err(|e| ConvertError::io(&path, e))?;
    let raw: Json = serde_json::from_str(&config::python_json(&text))
        .map_err(|e| ConvertError::format(&path, None, format!("not valid JSON: {e}")))?;
    let Json::Object(mut map) = raw else {
        return Err(ConvertError::format(
            &path,
            None,
            "params.json is not a JSON object",
        ));
    };
    if map.get("moe").is_some_and(|m| !m.is_null()) {
        return Err(ConvertError::UnsupportedFeature {
            arch: "Mistral native format".into(),
            feature: format!(
                "{}: a mixture-of-experts model (\"moe\"), which the reference converts as \
                 DeepSeek-V2 (MistralMoeModel), is not supported yet",
                path.display()
            ),
        });
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
    let card = dir.join("config.json");
    let raw = if card.is_file() {
        super::params::read_json(&card).unwrap_or(Json::Object(Map::new()))
    } else {
        Json::Object(Map::new())
    };
    Ok(Hparams {
        raw,
        map,
        rope,
        arch: "Mistral (params.json)".into(),
        path,
        extra_blocks: 0,
        mtp: super::Mtp::Keep,
    })
}

/// Converts the Mistral native model in `dir`.
pub fn read_mistral_dir(
    dir: &Path,
    opts: &HfOptions,
    format: MistralFormat,
) -> Result<HfConversion, ConvertError> {
    let hp = load_params(dir)?;
    let arch = arch::mistral_native(&hp);
    let parts = dir.join("consolidated.safetensors");
    let has_parts = std::fs::read_dir(dir)
        .map_err(|e| ConvertError::io(dir, e))?
        .flatten()
        .any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(CONSOLIDATED.prefix) && name.ends_with(CONSOLIDATED.suffix)
        });
    if !has_parts {
        return Err(ConvertError::format(
            &parts,
            None,
            "missing: a Mistral native model keeps its weights in consolidated.safetensors or \
             consolidated-0000N-of-0000M.safetensors",
        ));
    }
    let shards = safetensors::index_parts(dir, &CONSOLIDATED)?;
    let choice = TemplateChoice {
        mistral_format: true,
        disable_community: format.disable_community_chat_template,
    };
    super::convert_dir(dir, opts, hp, arch, shards, Some(choice))
}
