//! Which tokenizer `transformers` 5 builds for a directory (the reference converter reads its
//! vocabulary through `AutoTokenizer`) and the added tokens that tokenizer ends up with.
//!
//! transformers 5 picks a class from tokenizer_config.json's `tokenizer_class` (else
//! config.json's), config.json's `model_type` and a few exceptions, then builds it one of two
//! ways ([`Build`]):
//!
//! - **from the file**: `TokenizersBackend` (also `PreTrainedTokenizerFast`, an unknown class
//!   name, and `LlamaTokenizer` over a ByteLevel tokenizer.json) loads tokenizer.json as it is,
//!   with its `added_tokens`;
//! - **rebuilt**: a class with its own pipeline (`GPT2Tokenizer`, `Qwen2Tokenizer`,
//!   `BertTokenizer`, `LlamaTokenizer`, …; a `Fast` suffix names the same class) keeps only
//!   tokenizer.json's vocabulary and merges (and its post-processor), and sets its own
//!   normalizer, pre-tokenizer and decoder. tokenizer.json's `added_tokens` are dropped. The
//!   pipelines of Qwen2Tokenizer, Qwen3_5Tokenizer, GPT2Tokenizer and BertTokenizer are
//!   modelled ([`Pipeline`]); LlamaTokenizer's and GemmaTokenizer's Metaspace ones are not
//!   (tokenizer.json's is kept): the reference reaches them only through `LlamaHfVocab`,
//!   which does not encode, or for a non-ByteLevel BPE without byte fallback on the GPT-2
//!   path.
//!
//! Either way the added tokens are then replayed in the same order through the same
//! `tokenizers` core ([`add_configured_tokens`]): tokenizer_config's `added_tokens_decoder`
//! (or, when the key is absent, added_tokens.json and tokenizer.json's `added_tokens`) in id
//! order, skipping tokens the tokenizer already holds with the same flags, then the named
//! special tokens (`bos_token` … `mask_token`, with the class's defaults; then the
//! model-specific ones: other `*_token` keys such as `image_token`, and the entries of a
//! dict-form `extra_special_tokens`) and the extra special tokens that are not yet added
//! tokens. The ids written in the files are not kept: a token
//! whose text is in the vocabulary takes that id, any other the next free one.
//!
//! Everything that depends on the class is in [`CLASSES`]; classes not listed there keep the
//! behaviour of loading tokenizer.json as it is, without the replay.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value as Json;
use tokenizers::AddedToken;

use super::json;
use crate::hf::ModelDir;
use crate::ConvertError;

/// How the class gets its pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Build {
    /// tokenizer.json as written, with its added tokens.
    File,
    /// Vocabulary and merges of tokenizer.json under the class's own pipeline; no added tokens
    /// from tokenizer.json.
    Rebuilt(Pipeline),
}

/// The normalizer, pre-tokenizer and decoder a rebuilt class sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pipeline {
    /// Qwen2: NFC, Split on the Qwen2 regex then ByteLevel without its regex; ByteLevel
    /// decoder; BPE without unk, prefixes or byte fallback.
    Qwen2,
    /// Qwen3.5: Qwen2's pipeline with the Qwen3.5 regex (letters and combining marks are
    /// one class).
    Qwen35,
    /// BERT: BertNormalizer (`do_lower_case`, `tokenize_chinese_chars`, `strip_accents` of
    /// tokenizer_config), BertPreTokenizer, WordPiece decoder and model (`##`, the unk
    /// token's text, 100 characters a word); after the added tokens, a `[CLS] $A [SEP]`
    /// template with the ids of the cls and sep tokens ([`finish`]).
    Bert,
    /// GPT-2: no normalizer, ByteLevel with the GPT-2 regex (`add_prefix_space` from
    /// tokenizer_config, default false); ByteLevel decoder; BPE without unk, prefixes or byte
    /// fallback.
    Gpt2,
    /// A pipeline not modelled here: tokenizer.json's is kept (only its added tokens are
    /// dropped).
    FromFile,
}

