//! The hostile-input corpus of the HuggingFace readers: the GGUF corpus's rules carried over to
//! safetensors files, `model.safetensors.index.json`, `tokenizer.model` (SentencePiece
//! protobuf), `tokenizer.json` / `tokenizer_config.json` and `config.json`.
//!
//! Every case is a model directory holding only the files it needs, written by the code
//! below, with what the reader must answer: the [`ConvertError`] variant, the byte offset
//! (when the reader reports one), the file and the words the message must contain (the
//! tensor or key at fault), or for a documented tolerated case what the reader returns.
//!
//! * Cases are committed as `testdata/hostile-hf/<case>/`; `committed_corpus_matches_generator`
//!   keeps them in step with the generator and `GGUFKIT_REGEN_HOSTILE=1` rewrites them.
//! * Truncations at every byte of a small safetensors file and a small `tokenizer.model`
//!   are generated, not committed.
//! * `resource_cases` feeds headers of tens of megabytes whose values would cost gigabytes
//!   as a JSON tree.
//! * `corpus_under_limits` runs everything again in a child process under `ulimit -v`
//!   (256 MB) and a 120 s timeout, so an allocation bomb or a hang fails the test.
//!
//! Case names start with the §5.6 group they carry over (`g01` truncation, `g03` counts and
//! lengths, `g04` strings, `g06` nesting and types, `g08` duplicates, `g10` dims, `g11`
//! size overflow, `g12` element types, `g13` offsets, `g14` typed values, `g15` shards).

use ggufkit_testsupport::golden as support;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ggufkit::gguf::{ArrayValue, Value};
use ggufkit::mapped::FileBytes;
use ggufkit_converters::hf::safetensors::{parse_file, StTensor};
use ggufkit_converters::hf::tokenizer::proto::parse_model;
use ggufkit_converters::hf::tokenizer::{vocab_metadata_report, VocabKind, VocabRequest};
use ggufkit_converters::hf::ModelDir;
use ggufkit_converters::hf::{read_hf_dir, HfOptions};
use ggufkit_converters::ConvertError;
use serde_json::json;

// ---------------------------------------------------------------------------------------
// Expectations.

/// What a reader returned.
enum Outcome {
    Tensors(Vec<StTensor>),
    Vocab(Vec<(String, Value)>),
    Model(usize),
}

enum Expect {
    /// A clean error: variant, offset (`None` = the reader reports none), file the message
    /// must start with (relative to the case directory), words it must contain.
    Reject {
        variant: &'static str,
        offset: Option<u64>,
        file: &'static str,
        needles: Vec<String>,
    },
    /// Documented tolerated input: what the reader must return.
    Accept(fn(&Outcome)),
}

fn format_err(file: &'static str, offset: Option<u64>, needles: &[&str]) -> Expect {
    Expect::Reject {
        variant: "Format",
        offset,
        file,
        needles: needles.iter().map(|s| s.to_string()).collect(),
    }
}

/// A malformed `model.safetensors` (the `Safetensors` variant) at `offset`.
fn st_err(offset: Option<u64>, needles: &[&str]) -> Expect {
    Expect::Reject {
        variant: "Safetensors",
        offset,
        file: ST,
        needles: needles.iter().map(|s| s.to_string()).collect(),
    }
}

/// A typed error of `variant` about `file` (no offset), with these words in its message.
fn typed_err(variant: &'static str, file: &'static str, needles: &[&str]) -> Expect {
    Expect::Reject {
        variant,
        offset: None,
        file,
        needles: needles.iter().map(|s| s.to_string()).collect(),
    }
}

/// A JSON file that does not parse, with the parser's words.
fn json_err(file: &'static str, needles: &[&str]) -> Expect {
    typed_err("BadJson", file, needles)
}

/// A config.json hparam of the wrong type or range (about `file`).
fn bad_hparam(file: &'static str, needles: &[&str]) -> Expect {
    Expect::Reject {
        variant: "BadHparam",
        offset: None,
        file,
        needles: needles.iter().map(|s| s.to_string()).collect(),
    }
}

fn other_err(variant: &'static str, needles: &[&str]) -> Expect {
    Expect::Reject {
        variant,
        offset: None,
        file: "",
        needles: needles.iter().map(|s| s.to_string()).collect(),
    }
}

/// Which reader a case feeds.
#[derive(Clone, Copy)]
enum Run {
    /// `parse_file` on `model.safetensors`.
    Safetensors,
    /// `vocab_metadata_report` with this vocabulary path and config.json as hparams.
    Vocab(VocabKind),
    /// `read_hf_dir` (config.json, shards, index), vocabulary errors allowed.
    Convert,
}

struct Case {
    name: String,
    files: Vec<(&'static str, Vec<u8>)>,
    run: Run,
    expect: Expect,
}

fn variant(e: &ConvertError) -> &'static str {
    match e {
        ConvertError::Io { .. } => "Io",
        ConvertError::Format { .. } => "Format",
        ConvertError::Safetensors { .. } => "Safetensors",
        ConvertError::BadJson { .. } => "BadJson",
        ConvertError::NotUtf8 { .. } => "NotUtf8",
        ConvertError::WrongType { .. } => "WrongType",
        ConvertError::OutOfRange { .. } => "OutOfRange",
        ConvertError::MissingKey { .. } => "MissingKey",
        ConvertError::MissingHparam { .. } => "MissingHparam",
        ConvertError::BadHparam { .. } => "BadHparam",
        ConvertError::Tensor { .. } => "Tensor",
        ConvertError::Shards { .. } => "Shards",
        ConvertError::Vocabulary { .. } => "Vocabulary",
        ConvertError::FileTooLarge { .. } => "FileTooLarge",
        ConvertError::MissingFile { .. } => "MissingFile",
        ConvertError::TokenizerLibrary { .. } => "TokenizerLibrary",
        ConvertError::Unsupported(_)
        | ConvertError::UnsupportedArchitecture { .. }
        | ConvertError::ArchitectureNotYet { .. }
        | ConvertError::NoTextModel { .. }
        | ConvertError::UnsupportedFeature { .. }
        | ConvertError::NoWeights { .. }
        | ConvertError::VocabTooLarge { .. } => "Unsupported",
        ConvertError::Other(_)
        | ConvertError::NotACount { .. }
        | ConvertError::UnprocessedExperts { .. } => "Other",
        ConvertError::Legacy(_) => "Legacy",
        ConvertError::Torch(_) => "Torch",
        ConvertError::Remote(_) => "Remote",
        ConvertError::HparamsContradictTensors { .. } => "HparamsContradictTensors",
        ConvertError::NeedsTarget { .. } => "NeedsTarget",
    }
}

