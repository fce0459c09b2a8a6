//! How one metadata value changed, told readably: `old -> new` for scalars, where and how
//! much an array differs, and a unified diff for long or multi-line strings (chat templates).

use super::dump::format_value_short;
use super::textdiff::unified;
use crate::gguf::{describe_type, ArrayValue, Value};

/// Strings up to this many characters, on one line, are shown whole.
const SHORT: usize = 60;

/// Characters shown around the first difference of two long one-line strings.
const AROUND: usize = 40;

/// A changed value: a one-line summary and, for long strings, a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueChange {
    /// `old -> new`, or a description of the difference.
    pub summary: String,
    /// Unified diff lines (long multi-line strings only).
    pub unified: Vec<String>,
}

/// How `a` became `b` for key `key`.
pub fn describe(key: &str, a: &Value, b: &Value) -> ValueChange {
    let plain = |summary: String| ValueChange {
        summary,
        unified: Vec::new(),
    };
    match (a, b) {
        _ if a.value_type() != b.value_type() => plain(format!(
            "{} {} -> {} {}",
            describe_type(a),
            format_value_short(a),
            describe_type(b),
            format_value_short(b)
        )),
        (Value::String(x), Value::String(y)) => strings(key, &x.to_lossy(), &y.to_lossy()),
        (Value::Array(x), Value::Array(y)) => plain(arrays(x, y)),
        _ => plain(format!(
            "{} -> {}",
            format_value_short(a),
            format_value_short(b)
        )),
    }
}

fn quote(s: &str) -> String {
    format!("{s:?}")
}

