//! Tokenizer metadata (`tokenizer.ggml.*`, `tokenizer.chat_template`) from a HuggingFace
//! directory: SentencePiece `tokenizer.model`, BPE `tokenizer.json`, WordPiece.
//!
//! Public boundary (stable): [`vocab_metadata`] returns the tokenizer keys in the order
//! llama.cpp's converter writes them. [`vocab_metadata_report`] returns the same keys with
//! what was decided on the way (the vocabulary path and the pre-tokenizer detection), and
//! [`detect_pre_tokenizer`] runs the pre-tokenizer detection alone.
//!
//! Which path each [`VocabKind`] takes mirrors the converter class's `set_vocab`:
//!
//! | kind | architectures (converter class) | path |
//! |---|---|---|
//! | `Llama` | llama, mistral, mixtral (`LlamaModel`) | SentencePiece if `tokenizer.model`, else byte-fallback "llama-hf", else GPT-2 BPE; `add_space_prefix` from tokenizer_config first; CodeLlama (32016) `eot`; 49152-token vocabularies `add_bos_token = false` |
//! | `Qwen2` | qwen2, qwen3 (`Qwen2Model`, `Qwen3Model`) | SentencePiece if `tokenizer.model`, else GPT-2 BPE |
//! | `Gpt2` | gpt2, qwen2moe, qwen3moe, starcoder2, falcon, … (`TextModel` default) | GPT-2 BPE |
//! | `Gemma` | gemma2, gemma3 (GPT-2 BPE without `tokenizer.model`); gemma's own `set_vocab` adds its fixed fill-in-the-middle ids | SentencePiece, then `add_space_prefix = false` |
//! | `Phi3` | phi3 (`Phi3MiniModel`) | GPT-2 BPE for `tokenizer_class` GPT2Tokenizer, else Phi-3's SentencePiece variant |
//! | `Bert` | bert (`BertModel`) | WordPiece (tokenizer.json, or vocab.txt) |
//!
//! Note that Qwen2-MoE / Qwen3-MoE are **`Gpt2`**: their class never tries SentencePiece.

mod auto;
mod bpe;
mod build;
mod guard;
mod json;
mod kv;
pub(crate) mod mistral;
mod pre;
pub mod proto;
mod special;
mod spm;
mod world;
mod wpm;
mod xlmr;

use std::path::Path;

use ggufkit::gguf::{ArrayValue, Value};
use serde_json::Value as Json;

use crate::hf::ModelDir;
use crate::ConvertError;
pub(crate) use json::{parse_json, read_text, truthy as json_truthy_opt};
pub(crate) use spm::load_model_at;

/// Python truthiness of a JSON value.
pub(crate) fn json_truthy(v: &Json) -> bool {
    json_truthy_opt(Some(v))
}
use kv::{key, strings, Kv};
use special::SpecialVocab;

pub use crate::hf::family::VocabQuirks;
pub use build::{PadMultiple, VocabBuild, VocabOutcome};
pub use pre::{
    chkhsh_of_ids, name_for_chkhsh, PreTokenizerHow, PreTokenizerMatch, StructureRule, CHKTXT,
    STRUCTURE_RULES,
};

/// Which vocabulary path an architecture's converter class takes: one of the shared paths
/// of the reference's base classes, or the class's own `set_vocab`.
#[derive(Debug, Clone, Copy)]
pub enum VocabKind {
    /// `LlamaModel.set_vocab`: SentencePiece if `tokenizer.model` exists, else the
    /// byte-fallback HF path, else GPT-2 BPE.
    Llama,
    /// SentencePiece first, else GPT-2 BPE (`Qwen2Model.set_vocab`).
    Qwen2,
    /// GPT-2 style BPE from `tokenizer.json`.
    Gpt2,
    /// The Gemma classes' SentencePiece vocabulary (with the architecture's
    /// [`VocabQuirks`]).
    Gemma,
    /// Phi-3's SentencePiece vocabulary with added tokens.
    Phi3,
    /// BERT WordPiece.
    Bert,
    /// The class's own `set_vocab`, written in its architecture's file from the steps of
    /// [`VocabBuild`].
    Own(SetVocab),
}

