//! The GGUF metadata of a converted legacy model: `llama.*` hyperparameters and the
//! vocabulary, from the file and the options, or from a model metadata directory.

use ggufkit::gguf::keys;
use std::path::Path;

use ggufkit::gguf::{ArrayValue, GgufString, Value};

use super::container::{Hparams, VocabItem};
use super::error::{LegacyError, LegacyErrorKind};
use super::parts::SourceTensor;
use crate::hf::tokenizer::{vocab_metadata, VocabKind, VocabRequest};
use crate::ConvertError;

/// The converter's `--eps` default, the string "5.0e-06" parsed as a Python float and
/// stored as f32.
pub const DEFAULT_EPS: f64 = 5.0e-06;
/// The GGUF architecture of every legacy model: the GGML, GGMF and GGJT files this reader
/// takes hold LLaMA models only.
pub const ARCH: &str = "llama";
/// The converter's `--context-length` default.
pub const DEFAULT_CONTEXT_LENGTH: u32 = 2048;

/// The hyperparameters written under `llama.*`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelParams {
    /// `context_length`.
    pub n_ctx: u32,
    /// `embedding_length`.
    pub n_embd: u32,
    /// `block_count`.
    pub n_layer: u32,
    /// `feed_forward_length`.
    pub n_ff: u32,
    /// `attention.head_count`.
    pub n_head: u32,
    /// `attention.head_count_kv`.
    pub n_head_kv: u32,
    /// `attention.layer_norm_rms_epsilon`.
    pub eps: f32,
}

impl ModelParams {
    /// The `llama.*` keys in the converter's order.
    pub fn keys(&self) -> Vec<(String, Value)> {
        use keys::{attention, llm, rope};
        let key = |suffix: &str| keys::arch_key(ARCH, suffix);
        vec![
            (key(llm::CONTEXT_LENGTH), Value::U32(self.n_ctx)),
            (key(llm::EMBEDDING_LENGTH), Value::U32(self.n_embd)),
            (key(llm::BLOCK_COUNT), Value::U32(self.n_layer)),
            (key(llm::FEED_FORWARD_LENGTH), Value::U32(self.n_ff)),
            (
                key(rope::DIMENSION_COUNT),
                Value::U32(self.n_embd / self.n_head),
            ),
            (key(attention::HEAD_COUNT), Value::U32(self.n_head)),
            (key(attention::HEAD_COUNT_KV), Value::U32(self.n_head_kv)),
            (key(attention::LAYERNORM_RMS_EPS), Value::F32(self.eps)),
        ]
    }
}

/// `n_head_kv` from `--gqa` as the converter finds it: the x in 1..=255 with
/// `n_head / x == gqa` in floating point.
pub fn n_head_kv_from_gqa(n_head: u32, gqa: u32) -> Option<u32> {
    if gqa == 1 {
        return Some(n_head);
    }
    (1..256u32)
        .rev()
        .find(|&x| f64::from(n_head) / f64::from(x) == f64::from(gqa))
}

/// `n_head_kv` implied by the shape of `layers.0.attention.wk` (`[n_embd, n_embd_gqa]`),
/// when it gives a whole number.
pub fn n_head_kv_from_shape(hp: &Hparams, wk: &SourceTensor) -> Option<u32> {
    let kv_embd = *wk.ne.get(1)?;
    let prod = kv_embd.checked_mul(u64::from(hp.n_head))?;
    if prod % u64::from(hp.n_embd) != 0 {
        return None;
    }
    u32::try_from(prod / u64::from(hp.n_embd))
        .ok()
        .filter(|&k| k > 0)
}

