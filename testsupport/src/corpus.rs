//! The committed hostile-input corpora (`testdata/hostile*`, `testdata/legacy/hostile`): each
//! suite generates its cases in code and commits the files, so that fuzzers and other tools
//! can be seeded from them; [`check_committed`] keeps the two in step.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The variable that makes [`check_committed`] rewrite a corpus from its generator.
pub const REGEN_VAR: &str = "GGUFKIT_REGEN_HOSTILE";

/// Checks that the corpus committed in `dir` holds exactly `files` (paths relative to `dir`),
/// byte for byte, and returns their total size. Files for which `is_case` says false (a
/// README) are neither compared nor touched. With `GGUFKIT_REGEN_HOSTILE=1` it first rewrites
/// the corpus: every case file is removed and `files` are written.
pub fn check_committed(
    dir: &Path,
    files: &[(PathBuf, Vec<u8>)],
    is_case: impl Fn(&Path) -> bool,
) -> usize {
    let mut want = BTreeMap::new();
    for (rel, bytes) in files {
        assert!(
            want.insert(rel.clone(), bytes).is_none(),
            "{} is generated twice",
            rel.display()
        );
    }
    if std::env::var_os(REGEN_VAR).is_some_and(|v| v == "1") {
        for rel in case_files(dir, &is_case) {
            std::fs::remove_file(dir.join(rel)).unwrap();
        }
        for (rel, bytes) in &want {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        remove_empty_dirs(dir);
    }
    let have = case_files(dir, &is_case);
    let extra: Vec<&PathBuf> = have.iter().filter(|p| !want.contains_key(*p)).collect();
    assert!(
        extra.is_empty(),
        "{}: files no case generates: {extra:?} ({REGEN_VAR}=1 rewrites the corpus)",
        dir.display()
    );
    let mut total = 0;
    for (rel, bytes) in &want {
        let path = dir.join(rel);
        let on_disk = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} ({REGEN_VAR}=1 rewrites the corpus)",
                path.display()
            )
        });
        assert!(
            on_disk == **bytes,
            "{} differs from its generator ({REGEN_VAR}=1 rewrites the corpus)",
            path.display()
        );
        total += on_disk.len();
    }
    total
}

/// Every case file below `dir`, relative to it.
fn case_files(dir: &Path, is_case: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let r = rel.join(e.file_name());
            if e.path().is_dir() {
                stack.push(r);
            } else if is_case(&r) {
                out.push(r);
            }
        }
    }
    out.sort();
    out
}

/// Removes the directories below `dir` that regeneration left empty.
fn remove_empty_dirs(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            remove_empty_dirs(&e.path());
            let _ = std::fs::remove_dir(e.path());
        }
    }
}