/// A tokenizer class as transformers 5 builds it.
#[derive(Debug)]
pub(crate) struct TokenizerClass {
    /// The class name (a `Fast` suffix is dropped before looking it up).
    pub name: &'static str,
    /// How it gets its pipeline.
    pub build: Build,
    /// Its constructor's defaults for `bos_token`, `eos_token`, `unk_token`, `sep_token`,
    /// `pad_token`, `cls_token`, `mask_token` (the order of [`SPECIAL_ATTRS`]).
    pub defaults: [Option<&'static str>; 7],
    /// Adds every special token again as special and unnormalized after construction
    /// (Qwen2Tokenizer).
    pub readds_specials: bool,
}

/// transformers' `SPECIAL_TOKENS_ATTRIBUTES`, in its order.
pub(crate) const SPECIAL_ATTRS: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

const EOT: Option<&str> = Some("<|endoftext|>");

/// The classes modelled, by name. `TokenizersBackend` is the fallback for unknown names.
pub(crate) const CLASSES: &[TokenizerClass] = &[
    TokenizerClass {
        name: "TokenizersBackend",
        build: Build::File,
        defaults: [None; 7],
        readds_specials: false,
    },
    TokenizerClass {
        name: "GPT2Tokenizer",
        build: Build::Rebuilt(Pipeline::Gpt2),
        defaults: [EOT, EOT, EOT, None, None, None, None],
        readds_specials: false,
    },
    TokenizerClass {
        name: "BertTokenizer",
        build: Build::Rebuilt(Pipeline::Bert),
        defaults: [
            None,
            None,
            Some("[UNK]"),
            Some("[SEP]"),
            Some("[PAD]"),
            Some("[CLS]"),
            Some("[MASK]"),
        ],
        readds_specials: false,
    },
    TokenizerClass {
        name: "Qwen2Tokenizer",
        build: Build::Rebuilt(Pipeline::Qwen2),
        defaults: [None, EOT, EOT, None, EOT, None, None],
        readds_specials: true,
    },
    TokenizerClass {
        name: "Qwen3_5Tokenizer",
        build: Build::Rebuilt(Pipeline::Qwen35),
        defaults: [None, EOT, EOT, None, EOT, None, None],
        readds_specials: false,
    },
    TokenizerClass {
        name: "LlamaTokenizer",
        build: Build::Rebuilt(Pipeline::FromFile),
        defaults: [
            Some("<s>"),
            Some("</s>"),
            Some("<unk>"),
            None,
            None,
            None,
            None,
        ],
        readds_specials: false,
    },
    // Gemma's byte-fallback BPE: tokenizer.json's vocabulary and merges (its pipeline kept
    // here), the added tokens from tokenizer_config, `<mask>` among the default specials.
    TokenizerClass {
        name: "GemmaTokenizer",
        build: Build::Rebuilt(Pipeline::FromFile),
        defaults: [
            Some("<bos>"),
            Some("<eos>"),
            Some("<unk>"),
            None,
            Some("<pad>"),
            None,
            Some("<mask>"),
        ],
        readds_specials: false,
    },
];

/// Real transformers classes with their own pipeline that are not modelled in [`CLASSES`]:
/// for these tokenizer.json is read as it is (the behaviour before this table).
const UNMODELLED: &[&str] = &[
    "CodeGenTokenizer",
    "CohereTokenizer",
    "GPTNeoXTokenizer",
    "RobertaTokenizer",
    "T5Tokenizer",
    "XLMRobertaTokenizer",
    "CodeLlamaTokenizer",
];

/// transformers' tokenizer class per `model_type` (`TOKENIZER_MAPPING_NAMES`, 5.24) for the
/// model types whose entry changes the choice; a model type not listed has none.
const REGISTERED: &[(&str, &str)] = &[
    ("bert", "BertTokenizer"),
    ("cohere", "CohereTokenizer"),
    ("cohere2", "CohereTokenizer"),
    ("ernie4_5", "TokenizersBackend"),
    ("ernie4_5_moe", "TokenizersBackend"),
    ("falcon_mamba", "GPTNeoXTokenizer"),
    ("gemma", "GemmaTokenizer"),
    ("gemma2", "GemmaTokenizer"),
    ("gemma3", "GemmaTokenizer"),
    ("gemma3_text", "GemmaTokenizer"),
    ("glm", "TokenizersBackend"),
    ("glm4", "TokenizersBackend"),
    ("glm4_moe", "TokenizersBackend"),
    ("glm4_moe_lite", "TokenizersBackend"),
    ("glm4v", "TokenizersBackend"),
    ("glm4v_moe", "TokenizersBackend"),
    ("gpt2", "GPT2Tokenizer"),
    ("gpt_bigcode", "TokenizersBackend"),
    ("gpt_neox", "GPTNeoXTokenizer"),
    ("granite", "TokenizersBackend"),
    ("granitemoe", "TokenizersBackend"),
    ("granitemoehybrid", "TokenizersBackend"),
    ("granitemoeshared", "TokenizersBackend"),
    ("internlm3", "TokenizersBackend"),
    ("jamba", "TokenizersBackend"),
    ("llava", "TokenizersBackend"),
    ("mamba", "GPTNeoXTokenizer"),
    ("mamba2", "GPTNeoXTokenizer"),
    ("ministral", "MistralCommonBackend"),
    ("ministral3", "MistralCommonBackend"),
    ("mistral", "MistralCommonBackend"),
    ("mistral3", "MistralCommonBackend"),
    ("mixtral", "MistralCommonBackend"),
    ("modernbert", "TokenizersBackend"),
    ("nomic_bert", "BertTokenizer"),
    ("olmo", "GPTNeoXTokenizer"),
    ("olmo2", "TokenizersBackend"),
    ("olmo3", "TokenizersBackend"),
    ("olmoe", "GPTNeoXTokenizer"),
    ("phi", "GPT2Tokenizer"),
    ("phi3", "TokenizersBackend"),
    ("phimoe", "TokenizersBackend"),
    ("qwen2", "Qwen2Tokenizer"),
    ("qwen2_5_vl", "Qwen2Tokenizer"),
    ("qwen2_audio", "Qwen2Tokenizer"),
    ("qwen2_moe", "Qwen2Tokenizer"),
    ("qwen2_vl", "Qwen2Tokenizer"),
    ("qwen3", "Qwen2Tokenizer"),
    ("qwen3_5", "Qwen3_5Tokenizer"),
    ("qwen3_5_moe", "Qwen3_5Tokenizer"),
    ("qwen3_5_moe_text", "Qwen3_5Tokenizer"),
    ("qwen3_5_text", "Qwen3_5Tokenizer"),
    ("qwen3_moe", "Qwen2Tokenizer"),
    ("qwen3_next", "Qwen2Tokenizer"),
    ("qwen3_vl", "Qwen2Tokenizer"),
    ("qwen3_vl_moe", "Qwen2Tokenizer"),
    ("qwen4_exp", "Qwen3_5Tokenizer"),
    ("smolvlm", "TokenizersBackend"),
    ("stablelm", "TokenizersBackend"),
    ("starcoder2", "GPT2Tokenizer"),
    ("xlm-roberta", "XLMRobertaTokenizer"),
];

/// Model types whose Hub `tokenizer_class` transformers distrusts
/// (`MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS`, the entries among [`REGISTERED`]).
const INCORRECT_HUB_CLASS: &[&str] = &[
    "ernie4_5",
    "ernie4_5_moe",
    "internlm3",
    "jamba",
    "modernbert",
    "phi3",
    "phimoe",
    "qwen2",
    "qwen3_5",
    "qwen3_5_moe",
    "qwen3_5_moe_text",
    "qwen4_exp",
    "smolvlm",
];

/// Names that build from the file whatever the class (`TokenizersBackend` and its aliases).
fn is_backend(name: &str) -> bool {
    matches!(
        name,
        "TokenizersBackend" | "PythonBackend" | "PreTrainedTokenizerFast" | "MistralCommonBackend"
    )
}

/// What a class name resolves to: a modelled class, or `None` for an unmodelled one.
fn class_named(name: &str) -> Option<&'static TokenizerClass> {
    let base = name.strip_suffix("Fast").unwrap_or(name);
    if let Some(c) = CLASSES.iter().find(|c| c.name == base || c.name == name) {
        return Some(c);
    }
    if UNMODELLED.contains(&base) {
        return None;
    }
    // PreTrainedTokenizer(Fast), and any name transformers does not know: TokenizersBackend.
    Some(&CLASSES[0])
}

