//! README.md's table of supported architectures is the converter's list, the one
//! `gguf-convert --list-architectures` prints (`hf::architecture_rows`), rendered here.
//! `scripts/readme-architectures` rewrites the table (this test with `GGUFKIT_BLESS=1`); the
//! test fails while the README's table differs from the list.

use std::path::PathBuf;

use ggufkit_converters::hf::architecture_rows;

/// The lines around the generated table in README.md.
const BEGIN: &str = "<!-- architectures: made by scripts/readme-architectures from \
                     gguf-convert --list-architectures; do not edit -->";
const END: &str = "<!-- end of architectures -->";

/// The table: one row per HF class, in the list's order.
fn render() -> String {
    let mut out = String::from(
        "| HF class (`architectures[0]`) | GGUF architecture | projector (`--mmproj`) |\n\
         |---|---|---|\n",
    );
    for r in architecture_rows() {
        let gguf = r.gguf.map_or("–".to_string(), |g| format!("`{g}`"));
        let mmproj = r.mmproj.map_or("–".to_string(), |(t, enc)| {
            format!("`{t}` ({})", enc.join(", "))
        });
        out.push_str(&format!("| `{}` | {gguf} | {mmproj} |\n", r.hf));
    }
    out
}

#[test]
fn readme_architecture_table_is_the_list() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = text
        .find(BEGIN)
        .expect("README.md lacks the table's first marker")
        + BEGIN.len();
    let end = begin
        + text[begin..]
            .find(END)
            .expect("README.md lacks the table's last marker");
    let want = format!("\n{}", render());
    if std::env::var_os("GGUFKIT_BLESS").is_some_and(|v| v == "1") {
        let new = format!("{}{want}{}", &text[..begin], &text[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    let have = &text[begin..end];
    let missing: Vec<&str> = want
        .lines()
        .filter(|l| !have.lines().any(|h| h == *l))
        .collect();
    let extra: Vec<&str> = have
        .lines()
        .filter(|l| !want.lines().any(|w| w == *l))
        .collect();
    assert!(
        have == want,
        "README.md's architecture table is not gguf-convert --list-architectures (run \
         scripts/readme-architectures); rows missing: {missing:?}; rows not in the list: \
         {extra:?}"
    );
    assert!(want.lines().count() > 50, "{want}");
}
