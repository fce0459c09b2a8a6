//! What every integration test suite of the workspace shares: where the data is
//! ([`paths`]), what a conformance suite records for `scripts/test` ([`record`]), the child
//! process that runs a hostile corpus under memory and time limits ([`limits`]), the golden
//! GGUF files rebuilt with our own tools and compared with llama.cpp's ([`golden`]), models
//! written through the output engine as the tools write them ([`engine`]), a
//! writer of legacy GGML files that records where every field lies ([`legacy`]), and the
//! check that a committed hostile corpus equals its generator ([`corpus`]), and the golden
//! data unpacked from the packs its small files are stored in ([`golden_pack`]).
//!
//! ```
//! // Every suite finds the repository's test data the same way.
//! let hf = ggufkit_testsupport::testdata("hf");
//! assert!(hf.ends_with("testdata/hf"));
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

pub mod corpus;
pub mod engine;
pub mod golden;
pub mod golden_pack;
pub mod http_proxy;
pub mod hub_server;
pub mod legacy;
pub mod limits;
pub mod paths;
pub use paths::{copy_tree, fixture, golden_dir, root, scratch, testdata, Scratch};
pub mod record;
pub mod unloadable;
pub use engine::write_gguf;
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
