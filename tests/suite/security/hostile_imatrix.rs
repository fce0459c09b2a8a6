//! The hostile-input corpus of the importance-matrix reader (`ggufkit::quantize::Imatrix`):
//! the GGUF corpus's rules carried over to the legacy `.dat` and the GGUF imatrix.
//!
//! Every case is a file written by the code below with what [`Imatrix::load`] must answer:
//! the words of the error (which always starts with the file's path; `.dat` errors give the
//! byte offset and the entry at fault), or for a tolerated case what it loads.
//!
//! * Cases are committed as `testdata/hostile-imatrix/<case>.{dat,gguf}`;
//!   `committed_corpus_matches_generator` keeps them in step and `GGUFKIT_REGEN_HOSTILE=1`
//!   rewrites them.
//! * Truncation at every byte of a small `.dat` (each cut has one exact expected error, or
//!   is a tolerated cut in the optional trailer) and of a small GGUF imatrix is generated.
//! * `corpus_under_limits` runs everything again in a child process under `ulimit -v`
//!   (256 MB) and a 60 s timeout.
//!
//! Tolerated, as llama-quantize's loaders accept them: `ncall` ≤ 0 (the sums are used as they
//! are), names that are not UTF-8 (read lossily), a repeated entry (the last wins), a cut or
//! nonsensical trailer (chunk count / dataset name are optional), counts ≤ 0 in a GGUF
//! imatrix (the importance is 1 there).

use ggufkit_testsupport as support;

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ggufkit::gguf::{layout, write_gguf, ArrayValue, Metadata, TensorHeader, Value};
use ggufkit::quantize::{Imatrix, ImatrixProblem};
use ggufkit::quantizers::GgmlType;

// ---------------------------------------------------------------------------------------
// Legacy .dat: i32 n_entries, then per entry i32 name length, name, i32 ncall, i32 nval,
// nval f32 sums; then optionally i32 chunk count, i32 dataset name length, the name.

/// A .dat under construction; records each field's start and the reader's word for it.
#[derive(Default, Clone)]
struct Dat {
    buf: Vec<u8>,
    fields: Vec<(usize, String)>,
    /// Where the optional trailer starts.
    trailer: Option<usize>,
}

impl Dat {
    fn field(&mut self, what: impl Into<String>, bytes: &[u8]) -> &mut Self {
        self.fields.push((self.buf.len(), what.into()));
        self.buf.extend_from_slice(bytes);
        self
    }

    fn i32(&mut self, what: impl Into<String>, v: i32) -> &mut Self {
        self.field(what, &v.to_le_bytes())
    }

    fn entry(&mut self, i: usize, name: &[u8], ncall: i32, sums: &[f32]) -> &mut Self {
        let n = String::from_utf8_lossy(name).into_owned();
        self.i32(format!("the name length of entry {i}"), name.len() as i32)
            .field(format!("the name of entry {i}"), name)
            .i32(format!("ncall of '{n}'"), ncall)
            .i32(format!("nval of '{n}'"), sums.len() as i32);
        let b: Vec<u8> = sums.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.field(format!("the values of '{n}'"), &b)
    }

    fn trailer(&mut self, chunks: i32, dataset: &[u8]) -> &mut Self {
        self.trailer = Some(self.buf.len());
        self.buf.extend_from_slice(&chunks.to_le_bytes());
        self.buf
            .extend_from_slice(&(dataset.len() as i32).to_le_bytes());
        self.buf.extend_from_slice(dataset);
        self
    }

    fn done(&self) -> Vec<u8> {
        self.buf.clone()
    }
}

fn dat(n: i32) -> Dat {
    let mut d = Dat::default();
    d.i32("the entry count", n);
    d
}

/// Two entries (the second two matrices of 2) and a trailer.
fn small_dat() -> Dat {
    let mut d = dat(2);
    d.entry(0, b"blk.0.attn_q.weight", 2, &[2.0, 4.0, 6.0])
        .entry(1, b"blk.0.ffn_up.weight", 1, &[1.0, 2.0, 3.0, 4.0])
        .trailer(5, b"calibration.txt");
    d
}

