//! Mistral's own tokenizer files, as the reference reads them through the `mistral_common`
//! package (`_set_vocab_mistral` with gguf-py's `MistralVocab`): `tekken.json` (Tekken, a
//! tiktoken-style byte-level BPE) or a versioned SentencePiece model
//! (`tokenizer.model.v3`, `tokenizer.model` = v1).
//!
//! * **Which file.** Every file below the directory named `tekken.json` or ending in
//!   `.model`, `.model.<version>` or `.model.<version><mm>` (`v3`, `v7m1`, …) is a candidate;
//!   `tekken.json` wins, else the last by file name.
//! * **Tekken** (`mistral_common`'s `Tekkenizer.from_file`): `config.version` must be a known
//!   version; `special_tokens` (required after v7, else the 20 built-in ones) are padded
//!   with `<SPECIAL_i>` up to `config.default_num_special_tokens`; the vocabulary is cut to
//!   `default_vocab_size − default_num_special_tokens` entries, each with `rank` = its
//!   position, base64 `token_bytes` (the first 256 are the single bytes) and `token_str`.
//!   Ids: special tokens first, then the vocabulary. GGUF tokens: special tokens as their
//!   text (CONTROL), the others as GPT-2 byte-level strings (NORMAL), scores 0 (an INT32
//!   array: the reference's scores are Python integers here); `merges`
//!   rebuilt from the ranks (every split of each token into two tokens, by the ranks of
//!   the two halves); `tokenizer.ggml.model` `gpt2`, `pre` `tekken`. The `pattern` is not
//!   compiled here (tiktoken would refuse an invalid one).
//! * **SentencePiece**: pieces, scores and types (unknown, control, unused, byte, else
//!   normal); bos/eos/unk/pad found by their piece strings as SentencePiece does (a missing
//!   pad is eos); `tokenizer.ggml.model` `llama`.
//! * Then `{arch}.vocab_size`, `add_bos_token` true, `add_eos_token` false, and the chat
//!   template: `chat_template.jinja` from the directory under `--mistral-format`, else (unless
//!   `--disable-mistral-community-chat-template`) llama.cpp's name of its built-in template
//!   for the tokenizer version (`mistral-v1`, `mistral-v3`, `mistral-v3-tekken`,
//!   `mistral-v7`, `mistral-v7-tekken`). Versions v11 and v13 would take a community template
//!   file shipped with llama.cpp, which ggufkit does not carry: refused with the ways
//!   around it; v2 and v15 have no community template (refused by the reference too).
//!
//! The instruct tokenizer `mistral_common` builds for the version looks up its control
//! tokens, so a Tekken file lacking one is refused as the reference refuses it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ggufkit::gguf::keys::{self, llm};
use ggufkit::gguf::{ArrayValue, Value};
use serde_json::Value as Json;

use super::kv::{key, strings, token_type, Kv};
use super::proto::SpmModel;
use super::spm::{check_size, load_model_at, piece_type};
use crate::ConvertError;

/// How the chat template is chosen (`--mistral-format`, and its
/// `--disable-mistral-community-chat-template`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemplateChoice {
    /// The model is in Mistral's native format (a `chat_template.jinja` beside it is used).
    pub mistral_format: bool,
    /// Write no community template (the model is meant for mistral_common's tokenization).
    pub disable_community: bool,
}

/// mistral_common's tokenizer versions, in order.
const VERSIONS: &[&str] = &["v1", "v2", "v3", "v7", "v11", "v13", "v15"];

/// mistral_common's multimodal versions (the `m1` of `tokenizer.model.v7m1`).
const MM_VERSIONS: &[&str] = &["m1"];

/// The position of a version in [`VERSIONS`] (they compare in that order).
fn version_index(v: &str) -> Option<usize> {
    VERSIONS.iter().position(|x| *x == v)
}

