//! `DeciLMForCausalLM` (arch `deci`, `DeciModel` in `conversion/deci.py`): DeciLM-7B and
//! the Llama-3.1-Nemotron NAS models. Remote code: the config is read as written.
//!
//! Llama's tensor names with per-layer shapes. A Nemotron config has `block_configs`, one
//! per layer: an attention with `n_heads_in_group` has `num_attention_heads /
//! n_heads_in_group` KV heads; without it, a `replace_with_linear` attention (one
//! `self_attn.linear_attn` matrix, written as `attn_output`) has all the heads and no KV
//! heads, any other none of either; an FFN's width is `int(2 * ffn_mult * hidden_size / 3)`
//! rounded up to a multiple of 256 (0 for a null `ffn_mult`). Such a config writes its own
//! hparam block: the rope base, the per-layer KV heads, heads and FFN widths as arrays, the
//! sizes, and key and value lengths `hidden_size / num_attention_heads`. DeciLM-7B's
//! config takes the generic block, with `num_key_value_heads_per_layer` written as the KV
//! head array. Both add `vocab_size` and the rope dimensions (`head_dim`, else
//! `hidden_size / num_attention_heads`).
//!
//! q and k (weights and biases) are permuted with each layer's head counts. A Llama 3 rope
//! gets Llama's `rope_freqs` (refused when the low and high wavelengths coincide, as the
//! class asserts). A `vocab_size` of 128256 (or none) is GPT-2 BPE, any other the HF
//! SentencePiece-derived `tokenizer.json` (`_set_vocab_llama_hf`).

use ggufkit::gguf::keys::{attention, llm, rope};
use serde_json::Value as Json;

use super::llama;
use super::{keep, Arch, Extra, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The DeciLM class.
pub const DECI: Arch = Arch {
    hf_names: &["DeciLMForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "deci",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(permute),
        ..Rules::NONE
    },
    params,
    extra,
    hooks: Hooks::NONE,
};

/// The Llama 3 vocabulary size, which selects the GPT-2 path.
const LLAMA3_VOCAB: u64 = 128256;

/// The rope types whose standardization reads the config's `max_position_embeddings`.
const SCALED_ROPES: [&str; 3] = ["llama3", "yarn", "longrope"];

/// Whether transformers 5 fails to build the tokenizer's config: both vocabulary paths load
/// the tokenizer with `AutoTokenizer`, which reads config.json as a plain `PreTrainedConfig`
/// (DeciLM's model types are not transformers'); standardizing a one-dict rope of a
/// scaled type then reads `max_position_embeddings` before the config has it set, and
/// fails, so the reference converts no such checkpoint.
fn tokenizer_config_fails(hp: &Json) -> bool {
    let Some(rope) = hp
        .get("rope_parameters")
        .filter(|v| !v.is_null())
        .or_else(|| hp.get("rope_scaling"))
        .and_then(Json::as_object)
    else {
        return false;
    };
    if rope.is_empty() || rope.values().all(Json::is_object) {
        return false;
    }
    let ty = rope
        .get("rope_type")
        .or_else(|| rope.get("type"))
        .and_then(Json::as_str)
        .unwrap_or("default");
    SCALED_ROPES.contains(&ty)
}

/// `DeciModel.set_vocab`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    if tokenizer_config_fails(b.hparams()) {
        return Err(ConvertError::UnsupportedFeature {
            arch: "DeciLMForCausalLM".into(),
            feature: "a llama3, yarn or longrope rope: transformers cannot load the tokenizer \
                      of such a config (its model type is not transformers'), so the \
                      reference refuses it"
                .into(),
        });
    }
    let n = match b.hparams().get("vocab_size") {
        None => Some(LLAMA3_VOCAB),
        Some(v) => v.as_u64(),
    };
    if n == Some(LLAMA3_VOCAB) {
        return b.gpt2();
    }
    Ok((b.llama_hf()?, None))
}

