//! What makes a batch resumable and idempotent: a fingerprint of everything an output
//! depends on, and a small state file per output directory recording, for each output
//! written, the fingerprint it was made from and the size, sha256 and mtime of its files.
//!
//! The state file is `<outdir>/.ggufkit-batch.json`. An output is up to date when its
//! record has the current fingerprint and each of its files has the recorded size and
//! either the recorded mtime or (after an interruption between the commit and the record
//! update, or after a `touch`) the recorded sha256. The record is written *before* the
//! output is renamed into place (with no mtime) and completed after, so an interruption
//! anywhere leaves either no output, or one the next run can verify by its hash.
//!
//! The fingerprint covers: the tool version, the source files (path, size, mtime), every
//! file an option names (imatrix, metadata, vocabulary directory: same), the options, and
//! the output path. Changing any of them rebuilds the output; touching a source rebuilds
//! too (mtimes are compared, not contents — cheap, and conservative).
//!
//! Temporary files (`.<name>.ggufkit-tmp.<pid>.<random>`) left by a killed run are removed when
//! their process no longer exists.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::UNIX_EPOCH;

use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};

use ggufkit::pipeline::{hex, WrittenFile};

/// Name of the state file in an output directory.
pub const STATE_FILE: &str = ".ggufkit-batch.json";

/// Bumped when the engine's output for the same request could change.
const FINGERPRINT_VERSION: u32 = 1;

/// (size, mtime in ns) of a file, when it exists.
pub fn stat(p: &Path) -> Option<(u64, u128)> {
    let m = std::fs::metadata(p).ok()?;
    let mt = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Some((m.len(), mt))
}

/// A fingerprint builder: feed it the request, then [`Fingerprint::finish`].
pub struct Fingerprint {
    items: Vec<Json>,
}

impl Default for Fingerprint {
    fn default() -> Self {
        Self::new()
    }
}

impl Fingerprint {
    /// Starts with the tool version.
    pub fn new() -> Fingerprint {
        Fingerprint {
            items: vec![json!({
                "tool": "ggufkit gguf-convert",
                "version": env!("CARGO_PKG_VERSION"),
                "fingerprint": FINGERPRINT_VERSION,
            })],
        }
    }

    /// Adds a file's identity (path, size, mtime; "missing" when absent).
    pub fn file(&mut self, role: &str, p: &Path) {
        let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        self.items.push(match stat(p) {
            Some((size, mtime)) => {
                json!({"role": role, "path": abs, "size": size, "mtime_ns": mtime.to_string()})
            }
            None => json!({"role": role, "path": abs, "missing": true}),
        });
    }

    /// Adds any serialisable value.
    pub fn value(&mut self, role: &str, v: Json) {
        self.items.push(json!({ "role": role, "value": v }));
    }

    /// The sha256 of everything added.
    pub fn finish(&self) -> String {
        let text = serde_json::to_string(&self.items).expect("json");
        hex(&Sha256::digest(text.as_bytes()))
    }
}

/// One recorded file of an output.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRecord {
    /// File name (in the output directory) or path.
    pub path: PathBuf,
    /// Size.
    pub size: u64,
    /// sha256.
    pub sha256: String,
    /// mtime in ns after the commit (None while committing).
    pub mtime_ns: Option<u128>,
}

/// What the state says about an output.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The fingerprint it was made from.
    pub fingerprint: String,
    /// Its files.
    pub files: Vec<FileRecord>,
}

fn state_path(dir: &Path) -> PathBuf {
    dir.join(STATE_FILE)
}

/// Name of the journal beside the state file: one JSON line per change since the state file
/// was last written, so that recording an output costs one appended line, not a rewrite of
/// every record (a batch of N outputs would otherwise write O(N²) bytes).
pub const JOURNAL_FILE: &str = ".ggufkit-batch.json.journal";

fn journal_path(dir: &Path) -> PathBuf {
    dir.join(JOURNAL_FILE)
}