/// The special tokens a Tekken file without `special_tokens` gets (versions up to v7).
const DEPRECATED_SPECIAL_TOKENS: &[&str] = &[
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

/// The control tokens the instruct tokenizer of each version looks up when it is built
/// (from the version on, cumulative).
const REQUIRED_CONTROL_TOKENS: &[(&str, &[&str])] = &[
    (
        "v2",
        &[
            "[INST]",
            "[/INST]",
            "[AVAILABLE_TOOLS]",
            "[/AVAILABLE_TOOLS]",
            "[TOOL_RESULTS]",
            "[/TOOL_RESULTS]",
            "[TOOL_CALLS]",
            "<s>",
            "[PREFIX]",
            "[SUFFIX]",
        ],
    ),
    (
        "v7",
        &["[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]"],
    ),
    ("v11", &["[ARGS]", "[CALL_ID]"]),
    ("v15", &["[MODEL_SETTINGS]", "[/MODEL_SETTINGS]"]),
];

/// Largest `tekken.json` read (the real ones are about 15 MB for 131072 tokens).
const MAX_TEKKEN_BYTES: u64 = 1 << 30;

/// The tokenizer file mistral_common would load from `dir`.
pub(crate) fn find_tokenizer_file(dir: &Path) -> Result<PathBuf, ConvertError> {
    let mut files = Vec::new();
    walk(dir, &mut files, 0);
    let mut valid: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            (name == "tekken.json" || is_spm_name(&name)).then_some((name, p))
        })
        .collect();
    if let Some((_, p)) = valid.iter().find(|(n, _)| n == "tekken.json") {
        return Ok(p.clone());
    }
    // Python's sort is stable: equal names keep the walk's order; the last one wins.
    valid.sort_by(|a, b| a.0.cmp(&b.0));
    valid
        .pop()
        .map(|(_, p)| p)
        .ok_or_else(|| ConvertError::MissingFile {
            path: dir.to_path_buf(),
            why: "no Mistral tokenizer file found (tekken.json, tokenizer.model.v3, \
                  tokenizer.model, …)"
                .into(),
        })
}

/// Every regular file below `dir` (`Path.glob("**/*")`), in directory order, sorted per
/// directory for a stable result.
fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    const MAX_DEPTH: usize = 32;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.is_dir() {
            if depth < MAX_DEPTH {
                walk(&p, out, depth + 1);
            }
        } else if p.is_file() {
            out.push(p);
        }
    }
}

/// The suffixes of a file name (`Path.suffixes`): everything from the first dot that does
/// not start the name.
fn suffixes(name: &str) -> &str {
    let trimmed = name.trim_start_matches('.');
    let lead = name.len() - trimmed.len();
    if name.ends_with('.') {
        return "";
    }
    match trimmed.find('.') {
        Some(i) => &name[lead + i..],
        None => "",
    }
}

/// A SentencePiece file name mistral_common accepts (`.model`, `.model.v3`, `.model.v7m1`).
fn is_spm_name(name: &str) -> bool {
    let s = suffixes(name);
    if s == ".model" {
        return true;
    }
    let Some(rest) = s.strip_prefix(".model.") else {
        return false;
    };
    VERSIONS.iter().any(|v| {
        rest.strip_prefix(v)
            .is_some_and(|m| m.is_empty() || MM_VERSIONS.contains(&m))
    })
}

/// A loaded Mistral tokenizer, reduced to what the GGUF gets.
struct Loaded {
    /// `tekken` or `spm`.
    tekken: bool,
    version: &'static str,
    tokens: Vec<String>,
    /// SentencePiece's float scores; Tekken's are the Python integer 0, which gguf-py
    /// writes as an INT32 array.
    scores: ArrayValue,
    types: Vec<i32>,
    merges: Vec<String>,
    bos: i64,
    eos: i64,
    unk: i64,
    pad: i64,
}

