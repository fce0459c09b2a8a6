//! EXAONE 4.5's vision tower (`Exaone4_5_ForConditionalGeneration`, projector type
//! `exaone4_5`; `Exaone4_5VisionModel`, a `Qwen2VLVisionModel` subclass, in
//! `conversion/exaone.py`).
//!
//! A Qwen2.5-VL style tower (RMS-normed blocks, SwiGLU FFN with biases, the `ln_q` +
//! two-layer merger, windowed attention except in `fullatt_block_indexes`) with
//! grouped-query attention: its fused `qkv` is kept whole (`v.blk.{bid}.attn_qkv`), not
//! split in three, since q and k/v have different widths. The tower lives under
//! `model.visual.` in transformers' layout (read as `visual.`, the hub's). The Conv3D patch
//! embedding is split into its two temporal halves as Qwen2-VL's is. Besides the base keys
//! it writes SiLU, the image processor's `min_pixels` / `max_pixels` (required), the KV head
//! count when the tower's config has one, the norm epsilon (the tower's `rms_norm_eps`, else
//! the top-level config's, else 1e-6), the window size when given, and the window-attention
//! period from evenly spaced `fullatt_block_indexes` when the list is not empty.

use ggufkit::gguf::keys::clip;
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::qwenvl::{prepare2, split_patch};
use super::{json_u64, Clip, ConfigValue, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Exaone4_5_ForConditionalGeneration`.
pub const EXAONE4_5: Projector = Projector {
    hf_names: &["Exaone4_5_ForConditionalGeneration"],
    projector_type: "exaone4_5",
    vision: true,
    audio: false,
    default_configs: false,
    filter,
    force: &[(On::Gguf(".position_embd."), Force::Type(GgmlType::F32))],
    prepare: prepare2,
    hook: Some(hook),
    params,
};

/// The composite class and the transformers 5 defaults of its vision config
/// (`Exaone4_5_VisionConfig`) for the keys the converter reads.
pub(super) const CONFIG_CLASSES: ConfigClasses = {
    use ConfigValue::{Int, Ints, Text};
    ConfigClasses {
        composites: &[CompositeClass {
            model_type: "exaone4_5",
            builds: &[("vision_config", "exaone4_5_vision")],
        }],
        sub_configs: &[SubConfigClass {
            model_types: &["exaone4_5_vision"],
            values: &[
                ("depth", Int(32)),
                ("hidden_size", Int(3584)),
                ("hidden_act", Text("silu")),
                ("intermediate_size", Int(3420)),
                ("num_heads", Int(16)),
                ("in_channels", Int(3)),
                ("patch_size", Int(14)),
                ("spatial_merge_size", Int(2)),
                ("temporal_patch_size", Int(2)),
                ("window_size", Int(112)),
                ("out_hidden_size", Int(3584)),
                ("fullatt_block_indexes", Ints(&[7, 15, 23, 31])),
                ("num_key_value_heads", Int(8)),
            ],
        }],
    }
};

/// transformers' `model.visual.` read as the hub's `visual.`; only the tower is kept.
fn filter(name: &str) -> Option<String> {
    let name = match name.strip_prefix("model.visual.") {
        Some(rest) => format!("visual.{rest}"),
        None => name.to_string(),
    };
    name.starts_with("visual.").then_some(name)
}

fn hook(_: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains(".qkv.") {
        return Ok(vec![Out::Map(name, expr)]);
    }
    if name.contains("patch_embed.proj.weight") {
        return split_patch(&name, expr);
    }
    Ok(vec![Out::Map(name, expr)])
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "exaone4_5");
    c.bool(clip::USE_SILU, true);
    let min = c.ctx.pixel_bound("min_pixels")?.clone();
    c.u32_json(clip::vision::IMAGE_MIN_PIXELS, &min)?;
    let max = c.ctx.pixel_bound("max_pixels")?.clone();
    c.u32_json(clip::vision::IMAGE_MAX_PIXELS, &max)?;
    let tower = c.ctx.tower().clone();
    if let Some(kv) = tower.get("num_key_value_heads").filter(|v| !v.is_null()) {
        c.u32_json(clip::vision::HEAD_COUNT_KV, kv)?;
    }
    let eps = tower
        .get("rms_norm_eps")
        .or_else(|| c.ctx.hp.raw.get("rms_norm_eps"))
        .cloned()
        .unwrap_or(Json::from(1e-6));
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)?;
    if let Some(w) = tower.get("window_size").filter(|v| !v.is_null()) {
        c.u32_json(clip::vision::WINDOW_SIZE, w)?;
    }
    let full = match tower.get("fullatt_block_indexes") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(a)) => a
            .iter()
            .map(|x| {
                json_u64(x).ok_or_else(|| {
                    ConvertError::wrong_type(
                        &c.ctx.hp.path,
                        "vision_config.fullatt_block_indexes",
                        "a list of block indices",
                        x,
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(ConvertError::wrong_type(
                &c.ctx.hp.path,
                "vision_config.fullatt_block_indexes",
                "a list of block indices",
                other,
            ))
        }
    };
    if let Some(first) = full.first() {
        let n = first.saturating_add(1);
        if full.windows(2).any(|w| w[1].checked_sub(w[0]) != Some(n)) {
            return Err(c.ctx.unsupported(format!(
                "fullatt_block_indexes {full:?} are not evenly spaced (invalid EXAONE 4.5 \
                 fullatt_block_indexes, as the reference says)"
            )));
        }
        c.u32(clip::vision::N_WA_PATTERN, n)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tower_is_kept_under_its_hub_name() {
        assert_eq!(
            filter("model.visual.blocks.0.attn.qkv.weight").as_deref(),
            Some("visual.blocks.0.attn.qkv.weight")
        );
        assert_eq!(
            filter("visual.merger.ln_q.weight").as_deref(),
            Some("visual.merger.ln_q.weight")
        );
        assert!(filter("model.language_model.layers.0.mlp.up_proj.weight").is_none());
        assert!(filter("lm_head.weight").is_none());
        assert!(filter("mtp.fc.weight").is_none());
    }
}