/// The records of one output directory as this process knows them, and how many journal
/// lines stand beside the state file.
struct DirState {
    outputs: BTreeMap<String, Json>,
    journal_lines: usize,
    /// Whether the state file exists: a journal counts only beside its state file, so that
    /// deleting the state file forgets everything, as it always has.
    has_file: bool,
}

/// Every output directory this process has read, keyed by the directory.
static DIRS: Mutex<BTreeMap<PathBuf, DirState>> = Mutex::new(BTreeMap::new());

/// Reads the state file, then replays the journal over it. A line that does not parse (the
/// tail of a write cut short by a crash) ends the replay.
fn read_state(dir: &Path) -> DirState {
    // A state file that is not a regular file (a symlink to some other file) is not ours:
    // it is not read, and writing the state refuses it.
    let own = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file());
    let path = state_path(dir);
    let Some(Ok(bytes)) = own(&path).then(|| std::fs::read(&path)) else {
        return DirState {
            outputs: BTreeMap::new(),
            journal_lines: 0,
            has_file: false,
        };
    };
    let mut outputs: BTreeMap<String, Json> = serde_json::from_slice::<Json>(&bytes)
        .ok()
        .and_then(|j| j.get("outputs").cloned())
        .and_then(|o| serde_json::from_value(o).ok())
        .unwrap_or_default();
    let mut journal_lines = 0;
    let journal = journal_path(dir);
    if let Some(Ok(text)) = own(&journal).then(|| std::fs::read_to_string(&journal)) {
        for line in text.lines() {
            let Ok(entry) = serde_json::from_str::<Json>(line) else {
                break;
            };
            let Some(key) = entry.get("key").and_then(Json::as_str) else {
                break;
            };
            match entry.get("record") {
                Some(Json::Null) | None => outputs.remove(key),
                Some(r) => outputs.insert(key.to_string(), r.clone()),
            };
            journal_lines += 1;
        }
    }
    DirState {
        outputs,
        journal_lines,
        has_file: true,
    }
}

#[cfg(test)]
thread_local! {
    /// What this thread wrote to state files and journals: (state-file rewrites, state-file
    /// bytes, journal lines, journal bytes). Tests count writes with it instead of timing.
    static WRITTEN: std::cell::Cell<(usize, u64, usize, u64)> =
        const { std::cell::Cell::new((0, 0, 0, 0)) };
}

