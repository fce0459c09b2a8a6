//! NVIDIA Puzzle: `NemotronHPuzzleForCausalLM` (`conversion/nemotron.py`'s
//! `NemotronHPuzzleModel`, a Nemotron-H subclass), arch `nemotron_h_moe`.
//!
//! Remote code (`model_type` `nemotron_h_puzzle`): config.json is read as written. Its
//! `block_configs` list (one object per block: `block_type`, and for MoE blocks
//! `moe_intermediate_size` and `num_experts_per_tok`) is the block count and the block
//! pattern (`layers_block_type`), whatever `num_hidden_layers` says; a truthy
//! `hybrid_override_pattern` still wins as the pattern, as in Nemotron-H. Attention blocks
//! are those of type `attention` / `full_attention` (`*` in a string pattern); every other
//! block counts as an SSM one (the class keeps Granite 4's `_ssm_layers`, so MoE and MLP
//! blocks take the Mamba-2 path, which maps their names only). A model without SSM blocks
//! is written as Granite's (`granitemoe` when the config names `num_experts_per_tok`).
//!
//! The class is always the MoE variant: Nemotron-H's MoE tensor steps apply whatever the
//! config says. The published checkpoint names the trunk `model.*` (renamed `backbone.*`)
//! and the router bias `e_score_correction_bias` (renamed `e_score_correction.bias`); the
//! MTP head (`mtp.*`) is dropped, and `--mtp` / `--no-mtp` are refused.
//!
//! Hparams: Granite 4's hybrid keys, the key/value lengths `head_dim`, then the per-block
//! lists `feed_forward_length` and `expert_feed_forward_length` (each block's
//! `moe_intermediate_size`, 0 when absent or falsy) and `expert_used_count` (its
//! `num_experts_per_tok`), then the router keys and the required `moe_latent_size`.

use ggufkit::gguf::keys::llm;
use serde_json::{json, Map, Value as Json};

