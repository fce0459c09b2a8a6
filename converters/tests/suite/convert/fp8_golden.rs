//! Pre-quantized FP8 checkpoints convert to the reference's bytes.
//!
//! `testdata/hf/llama-spm-fp8-<layout>/` hold the `llama-spm` model with its projections in
//! FP8 in each layout the reference's `dequant_model` reads (compressed-tensors per-channel
//! and per-block scales, ModelOpt per-tensor scales, `quant_method: fp8` with F8_E5M2 weights
//! and per-tensor / 1-D per-row `weight_scale_inv`); `testdata/golden/fp8/cases.json` holds
//! the sha256 of what the pinned `convert_hf_to_gguf.py` writes from them for every outtype
//! and with `--fp8-as-q8`, and the variants it refuses (all made by
//! `conformance/make_fp8_fixtures.py`).

use std::path::{Path, PathBuf};

use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_testsupport::golden::{f32s, read_json, safetensors, sha256_file};
use ggufkit_testsupport::write_gguf;
use ggufkit_testsupport::{copy_tree, fixture, record, scratch, testdata};

fn options(outtype: &str, fp8_as_q8: bool) -> HfOptions {
    HfOptions {
        outtype: OutType::parse(outtype).unwrap(),
        fp8_as_q8,
        ..HfOptions::default()
    }
}

/// `from` copied into `<scratch>/<name>` (the default `general.name` is the directory's).
fn copy_named(from: &Path, scratch: &Path, name: &str) -> PathBuf {
    let dst = scratch.join(name);
    let _ = std::fs::remove_dir_all(&dst);
    copy_tree(from, &dst);
    dst
}

/// The modifications of the refused cases (as `make_fp8_fixtures.py` makes them).
fn modify(dir: &Path, what: &str) {
    match what {
        "tensor-strategy" => {
            let path = dir.join("config.json");
            let mut c = read_json(&path);
            c["quantization_config"]["config_groups"]["group_0"]["weights"]["strategy"] =
                "tensor".into();
            std::fs::write(&path, serde_json::to_vec_pretty(&c).unwrap()).unwrap();
        }
        "input-scale" => {
            let t = [(
                "model.layers.0.self_attn.q_proj.input_scale",
                "F32",
                &[][..],
                f32s(&[0.5]),
            )];
            std::fs::write(dir.join("model-extra.safetensors"), safetensors(&t)).unwrap();
        }
        other => panic!("unknown modification {other}"),
    }
}

#[test]
fn fp8_checkpoints_equal_the_reference() {
    let cases = read_json(&testdata("golden/fp8/cases.json"));
    let cases = cases.as_object().expect("cases.json is an object");
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let work = scratch("fp8-golden");
    let (mut same, mut refused) = (0, 0);
    for (name, case) in cases {
        let field = |k: &str| case[k].as_str().unwrap_or_else(|| panic!("{name}: no {k}"));
        let (fx, outtype) = (field("fixture"), field("outtype"));
        let q8 = case["fp8_as_q8"].as_bool().unwrap();
        let mut dir = fixture(fx);
        if let Some(what) = case.get("modify").and_then(|m| m.as_str()) {
            dir = copy_named(&dir, &work.join("modified"), fx);
            modify(&dir, what);
        }
        let result = read_hf_dir(&dir, &options(outtype, q8));
        if case["ok"] == false {
            assert!(
                result.is_err(),
                "{name}: the reference refuses it ({}), we converted it",
                case["error_tail"]
            );
            refused += 1;
            continue;
        }
        let conv = result.unwrap_or_else(|e| panic!("{name}: conversion failed: {e}"));
        let out = work.join("out.gguf");
        write_gguf(&conv.model, &out).unwrap();
        assert_eq!(
            sha256_file(&out),
            field("sha256"),
            "{name}: differs from the reference"
        );
        std::fs::remove_file(&out).unwrap();
        same += 1;
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(refused >= 2, "{refused} refused cases");
    record(
        "fp8_golden",
        same + refused,
        "FP8 checkpoint conversions matched (sha256) or refused as by the reference",
        &[],
    );
}

/// `--fp8-as-q8` changes only the matrices the checkpoint holds in FP8: the embedding (BF16
/// in the fixture, and tied to the output) keeps the outtype, the projections are Q8_0.
#[test]
fn fp8_as_q8_forces_only_the_fp8_matrices() {
    use ggufkit::quantizers::GgmlType;
    let conv = read_hf_dir(&fixture("llama-spm-fp8-channel"), &options("bf16", true)).unwrap();
    let ty = |n: &str| {
        conv.model
            .tensors
            .iter()
            .find(|t| t.name == n)
            .unwrap_or_else(|| panic!("no {n}"))
            .ty
    };
    assert_eq!(ty("token_embd.weight"), GgmlType::BF16);
    assert_eq!(ty("blk.0.attn_q.weight"), GgmlType::Q8_0);
    assert_eq!(ty("blk.0.ffn_down.weight"), GgmlType::Q8_0);
    assert_eq!(ty("blk.0.attn_norm.weight"), GgmlType::F32);
    // Without the flag the same checkpoint follows the outtype.
    let plain = read_hf_dir(&fixture("llama-spm-fp8-channel"), &options("bf16", false)).unwrap();
    assert!(plain
        .model
        .tensors
        .iter()
        .all(|t| t.ty == GgmlType::BF16 || t.ty == GgmlType::F32));
}

/// Dequantized FP8 matrices are computed a range of rows at a time by the writer (so a big
/// matrix never has its F32 form in memory whole): any split into row ranges gives the
/// bytes of the whole tensor, for every outtype.
#[test]
fn fp8_rows_in_pieces_equal_whole_tensors() {
    use ggufkit::ir::TensorData;
    let mut split = 0;
    for fx in ["channel", "block", "tensor", "e5m2"] {
        for outtype in ["f32", "f16", "bf16", "q8_0"] {
            let dir = fixture(&format!("llama-spm-fp8-{fx}"));
            let conv = read_hf_dir(&dir, &options(outtype, false)).unwrap();
            for t in &conv.model.tensors {
                let TensorData::Derived(d) = &t.data else {
                    continue;
                };
                let Some(rows) = d.rows() else {
                    continue;
                };
                let whole = d.compute().unwrap();
                let mut pieces = Vec::new();
                let mut start = 0;
                while start < rows.count {
                    let end = (start + 7).min(rows.count);
                    pieces.extend(d.compute_rows(start..end).unwrap());
                    start = end;
                }
                assert_eq!(pieces.len(), rows.count * rows.out_bytes, "{}", t.name);
                assert!(pieces == whole, "{fx} {outtype} {}: pieces differ", t.name);
                split += 1;
            }
        }
    }
    // Every projection of the layer (4 fixtures x 4 outtypes x 7), the q/k ones through the
    // head permutation.
    assert!(split >= 16 * 7, "{split} tensors computed by rows");
}