/// Whether tokenizer.json names a ByteLevel pre-tokenizer or decoder (anywhere in them).
fn has_byte_level(tj: &Json) -> bool {
    fn walk(v: &Json) -> bool {
        match v {
            Json::Object(o) => {
                o.get("type").and_then(Json::as_str) == Some("ByteLevel") || o.values().any(walk)
            }
            Json::Array(a) => a.iter().any(walk),
            _ => false,
        }
    }
    tj.get("pre_tokenizer").is_some_and(walk) || tj.get("decoder").is_some_and(walk)
}

/// The class `AutoTokenizer.from_pretrained` builds for this directory, or `None` when it is
/// one this table does not model (tokenizer.json is then read as it is).
pub(crate) fn choose(
    tc: Option<&Json>,
    config: Option<&Json>,
    tj: &Json,
) -> Option<&'static TokenizerClass> {
    let backend = Some(&CLASSES[0]);
    if tc.is_some_and(|t| t.get("auto_map").is_some()) {
        // Remote code: not modelled.
        return None;
    }
    let tc_class = tc
        .and_then(|t| t.get("tokenizer_class"))
        .and_then(Json::as_str);
    let hub = tc_class.or_else(|| {
        config
            .and_then(|c| c.get("tokenizer_class"))
            .and_then(Json::as_str)
    });
    let model_type = config
        .and_then(|c| c.get("model_type"))
        .and_then(Json::as_str)
        .unwrap_or("");
    let registered = REGISTERED
        .iter()
        .find(|(m, _)| *m == model_type)
        .map(|(_, c)| *c);
    let incorrect = INCORRECT_HUB_CLASS.contains(&model_type);
    let strip = |s: &'static str| s.strip_suffix("Fast").unwrap_or(s);
    if let Some(hub) = hub {
        let hub_base = hub.strip_suffix("Fast").unwrap_or(hub);
        if hub_base == "LlamaTokenizer"
            && registered.map(strip) != Some("MistralCommonBackend")
            && !incorrect
            && has_byte_level(tj)
        {
            return backend;
        }
        if let Some(reg) = registered.filter(|r| strip(r) != hub_base) {
            if !is_backend(strip(reg)) {
                let name = if incorrect { reg } else { hub };
                let class = class_named(name);
                if class.is_none_or(|c| c.name != "TokenizersBackend") {
                    return class;
                }
            }
            return backend;
        }
        return class_named(hub);
    }
    match registered {
        Some(reg) if !is_backend(reg) => class_named(reg),
        _ => backend,
    }
}