fn run(case: &Case, dir: &Path) -> Result<Outcome, ConvertError> {
    match case.run {
        Run::Safetensors => {
            let path = dir.join("model.safetensors");
            let bytes = FileBytes::map(&path).map_err(|e| ConvertError::io(&path, e))?;
            parse_file(&path, &bytes).map(Outcome::Tensors)
        }
        Run::Vocab(kind) => {
            let cfg = dir.join("config.json");
            let hparams = match std::fs::read(&cfg) {
                Ok(b) => serde_json::from_slice(&b).unwrap(),
                Err(_) => json!({}),
            };
            let req = VocabRequest {
                dir: &ModelDir::new(dir),
                kind,
                arch: "llama",
                hparams: &hparams,
            };
            vocab_metadata_report(&req).map(|r| Outcome::Vocab(r.keys))
        }
        Run::Convert => read_hf_dir(
            dir,
            &HfOptions {
                allow_missing_vocab: true,
                ..HfOptions::default()
            },
        )
        .map(|c| Outcome::Model(c.model.tensors.len())),
    }
}

impl Case {
    fn check(&self, dir: &Path) {
        let name = &self.name;
        if std::env::var_os("GGUFKIT_HOSTILE_SHOW").is_some() {
            eprintln!("running {name}");
        }
        let start = Instant::now();
        let result = run(self, dir);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{name}: took {:?}",
            start.elapsed()
        );
        match (&self.expect, result) {
            (Expect::Accept(verify), Ok(out)) => verify(&out),
            (Expect::Accept(_), Err(e)) => panic!("{name}: must be accepted, got: {e}"),
            (Expect::Reject { variant: v, .. }, Ok(_)) => {
                panic!("{name}: accepted, but must fail with {v}")
            }
            (
                Expect::Reject {
                    variant: v,
                    offset,
                    file,
                    needles,
                },
                Err(e),
            ) => {
                let msg = e.to_string();
                if std::env::var_os("GGUFKIT_HOSTILE_SHOW").is_some() {
                    eprintln!("{name}: {} {msg}", variant(&e));
                }
                assert_eq!(variant(&e), *v, "{name}: {msg}");
                match &e {
                    ConvertError::Format { offset: got, .. }
                    | ConvertError::Safetensors { offset: got, .. } => {
                        assert_eq!(got, offset, "{name}: offset in {msg}")
                    }
                    ConvertError::NotUtf8 { offset: got, .. } => {
                        assert_eq!(Some(*got), *offset, "{name}: offset in {msg}")
                    }
                    _ => {}
                }
                if !file.is_empty() {
                    let want = dir.join(file).display().to_string();
                    assert!(msg.starts_with(&want), "{name}: not about {want}: {msg}");
                }
                for n in needles {
                    assert!(msg.contains(n.as_str()), "{name}: {n:?} not in: {msg}");
                }
                assert!(msg.len() <= 2048, "{name}: {} byte message", msg.len());
            }
        }
    }
}

#[derive(Default)]
struct Cases(Vec<Case>);

impl Cases {
    fn add(&mut self, name: &str, files: Vec<(&'static str, Vec<u8>)>, run: Run, expect: Expect) {
        self.0.push(Case {
            name: name.to_string(),
            files,
            run,
            expect,
        });
    }

    fn st(&mut self, name: &str, bytes: Vec<u8>, expect: Expect) {
        self.add(
            &format!("st-{name}"),
            vec![("model.safetensors", bytes)],
            Run::Safetensors,
            expect,
        );
    }
}

// ---------------------------------------------------------------------------------------
// safetensors.

const ST: &str = "model.safetensors";

/// A safetensors file with this header length, header text and data.
fn st_raw(len: u64, header: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = len.to_le_bytes().to_vec();
    out.extend_from_slice(header);
    out.extend_from_slice(data);
    out
}

fn st(header: &str, data: &[u8]) -> Vec<u8> {
    st_raw(header.len() as u64, header.as_bytes(), data)
}

/// The valid small file: a 2×2 F32 and a 3-element F16, with metadata.
const SMALL_HEADER: &str = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"b":{"dtype":"F16","shape":[3],"data_offsets":[16,22]}}"#;

fn small_st() -> Vec<u8> {
    st(SMALL_HEADER, &(0..22).collect::<Vec<u8>>())
}