/// A class's own `set_vocab` (see [`VocabKind::Own`]).
pub type SetVocab = fn(&mut VocabBuild) -> Result<VocabOutcome, ConvertError>;

/// Chooses special tokens by their text (see [`VocabBuild::gpt2_with_added_specials`]).
pub type AddedSpecials = fn(
    &dyn Fn(&str) -> Result<i128, ConvertError>,
) -> Result<Vec<(&'static str, i128)>, ConvertError>;

/// What the tokenizer converter needs to know.
#[derive(Debug, Clone)]
pub struct VocabRequest<'a> {
    /// The model directory.
    pub dir: &'a ModelDir,
    /// The vocabulary path.
    pub kind: VocabKind,
    /// `general.architecture` (some rules depend on it).
    pub arch: &'a str,
    /// The merged hparams (config.json with transformers defaults).
    pub hparams: &'a serde_json::Value,
}

/// The vocabulary path that was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VocabPath {
    /// `_set_vocab_sentencepiece` (`tokenizer.ggml.model = "llama"`).
    SentencePiece,
    /// Phi-3's SentencePiece variant.
    Phi3SentencePiece,
    /// `_set_vocab_llama_hf`: byte-fallback BPE from tokenizer.json as a "llama" vocabulary.
    LlamaHf,
    /// `_set_vocab_gpt2` (`tokenizer.ggml.model = "gpt2"`).
    Gpt2,
    /// `BertModel.set_vocab` (`tokenizer.ggml.model = "bert"`).
    WordPiece,
    /// `_set_vocab_mistral`: Mistral's own `tekken.json` (or SentencePiece) file, read as
    /// mistral_common reads it ([`mistral`]).
    Mistral,
    /// `_set_vocab_rwkv_world`: the RWKV World vocabulary file (`tokenizer.ggml.model =
    /// "rwkv"`).
    RwkvWorld,
    /// A token table the class reads from its own vocabulary file and writes under its own
    /// `tokenizer.ggml.model` ([`VocabBuild::token_table`]).
    OwnTable,
    /// `_set_vocab_none` (`tokenizer.ggml.model = "none"`): a model without a vocabulary
    /// (an audio decoder reading codes, not tokens).
    NoVocabulary,
}

/// The tokenizer keys with what was decided on the way.
#[derive(Debug, Clone)]
pub struct VocabReport {
    /// The keys, in order (what [`vocab_metadata`] returns).
    pub keys: Vec<(String, Value)>,
    /// The path taken.
    pub path: VocabPath,
    /// The pre-tokenizer detection, for the BPE and WordPiece paths.
    pub pre: Option<PreTokenizerMatch>,
}

/// Vocabularies larger than this are refused (the largest real ones have about 262k tokens; a
/// config asking for more is a mistake or an attempt to exhaust memory).
pub(crate) const MAX_VOCAB: usize = 1 << 24;

/// The tokenizer keys, in order.
pub fn vocab_metadata(req: &VocabRequest) -> Result<Vec<(String, Value)>, ConvertError> {
    Ok(vocab_metadata_report(req)?.keys)
}

