//! `HrmTextForCausalLM` (arch `hrm_text`, `HrmTextModel` in `conversion/hrm_text.py`).
//!
//! HRM-Text: a recurrent pair of transformer stacks, a low-level `L_module` and a
//! high-level `H_module` of `layers_per_stack` blocks each, run for `H_cycles` outer cycles of
//! `L_cycles` inner ones. The file holds `2 * layers_per_stack` physical blocks (the L stack
//! first, the H stack after it), and the block count written is the number of attention
//! invocations, `layers_per_stack * H_cycles * (L_cycles + 1)`.
//!
//! `layers_per_stack` is `num_layers_per_stack`, else `num_hidden_layers`; transformers'
//! `HrmTextConfig` sets it so from a training-style config and rewrites `num_hidden_layers`
//! to the invocation count (its `__post_init__`, mirrored by [`post_init`]), which is then
//! also the generic block count; a config read as written gets the same through
//! [`expand_block_count`].
//!
//! Tensors: the embedding and the head go straight to `token_embd` / `output`, the
//! recurrent state's initial value `model.z_L_init` to `hrm.z_l_init`; every other name must
//! be `model.{L,H}_module.layers.{i}.{rest}` (else the class refuses it). A fused
//! `attn.gqkv_proj` is cut into four row chunks (gate, q, k, v), a fused `mlp.gate_up_proj`
//! into two (gate, up), and any other `attn.` name becomes `self_attn.`, mapped by the shared
//! table at block `i` (plus `layers_per_stack` for the H stack). The norms carry no weights.
//! After the generic keys: the rope dimension count (`head_dim`, else `hidden_size /
//! num_attention_heads`), `embedding_scale` and the four `hrm.*` keys. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{hrm, llm, rope};
use serde_json::{Map, Value as Json};

use super::{Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// HRM-Text.
pub const HRM_TEXT: Arch = Arch {
    hf_names: &["HrmTextForCausalLM"],
    model_types: &[ModelType {
        name: "hrm_text",
        hf_classes: &["HrmTextForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 151808,
            "hidden_size" => 1536,
            "intermediate_size" => 4096,
            "num_hidden_layers" => 16,
            "num_attention_heads" => 12,
            "max_position_embeddings" => 2048,
            "initializer_range" => 0.02,
            "rms_norm_eps" => 1e-6,
            "tie_word_embeddings" => false,
            "head_dim" => 128,
            "H_cycles" => 2,
            "L_cycles" => 3,
            "prefix_lm" => true,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(prepare),
    }],
    composites: &[],
    gguf: "hrm_text",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::Output,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnGate,
        Tensor::AttnOut,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        hook: Some(modify),
        ..Rules::NONE
    },
    params,
    extra: super::no_extra,
    hooks: Hooks {
        adjust: Some(expand_block_count),
        ..Hooks::NONE
    },
};

/// `HrmTextConfig`: the defaults `__post_init__` reads, then [`post_init`].
fn prepare(cfg: &mut Map<String, Json>) -> bool {
    for (k, v) in [
        ("H_cycles", Json::from(2)),
        ("L_cycles", Json::from(3)),
        ("initializer_range", Json::from(0.02)),
    ] {
        cfg.entry(k).or_insert(v);
    }
    post_init(cfg);
    true
}

/// `HrmTextConfig.__post_init__` on the typed dict: `embedding_scale` defaults to
/// `1 / initializer_range`, and a config without `num_layers_per_stack` takes it from
/// `num_hidden_layers`, which becomes the invocation count.
fn post_init(cfg: &mut Map<String, Json>) {
    if cfg.get("embedding_scale").is_none_or(Json::is_null) {
        if let Some(r) = cfg.get("initializer_range").and_then(Json::as_f64) {
            cfg.insert("embedding_scale".into(), Json::from(1.0 / r));
        }
    }
    if cfg.get("num_layers_per_stack").is_none_or(Json::is_null) {
        let get = |k: &str| cfg.get(k).and_then(Json::as_u64);
        if let (Some(n), Some(h), Some(l)) =
            (get("num_hidden_layers"), get("H_cycles"), get("L_cycles"))
        {
            let slots = n
                .checked_mul(h)
                .and_then(|x| x.checked_mul(l.checked_add(1)?));
            if let Some(slots) = slots {
                cfg.insert("num_layers_per_stack".into(), Json::from(n));
                cfg.insert("num_hidden_layers".into(), Json::from(slots));
            }
        }
    }
}

/// The class's `layers_per_stack`: `num_layers_per_stack` when set (and not zero), else
/// `num_hidden_layers`.
fn layers_per_stack(hp: &Hparams) -> Result<u64, ConvertError> {
    match hp.find_u64(&["num_layers_per_stack"]) {
        Ok(Some(n)) if n != 0 => Ok(n),
        _ => hp.req_u64(&["num_hidden_layers"]),
    }
}

/// Makes the block count the invocation count (`self.block_count` of the class): the
/// loaded hparams get `num_layers_per_stack` and the expanded `num_hidden_layers`.
fn expand_block_count(hp: &mut Hparams) -> Result<(), ConvertError> {
    let lps = layers_per_stack(hp)?;
    let h = hp.req_u64(&["H_cycles"])?;
    let l = hp.req_u64(&["L_cycles"])?;
    let slots = lps
        .checked_mul(h)
        .and_then(|x| x.checked_mul(l.checked_add(1)?))
        .ok_or_else(|| {
            ConvertError::out_of_range(
                &hp.path,
                "H_cycles",
                h,
                "layers_per_stack * H_cycles * (L_cycles + 1) must fit in 64 bits",
            )
        })?;
    hp.map
        .insert("num_layers_per_stack".into(), Json::from(lps));
    hp.map.insert("num_hidden_layers".into(), Json::from(slots));
    Ok(())
}

/// `torch.chunk(n, dim=0)` of `expr`'s rows, which must give exactly `n` pieces (the
/// class unpacks them).
fn chunk_rows(name: &str, expr: &Expr, n: u64) -> Result<Vec<Expr>, ConvertError> {
    let rows = expr.shape().first().copied().unwrap_or(0);
    let size = rows.div_ceil(n);
    let pieces = if size == 0 { 0 } else { rows.div_ceil(size) };
    if pieces != n {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("{rows} rows do not split into {n} chunks"),
        });
    }
    (0..n)
        .map(|i| {
            let start = i * size;
            expr.clone().narrow(name, 0, start, size.min(rows - start))
        })
        .collect()
}