/// The tokenizer keys of `dir`'s Mistral tokenizer, in the reference's order
/// (`{arch}.vocab_size` among them).
pub(crate) fn vocab_metadata(
    dir: &Path,
    arch: &str,
    choice: TemplateChoice,
) -> Result<Vec<(String, Value)>, ConvertError> {
    let path = find_tokenizer_file(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let t = if name == "tekken.json" {
        load_tekken(&path)?
    } else {
        load_spm(&path)?
    };
    let template = chat_template(dir, &path, &t, choice)?;
    let mut kv = Kv::new();
    kv.string(key::MODEL, if t.tekken { "gpt2" } else { "llama" });
    if t.tekken {
        kv.string(key::PRE, "tekken");
        kv.array(key::MERGES, strings(t.merges));
    }
    let n = t.tokens.len();
    for (k, id, what) in [
        (key::BOS_ID, t.bos, "bos"),
        (key::EOS_ID, t.eos, "eos"),
        (key::UNK_ID, t.unk, "unk"),
        (key::PAD_ID, t.pad, "pad"),
    ] {
        let id = u32::try_from(id).map_err(|_| {
            super::vocab_error(
                &path,
                crate::VocabProblem::NoSpecialToken { kind: what, id },
            )
        })?;
        kv.u32(k, id);
    }
    kv.array(key::TOKENS, strings(t.tokens));
    kv.array(key::SCORES, t.scores);
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(t.types));
    kv.u32(
        &keys::arch_key(arch, llm::VOCAB_SIZE),
        u32::try_from(n).map_err(|_| ConvertError::VocabTooLarge {
            size: n as u64,
            max: super::MAX_VOCAB,
        })?,
    );
    kv.bool(key::ADD_BOS, true);
    kv.bool(key::ADD_EOS, false);
    if let Some(template) = template {
        kv.string(key::CHAT_TEMPLATE, &template);
    }
    Ok(kv.into_vec())
}

/// The chat template the reference writes, if any.
fn chat_template(
    dir: &Path,
    tokenizer: &Path,
    t: &Loaded,
    choice: TemplateChoice,
) -> Result<Option<String>, ConvertError> {
    let local = dir.join("chat_template.jinja");
    if choice.mistral_format && local.is_file() {
        let text = ggufkit::mapped::read_input_to_string(&local)
            .map_err(|e| ConvertError::io(&local, e))?;
        return Ok(Some(text));
    }
    if choice.mistral_format && choice.disable_community {
        return Ok(None);
    }
    let name = match (t.version, t.tekken) {
        ("v1", _) => "mistral-v1",
        ("v3", false) => "mistral-v3",
        ("v3", true) => "mistral-v3-tekken",
        ("v7", false) => "mistral-v7",
        ("v7", true) => "mistral-v7-tekken",
        ("v11" | "v13", _) => {
            return Err(ConvertError::format(
                tokenizer,
                None,
                format!(
                    "tokenizer version {}: llama.cpp writes its community chat template file \
                     for it ({}), which ggufkit does not carry; add the template as \
                     chat_template.jinja beside params.json, or pass \
                     --disable-mistral-community-chat-template",
                    t.version,
                    if t.version == "v11" {
                        "Mistral-Small-3.2-24B-Instruct-2506.jinja"
                    } else {
                        "unsloth-mistral-Devstral-Small-2507.jinja"
                    }
                ),
            ))
        }
        (v, tekken) => {
            let mut msg = format!(
                "no community chat template for a {} tokenizer of version {v} (the \
                 reference refuses it too)",
                if tekken { "tekken" } else { "SentencePiece" }
            );
            if choice.mistral_format {
                msg.push_str(
                    "; pass --disable-mistral-community-chat-template to convert without a \
                     chat template (tokenize with mistral-common)",
                );
            }
            return Err(ConvertError::format(tokenizer, None, msg));
        }
    };
    Ok(Some(name.to_string()))
}

/// A version string from a file, as one of [`VERSIONS`].
fn known_version(v: &str) -> Option<&'static str> {
    VERSIONS.iter().copied().find(|x| *x == v)
}

/// The version of a SentencePiece file from its name (`tokenizer.model` is v1), and whether
/// it names a multimodal version.
fn spm_version(path: &Path) -> Result<(&'static str, bool), ConvertError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let last = name.rsplit('.').next().unwrap_or("");
    if last == "model" {
        return Ok(("v1", false));
    }
    let (v, mm) = match last.find('m') {
        Some(i) => (&last[..i], true),
        None => (last, false),
    };
    let v = known_version(v).ok_or_else(|| {
        ConvertError::format(path, None, "unrecognized tokenizer file name (version)")
    })?;
    Ok((v, mm))
}

