//! MiMo-V2.5's vision tower and audio encoder (`MiMoV2VisionAudioModel`, projector types
//! `mimovl` and `mimo_audio`), in one file.
//!
//! The vision tower (`visual.`) is Qwen2.5-VL's with grouped-query attention (the fused
//! `qkv` kept fused), attention sinks and per-block window kinds: the Conv3D patch
//! embedding is split into its two temporal halves, the rest maps through the table. The
//! LLM side of the audio path is in the checkpoint too: one code embedding per audio channel
//! (`speech_embeddings.{i}`, stacked into `mm.a.code_embd`), the input local transformer
//! and the projection MLP (`mm.a.mlp.1` / `mm.a.mlp.2`).
//!
//! The audio encoder itself is a model of its own in the sub-directory `audio_tokenizer/`:
//! its config.json is the audio config (`d_model`, `encoder_ffn_dim`,
//! `encoder_attention_heads` aliased to the base class's names) and its
//! `model.safetensors` the encoder, read in file order as `safetensors.torch.load_file`
//! gives it, the decoder and the RVQ's training buffers left out, the codebooks merged
//! into one zero-padded `[n_q, max_bins, dim]` table (`a.rvq.codebook`) after the rest.
//! Those tensors come before the checkpoint's. Codebooks, code embeddings and the encoder's
//! convolutions stay F32; the convolutions' biases gain a trailing axis.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::{Map, Value as Json};

use super::{Clip, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::hf::safetensors::{StDtype, StTensor};
use crate::ConvertError;

/// `MiMoV2ForCausalLM` (its `--mmproj` file).
pub const MIMO_VL: Projector = Projector {
    hf_names: &["MiMoV2ForCausalLM"],
    projector_type: "mimovl",
    vision: true,
    audio: true,
    default_configs: false,
    filter: |n| {
        ["visual.", "speech_embeddings.", "audio_encoder."]
            .iter()
            .any(|p| n.starts_with(p))
            .then(|| n.to_string())
    },
    force: &[
        (On::Gguf(CODEBOOK), Force::Type(GgmlType::F32)),
        (On::Gguf(CODE_EMBD), Force::Type(GgmlType::F32)),
        (On::HfWhere(encoder_conv_weight), Force::Type(GgmlType::F32)),
    ],
    prepare,
    hook: Some(hook),
    params,
};

/// The sub-directory holding the audio encoder.
const AUDIO_DIR: &str = "audio_tokenizer";
/// The one weight file the class loads from it.
const AUDIO_WEIGHTS: &str = "model.safetensors";
/// The merged RVQ codebooks.
const CODEBOOK: &str = "a.rvq.codebook.weight";
/// The merged code embeddings.
const CODE_EMBD: &str = "mm.a.code_embd.weight";
/// The prefix of a codebook's tensors in the audio encoder, and their suffixes.
const CODEBOOK_PREFIX: &str = "encoder.quantizer.vq.layers.";
/// The training-only RVQ buffers the class leaves out.
const RVQ_BUFFERS: &[&str] = &[
    "_codebook.cluster_size",
    "_codebook.embed_avg",
    "_codebook.inited",
];
/// The key of [`Ctx::derived`] holding the codebook sizes.
const CODEBOOK_SIZES: &str = "rvq_codebook_sizes";

/// The encoder's convolution weights (`encoder.conv*`, `encoder.down_sample_layer*`).
fn encoder_conv_weight(name: &str) -> bool {
    (name.contains("encoder.conv") || name.contains("encoder.down_sample_layer"))
        && name.ends_with(".weight")
}

/// Python's `int(v)` of a config value: an integer, a float truncated, or a decimal string.
fn py_int(v: &Json) -> Option<i64> {
    match v {
        Json::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.trunc() as i64)
        }),
        Json::String(s) => s.trim().parse().ok(),
        Json::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// Python's truthiness of a config value.
fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64() != Some(0.0),
        Json::String(s) => !s.is_empty(),
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}

/// `int(obj[key])` of a required key of `obj` (read from `file`).
fn int_key(
    ctx: &Ctx,
    obj: &Map<String, Json>,
    file: &str,
    key: &str,
    why: &str,
) -> Result<i64, ConvertError> {
    let path = ctx.dir.join(file);
    let v = obj
        .get(key)
        .ok_or_else(|| ConvertError::missing_key(&path, key, why))?;
    py_int(v).ok_or_else(|| ConvertError::wrong_type(&path, key, "an integer", v))
}

