//! How `testdata/` stores the fixtures: within its size budget, no tensor stored twice
//! (`conformance/share_tensors.py` cuts the copies out of safetensors files and PyTorch
//! checkpoints), and every cut file rebuilt exactly.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ggufkit_converters::torch::zip::{crc32, read_members};
use ggufkit_testsupport::paths::{fixture_files, testdata, Content};
use sha2::{Digest, Sha256};

/// The repository's budget for `testdata/` (the developers' guide: about 150 MB), as `du -sm`
/// counts it: the disk blocks of its files and directories, in MiB.
const BUDGET: u64 = 150 << 20;
/// Tensors this big or bigger must be stored once (`MIN_SHARED` of share_tensors.py).
const MIN_SHARED: usize = 64 * 1024;

/// Every file and directory below `dir` (directories too: each takes a block on disk).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        }
        out.push(p);
    }
}

/// The bytes `path` takes on disk (its 512-byte blocks, as `du` counts them).
fn on_disk(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).unwrap().blocks() * 512
}

#[test]
fn testdata_stays_within_its_budget() {
    let mut files = Vec::new();
    files_under(&testdata(""), &mut files);
    let total: u64 = on_disk(&testdata("")) + files.iter().map(|p| on_disk(p)).sum::<u64>();
    assert!(
        total <= BUDGET,
        "testdata holds {total} bytes, over its budget of {BUDGET}: share tensors \
         (conformance/share_tensors.py) and tokenizers (shared-files.txt), or shrink fixtures"
    );
}

/// Text files below this size belong in their directory's pack (`MAX_PACKED` of
/// golden_pack.py).
const MAX_PACKED: u64 = 64 * 1024;

#[test]
fn small_golden_files_are_packed() {
    // Each small file would take a whole disk block; conformance/golden_pack.py stores them
    // as one pack per top-level directory of testdata/golden, except command inputs.
    let golden = ggufkit_testsupport::root().join("testdata/golden");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&golden).unwrap().flatten() {
        if e.path().is_dir() {
            files_under(&e.path(), &mut files);
        }
    }
    let loose: Vec<String> = files
        .iter()
        .filter(|p| p.is_file() && std::fs::metadata(p).unwrap().len() < MAX_PACKED)
        // The reference commands' inputs (calibration text, imatrix files) stay files.
        .filter(|p| {
            !p.strip_prefix(&golden)
                .unwrap()
                .iter()
                .any(|c| c == "files")
        })
        .filter(|p| {
            let data = std::fs::read(p).unwrap();
            !data.contains(&0) && std::str::from_utf8(&data).is_ok()
        })
        .map(|p| p.strip_prefix(&golden).unwrap().display().to_string())
        .collect();
    assert!(
        loose.is_empty(),
        "{} small golden files are stored loose (run conformance/golden_pack.py): {:?}",
        loose.len(),
        &loose[..loose.len().min(5)]
    );
    let packs = std::fs::read_dir(&golden)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
        .count();
    assert!(packs > 100, "only {packs} packs in testdata/golden");
}

/// (offset, length) of each tensor's data in a safetensors file.
fn tensor_regions(bytes: &[u8]) -> Vec<(usize, usize)> {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let mut out = Vec::new();
    for (name, info) in header.as_object().unwrap() {
        if name != "__metadata__" {
            let at = &info["data_offsets"];
            let (b, e) = (at[0].as_u64().unwrap(), at[1].as_u64().unwrap());
            out.push((8 + n + b as usize, (e - b) as usize));
        }
    }
    out
}

/// The tensors' data regions of a weight file: each tensor of a safetensors file, each
/// stored storage (`*/data/<key>`) of a PyTorch zip checkpoint.
fn weight_regions(name: &Path, bytes: &[u8]) -> Vec<(usize, usize)> {
    if name.extension().is_some_and(|x| x == "bin") {
        read_members(bytes)
            .unwrap()
            .iter()
            .filter(|m| m.method == 0 && m.name.contains("/data/"))
            .map(|m| (m.data_offset as usize, m.size as usize))
            .collect()
    } else {
        tensor_regions(bytes)
    }
}

