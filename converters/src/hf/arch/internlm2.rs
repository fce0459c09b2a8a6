//! `InternLM2ForCausalLM` (arch `internlm2`, `InternLM2Model` in `conversion/internlm.py`).
//!
//! Remote code (no transformers config class: the config is read as written). The attention
//! input is one `attention.wqkv` matrix grouped by KV head (each group: its q heads, then
//! one k head, then one v head); it is cut into q, k and v, and q and k get Llama's rotary
//! permutation. The hparams are the generic block.
//!
//! The vocabulary is the class's own SentencePiece table (`tokenizer.model` required):
//! `vocab_size` pieces (the hparam, else the model's size; more than the model holds is
//! refused, as SentencePiece's `IdToPiece` refuses) with their scores and types (a
//! user-defined piece is normal, a piece starting with `[UNUSED` unused, a piece `"\0"`
//! written as `🐉`); `added_tokens.json`'s tokens appended (user-defined, score -1000); then
//! tokenizer_config.json's `added_tokens_decoder` and tokenizer.json's `added_tokens`, in
//! that order, each laid over its id (user-defined, control when special, score -1000;
//! an id past the table is refused). `add_space_prefix` is the model's `add_dummy_prefix`,
//! and the special vocabulary's eos (which must be set) becomes `<|im_end|>`'s id when one
//! of those added tokens is `<|im_end|>`.

use ggufkit::gguf::keys::tokenizer::ADD_SPACE_PREFIX;
use serde_json::Value as Json;

use super::deepseek2::truthy;
use super::{keep, no_extra, Arch, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::proto::PieceType;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabPath, VocabQuirks};
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

/// The chat turn's end, which replaces eos when it is an added token.
const CHAT_EOS: &str = "<|im_end|>";

