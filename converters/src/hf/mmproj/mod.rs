//! Multimodal projector files (`convert_hf_to_gguf.py --mmproj`): the vision (or audio)
//! encoder and projector of a vision-language checkpoint as a `clip` GGUF.
//!
//! The reference's `MmprojModel` keeps the tower and projector tensors (dropping every
//! `language_model.` tensor), maps them through the projector name table ([`names`]), writes
//! `general.type = mmproj`, the `clip.*` / `clip.vision.*` / `clip.audio.*` keys read from
//! the config's `vision_config` (or `audio_config`), the text model's width and the image
//! processor's mean and std, and names the file `mmproj-<name>-<TYPE>.gguf`. A family's
//! subclass adds its projector type and keys, filters and renames tensors, transforms a
//! few, and forces some tensors' types. Each family here is one [`Projector`] constant in
//! its own file, listed in [`ALL`]; nothing else knows about families.
//!
//! Tensors stay lazy: the projector's tensors point at the checkpoint's bytes or are
//! transforms of them, exactly like a text conversion's, so a text model and its projector
//! planned from one directory are written by the engine in one pass over the checkpoint.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use ggufkit::gguf::keys::{self, clip};
use ggufkit::gguf::{ArrayValue, Metadata, Value};
use ggufkit::ir::Model;
use ggufkit::quantizers::GgmlType;
use serde_json::{Map, Value as Json};

use super::config::{self, json_u64, Hparams};
use super::expr::{BinOp, Expr};
use super::names::block_id;
use super::outtype::{self, OutType};
use super::safetensors::{self, StDtype, StTensor};
use super::tensors::Planned;
use super::{metadata, HfConversion, HfOptions};
use crate::ConvertError;

mod audioflamingo3;
mod cogvlm;
mod deepseek4v;
mod deepseek_ocr;
mod defaults;
mod dots_ocr;
mod exaone4_5;
mod gemma3;
mod gemma3n;
mod gemma4;
mod glm4v;
mod glmasr;
mod granite4v;
mod granite_speech;
mod hunyuanvl;
mod internvl;
mod janus;
mod kimivl;
mod lfm2_audio;
mod lfm2vl;
mod lighton_ocr;
mod ling3vl;
mod llama4;
mod meralion;
mod mimo;
mod minicpmv46;
mod minimax_m3;
pub mod names;
mod nemotron_vl;
mod paddleocr;
mod phi4v;
mod pixtral;
mod qwenvl;
mod sarashina2;
mod smolvlm;
mod step3vl;
mod voxtral;
mod whisper;
mod youtuvl;

use names::ProjectorMap;

/// The config keys of a tower's block count (`MmprojModel.n_block_keys`).
const BLOCK_KEYS: &[&str] = &[
    "n_layers",
    "num_hidden_layers",
    "n_layer",
    "num_layers",
    "depth",
    "layers",
    "encoder_layers",
    "vt_num_hidden_layers",
];

/// The block count the name table is expanded for when a file has both encoders
/// (`MmprojModel.__init__`).
const MULTI_ENCODER_BLOCKS: u64 = 128;

/// Which part of a tensor's name a [`Force`] rule looks at.
#[derive(Debug, Clone, Copy)]
pub enum On {
    /// The HF name (after the class's filter), containing this.
    Hf(&'static str),
    /// The GGUF name, containing this.
    Gguf(&'static str),
    /// An HF name containing both `.conv` and `.weight` (Whisper's convolutions).
    HfConvWeight,
    /// An HF name the class's own test accepts.
    HfWhere(fn(&str) -> bool),
    /// A pair of names (HF, GGUF) the class's own test accepts.
    NamesWhere(fn(&str, &str) -> bool),
}

/// A forced tensor type (`tensor_force_quant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Force {
    /// Always this type.
    Type(GgmlType),
    /// F16 when the outtype is f16, else F32 (`MmprojModel`'s patch embedding rule).
    F16IfF16,
}

/// `MmprojModel.tensor_force_quant`, after a family's own rules.
const BASE_FORCE: &[(On, Force)] = &[
    (On::Gguf(".patch_embd.weight"), Force::F16IfF16),
    (On::Gguf(".patch_merger.weight"), Force::F16IfF16),
];

/// One tensor a family's `modify_tensors` gives.
pub enum Out {
    /// A name the projector table maps (an HF spelling or a GGUF name).
    Map(String, Expr),
    /// A final GGUF name, written as it is (the reference yields it past the table).
    Named(String, Expr),
    /// A name the projector table maps, trying these suffixes instead of `.weight` /
    /// `.bias` (`map_tensor_name(name, try_suffixes)`).
    MapWith(String, Expr, &'static [&'static str]),
    /// A name the projector table maps, left out when the table does not know it (a class
    /// whose `modify_tensors` skips what it cannot map).
    MapOrDrop(String, Expr),
}

/// A family's `modify_tensors`: (HF name, values) → output tensors; empty drops it.
pub type Hook = fn(&Ctx, String, Expr) -> Result<Vec<Out>, ConvertError>;