use super::granite_hybrid::find;
use super::nemotron_h::{self, Pattern, NEMOTRON_EXPERTS, NEMOTRON_H};
use super::{granite, llama, Arch, Hooks, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `NemotronHPuzzleForCausalLM` (arch `nemotron_h_moe`; Granite's without SSM blocks).
pub const NEMOTRON_H_PUZZLE: Arch = Arch {
    hf_names: &["NemotronHPuzzleForCausalLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "nemotron_h_moe",
    vocab: VocabKind::Own(nemotron_h::set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: NEMOTRON_H.tensors,
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        experts: &[NEMOTRON_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: llama::rope_freqs,
    hooks: Hooks {
        gguf_arch: Some(gguf_arch),
        adjust: Some(adjust),
        ..Hooks::NONE
    },
};

/// The `block_configs` list (required).
fn block_configs(hp: &Hparams) -> Result<&Vec<Json>, ConvertError> {
    match hp.get("block_configs") {
        Some(Json::Array(a)) => Ok(a),
        None => Err(hp.missing(&["block_configs"])),
        Some(v) => Err(ConvertError::wrong_type(
            &hp.path,
            "block_configs",
            "a list of block objects",
            v,
        )),
    }
}

/// One block's object.
fn block<'a>(hp: &Hparams, i: usize, v: &'a Json) -> Result<&'a Map<String, Json>, ConvertError> {
    v.as_object().ok_or_else(|| {
        ConvertError::wrong_type(&hp.path, format!("block_configs[{i}]"), "an object", v)
    })
}

/// The constructor's rewrite: `num_hidden_layers` is the number of blocks and
/// `layers_block_type` their `block_type`s.
fn adjust(hp: &mut Hparams) -> Result<(), ConvertError> {
    let blocks = block_configs(hp)?;
    let mut types = Vec::with_capacity(blocks.len());
    for (i, v) in blocks.iter().enumerate() {
        let t = block(hp, i, v)?
            .get("block_type")
            .ok_or_else(|| hp.missing(&[&format!("block_configs[{i}].block_type")]))?;
        types.push(t.clone());
    }
    let n = types.len();
    hp.map.insert("num_hidden_layers".into(), json!(n));
    hp.map
        .insert("layers_block_type".into(), Json::Array(types));
    Ok(())
}

/// The attention blocks (Nemotron-H's `get_attn_layers`) and the others (Granite 4's
/// `_ssm_layers`).
fn layers(hp: &Hparams) -> Result<(Vec<u64>, Vec<u64>), ConvertError> {
    let n = hp.block_count()?;
    let attn: Vec<u64> = match nemotron_h::pattern(hp)? {
        None => Vec::new(),
        Some(p) => {
            p.check_len(hp, n)?;
            match p {
                Pattern::Chars(c) => (0..n).filter(|i| c[*i as usize] == '*').collect(),
                Pattern::Names(v) => (0..n)
                    .filter(|i| matches!(v[*i as usize].as_str(), "attention" | "full_attention"))
                    .collect(),
            }
        }
    };
    let ssm = (0..n).filter(|i| !attn.contains(i)).collect();
    Ok((attn, ssm))
}

/// `general.architecture`: Granite's when no block is an SSM one.
fn gguf_arch(hp: &Hparams) -> &'static str {
    if let Ok((_, ssm)) = layers(hp) {
        if ssm.is_empty() {
            let experts = find(hp, &["num_experts_per_tok", "num_experts_per_token"])
                .is_some_and(granite::truthy);
            return if experts { "granitemoe" } else { "granite" };
        }
    }
    "nemotron_h_moe"
}

/// The MTP head (`mtp.*`) is dropped; then Nemotron-H's filter.
fn filter(name: &str) -> Option<String> {
    if name.starts_with("mtp.") {
        return None;
    }
    nemotron_h::filter(name)
}

/// `NemotronHPuzzleModel.modify_tensors`: the published names renamed, then Nemotron-H's
/// MoE steps with this class's block lists.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let mut name = match name.strip_prefix("model.") {
        Some(rest) => format!("backbone.{rest}"),
        None => name,
    };
    if let Some(stem) = name.strip_suffix("mixer.gate.e_score_correction_bias") {
        name = format!("{stem}mixer.gate.e_score_correction.bias");
    }
    nemotron_h::modify(hp, name, expr, true, layers)
}

/// A block's integer setting, 0 when absent or falsy (`bc.get(key) or 0`).
fn per_block(hp: &Hparams, key: &str) -> Result<Json, ConvertError> {
    let mut out = Vec::new();
    for (i, v) in block_configs(hp)?.iter().enumerate() {
        let x = match block(hp, i, v)?.get(key) {
            None | Some(Json::Null) | Some(Json::Bool(false)) => 0,
            Some(x) => json_u64(x).ok_or_else(|| {
                ConvertError::wrong_type(
                    &hp.path,
                    format!("block_configs[{i}].{key}"),
                    "an integer",
                    x,
                )
            })?,
        };
        out.push(Json::from(x));
    }
    Ok(Json::Array(out))
}

/// `NemotronHPuzzleModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let (attn, ssm) = layers(hp)?;
    nemotron_h::hybrid_params(p, &attn, !ssm.is_empty())?;
    nemotron_h::head_lengths(p)?;
    let ffn = per_block(hp, "moe_intermediate_size")?;
    let used = per_block(hp, "num_experts_per_tok")?;
    p.u32_or_list(llm::FEED_FORWARD_LENGTH, &ffn)?;
    p.u32_or_list(llm::EXPERT_FEED_FORWARD_LENGTH, &ffn)?;
    p.u32_or_list(llm::EXPERT_USED_COUNT, &used)?;
    nemotron_h::router_params(p)?;
    // Required: a null size fails the reference when the file is written.
    let latent = match hp.get("moe_latent_size") {
        None => return Err(hp.missing(&["moe_latent_size"])),
        Some(v) => json_u64(v).ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "moe_latent_size", "an integer", v)
        })?,
    };
    p.u32(llm::MOE_LATENT_SIZE, latent)
}
