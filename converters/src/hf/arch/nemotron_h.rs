//! Nemotron-H: `NemotronHForCausalLM` (`conversion/nemotron.py`'s `NemotronHModel`, a
//! Granite 4 hybrid subclass), arch `nemotron_h`, or `nemotron_h_moe` when the config names
//! `num_experts_per_tok` (which transformers' `NemotronHConfig` always fills in).
//!
//! Layers follow `hybrid_override_pattern` (`M` Mamba-2, `*` attention, `-` relu2 MLP, `E`
//! routed experts with a shared one) or transformers' `layers_block_type` list
//! (`linear_attention`, `full_attention`, `mlp`, `moe`), whose length is the block count.
//! Hparams: Granite 4's (KV heads per layer, no rope: context 2^20), the SSM inner size
//! `mamba_num_heads * mamba_head_dim`, key/value lengths `head_dim`, the FFN size per layer
//! (the MLP or expert size on the layers the pattern marks as such: `-` or `E` in a string,
//! only `moe` in a list), and for the MoE variant the expert counts, sizes, `norm_topk_prob`,
//! `routed_scaling_factor`, `n_group` and `moe_latent_size`. Attention q/k get Llama's
//! permutation; Mamba-2 tensors Mamba-2's reshapes; routed experts (`up_proj`, `down_proj`)
//! are stacked. The MoE variant's next-token-prediction head (`mtp.layers.0`: enorm, hnorm,
//! eh_proj and an attention mixer; `mtp.layers.1`: the experts, `norm` as the post-attention
//! norm and `final_layernorm` as the shared head norm) becomes one block after the config's
//! when `num_nextn_predict_layers` is 1. The vocabulary is GPT-2 BPE padded to a multiple of 8.

use ggufkit::gguf::keys::{attention, llm, mla, rope, ssm};
use serde_json::{json, Map, Value as Json};

