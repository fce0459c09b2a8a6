//! Writing one model: to a file through the output engine ([`write_model`], a plan of one
//! output handed to [`crate::pipeline::execute`]), or to any writer ([`write_stream`], the
//! engine's streaming loop without files, for in-memory checks).

use std::io::Write;
use std::path::Path;

use crate::gguf::{layout_in, reorder, DataWriter, GgufError, Layout};
use crate::ir::{DataError, Model, Tensor};
use crate::pipeline::stream::stream;
use crate::pipeline::{self, ExecuteOptions, OutputPlan, PipelineError, ShardPlan};

pub use crate::pipeline::WriteOptions;

/// Writes `model` to `target` (one file, crash-safe: see [`crate::output`]) exactly as the
/// tools do, through [`crate::pipeline::execute`], and returns the layout written.
pub fn write_model(
    model: &Model,
    target: &Path,
    opts: &WriteOptions,
) -> Result<Layout, PipelineError> {
    let plan = layout_in(&model.metadata, &model.headers(), opts.byte_order)
        .map_err(|e| e.with_path(target))?;
    let output = OutputPlan {
        shards: vec![ShardPlan {
            path: target.to_path_buf(),
            model: model.clone(),
        }],
        options: opts.clone(),
    };
    let (results, _) = pipeline::execute(&[output], &ExecuteOptions::default(), &());
    results.into_iter().next().unwrap_or_else(|| {
        Err(PipelineError::Internal(
            "no result for the one output".into(),
        ))
    })?;
    Ok(plan)
}

