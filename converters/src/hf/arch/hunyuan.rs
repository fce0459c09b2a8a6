//! `HunYuanDenseV1ForCausalLM` (arch `hunyuan-dense`, `HunYuanModel` in
//! `conversion/hunyuan.py`).
//!
//! A Llama-layout decoder (NeoX rope, no q/k permutation) with q/k norms named
//! `query_layernorm` / `key_layernorm`. A `num_experts` of one is not written as an expert
//! count. NTK-alpha rope scaling (`rope_type` "dynamic" or "xdrope") is folded into the rope
//! base, `theta * alpha^(d / (d - 2))` with `d = head_dim`, and written as unscaled rope;
//! "dynamic" also fixes the context length at 256 Ki and holds only for `rope_theta`
//! 10000 and a configured length of 32 Ki or 256 Ki (the reference asserts so). A tied
//! checkpoint's `lm_head` is dropped. The vocabulary is GPT-2 BPE from tokenizer.json
//! (without it the class needs the tokenizer's remote tiktoken code: refused); `eos` is
//! `eod_token_id` when the config has one, and `eot` the first of generation_config.json's
//! `eos_token_id` list when it has two or more.

use ggufkit::gguf::keys::{self, llm, rope};
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::json_truthy_opt as truthy;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// Hunyuan dense (Hunyuan-0.5B … 7B).
pub const HUNYUAN_DENSE: Arch = Arch {
    hf_names: &["HunYuanDenseV1ForCausalLM"],
    model_types: &[ModelType {
        name: "hunyuan_v1_dense",
        hf_classes: &["HunYuanDenseV1ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 290943,
            "hidden_size" => 4096,
            "intermediate_size" => 11008,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => (Json::Null),
            "max_position_embeddings" => 2048,
            "rms_norm_eps" => 1e-5,
            "pad_token_id" => 0,
            "bos_token_id" => 1,
            "eos_token_id" => 2,
            "eod_token_id" => 3,
            "tie_word_embeddings" => false,
            "head_dim" => (Json::Null),
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "hunyuan-dense",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[Tensor::AttnQkv, Tensor::AttnQNorm, Tensor::AttnKNorm],
    ],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(drop_tied_head),
        ..Rules::NONE
    },
    params: dense_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The context length the reference writes for NTK-alpha ("dynamic") rope: 256 Ki.
const ALPHA_CONTEXT: u64 = 256 * 1024;

/// `lm_head.weight` is not written when `tie_word_embeddings` is set (Python truthiness).
pub(super) fn drop_tied_head(
    hp: &Hparams,
    name: String,
    expr: Expr,
) -> Result<Modified, ConvertError> {
    if name == "lm_head.weight" && truthy(hp.get("tie_word_embeddings")) {
        return Ok(Modified::Drop);
    }
    Ok(Modified::Pass(name, expr))
}

/// `HunYuanModel.set_gguf_parameters`.
fn dense_params(p: &mut Params) -> Result<(), ConvertError> {
    // The generic block runs with `num_experts` hidden: a single "expert" is not a MoE.
    let mut hidden = p.hp.clone();
    hidden.map.remove("num_experts");
    p.with_hparams(&hidden).generic()?;
    let hp = p.hp;
    let rope_type = hp.rope.get("rope_type").and_then(Json::as_str);
    if !matches!(rope_type, Some("dynamic" | "xdrope")) {
        return Ok(());
    }
    let number = |key: &str, default: f64| -> Result<f64, ConvertError> {
        match hp.rope.get(key) {
            None => Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| {
                ConvertError::wrong_type(&hp.path, format!("rope parameter {key}"), "a number", v)
            }),
        }
    };
    let alpha = number("alpha", 50.0)?;
    let base = number("rope_theta", 10000.0)?;
    let dim = hp.req_u64(&["head_dim"])? as f64;
    let scaled = base * alpha.powf(dim / (dim - 2.0));
    if !scaled.is_finite() {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "rope_theta * alpha ^ (head_dim / (head_dim - 2)) (NTK-alpha rope)",
            format!("{base} * {alpha} ^ ({dim} / ({dim} - 2))"),
            "a finite number",
        ));
    }
    p.f32(rope::FREQ_BASE, scaled);
    p.rope_scaling_none();
    p.f32(rope::SCALING_FACTOR, 1.0);
    if rope_type == Some("dynamic") {
        p.u32(rope::SCALING_ORIG_CTX_LEN, ALPHA_CONTEXT)?;
        p.u32(llm::CONTEXT_LENGTH, ALPHA_CONTEXT)?;
        let ctx = hp.find_u64(&["max_position_embeddings"])?;
        if base != 10000.0 || !matches!(ctx, Some(32768 | 262144)) {
            return Err(ConvertError::Unsupported(format!(
                "HunYuan dynamic (NTK-alpha) rope is converted for rope_theta 10000 and \
                 max_position_embeddings 32768 or 262144 only (the reference asserts it); \
                 this config has rope_theta {base} and max_position_embeddings {ctx:?}"
            )));
        }
    }
    Ok(())
}

/// `HunYuanModel.set_vocab`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let hp = b.hparams().clone();
    if !b.dir().has_file(crate::hf::model_dir::TOKENIZER_JSON) {
        return Err(ConvertError::Unsupported(
            "HunYuanDenseV1ForCausalLM without tokenizer.json: its tiktoken tokenizer needs \
             the model's remote code, which is not run"
                .into(),
        ));
    }
    // A negative pad id (some OCR configs) keeps the special vocabulary from reading pad.
    let pad = hp.get("pad_token_id").and_then(Json::as_i64).unwrap_or(0);
    let outcome = if pad < 0 {
        b.gpt2_special_types(&["bos", "eos", "unk", "sep", "cls", "mask"])?
    } else {
        b.gpt2()?
    };
    match hp.get("eod_token_id") {
        None | Some(Json::Null) => {}
        Some(v) => {
            let id = v.as_i64().ok_or_else(|| {
                ConvertError::wrong_type(b.dir().config_path(), "eod_token_id", "an integer", v)
            })?;
            b.set_token_id(keys::tokenizer::EOS_ID, id.into())?;
        }
    }
    if let Some(gen_config) = b.dir().generation_config()? {
        let gen = b.dir().generation_config_path();
        let eos = gen_config.get("eos_token_id").cloned();
        if let Some(Json::Array(ids)) = eos.filter(|e| e.as_array().is_some_and(|a| a.len() >= 2)) {
            let id = ids[0].as_i64().ok_or_else(|| {
                ConvertError::wrong_type(&gen, "eos_token_id[0]", "an integer", &ids[0])
            })?;
            b.set_token_id(keys::tokenizer::EOT_ID, id.into())?;
        }
    }
    Ok(outcome)
}
