//! Qwen's vision towers: Qwen2-VL and Qwen2.5-VL (`Qwen2VLVisionModel`: the fused `qkv`
//! split into q, k, v; projector types `qwen2vl_merger` / `qwen2.5vl_merger`) and Qwen3-VL
//! with its MoE sibling (`Qwen3VLVisionModel`: `qkv` kept fused, deepstack mergers,
//! projector type `qwen3vl_merger`). Both split the Conv3D patch embedding into its two
//! temporal Conv2D halves, `v.patch_embd.weight` and `v.patch_embd.weight.1`.

use ggufkit::gguf::keys::clip;
use ggufkit::gguf::{ArrayValue, Value};
use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::{json_u64, Clip, ConfigValue, Ctx, Force, On, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `Qwen2VLForConditionalGeneration`, `Qwen2_5_VLForConditionalGeneration`.
pub const QWEN2VL: Projector = Projector {
    hf_names: &[
        "Qwen2VLForConditionalGeneration",
        "Qwen2VLModel",
        "Qwen2_5_VLForConditionalGeneration",
    ],
    projector_type: "qwen2vl_merger",
    vision: true,
    audio: false,
    default_configs: false,
    filter: |n| n.starts_with("visual.").then(|| n.to_string()),
    force: &[(On::Gguf(".position_embd."), Force::Type(GgmlType::F32))],
    prepare: prepare2,
    hook: Some(hook2),
    params: params2,
};

/// `Qwen3VLForConditionalGeneration`, `Qwen3VLMoeForConditionalGeneration`, Qwen 3.5/3.6's
/// `Qwen3_5ForConditionalGeneration`, `Qwen3_5MoeForConditionalGeneration` and Qwen4-Exp's
/// `Qwen4ExpForConditionalGeneration` (the same tower; a Qwen3.5 or Qwen4-Exp vision config
/// lists no deepstack blocks, so every block is flagged false).
pub const QWEN3VL: Projector = Projector {
    hf_names: &[
        "Qwen3VLForConditionalGeneration",
        "Qwen3VLMoeForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen4ExpForConditionalGeneration",
    ],
    projector_type: "qwen3vl_merger",
    vision: true,
    audio: false,
    default_configs: false,
    filter: filter3,
    force: &[],
    prepare: prepare3,
    hook: Some(hook3),
    params: params3,
};

/// The composite classes of these towers and, for the keys the converter reads, the
/// transformers 5 defaults of the vision config each builds when config.json has none.
pub(super) const CONFIG_CLASSES: ConfigClasses = {
    use ConfigValue::{Int, Ints, Text};
    const QWEN3_TOWER: &[(&str, ConfigValue)] = &[
        ("depth", Int(27)),
        ("hidden_act", Text("gelu_pytorch_tanh")),
        ("hidden_size", Int(1152)),
        ("in_channels", Int(3)),
        ("intermediate_size", Int(4304)),
        ("num_heads", Int(16)),
        ("num_position_embeddings", Int(2304)),
        ("out_hidden_size", Int(3584)),
        ("patch_size", Int(16)),
        ("spatial_merge_size", Int(2)),
        ("temporal_patch_size", Int(2)),
        ("deepstack_visual_indexes", Ints(&[8, 16, 24])),
    ];
    ConfigClasses {
        composites: &[
            CompositeClass {
                model_type: "qwen2_vl",
                builds: &[("vision_config", "qwen2_vl_vision")],
            },
            CompositeClass {
                model_type: "qwen2_5_vl",
                builds: &[("vision_config", "qwen2_5_vl_vision")],
            },
            CompositeClass {
                model_type: "qwen3_vl",
                builds: &[("vision_config", "qwen3_vl_vision")],
            },
            CompositeClass {
                model_type: "qwen3_vl_moe",
                builds: &[("vision_config", "qwen3_vl_moe_vision")],
            },
            CompositeClass {
                model_type: "qwen3_5",
                builds: &[("vision_config", "qwen3_5_vision")],
            },
            CompositeClass {
                model_type: "qwen3_5_moe",
                builds: &[("vision_config", "qwen3_5_moe_vision")],
            },
        ],
        sub_configs: &[
            SubConfigClass {
                model_types: &["qwen2_vl_vision"],
                values: &[
                    ("depth", Int(32)),
                    ("embed_dim", Int(1280)),
                    ("hidden_act", Text("quick_gelu")),
                    ("hidden_size", Int(3584)),
                    ("in_channels", Int(3)),
                    ("mlp_ratio", Int(4)),
                    ("num_heads", Int(16)),
                    ("patch_size", Int(14)),
                    ("spatial_merge_size", Int(2)),
                    ("temporal_patch_size", Int(2)),
                ],
            },
            SubConfigClass {
                model_types: &["qwen2_5_vl_vision"],
                values: &[
                    ("depth", Int(32)),
                    ("fullatt_block_indexes", Ints(&[7, 15, 23, 31])),
                    ("hidden_act", Text("silu")),
                    ("hidden_size", Int(3584)),
                    ("in_channels", Int(3)),
                    ("intermediate_size", Int(3420)),
                    ("num_heads", Int(16)),
                    ("out_hidden_size", Int(3584)),
                    ("patch_size", Int(14)),
                    ("spatial_merge_size", Int(2)),
                    ("temporal_patch_size", Int(2)),
                    ("tokens_per_second", Int(4)),
                    ("window_size", Int(112)),
                ],
            },
            SubConfigClass {
                model_types: &["qwen3_vl_vision", "qwen3_vl_moe_vision"],
                values: QWEN3_TOWER,
            },
            // Qwen 3.5's tower lists no deepstack blocks.
            SubConfigClass {
                model_types: &["qwen3_5_vision", "qwen3_5_moe_vision"],
                values: QWEN3_TOWER.split_at(QWEN3_TOWER.len() - 1).0,
            },
        ],
    }
};

fn vision(ctx: &mut Ctx) -> &mut serde_json::Map<String, Json> {
    ctx.vision.as_mut().expect("a vision projector")
}

/// The config's renames: heads, layers, and Qwen2-VL's widths.
pub(super) fn prepare2(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let v = vision(ctx);
    v.entry("image_size").or_insert(Json::from(560));
    let heads = v.get("num_heads").cloned().unwrap_or(Json::Null);
    v.insert("num_attention_heads".into(), heads);
    let depth = v.get("depth").cloned().unwrap_or(Json::Null);
    v.insert("num_hidden_layers".into(), depth);
    if let Some(e) = v.get("embed_dim").cloned() {
        let h = v.get("hidden_size").cloned().unwrap_or(Json::Null);
        v.insert("intermediate_size".into(), h);
        v.insert("hidden_size".into(), e);
    }
    Ok(())
}

/// Splits a Conv3D patch embedding (`[c_out, c_in, 2, kh, kw]`) into its two Conv2D halves.
pub(super) fn split_patch(name: &str, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let s = expr.shape().to_vec();
    if s.len() != 5 || s[2] != 2 {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "patch embedding of shape {s:?}: only a temporal patch size of 2 is supported \
                 (as in the reference)"
            ),
        });
    }
    let half = |t: u64| -> Result<Expr, ConvertError> {
        expr.clone()
            .narrow(name, 2, t, 1)?
            .reshape(name, vec![s[0], s[1], s[3], s[4]])
    };
    Ok(vec![
        Out::Named("v.patch_embd.weight".into(), half(0)?),
        Out::Named("v.patch_embd.weight.1".into(), half(1)?),
    ])
}

