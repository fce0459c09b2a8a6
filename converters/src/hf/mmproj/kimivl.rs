//! MoonViT towers: Kimi-VL (`KimiVLForConditionalGeneration`, projector type `kimivl`),
//! Kimi-K2.5 (`KimiK25ForConditionalGeneration`, MoonViT3d, projector type `kimik25`) and
//! GLM-5.2-Vision (`Glm5vForConditionalGeneration`, K2.5's tower and projector type).
//!
//! Both checkpoints (the hub's remote-code layout) hold `vision_tower.` (a patch
//! convolution, a 2-D position table, blocks with a fused `wqkv`, `norm0` / `norm1`,
//! `mlp.fc0` / `fc1`, a final layer norm) and a patch-merger MLP projector.
//!
//! * Kimi-VL splits each fused `wqkv` (weight and bias) into `attn_q` / `attn_k` /
//!   `attn_v`, flattens the `[h, w, c]` position table to `[h * w, c]`, and writes the
//!   image size as 64 × 14 pixels whatever the config says. Its projector is
//!   `multi_modal_projector.{pre_norm, linear_1, linear_2}`.
//! * Kimi-K2.5 keeps `wqkv` fused but regroups the q and k rows of every head from the
//!   interleaved rotary layout to the split one (below), keeps the 3-D position table, and
//!   renames its projector's `mm_projector.proj.0` / `proj.2` to the numbered linears. Its
//!   vision config is transformers' `Kimi_K25VisionConfig` (AutoConfig builds it), whose
//!   defaults win over the hub's `vt_*` spellings of the same sizes in the base keys.

use ggufkit::gguf::keys::clip;
use serde_json::{Map, Value as Json};

use super::{split_qkv, Clip, Ctx, Out, Projector};
use crate::hf::config::json_u64;
use crate::hf::expr::Expr;
use crate::ConvertError;

/// `KimiVLForConditionalGeneration` (Kimi-VL-A3B).
pub const KIMIVL: Projector = Projector {
    hf_names: &["KimiVLForConditionalGeneration"],
    projector_type: "kimivl",
    vision: true,
    audio: false,
    default_configs: false,
    filter: |n| {
        (n.contains("vision_tower") || n.contains("multi_modal_projector")).then(|| n.to_string())
    },
    force: &[],
    prepare: prepare_vl,
    hook: Some(hook_vl),
    params: params_vl,
};

/// `KimiK25ForConditionalGeneration` (Kimi-K2.5, MoonViT3d).
pub const KIMIK25: Projector = Projector {
    hf_names: &["KimiK25ForConditionalGeneration"],
    projector_type: "kimik25",
    vision: true,
    audio: false,
    default_configs: false,
    filter: |n| (n.contains("vision_tower") || n.contains("mm_projector")).then(|| n.to_string()),
    force: &[],
    prepare: prepare_k25,
    hook: Some(hook_k25),
    params: params_k25,
};

/// `Glm5vForConditionalGeneration` (GLM-5.2-Vision): Kimi-K2.5's tower and projector, whose
/// projector linears may be named `mm_projector.linear_{1,2}`.
pub const GLM5_VISION: Projector = Projector {
    hf_names: &["Glm5vForConditionalGeneration"],
    hook: Some(hook_glm5v),
    ..KIMIK25
};

/// The image size Kimi-VL writes: its position table's 64 cells of 14-pixel patches.
const KIMIVL_IMAGE_SIZE: u64 = 64 * 14;

/// The head count the K2.5 regrouping uses when the config has none.
const K25_DEFAULT_HEADS: u64 = 16;

/// The eps both classes write when the config has none (torch's LayerNorm default).
const DEFAULT_EPS: f64 = 1e-5;

fn prepare_vl(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let v = ctx.vision.as_mut().expect("a vision projector");
    v.insert("image_size".into(), Json::from(KIMIVL_IMAGE_SIZE));
    Ok(())
}

fn hook_vl(_ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let expr = if name.contains("pos_emb.weight") {
        flatten_table(&name, expr)?
    } else {
        expr
    };
    if name.contains("wqkv") {
        return split_qkv(&name.clone(), expr, |part| {
            name.replace("wqkv", &format!("w{part}"))
        });
    }
    Ok(vec![Out::Map(name, expr)])
}

/// A `[h, w, c]` position table as `[h * w, c]`.
fn flatten_table(name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    match *expr.shape() {
        [h, w, c] => expr.reshape(name, vec![h * w, c]),
        ref s => Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("a position table of shape {s:?}: expected [height, width, width]"),
        }),
    }
}

