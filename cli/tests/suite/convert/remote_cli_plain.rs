//! `gguf-convert https://host/dir/`: a plain HTTP directory of HF files converts to the bytes
//! of the same files on disk in a directory of the same name, writes `./<name>-{ftype}.gguf`
//! by default and leaves no temporary files; a directory without config.json is an input
//! error naming the URL.

use std::path::Path;
use std::process::Output;

use ggufkit_testsupport::hub_server::HubServer;
use ggufkit_testsupport::scratch;

use super::remote_cli::{self, fixture_files, COMMIT};

/// `gguf-convert ARGS` in `cwd` with its temporary files under `tmp`.
fn run(args: &[&str], cwd: &Path, tmp: &Path) -> Output {
    remote_cli::run(args, &[("TMPDIR", tmp.to_str().unwrap())], cwd)
}

#[test]
fn a_plain_directory_converts_to_the_local_bytes() {
    let server = HubServer::start();
    server.add_repo("test/llama-spm", COMMIT, fixture_files());
    let root = scratch("remote-cli-plain");
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let url = server.plain_url("test/llama-spm");
    let o = run(&[&url, "--outtype", "f32"], &root, &tmp);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("fetched at"), "no transfer summary: {err}");
    let remote = std::fs::read(root.join("llama-spm-f32.gguf")).unwrap();
    let local_dir = root.join("local").join("llama-spm");
    for (rel, bytes) in fixture_files() {
        std::fs::create_dir_all(local_dir.join(&rel).parent().unwrap()).unwrap();
        std::fs::write(local_dir.join(&rel), bytes).unwrap();
    }
    let o = run(
        &[
            local_dir.to_str().unwrap(),
            "local.gguf",
            "--outtype",
            "f32",
        ],
        &root,
        &tmp,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(remote == std::fs::read(root.join("local.gguf")).unwrap());
    // The small files' temporary directory is gone.
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    // No config.json: an input error (exit 3) naming the file's URL; no output.
    let mut files = fixture_files();
    files.remove("config.json");
    server.add_repo("test/broken", COMMIT, files);
    let url = server.plain_url("test/broken");
    let o = run(&[&url, "--outtype", "f32"], &root, &tmp);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!("{url}config.json")) && err.contains("404"),
        "{err}"
    );
    assert!(!root.join("broken-f32.gguf").exists());
    assert!(std::fs::read_dir(&tmp).unwrap().next().is_none());
}
