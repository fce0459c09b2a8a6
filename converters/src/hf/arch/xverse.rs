//! `XverseForCausalLM` (arch `xverse`, `XverseModel` in `conversion/xverse.py`).
//!
//! Remote code (no transformers config class: the config is read as written). A Llama
//! layout whose q and k weights get the rotary permutation with the class's own head rule
//! (`n_head / n_head_kv` heads for k when they differ, not Llama's `n_head_kv`). The
//! hparams are the generic block, the tensor layout and the rope dimension count
//! `hidden_size / num_attention_heads`.
//!
//! The vocabulary is tokenizer.json's (required), as transformers' tokenizer shows it: the
//! model's vocabulary with the added tokens, `vocab_size` entries (the hparam, else their
//! number; an id at or past it, or an id without a token below it, is refused), written as
//! a `llama` table without scores: a token `"\0"` as the byte token `<b'\x00'>`, `<0xXX>`
//! tokens as bytes, added tokens as control (special) or user-defined, the rest normal;
//! then the special vocabulary.

use std::collections::HashMap;

use ggufkit::gguf::keys::{llm, rope};
use serde_json::Value as Json;

use super::deepseek2::truthy;
use super::{keep, no_extra, Arch, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabPath, VocabQuirks};
use crate::ConvertError;

/// gguf-py's `TokenType` values the table uses.
mod token_type {
    pub const NORMAL: i32 = 1;
    pub const CONTROL: i32 = 3;
    pub const USER_DEFINED: i32 = 4;
    pub const BYTE: i32 = 6;
}

/// The XVERSE class.
pub const XVERSE: Arch = Arch {
    hf_names: &["XverseForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "xverse",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(permute_qk),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `XverseModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.string(llm::TENSOR_DATA_LAYOUT, "Meta AI original pth");
    let hidden = p.hp.req_u64(&["hidden_size"])?;
    let heads = p.hp.req_u64(&["num_attention_heads"])?;
    let dims = hidden
        .checked_div(heads)
        .ok_or_else(|| p.hp.missing(&["num_attention_heads"]))?;
    p.u32(rope::DIMENSION_COUNT, dims)
}

/// `XverseModel.modify_tensors`: q with `n_head` heads, k with `n_head / n_head_kv` when a
/// KV head count is given and differs, else `n_head`.
fn permute_qk(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let is_q = name.ends_with("q_proj.weight");
    let is_k = name.ends_with("k_proj.weight");
    if !is_q && !is_k {
        return Ok(Modified::Pass(name, expr));
    }
    let heads = hp.req_u64(&["num_attention_heads"])?;
    let kv = match hp.find(&["num_key_value_heads"]) {
        None => Some(heads),
        Some(_) => hp.find_u64(&["num_key_value_heads"])?,
    };
    let n = match kv {
        Some(kv) if is_k && kv != heads => heads.checked_div(kv).filter(|&n| n > 0),
        _ => Some(heads),
    }
    .ok_or_else(|| ConvertError::Tensor {
        name: name.clone(),
        problem: format!("cannot permute by {heads} heads over {kv:?} KV heads"),
    })?;
    let expr = expr.permute_heads(&name, n)?;
    Ok(Modified::Pass(name, expr))
}

/// Whether `t` is a byte token `<0xXX>`.
fn is_byte_token(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 6
        && t.starts_with("<0x")
        && t.ends_with('>')
        && b[3].is_ascii_hexdigit()
        && b[4].is_ascii_hexdigit()
}

/// `XverseModel.set_vocab` (see the module doc).
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let dir = b.dir();
    let path = dir.tokenizer_json_path();
    let tj = dir.tokenizer_json()?.ok_or_else(|| {
        ConvertError::io(
            &path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "XVERSE's vocabulary is tokenizer.json",
            ),
        )
    })?;
    let bad = |why: String| ConvertError::format(&path, None, why);
    let mut by_id: HashMap<u64, String> = HashMap::new();
    match tj.get("model").and_then(|m| m.get("vocab")) {
        Some(Json::Object(v)) => {
            for (tok, id) in v {
                let id = id
                    .as_u64()
                    .ok_or_else(|| bad(format!("model.vocab: {tok:?} has id {id}")))?;
                by_id.insert(id, tok.clone());
            }
        }
        Some(Json::Array(v)) => {
            for (id, entry) in v.iter().enumerate() {
                let tok = entry
                    .get(0)
                    .and_then(Json::as_str)
                    .ok_or_else(|| bad(format!("model.vocab[{id}] is not [piece, score]")))?;
                by_id.insert(id as u64, tok.to_string());
            }
        }
        _ => return Err(bad("no model.vocab".into())),
    }
    let mut added: HashMap<String, bool> = HashMap::new();
    if let Some(Json::Array(list)) = tj.get("added_tokens") {
        for t in list {
            let (Some(id), Some(content)) = (
                t.get("id").and_then(Json::as_u64),
                t.get("content").and_then(Json::as_str),
            ) else {
                return Err(bad(format!(
                    "added_tokens: an entry without id or content: {t}"
                )));
            };
            by_id.insert(id, content.to_string());
            added.insert(content.to_string(), truthy(t.get("special")));
        }
    }
    let n = match b.hparams().get("vocab_size") {
        None => by_id.len() as u64,
        Some(v) => v.as_u64().ok_or_else(|| ConvertError::NotACount {
            key: "vocab_size".into(),
            value: v.to_string(),
        })?,
    };
    if by_id.keys().any(|&id| id >= n) {
        return Err(bad(format!(
            "the vocabulary has an id at or past vocab_size {n}"
        )));
    }
    // Every id below `n` has a token (checked next), so `n` is at most the entries' count.
    let n = usize::try_from(n).map_err(|_| bad(format!("vocab_size {n}")))?;
    let mut tokens = Vec::with_capacity(n.min(by_id.len()));
    let mut types = Vec::with_capacity(n.min(by_id.len()));
    for id in 0..n as u64 {
        let text = by_id
            .get(&id)
            .ok_or_else(|| bad(format!("no token has id {id} (vocab_size {n})")))?;
        let (text, ty) = if text == "\0" {
            ("<b'\\x00'>".to_string(), token_type::BYTE)
        } else if is_byte_token(text) {
            (text.clone(), token_type::BYTE)
        } else if let Some(&special) = added.get(text) {
            let ty = if special {
                token_type::CONTROL
            } else {
                token_type::USER_DEFINED
            };
            (text.clone(), ty)
        } else {
            (text.clone(), token_type::NORMAL)
        };
        tokens.push(text);
        types.push(ty);
    }
    let len = tokens.len();
    b.llama_table(tokens, None, types)?;
    b.special_vocab_with(len, &[], &[])?;
    Ok((VocabPath::SentencePiece, None))
}

#[cfg(test)]
mod tests {
    use super::is_byte_token;

    #[test]
    fn byte_tokens_are_two_hex_digits() {
        assert!(is_byte_token("<0x0A>"));
        assert!(is_byte_token("<0xfe>"));
        assert!(!is_byte_token("<0x0G>"));
        assert!(!is_byte_token("<0x0AB>"));
        assert!(!is_byte_token("0x0A"));
    }
}
