//! `gguf-inspect diff`: what differs between two GGUF files.

use serde_json::{json, Value as Json};

use super::change::{describe, ValueChange};
use super::dump::format_value_short;
use crate::gguf::GgufFile;

/// How one tensor present in both files differs.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorDiff {
    /// Tensor name.
    pub name: String,
    /// Types differ (a, b).
    pub ty: Option<(String, String)>,
    /// Shapes differ (a, b).
    pub shape: Option<(Vec<u64>, Vec<u64>)>,
    /// The data bytes differ.
    pub data: bool,
}

/// Everything that differs between two files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileDiff {
    /// Header fields that differ: (field, a, b).
    pub header: Vec<(String, String, String)>,
    /// Keys only in A.
    pub keys_removed: Vec<String>,
    /// Keys only in B.
    pub keys_added: Vec<String>,
    /// Keys whose type or value differ: (key, a, b).
    pub keys_changed: Vec<(String, String, String)>,
    /// The same keys' changes, told readably (in the order of `keys_changed`).
    pub changes: Vec<ValueChange>,
    /// The keys present in both are in another order.
    pub key_order_differs: bool,
    /// Tensors only in A.
    pub tensors_removed: Vec<String>,
    /// Tensors only in B.
    pub tensors_added: Vec<String>,
    /// Tensors present in both that differ.
    pub tensors_changed: Vec<TensorDiff>,
    /// The tensors present in both are in another order.
    pub tensor_order_differs: bool,
}

impl FileDiff {
    /// True when the files have the same content.
    pub fn is_identical(&self) -> bool {
        *self == FileDiff::default()
    }

    /// Human-readable report.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut o = String::new();
        for (f, a, b) in &self.header {
            let _ = writeln!(o, "header {f}: {a} -> {b}");
        }
        for k in &self.keys_removed {
            let _ = writeln!(o, "- key {k}");
        }
        for k in &self.keys_added {
            let _ = writeln!(o, "+ key {k}");
        }
        for ((k, _, _), c) in self.keys_changed.iter().zip(&self.changes) {
            let _ = writeln!(o, "~ key {k}: {}", c.summary);
            for line in &c.unified {
                let _ = writeln!(o, "    {line}");
            }
        }
        if self.key_order_differs {
            let _ = writeln!(o, "~ metadata key order differs");
        }
        for t in &self.tensors_removed {
            let _ = writeln!(o, "- tensor {t}");
        }
        for t in &self.tensors_added {
            let _ = writeln!(o, "+ tensor {t}");
        }
        for t in &self.tensors_changed {
            let mut parts = Vec::new();
            if let Some((a, b)) = &t.ty {
                parts.push(format!("type {a} -> {b}"));
            }
            if let Some((a, b)) = &t.shape {
                parts.push(format!("shape {a:?} -> {b:?}"));
            }
            if t.data {
                parts.push("data differs".to_string());
            }
            let _ = writeln!(o, "~ tensor {}: {}", t.name, parts.join(", "));
        }
        if self.tensor_order_differs {
            let _ = writeln!(o, "~ tensor order differs");
        }
        if o.is_empty() {
            o.push_str("identical\n");
        }
        o
    }

    /// Machine-readable report.
    pub fn to_json(&self) -> Json {
        json!({
            "identical": self.is_identical(),
            "header": self.header.iter().map(|(f, a, b)| json!({"field": f, "a": a, "b": b})).collect::<Vec<_>>(),
            "keys_removed": self.keys_removed,
            "keys_added": self.keys_added,
            "keys_changed": self.keys_changed.iter().zip(&self.changes).map(|((k, a, b), c)| json!({"key": k, "a": a, "b": b, "summary": c.summary, "unified": c.unified})).collect::<Vec<_>>(),
            "key_order_differs": self.key_order_differs,
            "tensors_removed": self.tensors_removed,
            "tensors_added": self.tensors_added,
            "tensors_changed": self.tensors_changed.iter().map(|t| json!({
                "name": t.name,
                "type": t.ty.as_ref().map(|(a, b)| json!([a, b])),
                "shape": t.shape.as_ref().map(|(a, b)| json!([a, b])),
                "data_differs": t.data,
            })).collect::<Vec<_>>(),
            "tensor_order_differs": self.tensor_order_differs,
        })
    }
}

/// Compares two parsed files.
pub fn diff_files(a: &GgufFile, b: &GgufFile) -> FileDiff {
    let mut d = FileDiff::default();
    let mut header = |f: &str, x: String, y: String| {
        if x != y {
            d.header.push((f.to_string(), x, y));
        }
    };
    header("version", a.version.to_string(), b.version.to_string());
    header(
        "alignment",
        a.alignment.to_string(),
        b.alignment.to_string(),
    );
    header(
        "byte_order",
        format!("{:?}", a.byte_order),
        format!("{:?}", b.byte_order),
    );

    for (k, va) in a.metadata.iter() {
        match b.metadata.get(k) {
            None => d.keys_removed.push(k.to_string()),
            Some(vb) if encoded(vb) != encoded(va) || vb.value_type() != va.value_type() => {
                d.changes.push(describe(k, va, vb));
                d.keys_changed.push((
                    k.to_string(),
                    format!(
                        "{} {}",
                        crate::gguf::describe_type(va),
                        format_value_short(va)
                    ),
                    format!(
                        "{} {}",
                        crate::gguf::describe_type(vb),
                        format_value_short(vb)
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    for (k, _) in b.metadata.iter() {
        if !a.metadata.contains(k) {
            d.keys_added.push(k.to_string());
        }
    }
    let common_a: Vec<&str> = a
        .metadata
        .iter()
        .map(|(k, _)| k)
        .filter(|k| b.metadata.contains(k))
        .collect();
    let common_b: Vec<&str> = b
        .metadata
        .iter()
        .map(|(k, _)| k)
        .filter(|k| a.metadata.contains(k))
        .collect();
    d.key_order_differs = common_a != common_b;

    let bmap: std::collections::HashMap<&str, &crate::gguf::TensorInfo> =
        b.tensors.iter().map(|t| (t.name.as_str(), t)).collect();
    for ta in &a.tensors {
        let Some(tb) = bmap.get(ta.name.as_str()) else {
            d.tensors_removed.push(ta.name.clone());
            continue;
        };
        let td = TensorDiff {
            name: ta.name.clone(),
            ty: (ta.ty != tb.ty).then(|| (ta.ty.name().to_string(), tb.ty.name().to_string())),
            shape: (ta.dims != tb.dims).then(|| (ta.dims.clone(), tb.dims.clone())),
            data: a.tensor_data(ta) != b.tensor_data(tb),
        };
        if td.ty.is_some() || td.shape.is_some() || td.data {
            d.tensors_changed.push(td);
        }
    }
    let anames: std::collections::HashSet<&str> =
        a.tensors.iter().map(|t| t.name.as_str()).collect();
    for tb in &b.tensors {
        if !anames.contains(tb.name.as_str()) {
            d.tensors_added.push(tb.name.clone());
        }
    }
    let order_a: Vec<&str> = a
        .tensors
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| bmap.contains_key(n))
        .collect();
    let order_b: Vec<&str> = b
        .tensors
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| anames.contains(n))
        .collect();
    d.tensor_order_differs = order_a != order_b;
    d
}

fn encoded(v: &crate::gguf::Value) -> Vec<u8> {
    let mut out = Vec::new();
    v.encode(&mut out);
    out
}
