//! Vocabularies read through a HuggingFace fast tokenizer (tokenizer.json, or BERT's vocab.txt):
//! `get_vocab_base` (GPT-2 BPE and WordPiece) and the byte-fallback "llama-hf" path.
//!
//! The tokenizer is run by HuggingFace's own `tokenizers` crate, the engine `transformers`
//! uses, so the probe encoding of the chkhsh and the encode/decode round trip of unnormalized
//! added tokens are the reference's.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde_json::Value as Json;

use super::auto;
use super::guard;
use super::kv::token_type;
use super::pre::{detect, PreTokenizerMatch};
use super::spm::SpmVocab;
use super::{hparam_count, looks_special, MAX_VOCAB};
use super::{library_error, vocab_error};
use crate::hf::config::json_kind;
use crate::hf::ModelDir;
use crate::{ConvertError, VocabProblem};

/// A loaded HuggingFace tokenizer and the JSON it came from.
pub(crate) struct HfTokenizer {
    /// The runnable tokenizer (truncation and padding off).
    pub tok: tokenizers::Tokenizer,
    /// Its serialisation (tokenizer.json as written, or the pipeline built from vocab.txt).
    pub json: Json,
    /// The file it was read from.
    pub path: PathBuf,
    /// `all_special_tokens` of the class transformers builds, when that class is modelled
    /// ([`auto::all_special_tokens`]); else tokenizer_config's are read as before.
    pub specials: Option<Vec<String>>,
}

impl HfTokenizer {
    /// Loads `dir/tokenizer.json`, or for a WordPiece directory without one, builds BERT's
    /// pipeline from `vocab.txt` and tokenizer_config.json as `transformers` does.
    pub fn load(dir: &ModelDir, tc: Option<&Json>) -> Result<HfTokenizer, ConvertError> {
        let path = dir.tokenizer_json_path();
        if let Some((text, json)) = dir.tokenizer_json_strict()? {
            // Everything below reads and rebuilds it as an object (a string, number or list
            // at the top has no pipeline and no vocabulary).
            if !json.is_object() {
                return Err(ConvertError::wrong_type(
                    &path,
                    crate::hf::config::TOP_LEVEL,
                    "an object",
                    json_kind(&json),
                ));
            }
            guard::check(&json, &path)?;
            // The class transformers builds decides the pipeline and the added tokens.
            let config = dir.config_if_present()?;
            let class = auto::choose(tc, config, &json);
            if let Some(auto::Build::Rebuilt(p)) = class.map(|c| c.build) {
                p.check_config(dir, tc)?;
            }
            let file_added = json.get("added_tokens").cloned();
            let (json, text) = match class.map(|c| c.build) {
                Some(auto::Build::Rebuilt(p)) if p.reads_file_json() => {
                    let mut json = json;
                    let t = auto::rebuilt_text(&mut json, p, tc);
                    (json, Cow::Owned(t))
                }
                Some(auto::Build::Rebuilt(p)) => {
                    let j = auto::rebuilt_json(json, p, tc);
                    let t = j.to_string();
                    (j, Cow::Owned(t))
                }
                _ => (json, Cow::Borrowed(text)),
            };
            let tok = guard::shield(&path, "loading it", || {
                let mut tok: tokenizers::Tokenizer = text
                    .parse()
                    .map_err(|e| library_error(&path, "refuses it", &e))?;
                // transformers' encode() runs without the file's truncation and padding.
                tok.with_truncation(None)
                    .map_err(|e| library_error(&path, "refuses turning truncation off", &e))?;
                tok.with_padding(None);
                if let Some(class) = class {
                    auto::add_configured_tokens(&mut tok, class, dir, tc, file_added.as_ref())?;
                    auto::finish(&mut tok, class, dir, tc)?;
                }
                guard::check_added_tokens(&tok, &path)?;
                Ok(tok)
            })?;
            drop(text);
            // What the file wrote stays readable (messages name a token's written id).
            let mut json = json;
            if let (Some(a), Some(o)) = (file_added, json.as_object_mut()) {
                o.insert("added_tokens".into(), a);
            }
            let specials = match class {
                Some(c) => Some(auto::all_special_tokens(dir, tc, c)?),
                None => None,
            };
            return Ok(HfTokenizer {
                tok,
                json,
                path,
                specials,
            });
        }
        let vocab_txt = dir.join("vocab.txt");
        if vocab_txt.is_file() {
            return super::wpm::bert_from_vocab_txt(&vocab_txt, tc);
        }
        Err(ConvertError::io(
            &path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no tokenizer.json (nor vocab.txt)",
            ),
        ))
    }

    /// `tokenizer.get_added_vocab()`: content → id of every added token.
    pub(crate) fn added_vocab(&self) -> HashMap<String, u32> {
        let mut by_id: Vec<(u32, String)> = self
            .tok
            .get_added_tokens_decoder()
            .into_iter()
            .map(|(id, t)| (id, t.content))
            .collect();
        by_id.sort();
        by_id.into_iter().map(|(id, c)| (c, id)).collect()
    }

    /// id → token over `vocab`, which is `tokenizer.vocab` (the model's vocabulary and the
    /// added tokens). Where two texts share an id (Python's choice then depends on hash
    /// order) the added token's content is taken, else the smaller text.
    fn reverse_of(&self, vocab: HashMap<String, u32>) -> ReverseVocab {
        let added: HashMap<u32, String> = self
            .tok
            .get_added_tokens_decoder()
            .into_iter()
            .map(|(id, t)| (id, t.content))
            .collect();
        let mut by_id: Vec<(u32, String)> = vocab.into_iter().map(|(t, id)| (id, t)).collect();
        // By id, then text: the first of each id is its smallest text.
        by_id.sort_unstable();
        by_id.dedup_by(|later, first| later.0 == first.0);
        for (id, text) in &mut by_id {
            if let Some(a) = added.get(id) {
                text.clone_from(a);
            }
        }
        ReverseVocab(by_id)
    }
}

