//! Editing a GGUF file's metadata without touching its tensors, with the results gguf-py's
//! `gguf_new_metadata.py` (a copy with new metadata) and `gguf_set_metadata.py` (one scalar
//! changed in place) give.
//!
//! ```
//! use ggufkit::edit::{apply, ChatTemplate, MetadataEdits};
//! use ggufkit::gguf::{Metadata, Value};
//!
//! let mut md = Metadata::new();
//! md.set("general.architecture", "llama");
//! md.set("general.name", "old");
//! md.set("tokenizer.chat_template", "{{ old }}");
//! let mut edits = MetadataEdits::default();
//! edits.set("general.name", Value::from("new"));
//! edits.chat_template = Some(ChatTemplate::One("{{ new }}".into()));
//! let out = apply(&md, &edits).unwrap();
//! assert_eq!(out.get_str("general.name").unwrap(), "new");
//! // The old template is dropped where it stood; the new one follows the copied keys.
//! let keys: Vec<&str> = out.iter().map(|(k, _)| k).collect();
//! assert_eq!(keys, ["general.architecture", "general.name", "tokenizer.chat_template"]);
//! ```

pub mod copy;
pub mod inplace;

use crate::gguf::keys::general::ARCHITECTURE;
use crate::gguf::keys::tokenizer::{CHAT_TEMPLATE, CHAT_TEMPLATES};
use crate::gguf::{ArrayValue, Metadata, StringArray, Value};

/// A new chat template: one template, or named ones (`[{"name": …, "template": …}]`, as in a
/// `tokenizer_config.json`), where the one named `default` is the main template.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatTemplate {
    /// `tokenizer.chat_template`.
    One(String),
    /// `(name, template)` pairs.
    Named(Vec<(String, String)>),
}

impl ChatTemplate {
    /// A template given as text: a JSON list of `{name, template}` objects when it starts
    /// with `[` (as gguf_new_metadata.py reads `--chat-template`), else the template itself.
    pub fn from_text(text: &str) -> Result<ChatTemplate, EditError> {
        if !text.starts_with('[') {
            return Ok(ChatTemplate::One(text.to_string()));
        }
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| EditError::TemplateJson(e.to_string()))?;
        ChatTemplate::from_json(&v)
    }

    /// A template from JSON: a string, or a list of `{name, template}` objects (items without
    /// a name or a template are skipped, as gguf-py skips them).
    pub fn from_json(v: &serde_json::Value) -> Result<ChatTemplate, EditError> {
        match v {
            serde_json::Value::String(s) => Ok(ChatTemplate::One(s.clone())),
            serde_json::Value::Array(items) => {
                let mut named = Vec::new();
                for item in items {
                    let name = item.get("name").and_then(|n| n.as_str()).unwrap_or("");
                    let Some(template) = item.get("template").and_then(|t| t.as_str()) else {
                        continue;
                    };
                    named.push((name.to_string(), template.to_string()));
                }
                Ok(ChatTemplate::Named(named))
            }
            _ => Err(EditError::TemplateJson(
                "a chat template must be a string or a list of {name, template} objects".into(),
            )),
        }
    }
}

/// Why an edit cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EditError {
    /// The input has no `general.architecture` (gguf-py cannot write a file without one).
    #[error("the input has no general.architecture")]
    NoArchitecture,
    /// A `--chat-template` that starts with `[` is not the JSON it must be.
    #[error("chat template JSON: {0}")]
    TemplateJson(String),
    /// `set` names a key the file does not have.
    #[error("key '{0}' not found")]
    NoSuchKey(String),
    /// `set` names a key that is not a single number or boolean.
    #[error("key '{key}' holds {found}; only numbers and booleans can be set in place")]
    NotScalar {
        /// The key.
        key: String,
        /// What it holds.
        found: String,
    },
    /// `set` got a value its key's type cannot hold.
    #[error("'{value}' is not a valid {ty} for key '{key}'")]
    BadValue {
        /// The key.
        key: String,
        /// Its type.
        ty: String,
        /// The value given.
        value: String,
    },
}

/// The edits of one `gguf_new_metadata.py` run.
#[derive(Debug, Clone, Default)]
pub struct MetadataEdits {
    /// New or changed keys, in the order first given (a key given twice keeps its first place
    /// and its last value).
    pub set: Vec<(String, Value)>,
    /// A new chat template (every old `tokenizer.chat_template*` key is dropped).
    pub chat_template: Option<ChatTemplate>,
    /// Keys not to copy.
    pub remove: Vec<String>,
}

impl MetadataEdits {
    /// Sets `key` to `value`.
    pub fn set(&mut self, key: &str, value: Value) {
        match self.set.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.set.push((key.to_string(), value)),
        }
    }
}

