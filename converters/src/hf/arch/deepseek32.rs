//! `DeepseekV32ForCausalLM` (arch `deepseek32`, `DeepseekV32Model` in
//! `conversion/deepseek.py`).
//!
//! DeepSeek V3.2 is the DeepSeek-V3 layout (MLA attention with `kv_b_proj` split into
//! `attn_k_b` / `attn_v_b`, dense leading blocks, routed and shared experts with the
//! selection bias; see `deepseek2.rs`) plus DeepSeek sparse attention's *lightning indexer*
//! in every attention block: `self_attn.indexer.wq_b` (queries from the q-lora latent),
//! `wk`, `k_norm` (a LayerNorm, weight and bias) and `weights_proj`, written under
//! `blk.N.indexer.*`, with its head count, key size and top-k as
//! `attention.indexer.*` KVs.
//!
//! Unlike V3, the next-token-prediction blocks (`model.layers.N` at or past
//! `num_hidden_layers`) are kept: they count in the block count and
//! `nextn_predict_layers` is written whenever the config has `num_nextn_predict_layers`.
//! `--no-mtp` drops them (and leaves both out); `--mtp` keeps only them and the tensors they
//! share with the model (embeddings, final norm, output).
//!
//! The vocabulary is GPT-2 BPE, but the class first loads the tokenizer with
//! `AutoTokenizer` and refuses one whose `add_bos_token` is false. transformers 5 takes
//! that attribute from the tokenizer class's constructor, not from tokenizer_config.json,
//! whenever there is a tokenizer.json (it drops `add_bos_token` from the saved settings
//! then), and only `CodeLlamaTokenizer` defaults it to true; so the published checkpoints
//! (tokenizer.json, `LlamaTokenizerFast`, `add_bos_token: true`) are refused by the
//! reference, and by this converter with the reference's message.

use ggufkit::gguf::keys::{indexer, mla};
use serde_json::{Map, Value as Json};

use super::deepseek2::{
    mla_hook, mla_params, truthy, DEEPSEEK_EXPERTS, MLA_TENSORS, MOE_NEXTN_TENSORS,
};
use super::glm4moe::{is_past_main_layers, GLM_MTP_SHARED};
use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, MtpExport, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

/// The lightning indexer's tensors.
pub(super) const INDEXER_TENSORS: &[Tensor] = &[
    Tensor::IndexerKNorm,
    Tensor::IndexerProj,
    Tensor::IndexerAttnK,
    Tensor::IndexerAttnQB,
];

/// DeepSeek V3.2.
pub const DEEPSEEK32: Arch = Arch {
    hf_names: &["DeepseekV32ForCausalLM"],
    model_types: &[ModelType {
        name: "deepseek_v32",
        hf_classes: &["DeepseekV32ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 129280,
            "hidden_size" => 7168,
            "intermediate_size" => 18432,
            "moe_intermediate_size" => 2048,
            "num_hidden_layers" => 61,
            "num_attention_heads" => 128,
            "num_key_value_heads" => 128,
            "n_shared_experts" => 1,
            "n_routed_experts" => 256,
            "routed_scaling_factor" => 2.5,
            "kv_lora_rank" => 512,
            "q_lora_rank" => 1536,
            "qk_rope_head_dim" => 64,
            "v_head_dim" => 128,
            "qk_nope_head_dim" => 128,
            "n_group" => 8,
            "topk_group" => 4,
            "num_experts_per_tok" => 8,
            "norm_topk_prob" => true,
            "max_position_embeddings" => 163840,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "first_k_dense_replace" => 3,
            "index_topk" => 2048,
            "index_head_dim" => 128,
            "index_n_heads" => 64,
        },
        head_dim: HeadDim::CopyOf("qk_rope_head_dim"),
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(expert_count_aliases),
    }],
    composites: &[],
    gguf: "deepseek32",
    vocab: VocabKind::Own(set_vocab),
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

/// `DeepseekV32Config`: `num_local_experts` is stored as `n_routed_experts`
/// (`attribute_map`), and a `num_experts` given to the constructor sets it too.
pub(super) fn expert_count_aliases(cfg: &mut Map<String, Json>) -> bool {
    if let Some(v) = cfg.remove("num_local_experts") {
        cfg.insert("n_routed_experts".into(), v);
    }
    if let Some(v) = cfg.get("num_experts").filter(|v| !v.is_null()).cloned() {
        cfg.insert("n_routed_experts".into(), v);
    }
    true
}

/// `DeepseekV2Model.filter_tensors`: the DeepSeek-OCR vision towers (`sam_model`,
/// `qwen2_model`) are not part of the text model.
pub(super) fn drop_ocr_towers(name: &str) -> Option<String> {
    if name.contains("sam_model") || name.contains("qwen2_model") {
        return None;
    }
    Some(name.to_string())
}

/// `DeepseekV2Model.modify_tensors` with the next-token-prediction blocks kept.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    mla_hook(hp, name, expr, false)
}

