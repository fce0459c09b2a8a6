//! WavTokenizer's decoder (`WavTokenizerDec`; arch `wavtokenizer-dec`): audio codes to
//! spectrogram frames, in the layout llama.cpp's TTS example converts the published
//! checkpoint to.
//!
//! The code embedding (`backbone.embedding`), an input convolution (`backbone.embed`), the
//! PosNet blocks (`backbone.posnet.N`: residual convolution blocks, an attention block and
//! a final norm), a norm, the ConvNeXt blocks (`backbone.convnext.N`, with their layer
//! scale `gamma`), a final norm and the head's projection (`head.out`). The quantizer's
//! training statistics (`codebook.cluster_size`, `embed_avg`, `inited`) are dropped.
//!
//! The generic keys, then the code count, the feature width (`n_embd_features`), the
//! ConvNeXt FFN width (`n_ff`), the group norms' epsilon and group count, the PosNet and
//! ConvNeXt widths and block counts (the nested `posnet` / `convnext` objects), and
//! non-causal attention. There is no vocabulary (`tokenizer.ggml.model` is "none").

use ggufkit::gguf::keys::{attention, convnext, llm, posnet};

use super::{no_extra, Arch, Hooks, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The GGUF tensors of the architecture (gguf-py's `MODEL_TENSORS[WAVTOKENIZER_DEC]`).
const TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::TokenEmbdNorm,
    Tensor::Conv1d,
    Tensor::ConvnextDw,
    Tensor::ConvnextNorm,
    Tensor::ConvnextPw1,
    Tensor::ConvnextPw2,
    Tensor::ConvnextGamma,
    Tensor::Output,
    Tensor::OutputNorm,
    Tensor::PosnetConv1,
    Tensor::PosnetConv2,
    Tensor::PosnetNorm1,
    Tensor::PosnetNorm2,
    Tensor::PosnetAttnNorm,
    Tensor::PosnetAttnQ,
    Tensor::PosnetAttnK,
    Tensor::PosnetAttnV,
    Tensor::PosnetAttnOut,
];

/// `WavTokenizerDec` (the reference's `WavTokenizerDecModel`).
pub const WAVTOKENIZER_DEC: Arch = Arch {
    hf_names: &["WavTokenizerDec"],
    model_types: &[],
    composites: &[],
    gguf: "wavtokenizer-dec",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[TENSORS],
    tensor_overrides: &[],
    filter,
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `_set_vocab_none`: codes, not tokens.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    Ok(b.no_vocabulary())
}

/// The quantizer's training statistics are not part of the decoder.
fn filter(name: &str) -> Option<String> {
    let stats = [
        "codebook.cluster_size",
        "codebook.embed_avg",
        "codebook.inited",
    ];
    if stats.iter().any(|s| name.ends_with(s)) {
        return None;
    }
    Some(name.to_string())
}

/// A count of a nested object of the config (`posnet.n_embd`, ...), required.
fn nested(hp: &Hparams, object: &str, key: &str) -> Result<u64, ConvertError> {
    let path = format!("{object}.{key}");
    let v = hp
        .get(object)
        .and_then(|o| o.get(key))
        .ok_or_else(|| hp.missing(&[&path]))?;
    json_u64(v).ok_or_else(|| ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![path],
        expected: "a count".into(),
        found: v.to_string(),
    })
}

/// `WavTokenizerDecModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    p.req_u32(llm::FEATURES_LENGTH, &["n_embd_features"])?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["n_ff"])?;
    p.f32(
        attention::GROUPNORM_EPS,
        hp.req_f64(&["group_norm_epsilon"])?,
    );
    p.req_u32(attention::GROUPNORM_GROUPS, &["group_norm_groups"])?;
    p.u32(posnet::EMBEDDING_LENGTH, nested(hp, "posnet", "n_embd")?)?;
    p.u32(posnet::BLOCK_COUNT, nested(hp, "posnet", "n_layer")?)?;
    p.u32(
        convnext::EMBEDDING_LENGTH,
        nested(hp, "convnext", "n_embd")?,
    )?;
    p.u32(convnext::BLOCK_COUNT, nested(hp, "convnext", "n_layer")?)?;
    p.bool(attention::CAUSAL, false);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quantizer_statistics_are_dropped() {
        let q = "feature_extractor.encodec.quantizer.vq.layers.0._codebook.";
        for s in ["cluster_size", "embed_avg", "inited"] {
            assert_eq!(filter(&format!("{q}{s}")), None);
        }
        assert!(filter("backbone.convnext.0.gamma").is_some());
    }

    #[test]
    fn a_missing_nested_count_names_its_path() {
        let hp = crate::hf::config::from_json(
            serde_json::json!({"architectures": ["WavTokenizerDec"], "posnet": {"n_embd": 8}}),
            "config.json".into(),
        )
        .unwrap();
        assert_eq!(nested(&hp, "posnet", "n_embd").unwrap(), 8);
        match nested(&hp, "posnet", "n_layer") {
            Err(e) => assert!(e.to_string().contains("posnet.n_layer"), "{e}"),
            Ok(n) => panic!("{n}"),
        }
    }
}