/// The metadata gguf_new_metadata.py writes for `input` and `edits`: `general.architecture`
/// first; then every other key of the input in order (a changed key in its old place with its
/// new value; removed keys and, when a new template is given, old chat templates left out);
/// then the new chat template(s); then the new keys the input did not have, in order.
pub fn apply(input: &Metadata, edits: &MetadataEdits) -> Result<Metadata, EditError> {
    let arch = input.get(ARCHITECTURE).ok_or(EditError::NoArchitecture)?;
    let mut out = Metadata::new();
    out.set(ARCHITECTURE, arch.clone());
    let mut pending: Vec<&(String, Value)> = edits.set.iter().collect();
    for (key, value) in input.iter() {
        if key == ARCHITECTURE
            || (edits.chat_template.is_some() && key.starts_with(CHAT_TEMPLATE))
            || edits.remove.iter().any(|r| r == key)
        {
            continue;
        }
        match pending.iter().position(|(k, _)| k == key) {
            Some(i) => out.set(key, pending.remove(i).1.clone()),
            None => out.set(key, value.clone()),
        }
    }
    if let Some(t) = &edits.chat_template {
        add_chat_template(&mut out, t);
    }
    for (key, value) in pending {
        out.set(key.as_str(), value.clone());
    }
    Ok(out)
}

/// gguf-py's `add_chat_template`: empty templates are not written; names keep only ASCII
/// letters and digits (others become `_`); named templates come first, then the list of
/// their names, then the `default` one as the main template.
fn add_chat_template(out: &mut Metadata, template: &ChatTemplate) {
    let main = match template {
        ChatTemplate::One(t) => Some(t.as_str()),
        ChatTemplate::Named(items) => {
            let mut default = None;
            let mut names: Vec<String> = Vec::new();
            for (name, text) in items {
                let name: String = name
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                if name.is_empty() {
                    continue;
                }
                if name == "default" {
                    default = Some(text.as_str());
                    continue;
                }
                if !names.contains(&name) {
                    names.push(name.clone());
                }
                if !text.is_empty() {
                    out.set(format!("{CHAT_TEMPLATE}.{name}"), text.as_str());
                }
            }
            if !names.is_empty() {
                // gguf-py writes the names from a Python set: with two or more their order
                // varies from run to run; here it is the order given.
                let list: StringArray = names.iter().map(String::as_str).collect();
                out.set(CHAT_TEMPLATES, Value::Array(ArrayValue::String(list)));
            }
            default
        }
    };
    if let Some(t) = main.filter(|t| !t.is_empty()) {
        out.set(CHAT_TEMPLATE, t);
    }
}

/// `gguf_set_metadata.py KEY VALUE`: the value `text` parsed as the type `key` already has
/// (an integer, a float, or a boolean, which, as numpy parses it, is true for any non-empty
/// text). Returns `None` when the key already holds that value.
pub fn set_scalar(md: &Metadata, key: &str, text: &str) -> Result<Option<Value>, EditError> {
    let old = md
        .get(key)
        .ok_or_else(|| EditError::NoSuchKey(key.to_string()))?;
    let bad = || EditError::BadValue {
        key: key.to_string(),
        ty: old.value_type().to_string(),
        value: text.to_string(),
    };
    let int = |t: &str| t.trim().parse::<i128>().map_err(|_| bad());
    let new = match old {
        Value::U8(_) => Value::U8(int(text)?.try_into().map_err(|_| bad())?),
        Value::I8(_) => Value::I8(int(text)?.try_into().map_err(|_| bad())?),
        Value::U16(_) => Value::U16(int(text)?.try_into().map_err(|_| bad())?),
        Value::I16(_) => Value::I16(int(text)?.try_into().map_err(|_| bad())?),
        Value::U32(_) => Value::U32(int(text)?.try_into().map_err(|_| bad())?),
        Value::I32(_) => Value::I32(int(text)?.try_into().map_err(|_| bad())?),
        Value::U64(_) => Value::U64(int(text)?.try_into().map_err(|_| bad())?),
        Value::I64(_) => Value::I64(int(text)?.try_into().map_err(|_| bad())?),
        Value::F32(_) => Value::F32(text.trim().parse().map_err(|_| bad())?),
        Value::F64(_) => Value::F64(text.trim().parse().map_err(|_| bad())?),
        Value::Bool(_) => Value::Bool(!text.is_empty()),
        other => {
            return Err(EditError::NotScalar {
                key: key.to_string(),
                found: other.value_type().to_string(),
            })
        }
    };
    Ok((&new != old).then_some(new))
}