/// The tokenizer keys, in order, with the path taken and the pre-tokenizer detection.
pub fn vocab_metadata_report(req: &VocabRequest) -> Result<VocabReport, ConvertError> {
    let tc = req.dir.tokenizer_config()?;
    let mut b = VocabBuild {
        req,
        tc,
        kv: Kv::new(),
    };
    let (path, pre) = match req.kind {
        VocabKind::Llama => set_vocab_llama(req, tc, &mut b.kv)?,
        VocabKind::Qwen2 => match b.spm_model()? {
            Some(m) => (b.sentencepiece(m)?, None),
            None => b.gpt2()?,
        },
        VocabKind::Gpt2 => b.gpt2()?,
        VocabKind::Gemma => set_vocab_gemma(req, tc, &mut b.kv)?,
        VocabKind::Phi3 => set_vocab_phi3(req, tc, &mut b.kv)?,
        VocabKind::Bert => b.wordpiece()?,
        VocabKind::Own(set_vocab) => set_vocab(&mut b)?,
    };
    let kv = b.kv;
    Ok(VocabReport {
        keys: kv.into_vec(),
        path,
        pre,
    })
}

/// Detects `tokenizer.ggml.pre` for the HuggingFace tokenizer in `dir` (tokenizer.json, or a
/// WordPiece vocab.txt): by llama.cpp's chkhsh table first, then by the structure of
/// tokenizer.json (see [`STRUCTURE_RULES`]). Fails, naming the hash and the pipeline found,
/// when neither recognises it.
pub fn detect_pre_tokenizer(dir: &Path) -> Result<PreTokenizerMatch, ConvertError> {
    let dir = ModelDir::new(dir);
    let tc = dir.tokenizer_config()?;
    let hf = bpe::HfTokenizer::load(&dir, tc)?;
    pre::detect(&hf.tok, &hf.json, tc, &hf.path)
}

/// A copy of the hparams `h` with `key` set to `value` (left as they are when they are not an
/// object: `h[key] = …` would panic on one).
fn with_hparam(h: &Json, key: &str, value: Json) -> Json {
    let mut hp = h.clone();
    if let Some(o) = hp.as_object_mut() {
        o.insert(key.into(), value);
    }
    hp
}

/// An hparam as the converter sees it: `text_config` is flattened over the root.
fn hparam<'a>(h: &'a Json, key: &str) -> Option<&'a Json> {
    h.get("text_config")
        .and_then(|t| t.get(key))
        .or_else(|| h.get(key))
}

/// `find_hparam(keys, optional=True)`: the value of the first key present (possibly null).
fn find_hparam<'a>(h: &'a Json, keys: &[&str]) -> Option<&'a Json> {
    keys.iter().find_map(|k| hparam(h, k))
}

/// A count from a JSON value: `None` for null, an error for anything but a non-negative int.
fn count(v: &Json, what: &str) -> Result<Option<usize>, ConvertError> {
    if v.is_null() {
        return Ok(None);
    }
    v.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .map(Some)
        .ok_or_else(|| ConvertError::NotACount {
            key: what.to_string(),
            value: v.to_string(),
        })
}

/// A count hparam; absent or null gives `None`.
pub(crate) fn hparam_count(h: &Json, key: &str) -> Result<Option<usize>, ConvertError> {
    match hparam(h, key) {
        Some(v) => count(v, key),
        None => Ok(None),
    }
}

/// `does_token_look_special`: added tokens that ought to be CONTROL though not marked special.
pub(crate) fn looks_special(t: &str) -> bool {
    matches!(t, "<pad>" | "<mask>" | "<2mass>" | "[@BOS@]")
        || (t.starts_with("<|") && t.ends_with("|>"))
        || (t.starts_with("<\u{ff5c}") && t.ends_with("\u{ff5c}>"))
        || (t.starts_with("<unused") && t.ends_with('>'))
}

/// `_set_vocab_sentencepiece`.
fn sentencepiece(
    req: &VocabRequest,
    model: &proto::SpmModel,
    kv: &mut Kv,
) -> Result<VocabPath, ConvertError> {
    let n = match find_hparam(req.hparams, quirks_of(req.arch).spm_size_keys) {
        Some(v) => count(v, "vocab_size")?,
        None => None,
    };
    let v = spm::create_vocab(req.dir, model, n)?;
    write_spm(req.dir, v, kv)?;
    Ok(VocabPath::SentencePiece)
}

