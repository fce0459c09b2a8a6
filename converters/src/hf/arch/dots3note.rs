//! `Dots3NoteForCausalLM` / `Dots3NoteForConditionalGeneration` / `Dots3NoteTextForCausalLM`
//! (arch `dots3note`, `Dots3NoteModel` in `conversion/dots3.py`), the text half.
//!
//! The DeepSeek-V3 layout (see `deepseek2.rs`) with two kinds of attention layer, named by
//! `layer_types`: full layers (MLA with the DSA lightning indexer, `num_attention_heads`,
//! `kv_lora_rank`, `qk_nope_head_dim`, `v_head_dim`) and `sliding_attention` layers, MLA
//! without an indexer and with their own geometry under `swa_*` keys. Every attention has a
//! head-wise output gate (`self_attn.g_proj`, `attn_gate`) and an RMS norm of the rope key
//! (`self_attn.k_rope_only_layernorm`, written as `attn_k_norm`).
//!
//! - The head count is a per-block array (each kind's own), the sliding-window pattern and
//!   the indexer types per-layer booleans; the sliding layers' MLA sizes go under the `_swa`
//!   keys.
//! - `kv_b_proj` is split into `k_b` / `v_b` with the geometry of its layer's kind.
//! - With `apply_mla_qkv_lora_rescale`, `q_a_layernorm` is scaled by
//!   `sqrt(hidden_size / q_lora_rank)` and `kv_a_layernorm` by `sqrt(hidden_size / rank)`
//!   (the kind's kv rank).
//! - The next-token-prediction block: the checkpoint's `model.mtp.embed_tokens` makes one
//!   block after `num_hidden_layers` (it becomes that block's `nextn.embed_tokens`; the
//!   block's other tensors are `model.layers.N.*`, a sliding-attention layer). `--no-mtp`
//!   drops it, `--mtp` keeps it with the embeddings, final norm and head.
//! - The class refuses the configurations its graph does not build (non-RMS norms, grouped
//!   or non-sigmoid routing, non-head-wise gates, `use_dsa` false, …) with the reference's
//!   messages.
//! - Vocabulary: GPT-2 BPE, eot = the added token `<|endofassistant|>`.

use ggufkit::gguf::keys::{attention, indexer, layered, mla};
use serde_json::Value as Json;

use super::deepseek2::{mla_hook, mla_lengths, mla_params, MlaLengthKeys, DEEPSEEK_EXPERTS};
use super::deepseek32::drop_ocr_towers;
use super::glm4moe::{is_past_main_layers, GLM_MTP_SHARED};
use super::{
    no_extra, Arch, ConfigDefault, Entry, HeadDim, Hooks, ModelType, Modified, MtpExport, Rules,
};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;
use serde_json::Map;

/// gguf-py's `dots3note` tensor list: no fused or plain q/k/v, no whole `kv_b`, no MTP
/// head of its own.
const DOTS3NOTE_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::AttnQA,
    Tensor::AttnQB,
    Tensor::AttnKvAMqa,
    Tensor::AttnKB,
    Tensor::AttnVB,
    Tensor::AttnQANorm,
    Tensor::AttnKvANorm,
    Tensor::AttnKNorm,
    Tensor::AttnGate,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnGate,
    Tensor::FfnDown,
    Tensor::FfnUp,
    Tensor::FfnGateInp,
    Tensor::FfnExpProbsB,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnUpShexp,
    Tensor::IndexerKNorm,
    Tensor::IndexerProj,
    Tensor::IndexerAttnK,
    Tensor::IndexerAttnQB,
    Tensor::NextnEhProj,
    Tensor::NextnEmbedTokens,
    Tensor::NextnEnorm,
    Tensor::NextnHnorm,
    Tensor::NextnSharedHeadNorm,
];

/// dots3-note's text model.
pub const DOTS3NOTE: Arch = Arch {
    hf_names: &[
        "Dots3NoteForCausalLM",
        "Dots3NoteForConditionalGeneration",
        "Dots3NoteTextForCausalLM",
    ],
    model_types: &[
        ModelType {
            name: "dots3_note",
            hf_classes: &["Dots3NoteForCausalLM", "Dots3NoteForConditionalGeneration"],
            defaults: TEXT_DEFAULTS,
            head_dim: HeadDim::Keep,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: Some(typed_wrapper),
        },
        ModelType {
            name: "dots3_note_text",
            hf_classes: &["Dots3NoteTextForCausalLM"],
            defaults: TEXT_DEFAULTS,
            head_dim: HeadDim::Keep,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: Some(typed_text),
        },
    ],
    composites: &[],
    gguf: "dots3note",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DOTS3NOTE_TENSORS],
    tensor_overrides: &[],
    filter: drop_ocr_towers,
    rules: Rules {
        experts: &[DEEPSEEK_EXPERTS],
        hook: Some(hook),
        mtp: Some(mtp_block),
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp,
            shared: GLM_MTP_SHARED,
        }),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks {
        adjust: Some(check_config),
        ..Hooks::NONE
    },
};

