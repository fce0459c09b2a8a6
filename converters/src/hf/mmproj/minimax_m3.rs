//! MiniMax-M3's vision tower and projector (`MiniMaxM3SparseForConditionalGeneration`;
//! projector type `minimax_m3`, `MiniMaxM3VisionModel` in `conversion/minimax.py`). The class
//! also registers `MiniMaxM3VLForConditionalGeneration`, which the reference's class map
//! lacks: it refuses that name, and so does ggufkit.
//!
//! The hub layout keeps the tower under `vision_tower.vision_model.` (a Conv3d patch
//! embedding, `pre_layrnorm`, CLIP-style blocks), the per-patch MLP `multi_modal_projector.
//! linear_1` / `linear_2` (`mm.1` / `mm.2`, through the block table) and the 2 × 2 merge MLP
//! `patch_merge_mlp.linear_1` / `linear_2` (`mm.merger.fc1` / `fc2`); everything else (the
//! text model, its MTP and sparse-index tensors) is dropped. The Conv3d kernel is written as
//! one Conv2d slice per temporal step (`v.patch_embd.weight`, `.weight.1`, …). The tower's
//! rotary embedding splits each head into `[t | h | w | pad]` thirds of half-pairs; the
//! class regroups the q/k rows of every head to `[t h w]` interleaved per axis (it asserts a
//! head size of 80, the released tower's). Besides the base keys it writes GELU, the tower's
//! `layer_norm_eps` (default 1e-5) and the spatial merge size of
//! `img_token_compression_config` (default 2).

use ggufkit::gguf::keys::clip;
use serde_json::Value as Json;

use super::defaults::{CompositeClass, ConfigClasses, SubConfigClass};
use super::{Clip, ConfigValue, Ctx, Out, Projector};
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `MiniMaxM3SparseForConditionalGeneration`.
pub const MINIMAX_M3: Projector = Projector {
    hf_names: &["MiniMaxM3SparseForConditionalGeneration"],
    projector_type: "minimax_m3",
    vision: true,
    audio: false,
    default_configs: true,
    filter,
    force: &[],
    prepare: |_| Ok(()),
    hook: Some(hook),
    params,
};

/// transformers' composite class (`minimax_m3_vl`) builds the vision config from its class's
/// defaults (`MiniMaxM3VLVisionConfig`) for the keys the converter reads.
pub(super) const CONFIG_CLASSES: ConfigClasses = {
    use ConfigValue::{Float, Int, Text};
    ConfigClasses {
        composites: &[CompositeClass {
            model_type: "minimax_m3_vl",
            builds: &[("vision_config", "minimax_m3_vl_vision")],
        }],
        sub_configs: &[SubConfigClass {
            model_types: &["minimax_m3_vl_vision"],
            values: &[
                ("hidden_size", Int(1280)),
                ("intermediate_size", Int(5120)),
                ("num_hidden_layers", Int(32)),
                ("num_attention_heads", Int(16)),
                ("num_channels", Int(3)),
                ("image_size", Int(2016)),
                ("patch_size", Int(14)),
                ("temporal_patch_size", Int(2)),
                ("spatial_merge_size", Int(2)),
                ("hidden_act", Text("gelu")),
                ("layer_norm_eps", Float(1e-5)),
            ],
        }],
    }
};

/// The Conv3d patch embedding's HF name.
const PATCH: &str = "vision_tower.vision_model.embeddings.patch_embedding.weight";

/// The head size the class asserts (the released tower's).
const HEAD_DIM: u64 = 80;

/// Only the vision side: the tower, the projector and the merge MLP.
fn filter(name: &str) -> Option<String> {
    const KEEP: &[&str] = &[
        "vision_tower.",
        "multi_modal_projector.",
        "patch_merge_mlp.",
    ];
    KEEP.iter()
        .any(|p| name.starts_with(p))
        .then(|| name.to_string())
}

fn hook(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    if name == PATCH {
        return split_temporal(&name, expr);
    }
    // The tower's q and k projections (the names the table maps to `attn_q` / `attn_k`).
    if name.contains(".self_attn.q_proj.") || name.contains(".self_attn.k_proj.") {
        let expr = permute_qk(ctx, &name, expr)?;
        return Ok(vec![Out::Map(name, expr)]);
    }
    Ok(vec![Out::Map(name, expr)])
}