// ---------------------------------------------------------------------------------------
// GGUF imatrix: `<name>.in_sum2` [ne0, n_mat] and `<name>.counts` [1, n_mat], F32.

struct T {
    name: &'static str,
    dims: Vec<u64>,
    ty: GgmlType,
    data: Vec<f32>,
}

fn t(name: &'static str, dims: &[u64], data: &[f32]) -> T {
    T {
        name,
        dims: dims.to_vec(),
        ty: GgmlType::F32,
        data: data.to_vec(),
    }
}

fn std_meta() -> Metadata {
    let mut m = Metadata::new();
    m.set("general.type", "imatrix");
    m.set(
        "imatrix.datasets",
        Value::Array(ArrayValue::String(
            ["calibration.txt"].into_iter().collect(),
        )),
    );
    m.set("imatrix.chunk_count", 5u32);
    m.set("imatrix.chunk_size", 512u32);
    m
}

fn gguf(m: &Metadata, tensors: &[T]) -> Vec<u8> {
    let headers: Vec<TensorHeader> = tensors
        .iter()
        .map(|t| TensorHeader {
            name: t.name.into(),
            dims: t.dims.clone(),
            ty: t.ty,
        })
        .collect();
    let data: Vec<Vec<u8>> = tensors
        .iter()
        .map(|t| match t.ty {
            GgmlType::F16 => t
                .data
                .iter()
                .flat_map(|x| half_bits(*x).to_le_bytes())
                .collect(),
            _ => t.data.iter().flat_map(|x| x.to_le_bytes()).collect(),
        })
        .collect();
    let plan = layout(m, &headers).expect("layout");
    let mut out = Vec::new();
    write_gguf(&mut out, &plan, |i| Ok(Cow::Borrowed(&data[i][..]))).expect("write");
    out
}

/// Small integers as f16 bits (enough for these files).
fn half_bits(x: f32) -> u16 {
    assert!(x == 0.0 || x == 1.0);
    if x == 1.0 {
        0x3c00
    } else {
        0
    }
}

const SUMS: &str = "blk.0.ffn_up.weight.in_sum2";
const COUNTS: &str = "blk.0.ffn_up.weight.counts";

fn small_gguf_tensors() -> Vec<T> {
    vec![
        t(SUMS, &[2, 2], &[2.0, 4.0, 3.0, 6.0]),
        t(COUNTS, &[1, 2], &[2.0, 3.0]),
    ]
}

// ---------------------------------------------------------------------------------------
// Cases.

enum Expect {
    /// Words the message must contain (after the path).
    Reject(Vec<String>),
    Accept(fn(&Imatrix)),
}

struct Case {
    name: String,
    bytes: Vec<u8>,
    expect: Expect,
}

fn reject(needles: &[&str]) -> Expect {
    Expect::Reject(needles.iter().map(|s| s.to_string()).collect())
}

fn entry<'a>(im: &'a Imatrix, name: &str) -> &'a [f32] {
    &im.entries[name]
}

