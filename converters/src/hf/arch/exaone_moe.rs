//! `ExaoneMoeForCausalLM` / `ExaoneMoEForCausalLM` (arch `exaone-moe`, `ExaoneMoEModel` in
//! `conversion/exaone.py`; transformers 5.1 renamed the class, both spellings are accepted).
//!
//! K-EXAONE: EXAONE 4's attention, hparams and Llama-3 rope factors, with pre-norms
//! (`input_layernorm`, `post_attention_layernorm` as the FFN norm), `first_k_dense_replace`
//! dense blocks, then routed experts (per-expert `down/gate/up_proj` stacked in that order)
//! with shared experts and the selection bias. The next-token-prediction layers follow the
//! config's (`num_hidden_layers + num_nextn_predict_layers` blocks, always written): a
//! checkpoint's `mtp.layers.{i}.*` become block `num_hidden_layers + i`, and `mtp.fc`,
//! `mtp.pre_fc_norm_embedding`, `mtp.pre_fc_norm_hidden`, `mtp.norm` (the `eh_proj`, `enorm`,
//! `hnorm`, `shared_head.norm` every MTP block shares) are written once per MTP block. The
//! reference cannot stack routed experts inside an MTP layer (its expert buffer is keyed by
//! the checkpoint's layer number): such a checkpoint is refused, as there. GPT-2 BPE
//! vocabulary.

use ggufkit::gguf::keys::{llm, mla};

use super::deepseek2::MOE_NEXTN_TENSORS;
use super::exaone4;
use super::{keep, Arch, Entry, Experts, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// K-EXAONE (MoE).
pub const EXAONE_MOE: Arch = Arch {
    hf_names: &["ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM"],
    model_types: &[ModelType {
        name: "exaone_moe",
        hf_classes: &["ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 102400,
            "hidden_size" => 4096,
            "intermediate_size" => 16384,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 32,
            "max_position_embeddings" => 2048,
            "rms_norm_eps" => 1e-5,
            "bos_token_id" => 1,
            "eos_token_id" => 53,
            "pad_token_id" => 0,
            "tie_word_embeddings" => false,
            "rope_theta" => 10000.0,
            "sliding_window" => 4096,
            "sliding_window_pattern" => 4,
            "first_k_dense_replace" => 1,
            "moe_intermediate_size" => 1024,
            "num_experts" => 64,
            "num_experts_per_tok" => 8,
            "num_shared_experts" => 1,
            "norm_topk_prob" => true,
            "routed_scaling_factor" => 2.5,
            "n_group" => 1,
            "topk_group" => 1,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(exaone4::derive_layer_types),
    }],
    composites: &[],
    gguf: "exaone-moe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        &[
            Tensor::TokenEmbd,
            Tensor::OutputNorm,
            Tensor::Output,
            Tensor::AttnNorm,
            Tensor::AttnQkv,
            Tensor::AttnQ,
            Tensor::AttnQNorm,
            Tensor::AttnK,
            Tensor::AttnKNorm,
            Tensor::AttnV,
            Tensor::AttnOut,
            Tensor::FfnNorm,
            Tensor::FfnGate,
            Tensor::FfnDown,
            Tensor::FfnUp,
        ],
        MOE_NEXTN_TENSORS,
    ],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[EXAONE_EXPERTS],
        nextn_blocks: true,
        mtp: Some(mtp_entries),
        ..Rules::NONE
    },
    params,
    extra: exaone4::extra,
    hooks: Hooks::NONE,
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}`, stacked in that order.
const EXAONE_EXPERTS: Experts = Experts {
    marker: "mlp.experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// The `mtp.*` tensors the MTP blocks share, and the name each takes in every MTP block.
const MTP_SHARED: &[(&str, &str)] = &[
    ("mtp.fc", "eh_proj"),
    ("mtp.pre_fc_norm_embedding", "enorm"),
    ("mtp.pre_fc_norm_hidden", "hnorm"),
    ("mtp.norm", "shared_head.norm"),
];

/// `ExaoneMoEModel.modify_tensors`' renaming of the next-token-prediction tensors.
fn mtp_entries(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    let n_main = hp.req_u64(&["num_hidden_layers"])?;
    let n_blocks = hp.block_count()?;
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        if !e.name.starts_with("mtp.") {
            out.push(e);
            continue;
        }
        // The block number the reference goes on with: the name's first all-digit part.
        let bid = e
            .name
            .split('.')
            .find(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .map(|p| p.parse::<u64>());
        if e.name.contains("layers.") {
            let Some(Ok(bid)) = bid else {
                return Err(ConvertError::Tensor {
                    name: e.name.clone(),
                    problem: "next-token-prediction layer without a usable layer number".into(),
                });
            };
            let name = e.name.replace(
                &format!("mtp.layers.{bid}"),
                &format!("model.layers.{}", bid.saturating_add(n_main)),
            );
            if name.contains("mlp.experts") {
                return Err(ConvertError::Tensor {
                    name: e.name.clone(),
                    problem: "routed experts in a next-token-prediction layer are not \
                              converted (the reference fails on them too)"
                        .into(),
                });
            }
            out.push(Entry {
                name,
                type_bid: Some(Some(bid)),
                ..e
            });
            continue;
        }
        let (stem, suffix) = e.name.rsplit_once('.').unwrap_or((e.name.as_str(), ""));
        let Some((_, to)) = MTP_SHARED.iter().find(|(from, _)| *from == stem) else {
            return Err(ConvertError::Tensor {
                name: e.name.clone(),
                problem: "unknown next-token-prediction tensor".into(),
            });
        };
        for b in n_main..n_blocks {
            out.push(Entry {
                name: format!("model.layers.{b}.{to}.{suffix}"),
                expr: e.expr.clone(),
                dtype: e.dtype,
                fp8_q8: e.fp8_q8,
                type_bid: Some(None),
            });
        }
    }
    Ok(out)
}

/// `ExaoneMoEModel.set_gguf_parameters`: EXAONE 4's block, then the MoE and MTP keys.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    exaone4::params(p)?;
    let hp = p.hp;
    let moe_ff = hp.req_u64(&["moe_intermediate_size"])?;
    let shared = hp.req_u64(&["num_shared_experts"])?;
    p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, moe_ff)?;
    p.u32(llm::EXPERT_SHARED_COUNT, shared)?;
    p.u32(
        llm::EXPERT_SHARED_FEED_FORWARD_LENGTH,
        moe_ff.saturating_mul(shared),
    )?;
    p.f32(
        mla::EXPERT_WEIGHTS_SCALE,
        hp.req_f64(&["routed_scaling_factor"])?,
    );
    p.bool(mla::EXPERT_WEIGHTS_NORM, hp.req_bool(&["norm_topk_prob"])?);
    let dense_key = if hp.get("first_k_dense_replace").is_some() {
        Some("first_k_dense_replace")
    } else if hp.get("first_last_k_dense_replace").is_some() {
        Some("first_last_k_dense_replace")
    } else {
        None
    };
    let dense = match dense_key {
        Some(k) => hp.req_u64(&[k])?,
        None => 0,
    };
    p.u32(llm::LEADING_DENSE_BLOCK_COUNT, dense)?;
    let nextn = hp.find_u64(&["num_nextn_predict_layers"])?.unwrap_or(0);
    p.u32(mla::NEXTN_PREDICT_LAYERS, nextn)?;
    p.rope_scaling_none();
    Ok(())
}
