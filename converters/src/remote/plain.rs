//! A plain HTTP(S) directory of HuggingFace files (`gguf-convert https://host/dir/`): no
//! listing, no API, so its files are fetched by the names a model directory uses. The small
//! files are stored in a local directory named like the URL's last segment (the readers
//! derive `general.*` names from a directory's name, as from a local copy's); the safetensors
//! weights are read by range requests, never stored.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::dirs::{self, encode_path, RemoteDir};
use super::{Client, RemoteError};

/// The file a model directory cannot do without.
pub const REQUIRED: &str = "config.json";

/// The weight index of a sharded model.
pub const INDEX: &str = "model.safetensors.index.json";

/// The single weight file of an unsharded model.
pub const SINGLE: &str = "model.safetensors";

/// The other small files a model directory may hold (configuration, tokenizer, model card,
/// quantization and sentence-transformers files): each fetched when the server has it, and
/// skipped when it answers 404.
pub const OPTIONAL: &[&str] = &[
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "tokenizer.model",
    "tokenizer.model.v3",
    "spiece.model",
    "sentencepiece.bpe.model",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "tekken.json",
    "params.json",
    "chat_template.json",
    "chat_template.jinja",
    "preprocessor_config.json",
    "processor_config.json",
    "hf_quant_config.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "README.md",
    "LICENSE",
];

/// A plain directory opened: where its small files are, and which weight files are remote.
#[derive(Debug)]
pub struct PlainDir {
    /// The directory's URL (ending in `/`).
    pub url: String,
    /// The local directory holding the small files.
    pub dir: PathBuf,
    /// The safetensors files read remotely.
    pub weights: Vec<String>,
    /// The small files fetched.
    pub fetched: Vec<String>,
}

/// The local directory name for `url`: its last non-empty path segment (`model` when it has
/// none, or one that is not a plain file name).
pub fn dir_name(url: &url::Url) -> String {
    url.path_segments()
        .and_then(|mut s| s.rfind(|p| !p.is_empty()))
        .map(|s| s.to_string())
        .filter(|s| {
            !s.starts_with('.')
                && s.len() <= 255
                && s.bytes().all(|b| b.is_ascii_graphic() && b != b'%')
        })
        .unwrap_or_else(|| "model".to_string())
}

/// Opens the directory at `url`: its small files fetched into `root/<last segment>/`, its
/// weights (the index's shards, else `model.safetensors`) registered as the directory's
/// remote files. A missing `config.json` or weight file is [`RemoteError::Status`] 404 on its
/// URL; a missing optional file is skipped.
pub fn fetch_plain_dir(
    client: Arc<Client>,
    url: &str,
    root: &Path,
) -> Result<PlainDir, RemoteError> {
    let mut base = url::Url::parse(url).map_err(|_| RemoteError::BadEndpoint(url.to_string()))?;
    if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
        return Err(RemoteError::BadEndpoint(url.to_string()));
    }
    base.set_query(None);
    base.set_fragment(None);
    let name = dir_name(&base);
    let base_str = base.as_str().trim_end_matches('/').to_string();
    let dir = root.join(&name);
    std::fs::create_dir_all(&dir).map_err(|e| RemoteError::io(&dir, e))?;
    let file_url = |f: &str| format!("{base_str}/{}", encode_path(f));
    let mut fetched = Vec::new();
    for f in std::iter::once(REQUIRED)
        .chain(OPTIONAL.iter().copied())
        .chain(std::iter::once(INDEX))
    {
        let found = fetch_file(&client, &file_url(f), f, &dir.join(f))?;
        if !found && f == REQUIRED {
            return Err(missing(&file_url(f), "the model's configuration"));
        }
        if found {
            fetched.push(f.to_string());
        }
    }
    if fetched.iter().any(|f| f == "modules.json") {
        let modules = std::fs::read(dir.join("modules.json"))
            .map_err(|e| RemoteError::io(dir.join("modules.json"), e))?;
        for f in module_configs(&modules) {
            let target = dir.join(&f);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| RemoteError::io(parent, e))?;
            }
            if fetch_file(&client, &file_url(&f), "config.json", &target)? {
                fetched.push(f);
            }
        }
    }
    let weights = if fetched.iter().any(|f| f == INDEX) {
        index_shards(&dir.join(INDEX), &file_url(INDEX))?
    } else {
        // No index: one weight file, which must be there (its size and ETag learnt now).
        match client.open(&file_url(SINGLE), 1) {
            Ok(_) => vec![SINGLE.to_string()],
            Err(RemoteError::Status { status: 404, .. }) => {
                return Err(missing(
                    &file_url(SINGLE),
                    "the weights (neither model.safetensors.index.json nor model.safetensors \
                     is in the directory; a plain directory is read for safetensors weights)",
                ))
            }
            Err(e) => return Err(e),
        }
    };
    let remote = RemoteDir::new(weights.iter().cloned().collect(), base_str, client);
    dirs::register(&dir, Arc::new(remote));
    Ok(PlainDir {
        url: base.to_string(),
        dir,
        weights,
        fetched,
    })
}

