//! Hostile legacy files (group 16 of the hostile corpora): every case must
//! fail with one specific error naming the file, the byte offset and the tensor, or (for
//! the documented tolerant cases) convert with a specific warning. Never a panic, never an
//! allocation sized by a count the file has not backed with bytes.
//!
//! * The corpus is generated field by field from a tiny llama model ([`tiny`]) and
//!   committed as `testdata/legacy/hostile/<case>.bin` (plus `<case>.bin.1` for multi-part
//!   cases). `committed_corpus_matches_generator` keeps files and generator in step;
//!   `GGUFKIT_REGEN_HOSTILE=1 cargo test -p ggufkit-converters --test suite
//!   security::legacy_hostile::committed_corpus` rewrites them.
//! * `every_case_fails_with_its_error` runs the committed files.
//! * `truncation_at_every_field` cuts the valid tiny models (GGML, GGMF, GGJT) at every byte
//!   of every header, vocabulary and record field, and at the edges of every data block; the
//!   writer's field spans give the one error each cut must produce.
//! * `corpus_under_memory_limit` runs the corpus again in a child process under
//!   `ulimit -v` (512 MiB) and a 120 s timeout.

use ggufkit_testsupport::legacy as support;

use std::path::{Path, PathBuf};
use std::process::Command;

use ggufkit::quantizers::{f32_to_f16, GgmlType};
use ggufkit_converters::legacy::{
    read_legacy, LegacyConversion, LegacyError, LegacyErrorKind, LegacyFormat, LegacyKind,
    LegacyOptions, TensorConversion,
};
use ggufkit_converters::ConvertError;
use support::{scratch, testdata, LegacyFile, RawTensor, Span};

const GGJT: [u8; 4] = *b"tjgg";
const GGMF: [u8; 4] = *b"fmgg";
const GGML: [u8; 4] = *b"lmgg";

fn kind(format: LegacyFormat, version: u32) -> LegacyKind {
    LegacyKind { format, version }
}

fn f16s(n: usize, seed: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            let v = (((i * 37 + seed * 11) % 101) as f32 - 50.0) / 64.0;
            f32_to_f16(v).to_le_bytes()
        })
        .collect()
}

fn ones(n: usize) -> Vec<u8> {
    (0..n).flat_map(|_| 1.0f32.to_le_bytes()).collect()
}

fn t(name: &str, type_id: u32, ne: &[u32], data: Vec<u8>) -> RawTensor {
    RawTensor {
        name: name.into(),
        type_id,
        ne: ne.to_vec(),
        data,
    }
}

/// A valid tiny llama model: n_vocab 4, n_embd 32, 2 heads (1 KV head: wk/wv are 32 × 16),
/// one block, n_ff 32, 2-D tensors F16, norms F32.
fn tiny(magic: [u8; 4], version: Option<u32>) -> LegacyFile {
    let w =
        |name: &str, ne: &[u32], seed: usize| t(name, 1, ne, f16s((ne[0] * ne[1]) as usize, seed));
    let norm = |name: &str| t(name, 0, &[32], ones(32));
    LegacyFile {
        magic,
        version,
        hparams: [4, 32, 32, 2, 1, 16, 1],
        vocab: vec![
            (vec![], 0.0),
            (vec![], 0.0),
            (vec![], 0.0),
            (b" a".to_vec(), -1.5),
        ],
        tensors: vec![
            w("tok_embeddings.weight", &[32, 4], 1),
            norm("norm.weight"),
            w("output.weight", &[32, 4], 2),
            w("layers.0.attention.wq.weight", &[32, 32], 3),
            w("layers.0.attention.wk.weight", &[32, 16], 4),
            w("layers.0.attention.wv.weight", &[32, 16], 5),
            w("layers.0.attention.wo.weight", &[32, 32], 6),
            norm("layers.0.attention_norm.weight"),
            w("layers.0.feed_forward.w1.weight", &[32, 32], 7),
            w("layers.0.feed_forward.w2.weight", &[32, 32], 8),
            w("layers.0.feed_forward.w3.weight", &[32, 32], 9),
            norm("layers.0.ffn_norm.weight"),
        ],
    }
}

fn v3() -> LegacyFile {
    tiny(GGJT, Some(3))
}

/// The tiny model without tensors (for header cases).
fn header_only(magic: [u8; 4], version: Option<u32>) -> LegacyFile {
    let mut f = tiny(magic, version);
    f.tensors.clear();
    f
}

/// Absolute offset of record `i`.
fn record_at(f: &LegacyFile, i: usize) -> u64 {
    let mut g = f.clone();
    g.tensors.truncate(i);
    g.bytes().len() as u64
}

/// Offset of the vocabulary (after magic, version and 7 hparams).
fn vocab_at(f: &LegacyFile) -> u64 {
    if f.version.is_some() {
        36
    } else {
        32
    }
}

