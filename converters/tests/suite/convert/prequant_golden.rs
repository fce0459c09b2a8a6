//! Pre-quantized checkpoints that the reference repacks (MXFP4, NVFP4) or dequantizes (GPTQ 4- and
//! 8-bit, compressed-tensors pack-quantized with and without zero points) convert to the
//! reference's bytes, and llama-quantize's
//! bytes come out of gguf-quantize on the result.
//!
//! `testdata/hf/<fixture>/` hold a source fixture's weights (shared by reference) plus a small
//! second part with the pre-quantized tensors; `testdata/golden/prequant/cases.json` holds the
//! sha256 of what the pinned `convert_hf_to_gguf.py` writes from them for every outtype, of what
//! `llama-quantize` writes from the f16 output, and the variants they refuse (all made by
//! `conformance/make_prequant_fixtures.py`).

use std::path::{Path, PathBuf};

use ggufkit::gguf::GgufFile;
use ggufkit::ir::{Model, TensorData};
use ggufkit::quantize::{plan, FileType, QuantizeOptions};
use ggufkit::quantizers::GgmlType;
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_testsupport::golden::{read_json, sha256_file};
use ggufkit_testsupport::unloadable::is_unloadable;
use ggufkit_testsupport::write_gguf;
use ggufkit_testsupport::{copy_tree, fixture, record, scratch, testdata};
use serde_json::Value as Json;

/// Every fixture `make_prequant_fixtures.py` makes (each must have cases).
const FIXTURES: &[&str] = &[
    "gptoss-mxfp4",
    "kimik3-mxfp4",
    "mimo2-mxfp4",
    "llama-bpe-nvfp4",
    "llama-bpe-nvfp4-ct",
    "llama-bpe-nvfp4-w4a16",
    "qwen3moe-nvfp4",
    "llama-bpe-gptq4",
    "llama-bpe-gptq8",
    "llama-bpe-w4a16",
    "llama-bpe-w4a16-asym",
];

fn options(outtype: &str) -> HfOptions {
    HfOptions {
        outtype: OutType::parse(outtype).unwrap(),
        ..HfOptions::default()
    }
}

/// The fixture whose NVFP4 experts are 64 wide in a 32-wide model (NVFP4 rows are whole
/// 64-value blocks): llama.cpp cannot load what the reference writes from it.
const UNLOADABLE: &str = "qwen3moe-nvfp4";

/// [`options`] for fixture `fx`: the unloadable ones are converted as the reference does.
fn fixture_options(fx: &str, outtype: &str) -> HfOptions {
    HfOptions {
        allow_unloadable: is_unloadable(Path::new(fx)),
        ..options(outtype)
    }
}

/// `from` copied into `<scratch>/<name>` (the default `general.name` is the directory's).
fn copy_named(from: &Path, scratch: &Path, name: &str) -> PathBuf {
    let dst = scratch.join(name);
    let _ = std::fs::remove_dir_all(&dst);
    copy_tree(from, &dst);
    dst
}

/// A safetensors file's tensors as (name, dtype, shape, bytes), in file order.
type StTensors = Vec<(String, String, Vec<u64>, Vec<u8>)>;