fn write_spm(dir: &ModelDir, v: spm::SpmVocab, kv: &mut Kv) -> Result<(), ConvertError> {
    let n = v.tokens.len();
    kv.string(key::MODEL, "llama");
    kv.string(key::PRE, "default");
    kv.array(key::TOKENS, strings(v.tokens));
    kv.array(key::SCORES, ArrayValue::F32(v.scores));
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(v.types));
    SpecialVocab::load(dir, false, None, Some(n))?.add_to(kv)
}

/// `MambaModel.set_vocab` / `Mamba2Model.set_vocab`: `vocab_size` rounded up to a multiple
/// of `pad_vocab_size_multiple` (`default_multiple` when absent), then SentencePiece or
/// GPT-2 BPE (SentencePiece first when `spm_first`).
fn set_vocab_mamba(
    req: &VocabRequest,
    tc: Option<&Json>,
    default_multiple: u64,
    spm_first: bool,
    kv: &mut Kv,
) -> Result<(VocabPath, Option<PreTokenizerMatch>), ConvertError> {
    let h = req.hparams;
    let bad = |key: &str, v: &Json| ConvertError::NotACount {
        key: key.to_string(),
        value: v.to_string(),
    };
    let n = hparam(h, "vocab_size").ok_or_else(|| ConvertError::NotACount {
        key: "vocab_size".into(),
        value: "(missing)".into(),
    })?;
    let n = n.as_u64().ok_or_else(|| bad("vocab_size", n))?;
    let multiple = match h.get("pad_vocab_size_multiple") {
        None => default_multiple,
        Some(v) => v
            .as_u64()
            .filter(|m| *m > 0)
            .ok_or_else(|| bad("pad_vocab_size_multiple", v))?,
    };
    let padded = n
        .div_ceil(multiple)
        .checked_mul(multiple)
        .filter(|p| *p as usize <= MAX_VOCAB)
        .ok_or_else(|| bad("vocab_size", &Json::from(n)))?;
    let mut hp = with_hparam(h, "vocab_size", Json::from(padded));
    if let Some(tc) = hp
        .get_mut("text_config")
        .and_then(Json::as_object_mut)
        .filter(|t| t.contains_key("vocab_size"))
    {
        tc.insert("vocab_size".into(), Json::from(padded));
    }
    let req = VocabRequest {
        hparams: &hp,
        ..req.clone()
    };
    let dir = req.dir;
    let has_json = dir.has_file(crate::hf::model_dir::TOKENIZER_JSON);
    if !spm_first && has_json {
        return gpt2(&req, tc, kv);
    }
    if let Some(m) = dir.tokenizer_model()? {
        return Ok((sentencepiece(&req, m, kv)?, None));
    }
    if spm_first && dir.join("tokenizer.model.v3").is_file() {
        return Err(ConvertError::Unsupported(format!(
            "please rename {} to tokenizer.model",
            dir.join("tokenizer.model.v3").display()
        )));
    }
    if spm_first && has_json {
        return gpt2(&req, tc, kv);
    }
    Err(ConvertError::Unsupported(format!(
        "{}: no tokenizer.json or tokenizer.model (llama.cpp's built-in GPT-NeoX vocabulary \
         is not supported)",
        dir.display()
    )))
}