/// One projector family (a `MmprojModel` subclass of the reference).
pub struct Projector {
    /// The HF architecture names (`architectures[0]`, or `vision_config.architectures[0]`).
    pub hf_names: &'static [&'static str],
    /// What the class writes (`clip.projector_type`), for messages and `--list`.
    pub projector_type: &'static str,
    /// Whether the file holds a vision encoder.
    pub vision: bool,
    /// Whether it holds an audio encoder (the class's `prepare` may leave it out of a
    /// checkpoint that has none: [`Ctx::has_audio`]).
    pub audio: bool,
    /// Whether the class's config builds a missing (or null) `vision_config` /
    /// `audio_config` from its defaults (AutoConfig's sub-configs that are not optional):
    /// the tower's config is then an empty object for `prepare` to fill.
    pub default_configs: bool,
    /// The class's `filter_tensors`: `None` drops, `Some` renames (before the base class
    /// drops `language_model.` tensors).
    pub filter: fn(&str) -> Option<String>,
    /// The class's forced types, first match wins, before [`BASE_FORCE`].
    pub force: &'static [(On, Force)],
    /// The class's `__init__` checks and adjustments of the tower's hparams (an audio-only
    /// class's may set [`Ctx::audio`] from a sub-config of its own name).
    pub prepare: fn(&mut Ctx) -> Result<(), ConvertError>,
    /// The class's `modify_tensors` (default: map the name).
    pub hook: Option<Hook>,
    /// The class's `set_gguf_parameters`, after the base keys.
    pub params: fn(&mut Clip) -> Result<(), ConvertError>,
}

/// Every supported projector family.
pub static ALL: &[&Projector] = &[
    &gemma3::GEMMA3,
    &pixtral::LLAVA_PIXTRAL,
    &smolvlm::SMOLVLM,
    &qwenvl::QWEN2VL,
    &qwenvl::QWEN3VL,
    &whisper::QWEN2AUDIO,
    &whisper::ULTRAVOX,
    &internvl::INTERNVL,
    &glm4v::GLM4V,
    &glm4v::GLM5V,
    &gemma4::GEMMA4,
    &gemma4::GEMMA4_UNIFIED,
    &gemma3n::GEMMA3N,
    &voxtral::VOXTRAL,
    &audioflamingo3::AUDIO_FLAMINGO3,
    &meralion::MERALION,
    &glmasr::GLMASR,
    &sarashina2::SARASHINA2,
    &kimivl::KIMIVL,
    &kimivl::KIMIK25,
    &llama4::LLAMA4,
    &lfm2vl::LFM2VL,
    &lighton_ocr::LIGHTON_OCR,
    &kimivl::GLM5_VISION,
    &granite4v::GRANITE4_VISION,
    &granite_speech::GRANITE_SPEECH,
    &granite_speech::GRANITE_SPEECH_PLUS,
    &lfm2_audio::LFM2_AUDIO,
    &youtuvl::YOUTUVL,
    &hunyuanvl::HUNYUANVL,
    &paddleocr::PADDLEOCR_VISION,
    &deepseek4v::DEEPSEEK4V,
    &cogvlm::COGVLM,
    &janus::JANUS,
    &minimax_m3::MINIMAX_M3,
    &minicpmv46::MINICPMV46,
    &ling3vl::LING3VL,
    &exaone4_5::EXAONE4_5,
    &step3vl::STEP3VL,
    &deepseek_ocr::DEEPSEEK_OCR,
    &deepseek_ocr::UNLIMITED_OCR,
    &deepseek_ocr::DEEPSEEK_OCR2,
    &dots_ocr::DOTS_OCR,
    &phi4v::PHI4V,
    &nemotron_vl::NEMOTRON_VL,
    &mimo::MIMO_VL,
];

/// The projector family of an HF architecture name.
pub fn lookup(hf_arch: &str) -> Option<&'static Projector> {
    ALL.iter().copied().find(|p| p.hf_names.contains(&hf_arch))
}

/// Every supported projector architecture with its projector type, sorted.
pub fn projector_table() -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<(&'static str, &'static str)> = ALL
        .iter()
        .flat_map(|p| p.hf_names.iter().map(move |n| (*n, p.projector_type)))
        .collect();
    v.sort_unstable();
    v
}

impl Projector {
    /// The encoders the file holds (`vision`, `audio`), for listings.
    pub fn encoders(&self) -> Vec<&'static str> {
        [("vision", self.vision), ("audio", self.audio)]
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(e, _)| e)
            .collect()
    }
}

/// What a family's hooks see: the configs and the output type.
pub struct Ctx {
    /// The merged hparams (text part flattened).
    pub hp: Hparams,
    /// The HF architecture.
    pub class: String,
    /// `vision_config` (the tower's hparams), when the file has a vision encoder.
    pub vision: Option<Map<String, Json>>,
    /// `audio_config` / `whisper_config`, when it has an audio encoder.
    pub audio: Option<Map<String, Json>>,
    /// `preprocessor_config.json` merged with `processor_config.json`.
    pub pre: Map<String, Json>,
    /// The text model's width.
    pub n_embd_text: u64,
    /// The resolved outtype.
    pub outtype: OutType,
    /// The model directory.
    pub dir: crate::hf::ModelDir,
    /// Pixtral: the `[IMG_BREAK]` token id whose embedding row is kept (-1: none).
    pub img_break: i64,
    /// Whether the file gets the vision encoder's keys ([`Projector::vision`]).
    pub has_vision: bool,
    /// Whether the file gets the audio encoder's keys: [`Projector::audio`], unless the
    /// class's `prepare` turns it off (a checkpoint without an audio tower).
    pub has_audio: bool,
    /// The checkpoint's tensors the class keeps (after its filter), with their shapes, in
    /// the checkpoint's order: what a class's `__init__` reads from `model_tensors`.
    pub tensors: Vec<(String, Vec<u64>)>,
    /// The block count the name table is built for, when the class's `prepare` fixes it
    /// (a class whose `__init__` counts one tower's blocks though the file gets both
    /// encoders); otherwise the tower's, or 128 for a class with both encoders.
    pub map_blocks: Option<u64>,
    /// The tensors a hook holds back until the rest of their group arrives
    /// ([`Ctx::gather`]), by group.
    pending: Mutex<HashMap<String, Vec<(String, Expr)>>>,
    /// Tensors the class makes itself (`generate_extra_tensors`: read from a model of its
    /// own beside the checkpoint), set by its `prepare`: planned before the checkpoint's
    /// tensors, through the class's hook but not its filter.
    pub generated: Vec<(String, Expr)>,
    /// Values the class's `prepare` derives for its `params` (from the tensors it made).
    pub derived: Map<String, Json>,
    /// Tensors the class's hook holds back until the set it merges into one is complete
    /// (the reference's buffers in `modify_tensors`), by a key of the hook's choosing.
    pub held: std::cell::RefCell<std::collections::BTreeMap<String, Expr>>,
}

