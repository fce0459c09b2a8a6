//! `gguf-inspect`: dump, manifest, diff, verify, compare and check the provenance of GGUF files.

pub mod change;
mod compare;
mod diff;
mod dump;
mod experts;
pub mod loadable;
pub mod provenance;
mod quality;
pub mod shapes;
pub mod textdiff;
mod verify;

pub use compare::{compare_with_source, CompareReport, TensorError, Thresholds};
pub use diff::{diff_files, FileDiff, TensorDiff};
pub use dump::{dump_json, dump_text, format_value_short};
pub use quality::{quality_report, QualityReport, TensorQuality};
pub use verify::{verify_file, verify_split_siblings, VerifyReport};

/// Human size: `1.23 MiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}
