//! The GGUF manifest: one JSON object describing a file exactly enough to compare it with
//! llama.cpp's output (format: `testdata/golden/README.md`).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};

use crate::gguf::{ArrayValue, GgufFile, Value};

/// Arrays up to this many items are listed; longer ones are hashed.
const LIST_LIMIT: usize = 16;

/// Hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(64);
    for b in Sha256::digest(bytes) {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn scalar_json(v: &Value) -> Json {
    match v {
        Value::U8(x) => json!(x),
        Value::I8(x) => json!(x),
        Value::U16(x) => json!(x),
        Value::I16(x) => json!(x),
        Value::U32(x) => json!(x),
        Value::I32(x) => json!(x),
        Value::U64(x) => json!(x),
        Value::I64(x) => json!(x),
        Value::F32(x) => json!(*x as f64),
        Value::F64(x) => json!(x),
        Value::Bool(x) => json!(x),
        Value::String(s) => json!(s.to_lossy()),
        Value::Array(_) => unreachable!("arrays are handled by array_json"),
    }
}

fn array_items_json(a: &ArrayValue) -> Vec<Json> {
    match a {
        ArrayValue::U8(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::I8(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::U16(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::I16(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::U32(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::I32(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::U64(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::I64(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::F32(v) => v.iter().map(|x| json!(*x as f64)).collect(),
        ArrayValue::F64(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::Bool(v) => v.iter().map(|x| json!(x)).collect(),
        ArrayValue::String(v) => v.iter().map(|s| json!(s.to_lossy())).collect(),
        ArrayValue::Array(_) => Vec::new(),
    }
}

fn array_json(a: &ArrayValue) -> Json {
    let mut obj = serde_json::Map::new();
    obj.insert("array_type".into(), json!(a.elem_type().name()));
    obj.insert("len".into(), json!(a.len()));
    if a.len() <= LIST_LIMIT && !matches!(a, ArrayValue::Array(_)) {
        obj.insert("values".into(), Json::Array(array_items_json(a)));
    } else {
        let mut bytes = Vec::new();
        a.encode_items(&mut bytes);
        obj.insert("sha256".into(), json!(sha256_hex(&bytes)));
    }
    Json::Object(obj)
}

/// The `[key, type, value]` manifest entry of one KV.
pub fn kv_entry(key: &str, v: &Value) -> Json {
    match v {
        Value::Array(a) => json!([key, "ARRAY", array_json(a)]),
        v => json!([key, v.value_type().name(), scalar_json(v)]),
    }
}

/// The manifest of a parsed file. `name` is the `file` field (the file name by default).
pub fn manifest(file: &GgufFile, path: &Path, name: Option<&str>) -> Json {
    let bytes = file.local_bytes();
    let kv: Vec<Json> = file.metadata.iter().map(|(k, v)| kv_entry(k, v)).collect();
    let tensors: Vec<Json> = file
        .tensors
        .iter()
        .map(|t| {
            json!([
                t.name,
                format!("{:?}", t.ty),
                t.dims,
                t.offset,
                t.nbytes,
                sha256_hex(file.tensor_data(t))
            ])
        })
        .collect();
    let fname = name.map(str::to_string).unwrap_or_else(|| {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let mut m = serde_json::Map::new();
    m.insert("file".into(), json!(fname));
    m.insert("size".into(), json!(bytes.len()));
    m.insert("sha256".into(), json!(sha256_hex(bytes)));
    m.insert("version".into(), json!(file.version));
    m.insert("alignment".into(), json!(file.alignment));
    m.insert("data_offset".into(), json!(file.data_offset));
    m.insert("n_kv".into(), json!(file.metadata.len()));
    m.insert("n_tensors".into(), json!(file.tensors.len()));
    m.insert("kv".into(), Json::Array(kv));
    m.insert("tensors".into(), Json::Array(tensors));
    Json::Object(m)
}

/// Renders a manifest as `gguf_manifest.py` does: one line per KV and per tensor.
pub fn to_pretty(m: &Json) -> String {
    const ORDER: [&str; 10] = [
        "file",
        "size",
        "sha256",
        "version",
        "alignment",
        "data_offset",
        "n_kv",
        "n_tensors",
        "kv",
        "tensors",
    ];
    let mut out = String::from("{\n");
    for (i, k) in ORDER.iter().enumerate() {
        let comma = if i + 1 < ORDER.len() { "," } else { "" };
        let v = &m[*k];
        if let Json::Array(items) = v {
            let _ = writeln!(out, " \"{k}\": [");
            for (j, e) in items.iter().enumerate() {
                let c2 = if j + 1 < items.len() { "," } else { "" };
                let _ = writeln!(out, "  {}{c2}", e);
            }
            let _ = writeln!(out, " ]{comma}");
        } else {
            let _ = writeln!(out, " \"{k}\": {v}{comma}");
        }
    }
    out.push('}');
    out
}

/// Differences between two manifests, ignoring the `file` field: one line each, empty when
/// they agree as JSON values.
pub fn diff_manifests(ours: &Json, golden: &Json) -> Vec<String> {
    let mut d = Vec::new();
    for k in [
        "size",
        "sha256",
        "version",
        "alignment",
        "data_offset",
        "n_kv",
        "n_tensors",
    ] {
        if ours[k] != golden[k] {
            d.push(format!("{k}: ours {} vs golden {}", ours[k], golden[k]));
        }
    }
    for section in ["kv", "tensors"] {
        let empty = Vec::new();
        let a = ours[section].as_array().unwrap_or(&empty);
        let b = golden[section].as_array().unwrap_or(&empty);
        for i in 0..a.len().max(b.len()) {
            match (a.get(i), b.get(i)) {
                (Some(x), Some(y)) if x == y => {}
                (x, y) => d.push(format!(
                    "{section}[{i}]: ours {} vs golden {}",
                    x.map_or("(none)".into(), Json::to_string),
                    y.map_or("(none)".into(), Json::to_string)
                )),
            }
        }
    }
    d
}