impl Ctx {
    /// The image processor's pixel bound `key` (`min_pixels`, `max_pixels`), which the
    /// projectors of dynamic-resolution towers read and write: required.
    pub fn pixel_bound(&self, key: &str) -> Result<&Json, ConvertError> {
        self.pre.get(key).ok_or_else(|| ConvertError::MissingKey {
            path: self.dir.join("preprocessor_config.json"),
            key: key.to_string(),
            why: format!(
                "the {} projector reads the image processor's pixel bounds",
                self.class
            ),
        })
    }

    /// The tower's hparams (vision, else audio): `self.hparams` of the reference.
    pub fn tower(&self) -> &Map<String, Json> {
        self.vision
            .as_ref()
            .or(self.audio.as_ref())
            .expect("checked when the context is built")
    }

    /// The error for a key none of `keys` names.
    pub fn missing(&self, what: &str, keys: &[&str]) -> ConvertError {
        ConvertError::format(
            &self.hp.path,
            None,
            format!(
                "{what}: could not find any of {keys:?} (needed by the {} projector)",
                self.class
            ),
        )
    }

    /// Holds `expr` as member `name` of group `group` and gives the group's members once it
    /// has `count` of them (and again on each later arrival), as a class's
    /// `modify_tensors` that keeps a dict per group and combines several source tensors
    /// into one output when the last arrives (a batch norm folded into its scale and
    /// shift). A name given again replaces its value in place, as a dict's key does. Until
    /// then the hook yields nothing for the tensors it holds.
    pub fn gather(
        &self,
        group: &str,
        name: String,
        expr: Expr,
        count: usize,
    ) -> Option<HashMap<String, Expr>> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let members = pending.entry(group.to_string()).or_default();
        match members.iter_mut().find(|(n, _)| *n == name) {
            Some(m) => m.1 = expr,
            None => members.push((name, expr)),
        }
        (members.len() >= count).then(|| members.iter().cloned().collect())
    }

    /// A refused feature of this class.
    pub fn unsupported(&self, feature: impl Into<String>) -> ConvertError {
        ConvertError::UnsupportedFeature {
            arch: format!("{} (--mmproj)", self.class),
            feature: feature.into(),
        }
    }
}

/// The first of `keys` present in `obj`.
/// A fused q/k/v tensor (weight or bias) split by rows into three equal parts, named
/// `names(part)` for the parts `q`, `k` and `v`.
fn split_qkv(
    name: &str,
    expr: Expr,
    names: impl Fn(&str) -> String,
) -> Result<Vec<Out>, ConvertError> {
    let rows = expr.shape().first().copied().unwrap_or(0);
    if rows % 3 != 0 {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("fused qkv of {rows} rows is not three equal parts"),
        });
    }
    let c = rows / 3;
    ["q", "k", "v"]
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let part = expr.clone().narrow(name, 0, i as u64 * c, c)?;
            Ok(Out::Map(names(p), part))
        })
        .collect()
}

/// One of an audio encoder block's batch-norm tensors (`{prefix}.weight`, `.bias`,
/// `.running_mean`, `.running_var`, where `prefix_of` gives the block's prefix): held until
/// the block has `count` of them ([`Ctx::gather`]), then `Some((prefix, scale, shift))`, the
/// norm folded ([`fold_batch_norm`]). A tensor outside the tower's blocks, or a block whose
/// group lacks one of the four, is an error naming it.
pub fn fold_block_batch_norm(
    ctx: &Ctx,
    name: String,
    expr: Expr,
    prefix_of: fn(u64) -> String,
    count: usize,
    eps: f32,
) -> Result<Option<(String, Expr, Expr)>, ConvertError> {
    let blocks = find(ctx.tower(), BLOCK_KEYS)
        .and_then(json_u64)
        .unwrap_or(0);
    let bid = block_id(&name)
        .filter(|b| *b < blocks)
        .ok_or_else(|| ConvertError::Tensor {
            name: name.clone(),
            problem: format!("a batch norm outside the encoder's {blocks} blocks"),
        })?;
    let Some(group) = ctx.gather(&bid.to_string(), name, expr, count) else {
        return Ok(None);
    };
    let prefix = prefix_of(bid);
    let part = |p: &str| {
        let key = format!("{prefix}.{p}");
        group
            .get(&key)
            .cloned()
            .ok_or_else(|| ConvertError::Tensor {
                name: key,
                problem: format!(
                    "missing: block {bid} has other batch norm tensors ({})",
                    group.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            })
    };
    let (scale, shift) = fold_batch_norm(
        &prefix,
        part("weight")?,
        part("bias")?,
        part("running_mean")?,
        part("running_var")?,
        eps,
    )?;
    Ok(Some((prefix, scale, shift)))
}

/// A batch norm's inference transform folded into a scale and a shift, as the reference
/// computes them in torch: `scale = weight / sqrt(running_var + eps)` and
/// `shift = bias - running_mean * scale`, one rounding per operation in the working type
/// ([`Expr::binary`], [`Expr::sqrt`]). `name` names the norm in errors.
pub fn fold_batch_norm(
    name: &str,
    weight: Expr,
    bias: Expr,
    running_mean: Expr,
    running_var: Expr,
    eps: f32,
) -> Result<(Expr, Expr), ConvertError> {
    let root = running_var.add_scalar(eps).sqrt();
    let scale = Expr::binary(name, BinOp::Div, weight, root)?;
    let product = Expr::binary(name, BinOp::Mul, running_mean, scale.clone())?;
    let shift = Expr::binary(name, BinOp::Sub, bias, product)?;
    Ok((scale, shift))
}

fn find<'a>(obj: &'a Map<String, Json>, keys: &[&str]) -> Option<&'a Json> {
    keys.iter().find_map(|k| obj.get(*k))
}

