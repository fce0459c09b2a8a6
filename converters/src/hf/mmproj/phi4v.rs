//! Phi-4-reasoning-vision's vision tower (`Phi4ForCausalLMV`, projector type `phi4`;
//! `Phi4VisionMmprojModel` in `conversion/phi.py`).
//!
//! The checkpoint holds a SigLIP2 NaFlex tower under `model.vision_tower.vision_tower.`
//! (read as `vision_tower.`) and an `mlp2x_gelu` projector (`model.mm_projector.0` / `.2`,
//! or `mm_projector.` without the `model.` prefix) beside the Phi-3 text model. The model
//! reads the tower's second-to-last hidden state, so the file keeps one block fewer than the
//! tower has (the last block, the post-LayerNorm and the attention-pooling head are left
//! out) and says so in its block count; a tower of fewer than two blocks is refused.
//!
//! The image processor's config gives the patch size (required; it replaces the tower's)
//! and the patch-count bounds (`min_num_patches` / `max_num_patches`, from the image
//! processor, else from config.json's root; both required), written as pixel bounds. The
//! image size is the side of the square position table (its rows must be a square number)
//! times the patch size. The linear patch embedding over `(ky, kx, c)` patches is written
//! as the convolution weight `[out, c, ky, kx]`.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{Clip, Ctx, Out, Projector, BLOCK_KEYS};
use crate::hf::expr::Expr;
use crate::hf::names::block_id;
use crate::ConvertError;

/// `Phi4ForCausalLMV`.
pub const PHI4V: Projector = Projector {
    hf_names: &["Phi4ForCausalLMV"],
    projector_type: "phi4",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[],
    prepare,
    hook: Some(hook),
    params,
};

/// The HF name of the position table (a suffix).
const POSITION_TABLE: &str = "vision_model.embeddings.position_embedding.weight";
/// The HF name of the linear patch embedding (a suffix).
const PATCH_EMBEDDING: &str = "vision_model.embeddings.patch_embedding.weight";
/// The projector's prefixes, with and without the text model's `model.`.
const PROJECTOR_PREFIXES: [&str; 2] = ["model.mm_projector.", "mm_projector."];

/// The tower (renamed to `vision_tower.`) and the projector, without the tower's pooling
/// head and post-LayerNorm.
fn filter(name: &str) -> Option<String> {
    let name = name.replace("model.vision_tower.vision_tower.", "vision_tower.");
    let kept =
        name.starts_with("vision_tower.") || PROJECTOR_PREFIXES.iter().any(|p| name.starts_with(p));
    if !kept
        || name.contains(".vision_model.head.")
        || name.contains(".vision_model.post_layernorm.")
    {
        return None;
    }
    Some(name)
}

/// A config value the class reads with Python's `int()`: an integer, a float truncated, a
/// boolean as 0 / 1, or a string of decimal digits (with a sign, surrounding blanks and
/// underscores between digits); `None` for any other value.
fn python_int(v: &Json) -> Option<i64> {
    match v {
        Json::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.trunc() as i64)
        }),
        Json::Bool(b) => Some(i64::from(*b)),
        Json::String(s) => {
            let t = s.trim();
            let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
            let well_formed = !digits.is_empty()
                && digits
                    .split('_')
                    .all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()));
            if !well_formed {
                return None;
            }
            t.replace('_', "").parse().ok()
        }
        _ => None,
    }
}