fn params_vl(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "kimivl");
    c.bool(clip::USE_GELU, true);
    c.u32(clip::vision::PROJECTOR_SCALE_FACTOR, 2)?;
    c.vision_eps(DEFAULT_EPS)
}

/// The defaults transformers' `Kimi_K25VisionConfig` gives the keys the converter reads.
const K25_VISION_DEFAULTS: &[(&str, u64)] = &[
    ("patch_size", 14),
    ("num_attention_heads", 16),
    ("num_hidden_layers", 27),
    ("hidden_size", 1152),
    ("intermediate_size", 4304),
];

/// AutoConfig's vision sub-config (a `kimi_k25` config.json), then the image size the
/// class writes: the position table's height in patches.
fn prepare_k25(ctx: &mut Ctx) -> Result<(), ConvertError> {
    let auto_config = ctx.hp.raw.get("model_type").and_then(Json::as_str) == Some("kimi_k25");
    let path = ctx.hp.path.clone();
    let v = ctx.vision.as_mut().expect("a vision projector");
    if auto_config {
        for (k, d) in K25_VISION_DEFAULTS {
            v.entry(k.to_string()).or_insert(Json::from(*d));
        }
        v.entry("merge_kernel_size")
            .or_insert(Json::from(vec![2, 2]));
    }
    let patch = count_or(&path, v, "patch_size", 14)?;
    let height = count_or(&path, v, "init_pos_emb_height", 64)?;
    let size = patch.checked_mul(height).ok_or_else(|| {
        bad(
            &path,
            "init_pos_emb_height",
            "a count whose image size fits",
            v,
        )
    })?;
    v.insert("image_size".into(), Json::from(size));
    Ok(())
}

/// `vision_config[key]` as a count, `default` when absent.
fn count_or(
    path: &std::path::Path,
    v: &Map<String, Json>,
    key: &str,
    default: u64,
) -> Result<u64, ConvertError> {
    match v.get(key) {
        None => Ok(default),
        Some(x) => json_u64(x).ok_or_else(|| bad(path, key, "a count", v)),
    }
}

fn bad(path: &std::path::Path, key: &str, expected: &str, v: &Map<String, Json>) -> ConvertError {
    ConvertError::BadHparam {
        path: path.to_path_buf(),
        keys: vec![format!("vision_config.{key}")],
        expected: expected.into(),
        found: v.get(key).map(Json::to_string).unwrap_or_default(),
    }
}

fn hook_k25(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    let mut expr = expr;
    if name.contains("wqkv") && (name.contains("weight") || name.contains("bias")) {
        let n_head = match ctx.tower().get("num_attention_heads") {
            None => K25_DEFAULT_HEADS,
            Some(x) => json_u64(x)
                .ok_or_else(|| bad(&ctx.hp.path, "num_attention_heads", "a count", ctx.tower()))?,
        };
        let map = split_rope_rows(&name, expr.shape(), n_head)?;
        expr = expr.gather_rows(&name, map)?;
    }
    Ok(vec![Out::Map(k25_projector_name(name), expr)])
}

/// The patch merger's `proj.0` / `proj.2` (a Sequential's linears) as the numbered linears.
fn k25_projector_name(name: String) -> String {
    if name.contains("mm_projector.proj.0.") {
        name.replace(".proj.0.", ".proj.linear_1.")
    } else if name.contains("mm_projector.proj.2.") {
        name.replace(".proj.2.", ".proj.linear_2.")
    } else {
        name
    }
}

/// GLM-5.2-Vision's projector linears under K2.5's names, then K2.5's rules.
fn hook_glm5v(ctx: &Ctx, name: String, expr: Expr) -> Result<Vec<Out>, ConvertError> {
    hook_k25(ctx, glm5v_projector_name(name), expr)
}

/// `mm_projector.linear_N…` as `mm_projector.proj.linear_N…`.
fn glm5v_projector_name(name: String) -> String {
    match name.strip_prefix("mm_projector.linear_") {
        Some(rest) => format!("mm_projector.proj.linear_{rest}"),
        None => name,
    }
}

