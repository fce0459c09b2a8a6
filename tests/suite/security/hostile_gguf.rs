//! The hostile-input corpus of the GGUF reader, groups 1–14.
//!
//! Every case is a GGUF byte string written field by field with [`G`], so that what is
//! wrong with it is visible in the code, together with what the reader must answer: the
//! exact [`FormatError`] variant, the byte offset it reports and words its message must
//! contain (the key or tensor at fault), or, for the documented tolerant cases, what it
//! must read.
//!
//! * The cases are committed as `testdata/hostile/<case>.gguf`, one per case.
//!   `committed_corpus_matches_generator` keeps files and generator in step;
//!   `GGUFKIT_REGEN_HOSTILE=1 cargo test -p ggufkit --test suite security::hostile_gguf::committed_corpus`
//!   rewrites the files instead.
//! * Truncation at every byte of three valid files (little-endian v3 from our writer, a
//!   big-endian v3 file and a v1 file) is generated, not committed. The builder records the
//!   checks the reader makes, in order, so every cut has one exact expected error.
//! * A counting allocator bounds the heap each parse may use, so that no count read from a
//!   file can size an allocation by itself.
//! * `corpus_under_limits` runs everything again in a child process under `ulimit -v` and a
//!   60 s timeout.
//!
//! Groups 15 (split files) and 16 (legacy formats) concern readers that do not exist yet.

use ggufkit_testsupport as support;

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ggufkit::gguf::{
    layout, tensor_nbytes, write_gguf, ArrayValue, ByteOrder, FormatError, GgufError, GgufFile,
    Metadata, MetadataError, TensorHeader, Value, ValueType, MAX_ARRAY_LEN, MAX_STRING_LEN,
};
use ggufkit::mapped::FileBytes;
use ggufkit::quantizers::GgmlType;

use FormatError as F;

