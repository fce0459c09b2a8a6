//! A batch job's remote source: `hf://org/name[@revision]` (a model on the Hub or the
//! `HF_ENDPOINT` mirror, as huggingface_hub's file system names it) or an `http(s)://`
//! plain directory of HF files. Opened, it is a local directory of small files whose weights
//! are read by range, and an identity that pins what the weights are (the commit, or each
//! weight file's ETag and size), so that a resumed batch knows an output made from the same
//! bytes without reading them again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::dirs::encode_path;
use super::{fetch_plain_dir, fetch_snapshot, Client, RemoteError};

/// The scheme of a model id as a batch source.
pub const HUB_SCHEME: &str = "hf://";

/// A remote source, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteSource {
    /// A model on the Hub: its id and revision (default `main`).
    Hub {
        /// `org/name`.
        id: String,
        /// A branch, tag or commit.
        revision: Option<String>,
    },
    /// A plain HTTP(S) directory of HF files.
    Dir(String),
}

impl RemoteSource {
    /// The remote source `source` names, if it is one (`hf://…`, `http://…`, `https://…`).
    pub fn parse(source: &Path) -> Option<RemoteSource> {
        let s = source.to_str()?;
        if let Some(spec) = s.strip_prefix(HUB_SCHEME) {
            let (id, rev) = super::snapshot::split_spec(spec);
            return Some(RemoteSource::Hub {
                id: id.to_string(),
                revision: rev.map(str::to_string),
            });
        }
        (s.starts_with("http://") || s.starts_with("https://"))
            .then(|| RemoteSource::Dir(s.to_string()))
    }
}

/// A remote source opened for a job.
#[derive(Debug)]
pub struct OpenedSource {
    /// The local directory of its small files (its weights are read remotely).
    pub dir: PathBuf,
    /// What pins the weights: `hub org/name@commit`, or the directory's URL and each weight
    /// file's ETag and size.
    pub identity: String,
    /// `general.name` as the reference's `--remote` writes it (the model id), for a Hub model.
    pub model_name: Option<String>,
}

/// Opens `source` through `client`: a Hub model's small files into the HuggingFace cache
/// `hub_cache` (refused when `offline`), a plain directory's into a directory of
/// `plain_root` named by the URL's hash (a file the server sends unchanged is kept as it is,
/// so its modification time stays).
pub fn open_source(
    source: &RemoteSource,
    client: &Arc<Client>,
    hub_cache: Option<&Path>,
    offline: bool,
    plain_root: &Path,
) -> Result<OpenedSource, RemoteError> {
    match source {
        RemoteSource::Hub { id, revision } => {
            if offline {
                return Err(RemoteError::Offline { id: id.clone() });
            }
            let cache = hub_cache.ok_or(RemoteError::NoCache)?;
            let snap = fetch_snapshot(client.clone(), cache, id, revision.as_deref())?;
            Ok(OpenedSource {
                identity: format!("hub {}@{}", snap.id, snap.commit),
                dir: snap.dir,
                model_name: Some(snap.id),
            })
        }
        RemoteSource::Dir(url) => {
            let hash: String = Sha256::digest(url.as_bytes())[..8]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let plain = fetch_plain_dir(client.clone(), url, &plain_root.join(hash))?;
            let mut identity = format!("dir {}", plain.url);
            for w in &plain.weights {
                let u = format!("{}/{}", plain.url.trim_end_matches('/'), encode_path(w));
                let (_, pin) = client.open(&u, 1)?;
                identity.push_str(&format!(" {w} {} {}", pin.etag, pin.size));
            }
            Ok(OpenedSource {
                dir: plain.dir,
                identity,
                model_name: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_sources_are_named_by_their_scheme() {
        assert_eq!(
            RemoteSource::parse(Path::new("hf://org/name@v1")),
            Some(RemoteSource::Hub {
                id: "org/name".into(),
                revision: Some("v1".into())
            })
        );
        assert_eq!(
            RemoteSource::parse(Path::new("https://h/m/")),
            Some(RemoteSource::Dir("https://h/m/".into()))
        );
        assert_eq!(RemoteSource::parse(Path::new("models/m")), None);
        assert_eq!(RemoteSource::parse(Path::new("/abs/hf://x")), None);
    }
}