/// Writes all records to the state file (atomically) and empties the journal.
fn write_state(dir: &Path, outputs: &BTreeMap<String, Json>) -> std::io::Result<()> {
    let doc = json!({
        "about": "gguf-convert batch state: what each output was made from (delete to forget)",
        "version": 1,
        "outputs": outputs,
    });
    let mut bytes = serde_json::to_vec_pretty(&doc).expect("json");
    bytes.push(b'\n');
    #[cfg(test)]
    WRITTEN.with(|w| {
        let (n, b, jl, jb) = w.get();
        w.set((n + 1, b + bytes.len() as u64, jl, jb));
    });
    // ggufkit's own file: never written through a link, so never over an input.
    ggufkit::output::internal::write(&state_path(dir), &bytes, false)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    match std::fs::remove_file(journal_path(dir)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Appends one change to the journal, as a single write of one line.
fn append_journal(dir: &Path, key: &str, record: Option<&Json>) -> std::io::Result<()> {
    use std::io::Write;
    let path = journal_path(dir);
    let mut line = serde_json::to_vec(&json!({ "key": key, "record": record })).expect("json");
    line.push(b'\n');
    #[cfg(test)]
    WRITTEN.with(|w| {
        let (n, b, jl, jb) = w.get();
        w.set((n, b, jl + 1, jb + line.len() as u64));
    });
    let mut f = ggufkit::output::internal::open_append(&path)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    f.write_all(&line)
}

fn key_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn record_from_json(j: &Json) -> Option<Record> {
    let files = j
        .get("files")?
        .as_array()?
        .iter()
        .map(|f| {
            Some(FileRecord {
                path: PathBuf::from(f.get("path")?.as_str()?),
                size: f.get("size")?.as_u64()?,
                sha256: f.get("sha256")?.as_str()?.to_string(),
                mtime_ns: f
                    .get("mtime_ns")
                    .and_then(Json::as_str)
                    .and_then(|s| s.parse().ok()),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Record {
        fingerprint: j.get("fingerprint")?.as_str()?.to_string(),
        files,
    })
}

fn record_to_json(r: &Record) -> Json {
    json!({
        "fingerprint": r.fingerprint,
        "files": r.files.iter().map(|f| json!({
            "path": f.path, "size": f.size, "sha256": f.sha256,
            "mtime_ns": f.mtime_ns.map(|m| m.to_string()),
        })).collect::<Vec<_>>(),
    })
}

/// Runs `f` on the records of `dir`, read once per process.
fn with_dir<T>(dir: &Path, f: impl FnOnce(&Path, &mut DirState) -> T) -> T {
    let mut dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    let key = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let state = dirs.entry(key).or_insert_with(|| read_state(dir));
    f(dir, state)
}

/// The record of the output whose (first) path is `output`, if any.
pub fn lookup(output: &Path) -> Option<Record> {
    with_dir(parent(output), |_, st| {
        st.outputs.get(&key_of(output)).and_then(record_from_json)
    })
}

/// Stores (or with `None`, removes) the record of `output`: a line appended to the journal;
/// once the journal is longer than the state file, both are folded into a new state file.
pub fn store(output: &Path, record: Option<&Record>) -> std::io::Result<()> {
    with_dir(parent(output), |dir, st| {
        let key = key_of(output);
        let json = record.map(record_to_json);
        match &json {
            Some(r) => {
                st.outputs.insert(key.clone(), r.clone());
            }
            None => {
                if st.outputs.remove(&key).is_none() {
                    return Ok(());
                }
            }
        }
        if !st.has_file || st.journal_lines >= st.outputs.len().max(64) {
            write_state(dir, &st.outputs)?;
            st.journal_lines = 0;
            st.has_file = true;
            return Ok(());
        }
        append_journal(dir, &key, json.as_ref())?;
        st.journal_lines += 1;
        Ok(())
    })
}

/// Folds the journal of `dir` into its state file, so that the state file alone lists every
/// output (done when a job ends).
pub fn settle(dir: &Path) -> std::io::Result<()> {
    with_dir(dir, |dir, st| {
        if st.journal_lines == 0 {
            return Ok(());
        }
        write_state(dir, &st.outputs)?;
        st.journal_lines = 0;
        Ok(())
    })
}

fn parent(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// sha256 of a file's contents.
pub fn hash_file(p: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(p)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// Whether the files of `record` are present and unchanged (by mtime, else by hash). When
/// they were verified by hash, the record's mtimes are refreshed.
pub fn verify(output: &Path, record: &Record) -> bool {
    let mut refreshed = record.clone();
    let mut changed = false;
    for f in &mut refreshed.files {
        let Some((size, mtime)) = stat(&f.path) else {
            return false;
        };
        if size != f.size {
            return false;
        }
        if f.mtime_ns != Some(mtime) {
            match hash_file(&f.path) {
                Ok(h) if h == f.sha256 => {
                    f.mtime_ns = Some(mtime);
                    changed = true;
                }
                _ => return false,
            }
        }
    }
    if changed {
        let _ = store(output, Some(&refreshed));
    }
    true
}

/// The record for freshly written files (mtimes filled in when `committed`).
pub fn record_for(fingerprint: &str, files: &[WrittenFile], committed: bool) -> Record {
    Record {
        fingerprint: fingerprint.to_string(),
        files: files
            .iter()
            .map(|f| FileRecord {
                path: f.path.clone(),
                size: f.size,
                sha256: f.sha256.clone(),
                mtime_ns: if committed {
                    stat(&f.path).map(|s| s.1)
                } else {
                    None
                },
            })
            .collect(),
    }
}

/// True when process `pid` may still be writing (on Linux: it exists and is one of our
/// tools; elsewhere we cannot tell, so we assume it may).
fn pid_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
            Ok(comm) => comm.trim().starts_with("gguf-"),
            Err(_) => false,
        }
    } else {
        true
    }
}

/// Removes temporary outputs in `dir` left by processes that no longer run. Returns the
/// files removed.
pub fn clean_temps(dir: &Path) -> Vec<PathBuf> {
    let marker = ggufkit::output::TEMP_MARKER;
    let mut removed = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return removed;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pos) = name.rfind(marker) else {
            continue;
        };
        if !name.starts_with('.') {
            continue;
        }
        let rest = &name[pos + marker.len()..];
        let Ok(pid) = rest.split('.').next().unwrap_or(rest).parse::<u32>() else {
            continue;
        };
        if !pid_alive(pid) && std::fs::remove_file(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_verify() {
        let d = std::env::temp_dir().join(format!("ggufkit-state-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let out = d.join("m.gguf");
        std::fs::write(&out, b"abc").unwrap();
        let files = [WrittenFile {
            path: out.clone(),
            size: 3,
            sha256: hex(&Sha256::digest(b"abc")),
        }];
        let pending = record_for("fp", &files, false);
        store(&out, Some(&pending)).unwrap();
        assert_eq!(lookup(&out), Some(pending.clone()));
        // No mtime yet: verified by hash, then the mtime is recorded.
        assert!(verify(&out, &pending));
        assert!(lookup(&out).unwrap().files[0].mtime_ns.is_some());
        std::fs::write(&out, b"abd").unwrap();
        assert!(!verify(&out, &lookup(&out).unwrap()));
        store(&out, None).unwrap();
        assert_eq!(lookup(&out), None);
        // A leftover temp of a process that is gone is removed; others are kept.
        let stale = d.join(".m.gguf.ggufkit-tmp.4000000000");
        let mine = d.join(format!(".m.gguf.ggufkit-tmp.{}", std::process::id()));
        std::fs::write(&stale, b"x").unwrap();
        std::fs::write(&mine, b"x").unwrap();
        assert_eq!(clean_temps(&d), vec![stale.clone()]);
        assert!(mine.exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Recording N outputs (twice each, as a batch does: committing, then committed) writes
    /// O(N) bytes: a journal line per record and a logarithmic number of state-file
    /// rewrites, never the whole state twice per output (2,000 outputs once took 50 s).
    #[test]
    fn recording_many_outputs_appends_instead_of_rewriting() {
        let d = std::env::temp_dir().join(format!("ggufkit-state-n-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        const N: usize = 2000;
        WRITTEN.with(|w| w.set((0, 0, 0, 0)));
        for i in 0..N {
            let out = d.join(format!("m{i:04}.gguf"));
            let files = [WrittenFile {
                path: out.clone(),
                size: 3,
                sha256: hex(&Sha256::digest(b"abc")),
            }];
            store(&out, Some(&record_for("fp", &files, false))).unwrap();
            store(&out, Some(&record_for("fp", &files, true))).unwrap();
        }
        settle(&d).unwrap();
        let (rewrites, state_bytes, lines, journal_bytes) = WRITTEN.with(|w| w.get());
        let final_size = std::fs::metadata(d.join(STATE_FILE)).unwrap().len();
        // 2N records: a rewrite only when the journal has grown as long as the state (and
        // the first and the settling one): about log2(2N / 64) + 2, nowhere near 2N.
        assert!(
            rewrites <= 12,
            "{rewrites} state-file rewrites for {N} outputs"
        );
        assert!(lines + rewrites >= 2 * N, "{lines} journal lines");
        let total = state_bytes + journal_bytes;
        assert!(
            total <= 8 * final_size,
            "{total} bytes written for a {final_size}-byte state"
        );
        // And the state read back from disk has every output.
        let st = read_state(&d);
        assert_eq!(st.outputs.len(), N);
        assert_eq!(st.journal_lines, 0);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn fingerprints_change_with_inputs() {
        let mut a = Fingerprint::new();
        a.value("type", json!("Q4_K_M"));
        let mut b = Fingerprint::new();
        b.value("type", json!("Q4_K_S"));
        assert_ne!(a.finish(), b.finish());
        let mut c = Fingerprint::new();
        c.value("type", json!("Q4_K_M"));
        assert_eq!(a.finish(), c.finish());
    }
}
