//! `DbrxForCausalLM` (arch `dbrx`, `DbrxModel(TextModel)` in `conversion/dbrx.py`).
//!
//! A mixture-of-experts decoder: layernorms without bias around a fused `Wqkv` (q, k, v in
//! order), a router and the experts of each layer stored as one 2-D tensor per projection
//! (`ffn.experts.mlp.{w1,v1,w2}`, `n_expert * n_ff` rows of `d_model`, without a `.weight`
//! suffix). Those are viewed as `[n_expert, n_ff, d_model]`, `w2` with its last two
//! dimensions swapped, and named with `.weight` added. The hparams come from the class's own
//! list: the attention and FFN values from the `attn_config` / `ffn_config` sub-configs
//! (which DbrxConfig builds with their own defaults), epsilon fixed at 1e-5. Every tensor of
//! two or more dimensions takes the outtype's type (the class's `tensor_force_quant`), the
//! router included. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{attention, llm, rope};
use serde_json::{json, Map, Value as Json};

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The DBRX class.
pub const DBRX: Arch = Arch {
    hf_names: &["DbrxForCausalLM"],
    model_types: &[ModelType {
        name: "dbrx",
        hf_classes: &["DbrxForCausalLM"],
        defaults: defaults! {
            "d_model" => 2048,
            "n_heads" => 16,
            "n_layers" => 24,
            "max_seq_len" => 2048,
            "vocab_size" => 32000,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(prepare),
    }],
    composites: &[],
    gguf: "dbrx",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::AttnOutNorm,
        Tensor::FfnGateInp,
        Tensor::FfnGateExp,
        Tensor::FfnDownExp,
        Tensor::FfnUpExp,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(experts),
        quantize_all_matrices: true,
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// DbrxConfig's `attribute_map`: config.json may spell these keys by their common names;
/// `to_dict()` shows the class's own.
const ALIASES: &[(&str, &str)] = &[
    ("num_attention_heads", "n_heads"),
    ("hidden_size", "d_model"),
    ("num_hidden_layers", "n_layers"),
    ("max_position_embeddings", "max_seq_len"),
];

/// DbrxConfig's construction: the aliases, then `attn_config` / `ffn_config` built with
/// their classes' defaults (absent or null: all of them). `false` when transformers raises:
/// a sub-config that is not a dict, or tied embeddings (which the class refuses).
fn prepare(cfg: &mut Map<String, Json>) -> bool {
    for (alias, attr) in ALIASES {
        if let Some(v) = cfg.remove(*alias) {
            cfg.insert((*attr).into(), v);
        }
    }
    if matches!(cfg.get("tie_word_embeddings"), Some(Json::Bool(true))) {
        return false;
    }
    let attn_defaults = [
        ("attn_pdrop", json!(0.0)),
        ("clip_qkv", Json::Null),
        ("kv_n_heads", json!(1)),
    ];
    let ffn_defaults = [
        ("ffn_act_fn", json!({"name": "silu"})),
        ("ffn_hidden_size", json!(3584)),
        ("moe_num_experts", json!(4)),
        ("moe_top_k", json!(1)),
        ("moe_jitter_eps", Json::Null),
        ("moe_loss_weight", json!(0.01)),
        ("moe_normalize_expert_weights", json!(1.0)),
    ];
    fill_sub(cfg, "attn_config", &attn_defaults) && fill_sub(cfg, "ffn_config", &ffn_defaults)
}

/// Fills sub-config `key` with `defaults` (a null or absent one becomes all defaults);
/// `false` when it is not a dict.
fn fill_sub(cfg: &mut Map<String, Json>, key: &str, defaults: &[(&str, Json)]) -> bool {
    let mut sub = match cfg.remove(key) {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(m)) => m,
        Some(other) => {
            cfg.insert(key.into(), other);
            return false;
        }
    };
    for (k, v) in defaults {
        sub.entry(*k).or_insert_with(|| v.clone());
    }
    cfg.insert(key.into(), Json::Object(sub));
    true
}

/// `hparams[sub][key]`, which the reference indexes (a missing key is its KeyError).
fn sub<'a>(hp: &'a Hparams, sub: &str, key: &str) -> Result<&'a Json, ConvertError> {
    match hp.get(sub) {
        Some(Json::Object(m)) => m
            .get(key)
            .ok_or_else(|| hp.missing(&[&format!("{sub}.{key}")])),
        _ => Err(hp.missing(&[sub])),
    }
}

fn bad(hp: &Hparams, key: &str, v: &Json, expected: &str) -> ConvertError {
    ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![key.into()],
        expected: expected.into(),
        found: v.to_string(),
    }
}

