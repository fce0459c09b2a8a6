//! Ordered GGUF metadata with typed accessors.

use std::collections::HashMap;

use super::value::{ArrayValue, Value, ValueType};

/// Why a metadata lookup failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetadataError {
    /// The key is absent.
    #[error("metadata key '{0}' is missing")]
    Missing(String),
    /// The key holds another type than the accessor reads.
    #[error("metadata key '{key}' has type {found}, expected {expected}")]
    WrongType {
        /// The key.
        key: String,
        /// What the accessor wanted.
        expected: &'static str,
        /// What the file holds.
        found: String,
    },
    /// An integer key's value does not fit the requested width.
    #[error("metadata key '{key}' has value {value}, which does not fit in {expected}")]
    OutOfRange {
        /// The key.
        key: String,
        /// The value found.
        value: i128,
        /// The requested integer type.
        expected: &'static str,
    },
}

/// Key → value pairs in file order. Setting an existing key replaces its value in place
/// (gguf-py's behaviour); [`Metadata::set_last`] moves it to the end instead (gguf.cpp's).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metadata {
    entries: Vec<(String, Value)>,
    index: HashMap<String, usize>,
}

macro_rules! int_getter {
    ($name:ident, $opt:ident, $t:ty, $tname:literal) => {
        #[doc = concat!("The value of `key` as ", $tname, ", accepting any integer type whose value fits.")]
        pub fn $name(&self, key: &str) -> Result<$t, MetadataError> {
            self.$opt(key)?
                .ok_or_else(|| MetadataError::Missing(key.to_string()))
        }

        #[doc = concat!("Like the non-`opt` getter, but `Ok(None)` when the key is absent (", $tname, ").")]
        pub fn $opt(&self, key: &str) -> Result<Option<$t>, MetadataError> {
            let Some(v) = self.get(key) else { return Ok(None) };
            let i = v.as_int().ok_or_else(|| MetadataError::WrongType {
                key: key.to_string(),
                expected: $tname,
                found: v.value_type().name().to_string(),
            })?;
            <$t>::try_from(i).map(Some).map_err(|_| MetadataError::OutOfRange {
                key: key.to_string(),
                value: i,
                expected: $tname,
            })
        }
    };
}

impl Metadata {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in order, by value.
    pub fn into_entries(self) -> Vec<(String, Value)> {
        self.entries
    }

    /// Entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.index.get(key).map(|&i| &self.entries[i].1)
    }

    /// True when `key` is present.
    pub fn contains(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    /// Sets `key`; an existing key keeps its position (gguf-py `add_key_value`).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        let key = key.into();
        let value = value.into();
        match self.index.get(&key) {
            Some(&i) => self.entries[i].1 = value,
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }

    /// Sets `key` at the end, removing an earlier entry (gguf.cpp `gguf_set_val_*`).
    pub fn set_last(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        let key = key.into();
        self.remove(&key);
        self.set(key, value);
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.index.remove(key)?;
        let (_, v) = self.entries.remove(i);
        for idx in self.index.values_mut() {
            if *idx > i {
                *idx -= 1;
            }
        }
        Some(v)
    }

    /// Inserts a key read from a file; `false` if it is a duplicate.
    pub(crate) fn push_unique(&mut self, key: String, value: Value) -> bool {
        if self.index.contains_key(&key) {
            return false;
        }
        self.index.insert(key.clone(), self.entries.len());
        self.entries.push((key, value));
        true
    }

    int_getter!(get_u8, get_opt_u8, u8, "u8");
    int_getter!(get_u16, get_opt_u16, u16, "u16");
    int_getter!(get_u32, get_opt_u32, u32, "u32");
    int_getter!(get_i32, get_opt_i32, i32, "i32");
    int_getter!(get_u64, get_opt_u64, u64, "u64");
    int_getter!(get_i64, get_opt_i64, i64, "i64");

    /// The value of `key` as f32 (FLOAT32, or FLOAT64 narrowed).
    pub fn get_f32(&self, key: &str) -> Result<f32, MetadataError> {
        let v = self.require(key)?;
        v.as_float()
            .map(|f| f as f32)
            .ok_or_else(|| wrong(key, "float", v))
    }

    /// The value of `key` as bool.
    pub fn get_bool(&self, key: &str) -> Result<bool, MetadataError> {
        match self.require(key)? {
            Value::Bool(b) => Ok(*b),
            v => Err(wrong(key, "bool", v)),
        }
    }

    /// The value of `key` as a UTF-8 string.
    pub fn get_str(&self, key: &str) -> Result<&str, MetadataError> {
        let v = self.require(key)?;
        v.as_str().ok_or_else(|| wrong(key, "string", v))
    }

    /// The value of `key` as an array, checking its element type.
    pub fn get_array(&self, key: &str, elem: ValueType) -> Result<&ArrayValue, MetadataError> {
        match self.require(key)? {
            Value::Array(a) if a.elem_type() == elem => Ok(a),
            v => Err(MetadataError::WrongType {
                key: key.to_string(),
                expected: "array",
                found: describe_type(v),
            }),
        }
    }

    fn require(&self, key: &str) -> Result<&Value, MetadataError> {
        self.get(key)
            .ok_or_else(|| MetadataError::Missing(key.to_string()))
    }
}

fn wrong(key: &str, expected: &'static str, v: &Value) -> MetadataError {
    MetadataError::WrongType {
        key: key.to_string(),
        expected,
        found: describe_type(v),
    }
}

/// `UINT32`, or `ARRAY[FLOAT32]` for arrays.
pub fn describe_type(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("ARRAY[{}]", a.elem_type().name()),
        v => v.value_type().name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_widths_are_tolerated_with_range_checks() {
        let mut m = Metadata::new();
        m.set("a", Value::U64(7));
        m.set("b", Value::I32(-1));
        m.set("c", "text");
        assert_eq!(m.get_u32("a"), Ok(7));
        assert!(matches!(
            m.get_u32("b"),
            Err(MetadataError::OutOfRange { .. })
        ));
        assert_eq!(m.get_i64("b"), Ok(-1));
        let e = m.get_u32("c").unwrap_err();
        assert_eq!(
            e.to_string(),
            "metadata key 'c' has type STRING, expected u32"
        );
        assert_eq!(m.get_opt_u32("zz"), Ok(None));
        assert!(matches!(m.get_u32("zz"), Err(MetadataError::Missing(_))));
    }

    #[test]
    fn set_keeps_position_and_set_last_moves() {
        let mut m = Metadata::new();
        m.set("x", 1u32);
        m.set("y", 2u32);
        m.set("x", 3u32);
        assert_eq!(m.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["x", "y"]);
        m.set_last("x", 4u32);
        assert_eq!(m.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["y", "x"]);
        assert_eq!(m.get_u32("x"), Ok(4));
        assert_eq!(m.remove("y"), Some(Value::U32(2)));
        assert_eq!(m.get_u32("x"), Ok(4));
    }
}