/// The tower's block count, lowered by one (so it is also the index of the block left
/// out); the patch size and the image size; the pixel bounds checked.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    // The tower's config is config.json's as written: neither the hub's model type nor
    // Phi3Config types `vision_config`, so no class defaults fill it in.
    if let Some(v) = ctx.hp.raw.get("vision_config").and_then(Json::as_object) {
        ctx.vision = Some(v.clone());
    }
    let path = ctx.hp.path.clone();
    let class = ctx.class.clone();
    let v = ctx.vision.as_mut().expect("a vision projector");
    let (key, total) = BLOCK_KEYS
        .iter()
        .find_map(|k| v.get(*k).map(|n| (*k, n)))
        .ok_or_else(|| {
            ConvertError::format(
                &path,
                None,
                format!(
                    "vision_config: could not find any of {BLOCK_KEYS:?} (needed by the \
                     {class} projector)"
                ),
            )
        })?;
    // The base class builds its name table for this many blocks first: an integer.
    let total = total.as_i64().ok_or_else(|| {
        ConvertError::wrong_type(&path, format!("vision_config.{key}"), "an integer", total)
    })?;
    if total < 2 {
        return Err(ConvertError::out_of_range(
            &path,
            format!("vision_config.{key}"),
            total,
            "at least 2: the file keeps every block of the tower but the last",
        ));
    }
    v.insert(key.to_string(), Json::from(total - 1));

    let pre_path = ctx.dir.join("preprocessor_config.json");
    let patch = ctx
        .pre
        .get("patch_size")
        .filter(|p| !p.is_null())
        .cloned()
        .ok_or_else(|| ConvertError::MissingKey {
            path: pre_path.clone(),
            key: "patch_size".into(),
            why: format!("the {class} projector reads the image processor's patch size"),
        })?;
    let v = ctx.vision.as_mut().expect("a vision projector");
    v.insert("patch_size".into(), patch.clone());

    let (name, shape) = ctx
        .tensors
        .iter()
        .find(|(n, _)| n.ends_with(POSITION_TABLE))
        .ok_or_else(|| ConvertError::Tensor {
            name: POSITION_TABLE.into(),
            problem: format!("the {class} projector needs the tower's position table"),
        })?;
    let rows = shape.first().copied().unwrap_or(0);
    let side = rows.isqrt();
    if side * side != rows {
        return Err(ConvertError::Tensor {
            name: name.clone(),
            problem: format!("position table of shape {shape:?}: its rows are not a square"),
        });
    }
    let patch = patch_size(ctx)?;
    let v = ctx.vision.as_mut().expect("a vision projector");
    v.insert("image_size".into(), Json::from(side * patch));
    pixel_bounds(ctx).map(|_| ())
}

/// The image processor's patch size (set as the tower's by [`prepare`]): an integer (the
/// sizes computed from it are written as UINT32, which a float is not).
fn patch_size(ctx: &Ctx) -> Result<u64, ConvertError> {
    let v = &ctx.tower()["patch_size"];
    v.as_u64().ok_or_else(|| {
        ConvertError::wrong_type(
            ctx.dir.join("preprocessor_config.json"),
            "patch_size",
            "a non-negative integer",
            v,
        )
    })
}

/// The pixel bounds: `min_num_patches` and `max_num_patches` (the image processor's, else
/// config.json's root; a null one is not replaced), each times the patch area.
fn pixel_bounds(ctx: &Ctx) -> Result<[Json; 2], ConvertError> {
    let area = i64::try_from(patch_size(ctx)?.saturating_pow(2)).unwrap_or(i64::MAX);
    let pre_path = ctx.dir.join("preprocessor_config.json");
    let bound = |key: &str| {
        let n = match ctx.pre.get(key) {
            Some(n) => n.clone(),
            None => ctx.hp.raw.get(key).cloned().unwrap_or(Json::Null),
        };
        if n.is_null() {
            return Err(ConvertError::MissingKey {
                path: pre_path.clone(),
                key: key.into(),
                why: format!(
                    "the {} projector needs min_num_patches and max_num_patches (the image \
                     processor's, else config.json's)",
                    ctx.class
                ),
            });
        }
        let count = python_int(&n)
            .ok_or_else(|| ConvertError::wrong_type(&pre_path, key, "an integer", &n))?;
        count
            .checked_mul(area)
            .map(Json::from)
            .ok_or_else(|| ConvertError::out_of_range(&pre_path, key, count, "a pixel count"))
    };
    Ok([bound("min_num_patches")?, bound("max_num_patches")?])
}