/// `SentencePieceTokenizer` (and the instruct tokenizer built on it).
fn load_spm(path: &Path) -> Result<Loaded, ConvertError> {
    let (version, mm) = spm_version(path)?;
    let vi = version_index(version).unwrap_or(0);
    let refuse = |what: &str| Err(ConvertError::format(path, None, what.to_string()));
    if mm && vi < version_index("v3").unwrap_or(0) {
        return refuse("an image tokenizer needs a tokenizer version of at least v3");
    }
    if vi >= version_index("v13").unwrap_or(0) {
        return refuse(
            "mistral_common builds tokenizers of version v13 and later only from tekken.json",
        );
    }
    let m = load_model_at(path)?
        .ok_or_else(|| ConvertError::format(path, None, "not a regular file"))?;
    let n = check_size(m.pieces.len())?;
    let mut tokens = Vec::with_capacity(n);
    let mut scores = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    for p in &m.pieces {
        tokens.push(p.piece.clone());
        scores.push(p.score);
        types.push(piece_type(p.kind));
    }
    let unk = special_piece_id(&m, 0, "<unk>", token_type::UNKNOWN);
    let bos = special_piece_id(&m, 1, "<s>", token_type::CONTROL);
    let eos = special_piece_id(&m, 2, "</s>", token_type::CONTROL);
    let pad = special_piece_id(&m, 3, "<pad>", token_type::CONTROL);
    Ok(Loaded {
        tekken: false,
        version,
        tokens,
        scores: ArrayValue::F32(scores),
        types,
        merges: Vec::new(),
        bos,
        eos,
        unk,
        pad: if pad == -1 { eos } else { pad },
    })
}

/// SentencePiece's `unk_id()` / `bos_id()` / …: the id of the trainer spec's piece for it
/// when that piece has the expected type, else -1 (a missing piece maps to the unknown
/// piece, which is not a control one).
fn special_piece_id(m: &SpmModel, which: usize, default: &str, ty: i32) -> i64 {
    let piece = m.special_pieces[which].as_deref().unwrap_or(default);
    let unk = m
        .pieces
        .iter()
        .position(|p| piece_type(p.kind) == token_type::UNKNOWN);
    let id = m.pieces.iter().position(|p| p.piece == piece).or(unk);
    match id {
        Some(i) if piece_type(m.pieces[i].kind) == ty => i as i64,
        _ => -1,
    }
}

/// A JSON field of `tekken.json`, or an error naming it.
fn field<'a>(path: &Path, v: &'a Json, key: &str, what: &str) -> Result<&'a Json, ConvertError> {
    v.get(key).ok_or_else(|| {
        // `what` is the object looked in: the file itself, or a dotted path inside it.
        let at = if path.file_name().is_some_and(|n| n == what) {
            key.to_string()
        } else {
            format!("{what}.{key}")
        };
        ConvertError::missing_key(path, at, "the Tekken tokenizer reads it")
    })
}

fn as_count(path: &Path, v: &Json, what: &str) -> Result<u64, ConvertError> {
    v.as_u64()
        .ok_or_else(|| ConvertError::wrong_type(path, what, "a non-negative integer", v))
}

