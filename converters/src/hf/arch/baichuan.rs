//! `BaichuanForCausalLM` / `BaiChuanForCausalLM` (arch `baichuan`, `BaichuanModel` in
//! `conversion/baichuan.py`).
//!
//! Remote code (no transformers config class: the config is read as written). A Llama
//! layout whose attention input is one fused `W_pack` matrix [q; k; v]: it is cut in
//! three equal parts, and q and k get the rotary permutation with Baichuan's own head
//! count rule (`n_head / n_head_kv` heads when they differ, not Llama's `n_head_kv`). The
//! 13B checkpoints (ALiBi, no rope keys) convert alike: llama.cpp picks ALiBi from the
//! block count. The hparams are the generic block, the tensor layout and the rope
//! dimension count `hidden_size / num_attention_heads`; the vocabulary is SentencePiece.
//!
//! The reference converts no Baichuan checkpoint: for every tensor but `W_pack` its
//! `modify_tensors` hands the mapped name back to itself, which maps it to itself again,
//! without end (Python's `RecursionError`). Such a tensor is refused here with a typed
//! error, so every checkpoint is refused as the reference refuses it, before any file is
//! written.

use ggufkit::gguf::keys::{llm, rope};

use super::{keep, no_extra, Arch, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The Baichuan class (both spellings of its HF name).
pub const BAICHUAN: Arch = Arch {
    hf_names: &["BaichuanForCausalLM", "BaiChuanForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "baichuan",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnQkv]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(split_w_pack),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `BaichuanModel.set_vocab`: SentencePiece, required.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model("Baichuan's vocabulary is SentencePiece")?;
    Ok((b.sentencepiece(model)?, None))
}

/// `BaichuanModel.set_gguf_parameters`: the generic block, the tensor layout, the rope
/// dimensions.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.string(llm::TENSOR_DATA_LAYOUT, "Meta AI original pth");
    let hidden = p.hp.req_u64(&["hidden_size"])?;
    let heads = p.hp.req_u64(&["num_attention_heads"])?;
    if heads == 0 {
        return Err(p.hp.missing(&["num_attention_heads"]));
    }
    p.u32(rope::DIMENSION_COUNT, hidden / heads)
}

/// The head count Baichuan's permutation reshapes by: `n_head // n_head_kv` when a KV head
/// count is given and differs (the class's rule, kept as it is), else `n_head`.
fn permute_heads(n_head: u64, n_head_kv: Option<u64>) -> Option<u64> {
    match n_head_kv {
        Some(kv) if kv != n_head => n_head.checked_div(kv),
        _ => Some(n_head),
    }
}

/// `BaichuanModel.modify_tensors`: `W_pack` becomes q, k (both permuted) and v, each a
/// third of its rows.
fn split_w_pack(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let Some(layer) = name
        .strip_prefix("model.layers.")
        .and_then(|r| r.strip_suffix(".self_attn.W_pack.weight"))
        .filter(|b| b.parse::<u64>().is_ok())
    else {
        return Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature: format!(
                "tensor {name}: the reference's BaichuanModel.modify_tensors recurses without \
                 end on every tensor but W_pack (RecursionError), so it converts no Baichuan \
                 checkpoint"
            ),
        });
    };
    let heads = hp.req_u64(&["num_attention_heads"])?;
    let kv = match hp.find(&["num_key_value_heads"]) {
        None => Some(heads),
        Some(_) => hp.find_u64(&["num_key_value_heads"])?,
    };
    let rows = expr.shape().first().copied().unwrap_or(0);
    let r = rows / 3;
    let bad = |what: &str| ConvertError::Tensor {
        name: name.clone(),
        problem: format!("cannot permute W_pack's {what} rows: the head count is 0"),
    };
    let q_heads = permute_heads(heads, Some(heads))
        .filter(|&n| n > 0)
        .ok_or_else(|| bad("q"))?;
    let k_heads = permute_heads(heads, kv)
        .filter(|&n| n > 0)
        .ok_or_else(|| bad("k"))?;
    let part = |i: u64| expr.clone().narrow(&name, 0, i * r, r);
    let out = vec![
        (
            format!("blk.{layer}.attn_q.weight"),
            part(0)?.permute_heads(&name, q_heads)?,
        ),
        (
            format!("blk.{layer}.attn_k.weight"),
            part(1)?.permute_heads(&name, k_heads)?,
        ),
        (format!("blk.{layer}.attn_v.weight"), part(2)?),
    ];
    Ok(Modified::Out(out))
}

#[cfg(test)]
mod tests {
    use super::permute_heads;

    #[test]
    fn kv_heads_divide_the_head_count_when_they_differ() {
        assert_eq!(permute_heads(32, None), Some(32));
        assert_eq!(permute_heads(32, Some(32)), Some(32));
        assert_eq!(permute_heads(8, Some(2)), Some(4));
        assert_eq!(permute_heads(8, Some(0)), None);
    }
}
