//! README.md front matter (the model card's YAML header), read as gguf-py's
//! `load_model_card` does: the lines between a leading `---` and the next `---`, with the
//! "Norway problem" patch (`- no` → `- "no"`) and tabs as two spaces.
//!
//! Model cards use a small part of YAML; this reads that part: top-level `key: value`
//! pairs, block sequences (`- item`, including `- key: value` items), flow sequences
//! (`[a, b]`), literal/folded blocks (`|`, `>`), quoted and plain scalars with YAML 1.1
//! resolution (PyYAML's: `yes`/`no`/`on`/`off` are booleans, a float needs a dot). Other
//! nested structures (e.g. `model-index`) are kept only as "present" (`null`), which is all
//! the converter needs of keys it does not read.

use serde_json::{Map, Value as Json};

/// Reads the front matter of `readme`; an empty map when there is none.
pub fn front_matter(readme: &str) -> Map<String, Json> {
    let mut lines = readme.lines();
    if lines.next() != Some("---") {
        return Map::new();
    }
    let mut yaml = String::new();
    for l in lines {
        if l == "---" {
            break;
        }
        yaml.push_str(l);
        yaml.push('\n');
    }
    let yaml = yaml.replace("- no\n", "- \"no\"\n").replace('\t', "  ");
    parse(&yaml)
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start_matches(' ').len()
}

fn is_blank(l: &str) -> bool {
    let t = l.trim();
    t.is_empty() || t.starts_with('#')
}

/// Splits `key: rest` (the key possibly quoted); `None` when the line is not a pair.
fn split_pair(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    if let Some(q) = s.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = s[1..].find(q)? + 1;
        let rest = s[end + 1..].trim_start();
        let rest = rest.strip_prefix(':')?;
        return Some((s[1..end].to_string(), rest));
    }
    let mut search = 0;
    while let Some(i) = s[search..].find(':') {
        let at = search + i;
        let after = &s[at + 1..];
        if after.is_empty() || after.starts_with(' ') {
            return Some((s[..at].trim_end().to_string(), after));
        }
        search = at + 1;
    }
    None
}

fn parse(yaml: &str) -> Map<String, Json> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out = Map::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if is_blank(l) || indent(l) > 0 {
            i += 1;
            continue;
        }
        let Some((key, rest)) = split_pair(l) else {
            i += 1;
            continue;
        };
        i += 1;
        let rest = strip_comment(rest.trim());
        let (value, next) = match rest {
            "" => block(&lines, i),
            "|" | "|-" | "|+" | ">" | ">-" | ">+" => text_block(&lines, i, rest),
            r => (scalar_or_flow(r), i),
        };
        i = next;
        out.insert(key, value);
    }
    out
}

/// The nested block after `key:` (a sequence or something we do not read).
fn block(lines: &[&str], mut i: usize) -> (Json, usize) {
    let start = i;
    while i < lines.len() && is_blank(lines[i]) {
        i += 1;
    }
    let Some(first) = lines.get(i) else {
        return (Json::Null, i);
    };
    let base = indent(first);
    let is_seq = first.trim_start().starts_with("- ") || first.trim() == "-";
    if !is_seq && base == 0 {
        return (Json::Null, start);
    }
    let mut items = Vec::new();
    let mut nested = false;
    while i < lines.len() {
        let l = lines[i];
        if is_blank(l) {
            i += 1;
            continue;
        }
        let ind = indent(l);
        if ind < base || (ind == base && !l.trim_start().starts_with('-')) {
            break;
        }
        if ind > base || !is_seq {
            nested = true;
            i += 1;
            continue;
        }
        let item = l.trim_start().strip_prefix('-').unwrap_or("").trim();
        i += 1;
        match split_pair(item).filter(|_| !item.starts_with(['"', '\'', '['])) {
            Some((k, v)) => {
                // `- key: value` with more `key: value` lines indented under it.
                let mut m = Map::new();
                m.insert(k, scalar_or_flow(strip_comment(v.trim())));
                while i < lines.len() && !is_blank(lines[i]) && indent(lines[i]) > base {
                    if let Some((k, v)) = split_pair(lines[i]) {
                        m.insert(k, scalar_or_flow(strip_comment(v.trim())));
                    }
                    i += 1;
                }
                items.push(Json::Object(m));
            }
            None => items.push(scalar_or_flow(strip_comment(item))),
        }
    }
    if !is_seq || nested && items.is_empty() {
        return (Json::Null, i);
    }
    (Json::Array(items), i)
}

