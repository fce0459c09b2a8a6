//! docs/architectures.md's table of supported architectures is the converter's list, the
//! one `gguf-convert --list-architectures` prints (`hf::architecture_rows`), rendered here,
//! and README.md's summary line counts the same rows. `scripts/readme-architectures` rewrites
//! both (this test with `GGUFKIT_BLESS=1`); the test fails while either differs from the list.

use std::path::PathBuf;

use ggufkit_converters::hf::{architecture_rows, ArchitectureRow, Status};

/// The lines around the generated table in docs/architectures.md.
const BEGIN: &str = "<!-- architectures: made by scripts/readme-architectures from \
                     gguf-convert --list-architectures; do not edit -->";
const END: &str = "<!-- end of architectures -->";

/// The table: one row per HF class ggufkit converts, in the list's order, then a line that
/// counts them against llama.cpp's converter's classes.
fn render() -> (String, String) {
    let rows = architecture_rows();
    let count = |f: &dyn Fn(&ArchitectureRow) -> Status, s: Status| {
        rows.iter().filter(|r| f(r) == s).count()
    };
    let text = |r: &ArchitectureRow| r.text_status;
    let mmproj = |r: &ArchitectureRow| r.mmproj_status;
    let mut out = String::from(
        "| HF class (`architectures[0]`) | GGUF architecture | projector (`--mmproj`) |\n\
         |---|---|---|\n",
    );
    for r in rows
        .iter()
        .filter(|r| r.gguf.is_some() || r.mmproj.is_some())
    {
        let r = r.clone();
        let gguf = match (r.gguf, r.text_status) {
            (Some(g), Status::Refused) => format!("`{g}` (refused, as by llama.cpp)"),
            (Some(g), _) => format!("`{g}`"),
            (None, _) => "–".to_string(),
        };
        let mmproj = r.mmproj.map_or("–".to_string(), |(t, enc)| {
            format!("`{t}` ({})", enc.join(", "))
        });
        out.push_str(&format!("| `{}` | {gguf} | {mmproj} |\n", r.hf));
    }
    let (text_ours, text_not_yet) = (
        count(&text, Status::Converted),
        count(&text, Status::NotYet) + count(&text, Status::Refused),
    );
    let (mm_ours, mm_not_yet) = (
        count(&mmproj, Status::Converted),
        count(&mmproj, Status::NotYet),
    );
    let summary = format!(
        "{text_ours} of the {} HF text-model classes and {mm_ours} of the {} projector classes \
         llama.cpp's converter",
        text_ours + text_not_yet,
        mm_ours + mm_not_yet,
    );
    out.push_str(&format!(
        "\nggufkit converts {text_ours} of the {} text-model classes and {mm_ours} of the {} \
         projector classes that llama.cpp's converter knows; `gguf-convert \
         --list-architectures` marks the others `(not yet)`, or `refused` where \
         llama.cpp's converter refuses every checkpoint of the class.\n",
        text_ours + text_not_yet,
        mm_ours + mm_not_yet,
    ));
    (out, summary)
}

/// README.md's sentence that starts with the counts, up to the end of `summary`.
const README_LINE_END: &str = " projector classes llama.cpp's converter";

#[test]
fn readme_architecture_table_is_the_list() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join("docs/architectures.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = text
        .find(BEGIN)
        .expect("docs/architectures.md lacks the table's first marker")
        + BEGIN.len();
    let end = begin
        + text[begin..]
            .find(END)
            .expect("docs/architectures.md lacks the table's last marker");
    let (table, summary) = render();
    let want = format!("\n{table}");
    // README.md's summary: the line holding "<n> of the <m> HF text-model classes ...".
    let readme_path = root.join("README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let line_end = readme
        .find(README_LINE_END)
        .expect("README.md lacks the architecture summary")
        + README_LINE_END.len();
    let line_start = readme[..line_end].rfind('\n').map_or(0, |i| i + 1);
    let readme_have = &readme[line_start..line_end];
    if std::env::var_os("GGUFKIT_BLESS").is_some_and(|v| v == "1") {
        let new = format!("{}{want}{}", &text[..begin], &text[end..]);
        std::fs::write(&path, new).unwrap();
        let new = format!("{}{summary}{}", &readme[..line_start], &readme[line_end..]);
        std::fs::write(&readme_path, new).unwrap();
        return;
    }
    assert_eq!(
        readme_have, summary,
        "README.md's architecture counts are not the list's (run scripts/readme-architectures)"
    );
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
        "docs/architectures.md's table is not gguf-convert --list-architectures (run \
         scripts/readme-architectures); rows missing: {missing:?}; rows not in the list: \
         {extra:?}"
    );
    assert!(want.lines().count() > 50, "{want}");
}