/// `Dots3NoteTextConfig`'s plain defaults (transformers 5.24).
const TEXT_DEFAULTS: &[ConfigDefault] = defaults! {
    "vocab_size" => 152064,
    "hidden_size" => 5120,
    "intermediate_size" => 13824,
    "moe_intermediate_size" => 1536,
    "num_hidden_layers" => 46,
    "num_attention_heads" => 128,
    "num_key_value_heads" => 128,
    "n_shared_experts" => 1,
    "n_routed_experts" => 256,
    "routed_scaling_factor" => 1.0,
    "kv_lora_rank" => 512,
    "q_lora_rank" => 1024,
    "qk_rope_head_dim" => 64,
    "v_head_dim" => 128,
    "qk_nope_head_dim" => 128,
    "n_group" => 1,
    "topk_group" => 1,
    "num_experts_per_tok" => 8,
    "norm_topk_prob" => true,
    "max_position_embeddings" => 524288,
    "rms_norm_eps" => 1e-5,
    "index_topk" => 2048,
    "index_head_dim" => 128,
    "index_n_heads" => 64,
    "head_dim" => 256,
    "tie_word_embeddings" => false,
};

/// The keys `Dots3NoteTextConfig` takes out of its keyword arguments (its sliding-layer
/// spellings and schedule switches): a text-only config's `to_dict()` no longer has them.
const TEXT_POPPED: &[&str] = &[
    "swa_num_attention_heads",
    "swa_num_key_value_heads",
    "swa_q_lora_rank",
    "swa_kv_lora_rank",
    "swa_head_dim",
    "swa_qk_nope_head_dim",
    "swa_v_head_dim",
    "swa_qk_rope_head_dim",
    "swa_rope_theta",
    "use_dsa",
    "use_sliding_window",
    "first_k_dense_replace",
    "moe_layer_freq",
    "moe_shared_expert_intermediate_size",
];

/// An integer of the config (absent: `default`); `None` for null or a non-integer (the
/// strict config class or its comparisons raise on those).
fn int_or(cfg: &Map<String, Json>, key: &str, default: i64) -> Option<i64> {
    match cfg.get(key) {
        None => Some(default),
        Some(v) => v.as_i64(),
    }
}

