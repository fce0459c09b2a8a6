//! dots3-note (`dots3note`) beyond its golden fixture: the next-token-prediction switches on
//! a checkpoint without the MTP block (no `model.mtp.embed_tokens`, no block past
//! `num_hidden_layers`), against the reference's files for it. `--no-mtp` writes the model
//! the reference writes with the block dropped; `--mtp` keeps only the embeddings, final norm
//! and head (the reference writes that file too, without a next-token-prediction count).
//! The switches on the fixture itself are `golden/mtp/cases.json`'s (cli `mtp_golden`).

use std::path::Path;

use ggufkit_converters::hf::{read_hf_dir, HfOptions, Mtp, OutType};
use ggufkit_testsupport::golden::{
    materialize_fixture as materialize, read_json, safetensors, sha256_file,
};
use ggufkit_testsupport::{scratch, write_gguf};
use serde_json::Value as Json;

/// The reference's `--mtp` f32 file of the dots3 fixture without its MTP block.
const MTP_ONLY_SHA256: &str = "e936db453799cf842e02826fd711957a3c073669346e77abb4683181d4b22938";
/// The reference's `--no-mtp` f32 file of it: the fixture's own `--no-mtp` file.
const NO_MTP_SHA256: &str = "ada2c149a5dd81dd886a70bf900f114f22f06e1423c3fc0f34cedc3649ef1aa7";

/// Rewrites `dir/model.safetensors` without the tensors `drop` names.
fn drop_tensors(dir: &Path, drop: impl Fn(&str) -> bool) {
    let path = dir.join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Json = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let data = &bytes[8 + n..];
    let mut kept = Vec::new();
    for (name, t) in header.as_object().unwrap() {
        if name == "__metadata__" || drop(name) {
            continue;
        }
        let off: Vec<usize> = t["data_offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        let shape: Vec<u64> = t["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let dtype = t["dtype"].as_str().unwrap().to_string();
        kept.push((name.clone(), dtype, shape, data[off[0]..off[1]].to_vec()));
    }
    let list: Vec<(&str, &str, &[u64], Vec<u8>)> = kept
        .iter()
        .map(|(n, d, s, b)| (n.as_str(), d.as_str(), s.as_slice(), b.clone()))
        .collect();
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, safetensors(&list)).unwrap();
}

#[test]
fn dots3_mtp_switches_without_an_mtp_block_equal_the_reference() {
    let work = scratch("dots3-no-mtp-block");
    let dir = materialize("dots3", &work);
    let n = read_json(&dir.join("config.json"))["num_hidden_layers"]
        .as_u64()
        .unwrap();
    let block = format!("model.layers.{n}.");
    drop_tensors(&dir, |name| {
        name.starts_with("model.mtp.") || name.starts_with(&block)
    });
    for (mtp, want) in [(Mtp::Only, MTP_ONLY_SHA256), (Mtp::Drop, NO_MTP_SHA256)] {
        let conv = read_hf_dir(
            &dir,
            &HfOptions {
                outtype: OutType::F32,
                mtp,
                ..HfOptions::default()
            },
        )
        .unwrap();
        let out = work.join(format!("{mtp:?}.gguf"));
        write_gguf(&conv.model, &out).unwrap();
        assert_eq!(sha256_file(&out), want, "{mtp:?}");
    }
}
