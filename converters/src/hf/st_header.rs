//! The JSON header of a safetensors file, decoded straight into tensor entries.
//!
//! The header is never turned into a `serde_json::Value`: a tree of values costs 16–30 times
//! the bytes that encode it (`[0,0,0,…]` is two bytes per 32-byte value), so a 100 MB header
//! could make the reader hold gigabytes. Here a valid entry costs about what its text does,
//! anything that is not what the format allows (a dtype that is not a string, a shape that
//! is not a short array of non-negative integers, a duplicate name, a `__metadata__` value
//! that is not a string) stops the parse at once with the tensor named, and the values the
//! reader does not use are skipped without being stored. serde_json's nesting limit (128)
//! applies throughout, so deep nesting is an error, not a stack overflow.

use std::collections::HashSet;
use std::fmt;

use serde::de::{
    DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Unexpected, Visitor,
};

/// Most dimensions a tensor may declare (real ones have at most 5 or 6).
pub const MAX_DIMS: usize = 16;

/// One tensor entry as the header states it; the values are checked against the file by
/// the caller.
#[derive(Debug)]
pub(crate) struct RawTensor {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<u64>,
    pub begin: u64,
    pub end: u64,
}

/// Decodes a header (the text after the 8-byte length).
pub(crate) fn parse(text: &str) -> Result<Vec<RawTensor>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let out = de.deserialize_map(Header)?;
    de.end()?;
    Ok(out)
}

struct Header;

impl<'de> Visitor<'de> for Header {
    type Value = Vec<RawTensor>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object of tensor entries")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut metadata_seen = false;
        while let Some(name) = map.next_key::<String>()? {
            if name == "__metadata__" {
                if std::mem::replace(&mut metadata_seen, true) {
                    return Err(A::Error::custom("\"__metadata__\" appears twice"));
                }
                map.next_value_seed(Metadata)?;
                continue;
            }
            if !seen.insert(name.clone()) {
                return Err(A::Error::custom(format!(
                    "tensor '{name}' appears twice (duplicate tensor name)"
                )));
            }
            let t = map.next_value_seed(Entry { name: &name })?;
            out.push(RawTensor { name, ..t });
        }
        Ok(out)
    }
}

/// `__metadata__`: null, or an object whose values are all strings.
struct Metadata;

impl<'de> DeserializeSeed<'de> for Metadata {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Metadata {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"__metadata__\" as an object of strings")
    }

    fn visit_unit<E: Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let v = map.next_value::<Scalar>()?;
            if !matches!(v, Scalar::Str(_)) {
                return Err(A::Error::custom(format!(
                    "\"__metadata__\" value of '{key}' is {}, not a string",
                    v.describe()
                )));
            }
        }
        Ok(())
    }
}

/// A JSON value reduced to what the header's fields can be; containers are skipped, not
/// stored.
enum Scalar {
    Str(String),
    Int(i128),
    Other(String),
}

impl Scalar {
    fn describe(&self) -> String {
        match self {
            Scalar::Str(s) => format!("the string {:?}", truncate(s)),
            Scalar::Int(i) => format!("the integer {i}"),
            Scalar::Other(what) => what.clone(),
        }
    }
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(64) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

impl<'de> serde::Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Other(Unexpected::Bool(v).to_string()))
    }
    fn visit_i64<E: Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Int(v.into()))
    }
    fn visit_u64<E: Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::Int(v.into()))
    }
    fn visit_f64<E: Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Other(Unexpected::Float(v).to_string()))
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Str(v.to_string()))
    }
    fn visit_string<E: Error>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Str(v))
    }
    fn visit_unit<E: Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Other("null".into()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an array".into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an object".into()))
    }
}

/// A list of at most `max` integers (`shape`, `data_offsets`); anything else is an error
/// naming the tensor and field.
struct Ints<'a> {
    tensor: &'a str,
    field: &'static str,
    max: usize,
}

impl<'de> DeserializeSeed<'de> for Ints<'_> {
    type Value = Vec<u64>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<u64>, D::Error> {
        d.deserialize_any(self)
    }
}

impl Ints<'_> {
    fn bad<E: Error>(&self, what: String) -> E {
        E::custom(format!(
            "tensor '{}': \"{}\" {what}",
            self.tensor, self.field
        ))
    }
}