/// `Tekkenizer.from_file` (and the instruct tokenizer built on it): the file, its
/// version, the special tokens, the byte vocabulary, then the tokens and merges written.
fn load_tekken(path: &Path) -> Result<Loaded, ConvertError> {
    let j = read_tekken_json(path)?;
    let config = field(path, &j, "config", "tekken.json")?;
    let version = tekken_version(path, &j, config)?;
    let vi = version_index(version).unwrap_or(0);
    let (specials, vocab_size) = tekken_specials(path, &j, config, version, vi)?;
    let num_special = specials.len();
    let mut by_text: HashMap<&str, u64> = HashMap::with_capacity(specials.len());
    for (rank, s) in &specials {
        if by_text.insert(s.as_str(), *rank).is_some() {
            return Err(bad(path, format!("special token {s:?} is listed twice")));
        }
    }
    field(path, config, "pattern", "config")?
        .as_str()
        .ok_or_else(|| bad(path, "config.pattern is not a string".into()))?;
    let (bytes, rank_of) = tekken_vocab(path, &j, vocab_size, num_special)?;
    let special_id = |s: &str| -> Result<i64, ConvertError> {
        by_text
            .get(s)
            .map(|&r| r as i64)
            .ok_or_else(|| bad(path, format!("no special token {s:?}")))
    };
    for (from, list) in REQUIRED_CONTROL_TOKENS {
        if vi >= version_index(from).unwrap_or(0) {
            for s in *list {
                special_id(s)?;
            }
        }
    }
    let enc = byte_encoder();
    let unicode = |b: &[u8]| -> String { b.iter().map(|&x| enc[x as usize]).collect() };
    let mut tokens = Vec::with_capacity(vocab_size);
    let mut types = Vec::with_capacity(vocab_size);
    for (_, s) in &specials {
        tokens.push(s.clone());
        types.push(token_type::CONTROL);
    }
    for b in &bytes {
        tokens.push(unicode(b));
        types.push(token_type::NORMAL);
    }
    let merges = tekken_merges(path, &bytes, &rank_of, &unicode)?;
    let bos = special_id("<s>")?;
    let eos = special_id("</s>")?;
    let unk = special_id("<unk>")?;
    let pad = special_id("<pad>")?;
    Ok(Loaded {
        tekken: true,
        version,
        scores: ArrayValue::I32(vec![0; tokens.len()]),
        tokens,
        types,
        merges,
        bos,
        eos,
        unk,
        pad,
    })
}

/// A token's bytes → its rank.
type RankOf = HashMap<Vec<u8>, usize>;

/// A format error in the tokenizer file at `path`.
fn bad(path: &Path, msg: String) -> ConvertError {
    ConvertError::format(path, None, msg)
}

/// tekken.json parsed, refused when larger than [`MAX_TEKKEN_BYTES`].
fn read_tekken_json(path: &Path) -> Result<Json, ConvertError> {
    let len = std::fs::metadata(path)
        .map_err(|e| ConvertError::io(path, e))?
        .len();
    if len > MAX_TEKKEN_BYTES {
        return Err(ConvertError::FileTooLarge {
            path: path.to_path_buf(),
            limit_mib: MAX_TEKKEN_BYTES >> 20,
            what: None,
        });
    }
    let text =
        ggufkit::mapped::read_input_to_string(path).map_err(|e| ConvertError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| ConvertError::bad_json(path, &e))
}

/// The tokenizer version (a known one), refusing a model settings builder before v15.
fn tekken_version(path: &Path, j: &Json, config: &Json) -> Result<&'static str, ConvertError> {
    let version = config.get("version").and_then(Json::as_str).unwrap_or("");
    let version = known_version(version).ok_or_else(|| {
        bad(
            path,
            format!(
                "unknown tokenizer version {:?} (known: {})",
                config.get("version").unwrap_or(&Json::Null),
                VERSIONS.join(", ")
            ),
        )
    })?;
    let vi = version_index(version).unwrap_or(0);
    if config
        .get("model_settings_builder")
        .or_else(|| j.get("model_settings_builder"))
        .is_some_and(|v| !v.is_null())
        && vi < version_index("v15").unwrap_or(0)
    {
        return Err(bad(
            path,
            format!("model_settings_builder is not supported for tokenizer version {version}"),
        ));
    }
    Ok(version)
}

