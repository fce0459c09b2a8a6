//! `MPTForCausalLM` (arch `mpt`, `MPTModel(TextModel)` in `conversion/mpt.py`).
//!
//! A pre-norm decoder with a fused `Wqkv` (already in q, k, v order), a GELU FFN four
//! times `d_model`, ALiBi or learned positions. The hparams are written by the class:
//! context `max_seq_len`, epsilon fixed at 1e-5, the kv head count when `attn_config`
//! gives one, the q/k/v clamp when `clip_qkv` is set, and the ALiBi bias maximum (0 without
//! ALiBi). MptConfig builds `attn_config` as a sub-config with its own defaults. The
//! vocabulary is GPT-2 BPE, or, when that fails, SentencePiece with SEA-LION's fixed
//! special tokens. Activation-scale tensors (`*.scales`) cannot be mapped by the reference
//! and are refused here too.

use ggufkit::gguf::keys::{attention, llm, tokenizer as tok};
use serde_json::{json, Map, Value as Json};

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::json_truthy_opt as truthy;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The MPT class.
pub const MPT: Arch = Arch {
    hf_names: &["MPTForCausalLM"],
    model_types: &[ModelType {
        name: "mpt",
        hf_classes: &["MPTForCausalLM"],
        defaults: defaults! {
            "d_model" => 2048,
            "n_heads" => 16,
            "n_layers" => 24,
            "expansion_ratio" => 4,
            "max_seq_len" => 2048,
            "vocab_size" => 50368,
            "layer_norm_epsilon" => 1e-5,
            "learned_pos_emb" => true,
            "no_bias" => true,
            "norm_type" => "low_precision_layernorm",
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(attn_config_defaults),
    }],
    composites: &[],
    gguf: "mpt",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::PosEmbd,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(refuse_scales),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// MptAttentionConfig's defaults, filled into `attn_config` (absent or null: all of them).
/// `false` when transformers would raise (an `attn_config` that is not a dict).
fn attn_config_defaults(cfg: &mut Map<String, Json>) -> bool {
    let mut ac = match cfg.remove("attn_config") {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(m)) => m,
        Some(other) => {
            cfg.insert("attn_config".into(), other);
            return false;
        }
    };
    for (k, v) in [
        ("attn_type", json!("multihead_attention")),
        ("attn_pdrop", json!(0)),
        ("attn_impl", json!("torch")),
        ("clip_qkv", Json::Null),
        ("softmax_scale", Json::Null),
        ("prefix_lm", json!(false)),
        ("qk_ln", json!(false)),
        ("attn_uses_sequence_id", json!(false)),
        ("alibi", json!(true)),
        ("alibi_bias_max", json!(8)),
    ] {
        ac.entry(k).or_insert(v);
    }
    cfg.insert("attn_config".into(), Json::Object(ac));
    true
}

/// The reference maps a `scales` tensor to a name it cannot map again: refused.
fn refuse_scales(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.contains("scales") {
        return Err(ConvertError::Tensor {
            name,
            problem: "activation scales (ffn_act.act.scales) cannot be mapped: the reference \
                      refuses them too"
                .into(),
        });
    }
    Ok(Modified::Pass(name, expr))
}

/// `attn_config[key]`, which the reference indexes (a missing key is its KeyError).
fn attn<'a>(hp: &'a Hparams, key: &str) -> Result<Option<&'a Json>, ConvertError> {
    match hp.get("attn_config") {
        Some(Json::Object(ac)) => Ok(ac.get(key)),
        _ => Err(hp.missing(&["attn_config"])),
    }
}

fn bad(hp: &Hparams, key: &str, v: &Json, expected: &str) -> ConvertError {
    ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![format!("attn_config.{key}")],
        expected: expected.into(),
        found: v.to_string(),
    }
}

/// `MPTModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.req_u32(llm::CONTEXT_LENGTH, &["max_seq_len"])?;
    let d_model = hp.req_u64(&["d_model"])?;
    p.u32(llm::EMBEDDING_LENGTH, d_model)?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    let ff = d_model
        .checked_mul(4)
        .ok_or_else(|| ConvertError::NotACount {
            key: "d_model".into(),
            value: d_model.to_string(),
        })?;
    p.u32(llm::FEED_FORWARD_LENGTH, ff)?;
    p.req_u32(attention::HEAD_COUNT, &["n_heads"])?;
    if let Some(v) = attn(hp, "kv_n_heads")?.filter(|v| truthy(Some(v))) {
        let kv = json_u64(v).ok_or_else(|| bad(hp, "kv_n_heads", v, "a count"))?;
        p.u32(attention::HEAD_COUNT_KV, kv)?;
    }
    p.f32(attention::LAYERNORM_EPS, 1e-5);
    match attn(hp, "clip_qkv")? {
        None => return Err(hp.missing(&["attn_config.clip_qkv"])),
        Some(Json::Null) => {}
        Some(v) => {
            let c = v
                .as_f64()
                .ok_or_else(|| bad(hp, "clip_qkv", v, "a number"))?;
            p.f32(attention::CLAMP_KQV, c);
        }
    }
    let alibi = attn(hp, "alibi")?.ok_or_else(|| hp.missing(&["attn_config.alibi"]))?;
    if truthy(Some(alibi)) {
        let v = attn(hp, "alibi_bias_max")?
            .ok_or_else(|| hp.missing(&["attn_config.alibi_bias_max"]))?;
        let m = v
            .as_f64()
            .ok_or_else(|| bad(hp, "alibi_bias_max", v, "a number"))?;
        p.f32(attention::MAX_ALIBI_BIAS, m);
    } else {
        p.f32(attention::MAX_ALIBI_BIAS, 0.0);
    }
    Ok(())
}

/// `MPTModel.set_vocab`: GPT-2 BPE; if that fails, SentencePiece with `add_bos` false and
/// SEA-LION's pad 3, eos 1, unk 0.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    match b.gpt2() {
        Ok(outcome) => Ok(outcome),
        Err(_) => {
            let model =
                b.require_spm_model("MPT's SentencePiece fallback needs tokenizer.model")?;
            let path = b.sentencepiece(model)?;
            b.set_bool(tok::ADD_BOS, false);
            b.set_u32(tok::PAD_ID, 3);
            b.set_u32(tok::EOS_ID, 1);
            b.set_u32(tok::UNK_ID, 0);
            Ok((path, None))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map};

    use super::attn_config_defaults;

    /// MptAttentionConfig's defaults fill what the file leaves out; a non-dict is refused.
    #[test]
    fn mpt_attn_config() {
        let mut cfg = Map::new();
        cfg.insert(
            "attn_config".into(),
            json!({"alibi": false, "kv_n_heads": 2}),
        );
        assert!(attn_config_defaults(&mut cfg));
        assert_eq!(cfg["attn_config"]["alibi"], json!(false));
        assert_eq!(cfg["attn_config"]["alibi_bias_max"], json!(8));
        assert_eq!(cfg["attn_config"]["clip_qkv"], json!(null));
        assert_eq!(cfg["attn_config"]["kv_n_heads"], json!(2));
        let mut bad = Map::new();
        bad.insert("attn_config".into(), json!(3));
        assert!(!attn_config_defaults(&mut bad));
    }
}
