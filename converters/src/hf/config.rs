//! `config.json` → the hparams dict the converter works from.
//!
//! llama.cpp loads the config with transformers' `AutoConfig`, so its hparams are the file
//! merged with the defaults of the config class. We reproduce the part of that which the
//! converter's output depends on: per-`model_type` defaults (the `ModelType`s each
//! architecture lists), the sub-config renames, flattening `text_config` into the root, and
//! the rope parameters normalised to one dict (transformers v5's `rope_parameters`, built
//! from the v4 keys `rope_theta` / `rope_scaling` / `rope_local_base_freq` … when the file
//! predates v5).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use super::arch;
use super::family::{HeadDim, TextType};
use crate::ConvertError;

/// Most blocks (layers) a config may declare: 8 times llama.cpp's `LLAMA_MAX_LAYERS`.
pub const MAX_BLOCK_COUNT: u64 = 4096;

/// The merged hparams of a model directory.
#[derive(Debug, Clone)]
pub struct Hparams {
    /// config.json as written (for `_name_or_path` and class-specific re-reads).
    pub raw: Json,
    /// The merged dict: file + class defaults, `text_config` flattened into the root.
    pub map: Map<String, Json>,
    /// The normalised rope parameters (`TextModel.rope_parameters`).
    pub rope: Map<String, Json>,
    /// The HF architecture (`architectures[0]`, `text_config`'s when present).
    pub arch: String,
    /// Where config.json was read from.
    pub path: PathBuf,
    /// Blocks after the config's own (Qwen3-Next's next-token-prediction layers, counted
    /// from its `mtp.*` tensors when the config does not say): part of [`Hparams::block_count`].
    pub extra_blocks: u64,
    /// `--mtp` / `--no-mtp`: what becomes of the next-token-prediction layers.
    pub mtp: super::Mtp,
    /// `--target-model-dir`: the model a speculative-decoding draft is for (its config and
    /// tokenizer), read through the same directory value as any model's.
    pub target: Option<std::sync::Arc<super::ModelDir>>,
    /// Values a class's whole-list pass ([`super::family::Rules::mtp`]) reads from the
    /// checkpoint (tensor contents or shapes) for its parameter function, by name.
    pub derived: Map<String, Json>,
}

/// Fills a config dict with its class defaults (AutoConfig's `to_dict()` view).
fn apply_class_defaults(cfg: &mut Map<String, Json>, model_type: &str) {
    let Some(d) = arch::model_type(model_type) else {
        return;
    };
    if let Some(prepare) = d.prepare {
        if !prepare(cfg) {
            return;
        }
    }
    // v5 configs carry rope settings in `rope_parameters`; the v4 default keys only
    // apply to files that predate it.
    let v5_rope = cfg.get("rope_parameters").is_some_and(Json::is_object);
    for (k, v) in d.defaults {
        if v5_rope && (*k == "rope_theta" || *k == "rope_local_base_freq") {
            // transformers 5 puts the default theta inside a single-layer-type dict.
            if *k == "rope_theta" {
                if let Some(Json::Object(rp)) = cfg.get_mut("rope_parameters") {
                    if !rp.contains_key("full_attention") && !rp.contains_key("sliding_attention") {
                        rp.entry("rope_theta").or_insert_with(v);
                    }
                }
            }
            continue;
        }
        cfg.entry(*k).or_insert_with(v);
    }
    let is_null = |cfg: &Map<String, Json>, k: &str| cfg.get(k).is_none_or(Json::is_null);
    if let Some(key) = d.kv_heads_key {
        if is_null(cfg, key) {
            if let Some(h) = cfg.get("num_attention_heads").cloned() {
                cfg.insert(key.into(), h);
            }
        }
    }
    if d.head_dim == HeadDim::Derive {
        cfg.remove("head_dim");
    }
    if let HeadDim::CopyOf(key) = d.head_dim {
        match cfg.get(key).filter(|v| !v.is_null()).cloned() {
            Some(v) => cfg.insert("head_dim".into(), v),
            None => cfg.remove("head_dim"),
        };
    }
    if d.head_dim != HeadDim::Keep && is_null(cfg, "head_dim") {
        let hidden = cfg.get("hidden_size").and_then(Json::as_u64);
        let heads = cfg.get("num_attention_heads").and_then(Json::as_u64);
        if let (Some(h), Some(n)) = (hidden, heads) {
            if let Some(d) = h.checked_div(n) {
                cfg.insert("head_dim".into(), json!(d));
            }
        }
    }
    // Only a class with the field (Phi-3) has the attribute when the file lacks it; an
    // unknown top-level key is not an attribute at that point.
    let field = d
        .defaults
        .iter()
        .any(|(k, _)| *k == "original_max_position_embeddings");
    standardize_rope_original_length(cfg, field);
}

