//! The hostile-input corpus of the split-model reader (`ggufkit::split`):
//! sets of shards checked as llama.cpp's loader checks split models.
//!
//! Every case is a directory of shards written by the code below (each shard a valid GGUF,
//! so what is wrong is the set), with what [`open_shards`] + [`merge_shards`] must answer:
//! the [`SplitError`] variant, the shard it names and the words its message must contain,
//! or for a tolerated case what they return.
//!
//! * Cases are committed as `testdata/hostile-split/<case>/`;
//!   `committed_corpus_matches_generator` keeps them in step and `GGUFKIT_REGEN_HOSTILE=1`
//!   rewrites them.
//! * `corpus_under_limits` runs them again in a child process under `ulimit -v` (256 MB) and
//!   a 60 s timeout.
//!
//! Split key types: llama.cpp writes `split.no` / `split.count` as u16 and
//! `split.tensors.count` as i32, and its loader rejects other types. This reader reads any
//! integer type by value (tolerated: the number is unambiguous) and rejects negative
//! numbers and non-integers, naming the key and the type found.

use ggufkit_testsupport as support;

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ggufkit::gguf::{layout, write_gguf, GgufFile, Metadata, TensorHeader, Value};
use ggufkit::ir::Model;
use ggufkit::quantizers::GgmlType;
use ggufkit::split::{merge_shards, open_shards, SplitError};

/// A split key's value, or absent.
type Key = Option<Value>;

/// One shard: its split keys, whether it has the model metadata, its tensors (F32, 4
/// elements each).
fn shard(no: Key, count: Key, total: Key, meta: bool, tensors: &[&str]) -> Vec<u8> {
    let mut m = Metadata::new();
    if meta {
        m.set("general.architecture", "llama");
        m.set("llama.block_count", 1u32);
    }
    for (k, v) in [
        ("split.no", no),
        ("split.count", count),
        ("split.tensors.count", total),
    ] {
        if let Some(v) = v {
            m.set(k, v);
        }
    }
    let headers: Vec<TensorHeader> = tensors
        .iter()
        .map(|n| TensorHeader {
            name: n.to_string(),
            dims: vec![4],
            ty: GgmlType::F32,
        })
        .collect();
    let data: Vec<Vec<u8>> = (0..tensors.len())
        .map(|i| (0..16).map(|b| (i * 16 + b) as u8).collect())
        .collect();
    let plan = layout(&m, &headers).expect("layout");
    let mut out = Vec::new();
    write_gguf(&mut out, &plan, |i| Ok(Cow::Borrowed(&data[i][..]))).expect("write");
    out
}

fn u16v(v: u16) -> Key {
    Some(Value::U16(v))
}

fn i32v(v: i32) -> Key {
    Some(Value::I32(v))
}

/// Shard `i` (0-based) of `n` as llama.cpp writes it.
fn std_shard(i: u16, n: u16, total: i32, tensors: &[&str]) -> Vec<u8> {
    shard(u16v(i), u16v(n), i32v(total), i == 0, tensors)
}

fn name(i: usize, n: usize) -> String {
    format!("m-{:05}-of-{n:05}.gguf", i + 1)
}

enum Expect {
    /// `variant`, the file the error names, words of the message.
    Reject {
        variant: &'static str,
        file: String,
        needles: Vec<String>,
    },
    /// Tolerated: the shards and the merged model must pass this check.
    Accept(fn(&[GgufFile], &Model)),
}

fn inconsistent(file: impl Into<String>, needles: &[&str]) -> Expect {
    Expect::Reject {
        variant: "Inconsistent",
        file: file.into(),
        needles: needles.iter().map(|s| s.to_string()).collect(),
    }
}

fn gguf_err(file: impl Into<String>, needles: &[&str]) -> Expect {
    Expect::Reject {
        variant: "Gguf",
        file: file.into(),
        needles: needles.iter().map(|s| s.to_string()).collect(),
    }
}

struct Case {
    name: String,
    /// The file to open (the first shard).
    open: String,
    files: Vec<(String, Vec<u8>)>,
    expect: Expect,
}

