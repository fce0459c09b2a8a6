//! A model directory as one value: where its files are, and the shared files read once.
//!
//! Everything below the reader's entry point takes a [`ModelDir`] instead of a path, so a
//! file several steps consult (tokenizer_config.json: the vocabulary path, the special
//! tokens, the SentencePiece added tokens) is read and parsed once, with one error for a bad
//! one. It dereferences to its [`Path`], so code that only joins names onto it is unchanged.
//!
//! Files are read when first asked for, not when the value is made: a conversion that never
//! needs one (a `--vocab-only` run that fails before the vocabulary, a weights-only check)
//! neither reads it nor fails on it, exactly as when each step opened its own file. A read
//! that fails is not remembered: the next request reads again and fails the same way.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value as Json;

use crate::ConvertError;

/// tokenizer_config.json's name.
pub const TOKENIZER_CONFIG: &str = "tokenizer_config.json";

/// tokenizer.json's name.
pub const TOKENIZER_JSON: &str = "tokenizer.json";

/// A model directory and the files read from it so far.
#[derive(Debug, Default)]
pub struct ModelDir {
    path: PathBuf,
    /// tokenizer_config.json's text (`None`: the directory has no such file).
    tokenizer_config_text: OnceLock<Option<String>>,
    /// tokenizer_config.json parsed as Python's `json` reads it.
    tokenizer_config: OnceLock<Option<Json>>,
    /// tokenizer.json parsed as Python's `json` reads it (the special tokens, the added
    /// tokens and the model type; the BPE reader loads the file with `tokenizers` itself).
    tokenizer_json: OnceLock<Option<Json>>,
}

impl ModelDir {
    /// The directory at `path`; nothing is read yet.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ModelDir {
            path: path.into(),
            ..ModelDir::default()
        }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// tokenizer_config.json's path.
    pub fn tokenizer_config_path(&self) -> PathBuf {
        self.path.join(TOKENIZER_CONFIG)
    }

    /// tokenizer_config.json's text, when the directory has the file.
    pub fn tokenizer_config_text(&self) -> Result<Option<&str>, ConvertError> {
        if let Some(t) = self.tokenizer_config_text.get() {
            return Ok(t.as_deref());
        }
        let path = self.tokenizer_config_path();
        let text = if path.is_file() {
            Some(super::tokenizer::read_text(&path)?)
        } else {
            None
        };
        Ok(self.tokenizer_config_text.get_or_init(|| text).as_deref())
    }

    /// tokenizer_config.json as Python's `json` reads it (`NaN` and `Infinity` accepted),
    /// when the directory has the file.
    pub fn tokenizer_config(&self) -> Result<Option<&Json>, ConvertError> {
        if let Some(v) = self.tokenizer_config.get() {
            return Ok(v.as_ref());
        }
        let parsed = match self.tokenizer_config_text()? {
            Some(text) => Some(super::tokenizer::parse_json(
                &self.tokenizer_config_path(),
                text,
            )?),
            None => None,
        };
        Ok(self.tokenizer_config.get_or_init(|| parsed).as_ref())
    }
}

impl ModelDir {
    /// tokenizer.json as Python's `json` reads it, when the directory has the file.
    pub fn tokenizer_json(&self) -> Result<Option<&Json>, ConvertError> {
        if let Some(v) = self.tokenizer_json.get() {
            return Ok(v.as_ref());
        }
        let path = self.path.join(TOKENIZER_JSON);
        let parsed = if path.is_file() {
            let text = super::tokenizer::read_text(&path)?;
            Some(super::tokenizer::parse_json(&path, &text)?)
        } else {
            None
        };
        Ok(self.tokenizer_json.get_or_init(|| parsed).as_ref())
    }
}

impl Deref for ModelDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ModelDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("ggufkit-model-dir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The file is read once: a change on disk after the first read is not seen.
    #[test]
    fn tokenizer_config_is_read_once() {
        let d = scratch("once");
        std::fs::write(d.join(TOKENIZER_CONFIG), r#"{"a": NaN, "b": 1}"#).unwrap();
        let md = ModelDir::new(&d);
        assert_eq!(md.tokenizer_config().unwrap().unwrap()["b"], 1);
        assert!(md.tokenizer_config().unwrap().unwrap()["a"].is_null());
        std::fs::write(d.join(TOKENIZER_CONFIG), r#"{"b": 2}"#).unwrap();
        assert_eq!(md.tokenizer_config().unwrap().unwrap()["b"], 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// No file is `None`; a bad one is an error naming the file, every time it is asked for.
    #[test]
    fn absent_and_bad_files() {
        let d = scratch("bad");
        let md = ModelDir::new(&d);
        assert!(md.tokenizer_config().unwrap().is_none());
        let md = ModelDir::new(&d);
        std::fs::write(d.join(TOKENIZER_CONFIG), "{").unwrap();
        for _ in 0..2 {
            let e = md.tokenizer_config().unwrap_err().to_string();
            assert!(e.contains(TOKENIZER_CONFIG), "{e}");
        }
        assert!(md.tokenizer_json().unwrap().is_none());
        std::fs::write(d.join(TOKENIZER_JSON), r#"{"model": {"type": "BPE"}}"#).unwrap();
        // Absence is remembered too; a new value sees the file.
        assert!(md.tokenizer_json().unwrap().is_none());
        let md = ModelDir::new(&d);
        assert_eq!(
            md.tokenizer_json().unwrap().unwrap()["model"]["type"],
            "BPE"
        );
        assert_eq!(md.path(), d.as_path());
        assert_eq!(md.join("x"), d.join("x"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
