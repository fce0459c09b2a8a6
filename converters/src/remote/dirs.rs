//! Local snapshot directories whose weight files are remote: the safetensors reader lists and
//! opens a directory's parts through [`lookup`], so a directory registered here reads its
//! shards by HTTP while its small files (config, tokenizer, index) are local.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ggufkit::mapped::FileBytes;

use super::file::{BlockCache, RemoteFile};
use super::{Client, RemoteError};

/// The remote weight files of one snapshot directory.
pub struct RemoteDir {
    /// File names (plain, no directory part) held remotely.
    pub files: BTreeSet<String>,
    /// `{endpoint}/{repo}/resolve/{commit}`: a file's URL is this, `/`, its name.
    pub base_url: String,
    client: Arc<Client>,
    cache: Arc<BlockCache>,
}

impl RemoteDir {
    /// Remote files `files` under `base_url`, read through `client`.
    pub fn new(files: BTreeSet<String>, base_url: String, client: Arc<Client>) -> RemoteDir {
        RemoteDir {
            files,
            base_url,
            client,
            cache: Arc::new(BlockCache::default()),
        }
    }

    /// The URL of file `name`.
    pub fn url(&self, name: &str) -> String {
        format!("{}/{}", self.base_url, encode_path(name))
    }

    /// Opens file `name` (its size and ETag pinned, its first block read).
    pub fn open(&self, name: &str) -> Result<Arc<FileBytes>, RemoteError> {
        let file = RemoteFile::open(self.client.clone(), self.cache.clone(), self.url(name))?;
        Ok(file.into_file_bytes())
    }
}

static REGISTRY: Mutex<Vec<(PathBuf, Arc<RemoteDir>)>> = Mutex::new(Vec::new());

fn key(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Registers `remote` as the weight files of `dir` (replacing an earlier registration).
pub fn register(dir: &Path, remote: Arc<RemoteDir>) {
    let k = key(dir);
    let mut r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    r.retain(|(d, _)| *d != k);
    r.push((k, remote));
}

/// The remote weight files of `dir`, if it was registered.
pub fn lookup(dir: &Path) -> Option<Arc<RemoteDir>> {
    let r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    if r.is_empty() {
        return None;
    }
    let k = key(dir);
    r.iter().find(|(d, _)| *d == k).map(|(_, x)| x.clone())
}

/// Percent-encodes each `/`-separated segment of a path for a URL (everything but the
/// unreserved characters).
pub fn encode_path(path: &str) -> String {
    path.split('/').map(encode).collect::<Vec<_>>().join("/")
}

/// Percent-encodes everything but the unreserved characters (`/` too).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
