//! gguf-quantize on projector files (`--mmproj` outputs), as llama-quantize handles them.

use ggufkit_testsupport::golden as support;

use std::path::Path;
use std::process::{Command, Output};

use support::*;

const CONVERT: &str = env!("CARGO_BIN_EXE_gguf-convert");
const QUANTIZE: &str = env!("CARGO_BIN_EXE_gguf-quantize");

/// `gguf-convert FIXTURE --mmproj --outtype f32` into `work`; the projector file's path.
fn projector(fixture: &str, work: &Path) -> std::path::PathBuf {
    let dir = materialize_fixture(fixture, work);
    let out = work.join(format!("{fixture}-mmproj-f32.gguf"));
    let o = Command::new(CONVERT)
        .arg(&dir)
        .args(["--mmproj", "--outtype", "f32", "--outfile"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn quantize(input: &Path, out: &Path, ty: &str) -> Output {
    Command::new(QUANTIZE)
        .arg(input)
        .arg(out)
        .arg(ty)
        .output()
        .unwrap()
}

/// llama-quantize converts only the first three dimensions of a tensor and then aborts on
/// its size check when a tensor with a fourth dimension changes type (Gemma 4's and Gemma
/// 3n's convolution kernels, kept in F32 by the converter): gguf-quantize refuses such a
/// file naming the tensor, and writes nothing.
#[test]
fn a_four_dimensional_tensor_that_changes_type_is_refused() {
    let work = scratch("q-mmproj-4d");
    let input = projector("gemma4-vl", &work);
    let out = work.join("q8.gguf");
    let o = quantize(&input, &out, "Q8_0");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "quantized: {err}");
    assert!(
        err.contains("a.conv1d.0.weight") && err.contains("fourth dimension of 4"),
        "{err}"
    );
    assert!(!out.exists());
}

/// Gemma 4 Unified's projector (no four-dimensional tensor): llama-quantize's Q4_K_M of the
/// reference's f32 file (sha256 274de418…, `golden/gemma4unified-vl` `mmproj-f32`), made with
/// llama.cpp 0c1e570, byte for byte.
#[test]
fn a_projector_without_four_dimensional_tensors_quantizes_as_llama_quantize() {
    let work = scratch("q-mmproj-unified");
    let input = projector("gemma4unified-vl", &work);
    let status = read_json(&testdata("golden/gemma4unified-vl/status.json"));
    assert_eq!(
        sha256_file(&input),
        status["mmproj-f32"]["sha256"].as_str().unwrap()
    );
    let out = work.join("q4km.gguf");
    let o = quantize(&input, &out, "Q4_K_M");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        sha256_file(&out),
        "1b7682a1558641d32aa13314ed74f9462c275d2257ab6ef978c0d5bd38e14b27"
    );
}

/// MiMo-V2.5's projector (two encoders; a four-dimensional patch embedding llama-quantize
/// leaves as it is, three-dimensional codebook and code-embedding tables kept F32): Q4_K_M and
/// Q8_0 of the reference's f32 file (`golden/mimo-vl` `mmproj-f32`) are llama-quantize's
/// (llama.cpp 0c1e570) byte for byte. Q2_K's rule for `attn_v` reads the head counts of layer
/// 0, which a projector file has none of: llama-quantize aborts there, gguf-quantize refuses
/// naming the tensor and writes nothing.
#[test]
fn mimo_projector_quantizes_as_llama_quantize() {
    let work = scratch("q-mmproj-mimo");
    let input = projector("mimo-vl", &work);
    let status = read_json(&testdata("golden/mimo-vl/status.json"));
    assert_eq!(
        sha256_file(&input),
        status["mmproj-f32"]["sha256"].as_str().unwrap()
    );
    for (ty, sha) in [
        (
            "Q4_K_M",
            "882590b7365701972ed25222e7a2461eacb6aae4054036956b3c21838d94774b",
        ),
        (
            "Q8_0",
            "91795d787945b281303361ccd9da5943d66f4efa2bfc035f966ba4339d5b5552",
        ),
    ] {
        let out = work.join(format!("{ty}.gguf"));
        let o = quantize(&input, &out, ty);
        assert!(
            o.status.success(),
            "{ty}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(sha256_file(&out), sha, "{ty}");
    }
    let out = work.join("q2k.gguf");
    let o = quantize(&input, &out, "Q2_K");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "quantized: {err}");
    assert!(
        err.contains("a.blk.0.attn_v.weight") && err.contains("no layers"),
        "{err}"
    );
    assert!(!out.exists());
}
