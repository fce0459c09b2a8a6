//! `NeoBERT`, `NeoBERTLMHead`, `NeoBERTForSequenceClassification` (arch `neo-bert`,
//! `NeoBert(BertModel)` in `conversion/bert.py`). The checkpoints ship remote code, so
//! the config is read as config.json gives it (no class defaults).
//!
//! BERT's rules after dropping the masked-LM `decoder.*` and a `model.` prefix. The layers
//! are pre-norm with RMS norms, a fused `qkv` and a SwiGLU whose `w12` holds both halves;
//! the final norm is `enc.output_norm`, the classification head's `dense` is `cls`. The
//! hparams are BERT's, then the feed-forward length two thirds of `intermediate_size`
//! (the model's own SwiGLU width before its rounding), rope base 10000 without scaling, the
//! RMS epsilon (`norm_eps`, default 1e-6), and CLS pooling whatever modules.json says.

use ggufkit::gguf::keys::{attention, llm, rope};

use super::{bert, no_extra, Arch, Hooks, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The NeoBERT classes.
pub const NEO_BERT: Arch = Arch {
    hf_names: &[
        "NeoBERT",
        "NeoBERTLMHead",
        "NeoBERTForSequenceClassification",
    ],
    model_types: &[],
    composites: &[],
    gguf: "neo-bert",
    vocab: VocabKind::Bert,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::EncOutputNorm,
        Tensor::Cls,
        Tensor::ClsOut,
    ]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        rename: Some(bert::rename),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `NeoBert.filter_tensors`: the masked-LM decoder goes, then the `model.` prefix, then
/// BERT's rules.
fn filter(name: &str) -> Option<String> {
    if name.starts_with("decoder.") {
        return None;
    }
    bert::filter(name.strip_prefix("model.").unwrap_or(name))
}

/// `int(2 * intermediate_size / 3)`: Python's true division, then truncation.
fn two_thirds(n: u64) -> u64 {
    ((2 * n) as f64 / 3.0) as u64
}

/// `NeoBert.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    bert::params(p)?;
    let ff = p.hp.req_u64(&["intermediate_size"])?;
    p.u32(llm::FEED_FORWARD_LENGTH, two_thirds(ff))?;
    p.f32(rope::FREQ_BASE, 10000.0);
    p.rope_scaling_none();
    let eps = match p.hp.get("norm_eps") {
        None => 1e-6,
        Some(_) => {
            p.hp.find_f64(&["norm_eps"])?
                .ok_or_else(|| ConvertError::MissingHparam {
                    arch: p.hp.arch.clone(),
                    keys: vec!["norm_eps".into()],
                    path: p.hp.path.clone(),
                })?
        }
    };
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    // gguf.PoolingType.CLS.
    p.u32(llm::POOLING_TYPE, 2)
}

#[cfg(test)]
mod tests {
    use super::{filter, two_thirds};

    /// The decoder is dropped before the prefix is stripped; the FFN length truncates.
    #[test]
    fn neobert_rules() {
        assert_eq!(filter("decoder.weight"), None);
        assert_eq!(
            filter("model.transformer_encoder.0.qkv.weight").as_deref(),
            Some("transformer_encoder.0.qkv.weight")
        );
        assert_eq!(
            filter("model.encoder.weight").as_deref(),
            Some("encoder.weight")
        );
        assert_eq!(two_thirds(3072), 2048);
        assert_eq!(two_thirds(100), 66);
    }
}
