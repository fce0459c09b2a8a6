//! gguf-py's `SpecialVocab`: merges, special token ids, the add-token flags, chat templates and
//! normalizer flags, read from tokenizer.json, tokenizer_config.json (+ chat_template.jinja /
//! chat_template.json) and config.json in that order.
//!
//! The rules are the reference's, including its quirks: the first id set for a type wins, the
//! post-processor's add flags win over tokenizer_config's, a TemplateProcessing whose last
//! token is not the EOS moves the old EOS to `eot` (or `eom`), and `cls`, `prefix`, `suffix`,
//! `middle`, `fsep` ids are never written (gguf-py has no writer method for them).

use ggufkit::gguf::keys;
use std::path::Path;

use serde_json::{Map, Value as Json};

use super::json::{as_py_int, read_json, read_text, truthy};
use super::kv::{key, strings, Kv};
use crate::hf::ModelDir;
use crate::ConvertError;

/// The default special token types.
pub(crate) const DEFAULT_TYPES: [&str; 7] = ["bos", "eos", "unk", "sep", "pad", "cls", "mask"];

/// What `chat_template` held.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ChatTemplate {
    /// A single template.
    One(String),
    /// A list of `{name, template}` objects (kept raw; checked when written).
    Named(Vec<Json>),
}

/// The loaded special vocabulary.
#[derive(Debug, Clone)]
pub(crate) struct SpecialVocab {
    pub merges: Vec<String>,
    /// `add_<type>_token` flags in first-set order.
    pub add_special_token: Vec<(String, bool)>,
    /// Special ids in first-set order.
    pub special_token_ids: Vec<(String, u32)>,
    pub chat_template: Option<ChatTemplate>,
    /// `normalizer_lowercase` / `normalizer_strip_accents` (raw JSON: may be any value).
    pub lowercase: Option<Json>,
    pub strip_accents: Option<Json>,
    n_vocab: Option<usize>,
    load_merges: bool,
    types: Vec<String>,
}

fn set_flag(flags: &mut Vec<(String, bool)>, typ: &str, v: bool) {
    match flags.iter_mut().find(|(k, _)| k == typ) {
        Some(slot) => slot.1 = v,
        None => flags.push((typ.to_string(), v)),
    }
}

fn set_flag_default(flags: &mut Vec<(String, bool)>, typ: &str, v: bool) {
    if !flags.iter().any(|(k, _)| k == typ) {
        flags.push((typ.to_string(), v));
    }
}

/// `item.get('SpecialToken', {}).get('id')` of a template item, when it is a non-empty string.
fn special_id(item: Option<&Json>) -> Option<&str> {
    item?
        .get("SpecialToken")?
        .get("id")?
        .as_str()
        .filter(|s| !s.is_empty())
}

fn sequence_id(item: Option<&Json>) -> Option<&str> {
    item?.get("Sequence")?.get("id")?.as_str()
}

/// `x in (a, b)` with Python equality on JSON values (a string never equals an object).
fn is_one_of(x: &str, a: &Json, b: &Json) -> bool {
    a.as_str() == Some(x) || b.as_str() == Some(x)
}

