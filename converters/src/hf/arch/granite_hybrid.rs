//! Granite 4 hybrids: `GraniteMoeHybridForCausalLM` and `BambaForCausalLM`
//! (`conversion/granite.py`'s `GraniteHybridModel`, a Mamba-2 + Granite-MoE class, arch
//! `granitehybrid`). Bamba's dense FFN (`feed_forward.*`, `pre_ff_layernorm`) maps through
//! the shared table; it alone keeps rope on a hybrid.
//!
//! Layers are Mamba-2 mixers or Granite attention (`layer_types`, else
//! `attn_layer_indices`, else a period and offset); every layer has a Granite FFN: routed
//! experts with a shared one, or only the shared MLP, which is then the dense FFN. The config
//! is read as written; the Mamba hparams carry a `mamba_` prefix, which the class's
//! `find_hparam` tries after the plain keys. Hparams are Granite-MoE's, then the `ssm.*`
//! sizes, the KV-head count per layer (0 on SSM layers), and no rope (context 2^20) unless
//! every layer is attention. The vocabulary is padded to a multiple of 8.

use ggufkit::gguf::keys::{attention, hybrid, llm, rope, ssm};
use serde_json::{Map, Value as Json};

use super::mamba::{mamba2_filter, mamba2_tensor, MAMBA2_TENSORS};
use super::{granite, llama, Arch, HeadDim, Hooks, ModelType, Modified, QkPermute, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::{Params, BLOCK_COUNT_KEYS};
use crate::hf::tensors::permute_qk;
use crate::hf::tokenizer::{PadMultiple, VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// `GraniteMoeHybridForCausalLM` (arch `granitehybrid`).
pub const GRANITE_HYBRID: Arch = Arch {
    hf_names: &["GraniteMoeHybridForCausalLM", "BambaForCausalLM"],
    model_types: &[
        ModelType {
            name: "granitemoehybrid",
            hf_classes: &["GraniteMoeHybridForCausalLM"],
            defaults: &[],
            head_dim: HeadDim::Keep,
            kv_heads_key: None,
            // Mamba2Model reads config.json itself.
            prepare: Some(|_| false),
        },
        ModelType {
            name: "bamba",
            hf_classes: &["BambaForCausalLM"],
            defaults: &[],
            head_dim: HeadDim::Keep,
            kv_heads_key: None,
            // The same class: config.json as written.
            prepare: Some(|_| false),
        },
    ],
    composites: &[],
    gguf: "granitehybrid",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        MAMBA2_TENSORS,
        &[
            Tensor::AttnQkv,
            Tensor::AttnQ,
            Tensor::AttnK,
            Tensor::AttnV,
            Tensor::AttnOut,
            Tensor::FfnNorm,
            Tensor::FfnGateInp,
            Tensor::FfnGateExp,
            Tensor::FfnDownExp,
            Tensor::FfnUpExp,
            Tensor::FfnGateShexp,
            Tensor::FfnUpShexp,
            Tensor::FfnDownShexp,
            Tensor::FfnGate,
            Tensor::FfnDown,
            Tensor::FfnUp,
        ],
    ],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        ..Rules::NONE
    },
    params,
    extra: llama::no_rope_freqs,
    hooks: Hooks {
        gguf_arch: Some(gguf_arch),
        ..Hooks::NONE
    },
};

/// `Mamba2Model.filter_tensors`, then Granite's.
fn filter(name: &str) -> Option<String> {
    granite::filter(&mamba2_filter(name)?)
}

/// The block count from a config dict.
fn blocks(h: &Map<String, Json>) -> u64 {
    BLOCK_COUNT_KEYS
        .iter()
        .find_map(|k| h.get(*k))
        .and_then(json_u64)
        .unwrap_or(0)
}

/// `get_attn_layers`: the attention layers (`layer_types` entries equal to "attention",
/// else `attn_layer_indices`, else every `attn_layer_period`-th from `attn_layer_offset`).
fn attn_layers(h: &Map<String, Json>) -> Result<Vec<u64>, String> {
    let n = blocks(h);
    if let Some(Json::Array(types)) = h.get("layer_types").filter(|v| truthy_list(v)) {
        return Ok((0..types.len() as u64)
            .filter(|i| types[*i as usize].as_str() == Some("attention"))
            .collect());
    }
    if let Some(Json::Array(idx)) = h.get("attn_layer_indices").filter(|v| truthy_list(v)) {
        return idx
            .iter()
            .map(|v| json_u64(v).ok_or_else(|| format!("attn_layer_indices: bad entry {v}")))
            .collect();
    }
    let period = h
        .get("attn_layer_period")
        .and_then(json_u64)
        .filter(|p| *p != 0)
        .ok_or("no layer_types, attn_layer_indices or attn_layer_period")?;
    let offset = h
        .get("attn_layer_offset")
        .and_then(json_u64)
        .ok_or("attn_layer_period without attn_layer_offset")?;
    Ok((0..n).filter(|i| i % period == offset).collect())
}

