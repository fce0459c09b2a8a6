//! LFM2's embedding models (`conversion/lfm2.py`'s `LFM2ColBertModel`, registered for
//! `Lfm2Model` and `Lfm2BidirectionalModel`; arch `lfm2`): LFM2.5-ColBERT and
//! LFM2.5-Embedding, headless LFM2 backbones ([`super::lfm2`]).
//!
//! The checkpoint is the base model's: its tensor names get the `model.` prefix the causal
//! model's have (all but a `dense_2` one). A sentence-transformers projection in
//! `1_Dense/model.safetensors` (its `linear.weight`; a checkpoint without the file has none)
//! is written first, as `dense_2`, and its output width as `embedding_length_out`, a key
//! set while the tensors are processed. The keys are LFM2's, then, for
//! `Lfm2BidirectionalModel` only, non-causal attention, then the sentence-transformers
//! pooling type.

use std::path::Path;

use ggufkit::gguf::keys::{arch_key, attention, layered};
use ggufkit::gguf::Value;

use super::{lfm2, Arch, Extra, Hooks, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::safetensors;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The HF architecture whose attention is bidirectional.
const BIDIRECTIONAL: &str = "Lfm2BidirectionalModel";

/// The projection's GGUF name, also the one checkpoint name that gets no prefix.
const DENSE: &str = "dense_2";

/// The module directory and file the projection is read from.
const DENSE_FILE: &str = "1_Dense/model.safetensors";

/// The projection's tensor in that file.
const DENSE_TENSOR: &str = "linear.weight";

/// `Lfm2Model` / `Lfm2BidirectionalModel` (the `lfm2` config class is LFM2's).
pub const LFM2_COLBERT: Arch = Arch {
    hf_names: &["Lfm2Model", BIDIRECTIONAL],
    model_types: &[],
    composites: &[],
    gguf: "lfm2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[lfm2::LFM2_TENSORS, &[Tensor::Dense2Out]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(lfm2::hook),
        ..Rules::NONE
    },
    params,
    extra,
    hooks: Hooks::NONE,
};

/// LFM2's filter (audio tensors dropped, `lfm.` as `model.`), then the `model.` prefix on
/// every name that does not start with `dense_2`.
fn filter(name: &str) -> Option<String> {
    let name = lfm2::filter(name)?;
    if name.starts_with(DENSE) {
        return Some(name);
    }
    Some(format!("model.{name}"))
}

/// LFM2's keys, non-causal attention for the bidirectional class, the pooling type.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    lfm2::params(p)?;
    if p.hp.arch == BIDIRECTIONAL {
        p.bool(attention::CAUSAL, false);
    }
    p.pooling()
}

/// The `1_Dense` projection as `dense_2.weight`, with its row count as
/// `embedding_length_out`; nothing when the model directory has no such file.
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    let mut out = Extra::default();
    let dir = hp.path.parent().unwrap_or(Path::new("."));
    let path = dir.join(DENSE_FILE);
    if !path.is_file() {
        return Ok(out);
    }
    let tensors = safetensors::read_single(&path)?;
    let t = tensors
        .into_iter()
        .find(|t| t.name == DENSE_TENSOR)
        .ok_or_else(|| {
            ConvertError::missing_key(&path, DENSE_TENSOR, "the Dense module's projection")
        })?;
    let rows = *t.shape.first().ok_or_else(|| ConvertError::Tensor {
        name: DENSE_TENSOR.to_string(),
        problem: format!("{}: a scalar has no output width", path.display()),
    })?;
    let rows = u32::try_from(rows).map_err(|_| ConvertError::Tensor {
        name: DENSE_TENSOR.to_string(),
        problem: format!("{}: {rows} rows do not fit 32 bits", path.display()),
    })?;
    out.early_kvs.push((
        arch_key(LFM2_COLBERT.gguf, layered::EMBEDDING_LENGTH_OUT),
        Value::U32(rows),
    ));
    out.tensors.push((format!("{DENSE}.weight"), Expr::read(t)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headless_names_get_the_causal_models_prefix() {
        assert_eq!(
            filter("layers.0.conv.conv.weight").as_deref(),
            Some("model.layers.0.conv.conv.weight")
        );
        assert_eq!(
            filter("embedding_norm.weight").as_deref(),
            Some("model.embedding_norm.weight")
        );
        assert_eq!(filter("dense_2.weight").as_deref(), Some("dense_2.weight"));
        assert_eq!(filter("audio_adapter.weight"), None);
    }
}
