//! How `testdata/` stores the fixtures: within its size budget, no tensor stored twice
//! (`conformance/share_tensors.py` cuts the copies out), and every cut file rebuilt exactly.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ggufkit_testsupport::paths::{fixture_files, testdata, Content};
use sha2::{Digest, Sha256};

/// The repository's budget for `testdata/` (the developers' guide: about 150 MB).
const BUDGET: u64 = 150_000_000;
/// Tensors this big or bigger must be stored once (`MIN_SHARED` of share_tensors.py).
const MIN_SHARED: usize = 64 * 1024;

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn testdata_stays_within_its_budget() {
    let mut files = Vec::new();
    files_under(&testdata(""), &mut files);
    let total: u64 = files
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(
        total <= BUDGET,
        "testdata holds {total} bytes, over its budget of {BUDGET}: share tensors \
         (conformance/share_tensors.py) and tokenizers (shared-files.txt), or shrink fixtures"
    );
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

#[test]
fn no_fixture_tensor_is_stored_twice() {
    let mut seen: HashMap<[u8; 32], PathBuf> = HashMap::new();
    let mut twice = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(testdata("hf"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let mut stored: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
            .collect();
        stored.sort();
        for path in stored {
            let bytes = std::fs::read(&path).unwrap();
            for (at, len) in tensor_regions(&bytes) {
                if len < MIN_SHARED {
                    continue;
                }
                let hash: [u8; 32] = Sha256::digest(&bytes[at..at + len]).into();
                if let Some(first) = seen.get(&hash) {
                    if first != &path {
                        twice.push(format!("{} and {}", first.display(), path.display()));
                    }
                } else {
                    seen.insert(hash, path.clone());
                }
            }
        }
    }
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
