//! The Python `gguf` package reads every file our writer produces exactly as we do: the same
//! keys, types and values, the same tensors, shapes, offsets and bytes.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use ggufkit::gguf::{ArrayValue, GgufFile, GgufString, Value};
use ggufkit::ir::{Convert, Model, Tensor, TensorData};
use ggufkit::manifest::sha256_hex;
use ggufkit::quantizers::GgmlType;
use ggufkit::write::{write_model, WriteOptions};
use serde_json::{json, Value as Json};
use support::*;

/// Our view in the script's format.
fn our_view(path: &Path) -> Json {
    let f = GgufFile::open(path).unwrap();
    let kv: Vec<Json> = f
        .metadata
        .iter()
        .map(|(k, v)| match v {
            Value::Array(a) => {
                let mut bytes = Vec::new();
                a.encode_items(&mut bytes);
                json!([k, "ARRAY", {"array_type": a.elem_type().name(), "len": a.len(), "sha256": sha256_hex(&bytes)}])
            }
            v => ggufkit::manifest::kv_entry(k, v),
        })
        .collect();
    let tensors: Vec<Json> = f
        .tensors
        .iter()
        .map(|t| {
            json!([
                t.name,
                format!("{:?}", t.ty),
                t.dims,
                t.offset,
                t.nbytes,
                sha256_hex(f.tensor_data(t))
            ])
        })
        .collect();
    json!({"file": path.to_str().unwrap(), "version": f.version, "data_offset": f.data_offset, "kv": kv, "tensors": tensors})
}

/// A model that uses every scalar type, every array element type gguf-py reads, and several
/// tensor types, including a quantized tensor computed through the IR.
fn kitchen_sink() -> Model {
    let mut m = Model::default();
    let md = &mut m.metadata;
    md.set("general.architecture", "llama");
    md.set("t.u8", Value::U8(200));
    md.set("t.i8", Value::I8(-100));
    md.set("t.u16", Value::U16(65000));
    md.set("t.i16", Value::I16(-32000));
    md.set("t.u32", Value::U32(4_000_000_000));
    md.set("t.i32", Value::I32(-2_000_000_000));
    md.set("t.f32", Value::F32(1e-5));
    md.set("t.bool", Value::Bool(true));
    md.set("t.str", "héllo ✓");
    md.set("t.u64", Value::U64(u64::MAX - 1));
    md.set("t.i64", Value::I64(i64::MIN + 1));
    md.set("t.f64", Value::F64(-2.5e300));
    md.set(
        "t.arr.str",
        Value::Array(ArrayValue::String(
            (0..40)
                .map(|i| GgufString::from(format!("tok{i}")))
                .collect(),
        )),
    );
    md.set(
        "t.arr.f32",
        Value::Array(ArrayValue::F32((0..40).map(|i| i as f32 * 0.5).collect())),
    );
    md.set("t.arr.i32", Value::Array(ArrayValue::I32(vec![1, -2, 3])));
    md.set("t.arr.u8", Value::Array(ArrayValue::U8(vec![1, 2, 255])));
    md.set(
        "t.arr.bool",
        Value::Array(ArrayValue::Bool(vec![true, false])),
    );
    md.set(
        "t.arr.u64",
        Value::Array(ArrayValue::U64(vec![1, u64::MAX])),
    );
    md.set("t.arr.f64", Value::Array(ArrayValue::F64(vec![0.1, -0.2])));
    md.set("t.arr.i16", Value::Array(ArrayValue::I16(vec![-1, 7])));
    let floats: Vec<f32> = (0..256 * 4)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 17.0)
        .collect();
    let f32_bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let src = TensorData::Owned(Arc::new(f32_bytes));
    m.tensors.push(Tensor {
        name: "a.f32".into(),
        dims: vec![256, 4],
        ty: GgmlType::F32,
        data: src.clone(),
    });
    for (name, ty) in [
        ("b.f16", GgmlType::F16),
        ("c.q8_0", GgmlType::Q8_0),
        ("d.q4_0", GgmlType::Q4_0),
        ("e.bf16", GgmlType::BF16),
    ] {
        let conv = Convert::new(src.clone(), GgmlType::F32, ty, 256, 4, None).unwrap();
        m.tensors.push(Tensor {
            name: name.into(),
            dims: vec![256, 4],
            ty,
            data: TensorData::Derived(Arc::new(conv)),
        });
    }
    m.tensors.push(Tensor {
        name: "f.i32".into(),
        dims: vec![3],
        ty: GgmlType::I32,
        data: TensorData::Owned(Arc::new(vec![1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0])),
    });
    m
}

/// The Python that has the `gguf` package: `$GGUFKIT_PYTHON` (scripts/test points it at the
/// venv it makes), else `python3`.
fn python() -> String {
    std::env::var("GGUFKIT_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn python_views(files: &[PathBuf]) -> Vec<Json> {
    let script = root().join("tests/interop/gguf_py_view.py");
    let py = python();
    let out = Command::new(&py)
        .arg(&script)
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("gguf-py interop: cannot run {py}: {e}"));
    assert!(
        out.status.code() != Some(3),
        "gguf-py interop: {} (set GGUFKIT_PYTHON to a Python with `gguf` and `numpy`; \
         scripts/test makes one)",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    assert!(
        out.status.success(),
        "gguf_py_view.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
#[ignore = "needs Python with the gguf package (GGUFKIT_PYTHON); scripts/test provides a venv"]
fn gguf_py_reads_our_files_as_we_do() {
    let dir = scratch("interop");
    let mut files = Vec::new();
    let sink = dir.join("kitchen-sink.gguf");
    write_model(&kitchen_sink(), &sink, &WriteOptions::default()).unwrap();
    files.push(sink);
    for (f, _) in conv::core_golden_files() {
        let parsed = GgufFile::open(&f).unwrap();
        let out = dir.join(f.file_name().unwrap());
        write_model(&Model::from_gguf(&parsed), &out, &WriteOptions::default()).unwrap();
        files.push(out);
    }
    // Quantized outputs of several types (what gguf-quantize writes).
    let f32_src = GgufFile::open(&conv::golden_gguf("llama-spm", "convert-f32")).unwrap();
    let src_model = Model::from_gguf(&f32_src);
    for t in ["Q4_K_M", "Q6_K", "Q5_0", "IQ4_XS", "TQ2_0", "BF16"] {
        let ftype = ggufkit::quantize::FileType::parse(t).unwrap();
        let p =
            ggufkit::quantize::plan(&src_model, &ggufkit::quantize::QuantizeOptions::new(ftype))
                .unwrap();
        let out = dir.join(format!("spm-{t}.gguf"));
        write_model(&p.model, &out, &WriteOptions::default()).unwrap();
        files.push(out);
    }
    let views = python_views(&files);
    assert_eq!(views.len(), files.len());
    for (f, theirs) in files.iter().zip(views) {
        let ours = our_view(f);
        for k in ["version", "data_offset"] {
            assert_eq!(ours[k], theirs[k], "{}: {k}", f.display());
        }
        let (a, b) = (
            ours["kv"].as_array().unwrap(),
            theirs["kv"].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{}: kv count", f.display());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x, y, "{}: kv", f.display());
        }
        let (a, b) = (
            ours["tensors"].as_array().unwrap(),
            theirs["tensors"].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{}: tensor count", f.display());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x, y, "{}: tensor", f.display());
        }
    }
    record(
        "interop-gguf-py",
        files.len(),
        "files read by gguf-py exactly as by ggufkit",
        &[],
    );
}
