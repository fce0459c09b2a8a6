//! Where the integration tests find their data and scratch space. Everything they read is in
//! `testdata/` (layout: testdata/README.md).

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    // This crate sits one level below the workspace root.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `testdata/<rel>` of the workspace. Paths below `golden` name the unpacked copy of the
/// golden data (its small files are stored in packs: see [`crate::golden_pack`]).
pub fn testdata(rel: &str) -> PathBuf {
    let stored = root().join("testdata");
    match rel.strip_prefix("golden") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            crate::golden_pack::unpacked(&stored.join("golden")).join(rest.trim_start_matches('/'))
        }
        _ => stored.join(rel),
    }
}

/// `testdata/golden`: llama.cpp's outputs for the fixtures (manifests, variants.json,
/// status.json, commands.txt per fixture), unpacked. Part of the repository, so a missing
/// directory is a failure, never a skip.
pub fn golden_dir(suite: &str) -> PathBuf {
    assert!(
        root().join("testdata/golden/README.md").is_file(),
        "{suite}: testdata/golden is missing (it is part of the repository)"
    );
    testdata("golden")
}

/// The HuggingFace fixture `testdata/hf/<name>`, ready to convert: a directory named exactly
/// `name` (general.name comes from it) holding the fixture's files and the shared ones its
/// `shared-files.txt` lists (see [`fixture_files`]). A fixture without that file is used in
/// place; one with it is materialized into `<target>/<profile>/fixtures/<name>/<name>`
/// (rebuilt when it differs from testdata).
pub fn fixture(name: &str) -> PathBuf {
    use std::sync::Mutex;
    static LOCK: Mutex<()> = Mutex::new(());
    let src = testdata("hf").join(name);
    assert!(src.is_dir(), "fixture {} is missing", src.display());
    if !src.join(SHARED_LIST).is_file() {
        return src;
    }
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let files = fixture_files(&src);
    // <target>/<profile>/fixtures/<name>/<name>, rebuilt only when it differs.
    let exe = std::env::current_exe().unwrap();
    let base = exe.parent().unwrap().parent().unwrap().join("fixtures");
    let dst = base.join(name).join(name);
    let mut present = Vec::new();
    if dst.is_dir() {
        list_files(&dst, Path::new(""), &mut present);
    }
    if present.len() == files.len()
        && files
            .iter()
            .all(|(rel, content)| std::fs::read(dst.join(rel)).ok() == Some(content.bytes()))
    {
        return dst;
    }
    let tmp = base.join(format!(".{name}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    write_files(&files, &tmp.join(name));
    let _ = std::fs::remove_dir_all(base.join(name));
    std::fs::rename(&tmp, base.join(name)).unwrap();
    dst
}

/// The file listing the shared files of a fixture.
const SHARED_LIST: &str = "shared-files.txt";

/// Where one file of a materialized fixture comes from.
pub enum Content {
    /// A stored file, copied as it is.
    Copy(PathBuf),
    /// A file rebuilt from a `.hollow` file and the tensors cut out of it.
    Spliced(Vec<u8>),
}

impl Content {
    /// The file's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Content::Copy(p) => std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            Content::Spliced(b) => b.clone(),
        }
    }
}

/// The files of the fixture directory `src` as a converter must see them: its own files
/// (except `shared-files.txt` and the `.hollow` files it names) and the lines of
/// `shared-files.txt`, each `name = path` (a file stored elsewhere, path relative to the
/// fixture: `tokenizer.json = ../../tokenizers/<tok>/tokenizer.json`) or
/// `name = stored.hollow | at source offset length | ...` (a file whose tensors other
/// fixtures also hold: `stored.hollow` with each `length` bytes at `offset` of `source`
/// inserted back at offset `at`; written by `conformance/share_tensors.py`).
pub fn fixture_files(src: &Path) -> Vec<(PathBuf, Content)> {
    let mut listed = Vec::new();
    list_files(src, Path::new(""), &mut listed);
    let mut out = Vec::new();
    let mut hollow = Vec::new();
    let list = src.join(SHARED_LIST);
    let text = std::fs::read_to_string(&list).unwrap_or_default();
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (file, from) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("{}: bad line {line:?}", list.display()));
        let mut parts = from.split('|').map(str::trim);
        let stored = src.join(parts.next().unwrap_or_default());
        assert!(
            stored.is_file(),
            "{}: {} is missing",
            list.display(),
            stored.display()
        );
        let splices: Vec<&str> = parts.collect();
        let content = if splices.is_empty() {
            Content::Copy(stored)
        } else {
            hollow.push(stored.clone());
            Content::Spliced(splice(&list, &stored, &splices))
        };
        out.push((PathBuf::from(file.trim()), content));
    }
    for (rel, full) in listed {
        if rel != Path::new(SHARED_LIST) && !hollow.contains(&full) {
            out.push((rel, Content::Copy(full)));
        }
    }
    out
}

