//! `ApertusForCausalLM` (arch `apertus`, `ApertusModel(LlamaModel)` in `conversion/llama.py`).
//!
//! Llama's vocabulary path, hparams and Llama-3 `rope_freqs` tensor, but the q/k rows are
//! not permuted. The MLP has no gate (its activation is xIELU): the per-layer activation
//! scalars `mlp.act_fn.{alpha_n,alpha_p,beta,eps}` are not tensors of the GGUF file but
//! four FLOAT32 arrays `xielu.*` (indexed by layer), written while the tensors are processed,
//! each once every layer has given its value.

use ggufkit::gguf::keys::xielu;
use ggufkit::gguf::{ArrayValue, Value};
use serde_json::{json, Map, Value as Json};

use super::{llama, Arch, Extra, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor, DECODER};
use crate::hf::safetensors;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Apertus class.
pub const APERTUS: Arch = Arch {
    hf_names: &["ApertusForCausalLM"],
    model_types: &[ModelType {
        name: "apertus",
        hf_classes: &["ApertusForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 131072,
            "hidden_size" => 4096,
            "intermediate_size" => 14336,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "max_position_embeddings" => 65536,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 12000000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(default_rope),
    }],
    composites: &[],
    gguf: "apertus",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: llama::filter,
    rules: Rules {
        hook: Some(drop_activation),
        ..Rules::NONE
    },
    params: llama::params,
    extra,
    hooks: Hooks::NONE,
};

/// ApertusConfig's default rope: Llama-3 scaling with theta 12e6, when the file has neither
/// `rope_parameters` nor a v4 `rope_scaling` (which would take its place).
fn default_rope(cfg: &mut Map<String, Json>) -> bool {
    let absent = |k: &str| cfg.get(k).is_none_or(Json::is_null);
    if absent("rope_parameters") && absent("rope_scaling") {
        // A file's own `rope_theta` does not replace the default dict's.
        cfg.insert(
            "rope_parameters".into(),
            json!({
                "rope_type": "llama3",
                "rope_theta": 12000000.0,
                "factor": 8.0,
                "original_max_position_embeddings": 8192,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
            }),
        );
    }
    true
}

/// The xIELU parameters, in the order of their keys' first completion for one layer order.
const ACT_PARAMS: [(&str, &str); 4] = [
    (".act_fn.alpha_n", xielu::ALPHA_N),
    (".act_fn.alpha_p", xielu::ALPHA_P),
    (".act_fn.beta", xielu::BETA),
    (".act_fn.eps", xielu::EPS),
];

/// The activation scalars are KVs, not tensors.
fn drop_activation(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if ACT_PARAMS.iter().any(|(s, _)| name.ends_with(s)) {
        return Ok(Modified::Drop);
    }
    Ok(Modified::Pass(name, expr))
}

/// Llama's `rope_freqs`, and the `xielu.*` arrays from the activation tensors: a key is
/// written when its per-layer dict reaches `num_hidden_layers` entries, so the keys appear
/// in the order the tensors complete them and a model lacking a layer's value has none.
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    let mut out = llama::rope_freqs(hp)?;
    let n_layers = hp.req_u64(&["num_hidden_layers"])?;
    let dir = hp.path.parent().unwrap_or(std::path::Path::new("."));
    let shards = safetensors::index_dir(dir)?;
    let mut per: [std::collections::BTreeMap<u64, f32>; 4] = Default::default();
    let mut written: Vec<(usize, usize)> = Vec::new(); // (param, position in early_kvs)
    for t in shards.tensors {
        let Some(i) = ACT_PARAMS.iter().position(|(s, _)| t.name.ends_with(s)) else {
            continue;
        };
        let bid = block_id(&t.name).ok_or_else(|| ConvertError::Tensor {
            name: t.name.clone(),
            problem: "xIELU parameter without a layer number".into(),
        })?;
        if t.n_elements() != 1 {
            return Err(ConvertError::Tensor {
                name: t.name.clone(),
                problem: format!(
                    "an xIELU parameter must have one element, found shape {:?}",
                    t.shape
                ),
            });
        }
        let name = t.name.clone();
        let v = Expr::read(t).eval_f32().map_err(|e| ConvertError::Tensor {
            name,
            problem: e.to_string(),
        })?;
        per[i].insert(bid, v[0]);
        if per[i].len() as u64 == n_layers {
            let kv = (
                ACT_PARAMS[i].1.to_string(),
                Value::Array(ArrayValue::F32(per[i].values().copied().collect())),
            );
            match written.iter().find(|(p, _)| *p == i) {
                Some(&(_, pos)) => out.early_kvs[pos] = kv,
                None => {
                    written.push((i, out.early_kvs.len()));
                    out.early_kvs.push(kv);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::hf::config::from_json;

    /// Without rope settings ApertusConfig's Llama-3 dict applies, with its own theta.
    #[test]
    fn apertus_default_rope() {
        let hp = from_json(
            json!({"architectures": ["ApertusForCausalLM"], "model_type": "apertus",
                "rope_theta": 99.0}),
            "config.json".into(),
        )
        .unwrap();
        assert_eq!(hp.rope["rope_type"], json!("llama3"));
        assert_eq!(hp.rope["rope_theta"], json!(12000000.0));
        assert_eq!(hp.map["num_key_value_heads"], json!(32));
    }
}
