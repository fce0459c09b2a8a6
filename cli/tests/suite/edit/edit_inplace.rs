//! gguf-edit in place: an edit that keeps the header's size rewrites the header alone (the
//! file keeps its inode), any other goes through a temporary copy; both give the bytes of a
//! copy made with `gguf-edit IN OUT`. An interrupted in-place edit is finished by the next
//! gguf-edit on the file (or `gguf-edit recover`), and refused as an input until then.

use ggufkit_testsupport as support;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ggufkit::edit::inplace::{journal_path, rewrite_header, Faults, FileLock};
use ggufkit::gguf::GgufFile;
use support::golden::sha256_file;
use support::*;

const EDIT: &str = env!("CARGO_BIN_EXE_gguf-edit");

fn edit(args: &[&str]) -> Output {
    Command::new(EDIT).args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn inode(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().ino()
}

/// A fresh copy of llama-spm's f16 conversion (general.name "Llama Spm").
fn fresh(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(support::golden::golden_gguf("llama-spm", "convert-f16"), &p).unwrap();
    p
}

/// What `gguf-edit IN OUT ARGS` writes.
fn copy_edit(dir: &Path, input: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut a = vec![s(input), s(&out), "-q", "--force"];
    a.extend(args);
    ok(&edit(&a));
    out
}

#[test]
fn same_size_edits_rewrite_only_the_header() {
    let dir = scratch("edit-inplace");
    let a = fresh(&dir, "a.gguf");
    let same = ["--general-name", "Llama Sp2"];
    let want = copy_edit(&dir, &a, "same.gguf", &same);

    // --dry-run says so and writes nothing.
    let before = sha256_file(&a);
    let out = ok(&edit(
        &[&["--in-place", s(&a), "--dry-run"][..], &same].concat(),
    ));
    assert!(
        out.contains("~ general.name") && out.contains("in place: the"),
        "{out}"
    );
    assert_eq!(sha256_file(&a), before);

    let ino = inode(&a);
    let out = ok(&edit(&[&["--in-place", s(&a)][..], &same].concat()));
    assert!(out.contains("header rewritten in place"), "{out}");
    assert_eq!(
        inode(&a),
        ino,
        "the file was replaced, not rewritten in place"
    );
    assert_eq!(sha256_file(&a), sha256_file(&want));

    // A header that grows: a copy renamed over the file, the same bytes as a copy.
    let grow = ["--general-description", &"a long description ".repeat(20)];
    let want = copy_edit(&dir, &a, "grow.gguf", &grow);
    let out = ok(&edit(
        &[&["--in-place", s(&a), "--dry-run"][..], &grow].concat(),
    ));
    assert!(out.contains("not in place: the header grows"), "{out}");
    let out = ok(&edit(&[&["--in-place", s(&a)][..], &grow].concat()));
    assert!(!out.contains("in place,"), "{out}");
    assert_ne!(inode(&a), ino);
    assert_eq!(sha256_file(&a), sha256_file(&want));

    // gguf_set_metadata.py's form: in place.
    let ino = inode(&a);
    let out = ok(&edit(&[
        "set",
        s(&a),
        "llama.context_length",
        "4096",
        "--dry-run",
    ]));
    assert!(out.contains("in place: the"), "{out}");
    ok(&edit(&["set", s(&a), "llama.context_length", "4096", "-q"]));
    assert_eq!(inode(&a), ino);
    let f = GgufFile::open(&a).unwrap();
    assert_eq!(f.metadata.get_u32("llama.context_length").unwrap(), 4096);
    let g = GgufFile::open(&want).unwrap();
    assert_eq!(f.data_offset, g.data_offset);
    assert_eq!(f.tensors, g.tensors);
    assert_eq!(
        std::fs::read(&a).unwrap()[f.data_offset as usize..],
        std::fs::read(&want).unwrap()[g.data_offset as usize..]
    );
    assert!(!journal_path(&a).exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn interrupted_in_place_edits_are_finished_or_refused() {
    let dir = scratch("edit-inplace-crash");
    let a = fresh(&dir, "a.gguf");
    let want = copy_edit(&dir, &a, "want.gguf", &["--general-name", "Llama Sp2"]);
    let (old, new) = (std::fs::read(&a).unwrap(), std::fs::read(&want).unwrap());
    let n = GgufFile::open(&a).unwrap().data_offset as usize;
    // A crash between the two halves of the header write (the library's tests tear headers
    // at every step): a complete journal left.
    let lock = FileLock::acquire(&a, true).unwrap();
    let e = rewrite_header(&lock, &old[..n], &new[..n], true, &mut Faults::crash_at(7));
    drop(lock);
    assert!(e.is_err());
    assert!(journal_path(&a).exists());

    // As an input it is refused until recovered.
    let o = edit(&[s(&a), s(&dir.join("o.gguf")), "--general-name", "x"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("gguf-edit recover"));
    assert!(!dir.join("o.gguf").exists());

    // gguf-inspect verify says so too.
    let o = Command::new(env!("CARGO_BIN_EXE_gguf-inspect"))
        .args(["verify", s(&a)])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("gguf-edit recover"), "{text}");

    let out = ok(&edit(&["recover", s(&a)]));
    assert!(out.contains("is finished"), "{out}");
    assert_eq!(std::fs::read(&a).unwrap(), new);
    assert!(!journal_path(&a).exists());
    let out = ok(&edit(&["recover", s(&a)]));
    assert!(out.contains("no interrupted edit"), "{out}");

    // The next in-place edit finishes an interrupted one first (here: a torn journal, so
    // the file was never touched), then edits.
    std::fs::write(journal_path(&a), b"GGUFEDJ1 torn").unwrap();
    let out = ok(&edit(&["--in-place", s(&a), "--general-name", "Llama Spm"]));
    assert!(out.contains("its journal is removed"), "{out}");
    assert!(!journal_path(&a).exists());
    assert_eq!(std::fs::read(&a).unwrap(), old);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The tensor data section of a GGUF file.
fn data_section(p: &Path) -> Vec<u8> {
    let f = GgufFile::open(p).unwrap();
    std::fs::read(p).unwrap()[f.data_offset as usize..].to_vec()
}

#[test]
fn concurrent_in_place_edits_never_mix_headers_and_data() {
    let dir = scratch("edit-inplace-race");
    let long = "d".repeat(300);
    for round in 0..6 {
        let a = fresh(&dir, &format!("r{round}.gguf"));
        let data = data_section(&a);
        // A growing header (copy + rename) and a same-size one (journal + header rewrite),
        // started together.
        let grow = Command::new(EDIT)
            .args(["--in-place", s(&a), "--general-description", &long, "-q"])
            .spawn()
            .unwrap();
        let set = Command::new(EDIT)
            .args(["set", s(&a), "tokenizer.ggml.eos_token_id", "3", "-q"])
            .spawn()
            .unwrap();
        let (g, st) = (
            grow.wait_with_output().unwrap(),
            set.wait_with_output().unwrap(),
        );
        let f = GgufFile::open(&a).unwrap();
        assert_eq!(
            data_section(&a),
            data,
            "round {round}: the tensor data moved"
        );
        if g.status.success() {
            assert_eq!(
                f.metadata.get_str("general.description").unwrap(),
                long,
                "round {round}"
            );
        }
        if st.status.success() {
            assert_eq!(
                f.metadata.get("tokenizer.ggml.eos_token_id"),
                Some(&ggufkit::gguf::Value::U32(3)),
                "round {round}"
            );
        }
        assert!(!journal_path(&a).exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs gguf-edit with `args` as an unprivileged user when the tests run as root (so that
/// file permissions apply), else as is.
fn edit_unprivileged(args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(EDIT);
    c.args(args);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        c.uid(65534).gid(65534);
    }
    c.output().unwrap()
}

#[test]
fn an_edit_that_cannot_write_the_file_leaves_no_journal() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("edit-inplace-readonly");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let a = fresh(&dir, "ro.gguf");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o444)).unwrap();
    let link = dir.join("link.gguf");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let before = std::fs::read(&a).unwrap();
    let o = edit_unprivileged(&["set", s(&link), "tokenizer.ggml.eos_token_id", "3"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !journal_path(&link).exists(),
        "a failed edit left its journal"
    );
    assert!(!journal_path(&a).exists());
    assert_eq!(std::fs::read(&a).unwrap(), before);
    // Once writable, an unrelated edit is just that edit.
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = ok(&edit(&[
        "set",
        s(&link),
        "tokenizer.ggml.bos_token_id",
        "2",
    ]));
    assert!(!out.contains("interrupted"), "{out}");
    let f = GgufFile::open(&a).unwrap();
    assert_ne!(
        f.metadata.get("tokenizer.ggml.eos_token_id"),
        Some(&ggufkit::gguf::Value::U32(3)),
        "the failed edit came back"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_full_disk_while_writing_the_journal_leaves_no_journal() {
    let dir = scratch("edit-inplace-full");
    let a = fresh(&dir, "full.gguf");
    let before = std::fs::read(&a).unwrap();
    let n = GgufFile::open(&a).unwrap().data_offset;
    // Files may not grow past 1.5 headers: the header rewrite fits, the journal (two
    // headers) does not, as on a disk that fills up while the journal is written.
    let limit_kb = (n * 3 / 2) / 1024;
    let script = format!(
        "trap '' XFSZ; ulimit -f {limit_kb}; exec \"$0\" set \"$1\" tokenizer.ggml.eos_token_id 3"
    );
    let o = Command::new("bash")
        .args(["-c", &script, EDIT, s(&a)])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!journal_path(&a).exists(), "a partial journal was left");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path() != a)
        .map(|e| e.path())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(std::fs::read(&a).unwrap(), before);
    let o = Command::new(env!("CARGO_BIN_EXE_gguf-inspect"))
        .args(["verify", s(&a)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    std::fs::remove_dir_all(&dir).unwrap();
}