/// One layer's shape under `block_configs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layer {
    heads: u64,
    kv_heads: u64,
    ffn: u64,
}

/// The class's FFN width for a multiplier: `int(2 * mult * n_embd / 3)` rounded up to a
/// multiple of 256.
fn ffn_width(mult: f64, n_embd: u64) -> Option<u64> {
    let w = 2.0 * mult * n_embd as f64 / 3.0;
    if !w.is_finite() || w < 0.0 || w >= 2f64.powi(53) {
        return None;
    }
    let w = w.trunc() as u64;
    w.checked_next_multiple_of(256)
}

/// The per-layer shapes of a `block_configs` config, checked as `DeciModel.__init__`
/// checks them; `None` without `block_configs`.
fn layers(hp: &Hparams) -> Result<Option<Vec<Layer>>, ConvertError> {
    let Some(cfg) = hp.get("block_configs") else {
        return Ok(None);
    };
    let bad = |what: &str, found: &Json| ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec!["block_configs".into()],
        expected: what.to_string(),
        found: found.to_string(),
    };
    let list = cfg
        .as_array()
        .ok_or_else(|| bad("a list of per-layer configs", cfg))?;
    let n = hp.block_count()?;
    if list.len() as u64 != n {
        return Err(bad(
            &format!("{n} per-layer configs (the block count)"),
            cfg,
        ));
    }
    let heads = hp.req_u64(&["num_attention_heads"])?;
    let n_embd = hp.req_u64(&["hidden_size"])?;
    let mut out = Vec::with_capacity(list.len());
    for (il, block) in list.iter().enumerate() {
        let field = |part: &str, key: &str| {
            block
                .get(part)
                .and_then(|p| p.get(key))
                .ok_or_else(|| bad(&format!("block {il}: {part}.{key}"), block))
        };
        let group = field("attention", "n_heads_in_group")?;
        let (h, kv) = if group.is_null() {
            let linear = block
                .get("attention")
                .and_then(|a| a.get("replace_with_linear"))
                .ok_or_else(|| bad(&format!("block {il}: attention.replace_with_linear"), block))?;
            if linear == &Json::Bool(true) {
                (heads, 0)
            } else {
                (0, 0)
            }
        } else {
            let g = group
                .as_u64()
                .filter(|&g| g > 0)
                .ok_or_else(|| bad(&format!("block {il}: a positive n_heads_in_group"), group))?;
            (heads, heads / g)
        };
        let mult = field("ffn", "ffn_mult")?;
        let ffn = if mult.is_null() {
            0
        } else {
            // The class asserts that the first multiplier is a float (0.0 for a null one).
            if il == 0 && !mult.is_f64() {
                return Err(bad("block 0: ffn_mult a float", mult));
            }
            let m = mult
                .as_f64()
                .ok_or_else(|| bad(&format!("block {il}: ffn_mult a number"), mult))?;
            ffn_width(m, n_embd)
                .ok_or_else(|| bad(&format!("block {il}: ffn_mult giving a width"), mult))?
        };
        out.push(Layer {
            heads: h,
            kv_heads: kv,
            ffn,
        });
    }
    Ok(Some(out))
}

/// `num_key_value_heads_per_layer`, one count per block (DeciLM-7B); `None` without it.
fn kv_per_layer(hp: &Hparams) -> Result<Option<Vec<u64>>, ConvertError> {
    let Some(v) = hp.get("num_key_value_heads_per_layer") else {
        return Ok(None);
    };
    let n = hp.block_count()?;
    let list = v
        .as_array()
        .and_then(|a| a.iter().map(Json::as_u64).collect::<Option<Vec<u64>>>())
        .filter(|l| l.len() as u64 == n)
        .ok_or_else(|| ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["num_key_value_heads_per_layer".into()],
            expected: format!("{n} head counts (the block count)"),
            found: v.to_string(),
        })?;
    Ok(Some(list))
}

