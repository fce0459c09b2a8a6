//! What the golden suites of the conversion fixtures share: a conversion written (quantized
//! by llama-quantize's rules when the variant is one of its outputs) and its manifest read
//! back, the golden manifest a variant is compared with, the report of one comparison, and
//! the run of a fixture's six text variants.

use std::path::Path;

use ggufkit::gguf::GgufFile;
use ggufkit::ir::Model;
use ggufkit::manifest::{diff_manifests, manifest};
use ggufkit::quantize::{plan, FileType, QuantizeOptions};
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_testsupport::golden::{as_read_back, read_json};
use ggufkit_testsupport::write_gguf;
use serde_json::Value as Json;

/// The text variants of a generated fixture's golden data: (variant, outtype, the
/// llama-quantize file type it was quantized to from the f32 file).
pub(super) const TEXT_VARIANTS: [(&str, &str, Option<&str>); 6] = [
    ("convert-f32", "f32", None),
    ("convert-f16", "f16", None),
    ("convert-bf16", "bf16", None),
    ("convert-q8_0", "q8_0", None),
    ("convert-auto", "auto", None),
    ("quant-Q4_K_M", "f32", Some("q4_k_m")),
];

/// Converts the fixture copy `dir` to every [`TEXT_VARIANTS`] entry with `options(outtype)`
/// (Q4_K_M in one pass), writing under `work`, and compares each with its golden manifest
/// in `golden` (whose `status.json` must list all six). A variant the reference refused must
/// be refused too, leaving no file; without an f32 file llama-quantize had nothing to read,
/// so the one pass must refuse as the reference's conversion did. Returns the differences.
pub(super) fn check_text_variants(
    fixture: &str,
    golden: &Path,
    dir: &Path,
    work: &Path,
    options: impl Fn(OutType) -> HfOptions,
) -> Vec<String> {
    let status = read_json(&golden.join("status.json"));
    let f32_refused = status["convert-f32"]["ok"] == Json::Bool(false);
    let refused_f32 = serde_json::json!({"ok": false, "via": "convert-f32"});
    let mut problems = Vec::new();
    for (variant, t, quant) in TEXT_VARIANTS {
        let st = match (&status[variant], variant) {
            (st, _) if !st.is_null() => st,
            (_, "quant-Q4_K_M") if f32_refused => &refused_f32,
            _ => {
                problems.push(format!("{variant}: not in status.json"));
                continue;
            }
        };
        let out = work.join(format!("{variant}.gguf"));
        let ours = read_hf_dir(dir, &options(OutType::parse(t).unwrap()))
            .map_err(|e| e.to_string())
            .and_then(|c| written_manifest(c.model, quant, &out));
        if st["ok"] != Json::Bool(true) {
            match ours {
                Ok(_) => problems.push(format!("{variant}: the reference failed, we converted")),
                Err(e) => eprintln!("{fixture} {variant}: refused like the reference ({e})"),
            }
            assert!(!out.exists(), "{variant}: a refused conversion left a file");
            continue;
        }
        let want = golden_manifest(golden, variant, st);
        match ours {
            Err(e) => problems.push(format!("{variant}: conversion failed: {e}")),
            Ok(m) => problems.extend(report(
                fixture,
                variant,
                diff_manifests(&as_read_back(&m), &want),
            )),
        }
    }
    problems
}

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