/// The KV writer of a projector's `set_gguf_parameters`.
pub struct Clip<'a> {
    /// The configs.
    pub ctx: &'a Ctx,
    /// Where the KVs go.
    pub md: &'a mut Metadata,
}

impl Clip<'_> {
    fn path(&self) -> &Path {
        &self.ctx.hp.path
    }

    /// A value of the vision config (`find_vparam`), required.
    pub fn vparam(&self, keys: &[&str]) -> Result<&Json, ConvertError> {
        let v = self.ctx.vision.as_ref().expect("a vision projector");
        find(v, keys).ok_or_else(|| self.ctx.missing("vision_config", keys))
    }

    /// A value of the audio config (`find_aparam`), required.
    pub fn aparam(&self, keys: &[&str]) -> Result<&Json, ConvertError> {
        let a = self.ctx.audio.as_ref().expect("an audio projector");
        find(a, keys).ok_or_else(|| self.ctx.missing("audio_config", keys))
    }

    /// `key` as UINT32 from a JSON integer.
    pub fn u32_json(&mut self, key: &str, v: &Json) -> Result<(), ConvertError> {
        let n = json_u64(v)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                ConvertError::wrong_type(self.path(), key, "an integer that fits in a UINT32", v)
            })?;
        self.md.set(key, Value::U32(n));
        Ok(())
    }

    /// `key` as UINT32.
    pub fn u32(&mut self, key: &str, n: u64) -> Result<(), ConvertError> {
        self.u32_json(key, &Json::from(n))
    }

    /// `key` as FLOAT32 from a JSON number.
    pub fn f32_json(&mut self, key: &str, v: &Json) -> Result<(), ConvertError> {
        let x = v
            .as_f64()
            .ok_or_else(|| ConvertError::wrong_type(self.path(), key, "a number", v))?;
        self.md.set(key, Value::F32(x as f32));
        Ok(())
    }

    /// `key` as BOOL.
    pub fn bool(&mut self, key: &str, b: bool) {
        self.md.set(key, Value::Bool(b));
    }

    /// `key` as STRING.
    pub fn string(&mut self, key: &str, s: &str) {
        self.md.set(key, Value::from(s));
    }

    /// `key` as an array of numbers, typed like gguf-py's `add_array` (by the first item:
    /// FLOAT32 for floats, INT32 for integers).
    pub fn numbers(&mut self, key: &str, v: &Json) -> Result<(), ConvertError> {
        let bad = || ConvertError::wrong_type(self.path(), key, "a list of numbers of one kind", v);
        let items = v.as_array().ok_or_else(bad)?;
        if items.is_empty() {
            return Ok(());
        }
        let value = if items[0].is_f64() {
            let xs: Option<Vec<f32>> = items
                .iter()
                .map(|x| x.is_f64().then(|| x.as_f64()).flatten().map(|x| x as f32))
                .collect();
            ArrayValue::F32(xs.ok_or_else(bad)?)
        } else {
            let xs: Option<Vec<i32>> = items
                .iter()
                .map(|x| x.as_i64().and_then(|x| i32::try_from(x).ok()))
                .collect();
            ArrayValue::I32(xs.ok_or_else(bad)?)
        };
        self.md.set(key, Value::Array(value));
        Ok(())
    }

    /// `add_vision_attention_layernorm_eps(hparams.get("layer_norm_eps", default))`.
    pub fn vision_eps(&mut self, default: f64) -> Result<(), ConvertError> {
        let v = self
            .ctx
            .tower()
            .get("layer_norm_eps")
            .cloned()
            .unwrap_or(Json::from(default));
        self.f32_json(clip::vision::LAYERNORM_EPS, &v)
    }

    /// `MmprojModel.set_gguf_parameters`.
    fn base(&mut self, file_type: u32) -> Result<(), ConvertError> {
        self.md.set(keys::general::FILE_TYPE, Value::U32(file_type));
        if self.ctx.has_vision {
            use clip::vision as cv;
            self.bool(clip::HAS_VISION_ENCODER, true);
            let n = self.ctx.n_embd_text;
            self.u32(cv::PROJECTION_DIM, n)?;
            for (key, keys) in [
                (cv::IMAGE_SIZE, &["image_size"][..]),
                (cv::PATCH_SIZE, &["patch_size"]),
                (
                    cv::EMBEDDING_LENGTH,
                    &["hidden_size", "width", "vt_hidden_size"],
                ),
                (
                    cv::FEED_FORWARD_LENGTH,
                    &["intermediate_size", "vt_intermediate_size"],
                ),
                (cv::BLOCK_COUNT, BLOCK_KEYS),
                (
                    cv::HEAD_COUNT,
                    &[
                        "num_attention_heads",
                        "num_heads",
                        "heads",
                        "vt_num_attention_heads",
                    ],
                ),
            ] {
                let v = self.vparam(keys)?.clone();
                self.u32_json(key, &v)?;
            }
            for (key, pk) in [(cv::IMAGE_MEAN, "image_mean"), (cv::IMAGE_STD, "image_std")] {
                let v = self.ctx.pre.get(pk).cloned().ok_or_else(|| {
                    ConvertError::format(
                        self.ctx.dir.join("preprocessor_config.json"),
                        None,
                        format!(
                            "no {pk:?}: the {} projector needs the image processor's mean \
                             and std (preprocessor_config.json or processor_config.json)",
                            self.ctx.class
                        ),
                    )
                })?;
                self.numbers(key, &v)?;
            }
        }
        if self.ctx.has_audio {
            use clip::audio as ca;
            self.bool(clip::HAS_AUDIO_ENCODER, true);
            let n = self.ctx.n_embd_text;
            self.u32(ca::PROJECTION_DIM, n)?;
            for (key, keys) in [
                (ca::EMBEDDING_LENGTH, &["hidden_size"][..]),
                (ca::FEED_FORWARD_LENGTH, &["intermediate_size"]),
                (ca::BLOCK_COUNT, BLOCK_KEYS),
                (ca::HEAD_COUNT, &["num_attention_heads"]),
            ] {
                let v = self.aparam(keys)?.clone();
                self.u32_json(key, &v)?;
            }
        }
        Ok(())
    }
}