/// Counts as a GGUF INT32 array.
fn int32s(hp: &Hparams, key: &str, v: &[u64]) -> Result<Vec<i32>, ConvertError> {
    v.iter()
        .map(|&x| {
            i32::try_from(x).map_err(|_| {
                ConvertError::out_of_range(&hp.path, key.to_string(), x, "at most i32::MAX")
            })
        })
        .collect()
}

/// `hidden_size / num_attention_heads`, refused for zero heads.
fn head_size(hp: &Hparams) -> Result<u64, ConvertError> {
    let heads = hp.req_u64(&["num_attention_heads"])?;
    if heads == 0 {
        return Err(ConvertError::NotACount {
            key: "num_attention_heads".into(),
            value: "0".into(),
        });
    }
    Ok(hp.req_u64(&["hidden_size"])? / heads)
}

/// `DeciModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    if let Some(layers) = layers(hp)? {
        if let Some(theta) = hp.rope.get("rope_theta").and_then(Json::as_f64) {
            p.f32(rope::FREQ_BASE, theta);
        }
        let col = |f: fn(&Layer) -> u64| layers.iter().map(f).collect::<Vec<u64>>();
        p.i32s(
            attention::HEAD_COUNT_KV,
            int32s(hp, "head_count_kv", &col(|l| l.kv_heads))?,
        );
        p.i32s(
            attention::HEAD_COUNT,
            int32s(hp, "head_count", &col(|l| l.heads))?,
        );
        p.i32s(
            llm::FEED_FORWARD_LENGTH,
            int32s(hp, "feed_forward_length", &col(|l| l.ffn))?,
        );
        let n = p.block_count()?;
        p.u32(llm::BLOCK_COUNT, n)?;
        p.req_u32(llm::CONTEXT_LENGTH, &["max_position_embeddings"])?;
        p.req_u32(llm::EMBEDDING_LENGTH, &["hidden_size"])?;
        let eps = hp.req_f64(&["rms_norm_eps"])?;
        p.f32(attention::LAYERNORM_RMS_EPS, eps);
        let d = head_size(hp)?;
        p.u32(attention::KEY_LENGTH, d)?;
        p.u32(attention::VALUE_LENGTH, d)?;
        p.file_type();
    } else {
        p.generic()?;
        if let Some(kv) = kv_per_layer(hp)? {
            p.i32s(attention::HEAD_COUNT_KV, int32s(hp, "head_count_kv", &kv)?);
        }
    }
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let rope_dim = match hp.find_u64(&["head_dim"])? {
        Some(d) => d,
        None => head_size(hp)?,
    };
    p.u32(rope::DIMENSION_COUNT, rope_dim)
}

