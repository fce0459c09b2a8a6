//! GGUF metadata values: the 13 value types, typed arrays, and byte strings.

use std::fmt;

use super::ByteOrder;

/// A GGUF value type id (the u32 stored before every value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ValueType {
    /// u8
    U8 = 0,
    /// i8
    I8 = 1,
    /// u16
    U16 = 2,
    /// i16
    I16 = 3,
    /// u32
    U32 = 4,
    /// i32
    I32 = 5,
    /// f32
    F32 = 6,
    /// bool, one byte
    Bool = 7,
    /// length-prefixed UTF-8 (not validated by llama.cpp)
    String = 8,
    /// typed array
    Array = 9,
    /// u64 (GGUF v2+)
    U64 = 10,
    /// i64 (GGUF v2+)
    I64 = 11,
    /// f64 (GGUF v2+)
    F64 = 12,
}

impl ValueType {
    /// The value type with id `id`.
    pub fn from_id(id: u32) -> Option<ValueType> {
        use ValueType::*;
        Some(match id {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            _ => return None,
        })
    }

    /// The name gguf-py uses (`UINT32`, `FLOAT32`, `STRING`, …), as in manifests.
    pub fn name(self) -> &'static str {
        use ValueType::*;
        match self {
            U8 => "UINT8",
            I8 => "INT8",
            U16 => "UINT16",
            I16 => "INT16",
            U32 => "UINT32",
            I32 => "INT32",
            F32 => "FLOAT32",
            Bool => "BOOL",
            String => "STRING",
            Array => "ARRAY",
            U64 => "UINT64",
            I64 => "INT64",
            F64 => "FLOAT64",
        }
    }

    /// Parses a name as used by `--override-kv` (`int`, `float`, `bool`, `str`) or a gguf-py
    /// name (`UINT32`, …), case-insensitively.
    pub fn from_name(name: &str) -> Option<ValueType> {
        let all = [
            ValueType::U8,
            ValueType::I8,
            ValueType::U16,
            ValueType::I16,
            ValueType::U32,
            ValueType::I32,
            ValueType::F32,
            ValueType::Bool,
            ValueType::String,
            ValueType::Array,
            ValueType::U64,
            ValueType::I64,
            ValueType::F64,
        ];
        all.into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Fixed encoded size in bytes of a scalar of this type, `None` for strings and arrays.
    pub fn scalar_size(self) -> Option<usize> {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => Some(1),
            U16 | I16 => Some(2),
            U32 | I32 | F32 => Some(4),
            U64 | I64 | F64 => Some(8),
            String | Array => None,
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A GGUF string: bytes that are UTF-8 in every sane file, kept as bytes so that a file
/// whose strings are not UTF-8 still round-trips exactly.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct GgufString(pub Vec<u8>);

impl GgufString {
    /// The string, if it is valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The string with invalid UTF-8 replaced (for display).
    pub fn to_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for GgufString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_lossy(), f)
    }
}

impl From<&str> for GgufString {
    fn from(s: &str) -> Self {
        GgufString(s.as_bytes().to_vec())
    }
}

impl From<String> for GgufString {
    fn from(s: String) -> Self {
        GgufString(s.into_bytes())
    }
}

/// A borrowed GGUF string (an item of a [`StringArray`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct GgufStr<'a>(pub &'a [u8]);

impl<'a> GgufStr<'a> {
    /// The string, if it is valid UTF-8.
    pub fn as_str(&self) -> Option<&'a str> {
        std::str::from_utf8(self.0).ok()
    }

    /// The string with invalid UTF-8 replaced (for display).
    pub fn to_lossy(&self) -> std::borrow::Cow<'a, str> {
        String::from_utf8_lossy(self.0)
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// An owned copy.
    pub fn to_owned(&self) -> GgufString {
        GgufString(self.0.to_vec())
    }
}

impl fmt::Debug for GgufStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_lossy(), f)
    }
}

/// The items of a GGUF string array, stored compactly: all bytes in one buffer plus where
/// each item ends. A vocabulary of 150k tokens is two allocations, and a hostile array of
/// millions of empty strings costs 8 bytes an item (what the file spends on it), not a
/// separate heap string each.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct StringArray {
    bytes: Vec<u8>,
    ends: Vec<u64>,
}

impl StringArray {
    /// An empty array.
    pub fn new() -> StringArray {
        StringArray::default()
    }

    /// An empty array with room for `items` items of `bytes` bytes in all.
    pub fn with_capacity(items: usize, bytes: usize) -> StringArray {
        StringArray {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(items),
        }
    }