/// tokenizer.json as the rebuilt class holds it: no added tokens, and the class's pipeline.
/// A `j` that is not an object is returned as it is (the loader refuses one before this).
pub(crate) fn rebuilt_json(mut j: Json, pipeline: Pipeline, tc: Option<&Json>) -> Json {
    // Fields are inserted into the object, never through `j[key] = …`, which panics on a
    // value that is not an object.
    let Some(top) = j.as_object_mut() else {
        return j;
    };
    top.insert("added_tokens".into(), Json::Array(Vec::new()));
    let add_prefix_space = tc
        .and_then(|t| t.get("add_prefix_space"))
        .and_then(Json::as_bool)
        .unwrap_or(false);
    let byte_level = |prefix: bool, regex: bool| {
        serde_json::json!({"type": "ByteLevel", "add_prefix_space": prefix,
            "trim_offsets": true, "use_regex": regex})
    };
    let bpe_model = |top: &mut serde_json::Map<String, Json>| {
        if let Some(m) = top.get_mut("model").and_then(Json::as_object_mut) {
            for (k, v) in [
                ("dropout", Json::Null),
                ("unk_token", Json::Null),
                ("continuing_subword_prefix", Json::from("")),
                ("end_of_word_suffix", Json::from("")),
                ("fuse_unk", Json::from(false)),
                ("byte_fallback", Json::from(false)),
                ("ignore_merges", Json::from(false)),
            ] {
                m.insert(k.into(), v);
            }
        }
    };
    match pipeline {
        Pipeline::Qwen2 | Pipeline::Qwen35 => {
            let regex = if pipeline == Pipeline::Qwen2 {
                super::pre::RE_QWEN2
            } else {
                super::pre::RE_QWEN35
            };
            top.insert("normalizer".into(), serde_json::json!({"type": "NFC"}));
            top.insert(
                "pre_tokenizer".into(),
                serde_json::json!({"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": regex},
                 "behavior": "Isolated", "invert": false},
                byte_level(add_prefix_space, false)]}),
            );
            top.insert("decoder".into(), byte_level(true, true));
            bpe_model(top);
        }
        Pipeline::Bert => {
            let flag = |k: &str, d: bool| {
                tc.and_then(|t| t.get(k))
                    .and_then(Json::as_bool)
                    .unwrap_or(d)
            };
            let strip = tc
                .and_then(|t| t.get("strip_accents"))
                .and_then(Json::as_bool)
                .map_or(Json::Null, Json::Bool);
            top.insert(
                "normalizer".into(),
                serde_json::json!({"type": "BertNormalizer", "clean_text": true,
                "handle_chinese_chars": flag("tokenize_chinese_chars", true),
                "strip_accents": strip, "lowercase": flag("do_lower_case", true)}),
            );
            top.insert(
                "pre_tokenizer".into(),
                serde_json::json!({"type": "BertPreTokenizer"}),
            );
            top.insert(
                "decoder".into(),
                serde_json::json!({"type": "WordPiece", "prefix": "##", "cleanup": true}),
            );
            let unk = named_text(tc, "unk_token").unwrap_or_else(|| "[UNK]".to_string());
            if let Some(m) = top.get_mut("model").and_then(Json::as_object_mut) {
                m.insert("unk_token".into(), Json::from(unk));
                m.insert("continuing_subword_prefix".into(), Json::from("##"));
                m.insert("max_input_chars_per_word".into(), Json::from(100));
            }
        }
        Pipeline::Gpt2 => {
            top.insert("normalizer".into(), Json::Null);
            top.insert("pre_tokenizer".into(), byte_level(add_prefix_space, true));
            top.insert("decoder".into(), byte_level(true, true));
            bpe_model(top);
        }
        Pipeline::FromFile => {}
    }
    j
}

