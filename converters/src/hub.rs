//! HuggingFace model ids (`Qwen/Qwen2.5-0.5B-Instruct`, `hf:org/name`) resolved in the local
//! HuggingFace cache, the way `huggingface_hub` lays it out:
//!
//! ```text
//! <cache>/models--<org>--<name>/refs/<revision>      a commit hash
//! <cache>/models--<org>--<name>/snapshots/<commit>/  the files (symlinks into blobs/)
//! ```
//!
//! `<cache>` is `$HF_HUB_CACHE`, else `$HUGGINGFACE_HUB_CACHE`, else `$HF_HOME/hub`, else
//! `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`. Nothing is downloaded:
//! a model that is not in the cache is an error naming the path searched.

use std::path::{Path, PathBuf};

/// Why a model id could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The id is not `org/name` (or `name`) made of the characters the Hub allows.
    #[error("'{0}' is not a HuggingFace model id (org/name)")]
    BadId(String),
    /// No HuggingFace cache directory could be determined.
    #[error("no HuggingFace cache: set HF_HUB_CACHE or HF_HOME (HOME is not set either)")]
    NoCache,
    /// The model is not in the cache.
    #[error("{id} is not in the HuggingFace cache: {path} does not exist (download it first, e.g. `hf download {id}`; nothing is fetched from the network)")]
    NotCached {
        /// The model id.
        id: String,
        /// The directory searched.
        path: PathBuf,
    },
    /// The revision is neither a ref nor a cached commit.
    #[error("{id}: revision '{revision}' is not in the cache (refs there: {refs})")]
    NoRevision {
        /// The model id.
        id: String,
        /// The revision asked for.
        revision: String,
        /// The refs the cache has, comma-separated.
        refs: String,
    },
    /// A ref file does not hold a commit hash.
    #[error("{path}: not a commit hash")]
    BadRef {
        /// The ref file.
        path: PathBuf,
    },
}

/// The HuggingFace hub cache directory from the environment (see the module documentation).
pub fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("HF_HUB_CACHE")
        .or_else(|| var("HUGGINGFACE_HUB_CACHE"))
        .or_else(|| var("HF_HOME").map(|h| h.join("hub")))
        .or_else(|| var("XDG_CACHE_HOME").map(|c| c.join("huggingface/hub")))
        .or_else(|| var("HOME").map(|h| h.join(".cache/huggingface/hub")))
}

/// The model id in `arg`, when `arg` names a model rather than a path: `hf:<id>` always;
/// a bare `org/name` only when no such file or directory exists.
pub fn model_id(arg: &str) -> Option<&str> {
    if let Some(id) = arg.strip_prefix("hf:") {
        return Some(id);
    }
    let looks_like_id = arg.split('/').count() == 2 && valid_id(arg);
    (looks_like_id && !Path::new(arg).exists()).then_some(arg)
}

pub(crate) fn valid_part(p: &str) -> bool {
    !p.is_empty()
        && p.len() <= 96
        && !p.starts_with(['.', '-'])
        && !p.contains("--")
        && !p.contains("..")
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

pub(crate) fn valid_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('/').collect();
    matches!(parts.len(), 1 | 2) && parts.iter().all(|p| valid_part(p))
}

pub(crate) fn is_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The snapshot directory of model `id` at `revision` (default `main`) in `cache`.
pub fn resolve_in(cache: &Path, id: &str, revision: Option<&str>) -> Result<PathBuf, HubError> {
    if !valid_id(id) {
        return Err(HubError::BadId(id.to_string()));
    }
    let repo = cache.join(format!("models--{}", id.replace('/', "--")));
    if !repo.is_dir() {
        return Err(HubError::NotCached {
            id: id.to_string(),
            path: repo,
        });
    }
    let revision = revision.unwrap_or("main");
    let ref_file = repo.join("refs").join(revision);
    let commit = if valid_part(revision) && ref_file.is_file() {
        let text = std::fs::read_to_string(&ref_file).unwrap_or_default();
        let commit = text.trim().to_string();
        if !is_commit(&commit) {
            return Err(HubError::BadRef { path: ref_file });
        }
        commit
    } else if is_commit(revision) {
        revision.to_ascii_lowercase()
    } else {
        String::new()
    };
    let snapshot = repo.join("snapshots").join(&commit);
    if commit.is_empty() || !snapshot.is_dir() {
        let mut refs: Vec<String> = std::fs::read_dir(repo.join("refs"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        refs.sort();
        return Err(HubError::NoRevision {
            id: id.to_string(),
            revision: revision.to_string(),
            refs: if refs.is_empty() {
                "none".into()
            } else {
                refs.join(", ")
            },
        });
    }
    Ok(snapshot)
}

/// The snapshot directory of model `id` at `revision` in the cache the environment names.
pub fn resolve(id: &str, revision: Option<&str>) -> Result<PathBuf, HubError> {
    resolve_in(&cache_dir().ok_or(HubError::NoCache)?, id, revision)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_paths_are_told_apart() {
        assert_eq!(model_id("hf:Qwen/Qwen2.5-0.5B"), Some("Qwen/Qwen2.5-0.5B"));
        assert_eq!(model_id("Qwen/Qwen2.5-0.5B"), Some("Qwen/Qwen2.5-0.5B"));
        assert_eq!(model_id("./model"), None);
        assert_eq!(model_id("/abs/model"), None);
        assert_eq!(model_id("a/b/c"), None);
        assert_eq!(model_id("../x"), None);
        assert!(!valid_id("a/.."));
        assert!(!valid_id("a--b/c"));
        assert!(valid_id("gpt2"));
    }
}