// ---------------------------------------------------------------------------------------
// A counting allocator: per-thread live and peak heap bytes.

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    // `try_with`: allocations can happen while a thread's locals are being torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator; the bookkeeping only
// touches const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: AllocLayout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Old and new block may both exist while the bytes are copied.
            note(new_size as isize);
            note(-(layout.size() as isize));
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f`, returning its result and the most heap bytes this thread held above what it
/// held before (including what the result keeps).
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let result = f();
    let peak = PEAK.with(Cell::get);
    (result, (peak - start).max(0) as usize)
}

/// Parses `bytes` in memory, measuring the heap the parse needs.
fn parse(bytes: Vec<u8>) -> (Result<GgufFile, GgufError>, usize) {
    let file = FileBytes::from_vec(bytes);
    measured(|| GgufFile::parse(file))
}

// ---------------------------------------------------------------------------------------
// Value type ids (`gguf_type`).

const U8: u32 = 0;
const I8: u32 = 1;
const U16: u32 = 2;
const I16: u32 = 3;
const U32: u32 = 4;
const I32: u32 = 5;
const F32: u32 = 6;
const BOOL: u32 = 7;
const STRING: u32 = 8;
const ARRAY: u32 = 9;
const U64: u32 = 10;

/// ggml type ids.
fn ty(t: GgmlType) -> u32 {
    t.id()
}

// ---------------------------------------------------------------------------------------
// The builder.

/// What the reader checks, in the order it checks it (for the truncation oracle).
#[derive(Debug, Clone)]
enum Check {
    /// A fixed-width field: the file must hold all of it.
    Field { at: u64, len: u64 },
    /// A string body of `len` bytes starting at `body`, after its length field at `at`.
    Str { at: u64, body: u64, len: u64 },
    /// The header counts at `at`, checked against the bytes after them.
    Counts { at: u64, n_tensors: u64, n_kv: u64 },
    /// An array count at `at`, items from `items`, each at least `min_item` bytes.
    Items {
        at: u64,
        items: u64,
        count: u64,
        min_item: u64,
    },
    /// The data of the tensor whose info is at `info_at` must end inside the file.
    Data {
        info_at: u64,
        name: String,
        end: u64,
    },
}

/// Where the fields of a tensor info were written.
#[derive(Debug, Clone)]
struct Info {
    at: u64,
    n_dims_at: u64,
    dims_at: Vec<u64>,
    ty_at: u64,
    name: Vec<u8>,
    dims: Vec<u64>,
    ty: u32,
    offset: u64,
}

/// Writes a GGUF file field by field, in either byte order and with v1 (u32) or v2+ (u64)
/// counts, lengths and dims. Nothing is validated: a case writes exactly what it says.
#[derive(Debug, Clone, Default)]
struct G {
    buf: Vec<u8>,
    big: bool,
    narrow: bool,
    checks: Vec<Check>,
    infos: Vec<Info>,
    /// Where the data section starts, once [`G::data_section`] ran.
    data_start: u64,
}

impl G {
    /// Magic `GGUF`, `version`, and the counts (u32 in version 1, u64 after).
    fn file(version: u32, big: bool, n_tensors: u64, n_kv: u64) -> G {
        let mut g = G {
            big,
            narrow: version == 1,
            ..G::default()
        };
        g.magic(b"GGUF").u32(version).counts(n_tensors, n_kv);
        g
    }

    /// A little-endian version 3 header.
    fn v3(n_tensors: u64, n_kv: u64) -> G {
        G::file(3, false, n_tensors, n_kv)
    }

    fn pos(&self) -> u64 {
        self.buf.len() as u64
    }

    fn w(&self) -> u64 {
        if self.narrow {
            4
        } else {
            8
        }
    }

    /// A number given in little-endian bytes, swapped for a big-endian file; `check` records
    /// it as a field the reader reads by itself.
    fn num(&mut self, le: &[u8], check: bool) -> &mut Self {
        if check {
            self.checks.push(Check::Field {
                at: self.pos(),
                len: le.len() as u64,
            });
        }
        if self.big {
            self.buf.extend(le.iter().rev());
        } else {
            self.buf.extend_from_slice(le);
        }
        self
    }

    fn magic(&mut self, m: &[u8; 4]) -> &mut Self {
        self.checks.push(Check::Field {
            at: self.pos(),
            len: 4,
        });
        self.bytes(m)
    }

    /// Raw bytes: string bodies, junk, padding, tensor data.
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }

    fn zeros(&mut self, n: usize) -> &mut Self {
        self.buf.resize(self.buf.len() + n, 0);
        self
    }

    fn u8(&mut self, v: u8) -> &mut Self {
        self.num(&[v], true)
    }

    fn i16(&mut self, v: i16) -> &mut Self {
        self.num(&v.to_le_bytes(), true)
    }

    fn u32(&mut self, v: u32) -> &mut Self {
        self.num(&v.to_le_bytes(), true)
    }

    fn i32(&mut self, v: i32) -> &mut Self {
        self.num(&v.to_le_bytes(), true)
    }

    fn f32(&mut self, v: f32) -> &mut Self {
        self.num(&v.to_le_bytes(), true)
    }

    fn u64(&mut self, v: u64) -> &mut Self {
        self.num(&v.to_le_bytes(), true)
    }

    /// A count, length or dim: u32 in version 1, u64 after.
    fn len(&mut self, v: u64) -> &mut Self {
        if self.narrow {
            self.u32(u32::try_from(v).expect("version 1 lengths are u32"))
        } else {
            self.u64(v)
        }
    }

    fn counts(&mut self, n_tensors: u64, n_kv: u64) -> &mut Self {
        let at = self.pos();
        self.len(n_tensors).len(n_kv);
        self.checks.push(Check::Counts {
            at,
            n_tensors,
            n_kv,
        });
        self
    }

    /// A string: its length, then its bytes.
    fn str(&mut self, s: &[u8]) -> &mut Self {
        self.str_len(s.len() as u64, s)
    }

    /// A string whose length field says `len`, followed by `body` whatever its size.
    fn str_len(&mut self, len: u64, body: &[u8]) -> &mut Self {
        let at = self.pos();
        self.len(len);
        let body_at = self.pos();
        self.checks.push(Check::Str {
            at,
            body: body_at,
            len,
        });
        self.bytes(body)
    }

    /// A KV record's key and value type; the value follows.
    fn kv(&mut self, key: &str, vt: u32) -> &mut Self {
        self.str(key.as_bytes()).u32(vt)
    }

    fn kv_u32(&mut self, key: &str, v: u32) -> &mut Self {
        self.kv(key, U32).u32(v)
    }

    fn kv_str(&mut self, key: &str, s: &str) -> &mut Self {
        self.kv(key, STRING).str(s.as_bytes())
    }

    /// An array header: element type and count; the items follow.
    fn arr(&mut self, elem: u32, count: u64) -> &mut Self {
        self.u32(elem);
        let at = self.pos();
        self.len(count);
        let min_item = match elem {
            STRING => self.w(),
            ARRAY => 4 + self.w(),
            t => ValueType::from_id(t)
                .and_then(ValueType::scalar_size)
                .unwrap_or(1) as u64,
        };
        let items = self.pos();
        self.checks.push(Check::Items {
            at,
            items,
            count,
            min_item,
        });
        self
    }

    /// A tensor info with `n_dims` = `dims.len()`.
    fn tensor(&mut self, name: &str, dims: &[u64], t: GgmlType, offset: u64) -> &mut Self {
        self.tensor_raw(name.as_bytes(), dims.len() as u32, dims, ty(t), offset)
    }

    /// A tensor info with every field given.
    fn tensor_raw(
        &mut self,
        name: &[u8],
        n_dims: u32,
        dims: &[u64],
        ty: u32,
        offset: u64,
    ) -> &mut Self {
        let at = self.pos();
        self.str(name);
        let n_dims_at = self.pos();
        self.u32(n_dims);
        let mut dims_at = Vec::new();
        for &d in dims {
            dims_at.push(self.pos());
            self.len(d);
        }
        let ty_at = self.pos();
        self.u32(ty).u64(offset);
        self.infos.push(Info {
            at,
            n_dims_at,
            dims_at,
            ty_at,
            name: name.to_vec(),
            dims: dims.to_vec(),
            ty,
            offset,
        });
        self
    }

    /// Zero padding to a multiple of `align` from the start of the file.
    fn pad(&mut self, align: u64) -> &mut Self {
        let n = (align - self.pos() % align) % align;
        self.zeros(n as usize)
    }

    /// Pads to the data section and records that each tensor's data must fit in the file.
    fn data_section(&mut self, align: u64) -> &mut Self {
        self.pad(align);
        self.data_start = self.pos();
        for i in 0..self.infos.len() {
            let info = &self.infos[i];
            let nbytes = GgmlType::from_id(info.ty)
                .and_then(|t| tensor_nbytes(t, &info.dims).ok())
                .expect("data_section is for valid tensors");
            self.checks.push(Check::Data {
                info_at: info.at,
                name: String::from_utf8_lossy(&info.name).into_owned(),
                end: self.data_start + info.offset + nbytes,
            });
        }
        self
    }

    /// Tensor data: `vals` as f32 in the file's byte order, not checked field by field.
    fn data_f32(&mut self, vals: &[f32]) -> &mut Self {
        for v in vals {
            self.num(&v.to_le_bytes(), false);
        }
        self
    }

    fn done(self) -> Vec<u8> {
        self.buf
    }
}

// ---------------------------------------------------------------------------------------
// Cases and expectations.

type Verify = Box<dyn Fn(&GgufFile)>;

enum Expect {
    /// The file parses (a valid control, or a documented tolerant case); `Verify` checks
    /// what was read.
    Accept(Verify),
    /// The reader must fail with a format error at byte `at` whose variant matches
    /// `variant` and whose message contains every needle.
    Reject {
        at: u64,
        variant: &'static str,
        check: Box<dyn Fn(&FormatError) -> bool>,
        needles: Vec<String>,
    },
}

/// `reject!(offset, pattern [if guard], [needles…])`.
macro_rules! reject {
    ($at:expr, $pat:pat $(if $guard:expr)?, [$($needle:expr),* $(,)?]) => {
        Expect::Reject {
            at: $at,
            variant: stringify!($pat),
            check: Box::new(move |e: &FormatError| matches!(e, $pat $(if $guard)?)),
            needles: vec![$($needle.to_string()),*],
        }
    };
}

fn accept(verify: impl Fn(&GgufFile) + 'static) -> Expect {
    Expect::Accept(Box::new(verify))
}

struct Case {
    name: String,
    bytes: Vec<u8>,
    expect: Expect,
}

impl Case {
    /// Checks a parse result against the expectation; `path` when it came from `open`.
    fn check(&self, result: Result<GgufFile, GgufError>, path: Option<&Path>) {
        let name = &self.name;
        match (&self.expect, result) {
            (Expect::Accept(verify), Ok(file)) => verify(&file),
            (Expect::Accept(_), Err(e)) => panic!("{name}: must parse, got: {e}"),
            (Expect::Reject { variant, .. }, Ok(_)) => {
                panic!("{name}: parsed, but must fail with {variant}")
            }
            (
                Expect::Reject {
                    at,
                    variant,
                    check,
                    needles,
                },
                Err(e),
            ) => {
                let msg = e.to_string();
                let GgufError::Format {
                    path: err_path,
                    offset,
                    error,
                } = &e
                else {
                    panic!("{name}: expected a format error, got: {msg}")
                };
                assert!(check(error), "{name}: expected {variant}, got {error:?}");
                assert_eq!(offset, at, "{name}: wrong offset in: {msg}");
                assert!(
                    msg.contains(&format!("at byte {at}:")),
                    "{name}: offset not in: {msg}"
                );
                for n in needles {
                    assert!(msg.contains(n.as_str()), "{name}: {n:?} not in: {msg}");
                }
                assert!(msg.len() <= 1024, "{name}: {} byte message", msg.len());
                if let Some(path) = path {
                    assert_eq!(err_path.as_deref(), Some(path), "{name}: path");
                    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
                }
            }
        }
    }
}

#[derive(Default)]
struct Cases(Vec<Case>);

impl Cases {
    fn add(&mut self, name: impl Into<String>, bytes: Vec<u8>, expect: Expect) {
        self.0.push(Case {
            name: name.into(),
            bytes,
            expect,
        });
    }
}

/// Every committed case, in group order.
fn cases() -> Vec<Case> {
    let mut c = Cases::default();
    g01_truncation(&mut c);
    g02_magic_version(&mut c);
    g03_counts(&mut c);
    g04_strings(&mut c);
    g05_array_counts(&mut c);
    g06_nesting_and_types(&mut c);
    g07_bool(&mut c);
    g08_duplicates_and_names(&mut c);
    g09_alignment(&mut c);
    g10_dims(&mut c);
    g11_size_overflow(&mut c);
    g12_tensor_types(&mut c);
    g13_offsets(&mut c);
    g14_typed_accessors(&mut c);
    c.0
}

// ---------------------------------------------------------------------------------------
// The valid small files (controls, and the subjects of the per-byte truncation).

/// Data of the small file's three tensors.
fn small_data() -> [Vec<u8>; 3] {
    let f32s = (0..8).flat_map(|i| (i as f32).to_le_bytes()).collect();
    [f32s, (0..34).collect(), (1..7).collect()]
}

/// A valid file with every kind of value and three tensors, the last one padded too (as our
/// writer and llama.cpp's write it). Version 1 has no UINT64, so no `test.u64` there.
fn small(version: u32, big: bool) -> G {
    let narrow = version == 1;
    let mut g = G::file(version, big, 3, if narrow { 7 } else { 8 });
    g.kv_str("general.architecture", "llama")
        .kv_u32("llama.context_length", 4096)
        .kv("test.flag", BOOL)
        .u8(1)
        .kv("test.i16", I16)
        .i16(-3)
        .kv("test.f32s", ARRAY)
        .arr(F32, 2)
        .f32(1.5)
        .f32(-2.0)
        .kv("test.strs", ARRAY)
        .arr(STRING, 3)
        .str(b"a")
        .str(b"bc")
        .str(b"")
        .kv("test.nested", ARRAY)
        .arr(ARRAY, 2)
        .arr(U8, 2)
        .u8(1)
        .u8(2)
        .arr(U8, 1)
        .u8(3);
    if !narrow {
        g.kv("test.u64", U64).u64(1 << 40);
    }
    g.tensor("tok_embd.weight", &[4, 2], GgmlType::F32, 0)
        .tensor("blk.0.q8", &[32], GgmlType::Q8_0, 32)
        .tensor("out", &[3], GgmlType::F16, 96)
        .data_section(32);
    let [_, q8, f16] = small_data();
    g.data_f32(&(0..8).map(|i| i as f32).collect::<Vec<_>>())
        .bytes(&q8)
        .pad(32)
        .bytes(&f16)
        .pad(32);
    g
}

/// The little-endian small file as our writer writes it.
fn small_via_writer() -> Vec<u8> {
    let mut m = Metadata::new();
    m.set("general.architecture", "llama");
    m.set("llama.context_length", 4096u32);
    m.set("test.flag", true);
    m.set("test.i16", Value::I16(-3));
    m.set("test.f32s", Value::Array(ArrayValue::F32(vec![1.5, -2.0])));
    m.set(
        "test.strs",
        Value::Array(ArrayValue::String(["a", "bc", ""].into_iter().collect())),
    );
    m.set(
        "test.nested",
        Value::Array(ArrayValue::Array(vec![
            ArrayValue::U8(vec![1, 2]),
            ArrayValue::U8(vec![3]),
        ])),
    );
    m.set("test.u64", Value::U64(1 << 40));
    let tensors = [
        ("tok_embd.weight", vec![4, 2], GgmlType::F32),
        ("blk.0.q8", vec![32], GgmlType::Q8_0),
        ("out", vec![3], GgmlType::F16),
    ]
    .map(|(name, dims, ty)| TensorHeader {
        name: name.into(),
        dims,
        ty,
    });
    write_with(&m, &tensors, &small_data())
}

fn write_with(m: &Metadata, tensors: &[TensorHeader], data: &[Vec<u8>]) -> Vec<u8> {
    let plan = layout(m, tensors).expect("layout");
    let mut out = Vec::new();
    write_gguf(&mut out, &plan, |i| Ok(Cow::Borrowed(&data[i][..]))).expect("write");
    assert_eq!(out.len() as u64, plan.file_size);
    out
}

/// What a parse of the small file must give.
fn check_small(f: &GgufFile, version: u32, order: ByteOrder) {
    assert_eq!(f.version, version);
    assert_eq!(f.byte_order, order);
    assert_eq!(f.alignment, 32);
    let m = &f.metadata;
    assert_eq!(m.get_str("general.architecture"), Ok("llama"));
    assert_eq!(m.get_u32("llama.context_length"), Ok(4096));
    assert_eq!(m.get_bool("test.flag"), Ok(true));
    assert_eq!(m.get("test.i16"), Some(&Value::I16(-3)));
    assert_eq!(
        m.get_array("test.f32s", ValueType::F32),
        Ok(&ArrayValue::F32(vec![1.5, -2.0]))
    );
    assert_eq!(
        m.get_array("test.strs", ValueType::String),
        Ok(&ArrayValue::String(["a", "bc", ""].into_iter().collect()))
    );
    assert_eq!(
        m.get_array("test.nested", ValueType::Array),
        Ok(&ArrayValue::Array(vec![
            ArrayValue::U8(vec![1, 2]),
            ArrayValue::U8(vec![3])
        ]))
    );
    if version == 1 {
        assert_eq!(m.len(), 7);
    } else {
        assert_eq!(m.get_u64("test.u64"), Ok(1 << 40));
    }
    let shapes: Vec<_> = f
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t.dims.clone(), t.ty, t.offset, t.nbytes))
        .collect();
    assert_eq!(
        shapes,
        [
            ("tok_embd.weight", vec![4, 2], GgmlType::F32, 0, 32),
            ("blk.0.q8", vec![32], GgmlType::Q8_0, 32, 34),
            ("out", vec![3], GgmlType::F16, 96, 6),
        ]
    );
    assert_eq!(f.data_offset % 32, 0);
    assert_eq!(f.file_size(), f.data_offset + 128);
    let floats: Vec<f32> = f
        .tensor_data(&f.tensors[0])
        .chunks_exact(4)
        .map(|c| {
            let a = c.try_into().unwrap();
            match order {
                ByteOrder::Little => f32::from_le_bytes(a),
                ByteOrder::Big => f32::from_be_bytes(a),
            }
        })
        .collect();
    assert_eq!(floats, (0..8).map(|i| i as f32).collect::<Vec<_>>());
    assert_eq!(f.tensor_data(&f.tensors[1]), &small_data()[1][..]);
    assert_eq!(f.tensor_data(&f.tensors[2]), &small_data()[2][..]);
}

// ---------------------------------------------------------------------------------------
// Group 1: truncation (the per-byte set is generated in `truncation_at_every_byte`).

fn g01_truncation(c: &mut Cases) {
    c.add(
        "g01-empty",
        vec![],
        reject!(
            0,
            F::Truncated {
                needed: 4,
                available: 0,
                ..
            },
            ["magic"]
        ),
    );
    // CVE-2024-39720: a file of just `GGUF`.
    c.add(
        "g01-magic-only",
        b"GGUF".to_vec(),
        reject!(
            4,
            F::Truncated {
                needed: 4,
                available: 0,
                ..
            },
            ["version"]
        ),
    );
    let mut g = G::v3(0, 0);
    g.buf.truncate(19);
    c.add(
        "g01-cut-in-kv-count",
        g.done(),
        reject!(
            16,
            F::Truncated {
                needed: 8,
                available: 3,
                ..
            },
            ["metadata count"]
        ),
    );
    c.add(
        "g01-header-claims-1-kv",
        G::v3(0, 1).done(),
        reject!(
            16,
            F::CountTooLarge {
                count: 1,
                max: 0,
                ..
            },
            ["metadata count 1"]
        ),
    );
    c.add(
        "g01-header-claims-1-tensor",
        G::v3(1, 0).done(),
        reject!(
            8,
            F::CountTooLarge {
                count: 1,
                max: 0,
                ..
            },
            ["tensor count 1"]
        ),
    );
    // Documented: with no tensors the padding after the infos is not required (gguf.cpp
    // only seeks past it when there are tensors).
    c.add(
        "g01-header-only-no-padding",
        G::v3(0, 0).done(),
        accept(|f| {
            assert_eq!((f.version, f.metadata.len(), f.tensors.len()), (3, 0, 0));
            assert_eq!(f.file_size(), 24);
        }),
    );
}

// ---------------------------------------------------------------------------------------
// Group 2: magic and version.

fn g02_magic_version(c: &mut Cases) {
    for (name, magic, shown) in [
        ("g02-magic-GGUX", *b"GGUX", "GGUX"),
        ("g02-magic-FUGG", *b"FUGG", "FUGG"),
        ("g02-magic-lmgg", *b"lmgg", "lmgg"),
        ("g02-magic-tjgg", *b"tjgg", "tjgg"),
        ("g02-magic-lowercase", *b"gguf", "gguf"),
        ("g02-magic-binary", [0x00, 0xFF, b'G', 0x7F], "..G."),
    ] {
        let mut g = G::v3(0, 0);
        g.buf[..4].copy_from_slice(&magic);
        c.add(
            name,
            g.done(),
            reject!(0, F::BadMagic(m) if m == shown, [format!("magic is {shown:?}")]),
        );
    }
    for (name, version, reported) in [
        ("g02-version-0", 0, 0),
        ("g02-version-4", 4, 4),
        ("g02-version-ffffffff", u32::MAX, u32::MAX),
        // Byte-swapped 4: a big-endian file of a version we do not know.
        ("g02-version-be-4", 0x0400_0000, 4),
        // Low 16 bits zero, so read as byte-swapped: 256.
        ("g02-version-00010000", 0x0001_0000, 256),
    ] {
        c.add(
            name,
            G::file(version, false, 0, 0).done(),
            reject!(4, F::UnsupportedVersion(v) if *v == reported, [format!("version {reported}")]),
        );
    }
    c.add(
        "g02-version-1",
        small(1, false).done(),
        accept(|f| check_small(f, 1, ByteOrder::Little)),
    );
    c.add(
        "g02-version-2",
        small(2, false).done(),
        accept(|f| check_small(f, 2, ByteOrder::Little)),
    );
    // 0x03000000 read little-endian: a big-endian version 3 file, read as such.
    c.add(
        "g02-version-3-big-endian",
        small(3, true).done(),
        accept(|f| check_small(f, 3, ByteOrder::Big)),
    );
    // Version 1 has no 64-bit value types.
    let mut g = G::file(1, false, 0, 1);
    g.str(b"a");
    let at = g.pos();
    g.u32(U64).u64(5);
    c.add(
        "g02-v1-u64-value",
        g.done(),
        reject!(at, F::InvalidValueType { id: 10, .. }, ["key 'a'"]),
    );
    // The element type is at fault, not the count that follows it.
    let mut g = G::file(1, false, 0, 1);
    g.kv("a", ARRAY);
    let at = g.pos();
    g.arr(U64, u32::MAX as u64).zeros(8);
    c.add(
        "g02-v1-u64-array",
        g.done(),
        reject!(at, F::InvalidValueType { id: 10, .. }, ["key 'a'"]),
    );
}

// ---------------------------------------------------------------------------------------
// Group 3: tensor and KV counts.

fn g03_counts(c: &mut Cases) {
    for (name, count) in [("2p63", 1u64 << 63), ("2p64m1", u64::MAX)] {
        let mut g = G::v3(count, 0);
        g.zeros(64);
        c.add(
            format!("g03-tensor-count-{name}"),
            g.done(),
            reject!(8, F::CountTooLarge { count: n, max: 2, .. } if *n == count, ["tensor count"]),
        );
        let mut g = G::v3(0, count);
        g.zeros(64);
        c.add(
            format!("g03-kv-count-{name}"),
            g.done(),
            reject!(16, F::CountTooLarge { count: n, max: 4, .. } if *n == count, ["metadata count"]),
        );
    }
    // 240 bytes could hold 10 tensor infos of the minimal 24 bytes, or 18 KVs of 13.
    let mut g = G::v3(11, 0);
    g.zeros(240);
    c.add(
        "g03-tensor-count-remaining-plus-1",
        g.done(),
        reject!(
            8,
            F::CountTooLarge {
                count: 11,
                max: 10,
                ..
            },
            ["tensor count 11"]
        ),
    );
    let mut g = G::v3(0, 19);
    g.zeros(240);
    c.add(
        "g03-kv-count-remaining-plus-1",
        g.done(),
        reject!(
            16,
            F::CountTooLarge {
                count: 19,
                max: 18,
                ..
            },
            ["metadata count 19"]
        ),
    );
    // A count within the bound that promises one record more than the file holds.
    let mut g = G::v3(0, 2);
    g.kv_str("general.architecture", "llama");
    let at = g.pos();
    c.add(
        "g03-kv-count-one-too-many",
        g.done(),
        reject!(
            at,
            F::Truncated {
                needed: 8,
                available: 0,
                ..
            },
            ["key of metadata entry 1"]
        ),
    );
    // One tensor info too many: the reader meets the padding, an empty name.
    let mut g = G::v3(2, 0);
    g.tensor("a", &[8], GgmlType::F32, 0);
    let at = g.pos();
    g.pad(32).zeros(32);
    c.add(
        "g03-tensor-count-one-too-many",
        g.done(),
        reject!(at, F::InvalidTensorName(_), ["(empty) at tensor 1"]),
    );
    // Version 1 counts are u32.
    let mut g = G::file(1, false, 0, u32::MAX as u64);
    g.zeros(64);
    c.add(
        "g03-v1-kv-count-u32max",
        g.done(),
        reject!(
            12,
            F::CountTooLarge {
                count: 0xFFFF_FFFF,
                max: 7,
                ..
            },
            ["metadata count"]
        ),
    );
    // A big-endian count is read big-endian: 2^63, not 128.
    let mut g = G::file(3, true, 0, 1 << 63);
    g.zeros(64);
    c.add(
        "g03-be-kv-count-2p63",
        g.done(),
        reject!(
            16,
            F::CountTooLarge {
                count: 0x8000_0000_0000_0000,
                max: 4,
                ..
            },
            ["metadata count 9223372036854775808"]
        ),
    );
}

// ---------------------------------------------------------------------------------------
// Group 4: string lengths and keys.

fn g04_strings(c: &mut Cases) {
    for (name, len) in [
        ("2p64m1", u64::MAX),
        ("2p63", 1 << 63),
        ("2p32", 1 << 32),
        ("remaining-plus-1", 17),
    ] {
        let mut g = G::v3(0, 1);
        g.str_len(len, &[b'k'; 16]);
        c.add(
            format!("g04-key-len-{name}"),
            g.done(),
            reject!(24, F::StringTooLong { len: l, max: 16, .. } if *l == len, ["key of metadata entry 0"]),
        );
    }
    for (name, len) in [("2p64m1", u64::MAX), ("remaining-plus-1", 9)] {
        let mut g = G::v3(0, 1);
        g.kv("general.name", STRING);
        let at = g.pos();
        g.str_len(len, b"12345678");
        c.add(
            format!("g04-value-len-{name}"),
            g.done(),
            reject!(at, F::StringTooLong { len: l, max: 8, .. } if *l == len, ["value of key 'general.name'"]),
        );
    }
    let mut g = G::v3(1, 0);
    g.str_len(u64::MAX, &[0; 24]);
    c.add(
        "g04-tensor-name-len-2p64m1",
        g.done(),
        reject!(
            24,
            F::StringTooLong {
                len: u64::MAX,
                max: 24,
                ..
            },
            ["name of tensor 0"]
        ),
    );
    let mut g = G::v3(0, 1);
    g.kv("tokenizer.ggml.tokens", ARRAY)
        .arr(STRING, 2)
        .str(b"a");
    let at = g.pos();
    g.str_len(u64::MAX, &[0; 8]);
    c.add(
        "g04-array-item-len-2p64m1",
        g.done(),
        reject!(
            at,
            F::StringTooLong {
                len: u64::MAX,
                max: 8,
                ..
            },
            ["key 'tokenizer.ggml.tokens'"]
        ),
    );

    for (name, key, needle) in [
        ("g04-key-empty", &b""[..], "(empty) at entry 0"),
        (
            "g04-key-nul",
            b"general.\0name",
            r#""general.\0name" at entry 0"#,
        ),
        ("g04-key-invalid-utf8", b"general.\xffname", "invalid UTF-8"),
    ] {
        let mut g = G::v3(0, 1);
        g.str(key).u32(U32).u32(1);
        c.add(name, g.done(), reject!(24, F::InvalidKey(_), [needle]));
    }
    // Only the head of a long bad key goes into the message.
    let mut g = G::v3(0, 1);
    g.str(&[0xFF; 65536]).u32(U8).u8(1);
    c.add(
        "g04-key-65536-invalid-utf8",
        g.done(),
        reject!(24, F::InvalidKey(_), ["(65536 bytes)", "invalid UTF-8"]),
    );
    // Documented tolerance: the spec caps keys at 65535 bytes, gguf.cpp at 1 GiB; we read
    // what llama.cpp reads.
    for len in [65535, 65536] {
        let mut g = G::v3(0, 1);
        g.kv(&"k".repeat(len), U8).u8(7);
        c.add(
            format!("g04-key-{len}"),
            g.done(),
            accept(move |f| assert_eq!(f.metadata.get(&"k".repeat(len)), Some(&Value::U8(7)))),
        );
    }
    // Documented tolerance: string values are kept as bytes; only the typed accessor says no.
    let mut g = G::v3(0, 1);
    g.kv("general.name", STRING).str(b"caf\xe9");
    c.add(
        "g04-value-invalid-utf8",
        g.done(),
        accept(|f| {
            let v = f.metadata.get("general.name").unwrap();
            assert!(matches!(v, Value::String(s) if s.as_bytes() == b"caf\xe9"));
            assert!(matches!(
                f.metadata.get_str("general.name"),
                Err(MetadataError::WrongType { .. })
            ));
        }),
    );
}

// ---------------------------------------------------------------------------------------
// Group 5: array counts.

fn g05_array_counts(c: &mut Cases) {
    // 32 bytes follow each count.
    for (name, elem, count, max) in [
        ("g05-array-count-2p64m1", U8, u64::MAX, 32),
        ("g05-array-count-2p62-f32-wraps", F32, 1 << 62, 8),
        ("g05-array-count-2p61-u64-wraps", U64, 1 << 61, 4),
        ("g05-array-count-2p63-i16-wraps", I16, 1 << 63, 16),
        ("g05-array-count-remaining-plus-1", U32, 9, 8),
        ("g05-array-strings-prefixes-exceed", STRING, 5, 4),
        ("g05-array-nested-count-2p64m1", ARRAY, u64::MAX, 2),
    ] {
        let mut g = G::v3(0, 1);
        g.kv("a", ARRAY).u32(elem);
        let at = g.pos();
        g.u64(count).zeros(32);
        c.add(
            name,
            g.done(),
            reject!(at, F::CountTooLarge { count: n, max: m, .. } if *n == count && *m == max,
                ["array item (key 'a') count"]),
        );
    }
    // The count fits, the strings it promises do not.
    let mut g = G::v3(0, 1);
    g.kv("a", ARRAY).arr(STRING, 2);
    let at = g.pos();
    g.str_len(100, &[b'x'; 16]);
    c.add(
        "g05-array-strings-lengths-exceed",
        g.done(),
        reject!(
            at,
            F::StringTooLong {
                len: 100,
                max: 16,
                ..
            },
            ["array of key 'a'"]
        ),
    );
}

// ---------------------------------------------------------------------------------------
// Group 6: nested arrays and type ids.

/// Key `a`: `depth` levels of arrays, each holding one array, the innermost holding
/// `inner_count` u8s, or, when `inner_array` is set, declaring ARRAY items with count 0.
/// Returns the file and the offset of the element type of the level at index 3 (the
/// deepest level allowed to hold arrays is index 2).
fn nested(depth: usize, inner_array: bool) -> (Vec<u8>, u64) {
    let mut g = G::v3(0, 1);
    g.kv("a", ARRAY);
    let mut level3 = 0;
    for level in 0..depth {
        if level == 3 {
            level3 = g.pos();
        }
        if level + 1 < depth {
            g.arr(ARRAY, 1);
        } else if inner_array {
            g.arr(ARRAY, 0);
        } else {
            g.arr(U8, 2).u8(1).u8(2);
        }
    }
    (g.done(), level3)
}

fn g06_nesting_and_types(c: &mut Cases) {
    // Depth counts ARRAY levels: depth 1 is a plain array. Up to 4 levels are accepted (as
    // huggingface.js does), deeper ones rejected by their declared type.
    for depth in [1, 2, 4] {
        let (bytes, _) = nested(depth, false);
        c.add(
            format!("g06-nested-depth-{depth}"),
            bytes,
            accept(move |f| {
                let mut want = ArrayValue::U8(vec![1, 2]);
                for _ in 1..depth {
                    want = ArrayValue::Array(vec![want]);
                }
                assert_eq!(f.metadata.get("a"), Some(&Value::Array(want)));
            }),
        );
    }
    for (name, depth, inner_array) in [
        ("g06-nested-depth-5", 5, false),
        ("g06-nested-depth-5-empty", 4, true),
        ("g06-nested-depth-10000", 10_000, false),
    ] {
        let (bytes, at) = nested(depth, inner_array);
        c.add(
            name,
            bytes,
            reject!(
                at,
                F::NestingTooDeep { max: 4, .. },
                ["key 'a'", "more than 4 levels"]
            ),
        );
    }
    for (name, id) in [("13", 13), ("255", 255), ("ffffffff", u32::MAX)] {
        let mut g = G::v3(0, 1);
        g.kv("a", ARRAY);
        let at = g.pos();
        g.arr(id, 1).zeros(16);
        c.add(
            format!("g06-array-elem-type-{name}"),
            g.done(),
            reject!(at, F::InvalidValueType { id: i, .. } if *i == id, ["key 'a'", format!("invalid value type {id}")]),
        );
        let mut g = G::v3(0, 1);
        g.str(b"a");
        let at = g.pos();
        g.u32(id).zeros(16);
        c.add(
            format!("g06-value-type-{name}"),
            g.done(),
            reject!(at, F::InvalidValueType { id: i, .. } if *i == id, ["key 'a'", format!("invalid value type {id}")]),
        );
    }
    // The element type is checked even when there are no elements.
    let mut g = G::v3(0, 1);
    g.kv("a", ARRAY);
    let at = g.pos();
    g.arr(13, 0);
    c.add(
        "g06-array-elem-type-13-empty",
        g.done(),
        reject!(at, F::InvalidValueType { id: 13, .. }, ["key 'a'"]),
    );
    let mut g = G::v3(0, 1);
    g.kv("a", ARRAY).arr(ARRAY, 1);
    let at = g.pos();
    g.arr(13, 1).zeros(16);
    c.add(
        "g06-nested-elem-type-13",
        g.done(),
        reject!(at, F::InvalidValueType { id: 13, .. }, ["key 'a'"]),
    );
}

// ---------------------------------------------------------------------------------------
// Group 7: BOOL bytes.

fn g07_bool(c: &mut Cases) {
    for (name, byte) in [("g07-bool-2", 2u8), ("g07-bool-ff", 0xFF)] {
        let mut g = G::v3(0, 1);
        g.kv("test.flag", BOOL);
        let at = g.pos();
        g.u8(byte);
        c.add(
            name,
            g.done(),
            reject!(at, F::InvalidBool { byte: b, .. } if *b == byte, ["key 'test.flag'"]),
        );
    }
    let mut g = G::v3(0, 1);
    g.kv("test.flags", ARRAY).arr(BOOL, 3).u8(1).u8(0);
    let at = g.pos();
    g.u8(2);
    c.add(
        "g07-bool-array-2",
        g.done(),
        reject!(
            at,
            F::InvalidBool { byte: 2, .. },
            ["key 'test.flags'", "0x02"]
        ),
    );
}

// ---------------------------------------------------------------------------------------
// Group 8: duplicates and names.

/// A file with `general.architecture` and the given tensor infos (F32 [8], 32 bytes each,
/// at consecutive offsets), padded, with their data.
fn f32_tensors(names: &[&[u8]]) -> G {
    let mut g = G::v3(names.len() as u64, 1);
    g.kv_str("general.architecture", "llama");
    for (i, name) in names.iter().enumerate() {
        g.tensor_raw(name, 1, &[8], ty(GgmlType::F32), 32 * i as u64);
    }
    g.pad(32).zeros(32 * names.len());
    g
}

fn g08_duplicates_and_names(c: &mut Cases) {
    let mut g = G::v3(0, 2);
    g.kv_u32("a", 1);
    let at = g.pos();
    g.kv_u32("a", 1);
    c.add(
        "g08-dup-key-same-type",
        g.done(),
        reject!(at, F::DuplicateKey(k) if k == "a", ["duplicate key 'a'"]),
    );
    let mut g = G::v3(0, 2);
    g.kv_u32("a", 1);
    let at = g.pos();
    g.kv_str("a", "one");
    c.add(
        "g08-dup-key-diff-type",
        g.done(),
        reject!(at, F::DuplicateKey(k) if k == "a", ["duplicate key 'a'"]),
    );
    // gguf.cpp compares keys as C strings on lookup: a NUL suffix could shadow a key.
    let mut g = G::v3(0, 2);
    g.kv_str("general.architecture", "llama");
    let at = g.pos();
    g.kv_str("general.architecture\0evil", "evil");
    c.add(
        "g08-key-nul-shadow",
        g.done(),
        reject!(at, F::InvalidKey(_), ["general.architecture\\0evil", "NUL"]),
    );
    let g = f32_tensors(&[b"t", b"t"]);
    let at = g.infos[1].at;
    c.add(
        "g08-dup-tensor",
        g.done(),
        reject!(at, F::DuplicateTensor(t) if t == "t", ["duplicate tensor 't'"]),
    );
    let name63 = "n".repeat(63);
    c.add(
        "g08-tensor-name-63",
        f32_tensors(&[name63.as_bytes()]).done(),
        accept(move |f| assert_eq!(f.tensors[0].name, name63)),
    );
    for (name, raw, needle) in [
        (
            "g08-tensor-name-64",
            "n".repeat(64).into_bytes(),
            "(64 bytes)",
        ),
        (
            "g08-tensor-name-65",
            "n".repeat(65).into_bytes(),
            "(65 bytes)",
        ),
        ("g08-tensor-name-empty", vec![], "(empty) at tensor 0"),
        (
            "g08-tensor-name-nul",
            b"a\0b".to_vec(),
            r#""a\0b" of tensor 0"#,
        ),
        (
            "g08-tensor-name-invalid-utf8",
            b"a\xffb".to_vec(),
            "invalid UTF-8",
        ),
    ] {
        let g = f32_tensors(&[&raw]);
        c.add(
            name,
            g.done(),
            reject!(24 + 45, F::InvalidTensorName(_), [needle]),
        );
    }
}

// ---------------------------------------------------------------------------------------
// Group 9: general.alignment.

/// Tensors `a` (I8 [3]), `b` (I8 [5]) and `c` (F32 [1]) with `alignment`, from our writer.
fn aligned(alignment: Option<u32>) -> Vec<u8> {
    let mut m = Metadata::new();
    m.set("general.architecture", "llama");
    if let Some(a) = alignment {
        m.set("general.alignment", a);
    }
    let tensors = [
        ("a", 3, GgmlType::I8),
        ("b", 5, GgmlType::I8),
        ("c", 1, GgmlType::F32),
    ]
    .map(|(name, n, ty)| TensorHeader {
        name: name.into(),
        dims: vec![n],
        ty,
    });
    let data = [
        vec![1, 2, 3],
        vec![4, 5, 6, 7, 8],
        1.0f32.to_le_bytes().to_vec(),
    ];
    write_with(&m, &tensors, &data)
}

fn check_aligned(f: &GgufFile, alignment: u64) {
    assert_eq!(f.alignment as u64, alignment);
    assert_eq!(f.data_offset % alignment, 0);
    let up = |n: u64| n.div_ceil(alignment) * alignment;
    let offsets: Vec<u64> = f.tensors.iter().map(|t| t.offset).collect();
    assert_eq!(offsets, [0, up(3), up(3) + up(5)]);
    assert_eq!(f.tensor_data(&f.tensors[0]), [1, 2, 3]);
    assert_eq!(f.tensor_data(&f.tensors[1]), [4, 5, 6, 7, 8]);
    assert_eq!(f.tensor_data(&f.tensors[2]), 1.0f32.to_le_bytes());
}

fn g09_alignment(c: &mut Cases) {
    c.add(
        "g09-align-missing",
        aligned(None),
        accept(|f| check_aligned(f, 32)),
    );
    // Powers of two below 8 are accepted, as gguf.cpp and gguf-py do (the spec says
    // multiples of 8).
    for a in [1u32, 2, 4, 64] {
        c.add(
            format!("g09-align-{a}"),
            aligned(Some(a)),
            accept(move |f| check_aligned(f, a as u64)),
        );
    }
    // The value is checked once all KVs are read; the error points at the KV.
    let kv_file = |write: &dyn Fn(&mut G)| {
        let mut g = G::v3(0, 2);
        g.kv_str("general.architecture", "llama");
        let at = g.pos();
        write(&mut g);
        g.zeros(8);
        (g.done(), at)
    };
    for (name, value) in [
        ("0", 0u32),
        ("3", 3),
        ("2p21", 1 << 21),
        ("2p31", 1 << 31),
        ("2p32m1", u32::MAX),
    ] {
        let (bytes, at) = kv_file(&|g: &mut G| {
            g.kv_u32("general.alignment", value);
        });
        c.add(
            format!("g09-align-{name}"),
            bytes,
            reject!(
                at,
                F::BadAlignment(_),
                [format!("general.alignment is {value}:")]
            ),
        );
    }
    type Writer = Box<dyn Fn(&mut G)>;
    let wrong_types: [(&str, &str, Writer); 6] = [
        (
            "i32",
            "INT32",
            Box::new(|g: &mut G| {
                g.kv("general.alignment", I32).i32(32);
            }),
        ),
        (
            "u64",
            "UINT64",
            Box::new(|g: &mut G| {
                g.kv("general.alignment", U64).u64(32);
            }),
        ),
        (
            "u16",
            "UINT16",
            Box::new(|g: &mut G| {
                g.kv("general.alignment", U16)
                    .num(&32u16.to_le_bytes(), true);
            }),
        ),
        (
            "f32",
            "FLOAT32",
            Box::new(|g: &mut G| {
                g.kv("general.alignment", F32).f32(32.0);
            }),
        ),
        (
            "string",
            "STRING",
            Box::new(|g: &mut G| {
                g.kv_str("general.alignment", "32");
            }),
        ),
        (
            "array",
            "ARRAY[UINT32]",
            Box::new(|g: &mut G| {
                g.kv("general.alignment", ARRAY).arr(U32, 1).u32(32);
            }),
        ),
    ];
    for (name, shown, write) in wrong_types {
        let (bytes, at) = kv_file(&*write);
        c.add(
            format!("g09-align-{name}"),
            bytes,
            reject!(
                at,
                F::BadAlignment(_),
                [format!("general.alignment has type {shown}")]
            ),
        );
    }
    // Declared 64, laid out for 32.
    let mut g = G::v3(2, 1);
    g.kv_u32("general.alignment", 64)
        .tensor("a", &[8], GgmlType::F32, 0)
        .tensor("b", &[8], GgmlType::F32, 32)
        .pad(64)
        .zeros(128);
    let at = g.infos[1].at;
    c.add(
        "g09-align-64-laid-out-for-32",
        g.done(),
        reject!(
            at,
            F::Tensor { .. },
            [
                "tensor 'b'",
                "offset 32 is not a multiple of the alignment 64"
            ]
        ),
    );
}

// ---------------------------------------------------------------------------------------
// Group 10: dimensions.

/// A file with one tensor info `t` with every field given, then `data` bytes of data.
fn one_tensor(n_dims: u32, dims: &[u64], t: u32, offset: u64, data: usize) -> G {
    let mut g = G::v3(1, 1);
    g.kv_str("general.architecture", "llama")
        .tensor_raw(b"t", n_dims, dims, t, offset)
        .pad(32)
        .zeros(data);
    g
}

fn g10_dims(c: &mut Cases) {
    for (name, n_dims) in [("5", 5u32), ("ffffffff", u32::MAX)] {
        let g = one_tensor(n_dims, &[1, 1, 1, 1, 1], ty(GgmlType::F32), 0, 32);
        let at = g.infos[0].n_dims_at;
        c.add(
            format!("g10-ndims-{name}"),
            g.done(),
            reject!(
                at,
                F::Tensor { .. },
                ["tensor 't'", format!("{n_dims} dimensions (at most 4)")]
            ),
        );
    }
    // A scalar: one element.
    c.add(
        "g10-ndims-0",
        one_tensor(0, &[], ty(GgmlType::F32), 0, 32).done(),
        accept(|f| {
            let t = &f.tensors[0];
            assert_eq!((t.dims.len(), t.n_elements(), t.nbytes), (0, 1, 4));
        }),
    );
    // A zero dimension anywhere: an empty tensor, accepted without dividing by it; the next
    // tensor starts at the same offset.
    for i in 0..4 {
        let mut dims = [2, 3, 4, 5];
        dims[i] = 0;
        let mut g = G::v3(2, 1);
        g.kv_str("general.architecture", "llama")
            .tensor("t", &dims, GgmlType::F32, 0)
            .tensor("u", &[1], GgmlType::F32, 0)
            .pad(32)
            .data_f32(&[1.0])
            .pad(32);
        c.add(
            format!("g10-zero-dim-{i}"),
            g.done(),
            accept(move |f| {
                assert_eq!(f.tensors[0].dims, dims);
                assert_eq!((f.tensors[0].n_elements(), f.tensors[0].nbytes), (0, 0));
                assert_eq!(f.tensors[1].offset, 0);
                assert_eq!(f.tensor_data(&f.tensors[1]), 1.0f32.to_le_bytes());
            }),
        );
    }
    // Empty, and a multiple of any block size.
    c.add(
        "g10-zero-dim-q4_k-ne0",
        one_tensor(2, &[0, 7], ty(GgmlType::Q4_K), 0, 0).done(),
        accept(|f| assert_eq!(f.tensors[0].nbytes, 0)),
    );
    // Empty, but the other dims multiply past i64 (row count and strides would overflow).
    let g = one_tensor(4, &[0, 1 << 62, 1 << 62, 1], ty(GgmlType::F32), 0, 0);
    let at = g.infos[0].ty_at;
    c.add(
        "g10-zero-dim-huge-others",
        g.done(),
        reject!(
            at,
            F::Tensor { .. },
            ["tensor 't'", "element count of shape"]
        ),
    );
    for (name, dims, d) in [
        ("g10-dim-negative-2p63", vec![8, 1 << 63], 1),
        ("g10-dim-negative-2p64m1", vec![u64::MAX, 1], 0),
    ] {
        let g = one_tensor(2, &dims, ty(GgmlType::F32), 0, 32);
        let at = g.infos[0].dims_at[d];
        let shown = dims[d] as i64;
        c.add(
            name,
            g.done(),
            reject!(
                at,
                F::Tensor { .. },
                ["tensor 't'", format!("dimension {d} is negative ({shown})")]
            ),
        );
    }
}

// ---------------------------------------------------------------------------------------
// Group 11: element and byte size overflow.

fn g11_size_overflow(c: &mut Cases) {
    for (name, dims, t, needle) in [
        (
            "g11-nelements-2p32x2p32",
            vec![1 << 32, 1 << 32],
            GgmlType::F32,
            "element count of shape",
        ),
        (
            "g11-nelements-2p62x2",
            vec![1 << 62, 2],
            GgmlType::I8,
            "element count of shape",
        ),
        // CVE-2026-33298: the element count (2^63 − 2^47 + …) fits in i64, its Q8_0 byte
        // size (×34/32) does not.
        (
            "g11-q8_0-2p42p1-bytes",
            vec![32, (1 << 42) + 1, 65535],
            GgmlType::Q8_0,
            "byte size of shape",
        ),
        // The GGML_PAD wrap: 4 × (2^62 − 1) = 2^64 − 4, which padding to 32 would wrap.
        (
            "g11-f32-2p62m1-pad-wrap",
            vec![(1 << 62) - 1],
            GgmlType::F32,
            "byte size of shape",
        ),
    ] {
        let g = one_tensor(dims.len() as u32, &dims, ty(t), 0, 32);
        let at = g.infos[0].ty_at;
        c.add(
            name,
            g.done(),
            reject!(at, F::Tensor { .. }, ["tensor 't'", needle]),
        );
    }
    // llama.cpp #27200: ne0 × 18 wraps to 64 in ggml_nbytes; we size it right (divide by the
    // block first) and find it far past the end of the file.
    for (name, dims, t, nbytes) in [
        (
            "g11-q4_0-ne0-mul-wrap",
            vec![5_124_095_576_030_431_008],
            GgmlType::Q4_0,
            2_882_303_761_517_117_442u64,
        ),
        (
            "g11-i8-nbytes-i64max",
            vec![i64::MAX as u64],
            GgmlType::I8,
            i64::MAX as u64,
        ),
    ] {
        let g = one_tensor(1, &dims, ty(t), 0, 0);
        let (at, end) = (g.infos[0].at, g.pos() + nbytes);
        c.add(
            name,
            g.done(),
            reject!(
                at,
                F::Tensor { .. },
                [
                    "tensor 't'",
                    format!("data ends at byte {end}, past the end")
                ]
            ),
        );
    }
    // Upstream's MEM_SIZE_OVERFLOW: two I8 tensors of 0x7FFFFFFFFFFFFFC0 bytes each.
    let mut g = G::v3(2, 1);
    g.kv_str("general.architecture", "llama")
        .tensor("a", &[0x7FFF_FFFF_FFFF_FFC0], GgmlType::I8, 0)
        .tensor(
            "b",
            &[0x7FFF_FFFF_FFFF_FFC0],
            GgmlType::I8,
            0x7FFF_FFFF_FFFF_FFC0,
        )
        .pad(32)
        .zeros(64);
    let at = g.infos[0].at;
    c.add(
        "g11-i8-pair-7fffffffffffffc0",
        g.done(),
        reject!(at, F::Tensor { .. }, ["tensor 'a'", "past the end"]),
    );
}

// ---------------------------------------------------------------------------------------
// Group 12: tensor types.

fn g12_tensor_types(c: &mut Cases) {
    // Q4_2, Q4_3, Q4_0_4_4/4_8/8_8, IQ4_NL_4_4/4_8/8_8 (removed), 43 (unknown), −1.
    for id in [4u32, 5, 31, 32, 33, 36, 37, 38, 43, u32::MAX] {
        let g = one_tensor(1, &[256], id, 0, 1024);
        let at = g.infos[0].ty_at;
        let name = if id == u32::MAX {
            "ffffffff".to_string()
        } else {
            id.to_string()
        };
        c.add(
            format!("g12-type-{name}"),
            g.done(),
            reject!(
                at,
                F::Tensor { .. },
                ["tensor 't'", format!("unknown or removed type id {id}")]
            ),
        );
    }
    for (name, dims, t, needle) in [
        (
            "g12-q4_0-ne0-33",
            vec![33, 2],
            GgmlType::Q4_0,
            "row length 33 is not a multiple of the q4_0 block size 32",
        ),
        (
            "g12-q4_k-ne0-32",
            vec![32],
            GgmlType::Q4_K,
            "row length 32 is not a multiple of the q4_K block size 256",
        ),
        (
            "g12-q8_0-scalar",
            vec![],
            GgmlType::Q8_0,
            "row length 1 is not a multiple of the q8_0 block size 32",
        ),
    ] {
        let g = one_tensor(dims.len() as u32, &dims, ty(t), 0, 64);
        let at = g.infos[0].ty_at;
        c.add(
            name,
            g.done(),
            reject!(at, F::Tensor { .. }, ["tensor 't'", needle]),
        );
    }
}

// ---------------------------------------------------------------------------------------
// Group 13: offsets and the data section.

/// Tensors `a` (F32 [a_len]) and `b` (F32 [4], 16 bytes) at the given offsets, then `data`
/// bytes after the padding.
fn two_tensors(a_len: u64, a_at: u64, b_at: u64, data: usize) -> G {
    let mut g = G::v3(2, 1);
    g.kv_str("general.architecture", "llama")
        .tensor("a", &[a_len], GgmlType::F32, a_at)
        .tensor("b", &[4], GgmlType::F32, b_at)
        .pad(32);
    g.data_start = g.pos();
    g.zeros(data);
    g
}

fn g13_offsets(c: &mut Cases) {
    c.add(
        "g13-contiguous-control",
        two_tensors(8, 0, 32, 64).done(),
        accept(|f| assert_eq!(f.file_size(), f.data_offset + 64)),
    );
    for (name, a_len, a_at, b_at, data, bad, needle) in [
        (
            "g13-offset-unaligned",
            8,
            1,
            32,
            64,
            "a",
            "offset 1 is not a multiple of the alignment 32",
        ),
        (
            "g13-offset-overlap",
            16,
            0,
            32,
            96,
            "b",
            "offset 32 out of place, expected 64",
        ),
        (
            "g13-offset-out-of-order",
            8,
            32,
            0,
            64,
            "a",
            "offset 32 out of place, expected 0",
        ),
        (
            "g13-offset-gap",
            8,
            0,
            64,
            96,
            "b",
            "offset 64 out of place, expected 32",
        ),
        (
            "g13-offset-2p64m1",
            8,
            u64::MAX,
            32,
            64,
            "a",
            "offset 18446744073709551615 is not a multiple",
        ),
        (
            "g13-offset-2p64m32",
            8,
            u64::MAX - 31,
            32,
            64,
            "a",
            "offset 18446744073709551584 out of place, expected 0",
        ),
    ] {
        let g = two_tensors(a_len, a_at, b_at, data);
        let at = g.infos[usize::from(bad == "b")].at;
        c.add(
            name,
            g.done(),
            reject!(
                at,
                F::Tensor { .. },
                [format!("tensor '{bad}'"), needle.to_string()]
            ),
        );
    }
    // Data past the end: `b` cut short, no data at all, and not even the padding.
    for (name, cut_to_infos, data, bad) in [
        ("g13-offset-past-eof", false, 40, 1),
        ("g13-data-missing", false, 0, 0),
        ("g13-data-missing-no-padding", true, 0, 0),
    ] {
        let mut g = two_tensors(8, 0, 32, data);
        let start = g.data_start;
        let (at, end) = if bad == 0 {
            (g.infos[0].at, start + 32)
        } else {
            (g.infos[1].at, start + 48)
        };
        if cut_to_infos {
            let infos_end = g.infos[1].ty_at + 12;
            g.buf.truncate(infos_end as usize);
        }
        let tensor = ["a", "b"][bad];
        c.add(
            name,
            g.done(),
            reject!(
                at,
                F::Tensor { .. },
                [
                    format!("tensor '{tensor}'"),
                    format!("data ends at byte {end}, past the end")
                ]
            ),
        );
    }
    // Documented: the last tensor needs no trailing padding (gguf.cpp with no_alloc = false
    // would require it; llama.cpp's loader does not).
    let mut g = G::v3(2, 1);
    g.kv_str("general.architecture", "llama")
        .tensor("a", &[8], GgmlType::F32, 0)
        .tensor("b", &[3], GgmlType::F32, 32)
        .pad(32)
        .data_f32(&[0.0; 8])
        .data_f32(&[1.0, 2.0, 3.0]);
    c.add(
        "g13-last-tensor-no-trailing-padding",
        g.done(),
        accept(|f| {
            assert_eq!(f.file_size(), f.data_offset + 32 + 12);
            let b: Vec<u8> = [1.0f32, 2.0, 3.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            assert_eq!(f.tensor_data(&f.tensors[1]), b);
        }),
    );
    // Documented: padding is not checked to be zero (gguf.cpp does not either).
    let mut g = two_tensors(3, 0, 32, 0);
    g.data_f32(&[1.0, 2.0, 3.0]).bytes(&[0xAA; 20]).zeros(16);
    c.add(
        "g13-padding-nonzero",
        g.done(),
        accept(|f| assert_eq!(f.tensor_data(&f.tensors[0]).len(), 12)),
    );
    // An empty tensor exactly at the end of the file.
    let mut g = G::v3(1, 1);
    g.kv_str("general.architecture", "llama")
        .tensor("e", &[0], GgmlType::F32, 0)
        .pad(32);
    c.add(
        "g13-empty-tensor-at-eof",
        g.done(),
        accept(|f| assert_eq!(f.data_offset, f.file_size())),
    );
}

// ---------------------------------------------------------------------------------------
// Group 14: typed accessors (the files are valid; the typed reads must refuse or tolerate).

/// Four tokens, then whatever `more` writes (`n_more` KVs).
fn vocab(n_more: u64, more: impl FnOnce(&mut G)) -> Vec<u8> {
    let mut g = G::v3(0, 2 + n_more);
    g.kv_str("general.architecture", "llama")
        .kv("tokenizer.ggml.tokens", ARRAY)
        .arr(STRING, 4)
        .str(b"<s>")
        .str(b"a")
        .str(b"b")
        .str(b"c");
    more(&mut g);
    g.done()
}

fn wrong_type(key: &str, expected: &'static str, found: &str) -> MetadataError {
    MetadataError::WrongType {
        key: key.into(),
        expected,
        found: found.into(),
    }
}

fn g14_typed_accessors(c: &mut Cases) {
    // huntr PoCs: scores as INT8[], read as f32 by a consumer that only checked the count.
    c.add(
        "g14-scores-int8",
        vocab(1, |g| {
            g.kv("tokenizer.ggml.scores", ARRAY)
                .arr(I8, 4)
                .bytes(&[1, 2, 3, 4]);
        }),
        accept(|f| {
            let key = "tokenizer.ggml.scores";
            assert_eq!(
                f.metadata.get_array(key, ValueType::F32),
                Err(wrong_type(key, "array", "ARRAY[INT8]"))
            );
            assert_eq!(
                f.metadata
                    .get_array(key, ValueType::F32)
                    .unwrap_err()
                    .to_string(),
                "metadata key 'tokenizer.ggml.scores' has type ARRAY[INT8], expected array"
            );
        }),
    );
    c.add(
        "g14-token-type-f32",
        vocab(1, |g| {
            g.kv("tokenizer.ggml.token_type", ARRAY)
                .arr(F32, 4)
                .f32(1.0)
                .f32(1.0)
                .f32(1.0)
                .f32(1.0);
        }),
        accept(|f| {
            let key = "tokenizer.ggml.token_type";
            assert_eq!(
                f.metadata.get_array(key, ValueType::I32),
                Err(wrong_type(key, "array", "ARRAY[FLOAT32]"))
            );
        }),
    );
    c.add(
        "g14-scores-strings",
        vocab(1, |g| {
            g.kv("tokenizer.ggml.scores", ARRAY)
                .arr(STRING, 4)
                .str(b"1")
                .str(b"2")
                .str(b"3")
                .str(b"4");
        }),
        accept(|f| {
            let key = "tokenizer.ggml.scores";
            assert_eq!(
                f.metadata.get_array(key, ValueType::F32),
                Err(wrong_type(key, "array", "ARRAY[STRING]"))
            );
        }),
    );
    // A count that differs from the token count is visible to the vocab consumer, which
    // must compare them (there is no vocab reader yet).
    c.add(
        "g14-scores-count-mismatch",
        vocab(1, |g| {
            g.kv("tokenizer.ggml.scores", ARRAY)
                .arr(F32, 3)
                .f32(0.0)
                .f32(-1.0)
                .f32(-2.0);
        }),
        accept(|f| {
            let m = &f.metadata;
            let tokens = m.get_array("tokenizer.ggml.tokens", ValueType::String);
            let scores = m.get_array("tokenizer.ggml.scores", ValueType::F32);
            assert_eq!((tokens.unwrap().len(), scores.unwrap().len()), (4, 3));
        }),
    );
    // Integer widths: u64 where llama.cpp expects u32 is read when it fits; a string or an
    // out-of-range value is refused.
    c.add(
        "g14-integer-widths",
        vocab(4, |g| {
            g.kv("llama.context_length", U64)
                .u64(4096)
                .kv("llama.block_count", U64)
                .u64(1 << 32)
                .kv("llama.embedding_length", I32)
                .i32(-1)
                .kv_str("llama.feed_forward_length", "11008");
        }),
        accept(|f| {
            let m = &f.metadata;
            assert_eq!(m.get_u32("llama.context_length"), Ok(4096));
            assert_eq!(
                m.get_u32("llama.block_count"),
                Err(MetadataError::OutOfRange {
                    key: "llama.block_count".into(),
                    value: 1 << 32,
                    expected: "u32",
                })
            );
            assert_eq!(
                m.get_u32("llama.embedding_length"),
                Err(MetadataError::OutOfRange {
                    key: "llama.embedding_length".into(),
                    value: -1,
                    expected: "u32",
                })
            );
            assert_eq!(
                m.get_u32("llama.feed_forward_length"),
                Err(wrong_type("llama.feed_forward_length", "u32", "STRING"))
            );
        }),
    );
}

// ---------------------------------------------------------------------------------------
// The truncation oracle.

/// What the reader must answer when the file is cut to `cut` bytes.
#[derive(Debug, Clone, PartialEq)]
enum Want {
    Accept,
    Truncated {
        at: u64,
        needed: u64,
        available: u64,
    },
    StringTooLong {
        at: u64,
        len: u64,
        max: u64,
    },
    CountTooLarge {
        at: u64,
        count: u64,
        max: u64,
    },
    PastEnd {
        at: u64,
        name: String,
    },
}

/// The first recorded check that fails with `cut` bytes. Counts are bounded by the bytes
/// after them: each KV needs at least a length, a type and one byte, each tensor info a
/// length, n_dims, type and offset.
fn want_at(g: &G, cut: u64) -> Want {
    let w = g.w();
    for check in &g.checks {
        match *check {
            Check::Field { at, len } => {
                assert!(cut >= at, "unchecked bytes before {at}");
                if cut < at + len {
                    return Want::Truncated {
                        at,
                        needed: len,
                        available: cut - at,
                    };
                }
            }
            Check::Str { at, body, len } => {
                let max = (cut - body).min(MAX_STRING_LEN);
                if len > max {
                    return Want::StringTooLong { at, len, max };
                }
            }
            Check::Counts {
                at,
                n_tensors,
                n_kv,
            } => {
                let remaining = cut - (at + 2 * w);
                let max = remaining / (w + 4 + 1);
                if n_kv > max {
                    return Want::CountTooLarge {
                        at: at + w,
                        count: n_kv,
                        max,
                    };
                }
                let max = remaining / (w + 16);
                if n_tensors > max {
                    return Want::CountTooLarge {
                        at,
                        count: n_tensors,
                        max,
                    };
                }
            }
            Check::Items {
                at,
                items,
                count,
                min_item,
            } => {
                let max = ((cut - items) / min_item).min(MAX_ARRAY_LEN);
                if count > max {
                    return Want::CountTooLarge { at, count, max };
                }
            }
            Check::Data {
                info_at,
                ref name,
                end,
            } => {
                if end > cut {
                    return Want::PastEnd {
                        at: info_at,
                        name: name.clone(),
                    };
                }
            }
        }
    }
    Want::Accept
}

/// What the reader answered, in the oracle's terms.
fn got(result: &Result<GgufFile, GgufError>) -> Want {
    let (offset, error) = match result {
        Ok(_) => return Want::Accept,
        Err(GgufError::Format { offset, error, .. }) => (*offset, error),
        Err(e) => panic!("not a format error: {e}"),
    };
    match error {
        F::Truncated {
            needed, available, ..
        } => Want::Truncated {
            at: offset,
            needed: *needed,
            available: *available,
        },
        F::StringTooLong { len, max, .. } => Want::StringTooLong {
            at: offset,
            len: *len,
            max: *max,
        },
        F::CountTooLarge { count, max, .. } => Want::CountTooLarge {
            at: offset,
            count: *count,
            max: *max,
        },
        F::Tensor { name, problem } if problem.contains("past the end") => Want::PastEnd {
            at: offset,
            name: name.clone(),
        },
        e => panic!("unexpected error for a cut file: {e:?}"),
    }
}

fn truncations() -> Vec<(&'static str, G)> {
    vec![
        ("little-endian v3", small(3, false)),
        ("big-endian v3", small(3, true)),
        ("v1", small(1, false)),
    ]
}

// ---------------------------------------------------------------------------------------
// The runs (each used by a test of its own and by the limited child process).

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hostile")
}

/// Heap a parse of `len` bytes may use: the values themselves cost a small multiple of the
/// bytes that encode them; nothing may be sized by a count alone.
fn heap_budget(len: usize) -> usize {
    (1 << 16) + 8 * len
}

/// Runs `check` on every case, then fails with the list of the cases that failed.
fn for_each_case(cases: &[Case], check: impl Fn(&Case)) {
    let failed: Vec<&str> = cases
        .iter()
        .filter(|case| std::panic::catch_unwind(AssertUnwindSafe(|| check(case))).is_err())
        .map(|case| case.name.as_str())
        .collect();
    assert!(failed.is_empty(), "failed cases: {failed:?}");
}

fn run_cases() -> usize {
    let cases = cases();
    for_each_case(&cases, |case| {
        let (result, peak) = parse(case.bytes.clone());
        case.check(result, None);
        assert!(
            peak <= heap_budget(case.bytes.len()),
            "{}: parsing {} bytes used {peak} bytes of heap",
            case.name,
            case.bytes.len()
        );
    });
    cases.len()
}

fn run_truncations() -> usize {
    let mut n = 0;
    for (flavour, g) in truncations() {
        let len = g.buf.len() as u64;
        let mut accepted = 0;
        for cut in 0..=len {
            let want = want_at(&g, cut);
            let (result, peak) = parse(g.buf[..cut as usize].to_vec());
            assert_eq!(
                got(&result),
                want,
                "{flavour} file cut to {cut} of {len} bytes"
            );
            assert!(peak <= heap_budget(len as usize), "{flavour} cut {cut}");
            if let Err(e) = &result {
                assert!(e.to_string().len() <= 1024);
            }
            accepted += usize::from(want == Want::Accept);
            n += 1;
        }
        // The file itself, and every cut in the last tensor's trailing padding (26 bytes).
        assert_eq!(accepted, 27, "{flavour}");
        assert!(matches!(want_at(&g, len - 27), Want::PastEnd { .. }));
    }
    n
}

/// Files whose counts each pass the remaining-bytes check but would, if used to reserve
/// memory, claim several times the file's size before anything is read.
fn run_resource_cases() {
    const SIZE: usize = 8 << 20;
    let fill = |mut g: G| {
        g.zeros(SIZE - g.buf.len());
        g.done()
    };
    // Three levels of arrays, each declaring as many arrays as the rest of the file could
    // hold, then an invalid element type.
    let count = (SIZE as u64 - 200) / 12;
    let mut g = G::v3(0, 1);
    g.kv("a", ARRAY)
        .arr(ARRAY, count)
        .arr(ARRAY, count)
        .arr(ARRAY, count);
    let at = g.pos();
    g.arr(u32::MAX, 0);
    let nested = fill(g);
    // As many tensor infos as the file could hold; the first has an empty name.
    let tensors = fill(G::v3((SIZE as u64 - 24) / 24, 0));
    // As many strings as the file could hold length prefixes for; the first is too long.
    let mut g = G::v3(0, 1);
    g.kv("a", ARRAY).arr(STRING, (SIZE as u64 - 100) / 8);
    let string_at = g.pos();
    g.u64(u64::MAX);
    let strings = fill(g);
    // A huge key that is not UTF-8: its message must not be the size of the key.
    let mut g = G::v3(0, 1);
    g.str(&vec![0xFF; SIZE - 100]).u32(U8).u8(0);
    let key = fill(g);

    for (name, bytes, want) in [
        ("nested arrays", nested, (at, "invalid value type")),
        ("tensor table", tensors, (24, "(empty) at tensor 0")),
        ("string array", strings, (string_at, "has length")),
        ("huge bad key", key, (24, "bytes) at entry 0")),
    ] {
        let (result, peak) = parse(bytes);
        let e = result.expect_err(name);
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("at byte {}:", want.0)),
            "{name}: {msg}"
        );
        assert!(msg.contains(want.1), "{name}: {msg}");
        assert!(msg.len() <= 1024, "{name}: {} byte message", msg.len());
        assert!(
            peak <= 1 << 20,
            "{name}: an {SIZE}-byte file made the reader hold {peak} bytes of heap"
        );
    }

    // A valid file that is one array of as many empty strings as it has room for: the parsed
    // array may cost about what the file spends on it (8 bytes an item), not a heap string
    // header (24 bytes) an item.
    let n = (SIZE as u64 - 100) / 8;
    let mut g = G::v3(0, 1);
    g.kv("a", ARRAY).arr(STRING, n);
    for _ in 0..n {
        g.u64(0);
    }
    let empties = g.done();
    let file_len = empties.len();
    let (result, peak) = parse(empties);
    let f = result.expect("an array of empty strings is valid");
    let items = f
        .metadata
        .get_array("a", ggufkit::gguf::ValueType::String)
        .map(|a| a.len());
    assert_eq!(items, Ok(n as usize));
    assert!(
        peak <= 2 * file_len,
        "{n} empty strings in a {file_len}-byte file made the reader hold {peak} bytes of heap"
    );
}

fn run_committed_files() -> usize {
    let cases = cases();
    let mut seen = 0;
    for entry in std::fs::read_dir(corpus_dir()).expect("testdata/hostile") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("gguf") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let case = cases
            .iter()
            .find(|c| c.name == stem)
            .unwrap_or_else(|| panic!("{}: no case generates this file", path.display()));
        case.check(GgufFile::open(&path), Some(&path));
        seen += 1;
    }
    assert_eq!(seen, cases.len(), "files in testdata/hostile vs cases");
    seen
}

// ---------------------------------------------------------------------------------------
// Tests.

#[test]
fn case_names_are_unique_and_grouped() {
    let cases = cases();
    let mut names = HashSet::new();
    for case in &cases {
        assert!(names.insert(case.name.as_str()), "{} twice", case.name);
        let group: u32 = case.name[1..3].parse().expect(&case.name);
        assert!(
            case.name.starts_with('g') && (1..=14).contains(&group),
            "{}",
            case.name
        );
        assert!(case.name[3..].starts_with('-'), "{}", case.name);
        assert!(
            case.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{}",
            case.name
        );
    }
    // Every group of §5.6 that concerns the GGUF reader has cases.
    for group in 1..=14 {
        let prefix = format!("g{group:02}-");
        assert!(
            cases.iter().any(|c| c.name.starts_with(&prefix)),
            "group {group}"
        );
    }
}

#[test]
fn every_case_in_memory() {
    run_cases();
}

#[test]
fn small_file_builder_matches_writer() {
    assert!(small(3, false).buf == small_via_writer());
}

#[test]
fn truncation_at_every_byte() {
    run_truncations();
}

#[test]
fn untrusted_counts_do_not_size_allocations() {
    run_resource_cases();
}

#[test]
fn committed_corpus_matches_generator() {
    let cases = cases();
    let files: Vec<(PathBuf, Vec<u8>)> = cases
        .iter()
        .map(|c| (format!("{}.gguf", c.name).into(), c.bytes.clone()))
        .collect();
    let total = support::corpus::check_committed(&corpus_dir(), &files, |p| {
        p.extension().is_some_and(|e| e == "gguf")
    });
    eprintln!("{} committed cases, {total} bytes", cases.len());
}

#[test]
fn every_committed_file_opens_cleanly() {
    run_committed_files();
}

const INNER: &str = "corpus_inner";
const INNER_ENV: &str = "GGUFKIT_HOSTILE_INNER";
/// The whole run fits in about 60 MB of address space; 256 MB leaves room for other builds
/// (coverage, sanitizers) and is still a fraction of what a count-sized reservation takes.
const MEMORY_LIMIT_KIB: u64 = 256_000;
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// Everything again, in a child process whose address space is limited to 256 MB, killed
/// after 60 s: an attempt to allocate by a hostile count aborts it, a loop on one times out.
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
    let cases = run_cases();
    let cuts = run_truncations();
    run_resource_cases();
    let files = run_committed_files();
    println!("{cases} cases, {cuts} truncations, {files} committed files");
}