fn load(path: &Path) -> Result<(Vec<GgufFile>, Model), SplitError> {
    let shards = open_shards(path)?;
    let (model, _) = merge_shards(&shards)?;
    Ok((shards, model))
}

impl Case {
    fn check(&self, dir: &Path) {
        let name = &self.name;
        let start = Instant::now();
        let result = load(&dir.join(&self.open));
        assert!(start.elapsed() < Duration::from_secs(10), "{name}: slow");
        match (&self.expect, result) {
            (Expect::Accept(verify), Ok((shards, model))) => verify(&shards, &model),
            (Expect::Accept(_), Err(e)) => panic!("{name}: must load, got: {e}"),
            (Expect::Reject { variant, .. }, Ok(_)) => {
                panic!("{name}: loaded, but must fail with {variant}")
            }
            (
                Expect::Reject {
                    variant,
                    file,
                    needles,
                },
                Err(e),
            ) => {
                let msg = e.to_string();
                let got = match &e {
                    SplitError::Gguf(_) => "Gguf",
                    SplitError::Inconsistent { .. } => "Inconsistent",
                    SplitError::BigEndian(_) => "BigEndian",
                };
                assert_eq!(got, *variant, "{name}: {msg}");
                let want = dir.join(file).display().to_string();
                assert!(msg.starts_with(&want), "{name}: not about {want}: {msg}");
                for n in needles {
                    assert!(msg.contains(n.as_str()), "{name}: {n:?} not in: {msg}");
                }
                assert!(msg.len() <= 1024, "{name}: long message");
            }
        }
    }
}

fn tensor_names(m: &Model) -> Vec<&str> {
    m.tensors.iter().map(|t| t.name.as_str()).collect()
}

/// A two-shard model (`a`, `b` | `c`) with one shard edited.
fn pair(first: Vec<u8>, second: Vec<u8>) -> Vec<(String, Vec<u8>)> {
    vec![(name(0, 2), first), (name(1, 2), second)]
}