use super::granite_hybrid::{find, granite_ffn, hybrid_tail, req};
use super::mamba::{mamba2_tensor, MAMBA2_TENSORS};
use super::{
    granite, llama, Arch, Experts, HeadDim, Hooks, ModelType, Modified, MtpExport, QkPermute, Rules,
};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::tensors::{permute_qk, Entry};
use crate::hf::tokenizer::{PadMultiple, VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

/// `NemotronHForCausalLM` (arch `nemotron_h_moe`, or `nemotron_h`: see [`gguf_arch`]).
pub const NEMOTRON_H: Arch = Arch {
    hf_names: &["NemotronHForCausalLM"],
    model_types: &[ModelType {
        name: "nemotron_h",
        hf_classes: &["NemotronHForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 131072,
            "hidden_size" => 4096,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 8,
            "head_dim" => 128,
            "max_position_embeddings" => 4096,
            "intermediate_size" => 21504,
            "ssm_state_size" => 128,
            "mamba_num_heads" => 128,
            "mamba_head_dim" => 64,
            "n_groups" => 8,
            "conv_kernel" => 4,
            "expand" => 2,
            "n_routed_experts" => 8,
            "n_shared_experts" => 1,
            "moe_intermediate_size" => 7688,
            "moe_shared_expert_intermediate_size" => 7688,
            "moe_latent_size" => serde_json::Value::Null,
            "num_experts_per_tok" => 2,
            "routed_scaling_factor" => 1.0,
            "n_group" => 1,
            "topk_group" => 1,
            "norm_topk_prob" => true,
            "num_nextn_predict_layers" => 0,
            "layer_norm_epsilon" => 1e-5,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(prepare),
    }],
    composites: &[],
    gguf: "nemotron_h_moe",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    // gguf-py's `nemotron_h_moe` list (a superset of `nemotron_h`'s).
    tensors: &[
        MAMBA2_TENSORS,
        &[
            Tensor::AttnQkv,
            Tensor::AttnQ,
            Tensor::AttnK,
            Tensor::AttnV,
            Tensor::AttnOut,
            Tensor::FfnDown,
            Tensor::FfnUp,
            Tensor::FfnGateInp,
            Tensor::FfnUpExp,
            Tensor::FfnDownExp,
            Tensor::FfnLatentDown,
            Tensor::FfnLatentUp,
            Tensor::FfnDownShexp,
            Tensor::FfnUpShexp,
            Tensor::FfnExpProbsB,
            Tensor::AttnPostNorm,
            Tensor::NextnEhProj,
            Tensor::NextnEnorm,
            Tensor::NextnHnorm,
            Tensor::NextnSharedHeadNorm,
        ],
    ],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        experts: &[NEMOTRON_EXPERTS],
        mtp: Some(mtp_entries),
        mtp_export: Some(MtpExport {
            raw_names: true,
            is_mtp: |_, name| Ok(name.starts_with("mtp.")),
            shared: &[
                "backbone.embeddings.weight",
                "backbone.norm_f.weight",
                "lm_head.weight",
                "lm_head.weight_scale",
                "lm_head.weight_scale_2",
                "lm_head.weight_scale_inv",
                "lm_head.input_scale",
                "lm_head.input_global_scale",
                "lm_head.weight_global_scale",
                "lm_head.weight_packed",
            ],
        }),
        ..Rules::NONE
    },
    params,
    extra: llama::rope_freqs,
    hooks: Hooks {
        gguf_arch: Some(gguf_arch),
        ..Hooks::NONE
    },
};

/// The MoE variant's routed experts (`up_proj`, `down_proj`), stacked down first.
pub(super) const NEMOTRON_EXPERTS: Experts = Experts {
    marker: "mixer.experts",
    count_keys: &["n_routed_experts"],
    parts: &["down_proj", "up_proj"],
    expert_name: "backbone.layers.{bid}.mixer.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `NemotronHConfig.__post_init__` as `to_dict()` shows it: the `mamba_`-prefixed legacy
/// names renamed, `hybrid_override_pattern` turned into the `layers_block_type` list (and
/// dropped), legacy layer names remapped, `num_hidden_layers` dropped (a property),
/// `mtp_layers_block_type` defaulted. `false` (AutoConfig fails) for unknown pattern
/// characters or layer types.
fn prepare(cfg: &mut Map<String, Json>) -> bool {
    for (old, new) in [
        ("mamba_n_groups", "n_groups"),
        ("mamba_d_conv", "conv_kernel"),
        ("mamba_expand", "expand"),
    ] {
        if let Some(v) = cfg.remove(old) {
            cfg.insert(new.into(), v);
        }
    }
    let remap = |t: &str| -> Option<&'static str> {
        match t {
            "M" | "mamba" | "linear_attention" => Some("linear_attention"),
            "*" | "attention" | "full_attention" => Some("full_attention"),
            "-" | "mlp" => Some("mlp"),
            "E" | "moe" => Some("moe"),
            _ => None,
        }
    };
    let pattern = cfg.remove("hybrid_override_pattern");
    let types: Option<Vec<&'static str>> = match (cfg.get("layers_block_type"), &pattern) {
        (Some(Json::Array(a)), _) => a.iter().map(|t| t.as_str().and_then(remap)).collect(),
        (Some(v), _) if !v.is_null() => return false,
        (_, Some(Json::String(p))) => p.chars().map(|c| remap(&c.to_string())).collect(),
        (_, Some(_)) => return false,
        _ => Some(vec!["linear_attention", "moe", "full_attention", "mlp"]),
    };
    let Some(types) = types else {
        return false;
    };
    cfg.insert("layers_block_type".into(), json!(types));
    cfg.remove("num_hidden_layers");
    match cfg.get("mtp_layers_block_type") {
        None | Some(Json::Null) => {
            cfg.insert(
                "mtp_layers_block_type".into(),
                json!(["full_attention", "moe"]),
            );
        }
        Some(Json::Array(a)) => {
            let Some(m) = a
                .iter()
                .map(|t| t.as_str().and_then(remap))
                .collect::<Option<Vec<_>>>()
            else {
                return false;
            };
            cfg.insert("mtp_layers_block_type".into(), json!(m));
        }
        Some(_) => return false,
    }
    true
}

/// `NemotronHModel.filter_tensors`: PEFT's `model.layers.*.mixer.` names are the
/// checkpoint's `backbone.layers.`; then Granite 4's filter.
pub(super) fn filter(name: &str) -> Option<String> {
    let renamed;
    let name = if name.starts_with("model.layers.") && name.contains(".mixer.") {
        renamed = name.replacen("model.layers.", "backbone.layers.", 1);
        renamed.as_str()
    } else {
        name
    };
    granite::filter(&super::mamba::mamba2_filter(name)?)
}