    /// Appends an item.
    pub fn push(&mut self, item: &[u8]) {
        self.bytes.extend_from_slice(item);
        self.ends.push(self.bytes.len() as u64);
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are no items.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Item `i`.
    pub fn get(&self, i: usize) -> Option<GgufStr<'_>> {
        let end = *self.ends.get(i)? as usize;
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] as usize,
        };
        Some(GgufStr(&self.bytes[start..end]))
    }

    /// The items in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = GgufStr<'_>> + '_ {
        (0..self.len()).map(|i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
            GgufStr(&self.bytes[start..self.ends[i] as usize])
        })
    }
}

impl fmt::Debug for StringArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl FromIterator<GgufString> for StringArray {
    fn from_iter<I: IntoIterator<Item = GgufString>>(items: I) -> Self {
        let mut out = StringArray::new();
        for s in items {
            out.push(&s.0);
        }
        out
    }
}

impl<'a> FromIterator<&'a str> for StringArray {
    fn from_iter<I: IntoIterator<Item = &'a str>>(items: I) -> Self {
        let mut out = StringArray::new();
        for s in items {
            out.push(s.as_bytes());
        }
        out
    }
}

impl From<Vec<GgufString>> for StringArray {
    fn from(items: Vec<GgufString>) -> Self {
        items.into_iter().collect()
    }
}

/// The items of a GGUF array, stored typed.
#[derive(Debug, Clone, PartialEq)]
pub enum ArrayValue {
    /// UINT8 items
    U8(Vec<u8>),
    /// INT8 items
    I8(Vec<i8>),
    /// UINT16 items
    U16(Vec<u16>),
    /// INT16 items
    I16(Vec<i16>),
    /// UINT32 items
    U32(Vec<u32>),
    /// INT32 items
    I32(Vec<i32>),
    /// FLOAT32 items
    F32(Vec<f32>),
    /// BOOL items
    Bool(Vec<bool>),
    /// STRING items
    String(StringArray),
    /// nested arrays (allowed by the spec, rejected by llama.cpp)
    Array(Vec<ArrayValue>),
    /// UINT64 items
    U64(Vec<u64>),
    /// INT64 items
    I64(Vec<i64>),
    /// FLOAT64 items
    F64(Vec<f64>),
}

impl ArrayValue {
    /// The element type.
    pub fn elem_type(&self) -> ValueType {
        match self {
            ArrayValue::U8(_) => ValueType::U8,
            ArrayValue::I8(_) => ValueType::I8,
            ArrayValue::U16(_) => ValueType::U16,
            ArrayValue::I16(_) => ValueType::I16,
            ArrayValue::U32(_) => ValueType::U32,
            ArrayValue::I32(_) => ValueType::I32,
            ArrayValue::F32(_) => ValueType::F32,
            ArrayValue::Bool(_) => ValueType::Bool,
            ArrayValue::String(_) => ValueType::String,
            ArrayValue::Array(_) => ValueType::Array,
            ArrayValue::U64(_) => ValueType::U64,
            ArrayValue::I64(_) => ValueType::I64,
            ArrayValue::F64(_) => ValueType::F64,
        }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        match self {
            ArrayValue::U8(v) => v.len(),
            ArrayValue::I8(v) => v.len(),
            ArrayValue::U16(v) => v.len(),
            ArrayValue::I16(v) => v.len(),
            ArrayValue::U32(v) => v.len(),
            ArrayValue::I32(v) => v.len(),
            ArrayValue::F32(v) => v.len(),
            ArrayValue::Bool(v) => v.len(),
            ArrayValue::String(v) => v.len(),
            ArrayValue::Array(v) => v.len(),
            ArrayValue::U64(v) => v.len(),
            ArrayValue::I64(v) => v.len(),
            ArrayValue::F64(v) => v.len(),
        }
    }

    /// True when there are no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The canonical little-endian encoding of the items (what GGUF stores after the array's
    /// type and count; strings with their u64 length prefix, nested arrays with their header).
    pub fn encode_items(&self, out: &mut Vec<u8>) {
        self.encode_items_in(out, ByteOrder::Little)
    }