/// `HrmTextModel.modify_tensors`.
fn modify(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    match name.as_str() {
        "model.embed_tokens.weight" => {
            return Ok(Modified::Named(vec![("token_embd.weight".into(), expr)]))
        }
        "lm_head.weight" => return Ok(Modified::Named(vec![("output.weight".into(), expr)])),
        "model.z_L_init" => return Ok(Modified::Named(vec![("hrm.z_l_init".into(), expr)])),
        _ => {}
    }
    let unmappable = || ConvertError::Tensor {
        name: name.clone(),
        problem: "can not map tensor (not model.L_module / model.H_module layers)".into(),
    };
    let rest = name.strip_prefix("model.").ok_or_else(unmappable)?;
    let (stack, rest) = match rest.split_once("_module.layers.") {
        Some(("L", r)) => (false, r),
        Some(("H", r)) => (true, r),
        _ => return Err(unmappable()),
    };
    let (layer, tensor) = rest.split_once('.').ok_or_else(unmappable)?;
    if layer.is_empty() || !layer.bytes().all(|b| b.is_ascii_digit()) || tensor.is_empty() {
        return Err(unmappable());
    }
    let layer: u64 = layer.parse().map_err(|_| unmappable())?;
    let bid = if stack {
        layer
            .checked_add(layers_per_stack(hp)?)
            .ok_or_else(unmappable)?
    } else {
        layer
    };
    let blk = |t: &str| format!("blk.{bid}.{t}.weight");
    if tensor == "attn.gqkv_proj.weight" {
        let parts = chunk_rows(&name, &expr, 4)?;
        let names = ["attn_gate", "attn_q", "attn_k", "attn_v"];
        return Ok(Modified::Out(
            names.iter().map(|t| blk(t)).zip(parts).collect(),
        ));
    }
    if tensor == "mlp.gate_up_proj.weight" {
        let parts = chunk_rows(&name, &expr, 2)?;
        let names = ["ffn_gate", "ffn_up"];
        return Ok(Modified::Out(
            names.iter().map(|t| blk(t)).zip(parts).collect(),
        ));
    }
    let tensor = match tensor.strip_prefix("attn.") {
        Some(t) => format!("self_attn.{t}"),
        None => tensor.to_string(),
    };
    Ok(Modified::Pass(format!("model.layers.{bid}.{tensor}"), expr))
}

/// `HrmTextModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let head_dim = match hp.find_u64(&["head_dim"])? {
        Some(d) if d != 0 => d,
        _ => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            hp.req_u64(&["hidden_size"])?
                .checked_div(heads)
                .ok_or_else(|| hp.missing(&["num_attention_heads"]))?
        }
    };
    p.u32(rope::DIMENSION_COUNT, head_dim)?;
    p.f32(llm::EMBEDDING_SCALE, hp.req_f64(&["embedding_scale"])?);
    p.u32(hrm::LAYERS_PER_STACK, layers_per_stack(hp)?)?;
    p.u32(hrm::H_CYCLES, hp.req_u64(&["H_cycles"])?)?;
    p.u32(hrm::L_CYCLES, hp.req_u64(&["L_cycles"])?)?;
    let prefix_lm = match hp.get("prefix_lm") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(Json::Number(n)) => n.as_f64() != Some(0.0),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        Some(Json::Object(o)) => !o.is_empty(),
    };
    p.bool(hrm::PREFIX_LM, prefix_lm);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_follow_torch() {
        let e = Expr::constant(vec![0.0; 14], vec![7, 2]);
        let parts = chunk_rows("t", &e, 4).unwrap();
        let rows: Vec<u64> = parts.iter().map(|p| p.shape()[0]).collect();
        assert_eq!(rows, vec![2, 2, 2, 1]);
        let e = Expr::constant(vec![0.0; 12], vec![6, 2]);
        assert!(
            chunk_rows("t", &e, 4).is_err(),
            "6 rows give three chunks of 2"
        );
    }

    #[test]
    fn a_training_config_is_expanded_as_transformers_does() {
        let mut cfg = serde_json::json!({"num_hidden_layers": 3, "H_cycles": 2, "L_cycles": 3,
            "initializer_range": 0.25})
        .as_object()
        .cloned()
        .unwrap();
        post_init(&mut cfg);
        assert_eq!(cfg["num_layers_per_stack"], Json::from(3));
        assert_eq!(cfg["num_hidden_layers"], Json::from(24));
        assert_eq!(cfg["embedding_scale"], Json::from(4.0));
    }
}
