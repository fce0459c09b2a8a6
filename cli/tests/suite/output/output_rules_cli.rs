//! gguf-convert's outputs under the output-path rules (README, Security): option files are
//! inputs too, split outputs are written one shard at a time, and the batch runner's own
//! files (jobs file, report, state) can never be replaced by an output.

use ggufkit_testsupport::golden as support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temps(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".ggufkit-tmp."))
        .collect()
}

/// The llama-spm fixture, copied into `dir` (outputs may be written beside it).
fn model(dir: &Path) -> PathBuf {
    let src = testdata("hf/llama-spm");
    let dst = dir.join("llama-spm");
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
        }
    }
    dst
}

#[test]
fn option_files_are_inputs_and_are_never_replaced() {
    let dir = scratch("conv-rules-inputs");
    let m = model(&dir);
    let meta = dir.join("meta.json");
    std::fs::write(&meta, br#"{"general.author": "x"}"#).unwrap();
    let o = run(&[
        s(&m),
        s(&meta),
        "--metadata",
        s(&meta),
        "--outtype",
        "f16",
        "-f",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("input of this run"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&meta).unwrap(), br#"{"general.author": "x"}"#);
    // A model file under another name (a hard link) is refused too.
    let hard = dir.join("hard.gguf");
    std::fs::hard_link(m.join("config.json"), &hard).unwrap();
    let o = run(&[s(&m), s(&hard), "--outtype", "f16", "-f"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(temps(&dir).is_empty());
}

#[test]
fn split_zero_means_no_split_as_in_the_reference() {
    let dir = scratch("conv-rules-split0");
    let m = model(&dir);
    let plain = dir.join("plain.gguf");
    let zero = dir.join("zero.gguf");
    let o = run(&[s(&m), s(&plain), "--outtype", "f16", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        s(&m),
        s(&zero),
        "--outtype",
        "f16",
        "-q",
        "--split-max-tensors",
        "0",
        "--split-max-size",
        "0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&plain).unwrap(),
        std::fs::read(&zero).unwrap()
    );
}

/// Many shards, one file at a time: under an address-space limit that a writer holding a
/// buffer and a flushing thread per shard exceeds, every shard appears and no temporary file
/// is left.
#[cfg(target_os = "linux")]
#[test]
fn many_shards_are_written_one_at_a_time() {
    let dir = scratch("conv-rules-shards");
    let m = model(&dir);
    let out = dir.join("sp.gguf");
    let script = format!(
        "ulimit -v {} && exec \"$0\" \"$1\" \"$2\" --outtype f16 -q --split-max-tensors 1",
        300 * 1024
    );
    // glibc reserves 64 MB of address space per malloc arena and makes one per thread that
    // contends for a lock, up to 8 per core: how many depends on timing, and on a loaded
    // machine the limit was hit by arenas alone. One arena keeps the limit a test of the
    // writer.
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .arg(&m)
        .arg(&out)
        .env("MALLOC_ARENA_MAX", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let shards: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("sp-"))
        .collect();
    assert_eq!(shards.len(), 21);
    assert!(temps(&dir).is_empty());
}

#[test]
fn batch_files_are_inputs_and_the_state_name_is_reserved() {
    let dir = scratch("conv-rules-batch");
    let m = model(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // An output named like the jobs file, and one named like the state file.
    let jobs = out.join("jobs.toml");
    let text = format!(
        "outdir = \"{}\"\n[[job]]\nsource = \"{}\"\noutputs = [{{ type = \"f16\", name = \"jobs.toml\" }}, {{ type = \"q8_0\", name = \".ggufkit-batch.json\" }}, \"bf16\"]\n",
        s(&out),
        s(&m)
    );
    std::fs::write(&jobs, &text).unwrap();
    let o = run(&["--batch", s(&jobs), "-q", "--force"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    // Quiet, but the failures are still said.
    assert!(err.contains("input of this run"), "{err}");
    assert!(err.contains("reserved for the batch state"), "{err}");
    assert_eq!(std::fs::read_to_string(&jobs).unwrap(), text);
    // The third output was written and recorded in a state file that is valid JSON.
    assert!(std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().ends_with("BF16.gguf")));
    let state = std::fs::read(out.join(".ggufkit-batch.json")).unwrap();
    let state: serde_json::Value = serde_json::from_slice(&state).unwrap();
    assert_eq!(state["outputs"].as_object().unwrap().len(), 1, "{state}");
    assert!(temps(&out).is_empty());
}

#[test]
fn a_state_path_that_is_a_directory_fails_cleanly() {
    let dir = scratch("conv-rules-statedir");
    let m = model(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(out.join(".ggufkit-batch.json")).unwrap();
    let o = run(&[
        s(&m),
        "--outtype",
        "f16,q8_0",
        "--outdir",
        s(&out),
        "-q",
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("directory"), "{}", stderr(&o));
    assert!(temps(&out).is_empty(), "{:?}", temps(&out));
}

/// Item 1 for the converter: with -f, a character device OUT is written in place and stays
/// a device (/dev/null takes the bytes; /dev/full reports the full disk), never renamed over.
#[cfg(unix)]
#[test]
fn a_character_device_out_is_written_in_place_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("conv-rules-dev");
    let m = model(&dir);
    for dev in ["/dev/null", "/dev/full"] {
        let before = std::fs::symlink_metadata(dev).ok();
        let Some(before) = before.filter(|b| b.file_type().is_char_device()) else {
            eprintln!("skipped: {dev} is not a character device here");
            continue;
        };
        let writable = std::fs::OpenOptions::new().write(true).open(dev).is_ok();
        if !writable {
            eprintln!("skipped: {dev} is not writable here");
            continue;
        }
        let o = run(&[s(&m), "--outfile", dev, "--outtype", "f16", "-f", "-q"]);
        if dev == "/dev/null" {
            assert!(o.status.success(), "{dev}: {}", stderr(&o));
        } else {
            assert_eq!(o.status.code(), Some(1), "{dev}: {}", stderr(&o));
            assert!(stderr(&o).contains("/dev/full"), "{}", stderr(&o));
        }
        let after = std::fs::symlink_metadata(dev).unwrap();
        assert!(after.file_type().is_char_device(), "{dev} was replaced");
        use std::os::unix::fs::MetadataExt;
        assert_eq!(after.rdev(), before.rdev(), "{dev} is another device now");
        // Nothing left in /dev by the run (a temporary file beside the target).
        assert!(temps(Path::new("/dev")).is_empty());
    }
}

/// Item 1 for the converter: a symlinked OUT is written through (its target gets the bytes,
/// the link stays a link); a dangling one is refused and creates nothing.
#[cfg(unix)]
#[test]
fn a_symlinked_out_is_written_through_and_stays_a_link() {
    let dir = scratch("conv-rules-symlink");
    let m = model(&dir);
    let real = dir.join("real.gguf");
    std::fs::write(&real, b"old").unwrap();
    let link = dir.join("link.gguf");
    std::os::unix::fs::symlink("real.gguf", &link).unwrap();
    let o = run(&[s(&m), "--outfile", s(&link), "--outtype", "f16", "-f", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read(&real).unwrap().starts_with(b"GGUF"));
    // The same bytes as a plain output.
    let plain = dir.join("plain.gguf");
    let o = run(&[s(&m), "--outfile", s(&plain), "--outtype", "f16", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&real).unwrap(),
        std::fs::read(&plain).unwrap()
    );
    let dangling = dir.join("dangling.gguf");
    std::os::unix::fs::symlink("nowhere.gguf", &dangling).unwrap();
    let o = run(&[
        s(&m),
        "--outfile",
        s(&dangling),
        "--outtype",
        "f16",
        "-f",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("symlink"), "{}", stderr(&o));
    assert!(!dir.join("nowhere.gguf").exists());
    assert!(temps(&dir).is_empty());
}

/// A LoRA adapter is converted with its base model's files as inputs: an OUT that is one of
/// them (given by --base, or found through adapter_config.json) is refused with -f too.
#[test]
fn a_lora_base_models_files_are_inputs() {
    let dir = scratch("conv-rules-lora-base");
    let adapter = dir.join("llama-lora");
    copy_tree(&testdata("lora/llama-lora"), &adapter);
    let base = model(&dir);
    for target in [
        "config.json",
        "model-00001-of-00002.safetensors",
        "tokenizer.json",
    ] {
        let victim = base.join(target);
        let before = std::fs::read(&victim).unwrap();
        let o = run(&[
            s(&adapter),
            "--base",
            s(&base),
            "--outfile",
            s(&victim),
            "--outtype",
            "f16",
            "-f",
            "-q",
        ]);
        assert_eq!(o.status.code(), Some(1), "{target}: {}", stderr(&o));
        assert!(stderr(&o).contains("input of this run"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&victim).unwrap(), before, "{target} replaced");
    }
    // Found through base_model_name_or_path (relative to the working directory).
    let victim = base.join("config.json");
    let before = std::fs::read(&victim).unwrap();
    let o = Command::new(BIN)
        .current_dir(&dir)
        .args([
            "llama-lora",
            "--outfile",
            "llama-spm/config.json",
            "--outtype",
            "f16",
            "-f",
            "-q",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("input of this run"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), before);
    assert!(temps(&base).is_empty());
}

/// The files a HuggingFace conversion reads below the model directory are inputs too: the
/// extra chat templates and the sentence-transformers modules' configs.
#[test]
fn files_read_below_the_model_directory_are_inputs() {
    let dir = scratch("conv-rules-subdirs");
    let m = model(&dir);
    std::fs::create_dir_all(m.join("additional_chat_templates")).unwrap();
    let extra = m.join("additional_chat_templates/tool_use.jinja");
    std::fs::write(&extra, "{{ tools }}").unwrap();
    std::fs::create_dir_all(m.join("1_Pooling")).unwrap();
    let pooling = m.join("1_Pooling/config.json");
    std::fs::write(&pooling, r#"{"pooling_mode_mean_tokens": true}"#).unwrap();
    std::fs::write(
        m.join("modules.json"),
        r#"[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]"#,
    )
    .unwrap();
    for victim in [&extra, &pooling] {
        let before = std::fs::read(victim).unwrap();
        let o = run(&[
            s(&m),
            "--outfile",
            s(victim),
            "--outtype",
            "f16",
            "-f",
            "-q",
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("input of this run"), "{}", stderr(&o));
        assert_eq!(std::fs::read(victim).unwrap(), before);
    }
}

/// A batch job's own option files are inputs too: an output named like the job's
/// `metadata` file is refused, and the file stays as it was.
#[test]
fn a_batch_jobs_metadata_file_is_an_input() {
    let dir = scratch("conv-rules-batch-meta");
    let m = model(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let meta = out.join("meta.json");
    let meta_text = br#"{"general.author": "x"}"#;
    std::fs::write(&meta, meta_text).unwrap();
    let jobs = dir.join("jobs.toml");
    let text = format!(
        "outdir = \"{}\"\n[[job]]\nsource = \"{}\"\nmetadata = \"{}\"\noutputs = [{{ type = \"f16\", name = \"meta.json\" }}]\n",
        s(&out),
        s(&m),
        s(&meta)
    );
    std::fs::write(&jobs, &text).unwrap();
    let o = run(&["--batch", s(&jobs), "-q", "--force"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("input of this run"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&meta).unwrap(), meta_text);
    assert!(temps(&out).is_empty());
}