/// SentencePiece (required: `why` says so), `add_space_prefix` from tokenizer_config.json,
/// then the special tokens of its `added_tokens_decoder`, with `eos` moved to the added token
/// `eos_text`.
fn sentencepiece_with_config_specials(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
    why: &str,
    eos_text: &str,
) -> Result<VocabPath, ConvertError> {
    let dir = req.dir;
    let model = dir.tokenizer_model()?.ok_or_else(|| {
        ConvertError::io(
            dir.join("tokenizer.model"),
            std::io::Error::new(std::io::ErrorKind::NotFound, why.to_string()),
        )
    })?;
    let n = match find_hparam(req.hparams, &["vocab_size_per_layer_input", "vocab_size"]) {
        Some(v) => count(v, "vocab_size")?,
        None => None,
    };
    let v = spm::create_vocab(dir, model, n)?;
    let len = v.tokens.len();
    kv.string(key::MODEL, "llama");
    kv.string(key::PRE, "default");
    kv.array(key::TOKENS, strings(v.tokens));
    kv.array(key::SCORES, ArrayValue::F32(v.scores));
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(v.types));
    let mut sv = SpecialVocab::load(dir, false, None, Some(len))?;
    if let Some(tc) = tc {
        if let Some(v) = tc.get("add_prefix_space") {
            kv.bool(key::ADD_SPACE_PREFIX, json::truthy(Some(v)));
        }
        if let Some(Json::Object(dec)) = tc.get("added_tokens_decoder") {
            for (id, t) in dec {
                if !json::truthy(t.get("special")) {
                    continue;
                }
                let (Ok(id), Some(content)) = (id.trim().parse::<i128>(), t["content"].as_str())
                else {
                    return Err(ConvertError::Other(format!(
                        "tokenizer_config.json: added token {id:?} has no integer id or content"
                    )));
                };
                // Keyed by its text, which no writer method handles: only the eos update
                // below has an effect.
                sv.set_special_token(content, id)?;
                if content == eos_text {
                    if let Some(e) = sv.special_token_ids.iter_mut().find(|(k, _)| k == "eos") {
                        e.1 = u32::try_from(id)
                            .map_err(|_| ConvertError::Other(format!("eos id {id} exceeds u32")))?;
                    }
                }
            }
        }
    }
    sv.add_to(kv)?;
    Ok(VocabPath::SentencePiece)
}

/// `_set_vocab_gpt2`.
fn gpt2(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
) -> Result<(VocabPath, Option<PreTokenizerMatch>), ConvertError> {
    gpt2_special_types(req, tc, kv, None)
}

/// `_set_vocab_gpt2` whose special vocabulary reads only the token types `types` (all of
/// gguf-py's default ones when `None`).
fn gpt2_special_types(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
    types: Option<&[&str]>,
) -> Result<(VocabPath, Option<PreTokenizerMatch>), ConvertError> {
    gpt2_with_rule(req, tc, kv, types, bpe::AddedTokenTypes::Normalized)
}

/// `_set_vocab_gpt2` with the added tokens stored and typed by `added_rule`, and a special
/// vocabulary that reads only the token types `types` (all when `None`).
fn gpt2_with_rule(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
    types: Option<&[&str]>,
    added_rule: bpe::AddedTokenTypes,
) -> Result<(VocabPath, Option<PreTokenizerMatch>), ConvertError> {
    // The special vocabulary reads other files (and tokenizer.json's merges, already
    // parsed): it is read beside the tokenizer, and its error still comes second.
    let (base, special) = rayon::join(
        || {
            let hf = bpe::HfTokenizer::load(req.dir, tc)?;
            bpe::check_bpe_model(&hf)?;
            let base = bpe::get_vocab_base_with(&hf, req.hparams, tc, added_rule);
            release_later(hf);
            base
        },
        || SpecialVocab::load(req.dir, true, types, None),
    );
    let base = base?;
    kv.string(key::MODEL, "gpt2");
    kv.string(key::PRE, &base.pre.name);
    kv.array(key::TOKENS, strings(base.tokens));
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(base.types));
    special?.add_to(kv)?;
    Ok((VocabPath::Gpt2, Some(base.pre)))
}

/// Frees `value` on a thread of its own. A loaded tokenizer is a few hundred thousand small
/// allocations whose freeing would otherwise sit on the conversion's serial path.
/// When no thread can be started, the value is dropped with the closure, here.
fn release_later<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("release".into())
        .spawn(move || drop(value));
}

