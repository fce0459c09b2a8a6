//! gguf-inspect end to end: output, JSON, exit codes.

use ggufkit_testsupport::golden as support;

use std::path::Path;
use std::process::{Command, Output};

use support::*;

fn inspect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gguf-inspect"))
        .args(args)
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn dump_shows_header_keys_and_tensors() {
    let f = golden_gguf("llama-spm", "quant-Q4_K_M");
    let o = inspect(&["dump", s(&f)]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    for needle in [
        "GGUF v3",
        "30 metadata keys",
        "tokenizer.ggml.tokens",
        "(1024 × STRING)",
        "21 tensors",
        "blk.1.ffn_down.weight",
        "q6_K",
        "bits per weight",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let o = inspect(&["dump", "--json", s(&f)]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["tensors"].as_array().unwrap().len(), 21);
    assert_eq!(j["kv"][0][0], "general.architecture");
}

#[test]
fn manifest_matches_golden() {
    let f = golden_gguf("llama-spm", "quant-Q4_0");
    let o = inspect(&["manifest", s(&f)]);
    assert!(o.status.success());
    let ours: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let golden: serde_json::Value = serde_json::from_slice(
        &std::fs::read(testdata("golden/llama-spm/quant-Q4_0.json")).unwrap(),
    )
    .unwrap();
    assert!(ggufkit::manifest::diff_manifests(&ours, &golden).is_empty());
}

#[test]
fn diff_exit_status_and_report() {
    let a = golden_gguf("llama-spm", "quant-Q4_0");
    let b = golden_gguf("llama-spm", "quant-Q4_K_M");
    let same = inspect(&["diff", s(&a), s(&a)]);
    assert_eq!(same.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&same.stdout).trim(), "identical");
    let d = inspect(&["diff", "--json", s(&a), s(&b)]);
    assert_eq!(d.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    assert_eq!(j["identical"], false);
    let changed = j["keys_changed"].as_array().unwrap();
    assert!(
        changed.iter().any(|c| c["key"] == "general.file_type"),
        "{j}"
    );
    let tensors = j["tensors_changed"].as_array().unwrap();
    assert!(
        tensors
            .iter()
            .any(|t| t["name"] == "blk.0.attn_q.weight" && t["type"][1] == "q4_K"),
        "{j}"
    );
}

#[test]
fn verify_finds_nan_and_threshold_violations() {
    let ok = golden_gguf("llama-spm", "quant-Q4_K_M");
    assert_eq!(inspect(&["verify", s(&ok)]).status.code(), Some(0));
    // Poison one value of output_norm.weight (F32) with a NaN.
    let src = golden_gguf("llama-spm", "convert-f32");
    let file = ggufkit::gguf::GgufFile::open(&src).unwrap();
    let t = file.tensor("output_norm.weight").unwrap();
    let at = (file.data_offset + t.offset) as usize;
    let mut bytes = std::fs::read(&src).unwrap();
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let dir = scratch("verify-nan");
    let bad = dir.join("nan.gguf");
    std::fs::write(&bad, bytes).unwrap();
    let o = inspect(&["verify", "--json", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["non_finite"][0]["tensor"], "output_norm.weight");
    assert_eq!(j["non_finite"][0]["nan"], 1);
    // Against the f32 source: Q4_K_M is close, but not within an impossible threshold.
    let good = inspect(&[
        "verify",
        s(&ok),
        "--against",
        s(&src),
        "--min-cosine",
        "0.99",
    ]);
    assert_eq!(
        good.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&good.stdout)
    );
    let strict = inspect(&[
        "verify",
        "--json",
        s(&ok),
        "--against",
        s(&src),
        "--max-rmse",
        "1e-6",
    ]);
    assert_eq!(strict.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&strict.stdout).unwrap();
    assert!(!j["against"]["violations"].as_array().unwrap().is_empty());
    assert_eq!(j["against"]["tensors"].as_array().unwrap().len(), 21);
}

#[test]
fn verify_against_a_huggingface_directory() {
    let q = golden_gguf("llama-spm", "quant-Q4_K_M");
    // The directory it was converted from: every tensor is matched (q/k after the rotary
    // permutation), so the quantization error is small.
    let o = inspect(&[
        "verify",
        "--json",
        s(&q),
        "--against",
        s(&testdata("hf/llama-spm")),
        "--min-cosine",
        "0.99",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tensors = j["against"]["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 21);
    let q_proj = tensors
        .iter()
        .find(|t| t["name"] == "blk.0.attn_q.weight")
        .expect("attn_q compared");
    assert!(q_proj["cosine"].as_f64().unwrap() > 0.99, "{q_proj}");
    // Another model's directory: missing tensors and shape mismatches are named, exit 1.
    let o = inspect(&[
        "verify",
        "--json",
        s(&q),
        "--against",
        s(&testdata("hf/qwen2")),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let problems: Vec<&str> = j["against"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        problems.contains(&"tensor 'blk.0.attn_q.bias' of the source is missing from the output")
    );
    assert!(problems.contains(
        &"tensor 'token_embd.weight': shape [256, 1024] in the output, [64, 1024] in the source"
    ));
}

#[test]
fn unreadable_input_is_exit_3_and_names_the_problem() {
    let dir = scratch("inspect-bad");
    let f = dir.join("x.gguf");
    std::fs::write(&f, b"GGUF\x03\x00\x00\x00").unwrap();
    let o = inspect(&["dump", s(&f)]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("x.gguf") && err.contains("truncated"), "{err}");
    let o = inspect(&["verify", s(&f)]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "verify reports an invalid file as a failed check"
    );
}

/// Every input a fuzzer crashed on once: each must now be handled cleanly by every
/// consumer (dump, manifest, verify).
#[test]
fn fuzz_regressions_are_handled() {
    let dir = testdata("fuzz-regressions/gguf_parse");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        for cmd in ["dump", "manifest", "verify"] {
            let o = inspect(&[cmd, s(&p)]);
            assert!(
                matches!(o.status.code(), Some(0 | 1 | 3)),
                "{cmd} {}: {:?}",
                p.display(),
                o.status
            );
            assert!(
                !String::from_utf8_lossy(&o.stderr).contains("panicked"),
                "{cmd} {}",
                p.display()
            );
        }
        n += 1;
    }
    assert!(n > 0);
}

#[test]
fn verify_against_a_legacy_source() {
    // A GGJT v3 Q4_0 file converted byte for byte: zero error against its source.
    let dir = scratch("verify-legacy");
    let src = testdata("legacy/ggjt-v3-q4_0.bin");
    let out = dir.join("v3.gguf");
    let o = Command::new(env!("CARGO_BIN_EXE_gguf-convert"))
        .args([s(&src), s(&out), "--quiet", "--gqa", "2", "--eps", "1e-5"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = inspect(&[
        "verify",
        "--json",
        s(&out),
        "--against",
        s(&src),
        "--max-abs",
        "0",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{j}");
    assert_eq!(j["against"]["tensors"].as_array().unwrap().len(), 21);
}

/// verify scans a big-endian file's float tensors for NaN and Inf (elements byte-swapped
/// first): a NaN written big-endian into an F32 tensor and an Inf into an F16 one are found
/// and named. Read little-endian, those bytes are finite numbers, so a scan that did not
/// swap would say OK.
#[test]
fn verify_scans_big_endian_files_for_nan() {
    let dir = scratch("verify-be-nan");
    let be = dir.join("be.gguf");
    let o = Command::new(env!("CARGO_BIN_EXE_gguf-convert"))
        .args([
            s(&testdata("hf/llama-spm")),
            "--outfile",
            s(&be),
            "--outtype",
            "f16",
            "--bigendian",
            "-q",
            "-f",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(inspect(&["verify", s(&be)]).status.code(), Some(0));
    let file = ggufkit::gguf::GgufFile::open(&be).unwrap();
    assert_eq!(file.byte_order, ggufkit::gguf::ByteOrder::Big);
    let f32_t = file
        .tensors
        .iter()
        .find(|t| t.ty == ggufkit::quantizers::GgmlType::F32)
        .expect("an F32 tensor")
        .clone();
    let f16_t = file
        .tensors
        .iter()
        .find(|t| t.ty == ggufkit::quantizers::GgmlType::F16)
        .expect("an F16 tensor")
        .clone();
    let at = |t: &ggufkit::gguf::TensorInfo| (file.data_offset + t.offset) as usize;
    let (a32, a16) = (at(&f32_t), at(&f16_t));
    drop(file);
    let mut bytes = std::fs::read(&be).unwrap();
    bytes[a32 + 4..a32 + 8].copy_from_slice(&f32::NAN.to_be_bytes());
    bytes[a16 + 2..a16 + 4].copy_from_slice(&0x7c00u16.to_be_bytes()); // +Inf
    let bad = dir.join("be-nan.gguf");
    std::fs::write(&bad, bytes).unwrap();
    let o = inspect(&["verify", "--json", s(&bad)]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let found: Vec<(String, u64, u64)> = j["non_finite"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["tensor"].as_str().unwrap().to_string(),
                e["nan"].as_u64().unwrap(),
                e["inf"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(found.contains(&(f32_t.name.clone(), 1, 0)), "{found:?}");
    assert!(found.contains(&(f16_t.name.clone(), 0, 1)), "{found:?}");
    // The text report names the tensor too.
    let o = inspect(&["verify", s(&bad)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("tensor '{}' has 1 NaN", f32_t.name)),
        "{text}"
    );
}

/// `manifest -o` writes under the output rules: never over the GGUF file it reads.
#[test]
fn manifest_output_is_never_its_input() {
    let dir = scratch("manifest-self");
    let f = dir.join("m.gguf");
    std::fs::copy(golden_gguf("llama-spm", "quant-Q4_K_M"), &f).unwrap();
    let before = std::fs::read(&f).unwrap();
    let o = inspect(&["manifest", s(&f), "-o", s(&f)]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("input of this run"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&f).unwrap(), before);
    let json = dir.join("m.json");
    let o = inspect(&["manifest", s(&f), "-o", s(&json)]);
    assert!(o.status.success());
    assert!(std::fs::read_to_string(&json).unwrap().starts_with('{'));
}