/// The MoE variant: the config names `num_experts_per_tok`.
fn is_moe(hp: &Hparams) -> bool {
    hp.get("num_experts_per_tok").is_some()
}

/// The layer pattern: `hybrid_override_pattern` when truthy, else `layers_block_type`.
pub(super) enum Pattern {
    Chars(Vec<char>),
    Names(Vec<String>),
}

impl Pattern {
    /// Refused unless the pattern has one entry per block (`n`), as the reference asserts.
    pub(super) fn check_len(&self, hp: &Hparams, n: u64) -> Result<(), ConvertError> {
        let len = match self {
            Pattern::Chars(c) => c.len(),
            Pattern::Names(v) => v.len(),
        };
        if len as u64 != n {
            return Err(ConvertError::format(
                &hp.path,
                None,
                format!("the layer pattern has {len} entries, not the {n} blocks"),
            ));
        }
        Ok(())
    }
}

pub(super) fn pattern(hp: &Hparams) -> Result<Option<Pattern>, ConvertError> {
    let v = match hp.get("hybrid_override_pattern") {
        Some(v) if granite::truthy(v) => v,
        _ => match hp.get("layers_block_type") {
            None | Some(Json::Null) => return Ok(None),
            Some(v) => v,
        },
    };
    match v {
        Json::String(s) => Ok(Some(Pattern::Chars(s.chars().collect()))),
        Json::Array(a) => Ok(Some(Pattern::Names(
            a.iter()
                .map(|t| t.as_str().unwrap_or_default().to_string())
                .collect(),
        ))),
        _ => Err(ConvertError::wrong_type(
            &hp.path,
            "layer pattern",
            "a string or a list",
            v,
        )),
    }
}

/// The block layout the class computes in its constructor.
struct Layout {
    /// `num_hidden_layers` (the pattern's length).
    n: u64,
    attn: Vec<u64>,
    ssm: Vec<u64>,
    mlp: Vec<u64>,
    /// The block of the next-token-prediction head, if kept.
    mtp: Option<u64>,
}

fn layout(hp: &Hparams) -> Result<Layout, ConvertError> {
    let n = hp
        .find_u64(&["num_hidden_layers"])?
        .ok_or_else(|| hp.missing(&["num_hidden_layers"]))?;
    let moe = is_moe(hp);
    let pat = pattern(hp)?;
    let pick = |f: &dyn Fn(char, &str) -> bool| -> Vec<u64> {
        match &pat {
            None => Vec::new(),
            Some(Pattern::Chars(c)) => (0..c.len() as u64)
                .filter(|i| f(c[*i as usize], ""))
                .collect(),
            Some(Pattern::Names(v)) => (0..v.len() as u64)
                .filter(|i| f('\0', &v[*i as usize]))
                .collect(),
        }
    };
    if let Some(p) = &pat {
        p.check_len(hp, n)?;
    }
    let mut attn = pick(&|c, s| c == '*' || matches!(s, "attention" | "full_attention"));
    let ssm = pick(&|c, s| c == 'M' || matches!(s, "mamba" | "linear_attention"));
    let mut mlp = pick(&|c, s| c == if moe { 'E' } else { '-' } || s == "moe");
    let mut mtp = None;
    // --no-mtp: no MTP block (`_mtp_bid` stays None).
    if moe && hp.mtp != Mtp::Drop {
        let nextn = match hp.get("num_nextn_predict_layers") {
            None | Some(Json::Null) => 0,
            Some(v) => json_u64(v).ok_or_else(|| {
                ConvertError::wrong_type(&hp.path, "num_nextn_predict_layers", "a count", v)
            })?,
        };
        if nextn > 1 {
            return Err(ConvertError::Unsupported(
                "Nemotron-H with more than one next-token-prediction layer (the reference \
                 converts num_nextn_predict_layers == 1 only)"
                    .into(),
            ));
        }
        if nextn == 1 {
            mtp = Some(n);
            attn.push(n);
            mlp.push(n);
        }
    }
    Ok(Layout {
        n,
        attn,
        ssm,
        mlp,
        mtp,
    })
}

