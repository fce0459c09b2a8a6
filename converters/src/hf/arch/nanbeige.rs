//! `NanbeigeForCausalLM` (arch `nanbeige`, `NanbeigeModel(LlamaModel)` in
//! `conversion/nanbeige.py`).
//!
//! Remote code (no transformers config class: the config is read as written). Everything
//! is Llama's (vocabulary path, q/k permutation, hparams, the Llama-3 `rope_freqs` tensor),
//! plus the looped block stack's two KVs: `num_loops` (Python's `int(x or 1)`, at least 1)
//! and `skip_loop_final_norm` (Python's truthiness, default false). Both head counts must
//! be in the config (Llama's tensor step looks them up without a default).

use ggufkit::gguf::keys::llm;
use serde_json::Value as Json;

use super::deepseek2::truthy;
use super::{llama, Arch, Hooks, Modified, QkPermute, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Nanbeige class.
pub const NANBEIGE: Arch = Arch {
    hf_names: &["NanbeigeForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "nanbeige",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: llama::filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        hook: Some(require_head_counts),
        ..Rules::NONE
    },
    params,
    extra: llama::rope_freqs,
    hooks: Hooks::NONE,
};

/// `LlamaModel.modify_tensors` looks both head counts up for every tensor, without a
/// default: a config without `n_heads` / `num_attention_heads` or without `n_kv_heads` /
/// `num_key_value_heads` (no config class fills them in here) is refused at the first
/// tensor, as the reference's lookup fails.
fn require_head_counts(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    for keys in [
        &["n_heads", "num_attention_heads"][..],
        &["n_kv_heads", "num_key_value_heads"][..],
    ] {
        if hp.find(keys).is_none() {
            return Err(hp.missing(keys));
        }
    }
    Ok(Modified::Pass(name, expr))
}

/// `NanbeigeModel.set_gguf_parameters`: Llama's, then the loop count and the final-norm
/// flag.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    llama::params(p)?;
    let raw = p.hp.find(&["num_loops"]);
    let loops = num_loops(raw).ok_or_else(|| ConvertError::BadHparam {
        path: p.hp.path.clone(),
        keys: vec!["num_loops".into()],
        expected: "an integer (Python's int())".into(),
        found: raw.map_or_else(String::new, Json::to_string),
    })?;
    p.u32(llm::NUM_LOOPS, loops)?;
    let skip = truthy(p.hp.find(&["skip_loop_final_norm"]));
    p.bool(llm::SKIP_LOOP_FINAL_NORM, skip);
    Ok(())
}

/// `int(hparams.get("num_loops", 1) or 1)`, raised to 1 when below: absent, null, false, 0
/// and `""` give 1; a float is truncated toward zero; a string holding an integer is read.
/// `None` for a value Python's `int` refuses.
fn num_loops(v: Option<&Json>) -> Option<u64> {
    let n: i128 = if !truthy(v) {
        1
    } else {
        match v? {
            Json::Bool(_) => 1,
            Json::Number(n) => match n.as_i64() {
                Some(i) => i128::from(i),
                None => match n.as_u64() {
                    Some(u) => i128::from(u),
                    None => {
                        let f = n.as_f64()?;
                        if !f.is_finite() {
                            return None;
                        }
                        f.trunc() as i128
                    }
                },
            },
            Json::String(s) => s.trim().parse::<i128>().ok()?,
            _ => return None,
        }
    };
    Some(u64::try_from(n.max(1)).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::num_loops;
    use serde_json::json;

    #[test]
    fn num_loops_follows_pythons_int_or_one() {
        assert_eq!(num_loops(None), Some(1));
        assert_eq!(num_loops(Some(&json!(null))), Some(1));
        assert_eq!(num_loops(Some(&json!(0))), Some(1));
        assert_eq!(num_loops(Some(&json!(-3))), Some(1));
        assert_eq!(num_loops(Some(&json!(true))), Some(1));
        assert_eq!(num_loops(Some(&json!(4))), Some(4));
        assert_eq!(num_loops(Some(&json!(2.9))), Some(2));
        assert_eq!(num_loops(Some(&json!(" 3 "))), Some(3));
        assert_eq!(num_loops(Some(&json!("x"))), None);
        assert_eq!(num_loops(Some(&json!([1]))), None);
    }
}