fn cases() -> Vec<Case> {
    let mut c: Vec<Case> = Vec::new();
    let mut add = |n: &str, open: String, files: Vec<(String, Vec<u8>)>, expect: Expect| {
        c.push(Case {
            name: format!("g15-{n}"),
            open,
            files,
            expect,
        })
    };
    let first = || std_shard(0, 2, 3, &["a", "b"]);
    let second = || std_shard(1, 2, 3, &["c"]);
    let (f0, f1) = (name(0, 2), name(1, 2));

    add(
        "control-2-shards",
        f0.clone(),
        pair(first(), second()),
        Expect::Accept(|s, m| {
            assert_eq!(s.len(), 2);
            assert_eq!(tensor_names(m), ["a", "b", "c"]);
            assert!(m.metadata.contains("general.architecture"));
        }),
    );
    add(
        "control-unsplit",
        "m.gguf".into(),
        vec![("m.gguf".into(), shard(None, None, None, true, &["a"]))],
        Expect::Accept(|s, m| {
            assert_eq!(s.len(), 1);
            assert_eq!(tensor_names(m), ["a"]);
        }),
    );
    add(
        "count-1-any-name",
        "m.gguf".into(),
        vec![("m.gguf".into(), std_shard(0, 1, 1, &["a"]))],
        Expect::Accept(|s, _| assert_eq!(s.len(), 1)),
    );
    // split.no != 0 on the file opened.
    add(
        "first-is-shard-2",
        f1.clone(),
        pair(first(), second()),
        inconsistent(&f1, &["is shard 2 of 2: open the first shard"]),
    );
    add(
        "first-split-no-1",
        f0.clone(),
        pair(std_shard(1, 2, 3, &["a", "b"]), second()),
        inconsistent(&f0, &["is shard 2 of 2: open the first shard"]),
    );
    add(
        "first-badly-named",
        "m.gguf".into(),
        vec![
            ("m.gguf".into(), first()),
            ("m-00002-of-00002.gguf".into(), second()),
        ],
        inconsistent(
            "m.gguf",
            &["split file names must end in -00001-of-00002.gguf"],
        ),
    );
    // split.count / split.no disagree between shards.
    add(
        "count-mismatch",
        f0.clone(),
        pair(first(), std_shard(1, 3, 3, &["c"])),
        inconsistent(
            &f1,
            &["has split.no Some(1) / split.count Some(3), expected 1 / 2"],
        ),
    );
    add(
        "shard-no-mismatch",
        f0.clone(),
        pair(first(), std_shard(0, 2, 3, &["c"])),
        inconsistent(
            &f1,
            &["has split.no Some(0) / split.count Some(2), expected 1 / 2"],
        ),
    );
    add(
        "second-without-keys",
        f0.clone(),
        pair(first(), shard(None, None, None, false, &["c"])),
        inconsistent(
            &f1,
            &["has split.no None / split.count None, expected 1 / 2"],
        ),
    );
    // A tensor in two shards.
    add(
        "tensor-duplicated",
        f0.clone(),
        pair(first(), std_shard(1, 2, 3, &["b"])),
        inconsistent(&f1, &["tensor 'b' is duplicated: shard 1 holds it too"]),
    );
    // The total.
    add(
        "total-too-large",
        f0.clone(),
        pair(std_shard(0, 2, 4, &["a", "b"]), std_shard(1, 2, 4, &["c"])),
        inconsistent(
            &f0,
            &["split.tensors.count is 4, the shards hold 3 tensors"],
        ),
    );
    add(
        "total-too-small",
        f0.clone(),
        pair(std_shard(0, 2, 2, &["a", "b"]), std_shard(1, 2, 2, &["c"])),
        inconsistent(
            &f0,
            &["split.tensors.count is 2, the shards hold 3 tensors"],
        ),
    );
    add(
        "total-negative",
        f0.clone(),
        pair(std_shard(0, 2, -1, &["a", "b"]), second()),
        inconsistent(
            &f0,
            &["split.tensors.count is not a non-negative integer (INT32)"],
        ),
    );
    add(
        "total-missing",
        f0.clone(),
        pair(shard(u16v(0), u16v(2), None, true, &["a", "b"]), second()),
        Expect::Accept(|_, m| assert_eq!(m.tensors.len(), 3)),
    );
    // Missing shards.
    add(
        "missing-shard",
        name(0, 3),
        vec![
            (name(0, 3), std_shard(0, 3, 3, &["a"])),
            (name(1, 3), std_shard(1, 3, 3, &["b"])),
        ],
        gguf_err(name(2, 3), &["No such file"]),
    );
    add(
        "count-65535",
        name(0, 65535),
        vec![(name(0, 65535), std_shard(0, 65535, 1, &["a"]))],
        gguf_err(name(1, 65535), &["No such file"]),
    );
    add(
        "count-u64-2p40",
        name(0, 1 << 40),
        vec![(
            name(0, 1 << 40),
            shard(u16v(0), Some(Value::U64(1 << 40)), i32v(1), true, &["a"]),
        )],
        gguf_err(name(1, 1 << 40), &["No such file"]),
    );
    add(
        "shard-not-gguf",
        f0.clone(),
        pair(first(), b"GGUF\x03\0\0\0".to_vec()),
        gguf_err(&f1, &["at byte 8"]),
    );
    // Key types: any integer type is read by value; others are errors.
    add(
        "types-u32-u64-i64",
        f0.clone(),
        pair(
            shard(
                Some(Value::U32(0)),
                Some(Value::U64(2)),
                Some(Value::I64(3)),
                true,
                &["a", "b"],
            ),
            shard(
                Some(Value::I8(1)),
                Some(Value::I32(2)),
                Some(Value::U16(3)),
                false,
                &["c"],
            ),
        ),
        Expect::Accept(|_, m| assert_eq!(tensor_names(m), ["a", "b", "c"])),
    );
    add(
        "count-string",
        f0.clone(),
        pair(
            shard(u16v(0), Some("2".into()), i32v(3), true, &["a", "b"]),
            second(),
        ),
        inconsistent(&f0, &["split.count is not a non-negative integer (STRING)"]),
    );
    add(
        "count-f32",
        f0.clone(),
        pair(
            shard(u16v(0), Some(Value::F32(2.0)), i32v(3), true, &["a", "b"]),
            second(),
        ),
        inconsistent(
            &f0,
            &["split.count is not a non-negative integer (FLOAT32)"],
        ),
    );
    add(
        "count-bool",
        f0.clone(),
        pair(
            shard(u16v(0), Some(Value::Bool(true)), i32v(3), true, &["a", "b"]),
            second(),
        ),
        inconsistent(&f0, &["split.count is not a non-negative integer (BOOL)"]),
    );
    add(
        "no-negative",
        f0.clone(),
        pair(
            shard(Some(Value::I16(-1)), u16v(2), i32v(3), true, &["a", "b"]),
            second(),
        ),
        inconsistent(&f0, &["split.no is not a non-negative integer (INT16)"]),
    );
    add(
        "second-no-string",
        f0.clone(),
        pair(
            first(),
            shard(Some("1".into()), u16v(2), i32v(3), false, &["c"]),
        ),
        inconsistent(&f1, &["split.no is not a non-negative integer (STRING)"]),
    );
    c
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hostile-split")
}