fn hook2(_: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name.contains(".qkv.") {
        return super::split_qkv(&name, expr, |p| name.replace("qkv", p));
    }
    if name.contains("patch_embed.proj.weight") {
        return split_patch(&name, expr);
    }
    Ok(vec![Out::Map(name, expr)])
}

fn params2(c: &mut Clip) -> Result<(), ConvertError> {
    let mt = c
        .ctx
        .hp
        .raw
        .get("model_type")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string();
    match mt.as_str() {
        "qwen2_vl" => c.string(clip::PROJECTOR_TYPE, "qwen2vl_merger"),
        "qwen2_5_vl" => {
            c.string(clip::PROJECTOR_TYPE, "qwen2.5vl_merger");
            c.bool(clip::USE_SILU, true);
            let idx: Vec<u64> = c
                .vparam(&["fullatt_block_indexes"])?
                .as_array()
                .map(|a| a.iter().filter_map(json_u64).collect())
                .unwrap_or_default();
            let Some(first) = idx.first() else {
                return Err(c.ctx.unsupported("fullatt_block_indexes is empty"));
            };
            let n = first + 1;
            if idx.windows(2).any(|w| w[1].checked_sub(w[0]) != Some(n)) {
                return Err(c.ctx.unsupported(format!(
                    "fullatt_block_indexes {idx:?} are not evenly spaced"
                )));
            }
            c.u32(clip::vision::N_WA_PATTERN, n)?;
        }
        other => {
            return Err(c.ctx.unsupported(format!(
                "model_type {other:?} (the Qwen2-VL projector takes qwen2_vl and qwen2_5_vl)"
            )))
        }
    }
    let eps = c
        .ctx
        .hp
        .raw
        .get("rms_norm_eps")
        .cloned()
        .unwrap_or(Json::from(1e-6));
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)
}

