//! What a conformance suite checked, written where `scripts/test` collects it: cargo captures
//! the output of passing tests, so each suite leaves one file
//! `<target>/<profile>/conformance/<suite>.txt` (or under `$GGUFKIT_RECORD_DIR`):
//!
//! ```text
//! <suite>: <n> <what>
//! not run<TAB><case><TAB><reason>        (one line per golden case that did not run)
//! ```

use std::path::PathBuf;

/// `<target>/<profile>` of the running test binary (`<target>/<profile>/deps/<test>-<hash>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("test binary in <target>/<profile>/deps")
        .to_path_buf()
}

/// Where the records go.
pub fn record_dir() -> PathBuf {
    std::env::var_os("GGUFKIT_RECORD_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| profile_dir().join("conformance"))
}

/// Records that `suite` checked `checked` golden cases (`what` names them, e.g. "golden
/// quantize commands matched") and which cases did not run, with why. Also printed.
pub fn record(suite: &str, checked: usize, what: &str, not_run: &[(String, String)]) {
    let mut text = format!("{suite}: {checked} {what}\n");
    for (case, why) in not_run {
        text += &format!("not run\t{case}\t{why}\n");
    }
    eprint!("{text}");
    let dir = record_dir();
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let file = dir.join(format!("{}.txt", suite.replace(['/', ' '], "_")));
    std::fs::write(&file, text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
}
