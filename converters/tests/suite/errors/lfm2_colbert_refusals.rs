//! LFM2 embedding checkpoints (`Lfm2Model`, `Lfm2BidirectionalModel`) the reference fails on
//! are refused naming the file or value at fault: a `1_Dense/model.safetensors` without the
//! projection's `linear.weight` (the class indexes it), a classifier pooling other than
//! `cls` / `mean`. Without the Dense file the model converts without the projection.

use std::path::Path;

use ggufkit_converters::hf::{read_hf_dir, HfOptions};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::golden::{f32s, safetensors};
use ggufkit_testsupport::paths::materialize_fixture;
use ggufkit_testsupport::scratch;

/// The committed ColBERT fixture, copied into a fresh scratch directory and changed by
/// `edit`, then converted.
fn convert(edit: impl FnOnce(&Path)) -> Result<ggufkit_converters::hf::HfConversion, ConvertError> {
    let work = scratch("lfm2-colbert-refusal");
    let dir = materialize_fixture("lfm2-colbert", work.path());
    edit(&dir);
    read_hf_dir(&dir, &HfOptions::default())
}

#[test]
fn a_dense_file_without_the_projection_names_the_tensor_and_file() {
    let e = convert(|d| {
        let bytes = safetensors(&[("linear.bias", "F32", &[6], f32s(&[0.0; 6]))]);
        std::fs::write(d.join("1_Dense/model.safetensors"), bytes).unwrap();
    })
    .err()
    .expect("the reference refuses a Dense file without linear.weight");
    let text = e.to_string();
    assert!(text.contains("linear.weight"), "{text}");
    assert!(text.contains("1_Dense"), "{text}");
}

#[test]
fn a_classifier_pooling_other_than_cls_or_mean_is_refused() {
    let e = convert(|d| {
        let path = d.join("config.json");
        let mut cfg: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        cfg["classifier_pooling"] = "max".into();
        std::fs::write(&path, cfg.to_string()).unwrap();
    })
    .err()
    .expect("the reference refuses classifier_pooling max");
    let text = e.to_string();
    assert!(text.contains("classifier_pooling"), "{text}");
}

#[test]
fn without_the_dense_file_there_is_no_projection() {
    let conv = convert(|d| std::fs::remove_dir_all(d.join("1_Dense")).unwrap()).unwrap();
    assert!(!conv
        .model
        .tensors
        .iter()
        .any(|t| t.name == "dense_2.weight"));
    assert!(!conv.model.metadata.contains("lfm2.embedding_length_out"));
}