/// `general.architecture`: `nemotron_h_moe` for the MoE variant, else `nemotron_h`; a model
/// whose every layer is attention is Granite's (`granitemoe` when it names experts).
pub fn gguf_arch(hp: &Hparams) -> &'static str {
    if let Ok(l) = layout(hp) {
        let all_attn = (0..l.n).all(|i| l.attn.contains(&i));
        if all_attn {
            let experts = find(hp, &["num_experts_per_tok", "num_experts_per_token"])
                .is_some_and(granite::truthy);
            return if experts { "granitemoe" } else { "granite" };
        }
    }
    if is_moe(hp) {
        "nemotron_h_moe"
    } else {
        "nemotron_h"
    }
}

/// The constructor's block count and its MTP renames (`modify_tensors`): `mtp.layers.0.*`
/// and `mtp.layers.1.*` become block `num_hidden_layers` (`enorm`, `hnorm`, `eh_proj` as the
/// next-token-prediction tensors, layer 1's `norm` as the post-attention norm and
/// `final_layernorm` as the shared head norm, everything else under `backbone.layers.N.`);
/// their output types are still chosen with blocks 0 and 1, as the reference's are.
fn mtp_entries(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    let len = match hp.get("layers_block_type") {
        Some(Json::Array(a)) => Some(a.len()),
        Some(Json::String(s)) => Some(s.chars().count()),
        _ => None,
    };
    if let Some(len) = len {
        hp.map.insert("num_hidden_layers".into(), json!(len));
    }
    let l = layout(hp)?;
    let Some(bid) = l.mtp else {
        if hp.mtp == Mtp::Only {
            return Err(ConvertError::Unsupported(
                "--mtp was requested, but this model does not contain a supported MTP head".into(),
            ));
        }
        return Ok(entries);
    };
    hp.extra_blocks = 1;
    let mut out = entries;
    for e in &mut out {
        let special = match e.name.as_str() {
            "mtp.layers.0.enorm.weight" => Some("enorm.weight"),
            "mtp.layers.0.hnorm.weight" => Some("hnorm.weight"),
            "mtp.layers.0.eh_proj.weight" => Some("eh_proj.weight"),
            "mtp.layers.1.norm.weight" => Some("post_attention_layernorm.weight"),
            "mtp.layers.1.final_layernorm.weight" => Some("shared_head.norm.weight"),
            _ => None,
        };
        let original = block_id(&e.name);
        if let Some(s) = special {
            e.name = format!("model.layers.{bid}.{s}");
            e.type_bid = Some(original);
            continue;
        }
        let rest = e
            .name
            .strip_prefix("mtp.layers.0.")
            .or_else(|| e.name.strip_prefix("mtp.layers.1."));
        if let Some(rest) = rest {
            e.name = format!("backbone.layers.{bid}.{rest}");
            e.type_bid = Some(original);
        }
    }
    Ok(out)
}

fn terr(name: &str, problem: String) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem,
    }
}

/// `self.d_inner`: `num_heads * d_model` (`mamba_num_heads * mamba_head_dim`).
fn d_inner(hp: &Hparams) -> Result<u64, ConvertError> {
    let d_model = req(hp, &["mamba_head_dim", "hidden_size", "d_model"])?;
    let heads = req(hp, &["num_heads"])?;
    heads.checked_mul(d_model).ok_or_else(|| {
        ConvertError::out_of_range(
            &hp.path,
            "num_heads * mamba_head_dim (the SSM inner size)",
            format!("{heads} * {d_model}"),
            "a product that fits 64 bits",
        )
    })
}

/// `NemotronHModel.modify_tensors`.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    modify(hp, name, expr, is_moe(hp), |hp| {
        let l = layout(hp)?;
        Ok((l.attn, l.ssm))
    })
}

