//! Every HF fixture family of `testdata/hf/` with safetensors weights (its first seed),
//! converted through the test server and from disk: the bytes are identical (or both
//! conversions refuse the fixture).

use ggufkit_converters::remote::snapshot::is_small_file;

use super::*;

#[test]
fn every_hf_fixture_converts_identically_through_the_server() {
    let root = ggufkit_testsupport::testdata("hf");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("config.json").is_file())
        // One fixture per family: `-s2` is the same family's second seed.
        .filter(|e| !e.file_name().to_string_lossy().ends_with("-s2"))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let server = HubServer::start();
    let client = client(&server, None);
    // Three workers: the server and the client serve them at once, as a real run's ranges.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes: Vec<(usize, usize, Vec<String>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..3)
            .map(|w| {
                let (server, client, names, root, next) = (&server, &client, &names, &root, &next);
                s.spawn(move || {
                    let scratch = ggufkit_testsupport::scratch(&format!("remote-families-{w}"));
                    let (mut same, mut both_failed, mut differ) = (0, 0, Vec::new());
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(name) = names.get(i) else { break };
                        match one(server, client, &scratch, root, name) {
                            Some(Ok(())) => same += 1,
                            Some(Err(None)) => both_failed += 1,
                            Some(Err(Some(d))) => differ.push(d),
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
    // the weights; a spiece.model or sentencepiece.bpe.model is not among them).
    let seen: BTreeMap<String, Vec<u8>> = files
        .iter()
        .filter(|(n, _)| is_small_file(n) || n.ends_with(".safetensors"))
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
