//! A model directory as one value: where its files are, and the shared files read once.
//!
//! Everything below the reader's entry point takes a [`ModelDir`] instead of a path, so a
//! file several steps consult (config.json, tokenizer_config.json, tokenizer.json,
//! tokenizer.model, generation_config.json) is read, parsed and validated once, with one
//! error, naming the file, for a bad one. It dereferences to its [`Path`], so code that only
//! joins names onto it (a file one step reads for itself) is unchanged.
//!
//! Files are read when first asked for, not when the value is made: a conversion that never
//! needs one (a `--vocab-only` run that fails before the vocabulary, a weights-only check)
//! neither reads it nor fails on it, exactly as when each step opened its own file. A read
//! that fails is not remembered: the next request reads again and fails the same way. The
//! absence of a file is remembered.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde_json::Value as Json;

use super::tokenizer::proto::SpmModel;
use crate::ConvertError;

/// config.json's name.
pub const CONFIG: &str = "config.json";

/// tokenizer_config.json's name.
pub const TOKENIZER_CONFIG: &str = "tokenizer_config.json";

/// tokenizer.json's name.
pub const TOKENIZER_JSON: &str = "tokenizer.json";

/// tokenizer.model's name (a SentencePiece model).
pub const TOKENIZER_MODEL: &str = "tokenizer.model";

/// generation_config.json's name.
pub const GENERATION_CONFIG: &str = "generation_config.json";

/// A file's cached content: `None` when the directory has no such file.
type Slot<T> = OnceLock<Option<T>>;

/// The value in `slot`, loading it first when it is not there yet; a failed load leaves the
/// slot empty.
fn cached<T>(
    slot: &Slot<T>,
    load: impl FnOnce() -> Result<Option<T>, ConvertError>,
) -> Result<Option<&T>, ConvertError> {
    if let Some(v) = slot.get() {
        return Ok(v.as_ref());
    }
    let v = load()?;
    Ok(slot.get_or_init(|| v).as_ref())
}

/// A model directory and the files read from it so far.
#[derive(Debug, Default)]
pub struct ModelDir {
    path: PathBuf,
    /// config.json parsed as Python's `json` reads it, at most
    /// [`super::config::MAX_CONFIG_BYTES`] long.
    config: Slot<Json>,
    /// tokenizer_config.json's text.
    tokenizer_config_text: Slot<String>,
    /// tokenizer_config.json parsed as Python's `json` reads it.
    tokenizer_config: Slot<Json>,
    /// tokenizer.json's text (the BPE reader hands it to `tokenizers`, which parses it as
    /// strict JSON).
    tokenizer_json_text: Slot<String>,
    /// tokenizer.json parsed as Python's `json` reads it (the special tokens, the added
    /// tokens and the model type).
    tokenizer_json: Slot<Json>,
    /// A strict parse of tokenizer.json made ahead of its one use
    /// ([`ModelDir::prefetch_tokenizer_json`]), taken by [`ModelDir::tokenizer_json_strict`].
    tokenizer_json_strict: Mutex<Option<Json>>,
    /// tokenizer.model decoded.
    tokenizer_model: Slot<SpmModel>,
    /// generation_config.json parsed as strict JSON (transformers' `GenerationConfig`).
    generation_config: Slot<Json>,
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

    /// Whether the directory has a regular file (or a link to one) called `name`. For a
    /// shared file already read (or found absent), the answer is the value's, not the disk's
    /// again, so every step sees the one directory the first read saw.
    pub fn has_file(&self, name: &str) -> bool {
        let known = match name {
            CONFIG => self.config.get().map(Option::is_some),
            TOKENIZER_CONFIG => self.tokenizer_config_text.get().map(Option::is_some),
            TOKENIZER_JSON => self.tokenizer_json_text.get().map(Option::is_some),
            TOKENIZER_MODEL => self.tokenizer_model.get().map(Option::is_some),
            GENERATION_CONFIG => self.generation_config.get().map(Option::is_some),
            _ => None,
        };
        known.unwrap_or_else(|| self.path.join(name).is_file())
    }

    /// config.json's path.
    pub fn config_path(&self) -> PathBuf {
        self.path.join(CONFIG)
    }

    /// tokenizer_config.json's path.
    pub fn tokenizer_config_path(&self) -> PathBuf {
        self.path.join(TOKENIZER_CONFIG)
    }

    /// tokenizer.json's path.
    pub fn tokenizer_json_path(&self) -> PathBuf {
        self.path.join(TOKENIZER_JSON)
    }

    /// tokenizer.model's path.
    pub fn tokenizer_model_path(&self) -> PathBuf {
        self.path.join(TOKENIZER_MODEL)
    }

    /// generation_config.json's path.
    pub fn generation_config_path(&self) -> PathBuf {
        self.path.join(GENERATION_CONFIG)
    }
}