/// `NemotronHModel.modify_tensors` for a class whose MoE flag is `moe` and whose attention
/// and SSM block lists (`_attn_layers`, `_ssm_layers`) `layers` gives.
pub(super) fn modify(
    hp: &Hparams,
    name: String,
    expr: Expr,
    moe: bool,
    layers: impl Fn(&Hparams) -> Result<(Vec<u64>, Vec<u64>), ConvertError>,
) -> Result<Modified, ConvertError> {
    let bid = block_id(&name);
    if moe && bid.is_some() {
        let direct = |n: String, e: Expr| Ok(Modified::Out(vec![(n, e)]));
        if name.ends_with("mixer.gate.e_score_correction.bias") {
            return direct(name, expr);
        }
        if name.ends_with("mixer.dt_bias") {
            return direct(name.replace("dt_bias", "dt.bias"), expr);
        }
        if name.ends_with("mixer.conv1d.weight") {
            let e = expr.squeeze(&name)?;
            return direct(name, e);
        }
        if name.ends_with("mixer.A_log") || name.ends_with("mixer.D") {
            let count = expr.shape().iter().product::<u64>();
            let e = if name.ends_with("mixer.A_log") {
                expr.neg_exp()
            } else {
                expr
            };
            let e = e.reshape(&name, vec![count, 1])?;
            return direct(name, e);
        }
        if name.ends_with("mixer.norm.weight") {
            let n_group = req(hp, &["n_groups", "num_groups"])?;
            let count = expr.shape().iter().product::<u64>();
            if n_group == 0 || !count.is_multiple_of(n_group) {
                return Err(terr(
                    &name,
                    format!("{count} values cannot be split into {n_group} groups"),
                ));
            }
            let e = expr.reshape(&name, vec![n_group, count / n_group])?;
            return direct(name, e);
        }
        if name.contains("mixer.experts") {
            // Stacked by the experts rule.
            return Ok(Modified::Pass(name, expr));
        }
    }
    // GraniteHybridModel.modify_tensors, with this class's layer lists.
    if name.ends_with("block_sparse_moe.input_linear.weight") || name.contains("shared_mlp") {
        return granite_ffn(hp, name, expr);
    }
    let Some(bid) = bid else {
        return Ok(Modified::Pass(name, expr));
    };
    let (attn, ssm) = layers(hp)?;
    if ssm.contains(&bid) {
        let n_group = req(hp, &["n_groups", "num_groups"])?;
        let expr = mamba2_tensor(hp, d_inner(hp)?, n_group, &name, expr)?;
        return Ok(Modified::Pass(name, expr));
    }
    if !attn.contains(&bid) {
        return Ok(Modified::Pass(name, expr));
    }
    // Llama's q/k permutation, on attention layers only.
    let expr = permute_qk(hp, &name, expr, QkPermute::WeightsAndBiases)?;
    Ok(Modified::Pass(name, expr))
}

pub(super) fn count_of(hp: &Hparams, key: &str) -> Result<u64, ConvertError> {
    hp.find_u64(&[key])?.ok_or_else(|| hp.missing(&[key]))
}

/// `NemotronHModel.set_gguf_parameters` (Granite 4's first).
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let l = layout(hp)?;
    hybrid_params(p, &l.attn, !l.ssm.is_empty())?;
    head_lengths(p)?;
    ffn_params(p, &l, hp.block_count()?)
}

/// `GraniteHybridModel.set_gguf_parameters` (Granite 4's keys first) with the class's
/// attention blocks `attn`; `has_ssm` when any block is an SSM one.
pub(super) fn hybrid_params(
    p: &mut Params,
    attn: &[u64],
    has_ssm: bool,
) -> Result<(), ConvertError> {
    granite::moe_params(p)?;
    let hp = p.hp;
    let total = hp.block_count()?;
    let d_inner = d_inner(hp)?;
    p.u32(ssm::CONV_KERNEL, req(hp, &["conv_kernel", "d_conv"])?)?;
    p.u32(
        ssm::STATE_SIZE,
        req(
            hp,
            &["state_size", "d_state", "state_dim", "ssm_state_size"],
        )?,
    )?;
    p.u32(ssm::GROUP_COUNT, req(hp, &["n_groups", "num_groups"])?)?;
    p.u32(ssm::INNER_SIZE, d_inner)?;
    p.u32(ssm::TIME_STEP_RANK, req(hp, &["n_heads", "num_heads"])?)?;
    let n_kv = req(hp, &["num_key_value_heads", "n_head_kv"])?;
    if let Some(v) = hp.get("attn_rotary_emb").filter(|v| granite::truthy(v)) {
        let d = json_u64(v)
            .ok_or_else(|| ConvertError::format(&hp.path, None, format!("attn_rotary_emb: {v}")))?;
        p.u32(rope::DIMENSION_COUNT, d)?;
    }
    let per_layer: Vec<Json> = (0..total)
        .map(|i| Json::from(if attn.contains(&i) { n_kv } else { 0 }))
        .collect();
    p.u32_or_list(attention::HEAD_COUNT_KV, &Json::Array(per_layer))?;
    hybrid_tail(hp, p, has_ssm, d_inner)
}

