//! What the golden suites of the conversion fixtures share: a conversion written (quantized
//! by llama-quantize's rules when the variant is one of its outputs) and its manifest read
//! back, the golden manifest a variant is compared with, and the report of one comparison.

use std::path::Path;

use ggufkit::gguf::GgufFile;
use ggufkit::ir::Model;
use ggufkit::manifest::manifest;
use ggufkit::quantize::{plan, FileType, QuantizeOptions};
use ggufkit_testsupport::golden::read_json;
use ggufkit_testsupport::write_gguf;
use serde_json::Value as Json;

/// Writes `model` to `out` (quantized to the file type `quant` first when it is set,
/// requantizing allowed) and returns the file's manifest; the file is removed.
pub(super) fn written_manifest(
    model: Model,
    quant: Option<&str>,
    out: &Path,
) -> Result<Json, String> {
    let model = match quant {
        None => model,
        Some(q) => {
            let mut qo = QuantizeOptions::new(FileType::parse(q).unwrap());
            qo.allow_requantize = true;
            plan(&model, &qo).map_err(|e| e.to_string())?.model
        }
    };
    write_gguf(&model, out).map_err(|e| e.to_string())?;
    let file = GgufFile::open(out).map_err(|e| e.to_string())?;
    let m = manifest(&file, out, None);
    let _ = std::fs::remove_file(out);
    Ok(m)
}

/// The golden manifest of `variant` in the directory `golden`: its own, or the one of the
/// variant its `status` entry says it is identical to.
pub(super) fn golden_manifest(golden: &Path, variant: &str, status: &Json) -> Json {
    let name = match status["identical_to"][0].as_str() {
        Some(v) => format!("{v}.json"),
        None => format!("{variant}.json"),
    };
    read_json(&golden.join(name))
}

/// Prints whether `variant` of `fixture` is byte-identical, and returns its differences,
/// each prefixed with the variant.
pub(super) fn report(fixture: &str, variant: &str, differences: Vec<String>) -> Vec<String> {
    let verdict = if differences.is_empty() {
        "byte-identical"
    } else {
        "MISMATCH"
    };
    eprintln!("{fixture} {variant}: {verdict}");
    differences
        .into_iter()
        .map(|x| format!("{variant}: {x}"))
        .collect()
}