/// A `|` or `>` block scalar.
fn text_block(lines: &[&str], mut i: usize, style: &str) -> (Json, usize) {
    let mut parts: Vec<&str> = Vec::new();
    let mut base = None;
    while i < lines.len() {
        let l = lines[i];
        if l.trim().is_empty() {
            parts.push("");
            i += 1;
            continue;
        }
        let ind = indent(l);
        if ind == 0 || base.is_some_and(|b| ind < b) {
            break;
        }
        let b = *base.get_or_insert(ind);
        parts.push(&l[b..]);
        i += 1;
    }
    while parts.last() == Some(&"") {
        parts.pop();
    }
    let mut text = if style.starts_with('|') {
        parts.join("\n")
    } else {
        let mut s = String::new();
        for (k, p) in parts.iter().enumerate() {
            if k > 0 {
                s.push(if p.is_empty() || parts[k - 1].is_empty() {
                    '\n'
                } else {
                    ' '
                });
            }
            s.push_str(p);
        }
        s
    };
    if !style.ends_with('-') {
        text.push('\n');
    }
    (Json::String(text), i)
}

fn strip_comment(s: &str) -> &str {
    if s.starts_with(['"', '\'']) {
        return s;
    }
    if s.starts_with('#') {
        return "";
    }
    match s.find(" #") {
        Some(i) => s[..i].trim_end(),
        None => s,
    }
}

fn scalar_or_flow(s: &str) -> Json {
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return Json::Array(
            split_flow(inner)
                .into_iter()
                .filter(|p| !p.is_empty())
                .map(scalar)
                .collect(),
        );
    }
    if s.starts_with('{') {
        return Json::Null;
    }
    scalar(s)
}

fn split_flow(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ',') => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// A scalar with PyYAML's (YAML 1.1) implicit types.
fn scalar(s: &str) -> Json {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return Json::String(unescape_double(inner));
    }
    if let Some(inner) = s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return Json::String(inner.replace("''", "'"));
    }
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Json::Null,
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Json::Bool(true)
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Json::Bool(false)
        }
        _ => {}
    }
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    let is_int = !digits.is_empty()
        && (digits == "0"
            || (digits.starts_with(|c: char| ('1'..='9').contains(&c))
                && digits.chars().all(|c| c.is_ascii_digit() || c == '_')));
    if is_int {
        if let Ok(i) = s.replace('_', "").parse::<i64>() {
            return Json::from(i);
        }
    }
    let mantissa = digits.split(['e', 'E']).next().unwrap_or("");
    let is_float = mantissa.contains('.')
        && mantissa != "."
        && mantissa
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '_')
        && mantissa.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if is_float {
        if let Some(f) = s
            .replace('_', "")
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
        {
            return Json::Number(f);
        }
    }
    Json::String(s.to_string())
}

fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                if let Some(ch) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typical_model_card() {
        let card = "---\nlicense: apache-2.0\nlanguage:\n- en\n- no\nbase_model: meta-llama/Llama-3.2-1B\n\
tags:\n  - text-generation # comment\n  - \"llama\"\ndatasets: [a/b, 'c']\npipeline_tag: text-generation\n\
model-index:\n- name: x\n  results:\n  - task: y\nversion: 1.0\nflag: yes\ndescription: >\n  two\n  lines\n---\n# Title\n";
        let m = front_matter(card);
        assert_eq!(m["license"], json!("apache-2.0"));
        assert_eq!(m["language"], json!(["en", "no"]));
        assert_eq!(m["base_model"], json!("meta-llama/Llama-3.2-1B"));
        assert_eq!(m["tags"], json!(["text-generation", "llama"]));
        assert_eq!(m["datasets"], json!(["a/b", "c"]));
        assert_eq!(m["version"], json!(1.0));
        assert_eq!(m["flag"], json!(true));
        assert_eq!(m["description"], json!("two lines\n"));
        assert!(m.contains_key("model-index"));
        assert!(front_matter("# no front matter\n").is_empty());
    }
}