/// The Conv3d kernel `[out, in, kt, p, p]` as `kt` Conv2d kernels `[out, in, p, p]`:
/// `v.patch_embd.weight`, then `v.patch_embd.weight.{t}`.
fn split_temporal(name: &str, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let s = expr.shape().to_vec();
    if s.len() != 5 {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("unexpected patch_embedding rank {}", s.len()),
        });
    }
    let mut out = Vec::with_capacity(s[2] as usize);
    for t in 0..s[2] {
        let slice = expr
            .clone()
            .narrow(name, 2, t, 1)?
            .reshape(name, vec![s[0], s[1], s[3], s[4]])?;
        let gguf = if t == 0 {
            "v.patch_embd.weight".to_string()
        } else {
            format!("v.patch_embd.weight.{t}")
        };
        out.push(Out::Named(gguf, slice));
    }
    Ok(out)
}

/// The order the class gives the channels of one head of size `d_head`: the three axes'
/// first half-pairs, then their second ones (`[Ta Tb | Ha Hb | Wa Wb]`), the padding last.
fn head_order(d_head: u64) -> Vec<u64> {
    let axis = 2 * ((2 * (d_head / 2) / 3) / 2);
    let ah = axis / 2;
    let half = 3 * ah;
    let mut perm = Vec::with_capacity(d_head as usize);
    for k in 0..3 {
        perm.extend(k * ah..(k + 1) * ah);
        perm.extend(half + k * ah..half + (k + 1) * ah);
    }
    perm.extend(2 * half..d_head);
    perm
}

/// `_permute_vit_qk`: every head's rows (or bias values) regrouped by [`head_order`]; the
/// head size must be 80 and the rows whole heads.
fn permute_qk(ctx: &Ctx, name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let n_head = match ctx.tower().get("num_attention_heads") {
        Some(v) => super::json_u64(v).filter(|&n| n > 0).ok_or_else(|| {
            ConvertError::wrong_type(
                &ctx.hp.path,
                "vision_config.num_attention_heads",
                "a positive integer",
                v,
            )
        })?,
        None => return Err(ctx.missing("vision_config", &["num_attention_heads"])),
    };
    let rows = expr.shape().first().copied().unwrap_or(0);
    let d_head = rows / n_head;
    if !matches!(expr.shape().len(), 1 | 2) || rows != n_head * d_head || d_head != HEAD_DIM {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "shape {:?} with {n_head} heads: the class regroups q/k heads of size \
                 {HEAD_DIM} only",
                expr.shape()
            ),
        });
    }
    let order = head_order(d_head);
    let map = (0..n_head)
        .flat_map(|h| order.iter().map(move |&i| h * d_head + i))
        .collect();
    expr.gather_rows(name, map)
}

/// An integer the class converts with `int()` (a float is truncated).
fn int_of(v: &Json) -> Option<u64> {
    super::json_u64(v).or_else(|| {
        v.as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .map(|x| x.trunc() as u64)
    })
}

fn params(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "minimax_m3");
    c.bool(clip::USE_GELU, true);
    c.vision_eps(1e-5)?;
    let path = c.ctx.hp.path.clone();
    let merge = match c.ctx.tower().get("img_token_compression_config") {
        None => Json::from(2),
        Some(Json::Object(comp)) => comp.get("spatial_merge_size").cloned().unwrap_or(2.into()),
        Some(other) => {
            return Err(ConvertError::wrong_type(
                &path,
                "vision_config.img_token_compression_config",
                "an object",
                other,
            ))
        }
    };
    let n = int_of(&merge).ok_or_else(|| {
        ConvertError::wrong_type(
            &path,
            "vision_config.img_token_compression_config.spatial_merge_size",
            "an integer",
            &merge,
        )
    })?;
    c.u32(clip::vision::SPATIAL_MERGE_SIZE, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_of_80_regroup_the_three_axes() {
        let p = head_order(80);
        assert_eq!(p.len(), 80);
        // 26 rotary channels per axis: 13 from each half.
        assert_eq!(&p[..3], &[0, 1, 2]);
        assert_eq!(p[13], 39);
        assert_eq!(p[26], 13);
        assert_eq!(&p[78..], &[78, 79]);
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..80).collect::<Vec<_>>());
    }

    #[test]
    fn only_the_vision_side_is_kept() {
        assert!(filter("vision_tower.vision_model.pre_layrnorm.weight").is_some());
        assert!(filter("patch_merge_mlp.linear_1.bias").is_some());
        assert!(filter("multi_modal_projector.linear_2.weight").is_some());
        assert!(filter("language_model.model.norm.weight").is_none());
        assert!(filter("model.layers.0.self_attn.q_proj.weight").is_none());
    }
}