/// The text config's layer kinds, as `Dots3NoteTextConfig.__post_init__` derives them:
/// the given `layer_types` (or two full layers, then every fourth from the second, the
/// rest sliding) with "full_attention" and "indexed_attention" swapped by `use_dsa`.
fn typed_layer_types(cfg: &Map<String, Json>) -> Option<Vec<String>> {
    let use_dsa = match cfg.get("use_dsa") {
        None if cfg.contains_key("per_layer_config") => None,
        None => Some(true),
        Some(Json::Null) => None,
        Some(v) => Some(crate::hf::tokenizer::json_truthy_opt(Some(v))),
    };
    let mut types: Vec<String> = match cfg.get("layer_types") {
        None | Some(Json::Null) => {
            let n = int_or(cfg, "num_hidden_layers", 46)?;
            let sliding = crate::hf::tokenizer::json_truthy_opt(Some(
                cfg.get("use_sliding_window").unwrap_or(&Json::Bool(true)),
            ));
            let full = if use_dsa == Some(false) {
                "full_attention"
            } else {
                "indexed_attention"
            };
            (0..n.max(0))
                .map(|i| {
                    if !sliding || i < 2 || i % 4 == 1 {
                        full.to_string()
                    } else {
                        "sliding_attention".to_string()
                    }
                })
                .collect()
        }
        Some(Json::Array(items)) => items
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    if let Some(dsa) = use_dsa {
        let (old, new) = if dsa {
            ("full_attention", "indexed_attention")
        } else {
            ("indexed_attention", "full_attention")
        };
        for t in types.iter_mut().filter(|t| *t == old) {
            *t = new.to_string();
        }
    }
    Some(types)
}

/// `Dots3NoteTextConfig.validate_architecture` on a config's root keys; `None` where it
/// (or a comparison with a null) raises.
fn text_config_valid(cfg: &Map<String, Json>, types: &[String]) -> Option<bool> {
    let has = |t: &str| types.iter().any(|x| x == t);
    let full_kinds = types.iter().any(|t| t != "sliding_attention");
    let sliding = has("sliding_attention");
    if full_kinds && cfg.get("q_lora_rank").is_some_and(Json::is_null) {
        return Some(false);
    }
    if sliding && cfg.get("swa_q_lora_rank").is_some_and(Json::is_null) {
        return Some(false);
    }
    let shared = int_or(cfg, "n_shared_experts", 1)?;
    let experts = int_or(cfg, "n_routed_experts", 256)?;
    let groups = int_or(cfg, "n_group", 1)?;
    let topk_group = int_or(cfg, "topk_group", 1)?;
    if shared < 1 || groups < 1 || experts % groups != 0 || experts / groups < 2 {
        return Some(false);
    }
    if !(1..=groups).contains(&topk_group) {
        return Some(false);
    }
    if full_kinds {
        let heads = int_or(cfg, "num_attention_heads", 128)?;
        let kv = match cfg.get("num_key_value_heads") {
            Some(Json::Null) => heads,
            _ => int_or(cfg, "num_key_value_heads", 128)?,
        };
        if kv != heads {
            return Some(false);
        }
        if has("indexed_attention")
            && int_or(cfg, "qk_rope_head_dim", 64)? > int_or(cfg, "index_head_dim", 128)?
        {
            return Some(false);
        }
    }
    if sliding {
        let heads = int_or(cfg, "swa_num_attention_heads", 64)?;
        if int_or(cfg, "swa_num_key_value_heads", 64)? != heads {
            return Some(false);
        }
        let head = int_or(cfg, "swa_head_dim", 256)?;
        let nope = int_or(cfg, "swa_qk_nope_head_dim", 192)?;
        let rope = int_or(cfg, "swa_qk_rope_head_dim", head - nope)?;
        if head != nope + rope {
            return Some(false);
        }
    }
    Some(true)
}

/// The rotary settings `Dots3NoteTextConfig` builds: one entry per layer kind (the given
/// `rope_parameters` or `rope_scaling` for each, else the default rope with `rope_theta`
/// for full layers and `swa_rope_theta` for sliding ones), each with the kind's
/// `partial_rotary_factor` (rope head size over head size).
fn typed_rope(cfg: &Map<String, Json>, types: &[String]) -> Option<Json> {
    let mut kinds: Vec<&String> = Vec::new();
    for t in types {
        if !kinds.contains(&t) {
            kinds.push(t);
        }
    }
    let params = cfg.get("rope_parameters").filter(|v| !v.is_null());
    let scaling = cfg.get("rope_scaling").filter(|v| !v.is_null());
    if params.is_some() && scaling.is_some_and(|v| v.as_object().is_none_or(|m| !m.is_empty())) {
        // The base class then takes rope_scaling as one flat dict, which the class's
        // per-kind loop cannot index.
        return None;
    }
    let given = params.or(scaling).cloned();
    let mut out = Map::new();
    let nested = given
        .as_ref()
        .and_then(Json::as_object)
        .is_some_and(|m| !m.is_empty() && m.values().all(Json::is_object));
    for kind in kinds {
        let mut entry = match &given {
            Some(Json::Object(m)) if nested => m.get(kind.as_str())?.as_object()?.clone(),
            Some(Json::Object(m)) => m.clone(),
            Some(_) => return None,
            None => {
                let theta = if kind == "sliding_attention" {
                    cfg.get("swa_rope_theta")
                        .cloned()
                        .unwrap_or(Json::from(50_000.0))
                } else {
                    cfg.get("rope_theta")
                        .cloned()
                        .unwrap_or(Json::from(80_000_000.0))
                };
                let mut m = Map::new();
                m.insert("rope_type".into(), Json::from("default"));
                m.insert("rope_theta".into(), theta);
                m
            }
        };
        // The base class's standardization: each kind's dict gets the root's `rope_theta`
        // (the class's 80M default without one) where it has none.
        if !entry.contains_key("rope_theta") {
            let theta = cfg
                .get("rope_theta")
                .cloned()
                .unwrap_or(Json::from(80_000_000.0));
            entry.insert("rope_theta".into(), theta);
        }
        if !entry.contains_key("rope_type") {
            if let Some(t) = entry.get("type").cloned() {
                entry.insert("rope_type".into(), t);
            }
        }
        let (rope, head) = if kind == "sliding_attention" {
            let head = int_or(cfg, "swa_head_dim", 256)?;
            let nope = int_or(cfg, "swa_qk_nope_head_dim", 192)?;
            (int_or(cfg, "swa_qk_rope_head_dim", head - nope)?, head)
        } else {
            (
                int_or(cfg, "qk_rope_head_dim", 64)?,
                int_or(cfg, "head_dim", 256)?,
            )
        };
        if head == 0 {
            return None;
        }
        entry.insert(
            "partial_rotary_factor".into(),
            Json::from(rope as f64 / head as f64),
        );
        out.insert(kind.clone(), Json::Object(entry));
    }
    Some(Json::Object(out))
}

/// What `Dots3NoteTextConfig` makes of the root keys (its layer kinds, its per-kind rope);
/// `false` where it raises.
fn typed_text_keys(cfg: &mut Map<String, Json>) -> bool {
    let Some(types) = typed_layer_types(cfg) else {
        return false;
    };
    if text_config_valid(cfg, &types) != Some(true) {
        return false;
    }
    let Some(rope) = typed_rope(cfg, &types) else {
        return false;
    };
    if let Some(v) = cfg.remove("num_local_experts") {
        cfg.insert("n_routed_experts".into(), v);
    }
    cfg.insert(
        "layer_types".into(),
        Json::Array(types.into_iter().map(Json::from).collect()),
    );
    cfg.insert("rope_parameters".into(), rope);
    true
}

/// `Dots3NoteConfig` (model_type `dots3_note`, the hub's flat layout): the text config is
/// built from the root's keys, which the wrapper keeps as well (so the sliding layers'
/// `swa_*` keys stay); it raises unless both adapters' output widths (`vision_config` /
/// `audio_config`, 5120 by default) equal the text `hidden_size` and the sub-configs pass
/// their own checks, and the reference then reads config.json as written.
fn typed_wrapper(cfg: &mut Map<String, Json>) -> bool {
    if !cfg.get("text_config").is_none_or(Json::is_null) {
        // A nested text config: not the published layout; AutoConfig's outcome is not
        // modelled, the file is read as written.
        return false;
    }
    let hidden = int_or(cfg, "hidden_size", 5120);
    let empty = Map::new();
    let sub = |key: &str| match cfg.get(key) {
        None | Some(Json::Null) => Some(&empty),
        Some(Json::Object(m)) => Some(m),
        Some(_) => None,
    };
    let (Some(vision), Some(audio)) = (sub("vision_config"), sub("audio_config")) else {
        return false;
    };
    if !vision_config_valid(vision, hidden) || !audio_config_valid(audio, hidden) {
        return false;
    }
    typed_text_keys(cfg)
}

/// `Dots3NoteVisionConfig`'s checks and the wrapper's width check on it.
fn vision_config_valid(v: &Map<String, Json>, text_hidden: Option<i64>) -> bool {
    let hidden = match v.get("embed_dim") {
        Some(x) => x.as_i64(),
        None => int_or(v, "hidden_size", 1536),
    };
    let heads = match v.get("num_heads") {
        Some(x) => x.as_i64(),
        None => int_or(v, "num_attention_heads", 24),
    };
    let (Some(hidden), Some(heads)) = (hidden, heads) else {
        return false;
    };
    let (Some(in_dim), Some(out_dim)) = (
        int_or(v, "adapter_in_dim", 1536),
        int_or(v, "adapter_out_dim", 5120),
    ) else {
        return false;
    };
    let (Some(merge), Some(spatial)) = (
        int_or(v, "adapter_merge_size", 2),
        int_or(v, "spatial_merge_size", 2),
    ) else {
        return false;
    };
    let mlp_bias = crate::hf::tokenizer::json_truthy_opt(v.get("mlp_bias"));
    let sparse = match v.get("pyramid_num_routed") {
        Some(Json::Array(xs)) => xs.iter().any(|x| x.as_i64().is_some_and(|n| n > 0)),
        _ => match v.get("mlp_layer_types") {
            Some(Json::Array(xs)) => xs.iter().any(|x| x == "sparse"),
            // The default pyramid has routed blocks.
            _ => true,
        },
    };
    heads != 0
        && hidden % heads == 0
        && in_dim == hidden
        && !(mlp_bias && sparse)
        && merge == spatial
        && Some(out_dim) == text_hidden
}

/// `Dots3NoteAudioConfig`'s checks (its Whisper-style `whisper_config` spellings) and the
/// wrapper's width check on it.
fn audio_config_valid(a: &Map<String, Json>, text_hidden: Option<i64>) -> bool {
    let empty = Map::new();
    let w = match a.get("whisper_config") {
        None | Some(Json::Null) => &empty,
        Some(Json::Object(m)) => m,
        Some(_) => return false,
    };
    let pick = |legacy: &str, name: &str, default: i64| match w.get(legacy) {
        Some(x) => x.as_i64(),
        None => int_or(a, name, default),
    };
    let (Some(hidden), Some(heads), Some(features)) = (
        pick("d_model", "hidden_size", 1280),
        pick("encoder_attention_heads", "num_attention_heads", 20),
        pick("num_mel_bins", "feature_size", 128),
    ) else {
        return false;
    };
    let in_dim = match a.get("whisper_adapter_in_dim") {
        Some(x) => x.as_i64(),
        None => int_or(a, "adapter_input_size", 1280),
    };
    let out_dim = match a.get("whisper_adapter_out_dim") {
        Some(x) => x.as_i64(),
        None => match a.get("adapter_output_size") {
            Some(x) => x.as_i64(),
            None => int_or(a, "adapter_out_dim", 5120),
        },
    };
    let (Some(rate), Some(hop)) = (
        int_or(a, "sampling_rate", 16000),
        int_or(a, "hop_length", 160),
    ) else {
        return false;
    };
    heads != 0
        && hidden % heads == 0
        && in_dim == Some(hidden)
        && rate.min(features).min(hop) > 0
        && out_dim.is_some()
        && out_dim == text_hidden
}

/// `Dots3NoteTextConfig` on its own (model_type `dots3_note_text`): its keyword arguments
/// are consumed, so the `swa_*` keys the reference reads are gone from `to_dict()`.
fn typed_text(cfg: &mut Map<String, Json>) -> bool {
    if !typed_text_keys(cfg) {
        return false;
    }
    if cfg.get("sliding_window").is_none_or(Json::is_null) {
        let w = cfg.remove("sliding_window_size").unwrap_or(Json::from(512));
        cfg.insert("sliding_window".into(), w);
    }
    for k in TEXT_POPPED {
        cfg.remove(*k);
    }
    true
}

/// The checkpoint's own embedding of the next-token-prediction block.
const MTP_EMBED: &str = "model.mtp.embed_tokens.weight";

/// The class's `filter_tensors` test: `model.mtp.*`, or a block at or past
/// `num_hidden_layers`.
fn is_mtp(hp: &Hparams, name: &str) -> Result<bool, ConvertError> {
    Ok(name.starts_with("model.mtp.") || is_past_main_layers(hp, name)?)
}

/// `num_hidden_layers`.
fn main_layers(hp: &Hparams) -> Result<u64, ConvertError> {
    hp.req_u64(&["num_hidden_layers"])
}

/// Whether `key` is present with exactly the JSON value `want` (absent: `default`); the
/// reference compares with `is True` / `!=`, so `1` is not `true`.
fn is_value(hp: &Hparams, key: &str, want: &Json, default: bool) -> bool {
    match hp.get(key) {
        None => default,
        Some(v) => v == want,
    }
}

/// A refusal with the reference's message.
fn refuse(hp: &Hparams, msg: &str) -> ConvertError {
    ConvertError::format(&hp.path, None, format!("dots3-note: {msg}"))
}

/// Whether the config the class's `AutoTokenizer` call builds fails: for a config without
/// `model_type`, transformers' generic config (its layer-list checks, and a v4
/// `rope_scaling` of a scaled type without `rope_parameters`); for the dots3-note model
/// types, their config classes (see [`typed_wrapper`], [`typed_text`]).
fn tokenizer_config_refusal(hp: &Hparams) -> Result<(), ConvertError> {
    let Some(raw) = hp.raw.as_object() else {
        return Ok(());
    };
    let fails = match raw.get("model_type") {
        None => {
            crate::hf::generic_config::check_layer_lists(hp)?;
            crate::hf::generic_config::scaled_rope_scaling_fails(raw)
        }
        Some(Json::String(t)) if t == "dots3_note" => {
            raw.get("text_config").is_none_or(Json::is_null) && !typed_wrapper(&mut raw.clone())
        }
        Some(Json::String(t)) if t == "dots3_note_text" => !typed_text(&mut raw.clone()),
        Some(_) => false,
    };
    if fails {
        return Err(refuse(
            hp,
            "transformers cannot build this config (the class loads the tokenizer with \
             AutoTokenizer, which reads it), so the reference refuses it",
        ));
    }
    Ok(())
}

/// The checks of `Dots3NoteModel.__init__`, and the config its `set_vocab` loads.
fn check_config(hp: &mut Hparams) -> Result<(), ConvertError> {
    tokenizer_config_refusal(hp)?;
    let n = main_layers(hp)?;
    let types = layer_types(hp)?;
    if (types.len() as u64) < n {
        return Err(refuse(hp, "layer_types is shorter than num_hidden_layers"));
    }
    let t = Json::Bool(true);
    if !is_value(hp, "use_dsa", &t, true) {
        return Err(refuse(hp, "conversion requires use_dsa=true"));
    }
    // `hparams.get(key, "RMSNorm") != "RMSNorm"`: a present null is not "RMSNorm".
    let rms = Json::String("RMSNorm".into());
    if !is_value(hp, "normalization", &rms, true) || !is_value(hp, "final_norm", &rms, true) {
        return Err(refuse(hp, "conversion only supports RMSNorm"));
    }
    if !is_value(hp, "k_rope_only_layernorm", &t, true) {
        return Err(refuse(hp, "conversion requires k_rope_only_layernorm=true"));
    }
    let noaux = Json::String("noaux_tc".into());
    let sigmoid = Json::String("sigmoid".into());
    if !is_value(hp, "topk_method", &noaux, true) || !is_value(hp, "scoring_func", &sigmoid, false)
    {
        return Err(refuse(
            hp,
            "conversion only supports noaux_tc/sigmoid expert gating",
        ));
    }
    let one = |key: &str| match hp.get(key) {
        None => true,
        Some(v) => v.as_f64() == Some(1.0),
    };
    if !one("n_group") || !one("topk_group") {
        return Err(refuse(
            hp,
            "conversion does not support grouped expert routing",
        ));
    }
    let truthy = |key: &str| crate::hf::tokenizer::json_truthy_opt(hp.get(key));
    if truthy("use_dynamic_rsf") || truthy("moe_gating_fp32") {
        return Err(refuse(
            hp,
            "conversion does not support use_dynamic_rsf/moe_gating_fp32",
        ));
    }
    let headwise = Json::String("headwise".into());
    for key in ["attention_gate_type", "swa_attention_gate_type"] {
        if !is_value(hp, key, &headwise, true) {
            return Err(refuse(
                hp,
                &format!(
                    "conversion only supports headwise attention gate, got {key}={}",
                    hp.get(key).unwrap_or(&Json::Null)
                ),
            ));
        }
    }
    let nope = hp.req_u64(&["swa_qk_nope_head_dim"])?;
    let rope = hp.req_u64(&["swa_qk_rope_head_dim"])?;
    let head = hp.find_u64(&["swa_head_dim"])?;
    let head = if hp.get("swa_head_dim").is_none() {
        Some(256)
    } else {
        head
    };
    if nope.checked_add(rope) != head {
        return Err(refuse(
            hp,
            "swa_head_dim must equal swa_qk_nope_head_dim + swa_qk_rope_head_dim",
        ));
    }
    if Some(rope) != hp.find_u64(&["qk_rope_head_dim"])? {
        return Err(refuse(
            hp,
            "swa_qk_rope_head_dim must match qk_rope_head_dim",
        ));
    }
    Ok(())
}

/// `layer_types` (required, a list of strings).
fn layer_types(hp: &Hparams) -> Result<Vec<String>, ConvertError> {
    let v = hp
        .get("layer_types")
        .ok_or_else(|| hp.missing(&["layer_types"]))?;
    let bad = || ConvertError::wrong_type(&hp.path, "layer_types", "a list of strings", v);
    let items = v.as_array().ok_or_else(bad)?;
    items
        .iter()
        .map(|x| x.as_str().map(str::to_string).ok_or_else(bad))
        .collect()
}

/// `_is_swa_layer`: blocks past `num_hidden_layers` (the MTP block) are sliding layers.
fn is_swa_layer(hp: &Hparams, types: &[String], bid: u64) -> Result<bool, ConvertError> {
    if bid >= main_layers(hp)? {
        return Ok(true);
    }
    Ok(types
        .get(bid as usize)
        .is_some_and(|t| t == "sliding_attention"))
}

/// The class's MTP detection and renaming: `model.mtp.embed_tokens` (when the filters kept
/// it) makes one next-token-prediction block and becomes that block's `embed_tokens`.
fn mtp_block(hp: &mut Hparams, mut entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    if !entries.iter().any(|e| e.name == MTP_EMBED) {
        return Ok(entries);
    }
    let n = main_layers(hp)?;
    for e in entries.iter_mut().filter(|e| e.name == MTP_EMBED) {
        e.name = format!("model.layers.{n}.embed_tokens.weight");
    }
    hp.extra_blocks = hp.extra_blocks.saturating_add(1);
    Ok(entries)
}

/// The first all-digit part of a dotted name (the reference's `bid`).
fn block_of(name: &str) -> Option<u64> {
    name.split('.')
        .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

/// The sliding-window layers' MLA widths and keys.
const SWA_MLA_LENGTHS: MlaLengthKeys = MlaLengthKeys {
    rank: "swa_kv_lora_rank",
    rope: "swa_qk_rope_head_dim",
    nope: "swa_qk_nope_head_dim",
    v_head: "swa_v_head_dim",
    rank_key: mla::KV_LORA_RANK_SWA,
    key_length: layered::KEY_LENGTH_SWA,
    value_length: layered::VALUE_LENGTH_SWA,
    key_length_mla: mla::KEY_LENGTH_MLA_SWA,
    value_length_mla: mla::VALUE_LENGTH_MLA_SWA,
};

/// `sqrt(hidden_size / rank)` as Python computes it.
fn rescale(hp: &Hparams, rank_key: &str) -> Result<f64, ConvertError> {
    let hidden = hp.req_u64(&["hidden_size"])? as f64;
    let rank = hp.req_u64(&[rank_key])? as f64;
    if rank == 0.0 {
        return Err(ConvertError::out_of_range(
            &hp.path,
            rank_key,
            0,
            "a positive rank (the rescale divides by it)",
        ));
    }
    Ok((hidden / rank).sqrt())
}

/// `Dots3NoteModel.modify_tensors`: the LoRA-norm rescale, `kv_b_proj` split by the layer's
/// kind, then DeepSeek-V2's step (tied head, experts).
fn hook(hp: &Hparams, name: String, mut expr: Expr) -> Result<Modified, ConvertError> {
    let bid = block_of(&name);
    if let Some(bid) = bid {
        if crate::hf::tokenizer::json_truthy_opt(hp.get("apply_mla_qkv_lora_rescale")) {
            if name.ends_with("q_a_layernorm.weight") {
                expr = expr.mul_scalar(rescale(hp, "q_lora_rank")?);
            } else if name.ends_with("kv_a_layernorm.weight") {
                let swa = is_swa_layer(hp, &layer_types(hp)?, bid)?;
                let key = if swa {
                    "swa_kv_lora_rank"
                } else {
                    "kv_lora_rank"
                };
                expr = expr.mul_scalar(rescale(hp, key)?);
            }
        }
    }
    if name.ends_with("kv_b_proj.weight") {
        let bid = bid.ok_or_else(|| ConvertError::Tensor {
            name: name.clone(),
            problem: "kv_b_proj outside a block".into(),
        })?;
        let swa = is_swa_layer(hp, &layer_types(hp)?, bid)?;
        let pre = if swa { "swa_" } else { "" };
        let key = |k: &str| format!("{pre}{k}");
        let n_head = hp.req_u64(&[key("num_attention_heads").as_str()])?;
        let nope = hp.req_u64(&[key("qk_nope_head_dim").as_str()])?;
        let v = hp.req_u64(&[key("v_head_dim").as_str()])?;
        let (k_b, v_b) = split_kv_b(&name, expr, n_head, nope, v)?;
        return Ok(Modified::Out(vec![
            (name.replace("kv_b_proj", "k_b_proj"), k_b),
            (name.replace("kv_b_proj", "v_b_proj"), v_b),
        ]));
    }
    mla_hook(hp, name, expr, false)
}

/// `kv_b_proj` `[n_head * (nope + v), rank]` → `k_b` `[n_head, rank, nope]`, `v_b`
/// `[n_head, v, rank]`.
fn split_kv_b(
    name: &str,
    expr: Expr,
    n_head: u64,
    nope: u64,
    v: u64,
) -> Result<(Expr, Expr), ConvertError> {
    let shape = expr.shape().to_vec();
    let per_head = nope.checked_add(v);
    let rows = per_head.and_then(|p| p.checked_mul(n_head));
    if shape.len() != 2 || rows != Some(shape[0]) {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "shape {shape:?} is not [heads {n_head} * (qk_nope_head_dim {nope} + \
                 v_head_dim {v}), kv_lora_rank] of its layer's kind"
            ),
        });
    }
    let kv = expr.reshape(name, vec![n_head, per_head.unwrap_or(0), shape[1]])?;
    let k = kv.clone().narrow(name, 1, 0, nope)?.transpose_last2(name)?;
    let v = kv.narrow(name, 1, nope, v)?;
    Ok((k, v))
}

