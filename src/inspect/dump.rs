//! `gguf-inspect dump`: the header, every KV (arrays abbreviated) and a tensor table.

use std::fmt::Write as _;

use serde_json::{json, Value as Json};

use super::human_bytes;
use crate::gguf::{ArrayValue, GgufFile, Value};
use crate::manifest::kv_entry;

const SHOW_ITEMS: usize = 6;
/// Widest name column: longer names (hostile files have 64 KiB keys) just overflow it.
const MAX_COLUMN: usize = 64;

fn quote(s: &str) -> String {
    let mut q = format!("{s:?}");
    if q.len() > 120 {
        let cut = (0..=100)
            .rev()
            .find(|i| q.is_char_boundary(*i))
            .unwrap_or(0);
        q.truncate(cut);
        q.push_str("…\"");
    }
    q
}

/// One-line rendering of a value (arrays show their first items and the count).
pub fn format_value_short(v: &Value) -> String {
    match v {
        Value::String(s) => quote(&s.to_lossy()),
        Value::F32(x) => format!("{x}"),
        Value::F64(x) => format!("{x}"),
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => {
            let items: Vec<String> = match a {
                ArrayValue::String(v) => v
                    .iter()
                    .take(SHOW_ITEMS)
                    .map(|s| quote(&s.to_lossy()))
                    .collect(),
                ArrayValue::Array(v) => v
                    .iter()
                    .take(SHOW_ITEMS)
                    .map(|x| format!("[{} items]", x.len()))
                    .collect(),
                _ => first_numbers(a),
            };
            let more = if a.len() > items.len() { ", …" } else { "" };
            format!(
                "[{}{more}] ({} × {})",
                items.join(", "),
                a.len(),
                a.elem_type().name()
            )
        }
        v => v.as_int().map(|i| i.to_string()).unwrap_or_default(),
    }
}

fn first_numbers(a: &ArrayValue) -> Vec<String> {
    macro_rules! take {
        ($v:expr) => {
            $v.iter().take(SHOW_ITEMS).map(|x| x.to_string()).collect()
        };
    }
    match a {
        ArrayValue::U8(v) => take!(v),
        ArrayValue::I8(v) => take!(v),
        ArrayValue::U16(v) => take!(v),
        ArrayValue::I16(v) => take!(v),
        ArrayValue::U32(v) => take!(v),
        ArrayValue::I32(v) => take!(v),
        ArrayValue::U64(v) => take!(v),
        ArrayValue::I64(v) => take!(v),
        ArrayValue::F32(v) => take!(v),
        ArrayValue::F64(v) => take!(v),
        ArrayValue::Bool(v) => take!(v),
        ArrayValue::String(_) | ArrayValue::Array(_) => Vec::new(),
    }
}

fn bpw(bytes: u64, elements: u64) -> f64 {
    if elements == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / elements as f64
    }
}

/// The human-readable dump.
pub fn dump_text(file: &GgufFile, path: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{path}");
    let _ = writeln!(
        o,
        "  GGUF v{} {:?}-endian, {} bytes ({}), alignment {}, data at {}",
        file.version,
        file.byte_order,
        file.file_size(),
        human_bytes(file.file_size()),
        file.alignment,
        file.data_offset
    );
    let _ = writeln!(o, "\n  {} metadata keys:", file.metadata.len());
    let width = file
        .metadata
        .iter()
        .map(|(k, _)| k.len())
        .max()
        .unwrap_or(0)
        .min(MAX_COLUMN);
    for (k, v) in file.metadata.iter() {
        let ty = crate::gguf::describe_type(v);
        let _ = writeln!(o, "    {k:width$}  {ty:<16} {}", format_value_short(v));
    }
    let _ = writeln!(o, "\n  {} tensors:", file.tensors.len());
    let nw = file
        .tensors
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(4)
        .clamp(4, MAX_COLUMN);
    let _ = writeln!(
        o,
        "    {:>5}  {:nw$}  {:<8} {:<24} {:>12} {:>12}",
        "#", "name", "type", "shape", "offset", "size"
    );
    let mut total_bytes = 0u64;
    let mut total_elems = 0u64;
    let mut by_type: std::collections::BTreeMap<String, (usize, u64)> = Default::default();
    for (i, t) in file.tensors.iter().enumerate() {
        let shape = format!("{:?}", t.dims);
        let _ = writeln!(
            o,
            "    {i:>5}  {:nw$}  {:<8} {:<24} {:>12} {:>12}",
            t.name,
            t.ty.name(),
            shape,
            t.offset,
            human_bytes(t.nbytes)
        );
        total_bytes += t.nbytes;
        total_elems += t.n_elements();
        let e = by_type.entry(t.ty.name().to_string()).or_default();
        e.0 += 1;
        e.1 += t.nbytes;
    }
    let _ = writeln!(
        o,
        "\n  total: {} parameters, {} of tensor data, {:.3} bits per weight",
        total_elems,
        human_bytes(total_bytes),
        bpw(total_bytes, total_elems)
    );
    let types: Vec<String> = by_type
        .iter()
        .map(|(t, (n, b))| format!("{t}: {n} ({})", human_bytes(*b)))
        .collect();
    let _ = writeln!(o, "  by type: {}", types.join(", "));
    o
}

/// The dump as JSON (KVs in manifest form, tensors with type, shape, offset and size).
pub fn dump_json(file: &GgufFile, path: &str) -> Json {
    let total_bytes: u64 = file.tensors.iter().map(|t| t.nbytes).sum();
    let total_elems: u64 = file.tensors.iter().map(|t| t.n_elements()).sum();
    json!({
        "file": path,
        "version": file.version,
        "byte_order": format!("{:?}", file.byte_order).to_lowercase(),
        "size": file.file_size(),
        "alignment": file.alignment,
        "data_offset": file.data_offset,
        "kv": file.metadata.iter().map(|(k, v)| kv_entry(k, v)).collect::<Vec<_>>(),
        "tensors": file.tensors.iter().map(|t| json!({
            "name": t.name,
            "type": t.ty.name(),
            "shape": t.dims,
            "offset": t.offset,
            "nbytes": t.nbytes,
        })).collect::<Vec<_>>(),
        "n_parameters": total_elems,
        "tensor_bytes": total_bytes,
        "bits_per_weight": bpw(total_bytes, total_elems),
    })
}
