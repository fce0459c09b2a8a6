//! Batch jobs with remote sources (`hf://org/name`, a plain `http://` directory): a server
//! that fails the second job, then the batch resumed: the finished outputs are known from the
//! batch state and their weights are not read again; a Hub job writes the bytes of
//! `gguf-convert --remote`.

use std::path::Path;

use ggufkit_testsupport::hub_server::HubServer;
use ggufkit_testsupport::scratch;

use super::remote_cli::{fixture_files, run, COMMIT};

/// Whether the server log (from entry `from` on) holds a range of `repo`'s weights that
/// starts past their first MiB (a tensor read, not a header).
fn read_tensors(server: &HubServer, from: usize, repo: &str) -> bool {
    server.log()[from..].iter().any(|l| {
        l.path.contains(repo)
            && l.range.as_deref().is_some_and(|r| {
                let start: u64 = r
                    .trim_start_matches("bytes=")
                    .split('-')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                start >= 1 << 20
            })
    })
}

#[test]
fn a_batch_of_remote_sources_resumes_after_a_failed_job_without_reading_finished_ones() {
    let server = HubServer::start();
    server.add_repo("test/a", COMMIT, fixture_files());
    server.add_repo("test/c", COMMIT, fixture_files());
    let root = scratch("remote-cli-batch");
    let cache = root.join("hub");
    let endpoint = server.endpoint();
    let env = [
        ("HF_ENDPOINT", endpoint.as_str()),
        ("HF_HUB_CACHE", cache.to_str().unwrap()),
    ];
    let jobs = format!(
        "outdir = \"out\"\n\
         [[job]]\nsource = \"hf://test/a\"\noutputs = [{{ type = \"f32\", name = \"a.gguf\" }}]\n\
         [[job]]\nsource = \"hf://test/b\"\noutputs = [{{ type = \"f32\", name = \"b.gguf\" }}]\n\
         [[job]]\nsource = \"{}\"\noutputs = [{{ type = \"f32\", name = \"c.gguf\" }}]\n",
        server.plain_url("test/c")
    );
    std::fs::write(root.join("jobs.toml"), jobs).unwrap();
    // test/b is not on the server yet: its job fails, the others are written.
    let o = run(&["--batch", "jobs.toml"], &env, &root);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let out = root.join("out");
    assert!(
        out.join("a.gguf").is_file() && out.join("c.gguf").is_file(),
        "{err}"
    );
    assert!(!out.join("b.gguf").exists());
    assert!(
        read_tensors(&server, 0, "test/a"),
        "the first run read no tensor of test/a"
    );
    // A Hub job writes what `gguf-convert --remote` writes.
    let o = run(
        &["--remote", "test/a", "--outtype", "f32", "single.gguf"],
        &env,
        &root,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = std::fs::read(out.join("a.gguf")).unwrap();
    assert!(a == std::fs::read(root.join("single.gguf")).unwrap());
    let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let (ma, mc) = (mtime(&out.join("a.gguf")), mtime(&out.join("c.gguf")));
    // The server has test/b now: the batch resumed writes only b.gguf.
    server.add_repo("test/b", COMMIT, fixture_files());
    let before = server.log().len();
    let o = run(&["--batch", "jobs.toml"], &env, &root);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("1 output(s) written, 2 up to date"), "{err}");
    assert!(read_tensors(&server, before, "test/b"));
    let o = run(
        &["--remote", "test/b", "--outtype", "f32", "single-b.gguf"],
        &env,
        &root,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(out.join("b.gguf")).unwrap()
            == std::fs::read(root.join("single-b.gguf")).unwrap()
    );
    assert_eq!(mtime(&out.join("a.gguf")), ma);
    assert_eq!(mtime(&out.join("c.gguf")), mc);
    for repo in ["test/a", "test/c"] {
        assert!(
            !read_tensors(&server, before, repo),
            "the resumed batch read {repo}'s tensors again"
        );
    }
}
