//! A misbehaving server: transient faults end in the identical output, the others in an error
//! naming the URL and what the server did, within a bounded time.

use std::time::Instant;

use ggufkit_testsupport::hub_server::Faults;

use super::*;

const FIXTURE: &str = "llama-spm";

/// The fixture converted through a server with `faults`, and its local conversion.
fn through(faults: Faults) -> (Result<Vec<u8>, String>, Vec<u8>, HubServer) {
    let (server, scratch, files, commit) = serve_fixture(FIXTURE);
    let local = local(&scratch, &files, &commit, false).expect("local conversion");
    server.set_faults(faults);
    let remote = snapshot(&scratch, client(&server, None), &format!("test/{FIXTURE}"))
        .map_err(|e| e.to_string())
        .and_then(|s| convert(&s.dir, &scratch.path().join("remote.gguf"), false));
    (remote, local, server)
}

#[test]
fn connections_dropped_mid_body_are_resumed_from_the_last_byte() {
    let (remote, local, server) = through(Faults {
        drop_mid_body: 3,
        drop_after_bytes: 1000,
        ..Faults::default()
    });
    assert_eq!(remote.expect("resumed conversion"), local);
    // A resumed request starts where the dropped one stopped, not at a chunk boundary.
    let resumed = server
        .log()
        .iter()
        .filter_map(|l| l.range.clone())
        .filter(|r| r.starts_with("bytes=") && r[6..].split('-').next().unwrap().ends_with("1000"))
        .count();
    assert!(
        resumed >= 1,
        "no request resumed at byte 1000: {:?}",
        server.log()
    );
}

#[test]
fn server_errors_then_success_are_retried() {
    let (remote, local, _) = through(Faults {
        statuses: vec![500, 502, 503],
        ..Faults::default()
    });
    assert_eq!(remote.expect("conversion after retries"), local);
}

#[test]
fn too_many_requests_waits_for_retry_after() {
    let t = Instant::now();
    let (remote, local, _) = through(Faults {
        statuses: vec![429],
        retry_after: Some(1),
        ..Faults::default()
    });
    assert_eq!(remote.expect("conversion after 429"), local);
    assert!(
        t.elapsed() >= Duration::from_secs(1),
        "Retry-After not honoured"
    );
}

