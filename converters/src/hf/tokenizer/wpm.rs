//! WordPiece (BERT): `BertModel.set_vocab` — the `get_vocab_base` tokens turned into llama.cpp's
//! "phantom space" form, and the BERT pipeline `transformers` builds from a bare vocab.txt.

use std::path::Path;

use serde_json::{json, Map, Value as Json};

use super::bpe::{get_vocab_base, HfTokenizer};
use super::json::{read_text, truthy};
use super::kv::{key, strings, token_type, Kv};
use super::special::SpecialVocab;
use super::{hparam_count, PreTokenizerMatch};
use crate::hf::ModelDir;
use crate::ConvertError;
use ggufkit::gguf::ArrayValue;

/// Phantom space: a non-CONTROL token loses a leading `##`, or else gains a leading `▁`.
pub(crate) fn phantom(token: &str, ty: i32) -> String {
    if ty == token_type::CONTROL {
        token.to_string()
    } else if let Some(rest) = token.strip_prefix("##") {
        rest.to_string()
    } else {
        format!("\u{2581}{token}")
    }
}

/// `BertModel.set_vocab`.
pub(crate) fn set_vocab_bert(
    dir: &ModelDir,
    hparams: &Json,
    tc: Option<&Json>,
) -> Result<(Kv, PreTokenizerMatch), ConvertError> {
    let hf = HfTokenizer::load(dir, tc)?;
    let base = get_vocab_base(&hf, hparams, tc)?;
    let mut kv = Kv::new();
    let type_count = hparam_count(hparams, "type_vocab_size")?.unwrap_or(1);
    let type_count = u32::try_from(type_count)
        .map_err(|_| ConvertError::Other(format!("type_vocab_size {type_count} exceeds u32")))?;
    kv.u32(key::TOKEN_TYPE_COUNT, type_count);
    let tokens: Vec<String> = base
        .tokens
        .iter()
        .zip(&base.types)
        .map(|(t, ty)| phantom(t, *ty))
        .collect();
    kv.string(key::MODEL, "bert");
    kv.string(key::PRE, &base.pre.name);
    let n = tokens.len();
    kv.array(key::TOKENS, strings(tokens));
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(base.types));
    SpecialVocab::load(dir, false, None, Some(n))?.add_to(&mut kv)?;
    Ok((kv, base.pre))
}

/// A token text from tokenizer_config (a string or an AddedToken dict).
fn config_token(tc: Option<&Json>, k: &str, default: &str) -> String {
    match tc.and_then(|c| c.get(k)) {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Object(o)) => o
            .get("content")
            .and_then(Json::as_str)
            .unwrap_or(default)
            .to_string(),
        _ => default.to_string(),
    }
}

/// The pipeline `transformers`' `BertTokenizer` builds from `vocab.txt` (one token per line, the
/// line number its id): BertNormalizer from `do_lower_case`, `tokenize_chinese_chars` and
/// `strip_accents`, BertPreTokenizer, `[CLS] $A [SEP]` / `[CLS] $A [SEP] $B:1 [SEP]:1`, the
/// named special tokens as special added tokens.
pub(crate) fn bert_from_vocab_txt(
    path: &Path,
    tc: Option<&Json>,
) -> Result<HfTokenizer, ConvertError> {
    let text = read_text(path)?.replace("\r\n", "\n").replace('\r', "\n");
    let mut vocab: Map<String, Json> = Map::new();
    let mut size = 0u32;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let token = line.trim_end_matches('\n');
        let id =
            u32::try_from(i).map_err(|_| ConvertError::format(path, None, "too many lines"))?;
        vocab.insert(token.to_string(), Json::from(id));
        size = id + 1;
    }
    let lower = tc
        .and_then(|c| c.get("do_lower_case"))
        .map(|v| truthy(Some(v)))
        .unwrap_or(true);
    let chinese = tc
        .and_then(|c| c.get("tokenize_chinese_chars"))
        .map(|v| truthy(Some(v)))
        .unwrap_or(true);
    let strip = tc
        .and_then(|c| c.get("strip_accents"))
        .filter(|v| !v.is_null())
        .map(|v| Json::Bool(truthy(Some(v))))
        .unwrap_or(Json::Null);
    let unk = config_token(tc, "unk_token", "[UNK]");
    let sep = config_token(tc, "sep_token", "[SEP]");
    let pad = config_token(tc, "pad_token", "[PAD]");
    let cls = config_token(tc, "cls_token", "[CLS]");
    let mask = config_token(tc, "mask_token", "[MASK]");
    // Special tokens in transformers' attribute order; ones missing from vocab.txt are
    // appended after it.
    let mut added = Vec::new();
    let mut seen = Vec::new();
    for t in [&unk, &sep, &pad, &cls, &mask] {
        if seen.contains(t) {
            continue;
        }
        seen.push(t.clone());
        let id = match vocab.get(t.as_str()).and_then(Json::as_u64) {
            Some(id) => id,
            None => {
                size += 1;
                u64::from(size - 1)
            }
        };
        added.push(
            json!({"id": id, "content": t, "single_word": false, "lstrip": false,
                          "rstrip": false, "normalized": false, "special": true}),
        );
    }
    let id_of = |t: &str, fallback: u64| -> u64 {
        added
            .iter()
            .find(|a| a["content"] == t)
            .and_then(|a| a["id"].as_u64())
            .unwrap_or(fallback)
    };
    let (cls_id, sep_id) = (id_of(&cls, 2), id_of(&sep, 3));
    let special = |t: &str, type_id: u32| json!({"SpecialToken": {"id": t, "type_id": type_id}});
    let seq = |s: &str, type_id: u32| json!({"Sequence": {"id": s, "type_id": type_id}});
    let tj = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": chinese,
                       "strip_accents": strip, "lowercase": lower},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special(&cls, 0), seq("A", 0), special(&sep, 0)],
            "pair": [special(&cls, 0), seq("A", 0), special(&sep, 0), seq("B", 1), special(&sep, 1)],
            "special_tokens": {
                cls.clone(): {"id": cls, "ids": [cls_id], "tokens": [cls]},
                sep.clone(): {"id": sep, "ids": [sep_id], "tokens": [sep]},
            },
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": unk, "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    });
    let tok = super::guard::shield(path, "building a WordPiece tokenizer", || {
        tokenizers::Tokenizer::from_bytes(tj.to_string().as_bytes()).map_err(|e| {
            super::library_error(path, "cannot build a WordPiece tokenizer from it", &e)
        })
    })?;
    Ok(HfTokenizer {
        tok,
        json: tj,
        path: path.to_path_buf(),
        specials: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phantom_space() {
        assert_eq!(phantom("##ing", token_type::NORMAL), "ing");
        assert_eq!(phantom("the", token_type::NORMAL), "\u{2581}the");
        assert_eq!(phantom("[CLS]", token_type::CONTROL), "[CLS]");
        assert_eq!(
            phantom("[unused0]", token_type::NORMAL),
            "\u{2581}[unused0]"
        );
    }
}