fn strings(key: &str, a: &str, b: &str) -> ValueChange {
    let one_line = !a.contains('\n') && !b.contains('\n');
    if one_line && a.chars().count() <= SHORT && b.chars().count() <= SHORT {
        return ValueChange {
            summary: format!("{} -> {}", quote(a), quote(b)),
            unified: Vec::new(),
        };
    }
    let (ca, cb) = (a.chars().count(), b.chars().count());
    if one_line {
        // Where they part and meet again, in characters.
        let ac: Vec<char> = a.chars().collect();
        let bc: Vec<char> = b.chars().collect();
        let head = ac.iter().zip(&bc).take_while(|(x, y)| x == y).count();
        let tail = ac[head..]
            .iter()
            .rev()
            .zip(bc[head..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let window = |c: &[char]| -> String {
            let from = head.saturating_sub(AROUND / 2);
            let to = (c.len() - tail + AROUND / 2).min(c.len());
            let mid: String = c[from..to].iter().collect();
            let mid = if to - from > 2 * AROUND {
                let v: Vec<char> = mid.chars().collect();
                let first: String = v[..AROUND].iter().collect();
                let last: String = v[v.len() - AROUND / 2..].iter().collect();
                format!("{first}…{last}")
            } else {
                mid
            };
            format!(
                "{}{}{}",
                if from > 0 { "…" } else { "" },
                quote(&mid),
                if to < c.len() { "…" } else { "" }
            )
        };
        return ValueChange {
            summary: format!(
                "string of {ca} -> {cb} characters, first difference at character {head}: {} -> {}",
                window(&ac),
                window(&bc)
            ),
            unified: Vec::new(),
        };
    }
    let lines = |s: &str| s.strip_suffix('\n').unwrap_or(s).split('\n').count();
    ValueChange {
        summary: format!(
            "string of {} -> {} lines ({ca} -> {cb} characters):",
            lines(a),
            lines(b)
        ),
        unified: unified(a, b, &format!("a/{key}"), &format!("b/{key}")),
    }
}

/// Item `i` of an array, shown short.
fn item(a: &ArrayValue, i: usize) -> Option<String> {
    macro_rules! num {
        ($v:expr) => {
            $v.get(i).map(|x| x.to_string())
        };
    }
    match a {
        ArrayValue::U8(v) => num!(v),
        ArrayValue::I8(v) => num!(v),
        ArrayValue::U16(v) => num!(v),
        ArrayValue::I16(v) => num!(v),
        ArrayValue::U32(v) => num!(v),
        ArrayValue::I32(v) => num!(v),
        ArrayValue::U64(v) => num!(v),
        ArrayValue::I64(v) => num!(v),
        ArrayValue::F32(v) => num!(v),
        ArrayValue::F64(v) => num!(v),
        ArrayValue::Bool(v) => num!(v),
        ArrayValue::String(v) => v.get(i).map(|s| quote(&s.to_lossy())),
        ArrayValue::Array(v) => v.get(i).map(|x| format!("[{} items]", x.len())),
    }
}

/// Item `i` of an array, encoded (for comparing).
fn item_bytes(a: &ArrayValue, i: usize) -> Option<Vec<u8>> {
    macro_rules! le {
        ($v:expr) => {
            $v.get(i).map(|x| x.to_le_bytes().to_vec())
        };
    }
    match a {
        ArrayValue::U8(v) => le!(v),
        ArrayValue::I8(v) => le!(v),
        ArrayValue::U16(v) => le!(v),
        ArrayValue::I16(v) => le!(v),
        ArrayValue::U32(v) => le!(v),
        ArrayValue::I32(v) => le!(v),
        ArrayValue::U64(v) => le!(v),
        ArrayValue::I64(v) => le!(v),
        ArrayValue::F32(v) => le!(v),
        ArrayValue::F64(v) => le!(v),
        ArrayValue::Bool(v) => v.get(i).map(|b| vec![u8::from(*b)]),
        ArrayValue::String(v) => v.get(i).map(|s| s.as_bytes().to_vec()),
        ArrayValue::Array(v) => v.get(i).map(|x| {
            let mut out = Vec::new();
            x.encode_items(&mut out);
            out
        }),
    }
}

fn arrays(a: &ArrayValue, b: &ArrayValue) -> String {
    let shape = |x: &ArrayValue| format!("[{} × {}]", x.len(), x.elem_type().name());
    let mut s = format!("{} -> {}", shape(a), shape(b));
    if a.elem_type() != b.elem_type() {
        return s;
    }
    let common = a.len().min(b.len());
    let differ: Vec<usize> = (0..common)
        .filter(|&i| item_bytes(a, i) != item_bytes(b, i))
        .collect();
    if let Some(&first) = differ.first() {
        s.push_str(&format!(
            ", {} of {common} items differ (first at index {first}: {} -> {})",
            differ.len(),
            item(a, first).unwrap_or_default(),
            item(b, first).unwrap_or_default()
        ));
    }
    if b.len() > a.len() {
        s.push_str(&format!(
            ", {} added at the end (first: {})",
            b.len() - a.len(),
            item(b, common).unwrap_or_default()
        ));
    } else if a.len() > b.len() {
        s.push_str(&format!(
            ", {} removed from the end (first: {})",
            a.len() - b.len(),
            item(a, common).unwrap_or_default()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::StringArray;

    #[test]
    fn scalars_strings_and_arrays() {
        let d = describe("k", &Value::U32(2), &Value::U32(7));
        assert_eq!(d.summary, "2 -> 7");
        let d = describe("k", &Value::U32(2), &Value::I32(7));
        assert!(d.summary.contains("-> "), "{}", d.summary);
        assert_ne!(d.summary, "2 -> 7");
        let d = describe("k", &Value::from("old"), &Value::from("new"));
        assert_eq!(d.summary, "\"old\" -> \"new\"");
        let long_a = format!("{}OLD{}", "x".repeat(100), "y".repeat(100));
        let long_b = format!("{}NEW!{}", "x".repeat(100), "y".repeat(100));
        let d = describe(
            "k",
            &Value::from(long_a.as_str()),
            &Value::from(long_b.as_str()),
        );
        assert!(
            d.summary.starts_with(
                "string of 203 -> 204 characters, first difference at character 100: …\"xxxxxxxxxxxxxxxxxxxxOLD"
            ),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("\"xxxxxxxxxxxxxxxxxxxxNEW!yyyy"),
            "{}",
            d.summary
        );
        let d = describe("t", &Value::from("a\nb\n"), &Value::from("a\nc\n"));
        assert_eq!(d.summary, "string of 2 -> 2 lines (4 -> 4 characters):");
        assert_eq!(
            d.unified,
            ["--- a/t", "+++ b/t", "@@ -1,2 +1,2 @@", " a", "-b", "+c"]
        );
        let arr = |v: &[&str]| {
            let s: StringArray = v.iter().copied().collect();
            Value::Array(ArrayValue::String(s))
        };
        let d = describe("k", &arr(&["a", "b", "c"]), &arr(&["a", "B", "c", "d"]));
        assert_eq!(
            d.summary,
            "[3 × STRING] -> [4 × STRING], 1 of 3 items differ (first at index 1: \"b\" -> \"B\"), 1 added at the end (first: \"d\")"
        );
    }
}
