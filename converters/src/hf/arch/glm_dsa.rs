//! `GlmMoeDsaForCausalLM` (arch `glm-dsa`, `GlmMoeDsaModel` in `conversion/glm.py`).
//!
//! GLM-5: the DeepSeek-V2 class's MLA layout (see `deepseek2.rs`) with DeepSeek sparse
//! attention's indexer in every block (as DeepSeek V3.2, `deepseek32.rs`), GLM's vocabulary
//! (`_set_vocab_glm`), and the next-token-prediction blocks kept (`--mtp` / `--no-mtp` as
//! V3.2). Beyond V2's hparams it writes the rope dimensions as `qk_rope_head_dim *
//! partial_rotary_factor` (truncated), `nextn_predict_layers`, the indexer's head count, key
//! size and top-k, and per layer whether the indexer runs there (`indexer_types`, which
//! `GlmMoeDsaConfig` always fills: from `index_topk_pattern` (`F`ull / `S`hared letters or a
//! list) when given, else layer `i` is full when `max(i - index_skip_topk_offset + 1, 0)`
//! is a multiple of `index_topk_freq`, defaults 2 and 1).

use ggufkit::gguf::keys::{indexer, mla, rope};
use serde_json::{Map, Value as Json};

use super::deepseek2::{mla_hook, mla_params, DEEPSEEK_EXPERTS, MLA_TENSORS, MOE_NEXTN_TENSORS};
use super::deepseek32::{drop_ocr_towers, expert_count_aliases, INDEXER_TENSORS};
use super::glm4moe::{is_past_main_layers, GLM_MTP_SHARED};
use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, MtpExport, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

/// `GlmMoeDsaConfig`'s `num_hidden_layers` default (the indexer types are sized by it).
const DEFAULT_LAYERS: u64 = 78;

/// GLM-5 (MoE with DeepSeek sparse attention).
pub const GLM_DSA: Arch = Arch {
    hf_names: &["GlmMoeDsaForCausalLM"],
    model_types: &[ModelType {
        name: "glm_moe_dsa",
        hf_classes: &["GlmMoeDsaForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 154880,
            "hidden_size" => 6144,
            "intermediate_size" => 12288,
            "moe_intermediate_size" => 2048,
            "num_hidden_layers" => DEFAULT_LAYERS,
            "num_attention_heads" => 64,
            "num_key_value_heads" => 64,
            "n_shared_experts" => 1,
            "n_routed_experts" => 256,
            "routed_scaling_factor" => 2.5,
            "kv_lora_rank" => 512,
            "q_lora_rank" => 2048,
            "qk_rope_head_dim" => 64,
            "v_head_dim" => 256,
            "qk_nope_head_dim" => 192,
            "n_group" => 1,
            "topk_group" => 1,
            "num_experts_per_tok" => 8,
            "norm_topk_prob" => true,
            "max_position_embeddings" => 202752,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "first_k_dense_replace" => 3,
            "index_topk" => 2048,
            "index_head_dim" => 128,
            "index_n_heads" => 32,
        },
        head_dim: HeadDim::CopyOf("qk_rope_head_dim"),
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(prepare),
    }],
    composites: &[],
    gguf: "glm-dsa",
    vocab: VocabKind::Own(super::glm4moe::set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, MLA_TENSORS, MOE_NEXTN_TENSORS, INDEXER_TENSORS],
    tensor_overrides: &[],
    filter: drop_ocr_towers,
    rules: Rules {
        experts: &[DEEPSEEK_EXPERTS],
        hook: Some(hook),
        nextn_blocks: true,
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp: is_past_main_layers,
            shared: GLM_MTP_SHARED,
        }),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `GlmMoeDsaConfig.__post_init__`: the expert-count spellings and the indexer types.
fn prepare(cfg: &mut Map<String, Json>) -> bool {
    expert_count_aliases(cfg);
    if cfg.get("indexer_types").is_none_or(Json::is_null) {
        if let Some(types) = indexer_types(cfg) {
            cfg.insert("indexer_types".into(), Json::from(types));
        }
    }
    true
}

