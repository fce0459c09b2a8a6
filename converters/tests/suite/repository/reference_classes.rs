//! `gguf-convert --list-architectures` names every HF class llama.cpp's converter registers
//! (`testdata/reference-classes.json`, extracted from the reference's source by
//! `conformance/extract_reference_classes.py`), and says for each whether ggufkit converts
//! it; an unconverted class the reference knows is refused as "not yet", not as unknown.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ggufkit_converters::hf::{architecture_rows, reference, ArchitectureRow, Status};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::golden::scratch;

/// The reference's two maps, class → converter module, from testdata.
fn reference_maps() -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/reference-classes.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let map = |k: &str| -> BTreeMap<String, String> {
        serde_json::from_value(v[k].clone()).unwrap_or_else(|e| panic!("{path:?} {k}: {e}"))
    };
    (map("text"), map("mmproj"))
}

#[test]
fn the_crate_lists_are_the_reference_maps() {
    let (text, mmproj) = reference_maps();
    assert!(
        text.len() > 250 && mmproj.len() > 60,
        "{} {}",
        text.len(),
        mmproj.len()
    );
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    let hint = "update converters/src/hf/reference.rs to testdata/reference-classes.json \
                (made by conformance/extract_reference_classes.py)";
    assert_eq!(reference::TEXT_CLASSES, names(&text), "{hint}");
    assert_eq!(reference::MMPROJ_CLASSES, names(&mmproj), "{hint}");
}

#[test]
fn every_reference_class_is_listed_with_its_status() {
    let (text, mmproj) = reference_maps();
    let rows = architecture_rows();
    let by_name: BTreeMap<&str, &ArchitectureRow> = rows.iter().map(|r| (r.hf, r)).collect();
    assert_eq!(by_name.len(), rows.len(), "a class is listed twice");
    for class in text.keys() {
        let r = by_name
            .get(class.as_str())
            .unwrap_or_else(|| panic!("{class} is not listed"));
        let want = if reference::text_refusal(class).is_some() {
            Status::Refused
        } else if r.gguf.is_some() {
            Status::Converted
        } else {
            Status::NotYet
        };
        assert_eq!(r.text_status, want, "{class}");
    }
    for class in mmproj.keys() {
        let r = by_name
            .get(class.as_str())
            .unwrap_or_else(|| panic!("{class} is not listed"));
        let want = if r.mmproj.is_some() {
            Status::Converted
        } else {
            Status::NotYet
        };
        assert_eq!(r.mmproj_status, want, "{class}");
    }
    // Nothing ggufkit converts is outside the reference's maps: every class is the
    // reference's, converted as it converts it.
    for r in &rows {
        assert!(
            text.contains_key(r.hf) || mmproj.contains_key(r.hf),
            "{} is not a class of llama.cpp's converter",
            r.hf
        );
        if r.gguf.is_some() {
            assert!(
                text.contains_key(r.hf),
                "{}: text model the reference lacks",
                r.hf
            );
        }
        if r.mmproj.is_some() {
            assert!(
                mmproj.contains_key(r.hf),
                "{}: projector the reference lacks",
                r.hf
            );
        }
        if !text.contains_key(r.hf) {
            assert_eq!(r.text_status, Status::None, "{}", r.hf);
        }
        if !mmproj.contains_key(r.hf) {
            assert_eq!(r.mmproj_status, Status::None, "{}", r.hf);
        }
    }
}

/// A checkpoint of a class only the reference converts is refused as "not yet"; an unknown
/// class is refused as unsupported with the nearest names.
#[test]
fn a_reference_class_not_converted_yet_is_refused_as_not_yet() {
    let pending = architecture_rows()
        .into_iter()
        .find(|r| r.text_status == Status::NotYet)
        .map(|r| r.hf);
    let dir = scratch("reference-classes");
    let convert = |class: &str| {
        let cfg = serde_json::json!({"architectures": [class], "model_type": "x"});
        std::fs::write(dir.join("config.json"), cfg.to_string()).unwrap();
        ggufkit_converters::hf::read_hf_dir(&dir, &Default::default())
            .err()
            .unwrap_or_else(|| panic!("{class} converted"))
    };
    if let Some(class) = pending {
        let err = convert(class);
        assert!(
            matches!(&err, ConvertError::ArchitectureNotYet { arch } if arch == class),
            "{err}"
        );
        assert!(err.to_string().contains("not yet by ggufkit"), "{err}");
    }
    // A class without a text decoder is refused as having none (a class whose family
    // refuses every checkpoint is refused by its family, as the golden tests check).
    for (class, why) in reference::TEXT_REFUSED {
        if architecture_rows()
            .iter()
            .any(|r| r.hf == *class && r.gguf.is_some())
        {
            continue;
        }
        let err = convert(class);
        assert!(
            matches!(&err, ConvertError::NoTextModel { arch, why: w } if arch == class && w == why),
            "{err}"
        );
    }
    let err = convert("NoSuchModelForCausalLM");
    assert!(
        matches!(&err, ConvertError::UnsupportedArchitecture { arch, .. } if arch == "NoSuchModelForCausalLM"),
        "{err}"
    );
}