fn cases() -> Vec<Case> {
    let mut c = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>, expect: Expect| {
        c.push(Case {
            name: name.to_string(),
            bytes,
            expect,
        })
    };
    // --- .dat
    add(
        "dat-g01-control",
        small_dat().done(),
        Expect::Accept(|im| {
            assert_eq!(entry(im, "blk.0.attn_q.weight"), [1.0, 2.0, 3.0]);
            assert_eq!(entry(im, "blk.0.ffn_up.weight"), [1.0, 2.0, 3.0, 4.0]);
            assert_eq!((im.chunk_count, im.datasets.len()), (5, 1));
        }),
    );
    add(
        "dat-g01-empty",
        vec![],
        reject(&["at byte 0: the entry count needs 4 bytes, 0 remain"]),
    );
    add(
        "dat-g03-entries-i32max",
        {
            let mut d = dat(i32::MAX);
            d.entry(0, b"x", 1, &[1.0]);
            d.done()
        },
        reject(&["at byte 21: the name length of entry 1 needs 4 bytes, 0 remain"]),
    );
    for (name, n) in [("0", 0), ("negative", -1), ("i32min", i32::MIN)] {
        add(
            &format!("dat-g03-entries-{name}"),
            {
                let mut d = dat(n);
                d.entry(0, b"x", 1, &[1.0]);
                d.done()
            },
            reject(&["as a legacy .dat it has no entries"]),
        );
    }
    let raw_entry = |name_len: i32, name: &[u8], ncall: i32, nval: i32, values: &[u8]| {
        let mut b = 1i32.to_le_bytes().to_vec();
        b.extend(name_len.to_le_bytes());
        b.extend(name);
        b.extend(ncall.to_le_bytes());
        b.extend(nval.to_le_bytes());
        b.extend(values);
        b
    };
    add(
        "dat-g04-name-len-i32max",
        raw_entry(i32::MAX, b"x", 1, 1, &[0; 4]),
        reject(&["at byte 8: the name of entry 0 needs 2147483647 bytes, 13 remain"]),
    );
    add(
        "dat-g04-name-len-negative",
        raw_entry(-1, b"x", 1, 1, &[0; 4]),
        reject(&["at byte 8: the name of entry 0 needs -1 bytes, 13 remain"]),
    );
    add(
        "dat-g04-name-invalid-utf8",
        raw_entry(2, b"\xffx", 1, 1, &1f32.to_le_bytes()),
        Expect::Accept(|im| assert_eq!(entry(im, "\u{fffd}x"), [1.0])),
    );
    add(
        "dat-g05-nval-i32max",
        raw_entry(1, b"x", 1, i32::MAX, &[0; 4]),
        reject(&["at byte 17: the values of 'x' needs 8589934588 bytes, 4 remain"]),
    );
    for (name, n) in [("0", 0), ("negative", -1)] {
        add(
            &format!("dat-g05-nval-{name}"),
            raw_entry(1, b"x", 1, n, &[0; 4]),
            reject(&[&format!("entry 'x' has {n} values")]),
        );
    }
    add(
        "dat-g08-duplicate-entry",
        {
            let mut d = dat(2);
            d.entry(0, b"x", 1, &[1.0]).entry(1, b"x", 1, &[2.0, 3.0]);
            d.done()
        },
        Expect::Accept(|im| {
            assert_eq!(im.entries.len(), 1);
            assert_eq!(entry(im, "x"), [2.0, 3.0]);
        }),
    );
    for (name, ncall) in [("0", 0), ("negative", -5)] {
        add(
            &format!("dat-g14-ncall-{name}"),
            {
                let mut d = dat(1);
                d.entry(0, b"x", ncall, &[2.0, 4.0]);
                d.done()
            },
            Expect::Accept(|im| assert_eq!(entry(im, "x"), [2.0, 4.0])),
        );
    }
    for (name, v) in [("nan", f32::NAN), ("inf", f32::INFINITY)] {
        add(
            &format!("dat-g14-value-{name}"),
            {
                let mut d = dat(1);
                d.entry(0, b"x", 1, &[1.0, v]);
                d.done()
            },
            reject(&[&format!("entry 'x' contains the non-finite value {v}")]),
        );
    }
    add(
        "dat-g03-dataset-len-i32max",
        {
            let mut d = dat(1);
            d.entry(0, b"x", 1, &[1.0]);
            d.buf.extend(3i32.to_le_bytes());
            d.buf.extend(i32::MAX.to_le_bytes());
            d.done()
        },
        Expect::Accept(|im| assert_eq!((im.chunk_count, im.datasets.len()), (3, 0))),
    );
    add(
        "dat-g03-chunks-negative",
        {
            let mut d = dat(1);
            d.entry(0, b"x", 1, &[1.0]).trailer(-1, b"d");
            d.done()
        },
        Expect::Accept(|im| assert_eq!(im.chunk_count, 0)),
    );
    // --- GGUF
    add(
        "gguf-g01-control",
        gguf(&std_meta(), &small_gguf_tensors()),
        Expect::Accept(|im| {
            assert_eq!(entry(im, "blk.0.ffn_up.weight"), [1.0, 2.0, 1.0, 2.0]);
            assert_eq!((im.chunk_count, im.datasets.len()), (5, 1));
        }),
    );
    add(
        "gguf-g02-broken-header",
        b"GGUF\x03\0\0\0\xff".to_vec(),
        reject(&["at byte 8"]),
    );
    add(
        "gguf-g14-no-tensors",
        gguf(&std_meta(), &[]),
        reject(&["no data (no tensors)"]),
    );
    add(
        "gguf-g14-no-metadata",
        gguf(&Metadata::new(), &small_gguf_tensors()),
        reject(&["missing imatrix metadata"]),
    );
    add(
        "gguf-g14-counts-missing",
        gguf(&std_meta(), &[t(SUMS, &[2, 2], &[1.0; 4])]),
        reject(&["mismatched sums and counts for blk.0.ffn_up.weight"]),
    );
    add(
        "gguf-g14-sums-missing",
        gguf(&std_meta(), &[t(COUNTS, &[1, 2], &[1.0; 2])]),
        reject(&["mismatched sums and counts for blk.0.ffn_up.weight"]),
    );
    add(
        "gguf-g14-sums-f16",
        gguf(
            &std_meta(),
            &[
                T {
                    ty: GgmlType::F16,
                    ..t(SUMS, &[2, 2], &[1.0; 4])
                },
                t(COUNTS, &[1, 2], &[1.0; 2]),
            ],
        ),
        reject(&["sums and counts for blk.0.ffn_up.weight must be F32"]),
    );
    add(
        "gguf-g14-shape-mismatch",
        gguf(
            &std_meta(),
            &[t(SUMS, &[4, 2], &[1.0; 8]), t(COUNTS, &[1, 3], &[1.0; 3])],
        ),
        reject(&["blk.0.ffn_up.weight: 8 sums do not split into 3 matrices"]),
    );
    add(
        "gguf-g14-counts-empty",
        gguf(
            &std_meta(),
            &[t(SUMS, &[4, 2], &[1.0; 8]), t(COUNTS, &[0], &[])],
        ),
        reject(&["blk.0.ffn_up.weight: 8 sums do not split into 0 matrices"]),
    );
    add(
        "gguf-g14-counts-nonpositive",
        gguf(
            &std_meta(),
            &[
                t(SUMS, &[2, 2], &[2.0, 4.0, 3.0, 6.0]),
                t(COUNTS, &[1, 2], &[0.0, -3.0]),
            ],
        ),
        Expect::Accept(|im| assert_eq!(entry(im, "blk.0.ffn_up.weight"), [1.0; 4])),
    );
    add(
        "gguf-g14-sums-nan",
        gguf(
            &std_meta(),
            &[
                t(SUMS, &[2, 1], &[f32::NAN, 1.0]),
                t(COUNTS, &[1, 1], &[1.0]),
            ],
        ),
        reject(&["entry 'blk.0.ffn_up.weight' contains the non-finite value NaN"]),
    );
    let mut m = std_meta();
    m.set("imatrix.chunk_count", "5");
    add(
        "gguf-g14-chunk-count-string",
        gguf(&m, &small_gguf_tensors()),
        reject(&["imatrix.chunk_count"]),
    );
    let mut m = std_meta();
    m.set("imatrix.datasets", 7u32);
    add(
        "gguf-g14-datasets-u32",
        gguf(&m, &small_gguf_tensors()),
        reject(&["imatrix.datasets"]),
    );
    let mut m = std_meta();
    m.set("imatrix.datasets", Value::Array(ArrayValue::U32(vec![1])));
    add(
        "gguf-g14-datasets-u32-array",
        gguf(&m, &small_gguf_tensors()),
        reject(&["imatrix.datasets"]),
    );
    c
}

