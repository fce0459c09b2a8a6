//! `gguf-inspect dump URL`: the dump of a GGUF on an HTTP server is the local file's, and only
//! its first block (the header) is fetched, never the tensors.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use ggufkit_testsupport::golden as conv;
use ggufkit_testsupport::hub_server::HubServer;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-inspect");

fn dump(file: &str, json: bool) -> (String, String, Option<i32>) {
    let mut c = Command::new(BIN);
    c.arg("dump").arg(file).stdin(Stdio::null());
    if json {
        c.arg("--json");
    }
    let o = c.env_remove("HF_ENDPOINT").output().unwrap();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code(),
    )
}

#[test]
fn a_dump_by_url_reads_only_the_header_and_equals_the_local_dump() {
    let input = conv::golden_gguf("llama-spm", "convert-f32");
    let bytes = std::fs::read(&input).unwrap();
    let size = bytes.len() as u64;
    assert!(
        size > 4 << 20,
        "the file is too small to tell a header from the whole"
    );
    let server = HubServer::start();
    server.add_repo(
        "test/gguf",
        "0123456789abcdef0123456789abcdef01234567",
        BTreeMap::from([("m.gguf".to_string(), bytes)]),
    );
    let url = format!("{}m.gguf", server.plain_url("test/gguf"));
    let local = input.to_str().unwrap();
    for json in [false, true] {
        let (want, e, code) = dump(local, json);
        assert_eq!(code, Some(0), "{e}");
        let (got, e, code) = dump(&url, json);
        assert_eq!(code, Some(0), "{e}");
        assert_eq!(got.replace(&url, local), want);
    }
    // Every request was a range within the first MiB.
    let log = server.log();
    assert!(!log.is_empty());
    for l in &log {
        let r = l.range.as_deref().expect("a range request");
        let end: u64 = r.rsplit('-').next().unwrap().parse().unwrap();
        assert!(end < 1 << 20, "{r} reads past the header's block");
    }
    // A missing file: an input error naming the URL.
    let missing = format!("{}nothere.gguf", server.plain_url("test/gguf"));
    let (_, e, code) = dump(&missing, false);
    assert_ne!(code, Some(0));
    assert!(e.contains(&missing) && e.contains("404"), "{e}");
}