/// The indexer type of each layer as the config class derives it; `None` where the class
/// itself would fail (a pattern letter other than `F`/`S`, a non-integer frequency or
/// offset), leaving the key out so that nothing is written for it.
fn indexer_types(cfg: &Map<String, Json>) -> Option<Vec<&'static str>> {
    let full_or_shared = |full: bool| if full { "full" } else { "shared" };
    match cfg.get("index_topk_pattern") {
        Some(Json::String(p)) => {
            return p
                .chars()
                .map(|c| match c {
                    'F' => Some("full"),
                    'S' => Some("shared"),
                    _ => None,
                })
                .collect();
        }
        Some(Json::Array(a)) => {
            return a
                .iter()
                .map(|v| match v.as_str() {
                    Some("full") => Some("full"),
                    Some("shared") => Some("shared"),
                    _ => None,
                })
                .collect();
        }
        Some(Json::Null) | None => {}
        Some(_) => return None,
    }
    let layers = match cfg.get("num_hidden_layers") {
        None => DEFAULT_LAYERS,
        Some(v) => v.as_u64()?,
    };
    let freq = match cfg.get("index_topk_freq") {
        None => 1,
        Some(v) => v.as_i64()?.max(1),
    };
    let offset = match cfg.get("index_skip_topk_offset") {
        None => 2,
        Some(v) => v.as_i64()?,
    };
    // The list is as long as the layer count: refuse to size it by an absurd one.
    if layers > crate::hf::config::MAX_BLOCK_COUNT {
        return None;
    }
    (0..layers)
        .map(|i| {
            let i = i64::try_from(i).ok()?;
            let k = i.checked_sub(offset)?.checked_add(1)?.max(0);
            Some(full_or_shared(k % freq == 0))
        })
        .collect()
}

/// `DeepseekV2Model.modify_tensors` with the next-token-prediction blocks kept.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    mla_hook(hp, name, expr, false)
}

/// `GlmMoeDsaModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    mla_params(p)?;
    let hp = p.hp;
    let rope_dim = hp.req_u64(&["qk_rope_head_dim"])?;
    let factor = match hp.rope.get("partial_rotary_factor") {
        None | Some(Json::Null) => 1.0,
        Some(v) => v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "rope partial_rotary_factor", "a number", v)
        })?,
    };
    let dims = rope_dim as f64 * factor;
    if !(0.0..4294967296.0).contains(&dims) {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "qk_rope_head_dim * partial_rotary_factor",
            format!("{rope_dim} * {factor}"),
            "a dimension count that fits a UINT32",
        ));
    }
    p.u32(rope::DIMENSION_COUNT, dims.trunc() as u64)?;
    if hp.mtp != Mtp::Drop {
        if let Some(n) = hp.find_u64(&["num_nextn_predict_layers"])? {
            p.u32(mla::NEXTN_PREDICT_LAYERS, n)?;
        }
    }
    p.req_u32(indexer::HEAD_COUNT, &["index_n_heads"])?;
    p.req_u32(indexer::KEY_LENGTH, &["index_head_dim"])?;
    p.req_u32(indexer::TOP_K, &["index_topk"])?;
    match hp.get("indexer_types") {
        None | Some(Json::Null) => {}
        Some(Json::Array(a)) => {
            let full = a.iter().map(|t| t.as_str() == Some("full")).collect();
            p.bools(indexer::TYPES, full);
        }
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "indexer_types",
                "a list",
                v,
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(cfg: serde_json::Value) -> Option<Vec<&'static str>> {
        indexer_types(cfg.as_object().unwrap())
    }

    #[test]
    fn indexer_types_follow_the_config_class() {
        // Defaults: offset 2, frequency 1: every layer full.
        assert_eq!(
            types(serde_json::json!({"num_hidden_layers": 3})),
            Some(vec!["full"; 3])
        );
        assert_eq!(
            types(serde_json::json!({"num_hidden_layers": 5, "index_topk_freq": 2})),
            Some(vec!["full", "full", "shared", "full", "shared"])
        );
        assert_eq!(
            types(
                serde_json::json!({"num_hidden_layers": 4, "index_topk_freq": 3,
                                     "index_skip_topk_offset": 0})
            ),
            Some(vec!["shared", "shared", "full", "shared"])
        );
        assert_eq!(
            types(serde_json::json!({"index_topk_pattern": "FSF"})),
            Some(vec!["full", "shared", "full"])
        );
        assert_eq!(types(serde_json::json!({"index_topk_pattern": "FX"})), None);
        assert_eq!(types(serde_json::json!({})).map(|t| t.len()), Some(78));
    }
}
