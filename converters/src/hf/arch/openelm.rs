//! `OpenELMForCausalLM` (arch `openelm`, `OpenELMModel(TextModel)` in
//! `conversion/openelm.py`). The checkpoints ship remote code, so the config is read as
//! config.json gives it.
//!
//! A decoder whose layers differ in width: per-layer query and kv head counts
//! (`num_query_heads`, `num_kv_heads`) and FFN sizes (`ffn_multipliers` times `model_dim`,
//! made divisible by `ffn_dim_divisor`), a fused `qkv_proj` with q/k norms, and a fused
//! gate-and-up `proj_1` split at the layer's FFN size. The block count is
//! `num_transformer_layers`; rotary over the whole `head_dim`, RMS epsilon 1e-6, a tied head.
//! The vocabulary is SentencePiece from `tokenizer.model`.

use ggufkit::gguf::keys::{attention, llm, rope};
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Hooks, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The OpenELM class.
pub const OPENELM: Arch = Arch {
    hf_names: &["OpenELMForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "openelm",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(split_ffn),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks {
        block_count_keys: Some(&["num_transformer_layers"]),
        ..Hooks::NONE
    },
};

fn bad(hp: &Hparams, key: &str, v: &Json, expected: &str) -> ConvertError {
    ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![key.into()],
        expected: expected.into(),
        found: v.to_string(),
    }
}

/// A required list hparam.
fn list<'a>(hp: &'a Hparams, key: &str) -> Result<&'a [Json], ConvertError> {
    match hp.get(key) {
        None => Err(hp.missing(&[key])),
        Some(Json::Array(xs)) => Ok(xs),
        Some(v) => Err(bad(hp, key, v, "a list")),
    }
}

/// A required list of counts (`num_query_heads`, `num_kv_heads`).
fn counts(hp: &Hparams, key: &str) -> Result<Vec<u64>, ConvertError> {
    let xs = list(hp, key)?;
    xs.iter()
        .map(|x| json_u64(x).ok_or_else(|| bad(hp, key, x, "a list of counts")))
        .collect()
}

/// The configuration's rounding of an FFN size: to the nearest multiple of `divisor` (at
/// least `divisor`), one multiple up when that lost more than a tenth.
fn make_divisible(v: f64, divisor: u64) -> Option<u64> {
    if divisor == 0 || !v.is_finite() {
        return None;
    }
    let d = divisor as f64;
    let half = (v + d / 2.0).trunc();
    if half < 0.0 || half > u64::MAX as f64 {
        return None;
    }
    let mut n = ((half as u64) / divisor).checked_mul(divisor)?.max(divisor);
    if (n as f64) < 0.9 * v {
        n = n.checked_add(divisor)?;
    }
    Some(n)
}

/// The per-layer FFN sizes.
fn ffn_dims(hp: &Hparams) -> Result<Vec<u64>, ConvertError> {
    let mults = list(hp, "ffn_multipliers")?;
    let divisor = hp.req_u64(&["ffn_dim_divisor"])?;
    let n_embd = hp.req_u64(&["model_dim"])?;
    mults
        .iter()
        .map(|m| {
            let f = m
                .as_f64()
                .ok_or_else(|| bad(hp, "ffn_multipliers", m, "a list of numbers"))?;
            make_divisible(f * n_embd as f64, divisor).ok_or_else(|| {
                bad(
                    hp,
                    "ffn_multipliers",
                    m,
                    "multipliers giving an FFN size (with a nonzero ffn_dim_divisor)",
                )
            })
        })
        .collect()
}

