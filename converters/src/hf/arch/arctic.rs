//! `ArcticForCausalLM` (arch `arctic`, `ArcticModel(TextModel)` in `conversion/arctic.py`).
//!
//! Remote code (no transformers config class: the config is read as written). Snowflake
//! Arctic's blocks run a dense residual MLP (`residual_mlp.w1/w2/w3` after
//! `residual_layernorm`, written as the block's plain FFN) beside a mixture of experts
//! (`block_sparse_moe.gate` and per-expert `w1/w2/w3`, stacked per layer; its norm is
//! `post_attention_layernorm`, written as `ffn_norm_exps`). q and k get Llama's rotary
//! permutation (weights only) with `num_attention_heads` and `num_key_value_heads` (absent or
//! null: the head count), read for every tensor as the class reads them. The hparams are
//! the generic block, then `vocab_size` and the rope dimensions `hidden_size /
//! num_attention_heads`.
//!
//! The vocabulary is the class's own SentencePiece table (`tokenizer.model` required):
//! `vocab_size` entries (the hparam, else the model's size), `[PAD{i}]` / -10000 / unused
//! where the model has no piece, the model's pieces with their scores and types (a
//! user-defined piece is normal); then each entry of tokenizer_config.json's
//! `added_tokens_decoder` whose id is in the table replaces its token: user-defined with
//! score -10000, or, when special, score 0 and unknown if its text is the config's
//! `unk_token`, else control. The published checkpoints redefine two pieces of
//! `tokenizer.model` this way as their BOS and EOS.

use ggufkit::gguf::keys::{llm, rope};
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Experts, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::proto::PieceType;
use crate::hf::tokenizer::{
    json_truthy, VocabBuild, VocabKind, VocabOutcome, VocabPath, VocabQuirks, MAX_VOCAB,
};
use crate::ConvertError;

/// gguf-py's `TokenType` values the table uses.
mod token_type {
    pub const NORMAL: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const CONTROL: i32 = 3;
    pub const USER_DEFINED: i32 = 4;
    pub const UNUSED: i32 = 5;
    pub const BYTE: i32 = 6;
}

/// The score of a padding entry and of a non-special added token.
const PAD_SCORE: f32 = -10000.0;

/// The Arctic class.
pub const ARCTIC: Arch = Arch {
    hf_names: &["ArcticForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "arctic",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[
            Tensor::FfnGateInp,
            Tensor::FfnNormExp,
            Tensor::FfnGateExp,
            Tensor::FfnUpExp,
            Tensor::FfnDownExp,
        ],
    ],
    tensor_overrides: &[
        (Tensor::FfnNorm, &["model.layers.{bid}.residual_layernorm"]),
        (
            Tensor::FfnNormExp,
            &["model.layers.{bid}.post_attention_layernorm"],
        ),
    ],
    filter: keep,
    rules: Rules {
        hook: Some(permute_qk),
        experts: &[ARCTIC_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The per-expert `w1` / `w2` / `w3`, stacked under Mixtral's merged names.
const ARCTIC_EXPERTS: Experts = Experts {
    marker: "block_sparse_moe.experts",
    count_keys: &["num_local_experts"],
    parts: &["w1", "w2", "w3"],
    expert_name: "model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight",
    merged_name: "layers.{bid}.feed_forward.experts.{w}.weight",
};

/// `ArcticModel.modify_tensors`' first step: q with the head count, k with the KV head
/// count (the head count when absent or null); both counts read for every tensor.
fn permute_qk(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let n_head = hp.req_u64(&["num_attention_heads"])?;
    let n_kv = hp.find_u64(&["num_key_value_heads"])?.unwrap_or(n_head);
    let expr = if name.ends_with("q_proj.weight") {
        expr.permute_heads(&name, n_head)?
    } else if name.ends_with("k_proj.weight") {
        expr.permute_heads(&name, n_kv)?
    } else {
        expr
    };
    Ok(Modified::Pass(name, expr))
}

/// `ArcticModel.set_gguf_parameters`: the generic block, `vocab_size`, and
/// `hidden_size / num_attention_heads` rotary dimensions (whatever `head_dim` says).
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let hidden = p.hp.req_u64(&["hidden_size"])?;
    let heads = p.hp.req_u64(&["num_attention_heads"])?;
    if heads == 0 {
        return Err(ConvertError::out_of_range(
            &p.hp.path,
            "num_attention_heads",
            heads,
            "at least 1 (the rotary dimensions are hidden_size / num_attention_heads)",
        ));
    }
    p.u32(rope::DIMENSION_COUNT, hidden / heads)
}

/// The vocabulary size: `vocab_size` when present, else the model's piece count.
fn table_size(b: &VocabBuild, pieces: usize) -> Result<usize, ConvertError> {
    match b.hparams().get("vocab_size") {
        None => Ok(pieces),
        Some(v) => crate::hf::config::json_u64(v)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| ConvertError::NotACount {
                key: "vocab_size".into(),
                value: v.to_string(),
            }),
    }
}