/// The rebuilt class's tokenizer.json as text ([`rebuilt_json`]), leaving `j` as it was
/// (without copying the vocabulary: only the fields the rebuild sets are saved and put back).
pub(crate) fn rebuilt_text(j: &mut Json, pipeline: Pipeline, tc: Option<&Json>) -> String {
    const TOP: [&str; 4] = ["added_tokens", "normalizer", "pre_tokenizer", "decoder"];
    const MODEL: [&str; 8] = [
        "max_input_chars_per_word",
        "dropout",
        "unk_token",
        "continuing_subword_prefix",
        "end_of_word_suffix",
        "fuse_unk",
        "byte_fallback",
        "ignore_merges",
    ];
    let Some(o) = j.as_object() else {
        return j.to_string();
    };
    let top: Vec<Option<Json>> = TOP.iter().map(|k| o.get(*k).cloned()).collect();
    let model: Vec<Option<Json>> = MODEL
        .iter()
        .map(|k| j.get("model").and_then(|m| m.get(*k)).cloned())
        .collect();
    let rebuilt = rebuilt_json(std::mem::take(j), pipeline, tc);
    let text = rebuilt.to_string();
    *j = rebuilt;
    let put = |o: &mut serde_json::Map<String, Json>, k: &str, v: Option<Json>| match v {
        Some(v) => {
            o.insert(k.to_string(), v);
        }
        None => {
            o.remove(k);
        }
    };
    if let Some(o) = j.as_object_mut() {
        for (k, v) in TOP.iter().zip(top) {
            put(o, k, v);
        }
        if let Some(m) = o.get_mut("model").and_then(Json::as_object_mut) {
            for (k, v) in MODEL.iter().zip(model) {
                put(m, k, v);
            }
        }
    }
    text
}

impl Pipeline {
    /// Refuses the tokenizer_config values the class's constructor refuses: GPT2Tokenizer
    /// passes `add_prefix_space` as written to the `tokenizers` ByteLevel pre-tokenizer, which
    /// takes only a bool (so a `null` is refused); Qwen2Tokenizer reads a `null` as false.
    pub(crate) fn check_config(self, dir: &Path, tc: Option<&Json>) -> Result<(), ConvertError> {
        let v = tc.and_then(|t| t.get("add_prefix_space"));
        let refused = match self {
            Pipeline::Gpt2 => v.is_some_and(|v| !v.is_boolean()),
            Pipeline::Qwen2 | Pipeline::Qwen35 => {
                v.is_some_and(|v| !v.is_boolean() && !v.is_null())
            }
            Pipeline::Bert | Pipeline::FromFile => false,
        };
        if self == Pipeline::Bert {
            // BertNormalizer's flags are bools (strip_accents may be null).
            for (k, null_ok) in [
                ("do_lower_case", false),
                ("tokenize_chinese_chars", false),
                ("strip_accents", true),
            ] {
                let v = tc.and_then(|t| t.get(k));
                if v.is_some_and(|v| !(v.is_boolean() || null_ok && v.is_null())) {
                    return Err(ConvertError::format(
                        dir.join("tokenizer_config.json"),
                        None,
                        format!(
                            "{k} is {}: BertTokenizer's normalizer takes only true or false \
                             (transformers refuses it)",
                            v.unwrap_or(&Json::Null)
                        ),
                    ));
                }
            }
        }
        if refused {
            return Err(ConvertError::format(
                dir.join("tokenizer_config.json"),
                None,
                format!(
                    "add_prefix_space is {}: the tokenizer class's ByteLevel pre-tokenizer \
                     takes only true or false (transformers refuses it)",
                    v.unwrap_or(&Json::Null)
                ),
            ));
        }
        Ok(())
    }

    /// Whether the rest of the conversion reads tokenizer.json as written rather than the
    /// rebuilt pipeline: the chkhsh is always the rebuilt tokenizer's, but the structure
    /// fallback of the pre-tokenizer detection (which is this project's, not the
    /// reference's) keeps describing the file for a GPT-2 rebuild, as before the rebuild was
    /// modelled.
    pub(crate) fn reads_file_json(self) -> bool {
        matches!(self, Pipeline::Gpt2 | Pipeline::Bert | Pipeline::FromFile)
    }
}

/// The text of a named token in tokenizer_config (a string, or an AddedToken's content).
fn named_text(tc: Option<&Json>, attr: &str) -> Option<String> {
    match tc.and_then(|t| t.get(attr))? {
        Json::String(s) => Some(s.clone()),
        v @ Json::Object(_) => v.get("content").and_then(Json::as_str).map(str::to_string),
        _ => None,
    }
}

/// What the class's constructor does after its added tokens: BertTokenizer sets a
/// `[CLS] $A [SEP]` template (`$A $B` pairs) with the ids the cls and sep tokens have then
/// (`None` when one is null, 2 and 3 when the text has no id and there is no unk token).
pub(crate) fn finish(
    tok: &mut tokenizers::Tokenizer,
    class: &TokenizerClass,
    dir: &Path,
    tc: Option<&Json>,
) -> Result<(), ConvertError> {
    if class.build != Build::Rebuilt(Pipeline::Bert) {
        return Ok(());
    }
    let unk = named_text(tc, "unk_token").unwrap_or_else(|| "[UNK]".to_string());
    // (text, id): a null token is "None" with the default id.
    let token = |attr: &str, default: &str, default_id: u32| -> (String, u32) {
        if tc.and_then(|t| t.get(attr)).is_some_and(Json::is_null) {
            return ("None".to_string(), default_id);
        }
        let t = named_text(tc, attr).unwrap_or_else(|| default.to_string());
        let id = tok
            .token_to_id(&t)
            .or_else(|| tok.token_to_id(&unk))
            .unwrap_or(default_id);
        (t, id)
    };
    let (cls, cls_id) = token("cls_token", "[CLS]", 2);
    let (sep, sep_id) = token("sep_token", "[SEP]", 3);
    let err = |e: String| {
        super::library_error(
            &dir.join(crate::hf::model_dir::TOKENIZER_CONFIG),
            "refuses BertTokenizer's template",
            &e,
        )
    };
    let template = tokenizers::processors::template::TemplateProcessing::builder()
        .try_single(format!("{cls}:0 $A:0 {sep}:0"))
        .map_err(|e| err(e.to_string()))?
        .try_pair(format!("{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1"))
        .map_err(|e| err(e.to_string()))?
        .special_tokens(vec![(cls.clone(), cls_id), (sep.clone(), sep_id)])
        .build()
        .map_err(|e| err(e.to_string()))?;
    tok.with_post_processor(Some(template));
    Ok(())
}