/// The GPT-2 path, with special tokens taken from the tokenizer's added vocabulary where the
/// special-token files leave them unset (see [`VocabBuild::gpt2_with_added_specials`]).
fn gpt2_with_added_specials(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
    choose: AddedSpecials,
) -> Result<VocabOutcome, ConvertError> {
    let hf = bpe::HfTokenizer::load(req.dir, tc)?;
    // `tokenizer.get_added_vocab()`. Where the tokenizer class transformers builds is
    // modelled, its added tokens are the ones that class ends up with (a class that rebuilds
    // its pipeline drops tokenizer.json's); otherwise tokenizer.json's added tokens and
    // tokenizer_config's added_tokens_decoder.
    let mut added: Vec<(String, i128)> = Vec::new();
    if hf.specials.is_some() {
        let mut by_id: Vec<(String, i128)> = hf
            .added_vocab()
            .into_iter()
            .map(|(c, id)| (c, i128::from(id)))
            .collect();
        by_id.sort_by_key(|(_, id)| *id);
        added = by_id;
    } else {
        for t in hf.json["added_tokens"].as_array().into_iter().flatten() {
            if let (Some(c), Some(id)) = (t["content"].as_str(), t["id"].as_u64()) {
                added.push((c.to_string(), id as i128));
            }
        }
        if let Some(Json::Object(dec)) = tc.and_then(|t| t.get("added_tokens_decoder")) {
            for (id, t) in dec {
                if let (Some(c), Ok(id)) = (t["content"].as_str(), id.parse::<i128>()) {
                    added.push((c.to_string(), id));
                }
            }
        }
    }
    let find = |content: &str| -> Result<i128, ConvertError> {
        added
            .iter()
            .find(|(c, _)| c == content)
            .map(|(_, id)| *id)
            .ok_or_else(|| {
                vocab_error(
                    &hf.path,
                    crate::VocabProblem::NeedsAddedToken {
                        token: content.to_string(),
                    },
                )
            })
    };
    let ids = choose(&find)?;
    let base = bpe::get_vocab_base(&hf, req.hparams, tc)?;
    kv.string(key::MODEL, "gpt2");
    kv.string(key::PRE, &base.pre.name);
    kv.array(key::TOKENS, strings(base.tokens));
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(base.types));
    let mut sv = SpecialVocab::load(req.dir, true, None, None)?;
    for (typ, id) in ids {
        sv.set_special_token(typ, id)?;
    }
    sv.add_to(kv)?;
    Ok((VocabPath::Gpt2, Some(base.pre)))
}

/// `BertModel.set_vocab`: WordPiece.
fn wordpiece(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
) -> Result<VocabOutcome, ConvertError> {
    let (k, pre) = wpm::set_vocab_bert(req.dir, req.hparams, tc)?;
    kv.extend(k);
    Ok((VocabPath::WordPiece, Some(pre)))
}

/// A refusal of the vocabulary in the tokenizer file at `path`.
pub(crate) fn vocab_error(path: &Path, problem: crate::VocabProblem) -> ConvertError {
    ConvertError::Vocabulary {
        path: path.to_path_buf(),
        problem,
    }
}

/// The tokenizers library's refusal of (or failure on) the tokenizer of `path`, while doing
/// `action`.
pub(crate) fn library_error(
    path: &Path,
    action: &str,
    message: &dyn std::fmt::Display,
) -> ConvertError {
    ConvertError::TokenizerLibrary {
        path: path.to_path_buf(),
        action: action.to_string(),
        message: message.to_string(),
    }
}

/// The quirks of the architecture whose `general.architecture` is `arch`.
fn quirks_of(arch: &str) -> VocabQuirks {
    crate::hf::arch::by_gguf(arch).map_or(VocabQuirks::NONE, |a| a.vocab_quirks)
}

