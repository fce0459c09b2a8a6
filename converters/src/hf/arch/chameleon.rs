//! Chameleon (`ChameleonForConditionalGeneration`, and the obsolete `ChameleonForCausalLM`;
//! `ChameleonModel` in `conversion/chameleon.py`; arch `chameleon`).
//!
//! A Llama decoder with per-head q/k LayerNorms (2-D weights and biases) and a VQ-VAE image
//! tokenizer (`model.vqmodel.*`), which is not converted. The generic hparams plus
//! `swin_norm` (default false); GPT-2 BPE vocabulary.
//!
//! Tensors: q and k rows get Llama's rotary permutation (k with `num_key_value_heads`). The
//! q/k norm weights and biases are rebuilt from their FIRST head's row: that row, read as
//! `[2, head_dim / 2]` and transposed (its two halves interleaved), repeated for every head,
//! where `head_dim` is `hidden_size / heads` with the q heads for q and the KV heads for k.
//! With fewer KV heads than q heads that size is not the row's, and the reference fails on
//! every such checkpoint: so does ggufkit.

use ggufkit::gguf::keys::arch_key;
use ggufkit::gguf::Value;
use serde_json::Value as Json;

use super::{no_extra, Arch, Hooks, ModelType, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::family::HeadDim;
use crate::hf::names::Tensor;
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// Both Chameleon class names (arch `chameleon`).
pub const CHAMELEON: Arch = Arch {
    hf_names: &["ChameleonForConditionalGeneration", "ChameleonForCausalLM"],
    model_types: &[ModelType {
        name: "chameleon",
        hf_classes: &["ChameleonForConditionalGeneration", "ChameleonForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 65536,
            "hidden_size" => 4096,
            "intermediate_size" => 11008,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 32,
            "max_position_embeddings" => 4096,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "bos_token_id" => 1,
            "eos_token_id" => 2,
            "tie_word_embeddings" => false,
            "attention_bias" => false,
            "model_parallel_size" => 1,
            "swin_norm" => false,
            "mlp_bias" => false,
        },
        head_dim: HeadDim::Keep,
        // ChameleonConfig's default is 32 KV heads, not the attention head count; an
        // explicit null stays null.
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "chameleon",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[Tensor::AttnQkv, Tensor::AttnQNorm, Tensor::AttnKNorm],
    ],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(modify),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `ChameleonModel.filter_tensors`: the image tokenizer is not converted.
fn filter(name: &str) -> Option<String> {
    (!name.starts_with("model.vqmodel")).then(|| name.to_string())
}

/// `ChameleonModel.set_gguf_parameters`: the generic block, then `swin_norm`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let swin = match p.hp.get("swin_norm") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &p.hp.path,
                "swin_norm",
                "a boolean",
                v,
            ))
        }
    };
    let key = arch_key(p.arch, "swin_norm");
    p.md.set(key, Value::Bool(swin));
    Ok(())
}

/// A head count from the config (`hparams[...]` / `hparams.get(...)`), `None` when absent
/// or null.
fn count(hp: &Hparams, key: &str) -> Result<Option<u64>, ConvertError> {
    match hp.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => json_u64(v)
            .map(Some)
            .ok_or_else(|| ConvertError::wrong_type(&hp.path, key, "a head count", v)),
    }
}

/// `_reverse_hf_permute(x, n_heads, hidden_size)`: row 0 of `x` read as `[2, head_dim / 2]`
/// (`head_dim = hidden_size // n_heads`), transposed, flattened, repeated `n_heads` times.
fn reverse_hf_permute(
    name: &str,
    expr: Expr,
    n_heads: u64,
    hidden: u64,
) -> Result<Expr, ConvertError> {
    let bad = |problem: String| ConvertError::Tensor {
        name: name.to_string(),
        problem,
    };
    if n_heads == 0 {
        return Err(bad(
            "zero heads: the head size divides by the head count".into()
        ));
    }
    let head_dim = hidden / n_heads;
    let shape = expr.shape().to_vec();
    if shape.len() < 2 {
        return Err(bad(format!(
            "a norm of shape {shape:?}: its first row is not a vector of {head_dim}"
        )));
    }
    let row: u64 = shape[1..].iter().product();
    if row != 2 * (head_dim / 2) {
        return Err(bad(format!(
            "a head row of {row} values cannot be viewed as [2, {}] (head size {hidden} / \
             {n_heads}): the reference fails on this checkpoint",
            head_dim / 2
        )));
    }
    let first = expr
        .narrow(name, 0, 0, 1)?
        .reshape(name, vec![2, head_dim / 2])?
        .transpose(name)?
        .reshape(name, vec![row])?;
    Expr::stack(name, vec![first; n_heads as usize])
}

/// `ChameleonModel.modify_tensors`.
fn modify(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let n_head = hp.req_u64(&["num_attention_heads"])?;
    let n_kv = count(hp, "num_key_value_heads")?;
    let ends = |suffixes: &[&str]| suffixes.iter().any(|s| name.ends_with(s));
    let mut expr = expr;
    if ends(&["q_proj.weight", "q_proj.bias"]) {
        expr = expr.permute_heads(&name, n_head)?;
    }
    if ends(&["k_proj.weight", "k_proj.bias"]) {
        expr = expr.permute_heads(&name, n_kv.unwrap_or(n_head))?;
    }
    let norm_heads = if ends(&["q_norm.weight", "q_norm.bias"]) {
        Some(Some(n_head))
    } else if ends(&["k_norm.weight", "k_norm.bias"]) {
        Some(n_kv)
    } else {
        None
    };
    if let Some(heads) = norm_heads {
        let heads = heads.ok_or_else(|| {
            ConvertError::missing_key(
                &hp.path,
                "num_key_value_heads",
                "Chameleon's k norm is rebuilt per KV head",
            )
        })?;
        let hidden = count(hp, "hidden_size")?.ok_or_else(|| {
            ConvertError::missing_key(
                &hp.path,
                "hidden_size",
                "Chameleon's q/k norms take their head size from it",
            )
        })?;
        expr = reverse_hf_permute(&name, expr, heads, hidden)?;
    }
    Ok(Modified::Pass(name, expr))
}