/// A one-tensor header `t` with this dtype, shape and offsets, and `data` bytes.
fn one(dtype: &str, shape: &str, offs: &str, data: usize) -> Vec<u8> {
    let h = format!(r#"{{"t":{{"dtype":"{dtype}","shape":{shape},"data_offsets":{offs}}}}}"#);
    st(&h, &vec![0; data])
}

fn two(a: &str, b: &str, data: usize) -> Vec<u8> {
    let h = format!(
        r#"{{"a":{{"dtype":"U8","shape":[4],"data_offsets":{a}}},"b":{{"dtype":"U8","shape":[4],"data_offsets":{b}}}}}"#
    );
    st(&h, &vec![0; data])
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn tensors(out: &Outcome) -> &[StTensor] {
    match out {
        Outcome::Tensors(t) => t,
        _ => unreachable!(),
    }
}

fn safetensors_cases(c: &mut Cases) {
    let hl = SMALL_HEADER.len() as u64;
    let ok = |f: fn(&Outcome)| Expect::Accept(f);
    // g01: too short for the length; the valid file itself.
    c.st("g01-empty", vec![], st_err(None, &["0 bytes, too short"]));
    c.st(
        "g01-len-cut",
        vec![8, 0, 0, 0],
        st_err(None, &["4 bytes, too short"]),
    );
    c.st(
        "g01-valid-small",
        small_st(),
        ok(|o| {
            let t = tensors(o);
            assert_eq!(t.len(), 2);
            assert_eq!(
                (t[0].name.as_str(), t[0].shape.as_slice()),
                ("a", &[2, 2][..])
            );
            assert_eq!(&*t[1].bytes().unwrap(), &(16..22).collect::<Vec<u8>>()[..]);
        }),
    );
    // g03: the header length.
    for (name, len) in [
        ("2p64m1", u64::MAX),
        ("2p63", 1 << 63),
        ("limit-plus-1", (100 << 20) + 1),
    ] {
        c.st(
            &format!("g03-header-len-{name}"),
            st_raw(len, SMALL_HEADER.as_bytes(), &[0; 22]),
            st_err(Some(0), &[&format!("header length {len} exceeds")]),
        );
    }
    c.st(
        "g03-header-len-remaining-plus-1",
        st_raw(hl + 23, SMALL_HEADER.as_bytes(), &[0; 22]),
        st_err(
            Some(0),
            &[&format!(
                "declares {} bytes but only {} follow",
                hl + 23,
                hl + 22
            )],
        ),
    );
    c.st(
        "g03-header-len-0",
        st_raw(0, b"", &[]),
        st_err(Some(8), &["invalid safetensors header", "EOF"]),
    );
    // g04: the header text.
    c.st(
        "g04-not-json",
        st("hello", &[]),
        st_err(Some(8), &["invalid safetensors header", "line 1 column 1"]),
    );
    c.st(
        "g04-not-an-object",
        st("[1,2]", &[]),
        st_err(Some(8), &["JSON object of tensor entries"]),
    );
    c.st(
        "g04-invalid-utf8",
        st_raw(8, b"{\"\xff\":{}}", &[]),
        st_err(Some(10), &["not UTF-8"]),
    );
    c.st(
        "g04-nul-padding",
        st("{}\0\0\0\0\0\0", &[]),
        st_err(Some(8), &["trailing characters"]),
    );
    c.st(
        "g04-space-padding",
        st("  {}    ", &[]),
        ok(|o| assert!(tensors(o).is_empty())),
    );
    c.st(
        "g04-unknown-field-ignored",
        st(
            r#"{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"extra":[[{"x":1}]]}}"#,
            &[7],
        ),
        ok(|o| assert_eq!(*tensors(o)[0].bytes().unwrap(), [7])),
    );
    // g06: nesting and value types.
    // Values the reader does not keep are skipped without recursion (serde_json's
    // `IgnoredAny`), so nesting there costs neither stack nor heap; where a value is read,
    // its type is wrong before any depth is reached.
    c.st(
        "g06-nested-10000-unknown-field",
        st(&format!(r#"{{"t":{{"extra":{}}}}}"#, nested(10_000)), &[]),
        st_err(
            Some(8),
            &["tensor 't': no \"dtype\" at line 1 column 20015"],
        ),
    );
    c.st(
        "g06-nested-10000-shape",
        st(&format!(r#"{{"t":{{"shape":{}}}}}"#, nested(10_000)), &[]),
        st_err(Some(8), &["tensor 't': \"shape\" holds an array"]),
    );
    c.st(
        "g06-nested-10000-metadata",
        st(&format!(r#"{{"__metadata__":{}}}"#, nested(10_000)), &[]),
        st_err(
            Some(8),
            &["invalid type: sequence, expected \"__metadata__\" as an object"],
        ),
    );
    c.st(
        "g06-nested-10000-metadata-value",
        st(
            &format!(r#"{{"__metadata__":{{"k":{}}}}}"#, nested(10_000)),
            &[],
        ),
        st_err(Some(8), &["\"__metadata__\" value of 'k' is an array"]),
    );
    c.st(
        "g06-entry-not-object",
        st(r#"{"t":[0,4]}"#, &[]),
        st_err(Some(8), &["tensor 't': the entry is an array"]),
    );
    c.st(
        "g06-dtype-number",
        st(
            r#"{"t":{"dtype":4,"shape":[1],"data_offsets":[0,1]}}"#,
            &[0],
        ),
        st_err(Some(8), &["tensor 't': \"dtype\" is the integer 4"]),
    );
    c.st(
        "g06-missing-shape",
        st(r#"{"t":{"dtype":"U8","data_offsets":[0,1]}}"#, &[0]),
        st_err(Some(8), &["tensor 't': no \"shape\""]),
    );
    c.st(
        "g06-metadata-number",
        st(r#"{"__metadata__":7}"#, &[]),
        st_err(Some(8), &["__metadata__", "integer `7`"]),
    );
    c.st(
        "g06-metadata-value-number",
        st(r#"{"__metadata__":{"format":1}}"#, &[]),
        st_err(
            Some(8),
            &["\"__metadata__\" value of 'format' is the integer 1"],
        ),
    );
    c.st(
        "g06-metadata-null",
        st(r#"{"__metadata__":null}"#, &[]),
        ok(|o| assert!(tensors(o).is_empty())),
    );
    // g08: duplicates.
    c.st(
        "g08-dup-name-identical",
        st(
            r#"{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
            &[0],
        ),
        st_err( Some(8), &["tensor 't' appears twice"]),
    );
    c.st(
        "g08-dup-name-different",
        st(
            r#"{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"t":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
            &[0, 0],
        ),
        st_err( Some(8), &["tensor 't' appears twice"]),
    );
    c.st(
        "g08-dup-metadata",
        st(r#"{"__metadata__":{},"__metadata__":{}}"#, &[]),
        st_err(Some(8), &["\"__metadata__\" appears twice"]),
    );
    // g10: dimensions.
    c.st(
        "g10-dim-0",
        one("F32", "[0,4]", "[0,0]", 0),
        ok(|o| assert_eq!(tensors(o)[0].n_elements(), 0)),
    );
    c.st(
        "g10-dim-0-huge-others",
        one("F32", "[0,4611686018427387904]", "[0,0]", 0),
        ok(|o| assert_eq!(tensors(o)[0].n_elements(), 0)),
    );
    c.st(
        "g10-dim-negative",
        one("F32", "[-1]", "[0,0]", 0),
        st_err(
            Some(8),
            &["tensor 't': \"shape\" holds the negative number -1"],
        ),
    );
    c.st(
        "g10-dim-negative-2p63",
        one("F32", "[-9223372036854775808]", "[0,0]", 0),
        st_err(Some(8), &["negative number -9223372036854775808"]),
    );
    c.st(
        "g10-dim-2p64",
        one("F32", "[18446744073709551616]", "[0,0]", 0),
        st_err(Some(8), &["tensor 't': \"shape\" holds floating point"]),
    );
    c.st(
        "g10-dim-float",
        one("F32", "[1.5]", "[0,0]", 0),
        st_err(Some(8), &["floating point `1.5`"]),
    );
    c.st(
        "g10-dims-17",
        one("F32", &format!("[{}1]", "1,".repeat(16)), "[0,4]", 4),
        st_err(Some(8), &["\"shape\" has more than 16 entries"]),
    );
    c.st(
        "g10-shape-not-array",
        one("F32", "4", "[0,16]", 16),
        st_err(Some(8), &["\"shape\" is the integer 4, not an array"]),
    );
    // g11: element count and byte size overflow.
    c.st(
        "g11-nelements-2p32x2p32",
        one("U8", "[4294967296,4294967296]", "[0,0]", 0),
        st_err(
            None,
            &["tensor 't': shape [4294967296, 4294967296] overflows"],
        ),
    );
    c.st(
        "g11-nbytes-f64-2p61",
        one("F64", "[2305843009213693952]", "[0,0]", 0),
        st_err(None, &["tensor 't': shape [2305843009213693952] overflows"]),
    );
    c.st(
        "g11-nbytes-huge-fits",
        one(
            "F32",
            "[4611686018427387903]",
            "[0,18446744073709551612]",
            4,
        ),
        st_err(
            None,
            &["tensor 't'", "exceeds the file's data area of 4 bytes"],
        ),
    );
    // g12: element types.
    for (name, dtype) in [
        ("f128", "F128"),
        ("u16", "U16"),
        ("f4", "F4"),
        ("lowercase", "f32"),
        ("empty", ""),
    ] {
        c.st(
            &format!("g12-dtype-{name}"),
            one(dtype, "[1]", "[0,4]", 4),
            st_err(None, &[&format!("tensor 't': unsupported dtype {dtype:?}")]),
        );
    }
    // g13: data offsets.
    c.st(
        "g13-reversed",
        one("U8", "[4]", "[4,0]", 4),
        st_err(None, &["tensor 't': data_offsets [4, 0] are reversed"]),
    );
    c.st(
        "g13-past-eof",
        one("U8", "[4]", "[0,4]", 3),
        st_err(None, &["tensor 't'", "[0, 4) exceeds", "3 bytes"]),
    );
    c.st(
        "g13-end-2p64m1",
        one(
            "U8",
            "[4]",
            "[18446744073709551611,18446744073709551615]",
            4,
        ),
        st_err(
            None,
            &["tensor 't'", "exceeds the file's data area of 4 bytes"],
        ),
    );
    c.st(
        "g13-size-mismatch",
        one("F32", "[4]", "[0,12]", 12),
        st_err(
            None,
            &["tensor 't': shape [4] of F32 needs 16 bytes but data_offsets give 12"],
        ),
    );
    c.st(
        "g13-offsets-3",
        one("U8", "[4]", "[0,4,8]", 8),
        st_err(Some(8), &["\"data_offsets\" has more than 2 entries"]),
    );
    c.st(
        "g13-offsets-1",
        one("U8", "[4]", "[4]", 4),
        st_err(Some(8), &["\"data_offsets\" has 1 entries, not 2"]),
    );
    c.st(
        "g13-offset-negative",
        one("U8", "[4]", "[-4,0]", 4),
        st_err(Some(8), &["\"data_offsets\" holds the negative number -4"]),
    );
    let data_at = two("[0,4]", "[4,8]", 0).len() as u64;
    c.st(
        "g13-contiguous-control",
        two("[0,4]", "[4,8]", 8),
        ok(|o| assert_eq!(tensors(o).len(), 2)),
    );
    c.st(
        "g13-out-of-order",
        two("[4,8]", "[0,4]", 8),
        ok(|o| assert_eq!(tensors(o)[0].offset + 4, tensors(o)[1].offset + 8)),
    );
    c.st(
        "g13-overlap",
        two("[0,4]", "[2,6]", 8),
        st_err(
            Some(data_at + 2),
            &["tensor 'b': data_offsets [2, 6] overlaps", "ends at 4"],
        ),
    );
    c.st(
        "g13-gap",
        two("[0,4]", "[5,9]", 9),
        st_err(
            Some(data_at + 5),
            &["tensor 'b': data_offsets [5, 9] leaves a gap"],
        ),
    );
    c.st(
        "g13-hole-before-first",
        two("[1,5]", "[5,9]", 9),
        st_err(
            Some(data_at + 1),
            &["tensor 'a': data_offsets [1, 5] leaves a gap"],
        ),
    );
    c.st(
        "g13-same-range",
        two("[0,4]", "[0,4]", 4),
        st_err(Some(data_at), &["tensor 'b': data_offsets [0, 4] overlaps"]),
    );
    c.st(
        "g13-trailing-byte",
        two("[0,4]", "[4,8]", 9),
        st_err(Some(data_at + 8), &["1 bytes after the last tensor's data"]),
    );
    c.st(
        "g13-zero-size-pair",
        two_zero(),
        ok(|o| assert!(tensors(o).iter().all(|t| t.len == 0))),
    );
}

fn two_zero() -> Vec<u8> {
    st(
        r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]}}"#,
        &[],
    )
}

// ---------------------------------------------------------------------------------------
// model.safetensors.index.json (and shards without one).

const INDEX: &str = "model.safetensors.index.json";

const LLAMA_CONFIG: &str = r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
  "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 8,
  "rms_norm_eps": 1e-5}"#;

/// A shard holding these 32-element F32 tensors.
fn shard(names: &[&str]) -> Vec<u8> {
    let mut header = String::from("{");
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            header.push(',');
        }
        header.push_str(&format!(
            r#""{n}":{{"dtype":"F32","shape":[32],"data_offsets":[{},{}]}}"#,
            i * 128,
            (i + 1) * 128
        ));
    }
    header.push('}');
    st(&header, &vec![0; names.len() * 128])
}

const NORM: &str = "model.norm.weight";

fn model(files: Vec<(&'static str, Vec<u8>)>) -> Vec<(&'static str, Vec<u8>)> {
    let mut v = vec![("config.json", LLAMA_CONFIG.as_bytes().to_vec())];
    v.extend(files);
    v
}

fn index_cases(c: &mut Cases) {
    let one_shard = |index: &str| {
        model(vec![
            (ST, shard(&[NORM])),
            (INDEX, index.as_bytes().to_vec()),
        ])
    };
    let wm = |map: &str| format!(r#"{{"metadata": {{"total_size": 128}}, "weight_map": {map}}}"#);
    c.add(
        "idx-g01-control",
        one_shard(&wm(r#"{"model.norm.weight": "model.safetensors"}"#)),
        Run::Convert,
        Expect::Accept(|o| assert!(matches!(o, Outcome::Model(1)))),
    );
    c.add(
        "idx-g04-not-json",
        one_shard("{\"weight_map\": {"),
        Run::Convert,
        json_err(INDEX, &["EOF"]),
    );
    c.add(
        "idx-g06-nested-10000",
        one_shard(&format!(r#"{{"weight_map": {}}}"#, nested(10_000))),
        Run::Convert,
        json_err(INDEX, &["recursion limit exceeded"]),
    );
    c.add(
        "idx-g06-weight-map-array",
        one_shard(r#"{"weight_map": ["model.safetensors"]}"#),
        Run::Convert,
        typed_err("MissingKey", INDEX, &["no \"weight_map\""]),
    );
    c.add(
        "idx-g06-weight-map-value-number",
        one_shard(&wm(r#"{"model.norm.weight": 1}"#)),
        Run::Convert,
        typed_err(
            "Shards",
            INDEX,
            &["weight_map entry 'model.norm.weight' is not a file name"],
        ),
    );
    for (name, file) in [
        ("dotdot", "../model.safetensors"),
        ("dotdot-bare", ".."),
        ("absolute", "/etc/passwd"),
        ("backslash", "..\\\\model.safetensors"),
    ] {
        c.add(
            &format!("idx-g15-shard-{name}"),
            one_shard(&wm(&format!(r#"{{"model.norm.weight": "{file}"}}"#))),
            Run::Convert,
            typed_err("Shards", INDEX, &["outside the model directory"]),
        );
    }
    c.add(
        "idx-g15-shard-dot",
        one_shard(&wm(r#"{"model.norm.weight": "."}"#)),
        Run::Convert,
        typed_err("Shards", INDEX, &["outside the model directory"]),
    );
    c.add(
        "idx-g15-missing-shard",
        one_shard(&wm(
            r#"{"model.norm.weight": "model.safetensors", "lm_head.weight": "model-00002-of-00002.safetensors"}"#,
        )),
        Run::Convert,
        typed_err("Shards", "model-00002-of-00002.safetensors",
            &["shard named by model.safetensors.index.json is missing"],
        ),
    );
    c.add(
        "idx-g15-tensor-absent-from-shard",
        one_shard(&wm(
            r#"{"model.norm.weight": "model.safetensors", "lm_head.weight": "model.safetensors"}"#,
        )),
        Run::Convert,
        typed_err("Shards", INDEX, &["tensors 'lm_head.weight' not found"]),
    );
    c.add(
        "idx-g15-tensor-not-in-index",
        one_shard(&wm(r#"{"lm_head.weight": "model.safetensors"}"#)),
        Run::Convert,
        typed_err(
            "Shards",
            INDEX,
            &["'model.norm.weight' are in the shards but not in the weight map"],
        ),
    );
    c.add(
        "idx-g15-tensor-in-two-shards",
        model(vec![
            ("model-00001-of-00002.safetensors", shard(&[NORM])),
            ("model-00002-of-00002.safetensors", shard(&[NORM, "x"])),
            (
                INDEX,
                wm(r#"{"model.norm.weight": "model-00001-of-00002.safetensors", "x": "model-00002-of-00002.safetensors"}"#)
                    .into_bytes(),
            ),
        ]),
        Run::Convert,
        typed_err("Shards", "model-00002-of-00002.safetensors",
            &["tensor 'model.norm.weight' is also in model-00001-of-00002.safetensors"],
        ),
    );
    c.add(
        "idx-g15-no-index-tensor-in-two-shards",
        model(vec![
            ("model-00001-of-00002.safetensors", shard(&[NORM])),
            ("model-00002-of-00002.safetensors", shard(&[NORM])),
        ]),
        Run::Convert,
        typed_err(
            "Shards",
            "model-00002-of-00002.safetensors",
            &["tensor 'model.norm.weight' is also in model-00001-of-00002.safetensors"],
        ),
    );
    c.add(
        "idx-g15-empty-weight-map",
        one_shard(&wm("{}")),
        Run::Convert,
        typed_err("Shards", INDEX, &["the weight_map is empty"]),
    );
    c.add(
        "idx-g15-bad-shard-named",
        model(vec![
            (ST, st("[]", &[])),
            (
                INDEX,
                wm(r#"{"model.norm.weight": "model.safetensors"}"#).into_bytes(),
            ),
        ]),
        Run::Convert,
        st_err(Some(8), &["JSON object of tensor entries"]),
    );
}

// ---------------------------------------------------------------------------------------
// tokenizer.model (SentencePiece protobuf).

const SPM: &str = "tokenizer.model";

fn varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn len_field(n: u64, body: &[u8], out: &mut Vec<u8>) {
    varint(n << 3 | 2, out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

fn piece(text: &[u8], score: f32, kind: Option<u64>) -> Vec<u8> {
    let mut p = Vec::new();
    len_field(1, text, &mut p);
    varint(2 << 3 | 5, &mut p);
    p.extend(score.to_le_bytes());
    if let Some(k) = kind {
        varint(3 << 3, &mut p);
        varint(k, &mut p);
    }
    p
}

/// The pieces, then trainer_spec (unigram, unk 0, bos 1, eos 2) and normalizer_spec.
fn spm_model(pieces: &[Vec<u8>], vocab_size: Option<u64>) -> Vec<u8> {
    let mut m = Vec::new();
    for p in pieces {
        len_field(1, p, &mut m);
    }
    let mut ts = Vec::new();
    for (f, v) in [(3, 1), (40, 0), (41, 1), (42, 2)] {
        varint(f << 3, &mut ts);
        varint(v, &mut ts);
    }
    if let Some(n) = vocab_size {
        varint(4 << 3, &mut ts);
        varint(n, &mut ts);
    }
    len_field(2, &ts, &mut m);
    let mut ns = Vec::new();
    len_field(1, b"identity", &mut ns);
    len_field(3, &ns, &mut m);
    m
}

fn small_pieces() -> Vec<Vec<u8>> {
    vec![
        piece(b"<unk>", 0.0, Some(2)),
        piece(b"<s>", 0.0, Some(3)),
        piece(b"</s>", 0.0, Some(3)),
        piece("\u{2581}a".as_bytes(), -1.0, None),
        piece(b"b", -2.0, None),
    ]
}

fn small_spm() -> Vec<u8> {
    spm_model(&small_pieces(), None)
}

fn vocab(out: &Outcome) -> &[(String, Value)] {
    match out {
        Outcome::Vocab(v) => v,
        _ => unreachable!(),
    }
}

fn key<'a>(out: &'a Outcome, k: &str) -> &'a Value {
    &vocab(out).iter().find(|(n, _)| n == k).unwrap().1
}

fn spm_cases(c: &mut Cases) {
    let spm = |bytes: Vec<u8>| vec![(SPM, bytes)];
    let llama = Run::Vocab(VocabKind::Llama);
    let bad = |at: u64, what: &str| format_err(SPM, Some(at), &["not a SentencePiece model", what]);
    c.add(
        "spm-g01-control",
        spm(small_spm()),
        llama,
        Expect::Accept(|o| match key(o, "tokenizer.ggml.tokens") {
            Value::Array(ArrayValue::String(t)) => assert_eq!(t.len(), 5),
            v => panic!("{v:?}"),
        }),
    );
    c.add("spm-g01-empty", spm(vec![]), llama, bad(0, "no pieces"));
    // g03: varints and lengths.
    let mut v = vec![0x0a];
    v.extend([0xff; 10]);
    v.push(1);
    c.add(
        "spm-g03-varint-11-bytes",
        spm(v),
        llama,
        bad(1, "varint longer than 64 bits"),
    );
    let mut v = vec![0x0a];
    v.extend([0x80; 9]);
    c.add(
        "spm-g03-varint-truncated",
        spm(v),
        llama,
        bad(1, "truncated varint"),
    );
    for (name, len) in [
        ("2p63", 1u64 << 63),
        ("2p64m1", u64::MAX),
        ("remaining-plus-1", 4),
    ] {
        let mut v = vec![0x0a];
        varint(len, &mut v);
        let at = v.len() as u64;
        v.extend([0x0a, 1, b'a']);
        c.add(
            &format!("spm-g03-len-{name}"),
            spm(v),
            llama,
            bad(at, &format!("field 1 needs {len} bytes but only 3 remain")),
        );
    }
    let mut v = small_spm();
    len_field(1, &[], &mut v);
    let p = piece(b"c", 0.0, None);
    v.push(0x0a);
    varint(p.len() as u64 + 1, &mut v);
    let at = v.len() as u64;
    v.extend(&p);
    c.add(
        "spm-g03-piece-len-remaining-plus-1",
        spm(v),
        llama,
        bad(
            at,
            &format!(
                "field 1 needs {} bytes but only {} remain",
                p.len() + 1,
                p.len()
            ),
        ),
    );
    c.add(
        "spm-g03-trainer-vocab-size-2p40",
        spm(spm_model(&small_pieces(), Some(1 << 40))),
        llama,
        // Tolerated: as in the reference, the vocabulary is the pieces (padded to config.json's
        // vocab_size, which is capped); trainer_spec.vocab_size sizes nothing.
        Expect::Accept(|o| match key(o, "tokenizer.ggml.tokens") {
            Value::Array(ArrayValue::String(t)) => assert_eq!(t.len(), 5),
            v => panic!("{v:?}"),
        }),
    );
    c.add(
        "spm-g03-config-vocab-size-2p40",
        vec![
            (SPM, small_spm()),
            ("config.json", br#"{"vocab_size": 1099511627776}"#.to_vec()),
        ],
        llama,
        other_err(
            "Unsupported",
            &["vocab_size 1099511627776 is larger than 16777216"],
        ),
    );
    // g04: piece text.
    c.add(
        "spm-g04-piece-invalid-utf8",
        spm(spm_model(
            &[piece(b"<unk>", 0.0, Some(2)), piece(b"\xff\xfe", 0.0, None)],
            None,
        )),
        llama,
        bad(18, "SentencePiece.piece is not UTF-8"),
    );
    c.add(
        "spm-g04-piece-empty",
        spm(spm_model(
            &[piece(b"<unk>", 0.0, Some(2)), piece(b"", 0.0, None)],
            None,
        )),
        llama,
        bad(16, "piece 1 is empty"),
    );
    // g06: wire types.
    c.add(
        "spm-g06-pieces-as-varint",
        spm(vec![0x08, 0x05]),
        llama,
        bad(0, "ModelProto.pieces is not length-delimited"),
    );
    for wire in [6u8, 7] {
        c.add(
            &format!("spm-g06-wire-type-{wire}"),
            spm(vec![0x08 | wire, 0]),
            llama,
            bad(0, &format!("field 1: bad wire type {wire}")),
        );
    }
    c.add(
        "spm-g06-wire-type-group",
        spm(vec![0x0b, 0x0c]),
        llama,
        bad(0, "deprecated group wire type 3"),
    );
    c.add(
        "spm-g06-field-0",
        spm(vec![0x02, 0x00]),
        llama,
        bad(0, "field number 0"),
    );
    let mut p = Vec::new();
    len_field(1, b"x", &mut p);
    varint(2 << 3, &mut p);
    varint(1, &mut p);
    c.add(
        "spm-g06-score-as-varint",
        spm(spm_model(&[piece(b"<unk>", 0.0, Some(2)), p], None)),
        llama,
        bad(21, "SentencePiece.score is not a 32-bit float"),
    );
    let mut p = Vec::new();
    len_field(1, b"x", &mut p);
    len_field(3, b"", &mut p);
    c.add(
        "spm-g06-type-as-bytes",
        spm(spm_model(&[piece(b"<unk>", 0.0, Some(2)), p], None)),
        llama,
        bad(21, "SentencePiece.type is not a varint"),
    );
    c.add(
        "spm-g06-unknown-piece-type",
        spm(spm_model(
            &[
                piece(b"<unk>", 0.0, Some(2)),
                piece(b"x", 0.0, Some(99)),
                piece(b"y", 0.0, Some(u64::MAX)),
            ],
            None,
        )),
        llama,
        Expect::Accept(|o| match key(o, "tokenizer.ggml.token_type") {
            Value::Array(ArrayValue::I32(t)) => assert_eq!(t[1..], [1, 1], "read as NORMAL"),
            v => panic!("{v:?}"),
        }),
    );
    // g08: duplicates.
    c.add(
        "spm-g08-duplicate-piece",
        spm(spm_model(
            &[
                piece(b"<unk>", 0.0, Some(2)),
                piece(b"x", 0.0, None),
                piece(b"x", 0.0, None),
            ],
            None,
        )),
        llama,
        bad(26, "piece 2 \"x\" is already defined as piece 1"),
    );
    // g14: values.
    c.add(
        "spm-g14-score-nan",
        spm(spm_model(
            &[piece(b"<unk>", 0.0, Some(2)), piece(b"x", f32::NAN, None)],
            None,
        )),
        llama,
        // Tolerated: the reference copies scores unchecked (GetScore), NaN included.
        Expect::Accept(|o| match key(o, "tokenizer.ggml.scores") {
            Value::Array(ArrayValue::F32(s)) => assert!(s[0] == 0.0 && s[1].is_nan()),
            v => panic!("{v:?}"),
        }),
    );
}

// ---------------------------------------------------------------------------------------
// tokenizer.json, tokenizer_config.json, config.json.

const TJ: &str = "tokenizer.json";
const TC: &str = "tokenizer_config.json";

fn tokenizer_json(vocab: &str, merges: &str, added: &str) -> Vec<u8> {
    format!(
        r#"{{"version":"1.0","truncation":null,"padding":null,"added_tokens":{added},
"normalizer":null,"pre_tokenizer":{{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}},
"post_processor":null,"decoder":null,"model":{{"type":"BPE","dropout":null,"unk_token":null,
"continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,
"vocab":{vocab},"merges":{merges}}}}}"#
    )
    .into_bytes()
}

fn refused(what: &str) -> Expect {
    typed_err(
        "TokenizerLibrary",
        TJ,
        &["the tokenizers library refuses it", what],
    )
}

fn tokens(out: &Outcome) -> Vec<String> {
    match key(out, "tokenizer.ggml.tokens") {
        Value::Array(ArrayValue::String(t)) => {
            t.iter().map(|s| s.to_lossy().into_owned()).collect()
        }
        v => panic!("{v:?}"),
    }
}

fn json_cases(c: &mut Cases) {
    let gpt2 = Run::Vocab(VocabKind::Gpt2);
    let vocab3 = r#"{"a":0,"b":1,"ab":2}"#;
    let tj =
        |vocab: &str, merges: &str, added: &str| vec![(TJ, tokenizer_json(vocab, merges, added))];
    c.add(
        "tok-g01-control",
        tj(vocab3, r#"["a b"]"#, "[]"),
        gpt2,
        Expect::Accept(|o| assert_eq!(tokens(o), ["a", "b", "ab"])),
    );
    c.add(
        "tok-g04-invalid-json",
        vec![(TJ, b"{\"model\": ".to_vec())],
        gpt2,
        json_err(TJ, &["(line 1, column 10)"]),
    );
    c.add(
        "tok-g04-invalid-utf8",
        vec![(TJ, b"{\"m\xffodel\": 1}".to_vec())],
        gpt2,
        Expect::Reject {
            variant: "NotUtf8",
            offset: Some(3),
            file: TJ,
            needles: Vec::new(),
        },
    );
    c.add(
        "tok-g06-nested-10000",
        vec![(
            TJ,
            format!(r#"{{"model": {}}}"#, nested(10_000)).into_bytes(),
        )],
        gpt2,
        json_err(TJ, &["recursion limit exceeded"]),
    );
    c.add(
        "tok-g03-vocab-id-out-of-range",
        vec![
            (
                TJ,
                tokenizer_json(r#"{"a":0,"b":1,"ab":7}"#, r#"["a b"]"#, "[]"),
            ),
            ("config.json", br#"{"vocab_size": 3}"#.to_vec()),
        ],
        gpt2,
        typed_err("Vocabulary", TJ, &["token id 7 is not below vocab_size 3"]),
    );
    c.add(
        "tok-g03-vocab-id-u32max",
        tj(r#"{"a":0,"b":1,"ab":4294967295}"#, r#"["a b"]"#, "[]"),
        gpt2,
        typed_err(
            "Vocabulary",
            TJ,
            &["token id 4294967295 is not below vocab_size 3"],
        ),
    );
    c.add(
        "tok-g03-vocab-id-2p40",
        tj(r#"{"a":0,"b":1,"ab":1099511627776}"#, r#"["a b"]"#, "[]"),
        gpt2,
        refused("integer `1099511627776`, expected u32"),
    );
    c.add(
        "tok-g03-vocab-id-negative",
        tj(r#"{"a":0,"b":1,"ab":-1}"#, r#"["a b"]"#, "[]"),
        gpt2,
        refused("integer `-1`, expected u32"),
    );
    c.add(
        "tok-g08-vocab-id-duplicated",
        tj(r#"{"a":0,"b":1,"ab":1}"#, r#"["a b"]"#, "[]"),
        gpt2,
        // Tolerated as by the reference: one text per id (the smaller), the id left free
        // becomes a [PAD] entry.
        Expect::Accept(|o| assert_eq!(tokens(o), ["a", "ab", "[PAD2]"])),
    );
    c.add(
        "tok-g13-merge-unknown-token",
        tj(vocab3, r#"["a zz"]"#, "[]"),
        gpt2,
        refused("Token `zz` out of vocabulary"),
    );
    c.add(
        "tok-g03-added-token-id-2p32",
        tj(
            vocab3,
            r#"["a b"]"#,
            r#"[{"id":4294967296,"content":"<x>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}]"#,
        ),
        gpt2,
        refused("integer `4294967296`, expected u32"),
    );
    c.add(
        "tok-g03-config-vocab-size-2p40",
        vec![
            (TJ, tokenizer_json(vocab3, r#"["a b"]"#, "[]")),
            ("config.json", br#"{"vocab_size": 1099511627776}"#.to_vec()),
        ],
        gpt2,
        other_err(
            "Unsupported",
            &["vocab_size 1099511627776 is larger than 16777216"],
        ),
    );
    c.add(
        "tok-g03-config-vocab-size-negative",
        vec![
            (TJ, tokenizer_json(vocab3, r#"["a b"]"#, "[]")),
            ("config.json", br#"{"vocab_size": -3}"#.to_vec()),
        ],
        gpt2,
        other_err("Other", &["hparam vocab_size = -3 is not a count"]),
    );
    c.add(
        "tc-g04-invalid-json",
        vec![
            (TJ, tokenizer_json(vocab3, r#"["a b"]"#, "[]")),
            (TC, b"{".to_vec()),
        ],
        gpt2,
        json_err(TC, &[]),
    );
    c.add(
        "tc-g06-nested-10000",
        vec![
            (TJ, tokenizer_json(vocab3, r#"["a b"]"#, "[]")),
            (TC, format!(r#"{{"x": {}}}"#, nested(10_000)).into_bytes()),
        ],
        gpt2,
        json_err(TC, &["recursion limit exceeded"]),
    );
}

fn cfg_name() -> &'static str {
    "config.json"
}

fn config_cases(c: &mut Cases) {
    let with = |k: &str, v: &str| {
        let mut cfg: serde_json::Value = serde_json::from_str(LLAMA_CONFIG).unwrap();
        cfg[k] = serde_json::from_str(v).unwrap();
        vec![
            ("config.json", serde_json::to_vec(&cfg).unwrap()),
            (ST, shard(&[NORM])),
        ]
    };
    let cfg = "config.json";
    for (k, short, key) in [
        (
            "num_hidden_layers",
            "layers",
            r#"["n_layers", "num_hidden_layers", "n_layer", "num_layers"]"#,
        ),
        ("vocab_size", "vocab", r#"["vocab_size"]"#),
        ("hidden_size", "hidden", ""),
    ] {
        for (name, v) in [
            ("2p40", "1099511627776"),
            ("negative", "-1"),
            ("string", "\"32\""),
            ("float", "1.5"),
        ] {
            let out_of_range = |want: String| typed_err("OutOfRange", cfg, &[&want]);
            let expect = match (short, name) {
                ("layers", "2p40") => {
                    out_of_range(format!("{key}: block count: 1099511627776 is out of range"))
                }
                ("vocab", "2p40") => {
                    out_of_range("llama.vocab_size: 1099511627776 is out of range".into())
                }
                ("hidden", "2p40") => {
                    out_of_range("llama.embedding_length: 1099511627776 is out of range".into())
                }
                ("hidden", _) => typed_err(
                    "WrongType",
                    cfg,
                    &[&format!(
                        "llama.embedding_length: expected an integer (list), found {v}"
                    )],
                ),
                _ => {
                    c.add(
                        &format!("cfg-g14-{short}-{name}"),
                        with(k, v),
                        Run::Convert,
                        bad_hparam(
                            cfg,
                            &[&format!(
                                "{key}: expected a non-negative integer, found {v}"
                            )],
                        ),
                    );
                    continue;
                }
            };
            c.add(
                &format!("cfg-g14-{short}-{name}"),
                with(k, v),
                Run::Convert,
                expect,
            );
        }
    }
    // Llama-3 rope builds one factor per rotary dimension pair: head_dim must not size it.
    let llama3 =
        r#"{"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}"#;
    for (name, k, v, dim) in [
        ("head-dim-2p40", "head_dim", "1099511627776", 1u64 << 40),
        ("hidden-2p40", "hidden_size", "1099511627776", 1 << 39),
    ] {
        let mut files = with(k, v);
        let mut cfg: serde_json::Value = serde_json::from_slice(&files[0].1).unwrap();
        cfg["rope_scaling"] = serde_json::from_str(llama3).unwrap();
        files[0].1 = serde_json::to_vec(&cfg).unwrap();
        c.add(
            &format!("cfg-g14-rope-llama3-{name}"),
            files,
            Run::Convert,
            typed_err(
                "OutOfRange",
                cfg_name(),
                &[&format!("rope dimension (head_dim): {dim} is out of range")],
            ),
        );
    }
    let raw = |text: Vec<u8>| vec![("config.json", text), (ST, shard(&[NORM]))];
    c.add(
        "cfg-g04-invalid-json",
        raw(b"{\"model_type\": ".to_vec()),
        Run::Convert,
        json_err(cfg, &["EOF while parsing a value at line 1 column 15"]),
    );
    c.add(
        "cfg-g06-nested-10000",
        raw(format!(r#"{{"x": {}}}"#, nested(10_000)).into_bytes()),
        Run::Convert,
        json_err(cfg, &["recursion limit exceeded"]),
    );
    c.add(
        "cfg-g06-top-level-array",
        raw(b"[]".to_vec()),
        Run::Convert,
        typed_err(
            "WrongType",
            cfg,
            &["the top level: expected an object, found an array"],
        ),
    );
}

// ---------------------------------------------------------------------------------------
// The runs.

fn cases() -> Vec<Case> {
    let mut c = Cases::default();
    safetensors_cases(&mut c);
    index_cases(&mut c);
    spm_cases(&mut c);
    json_cases(&mut c);
    config_cases(&mut c);
    c.0
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/hostile-hf")
}

fn for_each_case(cases: &[Case], check: impl Fn(&Case)) {
    let failed: Vec<&str> = cases
        .iter()
        .filter(|case| std::panic::catch_unwind(AssertUnwindSafe(|| check(case))).is_err())
        .map(|case| case.name.as_str())
        .collect();
    assert!(failed.is_empty(), "failed cases: {failed:?}");
}

fn run_committed() -> usize {
    let cases = cases();
    let dir = corpus_dir();
    for_each_case(&cases, |case| case.check(&dir.join(&case.name)));
    let on_disk = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(
        on_disk,
        cases.len(),
        "case directories in {}",
        dir.display()
    );
    cases.len()
}

/// Every cut of the small safetensors file: too short for the length, the header cut, or
/// the data cut (the first tensor by name whose range passes the end is named).
fn run_safetensors_truncations() -> usize {
    let full = small_st();
    let hl = SMALL_HEADER.len();
    let path = Path::new("cut.safetensors");
    for cut in 0..full.len() {
        let e = parse_file(path, &FileBytes::from_vec(full[..cut].to_vec()))
            .expect_err(&format!("cut {cut}"));
        let msg = e.to_string();
        let want = if cut < 8 {
            format!("{cut} bytes, too short")
        } else if cut < 8 + hl {
            format!("at byte 0: truncated safetensors header: it declares {hl} bytes but only {} follow", cut - 8)
        } else {
            let data = cut - 8 - hl;
            let name = if data < 16 { "a" } else { "b" };
            format!("tensor '{name}'")
        };
        assert!(msg.contains(&want), "cut {cut}: {msg}");
        if cut >= 8 + hl {
            assert!(
                msg.contains(&format!("data area of {} bytes", cut - 8 - hl)),
                "{msg}"
            );
        }
    }
    full.len()
}

/// Every cut of the small tokenizer.model: a cut inside a top-level field is an error at or
/// after that field's start; a cut between fields decodes the complete pieces before it (or
/// fails for having none).
fn run_spm_truncations() -> usize {
    let full = small_spm();
    // Top-level field starts: pieces, trainer_spec, normalizer_spec.
    let mut starts = vec![];
    let mut pos = 0;
    for p in small_pieces() {
        starts.push(pos);
        let mut f = Vec::new();
        len_field(1, &p, &mut f);
        pos += f.len();
    }
    let n_pieces = starts.len();
    let tail = &full[pos..];
    let ts_len = tail[1] as usize + 2;
    starts.push(pos);
    starts.push(pos + ts_len);
    starts.push(full.len());
    for cut in 0..full.len() {
        let r = parse_model(&full[..cut]);
        let field = starts.iter().rposition(|&s| s <= cut).unwrap();
        if starts[field] == cut {
            let complete = field.min(n_pieces);
            match r {
                Ok(m) => assert_eq!(m.pieces.len(), complete, "cut {cut}"),
                Err(e) => {
                    assert_eq!(complete, 0, "cut {cut}: {e}");
                    assert!(e.problem.contains("no pieces"), "cut {cut}: {e}");
                }
            }
        } else {
            let e = r.expect_err(&format!("cut {cut}"));
            assert!(
                (starts[field] as u64..=cut as u64).contains(&e.offset),
                "cut {cut} in the field at {}: {e}",
                starts[field]
            );
            assert!(
                e.problem.contains("truncated varint") || e.problem.contains("remain"),
                "cut {cut}: {e}"
            );
        }
    }
    full.len()
}

/// Headers of tens of megabytes whose values, held as a JSON tree, would take gigabytes.
fn run_resource_cases() {
    const SIZE: usize = 32 << 20;
    let zeros = |prefix: &str, suffix: &str| {
        let mut h = prefix.to_string();
        while h.len() < SIZE {
            h.push_str("0,");
        }
        h.push('0');
        h.push_str(suffix);
        st(&h, &[])
    };
    let path = Path::new("big.safetensors");
    for (name, bytes, want) in [
        (
            "unknown field of 16M numbers",
            zeros(r#"{"t":{"x":["#, "]}}"),
            "tensor 't': no \"dtype\"",
        ),
        (
            "shape of 16M dims",
            zeros(
                r#"{"t":{"dtype":"U8","data_offsets":[0,0],"shape":["#,
                "]}}",
            ),
            "\"shape\" has more than 16 entries",
        ),
        (
            "metadata value of 16M numbers",
            zeros(r#"{"__metadata__":{"k":["#, "]}}"),
            "value of 'k' is an array",
        ),
    ] {
        let start = Instant::now();
        let e = parse_file(path, &FileBytes::from_vec(bytes)).expect_err(name);
        let msg = e.to_string();
        assert!(msg.contains(want), "{name}: {msg}");
        assert!(msg.len() < 1024, "{name}: {} byte message", msg.len());
        assert!(start.elapsed() < Duration::from_secs(20), "{name}");
    }
}

// ---------------------------------------------------------------------------------------
// Tests.

#[test]
fn case_names_are_unique_and_grouped() {
    let cases = cases();
    let mut names = std::collections::HashSet::new();
    for case in &cases {
        assert!(names.insert(case.name.as_str()), "{} twice", case.name);
        let (reader, rest) = case.name.split_once("-g").expect(&case.name);
        assert!(
            ["st", "idx", "spm", "tok", "tc", "cfg"].contains(&reader),
            "{}",
            case.name
        );
        let group: u32 = rest[..2].parse().expect(&case.name);
        assert!(
            (1..=16).contains(&group) && rest[2..].starts_with('-'),
            "{}",
            case.name
        );
    }
}

#[test]
fn committed_corpus_matches_generator() {
    let cases = cases();
    let files: Vec<(PathBuf, Vec<u8>)> = cases
        .iter()
        .flat_map(|c| {
            let dir = PathBuf::from(&c.name);
            c.files.iter().map(move |(n, b)| (dir.join(n), b.clone()))
        })
        .collect();
    // Every case is a directory; files at the top (the README) are not cases.
    let total = ggufkit_testsupport::corpus::check_committed(&corpus_dir(), &files, |p| {
        p.components().count() > 1
    });
    eprintln!("{} committed cases, {total} bytes", cases.len());
}

#[test]
fn every_committed_case() {
    run_committed();
}

#[test]
fn truncation_at_every_byte() {
    run_safetensors_truncations();
    run_spm_truncations();
}

#[test]
fn huge_headers_stay_small() {
    run_resource_cases();
}

const INNER: &str = "corpus_inner";
const INNER_ENV: &str = "GGUFKIT_HOSTILE_INNER";
const MEMORY_LIMIT_KIB: u64 = 256_000;
const TIME_LIMIT: Duration = Duration::from_secs(120);

/// Everything again in a child process limited to 256 MB of address space and killed after
/// 120 s: an allocation sized by a hostile value aborts it, a loop on one times out.
#[test]
fn corpus_under_limits() {
    support::limits::run_under_limits(
        module_path!(),
        INNER,
        INNER_ENV,
        MEMORY_LIMIT_KIB,
        TIME_LIMIT,
    );
}

#[test]
#[ignore = "run by corpus_under_limits in a child process under ulimit -v"]
fn corpus_inner() {
    support::limits::assert_memory_limited(INNER_ENV);
    let n = run_committed();
    let cuts = run_safetensors_truncations() + run_spm_truncations();
    run_resource_cases();
    println!("{n} cases, {cuts} truncations");
}