/// `_set_vocab_llama_hf`.
fn llama_hf(req: &VocabRequest, tc: Option<&Json>, kv: &mut Kv) -> Result<VocabPath, ConvertError> {
    let hf = bpe::HfTokenizer::load(req.dir, tc)?;
    write_spm(req.dir, bpe::llama_hf_vocab(&hf, tc)?, kv)?;
    Ok(VocabPath::LlamaHf)
}

/// `LlamaHfVocab`'s tokens written as a vocabulary of tokenizer model `model`, the tokens
/// whose text is in `user_defined` typed USER_DEFINED, then the special vocabulary with its
/// merges (`SpecialVocab(dir, load_merges=True)`). Unlike `_set_vocab_llama_hf` there is no
/// fallback: a tokenizer.json that `LlamaHfVocab` refuses (not a byte-fallback BPE with a
/// Sequence decoder, or Llama 3's) is refused, and so is a directory without one.
fn llama_hf_as(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
    model: &str,
    user_defined: &[&str],
) -> Result<VocabPath, ConvertError> {
    let path = req.dir.join("tokenizer.json");
    match req.dir.tokenizer_json()? {
        Some(tj) if bpe::is_llama_hf(tj) => {}
        Some(_) => {
            return Err(ConvertError::format(
                &path,
                None,
                format!(
                    "the {model} vocabulary needs a byte-fallback BPE tokenizer with a \
                     Sequence decoder (LlamaHfVocab)"
                ),
            ))
        }
        None => {
            return Err(ConvertError::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("the {model} vocabulary is read from tokenizer.json"),
                ),
            ))
        }
    }
    let hf = bpe::HfTokenizer::load(req.dir, tc)?;
    let mut v = bpe::llama_hf_vocab(&hf, tc)?;
    for (text, ty) in v.tokens.iter().zip(v.types.iter_mut()) {
        if user_defined.contains(&text.as_str()) {
            *ty = kv::token_type::USER_DEFINED;
        }
    }
    kv.string(key::MODEL, model);
    kv.array(key::TOKENS, strings(v.tokens));
    kv.array(key::SCORES, ArrayValue::F32(v.scores));
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(v.types));
    SpecialVocab::load(req.dir, true, None, None)?.add_to(kv)?;
    Ok(VocabPath::LlamaHf)
}

/// `LlamaModel.set_vocab`.
fn set_vocab_llama(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
) -> Result<(VocabPath, Option<PreTokenizerMatch>), ConvertError> {
    let dir = req.dir;
    if dir.has_file("tekken.json") && !dir.has_file(crate::hf::model_dir::TOKENIZER_JSON) {
        // An HF directory whose tokenizer is Tekken: Mistral's vocabulary with the community
        // chat template (a local chat_template.jinja counts only under --mistral-format).
        let choice = mistral::TemplateChoice {
            mistral_format: false,
            disable_community: false,
        };
        for (k, v) in mistral::vocab_metadata(dir, req.arch, choice)? {
            kv.set(&k, v);
        }
        return Ok((VocabPath::Mistral, None));
    }
    if let Some(tc) = tc {
        if let Some(v) = tc.get("add_prefix_space").filter(|v| !v.is_null()) {
            kv.bool(key::ADD_SPACE_PREFIX, json::truthy(Some(v)));
        }
        if tc.get("tokenizer_class").and_then(Json::as_str) == Some("HybridDNATokenizer") {
            return Err(ConvertError::Unsupported(
                "HybridDNATokenizer vocabularies are not supported".into(),
            ));
        }
    }
    let result = match dir.tokenizer_model()? {
        Some(m) => (sentencepiece(req, m, kv)?, None),
        None => {
            if dir.tokenizer_json()?.is_some_and(bpe::is_llama_hf) {
                (llama_hf(req, tc, kv)?, None)
            } else {
                gpt2(req, tc, kv)?
            }
        }
    };
    let vocab_size = hparam(req.hparams, "vocab_size").and_then(Json::as_u64);
    if vocab_size == Some(32016) {
        // CodeLlama: a second SpecialVocab for the infill tokens; only `eot` has a writer.
        let mut sv = SpecialVocab::load(
            dir,
            false,
            Some(&["prefix", "suffix", "middle", "eot"]),
            None,
        )?;
        for (typ, id) in [
            ("prefix", 32007),
            ("suffix", 32008),
            ("middle", 32009),
            ("eot", 32010),
        ] {
            sv.set_special_token(typ, id)?;
        }
        sv.add_to(kv)?;
    }
    if vocab_size == Some(49152) {
        // "granite small" rule: overwrites SpecialVocab's value in place.
        kv.bool(key::ADD_BOS, false);
    }
    Ok(result)
}