/// The HF architecture the reference picks for `--mmproj`: `vision_config.architectures[0]`
/// when present, else `architectures[0]`.
pub fn mmproj_arch(raw: &Json) -> Option<String> {
    let first = |v: Option<&Json>| {
        v.and_then(Json::as_array)
            .and_then(|a| a.first())
            .and_then(Json::as_str)
            .map(str::to_string)
    };
    first(
        raw.get("vision_config")
            .and_then(|v| v.get("architectures")),
    )
    .or_else(|| first(raw.get("architectures")))
}

fn read_json_object(path: &Path) -> Result<Option<Map<String, Json>>, ConvertError> {
    if !path.is_file() {
        return Ok(None);
    }
    match super::params::read_json(path)? {
        Json::Object(m) => Ok(Some(m)),
        other => Err(ConvertError::wrong_type(
            path,
            config::TOP_LEVEL,
            "an object",
            config::json_kind(&other),
        )),
    }
}

/// `preprocessor_config.json` (with `media_proc_cfg` lifted), then `processor_config.json`
/// (with `image_processor` lifted), later keys winning.
fn preprocessor(dir: &Path) -> Result<Map<String, Json>, ConvertError> {
    let mut out = Map::new();
    for (file, inner) in [
        ("preprocessor_config.json", "media_proc_cfg"),
        ("processor_config.json", "image_processor"),
    ] {
        if let Some(cfg) = read_json_object(&dir.join(file))? {
            let lifted = cfg.get(inner).and_then(Json::as_object).cloned();
            for (k, v) in cfg {
                out.insert(k, v);
            }
            for (k, v) in lifted.into_iter().flatten() {
                out.insert(k, v);
            }
        }
    }
    Ok(out)
}

/// The type of projector tensor `name` (`prepare_tensors` with `tensor_force_quant`).
fn choose(
    outtype: OutType,
    forced: Option<Force>,
    name: &str,
    n_dims: usize,
    row: u64,
    bid: Option<u64>,
) -> GgmlType {
    if n_dims <= 1 || name.ends_with("_norm.weight") {
        return GgmlType::F32;
    }
    let ty = match forced {
        Some(Force::Type(t)) => t,
        Some(Force::F16IfF16) if outtype == OutType::F16 => GgmlType::F16,
        Some(Force::F16IfF16) => GgmlType::F32,
        None => {
            let suffix_ok = [".weight", ".lora_a", ".lora_b"]
                .iter()
                .any(|s| name.len() >= 7 && &name[name.len() - 7..] == *s);
            // The position embeddings are kept in F32 (V_ENC_EMBD_POS, A_ENC_EMBD_POS; no
            // block number in the HF name).
            let pos = bid.is_none()
                && matches!(name, "v.position_embd.weight" | "a.position_embd.weight");
            if !suffix_ok || pos {
                GgmlType::F32
            } else {
                outtype::choose(outtype, name, n_dims, row, bid)
            }
        }
    };
    // gguf-py falls back to F16 when rows are not whole blocks.
    if !row.is_multiple_of(ty.block_size() as u64) {
        return GgmlType::F16;
    }
    ty
}

fn forced(p: &Projector, hf: &str, gguf: &str) -> Option<Force> {
    p.force
        .iter()
        .chain(BASE_FORCE)
        .find(|(on, _)| match on {
            On::Hf(s) => hf.contains(s),
            On::Gguf(s) => gguf.contains(s),
            On::HfConvWeight => hf.contains(".conv") && hf.contains(".weight"),
            On::HfWhere(test) => test(hf),
            On::NamesWhere(test) => test(hf, gguf),
        })
        .map(|(_, f)| *f)
}