/// transformers' `standardize_rope_params` on the pretraining length of a scaled rope
/// (`llama3`, `yarn`, `longrope`): a single rope dict takes the top-level
/// `original_max_position_embeddings` when the config class has that field (`class_field`:
/// Phi-3; it wins over the dict's own), else keeps its own or gets
/// `max_position_embeddings`; a per-layer-type
/// dict keeps its own or gets `max_position_embeddings`.
fn standardize_rope_original_length(cfg: &mut Map<String, Json>, class_field: bool) {
    const KEY: &str = "original_max_position_embeddings";
    let top = cfg.get(KEY).cloned().filter(|_| class_field);
    // The keys it is nested under: the config's layer types.
    let layer_types: Vec<String> = match cfg.get("layer_types") {
        Some(Json::Array(a)) => a
            .iter()
            .filter_map(Json::as_str)
            .map(str::to_string)
            .collect(),
        _ => vec!["full_attention".into(), "sliding_attention".into()],
    };
    let max_pos = cfg.get("max_position_embeddings").cloned();
    let which = if cfg.get("rope_parameters").is_some_and(Json::is_object) {
        "rope_parameters"
    } else {
        "rope_scaling"
    };
    let Some(Json::Object(rp)) = cfg.get_mut(which) else {
        return;
    };
    let scaled = |d: &Map<String, Json>| {
        let t = d.get("rope_type").or_else(|| d.get("type"));
        matches!(
            t.and_then(Json::as_str),
            Some("llama3" | "yarn" | "longrope")
        )
    };
    let nested: Vec<String> = rp
        .iter()
        .filter(|(k, v)| v.is_object() && layer_types.contains(k))
        .map(|(k, _)| k.clone())
        .collect();
    if nested.is_empty() {
        if !scaled(rp) {
            return;
        }
        match top {
            Some(o) => {
                rp.insert(KEY.into(), o);
            }
            None => {
                if let Some(m) = max_pos {
                    rp.entry(KEY).or_insert(m);
                }
            }
        }
    } else {
        for k in nested {
            if let (Some(Json::Object(d)), Some(m)) = (rp.get_mut(&k), &max_pos) {
                if scaled(d) {
                    d.entry(KEY).or_insert_with(|| m.clone());
                }
            }
        }
    }
}

/// The first string of a JSON array (`architectures[0]`).
fn first(v: Option<&Json>) -> Option<String> {
    v.and_then(Json::as_array)
        .and_then(|a| a.first())
        .and_then(Json::as_str)
        .map(str::to_string)
}

/// What kind of JSON value this is, for messages ("a string", "an array", …).
pub(crate) fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// Largest config.json accepted. Real ones are a few kilobytes (a classifier's `id2label`
/// can reach a megabyte); as a JSON tree a file costs up to about 20 times its size, held
/// three times over (as written, merged, and as the tokenizer's view).
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// The key of [`ConvertError::WrongType`] for a JSON file's top level.
pub const TOP_LEVEL: &str = "the top level";

/// Reads config.json, refusing one larger than [`MAX_CONFIG_BYTES`].
pub(crate) fn read_bounded(path: &Path) -> Result<String, ConvertError> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| ConvertError::io(path, e))?;
    let mut bytes = Vec::new();
    f.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ConvertError::io(path, e))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConvertError::FileTooLarge {
            path: path.to_path_buf(),
            limit_mib: MAX_CONFIG_BYTES >> 20,
            what: Some("not a model configuration"),
        });
    }
    String::from_utf8(bytes).map_err(|e| ConvertError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to() as u64,
    })
}