/// The class's `__init__`: the audio encoder's config and tensors from `audio_tokenizer/`,
/// then the vision config's defaults and required keys.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let sub = ctx
        .dir
        .sub_dir(AUDIO_DIR, "the MiMo projector's audio encoder")?;
    let config_path = sub.config_path();
    let mut cfg = match sub.config()? {
        Json::Object(m) => m.clone(),
        other => {
            return Err(ConvertError::wrong_type(
                &config_path,
                crate::hf::config::TOP_LEVEL,
                "an object",
                crate::hf::config::json_kind(other),
            ))
        }
    };
    // the base class's names of the sizes, aliased as the class does
    for (alias, key) in [
        ("hidden_size", "d_model"),
        ("intermediate_size", "encoder_ffn_dim"),
        ("num_attention_heads", "encoder_attention_heads"),
    ] {
        let v = cfg.get(key).cloned().ok_or_else(|| {
            ConvertError::missing_key(&config_path, key, "the MiMo audio encoder's size")
        })?;
        cfg.insert(alias.into(), v);
    }
    ctx.audio = Some(cfg);
    prepare_vision(ctx)?;
    let tensors = sub.safetensors(Some(AUDIO_WEIGHTS), "the MiMo audio encoder's weights")?;
    generate(ctx, tensors)
}

/// The vision config's defaults (image size 560, 32 heads, 28 blocks) and the keys the
/// class reads at once.
fn prepare_vision(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let v = ctx.vision.as_mut().expect("a vision projector");
    v.entry("image_size").or_insert(Json::from(560));
    let heads = v.get("num_heads").cloned().unwrap_or(Json::from(32));
    v.insert("num_attention_heads".into(), heads);
    let depth = v.get("depth").cloned().unwrap_or(Json::from(28));
    v.insert("num_hidden_layers".into(), depth);
    let v = ctx.vision.as_ref().expect("a vision projector");
    for key in ["num_heads", "spatial_merge_size"] {
        int_key(ctx, v, "config.json", key, "the MiMo vision tower")?;
    }
    for (key, default) in [
        ("num_key_value_heads", 8),
        ("qk_channels", 64),
        ("visual_token_window_size", -1),
    ] {
        let value = v.get(key).cloned().unwrap_or(Json::from(default));
        py_int(&value).ok_or_else(|| {
            ConvertError::wrong_type(ctx.dir.join("config.json"), key, "an integer", &value)
        })?;
    }
    Ok(())
}

/// `generate_extra_tensors`: the audio encoder's tensors in file order, without the
/// decoder and the RVQ's training buffers, then the codebooks merged.
fn generate(ctx: &mut Ctx, mut tensors: Vec<StTensor>) -> Result<(), ConvertError> {
    // `load_file` gives the tensors in the order of their data in the file.
    tensors.sort_by_key(|t| t.offset);
    let mut codebooks: std::collections::BTreeMap<u64, StTensor> = Default::default();
    for t in tensors {
        if t.name.starts_with("decoder.") || RVQ_BUFFERS.iter().any(|s| t.name.ends_with(s)) {
            continue;
        }
        let index = t
            .name
            .strip_prefix(CODEBOOK_PREFIX)
            .and_then(|r| r.strip_suffix("._codebook.embed"))
            .filter(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|i| i.parse::<u64>().ok());
        match index {
            Some(i) => {
                codebooks.insert(i, t);
            }
            None => ctx.generated.push((t.name.clone(), Expr::read(t))),
        }
    }
    let (merged, sizes) = merge_codebooks(ctx, codebooks)?;
    ctx.generated.push((CODEBOOK.to_string(), merged));
    ctx.derived.insert(CODEBOOK_SIZES.into(), Json::from(sizes));
    Ok(())
}

/// The codebooks `0..n` stacked, each padded with zero rows to the largest, in the first
/// one's type (the class's `new_zeros`), and their sizes.
fn merge_codebooks(
    ctx: &Ctx,
    codebooks: std::collections::BTreeMap<u64, StTensor>,
) -> Result<(Expr, Vec<u64>), ConvertError> {
    let bad = |problem: String| ConvertError::Tensor {
        name: CODEBOOK.to_string(),
        problem: format!(
            "{}: {problem}",
            ctx.dir.join(AUDIO_DIR).join(AUDIO_WEIGHTS).display()
        ),
    };
    let n = codebooks.len() as u64;
    let ordered: Vec<&StTensor> = (0..n)
        .map(|i| {
            codebooks
                .get(&i)
                .ok_or_else(|| bad(format!("RVQ codebook {i} of {n} is missing")))
        })
        .collect::<Result<_, _>>()?;
    let first = ordered
        .first()
        .ok_or_else(|| bad("no RVQ codebook (`…_codebook.embed`)".into()))?;
    let dim = match first.shape[..] {
        [_, d] => d,
        _ => return Err(bad(format!("codebook 0 of shape {:?}", first.shape))),
    };
    let sizes: Vec<u64> = ordered.iter().map(|t| t.shape[0]).collect();
    let max_bins = sizes.iter().copied().max().unwrap_or(0);
    let mut parts = Vec::with_capacity(ordered.len());
    for (i, t) in ordered.iter().enumerate() {
        if t.shape.len() != 2 || t.shape[1] != dim {
            return Err(bad(format!(
                "codebook {i} of shape {:?} does not fit [_, {dim}]",
                t.shape
            )));
        }
        // Assigning into the first codebook's type rounds a wider one; only widening
        // (or the same type) is exact here.
        if t.dtype != first.dtype && !widens(t.dtype, first.dtype) {
            return Err(bad(format!(
                "codebook {i} is {} and codebook 0 {}: the merge would round it",
                t.dtype.name(),
                first.dtype.name()
            )));
        }
        parts.push(Expr::read((*t).clone()).pad_rows(CODEBOOK, max_bins)?);
    }
    Ok((Expr::stack(CODEBOOK, parts)?, sizes))
}