/// id → token text, sorted by id (one entry per id).
struct ReverseVocab(Vec<(u32, String)>);

impl ReverseVocab {
    /// The text of token `id`, if the vocabulary has one.
    fn get(&self, id: &u32) -> Option<&String> {
        let at = self.0.binary_search_by_key(id, |(i, _)| *i).ok()?;
        Some(&self.0[at].1)
    }
}

/// The GPT-2 path needs a BPE model with merges: llama.cpp cannot load a "gpt2" vocabulary
/// without `tokenizer.ggml.merges`, a WordPiece (or other) model has none, and a repeated
/// merge is a corrupt merge table (ranks must be unique).
pub(crate) fn check_bpe_model(hf: &HfTokenizer) -> Result<(), ConvertError> {
    let err = |p: String| ConvertError::format(&hf.path, None, p);
    let model = hf.json.get("model");
    let ty = model
        .and_then(|m| m.get("type"))
        .and_then(Json::as_str)
        .unwrap_or("(untyped)");
    if ty != "BPE" {
        return Err(err(format!(
            "model type {ty:?} on the GPT-2 (BPE) vocabulary path: a BPE model is needed"
        )));
    }
    let merges = model.and_then(|m| m.get("merges")).and_then(Json::as_array);
    let Some(merges) = merges.filter(|m| !m.is_empty()) else {
        if hf.path.with_file_name("merges.txt").is_file() {
            return Ok(());
        }
        return Err(err(
            "model.merges is empty (and there is no merges.txt): llama.cpp cannot load a BPE \
             vocabulary without merges"
                .into(),
        ));
    };
    let mut seen: HashMap<(String, String), usize> = HashMap::with_capacity(merges.len());
    for (i, m) in merges.iter().enumerate() {
        let pair = match m {
            Json::String(s) => s
                .split_once(' ')
                .map(|(a, b)| (a.to_string(), b.to_string())),
            Json::Array(a) if a.len() == 2 => match (&a[0], &a[1]) {
                (Json::String(x), Json::String(y)) => Some((x.clone(), y.clone())),
                _ => None,
            },
            _ => None,
        };
        let Some(pair) = pair else { continue };
        if let Some(first) = seen.insert(pair.clone(), i) {
            return Err(err(format!(
                "model.merges[{i}] repeats merge {:?} of model.merges[{first}]",
                format!("{} {}", pair.0, pair.1)
            )));
        }
    }
    Ok(())
}

/// The id tokenizer.json gives `text`, for messages: the `tokenizers` library renumbers an
/// added token whose id is past the vocabulary to the next free id.
fn written_id(tj: &Json, text: &str, id: u32) -> String {
    let written = tj
        .get("added_tokens")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .find(|t| t.get("content").and_then(Json::as_str) == Some(text))
        .and_then(|t| t.get("id"))
        .and_then(Json::as_u64);
    match written {
        Some(w) if w != u64::from(id) => {
            format!(", an added token written with id {w} and renumbered by the tokenizers library")
        }
        _ => String::new(),
    }
}

/// The result of `get_vocab_base`.
pub(crate) struct BaseVocab {
    pub tokens: Vec<String>,
    pub types: Vec<i32>,
    pub pre: PreTokenizerMatch,
}

/// transformers' `clean_up_tokenization`.
fn clean_up_tokenization(s: &str) -> String {
    s.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
}

/// How `get_vocab_base` stores and types the added tokens of the vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddedTokenTypes {
    /// The base class's rule: an unnormalized token is stored as the tokenizer encodes and
    /// decodes it; it is CONTROL when special or when it looks special, else USER_DEFINED
    /// (its `▁` made spaces).
    Normalized,
    /// The text as the vocabulary holds it; CONTROL when `added_tokens_decoder` marks it
    /// special or lacks it, else USER_DEFINED (an override of `get_vocab_base` some classes
    /// carry).
    AsDecoded,
}