/// The InternLM2 class.
pub const INTERNLM2: Arch = Arch {
    hf_names: &["InternLM2ForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "internlm2",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnQkv]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(split_wqkv),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The generic hparams (the class writes nothing of its own).
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()
}

/// `InternLM2Model.modify_tensors`: `wqkv` becomes q, k (both permuted) and v.
fn split_wqkv(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    // The class computes the grouping for every tensor, so a config without the head
    // counts or the width, or with counts that do not divide, is refused at the first one.
    let heads = hp.req_u64(&["num_attention_heads"])?;
    let kv = hp.req_u64(&["num_key_value_heads"])?;
    let embd = hp.req_u64(&["hidden_size"])?;
    let bad = |why: String| ConvertError::Tensor {
        name: name.clone(),
        problem: why,
    };
    let q_per_kv = heads
        .checked_div(kv)
        .filter(|&q| q > 0)
        .ok_or_else(|| bad(format!("{heads} heads cannot be grouped by {kv} KV heads")))?;
    let head_dim = embd
        .checked_div(heads)
        .ok_or_else(|| bad("num_attention_heads is 0".into()))?;
    let Some(bid) =
        block_id(&name).filter(|b| name.contains(&format!("model.layers.{b}.attention.wqkv")))
    else {
        return Ok(Modified::Pass(name, expr));
    };
    let groups = heads / q_per_kv;
    let rows = groups * (q_per_kv + 2) * head_dim;
    if expr.shape() != [rows, embd] {
        return Err(bad(format!(
            "shape {:?} is not [{groups} groups x ({q_per_kv} q + k + v) x {head_dim}, {embd}]",
            expr.shape()
        )));
    }
    let grouped = expr.reshape(&name, vec![groups, q_per_kv + 2, head_dim, embd])?;
    let part = |start: u64, len: u64| -> Result<Expr, ConvertError> {
        grouped
            .clone()
            .narrow(&name, 1, start, len)?
            .reshape(&name, vec![groups * len * head_dim, embd])
    };
    let q = part(0, q_per_kv)?.permute_heads(&name, heads)?;
    let k = part(q_per_kv, 1)?.permute_heads(&name, kv)?;
    let v = part(q_per_kv + 1, 1)?;
    Ok(Modified::Out(vec![
        (format!("blk.{bid}.attn_q.weight"), q),
        (format!("blk.{bid}.attn_k.weight"), k),
        (format!("blk.{bid}.attn_v.weight"), v),
    ]))
}

/// An added token's id and text from a JSON entry, or the error naming `file`.
fn added_entry(file: &str, id: &Json, entry: &Json) -> Result<(i128, String), ConvertError> {
    let id = match id {
        Json::Number(n) => n.as_i64().map(i128::from),
        Json::String(s) => s.trim().parse::<i128>().ok(),
        _ => None,
    };
    let content = entry.get("content").and_then(Json::as_str);
    match (id, content) {
        (Some(id), Some(c)) => Ok((id, c.to_string())),
        _ => Err(ConvertError::Other(format!(
            "{file}: an added token without an integer id or a string content: {entry}"
        ))),
    }
}

/// `InternLM2Model.set_vocab` (see the module doc).
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model("InternLM2's vocabulary is SentencePiece")?;
    let n = match b.hparams().get("vocab_size") {
        None => model.pieces.len(),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| ConvertError::NotACount {
                key: "vocab_size".into(),
                value: v.to_string(),
            })?,
    };
    if n > model.pieces.len() {
        return Err(ConvertError::Other(format!(
            "vocab_size {n} exceeds the {} pieces of tokenizer.model",
            model.pieces.len()
        )));
    }
    let mut tokens = Vec::with_capacity(n);
    let mut scores = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    for p in &model.pieces[..n] {
        let text = if p.piece == "\0" {
            "🐉".to_string()
        } else {
            p.piece.clone()
        };
        let ty = if p.piece.starts_with("[UNUSED") {
            token_type::UNUSED
        } else {
            match p.kind {
                PieceType::Unknown => token_type::UNKNOWN,
                PieceType::Control => token_type::CONTROL,
                PieceType::Unused => token_type::UNUSED,
                PieceType::Byte => token_type::BYTE,
                PieceType::Normal | PieceType::UserDefined => token_type::NORMAL,
            }
        };
        tokens.push(text);
        scores.push(p.score);
        types.push(ty);
    }
    for (text, _) in b.added_tokens_json()? {
        tokens.push(text);
        scores.push(-1000.0);
        types.push(token_type::USER_DEFINED);
    }
    let mut overlays: Vec<(i128, String, bool)> = Vec::new();
    for (id, entry) in b.added_tokens_decoder()? {
        let (id, text) = added_entry("tokenizer_config.json", &Json::String(id), &entry)?;
        overlays.push((id, text, truthy(entry.get("special"))));
    }
    if let Some(Json::Array(added)) = b
        .dir()
        .tokenizer_json()?
        .and_then(|t| t.get("added_tokens"))
    {
        for entry in added {
            let id = entry.get("id").unwrap_or(&Json::Null);
            let (id, text) = added_entry("tokenizer.json", id, entry)?;
            overlays.push((id, text, truthy(entry.get("special"))));
        }
    }
    let mut chat_eos = None;
    for (id, text, special) in overlays {
        if text == CHAT_EOS {
            chat_eos = Some(id);
        }
        let i = usize::try_from(id)
            .ok()
            .filter(|&i| i < tokens.len())
            .ok_or_else(|| {
                ConvertError::Other(format!(
                    "added token {text:?} has id {id}, outside the {}-token table",
                    tokens.len()
                ))
            })?;
        tokens[i] = text;
        scores[i] = -1000.0;
        types[i] = if special {
            token_type::CONTROL
        } else {
            token_type::USER_DEFINED
        };
    }
    let len = tokens.len();
    b.llama_table(tokens, Some(scores), types)?;
    b.set_bool(ADD_SPACE_PREFIX, model.add_dummy_prefix.unwrap_or(true));
    let eos = match chat_eos {
        Some(id) => vec![(
            "eos",
            u32::try_from(id)
                .map_err(|_| ConvertError::Other(format!("eos id {id} exceeds u32")))?,
        )],
        None => Vec::new(),
    };
    b.special_vocab_with(len, &["eos"], &eos)?;
    Ok((VocabPath::SentencePiece, None))
}
