//! gguf-edit in place: an edit that keeps the header's size rewrites the header alone (the
//! file keeps its inode), any other goes through a temporary copy; both give the bytes of a
//! copy made with `gguf-edit IN OUT`. An interrupted in-place edit is finished by the next
//! gguf-edit on the file (or `gguf-edit recover`), and refused as an input until then.

use ggufkit_testsupport as support;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ggufkit::edit::inplace::{journal_path, rewrite_header, Faults};
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
    let e = rewrite_header(&a, &old[..n], &new[..n], true, &mut Faults::crash_at(7));
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
