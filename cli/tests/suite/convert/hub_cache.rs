//! `gguf-convert org/name` resolves the model in a local HuggingFace cache laid out as
//! huggingface_hub lays it out (refs, snapshots of symlinks into blobs, several revisions),
//! and converts it exactly as the same files in a plain directory.

use ggufkit_testsupport::golden as support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");

const MAIN: &str = "0123456789abcdef0123456789abcdef01234567";
const OLD: &str = "89abcdef0123456789abcdef0123456789abcdef";

fn run(args: &[&str], cache: &Path, cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .env("HF_HUB_CACHE", cache)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A cache holding `testdata/hf/qwen2` as `acme/tiny` at two commits (`main` → MAIN, tag
/// `v1` → OLD, where OLD lacks the tokenizer).
#[cfg(unix)]
fn build_cache(root: &Path) -> PathBuf {
    let cache = root.join("hub");
    let repo = cache.join("models--acme--tiny");
    std::fs::create_dir_all(repo.join("blobs")).unwrap();
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::write(repo.join("refs/main"), MAIN).unwrap();
    std::fs::write(repo.join("refs/v1"), format!("{OLD}\n")).unwrap();
    for (commit, skip) in [(MAIN, ""), (OLD, "tokenizer")] {
        let snap = repo.join("snapshots").join(commit);
        std::fs::create_dir_all(&snap).unwrap();
        for e in std::fs::read_dir(testdata("hf/qwen2")).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !skip.is_empty() && name.starts_with(skip) {
                continue;
            }
            let blob = format!("{}-{name}", &commit[..8]);
            std::fs::copy(e.path(), repo.join("blobs").join(&blob)).unwrap();
            std::os::unix::fs::symlink(format!("../../blobs/{blob}"), snap.join(&name)).unwrap();
        }
    }
    cache
}

#[cfg(unix)]
#[test]
fn a_cached_model_id_converts_like_its_directory() {
    let root = scratch("hub-cache");
    let cache = build_cache(&root);
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // The plain route: the snapshot directory itself.
    let snap = cache.join("models--acme--tiny/snapshots").join(MAIN);
    let direct = root.join("direct.gguf");
    let o = run(
        &[
            snap.to_str().unwrap(),
            direct.to_str().unwrap(),
            "--outtype",
            "f16",
            "-q",
        ],
        &cache,
        &work,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // By id, with and without hf:, with --revision main and the commit itself; the default
    // output goes to the current directory, never into the cache.
    for args in [
        vec!["acme/tiny"],
        vec!["hf:acme/tiny"],
        vec!["acme/tiny", "--revision", "main"],
        vec!["acme/tiny", "--revision", MAIN],
    ] {
        for e in std::fs::read_dir(&work).unwrap().flatten() {
            std::fs::remove_file(e.path()).unwrap();
        }
        let mut a = args.clone();
        a.extend(["--outtype", "f16", "-q"]);
        let o = run(&a, &cache, &work);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let made: Vec<PathBuf> = std::fs::read_dir(&work)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(made.len(), 1, "{args:?}: {made:?}");
        assert!(
            std::fs::read(&made[0]).unwrap() == std::fs::read(&direct).unwrap(),
            "{args:?}: differs from the directory's conversion"
        );
    }
    assert!(!std::fs::read_dir(&snap)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().ends_with(".gguf")));
    // Tag v1 resolves to the older commit's snapshot.
    let o = run(
        &["acme/tiny", "--revision", "v1", "--dry-run"],
        &cache,
        &work,
    );
    assert!(
        stderr(&o).contains(&format!("snapshots/{OLD}")),
        "{}",
        stderr(&o)
    );
    let o = run(&["acme/tiny", "--dry-run"], &cache, &work);
    assert!(
        stderr(&o).contains(&format!("snapshots/{MAIN}")),
        "{}",
        stderr(&o)
    );
}

#[cfg(unix)]
#[test]
fn a_missing_model_or_revision_names_what_was_searched() {
    let root = scratch("hub-missing");
    let cache = build_cache(&root);
    let o = run(&["acme/absent", "--dry-run"], &cache, &root);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&cache.join("models--acme--absent").display().to_string()),
        "{}",
        stderr(&o)
    );
    let o = run(
        &["acme/tiny", "--revision", "v9", "--dry-run"],
        &cache,
        &root,
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("main, v1"), "{}", stderr(&o));
    // A ref that is not a commit hash (a path, say) is refused.
    std::fs::write(cache.join("models--acme--tiny/refs/evil"), "../../../etc").unwrap();
    let o = run(
        &["acme/tiny", "--revision", "evil", "--dry-run"],
        &cache,
        &root,
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a commit hash"), "{}", stderr(&o));
    // --revision with a path is a usage error.
    let o = run(
        &[
            testdata("hf/qwen2").to_str().unwrap(),
            "--revision",
            "main",
            "--dry-run",
        ],
        &cache,
        &root,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Where the cache is looked for, as huggingface_hub does: HF_HUB_CACHE, then
/// HUGGINGFACE_HUB_CACHE, then `$HF_HOME/hub`, then `$XDG_CACHE_HOME/huggingface/hub`, then
/// `~/.cache/huggingface/hub`; an empty variable counts as unset. Each case sets only the
/// variables it names (the others removed) and resolves `acme/tiny` with `--dry-run`.
#[cfg(unix)]
#[test]
fn the_cache_is_found_through_hf_home_xdg_and_home() {
    let root = scratch("hub-cache-env");
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // One cache per place, each with the model (the snapshot path tells them apart).
    let place = |rel: &str| {
        let dir = root.join(rel);
        std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
        let built = build_cache(&root.join(format!("build-{}", rel.replace('/', "_"))));
        std::fs::rename(built, &dir).unwrap();
        dir
    };
    let hub_cache = place("explicit/hub");
    let legacy = place("legacy/hub");
    let hf_home = root.join("hfhome");
    place("hfhome/hub");
    let xdg = root.join("xdg");
    place("xdg/huggingface/hub");
    let home = root.join("home");
    place("home/.cache/huggingface/hub");
    let vars = [
        "HF_HUB_CACHE",
        "HUGGINGFACE_HUB_CACHE",
        "HF_HOME",
        "XDG_CACHE_HOME",
        "HOME",
    ];
    let resolve = |set: &[(&str, &Path)]| {
        let mut c = Command::new(BIN);
        c.args(["acme/tiny", "--dry-run"])
            .current_dir(&work)
            .stdin(Stdio::null());
        for v in vars {
            c.env_remove(v);
        }
        for (k, v) in set {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let empty = Path::new("");
    for (set, expected) in [
        (
            vec![
                ("HF_HUB_CACHE", hub_cache.as_path()),
                ("HF_HOME", &hf_home),
                ("HOME", &home),
            ],
            hub_cache.clone(),
        ),
        (
            vec![
                ("HUGGINGFACE_HUB_CACHE", legacy.as_path()),
                ("HF_HOME", &hf_home),
            ],
            legacy.clone(),
        ),
        (
            vec![
                ("HF_HOME", hf_home.as_path()),
                ("XDG_CACHE_HOME", &xdg),
                ("HOME", &home),
            ],
            hf_home.join("hub"),
        ),
        (
            vec![
                ("HF_HUB_CACHE", empty),
                ("HF_HOME", &hf_home),
                ("HOME", &home),
            ],
            hf_home.join("hub"),
        ),
        (
            vec![("XDG_CACHE_HOME", xdg.as_path()), ("HOME", &home)],
            xdg.join("huggingface/hub"),
        ),
        (
            vec![("HOME", home.as_path())],
            home.join(".cache/huggingface/hub"),
        ),
    ] {
        let o = resolve(&set);
        let want = expected
            .join("models--acme--tiny/snapshots")
            .join(MAIN)
            .display()
            .to_string();
        assert!(o.status.success(), "{set:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&want),
            "{set:?}: wanted {want}:\n{}",
            stderr(&o)
        );
    }
    // A model missing from the cache that applies names the path searched.
    let o = resolve(&[("HOME", home.as_path())]);
    assert!(o.status.success());
    let c = Command::new(BIN)
        .args(["acme/absent", "--dry-run"])
        .env_remove("HF_HUB_CACHE")
        .env_remove("HUGGINGFACE_HUB_CACHE")
        .env_remove("XDG_CACHE_HOME")
        .env("HF_HOME", &hf_home)
        .current_dir(&work)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!c.status.success());
    assert!(
        stderr(&c).contains(
            &hf_home
                .join("hub/models--acme--absent")
                .display()
                .to_string()
        ),
        "{}",
        stderr(&c)
    );
}