/// Python's `json` reads the non-standard `NaN`, `Infinity` and `-Infinity` that
/// transformers writes (Mamba-2's `time_step_limit: [0.0, Infinity]`); strict JSON has no
/// such values. Outside strings they become `null`, and the largest finite double with
/// its sign (which still converts to an infinite FLOAT32).
pub(crate) fn python_json(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else {
            let token = [
                ("-Infinity", "-1.7976931348623157e308"),
                ("Infinity", "1.7976931348623157e308"),
                ("NaN", "null"),
            ]
            .into_iter()
            .find(|(t, _)| rest.starts_with(t));
            if let Some((t, v)) = token {
                out.push_str(v);
                rest = &rest[t.len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// Builds the hparams from the directory's config.json.
pub fn load(dir: &super::ModelDir) -> Result<Hparams, ConvertError> {
    from_json(dir.config()?.clone(), dir.config_path())
}

/// Builds the hparams from a parsed config.json (`path` is for messages), in
/// `TextModel.__init__`'s order: AutoConfig's class defaults, the sub-config renames, the
/// model class, the text config merged into the root, then the rope dict.
pub fn from_json(raw: Json, path: PathBuf) -> Result<Hparams, ConvertError> {
    let Json::Object(mut cfg) = raw.clone() else {
        return Err(ConvertError::wrong_type(
            &path,
            TOP_LEVEL,
            "an object",
            json_kind(&raw),
        ));
    };
    apply_auto_config(&mut cfg);
    rename_sub_configs(&mut cfg, &path)?;
    let arch = model_class(&cfg, &path)?;
    if let Some(Json::Object(tc)) = cfg.get("text_config").cloned() {
        for (k, v) in tc {
            cfg.insert(k, v);
        }
    }
    let rope = normalise_rope(&cfg);
    Ok(Hparams {
        raw,
        map: cfg,
        rope,
        arch,
        path,
        extra_blocks: 0,
        mtp: super::Mtp::Keep,
        target: None,
        derived: Map::new(),
    })
}

/// AutoConfig's `to_dict()`: a text-model class fills its own defaults at the root and
/// keeps a `text_config` key as the plain value the file gives; a composite class (a
/// vision-language wrapper) builds its `text_config` as a typed sub-config, defaults
/// included, and has no text hparams of its own.
/// Without `model_type` AutoConfig fails ("Unrecognized model") and the reference reads
/// config.json as written: no class defaults, no renames of v4 keys.
fn apply_auto_config(cfg: &mut Map<String, Json>) {
    let top_type = cfg
        .get("model_type")
        .and_then(Json::as_str)
        .map(str::to_string);
    match top_type.as_deref().and_then(arch::composite_text_type) {
        Some(text_type) => composite_text_config(cfg, text_type),
        None => {
            if let Some(mt) = &top_type {
                apply_class_defaults(cfg, mt);
            }
        }
    }
}

/// A composite class's typed `text_config`: the file's (or, for a flat hub config, the
/// root's text keys), its model type chosen, with that class's defaults.
fn composite_text_config(cfg: &mut Map<String, Json>, text_type: TextType) {
    let mut tc = match cfg.get("text_config") {
        None | Some(Json::Null) => match text_type {
            TextType::NamedWithInit(_, init) => {
                serde_json::from_str(init).expect("a class's text init values are a JSON object")
            }
            _ => Map::new(),
        },
        Some(Json::Object(m)) => m.clone(),
        // AutoConfig fails on it and the reference falls back to config.json as
        // written (no defaults); a later rename may still replace it.
        Some(_) => Map::new(),
    };
    if matches!(cfg.get("text_config"), Some(v) if !v.is_object() && !v.is_null()) {
        tc.clear();
    }
    if let TextType::Flat(t) = text_type {
        // A flat (hub) config: the class moves the root's text keys into its
        // `text_config`; flattened back, the root's values win over the defaults.
        if cfg.get("text_config").is_none_or(Json::is_null) {
            for (k, v) in cfg.iter() {
                if !matches!(
                    k.as_str(),
                    "model_type" | "architectures" | "text_config" | "vision_config"
                ) {
                    tc.insert(k.clone(), v.clone());
                }
            }
            tc.insert("model_type".into(), Json::from(t));
        }
    }
    let mt = match text_type {
        TextType::Fixed(t) | TextType::Flat(t) => t.to_string(),
        TextType::Named(default) | TextType::NamedWithInit(default, _) => tc
            .get("model_type")
            .and_then(Json::as_str)
            .unwrap_or(default)
            .to_string(),
        TextType::NamedRenamed(default, renames) => {
            let named = tc.get("model_type").and_then(Json::as_str);
            match named.and_then(|n| renames.iter().find(|(from, _)| *from == n)) {
                Some((_, to)) => {
                    tc.insert("model_type".into(), Json::from(*to));
                    to.to_string()
                }
                None => named.unwrap_or(default).to_string(),
            }
        }
    };
    if cfg
        .get("text_config")
        .is_none_or(|v| v.is_object() || v.is_null())
    {
        apply_class_defaults(&mut tc, &mt);
        cfg.insert("text_config".into(), Json::Object(tc));
    }
}

/// Sub-config renames (InternVL, GlmASR, Qwen2.5-Omni, DeepSeekOCR, LFM2-Audio), in the
/// reference's order: the last one present becomes `text_config`.
fn rename_sub_configs(cfg: &mut Map<String, Json>, path: &Path) -> Result<(), ConvertError> {
    for key in [
        "llm_config",
        "lm_config",
        "thinker_config",
        "language_config",
        "lfm",
    ] {
        let Some(v) = cfg.get(key) else { continue };
        let v = if key == "thinker_config" {
            v.get("text_config").cloned().ok_or_else(|| {
                ConvertError::missing_key(
                    path,
                    "thinker_config.text_config",
                    "the text model's configuration",
                )
            })?
        } else {
            v.clone()
        };
        cfg.insert("text_config".into(), v);
    }
    Ok(())
}

/// The model class: `architectures[0]` of the text config, else of the root; a
/// `text_config` that is not an object is refused (the root merge needs a dict).
fn model_class(cfg: &Map<String, Json>, path: &Path) -> Result<String, ConvertError> {
    let mut arch = first(cfg.get("architectures"));
    // A class the reference routes on its root name keeps it over the text config's.
    let on_root = arch
        .as_deref()
        .and_then(arch::lookup)
        .is_some_and(|a| a.hooks.routes_on_root);
    match cfg.get("text_config") {
        None => {}
        Some(Json::Object(tc)) => {
            if let Some(t) = first(tc.get("architectures")).filter(|_| !on_root) {
                arch = Some(t);
            }
        }
        // TextModel merges it into the root with `{**hparams, **text_config}`, which only
        // a dict survives.
        Some(v) => {
            return Err(ConvertError::wrong_type(
                path,
                "\"text_config\" (or the sub-config renamed to it)",
                "an object",
                json_kind(v),
            ))
        }
    }
    arch.ok_or_else(|| {
        ConvertError::missing_key(path, "architectures", "cannot detect the model class")
    })
}

/// `TextModel.__init__`'s rope dict: `rope_parameters` (or `rope_scaling`), with the
/// global values mirrored in when it has no per-layer-type sub-dicts.
pub(crate) fn normalise_rope(cfg: &Map<String, Json>) -> Map<String, Json> {
    let mut rope = match cfg.get("rope_parameters") {
        Some(Json::Object(m)) => m.clone(),
        _ => match cfg.get("rope_scaling") {
            Some(Json::Object(m)) => m.clone(),
            _ => Map::new(),
        },
    };
    let find = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| cfg.get(*k))
            .filter(|v| !v.is_null())
    };
    if !rope.contains_key("full_attention") && !rope.contains_key("sliding_attention") {
        let theta = find(&[
            "global_rope_theta",
            "rope_global_theta",
            "rope_theta_global",
            "rope_theta",
            "rotary_emb_base",
        ]);
        let local = find(&[
            "local_rope_theta",
            "rope_local_theta",
            "rope_theta_local",
            "swa_rope_theta",
            "rope_local_base_freq",
        ]);
        if let Some(l) = local {
            rope.insert("sliding_attention".into(), json!({ "rope_theta": l }));
        }
        if let Some(t) = theta {
            rope.entry("rope_theta").or_insert_with(|| t.clone());
        }
        if let Some(t) = rope.get("type").cloned().filter(|t| !t.is_null()) {
            rope.entry("rope_type").or_insert(t);
        }
        if let Some(p) = find(&["partial_rotary_factor", "rope_pct", "rope_percent"]) {
            rope.entry("partial_rotary_factor")
                .or_insert_with(|| p.clone());
        }
        if let Some(o) = find(&["original_max_position_embeddings"]) {
            rope.entry("original_max_position_embeddings")
                .or_insert_with(|| o.clone());
        }
    }
    rope
}

impl Hparams {
    /// Merges the object under `key` into the root (its values win), as a class whose
    /// `index_tensors` flattens a nested config does, and derives the rope dict again from
    /// the merged values. Nothing happens when `key` is absent or not an object.
    pub fn merge_into_root(&mut self, key: &str) {
        if let Some(Json::Object(sub)) = self.map.get(key).cloned() {
            for (k, v) in sub {
                self.map.insert(k, v);
            }
            self.rope = normalise_rope(&self.map);
        }
    }

    /// The target model's config.json (`--target-model-dir`) as a speculative-decoding
    /// draft's class reads it: the file as written (no class defaults) with its
    /// `text_config` merged into the root, and the file's path. Without a target the draft
    /// is refused ([`ConvertError::NeedsTarget`]).
    pub fn target_config(&self) -> Result<(Map<String, Json>, PathBuf), ConvertError> {
        let target = self
            .target
            .as_deref()
            .ok_or_else(|| ConvertError::NeedsTarget {
                path: self.path.clone(),
                class: self.arch.clone(),
            })?;
        let path = target.config_path();
        let Json::Object(mut cfg) = target.config()?.clone() else {
            return Err(ConvertError::wrong_type(
                &path,
                TOP_LEVEL,
                "an object",
                json_kind(target.config()?),
            ));
        };
        if let Some(Json::Object(tc)) = cfg.get("text_config").cloned() {
            for (k, v) in tc {
                cfg.insert(k, v);
            }
        }
        Ok((cfg, path))
    }

    /// The value of `key` (present, possibly null).
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.map.get(key)
    }

    /// `find_hparam`: the value of the first of `keys` that is present (possibly null).
    pub fn find(&self, keys: &[&str]) -> Option<&Json> {
        keys.iter().find_map(|k| self.map.get(*k))
    }

    /// The first present key as an unsigned integer; `None` when absent or null.
    pub fn find_u64(&self, keys: &[&str]) -> Result<Option<u64>, ConvertError> {
        match self.find(keys) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => json_u64(v)
                .map(Some)
                .ok_or_else(|| self.bad(keys, v, "a non-negative integer")),
        }
    }

    /// The first present key as a float; `None` when absent or null.
    pub fn find_f64(&self, keys: &[&str]) -> Result<Option<f64>, ConvertError> {
        match self.find(keys) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.bad(keys, v, "a number")),
        }
    }

    /// Like [`Hparams::find_u64`] but required.
    pub fn req_u64(&self, keys: &[&str]) -> Result<u64, ConvertError> {
        self.find_u64(keys)?.ok_or_else(|| self.missing(keys))
    }

    /// The block count (`n_layers` / `num_hidden_layers` / `n_layer` / `num_layers`), at most
    /// [`MAX_BLOCK_COUNT`]: the tensor name table is expanded per block, so the count must
    /// not be able to size it by itself.
    pub fn block_count(&self) -> Result<u64, ConvertError> {
        let keys = arch::lookup(&self.arch)
            .and_then(|a| a.hooks.block_count_keys)
            .unwrap_or(super::params::BLOCK_COUNT_KEYS);
        let mut n = self.req_u64(keys)?;
        if self.mtp != super::Mtp::Drop
            && arch::lookup(&self.arch).is_some_and(|a| a.rules.nextn_blocks)
        {
            let nextn = self.find_u64(&["num_nextn_predict_layers"])?.unwrap_or(0);
            n = n.saturating_add(nextn);
        }
        n = n.saturating_add(self.extra_blocks);
        if n > MAX_BLOCK_COUNT {
            return Err(ConvertError::out_of_range(
                &self.path,
                format!("{keys:?}: block count"),
                n,
                format!("at most {MAX_BLOCK_COUNT}"),
            ));
        }
        Ok(n)
    }

    /// The first present key as a boolean; `None` when absent or null.
    pub fn find_bool(&self, keys: &[&str]) -> Result<Option<bool>, ConvertError> {
        match self.find(keys) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.bad(keys, v, "a boolean")),
        }
    }

    /// Like [`Hparams::find_bool`] but required.
    pub fn req_bool(&self, keys: &[&str]) -> Result<bool, ConvertError> {
        self.find_bool(keys)?.ok_or_else(|| self.missing(keys))
    }

    /// Like [`Hparams::find_f64`] but required.
    pub fn req_f64(&self, keys: &[&str]) -> Result<f64, ConvertError> {
        self.find_f64(keys)?.ok_or_else(|| self.missing(keys))
    }

    /// The error for a required key that is absent.
    pub fn missing(&self, keys: &[&str]) -> ConvertError {
        ConvertError::MissingHparam {
            path: self.path.clone(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            arch: self.arch.clone(),
        }
    }

    fn bad(&self, keys: &[&str], v: &Json, what: &str) -> ConvertError {
        ConvertError::BadHparam {
            path: self.path.clone(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            expected: what.to_string(),
            found: v.to_string(),
        }
    }

    /// The rope dict that applies to full-attention layers.
    pub fn rope_full(&self) -> &Map<String, Json> {
        match self.rope.get("full_attention") {
            Some(Json::Object(m)) => m,
            _ => &self.rope,
        }
    }

    /// The merged dict as one JSON value (what the tokenizer reader gets).
    pub fn to_json(&self) -> Json {
        Json::Object(self.map.clone())
    }
}

/// A JSON number as u64, accepting integral floats (`4096.0`) as Python's `int` paths do.
pub fn json_u64(v: &Json) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
            .map(|f| f as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(v: Json) -> Hparams {
        from_json(v, PathBuf::from("config.json")).unwrap()
    }

    #[test]
    fn python_json_constants_are_read() {
        let text = r#"{"a": [0.0, Infinity, -Infinity, NaN], "s": "NaN Infinity \" NaN"}"#;
        let v: Json = serde_json::from_str(&python_json(text)).unwrap();
        assert_eq!(v["a"][1].as_f64(), Some(f64::MAX));
        assert_eq!(v["a"][2].as_f64(), Some(-f64::MAX));
        assert!(v["a"][3].is_null());
        assert_eq!(v["s"], "NaN Infinity \" NaN");
        assert!(matches!(python_json("{}"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn v4_and_v5_rope_layouts_normalise_alike() {
        let v4 = hp(
            json!({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "rope_theta": 500000.0, "rope_scaling": {"type": "linear", "factor": 2.0}}),
        );
        let v5 = hp(
            json!({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "rope_parameters": {"rope_theta": 500000.0, "rope_type": "linear", "factor": 2.0}}),
        );
        for h in [&v4, &v5] {
            assert_eq!(h.rope["rope_theta"], json!(500000.0));
            assert_eq!(h.rope["rope_type"], json!("linear"));
            assert_eq!(h.rope["factor"], json!(2.0));
        }
    }

    #[test]
    fn llama_defaults_fill_missing_keys() {
        let h = hp(
            json!({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "hidden_size": 256, "num_attention_heads": 4}),
        );
        assert_eq!(h.get("head_dim"), Some(&json!(64)));
        assert_eq!(h.get("num_key_value_heads"), Some(&json!(4)));
        assert_eq!(h.get("max_position_embeddings"), Some(&json!(2048)));
        assert_eq!(h.rope["rope_theta"], json!(10000.0));
        let m = hp(
            json!({"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
            "head_dim": null}),
        );
        assert_eq!(m.get("head_dim"), Some(&Json::Null));
    }

    #[test]
    fn text_config_is_flattened_and_its_arch_wins() {
        let h = hp(json!({"architectures": ["Gemma3ForConditionalGeneration"],
            "model_type": "gemma3",
            "text_config": {"model_type": "gemma3_text", "hidden_size": 64,
                "architectures": ["Gemma3ForCausalLM"]}}));
        assert_eq!(h.arch, "Gemma3ForCausalLM");
        assert_eq!(h.get("hidden_size"), Some(&json!(64)));
        assert_eq!(h.get("head_dim"), Some(&json!(256)));
        assert_eq!(h.rope["sliding_attention"]["rope_theta"], json!(10000.0));
    }

    /// Qwen2-VL's hub configs are flat: Qwen2VLConfig moves the root's text keys into its
    /// text_config, so they win over Qwen2VLTextConfig's defaults (transformers 5:
    /// hidden_size 1536 kept, num_hidden_layers 80 and vocab_size 152064 filled in).
    #[test]
    fn a_flat_qwen2_vl_config_keeps_its_root_text_keys() {
        let h = hp(json!({"architectures": ["Qwen2VLForConditionalGeneration"],
            "model_type": "qwen2_vl", "hidden_size": 1536, "rope_theta": 1e6,
            "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
            "vision_config": {"depth": 2}}));
        assert_eq!(h.arch, "Qwen2VLForConditionalGeneration");
        assert_eq!(h.get("hidden_size"), Some(&json!(1536)));
        assert_eq!(h.get("num_hidden_layers"), Some(&json!(80)));
        assert_eq!(h.get("vocab_size"), Some(&json!(152064)));
        assert_eq!(h.get("model_type"), Some(&json!("qwen2_vl_text")));
        assert_eq!(h.rope["mrope_section"], json!([16, 24, 24]));
        // With a text_config the root's keys are not the text model's.
        let h = hp(json!({"architectures": ["Qwen2VLForConditionalGeneration"],
            "model_type": "qwen2_vl", "hidden_size": 1536,
            "text_config": {"model_type": "qwen2_vl_text", "num_hidden_layers": 2}}));
        assert_eq!(h.get("hidden_size"), Some(&json!(8192)));
        assert_eq!(h.get("num_hidden_layers"), Some(&json!(2)));
    }

    /// A missing or malformed hparam is a typed error naming the file and the keys, with
    /// the message the reader has always given.
    #[test]
    fn hparam_errors_are_typed() {
        // Any class name: the error carries the one config.json gives.
        let class = "SomeClassForCausalLM";
        let h = hp(json!({"architectures": [class], "hidden_size": "x"}));
        let e = h.req_u64(&["num_hidden_layers", "n_layer"]).unwrap_err();
        assert!(
            matches!(&e, ConvertError::MissingHparam { keys, arch, .. }
                if keys == &["num_hidden_layers", "n_layer"] && arch == class),
            "{e:?}"
        );
        assert!(e
            .to_string()
            .ends_with(r#"could not find any of ["num_hidden_layers", "n_layer"] (needed by the SomeClassForCausalLM converter)"#));
        let e = h.find_u64(&["hidden_size"]).unwrap_err();
        assert!(
            matches!(&e, ConvertError::BadHparam { keys, expected, found, .. }
                if keys == &["hidden_size"] && expected == "a non-negative integer" && found == "\"x\""),
            "{e:?}"
        );
        assert!(e
            .to_string()
            .ends_with(r#"["hidden_size"]: expected a non-negative integer, found "x""#));
    }

    #[test]
    fn find_stops_at_a_present_null() {
        let h = hp(
            json!({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
            "n_inner": null, "hidden_dim": 7}),
        );
        assert_eq!(h.find_u64(&["n_inner", "hidden_dim"]).unwrap(), None);
    }
}