fn truthy_list(v: &Json) -> bool {
    matches!(v, Json::Array(a) if !a.is_empty())
}

/// The SSM layers: every block that is not an attention layer.
fn ssm_layers(h: &Map<String, Json>) -> Result<Vec<u64>, String> {
    let attn = attn_layers(h)?;
    Ok((0..blocks(h)).filter(|i| !attn.contains(i)).collect())
}

/// `general.architecture`: `granitehybrid`, or for a model without SSM layers (every layer
/// attention) `granitemoe` when it names `num_experts_per_tok` (a truthy value), else
/// `granite`; the tensors and keys stay this class's.
pub fn gguf_arch(hp: &Hparams) -> &'static str {
    if ssm_layers(&hp.map).is_ok_and(|l| l.is_empty()) {
        let experts = hp
            .find(&["num_experts_per_tok", "num_experts_per_token"])
            .is_some_and(granite::truthy);
        return if experts { "granitemoe" } else { "granite" };
    }
    GRANITE_HYBRID.gguf
}

/// Whether a GraniteMoeHybrid config has SSM layers (its vocabulary is then padded to a
/// multiple of 8, else not at all).
fn has_ssm(hparams: &Json) -> bool {
    hparams
        .as_object()
        .and_then(|h| ssm_layers(h).ok())
        .is_some_and(|l| !l.is_empty())
}

fn layout_error(hp: &Hparams, e: String) -> ConvertError {
    ConvertError::format(&hp.path, None, format!("hybrid layer layout: {e}"))
}

/// `find_hparam` of the class: the plain keys, then each with a `mamba_` prefix.
pub(super) fn find<'a>(hp: &'a Hparams, keys: &[&str]) -> Option<&'a Json> {
    hp.find(keys).or_else(|| {
        let prefixed: Vec<String> = keys.iter().map(|k| format!("mamba_{k}")).collect();
        let refs: Vec<&str> = prefixed.iter().map(String::as_str).collect();
        hp.find(&refs)
    })
}

/// [`find`] as a required count.
pub(super) fn req(hp: &Hparams, keys: &[&str]) -> Result<u64, ConvertError> {
    let v = find(hp, keys).ok_or_else(|| hp.missing(keys))?;
    json_u64(v).ok_or_else(|| ConvertError::wrong_type(&hp.path, keys[0], "a count", v))
}

/// `(d_inner, n_group)` as the class computes them (`expand * d_model`).
fn sizes(hp: &Hparams) -> Result<(u64, u64), ConvertError> {
    let d_model = req(hp, &["mamba_head_dim", "hidden_size", "d_model"])?;
    let n_group = req(hp, &["n_groups", "num_groups"])?;
    let expand = req(hp, &["expand", "num_heads"])?;
    let d_inner = expand.checked_mul(d_model).ok_or_else(|| {
        ConvertError::out_of_range(
            &hp.path,
            "expand * mamba_head_dim (the SSM inner size)",
            format!("{expand} * {d_model}"),
            "a product that fits 64 bits",
        )
    })?;
    Ok((d_inner, n_group))
}

/// `GraniteHybridModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    granite::moe_params(p)?;
    let hp = p.hp;
    let (d_inner, n_group) = sizes(hp)?;
    p.u32(ssm::CONV_KERNEL, req(hp, &["conv_kernel", "d_conv"])?)?;
    p.u32(
        ssm::STATE_SIZE,
        req(
            hp,
            &["state_size", "d_state", "state_dim", "ssm_state_size"],
        )?,
    )?;
    p.u32(ssm::GROUP_COUNT, n_group)?;
    p.u32(ssm::INNER_SIZE, d_inner)?;
    p.u32(ssm::TIME_STEP_RANK, req(hp, &["n_heads", "num_heads"])?)?;
    let n_kv = req(hp, &["num_key_value_heads", "n_head_kv"])?;
    let attn = attn_layers(&hp.map).map_err(|e| layout_error(hp, e))?;
    let n = hp.block_count()?;
    let per_layer: Vec<Json> = (0..n)
        .map(|i| Json::from(if attn.contains(&i) { n_kv } else { 0 }))
        .collect();
    if let Some(v) = hp.get("attn_rotary_emb").filter(|v| granite::truthy(v)) {
        let d = json_u64(v)
            .ok_or_else(|| ConvertError::format(&hp.path, None, format!("attn_rotary_emb: {v}")))?;
        p.u32(rope::DIMENSION_COUNT, d)?;
    }
    p.u32_or_list(attention::HEAD_COUNT_KV, &Json::Array(per_layer))?;
    let ssm_count = (0..n).filter(|i| !attn.contains(i)).count();
    hybrid_tail(hp, p, ssm_count > 0, d_inner)?;
    Ok(())
}

