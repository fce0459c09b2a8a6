//! PyTorch checkpoints (`pytorch_model*.bin`) convert to the reference's bytes.
//!
//! `testdata/hf/<source>-bin/` hold the weights of a safetensors fixture saved with
//! `torch.save` (llama-spm as one file, qwen2 as two shards with
//! `pytorch_model.bin.index.json`); `testdata/golden/torch/cases.json` holds the sha256 of
//! what the pinned `convert_hf_to_gguf.py` writes from them for every outtype, from a
//! directory named like the `.bin` fixture and from one named like its source, and of what it
//! writes from the source's safetensors (all made by `conformance/make_torch_fixtures.py`).

use std::path::{Path, PathBuf};

use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_converters::torch::{TorchError, TorchErrorKind};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::golden::{read_json, sha256_file};
use ggufkit_testsupport::write_gguf;
use ggufkit_testsupport::{copy_tree, fixture, record, scratch, testdata};

/// Converts `dir` at `outtype` and returns the output's sha256.
fn convert_sha(dir: &Path, outtype: &str, scratch: &Path) -> String {
    let opts = HfOptions {
        outtype: OutType::parse(outtype).unwrap(),
        ..HfOptions::default()
    };
    let conv = read_hf_dir(dir, &opts)
        .unwrap_or_else(|e| panic!("{}: conversion failed: {e}", dir.display()));
    let out = scratch.join(format!("{outtype}.gguf"));
    write_gguf(&conv.model, &out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let sha = sha256_file(&out);
    std::fs::remove_file(&out).unwrap();
    sha
}

/// `from` copied into `<scratch>/<name>` (the default `general.name` is the directory's).
fn renamed(from: &Path, scratch: &Path, name: &str) -> PathBuf {
    let dst = scratch.join(name);
    let _ = std::fs::remove_dir_all(&dst);
    copy_tree(from, &dst);
    dst
}

fn cases() -> Vec<(String, serde_json::Value)> {
    let cases = read_json(&testdata("golden/torch/cases.json"));
    let cases = cases.as_object().expect("cases.json is an object");
    assert!(!cases.is_empty());
    cases.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

#[test]
fn bin_checkpoints_equal_the_reference() {
    let work = scratch("torch-golden");
    let mut checked = 0;
    let mut same_as_safetensors = 0;
    for (name, case) in cases() {
        let field = |k: &str| case[k].as_str().unwrap_or_else(|| panic!("{name}: no {k}"));
        let (fx, source, outtype) = (field("fixture"), field("source"), field("outtype"));
        let bin = fixture(fx);
        assert_eq!(
            convert_sha(&bin, outtype, &work),
            field("sha256"),
            "{name}: differs from the reference"
        );
        // Named like its source, the .bin fixture gives what the reference gives then.
        let as_source = renamed(&bin, &work.join("renamed"), source);
        let sha = convert_sha(&as_source, outtype, &work);
        assert_eq!(sha, field("renamed_sha256"), "{name} (renamed): differs");
        if field("renamed_sha256") == field("safetensors_sha256") {
            // The reference gives the same bytes from both routes; so must we.
            assert_eq!(
                convert_sha(&fixture(source), outtype, &work),
                sha,
                "{name}: the safetensors route differs from the .bin route"
            );
            same_as_safetensors += 1;
        }
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        same_as_safetensors > 0,
        "no case where the reference gives the same bytes from .bin and safetensors"
    );
    record(
        "torch_golden",
        checked,
        "PyTorch checkpoint conversions matched (sha256)",
        &[],
    );
}

#[test]
fn safetensors_take_precedence_over_bin() {
    // The reference reads .bin parts only without safetensors: a broken pytorch_model.bin
    // beside llama-spm's safetensors changes nothing.
    let work = scratch("torch-precedence");
    let dir = renamed(&fixture("llama-spm"), &work, "llama-spm");
    std::fs::write(dir.join("pytorch_model.bin"), b"not a checkpoint").unwrap();
    let golden = cases()
        .into_iter()
        .find(|(_, c)| c["source"] == "llama-spm" && c["outtype"] == "f16")
        .expect("a llama-spm f16 case")
        .1;
    assert_eq!(
        convert_sha(&dir, "f16", &work),
        golden["safetensors_sha256"].as_str().unwrap()
    );
    let _ = std::fs::remove_dir_all(&work);
}

fn torch_error(e: ConvertError) -> TorchError {
    match e {
        ConvertError::Torch(e) => *e,
        other => panic!("not a torch error: {other}"),
    }
}

#[test]
fn legacy_and_missing_shards_are_refused_by_name() {
    let work = scratch("torch-refused");
    let opts = HfOptions {
        outtype: OutType::F16,
        ..HfOptions::default()
    };
    // A pre-1.6 checkpoint: refused, naming the file.
    let dir = renamed(&fixture("llama-spm-bin"), &work, "legacy");
    std::fs::copy(
        testdata("hostile-torch/legacy-format.bin"),
        dir.join("pytorch_model.bin"),
    )
    .unwrap();
    let e = torch_error(read_hf_dir(&dir, &opts).err().expect("refused"));
    assert!(matches!(e.kind, TorchErrorKind::Legacy), "{e}");
    assert_eq!(e.path, dir.join("pytorch_model.bin"));
    assert!(e.to_string().contains("pytorch_model.bin: a legacy"), "{e}");

    // A shard the index names is missing.
    let dir = renamed(&fixture("qwen2-bin"), &work, "missing");
    std::fs::remove_file(dir.join("pytorch_model-00002-of-00002.bin")).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(
        e.contains("pytorch_model-00002-of-00002.bin")
            && e.contains("pytorch_model.bin.index.json"),
        "{e}"
    );

    // No weights at all.
    std::fs::remove_file(dir.join("pytorch_model-00001-of-00002.bin")).unwrap();
    std::fs::remove_file(dir.join("pytorch_model.bin.index.json")).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused");
    assert!(matches!(e, ConvertError::NoWeights { .. }), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn bin_tensors_are_the_safetensors_tensors() {
    // Same names, order, dtypes, shapes and bytes through both readers.
    use ggufkit_converters::hf::safetensors::index_dir as st_index;
    use ggufkit_converters::torch::index_dir as bin_index;
    for (src, bin) in [("llama-spm", "llama-spm-bin"), ("qwen2", "qwen2-bin")] {
        let a = st_index(&fixture(src)).unwrap();
        let b = bin_index(&fixture(bin)).unwrap();
        assert_eq!(a.tensors.len(), b.tensors.len(), "{bin}");
        for (x, y) in a.tensors.iter().zip(&b.tensors) {
            assert_eq!(
                (&x.name, x.dtype, &x.shape),
                (&y.name, y.dtype, &y.shape),
                "{bin}"
            );
            assert!(
                x.bytes().unwrap() == y.bytes().unwrap(),
                "{bin}: {} differs",
                x.name
            );
        }
    }
}

#[test]
fn every_dtype_reads_as_torch_wrote_it() {
    // testdata/golden/torch/dtypes.bin: every dtype we read (_rebuild_tensor_v2, v3 for FP8,
    // _rebuild_parameter), a 0-dim and an empty tensor, views at storage offsets; dtypes.json
    // holds each tensor's dtype, shape and the sha256 of its bytes as torch has them.
    use ggufkit::mapped::FileBytes;
    use ggufkit_converters::torch::checkpoint::read_checkpoint;
    use sha2::{Digest, Sha256};
    let path = testdata("golden/torch/dtypes.bin");
    let tensors = read_checkpoint(&path, &FileBytes::map(&path).unwrap()).unwrap();
    let expect = read_json(&testdata("golden/torch/dtypes.json"));
    let expect = expect.as_array().unwrap();
    assert_eq!(tensors.len(), expect.len());
    for (t, e) in tensors.iter().zip(expect) {
        let shape: Vec<u64> = e["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(t.name, e["name"].as_str().unwrap(), "order");
        assert_eq!(t.dtype.name(), e["dtype"].as_str().unwrap(), "{}", t.name);
        assert_eq!(t.shape, shape, "{}", t.name);
        let sha: String = Sha256::digest(t.bytes().unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            sha,
            e["sha256"].as_str().unwrap(),
            "{}: bytes differ",
            t.name
        );
    }
}
