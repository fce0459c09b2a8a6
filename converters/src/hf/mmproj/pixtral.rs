//! LLaVA-style checkpoints with a Pixtral tower (`LlavaVisionModel`):
//! `LlavaForConditionalGeneration` (Pixtral 12B) and `Mistral3ForConditionalGeneration`
//! (Mistral Small 3.1, with a patch merger). Projector type `pixtral`; the tower's q/k
//! rows are permuted as Llama's are; the `[IMG_BREAK]` token's embedding row is kept when
//! the checkpoint has a token embedding the base class does not drop. Only Pixtral towers
//! are converted, as in the reference: a CLIP or SigLIP tower is refused.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{Clip, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `LlavaForConditionalGeneration`, `Mistral3ForConditionalGeneration`.
pub const LLAVA_PIXTRAL: Projector = Projector {
    hf_names: &[
        "LlavaForConditionalGeneration",
        "Mistral3ForConditionalGeneration",
    ],
    projector_type: "pixtral",
    vision: true,
    audio: false,
    default_configs: false,
    filter: |n| Some(n.to_string()),
    force: &[],
    prepare,
    hook: Some(hook),
    params,
};

const IMG_BREAK: &str = "[IMG_BREAK]";

/// The Pixtral tower's defaults and the `[IMG_BREAK]` token id.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    pixtral_tower(ctx)?;
    ctx.img_break = token_id(ctx, IMG_BREAK)?;
    Ok(())
}

/// Refuses a tower that is not Pixtral's and fills the epsilon its modeling code
/// hard-codes (`LlavaVisionModel.__init__` without the break token).
pub(super) fn pixtral_tower(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let v = ctx.vision.as_mut().expect("a vision projector");
    let mt = v
        .get("model_type")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string();
    if mt != "pixtral" {
        return Err(ctx.unsupported(format!(
            "vision tower model_type {mt:?}: only Pixtral towers are converted (the \
             reference's LlavaVisionModel refuses other towers, e.g. CLIP)"
        )));
    }
    // modeling_pixtral.py hard-codes the epsilon.
    v.entry("layer_norm_eps").or_insert(Json::from(1e-5));
    Ok(())
}

/// A token's id: tokenizer_config.json's `added_tokens_decoder`, then tokenizer.json's
/// `added_tokens`.
fn token_id(ctx: &Ctx, token: &str) -> Result<i64, ConvertError> {
    let tc = ctx.dir.tokenizer_config()?.ok_or_else(|| {
        ConvertError::io(
            ctx.dir.tokenizer_config_path(),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    })?;
    if let Some(m) = tc.get("added_tokens_decoder").and_then(Json::as_object) {
        for (id, t) in m {
            if t.get("content").and_then(Json::as_str) == Some(token) {
                return id.parse().map_err(|_| {
                    ConvertError::format(
                        ctx.dir.tokenizer_config_path(),
                        None,
                        format!("added_tokens_decoder: {id:?} is not a token id"),
                    )
                });
            }
        }
    }
    let tj_path = ctx.dir.tokenizer_json_path();
    let tj = ctx.dir.tokenizer_json()?.ok_or_else(|| {
        ConvertError::io(&tj_path, std::io::Error::from(std::io::ErrorKind::NotFound))
    })?;
    for t in tj
        .get("added_tokens")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        if t.get("content").and_then(Json::as_str) == Some(token) {
            return t.get("id").and_then(Json::as_i64).ok_or_else(|| {
                ConvertError::format(&tj_path, None, format!("{token}: no integer id"))
            });
        }
    }
    Err(ConvertError::format(
        &tj_path,
        None,
        format!("token {token:?} not found in tokenizer_config.json or tokenizer.json (the {} projector needs it)", ctx.class),
    ))
}

const TOWER: &[&str] = &[
    "multi_modal_projector.",
    "vision_tower.",
    "vision_encoder.",
    "vision_language_adapter.",
    "patch_merger.",
    "pre_mm_projector_norm",
];

fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if TOWER.iter().any(|p| name.starts_with(p)) {
        let is = |proj: &str| {
            name.ends_with(&format!("{proj}.weight")) || name.ends_with(&format!("{proj}.bias"))
        };
        let mut expr = expr;
        if is("q_proj") || is("k_proj") {
            let n_head = super::json_u64(
                ctx.tower()
                    .get("num_attention_heads")
                    .ok_or_else(|| ctx.missing("vision_config", &["num_attention_heads"]))?,
            )
            .ok_or_else(|| ctx.missing("vision_config", &["num_attention_heads"]))?;
            expr = expr.permute_heads(&name, n_head)?;
        }
        return Ok(vec![Out::Map(name, expr)]);
    }
    if ctx.img_break > 0 && name.contains("embed_tokens.weight") {
        let row = ctx.img_break as u64;
        let shape = expr.shape().to_vec();
        if shape.len() != 2 || row >= shape[0] {
            return Err(ConvertError::Tensor {
                name,
                problem: format!("no row {row} ({IMG_BREAK}) in an embedding of shape {shape:?}"),
            });
        }
        let e = expr
            .narrow(&name, 0, row, 1)?
            .reshape(&name, vec![shape[1]])?;
        return Ok(vec![Out::Map("v.token_embd.img_break".to_string(), e)]);
    }
    Ok(Vec::new())
}

pub(super) fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "pixtral");
    let eps = c.vparam(&["layer_norm_eps"])?.clone();
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)?;
    match c.vparam(&["hidden_act"])?.as_str() {
        Some("silu") => c.bool(clip::USE_SILU, true),
        Some("gelu") => c.bool(clip::USE_GELU, true),
        other => {
            return Err(c
                .ctx
                .unsupported(format!("vision hidden_act {other:?} (only silu and gelu)")))
        }
    }
    if let Some(m) = c.ctx.hp.raw.get("spatial_merge_size").cloned() {
        c.u32_json(clip::vision::SPATIAL_MERGE_SIZE, &m)?;
    }
    Ok(())
}