/// The block id of a layer tensor (`model.layers.{bid}.…`).
fn block_id(name: &str) -> Option<usize> {
    name.strip_prefix("model.layers.")?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// `DeciModel.modify_tensors`: q and k (weights and biases) permuted with the layer's head
/// counts: q by its heads, k by its KV heads (the heads when none are given).
fn permute(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let is = |proj: &str| {
        name.ends_with(&format!("{proj}.weight")) || name.ends_with(&format!("{proj}.bias"))
    };
    let (q, k) = (is("q_proj"), is("k_proj"));
    if !q && !k {
        return Ok(Modified::Pass(name, expr));
    }
    let mut n_head = hp.req_u64(&["num_attention_heads"])?;
    let mut n_kv = hp.find_u64(&["num_key_value_heads"])?;
    if let Some(bid) = block_id(&name) {
        if let Some(kv) = kv_per_layer(hp)? {
            n_kv = kv.get(bid).copied();
        } else if let Some(layers) = layers(hp)? {
            if let Some(l) = layers.get(bid) {
                n_kv = Some(l.kv_heads);
                n_head = l.heads;
            }
        }
    }
    let heads = if q { n_head } else { n_kv.unwrap_or(n_head) };
    let expr = expr.permute_heads(&name, heads)?;
    Ok(Modified::Pass(name, expr))
}

/// `DeciModel.generate_extra_tensors`: Llama's Llama 3 `rope_freqs`, after the class's
/// check that the low and high frequency wavelengths differ.
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    let rp = hp.rope_full();
    let is_llama3 = rp
        .get("rope_type")
        .and_then(Json::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("llama3"));
    if is_llama3 {
        let num = |k: &str, d: f64| rp.get(k).and_then(Json::as_f64).unwrap_or(d);
        let old = num("original_max_position_embeddings", 8192.0);
        if old / num("low_freq_factor", 1.0) == old / num("high_freq_factor", 4.0) {
            return Err(ConvertError::UnsupportedFeature {
                arch: hp.arch.clone(),
                feature: "a llama3 rope whose low and high frequency wavelengths are equal \
                          (the reference asserts they differ)"
                    .into(),
            });
        }
    }
    llama::rope_freqs(hp)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::{ffn_width, layers, Layer};
    use crate::hf::config::from_json;

    /// A one-dict scaled rope is refused (the tokenizer cannot be loaded); a plain or
    /// linear one, or none, is not.
    #[test]
    fn deci_scaled_rope_refused() {
        use super::tokenizer_config_fails as fails;
        assert!(fails(
            &json!({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}})
        ));
        assert!(fails(
            &json!({"rope_scaling": {"type": "yarn", "factor": 2.0}})
        ));
        assert!(fails(
            &json!({"rope_parameters": {"rope_type": "longrope"}})
        ));
        assert!(!fails(
            &json!({"rope_scaling": {"type": "linear", "factor": 2.0}})
        ));
        assert!(!fails(
            &json!({"rope_scaling": null, "rope_theta": 10000.0})
        ));
        assert!(!fails(&json!({})));
    }

    /// The class's FFN widths: Nemotron-51B's multipliers at 8192 wide.
    #[test]
    fn deci_ffn_width() {
        assert_eq!(ffn_width(1.3125, 8192), Some(7168));
        assert_eq!(ffn_width(2.5, 32), Some(256));
        assert_eq!(ffn_width(0.0, 32), Some(0));
        assert_eq!(ffn_width(f64::NAN, 32), None);
    }

    /// Normal, linear and attention-free layers, and a dummy FFN.
    #[test]
    fn deci_block_configs() {
        let block = |g: serde_json::Value, linear: bool, mult: serde_json::Value| {
            json!({"attention": {"n_heads_in_group": g, "replace_with_linear": linear},
                   "ffn": {"ffn_mult": mult}})
        };
        let cfg_n = |blocks: Vec<serde_json::Value>, n: usize| {
            from_json(
                json!({"architectures": ["DeciLMForCausalLM"], "hidden_size": 32,
                       "num_attention_heads": 4, "num_hidden_layers": n,
                       "block_configs": blocks}),
                PathBuf::from("config.json"),
            )
            .unwrap()
        };
        let cfg = |blocks: Vec<serde_json::Value>| {
            let n = blocks.len();
            cfg_n(blocks, n)
        };
        let hp = cfg(vec![
            block(json!(2), false, json!(2.5)),
            block(json!(null), true, json!(1)),
            block(json!(null), false, json!(null)),
        ]);
        let l = layers(&hp).unwrap().unwrap();
        assert_eq!(
            l,
            [
                Layer {
                    heads: 4,
                    kv_heads: 2,
                    ffn: 256
                },
                Layer {
                    heads: 4,
                    kv_heads: 0,
                    ffn: 256
                },
                Layer {
                    heads: 0,
                    kv_heads: 0,
                    ffn: 0
                },
            ]
        );
        // The first multiplier must be a float, a group positive, the list one per block.
        assert!(layers(&cfg(vec![block(json!(2), false, json!(2))])).is_err());
        assert!(layers(&cfg(vec![block(json!(0), false, json!(2.0))])).is_err());
        assert!(layers(&cfg_n(vec![block(json!(2), false, json!(2.0))], 2)).is_err());
    }
}