impl ModelDir {
    /// config.json as Python's `json` reads it; an error naming the file when there is
    /// none, when it is not a regular file, too large, not UTF-8 or not JSON.
    pub fn config(&self) -> Result<&Json, ConvertError> {
        if let Some(v) = self.config_if_present()? {
            return Ok(v);
        }
        let path = self.config_path();
        let problem = match std::fs::metadata(&path) {
            Err(_) => "missing config.json: not a HuggingFace model directory".to_string(),
            Ok(m) => format!(
                "config.json is {}, not a regular file",
                super::safetensors::file_kind(&m)
            ),
        };
        Err(ConvertError::format(&path, None, problem))
    }

    /// config.json as Python's `json` reads it, when the directory has the file (a
    /// vocabulary directory may have none).
    pub fn config_if_present(&self) -> Result<Option<&Json>, ConvertError> {
        cached(&self.config, || {
            let path = self.config_path();
            if !path.is_file() {
                return Ok(None);
            }
            let text = super::config::read_bounded(&path)?;
            let v = serde_json::from_str(&super::config::python_json(&text))
                .map_err(|e| ConvertError::bad_json(&path, &e))?;
            Ok(Some(v))
        })
    }

    /// tokenizer_config.json's text, when the directory has the file.
    pub fn tokenizer_config_text(&self) -> Result<Option<&str>, ConvertError> {
        cached(&self.tokenizer_config_text, || {
            let path = self.tokenizer_config_path();
            if !path.is_file() {
                return Ok(None);
            }
            super::tokenizer::read_text(&path).map(Some)
        })
        .map(|t| t.map(String::as_str))
    }

    /// tokenizer_config.json as Python's `json` reads it (`NaN` and `Infinity` accepted),
    /// when the directory has the file.
    pub fn tokenizer_config(&self) -> Result<Option<&Json>, ConvertError> {
        cached(&self.tokenizer_config, || {
            match self.tokenizer_config_text()? {
                Some(text) => {
                    super::tokenizer::parse_json(&self.tokenizer_config_path(), text).map(Some)
                }
                None => Ok(None),
            }
        })
    }

    /// tokenizer.json's text, when the directory has the file.
    pub fn tokenizer_json_text(&self) -> Result<Option<&str>, ConvertError> {
        cached(&self.tokenizer_json_text, || {
            let path = self.tokenizer_json_path();
            if !path.is_file() {
                return Ok(None);
            }
            super::tokenizer::read_text(&path).map(Some)
        })
        .map(|t| t.map(String::as_str))
    }

    /// tokenizer.json as Python's `json` reads it, when the directory has the file.
    pub fn tokenizer_json(&self) -> Result<Option<&Json>, ConvertError> {
        cached(&self.tokenizer_json, || {
            match self.tokenizer_json_text()? {
                Some(text) => {
                    super::tokenizer::parse_json(&self.tokenizer_json_path(), text).map(Some)
                }
                None => Ok(None),
            }
        })
    }

    /// tokenizer.json's text and its parse as strict JSON (as the `tokenizers` library
    /// reads it), from the text already read, when the directory has the file; an error
    /// naming the file when it is not strict JSON.
    pub fn tokenizer_json_strict(&self) -> Result<Option<(&str, Json)>, ConvertError> {
        let Some(text) = self.tokenizer_json_text()? else {
            return Ok(None);
        };
        let prefetched = self
            .tokenizer_json_strict
            .lock()
            .map(|mut slot| slot.take())
            .unwrap_or(None);
        let json = match prefetched {
            Some(json) => json,
            None => serde_json::from_str(text)
                .map_err(|e| ConvertError::bad_json(self.tokenizer_json_path(), &e))?,
        };
        Ok(Some((text, json)))
    }

    /// Parses tokenizer.json both ways (as Python's `json` and as strict JSON) on two
    /// threads, ahead of the vocabulary steps that read it, when the directory has the file
    /// and no tokenizer.model (a SentencePiece directory may never read tokenizer.json).
    /// Each parse costs about as much as building the tokenizer; doing the two at once takes
    /// one of them off a conversion's serial path. Nothing fails here: a file that does not
    /// read or parse is left for the step that needs it, which fails on it as before.
    pub fn prefetch_tokenizer_json(&self) {
        if self.has_file(TOKENIZER_MODEL) || !matches!(self.tokenizer_json_text(), Ok(Some(_))) {
            return;
        }
        rayon::join(
            || {
                let _ = self.tokenizer_json();
            },
            || {
                let Ok(Some(text)) = self.tokenizer_json_text() else {
                    return;
                };
                if let Ok(json) = serde_json::from_str::<Json>(text) {
                    if let Ok(mut slot) = self.tokenizer_json_strict.lock() {
                        *slot = Some(json);
                    }
                }
            },
        );
    }