/// Why `--mmproj` cannot convert this class.
fn no_projector(hp: &Hparams, class: &str) -> ConvertError {
    let supported: Vec<&str> = projector_table().into_iter().map(|(n, _)| n).collect();
    let what = if super::arch::lookup(class).is_some()
        && hp.raw.get("vision_config").is_none()
        && hp.raw.get("audio_config").is_none()
    {
        format!(
            "{class} is a text-only model: it has no vision or audio encoder to write as a \
             multimodal projector (--mmproj)"
        )
    } else if super::reference::converts_mmproj(class) {
        format!(
            "{class}: llama.cpp's convert_hf_to_gguf.py writes this class's multimodal \
             projector (--mmproj); ggufkit does not yet"
        )
    } else {
        format!(
            "{class}: no multimodal projector converter for this class (--mmproj supports {})",
            supported.join(", ")
        )
    };
    ConvertError::Unsupported(what)
}

/// Converts the projector of the HF model in `dir` (`convert_hf_to_gguf.py --mmproj`).
pub fn read_mmproj_dir(dir: &Path, opts: &HfOptions) -> Result<HfConversion, ConvertError> {
    let model_dir = crate::hf::ModelDir::new(dir);
    let hp = config::load(&model_dir)?;
    let class = mmproj_arch(&hp.raw).unwrap_or_else(|| hp.arch.clone());
    let p = lookup(&class).ok_or_else(|| no_projector(&hp, &class))?;
    let shards = if safetensors::is_safetensors(dir)? {
        safetensors::index_dir(dir)?
    } else {
        crate::torch::index_dir(dir)?
    };
    let entries = projector_entries(p, shards.tensors);
    let shapes = entries
        .iter()
        .map(|(n, e, _)| (n.clone(), e.shape().to_vec()))
        .collect();
    let mut ctx = projector_context(model_dir, opts, p, class, hp, shapes)?;
    let n_blocks = tower_block_count(p, &ctx)?;
    let outtype = match opts.outtype {
        OutType::Auto => {
            outtype::resolve_auto(entries.iter().map(|(_, e, d)| (e.shape().len(), *d)))
        }
        t => t,
    };
    ctx.outtype = outtype;
    // The class's own tensors come first (the reference chains them before the checkpoint's).
    let generated = std::mem::take(&mut ctx.generated)
        .into_iter()
        .map(|(name, expr)| (name, expr, StDtype::F32));
    let entries = generated.chain(entries).collect();
    let planned = plan_projector(p, &ctx, entries, n_blocks)?;

    let mut md = Metadata::new();
    md.set(keys::general::ARCHITECTURE, "clip");
    md.set(keys::general::TYPE, "mmproj");
    let meta = metadata::write_general(
        &ctx.dir,
        &ctx.hp.raw,
        opts,
        planned.iter().map(|p| (p.name.as_str(), p.expr.shape())),
        &mut md,
    )?;
    let file_type = outtype.file_type();
    {
        let mut c = Clip {
            ctx: &ctx,
            md: &mut md,
        };
        c.base(file_type)?;
        (p.params)(&mut c)?;
    }
    md.set(keys::general::QUANTIZATION_VERSION, Value::U32(2));
    super::float_range::refuse_f32_overflow(dir, &md)?;
    let default_file_name = format!(
        "mmproj-{}.gguf",
        metadata::file_name(&meta, None, Some(outtype.label()), None)
    );
    let (sources, tensors) = super::to_ir_all(planned);
    Ok(HfConversion {
        model: Model {
            metadata: md,
            tensors,
        },
        file_type,
        outtype,
        default_file_name,
        sources,
        hf_arch: ctx.class,
        vocab_error: None,
        pre_tokenizer: None,
    })
}