    /// [`Self::encode_items`] in byte order `o` (gguf-py's `--bigendian` writer).
    pub fn encode_items_in(&self, out: &mut Vec<u8>, o: ByteOrder) {
        match self {
            ArrayValue::U8(v) => out.extend_from_slice(v),
            ArrayValue::I8(v) => out.extend(v.iter().map(|x| *x as u8)),
            ArrayValue::U16(v) => v.iter().for_each(|x| o.put(out, x.to_le_bytes())),
            ArrayValue::I16(v) => v.iter().for_each(|x| o.put(out, x.to_le_bytes())),
            ArrayValue::U32(v) => v.iter().for_each(|x| o.put(out, x.to_le_bytes())),
            ArrayValue::I32(v) => v.iter().for_each(|x| o.put(out, x.to_le_bytes())),
            ArrayValue::F32(v) => v.iter().for_each(|x| o.put(out, x.to_le_bytes())),
            ArrayValue::Bool(v) => out.extend(v.iter().map(|b| *b as u8)),
            ArrayValue::String(v) => v.iter().for_each(|s| {
                o.put(out, (s.0.len() as u64).to_le_bytes());
                out.extend_from_slice(s.0);
            }),
            ArrayValue::Array(v) => v.iter().for_each(|a| {
                o.put(out, (a.elem_type() as u32).to_le_bytes());
                o.put(out, (a.len() as u64).to_le_bytes());
                a.encode_items_in(out, o);
            }),
            ArrayValue::U64(v) => v.iter().for_each(|x| o.put(out, x.to_le_bytes())),
            ArrayValue::I64(v) => v.iter().for_each(|x| o.put(out, x.to_le_bytes())),
            ArrayValue::F64(v) => v.iter().for_each(|x| o.put(out, x.to_le_bytes())),
        }
    }
}

/// One metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// UINT8
    U8(u8),
    /// INT8
    I8(i8),
    /// UINT16
    U16(u16),
    /// INT16
    I16(i16),
    /// UINT32
    U32(u32),
    /// INT32
    I32(i32),
    /// FLOAT32
    F32(f32),
    /// BOOL
    Bool(bool),
    /// STRING
    String(GgufString),
    /// ARRAY
    Array(ArrayValue),
    /// UINT64
    U64(u64),
    /// INT64
    I64(i64),
    /// FLOAT64
    F64(f64),
}

impl Value {
    /// The value type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }

    /// The value as a signed 128-bit integer, for any integer type (what llama.cpp tolerates
    /// when a key's integer width differs from the one it expects).
    pub fn as_int(&self) -> Option<i128> {
        Some(match *self {
            Value::U8(v) => v as i128,
            Value::I8(v) => v as i128,
            Value::U16(v) => v as i128,
            Value::I16(v) => v as i128,
            Value::U32(v) => v as i128,
            Value::I32(v) => v as i128,
            Value::U64(v) => v as i128,
            Value::I64(v) => v as i128,
            _ => return None,
        })
    }

    /// The value as f64, for FLOAT32 and FLOAT64.
    pub fn as_float(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v as f64),
            Value::F64(v) => Some(v),
            _ => None,
        }
    }

    /// The string, for valid UTF-8 STRING values.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => s.as_str(),
            _ => None,
        }
    }

    /// Encodes the value (without its type id) in GGUF v3 little-endian form.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_in(out, ByteOrder::Little)
    }

    /// [`Self::encode`] in byte order `o` (gguf-py's `--bigendian` writer).
    pub fn encode_in(&self, out: &mut Vec<u8>, o: ByteOrder) {
        match self {
            Value::U8(v) => out.push(*v),
            Value::I8(v) => out.push(*v as u8),
            Value::U16(v) => o.put(out, v.to_le_bytes()),
            Value::I16(v) => o.put(out, v.to_le_bytes()),
            Value::U32(v) => o.put(out, v.to_le_bytes()),
            Value::I32(v) => o.put(out, v.to_le_bytes()),
            Value::F32(v) => o.put(out, v.to_le_bytes()),
            Value::Bool(v) => out.push(*v as u8),
            Value::String(s) => {
                o.put(out, (s.0.len() as u64).to_le_bytes());
                out.extend_from_slice(&s.0);
            }
            Value::Array(a) => {
                o.put(out, (a.elem_type() as u32).to_le_bytes());
                o.put(out, (a.len() as u64).to_le_bytes());
                a.encode_items_in(out, o);
            }
            Value::U64(v) => o.put(out, v.to_le_bytes()),
            Value::I64(v) => o.put(out, v.to_le_bytes()),
            Value::F64(v) => o.put(out, v.to_le_bytes()),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s.into())
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::U32(v)
    }
}

impl From<f32> for Value {
    fn from(v: f32) -> Self {
        Value::F32(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