/// `Dots3NoteModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let n_layer = main_layers(hp)?;
    let blocks = hp.block_count()?;
    let types = layer_types(hp)?;
    let full_heads = hp
        .get("num_attention_heads")
        .cloned()
        .ok_or_else(|| hp.missing(&["num_attention_heads"]))?;
    let swa_heads = hp
        .get("swa_num_attention_heads")
        .cloned()
        .ok_or_else(|| hp.missing(&["swa_num_attention_heads"]))?;
    let mut heads = Vec::new();
    let mut swa_pattern = Vec::new();
    for il in 0..blocks {
        let swa = is_swa_layer(hp, &types, il)?;
        heads.push(if swa {
            swa_heads.clone()
        } else {
            full_heads.clone()
        });
        if il < n_layer {
            swa_pattern.push(swa);
        }
    }
    // The DeepSeek-V2 step runs on hparams with the per-block head counts, one KV head
    // (MLA as MQA), no `head_dim` and `rms_norm_eps` defaulted.
    let mut h = hp.clone();
    h.map
        .insert("num_attention_heads".into(), Json::Array(heads));
    h.map.remove("head_dim");
    h.map.insert("num_key_value_heads".into(), Json::from(1));
    if !h.map.contains_key("rms_norm_eps") {
        h.map.insert("rms_norm_eps".into(), Json::from(1e-6));
    }
    let mut q = p.with_hparams(&h);
    q.generic()?;
    mla_params(&mut q)?;

    q.req_u32(attention::SLIDING_WINDOW, &["sliding_window_size"])?;
    q.bools(attention::SLIDING_WINDOW_PATTERN, swa_pattern);
    let rank = hp.req_u64(&["swa_kv_lora_rank"])?;
    mla_lengths(&mut q, rank, &SWA_MLA_LENGTHS)?;
    let q_lora = hp
        .get("q_lora_rank")
        .ok_or_else(|| hp.missing(&["q_lora_rank"]))?;
    let swa_q_lora = hp
        .get("swa_q_lora_rank")
        .ok_or_else(|| hp.missing(&["swa_q_lora_rank"]))?;
    if !same_number(q_lora, swa_q_lora) {
        return Err(refuse(
            hp,
            "conversion assumes a shared q_lora_rank for both layer kinds",
        ));
    }
    if hp.extra_blocks > 0 {
        q.u32(mla::NEXTN_PREDICT_LAYERS, hp.extra_blocks)?;
    }
    q.req_u32(indexer::HEAD_COUNT, &["index_n_heads"])?;
    q.req_u32(indexer::KEY_LENGTH, &["index_head_dim"])?;
    q.req_u32(indexer::TOP_K, &["index_topk"])?;
    let full: Vec<bool> = swa_pattern_of(hp, &types, n_layer)?
        .into_iter()
        .map(|s| !s)
        .collect();
    q.bools(indexer::TYPES, full);
    Ok(())
}