    /// tokenizer.model decoded, when the directory has the file (its absence is the
    /// reference's `FileNotFoundError`, which sends several classes to another path).
    pub fn tokenizer_model(&self) -> Result<Option<&SpmModel>, ConvertError> {
        cached(&self.tokenizer_model, || {
            super::tokenizer::load_model_at(&self.tokenizer_model_path())
        })
    }

    /// generation_config.json as strict JSON, when the directory has the file.
    pub fn generation_config(&self) -> Result<Option<&Json>, ConvertError> {
        cached(&self.generation_config, || {
            let path = self.generation_config_path();
            if !path.is_file() {
                return Ok(None);
            }
            super::params::read_json(&path).map(Some)
        })
    }
}

/// Why `name` cannot name an entry of a model directory: it must be one plain path
/// component (no separator, not `.` or `..`, not empty), so a class's sub-directory or file
/// can never lead outside the directory it is read from.
fn plain_component(name: &str) -> Option<&'static str> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(std::path::Component::Normal(c)), None) if c == name => None,
        _ => Some("not a single plain path component"),
    }
}

impl ModelDir {
    /// The sub-directory `name` of this directory as a model directory of its own (a model
    /// a class reads beside its own weights: an audio tokenizer in `audio_tokenizer/`), with
    /// the same readers and checks as this one: its config.json through [`ModelDir::config`],
    /// its weights through [`ModelDir::safetensors`]. `name` must be one plain path
    /// component, and the entry a directory (or a link to one); `why` says what needs it, in
    /// the error when it is missing.
    pub fn sub_dir(&self, name: &str, why: &str) -> Result<ModelDir, ConvertError> {
        let path = self.path.join(name);
        if let Some(problem) = plain_component(name) {
            return Err(ConvertError::format(&path, None, problem.to_string()));
        }
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => Ok(ModelDir::new(path)),
            Ok(m) => Err(ConvertError::format(
                &path,
                None,
                format!(
                    "{} is {}, not a directory ({why})",
                    name,
                    super::safetensors::file_kind(&m)
                ),
            )),
            Err(_) => Err(ConvertError::MissingFile {
                path,
                why: why.to_string(),
            }),
        }
    }

    /// This directory's safetensors weights, sorted by name within each file: the file
    /// `file` alone when given (a class that loads one file by name; an error naming it
    /// when it is missing), else the part set (`model*.safetensors`, checked against
    /// `model.safetensors.index.json` when there is one). Every file is mapped and checked
    /// as the model's own weights are.
    pub fn safetensors(
        &self,
        file: Option<&str>,
        why: &str,
    ) -> Result<Vec<super::safetensors::StTensor>, ConvertError> {
        let Some(file) = file else {
            return Ok(super::safetensors::index_dir(&self.path)?.tensors);
        };
        let path = self.path.join(file);
        if let Some(problem) = plain_component(file) {
            return Err(ConvertError::format(&path, None, problem.to_string()));
        }
        if !path.is_file() {
            return Err(ConvertError::MissingFile {
                path,
                why: why.to_string(),
            });
        }
        super::safetensors::read_single(&path)
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

    /// A sub-directory or weight file is one plain path component of the directory: no
    /// separator, `.`, `..` or empty name leads elsewhere.
    #[test]
    fn sub_directories_are_plain_names() {
        let d = scratch("sub");
        std::fs::create_dir_all(d.join("inner")).unwrap();
        std::fs::write(d.join("inner").join(CONFIG), r#"{"d_model": 8}"#).unwrap();
        let dir = ModelDir::new(&d);
        let sub = dir.sub_dir("inner", "a test").unwrap();
        assert_eq!(sub.config().unwrap()["d_model"], 8);
        for bad in ["../inner", "inner/..", "a/b", ".", "..", ""] {
            assert!(
                matches!(dir.sub_dir(bad, "a test"), Err(ConvertError::Format { .. })),
                "{bad}"
            );
            assert!(
                matches!(
                    sub.safetensors(Some(bad), "a test"),
                    Err(ConvertError::Format { .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            dir.sub_dir("absent", "a test"),
            Err(ConvertError::MissingFile { .. })
        ));
        assert!(matches!(
            sub.safetensors(Some("model.safetensors"), "a test"),
            Err(ConvertError::MissingFile { .. })
        ));
        assert!(matches!(
            sub.safetensors(None, "a test"),
            Err(ConvertError::NoWeights { .. })
        ));
        let _ = std::fs::remove_dir_all(&d);
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

    /// tokenizer.json's text is read once: its strict parse, its Python parse and whether
    /// the directory has it answer from that read, not from the disk again.
    #[test]
    fn tokenizer_json_is_read_once() {
        let d = scratch("tokenizer-json");
        std::fs::write(
            d.join(TOKENIZER_JSON),
            r#"{"model": {"type": "BPE", "x": NaN}}"#,
        )
        .unwrap();
        let md = ModelDir::new(&d);
        assert!(!md.has_file(CONFIG));
        assert!(md.tokenizer_json_text().unwrap().unwrap().contains("NaN"));
        std::fs::remove_file(d.join(TOKENIZER_JSON)).unwrap();
        assert!(md.has_file(TOKENIZER_JSON));
        assert_eq!(
            md.tokenizer_json().unwrap().unwrap()["model"]["type"],
            "BPE"
        );
        let e = md.tokenizer_json_strict().unwrap_err();
        assert!(
            matches!(&e, ConvertError::BadJson { path, .. } if path.ends_with(TOKENIZER_JSON)),
            "{e}"
        );
        std::fs::write(d.join(CONFIG), "{}").unwrap();
        assert!(
            md.has_file(CONFIG),
            "a file not read yet is looked for on the disk"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A prefetched tokenizer.json answers both parses as the steps would have made them; a
    /// file that is not strict JSON still fails its strict read, naming it; a SentencePiece
    /// directory's tokenizer.json is not read ahead.
    #[test]
    fn prefetch_tokenizer_json_changes_no_answer() {
        let d = scratch("prefetch");
        let text = r#"{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}}, "x": [1.5, null]}"#;
        std::fs::write(d.join(TOKENIZER_JSON), text).unwrap();
        let md = ModelDir::new(&d);
        md.prefetch_tokenizer_json();
        let direct: Json = serde_json::from_str(text).unwrap();
        assert_eq!(md.tokenizer_json().unwrap().unwrap(), &direct);
        assert_eq!(md.tokenizer_json_strict().unwrap().unwrap().1, direct);
        assert_eq!(md.tokenizer_json_strict().unwrap().unwrap().1, direct);

        std::fs::write(d.join(TOKENIZER_JSON), r#"{"x": NaN}"#).unwrap();
        let md = ModelDir::new(&d);
        md.prefetch_tokenizer_json();
        assert!(md.tokenizer_json().unwrap().is_some());
        let e = md.tokenizer_json_strict().unwrap_err();
        assert!(matches!(&e, ConvertError::BadJson { .. }), "{e}");

        std::fs::write(d.join(TOKENIZER_MODEL), b"").unwrap();
        let md = ModelDir::new(&d);
        md.prefetch_tokenizer_json();
        std::fs::remove_file(d.join(TOKENIZER_JSON)).unwrap();
        assert!(md.tokenizer_json_text().unwrap().is_none(), "read ahead");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// config.json, generation_config.json and tokenizer.model are read once too; a missing
    /// config.json is an error naming it, the optional files are `None`.
    #[test]
    fn shared_files_are_read_once() {
        let d = scratch("shared");
        let md = ModelDir::new(&d);
        let e = md.config().unwrap_err().to_string();
        assert!(e.contains(CONFIG) && e.contains("missing"), "{e}");
        assert!(md.generation_config().unwrap().is_none());
        assert!(md.tokenizer_model().unwrap().is_none());
        assert!(!md.has_file(TOKENIZER_MODEL));

        std::fs::write(d.join(CONFIG), r#"{"model_type": "x", "limit": Infinity}"#).unwrap();
        std::fs::write(d.join(GENERATION_CONFIG), r#"{"eos_token_id": [1, 2]}"#).unwrap();
        let md = ModelDir::new(&d);
        assert_eq!(md.config().unwrap()["model_type"], "x");
        assert!(md.config().unwrap()["limit"].as_f64().unwrap() > 1e308);
        assert_eq!(
            md.generation_config().unwrap().unwrap()["eos_token_id"][1],
            2
        );
        std::fs::write(d.join(CONFIG), r#"{"model_type": "y"}"#).unwrap();
        std::fs::remove_file(d.join(GENERATION_CONFIG)).unwrap();
        assert_eq!(md.config_if_present().unwrap().unwrap()["model_type"], "x");
        assert!(md.generation_config().unwrap().is_some());

        // generation_config.json is strict JSON (transformers' GenerationConfig), and a bad
        // tokenizer.model is an error naming the file.
        std::fs::write(d.join(GENERATION_CONFIG), r#"{"temperature": NaN}"#).unwrap();
        std::fs::write(d.join(TOKENIZER_MODEL), [0xffu8; 7]).unwrap();
        let md = ModelDir::new(&d);
        let e = md.generation_config().unwrap_err().to_string();
        assert!(e.contains(GENERATION_CONFIG), "{e}");
        let e = md.tokenizer_model().unwrap_err().to_string();
        assert!(e.contains(TOKENIZER_MODEL), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
