//! `MiniMaxText01ForCausalLM` and `MiniMaxM1ForCausalLM` (arch `minimax-01`,
//! `MiniMaxText01Model` in `conversion/minimax.py`).
//!
//! A hybrid of lightning (linear) attention and softmax attention, every block a MoE:
//!
//! - a lightning block has a fused `self_attn.qkv_proj`, the output gate
//!   `self_attn.output_gate`, `self_attn.out_proj` and a norm over all heads
//!   `self_attn.norm` (written as `attn_norm_2`); a softmax block has plain q/k/v/o
//!   projections, never permuted. Which is which is the runtime's business
//!   (`attn_type_list` is not written);
//! - the experts (`block_sparse_moe.experts.{xid}.w1/w2/w3`, `num_local_experts` of them) are
//!   stacked as gate, down and up;
//! - the three layernorm alphas must be equal and the three betas 1 (the class asserts both):
//!   the alpha is written as `residual_scale`; `rotary_dim` (required) is the rope dimension
//!   count;
//! - the rows of `model.embed_tokens.weight` past the tokenizer's base vocabulary that are all
//!   zeros are written as `tokenizer.ggml.suppress_tokens`. The class finds the embedding's
//!   shard through `model.safetensors.index.json`, so a checkpoint without that index is
//!   refused, as the reference fails on it;
//! - GPT-2 BPE vocabulary; a `chat_template.jinja` beside the model replaces the tokenizer's
//!   template. Without one the reference writes the MiniMax-M1 template it bundles, which
//!   this converter does not carry: such a checkpoint is refused, naming the file to add.
//!
//! The vendor's configs (`model_type` `minimax_text_01`, `minimax_m1`) are remote code that
//! transformers does not register, so config.json is read as written.

use std::path::Path;

