//! DeepSeek-OCR's projectors (`DeepseekOCRForCausalLM` → `deepseekocr`,
//! `UnlimitedOCRForCausalLM` → `deepseekocr` with more tiles, `DeepseekOCR2ForCausalLM` →
//! `deepseekocr2`).
//!
//! The checkpoints hold a SAM tower (`model.sam_model.`) beside a CLIP tower
//! (`model.vision_model.`, DeepSeek-OCR) or a Qwen2 encoder (`model.qwen2_model.`,
//! DeepSeek-OCR-2), the linear projector and the learned newline and view-separator rows. The
//! vision config names its towers' sizes under `width` (`sam_vit_b`, `clip-l-14-224`,
//! `qwen2-0-5b`): the class lifts the SAM sizes to `sam`, lays the CLIP sizes over the config
//! (so `width` becomes the CLIP width and `heads` its head count, with an FFN width of four
//! times the head count), and for DeepSeek-OCR-2 takes the width from the Qwen2 encoder's
//! `dim`, with 24 blocks, patch 16, FFN 4864 and 14 heads (2 KV heads) where the config
//! leaves them out. The text model's tensors are dropped; the SAM position and relative
//! position tables get a `.weight` suffix; the view separator gains a leading axis; the
//! embeddings, position tables, neck and downsampling convolutions stay F32.

use ggufkit::gguf::keys::clip;
use serde_json::{Map, Value as Json};

use super::{Clip, Ctx, Force, On, Out, Projector};
use crate::hf::config::json_u64;
use crate::hf::expr::Expr;
use crate::ConvertError;
use ggufkit::quantizers::GgmlType;

/// `DeepseekOCRForCausalLM`.
pub const DEEPSEEK_OCR: Projector = Projector {
    hf_names: &["DeepseekOCRForCausalLM"],
    projector_type: "deepseekocr",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: FORCE,
    prepare,
    hook: Some(hook),
    params: params_ocr,
};

/// `UnlimitedOCRForCausalLM`: DeepSeek-OCR's projector with up to 32 tiles.
pub const UNLIMITED_OCR: Projector = Projector {
    hf_names: &["UnlimitedOCRForCausalLM"],
    params: params_unlimited,
    ..DEEPSEEK_OCR
};

/// `DeepseekOCR2ForCausalLM`: the SAM tower and a Qwen2 encoder.
pub const DEEPSEEK_OCR2: Projector = Projector {
    hf_names: &["DeepseekOCR2ForCausalLM"],
    projector_type: "deepseekocr2",
    prepare: prepare_ocr2,
    params: params_ocr2,
    ..DEEPSEEK_OCR
};

/// The HF name parts whose tensors are always F32 (`tensor_force_quant`).
const FORCE: &[(On, Force)] = &[(On::HfWhere(kept_f32), Force::Type(GgmlType::F32))];

fn kept_f32(name: &str) -> bool {
    [
        ".embeddings.",
        "pos_embed",
        ".rel_pos_h",
        ".rel_pos_w",
        ".neck.",
        ".net_",
    ]
    .iter()
    .any(|p| name.contains(p))
}

/// The text model's prefixes, dropped.
const TEXT_PREFIXES: &[&str] = &[
    "lm_head.",
    "model.embed_tokens.",
    "model.layers.",
    "model.norm.",
];

fn filter(name: &str) -> Option<String> {
    if TEXT_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return None;
    }
    if ["pos_embed", "rel_pos_h", "rel_pos_w"]
        .iter()
        .any(|s| name.ends_with(s))
    {
        return Some(format!("{name}.weight"));
    }
    Some(name.to_string())
}

fn hook(_ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.ends_with("view_seperator") {
        let mut shape = vec![1];
        shape.extend_from_slice(expr.shape());
        let expr = expr.reshape(&name, shape)?;
        return Ok(vec![Out::Map(name, expr)]);
    }
    Ok(vec![Out::Map(name, expr)])
}

/// The error for a vision config the class cannot read.
fn bad(ctx: &Ctx, what: &str) -> ConvertError {
    ConvertError::format(
        &ctx.hp.path,
        None,
        format!(
            "vision_config: {what} (the {} projector reads its towers' sizes from \
             vision_config.width)",
            ctx.class
        ),
    )
}

/// `get_vision_config` of DeepSeek-OCR: the SAM sizes lifted to `sam`, the CLIP sizes laid
/// over the config, an integer `width` as the width, `heads` as the head count with an FFN
/// of four times it.
fn lift(ctx: &Ctx) -> Result<Map<String, Json>, ConvertError> {
    let mut v = ctx.vision.clone().expect("a vision projector");
    let width = v
        .get("width")
        .and_then(Json::as_object)
        .cloned()
        .ok_or_else(|| bad(ctx, "width is not an object naming the towers"))?;
    let sam = width
        .get("sam_vit_b")
        .cloned()
        .ok_or_else(|| bad(ctx, "width has no sam_vit_b"))?;
    v.insert("sam".into(), sam);
    match width.get("clip-l-14-224") {
        None | Some(Json::Null) => {}
        Some(Json::Object(c)) => {
            for (k, x) in c {
                v.insert(k.clone(), x.clone());
            }
        }
        Some(_) => return Err(bad(ctx, "width.clip-l-14-224 is not an object")),
    }
    if let Some(w) = v.get("width").filter(|w| w.is_i64() || w.is_u64()).cloned() {
        v.insert("hidden_size".into(), w);
    }
    match v.get("heads").cloned() {
        None | Some(Json::Null) => {}
        Some(h) => {
            let n = json_u64(&h).ok_or_else(|| bad(ctx, "heads is not an integer"))?;
            v.insert("num_heads".into(), h);
            v.insert("intermediate_size".into(), Json::from(n * 4));
        }
    }
    Ok(v)
}

fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    ctx.vision = Some(lift(ctx)?);
    Ok(())
}

/// The Qwen2 encoder's sizes the reference fills in when the config leaves them out (or
/// null).
const OCR2_DEFAULTS: &[(&str, u64)] = &[
    ("patch_size", 16),
    ("intermediate_size", 4864),
    ("num_attention_heads", 14),
];

/// The Qwen2 encoder's KV heads (written whatever the config says).
const OCR2_KV_HEADS: u64 = 2;

/// The Qwen2 encoder's block count when the config names none.
const OCR2_LAYERS: u64 = 24;

fn prepare_ocr2(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let mut v = lift(ctx)?;
    let dim = v
        .get("width")
        .and_then(|w| w.get("qwen2-0-5b"))
        .and_then(|q| q.get("dim"))
        .cloned()
        .ok_or_else(|| bad(ctx, "width.qwen2-0-5b.dim is missing"))?;
    v.insert("hidden_size".into(), dim);
    if v.get("layers").is_none_or(Json::is_null) {
        v.insert("layers".into(), Json::from(OCR2_LAYERS));
    }
    for (k, d) in OCR2_DEFAULTS {
        if v.get(*k).is_none_or(Json::is_null) {
            v.insert(k.to_string(), Json::from(*d));
        }
    }
    ctx.vision = Some(v);
    Ok(())
}

/// The default image token count (`image_seq_length`).
const IMAGE_SEQ_LENGTH: f64 = 256.0;

/// The projector scale factor llama.cpp assumes when the file has none.
const DEFAULT_SCALE_FACTOR: u64 = 4;

/// A positive integer of the tower's config.
fn size(c: &Clip, key: &str) -> Result<u64, ConvertError> {
    let v = c.vparam(&[key])?;
    json_u64(v).ok_or_else(|| {
        ConvertError::wrong_type(
            &c.ctx.hp.path,
            format!("vision_config.{key}"),
            "an integer",
            v,
        )
    })
}

/// `DeepseekOCRVisionModel.set_gguf_parameters` with the class's tile limit.
fn params(c: &mut Clip, projector_type: &str, max_tiles: u64) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, projector_type);
    c.vision_eps(1e-6)?;
    c.bool(clip::USE_GELU, true);
    let seq = match c.ctx.pre.get("image_seq_length") {
        None => IMAGE_SEQ_LENGTH,
        Some(v) => v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(
                c.ctx.dir.join("preprocessor_config.json"),
                "image_seq_length",
                "a number",
                v,
            )
        })?,
    };
    // int(image_seq_length ** 0.5)
    let per_side = seq.sqrt().trunc() as u64;
    let image = size(c, "image_size")?;
    let patch = size(c, "patch_size")?;
    if patch == 0 || per_side == 0 {
        return Err(ConvertError::format(
            &c.ctx.hp.path,
            None,
            "a zero patch size or image token count (division by zero in the reference)",
        ));
    }
    let scale = (image / patch) / per_side;
    if scale > 0 && scale != DEFAULT_SCALE_FACTOR {
        c.u32(clip::vision::PROJECTOR_SCALE_FACTOR, scale)?;
    }
    let window = c
        .ctx
        .tower()
        .get("window_size")
        .cloned()
        .unwrap_or(Json::from(14));
    c.u32_json(clip::vision::WINDOW_SIZE, &window)?;
    c.u32(clip::vision::PREPROC_MIN_TILES, 2)?;
    c.u32(clip::vision::PREPROC_MAX_TILES, max_tiles)?;
    let sam = c.vparam(&["sam"])?.clone();
    for (key, k) in [
        (clip::vision::sam::BLOCK_COUNT, "layers"),
        (clip::vision::sam::EMBEDDING_LENGTH, "width"),
        (clip::vision::sam::HEAD_COUNT, "heads"),
    ] {
        let v = sam
            .get(k)
            .cloned()
            .ok_or_else(|| c.ctx.missing("vision_config.width.sam_vit_b", &[k]))?;
        c.u32_json(key, &v)?;
    }
    Ok(())
}

fn params_ocr(c: &mut Clip) -> Result<(), ConvertError> {
    params(c, "deepseekocr", 9)
}

fn params_unlimited(c: &mut Clip) -> Result<(), ConvertError> {
    params(c, "deepseekocr", 32)
}

fn params_ocr2(c: &mut Clip) -> Result<(), ConvertError> {
    params(c, "deepseekocr2", 6)?;
    c.u32(clip::vision::HEAD_COUNT_KV, OCR2_KV_HEADS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_model_is_dropped_and_tables_get_a_suffix() {
        assert!(filter("model.layers.0.mlp.up_proj.weight").is_none());
        assert!(filter("lm_head.weight").is_none());
        assert_eq!(
            filter("model.sam_model.blocks.1.attn.rel_pos_h").as_deref(),
            Some("model.sam_model.blocks.1.attn.rel_pos_h.weight")
        );
        assert_eq!(
            filter("model.sam_model.pos_embed").as_deref(),
            Some("model.sam_model.pos_embed.weight")
        );
        assert_eq!(
            filter("model.view_seperator").as_deref(),
            Some("model.view_seperator")
        );
    }

    #[test]
    fn embeddings_and_convolutions_stay_f32() {
        assert!(kept_f32("model.sam_model.neck.2.weight"));
        assert!(kept_f32("model.sam_model.net_3.weight"));
        assert!(kept_f32(
            "model.vision_model.embeddings.patch_embedding.weight"
        ));
        assert!(!kept_f32("model.sam_model.patch_embed.proj.weight"));
        assert!(!kept_f32("model.qwen2_model.query_768.weight"));
    }
}
