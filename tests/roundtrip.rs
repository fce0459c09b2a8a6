//! Reading a valid GGUF and writing it back unchanged reproduces it byte for byte, and our
//! manifest of every golden file equals llama.cpp's.

mod support;

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
    let files = gguf_files_under(&testdata("gguf"));
    assert!(files.len() >= 4, "testdata/gguf is missing files");
    for f in files {
        roundtrip(&f, &dir);
    }
}

#[test]
fn roundtrip_every_golden_file() {
    let Some(golden) = golden_dir("roundtrip_every_golden_file") else {
        return;
    };
    let dir = scratch("rt-golden");
    let files = gguf_files_under(&golden);
    assert!(
        files.len() >= 15,
        "expected the golden whole files, found {}",
        files.len()
    );
    for f in files {
        roundtrip(&f, &dir);
    }
}

fn golden_manifest_for(golden: &Path, file: &Path) -> std::path::PathBuf {
    // <fixture>/files/<fixture>-<variant>.gguf ↔ <fixture>/<variant>.json;
    // imatrix.gguf ↔ imatrix-gguf.json
    let fixture_dir = file.parent().unwrap().parent().unwrap();
    let fixture = fixture_dir.file_name().unwrap().to_str().unwrap();
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let variant = if stem == "imatrix" {
        "imatrix-gguf".to_string()
    } else {
        stem.strip_prefix(&format!("{fixture}-"))
            .unwrap()
            .to_string()
    };
    let _ = golden;
    fixture_dir.join(format!("{variant}.json"))
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
    for f in gguf_files_under(&testdata("gguf")) {
        let m = f.with_file_name(format!(
            "{}.manifest.json",
            f.file_stem().unwrap().to_str().unwrap()
        ));
        assert!(m.exists(), "no manifest for {}", f.display());
        check_manifest(&f, &m);
    }
}

#[test]
fn manifests_of_every_golden_file_equal_golden() {
    let Some(golden) = golden_dir("manifests_of_every_golden_file_equal_golden") else {
        return;
    };
    let files = gguf_files_under(&golden);
    for f in &files {
        check_manifest(f, &golden_manifest_for(&golden, f));
    }
}

#[test]
fn manifest_detects_a_changed_byte() {
    let src = testdata("gguf/llama-spm-quant-Q4_0.gguf");
    let mut bytes = std::fs::read(&src).unwrap();
    let n = bytes.len();
    bytes[n - 100] ^= 1;
    let parsed = GgufFile::parse(ggufkit::mapped::FileBytes::from_vec(bytes)).unwrap();
    let ours = manifest(&parsed, &src, None);
    let golden: serde_json::Value = serde_json::from_slice(
        &std::fs::read(testdata("gguf/llama-spm-quant-Q4_0.manifest.json")).unwrap(),
    )
    .unwrap();
    let d = diff_manifests(&ours, &golden);
    assert_eq!(d.len(), 2, "{d:?}"); // the file hash and one tensor
    assert!(d[1].starts_with("tensors[20]"), "{d:?}");
}