/// An added token as transformers' `AddedToken(**entry)` reads it: a missing `special` is
/// false, a missing `normalized` is `not special`.
fn token_of(v: &Json, path: &Path, what: &str) -> Result<AddedToken, ConvertError> {
    let content = v.get("content").and_then(Json::as_str).ok_or_else(|| {
        ConvertError::format(
            path,
            None,
            format!("{what}: an added token without content"),
        )
    })?;
    let flag = |k: &str| v.get(k).and_then(Json::as_bool);
    let special = flag("special").unwrap_or(false);
    Ok(AddedToken {
        content: content.to_string(),
        single_word: flag("single_word").unwrap_or(false),
        lstrip: flag("lstrip").unwrap_or(false),
        rstrip: flag("rstrip").unwrap_or(false),
        normalized: flag("normalized").unwrap_or(!special),
        special,
    })
}

/// A special token value of tokenizer_config (a string, or an AddedToken object).
enum Named {
    Text(String),
    Token(AddedToken),
}

impl Named {
    fn of(v: &Json, path: &Path, what: &str) -> Result<Option<Named>, ConvertError> {
        Ok(match v {
            Json::String(s) => Some(Named::Text(s.clone())),
            Json::Object(_) => Some(Named::Token(token_of(v, path, what)?)),
            _ => None,
        })
    }
    fn text(&self) -> &str {
        match self {
            Named::Text(s) => s,
            Named::Token(t) => &t.content,
        }
    }
}

/// `added_tokens_decoder` as `from_pretrained` passes it on: tokenizer_config's when it has
/// the key, else added_tokens.json's and tokenizer.json's added tokens; sorted by id, the
/// last entry of an id kept.
fn configured_decoder(
    dir: &ModelDir,
    tc: Option<&Json>,
    file_added: Option<&Json>,
) -> Result<(Vec<(i128, AddedToken)>, bool), ConvertError> {
    let tc_path = dir.tokenizer_config_path();
    let mut out: Vec<(i128, AddedToken)> = Vec::new();
    let mut put = |id: i128, t: AddedToken| {
        out.retain(|(i, _)| *i != id);
        out.push((id, t));
    };
    let legacy = match tc.and_then(|t| t.get("added_tokens_decoder")) {
        Some(Json::Object(dec)) => {
            for (k, v) in dec {
                let id = k.trim().parse::<i128>().map_err(|_| {
                    ConvertError::format(
                        &tc_path,
                        None,
                        format!("added_tokens_decoder: key {k:?} is not an integer"),
                    )
                })?;
                put(id, token_of(v, &tc_path, "added_tokens_decoder")?);
            }
            false
        }
        Some(Json::Null) | None => {
            let at = dir.join("added_tokens.json");
            if at.is_file() {
                let (specials, _) = named_specials(dir, tc, None, true, false)?;
                let specials: HashSet<String> =
                    specials.iter().map(|n| n.text().to_string()).collect();
                if let Json::Object(m) = json::read_json(&at)? {
                    for (text, id) in m {
                        let Some(id) = id.as_i64() else { continue };
                        let special = specials.contains(&text);
                        let mut t = AddedToken::from(text, special);
                        t.normalized = !special;
                        put(i128::from(id), t);
                    }
                }
            }
            let tj_path = dir.join("tokenizer.json");
            for v in file_added.and_then(Json::as_array).into_iter().flatten() {
                let Some(id) = v.get("id").and_then(Json::as_i64) else {
                    continue;
                };
                put(i128::from(id), token_of(v, &tj_path, "added_tokens")?);
            }
            true
        }
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &tc_path,
                "added_tokens_decoder",
                "an object",
                crate::hf::config::json_kind(v),
            ))
        }
    };
    out.sort_by_key(|(id, _)| *id);
    Ok((out, legacy))
}

/// Whether `from_pretrained` takes the added tokens from the legacy files (tokenizer_config
/// has no `added_tokens_decoder`, or it is null).
fn is_legacy(tc: Option<&Json>) -> bool {
    matches!(
        tc.and_then(|t| t.get("added_tokens_decoder")),
        None | Some(Json::Null)
    )
}

