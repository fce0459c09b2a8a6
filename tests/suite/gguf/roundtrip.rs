//! Reading a valid GGUF and writing it back unchanged reproduces it byte for byte, and our
//! manifest of every golden file equals llama.cpp's.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::path::Path;

use ggufkit::gguf::GgufFile;
use ggufkit::ir::Model;
use ggufkit::manifest::{diff_manifests, manifest};
use ggufkit::write::{write_model, WriteOptions};
use support::*;

fn roundtrip(path: &Path, out_dir: &Path) {
    let file = GgufFile::open(path).unwrap_or_else(|e| panic!("{e}"));
    let model = Model::from_gguf(&file);
    let out = out_dir.join(path.file_name().unwrap());
    let opts = WriteOptions {
        inputs: vec![path.to_path_buf()],
        window_bytes: 1 << 20,
        ..Default::default()
    };
    let layout = write_model(&model, &out, &opts).unwrap_or_else(|e| panic!("{e}"));
    let a = std::fs::read(path).unwrap();
    let b = std::fs::read(&out).unwrap();
    assert_eq!(layout.file_size, b.len() as u64);
    assert_eq!(layout.data_offset(), file.data_offset, "{}", path.display());
    if a != b {
        let i = a
            .iter()
            .zip(&b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        panic!(
            "{}: round trip differs at byte {i} (sizes {} vs {})",
            path.display(),
            a.len(),
            b.len()
        );
    }
    std::fs::remove_file(out).unwrap();
}

#[test]
fn roundtrip_testdata_files() {
    let dir = scratch("rt-testdata");
    let files = conv::core_golden_files();
    assert!(files.len() >= 4, "core golden files missing");
    for (f, _) in files {
        roundtrip(&f, &dir);
    }
}

/// Every whole GGUF file of the golden set (made with our tools and checked against
/// llama.cpp's hash by `golden_gguf`) and the imatrix inputs, with their manifests.
fn golden_files() -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
    let golden = golden_dir("golden files");
    let mut v: Vec<_> = conv::golden_files()
        .into_iter()
        .map(|(fx, variant)| {
            (
                conv::golden_gguf(fx, variant),
                golden.join(fx).join(format!("{variant}.json")),
            )
        })
        .collect();
    for fx in conv::FIXTURES {
        let im = golden.join(fx).join("files/imatrix.gguf");
        if im.is_file() {
            v.push((im, golden.join(fx).join("imatrix-gguf.json")));
        }
    }
    v
}

#[test]
fn roundtrip_every_golden_file() {
    let dir = scratch("rt-golden");
    let files = golden_files();
    assert!(
        files.len() >= 15,
        "expected the golden whole files, found {}",
        files.len()
    );
    for (f, _) in &files {
        roundtrip(f, &dir);
    }
    record(
        "roundtrip-golden",
        files.len(),
        "golden GGUF files read and written back byte for byte",
        &[],
    );
}

fn check_manifest(file: &Path, golden_manifest: &Path) {
    let parsed = GgufFile::open(file).unwrap();
    let ours = manifest(&parsed, file, None);
    let golden: serde_json::Value =
        serde_json::from_slice(&std::fs::read(golden_manifest).unwrap()).unwrap();
    let d = diff_manifests(&ours, &golden);
    assert!(
        d.is_empty(),
        "{}: manifest differs:\n{}",
        file.display(),
        d.join("\n")
    );
}

#[test]
fn manifests_of_testdata_files_equal_golden() {
    for (f, m) in conv::core_golden_files() {
        assert!(m.exists(), "no manifest for {}", f.display());
        check_manifest(&f, &m);
    }
}

#[test]
fn manifests_of_every_golden_file_equal_golden() {
    let files = golden_files();
    for (f, m) in &files {
        check_manifest(f, m);
    }
    record(
        "manifests-golden",
        files.len(),
        "manifests of golden GGUF files equal llama.cpp's",
        &[],
    );
}

#[test]
fn manifest_detects_a_changed_byte() {
    let src = conv::golden_gguf("llama-spm", "quant-Q4_0");
    let mut bytes = std::fs::read(&src).unwrap();
    let n = bytes.len();
    bytes[n - 100] ^= 1;
    let parsed = GgufFile::parse(ggufkit::mapped::FileBytes::from_vec(bytes)).unwrap();
    let ours = manifest(&parsed, &src, None);
    let golden: serde_json::Value = serde_json::from_slice(
        &std::fs::read(testdata("golden/llama-spm/quant-Q4_0.json")).unwrap(),
    )
    .unwrap();
    let d = diff_manifests(&ours, &golden);
    assert_eq!(d.len(), 2, "{d:?}"); // the file hash and one tensor
    assert!(d[1].starts_with("tensors[20]"), "{d:?}");
}