pub(super) fn filter3(name: &str) -> Option<String> {
    if name.starts_with("lm_head.") || name.starts_with("mtp.") {
        return None;
    }
    let name = match name.strip_prefix("model.visual.") {
        Some(rest) => format!("visual.{rest}"),
        None => name.to_string(),
    };
    name.starts_with("visual.").then_some(name)
}

pub(super) fn prepare3(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let v = vision(ctx);
    if !v.contains_key("image_size") {
        let n = v
            .get("num_position_embeddings")
            .and_then(Json::as_f64)
            .unwrap_or(2304.0);
        let p = v.get("patch_size").and_then(Json::as_f64).unwrap_or(16.0);
        v.insert("image_size".into(), Json::from((n.sqrt() * p) as u64));
    }
    let heads = v.get("num_heads").cloned().unwrap_or(Json::Null);
    v.insert("num_attention_heads".into(), heads);
    let depth = v.get("depth").cloned().unwrap_or(Json::Null);
    v.insert("num_hidden_layers".into(), depth);
    Ok(())
}

/// Which blocks feed a deepstack merger.
pub(super) fn deepstack(ctx: &Ctx) -> Result<(Vec<bool>, Vec<u64>), ConvertError> {
    let v = ctx.tower();
    let n = v.get("num_hidden_layers").and_then(json_u64).unwrap_or(0);
    let idx: Vec<u64> = v
        .get("deepstack_visual_indexes")
        .and_then(Json::as_array)
        .map(|a| a.iter().filter_map(json_u64).collect())
        .unwrap_or_default();
    let mut flags = vec![false; n as usize];
    for &i in &idx {
        *flags.get_mut(i as usize).ok_or_else(|| {
            ctx.unsupported(format!(
                "deepstack_visual_indexes {idx:?}: block {i} of {n}"
            ))
        })? = true;
    }
    Ok((flags, idx))
}

pub(super) fn hook3(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let bad = |what: &str| ConvertError::Tensor {
        name: name.clone(),
        problem: format!("unexpected {what} tensor"),
    };
    if let Some(rest) = name.strip_prefix("visual.deepstack_merger_list.") {
        let (i, target) = rest.split_once('.').ok_or_else(|| bad("deepstack"))?;
        let (_, idx) = deepstack(ctx)?;
        let i: usize = i.parse().map_err(|_| bad("deepstack"))?;
        let block = *idx.get(i).ok_or_else(|| bad("deepstack"))?;
        let (kind, suffix) = target.split_once('.').ok_or_else(|| bad("deepstack"))?;
        let part = match kind {
            "norm" => "norm",
            "linear_fc1" => "fc1",
            "linear_fc2" => "fc2",
            _ => return Err(bad("deepstack")),
        };
        return Ok(vec![Out::Map(
            format!("v.deepstack.{block}.{part}.{suffix}"),
            expr,
        )]);
    }
    if let Some(rest) = name.strip_prefix("visual.merger.") {
        let (kind, tail) = rest.split_once('.').ok_or_else(|| bad("merger"))?;
        let out = match kind {
            "linear_fc1" => format!("mm.0.{tail}"),
            "linear_fc2" => format!("mm.2.{tail}"),
            "norm" => format!("v.post_ln.{tail}"),
            _ => return Err(bad("merger")),
        };
        return Ok(vec![Out::Named(out, expr)]);
    }
    if name == "visual.patch_embed.proj.weight" {
        return split_patch(&name, expr);
    }
    if name == "visual.patch_embed.proj.bias" {
        return Ok(vec![Out::Named("v.patch_embd.bias".into(), expr)]);
    }
    Ok(vec![Out::Map(name, expr)])
}

fn params3(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "qwen3vl_merger");
    c.bool(clip::USE_GELU, true);
    if let Some(m) = c.ctx.tower().get("spatial_merge_size").cloned() {
        if !m.is_null() {
            c.u32_json(clip::vision::SPATIAL_MERGE_SIZE, &m)?;
        }
    }
    let eps = c.ctx.hp.find_f64(&["rms_norm_eps"])?.unwrap_or(1e-6);
    c.f32_json(clip::vision::LAYERNORM_EPS, &Json::from(eps))?;
    let (flags, _) = deepstack(c.ctx)?;
    if !flags.is_empty() {
        c.md.set(
            clip::vision::IS_DEEPSTACK_LAYERS,
            Value::Array(ArrayValue::Bool(flags)),
        );
    }
    Ok(())
}
