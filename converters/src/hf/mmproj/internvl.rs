//! InternVL's InternViT tower and pixel-shuffle MLP projector (`InternVisionModel`, picked by
//! `vision_config.architectures[0]` of the remote-code `InternVLChatModel` checkpoints):
//! projector type `internvl`. The tower's names gain the `vision_tower.` level of the
//! projector table, the bare parameters (layer scales `ls1` / `ls2`, Intern-S1's
//! `lambda_1` / `lambda_2`, the position embedding) a `.weight` suffix, the fused `qkv` is
//! split into q, k, v, and the position embedding is always F32. Intern-S1's
//! `model.multi_modal_projector.*` is renamed to InternVL's `mlp1.*`.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::{Clip, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `InternVisionModel` (InternVL 2.5 / 3, Intern-S1's tower names).
pub const INTERNVL: Projector = Projector {
    hf_names: &["InternVisionModel"],
    projector_type: "internvl",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[(On::Gguf(".position_embd."), Force::Type(GgmlType::F32))],
    prepare,
    hook: Some(hook),
    params,
};

/// The tensors `filter_tensors` keeps: the tower and the projector.
const PREFIXES: &[&str] = &[
    "vision_model",
    "mlp",
    "model.vision_tower",
    "model.multi_modal_projector",
];

/// Intern-S1's projector under InternVL's names.
const S1_PROJECTOR: &[(&str, &str)] = &[
    ("model.multi_modal_projector.layer_norm.bias", "mlp1.0.bias"),
    (
        "model.multi_modal_projector.layer_norm.weight",
        "mlp1.0.weight",
    ),
    ("model.multi_modal_projector.linear_1.bias", "mlp1.1.bias"),
    (
        "model.multi_modal_projector.linear_1.weight",
        "mlp1.1.weight",
    ),
    ("model.multi_modal_projector.linear_2.bias", "mlp1.3.bias"),
    (
        "model.multi_modal_projector.linear_2.weight",
        "mlp1.3.weight",
    ),
];

fn filter(name: &str) -> Option<String> {
    if !PREFIXES.iter().any(|p| name.starts_with(p)) {
        return None;
    }
    let name = S1_PROJECTOR
        .iter()
        .find(|(from, _)| *from == name)
        .map_or(name, |(_, to)| to);
    let mut name = if name.starts_with("vision_model") {
        format!("vision_tower.{name}")
    } else {
        name.to_string()
    };
    let bare = [".ls", ".lambda_", "position_embedding"]
        .iter()
        .any(|s| name.contains(s));
    if bare && !name.ends_with(".weight") {
        name.push_str(".weight");
    }
    Some(name)
}

/// Lists for the image and patch sizes: their first value (`set_gguf_parameters`).
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let v = ctx.vision.as_mut().expect("a vision projector");
    for key in ["image_size", "patch_size"] {
        if let Some(Json::Array(items)) = v.get(key) {
            let first = items
                .first()
                .cloned()
                .ok_or_else(|| ConvertError::UnsupportedFeature {
                    arch: "InternVisionModel (--mmproj)".into(),
                    feature: format!("vision_config.{key} is an empty list"),
                })?;
            v.insert(key.into(), first);
        }
    }
    Ok(())
}

/// The fused `attn.qkv` (weight or bias) split by rows into q, k and v.
fn hook(_: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if !name.contains(".qkv.") {
        return Ok(vec![Out::Map(name, expr)]);
    }
    super::split_qkv(&name, expr, |p| {
        name.replace("attn.qkv", &format!("self_attn.{p}_proj"))
    })
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "internvl");
    let eps = c.vparam(&["layer_norm_eps"])?.clone();
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)?;
    match c.vparam(&["hidden_act"])?.as_str() {
        Some("silu") => c.bool(clip::USE_SILU, true),
        Some("gelu") => c.bool(clip::USE_GELU, true),
        _ => {
            let act = c.vparam(&["hidden_act"])?.to_string();
            return Err(c.ctx.unsupported(format!(
                "vision_config.hidden_act {act} (silu or gelu expected)"
            )));
        }
    }
    let global = &c.ctx.hp.raw;
    let ratio = global
        .get("downsample_ratio")
        .filter(|v| !v.is_null())
        .ok_or_else(|| c.ctx.missing("config", &["downsample_ratio"]))?;
    let ratio = ratio.as_f64().ok_or_else(|| {
        c.ctx
            .unsupported(format!("downsample_ratio {ratio}: expected a number"))
    })?;
    // int(1.0 / downsample_ratio): truncation toward zero.
    let factor = 1.0 / ratio;
    if !(0.0..4_294_967_296.0).contains(&factor) {
        return Err(c.ctx.unsupported(format!(
            "downsample_ratio {ratio}: 1 / ratio is not a UINT32 scale factor"
        )));
    }
    c.u32(clip::vision::PROJECTOR_SCALE_FACTOR, factor.trunc() as u64)?;
    // Older models have no min / max_dynamic_patch: written only when positive.
    for (key, cfg) in [
        (clip::vision::PREPROC_MIN_TILES, "min_dynamic_patch"),
        (clip::vision::PREPROC_MAX_TILES, "max_dynamic_patch"),
    ] {
        let v = global.get(cfg).cloned().unwrap_or(Json::from(0));
        let positive = match v.as_f64() {
            Some(x) => x > 0.0,
            None => return Err(c.ctx.unsupported(format!("{cfg} {v}: expected an integer"))),
        };
        if positive {
            c.u32_json(key, &v)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_names() {
        let f = |n: &str| filter(n);
        assert_eq!(
            f("vision_model.encoder.layers.3.ls1").unwrap(),
            "vision_tower.vision_model.encoder.layers.3.ls1.weight"
        );
        assert_eq!(
            f("vision_model.embeddings.position_embedding").unwrap(),
            "vision_tower.vision_model.embeddings.position_embedding.weight"
        );
        assert_eq!(
            f("vision_model.embeddings.class_embedding").unwrap(),
            "vision_tower.vision_model.embeddings.class_embedding"
        );
        assert_eq!(f("mlp1.3.weight").unwrap(), "mlp1.3.weight");
        assert!(f("language_model.model.norm.weight").is_none());
        // Intern-S1.
        assert_eq!(
            f("model.multi_modal_projector.linear_2.bias").unwrap(),
            "mlp1.3.bias"
        );
        assert_eq!(
            f("model.vision_tower.encoder.layer.0.lambda_1").unwrap(),
            "model.vision_tower.encoder.layer.0.lambda_1.weight"
        );
        assert_eq!(
            f("model.vision_tower.embeddings.position_embeddings").unwrap(),
            "model.vision_tower.embeddings.position_embeddings.weight"
        );
        let m = super::super::names::ProjectorMap::new(4);
        for (hf, gguf) in [
            ("mlp1.3.weight", "mm.model.mlp.3.weight"),
            (
                "model.vision_tower.encoder.layer.1.lambda_2.weight",
                "v.blk.1.ls2.weight",
            ),
            (
                "model.vision_tower.embeddings.position_embeddings.weight",
                "v.position_embd.weight",
            ),
            ("model.vision_tower.embeddings.cls_token", "v.class_embd"),
            (
                "model.vision_tower.encoder.layer.0.attention.projection_layer.bias",
                "v.blk.0.attn_out.bias",
            ),
            (
                "model.vision_tower.encoder.layer.2.layernorm_after.weight",
                "v.blk.2.ln2.weight",
            ),
        ] {
            assert_eq!(m.get(hf).as_deref(), Some(gguf), "{hf}");
        }
    }
}