/// The special tokens as (rank, text), in the file's order then the `<SPECIAL_i>` fillers
/// up to `default_num_special_tokens`; and `default_vocab_size`.
fn tekken_specials(
    path: &Path,
    j: &Json,
    config: &Json,
    version: &str,
    vi: usize,
) -> Result<(Vec<(u64, String)>, usize), ConvertError> {
    let mut specials: Vec<(u64, String)> = match j.get("special_tokens") {
        None | Some(Json::Null) => {
            if vi > version_index("v7").unwrap_or(0) {
                return Err(bad(
                    path,
                    format!("no \"special_tokens\": required for tokenizer version {version}"),
                ));
            }
            DEPRECATED_SPECIAL_TOKENS
                .iter()
                .enumerate()
                .map(|(i, s)| (i as u64, s.to_string()))
                .collect()
        }
        Some(Json::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let what = format!("special_tokens[{i}]");
                let rank = as_count(path, field(path, t, "rank", &what)?, &what)?;
                let s = field(path, t, "token_str", &what)?
                    .as_str()
                    .ok_or_else(|| bad(path, format!("{what}: token_str is not a string")))?;
                Ok((rank, s.to_string()))
            })
            .collect::<Result<_, ConvertError>>()?,
        Some(v) => return Err(bad(path, format!("\"special_tokens\" is {v}, not a list"))),
    };
    let num_special = as_count(
        path,
        field(path, config, "default_num_special_tokens", "config")?,
        "config.default_num_special_tokens",
    )?;
    let vocab_size = as_count(
        path,
        field(path, config, "default_vocab_size", "config")?,
        "config.default_vocab_size",
    )?;
    check_size(usize::try_from(vocab_size).unwrap_or(usize::MAX))?;
    check_size(usize::try_from(num_special).unwrap_or(usize::MAX))?;
    let (vocab_size, num_special) = (vocab_size as usize, num_special as usize);
    if specials.len() > num_special {
        return Err(bad(
            path,
            format!(
                "{} special tokens, more than default_num_special_tokens {num_special}",
                specials.len()
            ),
        ));
    }
    for i in specials.len()..num_special {
        specials.push((i as u64, format!("<SPECIAL_{i}>")));
    }
    Ok((specials, vocab_size))
}

/// The byte strings of the kept vocabulary (the first `vocab_size - num_special` entries),
/// by rank, and each one's rank: the first 256 are the single bytes in order, none twice.
fn tekken_vocab(
    path: &Path,
    j: &Json,
    vocab_size: usize,
    num_special: usize,
) -> Result<(Vec<Vec<u8>>, RankOf), ConvertError> {
    let vocab = field(path, j, "vocab", "tekken.json")?
        .as_array()
        .ok_or_else(|| bad(path, "\"vocab\" is not a list".into()))?;
    if vocab_size > vocab.len() + num_special || vocab_size < num_special {
        return Err(bad(
            path,
            format!(
                "default_vocab_size {vocab_size} does not fit {} vocabulary entries and \
                 {num_special} special tokens",
                vocab.len()
            ),
        ));
    }
    let inner = vocab_size - num_special;
    let mut bytes: Vec<Vec<u8>> = Vec::with_capacity(inner);
    let mut rank_of: RankOf = HashMap::with_capacity(inner);
    for (i, t) in vocab.iter().take(inner).enumerate() {
        let what = format!("vocab[{i}]");
        let obj = t
            .as_object()
            .ok_or_else(|| bad(path, format!("{what} is not an object")))?;
        if obj.len() != 3
            || !["rank", "token_bytes", "token_str"]
                .iter()
                .all(|k| obj.contains_key(*k))
        {
            return Err(bad(
                path,
                format!("{what}: expected exactly rank, token_bytes and token_str"),
            ));
        }
        if obj["rank"].as_u64() != Some(i as u64) {
            return Err(bad(
                path,
                format!("{what}: rank {} is not {i}", obj["rank"]),
            ));
        }
        let b64 = obj["token_bytes"]
            .as_str()
            .ok_or_else(|| bad(path, format!("{what}: token_bytes is not a string")))?;
        let b = base64_decode(b64)
            .ok_or_else(|| bad(path, format!("{what}: token_bytes is not base64: {b64:?}")))?;
        if i < 256 && b != [i as u8] {
            return Err(bad(
                path,
                format!("{what}: the first 256 tokens must be the single bytes in order"),
            ));
        }
        if rank_of.insert(b.clone(), i).is_some() {
            return Err(bad(
                path,
                format!("{what}: the same bytes as an earlier token"),
            ));
        }
        bytes.push(b);
    }
    Ok((bytes, rank_of))
}

