//! The HF reader's shared modules never ask which family they convert: no comparison in
//! them (`==`, `!=`, a match arm, `starts_with`, `contains`, …) names an HF class, a
//! transformers `model_type`, a GGUF architecture or a projector type. What a family needs is
//! a field or a hook of its description, in its own file (`hf/arch/`, `hf/mmproj/<family>.rs`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ggufkit_converters::hf::architecture_rows;

/// The directory of the HF reader's sources.
fn hf_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/hf")
}

/// The shared modules: every source of `hf/` but the family files (`arch/`, and the
/// projector families of `mmproj/`).
fn shared_modules() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![hf_src()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "arch" {
                    dirs.push(p);
                }
            } else if name.ends_with(".rs")
                && (!d.ends_with("mmproj")
                    || ["mod.rs", "names.rs", "defaults.rs"].contains(&name.as_str()))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every family name: HF classes, GGUF architectures and projector types from the list,
/// and the `model_type` of every config class an architecture file declares.
fn family_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for row in architecture_rows() {
        names.insert(row.hf.to_string());
        names.extend(row.gguf.map(str::to_string));
        names.extend(row.mmproj.map(|(t, _)| t.to_string()));
    }
    // A family's sources: its file, and the files of its own directory when it has one.
    let mut dirs = vec![hf_src().join("arch")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                dirs.push(e.path());
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap();
            for (i, _) in text.match_indices("name: \"") {
                let rest = &text[i + 7..];
                if let Some(end) = rest.find('"') {
                    names.insert(rest[..end].to_string());
                }
            }
        }
    }
    names
}

/// The comparisons with `name` that `line` makes.
fn compares(line: &str, name: &str) -> bool {
    let q = format!("\"{name}\"");
    [
        format!("== {q}"),
        format!("!= {q}"),
        format!("{q} =>"),
        format!("{q} |"),
        format!("| {q}"),
        format!("with({q}"),
        format!("contains({q}"),
        format!("contains(&{q}"),
        format!("eq({q}"),
    ]
    .iter()
    .any(|p| line.contains(p.as_str()))
}

/// The code of a source file outside its unit tests, line by line (comment lines and
/// trailing comments removed), with line numbers.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, l)| !l.starts_with("#[cfg(test)]"))
        .map(|(i, l)| (i + 1, l.split(" // ").next().unwrap_or(l).trim()))
        .filter(|(_, l)| !l.starts_with("//"))
}

#[test]
fn the_scan_finds_a_comparison() {
    assert!(compares(r#"if req.arch == "gemma3n" {"#, "gemma3n"));
    assert!(compares(
        r#"    "granite" | "granitemoe" => true,"#,
        "granitemoe"
    ));
    assert!(compares(r#"hf.starts_with("Gemma3")"#, "Gemma3"));
    assert!(!compares(r#"kv.string(key::MODEL, "llama");"#, "llama"));
    let names = family_names();
    for n in [
        "LlamaForCausalLM",
        "llama",
        "gemma3_text",
        "granitemoehybrid",
    ] {
        assert!(names.contains(n), "{n} is not among the family names");
    }
}

#[test]
fn no_shared_module_compares_against_a_family_name() {
    let names = family_names();
    let files = shared_modules();
    assert!(files.len() > 30, "{} shared modules found", files.len());
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in code_lines(&text) {
            for name in names.iter().filter(|name| compares(line, name)) {
                let rel = f.strip_prefix(hf_src()).unwrap().display();
                found.push(format!("hf/{rel}:{n}: compares against {name:?}: {line}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "shared code names a family (make it a field or hook of the family's description):\n{}",
        found.join("\n")
    );
}
