//! Hostile PyTorch checkpoints (`testdata/hostile-torch/`, made by
//! `conformance/make_torch_fixtures.py` with Python's own pickle): pickles that try to run
//! code (`os.system`, `builtins.eval`/`exec`, `subprocess.Popen`, `__reduce__` payloads,
//! object-construction opcodes), bounded-memory attacks (deep nesting, huge memo indices and
//! lengths) and broken archives (truncated, overlapping members, sizes and offsets past the
//! end, compressed members, a legacy pre-zip file). Each is refused with its own typed error
//! naming the file, and none has a side effect: every code payload would create a marker file
//! under /tmp, which must not exist afterwards. The corpus also runs under a 256 MB
//! address-space limit.

use std::path::{Path, PathBuf};

use ggufkit::mapped::FileBytes;
use ggufkit_converters::hf::{read_hf_dir, HfOptions};
use ggufkit_converters::torch::checkpoint::read_checkpoint;
use ggufkit_converters::torch::pickle::PickleError;
use ggufkit_converters::torch::{TorchError, TorchErrorKind};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::{copy_tree, fixture, limits, scratch, testdata};

const INNER: &str = "corpus_inner";
const INNER_ENV: &str = "GGUFKIT_TORCH_HOSTILE_INNER";
const MEMORY_LIMIT_KIB: u64 = 256 * 1024;
const TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// What each case must give.
enum Expect {
    /// A global outside the allow-list, by module and name.
    Forbidden(&'static str, &'static str),
    /// An opcode outside the subset, by name.
    Opcode(&'static str),
    /// A capped limit.
    Limit(&'static str),
    /// A malformed pickle, with this in the message.
    Pickle(&'static str),
    /// A zip-level error, with this in the message.
    Zip(&'static str),
    /// An archive-level error, with this in the message.
    Archive(&'static str),
    /// A tensor that does not fit its storage, with this in the message.
    Tensor(&'static str),
    /// A legacy (pre-zip) checkpoint.
    Legacy,
    /// Not a checkpoint at all.
    NotACheckpoint,
}

const CASES: &[(&str, Expect)] = &[
    ("os-system", Expect::Forbidden("posix", "system")),
    ("builtins-eval", Expect::Forbidden("__builtin__", "eval")),
    (
        "builtins-exec-proto4",
        Expect::Forbidden("builtins", "exec"),
    ),
    ("subprocess-popen", Expect::Forbidden("subprocess", "Popen")),
    ("reduce-top-level", Expect::Forbidden("posix", "system")),
    (
        "rebuild-swapped-for-system",
        Expect::Forbidden("posix", "system"),
    ),
    (
        "storage-class-reduce",
        Expect::Pickle("REDUCE calls a storage class"),
    ),
    ("newobj", Expect::Opcode("NEWOBJ")),
    ("inst", Expect::Opcode("INST")),
    (
        "value-not-a-tensor",
        Expect::Pickle("'w' is a float, not a tensor"),
    ),
    (
        "deep-tuples",
        Expect::Pickle("holds a tuple, not a state dict"),
    ),
    ("deep-marks", Expect::Limit("open marks")),
    (
        "huge-memo-index",
        Expect::Pickle("memo index 4294967294 was never stored"),
    ),
    ("huge-string-length", Expect::Pickle("truncated pickle")),
    (
        "memo-laughs",
        Expect::Pickle("holds a tuple, not a state dict"),
    ),
    ("no-stop", Expect::Pickle("no STOP")),
    (
        "tensor-past-storage",
        Expect::Tensor("run past its storage"),
    ),
    (
        "offset-past-storage",
        Expect::Tensor("run past its storage"),
    ),
    ("storage-size-lies", Expect::Tensor("the pickle declares")),
    (
        "storage-missing",
        Expect::Tensor("has no member 'archive/data/9'"),
    ),
    ("truncated-half", Expect::Zip("no end of central directory")),
    (
        "truncated-no-eocd",
        Expect::Zip("no end of central directory"),
    ),
    (
        "member-size-past-end",
        Expect::Zip("run past the central directory"),
    ),
    (
        "member-offset-past-end",
        Expect::Zip("past the end of the file"),
    ),
    ("overlapping-members", Expect::Zip("overlap")),
    ("duplicate-member", Expect::Zip("appears twice")),
    ("compressed-member", Expect::Archive("is compressed")),
    ("non-contiguous", Expect::Tensor("not contiguous")),
    ("big-endian", Expect::Archive("only little-endian")),
    ("legacy-format", Expect::Legacy),
    ("not-a-checkpoint", Expect::NotACheckpoint),
];

fn corpus() -> PathBuf {
    testdata("hostile-torch")
}

/// The marker files a payload would have created (`<MARKER>-<tag>`).
fn markers() -> Vec<PathBuf> {
    let marker = std::fs::read_to_string(corpus().join("MARKER")).unwrap();
    let marker = Path::new(marker.trim());
    let (dir, stem) = (
        marker.parent().unwrap(),
        marker.file_name().unwrap().to_string_lossy().into_owned(),
    );
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&stem))
        .map(|e| e.path())
        .collect()
}

fn check(name: &str, expect: &Expect, e: ConvertError, path: &Path) {
    let shown = e.to_string();
    let e: TorchError = match e {
        ConvertError::Torch(e) => *e,
        other => panic!("{name}: not a torch error: {other}"),
    };
    assert_eq!(e.path, path, "{name}: the error names another file");
    assert!(
        shown.contains(&path.display().to_string()),
        "{name}: the message does not name the file: {shown}"
    );
    let ok = match (expect, &e.kind) {
        (
            Expect::Forbidden(m, n),
            TorchErrorKind::Pickle(PickleError::ForbiddenGlobal { module, name, .. }),
        ) => module == m && name == n,
        (
            Expect::Opcode(op),
            TorchErrorKind::Pickle(PickleError::UnsupportedOpcode { name, .. }),
        ) => name == op,
        (Expect::Limit(what), TorchErrorKind::Pickle(PickleError::Limit { what: w, .. })) => {
            w == what
        }
        (Expect::Pickle(s), TorchErrorKind::Pickle(PickleError::Malformed { .. }))
        | (Expect::Zip(s), TorchErrorKind::Zip(_))
        | (Expect::Archive(s), TorchErrorKind::Archive(_))
        | (Expect::Tensor(s), TorchErrorKind::Tensor { .. }) => shown.contains(s),
        (Expect::Legacy, TorchErrorKind::Legacy) => true,
        (Expect::NotACheckpoint, TorchErrorKind::NotACheckpoint) => true,
        _ => false,
    };
    assert!(ok, "{name}: unexpected error: {shown}");
}

/// Runs every case; returns how many.
fn run_corpus() -> usize {
    for m in markers() {
        let _ = std::fs::remove_file(m);
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".bin").map(str::to_string))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CASES.iter().map(|(n, _)| n.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "the corpus and the case list differ");
    for (name, expect) in CASES {
        let path = corpus().join(format!("{name}.bin"));
        let file = FileBytes::map(&path).unwrap();
        let e = read_checkpoint(&path, &file)
            .err()
            .unwrap_or_else(|| panic!("{name}: accepted"));
        check(name, expect, e, &path);
    }
    assert_eq!(markers(), Vec::<PathBuf>::new(), "a payload ran");
    CASES.len()
}

/// A torch-style archive of stored members (`archive/<name>`), built here.
fn stored_zip(members: &[(&str, &[u8])]) -> Vec<u8> {
    use ggufkit_converters::torch::zip::crc32;
    let (mut out, mut central) = (Vec::new(), Vec::new());
    for (name, data) in members {
        let name = format!("archive/{name}");
        let header = |sig: u32, central_entry: bool, at: usize| {
            let mut h = sig.to_le_bytes().to_vec();
            if central_entry {
                h.extend_from_slice(&20u16.to_le_bytes());
            }
            h.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            h.extend_from_slice(&crc32(data).to_le_bytes());
            h.extend_from_slice(&(data.len() as u32).to_le_bytes());
            h.extend_from_slice(&(data.len() as u32).to_le_bytes());
            h.extend_from_slice(&(name.len() as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            if central_entry {
                h.extend_from_slice(&[0; 10]); // comment, disk, attributes
                h.extend_from_slice(&(at as u32).to_le_bytes());
            }
            h.extend_from_slice(name.as_bytes());
            h
        };
        central.extend(header(0x0201_4b50, true, out.len()));
        out.extend(header(0x0403_4b50, false, 0));
        out.extend_from_slice(data);
    }
    let (cd_at, n) = (out.len() as u32, members.len() as u16);
    let cd_len = central.len() as u32;
    out.extend(central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&cd_len.to_le_bytes());
    out.extend_from_slice(&cd_at.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// Pickles that hit each cap of the unpickler (too big to commit, so made here): refused
/// with the limit named, within the memory limit of `corpus_under_limits`.
fn run_resource_cases() -> usize {
    use ggufkit_converters::torch::pickle::{MAX_MEMO, MAX_OBJECTS, MAX_STACK};
    let proto = b"\x80\x02".to_vec();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "objects",
            [proto.clone(), b"}0".repeat(MAX_OBJECTS), b"}.".to_vec()].concat(),
            "objects",
        ),
        (
            "stack",
            [proto.clone(), b"N".repeat(MAX_STACK + 1)].concat(),
            "values on the stack",
        ),
        (
            "memo",
            [proto.clone(), b"N".to_vec(), vec![0x94; MAX_MEMO + 1]].concat(),
            "memo entries",
        ),
        (
            "marks",
            [proto.clone(), b"(".repeat(1 << 20)].concat(),
            "open marks",
        ),
    ];
    let dir = scratch("torch-resources");
    for (name, pkl, what) in &cases {
        let path = dir.join(format!("{name}.bin"));
        let zip = stored_zip(&[("data.pkl", pkl), ("byteorder", b"little")]);
        std::fs::write(&path, zip).unwrap();
        let file = FileBytes::map(&path).unwrap();
        let e = read_checkpoint(&path, &file)
            .err()
            .unwrap_or_else(|| panic!("{name}: accepted"));
        check(name, &Expect::Limit(what), e, &path);
    }
    // A 1 MiB storage key named by 3,000 entries (a copy of the key per entry was 3 GB):
    // read in bounded memory, then refused because no archive member can have that name.
    let key = "k".repeat(1 << 20);
    let mut pkl = b"\x80\x02}ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX".to_vec();
    pkl.extend((key.len() as u32).to_le_bytes());
    pkl.extend(key.as_bytes());
    pkl.extend(b"X\x03\x00\x00\x00cpuK\x01tQK\x00K\x01\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtRq\x000");
    for i in 0..3000 {
        let name = format!("w{i:05}");
        pkl.extend([0x8c, name.len() as u8]);
        pkl.extend(name.as_bytes());
        pkl.extend(b"h\x00s");
    }
    pkl.push(b'.');
    let path = dir.join("long-key.bin");
    std::fs::write(
        &path,
        stored_zip(&[("data.pkl", &pkl), ("byteorder", b"little")]),
    )
    .unwrap();
    let Err(e) = read_checkpoint(&path, &FileBytes::map(&path).unwrap()) else {
        panic!("long key: accepted");
    };
    check("long-key", &Expect::Tensor("has no member"), e, &path);
    // The same archive with a valid one-tensor pickle is read: the builder is sound.
    let pkl = b"\x80\x02}X\x01\x00\x00\x00wctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00\
storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQK\x01K\x02K\x01\x86K\x01K\x01\x86\
\x89ccollections\nOrderedDict\n)RtRs.";
    let data: Vec<u8> = [1f32, 2., 3., 4.]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let path = dir.join("valid.bin");
    std::fs::write(&path, stored_zip(&[("data.pkl", pkl), ("data/0", &data)])).unwrap();
    let t = read_checkpoint(&path, &FileBytes::map(&path).unwrap()).unwrap();
    assert_eq!(t.len(), 1);
    assert_eq!(
        (t[0].name.as_str(), t[0].shape.as_slice()),
        ("w", &[2u64, 1][..])
    );
    assert_eq!(
        &*t[0].bytes().unwrap(),
        &data[4..12],
        "storage offset 1, two elements"
    );
    let _ = std::fs::remove_dir_all(&dir);
    cases.len()
}

#[test]
fn every_cap_of_the_unpickler_holds() {
    run_resource_cases();
}

#[test]
fn every_hostile_checkpoint_is_refused_without_side_effects() {
    let n = run_corpus();
    eprintln!("{n} hostile checkpoints refused");
}

#[test]
fn a_hostile_checkpoint_in_a_model_directory_is_refused() {
    // Through the HF reader: the directory's pytorch_model.bin is the os.system payload.
    let work = scratch("torch-hostile-dir");
    let dir = work.join("evil");
    copy_tree(&fixture("llama-spm-bin"), &dir);
    let bin = dir.join("pytorch_model.bin");
    std::fs::copy(corpus().join("os-system.bin"), &bin).unwrap();
    let e = read_hf_dir(&dir, &HfOptions::default())
        .err()
        .expect("refused");
    check("os-system (dir)", &CASES[0].1, e, &bin);
    assert_eq!(markers(), Vec::<PathBuf>::new(), "a payload ran");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn corpus_under_limits() {
    limits::run_under_limits(
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
    limits::assert_memory_limited(INNER_ENV);
    run_corpus();
    run_resource_cases();
}
