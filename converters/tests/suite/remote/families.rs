//! Every HF fixture family of `testdata/hf/` with safetensors weights (its first seed),
//! converted through the test server and from disk: the bytes are identical (or both
//! conversions refuse the fixture).

use ggufkit_converters::remote::snapshot::is_small_file;

use super::*;

#[test]
fn every_hf_fixture_converts_identically_through_the_server() {
    let server = HubServer::start();
    let client = client(&server, None);
    let root = ggufkit_testsupport::testdata("hf");
    let (same, both_failed) = compare_first_seed_fixtures("remote-families", |scratch, name| {
        Some(match one(&server, &client, scratch, &root, name)? {
            Ok(()) => Outcome::Same,
            Err(None) => Outcome::BothRefused,
            Err(Some(d)) => Outcome::Differ(d),
        })
    });
    eprintln!("{same} fixtures identical, {both_failed} refused both locally and remotely");
}

/// Fixture `name` converted locally and through the server: `None` when it has no
/// safetensors, `Ok` when identical, `Err(None)` when both refuse it, else what differs.
fn one(
    server: &HubServer,
    client: &Arc<Client>,
    scratch: &ggufkit_testsupport::Scratch,
    root: &Path,
    name: &str,
) -> Option<Result<(), Option<String>>> {
    let files = fixture_map(&root.join(name));
    if !files
        .keys()
        .any(|n| n.starts_with("model") && n.ends_with(".safetensors"))
    {
        // PyTorch-only fixtures: --remote reads safetensors (as the reference does).
        return None;
    }
    let commit = commit_of(name);
    let id = format!("test/{name}");
    server.add_repo(&id, &commit, files.clone());
    // The local side: the files the reference's --remote sees (its small-file patterns and
    // the model's weights at the top level; a spiece.model or sentencepiece.bpe.model is not
    // among them, nor a sentence-transformers module's weights such as 1_Dense's).
    let seen: BTreeMap<String, Vec<u8>> = files
        .iter()
        .filter(|(n, _)| is_small_file(n) || (n.ends_with(".safetensors") && !n.contains('/')))
        .map(|(n, b)| (n.clone(), b.clone()))
        .collect();
    let unloadable = ggufkit_testsupport::unloadable::UNLOADABLE_FIXTURES
        .iter()
        .any(|(f, _)| *f == name);
    let local = local(scratch, &seen, &commit, unloadable);
    let snap = snapshot(scratch, client.clone(), &id).expect("snapshot");
    assert_eq!(snap.commit, commit);
    let remote = convert(&snap.dir, &scratch.path().join("remote.gguf"), unloadable);
    let show = |r: &Result<Vec<u8>, String>| match r {
        Ok(b) => format!("{} bytes", b.len()),
        Err(e) => e.clone(),
    };
    Some(match (&local, &remote) {
        (Ok(a), Ok(b)) if a == b => Ok(()),
        (Err(_), Err(_)) => Err(None),
        _ => Err(Some(format!(
            "{name}: local {} / remote {}",
            show(&local),
            show(&remote)
        ))),
    })
}