/// The configuration files of a sentence-transformers model's modules (`<path>/config.json`
/// for each entry of `modules.json` with a path; the pooling module's tells the converter the
/// pooling type). A path that is not a short run of plain relative segments is skipped, as is
/// a `modules.json` that is not a list: the converter reports those itself.
pub fn module_configs(modules_json: &[u8]) -> Vec<String> {
    let Ok(serde_json::Value::Array(mods)) = serde_json::from_slice(modules_json) else {
        return Vec::new();
    };
    let plain = |p: &str| {
        !p.is_empty()
            && p.len() <= 255
            && p.split('/').all(|seg| {
                !seg.is_empty()
                    && seg != "."
                    && seg != ".."
                    && seg
                        .bytes()
                        .all(|b| b.is_ascii_graphic() && b != b'\\' && b != b'%')
            })
    };
    let mut out = BTreeSet::new();
    for m in mods.iter().take(64) {
        if let Some(p) = m.get("path").and_then(serde_json::Value::as_str) {
            let p = p.trim_end_matches('/');
            if plain(p) {
                out.insert(format!("{p}/config.json"));
            }
        }
    }
    out.into_iter().collect()
}

/// A required file the server does not have.
fn missing(url: &str, what: &str) -> RemoteError {
    RemoteError::Status {
        url: url.to_string(),
        status: 404,
        reason: "Not Found".into(),
        hint: format!(" ({what} is required)"),
    }
}

/// The shard names a weight index lists (its `weight_map`'s values): plain file names only.
/// The HF reader checks the index again in full; this only learns which files to read.
fn index_shards(path: &Path, url: &str) -> Result<Vec<String>, RemoteError> {
    let bad = |why: String| RemoteError::BadApi {
        url: url.to_string(),
        why,
    };
    let text = std::fs::read(path).map_err(|e| RemoteError::io(path, e))?;
    let json: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| bad(format!("the index is not JSON: {e}")))?;
    let map = json
        .get("weight_map")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| bad("the index has no \"weight_map\" object".into()))?;
    let mut names = BTreeSet::new();
    for v in map.values() {
        let n = v
            .as_str()
            .ok_or_else(|| bad("a weight_map value is not a file name".into()))?;
        if n.is_empty() || n.contains('/') || n.contains('\\') || n == "." || n == ".." {
            return Err(bad(format!("shard name {n:?} is not a plain file name")));
        }
        names.insert(n.to_string());
    }
    Ok(names.into_iter().collect())
}

/// Fetches `url` into `target` (written under a temporary name and renamed when whole).
/// `Ok(false)` when the server answers 404.
fn fetch_file(client: &Client, url: &str, name: &str, target: &Path) -> Result<bool, RemoteError> {
    let tmp = target.with_file_name(format!(
        ".{}.ggufkit-{}.incomplete",
        name,
        std::process::id()
    ));
    let file = std::fs::File::create(&tmp).map_err(|e| RemoteError::io(&tmp, e))?;
    let file = std::cell::RefCell::new(file);
    struct Cell<'a>(&'a std::cell::RefCell<std::fs::File>);
    impl Write for Cell<'_> {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().write(b)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.0.borrow_mut().flush()
        }
    }
    let got = client.download(
        url,
        &format!("{name} (a small file)"),
        client.options().max_small_file,
        &mut Cell(&file),
        &mut || {
            use std::io::Seek;
            let mut f = file.borrow_mut();
            f.set_len(0)?;
            f.rewind()
        },
    );
    drop(file);
    let r = match got {
        // A file already there with the same bytes is kept (its modification time too).
        Ok(_) if same_file(&tmp, target) => Ok(true),
        Ok(_) => std::fs::rename(&tmp, target)
            .map(|_| true)
            .map_err(|e| RemoteError::io(target, e)),
        Err(RemoteError::Status { status: 404, .. }) => Ok(false),
        Err(e) => Err(e),
    };
    // Gone after a rename; else (kept, failed, 404) removed.
    let _ = std::fs::remove_file(&tmp);
    r
}

/// Whether files `a` and `b` both exist and hold the same bytes.
fn same_file(a: &Path, b: &Path) -> bool {
    let size = |p: &Path| std::fs::metadata(p).ok().map(|m| m.len());
    size(a).is_some()
        && size(a) == size(b)
        && matches!((std::fs::read(a), std::fs::read(b)), (Ok(x), Ok(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_configs_are_the_plain_paths_of_modules_json() {
        let mods =
            br#"[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
            {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
            {"idx":2,"name":"2","path":"2_Dense/","type":"sentence_transformers.models.Dense"},
            {"path":"../etc"},{"path":"/abs"},{"path":"a//b"},{"path":"x\\y"},{"path":7}]"#;
        assert_eq!(
            module_configs(mods),
            vec!["1_Pooling/config.json", "2_Dense/config.json"]
        );
        assert!(module_configs(b"{}").is_empty());
        assert!(module_configs(b"not json").is_empty());
    }

    #[test]
    fn the_directory_is_named_by_the_last_segment() {
        let n = |u: &str| dir_name(&url::Url::parse(u).unwrap());
        assert_eq!(n("http://h/models/llama-spm/"), "llama-spm");
        assert_eq!(n("http://h/models/llama-spm"), "llama-spm");
        assert_eq!(n("http://h/"), "model");
        assert_eq!(n("http://h/a/..%2F..%2Fetc/"), "model");
    }
}