/// Writes a model laid out as `plan` to any writer: the header, then the tensors streamed by
/// the engine's loop ([`crate::pipeline::stream`]) with `opts`' window and byte orders.
/// Creates no file and checks no output rule.
pub fn write_stream<W: Write + Send>(
    model: &Model,
    plan: &Layout,
    out: &mut W,
    opts: &WriteOptions,
) -> Result<(), PipelineError> {
    out.write_all(&plan.header)
        .map_err(|source| GgufError::Io { path: None, source })?;
    let tensors: Vec<&Tensor> = model.tensors.iter().collect();
    let mut data_writer = DataWriter::default();
    stream(&tensors, &plan.sizes, opts.window_bytes, |piece, data| {
        let t = tensors[piece.tensor];
        let bytes = reorder(t.ty, opts.data_order, opts.byte_order, data);
        match data_writer.put(out, plan, piece.tensor, &bytes, piece.last) {
            Ok(_) => Ok(()),
            Err(GgufError::Invalid(msg)) => Err(PipelineError::Data {
                tensor: t.name.clone(),
                error: DataError(msg),
            }),
            Err(e) => Err(e.into()),
        }
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ggufkit_quantizers::GgmlType;

    use super::*;
    use crate::gguf::layout;
    use crate::gguf::Metadata;
    use crate::ir::{Convert, TensorData};
    use crate::pipeline::stream::{piece_target, pieces};

    /// Deterministic noise.
    fn values(n: usize, seed: u32) -> Vec<f32> {
        let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x as f32 / u32::MAX as f32) - 0.5
            })
            .collect()
    }

    fn f32_bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Tensors split into pieces of rows give exactly the bytes of whole-tensor computation,
    /// across matrix boundaries (a per-matrix imatrix) and for plain copies.
    #[test]
    fn pieces_of_rows_write_the_same_bytes_as_whole_tensors() {
        let (ne0, ne1, ne2) = (512usize, 700usize, 3usize);
        let src = f32_bytes(&values(ne0 * ne1 * ne2, 7));
        let imatrix: Vec<f32> = values(ne0 * ne2, 9).iter().map(|v| v.abs()).collect();
        let convert = Convert::new(
            TensorData::Owned(Arc::new(src.clone())),
            GgmlType::F32,
            GgmlType::Q4_K,
            ne0,
            ne1,
            Some(Arc::new(imatrix.clone())),
        )
        .unwrap();
        // A conversion of a transform computed by rows (a converter's stage, quantized in the
        // same pass) is computed by rows too.
        let stage = Convert::new(
            TensorData::Owned(Arc::new(src.clone())),
            GgmlType::F32,
            GgmlType::F16,
            ne0,
            ne1,
            None,
        )
        .unwrap();
        let staged = Convert::new(
            TensorData::Derived(Arc::new(stage)),
            GgmlType::F16,
            GgmlType::Q4_K,
            ne0,
            ne1,
            Some(Arc::new(imatrix)),
        )
        .unwrap();
        assert!(crate::ir::Derive::rows(&staged).is_some());
        let model = Model {
            metadata: Metadata::default(),
            tensors: vec![
                Tensor {
                    name: "staged".into(),
                    dims: vec![ne0 as u64, ne1 as u64, ne2 as u64],
                    ty: GgmlType::Q4_K,
                    data: TensorData::Derived(Arc::new(staged)),
                },
                Tensor {
                    name: "experts".into(),
                    dims: vec![ne0 as u64, ne1 as u64, ne2 as u64],
                    ty: GgmlType::Q4_K,
                    data: TensorData::Derived(Arc::new(convert)),
                },
                Tensor {
                    name: "copy".into(),
                    dims: vec![ne0 as u64, (ne1 * ne2) as u64],
                    ty: GgmlType::F32,
                    data: TensorData::Owned(Arc::new(src)),
                },
            ],
        };
        let plan = layout(&model.metadata, &model.headers()).unwrap();
        let mut expected = plan.header.clone();
        for (i, t) in model.tensors.iter().enumerate() {
            let b = t.data.bytes().unwrap();
            expected.extend_from_slice(&b);
            let pad = (plan.alignment - plan.sizes[i] % plan.alignment) % plan.alignment;
            expected.resize(expected.len() + pad as usize, 0);
        }
        for window in [1u64, 3 << 20, 1 << 30] {
            let tensors: Vec<&Tensor> = model.tensors.iter().collect();
            let split = pieces(&tensors, &plan.sizes, piece_target(window));
            if window < 1 << 30 {
                assert!(split.len() > 4, "window {window}: {} pieces", split.len());
            }
            let mut got = Vec::new();
            let opts = WriteOptions {
                window_bytes: window,
                ..Default::default()
            };
            write_stream(&model, &plan, &mut got, &opts).unwrap();
            assert!(got == expected, "window {window}: bytes differ");
            // Into a file: each thread writes its pieces at their place; with a digest, one
            // writer writes them in order.
            let dir = tempfile::tempdir().unwrap();
            for digest in [false, true] {
                let target = dir.path().join(format!("out-{digest}.gguf"));
                let opts = WriteOptions {
                    window_bytes: window,
                    digest,
                    ..Default::default()
                };
                write_model(&model, &target, &opts).unwrap();
                let got = std::fs::read(&target).unwrap();
                assert!(
                    got == expected,
                    "window {window}, digest {digest}: bytes differ"
                );
            }
        }
    }

    /// A tensor that produces more bytes than its layout plans is refused by the threads that
    /// write in place (before its bytes land on the next tensor's) and by the ordered writer,
    /// naming the tensor, and leaves no file behind.
    #[test]
    fn an_oversized_tensor_is_refused_and_leaves_no_file() {
        let model = Model {
            metadata: Metadata::default(),
            tensors: vec![Tensor {
                name: "too_long".into(),
                dims: vec![4],
                ty: GgmlType::F32,
                data: TensorData::Owned(Arc::new(vec![0u8; 20])),
            }],
        };
        let dir = tempfile::tempdir().unwrap();
        for digest in [false, true] {
            let target = dir.path().join(format!("out-{digest}.gguf"));
            let opts = WriteOptions {
                digest,
                ..Default::default()
            };
            let err = write_model(&model, &target, &opts).unwrap_err().to_string();
            assert!(err.contains("too_long"), "digest {digest}: {err}");
            assert!(
                err.contains("20 bytes, 16 were planned"),
                "digest {digest}: {err}"
            );
            assert!(
                !target.exists(),
                "digest {digest}: a partial output was left"
            );
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }

    /// A tensor with a zero-length row (ne0 = 0) has no row layout; writing it must not
    /// divide by zero (found by the gguf_parse fuzz target;
    /// testdata/fuzz-regressions/gguf_parse/write-zero-row-size.gguf).
    #[test]
    fn zero_length_rows_are_written_whole() {
        let model = Model {
            metadata: Metadata::default(),
            tensors: vec![Tensor {
                name: "empty".into(),
                dims: vec![0, 7],
                ty: GgmlType::F32,
                data: TensorData::Owned(Arc::new(Vec::new())),
            }],
        };
        let plan = layout(&model.metadata, &model.headers()).unwrap();
        let mut out = Vec::new();
        write_stream(&model, &plan, &mut out, &WriteOptions::default()).unwrap();
        assert_eq!(out, plan.header);
        let file = crate::gguf::GgufFile::parse(crate::mapped::FileBytes::from_vec(
            std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/testdata/fuzz-regressions/gguf_parse/write-zero-row-size.gguf"
            ))
            .unwrap(),
        ))
        .unwrap();
        let m = Model::from_gguf(&file);
        let plan = layout(&m.metadata, &m.headers()).unwrap();
        let mut out = Vec::new();
        write_stream(&m, &plan, &mut out, &WriteOptions::default()).unwrap();
    }
}