/// The key and value lengths: `head_dim` (or `attention_head_dim`).
pub(super) fn head_lengths(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let head_dim = hp
        .find_u64(&["head_dim"])?
        .or(hp.find_u64(&["attention_head_dim"])?)
        .ok_or_else(|| hp.missing(&["head_dim", "attention_head_dim"]))?;
    p.u32(attention::KEY_LENGTH, head_dim)?;
    p.u32(attention::VALUE_LENGTH, head_dim)
}

/// The rest of `NemotronHModel.set_gguf_parameters`: the FFN size per layer and the MoE keys.
fn ffn_params(p: &mut Params, l: &Layout, total: u64) -> Result<(), ConvertError> {
    let hp = p.hp;
    let ff = if is_moe(hp) {
        count_of(hp, "moe_intermediate_size")?
    } else {
        req(hp, &["intermediate_size", "n_inner", "hidden_dim"])?
    };
    let per_layer: Vec<Json> = (0..total)
        .map(|i| Json::from(if l.mlp.contains(&i) { ff } else { 0 }))
        .collect();
    p.u32_or_list(llm::FEED_FORWARD_LENGTH, &Json::Array(per_layer))?;
    if is_moe(hp) {
        let used = count_of(hp, "num_experts_per_tok")?;
        p.u32(llm::EXPERT_USED_COUNT, used)?;
        p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, ff)?;
        router_params(p)?;
        p.u32(llm::EXPERT_USED_COUNT, used)?;
        if let Some(latent) = hp.find_u64(&["moe_latent_size"])? {
            p.u32(llm::MOE_LATENT_SIZE, latent)?;
        }
    }
    if l.mtp.is_some() {
        p.u32(
            mla::NEXTN_PREDICT_LAYERS,
            count_of(hp, "num_nextn_predict_layers")?,
        )?;
    }
    Ok(())
}

/// The MoE keys both classes write in this order: the shared expert's size, the expert and
/// shared-expert counts, `norm_topk_prob`, `routed_scaling_factor` and `n_group`.
pub(super) fn router_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.u32(
        llm::EXPERT_SHARED_FEED_FORWARD_LENGTH,
        count_of(hp, "moe_shared_expert_intermediate_size")?,
    )?;
    p.u32(llm::EXPERT_COUNT, count_of(hp, "n_routed_experts")?)?;
    p.u32(llm::EXPERT_SHARED_COUNT, count_of(hp, "n_shared_experts")?)?;
    match hp.get("norm_topk_prob") {
        Some(Json::Bool(b)) => p.bool(mla::EXPERT_WEIGHTS_NORM, *b),
        v => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "norm_topk_prob",
                "a boolean",
                format!("{v:?}"),
            ))
        }
    }
    let scale = hp
        .find_f64(&["routed_scaling_factor"])?
        .ok_or_else(|| hp.missing(&["routed_scaling_factor"]))?;
    p.f32(mla::EXPERT_WEIGHTS_SCALE, scale);
    p.u32(llm::EXPERT_GROUP_COUNT, count_of(hp, "n_group")?)
}

/// `NemotronHModel.set_vocab`: `vocab_size` padded to a multiple of 8 (whatever the config
/// says), then the GPT-2 BPE path from tokenizer.json (required: the class loads it through
/// AutoTokenizer and writes a `gpt2` vocabulary).
pub(super) fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    if !b.dir().has_file(crate::hf::model_dir::TOKENIZER_JSON) {
        return Err(ConvertError::Unsupported(format!(
            "{}: Nemotron-H needs tokenizer.json (its converter writes a GPT-2 BPE vocabulary)",
            b.dir().display()
        )));
    }
    b.padded(PadMultiple::Always(8), false)
}