use ggufkit::gguf::keys::{self, llm, rope};
use ggufkit::gguf::{ArrayValue, Value};
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Experts, Hooks, Rules};
use crate::hf::names::{Tensor, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::safetensors::{self, StDtype, StTensor};
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// MiniMax-Text-01 and MiniMax-M1.
pub const MINIMAX_01: Arch = Arch {
    hf_names: &["MiniMaxText01ForCausalLM", "MiniMaxM1ForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "minimax-01",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[MOE_DECODER, &[Tensor::AttnNorm2, Tensor::AttnGate]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `w1`/`w2`/`w3`, stacked under the `layers.{bid}.feed_forward.experts` name.
const EXPERTS: Experts = Experts {
    marker: "block_sparse_moe.experts",
    count_keys: &["num_local_experts"],
    parts: &["w1", "w2", "w3"],
    expert_name: "model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight",
    merged_name: "layers.{bid}.feed_forward.experts.{w}.weight",
};

/// The token embedding the suppressed tokens are read from.
const EMBEDDINGS: &str = "model.embed_tokens.weight";

/// The chat template file that replaces the tokenizer's.
const TEMPLATE_FILE: &str = "chat_template.jinja";

/// `MiniMaxText01Model.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let suppress = suppressed_tokens(p)?;
    if !suppress.is_empty() {
        p.md.set(
            keys::tokenizer::SUPPRESS_TOKENS,
            Value::Array(ArrayValue::I32(suppress)),
        );
    }
    let alpha = layernorm_factors(p, "alpha")?;
    let beta = layernorm_factors(p, "beta")?;
    let path = &p.hp.path;
    if !(alpha[0] == alpha[1] && alpha[1] == alpha[2]) {
        return Err(bad_factors(path, "alpha", "three equal values", &alpha));
    }
    if !beta.iter().all(|b| *b == 1.0) {
        return Err(bad_factors(path, "beta", "1.0 each", &beta));
    }
    p.f32(llm::RESIDUAL_SCALE, alpha[0]);
    p.req_u32(rope::DIMENSION_COUNT, &["rotary_dim"])
}

/// `layernorm_{full_attention,linear_attention,mlp}_{which}`, each required.
fn layernorm_factors(p: &Params, which: &str) -> Result<[f64; 3], ConvertError> {
    let mut out = [0.0; 3];
    for (slot, part) in out
        .iter_mut()
        .zip(["full_attention", "linear_attention", "mlp"])
    {
        *slot = p.hp.req_f64(&[&format!("layernorm_{part}_{which}")])?;
    }
    Ok(out)
}

/// The class's assertion on the layernorm factors, failed.
fn bad_factors(path: &Path, which: &str, expected: &str, found: &[f64; 3]) -> ConvertError {
    ConvertError::BadHparam {
        path: path.to_path_buf(),
        keys: ["full_attention", "linear_attention", "mlp"]
            .iter()
            .map(|part| format!("layernorm_{part}_{which}"))
            .collect(),
        expected: expected.to_string(),
        found: format!("{found:?}"),
    }
}

/// The ids past the tokenizer's base vocabulary whose embedding rows are all zeros.
fn suppressed_tokens(p: &Params) -> Result<Vec<i32>, ConvertError> {
    let base = base_vocab_size(p)?;
    let dir = p.hp.path.parent().unwrap_or(Path::new("."));
    let index = dir.join(safetensors::SAFETENSORS.index_name);
    if !index.is_file() {
        return Err(ConvertError::MissingFile {
            path: index,
            why: "the MiniMax-Text-01 converter reads the token embedding's shard from the \
                  index (llama.cpp's converter fails without it)"
                .into(),
        });
    }
    let shards = safetensors::index_dir(dir)?;
    let embd = shards
        .tensors
        .iter()
        .find(|t| t.name == EMBEDDINGS)
        .ok_or_else(|| {
            ConvertError::missing_key(
                &index,
                format!("weight_map.{EMBEDDINGS}"),
                "the token embedding, whose all-zero rows name the suppressed tokens",
            )
        })?;
    zero_rows_from(embd, base)
}

/// `tokenizer.vocab_size`: the size of tokenizer.json's model vocabulary, without the added
/// tokens.
fn base_vocab_size(p: &Params) -> Result<u64, ConvertError> {
    let path = p.tokenizer_json_path();
    let tj = p
        .tokenizer_json()?
        .ok_or_else(|| ConvertError::MissingFile {
            path: path.clone(),
            why: "the MiniMax-Text-01 converter takes the tokenizer's base vocabulary size from it"
                .into(),
        })?;
    match tj.get("model").and_then(|m| m.get("vocab")) {
        Some(Json::Object(v)) => Ok(v.len() as u64),
        Some(other) => Err(ConvertError::wrong_type(
            &path,
            "model.vocab",
            "an object of tokens",
            other,
        )),
        None => Err(ConvertError::missing_key(
            &path,
            "model.vocab",
            "the tokenizer's base vocabulary",
        )),
    }
}

/// The rows of the 2-D tensor `t` from `first` on whose elements all equal zero (either
/// sign), as token ids.
fn zero_rows_from(t: &StTensor, first: u64) -> Result<Vec<i32>, ConvertError> {
    let bad = |problem: String| ConvertError::Tensor {
        name: t.name.clone(),
        problem,
    };
    let [rows, cols] = t.shape[..] else {
        return Err(bad(format!(
            "the token embedding must be 2-D, found shape {:?}",
            t.shape
        )));
    };
    let is_zero: fn(&[u8]) -> bool = match t.dtype {
        StDtype::F64 | StDtype::F32 | StDtype::Bf16 | StDtype::F16 => float_is_zero,
        StDtype::F8E4M3 | StDtype::F8E5M2 => float_is_zero,
        StDtype::I64 | StDtype::I32 | StDtype::I16 | StDtype::U8 | StDtype::I8 => int_is_zero,
        StDtype::Bool => int_is_zero,
        StDtype::F8E8M0 => {
            return Err(bad(
                "an F8_E8M0 token embedding has no zero (llama.cpp's converter cannot read it)"
                    .into(),
            ))
        }
    };
    let size = t.dtype.size() as usize;
    let row_len = (cols as usize).saturating_mul(size);
    let mut out = Vec::new();
    for row in first..rows {
        let bytes = t
            .range(row as usize * row_len, row_len)
            .map_err(|e| bad(e.to_string()))?;
        if bytes.chunks_exact(size).all(is_zero) {
            let id =
                i32::try_from(row).map_err(|_| bad(format!("token id {row} is not an INT32")))?;
            out.push(id);
        }
    }
    Ok(out)
}

/// A little-endian IEEE-style float equal to zero: every bit but the sign is clear.
fn float_is_zero(e: &[u8]) -> bool {
    let (last, rest) = e.split_last().expect("elements have at least one byte");
    last & 0x7f == 0 && rest.iter().all(|b| *b == 0)
}

/// An integer (or boolean) equal to zero.
fn int_is_zero(e: &[u8]) -> bool {
    e.iter().all(|b| *b == 0)
}

/// `MiniMaxText01Model.set_vocab`: GPT-2 BPE, then `chat_template.jinja` as the chat template.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let outcome = b.gpt2()?;
    let path = b.dir().join(TEMPLATE_FILE);
    if !path.is_file() {
        return Err(ConvertError::MissingFile {
            path,
            why: "without it llama.cpp's converter writes the MiniMax-M1 chat template it \
                  bundles (models/templates/MiniMax-M1.jinja), which ggufkit does not carry: \
                  put the template to use in this file"
                .into(),
        });
    }
    let text = std::fs::read_to_string(&path).map_err(|e| ConvertError::io(&path, e))?;
    // Read in text mode, as Python does: every line ending becomes "\n".
    b.set_chat_template(&text.replace("\r\n", "\n").replace('\r', "\n"));
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::{float_is_zero, int_is_zero};

    /// Zero is either sign of a float's zero, nothing else; integers are zero when every
    /// byte is.
    #[test]
    fn zero_elements() {
        assert!(float_is_zero(&[0x00, 0x00]));
        assert!(float_is_zero(&[0x00, 0x80]));
        assert!(!float_is_zero(&[0x01, 0x00]));
        assert!(!float_is_zero(&[0x00, 0x7f]));
        assert!(float_is_zero(&[0x80]));
        assert!(!float_is_zero(&[0x81]));
        assert!(int_is_zero(&[0, 0, 0, 0]));
        assert!(!int_is_zero(&[0, 0, 0, 0x80]));
    }
}
