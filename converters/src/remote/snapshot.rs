//! A model on the Hub at one pinned commit: its small files fetched into the local
//! HuggingFace cache (`blobs/`, `snapshots/<commit>/`, `refs/`, as huggingface_hub lays them
//! out and [`crate::hub`] reads them), its safetensors shards registered as remote files of
//! the snapshot directory ([`super::dirs`]).

use std::collections::BTreeSet;
use std::io::{Seek, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::dirs::{self, encode, encode_path, RemoteDir};
use super::{Client, RemoteError};
use crate::hub;

/// The files the reference's `--remote` downloads (`snapshot_download`'s `allow_patterns`):
/// glob patterns over the whole path, `*` matching any characters, `/` included.
pub const SMALL_FILES: [&str; 5] = ["LICENSE", "*.json", "*.md", "*.txt", "tokenizer.model"];

/// Largest revision API answer read (a repository's file list).
const MAX_API_BODY: u64 = 64 << 20;

/// A remote model, pinned: where its small files are, and its remote weight files.
#[derive(Debug)]
pub struct RemoteSnapshot {
    /// The model id (`org/name`).
    pub id: String,
    /// The revision asked (a branch, tag or commit; default `main`).
    pub revision: String,
    /// The commit it resolved to, used for every request after.
    pub commit: String,
    /// The snapshot directory in the local cache (small files only).
    pub dir: PathBuf,
    /// The safetensors files read remotely.
    pub weights: Vec<String>,
    /// The small files fetched by this run (the others were in the cache already).
    pub fetched: Vec<String>,
}

/// `org/name@revision` → (`org/name`, the revision if any).
pub fn split_spec(spec: &str) -> (&str, Option<&str>) {
    match spec.split_once('@') {
        Some((id, rev)) => (id, Some(rev)),
        None => (spec, None),
    }
}

/// Whether `path` matches the glob `pattern` (`*` any characters, `?` one).
fn glob(pattern: &[u8], path: &[u8]) -> bool {
    match (pattern.first(), path.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            glob(&pattern[1..], path) || (!path.is_empty() && glob(pattern, &path[1..]))
        }
        (Some(b'?'), Some(_)) => glob(&pattern[1..], &path[1..]),
        (Some(a), Some(b)) if a == b => glob(&pattern[1..], &path[1..]),
        _ => false,
    }
}

/// Whether a repository file is one of the small files fetched ([`SMALL_FILES`]).
pub fn is_small_file(path: &str) -> bool {
    SMALL_FILES
        .iter()
        .any(|p| glob(p.as_bytes(), path.as_bytes()))
}

/// A repository file name safe to lay out under the snapshot directory: relative, plain
/// components, no `..`, no backslash.
fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 1024
        && !name.contains('\\')
        && !name.contains('\0')
        && Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// Resolves `id` at `revision` (default `main`) through the Hub's API, fetches its small files
/// into the HuggingFace cache at `cache`, and registers its safetensors shards as the remote
/// weight files of the snapshot directory.
pub fn fetch_snapshot(
    client: Arc<Client>,
    cache: &Path,
    id: &str,
    revision: Option<&str>,
) -> Result<RemoteSnapshot, RemoteError> {
    if !hub::valid_id(id) || !id.contains('/') {
        return Err(RemoteError::BadId(id.to_string()));
    }
    let revision = revision.unwrap_or("main");
    if revision.is_empty() || revision.contains("..") || revision.len() > 256 {
        return Err(RemoteError::BadId(format!("{id}@{revision}")));
    }
    let api = client.endpoint().join(&format!(
        "api/models/{}/revision/{}",
        encode_path(id),
        encode(revision)
    ));
    let body = client.get_small(&api, "the revision API's answer", MAX_API_BODY)?;
    let bad = |why: String| RemoteError::BadApi {
        url: api.clone(),
        why,
    };
    let json: Json = serde_json::from_slice(&body).map_err(|e| bad(format!("not JSON: {e}")))?;
    let commit = json
        .get("sha")
        .and_then(Json::as_str)
        .filter(|s| hub::is_commit(s))
        .ok_or_else(|| bad("no 40-hex-digit \"sha\"".into()))?
        .to_ascii_lowercase();
    let siblings = json
        .get("siblings")
        .and_then(Json::as_array)
        .ok_or_else(|| bad("no \"siblings\" list".into()))?;
    let mut files = BTreeSet::new();
    for s in siblings {
        let name = s
            .get("rfilename")
            .and_then(Json::as_str)
            .ok_or_else(|| bad("a sibling without \"rfilename\"".into()))?;
        if !safe_name(name) {
            return Err(bad(format!("file name {name:?} leaves the repository")));
        }
        files.insert(name.to_string());
    }
    let weights: Vec<String> = files
        .iter()
        .filter(|f| f.ends_with(".safetensors") && !f.contains('/'))
        .cloned()
        .collect();
    if weights.is_empty() {
        let some: Vec<&str> = files.iter().take(8).map(String::as_str).collect();
        return Err(RemoteError::NoSafetensors {
            id: id.to_string(),
            commit,
            files: if some.is_empty() {
                "no file".into()
            } else {
                some.join(", ")
            },
        });
    }
    let repo = cache.join(format!("models--{}", id.replace('/', "--")));
    let snapshot = repo.join("snapshots").join(&commit);
    let blobs = repo.join("blobs");
    for d in [&snapshot, &blobs] {
        std::fs::create_dir_all(d).map_err(|e| RemoteError::io(d, e))?;
    }
    let base_url = client
        .endpoint()
        .join(&format!("{}/resolve/{commit}", encode_path(id)));
    let mut fetched = Vec::new();
    for f in files.iter().filter(|f| is_small_file(f)) {
        let target = snapshot.join(f);
        if target.exists() {
            continue;
        }
        let url = format!("{base_url}/{}", encode_path(f));
        fetch_small(&client, &url, f, &blobs, &target)?;
        fetched.push(f.clone());
    }
    if revision != commit && hub::valid_part(revision) {
        let refs = repo.join("refs");
        std::fs::create_dir_all(&refs).map_err(|e| RemoteError::io(&refs, e))?;
        let r = refs.join(revision);
        std::fs::write(&r, &commit).map_err(|e| RemoteError::io(&r, e))?;
    }
    let remote = RemoteDir::new(weights.iter().cloned().collect(), base_url, client);
    dirs::register(&snapshot, Arc::new(remote));
    Ok(RemoteSnapshot {
        id: id.to_string(),
        revision: revision.to_string(),
        commit,
        dir: snapshot,
        weights,
        fetched,
    })
}

