//! The tokenizer keys as gguf-py's `GGUFWriter` records them: in a [`Metadata`] (insertion
//! order, a second write of a key replaces the value in the first write's position), with
//! the writer's rule that empty strings and empty arrays are not written at all.

use ggufkit::gguf::{ArrayValue, GgufString, Metadata, Value};

/// GGUF token types (`gguf.TokenType`).
pub(crate) mod token_type {
    pub const NORMAL: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const CONTROL: i32 = 3;
    pub const USER_DEFINED: i32 = 4;
    pub const UNUSED: i32 = 5;
    pub const BYTE: i32 = 6;
}

/// Key names (gguf-py `Keys.Tokenizer`).
pub(crate) use ggufkit::gguf::keys::tokenizer as key;

/// Tokenizer keys being written, with gguf-py's `add_*` rules.
#[derive(Debug, Default, Clone)]
pub(crate) struct Kv {
    entries: Metadata,
}

impl Kv {
    pub fn new() -> Self {
        Kv::default()
    }

    /// Sets `key`; an existing key keeps its position.
    pub fn set(&mut self, key: &str, value: Value) {
        self.entries.set(key, value);
    }

    /// `add_string`: an empty string is not written.
    pub fn string(&mut self, key: &str, s: &str) {
        if !s.is_empty() {
            self.set(key, Value::String(s.into()));
        }
    }

    /// `add_array`: an empty array is not written.
    pub fn array(&mut self, key: &str, a: ArrayValue) {
        if !a.is_empty() {
            self.set(key, Value::Array(a));
        }
    }

    /// The value written for `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.get(key)
    }

    pub fn u32(&mut self, key: &str, v: u32) {
        self.set(key, Value::U32(v));
    }

    pub fn bool(&mut self, key: &str, v: bool) {
        self.set(key, Value::Bool(v));
    }

    /// Appends another list with the same rule.
    pub fn extend(&mut self, other: Kv) {
        for (k, v) in other.entries.into_entries() {
            self.set(&k, v);
        }
    }

    pub fn into_vec(self) -> Vec<(String, Value)> {
        self.entries.into_entries()
    }
}

/// A STRING array from UTF-8 strings.
pub(crate) fn strings<I, S>(items: I) -> ArrayValue
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    ArrayValue::String(
        items
            .into_iter()
            .map(|s| GgufString(s.into().into_bytes()))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overwrite_keeps_position_and_empties_are_skipped() {
        let mut kv = Kv::new();
        kv.bool("a", true);
        kv.u32("b", 1);
        kv.bool("a", false);
        kv.string("c", "");
        kv.array("d", ArrayValue::I32(vec![]));
        let v = kv.into_vec();
        assert_eq!(
            v,
            vec![
                ("a".into(), Value::Bool(false)),
                ("b".into(), Value::U32(1))
            ]
        );
    }
}
