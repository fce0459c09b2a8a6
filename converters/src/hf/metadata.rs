//! `general.*` authorship and sampling metadata and the default output file name
//! (gguf-py `metadata.py` and `utility.py`).
//!
//! Sources, earliest winning for the heuristics: the README's model card, config.json
//! `_name_or_path` (when it has
//! at most one `/`), then the model directory's name, each parsed by
//! [`model_id_components`]; generation_config.json sampling keys; the `--metadata`
//! override file (keyed by GGUF key); `--model-name`; finally the directory name as the
//! name and a size label computed from the tensors. README front matter comes first of the
//! heuristics ([`super::model_card`]).

use ggufkit::gguf::keys;
use std::path::Path;
use std::sync::OnceLock;

use ggufkit::gguf::{ArrayValue, GgufString, Metadata as Kv, Value};
use regex::Regex;
use serde_json::{Map, Value as Json};

use crate::ConvertError;

/// The collected fields (gguf-py's `Metadata`). Strings stay `None` when unknown.
#[derive(Debug, Clone, Default)]
pub struct ModelMeta {
    /// `general.sampling.*` in write order: (key suffix, value).
    pub sampling: Vec<(&'static str, Value)>,
    /// `general.name`.
    pub name: Option<String>,
    /// `general.author`.
    pub author: Option<String>,
    /// `general.version`.
    pub version: Option<String>,
    /// `general.organization`.
    pub organization: Option<String>,
    /// `general.finetune`.
    pub finetune: Option<String>,
    /// `general.basename`.
    pub basename: Option<String>,
    /// `general.description`.
    pub description: Option<String>,
    /// `general.quantized_by`.
    pub quantized_by: Option<String>,
    /// `general.size_label`.
    pub size_label: Option<String>,
    /// `general.license` (a list is joined with `,`).
    pub license: Option<String>,
    /// `general.license.name` … `general.source.repo_url`, in write order.
    pub extra: Vec<(&'static str, Option<String>)>,
    /// `general.base_models` / `general.datasets` entries (string fields).
    pub base_models: Option<Vec<Map<String, Json>>>,
    /// Datasets.
    pub datasets: Option<Vec<Map<String, Json>>>,
    /// `general.tags`.
    pub tags: Option<Vec<String>>,
    /// `general.languages`.
    pub languages: Option<Vec<String>>,
    /// The parameter count is negative (LoRA pairs): the default file name's model type is
    /// `LoRA`.
    pub lora_params: bool,
}

/// Sampling keys: (generation_config key(s), GGUF suffix, integer?).
const SAMPLING: &[(&[&str], &str, bool)] = &[
    (&["sequence"], "sequence", false),
    (&["top_k"], "top_k", true),
    (&["top_p"], "top_p", false),
    (&["min_p"], "min_p", false),
    (&["xtc_probability"], "xtc_probability", false),
    (&["xtc_threshold"], "xtc_threshold", false),
    (&["temperature"], "temp", false),
    (&["penalty_last_n"], "penalty_last_n", true),
    (
        &["penalty_repeat", "repetition_penalty"],
        "penalty_repeat",
        false,
    ),
    (&["mirostat"], "mirostat", true),
    (&["mirostat_tau"], "mirostat_tau", false),
    (&["mirostat_eta"], "mirostat_eta", false),
];

/// String keys written after `general.license`, in write order.
const EXTRA_STRINGS: &[&str] = &[
    keys::general::LICENSE_NAME,
    keys::general::LICENSE_LINK,
    keys::general::URL,
    keys::general::DOI,
    keys::general::UUID,
    keys::general::REPO_URL,
    keys::general::SOURCE_URL,
    keys::general::SOURCE_DOI,
    keys::general::SOURCE_UUID,
    keys::general::SOURCE_REPO_URL,
];

fn sampling_value(v: &Json, suffix: &str, int: bool) -> Option<Value> {
    if suffix == "sequence" {
        return v.as_str().map(Value::from);
    }
    if int {
        v.as_i64()
            .and_then(|i| i32::try_from(i).ok())
            .map(Value::I32)
    } else {
        v.as_f64().map(|f| Value::F32(f as f32))
    }
}

/// Parts of a model id (`org/Name-7B-Instruct-v0.1`).
#[derive(Debug, Default, PartialEq)]
pub struct IdParts {
    /// The name part (after the org).
    pub full_name: Option<String>,
    /// The org part.
    pub org: Option<String>,
    /// Base name.
    pub basename: Option<String>,
    /// Fine-tune.
    pub finetune: Option<String>,
    /// Version.
    pub version: Option<String>,
    /// Size label.
    pub size_label: Option<String>,
}

struct Res {
    version: Regex,
    quant: Regex,
    size: Regex,
    finetune: Regex,
    title_skip: Regex,
}

fn res() -> &'static Res {
    static R: OnceLock<Res> = OnceLock::new();
    R.get_or_init(|| Res {
        version: Regex::new(r"(?i)^(?:(?:v|iter)?\d+(?:[.]\d+)*)$").expect("regex"),
        quant: Regex::new(r"(?i)^(?:i?q\d(?:_\w)*|b?fp?(?:16|32))$").expect("regex"),
        size: Regex::new(
            r"(?i)^(?:(?:[A]|\d+[x])?\d+(?:[._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl)$",
        )
        .expect("regex"),
        finetune: Regex::new(r"(?i)^(?:chat|instruct|vision|lora)$").expect("regex"),
        title_skip: Regex::new(r"^(?:v\d+(?:\.\d+)*|\d.*)$").expect("regex"),
    })
}

/// Python's `str.title()`: a cased letter after a cased letter is lowered, others raised.
fn py_title(w: &str) -> String {
    let mut out = String::with_capacity(w.len());
    let mut prev_cased = false;
    for c in w.chars() {
        let cased = c.is_lowercase() || c.is_uppercase();
        if cased {
            if prev_cased {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
        } else {
            out.push(c);
        }
        prev_cased = cased;
    }
    out
}

/// Python's `str.islower()`: at least one cased character, none upper-case.
fn py_islower(w: &str) -> bool {
    w.chars().any(char::is_lowercase) && !w.chars().any(char::is_uppercase)
}

/// `Metadata.id_to_title`: `-` to spaces, title-case all-lower-case words that are not
/// versions or numbers.
pub fn id_to_title(s: &str) -> String {
    s.trim()
        .replace('-', " ")
        .split_whitespace()
        .map(|w| {
            if py_islower(w) && !res().title_skip.is_match(w) {
                py_title(w)
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Default, Clone)]
struct Tags {
    basename: bool,
    size_label: bool,
    finetune: bool,
    version: bool,
    ty: bool,
}

impl Tags {
    fn is_empty(&self) -> bool {
        !(self.basename || self.size_label || self.finetune || self.version || self.ty)
    }
    fn count(&self) -> usize {
        [
            self.basename,
            self.size_label,
            self.finetune,
            self.version,
            self.ty,
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }
}

/// `Metadata.get_model_id_components`.
pub fn model_id_components(model_id: &str, total_params: i64) -> IdParts {
    if model_id.contains(' ') {
        return IdParts {
            full_name: Some(model_id.to_string()),
            ..IdParts::default()
        };
    }
    let (mut org, full) = match model_id.split_once('/') {
        Some((o, m)) => (Some(o.to_string()), m.to_string()),
        None => (None, model_id.to_string()),
    };
    if org.as_deref().is_some_and(|o| o.starts_with('.')) {
        org = None;
    }
    let mut parts: Vec<String> = full
        .split('-')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let mut tags = vec![Tags::default(); parts.len()];
    let r = res();
    for i in 0..parts.len() {
        let part = parts[i].clone();
        if r.version.is_match(&part) {
            tags[i].version = true;
        } else if r.quant.is_match(&part) {
            tags[i].ty = true;
            parts[i] = part.to_uppercase();
        } else if i > 0 && r.size.is_match(&part) {
            let mut p: Vec<char> = part.replace('_', ".").chars().collect();
            // bloom-7b1 notation: 7b1 → 7.1b
            if p.last().is_some_and(|c| c.is_ascii_digit()) && p.len() >= 2 {
                let n = p.len();
                let (a, b) = (p[n - 2], p[n - 1]);
                p.truncate(n - 2);
                p.push('.');
                p.push(b);
                p.push(a);
            }
            if p.len() > 1 && p[p.len() - 2].is_ascii_digit() {
                let last = p[p.len() - 1];
                if "kmbt".contains(last) {
                    let n = p.len();
                    p[n - 1] = last.to_ascii_uppercase();
                }
            }
            if total_params != 0 {
                let unit = p.last().copied().unwrap_or(' ');
                let num: String = p[..p.len() - 1].iter().collect();
                if let (Ok(x), Some(scale)) = (num.parse::<f64>(), " KMBT".find(unit)) {
                    let label = x * 1000f64.powi(scale as i32);
                    let tp = total_params as f64;
                    let small_for_lora =
                        total_params < 0 && label < (total_params.abs() / 8) as f64;
                    let far =
                        total_params > 0 && (label - tp).abs() > (7 * total_params / 8) as f64;
                    if small_for_lora || far {
                        tags[i].finetune = true;
                        let n = p.len();
                        p[n - 1] = p[n - 1].to_ascii_lowercase();
                    }
                }
            }
            if tags[i].is_empty() {
                tags[i].size_label = true;
            }
            parts[i] = p.into_iter().collect();
        } else if i > 0 && r.finetune.is_match(&part) {
            if total_params < 0 && part.eq_ignore_ascii_case("lora") {
                tags[i].ty = true;
            } else {
                tags[i].finetune = true;
            }
        }
    }
    // Word sizes ("small") give way to numeric ones.
    let numeric_size = parts
        .iter()
        .zip(&tags)
        .any(|(p, t)| t.size_label && p.chars().any(|c| c.is_ascii_digit()));
    if numeric_size {
        for (p, t) in parts.iter().zip(tags.iter_mut()) {
            if t.size_label && p.chars().all(char::is_alphabetic) {
                t.size_label = false;
            }
        }
    }
    let mut at_start = true;
    for (p, t) in parts.iter().zip(tags.iter_mut()) {
        let alpha_start = p.chars().next().is_some_and(char::is_alphabetic);
        if at_start && ((t.is_empty() && alpha_start) || t.version) {
            t.basename = true;
        } else {
            at_start = false;
            if t.is_empty() {
                t.finetune = true;
            }
        }
    }
    for t in tags.iter_mut().rev() {
        if t.basename && t.count() > 1 {
            t.basename = false;
        } else {
            break;
        }
    }
    let join = |f: &dyn Fn(&Tags) -> bool, dedup: bool| -> Option<String> {
        let mut out: Vec<&str> = Vec::new();
        for (p, t) in parts.iter().zip(&tags) {
            if f(t) && !(dedup && out.contains(&p.as_str())) {
                out.push(p);
            }
        }
        (!out.is_empty()).then(|| out.join("-"))
    };
    let mut basename = join(&|t| t.basename, false);
    let size_label = join(&|t| t.size_label, true);
    let finetune = join(&|t| t.finetune, false);
    let version = join(&|t| t.version && !t.basename, false);
    if size_label.is_none() && finetune.is_none() && version.is_none() {
        basename = None;
    }
    IdParts {
        full_name: Some(full),
        org,
        basename,
        finetune,
        version,
        size_label,
    }
}

fn fill(slot: &mut Option<String>, v: Option<String>) {
    if slot.is_none() {
        *slot = v;
    }
}

impl ModelMeta {
    fn apply_id(&mut self, id: &str, total_params: i64) {
        let c = model_id_components(id, total_params);
        fill(&mut self.name, c.full_name.as_deref().map(id_to_title));
        fill(&mut self.organization, c.org.as_deref().map(id_to_title));
        fill(&mut self.basename, c.basename);
        fill(&mut self.finetune, c.finetune);
        fill(&mut self.version, c.version);
        fill(&mut self.size_label, c.size_label);
    }
}

/// A model-card value as the string gguf-py would write.
fn card_str(v: &Json) -> Option<String> {
    match v {
        Json::Null => None,
        Json::String(s) => Some(s.clone()),
        Json::Bool(b) => Some(if *b { "True" } else { "False" }.to_string()),
        v => Some(v.to_string()),
    }
}

impl ModelMeta {
    /// The model-card heuristics of `apply_metadata_heuristic`.
    fn apply_card(&mut self, card: &Map<String, Json>, total_params: i64) {
        if card.is_empty() {
            return;
        }
        let get = |k: &str| card.get(k).and_then(card_str);
        for (field, keys) in [
            ("name", ["name", "model_name", "model_name"]),
            ("author", ["author", "model_author", "model_creator"]),
            ("version", ["version", "model_version", ""]),
            ("organization", ["organization", "model_organization", ""]),
            ("description", ["description", "model_description", ""]),
            ("finetune", ["finetune", "model_finetune", ""]),
            ("basename", ["basename", "model_basename", "model_type"]),
            ("size_label", ["size_label", "model_size_label", ""]),
            (keys::general::SOURCE_URL, ["url", "model_url", ""]),
            (keys::general::SOURCE_DOI, ["doi", "model_doi", ""]),
            (keys::general::SOURCE_UUID, ["uuid", "model_uuid", ""]),
            (
                keys::general::SOURCE_REPO_URL,
                ["repo_url", "model_repo_url", ""],
            ),
        ] {
            for k in keys.iter().filter(|k| !k.is_empty()) {
                let slot = match field {
                    "name" => &mut self.name,
                    "author" => &mut self.author,
                    "version" => &mut self.version,
                    "organization" => &mut self.organization,
                    "description" => &mut self.description,
                    "finetune" => &mut self.finetune,
                    "basename" => &mut self.basename,
                    "size_label" => &mut self.size_label,
                    key => match self.extra.iter_mut().find(|(k2, _)| *k2 == key) {
                        Some((_, slot)) => slot,
                        None => continue,
                    },
                };
                fill(slot, get(k));
            }
        }
        let list = |keys: &[&str]| {
            keys.iter().find_map(|k| card.get(*k)).map(|v| match v {
                Json::Array(a) => a.clone(),
                Json::Null => Vec::new(),
                v => vec![v.clone()],
            })
        };
        if let Some(entries) = list(&["base_model", "base_models", "base_model_sources"]) {
            let v = self.base_models.get_or_insert_with(Vec::new);
            v.extend(entries.iter().filter_map(|e| source_entry(e, total_params)));
        }
        if let Some(entries) = list(&["datasets", "dataset", "dataset_sources"]) {
            let v = self.datasets.get_or_insert_with(Vec::new);
            v.extend(entries.iter().filter_map(|e| source_entry(e, total_params)));
        }
        if self.license.is_none() {
            self.license = match card.get("license") {
                Some(Json::Array(a)) => {
                    Some(a.iter().filter_map(card_str).collect::<Vec<_>>().join(","))
                }
                Some(v) => card_str(v),
                None => None,
            };
        }
        for (field, key) in [
            (keys::general::LICENSE_NAME, "license_name"),
            (keys::general::LICENSE_LINK, "license_link"),
        ] {
            if let Some((_, slot)) = self.extra.iter_mut().find(|(k, _)| *k == field) {
                fill(slot, get(key));
            }
        }
        for (slot, keys) in [
            (&mut self.tags, ["tags", "pipeline_tag"]),
            (&mut self.languages, ["languages", "language"]),
        ] {
            for k in keys {
                match card.get(k) {
                    None | Some(Json::Null) => {}
                    Some(Json::Array(a)) => slot
                        .get_or_insert_with(Vec::new)
                        .extend(a.iter().filter_map(card_str)),
                    Some(v) => slot.get_or_insert_with(Vec::new).extend(card_str(v)),
                }
            }
        }
    }
}

/// One `base_model` / `datasets` entry of a model card: an HF id, a URL, or a dict.
fn source_entry(e: &Json, total_params: i64) -> Option<Map<String, Json>> {
    let mut out = Map::new();
    match e {
        Json::Object(m) => return Some(m.clone()),
        Json::String(id) => {
            let url = ["http://", "https://", "ssh://"]
                .iter()
                .any(|p| id.starts_with(p));
            if url {
                out.insert("repo_url".into(), Json::from(id.as_str()));
                let hf = id
                    .strip_prefix("https://huggingface.co/")
                    .or_else(|| id.strip_prefix("http://huggingface.co/"))
                    .filter(|r| {
                        r.matches('/').count() == 1 && !r.ends_with('/') && !r.starts_with('/')
                    });
                if let Some(rest) = hf {
                    let c = model_id_components(rest, total_params);
                    if let Some(n) = &c.full_name {
                        out.insert("name".into(), Json::from(id_to_title(n)));
                    }
                    if let Some(o) = &c.org {
                        out.insert("organization".into(), Json::from(id_to_title(o)));
                    }
                    if let Some(v) = c.version {
                        out.insert("version".into(), Json::from(v));
                    }
                }
            } else {
                let c = model_id_components(id, total_params);
                if let Some(n) = &c.full_name {
                    out.insert("name".into(), Json::from(id_to_title(n)));
                }
                if let Some(o) = &c.org {
                    out.insert("organization".into(), Json::from(id_to_title(o)));
                }
                if let Some(v) = c.version {
                    out.insert("version".into(), Json::from(v));
                }
                if let (Some(o), Some(n)) = (&c.org, &c.full_name) {
                    out.insert(
                        "repo_url".into(),
                        Json::from(format!("https://huggingface.co/{o}/{n}")),
                    );
                }
            }
        }
        _ => {}
    }
    Some(out)
}

/// `Metadata.load`: heuristics, generation config, override file, `--model-name`.
pub fn load(
    dir: &super::ModelDir,
    raw_config: &Json,
    override_file: Option<&Path>,
    model_name: Option<&str>,
    total_params: i64,
) -> Result<ModelMeta, ConvertError> {
    let mut m = ModelMeta {
        extra: EXTRA_STRINGS.iter().map(|k| (*k, None)).collect(),
        ..ModelMeta::default()
    };
    if let Ok(text) = std::fs::read_to_string(dir.join("README.md")) {
        m.apply_card(&super::model_card::front_matter(&text), total_params);
    }
    if let Some(id) = raw_config.get("_name_or_path").and_then(Json::as_str) {
        if id.matches('/').count() <= 1 {
            m.apply_id(id, total_params);
        }
    }
    m.apply_id(&dir_name(dir), total_params);

    // A generation_config.json that cannot be read or parsed adds nothing here.
    let gen = match dir.generation_config() {
        Ok(Some(v)) => v.clone(),
        _ => Json::Null,
    };
    let ovr = match override_file {
        Some(p) if p.is_file() => {
            let v = super::params::read_json(p)?;
            if !v.is_object() {
                return Err(ConvertError::wrong_type(
                    p,
                    "the metadata override's top level",
                    "an object",
                    super::config::json_kind(&v),
                ));
            }
            v
        }
        _ => Json::Null,
    };
    let bad = |key: &str, what: &str| {
        ConvertError::format(
            override_file.unwrap_or(Path::new("")),
            None,
            format!("{key}: expected {what}"),
        )
    };
    for (keys, suffix, int) in SAMPLING {
        let mut val = keys
            .iter()
            .find_map(|k| gen.get(*k))
            .and_then(|v| sampling_value(v, suffix, *int));
        let okey = format!("{}.{suffix}", keys::general::SAMPLING);
        if let Some(v) = ovr.get(&okey) {
            val = Some(
                sampling_value(v, suffix, *int)
                    .ok_or_else(|| bad(&okey, if *int { "an integer" } else { "a number" }))?,
            );
        }
        if let Some(v) = val {
            m.sampling.push((suffix, v));
        }
    }
    let ostr = |key: &str| -> Result<Option<String>, ConvertError> {
        match ovr.get(key) {
            None => Ok(None),
            Some(Json::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad(key, "a string")),
        }
    };
    for (key, slot) in [
        (keys::general::NAME, &mut m.name),
        (keys::general::AUTHOR, &mut m.author),
        (keys::general::VERSION, &mut m.version),
        (keys::general::ORGANIZATION, &mut m.organization),
        (keys::general::FINETUNE, &mut m.finetune),
        (keys::general::BASENAME, &mut m.basename),
        (keys::general::DESCRIPTION, &mut m.description),
        (keys::general::QUANTIZED_BY, &mut m.quantized_by),
        (keys::general::SIZE_LABEL, &mut m.size_label),
    ] {
        if let Some(v) = ostr(key)? {
            *slot = Some(v);
        }
    }
    for (key, slot) in m.extra.iter_mut() {
        if let Some(v) = ostr(key)? {
            *slot = Some(v);
        }
    }
    let olist = |key: &str| -> Result<Option<Vec<Map<String, Json>>>, ConvertError> {
        match ovr.get(key) {
            None => Ok(None),
            Some(Json::Array(a)) => a
                .iter()
                .map(|e| e.as_object().cloned())
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| bad(key, "a list of objects")),
            Some(_) => Err(bad(key, "a list of objects")),
        }
    };
    if let Some(v) = olist(keys::general::BASE_MODELS)? {
        m.base_models = Some(v);
    }
    if let Some(v) = olist(keys::general::DATASETS)? {
        m.datasets = Some(v);
    }
    let ostrs = |key: &str| -> Result<Option<Vec<String>>, ConvertError> {
        match ovr.get(key) {
            None => Ok(None),
            Some(Json::Array(a)) => a
                .iter()
                .map(|e| e.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| bad(key, "a list of strings")),
            Some(_) => Err(bad(key, "a list of strings")),
        }
    };
    if let Some(v) = ostrs(keys::general::TAGS)? {
        m.tags = Some(v);
    }
    if let Some(v) = ostrs(keys::general::LANGUAGES)? {
        m.languages = Some(v);
    }
    if let Some(n) = model_name {
        m.name = Some(n.to_string());
    }
    Ok(m)
}

/// The `general.*` block of an output (`prepare_metadata` + `set_gguf_parameters`' general
/// part), shared by the model and projector readers: the values from config.json, the model
/// card, `--metadata` and `--model-name`, the directory's name when none is given, and the
/// size label from the parameter count of `tensors` (GGUF names and shapes); written to
/// `kv`, and returned for the default file name.
pub(crate) fn write_general<'a>(
    dir: &super::ModelDir,
    config: &Json,
    opts: &crate::hf::HfOptions,
    tensors: impl Iterator<Item = (&'a str, &'a [u64])>,
    kv: &mut Kv,
) -> Result<ModelMeta, ConvertError> {
    let count = count_params(tensors);
    let mut meta = load(
        dir,
        config,
        opts.metadata_override.as_deref(),
        opts.model_name.as_deref(),
        count.signed_total(),
    )?;
    if meta.name.is_none() {
        meta.name = Some(dir_name(dir));
    }
    meta.lora_params = count.signed_total() < 0;
    if meta.size_label.is_none() && count.signed_total() > 0 {
        meta.size_label = Some(size_label(&count));
    }
    write(&meta, kv);
    Ok(meta)
}

/// The directory's name as Python's `Path.name` gives it.
pub fn dir_name(dir: &Path) -> String {
    match dir.file_name() {
        Some(n) => n.to_string_lossy().into_owned(),
        None => {
            // Python keeps "..", and gives "" for "." and "/".
            let s = dir.to_string_lossy();
            let last = s.trim_end_matches('/').rsplit('/').next().unwrap_or("");
            if last == ".." {
                "..".into()
            } else {
                String::new()
            }
        }
    }
}

fn set_str(kv: &mut Kv, key: &str, v: &str) {
    // gguf-py's add_string skips empty strings.
    if !v.is_empty() {
        kv.set(key, Value::from(v));
    }
}

/// `set_gguf_meta_model`: writes the block in gguf-py's order.
pub fn write(m: &ModelMeta, kv: &mut Kv) {
    for (suffix, v) in &m.sampling {
        match v {
            Value::String(s) if s.0.is_empty() => {}
            v => kv.set(format!("{}.{suffix}", keys::general::SAMPLING), v.clone()),
        }
    }
    set_str(
        kv,
        keys::general::NAME,
        m.name.as_deref().unwrap_or_default(),
    );
    for (key, v) in [
        (keys::general::AUTHOR, &m.author),
        (keys::general::VERSION, &m.version),
        (keys::general::ORGANIZATION, &m.organization),
        (keys::general::FINETUNE, &m.finetune),
        (keys::general::BASENAME, &m.basename),
        (keys::general::DESCRIPTION, &m.description),
        (keys::general::QUANTIZED_BY, &m.quantized_by),
        (keys::general::SIZE_LABEL, &m.size_label),
    ] {
        if let Some(v) = v {
            set_str(kv, key, v);
        }
    }
    if let Some(l) = &m.license {
        set_str(kv, keys::general::LICENSE, l);
    }
    for (key, v) in &m.extra {
        if let Some(v) = v {
            set_str(kv, key, v);
        }
    }
    for (list, prefix) in [
        (&m.base_models, keys::general::BASE_MODEL),
        (&m.datasets, keys::general::DATASET),
    ] {
        let Some(list) = list else { continue };
        kv.set(format!("{prefix}.count"), Value::U32(list.len() as u32));
        for (i, e) in list.iter().enumerate() {
            for field in [
                "name",
                "author",
                "version",
                "organization",
                "description",
                "url",
                "doi",
                "uuid",
                "repo_url",
            ] {
                if let Some(v) = e.get(field) {
                    let s = v
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string());
                    set_str(kv, &format!("{prefix}.{i}.{field}"), &s);
                }
            }
        }
    }
    for (key, list) in [
        (keys::general::TAGS, &m.tags),
        (keys::general::LANGUAGES, &m.languages),
    ] {
        if let Some(l) = list.as_ref().filter(|l| !l.is_empty()) {
            kv.set(
                key,
                Value::Array(ArrayValue::String(
                    l.iter().map(|s| GgufString::from(s.as_str())).collect(),
                )),
            );
        }
    }
}

/// `model_weight_count_rounded_notation`: `1.7M`, `140K`, `71B`.
pub fn pretty_count(n: u64) -> String {
    let n = n as f64;
    let (x, suffix) = if n > 1e12 {
        (n * 1e-12, "T")
    } else if n > 1e9 {
        (n * 1e-9, "B")
    } else if n > 1e6 {
        (n * 1e-6, "M")
    } else {
        (n * 1e-3, "K")
    };
    let rounded = format!("{}", x.round_ties_even() as u64);
    let digits = rounded.trim_start_matches('0').len();
    let fix = 2usize.saturating_sub(digits);
    format!("{x:.fix$}{suffix}")
}

/// Parameter counts of the output tensors (`get_total_parameter_count`).
#[derive(Debug, Default, Clone, Copy)]
pub struct ParamCount {
    /// All parameters.
    pub total: u64,
    /// Non-expert parameters.
    pub shared: u64,
    /// Parameters of one expert.
    pub expert: u64,
    /// Average expert count of the expert tensors.
    pub n_expert: u64,
    /// The tensors hold LoRA pairs (`….lora_a` then `….lora_b`, each `b` counted with its
    /// `a`'s last dimension): the reference gives the total negated, as not exact.
    pub lora: bool,
}

impl ParamCount {
    /// The total as the reference passes it on: negative for LoRA pairs.
    pub fn signed_total(&self) -> i64 {
        let t = i64::try_from(self.total).unwrap_or(i64::MAX);
        if self.lora {
            -t
        } else {
            t
        }
    }
}

/// Counts parameters from (GGUF name, PyTorch-order shape) pairs.
/// A `.lora_b` not right after its `.lora_a` gives all zeros (the reference bails out).
pub fn count_params<'a>(tensors: impl Iterator<Item = (&'a str, &'a [u64])>) -> ParamCount {
    let mut c = ParamCount::default();
    let (mut expert_sum, mut n_expert_tensors) = (0u64, 0u64);
    // The last `.lora_a` seen: its name and last dimension.
    let mut last_lora_a: Option<(&str, u64)> = None;
    for (name, shape) in tensors {
        if name.ends_with(".lora_a") {
            last_lora_a = Some((name, shape.last().copied().unwrap_or(1)));
            c.lora = true;
            continue;
        }
        let size: u64 = match name.strip_suffix(".lora_b") {
            Some(stem) => match last_lora_a {
                Some((a, a_last)) if a.strip_suffix(".lora_a") == Some(stem) => {
                    let lead: u64 = shape[..shape.len().saturating_sub(1)].iter().product();
                    lead * a_last
                }
                _ => return ParamCount::default(),
            },
            None => shape.iter().product(),
        };
        if name.contains("_exps.") && shape.len() >= 3 {
            let k = shape[shape.len() - if name.contains(".bias") { 2 } else { 3 }].max(1);
            c.expert += size / k;
            expert_sum += k;
            n_expert_tensors += 1;
        } else {
            c.shared += size;
        }
        c.total += size;
    }
    c.n_expert = expert_sum.checked_div(n_expert_tensors).unwrap_or(0);
    c
}

/// `size_label(total, shared, expert, n_expert)`.
pub fn size_label(c: &ParamCount) -> String {
    if c.n_expert > 0 {
        format!("{}x{}", c.n_expert, pretty_count(c.shared + c.expert))
    } else {
        pretty_count(c.total)
    }
}

/// `naming_convention`: `<base or name>[-size][-finetune][-version][-ENC][-kind]`.
pub fn file_name(
    m: &ModelMeta,
    size_label: Option<&str>,
    encoding: Option<&str>,
    kind: Option<&str>,
) -> String {
    let clean = |s: &str| s.trim().replace(' ', "-");
    let name = match (&m.basename, &m.name) {
        (Some(b), _) => clean(b).replace('/', "-"),
        (None, Some(n)) => clean(n).replace('/', "-"),
        _ => "ggml-model".into(),
    };
    let mut out = name;
    for part in [size_label, m.finetune.as_deref(), m.version.as_deref()]
        .into_iter()
        .flatten()
    {
        out.push('-');
        out.push_str(&clean(part));
    }
    if let Some(e) = encoding {
        out.push('-');
        out.push_str(&clean(e).to_uppercase());
    }
    if let Some(k) = kind {
        out.push('-');
        out.push_str(&clean(k));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_components() {
        let c = model_id_components("meta-llama/Llama-3.2-1B-Instruct", 0);
        assert_eq!(c.org.as_deref(), Some("meta-llama"));
        assert_eq!(c.basename.as_deref(), Some("Llama-3.2"));
        assert_eq!(c.size_label.as_deref(), Some("1B"));
        assert_eq!(c.finetune.as_deref(), Some("Instruct"));
        let c = model_id_components("Mixtral-8x7B-Instruct-v0.1", 0);
        assert_eq!(c.basename.as_deref(), Some("Mixtral"));
        assert_eq!(c.size_label.as_deref(), Some("8x7B"));
        assert_eq!(c.version.as_deref(), Some("v0.1"));
        let c = model_id_components("llama-spm", 1_705_216);
        assert_eq!(c.basename, None);
        assert_eq!(c.size_label, None);
        assert_eq!(id_to_title("llama-spm"), "Llama Spm");
        assert_eq!(id_to_title("qwen3moe"), "Qwen3Moe");
        assert_eq!(id_to_title("gpt2"), "Gpt2");
        assert_eq!(id_to_title("meta-llama"), "Meta Llama");
        // A "size" far from the real count is a context length, kept as fine-tune.
        let c = model_id_components("Foo-128k", 7_000_000_000);
        assert_eq!(c.finetune.as_deref(), Some("128k"));
    }

    #[test]
    fn size_labels() {
        assert_eq!(pretty_count(1_705_216), "1.7M");
        assert_eq!(pretty_count(139_840), "140K");
        assert_eq!(pretty_count(494_000_000), "494M");
        assert_eq!(pretty_count(70_600_000_000), "71B");
        assert_eq!(pretty_count(1_236_000_000), "1.2B");
        let c = ParamCount {
            total: 0,
            shared: 355_968,
            expert: 196_608,
            n_expert: 4,
            lora: false,
        };
        assert_eq!(size_label(&c), "4x553K");
    }

    #[test]
    fn lora_pairs_are_counted_like_gguf_py() {
        let (w, a, b): (&[u64], &[u64], &[u64]) = (&[8, 16], &[4, 2, 16], &[4, 8, 2]);
        // Each B counted with its A's last dimension; any pair negates the total.
        let c = count_params(
            [
                ("blk.0.w.weight", w),
                ("blk.0.x.lora_a", a),
                ("blk.0.x.lora_b", b),
            ]
            .into_iter(),
        );
        assert_eq!(
            (c.total, c.lora, c.signed_total()),
            (128 + 4 * 8 * 16, true, -640)
        );
        // A B after another tensor's A: nothing is counted.
        let c = count_params(
            [
                ("blk.0.x.lora_a", a),
                ("blk.0.y.lora_a", a),
                ("blk.0.x.lora_b", b),
            ]
            .into_iter(),
        );
        assert_eq!((c.total, c.lora, c.signed_total()), (0, false, 0));
    }

    #[test]
    fn names() {
        let m = ModelMeta {
            name: Some("Llama Spm".into()),
            ..ModelMeta::default()
        };
        assert_eq!(
            file_name(&m, Some("1.7M"), Some("bf16"), None),
            "Llama-Spm-1.7M-BF16"
        );
        assert_eq!(file_name(&m, None, None, Some("vocab")), "Llama-Spm-vocab");
    }
}