/// Fetches one small file into `blobs/` (named by its ETag, else its sha256) and links
/// `target` to it; written under a temporary name and renamed, so a failure leaves nothing.
fn fetch_small(
    client: &Client,
    url: &str,
    name: &str,
    blobs: &Path,
    target: &Path,
) -> Result<(), RemoteError> {
    let tmp_path = blobs.join(format!(
        ".ggufkit-{}-{}.incomplete",
        std::process::id(),
        hex(&Sha256::digest(name.as_bytes())[..8])
    ));
    let io = |p: &Path, e| RemoteError::io(p, e);
    let tmp = std::fs::File::create(&tmp_path).map_err(|e| io(&tmp_path, e))?;
    let file = std::cell::RefCell::new(tmp);
    let result = (|| {
        let etag = client.download(
            url,
            &format!("{name} (a small file)"),
            client.options().max_small_file,
            &mut CellWriter(&file),
            &mut || {
                // A retry starts the file again.
                let mut f = file.borrow_mut();
                f.set_len(0)?;
                f.rewind()
            },
        )?;
        let mut tmp = file.borrow_mut();
        tmp.flush().map_err(|e| io(&tmp_path, e))?;
        let digest = {
            let mut hash = Sha256::new();
            let mut f = std::fs::File::open(&tmp_path).map_err(|e| io(&tmp_path, e))?;
            std::io::copy(&mut f, &mut hash).map_err(|e| io(&tmp_path, e))?;
            hex(&hash.finalize())
        };
        tmp.sync_all().map_err(|e| io(&tmp_path, e))?;
        let blob_name = if !etag.is_empty()
            && etag.len() <= 128
            && etag
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        {
            etag
        } else {
            digest
        };
        let blob = blobs.join(&blob_name);
        std::fs::rename(&tmp_path, &blob).map_err(|e| io(&blob, e))?;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        // snapshots/<commit>/<name> → ../../blobs/<blob> (one more `..` per directory of name).
        let depth = Path::new(name).components().count() + 1;
        let link: PathBuf = std::iter::repeat_n("..", depth)
            .collect::<PathBuf>()
            .join("blobs")
            .join(&blob_name);
        link_or_copy(&link, &blob, target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp_path);
    }
    result
}

/// Writes into a file shared with the restart callback.
struct CellWriter<'a>(&'a std::cell::RefCell<std::fs::File>);

impl Write for CellWriter<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

#[cfg(unix)]
fn link_or_copy(link: &Path, _blob: &Path, target: &Path) -> Result<(), RemoteError> {
    std::os::unix::fs::symlink(link, target).map_err(|e| RemoteError::io(target, e))
}

#[cfg(not(unix))]
fn link_or_copy(_link: &Path, blob: &Path, target: &Path) -> Result<(), RemoteError> {
    std::fs::copy(blob, target)
        .map(|_| ())
        .map_err(|e| RemoteError::io(target, e))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_patterns_pick_the_small_files() {
        for f in [
            "config.json",
            "a/b/config.json",
            "README.md",
            "LICENSE",
            "tokenizer.model",
            "merges.txt",
        ] {
            assert!(is_small_file(f), "{f}");
        }
        for f in [
            "model.safetensors",
            "LICENSE.txt.bak",
            "sub/tokenizer.model",
            "pytorch_model.bin",
        ] {
            assert!(!is_small_file(f), "{f}");
        }
        assert!(!safe_name("../x"));
        assert!(!safe_name("/etc/passwd"));
        assert!(!safe_name("a\\b"));
        assert!(safe_name("a/b.json"));
        assert_eq!(split_spec("a/b@v1"), ("a/b", Some("v1")));
    }
}