/// Rebuilds a file from its `.hollow` part and the `at source offset length` splices.
fn splice(list: &Path, stored: &Path, splices: &[&str]) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let dir = list.parent().unwrap();
    let rest = std::fs::read(stored).unwrap();
    let mut out = Vec::new();
    let mut pos = 0;
    for s in splices {
        let bad = || panic!("{}: bad splice {s:?}", list.display());
        let f: Vec<&str> = s.split_whitespace().collect();
        let [at, source, offset, len] = f[..] else {
            bad()
        };
        let (Ok(at), Ok(offset), Ok(len)) = (at.parse::<usize>(), offset.parse(), len.parse())
        else {
            bad()
        };
        let take = at.checked_sub(out.len()).unwrap_or_else(|| bad());
        out.extend_from_slice(rest.get(pos..pos + take).unwrap_or_else(|| bad()));
        pos += take;
        let mut chunk = vec![0; len];
        let path = dir.join(source);
        std::fs::File::open(&path)
            .and_then(|mut f| {
                f.seek(SeekFrom::Start(offset))?;
                f.read_exact(&mut chunk)
            })
            .unwrap_or_else(|e| panic!("{}: {}: {e}", list.display(), path.display()));
        out.extend_from_slice(&chunk);
    }
    out.extend_from_slice(&rest[pos..]);
    out
}

/// Writes `files` below `dir`.
fn write_files(files: &[(PathBuf, Content)], dir: &Path) {
    for (rel, content) in files {
        let to = dir.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let done = match content {
            Content::Copy(from) => std::fs::copy(from, &to).map(drop),
            Content::Spliced(bytes) => std::fs::write(&to, bytes),
        };
        done.unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    }
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

/// A fresh scratch directory for one test, named after the crate, the test, the process and
/// a count of the directories this process made: concurrent test binaries never share one,
/// and neither do two tests of one binary that pass the same name. It is removed when the
/// value is dropped, unless the test is panicking (then it is kept for a look at what the
/// run left).
pub fn scratch(name: &str) -> Scratch {
    use std::sync::atomic::{AtomicU64, Ordering};
    static MADE: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "{}-test-{name}-{}-{}",
        env!("CARGO_PKG_NAME"),
        std::process::id(),
        MADE.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// A test's scratch directory ([`scratch`]): derefs to its path, removed on drop.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The directory's path, kept after the test (for helpers that return a file made in it).
    pub fn keep(self) -> PathBuf {
        let d = self.0.clone();
        std::mem::forget(self);
        d
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Copies `testdata/hf/<fixture>` into `<scratch>/<fixture>` (the directory name is the
/// model's `general.name`), resolving `shared-files.txt` ([`fixture_files`]); returns the copy.
pub fn materialize_fixture(fixture: &str, scratch: &Path) -> PathBuf {
    let src = testdata(&format!("hf/{fixture}"));
    assert!(src.is_dir(), "{} missing", src.display());
    let dst = scratch.join(fixture);
    write_files(&fixture_files(&src), &dst);
    dst
}

#[cfg(test)]
mod tests {
    use super::scratch;

    #[test]
    fn two_scratch_directories_of_one_name_are_distinct() {
        let a = scratch("same-name");
        std::fs::write(a.join("mine"), b"a").unwrap();
        let b = scratch("same-name");
        assert_ne!(a.path(), b.path());
        assert_eq!(std::fs::read(a.join("mine")).unwrap(), b"a");
        assert!(b.read_dir().unwrap().next().is_none());
    }
}
