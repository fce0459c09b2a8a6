//! Writing architecture hparams as GGUF KVs (`set_gguf_parameters`).
//!
//! [`Params`] writes `{arch}.<key>` entries with gguf-py's types and overwrite-in-place
//! semantics; [`Params::generic`] is `TextModel.set_gguf_parameters`, the block most
//! architectures start from.

use ggufkit::gguf::keys::{self, attention, llm, rope};
use std::path::{Path, PathBuf};

use ggufkit::gguf::{ArrayValue, GgufString, Metadata, Value};
use serde_json::Value as Json;

use super::config::{json_u64, Hparams};
use crate::ConvertError;

/// The KV writer handed to an architecture's parameter function.
pub struct Params<'a> {
    /// The hparams.
    pub hp: &'a Hparams,
    /// `general.architecture` (the key prefix).
    pub arch: &'a str,
    /// The model directory: read only through the accessors below, which hand a family the
    /// parsed file it asks for.
    files: &'a super::ModelDir,
    /// `general.file_type`.
    pub file_type: u32,
    /// Where the KVs go.
    pub md: &'a mut Metadata,
}

impl<'a> Params<'a> {
    /// The writer of `arch`'s KVs into `md`, for the model whose files are in `files`.
    pub fn new(
        hp: &'a Hparams,
        arch: &'a str,
        files: &'a super::ModelDir,
        file_type: u32,
        md: &'a mut Metadata,
    ) -> Self {
        Params {
            hp,
            arch,
            files,
            file_type,
            md,
        }
    }

    /// The same writer reading other hparams (a class that writes its KVs from a derived
    /// or sub-config).
    pub fn with_hparams<'b>(&'b mut self, hp: &'b Hparams) -> Params<'b> {
        Params {
            hp,
            arch: self.arch,
            files: self.files,
            file_type: self.file_type,
            md: &mut *self.md,
        }
    }

    /// generation_config.json, when the directory has one.
    pub fn generation_config(&self) -> Result<Option<&'a Json>, ConvertError> {
        self.files.generation_config()
    }

    /// generation_config.json's path (for messages).
    pub fn generation_config_path(&self) -> PathBuf {
        self.files.generation_config_path()
    }

    /// tokenizer.json, when the directory has one.
    pub fn tokenizer_json(&self) -> Result<Option<&'a Json>, ConvertError> {
        self.files.tokenizer_json()
    }

    /// tokenizer.json's path (for messages).
    pub fn tokenizer_json_path(&self) -> PathBuf {
        self.files.tokenizer_json_path()
    }
}

/// A pooling mode (`gguf.PoolingType`).
fn pooling_id(mode: &str) -> Option<u32> {
    match mode {
        "mean" => Some(1),
        "cls" => Some(2),
        "lasttoken" => Some(3),
        _ => None,
    }
}