/// The merges of each token past the single bytes: every split into two tokens, by the
/// ranks of its halves; a token no two tokens make is refused.
fn tekken_merges(
    path: &Path,
    bytes: &[Vec<u8>],
    rank_of: &RankOf,
    unicode: &dyn Fn(&[u8]) -> String,
) -> Result<Vec<String>, ConvertError> {
    let mut merges = Vec::new();
    for (i, b) in bytes.iter().enumerate().skip(256) {
        let mut local: Vec<(usize, usize, usize)> = (1..b.len())
            .filter_map(|j| {
                let l = *rank_of.get(&b[..j])?;
                let r = *rank_of.get(&b[j..])?;
                Some((l, r, j))
            })
            .collect();
        if local.is_empty() {
            return Err(bad(
                path,
                format!("vocab[{i}]: no two tokens make it, so it has no merge"),
            ));
        }
        local.sort_by_key(|&(l, r, _)| (l, r));
        for (_, _, j) in local {
            merges.push(format!("{} {}", unicode(&b[..j]), unicode(&b[j..])));
        }
    }
    Ok(merges)
}

/// GPT-2's byte → character table (`bytes_to_unicode`): printable Latin-1 bytes stand for
/// themselves, the others for U+0100 onwards in byte order.
fn byte_encoder() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next = 0u32;
    for b in 0..=255u8 {
        let printable = matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        table[b as usize] = if printable {
            char::from(b)
        } else {
            next += 1;
            char::from_u32(255 + next).unwrap_or('\u{FFFD}')
        };
    }
    table
}

/// Standard base64 (with `=` padding), as Python's `base64.b64decode` reads a clean string.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    if !s.len().is_multiple_of(4) {
        return None;
    }
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for (k, chunk) in s.chunks(4).enumerate() {
        let last = k + 1 == s.len() / 4;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | val(c)?;
        }
        n <<= 6 * pad as u32;
        let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key Tekken needs that tekken.json lacks is a `MissingKey` naming the file and the
    /// key's place in it.
    #[test]
    fn a_missing_tekken_key_is_typed() {
        let d = std::env::temp_dir().join(format!("ggufkit-tekken-keys-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join("tekken.json");
        for (text, want) in [
            (r#"{"vocab": []}"#, "config"),
            (
                r#"{"config": {"version": "v3", "default_num_special_tokens": 20,
                   "default_vocab_size": 20}, "vocab": []}"#,
                "config.pattern",
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            match load_tekken(&path) {
                Err(ConvertError::MissingKey { path: p, key, .. }) => {
                    assert_eq!(p, path);
                    assert_eq!(key, want);
                }
                Err(e) => panic!("{want}: {e}"),
                Ok(_) => panic!("{want}: accepted"),
            }
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn base64_decodes_padded_strings() {
        assert_eq!(base64_decode("AA==").unwrap(), vec![0]);
        assert_eq!(base64_decode("IEZsdQ==").unwrap(), b" Flu".to_vec());
        assert_eq!(base64_decode("YWJj").unwrap(), b"abc".to_vec());
        assert_eq!(base64_decode("").unwrap(), Vec::<u8>::new());
        assert!(base64_decode("A===").is_none());
        assert!(base64_decode("AA=A").is_none());
        assert!(base64_decode("A*==").is_none());
    }

    #[test]
    fn byte_encoder_is_gpt2s() {
        let t = byte_encoder();
        assert_eq!(t[b' ' as usize], 'Ġ');
        assert_eq!(t[b'\n' as usize], 'Ċ');
        assert_eq!(t[b'a' as usize], 'a');
        assert_eq!(t[0xAD], 'Ń');
        assert_eq!(t[0xC3], 'Ã');
    }

    #[test]
    fn spm_names_follow_mistral_common() {
        for ok in [
            "tokenizer.model",
            "tokenizer.model.v3",
            "tokenizer.model.v7m1",
            "x.model.v15",
        ] {
            assert!(is_spm_name(ok), "{ok}");
        }
        for no in [
            "tokenizer.model.v4",
            "tokenizer.model.v3m2",
            "a.b.model",
            ".model",
            "tokenizer.json",
        ] {
            assert!(!is_spm_name(no), "{no}");
        }
    }
}