/// Whether a tokenizer_config key is a model-specific special token's (`image_token`,
/// `boi_token`, …: any `*_token` key but the seven of [`SPECIAL_ATTRS`]).
fn is_model_key(k: &str) -> bool {
    k.ends_with("_token") && !SPECIAL_ATTRS.contains(&k)
}

/// A serialised `AddedToken` (`{"__type": "AddedToken", …}`), which `from_pretrained`
/// turns into one.
fn is_token_object(v: &Json) -> bool {
    v.get("__type").and_then(Json::as_str) == Some("AddedToken")
}

/// Sets `key` in an ordered list of named tokens: in place when present, else at the end.
fn upsert(list: &mut Vec<(String, Named)>, key: &str, value: Named) {
    match list.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => list.push((key.to_string(), value)),
    }
}

/// The named special tokens as `_special_tokens_map` holds them (the seven of
/// [`SPECIAL_ATTRS`] first, then with `model_specific` the model-specific ones) and the extra
/// special tokens.
///
/// The seven come from tokenizer_config (special_tokens_map.json over it when the decoder
/// came from the legacy files) over the class's defaults. transformers 5 makes every other
/// `*_token` key whose value is a string or an AddedToken, and every entry of a dict-form
/// `extra_special_tokens`, a named special token too: first the AddedToken-valued keys (and
/// with the legacy files special_tokens_map.json's `*_token` keys), then the string-valued
/// keys in file order, then the dict's entries (a later one replacing an earlier one of the
/// same name in place, also one of the seven). The extra special tokens are
/// `extra_special_tokens` when it is a list that is not empty, else
/// `additional_special_tokens`.
fn named_specials(
    dir: &ModelDir,
    tc: Option<&Json>,
    class: Option<&TokenizerClass>,
    legacy: bool,
    model_specific: bool,
) -> Result<(Vec<Named>, Vec<Named>), ConvertError> {
    let tc_path = dir.tokenizer_config_path();
    let map_path = dir.join("special_tokens_map.json");
    let map = if legacy && map_path.is_file() {
        Some(json::read_json(&map_path)?)
    } else {
        None
    };
    let mut named: Vec<(String, Named)> = Vec::new();
    for (i, attr) in SPECIAL_ATTRS.iter().enumerate() {
        let from_map = map.as_ref().and_then(|m| m.get(*attr));
        let from_tc = tc.and_then(|t| t.get(*attr));
        let v = match from_map.or(from_tc) {
            Some(v) => Named::of(v, &tc_path, attr)?,
            None => class
                .and_then(|c| c.defaults[i])
                .map(|d| Named::Text(d.to_string())),
        };
        if let Some(v) = v {
            named.push((attr.to_string(), v));
        }
    }
    let extra_v = tc.and_then(|t| t.get("extra_special_tokens"));
    let additional = tc.and_then(|t| t.get("additional_special_tokens"));
    if model_specific {
        let order = match (tc, dir.tokenizer_config_text()?) {
            (Some(_), Some(text)) => json::key_order(&tc_path, text)?,
            _ => json::KeyOrder::default(),
        };
        let value = |k: &str| tc.and_then(|t| t.get(k)).unwrap_or(&Json::Null);
        let mut auto: Vec<(String, Named)> = Vec::new();
        for k in order.keys.iter().filter(|k| is_model_key(k)) {
            if is_token_object(value(k)) {
                auto.push((k.clone(), Named::Token(token_of(value(k), &tc_path, k)?)));
            }
        }
        if let Some(m) = &map {
            for k in json::read_key_order(&map_path)?.keys {
                let n = match m.get(&k) {
                    Some(Json::String(s)) if is_model_key(&k) => Named::Text(s.clone()),
                    Some(Json::Object(o)) if is_model_key(&k) => {
                        // AddedToken(**value, special=True), "special" dropped first.
                        let mut o = o.clone();
                        o.insert("special".into(), Json::Bool(true));
                        Named::Token(token_of(&Json::Object(o), &map_path, &k)?)
                    }
                    _ => continue,
                };
                upsert(&mut auto, &k, n);
            }
        }
        let mut explicit: Vec<(String, Named)> = Vec::new();
        for k in order.keys.iter().filter(|k| is_model_key(k)) {
            if let Json::String(s) = value(k) {
                explicit.push((k.clone(), Named::Text(s.clone())));
            }
        }
        if let Some(Json::Object(d)) = extra_v.filter(|v| json::truthy(Some(v))) {
            for k in order.of("extra_special_tokens") {
                let v = &d[k];
                let n = match v {
                    Json::String(s) => Named::Text(s.clone()),
                    v if is_token_object(v) => {
                        Named::Token(token_of(v, &tc_path, "extra_special_tokens")?)
                    }
                    other => {
                        return Err(ConvertError::format(
                            &tc_path,
                            None,
                            format!(
                                "extra_special_tokens: the special token {k:?} is {other}, \
                                 not a string or an AddedToken (transformers refuses it)"
                            ),
                        ))
                    }
                };
                upsert(&mut explicit, k, n);
            }
        }
        for (k, v) in explicit {
            upsert(&mut auto, &k, v);
        }
        for (k, v) in auto {
            upsert(&mut named, &k, v);
        }
    }
    // additional_special_tokens stands in for an extra_special_tokens that is falsy, and
    // for a dict-form one (which became named tokens above).
    let list =
        if !json::truthy(extra_v) && additional.is_some() || extra_v.is_some_and(Json::is_object) {
            additional
        } else {
            extra_v
        };
    let mut extra = Vec::new();
    match list {
        None | Some(Json::Null) => {}
        Some(Json::Array(a)) => {
            for v in a {
                if let Some(n) = Named::of(v, &tc_path, "extra_special_tokens")? {
                    extra.push(n);
                }
            }
        }
        Some(other) => {
            return Err(ConvertError::format(
                &tc_path,
                None,
                format!(
                    "extra_special_tokens is {other}, not a list or a dict of tokens \
                     (transformers refuses it)"
                ),
            ))
        }
    }
    Ok((named.into_iter().map(|(_, n)| n).collect(), extra))
}

