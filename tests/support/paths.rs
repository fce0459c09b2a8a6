//! Where the integration tests find their data and scratch space (shared by the root
//! crate's and the converters' tests; `env!` expands in the including crate).

use std::path::PathBuf;

/// The workspace root.
pub fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if manifest.join("testdata").is_dir() {
        manifest
    } else {
        manifest.join("..")
    }
}

/// `testdata/<rel>` of the workspace.
pub fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// `../shared/golden` (or `$GGUFKIT_GOLDEN`). Missing: under `CI=true` that is a test
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