/// Drops the tower's last block; reorders the patch embedding; names the projector's two
/// linear layers `mm.0` / `mm.2`.
fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.starts_with("vision_tower.") {
        // The block count is already one lower: the index of the last block.
        let last = super::find(ctx.tower(), BLOCK_KEYS)
            .and_then(crate::hf::config::json_u64)
            .unwrap_or(u64::MAX);
        if block_id(&name) == Some(last) {
            return Ok(vec![]);
        }
        let expr = if name.ends_with(PATCH_EMBEDDING) {
            patch_embedding(ctx, &name, expr)?
        } else {
            expr
        };
        return Ok(vec![Out::Map(name, expr)]);
    }
    let Some(local) = PROJECTOR_PREFIXES
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .map(|rest| rest.replace("mm_projector.", ""))
    else {
        return Ok(vec![]);
    };
    let idx = match local.split('.').next() {
        Some(i @ ("0" | "2")) if local.len() > 1 => i.to_string(),
        _ => return Ok(vec![]),
    };
    let suffix = if local.ends_with(".bias") {
        ".bias"
    } else {
        ".weight"
    };
    Ok(vec![Out::Named(format!("mm.{idx}{suffix}"), expr)])
}

/// `[out, ky * kx * c]` viewed as `[out, ky, kx, c]` and permuted to `[out, c, ky, kx]`.
fn patch_embedding(ctx: &Ctx, name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let shape = expr.shape().to_vec();
    if shape.len() != 2 {
        return Err(ConvertError::Tensor {
            name: name.into(),
            problem: format!("patch embedding of shape {shape:?}: expected a matrix"),
        });
    }
    let patch = patch_size(ctx)?;
    let area = patch * patch;
    if area == 0 || !shape[1].is_multiple_of(area) {
        return Err(ConvertError::Tensor {
            name: name.into(),
            problem: format!(
                "patch embedding input width {} is not divisible by the patch area {area}",
                shape[1]
            ),
        });
    }
    let channels = shape[1] / area;
    expr.reshape(name, vec![shape[0], area, channels])?
        .transpose_last2(name)?
        .reshape(name, vec![shape[0], channels, patch, patch])
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "phi4");
    let [min, max] = pixel_bounds(c.ctx)?;
    c.u32_json(clip::vision::IMAGE_MIN_PIXELS, &min)?;
    c.u32_json(clip::vision::IMAGE_MAX_PIXELS, &max)?;
    c.bool(clip::USE_GELU, true);
    c.vision_eps(1e-6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tower_and_projector_are_kept_without_head_and_post_norm() {
        let t = "model.vision_tower.vision_tower.vision_model.";
        assert_eq!(
            filter(&format!("{t}encoder.layers.0.mlp.fc1.weight")).as_deref(),
            Some("vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight")
        );
        assert!(filter(&format!("{t}head.probe")).is_none());
        assert!(filter(&format!("{t}post_layernorm.weight")).is_none());
        assert!(filter("model.layers.0.mlp.down_proj.weight").is_none());
        assert!(filter("model.mm_projector.0.weight").is_some());
        assert!(filter("mm_projector.2.bias").is_some());
    }

    #[test]
    fn python_int_truncates_floats() {
        assert_eq!(python_int(&Json::from(7.9)), Some(7));
        assert_eq!(python_int(&Json::from(-7.9)), Some(-7));
        assert_eq!(python_int(&Json::from(true)), Some(1));
        assert_eq!(python_int(&Json::from(" -1_000 ")), Some(-1000));
        assert_eq!(python_int(&Json::from("7.5")), None);
        assert_eq!(python_int(&Json::from("_7")), None);
        assert_eq!(python_int(&Json::Null), None);
    }
}
