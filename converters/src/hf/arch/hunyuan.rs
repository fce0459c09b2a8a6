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
use serde_json::{Map, Value as Json};

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules, TextType};
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

/// The dense class's vocabulary, after the tokenizer loader's config check.
fn vl_set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    vl_config_refusal(b)?;
    set_vocab(b)
}

/// `HunYuanModel.set_vocab`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let hp = b.hparams().clone();
    if !b.dir().has_file(crate::hf::model_dir::TOKENIZER_JSON) {
        return Err(ConvertError::Unsupported(
            "a HunYuan checkpoint (HunYuanDenseV1ForCausalLM, HunYuanVLForConditionalGeneration) \
             without tokenizer.json: its tiktoken tokenizer needs the model's remote code, \
             which is not run"
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

/// HunyuanOCR's text model (`HunYuanVLForConditionalGeneration`, arch `hunyuan_vl`,
/// `HunyuanVLTextModel(HunYuanModel)`): the dense conversion with XD-RoPE.
///
/// transformers builds the text config as a `HunYuanVLTextConfig`: a flat hub config's text
/// keys move into it (its aliases `attention_head_dim`, `org_vocab_size` and `pad_id` win over
/// the keys they stand for), and XD-RoPE (`type` "xdrope" with `xdrope_section`) becomes
/// `rope_type` "dynamic" with an `mrope_section` that must split half a head
/// ([`hunyuan_vl_text`]). The class then calls a "dynamic" rope with an `mrope_section`
/// XD-RoPE again, so the dense class's context-length assertion does not apply; for XD-RoPE
/// the dense keys are followed by the unscaled `rope_theta` as the base, `alpha`, no scaling
/// type, `factor` (default 1), the configured context length (also as the original one) and
/// the sections as given.
pub const HUNYUAN_VL: Arch = Arch {
    hf_names: &["HunYuanVLForConditionalGeneration"],
    model_types: &[ModelType {
        name: "hunyuan_vl_text",
        hf_classes: &[],
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
            "sep_token_id" => 4,
            "tie_word_embeddings" => true,
            "attention_bias" => false,
            "head_dim" => (Json::Null),
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(hunyuan_vl_text),
    }],
    composites: &[("hunyuan_vl", TextType::Flat("hunyuan_vl_text"))],
    gguf: "hunyuan_vl",
    vocab: VocabKind::Own(vl_set_vocab),
    params: vl_params,
    ..HUNYUAN_DENSE
};

/// `HunYuanVLTextConfig`'s aliases: (the key a file may use, the field it sets).
const VL_ALIASES: &[(&str, &str)] = &[
    ("attention_head_dim", "head_dim"),
    ("org_vocab_size", "vocab_size"),
    ("pad_id", "pad_token_id"),
];

/// `HunYuanVLTextConfig.__init__` on the text keys (AutoConfig's view): `false` where the
/// class raises, so that AutoConfig fails and the reference reads config.json as written
/// ([`vl_text_config`]).
fn hunyuan_vl_text(cfg: &mut Map<String, Json>) -> bool {
    match vl_text_config(cfg) {
        Ok(built) => {
            *cfg = built;
            true
        }
        Err(_) => false,
    }
}

/// How `HunYuanVLTextConfig` rejects a text config: a `ValueError` (AutoConfig's callers
/// fall back to config.json as written) or a `KeyError` from transformers' rope validation
/// (which the tokenizer loader does not catch).
#[derive(Debug, PartialEq)]
enum VlConfigFault {
    /// `xdrope_section` and `mrope_section` differ, or the sections are not whole numbers
    /// summing to half the head size.
    Value,
    /// A "dynamic" (XD-RoPE), "linear" or "yarn" rope without `factor`.
    Key(String),
}

/// `HunYuanVLTextConfig` built from `cfg`'s text keys: the aliases (`attention_head_dim`,
/// `org_vocab_size`, `pad_id`) win over the keys they stand for; the rope dict is
/// transformers' standardisation of `rope_scaling` (which wins) or `rope_parameters` with
/// `rope_theta` (default 10000), then XD-RoPE is renamed: `xdrope_section` becomes
/// `mrope_section` and rope type "xdrope" "dynamic" (in `type` too when given). The checks
/// run in the class's order (the sections first, the rope keys last).
fn vl_text_config(cfg: &Map<String, Json>) -> Result<Map<String, Json>, VlConfigFault> {
    let mut rp = match (cfg.get("rope_scaling"), cfg.get("rope_parameters")) {
        (Some(Json::Object(m)), _) if !m.is_empty() => m.clone(),
        (_, Some(Json::Object(m))) => m.clone(),
        _ => Map::new(),
    };
    let theta = cfg
        .get("rope_theta")
        .cloned()
        .unwrap_or(Json::from(10000.0));
    rp.entry("rope_theta").or_insert(theta);
    if let Some(f) = cfg.get("partial_rotary_factor").filter(|f| !f.is_null()) {
        rp.entry("partial_rotary_factor").or_insert(f.clone());
    }
    let declared = rp.get("type").cloned().unwrap_or(Json::from("default"));
    rp.entry("rope_type").or_insert(declared);
    if let Some(legacy) = rp.remove("xdrope_section") {
        match rp.get("mrope_section") {
            None => {
                rp.insert("mrope_section".into(), legacy);
            }
            Some(m) if !same_sections(m, &legacy) => return Err(VlConfigFault::Value),
            Some(_) => {}
        }
    }
    let rope_type = match rp.get("rope_type").and_then(Json::as_str) {
        Some("xdrope") => "dynamic".to_string(),
        Some(t) => t.to_string(),
        None => return Err(VlConfigFault::Value),
    };
    rp.insert("rope_type".into(), Json::from(rope_type.as_str()));
    if rp.contains_key("type") {
        rp.insert("type".into(), Json::from(rope_type.as_str()));
    }
    let mut out = cfg.clone();
    for (alias, field) in VL_ALIASES {
        if let Some(v) = out.remove(*alias) {
            out.insert((*field).into(), v);
        }
    }
    if let Some(sec) = rp.get("mrope_section").filter(|s| !s.is_null()) {
        let num = |k: &str, default: u64| match out.get(k) {
            None | Some(Json::Null) => Some(default),
            Some(v) => v.as_u64(),
        };
        let head_dim = match out.get("head_dim").filter(|v| !v.is_null()) {
            Some(v) => v.as_u64(),
            None => match (num("hidden_size", 4096), num("num_attention_heads", 32)) {
                (Some(h), Some(n)) if n > 0 => Some(h / n),
                _ => None,
            },
        };
        let ints = whole_sections(sec).ok_or(VlConfigFault::Value)?;
        if head_dim.is_none_or(|d| ints.iter().sum::<i64>() != (d / 2) as i64) {
            return Err(VlConfigFault::Value);
        }
        rp.insert("mrope_section".into(), Json::from(ints));
    }
    if matches!(rope_type.as_str(), "dynamic" | "linear" | "yarn") && !rp.contains_key("factor") {
        return Err(VlConfigFault::Key(rope_type));
    }
    out.remove("rope_scaling");
    out.remove("rope_theta");
    out.remove("partial_rotary_factor");
    out.insert("rope_parameters".into(), Json::Object(rp));
    Ok(out)
}

/// The tokenizer loader builds the config too and does not catch transformers' rope
/// validation error: a text config AutoConfig rejects that way stops the reference's
/// vocabulary step.
fn vl_config_refusal(b: &VocabBuild) -> Result<(), ConvertError> {
    let raw = b.dir().config()?;
    let text = match raw.get("text_config") {
        Some(Json::Object(tc)) => tc.clone(),
        _ => raw.as_object().cloned().unwrap_or_default(),
    };
    match vl_text_config(&text) {
        Err(VlConfigFault::Key(rope_type)) => Err(ConvertError::format(
            b.dir().config_path(),
            None,
            format!(
                "rope type \"{rope_type}\" without \"factor\": transformers' \
                 HunYuanVLTextConfig refuses it when the tokenizer is loaded (the reference \
                 fails there too)"
            ),
        )),
        _ => Ok(()),
    }
}

/// Two section lists equal as numbers.
fn same_sections(a: &Json, b: &Json) -> bool {
    let nums = |v: &Json| -> Option<Vec<f64>> { v.as_array()?.iter().map(Json::as_f64).collect() };
    matches!((nums(a), nums(b)), (Some(x), Some(y)) if x == y)
}

/// A section list of whole numbers (`1.0` counts as `1`), as integers.
fn whole_sections(v: &Json) -> Option<Vec<i64>> {
    v.as_array()?
        .iter()
        .map(|x| {
            let f = x.as_f64()?;
            (f.fract() == 0.0 && f.abs() < 1e15).then_some(f as i64)
        })
        .collect()
}

/// `HunyuanVLTextModel.set_gguf_parameters` (after its `__init__`'s rope rename).
fn vl_params(p: &mut Params) -> Result<(), ConvertError> {
    let mut hp = p.hp.clone();
    let dynamic = hp.rope.get("rope_type").and_then(Json::as_str) == Some("dynamic");
    if let Some(sec) = hp.rope.get("mrope_section").cloned().filter(|_| dynamic) {
        hp.rope.insert("rope_type".into(), Json::from("xdrope"));
        hp.rope.insert("type".into(), Json::from("xdrope"));
        hp.rope.insert("xdrope_section".into(), sec);
    }
    dense_params(&mut p.with_hparams(&hp))?;
    if hp.rope.get("rope_type").and_then(Json::as_str) != Some("xdrope") {
        return Ok(());
    }
    let required = |key: &str| -> Result<f64, ConvertError> {
        let v = hp
            .rope
            .get(key)
            .ok_or_else(|| ConvertError::missing_key(&hp.path, key, "XD-RoPE needs it"))?;
        v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, format!("rope parameter {key}"), "a number", v)
        })
    };
    let theta = required("rope_theta")?;
    let alpha = required("alpha")?;
    let factor = match hp.rope.get("factor") {
        None => 1.0,
        Some(_) => required("factor")?,
    };
    p.f32(rope::FREQ_BASE, theta);
    p.f32(rope::SCALING_ALPHA, alpha);
    p.rope_scaling_none();
    p.f32(rope::SCALING_FACTOR, factor);
    let ctx = hp.req_u64(&["max_position_embeddings"])?;
    p.u32(rope::SCALING_ORIG_CTX_LEN, ctx)?;
    p.u32(llm::CONTEXT_LENGTH, ctx)?;
    let sections = hp.rope.get("xdrope_section").unwrap_or(&Json::Null);
    let ints: Option<Vec<i32>> = sections.as_array().and_then(|a| {
        a.iter()
            .map(|x| x.as_i64().and_then(|i| i32::try_from(i).ok()))
            .collect()
    });
    let ints = ints.ok_or_else(|| {
        ConvertError::wrong_type(
            &hp.path,
            "rope parameter xdrope_section",
            "a list of integers",
            sections,
        )
    })?;
    p.i32s(rope::DIMENSION_SECTIONS, ints);
    Ok(())
}
