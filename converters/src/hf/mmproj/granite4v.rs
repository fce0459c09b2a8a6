//! Granite 4 Vision (`Granite4VisionForConditionalGeneration`, projector type
//! `granite4_vision`): a SigLIP tower (`model.vision_tower.vision_model.`) and several
//! window-QFormer downsamplers, each feeding the text model at one layer.
//!
//! The downsamplers come in two kinds: *layerwise* (deepstack) ones, each reading one tower
//! layer (`deepstack_layer_map`: `[vision_layer, text_layer]` pairs), and *spatial* ones,
//! all reading `spatial_vision_layer` at different sampling offsets (`spatial_target_layers`:
//! one text layer each). Both lists are normalized into one list of projectors (negative
//! layers count from the end; the pairs sorted first, then the whole list ordered by text
//! layer, stably), and each projector's tensors are written as `v.proj_blk.<index>` with its
//! index in that list: the checkpoint's `model.<kind>_projectors.<n>.` tensors are renamed to
//! the projector's index before the name table maps them. A QFormer tensor's own layer
//! number is replaced by the projector's index too (the released checkpoints have one
//! QFormer layer per projector).
//!
//! The file records which tower layer each projector reads (`clip.vision.feature_layer`),
//! the spatial offset of each (-1 for a layerwise one), the QFormer's query and window sides
//! (`downsample_rate`, `"query/window"`) and the image grid pinpoints as `(width, height)`.

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::{Clip, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Granite4VisionForConditionalGeneration`.
pub const GRANITE4_VISION: Projector = Projector {
    hf_names: &["Granite4VisionForConditionalGeneration"],
    projector_type: "granite4_vision",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[],
    prepare,
    hook: Some(hook),
    params,
};

/// The text layers of the spatial projectors when the config names none (the config
/// class's default).
const DEFAULT_SPATIAL_TARGETS: &[i64] = &[12, 15, 18, 21];

/// The text model's layer count when `text_config` names none (the text config class's
/// default).
const DEFAULT_TEXT_LAYERS: i64 = 32;

/// The image grid pinpoints (`[height, width]` pairs) when the config names none.
const DEFAULT_PINPOINTS: &[[i64; 2]] =
    &[[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]];

/// The preprocessor's image size when the tower's config names none.
const DEFAULT_IMAGE_SIZE: u64 = 384;

/// The two kinds of downsampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A deepstack projector reading one tower layer.
    Layerwise,
    /// A projector sampling `spatial_vision_layer` at an offset.
    Spatial,
}

impl Kind {
    /// The checkpoint's module name of this kind's projectors.
    fn module(self) -> &'static str {
        match self {
            Kind::Layerwise => "layerwise",
            Kind::Spatial => "spatial",
        }
    }
}

/// One projector of the normalized list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proj {
    /// The tower layer it reads.
    vision_layer: i64,
    /// The text layer it feeds.
    text_layer: i64,
    /// Its kind.
    kind: Kind,
    /// Its index among the projectors of its kind (the checkpoint's number).
    index: i64,
}

fn filter(name: &str) -> Option<String> {
    if name.contains("vision_model.head") || name.starts_with("lm_head") {
        return None;
    }
    Some(name.to_string())
}

/// The tower config's keys the class reads are required up front: a config without them is
/// refused before any tensor is planned.
fn prepare(ctx: &mut Ctx) -> Result<(), ConvertError> {
    projectors(ctx)?;
    sides(ctx)?;
    Ok(())
}

/// The config's integer at `key` (`None` when absent or null).
fn int_at(ctx: &Ctx, obj: &Json, keys: &[&str]) -> Result<Option<i64>, ConvertError> {
    let mut v = obj;
    for k in keys {
        match v.get(k) {
            Some(x) if !x.is_null() => v = x,
            _ => return Ok(None),
        }
    }
    v.as_i64()
        .map(Some)
        .ok_or_else(|| bad(ctx, &keys.join("."), "an integer", v))
}

fn bad(ctx: &Ctx, key: &str, expected: &str, found: &Json) -> ConvertError {
    ConvertError::BadHparam {
        path: ctx.hp.path.clone(),
        keys: vec![key.to_string()],
        expected: expected.to_string(),
        found: found.to_string(),
    }
}

/// A list of integers at the config's `key`, `None` when absent or null.
fn int_list(ctx: &Ctx, key: &str) -> Result<Option<Vec<Json>>, ConvertError> {
    match ctx.hp.raw.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Array(a)) => Ok(Some(a.clone())),
        Some(other) => Err(bad(ctx, key, "a list", other)),
    }
}

/// `[a, b]` integer pairs of the config's `key` (the deepstack map, the pinpoints).
fn pairs(ctx: &Ctx, key: &str, items: &[Json]) -> Result<Vec<(i64, i64)>, ConvertError> {
    items
        .iter()
        .map(|item| {
            let pair = item.as_array().filter(|a| a.len() == 2);
            let ints = pair.and_then(|a| Some((a[0].as_i64()?, a[1].as_i64()?)));
            ints.ok_or_else(|| bad(ctx, key, "a list of [integer, integer] pairs", item))
        })
        .collect()
}

/// The normalized projector list (`get_normalized_projector_map`).
fn projectors(ctx: &Ctx) -> Result<Vec<Proj>, ConvertError> {
    let raw = &ctx.hp.raw;
    let n_text =
        int_at(ctx, raw, &["text_config", "num_hidden_layers"])?.unwrap_or(DEFAULT_TEXT_LAYERS);
    let tower = Json::Object(ctx.tower().clone());
    let n_vision = int_at(ctx, &tower, &["num_hidden_layers"])?
        .ok_or_else(|| ctx.hp.missing(&["vision_config.num_hidden_layers"]))?;
    let from_end = |layer: i64, n: i64| if layer < 0 { n + layer } else { layer };
    let mut out = Vec::new();
    let mut deepstack = match int_list(ctx, "deepstack_layer_map")? {
        Some(items) => pairs(ctx, "deepstack_layer_map", &items)?,
        None => Vec::new(),
    };
    deepstack.sort_unstable();
    for (i, (v, l)) in deepstack.into_iter().enumerate() {
        out.push(Proj {
            vision_layer: from_end(v, n_vision),
            text_layer: from_end(l, n_text),
            kind: Kind::Layerwise,
            index: i as i64,
        });
    }
    let spatial = match int_list(ctx, "spatial_target_layers")? {
        Some(items) => items
            .iter()
            .map(|x| {
                x.as_i64()
                    .ok_or_else(|| bad(ctx, "spatial_target_layers", "a list of integers", x))
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => DEFAULT_SPATIAL_TARGETS.to_vec(),
    };
    let spatial_layer = int_at(ctx, raw, &["spatial_vision_layer"])?.unwrap_or(-1);
    for (i, l) in spatial.into_iter().enumerate() {
        // the text layer is kept as written: only the deepstack pairs count from the end
        out.push(Proj {
            vision_layer: from_end(spatial_layer, n_vision),
            text_layer: l,
            kind: Kind::Spatial,
            index: i as i64,
        });
    }
    out.sort_by_key(|p| p.text_layer);
    Ok(out)
}

/// `downsample_rate` (`"query/window"`) as its two sides.
fn sides(ctx: &Ctx) -> Result<(u64, u64), ConvertError> {
    let key = "downsample_rate";
    let v = match ctx.hp.raw.get(key) {
        None | Some(Json::Null) => return Err(ctx.hp.missing(&[key])),
        Some(v) => v,
    };
    let expected = "a fraction \"query_side/window_side\" of two non-negative integers";
    let parsed = v.as_str().and_then(|s| {
        let (q, w) = s.split_once('/')?;
        let side = |p: &str| p.trim().parse::<u32>().ok().map(u64::from);
        Some((side(q)?, side(w)?))
    });
    parsed.ok_or_else(|| bad(ctx, key, expected, v))
}

/// The positions of the `.N.` numbers of `name`, scanned left to right as a regular
/// expression's successive matches are (a match's closing dot is not the next one's
/// opening dot).
fn dotted_numbers(name: &str) -> Vec<(usize, usize)> {
    let b = name.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'.' {
            let start = i + 1;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
            if end > start && end < b.len() && b[end] == b'.' {
                out.push((start, end));
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// A projector tensor's name with its projector's index: one `.N.` number is replaced by
/// it; of two, the first (with its dot) is removed and the second replaced.
fn renamed(name: &str, index: usize) -> Result<String, ConvertError> {
    let ids = dotted_numbers(name);
    match ids.as_slice() {
        [(s, e)] => Ok(format!("{}{index}{}", &name[..*s], &name[*e..])),
        [(s1, e1), (s2, e2)] => Ok(format!(
            "{}{}{index}{}",
            &name[..s1 - 1],
            &name[*e1..*s2],
            &name[*e2..]
        )),
        _ => Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "a projector tensor name with {} numbered parts: expected one or two",
                ids.len()
            ),
        }),
    }
}

fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let list = projectors(ctx)?;
    let found = list.iter().enumerate().find(|(_, p)| {
        name.starts_with(&format!("model.{}_projectors.{}", p.kind.module(), p.index))
    });
    match found {
        Some((i, _)) => Ok(vec![Out::Map(renamed(&name, i)?, expr)]),
        None => Ok(vec![Out::Map(name, expr)]),
    }
}

fn ints(values: impl IntoIterator<Item = i64>) -> Json {
    Json::Array(values.into_iter().map(Json::from).collect())
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "granite4_vision");
    c.vision_eps(1e-6)?;
    c.bool(clip::USE_GELU, true);
    let size = c
        .ctx
        .tower()
        .get("image_size")
        .cloned()
        .unwrap_or(Json::from(DEFAULT_IMAGE_SIZE));
    c.u32_json(clip::vision::PREPROC_IMAGE_SIZE, &size)?;
    let (query, window) = sides(c.ctx)?;
    c.u32(clip::vision::PROJECTOR_QUERY_SIDE, query)?;
    c.u32(clip::vision::PROJECTOR_WINDOW_SIDE, window)?;
    let list = projectors(c.ctx)?;
    c.numbers(
        clip::vision::FEATURE_LAYERS,
        &ints(list.iter().map(|p| p.vision_layer)),
    )?;
    let offsets = list.iter().map(|p| match p.kind {
        Kind::Spatial => p.index,
        Kind::Layerwise => -1,
    });
    c.numbers(clip::vision::PROJECTOR_SPATIAL_OFFSETS, &ints(offsets))?;
    let pinpoints = match int_list(c.ctx, "image_grid_pinpoints")? {
        Some(items) => pairs(c.ctx, "image_grid_pinpoints", &items)?,
        None => DEFAULT_PINPOINTS.iter().map(|[h, w]| (*h, *w)).collect(),
    };
    // written as (width, height)
    let flat = pinpoints.iter().flat_map(|(h, w)| [*w, *h]);
    c.numbers(clip::vision::IMAGE_GRID_PINPOINTS, &ints(flat))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_parts_are_found_as_successive_matches() {
        assert_eq!(dotted_numbers("a.0.b.12.c"), vec![(2, 3), (6, 8)]);
        // the closing dot of `.1.` cannot open `.2.`
        assert_eq!(dotted_numbers("a.1.2.c"), vec![(2, 3)]);
        assert!(dotted_numbers("a.b1.c.2").is_empty());
    }

    #[test]
    fn projector_tensors_take_the_projector_index() {
        assert_eq!(
            renamed("model.spatial_projectors.1.query", 3).unwrap(),
            "model.spatial_projectors.3.query"
        );
        assert_eq!(
            renamed(
                "model.layerwise_projectors.0.qformer.encoder.layer.0.attention.attention.query.weight",
                2
            )
            .unwrap(),
            "model.layerwise_projectors.qformer.encoder.layer.2.attention.attention.query.weight"
        );
        assert!(matches!(
            renamed("model.spatial_projectors.query", 0),
            Err(ConvertError::Tensor { .. })
        ));
        assert!(renamed("m.1.a.2.b.3.c", 0).is_err());
    }
}