/// What a case must produce.
enum Expect {
    /// This exact legacy error (in the file with this suffix: "" or ".1").
    Err {
        suffix: &'static str,
        offset: Option<u64>,
        tensor: Option<&'static str>,
        kind: LegacyErrorKind,
    },
    /// This exact legacy error, without offset or tensor, about another path.
    ErrAt {
        path: PathBuf,
        kind: LegacyErrorKind,
    },
    /// A part mismatch: part number, offset, tensor, and how the description starts.
    Mismatch {
        part: usize,
        offset: Option<u64>,
        tensor: Option<&'static str>,
        what: &'static str,
    },
    /// `ConvertError::Unsupported` containing this text.
    Unsupported(&'static str),
    /// Converts; a warning contains the text; the check holds.
    Ok {
        warning: &'static str,
        check: fn(&LegacyConversion) -> bool,
    },
}

struct Case {
    name: &'static str,
    /// (suffix, bytes): "" for the first file, ".1" for a second part.
    files: Vec<(&'static str, Vec<u8>)>,
    opts: LegacyOptions,
    expect: Expect,
}

fn err(offset: u64, kind: LegacyErrorKind) -> Expect {
    Expect::Err {
        suffix: "",
        offset: Some(offset),
        tensor: None,
        kind,
    }
}

fn terr(offset: u64, tensor: &'static str, kind: LegacyErrorKind) -> Expect {
    Expect::Err {
        suffix: "",
        offset: Some(offset),
        tensor: Some(tensor),
        kind,
    }
}

fn truncated(what: &str, need: u64, available: u64) -> LegacyErrorKind {
    LegacyErrorKind::Truncated {
        what: what.into(),
        need,
        available,
    }
}

fn case(name: &'static str, bytes: Vec<u8>, expect: Expect) -> Case {
    Case {
        name,
        files: vec![("", bytes)],
        opts: LegacyOptions::default(),
        expect,
    }
}

/// A model whose record `i` is rewritten by `edit` after the fact (raw field changes).
fn with_record(mut f: LegacyFile, i: usize, edit: impl FnOnce(&mut RawTensor)) -> LegacyFile {
    edit(&mut f.tensors[i]);
    f
}

/// Bytes of `f` with the u32 at `at` replaced.
fn patch_u32(mut b: Vec<u8>, at: u64, v: u32) -> Vec<u8> {
    b[at as usize..at as usize + 4].copy_from_slice(&v.to_le_bytes());
    b
}

/// Bytes of `f` cut to `len`.
fn cut(mut b: Vec<u8>, len: u64) -> Vec<u8> {
    b.truncate(len as usize);
    b
}

const W1: &str = "layers.0.feed_forward.w1.weight";

/// The corpus.
fn cases() -> Vec<Case> {
    use LegacyErrorKind as K;
    let v3k = kind(LegacyFormat::Ggjt, 3);
    let v2k = kind(LegacyFormat::Ggjt, 2);
    let hdr = header_only(GGJT, Some(3));
    let hb = hdr.bytes();
    let base = v3();
    let bb = base.bytes();
    let r0 = record_at(&base, 0);
    let last = base.tensors.len() - 1;
    let r_last = record_at(&base, last);
    let mut c = vec![
        // --- magic and version ---
        case("empty", vec![], err(0, truncated("the magic", 4, 0))),
        case(
            "short-magic",
            b"tjg".to_vec(),
            err(0, truncated("the magic", 4, 3)),
        ),
        case(
            "bad-magic-ggux",
            [&b"GGUX"[..], &hb[4..]].concat(),
            err(0, K::BadMagic(*b"GGUX")),
        ),
        case(
            "bad-magic-fugg",
            [&b"FUGG"[..], &hb[4..]].concat(),
            err(0, K::BadMagic(*b"FUGG")),
        ),
        case(
            "gguf",
            [&b"GGUF"[..], &3u32.to_le_bytes(), &[0u8; 16]].concat(),
            err(0, K::AlreadyGguf),
        ),
        case(
            "ggla",
            [&b"algg"[..], &1u32.to_le_bytes(), &[0u8; 8]].concat(),
            err(0, K::LoraAdapter),
        ),
        case(
            "ggjt-v0",
            patch_u32(hb.clone(), 4, 0),
            err(
                4,
                K::UnsupportedVersion {
                    kind: kind(LegacyFormat::Ggjt, 0),
                },
            ),
        ),
        case(
            "ggjt-v4",
            patch_u32(hb.clone(), 4, 4),
            err(
                4,
                K::UnsupportedVersion {
                    kind: kind(LegacyFormat::Ggjt, 4),
                },
            ),
        ),
        case(
            "ggjt-vmax",
            patch_u32(hb.clone(), 4, u32::MAX),
            err(
                4,
                K::UnsupportedVersion {
                    kind: kind(LegacyFormat::Ggjt, u32::MAX),
                },
            ),
        ),
        case(
            "ggmf-v2",
            header_only(GGMF, Some(2)).bytes(),
            err(
                4,
                K::UnsupportedVersion {
                    kind: kind(LegacyFormat::Ggmf, 2),
                },
            ),
        ),
        case(
            "cut-in-version",
            cut(hb.clone(), 6),
            err(4, truncated("the version", 4, 2)),
        ),
        // --- hyperparameters ---
        case(
            "cut-in-hparams",
            cut(hb.clone(), 22),
            err(20, truncated("hyperparameter n_head", 4, 2)),
        ),
        case(
            "ftype-19",
            patch_u32(hb.clone(), 32, 19),
            err(
                32,
                K::UnknownFtype {
                    ftype: 19,
                    kind: v3k,
                },
            ),
        ),
        case(
            "ftype-q4_2-in-v3",
            patch_u32(hb.clone(), 32, 5),
            err(
                32,
                K::UnknownFtype {
                    ftype: 5,
                    kind: v3k,
                },
            ),
        ),
        case(
            "ftype-q4_k_m-in-v2",
            patch_u32(header_only(GGJT, Some(2)).bytes(), 32, 15),
            err(
                32,
                K::UnknownFtype {
                    ftype: 15,
                    kind: v2k,
                },
            ),
        ),
        case(
            "ftype-max",
            patch_u32(hb.clone(), 32, u32::MAX),
            err(
                32,
                K::UnknownFtype {
                    ftype: u32::MAX,
                    kind: v3k,
                },
            ),
        ),
        case(
            "n-embd-0",
            patch_u32(hb.clone(), 12, 0),
            err(
                12,
                K::BadHparam {
                    name: "n_embd",
                    value: 0,
                    problem: "must be between 1 and 2^31-1",
                },
            ),
        ),
        case(
            "n-embd-negative",
            patch_u32(hb.clone(), 12, 0x8000_0000),
            err(
                12,
                K::BadHparam {
                    name: "n_embd",
                    value: 0x8000_0000,
                    problem: "must be between 1 and 2^31-1",
                },
            ),
        ),
        case(
            "n-head-0",
            patch_u32(hb.clone(), 20, 0),
            err(
                20,
                K::BadHparam {
                    name: "n_head",
                    value: 0,
                    problem: "must be between 1 and n_embd",
                },
            ),
        ),
        case(
            "n-layer-0",
            patch_u32(hb.clone(), 24, 0),
            err(
                24,
                K::BadHparam {
                    name: "n_layer",
                    value: 0,
                    problem: "must be between 1 and 2^31-1",
                },
            ),
        ),
        // --- vocabulary ---
        case(
            "n-vocab-max",
            patch_u32(hb.clone(), 8, u32::MAX),
            err(
                8,
                K::VocabTooLarge {
                    n_vocab: u32::MAX,
                    need: u64::from(u32::MAX) * 8,
                    available: 34,
                },
            ),
        ),
        case(
            "n-vocab-one-too-many",
            patch_u32(hb.clone(), 8, 5),
            err(
                8,
                K::VocabTooLarge {
                    n_vocab: 5,
                    need: 40,
                    available: 34,
                },
            ),
        ),
        case(
            "n-vocab-2",
            patch_u32(hb.clone(), 8, 2),
            err(8, K::TooFewTokens(2)),
        ),
        case(
            "token-len-max",
            patch_u32(hb.clone(), 36, u32::MAX),
            err(
                36,
                K::TokenTooLong {
                    index: 0,
                    len: u32::MAX,
                },
            ),
        ),
        case(
            "token-len-4096",
            patch_u32(hb.clone(), 36, 4096),
            err(
                36,
                K::TokenTooLong {
                    index: 0,
                    len: 4096,
                },
            ),
        ),
        // item 3 is at 36 + 3 × 8 = 60: length 4000 with 6 bytes behind it.
        case(
            "token-past-eof",
            patch_u32(hb.clone(), 60, 4000),
            err(64, truncated("vocabulary item 3", 4000, 6)),
        ),
        case(
            "cut-in-score",
            cut(header_only(GGMF, Some(1)).bytes(), 68),
            err(66, truncated("the score of vocabulary item 3", 4, 2)),
        ),
        // --- tensor records ---
        case(
            "cut-in-record-header",
            cut(bb.clone(), r0 + 6),
            err(
                r0 + 4,
                truncated("a tensor record header (name length)", 4, 2),
            ),
        ),
        case(
            "n-dims-0",
            patch_u32(bb.clone(), r0, 0),
            err(r0, K::BadDimCount(0)),
        ),
        case(
            "n-dims-3",
            patch_u32(bb.clone(), r0, 3),
            err(r0, K::BadDimCount(3)),
        ),
        case(
            "n-dims-max",
            patch_u32(bb.clone(), r0, u32::MAX),
            err(r0, K::BadDimCount(u32::MAX)),
        ),
        case(
            "name-len-max",
            patch_u32(bb.clone(), r0 + 4, u32::MAX),
            err(r0 + 4, K::NameTooLong(u32::MAX)),
        ),
        case(
            "name-len-4096",
            patch_u32(bb.clone(), r0 + 4, 4096),
            err(r0 + 4, K::NameTooLong(4096)),
        ),
        case(
            "name-past-eof",
            cut(patch_u32(bb.clone(), r0 + 4, 100), r0 + 20 + 10),
            err(r0 + 20, truncated("a tensor name", 100, 10)),
        ),
        case(
            "name-not-utf8",
            with_record(v3(), 0, |t| {
                t.name = String::from_utf8_lossy(b"tok_\xff").into_owned()
            })
            .bytes(),
            Expect::Err {
                suffix: "",
                offset: None,
                tensor: None,
                kind: K::NameNotUtf8(vec![]),
            },
        ),
        case(
            "dim-0",
            patch_u32(bb.clone(), r0 + 16, 0),
            terr(
                r0 + 16,
                "tok_embeddings.weight",
                K::BadDim { index: 1, value: 0 },
            ),
        ),
        case(
            "dim-negative",
            patch_u32(bb.clone(), r0 + 12, 0x8000_0000),
            terr(
                r0 + 12,
                "tok_embeddings.weight",
                K::BadDim {
                    index: 0,
                    value: -2_147_483_648,
                },
            ),
        ),
        case(
            "dims-product-2p62",
            patch_u32(
                patch_u32(bb.clone(), r0 + 12, 0x7fff_ffff),
                r0 + 16,
                0x7fff_ffff,
            ),
            terr(
                r0 + 20 + 21,
                "tok_embeddings.weight",
                K::DataPastEof {
                    start: (r0 + 41).div_ceil(32) * 32,
                    end: (r0 + 41).div_ceil(32) * 32 + 0x7fff_ffffu64 * 0x7fff_ffff * 2,
                    file_len: bb.len() as u64,
                },
            ),
        ),
        case(
            "type-q4_2-in-v3",
            patch_u32(bb.clone(), r0 + 8, 4),
            terr(
                r0 + 8,
                "tok_embeddings.weight",
                K::RemovedType {
                    id: 4,
                    name: "q4_2",
                    kind: v3k,
                },
            ),
        ),
        case(
            "type-q4_3-in-v2",
            patch_u32(tiny(GGJT, Some(2)).bytes(), r0 + 8, 5),
            terr(
                r0 + 8,
                "tok_embeddings.weight",
                K::RemovedType {
                    id: 5,
                    name: "q4_3",
                    kind: v2k,
                },
            ),
        ),
        case(
            "type-q4_k-in-v2",
            patch_u32(tiny(GGJT, Some(2)).bytes(), r0 + 8, 12),
            terr(
                r0 + 8,
                "tok_embeddings.weight",
                K::TypeNotInFormat {
                    id: 12,
                    name: "q4_K".into(),
                    kind: v2k,
                },
            ),
        ),
        case(
            "type-q8_1",
            patch_u32(bb.clone(), r0 + 8, 9),
            terr(
                r0 + 8,
                "tok_embeddings.weight",
                K::TypeNotInFormat {
                    id: 9,
                    name: "q8_1".into(),
                    kind: v3k,
                },
            ),
        ),
        case(
            "type-bf16-in-v3",
            patch_u32(bb.clone(), r0 + 8, 30),
            terr(
                r0 + 8,
                "tok_embeddings.weight",
                K::TypeNotInFormat {
                    id: 30,
                    name: "bf16".into(),
                    kind: v3k,
                },
            ),
        ),
        case(
            "type-31",
            patch_u32(bb.clone(), r0 + 8, 31),
            terr(r0 + 8, "tok_embeddings.weight", K::UnknownType(31)),
        ),
        case(
            "type-max",
            patch_u32(bb.clone(), r0 + 8, u32::MAX),
            terr(r0 + 8, "tok_embeddings.weight", K::UnknownType(u32::MAX)),
        ),
        case(
            "row-not-block-aligned",
            with_record(v3(), 0, |t| {
                t.type_id = 2;
                t.ne = vec![16, 4];
                t.data = vec![0; 36];
            })
            .bytes(),
            terr(
                r0 + 12,
                "tok_embeddings.weight",
                K::RowNotBlockAligned {
                    ne0: 16,
                    layout: "q4_0".into(),
                    block: 32,
                },
            ),
        ),
        case(
            "data-past-eof",
            cut(bb.clone(), bb.len() as u64 - 1),
            terr(
                r_last + 16 + 24,
                "layers.0.ffn_norm.weight",
                K::DataPastEof {
                    start: (r_last + 40).div_ceil(32) * 32,
                    end: bb.len() as u64,
                    file_len: bb.len() as u64 - 1,
                },
            ),
        ),
        case(
            "padding-past-eof",
            cut(bb.clone(), r_last + 40 + 1),
            terr(
                r_last + 40,
                "layers.0.ffn_norm.weight",
                K::DataPastEof {
                    start: (r_last + 40).div_ceil(32) * 32,
                    end: bb.len() as u64,
                    file_len: r_last + 41,
                },
            ),
        ),
        case(
            "duplicate-tensor",
            with_record(v3(), 2, |t| t.name = "tok_embeddings.weight".into()).bytes(),
            terr(
                record_at(&base, 2),
                "tok_embeddings.weight",
                K::DuplicateTensor,
            ),
        ),
        // --- model-level problems ---
        case(
            "unknown-tensor",
            with_record(v3(), 6, |t| t.name = "layers.0.attention.wz.weight".into()).bytes(),
            terr(
                record_at(&base, 6),
                "layers.0.attention.wz.weight",
                K::UnknownTensor { n_layer: 1 },
            ),
        ),
        case(
            "block-beyond-n-layer",
            with_record(v3(), 6, |t| t.name = "layers.1.attention.wo.weight".into()).bytes(),
            terr(
                record_at(&base, 6),
                "layers.1.attention.wo.weight",
                K::UnknownTensor { n_layer: 1 },
            ),
        ),
        case(
            "missing-w1",
            {
                let mut f = v3();
                f.tensors.remove(8);
                f.bytes()
            },
            Expect::Err {
                suffix: "",
                offset: None,
                tensor: None,
                kind: K::MissingTensor(W1),
            },
        ),
        case(
            "w1-one-dim",
            with_record(v3(), 8, |t| {
                t.ne = vec![32];
                t.type_id = 0;
                t.data = ones(32);
            })
            .bytes(),
            terr(
                record_at(&base, 8),
                W1,
                K::BadShape {
                    dims: vec![32],
                    problem: "layers.0.feed_forward.w1 must be [n_embd, n_ff]".into(),
                },
            ),
        ),
        case(
            "tok-embd-width-not-dividing-n-embd",
            with_record(v3(), 0, |t| {
                t.ne = vec![24, 4];
                t.data = f16s(96, 1);
            })
            .bytes(),
            terr(
                r0,
                "tok_embeddings.weight",
                K::BadShape {
                    dims: vec![24, 4],
                    problem:
                        "n_embd 32 is not a multiple of ne0 24, so the part count cannot be known"
                            .into(),
                },
            ),
        ),
        Case {
            name: "gqa-3",
            files: vec![("", bb.clone())],
            opts: LegacyOptions {
                gqa: Some(3),
                ..LegacyOptions::default()
            },
            expect: Expect::Err {
                suffix: "",
                offset: None,
                tensor: None,
                kind: K::Gqa { n_head: 2, gqa: 3 },
            },
        },
        Case {
            name: "outtype-needs-imatrix",
            files: vec![("", bb.clone())],
            opts: LegacyOptions {
                outtype_for_changed_layouts: Some(GgmlType::IQ2_XXS),
                ..LegacyOptions::default()
            },
            expect: Expect::Unsupported("cannot write changed-layout tensors as iq2_xxs"),
        },
        Case {
            name: "vocab-dir-not-a-directory",
            files: vec![("", bb.clone())],
            opts: LegacyOptions {
                vocab_dir: Some(PathBuf::from("/nonexistent/ggufkit-metadata")),
                ..LegacyOptions::default()
            },
            expect: Expect::ErrAt {
                path: PathBuf::from("/nonexistent/ggufkit-metadata"),
                kind: K::Metadata("not a directory".into()),
            },
        },
    ];
    // The name of "name-not-utf8" must be raw bytes, which a String cannot hold: patch the
    // byte after the fact (the lossy string wrote U+FFFD, 3 bytes; keep the length at 5).
    for x in &mut c {
        if x.name == "name-not-utf8" {
            let name_at = (r0 + 20) as usize;
            let mut f = v3();
            f.tensors[0].name = "tok_xx".into();
            let mut b = f.bytes();
            b[name_at + 4] = 0xff;
            b[name_at + 5] = 0xfe;
            x.files[0].1 = b;
            x.expect = err(r0 + 20, K::NameNotUtf8(b"tok_\xff\xfe".to_vec()));
        }
    }
    c.extend(part_cases());
    c.push(Case {
        name: "q4_0-v2-labelled-f16",
        files: vec![(
            "",
            with_record(tiny(GGJT, Some(2)), 8, |t| {
                t.type_id = 2;
                // 32 blocks: d = 0.5 (an f16 value), split nibbles.
                t.data = (0..32).flat_map(|i| [&0.5f32.to_le_bytes()[..], &[i as u8; 16]].concat()).collect();
            })
            .bytes(),
        )],
        opts: LegacyOptions::default(),
        expect: Expect::Ok {
            warning: "the file type (1) does not match 1 2-D tensor(s) (first: 'layers.0.feed_forward.w1.weight', type id 2)",
            check: |c| {
                let r = c.tensors.iter().find(|r| r.legacy_name == W1).unwrap();
                r.conversion == TensorConversion::Repacked && r.ty == GgmlType::Q4_0
            },
        },
    });
    c
}

/// Multi-part cases: a GGMF model in two parts, then one thing broken.
fn part_cases() -> Vec<Case> {
    use LegacyErrorKind as K;
    let parts = support::split_into_parts(&tiny(GGMF, Some(1)), 2);
    let (p0, p1) = (parts[0].clone(), parts[1].clone());
    let two = |p1: LegacyFile| vec![("", p0.bytes()), (".1", p1.bytes())];
    let r = |i| record_at(&p1, i);
    let mismatch = |part, offset, tensor, what| Expect::Mismatch {
        part,
        offset,
        tensor,
        what,
    };
    let mut hp = p1.clone();
    hp.hparams[2] = 64;
    let mut container = p1.clone();
    container.magic = GGJT;
    let mut ty = p1.clone();
    ty.tensors[4].type_id = 0;
    ty.tensors[4].data = [ty.tensors[4].data.clone(), ty.tensors[4].data.clone()].concat();
    let mut dims = p1.clone();
    dims.tensors[3].ne = vec![32, 8];
    dims.tensors[3].data.truncate(32 * 8 * 2);
    let mut vocab = p1.clone();
    vocab.vocab[3].0 = b" b".to_vec();
    let mut fewer = p1.clone();
    fewer.tensors.pop();
    let mut names = p1.clone();
    names.tensors.swap(9, 10);
    let p1b = p1.bytes();
    vec![
        Case {
            name: "part-missing",
            files: vec![("", p0.bytes())],
            opts: LegacyOptions::default(),
            expect: Expect::Err {
                suffix: ".1",
                offset: None,
                tensor: None,
                kind: K::MissingPart {
                    part: 1,
                    n_parts: 2,
                },
            },
        },
        Case {
            name: "part-hparams",
            files: two(hp),
            opts: Default::default(),
            expect: mismatch(1, Some(8), None, "hyperparameters"),
        },
        Case {
            name: "part-container",
            files: two(container),
            opts: Default::default(),
            expect: mismatch(1, Some(0), None, "container GGJTv1 vs GGMFv1"),
        },
        Case {
            name: "part-type",
            files: two(ty),
            opts: Default::default(),
            expect: mismatch(
                1,
                Some(r(4)),
                Some("layers.0.attention.wk.weight"),
                "type id 0 vs 1",
            ),
        },
        Case {
            name: "part-dims",
            files: two(dims),
            opts: Default::default(),
            expect: mismatch(
                1,
                Some(r(3)),
                Some("layers.0.attention.wq.weight"),
                "slice dims [32, 8] vs [32, 16]",
            ),
        },
        Case {
            name: "part-vocab",
            files: two(vocab),
            opts: Default::default(),
            expect: mismatch(1, None, None, "vocabulary item 3"),
        },
        Case {
            name: "part-fewer-tensors",
            files: two(fewer),
            opts: Default::default(),
            expect: mismatch(1, None, None, "11 tensors vs 12"),
        },
        Case {
            name: "part-tensor-order",
            files: two(names),
            opts: Default::default(),
            expect: mismatch(
                1,
                Some(r(9)),
                Some("layers.0.feed_forward.w3.weight"),
                "tensor 'layers.0.feed_forward.w3.weight' where part 0 has",
            ),
        },
        Case {
            name: "part-truncated",
            files: vec![
                ("", p0.bytes()),
                (".1", cut(p1b.clone(), p1b.len() as u64 - 1)),
            ],
            opts: Default::default(),
            expect: Expect::Err {
                suffix: ".1",
                offset: Some(r(11) + 16 + 24),
                tensor: Some("layers.0.ffn_norm.weight"),
                kind: K::DataPastEof {
                    start: r(11) + 40,
                    end: p1b.len() as u64,
                    file_len: p1b.len() as u64 - 1,
                },
            },
        },
    ]
}

fn corpus_dir() -> PathBuf {
    testdata("legacy/hostile")
}

/// Runs one case from the files in `dir`; `Err` describes a mismatch.
fn run_case(c: &Case, dir: &Path) -> Result<(), String> {
    let first = dir.join(format!("{}.bin", c.name));
    let result = std::panic::catch_unwind(|| read_legacy(&first, &c.opts));
    let result = result.map_err(|_| "panicked".to_string())?;
    let legacy = |e: &ConvertError| -> Option<LegacyError> {
        match e {
            ConvertError::Legacy(l) => Some((**l).clone()),
            _ => None,
        }
    };
    match (&c.expect, result) {
        (
            Expect::Err {
                suffix,
                offset,
                tensor,
                kind,
            },
            Err(e),
        ) => {
            let l = legacy(&e).ok_or_else(|| format!("not a legacy error: {e}"))?;
            let path = PathBuf::from(format!("{}{suffix}", first.display()));
            let want = LegacyError {
                path,
                offset: *offset,
                tensor: tensor.map(str::to_string),
                kind: kind.clone(),
            };
            if l != want {
                return Err(format!("got {l:?}\n  want {want:?}"));
            }
            // The message names the file and, when known, offset and tensor.
            let msg = e.to_string();
            let ok = msg.contains(&*want.path.to_string_lossy())
                && offset.is_none_or(|o| msg.contains(&format!("at byte {o}")))
                && tensor.is_none_or(|t| msg.contains(t));
            if !ok {
                return Err(format!("message lacks file/offset/tensor: {msg}"));
            }
            Ok(())
        }
        (Expect::ErrAt { path, kind }, Err(e)) => {
            let l = legacy(&e).ok_or_else(|| format!("not a legacy error: {e}"))?;
            let want = LegacyError {
                path: path.clone(),
                offset: None,
                tensor: None,
                kind: kind.clone(),
            };
            if l == want {
                Ok(())
            } else {
                Err(format!("got {l:?}\n  want {want:?}"))
            }
        }
        (
            Expect::Mismatch {
                part,
                offset,
                tensor,
                what,
            },
            Err(e),
        ) => {
            let l = legacy(&e).ok_or_else(|| format!("not a legacy error: {e}"))?;
            let ok = matches!(&l.kind, K::PartMismatch { part: p, what: w } if p == part && w.starts_with(what))
                && l.offset == *offset
                && l.tensor.as_deref() == *tensor
                && l.path == format!("{}.1", first.display());
            if ok {
                Ok(())
            } else {
                Err(format!("got {l:?}"))
            }
        }
        (Expect::Unsupported(text), Err(ConvertError::Unsupported(m))) if m.contains(text) => {
            Ok(())
        }
        (Expect::Ok { warning, check }, Ok(conv)) => {
            if !conv.warnings.iter().any(|w| w.contains(warning)) {
                return Err(format!("no warning '{warning}' in {:?}", conv.warnings));
            }
            if !check(&conv) {
                return Err(format!("check failed: {:?}", conv.tensors));
            }
            // The lazy data must be computable too.
            for t in &conv.model.tensors {
                t.data.bytes().map_err(|e| format!("{}: {e}", t.name))?;
            }
            Ok(())
        }
        (_, Err(e)) => Err(format!("wrong error: {e:?}")),
        (_, Ok(_)) => Err("converted, but must fail".into()),
    }
}

use LegacyErrorKind as K;

#[test]
fn the_tiny_models_are_valid() {
    let dir = scratch("hostile-valid");
    for (magic, version) in [
        (GGML, None),
        (GGMF, Some(1)),
        (GGJT, Some(1)),
        (GGJT, Some(2)),
        (GGJT, Some(3)),
    ] {
        let f = tiny(magic, version);
        let p = dir.join("tiny.bin");
        std::fs::write(&p, f.bytes()).unwrap();
        let conv = read_legacy(&p, &LegacyOptions::default())
            .unwrap_or_else(|e| panic!("{version:?}: {e}"));
        assert_eq!(conv.model.tensors.len(), 12);
        assert_eq!(
            conv.model.metadata.get_u32("llama.attention.head_count_kv"),
            Ok(1)
        );
        // Two parts of the same model convert to the same tensors.
        let first = support::write_parts(&dir, "parts.bin", &support::split_into_parts(&f, 2));
        let parts = read_legacy(&first, &LegacyOptions::default()).unwrap();
        assert_eq!(
            support::tensor_hashes(&parts.model),
            support::tensor_hashes(&conv.model)
        );
    }
}

#[test]
fn committed_corpus_matches_generator() {
    let files: Vec<(PathBuf, Vec<u8>)> = cases()
        .into_iter()
        .flat_map(|c| {
            let name = c.name;
            c.files
                .into_iter()
                .map(move |(suffix, b)| (format!("{name}.bin{suffix}").into(), b))
        })
        .collect();
    ggufkit_testsupport::corpus::check_committed(&corpus_dir(), &files, |_| true);
}

#[test]
fn every_case_fails_with_its_error() {
    let dir = corpus_dir();
    let mut failures = Vec::new();
    let all = cases();
    for c in &all {
        if let Err(m) = run_case(c, &dir) {
            failures.push(format!("{}: {m}", c.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

/// The one result a cut of `b` (a valid tiny model) at `p` must give.
fn expected_cut(
    f: &LegacyFile,
    spans: &[(usize, usize, Span)],
    p: usize,
) -> Result<bool, LegacyErrorKind> {
    let vocab_at = vocab_at(f) as usize;
    let per_item = if f.scores() { 8 } else { 4 };
    let n_vocab = f.hparams[0] as usize;
    if p >= vocab_at && p - vocab_at < n_vocab * per_item {
        return Err(K::VocabTooLarge {
            n_vocab: n_vocab as u32,
            need: (n_vocab * per_item) as u64,
            available: (p - vocab_at) as u64,
        });
    }
    // A cut where a record would start leaves a valid, shorter file.
    let record_start = (0..=f.tensors.len()).any(|i| record_at(f, i) as usize == p);
    match spans
        .iter()
        .find(|s| s.0 <= p && p < s.1)
        .filter(|_| !record_start)
    {
        Some(&(s, e, Span::Magic)) | Some(&(s, e, Span::Field)) => Err(K::Truncated {
            what: String::new(),
            need: (e - s) as u64,
            available: (p - s) as u64,
        }),
        Some(&(s, e, Span::Data)) => {
            let start = if f.aligned() { s.div_ceil(32) * 32 } else { s } as u64;
            Err(K::DataPastEof {
                start,
                end: e as u64,
                file_len: p as u64,
            })
        }
        // A cut between records leaves a valid, shorter file: it converts when w1 is in.
        None => {
            let w1 = f.tensors.iter().position(|t| t.name == W1).unwrap();
            Ok(p >= record_at(f, w1 + 1) as usize)
        }
    }
}

#[test]
fn truncation_at_every_field() {
    let dir = scratch("hostile-cuts");
    let mut checked = 0;
    for (magic, version) in [(GGML, None), (GGMF, Some(1)), (GGJT, Some(3))] {
        let f = tiny(magic, version);
        let bin = f.build();
        let mut cuts: Vec<usize> = Vec::new();
        for &(s, e, what) in &bin.spans {
            match what {
                Span::Data => cuts.extend([s, s + 1, (s + e) / 2, e - 1]),
                _ => cuts.extend(s..e),
            }
        }
        for p in cuts {
            let path = dir.join(format!("cut-{p}.bin"));
            std::fs::write(&path, &bin.bytes[..p]).unwrap();
            let got = std::panic::catch_unwind(|| read_legacy(&path, &LegacyOptions::default()))
                .unwrap_or_else(|_| panic!("{magic:?} cut at {p}: panicked"));
            let want = expected_cut(&f, &bin.spans, p);
            let ctx = format!("{} cut at {p}", String::from_utf8_lossy(&magic));
            match (want, got) {
                (Ok(true), Ok(_)) => {}
                (Ok(false), Err(ConvertError::Legacy(e))) => {
                    assert_eq!(e.kind, K::MissingTensor(W1), "{ctx}");
                }
                (
                    Err(K::Truncated {
                        need, available, ..
                    }),
                    Err(ConvertError::Legacy(e)),
                ) => {
                    let span_start = p as u64 - available;
                    assert!(
                        matches!(&e.kind, K::Truncated { need: n, available: a, what } if *n == need && *a == available && !what.is_empty()),
                        "{ctx}: {e:?}"
                    );
                    assert_eq!(e.offset, Some(span_start), "{ctx}");
                }
                (Err(want @ K::VocabTooLarge { .. }), Err(ConvertError::Legacy(e))) => {
                    assert_eq!(e.kind, want, "{ctx}");
                    assert_eq!(e.offset, Some(vocab_at(&f) - 28), "{ctx}");
                }
                (Err(want @ K::DataPastEof { .. }), Err(ConvertError::Legacy(e))) => {
                    assert_eq!(e.kind, want, "{ctx}");
                    assert!(e.tensor.is_some(), "{ctx}");
                }
                (want, got) => panic!("{ctx}: want {want:?}, got {:?}", got.map(|c| c.warnings)),
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked} cuts");
}

#[test]
fn corpus_under_memory_limit() {
    if std::env::var_os("GGUFKIT_LEGACY_HOSTILE_CHILD").is_some() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("timeout")
        .arg("120")
        .arg("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 524288 && exec \"$0\" --exact {} {} --test-threads=1",
            ggufkit_testsupport::limits::test_name(
                module_path!(),
                "every_case_fails_with_its_error"
            ),
            ggufkit_testsupport::limits::test_name(module_path!(), "truncation_at_every_field"),
        ))
        .arg(&exe)
        .env("GGUFKIT_LEGACY_HOSTILE_CHILD", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child under ulimit -v 512 MiB failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("2 passed"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