/// `tokenizer.all_special_tokens` of the tokenizer `class` builds for this directory: the
/// named special tokens (with the class's defaults and the model-specific ones) then the
/// extra ones, each text once.
pub(crate) fn all_special_tokens(
    dir: &ModelDir,
    tc: Option<&Json>,
    class: &TokenizerClass,
) -> Result<Vec<String>, ConvertError> {
    let (named, extra) = named_specials(dir, tc, Some(class), is_legacy(tc), true)?;
    let mut out: Vec<String> = Vec::new();
    for n in named.iter().chain(extra.iter()) {
        if !out.iter().any(|t| t == n.text()) {
            out.push(n.text().to_string());
        }
    }
    Ok(out)
}

/// Replays the added tokens transformers adds to the tokenizer of `class` (see the module
/// documentation) on `tok`, whose added tokens are tokenizer.json's ([`Build::File`]) or
/// none ([`Build::Rebuilt`]); `file_added` is tokenizer.json's `added_tokens`.
pub(crate) fn add_configured_tokens(
    tok: &mut tokenizers::Tokenizer,
    class: &TokenizerClass,
    dir: &ModelDir,
    tc: Option<&Json>,
    file_added: Option<&Json>,
) -> Result<(), ConvertError> {
    let (decoder, legacy) = configured_decoder(dir, tc, file_added)?;
    let (named, extra) = named_specials(dir, tc, Some(class), legacy, true)?;
    let existing: Vec<AddedToken> = {
        let mut v: Vec<(u32, AddedToken)> = tok.get_added_tokens_decoder().into_iter().collect();
        v.sort_by_key(|(id, _)| *id);
        v.into_iter().map(|(_, t)| t).collect()
    };
    let mut to_add: Vec<AddedToken> = decoder
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| !existing.contains(t))
        .collect();
    // Named tokens take the flags of the decoder entry with their text.
    let by_text = |n: &Named| -> Named {
        match to_add
            .iter()
            .chain(existing.iter())
            .find(|t| t.content == n.text())
        {
            Some(t) if matches!(n, Named::Text(_)) => Named::Token(t.clone()),
            _ => match n {
                Named::Text(s) => Named::Text(s.clone()),
                Named::Token(t) => Named::Token(t.clone()),
            },
        }
    };
    let named: Vec<Named> = named.iter().map(by_text).collect();
    let all_named: HashSet<String> = named.iter().map(|n| n.text().to_string()).collect();
    let mut encoder: HashSet<String> = existing.iter().map(|t| t.content.clone()).collect();
    encoder.extend(to_add.iter().map(|t| t.content.clone()));
    for n in named.iter().chain(extra.iter()) {
        if encoder.contains(n.text()) {
            continue;
        }
        to_add.push(match n {
            Named::Text(s) => AddedToken::from(s.clone(), true),
            Named::Token(t) => t.clone(),
        });
    }
    for t in &mut to_add {
        if !t.special && all_named.contains(&t.content) {
            t.special = true;
        }
    }
    let err = |e: tokenizers::Error| {
        super::library_error(
            &dir.tokenizer_config_path(),
            "failed adding the configured tokens",
            &e,
        )
    };
    if !to_add.is_empty() {
        tok.add_tokens(to_add).map_err(err)?;
    }
    if class.readds_specials {
        let mut seen = HashSet::new();
        let again: Vec<AddedToken> = named
            .iter()
            .chain(extra.iter())
            .filter(|n| seen.insert(n.text().to_string()))
            .map(|n| AddedToken::from(n.text().to_string(), true))
            .collect();
        tok.add_tokens(again).map_err(err)?;
    }
    Ok(())
}