impl SpecialVocab {
    /// Loads the special vocabulary of `dir` (`SpecialVocab(dir, load_merges, types, n_vocab)`).
    pub fn load(
        dir: &ModelDir,
        load_merges: bool,
        types: Option<&[&str]>,
        n_vocab: Option<usize>,
    ) -> Result<SpecialVocab, ConvertError> {
        let mut sv = SpecialVocab {
            merges: Vec::new(),
            add_special_token: Vec::new(),
            special_token_ids: Vec::new(),
            chat_template: None,
            lowercase: None,
            strip_accents: None,
            n_vocab,
            load_merges,
            types: types
                .unwrap_or(&DEFAULT_TYPES)
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        sv.load_tokenizer_json(dir)?;
        sv.load_config_json(dir)?;
        if sv.load_merges && sv.merges.is_empty() {
            sv.load_merges_txt(dir)?;
        }
        Ok(sv)
    }

    /// `_set_special_token` for a Python int.
    pub fn set_special_token(&mut self, typ: &str, tid: i128) -> Result<(), ConvertError> {
        if tid < 0 {
            return Err(ConvertError::Other(format!(
                "invalid value for special token type {typ}: {tid}"
            )));
        }
        if self.n_vocab.is_none_or(|n| tid < n as i128) {
            if self.special_token_ids.iter().any(|(k, _)| k == typ) {
                return Ok(());
            }
            let id = u32::try_from(tid).map_err(|_| {
                ConvertError::Other(format!("special token type {typ}: id {tid} exceeds u32"))
            })?;
            self.special_token_ids.push((typ.to_string(), id));
        }
        // Out of range: the reference warns and skips.
        Ok(())
    }

    /// `_set_special_token` for any JSON value (non-ints are ignored).
    fn set_special_json(&mut self, typ: &str, v: Option<&Json>) -> Result<(), ConvertError> {
        match v.and_then(as_py_int) {
            Some(i) => self.set_special_token(typ, i),
            None => Ok(()),
        }
    }

    fn parse_normalizer(&mut self, n: &Json) {
        match n.get("type").and_then(Json::as_str) {
            Some("Lowercase") => self.lowercase = Some(Json::Bool(true)),
            Some("StripAccents") => self.strip_accents = Some(Json::Bool(true)),
            Some("BertNormalizer") => {
                if let Some(v) = n.get("lowercase") {
                    self.lowercase = Some(v.clone());
                }
                if let Some(v) = n.get("strip_accents") {
                    self.strip_accents = Some(v.clone());
                }
            }
            Some("Sequence") => {
                if let Some(list) = n.get("normalizers").and_then(Json::as_array) {
                    for m in list {
                        self.parse_normalizer(m);
                    }
                }
            }
            _ => {}
        }
    }

    fn read_merges(&mut self, path: &Path, merges: &Json) -> Result<(), ConvertError> {
        let Some(list) = merges.as_array().filter(|l| !l.is_empty()) else {
            return Ok(());
        };
        let bad = |what: &str| ConvertError::format(path, None, format!("model.merges: {what}"));
        if list[0].is_string() {
            self.merges = list
                .iter()
                .map(|m| m.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| bad("a list of strings with a non-string item"))?;
            return Ok(());
        }
        let pair_form = list[0]
            .as_array()
            .is_some_and(|p| p.len() == 2 && p[0].is_string());
        if !pair_form {
            return Err(bad("unknown tokenizer merges format"));
        }
        let mut out = Vec::with_capacity(list.len());
        for pair in list {
            let parts = pair
                .as_array()
                .ok_or_else(|| bad("a list of pairs with a non-list item"))?;
            let mut joined = String::new();
            for (i, part) in parts.iter().enumerate() {
                let s = part
                    .as_str()
                    .ok_or_else(|| bad("a pair with a non-string part"))?;
                if i > 0 {
                    joined.push(' ');
                }
                // A literal space inside a part is stored as its byte-level form 'Ġ' (U+0120).
                joined.extend(s.chars().map(|c| if c == ' ' { '\u{120}' } else { c }));
            }
            out.push(joined);
        }
        self.merges = out;
        Ok(())
    }

    fn load_tokenizer_json(&mut self, dir: &ModelDir) -> Result<(), ConvertError> {
        let tj_path = dir.tokenizer_json_path();
        let tokenizer = dir.tokenizer_json()?;
        let empty = Vec::new();
        let mut added_tokens: &Vec<Json> = &empty;
        if let Some(tj) = tokenizer {
            if self.load_merges {
                if let Some(m) = tj.get("model").and_then(|m| m.get("merges")) {
                    self.read_merges(&tj_path, m)?;
                }
            }
            if let Some(n) = tj.get("normalizer").filter(|n| truthy(Some(n))) {
                self.parse_normalizer(n);
            }
            if let Some(a) = tj.get("added_tokens").and_then(Json::as_array) {
                added_tokens = a;
            }
        }
        let mut tc: Option<Map<String, Json>> = match dir.tokenizer_config()? {
            Some(Json::Object(o)) => Some(o.clone()),
            Some(other) => {
                return Err(ConvertError::wrong_type(
                    dir.tokenizer_config_path(),
                    crate::hf::config::TOP_LEVEL,
                    "an object",
                    crate::hf::config::json_kind(other),
                ));
            }
            None => None,
        };
        if let Some(tj) = tokenizer.filter(|t| truthy(Some(t))) {
            self.analyse_post_processor(tj, &mut tc);
        }
        let Some(tc) = tc.filter(|m| !m.is_empty()) else {
            return Ok(());
        };
        self.load_chat_template(dir, &tc)?;
        let types = self.types.clone();
        for typ in &types {
            if let Some(Json::Bool(b)) = tc.get(&format!("add_{typ}_token")) {
                // The post-processor's value wins when both are given.
                set_flag_default(&mut self.add_special_token, typ, *b);
            }
            let content = match tc.get(&format!("{typ}_token")) {
                Some(Json::String(s)) => s.as_str(),
                Some(Json::Object(o)) => match o.get("content") {
                    Some(Json::String(s)) => s.as_str(),
                    _ => continue,
                },
                _ => continue,
            };
            let id = added_tokens
                .iter()
                .find(|t| t.get("content").and_then(Json::as_str) == Some(content))
                .and_then(|t| t.get("id"));
            self.set_special_json(typ, id)?;
        }
        Ok(())
    }

    /// The post-processor analysis of `_try_load_from_tokenizer_json`; may write bos/cls/eos/
    /// sep/eot/eom entries into the tokenizer_config dict, as the reference does.
    fn analyse_post_processor(&mut self, tj: &Json, tc: &mut Option<Map<String, Json>>) {
        let get = |tc: &Option<Map<String, Json>>, k: &str| {
            tc.as_ref()
                .and_then(|m| m.get(k))
                .cloned()
                .unwrap_or(Json::Null)
        };
        let tc_truthy = |tc: &Option<Map<String, Json>>| tc.as_ref().is_some_and(|m| !m.is_empty());
        let put = |tc: &mut Option<Map<String, Json>>, k: &str, v: Json| {
            if let Some(m) = tc.as_mut() {
                m.insert(k.to_string(), v);
            }
        };
        let mut bos = get(tc, "bos_token");
        let mut cls = get(tc, "cls_token");
        let mut eos = get(tc, "eos_token");
        let mut sep = get(tc, "sep_token");
        if !truthy(Some(&bos)) && truthy(Some(&cls)) && tc_truthy(tc) {
            bos = cls.clone();
            put(tc, "bos_token", bos.clone());
        }
        if !truthy(Some(&eos)) && truthy(Some(&sep)) && tc_truthy(tc) {
            eos = sep.clone();
            put(tc, "eos_token", eos.clone());
        }
        let Some(pp) = tj.get("post_processor").filter(|p| truthy(Some(p))) else {
            return;
        };
        let single = [pp.clone()];
        let processors: &[Json] = match pp.get("processors") {
            Some(Json::Array(list)) => list,
            Some(_) => &[],
            None => &single,
        };
        for processor in processors {
            match processor.get("type").and_then(Json::as_str) {
                Some("ByteLevel") => {
                    set_flag_default(&mut self.add_special_token, "bos", false);
                    set_flag_default(&mut self.add_special_token, "eos", false);
                }
                Some("RobertaProcessing") => {
                    for t in ["bos", "eos", "sep"] {
                        set_flag(&mut self.add_special_token, t, true);
                    }
                    if !truthy(Some(&cls)) && tc_truthy(tc) {
                        cls = first_of(processor.get("cls")).unwrap_or_else(|| bos.clone());
                        put(tc, "cls_token", cls.clone());
                    }
                    if !truthy(Some(&sep)) && tc_truthy(tc) {
                        sep = first_of(processor.get("sep")).unwrap_or_else(|| eos.clone());
                        put(tc, "sep_token", sep.clone());
                    }
                }
                Some("TemplateProcessing") => {
                    let empty = Vec::new();
                    let single = processor
                        .get("single")
                        .and_then(Json::as_array)
                        .unwrap_or(&empty);
                    let pair = processor
                        .get("pair")
                        .and_then(Json::as_array)
                        .unwrap_or(&empty);
                    let mut first: Option<String> = None;
                    let mut last: Option<String> = None;
                    if single.len() > 1 {
                        if let Some(f) = special_id(single.first()) {
                            first = Some(f.to_string());
                            if !tc_truthy(tc) {
                                bos = Json::from(f);
                            } else if !is_one_of(f, &bos, &cls) {
                                if !truthy(Some(&bos)) {
                                    bos = Json::from(f);
                                    put(tc, "bos_token", bos.clone());
                                }
                                if !truthy(Some(&cls)) {
                                    cls = Json::from(f);
                                    put(tc, "cls_token", cls.clone());
                                }
                            }
                            let matches = is_one_of(f, &bos, &cls);
                            set_flag(&mut self.add_special_token, "bos", matches);
                        }
                        if let Some(l) = special_id(single.last()) {
                            last = Some(l.to_string());
                            if !tc_truthy(tc) {
                                eos = Json::from(l);
                            } else if eos.as_str() != Some(l) {
                                if !self.types.iter().any(|t| t == "eot") {
                                    self.types.push("eot".into());
                                    put(tc, "eot_token", eos.clone());
                                } else if !self.types.iter().any(|t| t == "eom") {
                                    self.types.push("eom".into());
                                    put(tc, "eom_token", eos.clone());
                                }
                                eos = Json::from(l);
                                put(tc, "eos_token", eos.clone());
                            }
                            let matches = eos.as_str() == Some(l);
                            set_flag(&mut self.add_special_token, "eos", matches);
                        }
                    }
                    if !pair.is_empty() {
                        let start = usize::from(
                            first.is_some() && special_id(pair.first()) == first.as_deref(),
                        );
                        let stop_trim = usize::from(
                            last.is_some() && special_id(pair.last()) == last.as_deref(),
                        );
                        let end = pair.len().saturating_sub(stop_trim);
                        let inner = if start < end {
                            &pair[start..end]
                        } else {
                            &[][..]
                        };
                        if !inner.is_empty()
                            && sequence_id(inner.first()) == Some("A")
                            && sequence_id(inner.last()) == Some("B")
                            && inner.len() > 2
                        {
                            let middle = &inner[1..inner.len() - 1];
                            let mut add_sep = false;
                            if let Some(s) = special_id(middle.first()) {
                                if is_one_of(s, &sep, &eos) && last.is_none() {
                                    add_sep = true;
                                }
                            }
                            if middle.len() == 2 {
                                if let Some(s) = special_id(middle.get(1)) {
                                    if is_one_of(s, &sep, &eos) {
                                        add_sep = true;
                                    }
                                }
                            }
                            set_flag(&mut self.add_special_token, "sep", add_sep);
                            if add_sep && !truthy(Some(&sep)) && tc_truthy(tc) {
                                put(tc, "sep_token", eos.clone());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn load_chat_template(
        &mut self,
        dir: &Path,
        tc: &Map<String, Json>,
    ) -> Result<(), ConvertError> {
        let jinja = dir.join("chat_template.jinja");
        let json = dir.join("chat_template.json");
        let mut alt: Option<Json> = None;
        if jinja.is_file() {
            let text = read_text_mode(&jinja)?;
            let extra_dir = dir.join("additional_chat_templates");
            let mut extra = Vec::new();
            if extra_dir.is_dir() {
                let rd =
                    std::fs::read_dir(&extra_dir).map_err(|e| ConvertError::io(&extra_dir, e))?;
                for entry in rd {
                    let entry = entry.map_err(|e| ConvertError::io(&extra_dir, e))?;
                    let p = entry.path();
                    if p.extension().is_some_and(|x| x == "jinja") {
                        extra.push(p);
                    }
                }
            }
            if extra.is_empty() {
                alt = Some(Json::String(text));
            } else {
                // Python's glob order is the directory's; sort for a stable result.
                extra.sort();
                let mut list = vec![serde_json::json!({"name": "default", "template": text})];
                for p in extra {
                    let stem = p
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    list.push(serde_json::json!({"name": stem, "template": read_text_mode(&p)?}));
                }
                alt = Some(Json::Array(list));
            }
        } else if json.is_file() {
            alt = read_json(&json)?.get("chat_template").cloned();
        }
        // `tokenizer_config.get('chat_template', alt)`: a present key wins even when null.
        let chosen = match tc.get("chat_template") {
            Some(v) => Some(v.clone()),
            None => alt,
        };
        self.chat_template = match chosen {
            Some(Json::String(s)) => Some(ChatTemplate::One(s)),
            Some(Json::Array(a)) => Some(ChatTemplate::Named(a)),
            // null, or a bad type (the reference warns and ignores it)
            _ => None,
        };
        Ok(())
    }

    fn load_config_json(&mut self, dir: &ModelDir) -> Result<(), ConvertError> {
        let Some(config) = dir.config_if_present()? else {
            return Ok(());
        };
        let types = self.types.clone();
        for typ in &types {
            let k = format!("{typ}_token_id");
            let mut v = config.get(&k).filter(|v| !v.is_null());
            if v.is_none() {
                v = config.get("text_config").and_then(|t| t.get(&k));
            }
            self.set_special_json(typ, v)?;
        }
        Ok(())
    }

    fn load_merges_txt(&mut self, dir: &Path) -> Result<(), ConvertError> {
        let path = dir.join("merges.txt");
        if !path.is_file() {
            return Ok(());
        }
        let text = read_text(&path)?;
        self.merges = parse_merges_txt(&text);
        Ok(())
    }

    /// `add_to_gguf`.
    pub fn add_to(&self, kv: &mut Kv) -> Result<(), ConvertError> {
        if !self.merges.is_empty() {
            kv.array(key::MERGES, strings(self.merges.iter().cloned()));
        }
        for (typ, id) in &self.special_token_ids {
            let k = match typ.as_str() {
                "bos" => keys::tokenizer::BOS_ID,
                "eos" => keys::tokenizer::EOS_ID,
                "unk" => keys::tokenizer::UNK_ID,
                "sep" => keys::tokenizer::SEP_ID,
                "pad" => keys::tokenizer::PAD_ID,
                "mask" => keys::tokenizer::MASK_ID,
                "eot" => keys::tokenizer::EOT_ID,
                "eom" => keys::tokenizer::EOM_ID,
                _ => continue, // no writer method: skipped with a warning upstream
            };
            kv.u32(k, *id);
        }
        for (typ, v) in &self.add_special_token {
            let k = match typ.as_str() {
                "bos" => keys::tokenizer::ADD_BOS,
                "eos" => keys::tokenizer::ADD_EOS,
                "sep" => keys::tokenizer::ADD_SEP,
                _ => continue,
            };
            kv.bool(k, *v);
        }
        match &self.chat_template {
            None => {}
            Some(ChatTemplate::One(s)) => kv.string(key::CHAT_TEMPLATE, s),
            Some(ChatTemplate::Named(list)) => write_named_templates(kv, list)?,
        }
        if let Some(v) = &self.lowercase {
            if !v.is_null() {
                kv.bool(key::LOWERCASE, truthy(Some(v)));
            }
        }
        if let Some(v) = &self.strip_accents {
            if !v.is_null() {
                kv.bool(key::STRIP_ACCENTS, truthy(Some(v)));
            }
        }
        Ok(())
    }
}

/// A file as Python's text mode reads it (universal newlines: CRLF and CR become LF).
fn read_text_mode(path: &Path) -> Result<String, ConvertError> {
    Ok(read_text(path)?.replace("\r\n", "\n").replace('\r', "\n"))
}

fn first_of(v: Option<&Json>) -> Option<Json> {
    v.and_then(Json::as_array).and_then(|a| a.first()).cloned()
}

/// `add_chat_template` with a list: one `tokenizer.chat_template.<name>` per named template,
/// then `tokenizer.chat_templates` (gguf-py builds it from a set, so its order is arbitrary;
/// here it is first-appearance order), then the `default` template.
pub(super) fn write_named_templates(kv: &mut Kv, list: &[Json]) -> Result<(), ConvertError> {
    let mut default = None;
    let mut names: Vec<String> = Vec::new();
    for choice in list {
        let obj = choice.as_object().ok_or_else(|| {
            ConvertError::Other("chat_template list entry is not an object".into())
        })?;
        let name = match obj.get("name") {
            None => "",
            Some(Json::String(s)) => s.as_str(),
            Some(_) => {
                return Err(ConvertError::Other(
                    "chat_template list entry has a non-string name".into(),
                ))
            }
        };
        let name: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let template = match obj.get("template") {
            None | Some(Json::Null) => continue,
            Some(Json::String(s)) => s,
            Some(_) => {
                return Err(ConvertError::Other(format!(
                    "chat_template '{name}' is not a string"
                )))
            }
        };
        if name.is_empty() {
            continue;
        }
        if name == "default" {
            default = Some(template.clone());
        } else {
            if !names.contains(&name) {
                names.push(name.clone());
            }
            kv.string(&format!("{}.{name}", key::CHAT_TEMPLATE), template);
        }
    }
    if !names.is_empty() {
        kv.array(key::CHAT_TEMPLATES, strings(names));
    }
    if let Some(d) = default {
        kv.string(key::CHAT_TEMPLATE, &d);
    }
    Ok(())
}

/// Python's `str.isspace` for one character (Rust's `is_whitespace` plus U+001C..U+001F).
pub(crate) fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `_try_load_merges_txt`: an optional `#` header line, blank lines skipped, entries that do not
/// split into exactly two whitespace-separated parts ignored.
pub(crate) fn parse_merges_txt(text: &str) -> Vec<String> {
    // Python text mode: universal newlines.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines = text.split_inclusive('\n').peekable();
    if let Some(first) = lines.peek() {
        if first.trim_matches(py_space).starts_with('#') {
            lines.next();
        }
    }
    let mut out = Vec::new();
    for line in lines {
        let line = line.trim_matches(py_space);
        if line.is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.split(py_space).filter(|p| !p.is_empty()).collect();
        if parts.len() != 2 {
            continue;
        }
        out.push(format!("{} {}", parts[0], parts[1]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_txt() {
        let t = "#version: 0.2\nĠ t\n\n a b \nbad\nx y z\r\nh e";
        assert_eq!(parse_merges_txt(t), vec!["Ġ t", "a b", "h e"]);
        assert_eq!(parse_merges_txt("a b\nc d"), vec!["a b", "c d"]);
    }

    #[test]
    fn named_templates() {
        let mut kv = Kv::new();
        let list = vec![
            serde_json::json!({"name": "tool use", "template": "T"}),
            serde_json::json!({"name": "default", "template": "D"}),
            serde_json::json!({"name": "rag", "template": null}),
        ];
        write_named_templates(&mut kv, &list).unwrap();
        let keys: Vec<String> = kv.into_vec().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            vec![
                "tokenizer.chat_template.tool_use",
                "tokenizer.chat_templates",
                "tokenizer.chat_template"
            ]
        );
    }
}