fn ext(name: &str) -> &'static str {
    if name.starts_with("dat-") {
        "dat"
    } else {
        "gguf"
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hostile-imatrix")
}

impl Case {
    fn check(&self, path: &Path) {
        let name = &self.name;
        let start = Instant::now();
        let result = Imatrix::load(path);
        assert!(start.elapsed() < Duration::from_secs(10), "{name}: slow");
        match (&self.expect, result) {
            (Expect::Accept(verify), Ok(im)) => verify(&im),
            (Expect::Accept(_), Err(e)) => panic!("{name}: must load, got: {e}"),
            (Expect::Reject(_), Ok(_)) => panic!("{name}: loaded, but must fail"),
            (Expect::Reject(needles), Err(e)) => {
                let msg = e.to_string();
                assert!(
                    msg.starts_with(&format!("imatrix {}: ", path.display())),
                    "{name}: no path in: {msg}"
                );
                for n in needles {
                    assert!(msg.contains(n.as_str()), "{name}: {n:?} not in: {msg}");
                }
                assert!(msg.len() <= 1024, "{name}: long message");
            }
        }
    }
}

fn run_committed() -> usize {
    let cases = cases();
    let dir = corpus_dir();
    let failed: Vec<&str> = cases
        .iter()
        .filter(|case| {
            let path = dir.join(format!("{}.{}", case.name, ext(&case.name)));
            std::panic::catch_unwind(AssertUnwindSafe(|| case.check(&path))).is_err()
        })
        .map(|case| case.name.as_str())
        .collect();
    assert!(failed.is_empty(), "failed cases: {failed:?}");
    cases.len()
}

