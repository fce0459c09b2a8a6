//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod limits;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `testdata/<rel>`.
pub fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// `../shared/golden` (the full conformance data). Missing: under `CI=true` that is a test
/// failure; otherwise the caller skips, and this says so loudly.
pub fn golden_dir(suite: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("GGUFKIT_GOLDEN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/golden"));
    if dir.join("README.md").exists() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{suite}: golden data not found at {} (required under CI=true)",
            dir.display()
        );
    }
    eprintln!(
        "\n*** SKIPPED {suite}: golden data not found at {} ***\n",
        dir.display()
    );
    None
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ggufkit-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every `*.gguf` below `dir`, sorted.
pub fn gguf_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "gguf") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