fn run_committed() -> usize {
    let cases = cases();
    let dir = corpus_dir();
    let failed: Vec<&str> = cases
        .iter()
        .filter(|case| {
            std::panic::catch_unwind(AssertUnwindSafe(|| case.check(&dir.join(&case.name))))
                .is_err()
        })
        .map(|case| case.name.as_str())
        .collect();
    assert!(failed.is_empty(), "failed cases: {failed:?}");
    cases.len()
}

#[test]
fn committed_corpus_matches_generator() {
    let files: Vec<(PathBuf, Vec<u8>)> = cases()
        .into_iter()
        .flat_map(|c| {
            let dir = PathBuf::from(&c.name);
            c.files.into_iter().map(move |(n, b)| (dir.join(n), b))
        })
        .collect();
    // Every case is a directory; files at the top (the README) are not cases.
    support::corpus::check_committed(&corpus_dir(), &files, |p| p.components().count() > 1);
}

#[test]
fn every_committed_case() {
    run_committed();
}

/// A shard that is a directory or a FIFO (which cannot be committed to git) is named as such,
/// never "missing", and a FIFO never blocks the reader waiting for a writer.
#[cfg(unix)]
#[test]
fn a_directory_or_fifo_shard_is_named_and_never_blocks() {
    let dir = support::scratch("split-special-shards");
    let first = dir.join(name(0, 2));
    std::fs::write(&first, std_shard(0, 2, 2, &["a"])).unwrap();
    let second = dir.join(name(1, 2));
    std::fs::create_dir(&second).unwrap();
    let e = load(&first).expect_err("a directory shard").to_string();
    assert!(e.contains("is a directory, not a regular file"), "{e}");
    assert!(e.contains(&name(1, 2)), "{e}");
    std::fs::remove_dir(&second).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&second)
        .status()
        .unwrap();
    assert!(made.success());
    let start = Instant::now();
    let e = load(&first).expect_err("a FIFO shard").to_string();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "blocked on the FIFO"
    );
    assert!(e.contains("is a FIFO, not a regular file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

const INNER: &str = "corpus_inner";
const INNER_ENV: &str = "GGUFKIT_HOSTILE_INNER";

#[test]
fn corpus_under_limits() {
    support::limits::run_under_limits(
        module_path!(),
        INNER,
        INNER_ENV,
        256_000,
        Duration::from_secs(60),
    );
}

#[test]
#[ignore = "run by corpus_under_limits in a child process under ulimit -v"]
fn corpus_inner() {
    support::limits::assert_memory_limited(INNER_ENV);
    let n = run_committed();
    println!("{n} split cases");
}
