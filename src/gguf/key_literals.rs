//! The check that every metadata key the shipped code reads or writes is named through
//! [`super::keys`]: a `"general.…"`, `"tokenizer.ggml.…"` or `"{arch}.…"` string literal (or
//! any key [`super::keys`] defines, written out) in the non-test source of the workspace's
//! crates is an error naming the file and line.
//!
//! Tests are exempt (integration tests, `#[cfg(test)]` modules, doc examples, the test
//! support crate, examples and fuzz targets): they state the bytes a file must hold
//! independently of the constants, so a wrong constant cannot make them agree with it.
//! Comments are exempt too, and so are messages that merely mention a key (a literal with a
//! space in it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The crates' source trees checked, relative to the workspace root.
const ROOTS: [&str; 4] = ["src", "cli/src", "converters/src", "quantizers/src"];

/// The modules of `keys.rs` whose constants are suffixes after `{arch}.`.
const ARCH_MODULES: [&str; 10] = [
    "llm",
    "attention",
    "rope",
    "extra",
    "mla",
    "ssm",
    "shortconv",
    "hybrid",
    "wkv",
    "draft",
];

/// The keys `keys.rs` defines: (full keys, per-architecture suffixes).
fn defined_keys(keys_rs: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut global, mut suffixes) = (BTreeSet::new(), BTreeSet::new());
    let mut module = "";
    for line in keys_rs.lines() {
        if let Some(m) = line.strip_prefix("pub mod ") {
            module = m.trim_end_matches(" {");
        }
        let Some(rest) = line.trim().strip_prefix("pub const ") else {
            continue;
        };
        let Some(value) = rest.split('"').nth(1) else {
            continue;
        };
        if ARCH_MODULES.contains(&module) {
            suffixes.insert(value.to_string());
        } else {
            global.insert(value.to_string());
        }
    }
    (global, suffixes)
}

/// `source` without its `#[cfg(test)]` modules (rustfmt's layout: the module ends at the
/// first line that is its indentation followed by `}`).
fn without_test_modules(source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let next = lines.get(i + 1).map_or("", |l| l.trim_start());
        let is_mod = next.starts_with("mod ") || next.starts_with("pub mod ");
        if lines[i].trim() == "#[cfg(test)]" && is_mod && next.ends_with('{') {
            let indent = &lines[i + 1][..lines[i + 1].len() - next.len()];
            let close = format!("{indent}}}");
            i += 2;
            while i < lines.len() && lines[i] != close {
                i += 1;
            }
        } else {
            out.push_str(lines[i]);
        }
        out.push('\n');
        i += 1;
    }
    out
}

/// The string literals of Rust source outside comments, with their line numbers (raw
/// strings included; char literals and lifetimes skipped).
fn string_literals(source: &str) -> Vec<(usize, String)> {
    let b = source.as_bytes();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    line += usize::from(b[i] == b'\n');
                    i += 1;
                }
                i += 1;
            }
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let start = i + 1 + hashes;
                if b.get(start) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let mut close = vec![b'"'];
                close.resize(1 + hashes, b'#');
                let body = start + 1;
                let end = b[body..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| body + p);
                out.push((line, source[body..end].to_string()));
                line += b[body..end].iter().filter(|&&c| c == b'\n').count();
                i = end + close.len();
                continue;
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    line += usize::from(b[i] == b'\n');
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                out.push((line, source[start..i.min(b.len())].to_string()));
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether `literal` is a metadata key written out rather than named through `keys`.
fn is_key_literal(literal: &str, global: &BTreeSet<String>, suffixes: &BTreeSet<String>) -> bool {
    let keyish = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._".contains(&c))
    };
    if literal.contains(' ') {
        return false;
    }
    if let Some(rest) = literal
        .strip_prefix("general.")
        .or_else(|| literal.strip_prefix("tokenizer.ggml."))
    {
        return keyish(rest);
    }
    if literal.starts_with("{arch}.") || global.contains(literal) {
        return true;
    }
    if literal.contains('.') && suffixes.contains(literal) {
        return true;
    }
    // `llama.block_count`, `{}.block_count`: an architecture, named or formatted, then a
    // per-architecture suffix.
    literal.split_once('.').is_some_and(|(head, suffix)| {
        let formatted = head.starts_with('{') && head.ends_with('}');
        (formatted || keyish(head)) && suffixes.contains(suffix)
    })
}

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The key literals of `source` (see the module documentation), as `line: "literal"`.
fn key_literals(
    source: &str,
    global: &BTreeSet<String>,
    suffixes: &BTreeSet<String>,
) -> Vec<String> {
    string_literals(&without_test_modules(source))
        .into_iter()
        .filter(|(_, lit)| is_key_literal(lit, global, suffixes))
        .map(|(line, lit)| format!("{line}: \"{lit}\""))
        .collect()
}

#[test]
fn no_metadata_key_is_written_as_a_literal_outside_keys_rs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let keys_rs = root.join("src/gguf/keys.rs");
    let this = root.join("src/gguf/key_literals.rs");
    let (global, suffixes) = defined_keys(&std::fs::read_to_string(&keys_rs).unwrap());
    assert!(global.contains("general.architecture") && suffixes.contains("block_count"));
    let mut files = Vec::new();
    for r in ROOTS {
        rust_files(&root.join(r), &mut files);
    }
    assert!(files.len() > 100, "only {} source files found", files.len());
    let mut found = Vec::new();
    for f in files.iter().filter(|f| **f != keys_rs && **f != this) {
        let source = std::fs::read_to_string(f).unwrap();
        for hit in key_literals(&source, &global, &suffixes) {
            found.push(format!("{}:{hit}", f.strip_prefix(root).unwrap().display()));
        }
    }
    assert!(
        found.is_empty(),
        "metadata keys written as literals (name them through ggufkit::gguf::keys):\n{}",
        found.join("\n")
    );
}

/// The scanner finds a key in code, in a format string and after an architecture name,
/// and ignores comments, messages, tensor names and test modules.
#[test]
fn the_scanner_finds_key_literals_in_code_only() {
    let (global, suffixes) = defined_keys(include_str!("keys.rs"));
    let source = r##"
/// Sets "general.name".
fn f(md: &mut Metadata, arch: &str) {
    md.set("general.name", "x"); // "general.author"
    md.set(format!("{arch}.context_length"), 1u32);
    md.set("llama.block_count", 2u32);
    md.set(r#"tokenizer.ggml.fim_pre_token_id"#, 3u32);
    let c = '"'; let s = "split.count";
    let t = format!("{b}.weight");
    /* "general.url" */
    panic!("general.alignment must be a power of two");
}

#[cfg(test)]
mod tests {
    fn g() { md.set("general.license", "mit"); }
}
"##;
    let hits = key_literals(source, &global, &suffixes);
    assert_eq!(
        hits,
        [
            "4: \"general.name\"",
            "5: \"{arch}.context_length\"",
            "6: \"llama.block_count\"",
            "7: \"tokenizer.ggml.fim_pre_token_id\"",
            "8: \"split.count\"",
        ]
    );
}