/// The vocabulary keys made from the file's own vocabulary (the converter without
/// `--model-metadata-dir`): specials 0–2 renamed, empty items CONTROL, single bytes
/// 3..=258 written `<0xNN>`, spaces turned into `▁`.
pub fn file_vocab(items: &[VocabItem]) -> Vec<(String, Value)> {
    let mut tokens = Vec::with_capacity(items.len());
    let mut scores = Vec::with_capacity(items.len());
    let mut types = Vec::with_capacity(items.len());
    for (id, item) in items.iter().enumerate() {
        let (text, ty): (Vec<u8>, i32) = match id {
            0 => (b"<unk>".to_vec(), 2),
            1 => (b"<s>".to_vec(), 3),
            2 => (b"</s>".to_vec(), 3),
            _ if item.bytes.is_empty() => (Vec::new(), 3),
            3..=258 if item.bytes.len() == 1 => {
                (format!("<0x{:02X}>", item.bytes[0]).into_bytes(), 6)
            }
            _ => {
                let mut t = Vec::with_capacity(item.bytes.len());
                for &b in &item.bytes {
                    if b == b' ' {
                        t.extend_from_slice("\u{2581}".as_bytes());
                    } else {
                        t.push(b);
                    }
                }
                (t, 1)
            }
        };
        tokens.push(GgufString(text));
        scores.push(item.score);
        types.push(ty);
    }
    vec![
        (keys::tokenizer::MODEL.into(), Value::from("llama")),
        (keys::tokenizer::PRE.into(), Value::from("default")),
        (
            keys::tokenizer::TOKENS.into(),
            Value::Array(ArrayValue::String(tokens.into())),
        ),
        (
            keys::tokenizer::SCORES.into(),
            Value::Array(ArrayValue::F32(scores)),
        ),
        (
            keys::tokenizer::TOKEN_TYPE.into(),
            Value::Array(ArrayValue::I32(types)),
        ),
        (keys::tokenizer::UNK_ID.into(), Value::U32(0)),
        (keys::tokenizer::BOS_ID.into(), Value::U32(1)),
        (keys::tokenizer::EOS_ID.into(), Value::U32(2)),
    ]
}

fn meta_err(dir: &Path, problem: String) -> ConvertError {
    ConvertError::Legacy(Box::new(LegacyError {
        path: dir.to_path_buf(),
        offset: None,
        tensor: None,
        kind: LegacyErrorKind::Metadata(problem),
    }))
}

/// Hyperparameters and tokenizer keys from a model metadata directory (the converter's
/// `--model-metadata-dir` with `--vocab-dir` the same directory): `config.json` (HF) or
/// `params.json` (Meta), checked against the file; the vocabulary from the HF tokenizer
/// converter, which must have exactly `n_vocab` tokens.
pub fn from_dir(
    dir: &Path,
    hp: &Hparams,
    n_ff_file: u32,
) -> Result<(ModelParams, Vec<(String, Value)>), ConvertError> {
    if !dir.is_dir() {
        return Err(meta_err(dir, "not a directory".into()));
    }
    let read_json = |name: &str| -> Result<Option<serde_json::Value>, ConvertError> {
        let p = dir.join(name);
        if !p.exists() {
            return Ok(None);
        }
        let text =
            ggufkit::mapped::read_input_to_string(&p).map_err(|e| ConvertError::io(&p, e))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| meta_err(&p, format!("invalid JSON: {e}")))
    };
    let (params, config) = if let Some(c) = read_json("config.json")? {
        (hf_params(dir, &c)?, c)
    } else if let Some(c) = read_json("params.json")? {
        (meta_params(dir, &c, n_ff_file)?, serde_json::json!({}))
    } else {
        return Err(meta_err(dir, "neither config.json nor params.json".into()));
    };
    for (name, file, meta) in [
        ("n_embd", hp.n_embd, params.n_embd),
        ("n_layer", hp.n_layer, params.n_layer),
        ("n_head", hp.n_head, params.n_head),
    ] {
        if file != meta {
            return Err(meta_err(
                dir,
                format!("{name} is {file} in the model file but {meta} in the metadata"),
            ));
        }
    }
    if params.n_head == 0 || params.n_head_kv == 0 {
        return Err(meta_err(dir, "head counts must not be 0".into()));
    }
    let req = VocabRequest {
        dir: &crate::hf::ModelDir::new(dir),
        kind: VocabKind::Llama,
        arch: ARCH,
        hparams: &config,
    };
    let vocab = vocab_metadata(&req)?;
    let n_tokens = vocab
        .iter()
        .find(|(k, _)| k == keys::tokenizer::TOKENS)
        .and_then(|(_, v)| match v {
            Value::Array(a) => Some(a.len()),
            _ => None,
        })
        .ok_or_else(|| meta_err(dir, "the tokenizer gave no tokenizer.ggml.tokens".into()))?;
    if n_tokens != hp.n_vocab as usize {
        return Err(meta_err(
            dir,
            format!(
                "the tokenizer has {n_tokens} tokens, the model file n_vocab = {}",
                hp.n_vocab
            ),
        ));
    }
    Ok((params, vocab))
}

fn get_u32(dir: &Path, c: &serde_json::Value, key: &str) -> Result<Option<u32>, ConvertError> {
    match c.get(key) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())
            .map(Some)
            .ok_or_else(|| meta_err(dir, format!("{key} = {v} is not a 32-bit count"))),
    }
}

