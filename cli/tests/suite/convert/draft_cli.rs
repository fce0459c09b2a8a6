//! Standalone speculative-decoding drafts through gguf-convert: the reference's command
//! line (`--target-model-dir`, or its prefix `--target-model`), a batch job's `target`, and
//! a draft without its target refused. The files must be the reference's
//! (testdata/golden/<draft>/status.json, made by conformance/make_draft_fixtures.py).

use ggufkit_testsupport::golden as support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The reference's sha256 of draft `fixture` converted to `outtype`.
fn golden_sha(fixture: &str, outtype: &str) -> String {
    let status = read_json(&testdata(&format!("golden/{fixture}/status.json")));
    status[format!("convert-{outtype}")]["sha256"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Both spellings of the reference's flag write the reference's file.
#[test]
fn the_reference_command_line_converts_a_draft() {
    let work = scratch("draft-cli");
    let draft = materialize_fixture("eagle3", &work);
    let target = materialize_fixture("llama-spm", &work);
    for (flag, t) in [("--target-model-dir", "f16"), ("--target-model", "q8_0")] {
        let out = work.join(format!("{t}.gguf"));
        let o = run(
            &[
                draft.to_str().unwrap(),
                flag,
                target.to_str().unwrap(),
                "--outtype",
                t,
                "--outfile",
                out.to_str().unwrap(),
            ],
            &work,
        );
        assert!(
            o.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(sha256_file(&out), golden_sha("eagle3", t), "{flag}");
    }
}

/// Without its target a draft is refused (the reference fails too), naming the flag, and
/// nothing is written.
#[test]
fn a_draft_without_its_target_is_refused() {
    let work = scratch("draft-cli-no-target");
    let draft = materialize_fixture("eagle3", &work);
    let o = run(&[draft.to_str().unwrap(), "--outfile", "no.gguf"], &work);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--target-model-dir"), "{err}");
    assert!(!work.join("no.gguf").exists());
}

/// A batch job's `target` is the draft's `--target-model-dir` (relative to the jobs file),
/// and the target model itself is another job of the same batch.
#[test]
fn a_batch_job_converts_a_draft_with_its_target() {
    let work = scratch("draft-batch");
    materialize_fixture("eagle3-spec", &work);
    materialize_fixture("llama-bpe", &work);
    std::fs::write(
        work.join("jobs.toml"),
        "outdir = \"out\"\n\
         [[job]]\nsource = \"llama-bpe\"\noutputs = [{ type = \"f16\", name = \"target.gguf\" }]\n\
         [[job]]\nsource = \"eagle3-spec\"\ntarget = \"llama-bpe\"\n\
         outputs = [{ type = \"bf16\", name = \"draft-bf16.gguf\" }, \
         { type = \"f32\", name = \"draft-f32.gguf\" }]\n",
    )
    .unwrap();
    let o = run(&["--batch", "jobs.toml"], &work);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = work.join("out");
    assert!(out.join("target.gguf").is_file());
    assert_eq!(
        sha256_file(&out.join("draft-bf16.gguf")),
        golden_sha("eagle3-spec", "bf16")
    );
    assert_eq!(
        sha256_file(&out.join("draft-f32.gguf")),
        golden_sha("eagle3-spec", "f32")
    );
}
