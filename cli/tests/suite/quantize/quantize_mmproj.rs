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

/// Nemotron Nano VL V2's projector (`nemotron-vl`): llama-quantize's Q4_K_M and Q8_0 of the
/// reference's f32 file (made with llama.cpp 0c1e570), byte for byte. Its Q2_K rule for the
/// fused `attn_qkv` reads layer 0's head counts, which a projector file (no
/// `clip.block_count`) lacks: llama-quantize aborts, gguf-quantize refuses naming the tensor
/// and writes nothing.
#[test]
fn radio_projector_quantizes_as_llama_quantize() {
    let work = scratch("q-mmproj-radio");
    let input = projector("nemotron-vl", &work);
    let status = read_json(&testdata("golden/nemotron-vl/status.json"));
    assert_eq!(
        sha256_file(&input),
        status["mmproj-f32"]["sha256"].as_str().unwrap()
    );
    for (ty, want) in [
        (
            "Q4_K_M",
            "4bb2b15b65c4c62d7b32d5a888f158daa84dcf3307dc3afa7bb7bf193073aacd",
        ),
        (
            "Q8_0",
            "fb1123b5132cbbafaf63e1ab2eb1da1611c3e5fa5959ddb8ade9d3cd21845e34",
        ),
    ] {
        let out = work.join(format!("{ty}.gguf"));
        let o = quantize(&input, &out, ty);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(sha256_file(&out), want, "{ty}");
    }
    let out = work.join("q2k.gguf");
    let o = quantize(&input, &out, "Q2_K");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "quantized: {err}");
    assert!(
        err.contains("attn_qkv.weight") && err.contains("head ratio"),
        "{err}"
    );
    assert!(!out.exists());
    // With the Parakeet tower, its four-dimensional convolutions change type: refused.
    let input = projector("nemotron-omni", &work);
    let out = work.join("omni-q8.gguf");
    let o = quantize(&input, &out, "Q8_0");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "quantized: {err}");
    assert!(err.contains("fourth dimension"), "{err}");
    assert!(!out.exists());
}

/// Granite Speech's projector (window-QFormer tensors whose names hold `attn_v.weight`):
/// llama-quantize's Q4_K_M, Q3_K_M and Q8_0 of the reference's f32 file (sha256 071669c1…,
/// `golden/granitespeech` `mmproj-f32`), made with llama.cpp 0c1e570, byte for byte; the
/// types whose `attn_v` rule reads layer 0's head ratio (Q2_K, Q2_K_S, IQ2_XXS, IQ3_S,
/// IQ4_NL) make llama-quantize abort on a file without layers, and gguf-quantize refuses
/// them, writing nothing.
#[test]
fn granite_speech_projector_quantizes_as_llama_quantize() {
    let work = scratch("q-mmproj-granitespeech");
    let input = projector("granitespeech", &work);
    let status = read_json(&testdata("golden/granitespeech/status.json"));
    assert_eq!(
        sha256_file(&input),
        status["mmproj-f32"]["sha256"].as_str().unwrap()
    );
    for (ty, want) in [
        (
            "Q4_K_M",
            "25af99cb1c0a1ae75b89a4a978f3f3f3e1f200ac60d3b1f2c55b08032e45cfcd",
        ),
        (
            "Q3_K_M",
            "410a54aff9475fd89718e47d08539edaa07a514bd2affb0e62d8fdcf3ec68397",
        ),
        (
            "Q8_0",
            "fb83b14ee331122ee618eb8641d16c47c02e4db22c5c5a4de5bee296e32a168f",
        ),
    ] {
        let out = work.join(format!("{ty}.gguf"));
        let o = quantize(&input, &out, ty);
        assert!(
            o.status.success(),
            "{ty}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(sha256_file(&out), want, "{ty}");
    }
    for ty in ["Q2_K", "Q2_K_S", "IQ2_XXS", "IQ3_S", "IQ4_NL"] {
        let out = work.join(format!("{ty}.gguf"));
        let o = quantize(&input, &out, ty);
        assert!(!o.status.success(), "{ty}: quantized");
        assert!(!out.exists(), "{ty}: left a file");
    }
}

/// LFM2-Audio's projector keeps its subsampling convolutions four-dimensional (F32): every
/// type that would change them makes llama-quantize abort, and gguf-quantize refuses.
#[test]
fn lfm2_audio_projector_is_refused_as_llama_quantize_aborts() {
    let work = scratch("q-mmproj-lfm2audio");
    let input = projector("lfm2audio", &work);
    for ty in ["Q4_K_M", "Q8_0"] {
        let out = work.join(format!("{ty}.gguf"));
        let o = quantize(&input, &out, ty);
        assert!(!o.status.success(), "{ty}: quantized");
        assert!(!out.exists(), "{ty}: left a file");
    }
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
