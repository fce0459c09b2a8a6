//! Where the integration tests find their data and scratch space. Everything they read is in
//! `testdata/` (layout: testdata/README.md).

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    // This crate sits one level below the workspace root.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `testdata/<rel>` of the workspace.
pub fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// `testdata/golden`: llama.cpp's outputs for the fixtures (manifests, variants.json,
/// status.json, commands.txt per fixture; `scripts/sync-golden` copies them from
/// `../shared`). Part of the repository, so a missing directory is a failure, never a skip.
pub fn golden_dir(suite: &str) -> PathBuf {
    let dir = testdata("golden");
    assert!(
        dir.join("README.md").is_file(),
        "{suite}: {} is missing (it is part of the repository; scripts/sync-golden refreshes it \
         from ../shared)",
        dir.display()
    );
    dir
}

/// The HuggingFace fixture `testdata/hf/<name>`, ready to convert: a directory named exactly
/// `name` (general.name comes from it) holding the fixture's files and the shared ones its
/// `shared-files.txt` lists (`tokenizer.json = ../../tokenizers/<tok>/tokenizer.json`, paths
/// relative to the fixture directory). A fixture without that file is used in place; one with
/// it is materialized into `<target>/<profile>/fixtures/<name>/<name>` (rebuilt when it
/// differs from testdata).
pub fn fixture(name: &str) -> PathBuf {
    use std::sync::Mutex;
    static LOCK: Mutex<()> = Mutex::new(());
    let src = testdata("hf").join(name);
    assert!(src.is_dir(), "fixture {} is missing", src.display());
    let list = src.join("shared-files.txt");
    if !list.is_file() {
        return src;
    }
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // (file in the fixture, where its bytes come from)
    let mut files = Vec::new();
    list_files(&src, Path::new(""), &mut files);
    files.retain(|(rel, _)| rel != Path::new("shared-files.txt"));
    let text = std::fs::read_to_string(&list).unwrap();
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (file, from) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("{}: bad line {line:?}", list.display()));
        let from = src.join(from.trim());
        assert!(
            from.is_file(),
            "{}: {} is missing",
            list.display(),
            from.display()
        );
        files.push((PathBuf::from(file.trim()), from));
    }
    // <target>/<profile>/fixtures/<name>/<name>, rebuilt only when it differs.
    let exe = std::env::current_exe().unwrap();
    let base = exe.parent().unwrap().parent().unwrap().join("fixtures");
    let dst = base.join(name).join(name);
    let same = |(rel, from): &(PathBuf, PathBuf)| {
        std::fs::read(dst.join(rel)).ok() == std::fs::read(from).ok()
    };
    let mut present = Vec::new();
    if dst.is_dir() {
        list_files(&dst, Path::new(""), &mut present);
    }
    if present.len() == files.len() && files.iter().all(same) {
        return dst;
    }
    let tmp = base.join(format!(".{name}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for (rel, from) in &files {
        let to = tmp.join(name).join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, &to)
            .unwrap_or_else(|e| panic!("{} -> {}: {e}", from.display(), to.display()));
    }
    let _ = std::fs::remove_dir_all(base.join(name));
    std::fs::rename(&tmp, base.join(name)).unwrap();
    dst
}

/// Every file below `dir` as (path relative to `dir`, full path).
fn list_files(dir: &Path, rel: &Path, out: &mut Vec<(PathBuf, PathBuf)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let r = rel.join(e.file_name());
        if p.is_dir() {
            list_files(&p, &r, out);
        } else {
            out.push((r, p));
        }
    }
}

/// Copies the directory tree `from` to `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A fresh scratch directory for one test (named after the crate, the test and the process,
/// so concurrent test binaries never share one).
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "{}-test-{name}-{}",
        env!("CARGO_PKG_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Copies `testdata/hf/<fixture>` into `<scratch>/<fixture>` (the directory name is the
/// model's `general.name`), resolving `shared-files.txt`; returns the copy.
pub fn materialize_fixture(fixture: &str, scratch: &Path) -> PathBuf {
    let src = testdata(&format!("hf/{fixture}"));
    assert!(src.is_dir(), "{} missing", src.display());
    let dst = scratch.join(fixture);
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let name = e.file_name();
        if name == "shared-files.txt" {
            continue;
        }
        if e.path().is_dir() {
            // sentence-transformers modules (1_Pooling/, 2_Dense/)
            copy_tree(&e.path(), &dst.join(&name));
        } else {
            std::fs::copy(e.path(), dst.join(&name)).unwrap();
        }
    }
    let shared = src.join("shared-files.txt");
    if shared.is_file() {
        for line in std::fs::read_to_string(&shared).unwrap().lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, rel) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("{}: bad line {line:?}", shared.display()));
            let from = src.join(rel.trim());
            std::fs::copy(&from, dst.join(name.trim()))
                .unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        }
    }
    dst
}