#[test]
fn persistent_server_errors_give_up_naming_the_url() {
    let t = Instant::now();
    let (remote, _, _) = through(Faults {
        statuses: vec![500; 100],
        ..Faults::default()
    });
    let e = remote_error(remote);
    assert!(
        e.contains("gave up after 4 attempts") && e.contains("HTTP 500"),
        "{e}"
    );
    assert!(e.contains("/test/llama-spm/resolve/"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(20));
}

#[test]
fn an_ignored_range_is_an_error_not_a_whole_file() {
    let (remote, _, _) = through(Faults {
        ignore_range: true,
        ..Faults::default()
    });
    let e = remote_error(remote);
    assert!(
        e.contains("ignored the range request") && e.contains("HTTP 200"),
        "{e}"
    );
    assert!(e.contains("model-00001-of-00002.safetensors"), "{e}");
}

#[test]
fn a_file_replaced_mid_run_is_detected_by_its_etag() {
    let (remote, _, _) = through(Faults {
        replace_after: Some(3),
        ..Faults::default()
    });
    let e = remote_error(remote);
    assert!(
        e.contains("changed on the server") && e.contains(".safetensors"),
        "{e}"
    );
}

#[test]
fn a_redirect_loop_is_bounded() {
    let t = Instant::now();
    let (remote, _, _) = through(Faults {
        redirect_loop: true,
        ..Faults::default()
    });
    let e = remote_error(remote);
    assert!(e.contains("more than 8 redirects"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_redirect_to_another_scheme_is_refused() {
    let (remote, _, _) = through(Faults {
        redirect_to_https: true,
        ..Faults::default()
    });
    let e = remote_error(remote);
    assert!(
        e.contains("redirect refused") && e.contains("another scheme (http → https)"),
        "{e}"
    );
}

#[test]
fn a_content_length_that_lies_is_named() {
    let (remote, _, _) = through(Faults {
        lying_length: true,
        ..Faults::default()
    });
    let e = remote_error(remote);
    assert!(e.contains("declared Content-Length"), "{e}");
    assert!(
        e.contains("/lfs/test/llama-spm/") || e.contains("/resolve/"),
        "{e}"
    );
}

#[test]
fn a_safetensors_header_claiming_gigabytes_is_refused_without_reading_it() {
    let server = HubServer::start();
    let scratch = ggufkit_testsupport::scratch("remote-huge-header");
    let src = ggufkit_testsupport::testdata("hf").join(FIXTURE);
    let mut files = std::collections::BTreeMap::new();
    for f in [
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "tokenizer.model",
    ] {
        files.insert(f.to_string(), std::fs::read(src.join(f)).unwrap());
    }
    let mut st = 5_000_000_000u64.to_le_bytes().to_vec();
    st.extend_from_slice(b"{\"a\":");
    files.insert("model.safetensors".to_string(), st);
    server.add_repo("test/huge", &commit_of("huge"), files);
    let snap = snapshot(&scratch, client(&server, None), "test/huge").unwrap();
    let e = remote_error(convert(&snap.dir, &scratch.path().join("out.gguf"), false));
    assert!(e.contains("header length 5000000000 exceeds"), "{e}");
    // Only the first block was asked for, never the claimed gigabytes.
    assert!(server
        .log()
        .iter()
        .all(|l| l.range.as_deref() != Some("bytes=8-5000000007")));
}

#[test]
fn the_token_goes_only_to_the_endpoints_own_host() {
    let (server, scratch, files, commit) = serve_fixture(FIXTURE);
    let local = local(&scratch, &files, &commit, false).unwrap();
    let snap = snapshot(
        &scratch,
        client(&server, Some("hf_secret")),
        "test/llama-spm",
    )
    .unwrap();
    assert_eq!(
        convert(&snap.dir, &scratch.path().join("r.gguf"), false).unwrap(),
        local
    );
    let log = server.log();
    let (mut own, mut lfs) = (0, 0);
    for l in &log {
        if l.host.starts_with("127.0.0.1:") {
            assert!(l.token, "no token to the endpoint: {l:?}");
            own += 1;
        } else {
            assert!(l.host.starts_with("localhost:"), "{l:?}");
            assert!(
                !l.token,
                "the token crossed a redirect to another host: {l:?}"
            );
            lfs += 1;
        }
    }
    assert!(own > 0 && lfs > 0, "{log:?}");
}

#[test]
fn the_small_files_land_in_the_cache_layout_and_the_weights_do_not() {
    let (server, scratch, _, commit) = serve_fixture(FIXTURE);
    let snap = snapshot(&scratch, client(&server, None), "test/llama-spm").unwrap();
    let repo = scratch.path().join("cache/models--test--llama-spm");
    assert_eq!(
        std::fs::read_to_string(repo.join("refs/main")).unwrap(),
        commit
    );
    assert_eq!(snap.dir, repo.join("snapshots").join(&commit));
    for f in [
        "config.json",
        "tokenizer.model",
        "model.safetensors.index.json",
    ] {
        let p = snap.dir.join(f);
        assert!(
            std::fs::symlink_metadata(&p)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{f}"
        );
        assert!(p.is_file(), "{f}");
    }
    assert!(!snap.dir.join("model-00001-of-00002.safetensors").exists());
    let blob_bytes: u64 = std::fs::read_dir(repo.join("blobs"))
        .unwrap()
        .flatten()
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(blob_bytes < 200_000, "{blob_bytes} bytes stored");
    // The local reader resolves the id in that cache at the same commit.
    let resolved =
        ggufkit_converters::hub::resolve_in(&scratch.path().join("cache"), "test/llama-spm", None)
            .unwrap();
    assert_eq!(resolved, snap.dir);
}

#[test]
fn an_endless_small_file_stops_at_its_limit() {
    let (server, scratch, _, _) = serve_fixture(FIXTURE);
    server.set_faults(Faults {
        endless_body: true,
        ..Faults::default()
    });
    let ep = Endpoint::new(&server.endpoint(), None).unwrap();
    let options = RemoteOptions {
        max_small_file: 4 << 20,
        ..fast_options()
    };
    let t = Instant::now();
    let e = snapshot(
        &scratch,
        Arc::new(Client::new(ep, options)),
        "test/llama-spm",
    )
    .expect_err("an endless body");
    let e = e.to_string();
    assert!(
        e.contains("larger than the 4194304-byte limit") && e.contains("/resolve/"),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(20));
    // Nothing is left in the cache but directories.
    let blobs = scratch.path().join("cache/models--test--llama-spm/blobs");
    assert_eq!(std::fs::read_dir(blobs).unwrap().count(), 0);
}

#[test]
fn a_header_section_that_never_ends_is_an_error() {
    let (server, scratch, _, _) = serve_fixture(FIXTURE);
    server.set_faults(Faults {
        endless_headers: true,
        ..Faults::default()
    });
    let t = Instant::now();
    let e = snapshot(&scratch, client(&server, None), "test/llama-spm")
        .expect_err("endless headers")
        .to_string();
    assert!(
        e.contains("gave up after 4 attempts") && e.contains("/api/models/test/llama-spm"),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_trickling_server_is_dropped_below_the_minimum_rate() {
    let (server, scratch, _, _) = serve_fixture(FIXTURE);
    server.set_faults(Faults {
        trickle: true,
        ..Faults::default()
    });
    let ep = Endpoint::new(&server.endpoint(), None).unwrap();
    let options = RemoteOptions {
        min_rate: 64 << 10,
        rate_window: Duration::from_millis(500),
        ..fast_options()
    };
    let t = Instant::now();
    let r = snapshot(
        &scratch,
        Arc::new(Client::new(ep, options)),
        "test/llama-spm",
    )
    .map_err(|e| e.to_string())
    .and_then(|s| convert(&s.dir, &scratch.path().join("out.gguf"), false));
    let e = remote_error(r);
    assert!(
        e.contains("gave up after 4 attempts") && e.contains("too slow"),
        "{e}"
    );
    assert!(e.contains("/resolve/") && e.contains(".safetensors"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
}

#[test]
fn a_compressed_body_never_asked_for_is_refused() {
    let (remote, _, _) = through(Faults {
        gzip: true,
        ..Faults::default()
    });
    let e = remote_error(remote);
    assert!(
        e.contains("Content-Encoding \"gzip\"") && e.contains(".safetensors"),
        "{e}"
    );
}
