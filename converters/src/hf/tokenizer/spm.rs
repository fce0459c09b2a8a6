//! SentencePiece vocabularies (`tokenizer.model`): the generic builder
//! (`_create_vocab_sentencepiece`) and Phi-3's variant.

use std::path::Path;

use serde_json::Value as Json;

use super::json::{as_py_int, read_ordered, ConfigAddedTokens, Ordered};
use super::kv::token_type;
use super::proto::{parse_model, PieceType, SpmModel};
use super::{looks_special, MAX_VOCAB};
use crate::hf::ModelDir;
use crate::ConvertError;

/// Tokens, scores and types in id order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpmVocab {
    pub tokens: Vec<String>,
    pub scores: Vec<f32>,
    pub types: Vec<i32>,
}

/// Reads and decodes the SentencePiece model at `path`; `Ok(None)` when there is none.
pub(crate) fn load_model_at(path: &Path) -> Result<Option<SpmModel>, ConvertError> {
    let path = path.to_path_buf();
    if !path.is_file() {
        return Ok(None);
    }
    let bytes = ggufkit::mapped::read_input(&path).map_err(|e| ConvertError::io(&path, e))?;
    parse_model(&bytes).map(Some).map_err(|e| {
        ConvertError::format(
            &path,
            Some(e.offset),
            format!("not a SentencePiece model: {}", e.problem),
        )
    })
}

pub(crate) fn piece_type(k: PieceType) -> i32 {
    match k {
        PieceType::Unknown => token_type::UNKNOWN,
        PieceType::Control => token_type::CONTROL,
        PieceType::Unused => token_type::UNUSED,
        PieceType::Byte => token_type::BYTE,
        // USER_DEFINED pieces inside tokenizer.model are written as NORMAL.
        PieceType::Normal | PieceType::UserDefined => token_type::NORMAL,
    }
}

pub(crate) fn check_size(n: usize) -> Result<usize, ConvertError> {
    if n > MAX_VOCAB {
        return Err(ConvertError::VocabTooLarge {
            size: n as u64,
            max: MAX_VOCAB,
        });
    }
    Ok(n)
}

fn padded(n: usize) -> SpmVocab {
    SpmVocab {
        tokens: (0..n).map(|i| format!("[PAD{i}]")).collect(),
        scores: vec![-10000.0; n],
        types: vec![token_type::UNUSED; n],
    }
}

/// An id from a JSON value, as Python would index a list with it.
fn index(v: &Json, n: usize, path: &Path, what: &str) -> Result<Option<usize>, ConvertError> {
    let id = as_py_int(v).ok_or_else(|| {
        ConvertError::format(path, None, format!("{what}: id {v} is not an integer"))
    })?;
    if id < 0 {
        // Python would index from the end of the list; treat it as the error it is.
        return Err(ConvertError::format(
            path,
            None,
            format!("{what}: negative id {id}"),
        ));
    }
    Ok((id < n as i128).then_some(id as usize))
}

/// The `added_tokens.json` entries (text → id) in file order.
pub(super) fn added_tokens_json(
    dir: &Path,
) -> Result<Option<(Ordered, std::path::PathBuf)>, ConvertError> {
    let path = dir.join("added_tokens.json");
    if !path.is_file() {
        return Ok(None);
    }
    Ok(Some((read_ordered(&path)?, path)))
}

/// tokenizer_config.json's `added_tokens_decoder` in file order.
pub(super) fn added_tokens_decoder(
    dir: &ModelDir,
) -> Result<Option<(Ordered, std::path::PathBuf)>, ConvertError> {
    let Some(text) = dir.tokenizer_config_text()? else {
        return Ok(None);
    };
    let path = dir.tokenizer_config_path();
    let c: ConfigAddedTokens =
        serde_json::from_str(text).map_err(|e| ConvertError::bad_json(&path, &e))?;
    Ok(Some((c.added_tokens_decoder.unwrap_or_default(), path)))
}

fn decoder_id(k: &str, path: &Path) -> Result<i128, ConvertError> {
    k.trim().parse::<i128>().map_err(|_| {
        ConvertError::format(
            path,
            None,
            format!("added_tokens_decoder: key {k:?} is not an integer"),
        )
    })
}

fn content<'a>(entry: &'a Json, path: &Path, what: &str) -> Result<&'a str, ConvertError> {
    entry.get("content").and_then(Json::as_str).ok_or_else(|| {
        ConvertError::format(
            path,
            None,
            format!("{what}: entry without a string 'content'"),
        )
    })
}

