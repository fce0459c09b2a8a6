//! `SmallThinkerForCausalLM` (arch `smallthinker`, `SmallThinkerModel` in
//! `conversion/smallthinker.py`).
//!
//! Remote code (no transformers config class: the config is read as written). Llama
//! attention without the q/k permutation; each block's FFN is a routed MoE whose per-expert
//! `block_sparse_moe.experts.{x}.{down,gate,up}` are stacked (in that order) and whose
//! router is `block_sparse_moe.primary_router`. The hparams are the generic block, then the
//! class's own expert keys (count, used count, expert FFN size, which is also written as
//! the FFN size), the gating function (softmax when `moe_primary_router_apply_softmax` is
//! true, else sigmoid), and `sliding_window_size` when `sliding_window_layout` has a
//! non-zero entry. The vocabulary is GPT-2 BPE.

use ggufkit::gguf::keys::{attention, llm};
use serde_json::Value as Json;

use super::deepseek2::truthy;
use super::{keep, no_extra, Arch, Experts, Hooks, Rules};
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `ExpertGatingFuncType.SOFTMAX`.
const GATING_SOFTMAX: u64 = 1;
/// `ExpertGatingFuncType.SIGMOID`.
const GATING_SIGMOID: u64 = 2;

/// SmallThinker's per-expert `down`/`gate`/`up`.
const SMALLTHINKER_EXPERTS: Experts = Experts {
    marker: "experts",
    count_keys: &[
        "moe_num_primary_experts",
        "num_local_experts",
        "num_experts",
    ],
    parts: &["down", "gate", "up"],
    expert_name: "model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.block_sparse_moe.experts.{w}.weight",
};

/// The SmallThinker class.
pub const SMALLTHINKER: Arch = Arch {
    hf_names: &["SmallThinkerForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "smallthinker",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[
            Tensor::AttnQkv,
            Tensor::FfnGateInp,
            Tensor::FfnGateExp,
            Tensor::FfnDownExp,
            Tensor::FfnUpExp,
        ],
    ],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[SMALLTHINKER_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `SmallThinkerModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    if let Some(n) = hp.find_u64(&["moe_num_primary_experts"])? {
        p.u32(llm::EXPERT_COUNT, n)?;
    }
    if let Some(n) = hp.find_u64(&["moe_num_active_primary_experts"])? {
        p.u32(llm::EXPERT_USED_COUNT, n)?;
    }
    if let Some(ff) = hp.find_u64(&["moe_ffn_hidden_size"])? {
        p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, ff)?;
        p.u32(llm::FEED_FORWARD_LENGTH, ff)?;
    }
    let softmax = truthy(hp.find(&["moe_primary_router_apply_softmax"]));
    let gating = if softmax {
        GATING_SOFTMAX
    } else {
        GATING_SIGMOID
    };
    p.u32(llm::EXPERT_GATING_FUNC, gating)?;
    let layout = hp.find(&["sliding_window_layout"]);
    if truthy(layout) && layout.is_some_and(has_nonzero) {
        let size = hp.find(&["sliding_window_size"]);
        if truthy(size) {
            p.req_u32(attention::SLIDING_WINDOW, &["sliding_window_size"])?;
        }
    }
    Ok(())
}

/// Whether iterating the value (as Python's `for i in layout`) meets an item `!= 0`: a
/// list's non-zero, non-false entry; any item of a non-empty string or object (keys are
/// strings, never equal to 0).
fn has_nonzero(v: &Json) -> bool {
    match v {
        Json::Array(items) => items.iter().any(|i| match i {
            Json::Number(n) => n.as_f64() != Some(0.0),
            Json::Bool(b) => *b,
            _ => true,
        }),
        Json::String(s) => !s.is_empty(),
        Json::Object(o) => !o.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::has_nonzero;
    use serde_json::json;

    #[test]
    fn a_layout_has_a_sliding_layer_when_an_entry_is_not_zero() {
        assert!(has_nonzero(&json!([0, 1, 0])));
        assert!(!has_nonzero(&json!([0, 0])));
        assert!(!has_nonzero(&json!([false, 0.0])));
        assert!(has_nonzero(&json!([true])));
        assert!(!has_nonzero(&json!([])));
    }
}