fn need_u32(dir: &Path, c: &serde_json::Value, key: &str) -> Result<u32, ConvertError> {
    get_u32(dir, c, key)?.ok_or_else(|| meta_err(dir, format!("{key} is missing")))
}

fn need_f64(dir: &Path, c: &serde_json::Value, key: &str) -> Result<f64, ConvertError> {
    c.get(key)
        .and_then(serde_json::Value::as_f64)
        .ok_or_else(|| meta_err(dir, format!("{key} is missing or not a number")))
}

/// `Params.loadHFTransformerJson` of `convert_legacy_llama.py`.
fn hf_params(dir: &Path, c: &serde_json::Value) -> Result<ModelParams, ConvertError> {
    let n_ctx = match get_u32(dir, c, "max_sequence_length")? {
        Some(n) => n,
        None => get_u32(dir, c, "max_position_embeddings")?.ok_or_else(|| {
            meta_err(
                dir,
                "failed to guess n_ctx: no max_sequence_length or max_position_embeddings".into(),
            )
        })?,
    };
    let n_head = need_u32(dir, c, "num_attention_heads")?;
    Ok(ModelParams {
        n_ctx,
        n_embd: need_u32(dir, c, "hidden_size")?,
        n_layer: need_u32(dir, c, "num_hidden_layers")?,
        n_ff: need_u32(dir, c, "intermediate_size")?,
        n_head,
        n_head_kv: get_u32(dir, c, "num_key_value_heads")?.unwrap_or(n_head),
        eps: need_f64(dir, c, "rms_norm_eps")? as f32,
    })
}

/// `Params.loadOriginalParamsJson`: context length guessed from the model family, n_ff from
/// the file's `layers.0.feed_forward.w1`.
fn meta_params(dir: &Path, c: &serde_json::Value, n_ff: u32) -> Result<ModelParams, ConvertError> {
    let norm_eps = need_f64(dir, c, "norm_eps")?;
    let n_ctx = if c
        .get("moe")
        .is_some_and(|m| !m.is_null() && m != &serde_json::Value::Bool(false))
    {
        32768
    } else if c.get("rope_theta").and_then(serde_json::Value::as_f64) == Some(1_000_000.0) {
        16384
    } else if norm_eps == 1e-05 {
        4096
    } else {
        2048
    };
    let n_head = need_u32(dir, c, "n_heads")?;
    Ok(ModelParams {
        n_ctx,
        n_embd: need_u32(dir, c, "dim")?,
        n_layer: need_u32(dir, c, "n_layers")?,
        n_ff,
        n_head,
        n_head_kv: get_u32(dir, c, "n_kv_heads")?.unwrap_or(n_head),
        eps: norm_eps as f32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gqa_search_matches_the_converter() {
        assert_eq!(n_head_kv_from_gqa(64, 8), Some(8));
        assert_eq!(n_head_kv_from_gqa(4, 2), Some(2));
        assert_eq!(n_head_kv_from_gqa(32, 1), Some(32));
        assert_eq!(n_head_kv_from_gqa(6, 4), None);
        assert_eq!(n_head_kv_from_gqa(6, 0), None);
    }

    #[test]
    fn vocab_items_become_llama_tokens() {
        let item = |b: &[u8], s: f32| VocabItem {
            bytes: b.to_vec(),
            score: s,
        };
        let mut items = vec![item(b" \xe2\x81\x87 ", 0.0), item(b"", 0.0), item(b"", 0.0)];
        items.push(item(b"\x00", 0.0));
        items.push(item(b"", -1.0));
        items.push(item(b" the", -2.5));
        items.push(item(b"\xff", -3.0));
        let kv = file_vocab(&items);
        let Value::Array(ArrayValue::String(toks)) = &kv[2].1 else {
            panic!()
        };
        let texts: Vec<&[u8]> = toks.iter().map(|t| t.as_bytes()).collect();
        assert_eq!(
            texts,
            [
                &b"<unk>"[..],
                b"<s>",
                b"</s>",
                b"<0x00>",
                b"",
                "\u{2581}the".as_bytes(),
                b"<0xFF>"
            ]
        );
        assert_eq!(
            kv[4].1,
            Value::Array(ArrayValue::I32(vec![2, 3, 3, 6, 3, 1, 6]))
        );
        assert_eq!(
            kv[3].1,
            Value::Array(ArrayValue::F32(vec![0.0, 0.0, 0.0, 0.0, -1.0, -2.5, -3.0]))
        );
    }
}
