//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod limits;
mod paths;
#[allow(unused_imports)]
pub use paths::{copy_tree, fixture, golden_dir, root, scratch, testdata};
mod record;
#[allow(unused_imports)]
pub use record::{profile_dir, record};

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