/// Whether every value of `from` is exactly a value of `to`.
fn widens(from: StDtype, to: StDtype) -> bool {
    matches!(
        (from, to),
        (StDtype::F16 | StDtype::Bf16, StDtype::F32) | (StDtype::F32, StDtype::F64)
    )
}

/// The class's `modify_tensors`.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name == "visual.patch_embed.proj.weight" {
        return super::qwenvl::split_patch(&name, expr);
    }
    if name == CODEBOOK {
        // generated under its GGUF name, which maps to itself
        return Ok(vec![Out::Named(name, expr)]);
    }
    if let Some(i) = speech_channel(&name) {
        return code_embeddings(ctx, i, expr);
    }
    let expr = if name.contains("conv1.bias") || name.contains("conv2.bias") {
        // a trailing axis, so the bias broadcasts over `[n_frames, C_out, 1]`
        let mut shape = expr.shape().to_vec();
        shape.push(1);
        expr.reshape(&name, shape)?
    } else {
        expr
    };
    match name.as_str() {
        "audio_encoder.projection.mlp.0.weight" => {
            Ok(vec![Out::Named("mm.a.mlp.1.weight".into(), expr)])
        }
        "audio_encoder.projection.mlp.2.weight" => {
            Ok(vec![Out::Named("mm.a.mlp.2.weight".into(), expr)])
        }
        _ => Ok(vec![Out::Map(name, expr)]),
    }
}

/// The channel of a `speech_embeddings.{i}.weight` tensor.
fn speech_channel(name: &str) -> Option<u64> {
    let i = name
        .strip_prefix("speech_embeddings.")?
        .strip_suffix(".weight")?;
    if i.is_empty() || !i.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    i.parse().ok()
}

/// Holds channel `i`'s code embedding until `audio_config.audio_channels` of them are held,
/// then stacks channels `0..n` into `mm.a.code_embd`.
fn code_embeddings(ctx: &Ctx, i: u64, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    const KEY: &str = "speech_embeddings.";
    let audio_cfg = ctx
        .hp
        .raw
        .get("audio_config")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    let n = int_key(
        ctx,
        &audio_cfg,
        "config.json",
        "audio_channels",
        "the MiMo code embeddings",
    )?;
    let mut held = ctx.held.borrow_mut();
    held.insert(format!("{KEY}{i}"), expr);
    let count = held.keys().filter(|k| k.starts_with(KEY)).count() as i64;
    if count < n {
        return Ok(Vec::new());
    }
    let mut parts = Vec::new();
    for c in 0..n.max(0) {
        parts.push(
            held.remove(&format!("{KEY}{c}"))
                .ok_or_else(|| ConvertError::Tensor {
                    name: format!("speech_embeddings.{c}.weight"),
                    problem: format!("missing: the {n} audio channels' code embeddings are 0..{n}"),
                })?,
        );
    }
    Ok(vec![Out::Named(
        CODE_EMBD.into(),
        Expr::stack(CODE_EMBD, parts)?,
    )])
}

/// The class's `set_gguf_parameters` after the base keys.
fn params(c: &mut Clip) -> Result<(), ConvertError> {
    vision_params(c)?;
    audio_params(c)
}