/// `_create_vocab_sentencepiece`. `vocab_size` is the hparam (`vocab_size_per_layer_input` or
/// `vocab_size`), `None`/0 meaning the number of pieces.
pub(crate) fn create_vocab(
    dir: &ModelDir,
    model: &SpmModel,
    vocab_size: Option<usize>,
) -> Result<SpmVocab, ConvertError> {
    let n = check_size(vocab_size.filter(|&n| n > 0).unwrap_or(model.pieces.len()))?;
    let mut v = padded(n);
    for (id, p) in model.pieces.iter().enumerate().take(n) {
        v.tokens[id] = p.piece.clone();
        v.scores[id] = p.score;
        v.types[id] = piece_type(p.kind);
    }
    if let Some((added, path)) = added_tokens_json(dir)? {
        for (text, id) in &added.0 {
            if let Some(id) = index(id, n, &path, "added_tokens.json")? {
                v.tokens[id] = text.clone();
                v.scores[id] = -1000.0;
                v.types[id] = token_type::USER_DEFINED;
            }
        }
    }
    if let Some((dec, path)) = added_tokens_decoder(dir)? {
        for (k, entry) in &dec.0 {
            let id = decoder_id(k, &path)?;
            let text = content(entry, &path, "added_tokens_decoder")?;
            if id < 0 {
                return Err(ConvertError::format(
                    &path,
                    None,
                    format!("added_tokens_decoder: negative id {id}"),
                ));
            }
            if id >= n as i128 {
                continue;
            }
            let id = id as usize;
            let special = super::json::truthy(entry.get("special"));
            if special || looks_special(text) {
                v.tokens[id] = text.to_string();
                v.types[id] = token_type::CONTROL;
            } else {
                v.tokens[id] = text.replace('\u{2581}', " ");
                v.types[id] = token_type::USER_DEFINED;
            }
            v.scores[id] = -1000.0;
        }
    }
    Ok(v)
}

/// The table both T5's and Phi-3's builders start from: `vocab_size` entries (the hparam,
/// else the number of pieces; fewer than the pieces is the reference's IndexError), the
/// pieces, then `added_tokens.json`'s entries (file order, ids past the table skipped) as
/// USER_DEFINED with score -1000. `what` names the model file in the error.
fn pieces_and_added_json(
    dir: &ModelDir,
    model: &SpmModel,
    vocab_size: Option<usize>,
    what: &str,
) -> Result<(SpmVocab, usize), ConvertError> {
    let n = check_size(vocab_size.unwrap_or(model.pieces.len()))?;
    if model.pieces.len() > n {
        return Err(ConvertError::Other(format!(
            "{what} has {} pieces, more than vocab_size {n}",
            model.pieces.len()
        )));
    }
    let mut v = padded(n);
    for (id, p) in model.pieces.iter().enumerate() {
        v.tokens[id] = p.piece.clone();
        v.scores[id] = p.score;
        v.types[id] = piece_type(p.kind);
    }
    if let Some((added, path)) = added_tokens_json(dir)? {
        for (text, id) in &added.0 {
            if let Some(id) = index(id, n, &path, "added_tokens.json")? {
                v.tokens[id] = text.clone();
                v.scores[id] = -1000.0;
                v.types[id] = token_type::USER_DEFINED;
            }
        }
    }
    Ok((v, n))
}

/// T5's unigram table (`T5Model.set_vocab`): `vocab_size` entries (the hparam, else the
/// number of pieces; fewer than the pieces is the reference's IndexError), the pieces, then
/// `added_tokens.json`'s entries (file order, ids past the table skipped) as USER_DEFINED
/// with score -1000. tokenizer_config.json's `added_tokens_decoder` is not read.
pub(crate) fn create_vocab_t5(
    dir: &ModelDir,
    model: &SpmModel,
    vocab_size: Option<usize>,
) -> Result<SpmVocab, ConvertError> {
    Ok(pieces_and_added_json(dir, model, vocab_size, "the SentencePiece model")?.0)
}

/// Phi-3's own SentencePiece builder: added tokens from added_tokens.json, tokenizer_config's
/// `added_tokens_decoder` and tokenizer.json's `added_tokens`, USER_DEFINED or CONTROL (when
/// `special`), no "looks special" rule, no `▁` rewrite; ids past the vocabulary are errors
/// (an IndexError upstream) except in added_tokens.json.
pub(crate) fn create_vocab_phi3(
    dir: &ModelDir,
    model: &SpmModel,
    vocab_size: Option<usize>,
) -> Result<SpmVocab, ConvertError> {
    let (mut v, n) = pieces_and_added_json(dir, model, vocab_size, "tokenizer.model")?;
    let set = |v: &mut SpmVocab, id: i128, text: &str, special: bool, path: &Path| {
        if id < 0 || id >= n as i128 {
            return Err(super::vocab_error(
                path,
                crate::VocabProblem::AddedTokenOutside {
                    token: text.to_string(),
                    id: id.to_string(),
                    size: n,
                },
            ));
        }
        let id = id as usize;
        v.tokens[id] = text.to_string();
        v.scores[id] = -1000.0;
        v.types[id] = if special {
            token_type::CONTROL
        } else {
            token_type::USER_DEFINED
        };
        Ok(())
    };
    if let Some((dec, path)) = added_tokens_decoder(dir)? {
        for (k, entry) in &dec.0 {
            let id = decoder_id(k, &path)?;
            let text = content(entry, &path, "added_tokens_decoder")?;
            set(
                &mut v,
                id,
                text,
                super::json::truthy(entry.get("special")),
                &path,
            )?;
        }
    }
    let tj_path = dir.tokenizer_json_path();
    if let Some(tj) = dir.tokenizer_json()? {
        for entry in tj
            .get("added_tokens")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let id = entry.get("id").and_then(as_py_int).ok_or_else(|| {
                ConvertError::format(&tj_path, None, "added_tokens: entry without an integer id")
            })?;
            let text = content(entry, &tj_path, "added_tokens")?;
            set(
                &mut v,
                id,
                text,
                super::json::truthy(entry.get("special")),
                &tj_path,
            )?;
        }
    }
    Ok(v)
}
