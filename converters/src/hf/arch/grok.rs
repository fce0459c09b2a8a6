//! `GrokForCausalLM` / `Grok1ForCausalLM` (arch `grok`, `GrokModel(TextModel)` in
//! `conversion/grok.py`).
//!
//! Remote code (no transformers config class: the config is read as written). Two published
//! layouts map to the same GGUF tensors: Grok-1's (`transformer.decoder_layer.{bid}.*`, the
//! experts `moe.{xid}.linear` / `linear_1` / `linear_v`) and Grok-2's (Llama names with
//! `pre_attn_norm` / `post_attn_norm` / `pre_moe_norm` / `post_moe_norm`, a dense `mlp`
//! beside the experts `block_sparse_moe.experts.{xid}.w1` / `w2` / `w3`). Each layer's experts
//! are stacked per projection (gate, down, up) once all of them are in.
//!
//! The hparams are the generic block, then the attention and router logit caps (30 unless
//! given), the final logit cap when set, the expert FFN width, yarn rope scaling when the
//! config's `rope_type` is `yarn` or `original` (its factors read from the config's top
//! level), the attention temperature length when set, the attention output scale
//! (`attn_output_multiplier`, else the rotary dimensions `head_dim` or `hidden_size /
//! num_attention_heads` to the power -0.5), and the embedding and output multipliers.
//!
//! The vocabulary is SentencePiece when `tokenizer.model` is there; else GPT-2 BPE, which the
//! class takes only with both `tokenizer.json` and `chat_template.jinja`.

use ggufkit::gguf::keys::{extra, llm, rope};
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Experts, Hooks, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The Grok class.
pub const GROK: Arch = Arch {
    hf_names: &["GrokForCausalLM", "Grok1ForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "grok",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[
            Tensor::AttnOutNorm,
            Tensor::FfnGateInp,
            Tensor::FfnGateExp,
            Tensor::FfnDownExp,
            Tensor::FfnUpExp,
            Tensor::FfnPostNorm,
            Tensor::LayerOutNorm,
        ],
    ],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[GROK1_EXPERTS, GROK2_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Grok-1's experts: `linear` (gate), `linear_1` (down), `linear_v` (up).
const GROK1_EXPERTS: Experts = Experts {
    marker: ".moe.",
    count_keys: &["num_local_experts"],
    parts: &["linear", "linear_1", "linear_v"],
    expert_name: "transformer.decoder_layer.{bid}.moe.{xid}.{w}.weight",
    merged_name: "transformer.decoder_layer.{bid}.moe.{w}.weight",
};

/// Grok-2's experts: `w1` (gate), `w2` (down), `w3` (up), stacked under the same GGUF names.
const GROK2_EXPERTS: Experts = Experts {
    marker: ".block_sparse_moe.experts.",
    count_keys: &["num_local_experts"],
    parts: &["w1", "w2", "w3"],
    expert_name: "model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.block_sparse_moe.experts.{w}.weight",
};

/// `GrokModel.set_vocab` (see the module doc).
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    if let Some(model) = b.spm_model()? {
        return Ok((b.sentencepiece(model)?, None));
    }
    let dir = b.dir();
    for file in ["tokenizer.json", "chat_template.jinja"] {
        if !dir.has_file(file) {
            return Err(ConvertError::MissingFile {
                path: dir.path().join(file),
                why: "Grok's vocabulary is tokenizer.model, or tokenizer.json with \
                      chat_template.jinja (the grok-2 tokenizer files)"
                    .into(),
            });
        }
    }
    b.gpt2()
}

/// A float hparam the class writes as it is: `default` when absent; a null (or any
/// non-number) cannot be written as a FLOAT32, as the reference fails writing it.
fn float_or(hp: &Hparams, key: &str, default: Option<f64>) -> Result<f64, ConvertError> {
    match hp.get(key) {
        None => default.ok_or_else(|| hp.missing(&[key])),
        Some(v) => v.as_f64().ok_or_else(|| ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec![key.into()],
            expected: "a number".into(),
            found: v.to_string(),
        }),
    }
}

/// Python truthiness of an hparam that may be absent.
fn truthy(hp: &Hparams, key: &str) -> bool {
    hp.get(key).is_some_and(crate::hf::tokenizer::json_truthy)
}