/// The table's index of an `added_tokens_decoder` key, as Python indexes a list with
/// `int(key)` (a negative id counts from the end); `None` for an id at or past the size,
/// which the class skips.
fn added_index(
    dir: &crate::hf::ModelDir,
    key: &str,
    n: usize,
) -> Result<Option<usize>, ConvertError> {
    let id: i128 = key.trim().parse().map_err(|_| ConvertError::WrongType {
        path: dir.tokenizer_config_path(),
        key: format!("added_tokens_decoder.{key}"),
        expected: "an integer token id as the key".into(),
        found: format!("{key:?}"),
    })?;
    if id >= n as i128 {
        return Ok(None);
    }
    let from_end = if id < 0 { id + n as i128 } else { id };
    usize::try_from(from_end)
        .map(Some)
        .map_err(|_| ConvertError::OutOfRange {
            path: dir.tokenizer_config_path(),
            key: format!("added_tokens_decoder.{key}"),
            value: id.to_string(),
            allowed: format!("an index of the {n}-token table"),
        })
}

/// The type and score of an added token (see the module doc); tokenizer_config.json's
/// `unk_token` is read only for a special token (the class indexes it then).
fn added_kind(
    dir: &crate::hf::ModelDir,
    entry: &Json,
    content: &str,
) -> Result<(i32, f32), ConvertError> {
    if !entry.get("special").is_some_and(json_truthy) {
        return Ok((token_type::USER_DEFINED, PAD_SCORE));
    }
    let unk = dir
        .tokenizer_config()?
        .and_then(|tc| tc.get("unk_token"))
        .ok_or_else(|| ConvertError::MissingKey {
            path: dir.tokenizer_config_path(),
            key: "unk_token".into(),
            why: "Arctic's vocabulary compares each special added token with it".into(),
        })?;
    let ty = if unk.as_str() == Some(content) {
        token_type::UNKNOWN
    } else {
        token_type::CONTROL
    };
    Ok((ty, 0.0))
}

/// `ArcticModel.set_vocab` (see the module doc).
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model("Arctic's vocabulary is SentencePiece")?;
    let n = table_size(b, model.pieces.len())?;
    if n > MAX_VOCAB {
        return Err(ConvertError::VocabTooLarge {
            size: n as u64,
            max: MAX_VOCAB,
        });
    }
    if model.pieces.len() > n {
        return Err(ConvertError::out_of_range(
            b.dir().config_path(),
            "vocab_size",
            n,
            format!(
                "at least the {} pieces of tokenizer.model",
                model.pieces.len()
            ),
        ));
    }
    let mut tokens: Vec<String> = (0..n).map(|i| format!("[PAD{i}]")).collect();
    let mut scores = vec![PAD_SCORE; n];
    let mut types = vec![token_type::UNUSED; n];
    for (i, p) in model.pieces.iter().enumerate() {
        tokens[i] = p.piece.clone();
        scores[i] = p.score;
        types[i] = match p.kind {
            PieceType::Unknown => token_type::UNKNOWN,
            PieceType::Control => token_type::CONTROL,
            PieceType::Unused => token_type::UNUSED,
            PieceType::Byte => token_type::BYTE,
            PieceType::Normal | PieceType::UserDefined => token_type::NORMAL,
        };
    }
    let dir = b.dir();
    for (key, entry) in b.added_tokens_decoder()? {
        let Some(i) = added_index(dir, &key, n)? else {
            continue;
        };
        let content = entry.get("content").and_then(Json::as_str).ok_or_else(|| {
            ConvertError::MissingKey {
                path: dir.tokenizer_config_path(),
                key: format!("added_tokens_decoder.{key}.content"),
                why: "an added token's text".into(),
            }
        })?;
        let (ty, score) = added_kind(dir, &entry, content)?;
        tokens[i] = content.to_string();
        types[i] = ty;
        scores[i] = score;
    }
    b.llama_table(tokens, Some(scores), types)?;
    b.special_vocab_with(n, &[], &[])?;
    Ok((VocabPath::SentencePiece, None))
}

#[cfg(test)]
mod tests {
    use super::added_index;

    /// Ids index the table as Python indexes a list: past the end is skipped, negative
    /// counts from the end, a key that is no integer is refused.
    #[test]
    fn arctic_added_token_ids() {
        let dir = crate::hf::ModelDir::new("/nonexistent");
        assert_eq!(added_index(&dir, "3", 10).unwrap(), Some(3));
        assert_eq!(added_index(&dir, "10", 10).unwrap(), None);
        assert_eq!(added_index(&dir, "-1", 10).unwrap(), Some(9));
        assert!(added_index(&dir, "-11", 10).is_err());
        assert!(added_index(&dir, "x", 10).is_err());
    }
}
