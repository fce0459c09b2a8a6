//! `gguf-convert --remote org/name` against a test server with the Hub's layout: the
//! reference's command line, its default file name and `general.name`, the bytes of the
//! local conversion of the same files; `HF_HUB_OFFLINE` and a bad id refused before any
//! request.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use ggufkit_testsupport::hub_server::HubServer;
use ggufkit_testsupport::scratch;

/// The binary under test.
pub(super) const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");
/// The commit every test repository is pinned at.
pub(super) const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// `gguf-convert ARGS` in `cwd`, with no Hub variable of the caller's environment but `env`.
pub(super) fn run(args: &[&str], env: &[(&str, &str)], cwd: &Path) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(cwd).stdin(Stdio::null());
    for k in [
        "HF_ENDPOINT",
        "HF_TOKEN",
        "HF_HUB_OFFLINE",
        "HF_HOME",
        "HF_HUB_CACHE",
    ] {
        c.env_remove(k);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// The llama-spm fixture's files, as a test repository holds them.
pub(super) fn fixture_files() -> BTreeMap<String, Vec<u8>> {
    ggufkit_testsupport::paths::fixture_files(&ggufkit_testsupport::testdata("hf/llama-spm"))
        .into_iter()
        .map(|(rel, c)| (rel.to_string_lossy().into_owned(), c.bytes()))
        .collect()
}

#[test]
fn the_references_remote_command_line_writes_the_local_bytes() {
    let server = HubServer::start();
    server.add_repo("test/llama-spm", COMMIT, fixture_files());
    let root = scratch("remote-cli");
    let cache = root.join("hub");
    let endpoint = server.endpoint();
    let env = [
        ("HF_ENDPOINT", endpoint.as_str()),
        ("HF_HUB_CACHE", cache.to_str().unwrap()),
        ("HF_TOKEN", "hf_test"),
    ];
    let o = run(
        &["--remote", "test/llama-spm", "--outtype", "f32"],
        &env,
        &root,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("fetched at"), "no transfer summary: {err}");
    // The reference's default name for a remote model.
    let remote = std::fs::read(root.join("test-llama-spm-f32.gguf")).unwrap();
    // The same files on disk, in a directory named like the snapshot (the reference derives
    // general.finetune from it), with the id as the model name.
    let local_dir = root.join("local").join(COMMIT);
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
            "--model-name",
            "test/llama-spm",
        ],
        &[],
        &root,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(remote == std::fs::read(root.join("local.gguf")).unwrap());
    let f = ggufkit::gguf::GgufFile::open(&root.join("test-llama-spm-f32.gguf")).unwrap();
    assert_eq!(
        f.metadata.get_str("general.name").unwrap(),
        "test/llama-spm"
    );
    // Nothing but the small files was stored.
    let snap = cache.join("models--test--llama-spm/snapshots").join(COMMIT);
    assert!(snap.join("config.json").is_file());
    assert!(!snap.join("model-00001-of-00002.safetensors").exists());
    // A revision by commit, and --revision, pin the same snapshot.
    let o = run(
        &[
            "--remote",
            &format!("test/llama-spm@{COMMIT}"),
            "--outtype",
            "f32",
            "pinned.gguf",
        ],
        &env,
        &root,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(remote == std::fs::read(root.join("pinned.gguf")).unwrap());
}

#[test]
fn offline_and_bad_ids_are_refused_before_any_request() {
    let server = HubServer::start();
    let root = scratch("remote-cli-refused");
    let endpoint = server.endpoint();
    let o = run(
        &["--remote", "test/llama-spm", "--outtype", "f32"],
        &[("HF_ENDPOINT", &endpoint), ("HF_HUB_OFFLINE", "1")],
        &root,
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("HF_HUB_OFFLINE is set"));
    let o = run(
        &["--remote", "../not/an/id", "--outtype", "f32"],
        &[
            ("HF_ENDPOINT", &endpoint),
            ("HF_HUB_CACHE", root.to_str().unwrap()),
        ],
        &root,
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a HuggingFace model id"));
    let o = run(
        &["--remote", "test/missing", "--outtype", "f32"],
        &[
            ("HF_ENDPOINT", &endpoint),
            ("HF_HUB_CACHE", root.to_str().unwrap()),
        ],
        &root,
    );
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("HTTP 404") && err.contains("/api/models/test/missing/revision/main"),
        "{err}"
    );
    // Batches do not take remote sources yet: a usage error, not a silent local run.
    std::fs::write(
        root.join("jobs.toml"),
        "[[job]]\nsource = \"x\"\noutputs = [\"f32\"]\n",
    )
    .unwrap();
    let o = run(
        &["--remote", "--batch", "jobs.toml"],
        &[("HF_ENDPOINT", &endpoint)],
        &root,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--remote does not take --batch"));
    assert!(server
        .log()
        .iter()
        .all(|l| !l.path.contains("llama-spm") && !l.path.contains("not")));
    assert!(std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().ends_with(".gguf")));
}