/// GraniteHybrid's keys and checks after the layer layout, which Nemotron-H inherits: rope
/// only for Bamba or an all-attention model (else a 2^20 context), and the silu and SSM head
/// size checks.
pub(super) fn hybrid_tail(
    hp: &Hparams,
    p: &mut Params,
    has_ssm: bool,
    d_inner: u64,
) -> Result<(), ConvertError> {
    let bamba = hp.raw["architectures"]
        .as_array()
        .is_some_and(|a| a.iter().any(|x| x == "BambaForCausalLM"));
    let use_rope = bamba || !has_ssm;
    p.bool(hybrid::ROPE_SCALING_FINETUNED, use_rope);
    if !use_rope {
        p.u32(llm::CONTEXT_LENGTH, 1 << 20)?;
    }
    let d_head = find(hp, &["d_head"])
        .and_then(json_u64)
        .filter(|d| *d != 0)
        .unwrap_or(64);
    let act = hp.get("hidden_act");
    if !matches!(act, None | Some(Json::Null)) && act.and_then(Json::as_str) != Some("silu") {
        return Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature: format!(
                "hidden_act {} (only silu is supported)",
                act.unwrap_or(&Json::Null)
            ),
        });
    }
    if !d_inner.is_multiple_of(d_head) {
        return Err(ConvertError::format(
            &hp.path,
            None,
            format!("SSM inner size {d_inner} is not a multiple of the head size {d_head}"),
        ));
    }
    Ok(())
}

/// `GraniteMoeModel.modify_tensors` for the fused expert and shared-MLP projections (a
/// shared MLP without routed experts is the dense FFN).
pub(super) fn granite_ffn(
    hp: &Hparams,
    name: String,
    expr: Expr,
) -> Result<Modified, ConvertError> {
    let bid = block_id(&name).unwrap_or(0);
    let blk = |base: &str| format!("blk.{bid}.{base}.weight");
    if name.ends_with("block_sparse_moe.input_linear.weight") {
        let n_ff = hp.req_u64(&["intermediate_size"])?;
        let (gate, up) = granite::split_gate_up(&name, expr, n_ff)?;
        return Ok(Modified::Out(vec![
            (blk("ffn_gate_exps"), gate),
            (blk("ffn_up_exps"), up),
        ]));
    }
    let has_experts = hp.get("num_local_experts").is_some_and(granite::truthy);
    if name.ends_with("shared_mlp.input_linear.weight") {
        let n_ff = hp.req_u64(&["shared_intermediate_size"])?;
        let (gate, up) = granite::split_gate_up(&name, expr, n_ff)?;
        let (g, u) = if has_experts {
            ("ffn_gate_shexp", "ffn_up_shexp")
        } else {
            ("ffn_gate", "ffn_up")
        };
        return Ok(Modified::Out(vec![(blk(g), gate), (blk(u), up)]));
    }
    if !has_experts && name.ends_with("shared_mlp.output_linear.weight") {
        return Ok(Modified::Out(vec![(blk("ffn_down"), expr)]));
    }
    Ok(Modified::Pass(name, expr))
}

/// `GraniteHybridModel.modify_tensors`.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.ends_with("block_sparse_moe.input_linear.weight") || name.contains("shared_mlp") {
        return granite_ffn(hp, name, expr);
    }
    let Some(bid) = block_id(&name) else {
        return Ok(Modified::Pass(name, expr));
    };
    let ssm = ssm_layers(&hp.map).map_err(|e| layout_error(hp, e))?;
    if ssm.contains(&bid) {
        let (d_inner, n_group) = sizes(hp)?;
        let expr = mamba2_tensor(hp, d_inner, n_group, &name, expr)?;
        return Ok(Modified::Pass(name, expr));
    }
    let attn = attn_layers(&hp.map).map_err(|e| layout_error(hp, e))?;
    if !attn.contains(&bid) {
        return Ok(Modified::Pass(name, expr));
    }
    // Llama's q/k permutation, on attention layers only.
    let expr = permute_qk(hp, &name, expr, QkPermute::WeightsAndBiases)?;
    Ok(Modified::Pass(name, expr))
}

/// `GraniteHybridModel.set_vocab`: Mamba-2's path, padded to a multiple of 8 when the model
/// has SSM layers, else not at all (`pad_vocab_size_multiple` is overridden).
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let multiple = if has_ssm(b.hparams()) { 8 } else { 1 };
    b.padded(PadMultiple::Always(multiple), true)
}