/// `get_vocab_base`: tokens and types in id order up to config `vocab_size` (`[PAD<i>]` for
/// missing ids), and the pre-tokenizer name.
pub(crate) fn get_vocab_base(
    hf: &HfTokenizer,
    hparams: &Json,
    tc: Option<&Json>,
) -> Result<BaseVocab, ConvertError> {
    get_vocab_base_with(hf, hparams, tc, AddedTokenTypes::Normalized)
}

/// [`get_vocab_base`] with the added tokens stored and typed by `added_rule`.
pub(crate) fn get_vocab_base_with(
    hf: &HfTokenizer,
    hparams: &Json,
    tc: Option<&Json>,
    added_rule: AddedTokenTypes,
) -> Result<BaseVocab, ConvertError> {
    let vocab = hf.tok.get_vocab(true);
    let vocab_size = match hparam_count(hparams, "vocab_size")? {
        Some(n) => n,
        None => vocab.len(),
    };
    if vocab_size > MAX_VOCAB {
        return Err(ConvertError::VocabTooLarge {
            size: vocab_size as u64,
            max: MAX_VOCAB,
        });
    }
    if let Some((text, max)) = vocab
        .iter()
        .max_by_key(|(t, id)| (**id, std::cmp::Reverse(*t)))
    {
        if *max as usize >= vocab_size {
            return Err(vocab_error(
                &hf.path,
                VocabProblem::IdBeyondVocab {
                    id: u64::from(*max),
                    vocab_size,
                    token: text.clone(),
                    written: written_id(&hf.json, text, *max),
                },
            ));
        }
    }
    let pre = detect(&hf.tok, &hf.json, tc, &hf.path)?;
    let reverse = hf.reverse_of(vocab);
    let added = hf.added_vocab();
    let decoder = hf.tok.get_added_tokens_decoder();
    let model_is_bpe = hf.json.pointer("/model/type").and_then(Json::as_str) == Some("BPE");
    let clean_up = !model_is_bpe
        && tc
            .and_then(|c| c.get("clean_up_tokenization_spaces"))
            .and_then(Json::as_bool)
            .unwrap_or(false);

    let mut tokens = Vec::with_capacity(vocab_size);
    let mut types = Vec::with_capacity(vocab_size);
    for i in 0..vocab_size {
        let Some(text) = reverse.get(&(i as u32)) else {
            tokens.push(format!("[PAD{i}]"));
            types.push(token_type::UNUSED);
            continue;
        };
        let mut text = text.clone();
        if added_rule == AddedTokenTypes::AsDecoded && added.contains_key(&text) {
            let special = decoder.get(&(i as u32)).is_none_or(|at| at.special);
            types.push(if special {
                token_type::CONTROL
            } else {
                token_type::USER_DEFINED
            });
        } else if added.contains_key(&text) {
            let at = decoder.get(&(i as u32)).ok_or_else(|| {
                vocab_error(
                    &hf.path,
                    VocabProblem::AddedTextNotAdded {
                        id: i as u64,
                        text: text.clone(),
                    },
                )
            })?;
            if !at.normalized {
                // Unnormalized added tokens are stored as the tokenizer encodes and decodes them.
                let what = format!("encoding and decoding added token {text:?}");
                let mut dec = guard::shield(&hf.path, &what, || {
                    let enc = hf.tok.encode(text.as_str(), false).map_err(|e| {
                        ConvertError::Other(format!("encoding added token {text:?}: {e}"))
                    })?;
                    hf.tok.decode(enc.get_ids(), false).map_err(|e| {
                        ConvertError::Other(format!("decoding added token {text:?}: {e}"))
                    })
                })?;
                if clean_up {
                    dec = clean_up_tokenization(&dec);
                }
                text = dec;
            }
            if at.special || looks_special(&text) {
                types.push(token_type::CONTROL);
            } else {
                text = text.replace('\u{2581}', " ");
                types.push(token_type::USER_DEFINED);
            }
        } else {
            types.push(token_type::NORMAL);
        }
        tokens.push(text);
    }
    Ok(BaseVocab { tokens, types, pre })
}

/// Whether `LlamaHfVocab` accepts this tokenizer.json (a byte-fallback BPE with a Sequence
/// decoder); anything else sends LlamaModel on to the GPT-2 path.
pub(crate) fn is_llama_hf(tj: &Json) -> bool {
    let model = tj.get("model");
    let is_bpe = model.and_then(|m| m.get("type")).and_then(Json::as_str) == Some("BPE");
    let flag = |k: &str, d: bool| {
        model
            .and_then(|m| m.get(k))
            .and_then(Json::as_bool)
            .unwrap_or(d)
    };
    let llama3 = is_bpe && flag("ignore_merges", false) && !flag("byte_fallback", true);
    if llama3 {
        return false;
    }
    is_bpe
        && flag("byte_fallback", false)
        && tj.pointer("/decoder/type").and_then(Json::as_str) == Some("Sequence")
}

