//! LoRA adapters: `convert_lora_to_gguf` (and gguf-convert on an adapter directory) write
//! what llama.cpp's convert_lora_to_gguf.py wrote for the committed adapters
//! (testdata/lora, testdata/golden/lora/cases.json from conformance/make_lora_golden.py),
//! byte for byte, and fail where it failed.

use ggufkit_testsupport::golden::{copy_tree, read_json, scratch, sha256_file, testdata};

use std::path::Path;
use std::process::{Command, Output, Stdio};

const LORA: &str = env!("CARGO_BIN_EXE_convert_lora_to_gguf");
const CONVERT: &str = env!("CARGO_BIN_EXE_gguf-convert");

fn run(bin: &str, args: &[String], cwd: &Path) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn adapters_convert_as_the_reference_converts_them() {
    let runs = read_json(&testdata("golden/lora/cases.json"));
    let runs = runs.as_object().expect("cases.json is an object");
    assert!(runs.len() >= 18, "{} runs", runs.len());
    let root = scratch("lora-golden");
    let td = testdata("").display().to_string();
    let mut failures = Vec::new();
    for (name, r) in runs {
        let adapter = r["adapter"].as_str().unwrap();
        let work = root.join(name);
        copy_tree(&testdata(&format!("lora/{adapter}")), &work.join(adapter));
        let args: Vec<String> = r["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().replace("{testdata}/", &td))
            .collect();
        let o = run(LORA, &args, &work);
        let want_ok = r["status"] == 0;
        if o.status.success() != want_ok {
            failures.push(format!(
                "{name}: exit {:?}, the reference's {}: {}",
                o.status.code(),
                r["status"],
                String::from_utf8_lossy(&o.stderr)
            ));
            continue;
        }
        for (file, f) in r["files"].as_object().unwrap() {
            let path = work.join(file);
            if !path.is_file() {
                failures.push(format!("{name}: {file} not written"));
            } else if sha256_file(&path) != f["sha256"].as_str().unwrap() {
                failures.push(format!("{name}: {file} differs from the reference's"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// gguf-convert recognises an adapter directory; without --base it finds the base model
/// named by adapter_config.json as a directory (here relative to the working directory).
#[test]
fn gguf_convert_takes_adapters_and_finds_their_base() {
    let runs = read_json(&testdata("golden/lora/cases.json"));
    let want = runs["llama-lora-q8_0"]["files"]["out.gguf"]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let work = scratch("lora-base-lookup");
    copy_tree(&testdata("lora/llama-lora"), &work.join("llama-lora"));
    copy_tree(&testdata("hf/llama-spm"), &work.join("llama-spm"));
    let args: Vec<String> = ["llama-lora", "out.gguf", "--outtype", "q8_0"]
        .map(String::from)
        .to_vec();
    let o = run(CONVERT, &args, &work);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(sha256_file(&work.join("out.gguf")), want);
    // Quantized types have no adapter form; the base must exist.
    let o = run(
        CONVERT,
        &["llama-lora", "q.gguf", "--outtype", "q4_k_m"].map(String::from),
        &work,
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("LoRA adapter"));
    std::fs::remove_dir_all(work.join("llama-spm")).unwrap();
    // (An existing OUT would be refused before the adapter is read.)
    std::fs::remove_file(work.join("out.gguf")).unwrap();
    let o = run(CONVERT, &args, &work);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--base"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// What the reference stops on, refused with the tensor named: a tensor that is neither
/// half of a pair nor a norm, and half a pair.
#[test]
fn malformed_adapters_are_refused() {
    let work = scratch("lora-malformed");
    let src = testdata("lora/llama-lora/adapter_model.safetensors");
    let bytes = std::fs::read(&src).unwrap();
    // Rename a lora_B tensor in the header (same length): the pair loses its B half.
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = String::from_utf8(bytes[8..8 + header_len].to_vec()).unwrap();
    for (tag, from, to, needle) in [
        (
            "half",
            "layers.0.self_attn.q_proj.lora_B.weight",
            "layers.0.self_attn.q_proj.lora_X.weight",
            "unexpected tensor",
        ),
        (
            "embed",
            "model.layers.0.mlp.down_proj.lora_A.weight",
            "model.embed_tokens.weight.xxxxxxxxxxxxxxxx",
            "embeddings",
        ),
    ] {
        let dir = work.join(format!("bad-{tag}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            testdata("lora/llama-lora/adapter_config.json"),
            dir.join("adapter_config.json"),
        )
        .unwrap();
        assert_eq!(from.len(), to.len());
        let mut b = bytes.clone();
        let h = header.replacen(from, to, 1);
        b[8..8 + header_len].copy_from_slice(h.as_bytes());
        std::fs::write(dir.join("adapter_model.safetensors"), b).unwrap();
        let args = vec![
            dir.display().to_string(),
            "--base".into(),
            testdata("hf/llama-spm").display().to_string(),
            "--outfile".into(),
            work.join(format!("{tag}.gguf")).display().to_string(),
        ];
        let o = run(LORA, &args, &work);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{tag}: {err}");
        assert!(err.contains(needle), "{tag}: {err}");
        assert!(!work.join(format!("{tag}.gguf")).exists());
    }
}