/// The projector's context from its config (`MmprojModel.__init__`): the refusals (a
/// vocabulary, an adapter, no encoder config), the encoders' configs, the preprocessor
/// config and the text model's width, then the base defaults and the class's `prepare`.
fn projector_context(
    dir: crate::hf::ModelDir,
    opts: &HfOptions,
    p: &Projector,
    class: String,
    hp: config::Hparams,
    tensors: Vec<(String, Vec<u64>)>,
) -> Result<Ctx, ConvertError> {
    if opts.vocab_only {
        return Err(ConvertError::Unsupported(format!(
            "{class}: --vocab-only and --mmproj together: a projector file has no vocabulary"
        )));
    }
    if super::lora::is_adapter(&dir) {
        return Err(ConvertError::Unsupported(
            "--mmproj of a LoRA adapter is not supported".into(),
        ));
    }
    // A sub-config config.json leaves out is the one the composite class builds from its
    // defaults (a class without such a table: an empty one, or none).
    let obj = |k: &str| {
        hp.raw
            .get(k)
            .and_then(Json::as_object)
            .cloned()
            .or_else(|| defaults::built(&hp.raw, k))
            .or_else(|| p.default_configs.then(Map::new))
    };
    let vision = obj("vision_config");
    let audio = if hp.raw.get("whisper_config").is_some() {
        obj("whisper_config")
    } else {
        obj("audio_config")
    };
    // An audio-only class's `prepare` may read its tower's config under a key of its own
    // (the class's `get_audio_config`): the check that it has one comes after `prepare`.
    if vision.is_none() && audio.is_none() && p.vision {
        return Err(ConvertError::format(
            &hp.path,
            None,
            format!("{class}: vision_config / audio_config not found (needed by --mmproj)"),
        ));
    }
    // `{**hparams, **text_config}`: a text config the class builds from its defaults has
    // the width, which wins over the root's.
    let built_width = defaults::built(&hp.raw, "text_config")
        .and_then(|t| t.get("hidden_size").and_then(json_u64));
    let n_embd_text = match built_width {
        Some(n) => n,
        None => hp.find_u64(&["hidden_size", "n_embd"])?.unwrap_or(0),
    };
    if n_embd_text == 0 {
        return Err(hp.missing(&["text_config.hidden_size", "hidden_size", "n_embd"]));
    }
    let mut ctx = Ctx {
        class,
        vision: if p.vision { vision } else { None },
        audio: if p.audio { audio } else { None },
        pre: preprocessor(&dir)?,
        n_embd_text,
        outtype: opts.outtype,
        dir,
        img_break: -1,
        has_vision: p.vision,
        has_audio: p.audio,
        map_blocks: None,
        pending: Mutex::default(),
        generated: Vec::new(),
        derived: Map::new(),
        held: Default::default(),
        hp,
        tensors,
    };
    // Every encoder the class writes needs its config (the family code relies on it); a
    // class whose audio tower is optional turns it off in `prepare` when it has none.
    if p.vision && ctx.vision.is_none() {
        return Err(ctx.unsupported("the config has no vision_config"));
    }
    defaults(&mut ctx);
    (p.prepare)(&mut ctx)?;
    if ctx.has_audio && ctx.audio.is_none() {
        return Err(ctx.unsupported("the config has no audio_config"));
    }
    Ok(ctx)
}

/// The number of blocks the name table is expanded for: the tower's block count (bounded:
/// the names of every block are generated), or 128 for a class with both encoders, whose
/// blocks the reference does not count.
fn tower_block_count(p: &Projector, ctx: &Ctx) -> Result<u64, ConvertError> {
    if let Some(n) = ctx.map_blocks {
        return Ok(n);
    }
    if p.vision && p.audio {
        return Ok(MULTI_ENCODER_BLOCKS);
    }
    let v = find(ctx.tower(), BLOCK_KEYS).ok_or_else(|| ctx.missing("tower", BLOCK_KEYS))?;
    json_u64(v)
        .filter(|n| *n <= config::MAX_BLOCK_COUNT)
        .ok_or_else(|| {
            ConvertError::format(
                &ctx.hp.path,
                None,
                format!(
                    "tower block count {v}: expected an integer up to {}",
                    config::MAX_BLOCK_COUNT
                ),
            )
        })
}

/// `index_tensors` with the class's filter, then MmprojModel's and ModelBase's: the text
/// model's tensors dropped, a later tensor of one name replacing the earlier in place.
fn projector_entries(p: &Projector, tensors: Vec<StTensor>) -> Vec<(String, Expr, StDtype)> {
    let mut entries: Vec<(String, Expr, StDtype)> = Vec::new();
    let mut pos = std::collections::HashMap::new();
    for t in tensors {
        let Some(name) = (p.filter)(&t.name) else {
            continue;
        };
        if name.contains("language_model.") {
            continue;
        }
        let name = if name.ends_with("e_score_correction_bias") {
            name.replace("e_score_correction_bias", "e_score_correction.bias")
        } else {
            name
        };
        let dtype = t.dtype;
        let e = (name.clone(), Expr::read(t), dtype);
        match pos.get(&name) {
            Some(&i) => entries[i] = e,
            None => {
                pos.insert(name, entries.len());
                entries.push(e);
            }
        }
    }
    entries
}

/// `modify_tensors` and `prepare_tensors`: each tensor through the class's hook, mapped to
/// its GGUF name and given its output type (`ctx.outtype` resolved).
fn plan_projector(
    p: &Projector,
    ctx: &Ctx,
    entries: Vec<(String, Expr, StDtype)>,
    n_blocks: u64,
) -> Result<Vec<Planned>, ConvertError> {
    let map = ProjectorMap::new(n_blocks);
    let map_name = |name: &str, suffixes: &[&str]| {
        map.get_with(name, suffixes)
            .ok_or_else(|| ConvertError::Tensor {
                name: name.to_string(),
                problem: format!(
                    "can not map tensor (no projector tensor of {} has this name)",
                    ctx.class
                ),
            })
    };
    let mut planned: Vec<Planned> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (name, expr, _) in entries {
        if [
            ".attention.masked_bias",
            ".attention.bias",
            ".rotary_emb.inv_freq",
        ]
        .iter()
        .any(|s| name.ends_with(s))
        {
            continue;
        }
        let bid = block_id(&name);
        let outs = match p.hook {
            Some(h) => h(ctx, name.clone(), expr)?,
            None => vec![Out::Map(name.clone(), expr)],
        };
        for out in outs {
            let (gguf, expr) = match out {
                Out::Map(n, e) => (map_name(&n, &[".weight", ".bias"])?, e),
                Out::MapWith(n, e, suffixes) => (map_name(&n, suffixes)?, e),
                Out::Named(n, e) => (n, e),
                Out::MapOrDrop(n, e) => match map.get_with(&n, &[".weight", ".bias"]) {
                    Some(g) => (g, e),
                    None => continue,
                },
            };
            if !seen.insert(gguf.clone()) {
                return Err(ConvertError::Tensor {
                    name: gguf,
                    problem: "duplicated tensor name".into(),
                });
            }
            let shape = expr.shape();
            let row = shape.last().copied().unwrap_or(1);
            let ty = choose(
                ctx.outtype,
                forced(p, &name, &gguf),
                &gguf,
                shape.len(),
                row,
                bid,
            );
            planned.push(Planned {
                name: gguf,
                expr,
                ty,
            });
        }
    }
    Ok(planned)
}