/// For each file a splice line of `dir`'s shared-files.txt rebuilds, the offsets at which
/// it inserts bytes stored elsewhere.
fn spliced_offsets(dir: &Path) -> HashMap<PathBuf, Vec<usize>> {
    let text = std::fs::read_to_string(dir.join("shared-files.txt")).unwrap_or_default();
    let mut out = HashMap::new();
    for line in text.lines() {
        let Some((name, rest)) = line.split_once('=') else {
            continue;
        };
        let ats = rest
            .split('|')
            .skip(1)
            .map(|seg| seg.split_whitespace().next().unwrap().parse().unwrap())
            .collect();
        out.insert(PathBuf::from(name.trim()), ats);
    }
    out
}

#[test]
fn no_fixture_tensor_is_stored_twice() {
    // Every tensor byte stored in a fixture directory counts: complete safetensors files and
    // PyTorch checkpoints, and what a hollow file keeps (a rebuilt file's tensors minus the
    // ones its splice line inserts).
    let mut seen: HashMap<[u8; 32], PathBuf> = HashMap::new();
    let mut twice = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(testdata("hf"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut weights = 0;
    for dir in dirs {
        let spliced = spliced_offsets(&dir);
        let mut files = fixture_files(&dir);
        files.sort_by(|a, b| a.0.cmp(&b.0));
        for (rel, content) in files {
            let weight = rel
                .extension()
                .is_some_and(|x| x == "safetensors" || x == "bin");
            // A plain shared-files.txt line: the file is stored in another fixture.
            let elsewhere = matches!(&content, Content::Copy(p) if p.parent() != Some(&dir));
            if !weight || elsewhere {
                continue;
            }
            weights += 1;
            let label = dir.join(&rel);
            let bytes = content.bytes();
            let cut = spliced.get(&rel).cloned().unwrap_or_default();
            for (at, len) in weight_regions(&rel, &bytes) {
                if len < MIN_SHARED || cut.contains(&at) {
                    continue;
                }
                let hash: [u8; 32] = Sha256::digest(&bytes[at..at + len]).into();
                match seen.get(&hash) {
                    Some(first) if first != &label => {
                        twice.push(format!("{} and {}", first.display(), label.display()))
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(hash, label.clone());
                    }
                }
            }
        }
    }
    assert!(weights >= 100, "only {weights} weight files");
    assert!(
        twice.is_empty(),
        "run conformance/share_tensors.py: the same tensor is stored in {}",
        twice.join(", ")
    );
}

#[test]
fn hollow_files_rebuild_to_valid_safetensors() {
    let mut rebuilt = 0;
    for e in std::fs::read_dir(testdata("hf")).unwrap().flatten() {
        if !e.path().join("shared-files.txt").is_file() {
            continue;
        }
        for (rel, content) in fixture_files(&e.path()) {
            if let Content::Spliced(bytes) = content {
                if rel.extension().is_some_and(|x| x == "bin") {
                    // A PyTorch checkpoint: a ZIP archive whose stored members check out
                    // against their CRC-32.
                    for m in read_members(&bytes).unwrap() {
                        assert_eq!(m.method, 0, "{}: {}", e.path().display(), m.name);
                        assert_eq!(crc32(m.data(&bytes)), m.crc32, "{}", m.name);
                    }
                    rebuilt += 1;
                    continue;
                }
                if rel.extension().is_some_and(|x| x == "json") {
                    // A tokenizer variant spliced from its base: still one JSON document.
                    serde_json::from_slice::<serde_json::Value>(&bytes).unwrap_or_else(|err| {
                        panic!("{}: {}: {err}", e.path().display(), rel.display())
                    });
                    rebuilt += 1;
                    continue;
                }
                // Every tensor's data lies inside the file and the data section ends it.
                let regions = tensor_regions(&bytes);
                let end = regions.iter().map(|(a, l)| a + l).max().unwrap_or(0);
                assert_eq!(
                    end,
                    bytes.len(),
                    "{}: {}",
                    e.path().display(),
                    rel.display()
                );
                rebuilt += 1;
            }
        }
    }
    assert!(rebuilt >= 30, "only {rebuilt} hollow files");
}
