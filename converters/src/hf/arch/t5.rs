//! T5 (`T5Model` and `T5EncoderModel` in `conversion/t5.py`): arch `t5` for the
//! encoder-decoder classes (T5, MT5, UMT5), `t5encoder` for `T5EncoderModel`.
//!
//! The tensors are the table's `enc.*` / `dec.*` rows as they are (relative-attention
//! buckets in block 0 of T5 and MT5, in every block of UMT5; `wi` is `ffn_up` in the original
//! ReLU FFN, `wi_0` / `wi_1` are `ffn_gate` / `ffn_up` in the gated v1.1 one); an untied
//! `lm_head` is `output`, a tied one is simply not in the checkpoint. Of `shared.weight`,
//! `encoder.embed_tokens.weight` and `decoder.embed_tokens.weight`, the first the checkpoint
//! holds becomes `token_embd` and the others are dropped. The vocabulary is the unigram
//! SentencePiece model in the model's own id layout ([`VocabKind::T5`]).

use ggufkit::gguf::keys::{attention, llm};
use serde_json::{Map, Value as Json};

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tensors::Entry;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The encoder's tensors (gguf-py's `MODEL_TENSORS[T5ENCODER]`).
const ENCODER: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::EncAttnNorm,
    Tensor::EncAttnQ,
    Tensor::EncAttnK,
    Tensor::EncAttnV,
    Tensor::EncAttnOut,
    Tensor::EncAttnRelB,
    Tensor::EncFfnNorm,
    Tensor::EncFfnGate,
    Tensor::EncFfnDown,
    Tensor::EncFfnUp,
    Tensor::EncOutputNorm,
];

/// The decoder's tensors (the rest of `MODEL_TENSORS[T5]`).
const DECODER: &[Tensor] = &[
    Tensor::DecAttnNorm,
    Tensor::DecAttnQ,
    Tensor::DecAttnK,
    Tensor::DecAttnV,
    Tensor::DecAttnOut,
    Tensor::DecAttnRelB,
    Tensor::DecCrossAttnNorm,
    Tensor::DecCrossAttnQ,
    Tensor::DecCrossAttnK,
    Tensor::DecCrossAttnV,
    Tensor::DecCrossAttnOut,
    Tensor::DecCrossAttnRelB,
    Tensor::DecFfnNorm,
    Tensor::DecFfnGate,
    Tensor::DecFfnDown,
    Tensor::DecFfnUp,
    Tensor::DecOutputNorm,
];

/// `num_decoder_layers` defaults to `num_layers` (T5Config's `__post_init__`; MT5 and UMT5
/// alike), whose class default is `default_layers`.
fn decoder_layers(cfg: &mut Map<String, Json>, default_layers: u64) -> bool {
    if cfg.get("num_decoder_layers").is_none_or(Json::is_null) {
        let n = cfg
            .get("num_layers")
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or_else(|| Json::from(default_layers));
        cfg.insert("num_decoder_layers".into(), n);
    }
    true
}

fn t5_prepare(cfg: &mut Map<String, Json>) -> bool {
    decoder_layers(cfg, 6)
}

fn mt5_prepare(cfg: &mut Map<String, Json>) -> bool {
    decoder_layers(cfg, 8)
}