/// `hparams[sub][key]` as a count.
fn sub_u64(hp: &Hparams, s: &str, key: &str) -> Result<u64, ConvertError> {
    let v = sub(hp, s, key)?;
    json_u64(v).ok_or_else(|| bad(hp, &format!("{s}.{key}"), v, "a count"))
}

/// `hparams[sub][key]` as a number (a null cannot be written as a float: the reference
/// fails writing it).
fn sub_f64(hp: &Hparams, s: &str, key: &str) -> Result<f64, ConvertError> {
    let v = sub(hp, s, key)?;
    v.as_f64()
        .ok_or_else(|| bad(hp, &format!("{s}.{key}"), v, "a number"))
}

/// `DbrxModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    sub(hp, "ffn_config", "ffn_hidden_size")?;
    sub(hp, "attn_config", "kv_n_heads")?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::CONTEXT_LENGTH, &["max_seq_len"])?;
    p.req_u32(llm::EMBEDDING_LENGTH, &["d_model"])?;
    p.u32(
        llm::FEED_FORWARD_LENGTH,
        sub_u64(hp, "ffn_config", "ffn_hidden_size")?,
    )?;
    p.req_u32(attention::HEAD_COUNT, &["n_heads"])?;
    p.u32(
        attention::HEAD_COUNT_KV,
        sub_u64(hp, "attn_config", "kv_n_heads")?,
    )?;
    p.f32(rope::FREQ_BASE, sub_f64(hp, "attn_config", "rope_theta")?);
    p.f32(
        attention::CLAMP_KQV,
        sub_f64(hp, "attn_config", "clip_qkv")?,
    );
    p.u32(
        llm::EXPERT_COUNT,
        sub_u64(hp, "ffn_config", "moe_num_experts")?,
    )?;
    p.u32(
        llm::EXPERT_USED_COUNT,
        sub_u64(hp, "ffn_config", "moe_top_k")?,
    )?;
    p.f32(attention::LAYERNORM_EPS, 1e-5);
    p.file_type();
    Ok(())
}

/// The expert projections (HF name part) and whether the view is transposed.
const EXPERTS: &[(&str, bool)] = &[
    ("ffn.experts.mlp.w1", false),
    ("ffn.experts.mlp.w2", true),
    ("ffn.experts.mlp.v1", false),
];

/// `DbrxModel.modify_tensors`: an expert tensor without `.weight` in its name is viewed as
/// `[n_expert, n_ff, d_model]` (`w2` then transposed to `[n_expert, d_model, n_ff]`) and
/// named with `.weight` added; the hparams are read for every tensor, as the class does.
fn experts(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let n_expert = sub_u64(hp, "ffn_config", "moe_num_experts")?;
    let n_ff = sub_u64(hp, "ffn_config", "ffn_hidden_size")?;
    let n_embd = hp.req_u64(&["d_model"])?;
    let Some(&(_, transpose)) = EXPERTS
        .iter()
        .find(|(part, _)| name.contains(part) && !name.contains(".weight"))
    else {
        return Ok(Modified::Pass(name, expr));
    };
    let mut e = expr.reshape(&name, vec![n_expert, n_ff, n_embd])?;
    if transpose {
        e = e.transpose_last2(&name)?;
    }
    Ok(Modified::Pass(format!("{name}.weight"), e))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map};

    use super::prepare;

    /// The sub-configs get their classes' defaults, the aliases their own names; a tied
    /// head or a non-dict sub-config is refused by the class.
    #[test]
    fn dbrx_prepare() {
        let mut cfg = Map::new();
        cfg.insert("hidden_size".into(), json!(32));
        cfg.insert("attn_config".into(), json!({"rope_theta": 1e4}));
        assert!(prepare(&mut cfg));
        assert_eq!(cfg["d_model"], json!(32));
        assert_eq!(cfg["attn_config"]["kv_n_heads"], json!(1));
        assert_eq!(cfg["attn_config"]["clip_qkv"], json!(null));
        assert_eq!(cfg["ffn_config"]["moe_num_experts"], json!(4));
        assert_eq!(cfg["ffn_config"]["ffn_act_fn"], json!({"name": "silu"}));
        let mut tied = Map::new();
        tied.insert("tie_word_embeddings".into(), json!(true));
        assert!(!prepare(&mut tied));
        let mut bad = Map::new();
        bad.insert("ffn_config".into(), json!([1]));
        assert!(!prepare(&mut bad));
    }
}