fn vision_params(c: &mut Clip) -> Result<(), ConvertError> {
    let ctx = c.ctx;
    let v = ctx.vision.as_ref().expect("a vision projector");
    let int_or = |key: &str, default: i64| {
        v.get(key).and_then(py_int).unwrap_or(default) // checked in `prepare`
    };
    c.string(clip::vision::PROJECTOR_TYPE, "mimovl");
    c.bool(clip::USE_SILU, true);
    c.u32_json(
        clip::vision::HEAD_COUNT_KV,
        &Json::from(int_or("num_key_value_heads", 8)),
    )?;
    c.u32_json(
        clip::vision::SPATIAL_MERGE_SIZE,
        &Json::from(int_or("spatial_merge_size", 0)),
    )?;
    c.u32_json(
        clip::vision::WINDOW_SIZE,
        &Json::from(int_or("visual_token_window_size", -1)),
    )?;
    if let Some(kinds) = v.get("vit_window_attn_types").filter(|k| truthy(k)) {
        c.numbers(clip::vision::WA_PATTERN_MODE, kinds)?;
    }
    let eps = v.get("rms_norm_eps").cloned().unwrap_or(Json::from(1e-6));
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)?;
    for (key, pk) in [
        (clip::vision::IMAGE_MIN_PIXELS, "min_pixels"),
        (clip::vision::IMAGE_MAX_PIXELS, "max_pixels"),
    ] {
        let value = ctx.pixel_bound(pk)?;
        let n = py_int(value).ok_or_else(|| {
            ConvertError::wrong_type(
                ctx.dir.join("preprocessor_config.json"),
                pk,
                "an integer",
                value,
            )
        })?;
        c.u32_json(key, &Json::from(n))?;
    }
    Ok(())
}

fn audio_params(c: &mut Clip) -> Result<(), ConvertError> {
    let ctx = c.ctx;
    let a = ctx.audio.as_ref().expect("an audio projector");
    let sub = ctx.dir.join(AUDIO_DIR).join("config.json");
    let sub_file = format!("{AUDIO_DIR}/config.json");
    c.string(clip::audio::PROJECTOR_TYPE, "mimo_audio");
    let mels = a
        .get("n_mels")
        .ok_or_else(|| ConvertError::missing_key(&sub, "n_mels", "the MiMo audio encoder"))?;
    c.u32_json(clip::audio::NUM_MEL_BINS, mels)?;
    let eps = a.get("layer_norm_eps").cloned().unwrap_or(Json::from(1e-5));
    c.f32_json(clip::audio::LAYERNORM_EPS, &eps)?;
    let sizes = ctx
        .derived
        .get(CODEBOOK_SIZES)
        .cloned()
        .expect("set by `prepare`");
    let n_q = sizes.as_array().map_or(0, Vec::len) as u64;
    c.u32(clip::audio::RVQ_NUM_QUANTIZERS, n_q)?;
    c.numbers(clip::audio::RVQ_CODEBOOK_SIZE, &sizes)?;
    let n_layer = int_key(
        ctx,
        a,
        &sub_file,
        "encoder_layers",
        "the MiMo audio encoder",
    )?;
    c.numbers(
        clip::audio::WA_PATTERN_MODE,
        &Json::from(window_kinds(c.ctx, a, n_layer)?),
    )?;
    let window = a
        .get("encoder_attn_window_size")
        .and_then(|w| w.as_array()?.first())
        .ok_or_else(|| {
            ConvertError::missing_key(&sub, "encoder_attn_window_size", "the MiMo audio encoder")
        })?;
    let window = py_int(window).ok_or_else(|| {
        ConvertError::wrong_type(&sub, "encoder_attn_window_size", "integers", window)
    })?;
    c.u32_json(clip::audio::WINDOW_SIZE, &Json::from(window))?;
    let audio_cfg = ctx
        .hp
        .raw
        .get("audio_config")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    for (key, ck) in [
        (clip::audio::LOCAL_BLOCK_COUNT, "input_local_layers"),
        (clip::audio::LOCAL_GROUP_SIZE, "group_size"),
    ] {
        let n = int_key(
            ctx,
            &audio_cfg,
            "config.json",
            ck,
            "the MiMo audio connector",
        )?;
        c.u32_json(key, &Json::from(n))?;
    }
    Ok(())
}

/// Each audio block's attention kind: with `hybrid_attention` and `swa_per_block` over 1,
/// the last block of every `swa_per_block` is full (-1) and the others windowed (0); else
/// every block is full.
fn window_kinds(ctx: &Ctx, a: &Map<String, Json>, n_layer: i64) -> Result<Vec<i64>, ConvertError> {
    let path = ctx.dir.join(AUDIO_DIR).join("config.json");
    let per = match a.get("swa_per_block") {
        None => 1,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ConvertError::wrong_type(&path, "swa_per_block", "an integer", v))?,
    };
    let hybrid = a.get("hybrid_attention").is_some_and(truthy);
    Ok((0..n_layer.max(0))
        .map(|i| {
            if hybrid && per > 1 && i % per < per - 1 {
                0
            } else {
                -1
            }
        })
        .collect())
}