impl<'de> Visitor<'de> for Ints<'_> {
    type Value = Vec<u64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "\"{}\" as an array of integers", self.field)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u64>, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<Scalar>()? {
            if out.len() == self.max {
                return Err(self.bad(format!("has more than {} entries", self.max)));
            }
            match v {
                Scalar::Int(i) => match u64::try_from(i) {
                    Ok(u) => out.push(u),
                    Err(_) => return Err(self.bad(format!("holds the negative number {i}"))),
                },
                other => return Err(self.bad(format!("holds {}", other.describe()))),
            }
        }
        Ok(out)
    }

    fn visit_bool<E: Error>(self, v: bool) -> Result<Vec<u64>, E> {
        Err(self.bad(format!("is {}, not an array", Unexpected::Bool(v))))
    }
    fn visit_i64<E: Error>(self, v: i64) -> Result<Vec<u64>, E> {
        Err(self.bad(format!("is the integer {v}, not an array")))
    }
    fn visit_u64<E: Error>(self, v: u64) -> Result<Vec<u64>, E> {
        Err(self.bad(format!("is the integer {v}, not an array")))
    }
    fn visit_f64<E: Error>(self, v: f64) -> Result<Vec<u64>, E> {
        Err(self.bad(format!("is {}, not an array", Unexpected::Float(v))))
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<Vec<u64>, E> {
        Err(self.bad(format!("is the string {:?}, not an array", truncate(v))))
    }
    fn visit_unit<E: Error>(self) -> Result<Vec<u64>, E> {
        Err(self.bad("is null, not an array".into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<Vec<u64>, A::Error> {
        Err(self.bad("is an object, not an array".into()))
    }
}

/// One tensor entry: an object with `dtype`, `shape` and `data_offsets` (other keys are
/// ignored, as the safetensors crate ignores them).
struct Entry<'a> {
    name: &'a str,
}

impl<'de> DeserializeSeed<'de> for Entry<'_> {
    type Value = RawTensor;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawTensor, D::Error> {
        d.deserialize_any(self)
    }
}

impl Entry<'_> {
    fn bad<E: Error>(&self, what: impl fmt::Display) -> E {
        E::custom(format!("tensor '{}': {what}", self.name))
    }
}

impl<'de> Visitor<'de> for Entry<'_> {
    type Value = RawTensor;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "tensor '{}' as an object", self.name)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawTensor, A::Error> {
        let (mut dtype, mut shape, mut offsets) = (None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "dtype" => match map.next_value::<Scalar>()? {
                    Scalar::Str(s) => dtype = Some(s),
                    other => {
                        return Err(
                            self.bad(format!("\"dtype\" is {}, not a string", other.describe()))
                        )
                    }
                },
                "shape" => {
                    shape = Some(map.next_value_seed(Ints {
                        tensor: self.name,
                        field: "shape",
                        max: MAX_DIMS,
                    })?)
                }
                "data_offsets" => {
                    offsets = Some(map.next_value_seed(Ints {
                        tensor: self.name,
                        field: "data_offsets",
                        max: 2,
                    })?)
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let dtype = dtype.ok_or_else(|| self.bad("no \"dtype\""))?;
        let shape = shape.ok_or_else(|| self.bad("no \"shape\""))?;
        let offsets = offsets.ok_or_else(|| self.bad("no \"data_offsets\""))?;
        let [begin, end] = offsets[..] else {
            return Err(self.bad(format!(
                "\"data_offsets\" has {} entries, not 2",
                offsets.len()
            )));
        };
        Ok(RawTensor {
            name: String::new(),
            dtype,
            shape,
            begin,
            end,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<RawTensor, A::Error> {
        Err(self.bad("the entry is an array, not an object"))
    }
    fn visit_bool<E: Error>(self, _v: bool) -> Result<RawTensor, E> {
        Err(self.bad("the entry is a boolean, not an object"))
    }
    fn visit_i64<E: Error>(self, _v: i64) -> Result<RawTensor, E> {
        Err(self.bad("the entry is a number, not an object"))
    }
    fn visit_u64<E: Error>(self, _v: u64) -> Result<RawTensor, E> {
        Err(self.bad("the entry is a number, not an object"))
    }
    fn visit_f64<E: Error>(self, _v: f64) -> Result<RawTensor, E> {
        Err(self.bad("the entry is a number, not an object"))
    }
    fn visit_str<E: Error>(self, _v: &str) -> Result<RawTensor, E> {
        Err(self.bad("the entry is a string, not an object"))
    }
    fn visit_unit<E: Error>(self) -> Result<RawTensor, E> {
        Err(self.bad("the entry is null, not an object"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_in_file_order_with_unknown_fields_ignored() {
        let h = r#" {"b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "x": [[1]]},
            "__metadata__": {"format": "pt"}, "a": {"shape": [], "dtype": "U8",
            "data_offsets": [8, 9]}} "#;
        let t = parse(h).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].name.as_str(), t[0].shape.as_slice()),
            ("b", &[2u64][..])
        );
        assert_eq!((t[1].name.as_str(), t[1].begin, t[1].end), ("a", 8, 9));
    }

    #[test]
    fn problems_name_the_tensor() {
        for (h, want) in [
            (
                r#"{"a": {"dtype": 1}}"#,
                "tensor 'a': \"dtype\" is the integer 1",
            ),
            (
                r#"{"a": {"dtype": "F32", "shape": [-1]}}"#,
                "negative number -1",
            ),
            (
                r#"{"a": {"dtype": "F32", "shape": [1.5]}}"#,
                "floating point `1.5`",
            ),
            (
                r#"{"a": {"dtype": "F32", "shape": [], "data_offsets": [0]}}"#,
                "1 entries",
            ),
            (r#"{"a": [], "b": 1}"#, "tensor 'a': the entry is an array"),
            (r#"{"a": [], "a": []}"#, "the entry is an array"),
            (
                r#"{"__metadata__": null, "__metadata__": null}"#,
                "appears twice",
            ),
            (
                r#"{"__metadata__": {"k": 1}}"#,
                "value of 'k' is the integer 1",
            ),
            ("[]", "a JSON object of tensor entries"),
        ] {
            let e = parse(h).unwrap_err().to_string();
            assert!(e.contains(want), "{h}: {e}");
        }
    }
}