/// The Gemma classes' `set_vocab`.
fn set_vocab_gemma(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
) -> Result<(VocabPath, Option<PreTokenizerMatch>), ConvertError> {
    let dir = req.dir;
    let model = dir.tokenizer_model()?;
    let quirks = quirks_of(req.arch);
    let Some(model) = model else {
        if quirks.requires_spm {
            return Err(ConvertError::io(
                dir.join("tokenizer.model"),
                std::io::Error::new(std::io::ErrorKind::NotFound, "Gemma needs tokenizer.model"),
            ));
        }
        return gpt2(req, tc, kv);
    };
    let path = sentencepiece(req, model, kv)?;
    kv.bool(key::ADD_SPACE_PREFIX, false);
    Ok((path, None))
}

/// `Phi3MiniModel.set_vocab`.
fn set_vocab_phi3(
    req: &VocabRequest,
    tc: Option<&Json>,
    kv: &mut Kv,
) -> Result<(VocabPath, Option<PreTokenizerMatch>), ConvertError> {
    let dir = req.dir;
    if let Some(tc) = tc {
        let class = tc.get("tokenizer_class").ok_or_else(|| {
            ConvertError::format(
                dir.join("tokenizer_config.json"),
                None,
                "Phi-3 needs a tokenizer_class to choose its vocabulary",
            )
        })?;
        if class.as_str() == Some("GPT2Tokenizer") {
            return gpt2(req, Some(tc), kv);
        }
    }
    let model = dir.tokenizer_model()?.ok_or_else(|| {
        ConvertError::io(
            dir.join("tokenizer.model"),
            std::io::Error::new(std::io::ErrorKind::NotFound, "Phi-3 needs tokenizer.model"),
        )
    })?;
    // `hparams.get('vocab_size', n_pieces)`.
    let n = match hparam(req.hparams, "vocab_size") {
        Some(v) => Some(
            count(v, "vocab_size")?
                .ok_or_else(|| ConvertError::Other("hparam vocab_size is null".into()))?,
        ),
        None => None,
    };
    let v = spm::create_vocab_phi3(dir, model, n)?;
    write_spm(dir, v, kv)?;
    Ok((VocabPath::Phi3SentencePiece, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_looking_tokens() {
        for t in [
            "<pad>",
            "<mask>",
            "<|im_start|>",
            "<\u{ff5c}begin\u{ff5c}>",
            "<unused12>",
        ] {
            assert!(looks_special(t), "{t}");
        }
        for t in ["<s>", "<think>", "|>", "<|", "<unused"] {
            assert!(!looks_special(t), "{t}");
        }
    }

    #[test]
    fn hparams_flatten_text_config() {
        let h = serde_json::json!({"vocab_size": 5, "text_config": {"vocab_size": 7}});
        assert_eq!(hparam_count(&h, "vocab_size").unwrap(), Some(7));
        let h = serde_json::json!({"vocab_size_per_layer_input": null, "vocab_size": 7});
        assert_eq!(
            find_hparam(&h, &["vocab_size_per_layer_input", "vocab_size"]),
            Some(&Json::Null)
        );
        assert!(hparam_count(&serde_json::json!({"vocab_size": -1}), "vocab_size").is_err());
    }
}