/// The sliding flags of the main layers.
fn swa_pattern_of(hp: &Hparams, types: &[String], n: u64) -> Result<Vec<bool>, ConvertError> {
    (0..n).map(|il| is_swa_layer(hp, types, il)).collect()
}

/// Python's `!=` between two JSON numbers (or nulls): `8 == 8.0`.
fn same_number(a: &Json, b: &Json) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// `Dots3NoteModel.set_vocab`: GPT-2 BPE with eot = the added token `<|endofassistant|>`
/// (unless the special-token files set one).
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.gpt2_with_added_specials(|find| Ok(vec![("eot", find("<|endofassistant|>")?)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_numbers_are_the_first_numeric_part() {
        assert_eq!(
            block_of("model.layers.3.self_attn.kv_b_proj.weight"),
            Some(3)
        );
        assert_eq!(block_of("model.mtp.embed_tokens.weight"), None);
        assert_eq!(
            block_of("model.layers.1.mlp.experts.7.up_proj.weight"),
            Some(1)
        );
    }

    #[test]
    fn kv_b_splits_with_the_layer_kinds_geometry() {
        let x: Vec<f32> = (0..12).map(|i| i as f32).collect();
        // 2 heads of (1 nope + 2 v) rows, rank 2.
        let kv = Expr::constant(x, vec![6, 2]);
        let (k, v) = split_kv_b("kv_b_proj.weight", kv, 2, 1, 2).unwrap();
        assert_eq!(k.shape(), [2, 2, 1]);
        assert_eq!(v.shape(), [2, 2, 2]);
        assert_eq!(k.eval_f32().unwrap(), [0., 1., 6., 7.]);
        let wrong = Expr::constant(vec![0.; 10], vec![5, 2]);
        assert!(split_kv_b("kv_b_proj.weight", wrong, 2, 1, 2).is_err());
    }
}
