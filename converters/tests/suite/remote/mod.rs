//! `--remote`: models read over HTTP from a test server with the Hub's layout (started on
//! 127.0.0.1 by each test), converted byte-identically to the same files on disk, and every
//! misbehaving server a clear error naming the URL, within a bounded time.

mod families;
mod faults;
mod gguf_header;
mod plain_dir;
mod proxy;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ggufkit::pipeline::{self, ExecuteOptions, OutputPlan, ShardPlan, WriteOptions};
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_converters::remote::{
    fetch_snapshot, Client, Endpoint, RemoteError, RemoteOptions, RemoteSnapshot,
};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::hub_server::HubServer;
use ggufkit_testsupport::Scratch;

/// Options that keep a test short: quick retries, short timeouts, 1 MiB chunks (so the
/// fixtures' megabyte shards are read in several parallel ranges).
pub fn fast_options() -> RemoteOptions {
    RemoteOptions {
        connections: 4,
        attempts: 4,
        backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(5),
        chunk: 1 << 20,
        ..RemoteOptions::default()
    }
}

/// A client of `server` with `token`.
pub fn client(server: &HubServer, token: Option<&str>) -> Arc<Client> {
    let ep = Endpoint::new(&server.endpoint(), token.map(str::to_string)).unwrap();
    Arc::new(Client::new(ep, fast_options()))
}

/// A commit hash for a test repository.
pub fn commit_of(name: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(name.as_bytes())[..20]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// F32 conversion of `dir` written to bytes (the cheapest outtype).
pub fn convert(dir: &Path, out: &Path, unloadable: bool) -> Result<Vec<u8>, String> {
    // Fixtures without tokenizer files still compare their tensors and other metadata.
    let opts = HfOptions {
        outtype: OutType::F32,
        allow_missing_vocab: true,
        allow_unloadable: unloadable,
        ..HfOptions::default()
    };
    let conv = read_hf_dir(dir, &opts).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(out);
    // As the tools write it, without the fsync (hundreds of conversions on a shared disk).
    let plan = OutputPlan {
        shards: vec![ShardPlan {
            path: out.to_path_buf(),
            model: conv.model,
        }],
        options: WriteOptions {
            sync: false,
            ..WriteOptions::default()
        },
    };
    let (results, _) = pipeline::execute(&[plan], &ExecuteOptions::default(), &());
    for r in results {
        r.map_err(|e| e.to_string())?;
    }
    Ok(std::fs::read(out).unwrap())
}

/// The files of fixture `src` as a converter sees them (shared files resolved).
pub fn fixture_map(src: &Path) -> BTreeMap<String, Vec<u8>> {
    ggufkit_testsupport::paths::fixture_files(src)
        .into_iter()
        .map(|(rel, c)| (rel.to_string_lossy().replace('\\', "/"), c.bytes()))
        .collect()
}

/// The local conversion of `files` from a directory named like the snapshot directory (the
/// reference derives `general.*` names from the directory's name).
pub fn local(
    scratch: &Scratch,
    files: &BTreeMap<String, Vec<u8>>,
    commit: &str,
    unloadable: bool,
) -> Result<Vec<u8>, String> {
    let dir = scratch.path().join("local").join(commit);
    for (rel, bytes) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let r = convert(&dir, &scratch.path().join("local.gguf"), unloadable);
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// Fetches `id` from `server` into a cache in `scratch`.
pub fn snapshot(
    scratch: &Scratch,
    client: Arc<Client>,
    id: &str,
) -> Result<RemoteSnapshot, RemoteError> {
    fetch_snapshot(client, &scratch.path().join("cache"), id, None)
}

/// Fixture `name` served as `test/{name}`: the server, its snapshot and the scratch.
pub fn serve_fixture(name: &str) -> (HubServer, Scratch, BTreeMap<String, Vec<u8>>, String) {
    let server = HubServer::start();
    let scratch = ggufkit_testsupport::scratch(&format!("remote-{name}"));
    let files = fixture_map(&ggufkit_testsupport::testdata("hf").join(name));
    let commit = commit_of(name);
    server.add_repo(&format!("test/{name}"), &commit, files.clone());
    (server, scratch, files, commit)
}

/// The remote conversion's error, as text (the test checks it names the URL).
pub fn remote_error(r: Result<Vec<u8>, String>) -> String {
    match r {
        Ok(_) => panic!("the conversion succeeded against a misbehaving server"),
        Err(e) => e,
    }
}

/// Unused-import guard for the error type the helpers mention in docs.
#[allow(dead_code)]
fn _types(_: ConvertError) {}

/// One fixture converted from disk and through a remote path.
pub enum Outcome {
    /// The same bytes.
    Same,
    /// Both conversions refused the fixture.
    BothRefused,
    /// What differs.
    Differ(String),
}

/// The first-seed fixtures of `testdata/hf/` (each with a config.json; `-s2` is the same
/// family's second seed), sorted.
pub fn first_seed_fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(ggufkit_testsupport::testdata("hf"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("config.json").is_file())
        .filter(|e| !e.file_name().to_string_lossy().ends_with("-s2"))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `one` on every first-seed fixture with three workers (the server and the client
/// serve them at once, as a real run's ranges), each in its own scratch directory
/// `{tag}-{worker}`; `None` skips a fixture. Fails when a fixture differs or fewer than 80
/// are identical; returns the identical and refused-both-ways counts.
pub fn compare_first_seed_fixtures(
    tag: &str,
    one: impl Fn(&Scratch, &str) -> Option<Outcome> + Sync,
) -> (usize, usize) {
    let names = first_seed_fixtures();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes: Vec<(usize, usize, Vec<String>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..3)
            .map(|w| {
                let (names, next, one) = (&names, &next, &one);
                s.spawn(move || {
                    let scratch = ggufkit_testsupport::scratch(&format!("{tag}-{w}"));
                    let (mut same, mut both_failed, mut differ) = (0, 0, Vec::new());
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(name) = names.get(i) else { break };
                        match one(&scratch, name) {
                            Some(Outcome::Same) => same += 1,
                            Some(Outcome::BothRefused) => both_failed += 1,
                            Some(Outcome::Differ(d)) => differ.push(d),
                            None => {}
                        }
                    }
                    (same, both_failed, differ)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let same: usize = outcomes.iter().map(|o| o.0).sum();
    let both_failed: usize = outcomes.iter().map(|o| o.1).sum();
    let differ: Vec<String> = outcomes.into_iter().flat_map(|o| o.2).collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(
        same >= 80,
        "only {same} fixtures converted ({both_failed} failed both ways)"
    );
    (same, both_failed)
}
