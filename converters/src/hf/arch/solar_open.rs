//! `SolarOpenForCausalLM` (arch `glm4moe`, `SolarOpenModel` in `conversion/glm.py`).
//!
//! GLM-4.5's MoE decoder as converted for GLM-4.5 (its hparams, expert stacking and
//! next-token-prediction blocks; no separate MTP export), with its own vocabulary: GPT-2
//! BPE whose eos and eot are the added token `<|endoftext|>`, unk `<unk>` and bos
//! `<|startoftext|>`, where the special-token files leave them unset.

use super::glm4moe::{self, GLM_EXPERTS};
use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// Solar Open.
pub const SOLAR_OPEN: Arch = Arch {
    hf_names: &["SolarOpenForCausalLM"],
    model_types: &[ModelType {
        name: "solar_open",
        hf_classes: &["SolarOpenForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 196608,
            "hidden_size" => 4096,
            "num_hidden_layers" => 48,
            "num_attention_heads" => 64,
            "num_key_value_heads" => 8,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 1000000.0,
            "tie_word_embeddings" => false,
            "attention_bias" => false,
            "moe_intermediate_size" => 1280,
            "num_experts_per_tok" => 8,
            "n_shared_experts" => 1,
            "n_routed_experts" => 128,
            "routed_scaling_factor" => 1.0,
            "n_group" => 1,
            "topk_group" => 1,
            "norm_topk_prob" => true,
            "head_dim" => 128,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "glm4moe",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: glm4moe::GLM4MOE_TENSORS,
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[GLM_EXPERTS],
        nextn_blocks: true,
        ..Rules::NONE
    },
    params: glm4moe::params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `SolarOpenModel.set_vocab`.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.gpt2_with_added_specials(|find| {
        let eos = find("<|endoftext|>")?;
        Ok(vec![
            ("eos", eos),
            ("eot", eos),
            ("unk", find("<unk>")?),
            ("bos", find("<|startoftext|>")?),
        ])
    })
}
