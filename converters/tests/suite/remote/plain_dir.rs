//! A plain HTTP directory of HF files (no Hub API): every HF fixture family with safetensors
//! weights converts through the test server's `/plain/` directory to the bytes of the same
//! files converted from disk; a missing optional file is skipped, a missing required one is
//! an error naming its URL.

use ggufkit_converters::remote::plain::{module_configs, OPTIONAL, REQUIRED};
use ggufkit_converters::remote::{fetch_plain_dir, RemoteError};
use ggufkit_testsupport::hub_server::Faults;

use super::*;

/// A conversion's bytes, or its error.
type Converted = Result<Vec<u8>, String>;

/// Fixture `name`'s files served as `test/{name}`, opened as a plain directory into
/// `scratch`, converted; and the local conversion of the same files from a directory of the
/// same name. `None` for a fixture without safetensors weights (refused, as checked).
fn one(
    server: &HubServer,
    client: &Arc<Client>,
    scratch: &ggufkit_testsupport::Scratch,
    name: &str,
) -> Option<(Converted, Converted)> {
    let files = fixture_map(&ggufkit_testsupport::testdata("hf").join(name));
    let id = format!("test/{name}");
    server.add_repo(&id, &commit_of(name), files.clone());
    let root = scratch.path().join("plain");
    let _ = std::fs::remove_dir_all(&root);
    let opened = fetch_plain_dir(client.clone(), &server.plain_url(&id), &root);
    let has_weights = files.contains_key("model.safetensors")
        || files.contains_key("model.safetensors.index.json");
    if !has_weights {
        let e = opened.expect_err("a directory without safetensors weights");
        assert!(
            matches!(&e, RemoteError::Status { status: 404, url, .. }
                if url.ends_with("/model.safetensors")),
            "{name}: {e}"
        );
        return None;
    }
    let plain = opened.expect("plain directory");
    assert_eq!(plain.dir, root.join(name));
    let unloadable = ggufkit_testsupport::unloadable::UNLOADABLE_FIXTURES
        .iter()
        .any(|(f, _)| *f == name);
    // The local side: the files a plain directory is read for (the known names at its top
    // and the weights), in a directory of the same name.
    let modules = files
        .get("modules.json")
        .map(|m| module_configs(m))
        .unwrap_or_default();
    let known: BTreeMap<String, Vec<u8>> = files
        .iter()
        .filter(|(n, _)| {
            *n == REQUIRED
                || OPTIONAL.contains(&n.as_str())
                || modules.contains(n)
                || (n.ends_with(".safetensors") && !n.contains('/'))
                || *n == "model.safetensors.index.json"
        })
        .map(|(n, b)| (n.clone(), b.clone()))
        .collect();
    let local = local(scratch, &known, name, unloadable);
    let remote = convert(&plain.dir, &scratch.path().join("plain.gguf"), unloadable);
    let _ = std::fs::remove_dir_all(&root);
    Some((local, remote))
}

#[test]
fn every_hf_fixture_converts_identically_through_a_plain_directory() {
    let server = HubServer::start();
    let client = client(&server, None);
    let (same, both_failed) = compare_first_seed_fixtures("remote-plain", |scratch, name| {
        Some(match one(&server, &client, scratch, name)? {
            (Ok(a), Ok(b)) if a == b => Outcome::Same,
            (Err(_), Err(_)) => Outcome::BothRefused,
            (a, b) => Outcome::Differ(format!(
                "{name}: local {} / plain {}",
                a.map_or_else(|e| e, |b| format!("{} bytes", b.len())),
                b.map_or_else(|e| e, |b| format!("{} bytes", b.len()))
            )),
        })
    });
    eprintln!(
        "{same} fixtures identical through a plain directory, {both_failed} refused both ways"
    );
}

#[test]
fn a_missing_config_is_an_error_naming_its_url_and_optional_files_are_skipped() {
    let (server, scratch, mut files, _) = serve_fixture("llama-spm");
    let client = client(&server, None);
    files.remove("config.json");
    server.add_repo("test/noconfig", &commit_of("noconfig"), files);
    let e = fetch_plain_dir(
        client.clone(),
        &server.plain_url("test/noconfig"),
        &scratch.path().join("a"),
    )
    .expect_err("no config.json");
    assert!(
        matches!(&e, RemoteError::Status { status: 404, url, .. } if url.ends_with("/plain/test/noconfig/config.json")),
        "{e}"
    );
    assert!(e.to_string().contains("is required"), "{e}");
    // llama-spm has no vocab.json, merges.txt, README.md...: skipped, and nothing but the
    // small files it has is stored.
    let plain = fetch_plain_dir(
        client,
        &server.plain_url("test/llama-spm"),
        &scratch.path().join("b"),
    )
    .unwrap();
    assert!(plain.fetched.contains(&"tokenizer.model".to_string()));
    assert!(!plain.dir.join("merges.txt").exists());
    assert_eq!(
        plain.weights,
        [
            "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors"
        ]
    );
    let stored: Vec<String> = std::fs::read_dir(&plain.dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".safetensors") || n.contains("incomplete"))
        .collect();
    assert!(stored.is_empty(), "{stored:?}");
}

#[test]
fn a_plain_directory_resumes_dropped_ranges_and_names_an_ignored_one() {
    let (server, scratch, files, _) = serve_fixture("llama-spm");
    let local = local(&scratch, &files, "llama-spm", false).unwrap();
    let client = client(&server, None);
    let url = server.plain_url("test/llama-spm");
    server.set_faults(Faults {
        drop_mid_body: 2,
        drop_after_bytes: 1000,
        ..Faults::default()
    });
    let plain = fetch_plain_dir(client.clone(), &url, &scratch.path().join("a")).unwrap();
    let out = convert(&plain.dir, &scratch.path().join("a.gguf"), false).unwrap();
    assert!(out == local, "a resumed plain directory differs");
    server.set_faults(Faults {
        ignore_range: true,
        ..Faults::default()
    });
    let e = fetch_plain_dir(client, &url, &scratch.path().join("b"))
        .map_err(|e| e.to_string())
        .and_then(|p| convert(&p.dir, &scratch.path().join("b.gguf"), false));
    let e = remote_error(e);
    assert!(
        e.contains("/plain/test/llama-spm/model-0000") && e.contains("ignored the range"),
        "{e}"
    );
    assert!(!scratch.path().join("b.gguf").exists());
}