/// The row order of a fused qkv tensor (weight or bias) whose q and k parts are regrouped
/// per head from the interleaved rotary layout to the split one: a head's rows, indexed
/// `(a, b, c)` over `(head_dim / 4, 2, 2)`, are written in `(b, a, c)` order; the v rows stay.
fn split_rope_rows(name: &str, shape: &[u64], n_head: u64) -> Result<Vec<u64>, ConvertError> {
    let rows = shape.first().copied().unwrap_or(0);
    let qkv = rows / 3;
    let head_dim = qkv.checked_div(n_head).unwrap_or(0);
    if rows % 3 != 0 || head_dim == 0 || head_dim % 4 != 0 || head_dim * n_head != qkv {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!(
                "a fused qkv of {rows} rows does not split into q, k and v of {n_head} heads \
                 whose size is a multiple of 4 (the rotary regrouping needs it)"
            ),
        });
    }
    let quarter = head_dim / 4;
    let mut map: Vec<u64> = Vec::with_capacity(rows as usize);
    for part in 0..2 {
        for h in 0..n_head {
            let base = part * qkv + h * head_dim;
            for b in 0..2 {
                for a in 0..quarter {
                    for c in 0..2 {
                        map.push(base + a * 4 + b * 2 + c);
                    }
                }
            }
        }
    }
    map.extend(2 * qkv..rows);
    Ok(map)
}

fn params_k25(c: &mut Clip) -> Result<(), ConvertError> {
    c.string(clip::PROJECTOR_TYPE, "kimik25");
    let v = c.ctx.tower().clone();
    let path = c.ctx.hp.path.clone();
    for (key, hk) in [
        (clip::POS_EMB_HEIGHT, "init_pos_emb_height"),
        (clip::POS_EMB_WIDTH, "init_pos_emb_width"),
    ] {
        let n = count_or(&path, &v, hk, 64)?;
        c.u32(key, n)?;
    }
    let t = count_or(&path, &v, "init_pos_emb_time", 4)?;
    c.u32(clip::POS_EMB_TIME, t)?;
    let gelu = v
        .get("projector_hidden_act")
        .is_none_or(|a| a.as_str() == Some("gelu"));
    c.bool(clip::USE_GELU, gelu);
    let eps = v
        .get("projector_ln_eps")
        .cloned()
        .unwrap_or(Json::from(DEFAULT_EPS));
    c.f32_json(clip::vision::LAYERNORM_EPS, &eps)?;
    let merge = match v.get("merge_kernel_size") {
        None => 2,
        Some(m) => m
            .as_array()
            .and_then(|a| a.first())
            .and_then(json_u64)
            .ok_or_else(|| bad(&path, "merge_kernel_size", "a list of counts", &v))?,
    };
    c.u32(clip::vision::PROJECTOR_SCALE_FACTOR, merge)?;
    let patch = count_or(&path, &v, "patch_size", 14)?;
    let limit = match c.ctx.pre.get("in_patch_limit") {
        None => 16384,
        Some(x) => json_u64(x).ok_or_else(|| ConvertError::BadHparam {
            path: c.ctx.dir.join("preprocessor_config.json"),
            keys: vec!["in_patch_limit".into()],
            expected: "a count".into(),
            found: x.to_string(),
        })?,
    };
    let per_patch = patch.saturating_mul(patch);
    c.u32(clip::vision::IMAGE_MIN_PIXELS, per_patch.saturating_mul(8))?;
    let max = limit.saturating_mul(per_patch);
    c.u32(clip::vision::IMAGE_MAX_PIXELS, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k25_rows_regroup_q_and_k_per_head() {
        // two heads of size 8: rows (a, b, c) of each head in (b, a, c) order
        let map = split_rope_rows("t", &[48, 16], 2).unwrap();
        assert_eq!(&map[..8], &[0, 1, 4, 5, 2, 3, 6, 7]);
        assert_eq!(&map[8..16], &[8, 9, 12, 13, 10, 11, 14, 15]);
        assert_eq!(&map[16..24], &[16, 17, 20, 21, 18, 19, 22, 23]);
        assert_eq!(&map[32..], &(32..48).collect::<Vec<u64>>()[..]);
    }

    #[test]
    fn glm5v_projector_linears_take_k25_names() {
        assert_eq!(
            glm5v_name("mm_projector.linear_2.bias"),
            "mm_projector.proj.linear_2.bias"
        );
        assert_eq!(
            glm5v_name("mm_projector.proj.0.weight"),
            "mm_projector.proj.linear_1.weight"
        );
        assert_eq!(
            glm5v_name("vision_tower.x.linear_1"),
            "vision_tower.x.linear_1"
        );
    }

    /// The name GLM-5.2-Vision's hook maps a tensor to (its rename, then K2.5's).
    fn glm5v_name(name: &str) -> String {
        k25_projector_name(glm5v_projector_name(name.to_string()))
    }

    #[test]
    fn k25_rows_refuse_heads_not_a_multiple_of_4() {
        assert!(matches!(
            split_rope_rows("t", &[48, 16], 16),
            Err(ConvertError::Tensor { .. })
        ));
        assert!(split_rope_rows("t", &[47], 1).is_err());
        assert!(split_rope_rows("t", &[48], 0).is_err());
    }
}