/// A default value of a tower's config class.
#[derive(Debug, Clone, Copy)]
enum ConfigValue {
    Int(i64),
    Float(f64),
    Text(&'static str),
    Bool(bool),
    Ints(&'static [i64]),
}

impl ConfigValue {
    fn to_json(self) -> Json {
        match self {
            ConfigValue::Int(v) => Json::from(v),
            ConfigValue::Float(v) => Json::from(v),
            ConfigValue::Text(v) => Json::from(v),
            ConfigValue::Bool(v) => Json::from(v),
            ConfigValue::Ints(v) => Json::from(v.to_vec()),
        }
    }
}

/// One row of [`TOWER_DEFAULTS`]: the tower config's `model_type`s and their defaults.
type TowerDefaults = (
    &'static [&'static str],
    &'static [(&'static str, ConfigValue)],
);

/// The transformers 5 defaults of the vision config classes, by the tower config's
/// `model_type`, for the keys the converter reads (the classes' own table, as the text
/// classes' `model_type` defaults are).
const TOWER_DEFAULTS: &[TowerDefaults] = {
    use ConfigValue::{Float, Int, Text};
    &[
        (
            &["siglip_vision_model"],
            &[
                ("hidden_size", Int(768)),
                ("intermediate_size", Int(3072)),
                ("num_hidden_layers", Int(12)),
                ("num_attention_heads", Int(12)),
                ("image_size", Int(224)),
                ("patch_size", Int(16)),
                ("layer_norm_eps", Float(1e-6)),
            ],
        ),
        (
            &["pixtral"],
            &[
                ("hidden_size", Int(1024)),
                ("intermediate_size", Int(4096)),
                ("num_hidden_layers", Int(24)),
                ("num_attention_heads", Int(16)),
                ("image_size", Int(1024)),
                ("patch_size", Int(16)),
                ("hidden_act", Text("gelu")),
            ],
        ),
        (
            &["idefics3_vision", "smolvlm_vision"],
            &[
                ("hidden_size", Int(1152)),
                ("intermediate_size", Int(3072)),
                ("num_hidden_layers", Int(12)),
                ("num_attention_heads", Int(16)),
                ("image_size", Int(224)),
                ("patch_size", Int(32)),
                ("layer_norm_eps", Float(1e-6)),
            ],
        ),
    ]
};

/// What AutoConfig fills into a tower's config that the converter reads (transformers 5
/// defaults of the tower config classes: the family files' tables, [`defaults`], and
/// [`TOWER_DEFAULTS`]), where config.json leaves it out.
fn defaults(ctx: &mut Ctx) {
    let audio_key = if ctx.hp.raw.get("whisper_config").is_some() {
        "whisper_config"
    } else {
        "audio_config"
    };
    if let Some(a) = ctx.audio.as_mut() {
        defaults::fill(&ctx.hp.raw, audio_key, a);
    }
    let Some(v) = ctx.vision.as_mut() else {
        return;
    };
    defaults::fill(&ctx.hp.raw, "vision_config", v);
    let mt = v.get("model_type").and_then(Json::as_str).unwrap_or("");
    let Some((_, d)) = TOWER_DEFAULTS.iter().find(|(types, _)| types.contains(&mt)) else {
        return;
    };
    for (k, value) in d.iter() {
        v.entry(k.to_string()).or_insert_with(|| value.to_json());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_not_text_classes_only() {
        let mut seen = std::collections::HashSet::new();
        for p in ALL {
            for n in p.hf_names {
                assert!(seen.insert(*n), "{n} twice");
                assert!(std::ptr::eq(lookup(n).unwrap(), *p));
            }
            assert!(p.vision || p.audio);
        }
    }

    #[test]
    fn type_rules() {
        let f16 = OutType::F16;
        assert_eq!(
            choose(f16, None, "v.blk.0.ln1.weight", 1, 16, Some(0)),
            GgmlType::F32
        );
        assert_eq!(
            choose(f16, None, "v.position_embd.weight", 2, 16, None),
            GgmlType::F32
        );
        assert_eq!(
            choose(f16, None, "v.blk.0.attn_q.weight", 2, 16, Some(0)),
            GgmlType::F16
        );
        let patch = Some(Force::F16IfF16);
        assert_eq!(
            choose(f16, patch, "v.patch_embd.weight", 4, 7, None),
            GgmlType::F16
        );
        assert_eq!(
            choose(OutType::Bf16, patch, "v.patch_embd.weight", 4, 7, None),
            GgmlType::F32
        );
        assert_eq!(
            choose(OutType::Q8_0, None, "v.blk.0.attn_q.weight", 2, 16, Some(0)),
            GgmlType::F16
        );
        assert_eq!(
            choose(OutType::Q8_0, None, "mm.1.weight", 2, 64, Some(1)),
            GgmlType::Q8_0
        );
        let inp = Some(Force::Type(GgmlType::F16));
        assert_eq!(
            choose(OutType::F32, inp, "mm.input_projection.weight", 2, 16, None),
            GgmlType::F16
        );
    }
}
