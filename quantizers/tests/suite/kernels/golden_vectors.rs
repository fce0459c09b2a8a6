//! Conformance: every quantization vector llama.cpp 0c1e570 produced must be reproduced byte
//! for byte (`testdata/quant-vectors/index.json`), and every dequantization bit for bit.
//!
//! Every quantization runs twice: with the kernels this CPU would use (AVX2 builds where it
//! has AVX2) and with the portable ones.
//!
//! Set `GOLDEN_TYPE=Q4_K` (comma-separated) to run only some types while iterating.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ggufkit_quantizers::{
    dequantize_rows, force_portable, quantize_rows, traits, GgmlType, QuantError,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

use ggufkit_testsupport::record as record_file;

/// Types whose quantizer must exist and match (the list).
const MUST_QUANTIZE: &[&str] = &[
    "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q8_K", "Q2_K", "Q3_K", "Q4_K",
    "Q5_K", "Q6_K", "TQ1_0", "TQ2_0", "IQ4_NL", "IQ4_XS", "IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS",
    "IQ2_S", "IQ3_XXS", "IQ3_S",
];

/// Types whose dequantizer must exist and match.
const MUST_DEQUANTIZE: &[&str] = &[
    "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_K", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
    "Q6_K", "TQ1_0", "TQ2_0", "IQ4_NL", "IQ4_XS", "IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S",
    "IQ3_XXS", "IQ3_S", "MXFP4", "NVFP4", "Q1_0", "Q2_0",
];

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/quant-vectors")
}

fn read_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn ggml_type(name: &str) -> GgmlType {
    GgmlType::from_name(name).unwrap_or_else(|| panic!("unknown type {name}"))
}

fn first_diff(a: &[u8], b: &[u8]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!(
            "first differing byte {i}: ours {:#04x}, golden {:#04x}",
            a[i], b[i]
        ),
        None => format!("lengths differ: ours {}, golden {}", a.len(), b.len()),
    }
}