fn read_st(path: &Path) -> StTensors {
    let b = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, Json> = serde_json::from_slice(&b[8..8 + n]).unwrap();
    let data = &b[8 + n..];
    let mut out: Vec<_> = header
        .iter()
        .filter(|(k, _)| *k != "__metadata__")
        .map(|(k, v)| {
            let off = v["data_offsets"].as_array().unwrap();
            let (s, e) = (
                off[0].as_u64().unwrap() as usize,
                off[1].as_u64().unwrap() as usize,
            );
            let shape = v["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap())
                .collect();
            (
                k.clone(),
                v["dtype"].as_str().unwrap().to_string(),
                shape,
                data[s..e].to_vec(),
                s,
            )
        })
        .collect();
    out.sort_by_key(|t| t.4);
    out.into_iter()
        .map(|(a, b, c, d, _)| (a, b, c, d))
        .collect()
}

fn write_st(path: &Path, tensors: &StTensors) {
    let parts: Vec<(&str, &str, &[u64], Vec<u8>)> = tensors
        .iter()
        .map(|(n, d, s, b)| (n.as_str(), d.as_str(), s.as_slice(), b.clone()))
        .collect();
    std::fs::write(path, ggufkit_testsupport::golden::safetensors(&parts)).unwrap();
}

/// The integer-quantized fixtures (dequantized, not repacked).
const INT_FIXTURES: &[&str] = &[
    "llama-bpe-gptq4",
    "llama-bpe-gptq8",
    "llama-bpe-w4a16",
    "llama-bpe-w4a16-asym",
];

/// Edits the quantization config.
fn edit_config(dir: &Path, f: impl FnOnce(&mut Json)) {
    let path = dir.join("config.json");
    let mut c = read_json(&path);
    f(&mut c["quantization_config"]);
    std::fs::write(&path, serde_json::to_vec_pretty(&c).unwrap()).unwrap();
}

/// Removes a tensor from the second part and the index.
fn drop_tensor(dir: &Path, name: &str) {
    let part = dir.join("model-00002-of-00002.safetensors");
    let mut t = read_st(&part);
    let before = t.len();
    t.retain(|x| x.0 != name);
    assert_eq!(t.len() + 1, before, "no {name}");
    write_st(&part, &t);
    let path = dir.join("model.safetensors.index.json");
    let mut idx = read_json(&path);
    idx["weight_map"].as_object_mut().unwrap().remove(name);
    std::fs::write(&path, serde_json::to_vec_pretty(&idx).unwrap()).unwrap();
}

/// The MoE block of kimik3-mxfp4's MXFP4 layer.
const K3_EXPERTS: &str = "language_model.model.layers.3.block_sparse_moe.";

/// Renames a tensor of the second part (and its index entry).
fn rename_tensor(dir: &Path, name: &str, new: &str) {
    let part = dir.join("model-00002-of-00002.safetensors");
    let mut t = read_st(&part);
    let i = t
        .iter()
        .position(|x| x.0 == name)
        .unwrap_or_else(|| panic!("no {name}"));
    t[i].0 = new.to_string();
    write_st(&part, &t);
    let path = dir.join("model.safetensors.index.json");
    let mut idx = read_json(&path);
    let map = idx["weight_map"].as_object_mut().unwrap();
    let file = map.remove(name).unwrap();
    map.insert(new.to_string(), file);
    std::fs::write(&path, serde_json::to_vec_pretty(&idx).unwrap()).unwrap();
}

/// The routed experts of mimo2-mxfp4's first MoE block.
const MIMO_EXPERTS: &str = "model.layers.1.mlp.experts.";

/// Edits the tensors of a one-file fixture's `model.safetensors`.
fn edit_single(dir: &Path, f: impl FnOnce(&mut StTensors)) {
    let part = dir.join("model.safetensors");
    let mut t = read_st(&part);
    f(&mut t);
    write_st(&part, &t);
}

/// The modifications of the refused cases (as `make_prequant_fixtures.py` makes them).
fn modify(dir: &Path, what: &str) {
    fn drop(names: Vec<String>) -> impl FnOnce(&mut StTensors) {
        move |t| {
            let before = t.len();
            t.retain(|x| !names.contains(&x.0));
            assert_eq!(t.len() + names.len(), before, "not all of {names:?}");
        }
    }
    match what {
        "mimo-no-scale" => {
            let names = vec![format!("{MIMO_EXPERTS}2.down_proj.weight_scale")];
            return edit_single(dir, drop(names));
        }
        "mimo-no-expert" => {
            let names = vec![
                format!("{MIMO_EXPERTS}3.gate_proj.weight"),
                format!("{MIMO_EXPERTS}3.gate_proj.weight_scale"),
            ];
            return edit_single(dir, drop(names));
        }
        "mimo-stray" => {
            return edit_single(dir, |t| {
                let old = format!("{MIMO_EXPERTS}1.up_proj.weight_scale");
                let i = t.iter().position(|x| x.0 == old).expect("the scale");
                t[i].0 = "model.layers.1.mlp.shared_up.weight_scale".into();
                t.sort_by(|a, b| a.0.cmp(&b.0));
            })
        }
        "mimo-block-64" => return edit_config(dir, |q| q["mxfp4_block_size"] = 64.into()),
        _ => {}
    }
    match what {
        "bits-3" => return edit_config(dir, |q| q["bits"] = 3.into()),
        "no-g-idx" => return drop_tensor(dir, "model.layers.2.mlp.up_proj.g_idx"),
        "strategy-channel" => {
            return edit_config(dir, |q| {
                q["config_groups"]["group_0"]["weights"]["strategy"] = "channel".into()
            })
        }
        "no-weight-shape" => return drop_tensor(dir, "model.layers.2.mlp.up_proj.weight_shape"),
        "k3-no-scale" => {
            return drop_tensor(dir, &format!("{K3_EXPERTS}experts.2.w2.weight_scale"))
        }
        "k3-no-expert" => {
            return drop_tensor(dir, &format!("{K3_EXPERTS}experts.3.w1.weight_packed"))
        }
        "k3-stray" => {
            return rename_tensor(
                dir,
                &format!("{K3_EXPERTS}experts.1.w3.weight_packed"),
                &format!("{K3_EXPERTS}shared_experts.up_proj.weight_packed"),
            )
        }
        _ => {}
    }
    if what == "nvfp4-scales-shape" {
        let part = dir.join("model-00002-of-00002.safetensors");
        let mut t = read_st(&part);
        let i = t
            .iter()
            .position(|x| x.0 == "model.layers.2.mlp.up_proj.weight_scale")
            .unwrap();
        t[i].2 = vec![64, 8];
        return write_st(&part, &t);
    }
    let part = dir.join("model-00002-of-00002.safetensors");
    let mut t = read_st(&part);
    let find = |t: &mut StTensors, name: &str| -> usize {
        t.iter()
            .position(|x| x.0 == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    match what {
        "scales-shape" => {
            let i = find(&mut t, "model.layers.3.mlp.experts.down_proj_scales");
            let (_, _, shape, bytes) = &mut t[i];
            // cat([s, s], dim=-1) of a [.., .., 1] tensor: each byte twice.
            *bytes = bytes.iter().flat_map(|b| [*b, *b]).collect();
            *shape.last_mut().unwrap() *= 2;
        }
        "blocks-dtype" => {
            let i = find(&mut t, "model.layers.3.mlp.experts.gate_up_proj_blocks");
            t[i].1 = "I8".into();
        }
        other => panic!("unknown modification {other}"),
    }
    write_st(&part, &t);
}

/// What each refusal's error must name (the tensor or the setting at fault).
fn refused_tensor(what: &str) -> &'static str {
    match what {
        "scales-shape" => "down_proj_scales",
        "blocks-dtype" => "gate_up_proj_blocks",
        "bits-3" => "3-bit",
        "no-g-idx" => "up_proj.g_idx",
        "strategy-channel" => "strategy",
        "no-weight-shape" => "up_proj.weight_shape",
        "nvfp4-scales-shape" => "up_proj.weight_scale",
        "k3-no-scale" => "experts.2.w2.weight_scale",
        "k3-no-expert" => "experts.3.w1.weight_packed",
        "k3-stray" => "shared_experts.up_proj.weight_packed",
        "mimo-no-scale" => "experts.2.down_proj.weight_scale",
        "mimo-no-expert" => "gate_proj",
        "mimo-stray" => "shared_up.weight_scale",
        "mimo-block-64" => "block size 64",
        other => panic!("unknown modification {other}"),
    }
}

fn quantize(model: &Model, ftype: &str) -> Result<Model, String> {
    quantize_with(model, ftype, false)
}

/// [`quantize`], with `--allow-requantize` for every type when `requantize` (as one-pass
/// `--outtype` quantization plans).
fn quantize_with(model: &Model, ftype: &str, requantize: bool) -> Result<Model, String> {
    let mut qo = QuantizeOptions::new(FileType::parse(ftype).unwrap());
    // As the generator runs llama-quantize: Q8_0 with --allow-requantize.
    qo.allow_requantize = requantize || ftype == "Q8_0";
    plan(model, &qo).map(|p| p.model).map_err(|e| e.to_string())
}

#[test]
fn prequantized_checkpoints_equal_the_reference() {
    let cases = read_json(&testdata("golden/prequant/cases.json"));
    let cases = cases.as_object().expect("cases.json is an object");
    for fx in FIXTURES {
        assert!(
            cases.values().any(|c| c["fixture"] == *fx),
            "{fx} has no cases"
        );
    }
    for (name, c) in cases {
        let fx = c["fixture"].as_str().unwrap_or_default();
        assert!(FIXTURES.contains(&fx), "{name}: fixture {fx} is not listed");
    }
    let work = scratch("prequant-golden");
    let (mut same, mut refused) = (0, 0);
    for (name, case) in cases {
        let field = |k: &str| case[k].as_str().unwrap_or_else(|| panic!("{name}: no {k}"));
        let (fx, outtype) = (field("fixture"), field("outtype"));
        let mut dir = fixture(fx);
        let what = case.get("modify").and_then(|m| m.as_str());
        if let Some(what) = what {
            dir = copy_named(&dir, &work.join("modified"), fx);
            modify(&dir, what);
        }
        let result = read_hf_dir(&dir, &fixture_options(fx, outtype));
        let quant = case.get("quantize").and_then(|q| q.as_str());
        let result = match (result, quant) {
            (Ok(conv), Some(q)) => quantize_with(&conv.model, q, case["requantize"] == true),
            (Ok(conv), None) => Ok(conv.model),
            (Err(e), _) => Err(e.to_string()),
        };
        if case["ok"] == false {
            let err = match result {
                Err(e) => e,
                Ok(_) => panic!(
                    "{name}: the reference refuses it ({}), we converted it",
                    case["error_tail"]
                ),
            };
            if let Some(what) = what {
                assert!(
                    err.contains(refused_tensor(what)),
                    "{name}: the error does not name the tensor: {err}"
                );
            }
            refused += 1;
            continue;
        }
        let model = result.unwrap_or_else(|e| panic!("{name}: failed: {e}"));
        let out = work.join("out.gguf");
        write_gguf(&model, &out).unwrap();
        assert_eq!(
            sha256_file(&out),
            field("sha256"),
            "{name}: differs from the reference"
        );
        std::fs::remove_file(&out).unwrap();
        same += 1;
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(refused >= 9, "{refused} refused cases");
    record(
        "prequant_golden",
        same + refused,
        "pre-quantized checkpoint conversions (and their llama-quantize outputs) matched \
         (sha256) or refused as by the reference",
        &[],
    );
}

/// The MXFP4 experts are written in MXFP4 whatever the outtype, the file type is
/// MOSTLY_MXFP4_MOE for the float outtypes (Q8_0 keeps its own), the default file name says
/// so, and the experts are computed a range of rows at a time: any split gives the whole.
#[test]
fn mxfp4_experts_stay_mxfp4_and_compute_by_rows() {
    let dir = fixture("gptoss-mxfp4");
    for (outtype, ft, label) in [
        ("f16", 38, "MXFP4_MOE"),
        ("bf16", 38, "MXFP4_MOE"),
        ("q8_0", 7, "Q8_0"),
    ] {
        let conv = read_hf_dir(&dir, &options(outtype)).unwrap();
        assert_eq!(conv.file_type, ft, "{outtype}");
        assert!(
            conv.default_file_name.contains(label),
            "{outtype}: {}",
            conv.default_file_name
        );
        let names: Vec<&str> = conv.model.tensors.iter().map(|t| t.name.as_str()).collect();
        // Repacked before everything else: down, then gate and up (file order of the scales).
        assert_eq!(
            &names[..3],
            [
                "blk.3.ffn_down_exps.weight",
                "blk.3.ffn_gate_exps.weight",
                "blk.3.ffn_up_exps.weight"
            ]
        );
        let mut split = 0;
        for t in &conv.model.tensors[..3] {
            assert_eq!(t.ty, GgmlType::MXFP4, "{}", t.name);
            assert_eq!(t.dims, [32, 32, 4], "{}", t.name);
            let TensorData::Derived(d) = &t.data else {
                panic!("{} is not computed", t.name)
            };
            let rows = d.rows().expect("by rows");
            let whole = d.compute().unwrap();
            assert_eq!(whole.len(), 4 * 32 * 17);
            let mut pieces = Vec::new();
            let mut start = 0;
            while start < rows.count {
                let end = (start + 5).min(rows.count);
                pieces.extend(d.compute_rows(start..end).unwrap());
                start = end;
            }
            assert!(pieces == whole, "{}: pieces differ", t.name);
            split += 1;
        }
        assert_eq!(split, 3);
    }
}

/// The gate/up split takes the even rows for gate and the odd ones for up: the MXFP4 bytes
/// of expert 0's first gate row and first up row are the source's rows 0 and 1, repacked.
#[test]
fn mxfp4_gate_and_up_are_the_interleaved_rows() {
    let dir = fixture("gptoss-mxfp4");
    let src = read_st(&dir.join("model-00002-of-00002.safetensors"));
    let get = |n: &str| {
        src.iter()
            .find(|t| t.0 == n)
            .unwrap_or_else(|| panic!("no {n}"))
            .3
            .clone()
    };
    let blocks = get("model.layers.3.mlp.experts.gate_up_proj_blocks");
    let scales = get("model.layers.3.mlp.experts.gate_up_proj_scales");
    let conv = read_hf_dir(&dir, &options("f16")).unwrap();
    let row = |name: &str| {
        let t = conv.model.tensors.iter().find(|t| t.name == name).unwrap();
        t.data.bytes().unwrap()[..17].to_vec()
    };
    for (name, src_row) in [
        ("blk.3.ffn_gate_exps.weight", 0usize),
        ("blk.3.ffn_up_exps.weight", 1),
    ] {
        let got = row(name);
        assert_eq!(got[0], scales[src_row], "{name}: exponent");
        let code = |i: usize| (blocks[src_row * 16 + i / 2] >> (4 * (i % 2))) & 15;
        for j in 0..16 {
            assert_eq!(got[1 + j], code(j) | (code(j + 16) << 4), "{name} byte {j}");
        }
    }
}

/// gguf-quantize reads the converted MXFP4 model as llama-quantize does: MXFP4_MOE keeps the
/// experts' bytes (same type: copied), requantizing them needs --allow-requantize.
#[test]
fn quantizing_an_mxfp4_model_follows_llama_quantize() {
    let conv = read_hf_dir(&fixture("gptoss-mxfp4"), &options("f16")).unwrap();
    let work = scratch("prequant-quantize");
    let out = work.join("f16.gguf");
    write_gguf(&conv.model, &out).unwrap();
    let file = GgufFile::open(&out).unwrap();
    let model = Model::from_gguf(&file);
    let q = quantize(&model, "MXFP4_MOE").unwrap();
    let experts = |m: &Model| -> Vec<Vec<u8>> {
        m.tensors
            .iter()
            .filter(|t| t.name.starts_with("blk.3.ffn_") && t.name.contains("_exps.weight"))
            .map(|t| t.data.bytes().unwrap().into_owned())
            .collect()
    };
    assert_eq!(experts(&q).len(), 3);
    assert!(experts(&q) == experts(&model), "MXFP4 experts changed");
    let err = quantize(&model, "Q4_K_M").unwrap_err();
    assert!(err.contains("mxfp4"), "{err}");
    let _ = std::fs::remove_dir_all(&work);
}

/// Dequantized GPTQ / pack-quantized matrices are computed a range of rows at a time (the q/k
/// ones through the head permutation): any split gives the whole tensor's bytes, for every
/// outtype; and they come after every other tensor, as the reference's `new_tensors`.
#[test]
fn int_weights_by_rows_equal_whole_tensors() {
    let mut split = 0;
    for fx in INT_FIXTURES {
        for outtype in ["f32", "f16", "q8_0"] {
            let conv = read_hf_dir(&fixture(fx), &options(outtype)).unwrap();
            let names: Vec<&str> = conv.model.tensors.iter().map(|t| t.name.as_str()).collect();
            // The seven projections of layer 2, last, in the order of their packed names.
            let first = names.len() - 7;
            assert_eq!(
                names[first..],
                [
                    "blk.2.ffn_down.weight",
                    "blk.2.ffn_gate.weight",
                    "blk.2.ffn_up.weight",
                    "blk.2.attn_k.weight",
                    "blk.2.attn_output.weight",
                    "blk.2.attn_q.weight",
                    "blk.2.attn_v.weight"
                ],
                "{fx}"
            );
            for t in &conv.model.tensors[first..] {
                let TensorData::Derived(d) = &t.data else {
                    panic!("{fx} {}: not computed", t.name)
                };
                let rows = d.rows().expect("by rows");
                let whole = d.compute().unwrap();
                let mut pieces = Vec::new();
                let mut start = 0;
                while start < rows.count {
                    let end = (start + 7).min(rows.count);
                    pieces.extend(d.compute_rows(start..end).unwrap());
                    start = end;
                }
                assert!(pieces == whole, "{fx} {outtype} {}: pieces differ", t.name);
                split += 1;
            }
        }
    }
    assert_eq!(split, 4 * 3 * 7);
}

/// ModelOpt NVFP4 weights are repacked into GGML NVFP4 first, in model order, each followed by
/// its non-trivial per-tensor factors (F32 `.scale`, `.input_scale`; v_proj's are 1 and not
/// written); the file type is MOSTLY_NVFP4 for the float outtypes; the blocks are
/// computed by rows.
#[test]
fn nvfp4_weights_are_repacked_first() {
    let dir = fixture("llama-bpe-nvfp4");
    for (outtype, ft, label) in [
        ("f16", 39, "NVFP4"),
        ("f32", 39, "NVFP4"),
        ("q8_0", 7, "Q8_0"),
    ] {
        let conv = read_hf_dir(&dir, &options(outtype)).unwrap();
        assert_eq!(conv.file_type, ft, "{outtype}");
        assert!(
            conv.default_file_name.contains(label),
            "{}",
            conv.default_file_name
        );
        let head: Vec<(&str, GgmlType)> = conv.model.tensors[..17]
            .iter()
            .map(|t| (t.name.as_str(), t.ty))
            .collect();
        let f = GgmlType::F32;
        let n = GgmlType::NVFP4;
        assert_eq!(
            head,
            [
                ("blk.2.ffn_down.weight", n),
                ("blk.2.ffn_down.scale", f),
                ("blk.2.ffn_down.input_scale", f),
                ("blk.2.ffn_gate.weight", n),
                ("blk.2.ffn_gate.scale", f),
                ("blk.2.ffn_gate.input_scale", f),
                ("blk.2.ffn_up.weight", n),
                ("blk.2.ffn_up.scale", f),
                ("blk.2.ffn_up.input_scale", f),
                ("blk.2.attn_k.weight", n),
                ("blk.2.attn_k.scale", f),
                ("blk.2.attn_k.input_scale", f),
                ("blk.2.attn_output.weight", n),
                ("blk.2.attn_output.scale", f),
                ("blk.2.attn_output.input_scale", f),
                ("blk.2.attn_q.weight", n),
                ("blk.2.attn_q.scale", f),
            ],
            "{outtype}"
        );
        assert_eq!(conv.model.tensors[18].name, "blk.2.attn_v.weight");
        assert_eq!(conv.model.tensors[19].name, "token_embd.weight");
        for t in conv
            .model
            .tensors
            .iter()
            .filter(|t| t.ty == GgmlType::NVFP4)
        {
            let TensorData::Derived(d) = &t.data else {
                panic!("{}", t.name)
            };
            let rows = d.rows().unwrap();
            let whole = d.compute().unwrap();
            let mut pieces = Vec::new();
            for r in 0..rows.count {
                pieces.extend(d.compute_rows(r..r + 1).unwrap());
            }
            assert!(pieces == whole, "{}", t.name);
        }
    }
}

/// Every row range of a derived tensor computes to the same bytes as the whole.
fn rows_equal_whole(t: &ggufkit::ir::Tensor) {
    let TensorData::Derived(d) = &t.data else {
        panic!("{}", t.name)
    };
    let rows = d.rows().unwrap();
    let whole = d.compute().unwrap();
    let mut pieces = Vec::new();
    for r in (0..rows.count).step_by(7) {
        pieces.extend(d.compute_rows(r..(r + 7).min(rows.count)).unwrap());
    }
    assert!(pieces == whole, "{}", t.name);
}

/// ModelOpt experts stored one per tensor are stacked per projection when the last expert of
/// it arrives (down, gate, up: the safetensors order of `experts.3.*`), sorted by expert, with
/// their per-expert factors as `[n_expert]` F32 tensors (down_proj's are all 1: none).
#[test]
fn nvfp4_experts_are_stacked_per_projection() {
    let conv = read_hf_dir(&fixture(UNLOADABLE), &fixture_options(UNLOADABLE, "f16")).unwrap();
    let head: Vec<(&str, GgmlType, Vec<u64>)> = conv.model.tensors[..5]
        .iter()
        .map(|t| (t.name.as_str(), t.ty, t.dims.clone()))
        .collect();
    let (n, f) = (GgmlType::NVFP4, GgmlType::F32);
    assert_eq!(
        head,
        [
            ("blk.2.ffn_down_exps.weight", n, vec![64, 64, 4]),
            ("blk.2.ffn_gate_exps.weight", n, vec![64, 64, 4]),
            ("blk.2.ffn_gate_exps.scale", f, vec![4]),
            ("blk.2.ffn_gate_exps.input_scale", f, vec![4]),
            ("blk.2.ffn_up_exps.weight", n, vec![64, 64, 4]),
        ]
    );
    for t in conv.model.tensors.iter().filter(|t| t.ty == n) {
        rows_equal_whole(t);
    }
    assert!(conv
        .model
        .metadata
        .get("general.tensor_extra.name")
        .is_none());
}

/// compressed-tensors' NVFP4 is the same model as ModelOpt's (its global scales are the
/// reciprocals): the same tensors in the same types and order; W4A16_NVFP4 weights are listed,
/// sorted, in `general.tensor_extra.name` with `prec_a4` false, and have no `input_scale`.
#[test]
fn nvfp4_compressed_tensors_and_w4a16() {
    let names = |fx: &str| -> Vec<(String, GgmlType)> {
        let conv = read_hf_dir(&fixture(fx), &options("f16")).unwrap();
        conv.model
            .tensors
            .iter()
            .map(|t| (t.name.clone(), t.ty))
            .collect()
    };
    assert_eq!(names("llama-bpe-nvfp4-ct"), names("llama-bpe-nvfp4"));
    let conv = read_hf_dir(&fixture("llama-bpe-nvfp4-w4a16"), &options("f16")).unwrap();
    assert!(!conv
        .model
        .tensors
        .iter()
        .any(|t| t.name.ends_with(".input_scale")));
    let md = &conv.model.metadata;
    let Some(ggufkit::gguf::Value::Array(ggufkit::gguf::ArrayValue::String(listed))) =
        md.get("general.tensor_extra.name")
    else {
        panic!("no general.tensor_extra.name")
    };
    let listed: Vec<String> = listed
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let mut want: Vec<String> = conv
        .model
        .tensors
        .iter()
        .filter(|t| t.ty == GgmlType::NVFP4)
        .map(|t| t.name.clone())
        .collect();
    want.sort();
    assert_eq!(listed, want);
    assert_eq!(
        md.get("general.tensor_extra.prec_a4"),
        Some(&ggufkit::gguf::Value::Array(
            ggufkit::gguf::ArrayValue::Bool(vec![false; 7])
        ))
    );
}

/// A quantization setting that is present but invalid is reported as invalid, at the key
/// where it is, never as missing.
#[test]
fn an_invalid_quantization_value_is_named_where_it_is() {
    let work = scratch("prequant-invalid-value");
    // (fixture, tag, the change to quantization_config, what the error says)
    type Case = (&'static str, &'static str, fn(&mut Json), &'static str);
    let cases: [Case; 3] = [
        (
            "llama-bpe-gptq4",
            "bits-string",
            |q| q["bits"] = Json::from("4"),
            "quantization_config.bits is \"4\"",
        ),
        (
            "llama-bpe-gptq4",
            "bits-negative",
            |q| q["bits"] = Json::from(-1),
            "quantization_config.bits is -1",
        ),
        (
            "llama-spm-fp8-block",
            "block",
            |q| {
                let g = q["config_groups"].as_object_mut().unwrap();
                let first = g.values_mut().next().unwrap();
                first["weights"]["block_structure"] = Json::from("big");
            },
            ".weights.block_structure is \"big\"",
        ),
    ];
    for (fixture_name, tag, change, want) in cases {
        let dir = work.join(tag);
        copy_tree(&fixture(fixture_name), &dir);
        edit_config(&dir, change);
        let Err(e) = read_hf_dir(&dir, &options("f16")) else {
            panic!("{tag}: accepted");
        };
        let e = e.to_string();
        assert!(e.contains(want), "{tag}: {e}");
        assert!(!e.contains("could not find"), "{tag}: {e}");
        assert!(!e.contains(".*."), "{tag}: {e}");
    }
}

/// Without `allow_unloadable` the 64-wide experts of a 32-wide model are refused, naming the
/// tensor, its shape and the shape the hyperparameters give it.
#[test]
fn experts_wider_than_the_model_are_refused_by_default() {
    let Err(e) = read_hf_dir(&fixture(UNLOADABLE), &options("f16")) else {
        panic!("{UNLOADABLE} converted without allow_unloadable");
    };
    let ggufkit_converters::ConvertError::HparamsContradictTensors { config, problems } = &e else {
        panic!("{UNLOADABLE}: {e}");
    };
    assert!(config.ends_with("config.json"), "{}", config.display());
    assert!(
        problems
            .iter()
            .any(|p| p.contains("blk.2.ffn_down_exps.weight")
                && p.contains("[64, 64, 4]")
                && p.contains("[32, 32, 4]")),
        "{problems:?}"
    );
}