/// Every cut of the small .dat: inside an entry, the exact error of the field cut; at or
/// after the trailer, accepted (the trailer is optional). Every cut of the GGUF imatrix
/// that loses data is an error.
fn run_truncations() -> usize {
    let d = small_dat();
    let trailer = d.trailer.unwrap();
    for cut in 0..d.buf.len() {
        let r = Imatrix::parse(d.buf[..cut].to_vec());
        if cut >= trailer {
            let im = r.unwrap_or_else(|e| panic!("cut {cut} in the trailer: {e}"));
            assert_eq!(im.entries.len(), 2, "cut {cut}");
            continue;
        }
        let (start, what) = d.fields.iter().rev().find(|(s, _)| *s <= cut).unwrap();
        let e = r.expect_err(&format!("cut {cut}"));
        let end = d
            .fields
            .iter()
            .map(|f| f.0)
            .find(|s| s > start)
            .unwrap_or(trailer);
        let want = format!(
            "at byte {start}: {what} needs {} bytes, {} remain",
            end - start,
            cut - start
        );
        assert!(
            matches!(e, ImatrixProblem::Truncated { .. }),
            "cut {cut}: {e:?}"
        );
        assert_eq!(e.to_string(), want, "cut {cut}");
    }
    let g = gguf(&std_meta(), &small_gguf_tensors());
    // The last tensor's 8 data bytes end 24 bytes before the file does (32-byte padding).
    let data_end = g.len() - 24;
    for cut in 0..data_end {
        assert!(Imatrix::parse(g[..cut].to_vec()).is_err(), "gguf cut {cut}");
    }
    d.buf.len() + data_end
}

#[test]
fn case_names_are_unique_and_grouped() {
    let cases = cases();
    let mut names = std::collections::HashSet::new();
    for case in &cases {
        assert!(names.insert(case.name.as_str()), "{} twice", case.name);
        let (reader, rest) = case.name.split_once("-g").unwrap();
        assert!(["dat", "gguf"].contains(&reader), "{}", case.name);
        let group: u32 = rest[..2].parse().expect(&case.name);
        assert!((1..=16).contains(&group), "{}", case.name);
    }
}

#[test]
fn committed_corpus_matches_generator() {
    let files: Vec<(PathBuf, Vec<u8>)> = cases()
        .into_iter()
        .map(|c| (format!("{}.{}", c.name, ext(&c.name)).into(), c.bytes))
        .collect();
    support::corpus::check_committed(&corpus_dir(), &files, |p| {
        matches!(p.extension().and_then(|e| e.to_str()), Some("dat" | "gguf"))
    });
}

#[test]
fn every_committed_case() {
    run_committed();
}

#[test]
fn truncation_at_every_byte() {
    run_truncations();
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
    let cuts = run_truncations();
    println!("{n} imatrix cases, {cuts} truncations");
}