#[test]
fn golden_quantization_vectors() {
    let dir = vectors_dir();
    let index: Value =
        serde_json::from_slice(&std::fs::read(dir.join("index.json")).expect("index.json"))
            .expect("index.json parses");
    let only: Option<BTreeSet<String>> = std::env::var("GOLDEN_TYPE")
        .ok()
        .map(|s| s.split(',').map(|t| t.trim().to_uppercase()).collect());
    let imatrix = read_f32(&dir.join("imatrix/rand.f32.bin"));

    let mut failures = Vec::new();
    let (mut quant_checked, mut dequant_checked) = (0usize, 0usize);
    // Vectors of types with no kernel yet (outside MUST_*): reported, never counted as passed.
    let mut not_run: Vec<(String, String)> = Vec::new();
    for f in index["files"].as_array().expect("files") {
        let tname = f["type"].as_str().unwrap();
        if only.as_ref().is_some_and(|o| !o.contains(tname)) {
            continue;
        }
        let ty = ggml_type(tname);
        let tr = traits(ty);
        let case = f["case"].as_str().unwrap();
        let with_im = !f["imatrix"].is_null();
        let label = format!("{tname}/{case}{}", if with_im { "+imatrix" } else { "" });
        // llama.cpp's bytes, by their sha256; the bytes themselves are stored only for the
        // types no quantizer here makes (the dequantizer's input): for the others, the
        // output that matches the hash is those bytes.
        let want_sha = f["quant_sha256"].as_str().unwrap();
        let mut golden = std::fs::read(dir.join(f["quant"].as_str().unwrap())).ok();
        if let Some(g) = &golden {
            assert_eq!(sha256_hex(g), want_sha, "{label}: stored vector");
        }

        match tr.quantize {
            Some(_) => {
                let input = read_f32(&dir.join(f["input"].as_str().unwrap()));
                let n_per_row = f["n_per_row"].as_u64().unwrap() as usize;
                let size =
                    input.len() / n_per_row * ggufkit_quantizers::row_size(ty, n_per_row).unwrap();
                let im = with_im.then_some(imatrix.as_slice());
                // Both builds of the kernels: the one this CPU runs by default (AVX2 where
                // available) and the portable one.
                for portable in [false, true] {
                    force_portable(portable);
                    let build = if portable { " (portable kernels)" } else { "" };
                    let mut ours = vec![0u8; size];
                    match quantize_rows(ty, &input, &mut ours, n_per_row, im) {
                        Ok(()) => match &golden {
                            Some(g) if ours == *g => {}
                            Some(g) => failures
                                .push(format!("quantize {label}{build}: {}", first_diff(&ours, g))),
                            None if sha256_hex(&ours) == want_sha => golden = Some(ours),
                            None => failures.push(format!(
                                "quantize {label}{build}: sha256 {} is not llama.cpp's {want_sha}",
                                sha256_hex(&ours)
                            )),
                        },
                        Err(e) => failures.push(format!("quantize {label}{build}: {e}")),
                    }
                }
                force_portable(false);
                quant_checked += 1;
            }
            None if MUST_QUANTIZE.contains(&tname) => {
                failures.push(format!("quantize {label}: no quantizer registered"))
            }
            None => not_run.push((format!("quantize {label}"), "not implemented yet".into())),
        }
        let Some(golden) = golden else {
            failures.push(format!(
                "{label}: no llama.cpp bytes (none stored, and no quantizer output matched)"
            ));
            continue;
        };

        if let Some(dq) = f["dequant"].as_str() {
            let expected = f["dequant_sha256"].as_str().unwrap();
            match tr.dequantize {
                Some(_) => {
                    let n = golden.len() / tr.type_size * tr.block_size;
                    let mut out = vec![0f32; n];
                    match dequantize_rows(ty, &golden, &mut out) {
                        Ok(()) => {
                            let bytes: Vec<u8> = out.iter().flat_map(|v| v.to_le_bytes()).collect();
                            if sha256_hex(&bytes) != expected {
                                let gpath = Path::new(env!("CARGO_MANIFEST_DIR"))
                                    .join("../../shared/golden/quant-vectors")
                                    .join(dq);
                                let detail = std::fs::read(&gpath)
                                    .map(|g| first_diff(&bytes, &g))
                                    .unwrap_or_else(|_| "sha256 differs".into());
                                failures.push(format!("dequantize {label}: {detail}"));
                            }
                        }
                        Err(e) => failures.push(format!("dequantize {label}: {e}")),
                    }
                    dequant_checked += 1;
                }
                None if MUST_DEQUANTIZE.contains(&tname) => {
                    failures.push(format!("dequantize {label}: no dequantizer registered"))
                }
                None => not_run.push((format!("dequantize {label}"), "not implemented yet".into())),
            }
        }
    }
    // Inputs on which the reference aborts: we must refuse them with an error.
    let mut refusals_checked = 0usize;
    for e in index["errors"].as_array().expect("errors") {
        let tname = e["type"].as_str().unwrap();
        if only.as_ref().is_some_and(|o| !o.contains(tname)) {
            continue;
        }
        let ty = ggml_type(tname);
        let case = e["case"].as_str().unwrap();
        let with_im = !e["imatrix"].is_null();
        let label = format!("{tname}/{case}{}", if with_im { "+imatrix" } else { "" });
        let input = read_f32(&dir.join(format!("inputs/{case}.f32.bin")));
        let n_per_row = index["n_per_row"].as_u64().unwrap() as usize;
        let rs = ggufkit_quantizers::row_size(ty, n_per_row).unwrap();
        let mut ours = vec![0u8; input.len() / n_per_row * rs];
        let im = with_im.then_some(imatrix.as_slice());
        for portable in [false, true] {
            force_portable(portable);
            match quantize_rows(ty, &input, &mut ours, n_per_row, im) {
                Err(QuantError::Unrepresentable { .. }) => {}
                other => failures.push(format!(
                    "refuse {label}: the reference aborts ({}), we returned {other:?}",
                    e["message"].as_str().unwrap_or("")
                )),
            }
        }
        force_portable(false);
        refusals_checked += 1;
    }
    eprintln!(
        "checked {quant_checked} quantize and {dequant_checked} dequantize vectors, \
         {refusals_checked} refusals"
    );
    for f in &failures {
        eprintln!("MISMATCH {f}");
    }
    assert!(
        failures.is_empty(),
        "{} golden vector mismatches",
        failures.len()
    );
    assert!(
        quant_checked > 0 || only.is_some(),
        "no vectors were checked"
    );
    if only.is_none() {
        record_file::record(
            "quant_vectors",
            quant_checked + dequant_checked,
            &format!(
                "quantization vectors matched ({quant_checked} quantize x 2 kernel builds, \
                 {dequant_checked} dequantize)"
            ),
            &not_run,
        );
    }
}