/// `DeepseekV32Model.set_gguf_parameters`: V2's keys, `nextn_predict_layers` (unless
/// `--no-mtp`), then the indexer's.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    mla_params(p)?;
    let hp = p.hp;
    if hp.mtp != Mtp::Drop {
        if let Some(n) = hp.find_u64(&["num_nextn_predict_layers"])? {
            p.u32(mla::NEXTN_PREDICT_LAYERS, n)?;
        }
    }
    p.req_u32(indexer::HEAD_COUNT, &["index_n_heads"])?;
    p.req_u32(indexer::KEY_LENGTH, &["index_head_dim"])?;
    p.req_u32(indexer::TOP_K, &["index_topk"])?;
    Ok(())
}

/// The one tokenizer class whose constructor sets `add_bos_token` to true by default.
const BOS_BY_DEFAULT: &str = "CodeLlamaTokenizer";

/// `DeepseekV32Model.set_vocab`: the tokenizer's `add_bos_token` must be true (see the
/// module documentation for what transformers 5 makes of it), then `_set_vocab_gpt2`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let tc = b.tokenizer_config();
    let class = tc
        .and_then(|t| t.get("tokenizer_class"))
        .and_then(Json::as_str)
        .map(|c| c.strip_suffix("Fast").unwrap_or(c));
    let class_default = class == Some(BOS_BY_DEFAULT);
    let has_tokenizer_json = b.dir().has_file(crate::hf::model_dir::TOKENIZER_JSON);
    let add_bos = if has_tokenizer_json {
        class_default
    } else {
        match tc.and_then(|t| t.get("add_bos_token")) {
            Some(v) if !v.is_null() => truthy(Some(v)),
            _ => class_default,
        }
    };
    if !add_bos {
        let why = if has_tokenizer_json {
            "the tokenizer's add_bos_token is false (with a tokenizer.json, transformers 5 \
             ignores tokenizer_config.json's add_bos_token); the reference refuses this \
             tokenizer: \"Change value of add_bos_token to true in tokenizer_config.json file.\""
        } else {
            "add_bos_token is not true: \"Change value of add_bos_token to true in \
             tokenizer_config.json file.\""
        };
        return Err(ConvertError::format(
            b.dir().tokenizer_config_path(),
            None,
            why,
        ));
    }
    b.gpt2()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expert_count_spellings_become_n_routed_experts() {
        let mut cfg = serde_json::json!({"num_local_experts": 6})
            .as_object()
            .unwrap()
            .clone();
        assert!(expert_count_aliases(&mut cfg));
        assert_eq!(cfg.get("n_routed_experts"), Some(&serde_json::json!(6)));
        assert!(cfg.get("num_local_experts").is_none());
        let mut cfg = serde_json::json!({"n_routed_experts": 4, "num_experts": 8})
            .as_object()
            .unwrap()
            .clone();
        expert_count_aliases(&mut cfg);
        assert_eq!(cfg.get("n_routed_experts"), Some(&serde_json::json!(8)));
    }

    #[test]
    fn ocr_towers_are_dropped() {
        assert_eq!(drop_ocr_towers("model.sam_model.blocks.0.w"), None);
        assert_eq!(drop_ocr_towers("model.qwen2_model.x"), None);
        assert_eq!(
            drop_ocr_towers("model.layers.0.self_attn.indexer.wk.weight").as_deref(),
            Some("model.layers.0.self_attn.indexer.wk.weight")
        );
    }
}