/// The encoder-decoder classes.
pub const T5: Arch = Arch {
    hf_names: &[
        "T5WithLMHeadModel",
        "T5ForConditionalGeneration",
        "MT5ForConditionalGeneration",
        "UMT5ForConditionalGeneration",
        "UMT5Model",
    ],
    model_types: &[
        ModelType {
            name: "t5",
            // T5EncoderModel's configs are `t5` too (its own Arch below).
            hf_classes: &["T5WithLMHeadModel", "T5ForConditionalGeneration"],
            defaults: defaults! {
                "vocab_size" => 32128,
                "d_model" => 512,
                "d_kv" => 64,
                "d_ff" => 2048,
                "num_layers" => 6,
                "num_heads" => 8,
                "relative_attention_num_buckets" => 32,
                "layer_norm_epsilon" => 1e-6,
                "pad_token_id" => 0,
                "eos_token_id" => 1,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: None,
            prepare: Some(t5_prepare),
        },
        ModelType {
            name: "mt5",
            hf_classes: &["MT5ForConditionalGeneration"],
            defaults: defaults! {
                "vocab_size" => 250112,
                "d_model" => 512,
                "d_kv" => 64,
                "d_ff" => 1024,
                "num_layers" => 8,
                "num_heads" => 6,
                "relative_attention_num_buckets" => 32,
                "layer_norm_epsilon" => 1e-6,
                "pad_token_id" => 0,
                "eos_token_id" => 1,
                "decoder_start_token_id" => 0,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: None,
            prepare: Some(mt5_prepare),
        },
        ModelType {
            name: "umt5",
            hf_classes: &["UMT5ForConditionalGeneration", "UMT5Model"],
            defaults: defaults! {
                "vocab_size" => 250112,
                "d_model" => 512,
                "d_kv" => 64,
                "d_ff" => 1024,
                "num_layers" => 8,
                "num_heads" => 6,
                "relative_attention_num_buckets" => 32,
                "layer_norm_epsilon" => 1e-6,
                "pad_token_id" => 0,
                "eos_token_id" => 1,
                "decoder_start_token_id" => 0,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: None,
            prepare: Some(mt5_prepare),
        },
    ],
    composites: &[],
    gguf: "t5",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[ENCODER, DECODER],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        mtp: Some(shared_embedding),
        ..Rules::NONE
    },
    params: t5_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `T5EncoderModel`.
pub const T5ENCODER: Arch = Arch {
    hf_names: &["T5EncoderModel"],
    model_types: &[],
    composites: &[],
    gguf: "t5encoder",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[ENCODER],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        mtp: Some(shared_embedding),
        ..Rules::NONE
    },
    params: encoder_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The names a T5 checkpoint stores its token embeddings under (one or several copies).
const EMBEDDINGS: [&str; 3] = [
    "decoder.embed_tokens.weight",
    "encoder.embed_tokens.weight",
    "shared.weight",
];

/// `modify_tensors`' shared-embedding rule, over the tensors in the reference's order: the
/// first of [`EMBEDDINGS`] is renamed `shared.weight`, the later ones are dropped.
fn shared_embedding(_: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    let mut found = false;
    let mut out = Vec::with_capacity(entries.len());
    for mut e in entries {
        if EMBEDDINGS.contains(&e.name.as_str()) {
            if found {
                continue;
            }
            found = true;
            e.name = "shared.weight".into();
        }
        out.push(e);
    }
    Ok(out)
}

/// The keys both classes write, up to the block count.
fn common_head(p: &mut Params) -> Result<(), ConvertError> {
    let ctx = p.hp.find_u64(&["n_positions"])?.unwrap_or(512);
    p.u32(llm::CONTEXT_LENGTH, ctx)?;
    p.req_u32(llm::EMBEDDING_LENGTH, &["d_model"])?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["d_ff"])?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)
}

/// The keys both classes write after the block counts, up to the RMS epsilon.
fn common_attention(p: &mut Params) -> Result<(), ConvertError> {
    p.req_u32(attention::HEAD_COUNT, &["num_heads"])?;
    p.req_u32(attention::KEY_LENGTH, &["d_kv"])?;
    p.req_u32(attention::VALUE_LENGTH, &["d_kv"])?;
    let eps = p.hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.req_u32(
        attention::REL_BUCKETS_COUNT,
        &["relative_attention_num_buckets"],
    )?;
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    Ok(())
}

/// `T5Model.set_gguf_parameters`.
fn t5_params(p: &mut Params) -> Result<(), ConvertError> {
    common_head(p)?;
    if let Some(n) = p.hp.find_u64(&["num_decoder_layers"])? {
        p.u32(llm::DECODER_BLOCK_COUNT, n)?;
    }
    common_attention(p)?;
    p.req_u32(llm::DECODER_START_TOKEN_ID, &["decoder_start_token_id"])?;
    p.file_type();
    Ok(())
}

/// `T5EncoderModel.set_gguf_parameters`: no decoder keys.
fn encoder_params(p: &mut Params) -> Result<(), ConvertError> {
    common_head(p)?;
    common_attention(p)?;
    p.file_type();
    Ok(())
}

/// `T5Model.set_vocab`: the unigram `tokenizer.model` / `spiece.model` as a `t5` vocabulary
/// in its own id layout, with `added_tokens.json`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.t5_unigram()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoder_layers_default_to_the_encoder_count() {
        let mut cfg = serde_json::json!({"num_layers": 3, "num_decoder_layers": null});
        assert!(t5_prepare(cfg.as_object_mut().unwrap()));
        assert_eq!(cfg["num_decoder_layers"], 3);
        let mut cfg = serde_json::json!({});
        assert!(mt5_prepare(cfg.as_object_mut().unwrap()));
        assert_eq!(cfg["num_decoder_layers"], 8);
        let mut cfg = serde_json::json!({"num_layers": 3, "num_decoder_layers": 1});
        assert!(t5_prepare(cfg.as_object_mut().unwrap()));
        assert_eq!(cfg["num_decoder_layers"], 1);
    }
}