/// The named special tokens transformers knows for this directory (`all_special_tokens`):
/// tokenizer_config's bos/eos/unk/sep/pad/cls/mask tokens and its extra special tokens.
fn all_special_tokens(tc: Option<&Json>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let text = |v: &Json| match v {
        Json::String(s) => Some(s.clone()),
        Json::Object(o) => o.get("content").and_then(Json::as_str).map(str::to_string),
        _ => None,
    };
    let Some(tc) = tc else { return out };
    for attr in super::special::DEFAULT_TYPES {
        if let Some(t) = tc.get(format!("{attr}_token")).and_then(text) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    for k in ["extra_special_tokens", "additional_special_tokens"] {
        let list: Vec<&Json> = match tc.get(k) {
            Some(Json::Array(a)) => a.iter().collect(),
            Some(Json::Object(o)) => o.values().collect(),
            _ => continue,
        };
        for v in list {
            if let Some(t) = text(v) {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// The "llama-hf" vocabulary (`LlamaHfVocab.all_tokens`): the base vocabulary in id order with
/// BYTE for `<0xXX>` and CONTROL for special ids, then the added tokens beyond it; every score
/// is -1000.
pub(crate) fn llama_hf_vocab(
    hf: &HfTokenizer,
    tc: Option<&Json>,
) -> Result<SpmVocab, ConvertError> {
    let base = hf.tok.get_vocab_size(false);
    let vocab = hf.tok.get_vocab(true);
    let mut added: Vec<(u32, String)> = hf
        .added_vocab()
        .into_iter()
        .map(|(c, id)| (id, c))
        .filter(|(id, _)| *id as usize >= base)
        .collect();
    added.sort();
    let added_ids: HashSet<u32> = added.iter().map(|(id, _)| *id).collect();
    let mut specials: HashMap<String, u32> = HashMap::new();
    let named = match &hf.specials {
        Some(s) => s.clone(),
        None => all_special_tokens(tc),
    };
    for t in named {
        let id = vocab.get(&t).copied().ok_or_else(|| {
            vocab_error(
                &hf.path,
                VocabProblem::SpecialNotInVocab { token: t.clone() },
            )
        })?;
        specials.insert(t, id);
    }
    let special_ids: HashSet<u32> = specials.values().copied().collect();
    let reverse = hf.reverse_of(vocab);
    let is_byte = |t: &str| {
        let b = t.as_bytes();
        b.len() == 6
            && t.starts_with("<0x")
            && t.ends_with('>')
            && b[3].is_ascii_hexdigit()
            && b[4].is_ascii_hexdigit()
    };
    let (mut tokens, mut scores, mut types) = (Vec::new(), Vec::new(), Vec::new());
    for id in 0..base as u32 {
        if added_ids.contains(&id) {
            continue;
        }
        let text = reverse.get(&id).ok_or_else(|| {
            vocab_error(&hf.path, VocabProblem::NoTokenWithId { id: u64::from(id) })
        })?;
        let ty = if is_byte(text) {
            token_type::BYTE
        } else if special_ids.contains(&id) {
            token_type::CONTROL
        } else {
            token_type::NORMAL
        };
        tokens.push(text.clone());
        scores.push(-1000.0);
        types.push(ty);
    }
    for (_, text) in added {
        // A named special token's id is always among the special ids.
        let ty = if specials.contains_key(&text) {
            token_type::CONTROL
        } else {
            token_type::USER_DEFINED
        };
        tokens.push(text);
        scores.push(-1000.0);
        types.push(ty);
    }
    Ok(SpmVocab {
        tokens,
        scores,
        types,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_hf_detection() {
        let j = serde_json::json!({"model": {"type": "BPE", "byte_fallback": true}, "decoder": {"type": "Sequence"}});
        assert!(is_llama_hf(&j));
        let j = serde_json::json!({"model": {"type": "BPE", "byte_fallback": false}, "decoder": {"type": "ByteLevel"}});
        assert!(!is_llama_hf(&j));
        let j = serde_json::json!({"model": {"type": "BPE", "ignore_merges": true, "byte_fallback": false}});
        assert!(!is_llama_hf(&j));
        let j =
            serde_json::json!({"model": {"type": "BPE", "byte_fallback": true}, "decoder": null});
        assert!(!is_llama_hf(&j));
    }

    #[test]
    fn cleanup() {
        assert_eq!(clean_up_tokenization("a . b , c n't"), "a. b, cn't");
    }
}
