//! `GPTRefactForCausalLM` (arch `refact`, `RefactModel(TextModel)` in `conversion/refact.py`).
//! The checkpoints ship remote code, so the config is read as config.json gives it.
//!
//! GPT-2's tensor names with RMS norms and ALiBi: a separate query projection, a fused
//! `attn.kv` of one key head then one value head (multi-query), and a fused
//! `mlp.gate_up_proj` of gate then up rows. The FFN width is the class's own: two thirds of
//! four times `n_embd`, rounded up to a multiple of 256. The vocabulary is GPT-2 BPE plus a
//! second special vocabulary with the fill-in-the-middle ids fixed (prefix 1, middle 2,
//! suffix 3) where the files give none, and `eot` as the files give it.

use ggufkit::gguf::keys::{attention, llm};

use super::{keep, no_extra, Arch, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The Refact class.
pub const REFACT: Arch = Arch {
    hf_names: &["GPTRefactForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "refact",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(split),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The fill-in-the-middle ids the class sets (`eot` only from the files).
const FIM: &[(&str, i128)] = &[("prefix", 1), ("suffix", 3), ("middle", 2)];

/// `RefactModel.set_vocab`: GPT-2 BPE, then the special vocabulary of the FIM types and
/// `eot` with the fixed ids.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let outcome = b.gpt2()?;
    b.fixed_special_tokens(&["prefix", "suffix", "middle", "eot"], FIM)?;
    Ok(outcome)
}

/// The class's FFN width: `256 * ceil(int(2 * 4 * n_embd / 3) / 256)`.
fn ff_dim(hp: &Hparams) -> Result<u64, ConvertError> {
    let n_embd = hp.req_u64(&["n_embd"])?;
    let too_big = || ConvertError::NotACount {
        key: "n_embd".into(),
        value: n_embd.to_string(),
    };
    let hidden = n_embd.checked_mul(8).ok_or_else(too_big)? / 3;
    hidden.div_ceil(256).checked_mul(256).ok_or_else(too_big)
}

/// `RefactModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let ff = ff_dim(hp)?;
    p.req_u32(llm::CONTEXT_LENGTH, &["n_positions"])?;
    p.req_u32(llm::EMBEDDING_LENGTH, &["n_embd"])?;
    p.u32(llm::FEED_FORWARD_LENGTH, ff)?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(attention::HEAD_COUNT, &["n_head"])?;
    p.u32(attention::HEAD_COUNT_KV, 1)?;
    let eps = hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    p.file_type();
    Ok(())
}

/// The first decimal part of a tensor name (the reference's block id).
fn block_id(name: &str) -> Option<&str> {
    name.split('.')
        .find(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
}

/// `RefactModel.modify_tensors`: `attn.kv` split into one key head and the value rows,
/// `attn.q` named directly, `mlp.gate_up_proj` split at the FFN width into gate and up.
/// The hparams are read for every tensor, as the class does.
fn split(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let ff = ff_dim(hp)?;
    let n_head = hp.req_u64(&["n_head"])?;
    let n_embd = hp.req_u64(&["n_embd"])?;
    if n_head == 0 {
        return Err(ConvertError::NotACount {
            key: "n_head".into(),
            value: "0".into(),
        });
    }
    let head_dim = n_embd / n_head;
    let Some(bid) = block_id(&name) else {
        return Ok(Modified::Pass(name, expr));
    };
    let p = format!("transformer.h.{bid}.");
    let b = format!("blk.{bid}.");
    let rest = |e: &Expr, at: u64| e.shape().first().copied().unwrap_or(0).saturating_sub(at);
    if name == format!("{p}attn.kv.weight") {
        let n = rest(&expr, head_dim);
        let k = expr.clone().narrow(&name, 0, 0, head_dim)?;
        let v = expr.narrow(&name, 0, head_dim, n)?;
        return Ok(Modified::Out(vec![
            (format!("{b}attn_k.weight"), k),
            (format!("{b}attn_v.weight"), v),
        ]));
    }
    if name == format!("{p}attn.q.weight") {
        return Ok(Modified::Out(vec![(format!("{b}attn_q.weight"), expr)]));
    }
    if name == format!("{p}mlp.gate_up_proj.weight") {
        let n = rest(&expr, ff);
        let gate = expr.clone().narrow(&name, 0, 0, ff)?;
        let up = expr.narrow(&name, 0, ff, n)?;
        return Ok(Modified::Out(vec![
            (format!("{b}ffn_gate.weight"), gate),
            (format!("{b}ffn_up.weight"), up),
        ]));
    }
    Ok(Modified::Pass(name, expr))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::{block_id, ff_dim};
    use crate::hf::config::from_json;

    /// Two thirds of four times n_embd, truncated, rounded up to 256 (Refact-1.6B: 5632).
    #[test]
    fn refact_ff_dim() {
        let hp = |n: u64| {
            let cfg = json!({"architectures": ["GPTRefactForCausalLM"], "n_embd": n});
            from_json(cfg, PathBuf::from("config.json")).unwrap()
        };
        assert_eq!(ff_dim(&hp(2048)).unwrap(), 5632);
        assert_eq!(ff_dim(&hp(16)).unwrap(), 256);
        assert_eq!(ff_dim(&hp(96)).unwrap(), 256);
        assert_eq!(ff_dim(&hp(97)).unwrap(), 512);
        assert!(ff_dim(&hp(u64::MAX)).is_err());
    }

    /// The block id is the first all-digit part of the name.
    #[test]
    fn refact_block_id() {
        assert_eq!(block_id("transformer.h.12.attn.kv.weight"), Some("12"));
        assert_eq!(block_id("transformer.wte.weight"), None);
    }
}
