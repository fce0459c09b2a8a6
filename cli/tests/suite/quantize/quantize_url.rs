//! gguf-quantize with a GGUF given by URL (a plain HTTP directory on the test server): the
//! tensors are read by range requests into the engine, the output is the local run's bytes;
//! a dropped connection is resumed, a file replaced mid-run or a range ignored is an error
//! naming the URL, and a server that dies mid-run leaves no output and an existing one
//! untouched.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use ggufkit_testsupport::golden as conv;
use ggufkit_testsupport::hub_server::{Faults, HubServer};
use ggufkit_testsupport::scratch;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-quantize");

/// The llama-spm f32 conversion served as `{endpoint}/plain/test/gguf/model-f32.gguf`.
fn serve() -> (HubServer, String, std::path::PathBuf) {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let server = HubServer::start();
    let files = BTreeMap::from([("model-f32.gguf".to_string(), std::fs::read(&input).unwrap())]);
    server.add_repo(
        "test/gguf",
        "0123456789abcdef0123456789abcdef01234567",
        files,
    );
    let url = format!("{}model-f32.gguf", server.plain_url("test/gguf"));
    (server, url, input)
}

fn quantize(input: &str, out: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(BIN);
    c.args([input, out.to_str().unwrap(), "Q4_K_M"])
        .stdin(Stdio::null())
        .env_remove("HF_ENDPOINT")
        .env_remove("HF_TOKEN");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// The files left in `dir` besides `keep` (a temporary output would be one).
fn others(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

#[test]
fn a_gguf_by_url_quantizes_to_the_local_bytes_and_resumes_dropped_ranges() {
    let (server, url, input) = serve();
    let dir = scratch("q-url");
    let local = dir.join("local.gguf");
    let o = quantize(input.to_str().unwrap(), &local, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let remote = dir.join("remote.gguf");
    let o = quantize(&url, &remote, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("fetched at"), "no transfer summary: {err}");
    let want = std::fs::read(&local).unwrap();
    assert!(
        std::fs::read(&remote).unwrap() == want,
        "the URL's output differs"
    );
    // Connections dropped mid-body: resumed where the last byte arrived, the same bytes.
    server.set_faults(Faults {
        drop_mid_body: 3,
        drop_after_bytes: 1000,
        ..Faults::default()
    });
    let resumed = dir.join("resumed.gguf");
    let o = quantize(&url, &resumed, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(&resumed).unwrap() == want,
        "a resumed run differs"
    );
    assert!(
        server
            .log()
            .iter()
            .filter_map(|l| l.range.as_deref())
            .any(|r| r.split('-').next().unwrap().ends_with("1000")),
        "no range resumed at byte 1000"
    );
}

#[test]
fn a_replaced_file_or_an_ignored_range_is_an_error_naming_the_url() {
    let (server, url, _) = serve();
    let dir = scratch("q-url-faults");
    // The ETag changes after the header was read: the tensors would mix two files.
    server.set_faults(Faults {
        replace_after: Some(2),
        ..Faults::default()
    });
    let out = dir.join("changed.gguf");
    let o = quantize(&url, &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&url) && err.contains("changed on the server"),
        "{err}"
    );
    assert!(!out.exists());
    // A server without ranges: refused when the file is opened (an input error).
    server.set_faults(Faults {
        ignore_range: true,
        ..Faults::default()
    });
    let o = quantize(&url, &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&url) && err.contains("ignored the range"),
        "{err}"
    );
    assert!(!out.exists());
    assert!(others(&dir, &[]).is_empty(), "{:?}", others(&dir, &[]));
}

#[test]
fn a_server_that_dies_mid_run_leaves_the_existing_output_untouched() {
    let (server, url, _) = serve();
    let dir = scratch("q-url-dies");
    let out = dir.join("out.gguf");
    std::fs::write(&out, b"the previous output").unwrap();
    // The open and the header (two ranges), a few tensors' ranges, then nothing.
    server.set_faults(Faults {
        die_after: Some(4),
        ..Faults::default()
    });
    let t = std::time::Instant::now();
    let o = quantize(&url, &out, &[("GGUFKIT_REMOTE_ATTEMPTS", "2")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&url) && err.contains("gave up after"), "{err}");
    assert!(t.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(std::fs::read(&out).unwrap(), b"the previous output");
    assert!(
        others(&dir, &["out.gguf"]).is_empty(),
        "a partial output was left: {:?}",
        others(&dir, &["out.gguf"])
    );
    // A bad attempt count is a usage error.
    let o = quantize(&url, &out, &[("GGUFKIT_REMOTE_ATTEMPTS", "0")]);
    assert_eq!(o.status.code(), Some(2));
}