/// The fused `proj_1` is the gate then the up projection, split at the layer's FFN size.
fn split_ffn(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let Some(bid) = block_id(&name) else {
        return Ok(Modified::Pass(name, expr));
    };
    if name != format!("transformer.layers.{bid}.ffn.proj_1.weight") {
        return Ok(Modified::Pass(name, expr));
    }
    let dims = ffn_dims(hp)?;
    let ff = *dims.get(bid as usize).ok_or_else(|| ConvertError::Tensor {
        name: name.clone(),
        problem: format!("layer {bid} has no entry in ffn_multipliers"),
    })?;
    let rows = expr.shape().first().copied().unwrap_or(0);
    let up_rows = rows.checked_sub(ff).ok_or_else(|| ConvertError::Tensor {
        name: name.clone(),
        problem: format!("{rows} rows cannot hold the gate's {ff}"),
    })?;
    let gate = expr.clone().narrow(&name, 0, 0, ff)?;
    let up = expr.narrow(&name, 0, ff, up_rows)?;
    let at = |t: Tensor| t.gguf().replace("{bid}", &bid.to_string()) + ".weight";
    Ok(Modified::Out(vec![
        (at(Tensor::FfnGate), gate),
        (at(Tensor::FfnUp), up),
    ]))
}

/// Per-layer values must have one entry per block (the class asserts it).
fn per_layer(hp: &Hparams, key: &str, len: usize, blocks: u64) -> Result<(), ConvertError> {
    if len as u64 != blocks {
        return Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec![key.into()],
            expected: format!("one entry per block ({blocks})"),
            found: format!("{len} entries"),
        });
    }
    Ok(())
}

fn ints(xs: &[u64]) -> Json {
    Json::Array(xs.iter().map(|&x| Json::from(x)).collect())
}

/// `OpenELMModel.set_gguf_parameters` (with the constructor's reads first).
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let ffn = ffn_dims(hp)?;
    let n_embd = hp.req_u64(&["model_dim"])?;
    let kv = counts(hp, "num_kv_heads")?;
    let q = counts(hp, "num_query_heads")?;
    if kv.is_empty() || q.is_empty() {
        let key = if kv.is_empty() {
            "num_kv_heads"
        } else {
            "num_query_heads"
        };
        return Err(bad(
            hp,
            key,
            &Json::Array(vec![]),
            "a non-empty list of counts",
        ));
    }
    let head_dim = hp.req_u64(&["head_dim"])?;
    let n = p.block_count()?;
    per_layer(hp, "num_kv_heads", kv.len(), n)?;
    per_layer(hp, "num_query_heads", q.len(), n)?;
    per_layer(hp, "ffn_multipliers", ffn.len(), n)?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::CONTEXT_LENGTH, &["max_context_length"])?;
    p.u32(llm::EMBEDDING_LENGTH, n_embd)?;
    p.u32_or_list(llm::FEED_FORWARD_LENGTH, &ints(&ffn))?;
    p.u32_or_list(attention::HEAD_COUNT, &ints(&q))?;
    p.u32_or_list(attention::HEAD_COUNT_KV, &ints(&kv))?;
    let base = hp.req_f64(&["rope_freq_constant"])?;
    p.f32(rope::FREQ_BASE, base);
    p.f32(attention::LAYERNORM_RMS_EPS, 1e-6);
    p.u32(rope::DIMENSION_COUNT, head_dim)?;
    p.u32(attention::KEY_LENGTH, head_dim)?;
    p.u32(attention::VALUE_LENGTH, head_dim)?;
    p.file_type();
    Ok(())
}

/// `OpenELMModel.set_vocab`: SentencePiece from `tokenizer.model`. Without it the class uses
/// a Llama 2 vocabulary bundled with the reference converter, which is not available here.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model(
        "OpenELM needs tokenizer.model (the reference falls back to a Llama 2 vocabulary \
         bundled with its converter)",
    )?;
    let path = b.sentencepiece(model)?;
    Ok((path, None))
}

#[cfg(test)]
mod tests {
    use super::make_divisible;

    /// The configuration's rounding: nearest multiple, at least the divisor, one more when
    /// rounding lost over a tenth.
    #[test]
    fn openelm_make_divisible() {
        assert_eq!(make_divisible(0.5 * 1280.0, 256), Some(768));
        assert_eq!(make_divisible(4.0 * 1280.0, 256), Some(5120));
        assert_eq!(make_divisible(10.0, 256), Some(256));
        assert_eq!(make_divisible(0.5 * 24.0, 8), Some(16));
        assert_eq!(make_divisible(100.0, 0), None);
    }
}