impl Params<'_> {
    fn key(&self, suffix: &str) -> String {
        keys::arch_key(self.arch, suffix)
    }

    /// `{arch}.suffix` as UINT32.
    pub fn u32(&mut self, suffix: &str, v: u64) -> Result<(), ConvertError> {
        let key = self.key(suffix);
        let v = u32::try_from(v).map_err(|_| {
            ConvertError::out_of_range(&self.hp.path, &key, v, "a UINT32 holds at most 4294967295")
        })?;
        self.md.set(key, Value::U32(v));
        Ok(())
    }

    /// `{arch}.suffix` as FLOAT32.
    pub fn f32(&mut self, suffix: &str, v: f64) {
        let key = self.key(suffix);
        self.md.set(key, Value::F32(v as f32));
    }

    /// `{arch}.suffix` as BOOL.
    pub fn bool(&mut self, suffix: &str, v: bool) {
        let key = self.key(suffix);
        self.md.set(key, Value::Bool(v));
    }

    /// `{arch}.suffix` as STRING (skipped when empty, like `add_string`).
    pub fn string(&mut self, suffix: &str, v: &str) {
        if v.is_empty() {
            return;
        }
        let key = self.key(suffix);
        self.md.set(key, Value::from(v));
    }

    /// A STRING array (skipped when empty, like `add_array`).
    pub fn strings(&mut self, suffix: &str, v: Vec<String>) {
        if v.is_empty() {
            return;
        }
        let key = self.key(suffix);
        self.md.set(
            key,
            Value::Array(ArrayValue::String(
                v.into_iter().map(GgufString::from).collect(),
            )),
        );
    }

    /// A BOOL array (skipped when empty, like `add_array`).
    pub fn bools(&mut self, suffix: &str, v: Vec<bool>) {
        if v.is_empty() {
            return;
        }
        let key = self.key(suffix);
        self.md.set(key, Value::Array(ArrayValue::Bool(v)));
    }

    /// A FLOAT32 array (skipped when empty, like `add_array` of Python floats).
    pub fn f32s(&mut self, suffix: &str, v: Vec<f32>) {
        if v.is_empty() {
            return;
        }
        let key = self.key(suffix);
        self.md.set(key, Value::Array(ArrayValue::F32(v)));
    }

    /// An INT32 array (skipped when empty, like `add_array` of Python ints).
    pub fn i32s(&mut self, suffix: &str, v: Vec<i32>) {
        if v.is_empty() {
            return;
        }
        let key = self.key(suffix);
        self.md.set(key, Value::Array(ArrayValue::I32(v)));
    }

    /// A UINT64 array, written even when empty (`add_key_value` with the array's type).
    pub fn u64s(&mut self, suffix: &str, v: Vec<u64>) {
        let key = self.key(suffix);
        self.md.set(key, Value::Array(ArrayValue::U64(v)));
    }

    /// `rope.dimension_count = int(pct * (hidden_size // num_attention_heads))`: partial
    /// rotary dimensions of one head.
    pub fn partial_rope_dims(&mut self, pct: f64) -> Result<(), ConvertError> {
        let hidden = self.hp.req_u64(&["hidden_size"])?;
        let heads = self.hp.req_u64(&["num_attention_heads"])?;
        if heads == 0 {
            return Err(self.hp.missing(&["num_attention_heads"]));
        }
        self.u32(
            rope::DIMENSION_COUNT,
            (pct * (hidden / heads) as f64) as u64,
        )
    }

    /// `use_parallel_residual` from the hparams, true when absent.
    pub fn parallel_residual(&mut self) -> Result<(), ConvertError> {
        let parallel = match self.hp.get("use_parallel_residual") {
            None => true,
            Some(Json::Bool(b)) => *b,
            Some(v) => {
                return Err(ConvertError::wrong_type(
                    &self.hp.path,
                    "use_parallel_residual",
                    "a boolean",
                    v,
                ))
            }
        };
        self.bool(llm::USE_PARALLEL_RESIDUAL, parallel);
        Ok(())
    }

    /// `rope.scaling.type = "none"` (`add_rope_scaling_type(RopeScalingType.NONE)`).
    pub fn rope_scaling_none(&mut self) {
        self.string(rope::SCALING_TYPE, "none");
    }

    /// The sliding-window pattern from `layer_types` (true = sliding attention), if the
    /// hparams have that list.
    pub fn layer_types_pattern(&self) -> Result<Option<Vec<bool>>, ConvertError> {
        match self.hp.get("layer_types") {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Array(a)) => Ok(Some(
                a.iter()
                    .map(|t| t.as_str() == Some("sliding_attention"))
                    .collect(),
            )),
            Some(v) => Err(ConvertError::wrong_type(
                &self.hp.path,
                "layer_types",
                "a list",
                v,
            )),
        }
    }

    /// An integer or a list of integers (UINT32, or an INT32 array as gguf-py infers it).
    pub fn u32_or_list(&mut self, suffix: &str, v: &Json) -> Result<(), ConvertError> {
        match v {
            Json::Array(items) => {
                let xs = items
                    .iter()
                    .map(|x| x.as_i64().and_then(|i| i32::try_from(i).ok()))
                    .collect::<Option<Vec<i32>>>()
                    .ok_or_else(|| self.bad(suffix, v))?;
                if !xs.is_empty() {
                    let key = self.key(suffix);
                    self.md.set(key, Value::Array(ArrayValue::I32(xs)));
                }
                Ok(())
            }
            v => {
                let x = json_u64(v).ok_or_else(|| self.bad(suffix, v))?;
                self.u32(suffix, x)
            }
        }
    }

    fn bad(&self, suffix: &str, v: &Json) -> ConvertError {
        ConvertError::wrong_type(&self.hp.path, self.key(suffix), "an integer (list)", v)
    }

    /// `general.file_type`.
    pub fn file_type(&mut self) {
        self.md
            .set(keys::general::FILE_TYPE, Value::U32(self.file_type));
    }

    /// An optional hparam (first of `keys`, skipped when absent or null) as UINT32 / list.
    pub fn opt_u32(&mut self, suffix: &str, keys: &[&str]) -> Result<(), ConvertError> {
        match self.hp.find(keys) {
            None | Some(Json::Null) => Ok(()),
            Some(v) => {
                let v = v.clone();
                self.u32_or_list(suffix, &v)
            }
        }
    }

    /// An optional hparam as FLOAT32.
    pub fn opt_f32(&mut self, suffix: &str, keys: &[&str]) -> Result<(), ConvertError> {
        if let Some(v) = self.hp.find_f64(keys)? {
            self.f32(suffix, v);
        }
        Ok(())
    }

    /// A required hparam as UINT32.
    pub fn req_u32(&mut self, suffix: &str, keys: &[&str]) -> Result<(), ConvertError> {
        let v = self.hp.req_u64(keys)?;
        self.u32(suffix, v)
    }

    /// The block count (`n_layers` / `num_hidden_layers` / `n_layer` / `num_layers`).
    pub fn block_count(&self) -> Result<u64, ConvertError> {
        self.hp.block_count()
    }

    /// `TextModel.set_gguf_parameters`: the generic hparam block, ending with
    /// `general.file_type`.
    pub fn generic(&mut self) -> Result<(), ConvertError> {
        let n = self.block_count()?;
        self.u32(llm::BLOCK_COUNT, n)?;
        self.opt_u32(
            llm::CONTEXT_LENGTH,
            &[
                "max_position_embeddings",
                "n_ctx",
                "n_positions",
                "max_length",
                "max_sequence_length",
                "model_max_length",
            ],
        )?;
        self.opt_u32(llm::EMBEDDING_LENGTH, &["hidden_size", "n_embd", "dim"])?;
        self.opt_u32(
            llm::FEED_FORWARD_LENGTH,
            &[
                "prefix_dense_intermediate_size",
                "dense_intermediate_size",
                "intermediate_size",
                "n_inner",
                "hidden_dim",
            ],
        )?;
        self.opt_u32(
            attention::HEAD_COUNT,
            &["num_attention_heads", "n_head", "n_heads"],
        )?;
        self.opt_u32(
            attention::HEAD_COUNT_KV,
            &["num_key_value_heads", "n_kv_heads"],
        )?;
        if self.hp.get("is_causal") == Some(&Json::Bool(false)) {
            self.bool(attention::CAUSAL, false);
        }
        self.rope_scaling()?;
        if let Some(Json::Array(sec)) = self.hp.rope.get("mrope_section") {
            let mut s: Vec<i32> = sec
                .iter()
                .filter_map(|x| x.as_i64().and_then(|i| i32::try_from(i).ok()))
                .collect();
            s.resize(s.len().max(4), 0);
            s.truncate(4);
            let key = self.key(rope::DIMENSION_SECTIONS);
            self.md.set(key, Value::Array(ArrayValue::I32(s)));
        }
        if let Some(t) = self.hp.rope_full().get("rope_theta").and_then(Json::as_f64) {
            self.f32(rope::FREQ_BASE, t);
        }
        let swa = self
            .hp
            .rope
            .get("sliding_attention")
            .and_then(|s| s.get("rope_theta"))
            .and_then(Json::as_f64);
        if let Some(t) = swa {
            self.f32(rope::FREQ_BASE_SWA, t);
        }
        self.opt_f32(attention::LAYERNORM_RMS_EPS, &["rms_norm_eps", "norm_eps"])?;
        self.opt_f32(
            attention::LAYERNORM_EPS,
            &["layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"],
        )?;
        self.opt_u32(
            llm::EXPERT_COUNT,
            &["num_local_experts", "num_experts", "n_routed_experts"],
        )?;
        self.opt_u32(
            llm::EXPERT_USED_COUNT,
            &[
                "num_experts_per_tok",
                "num_experts_per_token",
                "top_k_experts",
            ],
        )?;
        self.opt_u32(llm::EXPERT_GROUP_COUNT, &["n_group"])?;
        self.opt_u32(llm::EXPERT_GROUP_USED_COUNT, &["topk_group"])?;
        let score = self.hp.find(&[
            "score_function",
            "scoring_func",
            "score_func",
            "moe_router_activation",
            "moe_router_activation_func",
            "expert_selection_fn",
        ]);
        match score {
            None | Some(Json::Null) => {}
            Some(v) => {
                let id = match v.as_str() {
                    Some("softmax") => 1,
                    Some("sigmoid") => 2,
                    Some("sqrtsoftplus") => 4,
                    _ => {
                        return Err(ConvertError::Unsupported(format!(
                            "unsupported expert score gating function {v}"
                        )))
                    }
                };
                self.u32(llm::EXPERT_GATING_FUNC, id)?;
            }
        }
        match self.hp.get("head_dim") {
            None | Some(Json::Null) => {}
            Some(v) => {
                let v = v.clone();
                self.u32_or_list(attention::KEY_LENGTH, &v)?;
                self.u32_or_list(attention::VALUE_LENGTH, &v)?;
            }
        }
        self.file_type();
        Ok(())
    }

    /// The generic rope-scaling keys (linear, yarn, longrope).
    fn rope_scaling(&mut self) -> Result<(), ConvertError> {
        let rp = self.hp.rope_full().clone();
        let Some(rt) = rp.get("rope_type").filter(|v| !v.is_null()) else {
            return Ok(());
        };
        let rt = rt.as_str().unwrap_or_default().to_string();
        let factor = rp.get("factor").and_then(Json::as_f64);
        match (rt.as_str(), factor) {
            ("linear", Some(f)) => {
                self.string(rope::SCALING_TYPE, "linear");
                self.f32(rope::SCALING_FACTOR, f);
            }
            ("yarn", Some(f)) => {
                self.string(rope::SCALING_TYPE, "yarn");
                self.f32(rope::SCALING_FACTOR, f);
                let orig = rp
                    .get("original_max_position_embeddings")
                    .and_then(json_u64)
                    .ok_or_else(|| {
                        ConvertError::format(
                            &self.hp.path,
                            None,
                            "yarn rope scaling needs original_max_position_embeddings",
                        )
                    })?;
                self.u32(rope::SCALING_ORIG_CTX_LEN, orig)?;
                let get = |k: &str| rp.get(k).and_then(Json::as_f64);
                if let Some(v) = get("extrapolation_factor") {
                    self.f32(rope::SCALING_YARN_EXT_FACTOR, v);
                }
                let attn = match rp.get("attention_factor") {
                    Some(v) => v.as_f64(),
                    None => get("attn_factor"),
                };
                if let Some(v) = attn {
                    self.f32(rope::SCALING_YARN_ATTN_FACTOR, v);
                }
                if let Some(v) = get("beta_fast") {
                    self.f32(rope::SCALING_YARN_BETA_FAST, v);
                }
                if let Some(v) = get("beta_slow") {
                    self.f32(rope::SCALING_YARN_BETA_SLOW, v);
                }
            }
            ("su" | "longrope", _) => self.string(rope::SCALING_TYPE, "longrope"),
            // linear/yarn without a factor, dynamic, llama3 (rope_freqs tensor) and
            // unknown types write nothing.
            _ => {}
        }
        Ok(())
    }

    /// `_try_set_pooling_type`: sentence-transformers pooling and classifier pooling.
    pub fn pooling(&mut self) -> Result<(), ConvertError> {
        let modules = self.files.join("modules.json");
        let mut pooling_path = None;
        if modules.is_file() {
            let mods = read_json(&modules)?;
            for m in mods.as_array().into_iter().flatten() {
                let ty = m.get("type").and_then(Json::as_str).unwrap_or_default();
                if ty.ends_with("Pooling") {
                    pooling_path = m.get("path").and_then(Json::as_str).map(str::to_string);
                    break;
                }
            }
        }
        if let Some(p) = pooling_path {
            let cfg_path = self.files.join(&p).join("config.json");
            let cfg = read_json(&cfg_path)?;
            let truthy = |k: &str| match cfg.get(k) {
                Some(Json::Bool(b)) => *b,
                Some(Json::Number(n)) => n.as_f64() != Some(0.0),
                Some(Json::String(s)) => !s.is_empty(),
                _ => false,
            };
            let id = if truthy("pooling_mode_mean_tokens") {
                1
            } else if truthy("pooling_mode_cls_token") {
                2
            } else if truthy("pooling_mode_lasttoken") {
                3
            } else if let Some(id) = cfg
                .get("pooling_mode")
                .and_then(Json::as_str)
                .and_then(pooling_id)
            {
                id
            } else {
                return Err(ConvertError::Unsupported(format!(
                    "{}: only MEAN, CLS and LAST pooling types are supported",
                    cfg_path.display()
                )));
            };
            self.u32(llm::POOLING_TYPE, id as u64)?;
        }
        match self.hp.get("classifier_pooling") {
            None | Some(Json::Null) => {}
            Some(v) => match v.as_str() {
                Some(m @ ("cls" | "mean")) => {
                    let id = pooling_id(m).expect("known mode") as u64;
                    self.u32(llm::CLASSIFIER_POOLING_TYPE, id)?;
                }
                _ => {
                    return Err(ConvertError::Unsupported(format!(
                        "unsupported classifier_pooling {v}"
                    )))
                }
            },
        }
        Ok(())
    }
}

/// The keys holding the number of blocks.
pub const BLOCK_COUNT_KEYS: &[&str] = &["n_layers", "num_hidden_layers", "n_layer", "num_layers"];

/// Reads a JSON file.
pub fn read_json(path: &Path) -> Result<Json, ConvertError> {
    let text =
        ggufkit::mapped::read_input_to_string(path).map_err(|e| ConvertError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| ConvertError::bad_json(path, &e))
}
