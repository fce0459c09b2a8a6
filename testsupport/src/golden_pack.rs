//! The golden data as the tests read it: `testdata/golden` with its packs unpacked.
//!
//! `conformance/golden_pack.py` stores the small text files of each top-level directory
//! `golden/D/` as one file `golden/D.pack` (entries `=== <path> <length>\n<bytes>\n`, in path
//! order); binary and large files stay loose. The first test of a build that asks for a
//! golden path gets a copy of the tree with every pack unpacked, in
//! `<target>/<profile>/golden`, rebuilt whenever a file of `testdata/golden` changes (its
//! listing of paths, sizes and modification times is kept beside the copy).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The suffix of a pack file.
const PACK: &str = ".pack";
/// The header that starts every pack entry.
const HEADER: &str = "=== ";
/// The file in the unpacked copy that records what it was made from.
const STAMP: &str = ".source-listing";

/// The unpacked copy of `golden` (the repository's `testdata/golden`), made or refreshed once
/// per test process.
pub fn unpacked(golden: &Path) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    DIR.get_or_init(|| {
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let exe = std::env::current_exe().unwrap();
        let base = exe.parent().unwrap().parent().unwrap().to_path_buf();
        refresh(golden, &base.join("golden"))
    })
    .clone()
}

/// Makes `dst` an unpacked copy of `src` unless its stamp already matches `src`'s listing.
fn refresh(src: &Path, dst: &Path) -> PathBuf {
    let listing = source_listing(src);
    if std::fs::read_to_string(dst.join(STAMP)).ok().as_deref() == Some(listing.as_str()) {
        return dst.to_path_buf();
    }
    let tmp = dst.with_file_name(format!(".golden.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_unpacking(src, &tmp);
    std::fs::write(tmp.join(STAMP), &listing).unwrap();
    // Another build's test process may have replaced the copy meanwhile: either is complete.
    let old = dst.with_file_name(format!(".golden-old.{}", std::process::id()));
    let _ = std::fs::rename(dst, &old);
    if std::fs::rename(&tmp, dst).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let _ = std::fs::remove_dir_all(&old);
    dst.to_path_buf()
}

/// Every file below `dir` with its size and modification time, one per line, in path order.
fn source_listing(dir: &Path) -> String {
    let mut files = Vec::new();
    walk(dir, Path::new(""), &mut files);
    files.sort();
    let mut out = String::new();
    for (rel, full) in files {
        let meta = std::fs::metadata(&full).unwrap();
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        out.push_str(&format!("{} {} {mtime}\n", rel.display(), meta.len()));
    }
    out
}

/// Copies the tree `src` to `dst`, each `D.pack` at its top level written out as the files
/// of `dst/D/` (a loose file of the same path takes precedence over a packed one).
fn copy_unpacking(src: &Path, dst: &Path) {
    let mut files = Vec::new();
    walk(src, Path::new(""), &mut files);
    let (packs, loose): (Vec<_>, Vec<_>) = files.into_iter().partition(|(rel, _)| {
        rel.components().count() == 1 && rel.to_string_lossy().ends_with(PACK)
    });
    for (rel, full) in packs {
        let name = rel.to_string_lossy();
        let dir = dst.join(&name[..name.len() - PACK.len()]);
        let data = std::fs::read(&full).unwrap();
        for (path, bytes) in entries(&full, &data) {
            let to = dir.join(path);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(&to, bytes).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
        }
    }
    for (rel, full) in loose {
        let to = dst.join(&rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&full, &to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    }
}

/// The entries of the pack `data` (read from `pack`): (relative path, content).
pub fn entries<'a>(pack: &Path, data: &'a [u8]) -> Vec<(&'a str, &'a [u8])> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let end = data[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| pos + i)
            .unwrap_or_else(|| bad(pack, pos, "unterminated entry header"));
        let line =
            std::str::from_utf8(&data[pos..end]).unwrap_or_else(|_| bad(pack, pos, "bad header"));
        let (path, len) = line
            .strip_prefix(HEADER)
            .and_then(|l| l.rsplit_once(' '))
            .unwrap_or_else(|| bad(pack, pos, "bad entry header"));
        let len: usize = len
            .parse()
            .unwrap_or_else(|_| bad(pack, pos, "bad entry length"));
        let start = end + 1;
        let body = data
            .get(start..start + len)
            .filter(|_| data.get(start + len) == Some(&b'\n'))
            .unwrap_or_else(|| bad(pack, pos, "entry runs past the end"));
        assert!(
            !path.is_empty() && !path.split('/').any(|c| c.is_empty() || c == ".."),
            "{}: bad entry path {path:?}",
            pack.display()
        );
        out.push((path, body));
        pos = start + len + 1;
    }
    out
}

/// Stops the test on a malformed pack.
fn bad(pack: &Path, pos: usize, what: &str) -> ! {
    panic!("{}: {what} at byte {pos}", pack.display())
}

/// Every file below `dir` as (path relative to `dir`, full path).
fn walk(dir: &Path, rel: &Path, out: &mut Vec<(PathBuf, PathBuf)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let r = rel.join(e.file_name());
        if p.is_dir() {
            walk(&p, &r, out);
        } else {
            out.push((r, p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_bad_packs_are_named() {
        let data = b"=== a/b.json 3\n{}\n\n=== c.txt 0\n\n";
        let got = entries(Path::new("x.pack"), data);
        assert_eq!(got, vec![("a/b.json", &b"{}\n"[..]), ("c.txt", &b""[..])]);
        for bad in [
            &b"=== a 5\nab\n"[..],
            b"=== ../a 1\nx\n",
            b"junk\n",
            b"=== a x\n",
        ] {
            let r = std::panic::catch_unwind(|| entries(Path::new("x.pack"), bad));
            assert!(
                r.is_err(),
                "{:?} was accepted",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