/// The rotary dimensions the default attention output scale is computed from: `head_dim`,
/// else `hidden_size / num_attention_heads`.
fn rope_dim(hp: &Hparams) -> Result<u64, ConvertError> {
    if let Some(d) = hp.find_u64(&["head_dim"])? {
        return Ok(d);
    }
    let hidden = hp.req_u64(&["hidden_size"])?;
    let heads = hp.req_u64(&["num_attention_heads"])?;
    if heads == 0 {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "num_attention_heads",
            heads,
            "at least 1 (the rotary dimensions are hidden_size / num_attention_heads)",
        ));
    }
    Ok(hidden / heads)
}

/// The yarn keys of a `rope_type` of `yarn` or `original` (which the class treats as yarn),
/// each read from the config's top level and required.
fn yarn(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let rope_type = hp.get("rope_type").and_then(Json::as_str);
    if !matches!(rope_type, Some("yarn" | "original")) {
        return Ok(());
    }
    p.string(rope::SCALING_TYPE, "yarn");
    p.f32(rope::SCALING_FACTOR, float_or(hp, "scaling_factor", None)?);
    p.req_u32(
        rope::SCALING_ORIG_CTX_LEN,
        &["original_max_position_embeddings"],
    )?;
    for (key, name) in [
        (rope::SCALING_YARN_EXT_FACTOR, "extrapolation_factor"),
        (rope::SCALING_YARN_ATTN_FACTOR, "attn_factor"),
        (rope::SCALING_YARN_BETA_FAST, "beta_fast"),
        (rope::SCALING_YARN_BETA_SLOW, "beta_slow"),
    ] {
        p.f32(key, float_or(hp, name, None)?);
    }
    Ok(())
}

/// `GrokModel.set_gguf_parameters` (see the module doc).
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    p.f32(
        llm::ATTN_LOGIT_SOFTCAPPING,
        float_or(hp, "attn_logit_softcapping", Some(30.0))?,
    );
    p.f32(
        extra::ROUTER_LOGIT_SOFTCAPPING,
        float_or(hp, "router_logit_softcapping", Some(30.0))?,
    );
    if truthy(hp, "final_logit_softcapping") {
        p.f32(
            llm::FINAL_LOGIT_SOFTCAPPING,
            float_or(hp, "final_logit_softcapping", None)?,
        );
    }
    let dim = rope_dim(hp)?;
    if hp.find_u64(&["moe_intermediate_size"])?.is_some() {
        p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    }
    yarn(p)?;
    if truthy(hp, "attn_temperature_len") {
        p.req_u32(extra::ATTN_TEMPERATURE_LENGTH, &["attn_temperature_len"])?;
    }
    let default_scale = (dim as f64).powf(-0.5);
    p.f32(
        extra::ATTN_OUTPUT_SCALE,
        float_or(hp, "attn_output_multiplier", Some(default_scale))?,
    );
    p.f32(
        llm::EMBEDDING_SCALE,
        float_or(hp, "embedding_multiplier_scale", None)?,
    );
    p.f32(
        llm::LOGIT_SCALE,
        float_or(hp, "output_multiplier_scale", None)?,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{float_or, rope_dim};
    use crate::hf::config::from_json;

    fn hp(v: serde_json::Value) -> crate::hf::config::Hparams {
        from_json(v, "config.json".into()).unwrap()
    }

    /// The default output scale's dimensions come from head_dim, else hidden / heads; zero
    /// heads are refused, not divided by.
    #[test]
    fn grok_rope_dim() {
        let base = json!({"architectures": ["GrokForCausalLM"], "num_hidden_layers": 1,
                          "hidden_size": 64, "num_attention_heads": 4});
        assert_eq!(rope_dim(&hp(base.clone())).unwrap(), 16);
        let mut with = base.clone();
        with["head_dim"] = json!(8);
        assert_eq!(rope_dim(&hp(with)).unwrap(), 8);
        let mut zero = base;
        zero["num_attention_heads"] = json!(0);
        assert!(rope_dim(&hp(zero)).is_err());
    }

    /// An absent cap takes its default; a null one is refused (the reference cannot write it).
    #[test]
    fn grok_caps() {
        let h = hp(
            json!({"architectures": ["GrokForCausalLM"], "num_hidden_layers": 1,
                          "router_logit_softcapping": null}),
        );
        assert_eq!(
            float_or(&h, "attn_logit_softcapping", Some(30.0)).unwrap(),
            30.0
        );
        assert!(float_or(&h, "router_logit_softcapping", Some(30.0)).is_err());
    }
}
