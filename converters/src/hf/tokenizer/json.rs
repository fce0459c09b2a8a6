//! JSON helpers: reading the tokenizer files, Python truthiness, and objects in file order
//! (Python's `json.load` keeps key order; `serde_json::Map` sorts without `preserve_order`,
//! which this workspace does not enable).

use std::fmt;
use std::path::Path;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;

use crate::ConvertError;

/// Reads and parses a JSON file.
pub(crate) fn read_json(path: &Path) -> Result<Json, ConvertError> {
    parse_json(path, &read_text(path)?)
}

/// Parses the text of the JSON file at `path` as Python's `json` does (`NaN`, `Infinity`).
pub(crate) fn parse_json(path: &Path, text: &str) -> Result<Json, ConvertError> {
    serde_json::from_str(&crate::hf::config::python_json(text)).map_err(|e| json_error(path, &e))
}

/// Reads a JSON file whose top level is an object, keeping the order of its keys.
pub(crate) fn read_ordered(path: &Path) -> Result<Ordered, ConvertError> {
    let text = read_text(path)?;
    serde_json::from_str(&text).map_err(|e| json_error(path, &e))
}

/// Reads a UTF-8 text file.
pub(crate) fn read_text(path: &Path) -> Result<String, ConvertError> {
    let bytes = ggufkit::mapped::read_input(path).map_err(|e| ConvertError::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| ConvertError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to() as u64,
    })
}

pub(crate) fn json_error(path: &Path, e: &serde_json::Error) -> ConvertError {
    ConvertError::bad_json(path, e)
}

/// Python's `bool(x)` for a JSON value (`None`, `False`, `0`, `""`, `[]`, `{}` are false).
pub(crate) fn truthy(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(Json::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        Some(Json::Object(o)) => !o.is_empty(),
    }
}

/// Python's `isinstance(x, int)` for a JSON value (a JSON bool is an int to Python too).
pub(crate) fn as_py_int(v: &Json) -> Option<i128> {
    match v {
        Json::Bool(b) => Some(i128::from(*b)),
        Json::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        _ => None,
    }
}

/// A JSON object with its entries in file order (a later duplicate key replaces the value of
/// the earlier one in place, as a Python dict does).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Ordered(pub Vec<(String, Json)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut out: Vec<(String, Json)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Json>()? {
                    match out.iter_mut().find(|(ek, _)| *ek == k) {
                        Some(slot) => slot.1 = v,
                        None => out.push((k, v)),
                    }
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The key order of a JSON object: its keys in file order (first occurrence), and for each
/// object-valued key the keys of that object (from its last occurrence, as a Python dict
/// would hold it). Values are skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct KeyOrder {
    /// Top-level keys in file order.
    pub keys: Vec<String>,
    /// Key → the keys of its object value in file order.
    pub nested: Vec<(String, Vec<String>)>,
}

impl KeyOrder {
    /// The keys of the object under `key`, in file order (empty when it is not an object).
    pub fn of(&self, key: &str) -> &[String] {
        self.nested
            .iter()
            .find(|(k, _)| k == key)
            .map_or(&[], |(_, v)| v.as_slice())
    }
}

/// Reads the key order of a JSON file whose top level is an object.
pub(crate) fn read_key_order(path: &Path) -> Result<KeyOrder, ConvertError> {
    key_order(path, &read_text(path)?)
}

/// The key order of the JSON text of the file at `path` (for messages).
pub(crate) fn key_order(path: &Path, text: &str) -> Result<KeyOrder, ConvertError> {
    serde_json::from_str(text).map_err(|e| json_error(path, &e))
}

/// An object's keys in file order, or `None` for any other value.
struct KeysOf(Option<Vec<String>>);

impl<'de> Deserialize<'de> for KeysOf {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeysOf;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeysOf, A::Error> {
                let mut keys: Vec<String> = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
                Ok(KeysOf(Some(keys)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<KeysOf, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(KeysOf(None))
            }
            fn visit_unit<E>(self) -> Result<KeysOf, E> {
                Ok(KeysOf(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<KeysOf, E> {
                Ok(KeysOf(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<KeysOf, E> {
                Ok(KeysOf(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<KeysOf, E> {
                Ok(KeysOf(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<KeysOf, E> {
                Ok(KeysOf(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<KeysOf, E> {
                Ok(KeysOf(None))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for KeyOrder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyOrder;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeyOrder, A::Error> {
                let mut out = KeyOrder::default();
                while let Some(k) = map.next_key::<String>()? {
                    let KeysOf(inner) = map.next_value::<KeysOf>()?;
                    out.nested.retain(|(n, _)| *n != k);
                    if let Some(inner) = inner {
                        out.nested.push((k.clone(), inner));
                    }
                    if !out.keys.contains(&k) {
                        out.keys.push(k);
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// `tokenizer_config.json` as far as its key order matters: the `added_tokens_decoder`
/// object in file order.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct ConfigAddedTokens {
    #[serde(default)]
    pub added_tokens_decoder: Option<Ordered>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_keeps_file_order() {
        let o: Ordered = serde_json::from_str(r#"{"b": 1, "a": 2, "b": 3}"#).unwrap();
        assert_eq!(
            o.0,
            vec![("b".into(), Json::from(3)), ("a".into(), Json::from(2))]
        );
    }

    #[test]
    fn key_order_is_file_order() {
        let o: KeyOrder = serde_json::from_str(
            r#"{"b": 1, "x": {"z": 1, "y": [2]}, "a": [], "b": 3, "x": {"w": {}, "v": 0}}"#,
        )
        .unwrap();
        assert_eq!(o.keys, ["b", "x", "a"]);
        assert_eq!(o.of("x"), ["w", "v"]);
        assert!(o.of("a").is_empty());
    }

    #[test]
    fn python_truthiness() {
        assert!(!truthy(None));
        assert!(!truthy(Some(&Json::from(""))));
        assert!(truthy(Some(&Json::from("x"))));
        assert!(!truthy(Some(&serde_json::json!({}))));
        assert!(truthy(Some(&serde_json::json!({"content": "x"}))));
        assert_eq!(as_py_int(&Json::from(true)), Some(1));
        assert_eq!(as_py_int(&Json::from(1.0)), None);
    }
}
