//! The text model of `Glm5NextForConditionalGeneration` (GLM-5.3-Flash; arch `glm5-next`,
//! `Glm5NextModel` in `conversion/glm.py`).
//!
//! A hybrid of Kimi Delta Attention and DeepSeek-style latent attention, with
//! manifold-constrained hyper-connections (mHC) around every mixer and FFN:
//!
//! - `layer_types` says per block which attention it has: `linear_attention` blocks are KDA
//!   (q/k/v projections with short convolutions written 4-D, the forget gate's `f_a` / `f_b`,
//!   `dt_bias` as the `ssm_dt` bias, `A = -exp(A_log)` over the first `num_attention_heads`
//!   values, beta, the output gate's `g_a` / `g_b`, `o_norm`); the others are MLA without a
//!   rope part ("nope" only: `qk_rope_head_dim` must be 0 and `mla_use_nope` set), with
//!   `kv_b_proj` split per attention head into `k_b` (transposed) and `v_b`, and the DSA
//!   indexer with its k-pool compressor (`index_kpool_compress_gate` / `_ape`). The KV-head
//!   count is written per block: 0 for KDA, 1 (MQA) for MLA and for the MTP blocks;
//! - the hyper-connection parameters (`hc_{attn,ffn}_{fn,base,scale}`) and the compressor's
//!   are written with a `.weight` suffix and, with the KDA decay and time step and the
//!   expert selection bias, kept F32 whatever the outtype;
//! - `first_k_dense_replace` dense blocks, then routed experts (per-expert
//!   `down/gate/up_proj`, stacked in that order) with shared experts, the selection bias and
//!   the SwiGLU clamp (`swiglu_limit`) of every block;
//! - the next-token-prediction blocks (`num_nextn_predict_layers`, numbered after the main
//!   ones) are kept and counted unless `--no-mtp`; `--mtp` writes them alone with the
//!   embedding, the final norm and the head (as GLM-4.5).
//!
//! The hub's config keeps the keys the converter reads beside transformers' own
//! (`linear_attn_config`, `first_k_dense_replace`, `mla_use_nope`); transformers'
//! `Glm5NextTextConfig` fills the per-layer lists and checks the attention sizes, and a config
//! it rejects is read as written. The vocabulary is GLM's (`_set_vocab_glm`).

use ggufkit::gguf::keys::{attention, compressed, indexer, kda, llm, mla, rope, ssm};
use serde_json::{Map, Value as Json};

use super::deepseek2::{split_kv_b_with, MOE_NEXTN_TENSORS};
use super::glm4moe::{is_past_main_layers, GLM_EXPERTS, GLM_MTP_SHARED};
use super::kimi_linear::{kda_conv_and_dt_bias, linear_attn_config};
use super::TextType;
use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Modified, MtpExport, Rules};
use crate::hf::config::{json_u64, Hparams, MAX_BLOCK_COUNT};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{json_truthy, VocabKind, VocabQuirks};
use crate::hf::Mtp;
use crate::ConvertError;

/// `Glm5NextTextConfig`'s `num_hidden_layers` default (the per-layer lists are sized by it).
const DEFAULT_LAYERS: u64 = 45;

/// gguf-py's `glm5-next` tensor list (with the MoE and next-token-prediction tensors of
/// [`MOE_NEXTN_TENSORS`]).
const GLM5_NEXT_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::HcAttnFn,
    Tensor::HcAttnBase,
    Tensor::HcAttnScale,
    Tensor::HcFfnFn,
    Tensor::HcFfnBase,
    Tensor::HcFfnScale,
    Tensor::AttnQ,
    Tensor::AttnK,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::SsmConv1dQ,
    Tensor::SsmConv1dK,
    Tensor::SsmConv1dV,
    Tensor::SsmFA,
    Tensor::SsmFB,
    Tensor::SsmBeta,
    Tensor::SsmA,
    Tensor::SsmGA,
    Tensor::SsmGB,
    Tensor::SsmDt,
    Tensor::SsmNorm,
    Tensor::AttnQA,
    Tensor::AttnQB,
    Tensor::AttnKvAMqa,
    Tensor::AttnKvB,
    Tensor::AttnKB,
    Tensor::AttnVB,
    Tensor::AttnQANorm,
    Tensor::AttnKvANorm,
    Tensor::IndexerKNorm,
    Tensor::IndexerProj,
    Tensor::IndexerAttnK,
    Tensor::IndexerAttnQB,
    Tensor::IndexerCompressorWgate,
    Tensor::IndexerCompressorApe,
    Tensor::FfnNorm,
    Tensor::FfnGate,
    Tensor::FfnDown,
    Tensor::FfnUp,
];

/// GLM-5.3-Flash's text model.
pub const GLM5_NEXT: Arch = Arch {
    hf_names: &["Glm5NextForConditionalGeneration"],
    model_types: &[ModelType {
        name: "glm5_next_text",
        hf_classes: &["Glm5NextForConditionalGeneration"],
        // Glm5NextTextConfig's defaults, under the names `to_dict()` shows.
        defaults: defaults! {
            "vocab_size" => 154880,
            "hidden_size" => 4096,
            "intermediate_size" => 12288,
            "moe_intermediate_size" => 2048,
            "num_hidden_layers" => DEFAULT_LAYERS,
            "num_attention_heads" => 64,
            "n_shared_experts" => 1,
            "n_routed_experts" => 288,
            "routed_scaling_factor" => 2.5,
            "kv_lora_rank" => 512,
            "q_lora_rank" => 1536,
            "qk_rope_head_dim" => 0,
            "v_head_dim" => 256,
            "qk_nope_head_dim" => 256,
            "n_group" => 1,
            "topk_group" => 1,
            "num_experts_per_tok" => 8,
            "norm_topk_prob" => true,
            "max_position_embeddings" => 1048576,
            "rms_norm_eps" => 1e-5,
            "pad_token_id" => 154820,
            "tie_word_embeddings" => false,
            "index_topk" => 2048,
            "index_head_dim" => 128,
            "index_n_heads" => 32,
            "swiglu_limit" => 10.0,
            "linear_head_dim" => 128,
            "linear_num_heads" => 64,
            "linear_conv_kernel_dim" => 4,
            "linear_lower_bound" => -5.0,
            "hc_mult" => 4,
            "hc_eps" => 1e-6,
            "hc_sinkhorn_iters" => 20,
            "index_kpool" => 16,
            "index_kpool_always_select_tail" => true,
        },
        head_dim: HeadDim::CopyOf("qk_rope_head_dim"),
        kv_heads_key: None,
        prepare: Some(prepare),
    }],
    composites: &[("glm5_next", TextType::Fixed("glm5_next_text"))],
    gguf: "glm5-next",
    vocab: VocabKind::Own(super::glm4moe::set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[GLM5_NEXT_TENSORS, MOE_NEXTN_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[GLM_EXPERTS],
        hook: Some(hook),
        nextn_blocks: true,
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp: is_past_main_layers,
            shared: GLM_MTP_SHARED,
        }),
        f32_names: &[
            "hc_attn_",
            "hc_ffn_",
            "indexer_compressor_",
            "ssm_a",
            "ssm_dt",
            "exp_probs_b",
        ],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Glm5NextTextConfig.__post_init__`: null KV heads are the attention heads, the
/// per-layer lists the file leaves out are filled (three dense MLPs then sparse ones; every
/// fourth layer MLA; the indexer types from `index_topk_pattern` or the frequency and
/// offset), `full_attention` is spelled `indexed_attention`, and `head_dim` is the rope
/// head size. `false` where `validate_architecture` raises (AutoConfig then fails and the
/// reference reads config.json as written).
fn prepare(cfg: &mut Map<String, Json>) -> bool {
    // The class raises before anything is kept: a rejected config stays as written.
    let mut filled = cfg.clone();
    if !fill_lists(&mut filled) || !valid_architecture(&filled) {
        return false;
    }
    *cfg = filled;
    true
}

/// The `__post_init__` part of [`prepare`]; `false` where the class itself fails.
fn fill_lists(cfg: &mut Map<String, Json>) -> bool {
    // An absent key takes the class default (64); only a null one copies the heads.
    let heads = cfg
        .get("num_attention_heads")
        .cloned()
        .unwrap_or(Json::from(64));
    match cfg.get("num_key_value_heads") {
        None => {
            cfg.insert("num_key_value_heads".into(), Json::from(64));
        }
        Some(Json::Null) => {
            cfg.insert("num_key_value_heads".into(), heads);
        }
        Some(_) => {}
    }
    let layers = match cfg.get("num_hidden_layers") {
        None => DEFAULT_LAYERS,
        Some(v) => match json_u64(v) {
            Some(n) if n <= MAX_BLOCK_COUNT => n,
            // The class would fail or build an absurd list: leave the lists as they are.
            _ => return true,
        },
    };
    let fill = |cfg: &mut Map<String, Json>, key: &str, f: &dyn Fn(u64) -> Json| {
        if cfg.get(key).is_none_or(Json::is_null) {
            cfg.insert(key.into(), Json::Array((0..layers).map(f).collect()));
        }
    };
    fill(cfg, "mlp_layer_types", &|i| {
        Json::from(if i < 3 { "dense" } else { "sparse" })
    });
    fill(cfg, "layer_types", &|i| {
        Json::from(if i % 4 != 3 {
            "linear_attention"
        } else {
            "indexed_attention"
        })
    });
    if let Some(Json::Array(types)) = cfg.get_mut("layer_types") {
        for t in types.iter_mut() {
            if t.as_str() == Some("full_attention") {
                *t = Json::from("indexed_attention");
            }
        }
    }
    if cfg.get("indexer_types").is_none_or(Json::is_null) {
        match indexer_types(cfg, layers) {
            Some(types) => {
                cfg.insert("indexer_types".into(), Json::Array(types));
            }
            None => return false,
        }
    }
    true
}

/// The indexer type of each layer as the config class derives it: from
/// `index_topk_pattern` (`F` / `S` letters, or a list taken as it is), else layer `i` is
/// full when `max(i - index_skip_topk_offset + 1, 0)` is a multiple of `index_topk_freq`
/// (at least 1; defaults 2 and 1). `None` where the class itself would fail.
fn indexer_types(cfg: &Map<String, Json>, layers: u64) -> Option<Vec<Json>> {
    match cfg.get("index_topk_pattern") {
        Some(Json::String(p)) => {
            return p
                .chars()
                .map(|c| match c {
                    'F' => Some(Json::from("full")),
                    'S' => Some(Json::from("shared")),
                    _ => None,
                })
                .collect();
        }
        Some(Json::Array(a)) => return Some(a.clone()),
        Some(Json::Null) | None => {}
        Some(_) => return None,
    }
    let freq = match cfg.get("index_topk_freq") {
        None => 1,
        Some(v) => v.as_i64()?.max(1),
    };
    let offset = match cfg.get("index_skip_topk_offset") {
        None => 2,
        Some(v) => v.as_i64()?,
    };
    (0..layers)
        .map(|i| {
            let i = i64::try_from(i).ok()?;
            let k = i.checked_sub(offset)?.checked_add(1)?.max(0);
            Some(Json::from(if k % freq == 0 { "full" } else { "shared" }))
        })
        .collect()
}

/// `Glm5NextTextConfig.validate_architecture` (after `head_dim` is set to the rope head
/// size): as many KV heads as attention heads, a positive k-pool dividing the top-k, a
/// q-lora rank, no rope part.
fn valid_architecture(cfg: &Map<String, Json>) -> bool {
    let num = |key: &str, default: i64| -> Option<i64> {
        match cfg.get(key) {
            None => Some(default),
            Some(v) => v.as_i64(),
        }
    };
    let heads = cfg
        .get("num_attention_heads")
        .cloned()
        .unwrap_or(Json::from(64));
    if cfg.get("num_key_value_heads") != Some(&heads) {
        return false;
    }
    let (Some(kpool), Some(topk), Some(rope)) = (
        num("index_kpool", 16),
        num("index_topk", 2048),
        num("qk_rope_head_dim", 0),
    ) else {
        return false;
    };
    if kpool < 1 || topk % kpool != 0 || rope > 0 {
        return false;
    }
    !cfg.get("q_lora_rank").is_some_and(Json::is_null)
}

/// The hyper-connection and k-pool compressor parameters the class writes with a `.weight`
/// suffix (`\.(hc_(attn|ffn)_(fn|base|scale)|index_kpool_compress_(ape|gate))$`).
const WEIGHT_SUFFIXED: &[&str] = &[
    ".hc_attn_fn",
    ".hc_attn_base",
    ".hc_attn_scale",
    ".hc_ffn_fn",
    ".hc_ffn_base",
    ".hc_ffn_scale",
    ".index_kpool_compress_ape",
    ".index_kpool_compress_gate",
];

/// `Glm5NextModel.modify_tensors` (the experts are stacked by the generic step): the tied
/// head dropped, `kv_b_proj` split, the convolutions made 4-D, `A = -exp(A_log)`, `dt_bias`
/// renamed, the mHC and compressor parameters given a `.weight` suffix.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name == "lm_head.weight" && hp.get("tie_word_embeddings").is_some_and(json_truthy) {
        return Ok(Modified::Drop);
    }
    if name.contains(".mlp.experts.") {
        return Ok(Modified::Pass(name, expr));
    }
    if name.ends_with("kv_b_proj.weight") {
        // Split with as many heads as attention heads.
        let mut split = hp.clone();
        let heads = hp.req_u64(&["num_attention_heads"])?;
        split
            .map
            .insert("num_key_value_heads".into(), Json::from(heads));
        let (k, v) = split_kv_b_with(&split, &name, expr, &["v_head_dim"])?;
        return Ok(Modified::Out(vec![
            (name.replace("kv_b_proj", "k_b_proj"), k),
            (name.replace("kv_b_proj", "v_b_proj"), v),
        ]));
    }
    let (name, mut expr) = kda_conv_and_dt_bias(name, expr)?;
    if name.ends_with(".A_log") {
        expr = a_from_log(hp, &name, expr)?;
    }
    if WEIGHT_SUFFIXED.iter().any(|s| name.ends_with(s)) {
        return Ok(Modified::Pass(format!("{name}.weight"), expr));
    }
    Ok(Modified::Pass(name, expr))
}

/// `-exp(A_log.float().flatten()[:num_attention_heads])`, in F32.
fn a_from_log(hp: &Hparams, name: &str, expr: Expr) -> Result<Expr, ConvertError> {
    let n_head = hp.req_u64(&["num_attention_heads"])?;
    let numel: u64 = expr.shape().iter().product();
    let flat = expr.reshape(name, vec![numel])?;
    let flat = if numel > n_head {
        flat.narrow(name, 0, 0, n_head)?
    } else {
        flat
    };
    Ok(flat.float(name)?.neg_exp())
}

/// A required entry of `linear_attn_config`, as a non-negative integer.
fn la_u64(hp: &Hparams, la: &Map<String, Json>, key: &str) -> Result<u64, ConvertError> {
    let v = la
        .get(key)
        .ok_or_else(|| hp.missing(&[&format!("linear_attn_config.{key}")]))?;
    json_u64(v).ok_or_else(|| {
        ConvertError::wrong_type(
            &hp.path,
            format!("linear_attn_config.{key}"),
            "a non-negative integer",
            v,
        )
    })
}

/// A boolean hparam, or `default` when it is absent.
fn flag(hp: &Hparams, key: &str, default: bool) -> Result<bool, ConvertError> {
    match hp.get(key) {
        None => Ok(default),
        Some(Json::Bool(b)) => Ok(*b),
        Some(v) => Err(ConvertError::wrong_type(&hp.path, key, "a boolean", v)),
    }
}

/// Per block: 0 KV heads for a `linear_attention` block, 1 for any other; the blocks past
/// the main ones (next-token prediction) have 1.
fn head_count_kv(hp: &Hparams, blocks: u64) -> Result<Vec<i32>, ConvertError> {
    let types = match hp.get("layer_types") {
        Some(Json::Array(a)) => a,
        None => return Err(hp.missing(&["layer_types"])),
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "layer_types",
                "a list",
                v,
            ))
        }
    };
    let layers = hp.req_u64(&["num_hidden_layers"])?;
    if types.len() as u64 != layers {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "layer_types",
            format!("{} entries", types.len()),
            format!("one per layer (num_hidden_layers {layers})"),
        ));
    }
    let mut kv: Vec<i32> = types
        .iter()
        .map(|t| i32::from(t.as_str() != Some("linear_attention")))
        .collect();
    if blocks > MAX_BLOCK_COUNT {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "block count",
            blocks,
            format!("at most {MAX_BLOCK_COUNT} blocks"),
        ));
    }
    kv.resize((blocks as usize).max(kv.len()), 1);
    Ok(kv)
}

/// The class loads its tokenizer with `AutoTokenizer`, which builds the config with
/// `Glm5NextTextConfig`: a config.json that class rejects (see [`prepare`]) fails there even
/// though the converter itself read it as written.
fn config_class_refusal(hp: &Hparams) -> Result<(), ConvertError> {
    let Some(raw) = hp.raw.as_object() else {
        return Ok(());
    };
    let mut text = match raw.get("model_type").and_then(Json::as_str) {
        Some("glm5_next") => match raw.get("text_config") {
            Some(Json::Object(t)) => t.clone(),
            _ => Map::new(),
        },
        Some("glm5_next_text") => raw.clone(),
        _ => return Ok(()),
    };
    if prepare(&mut text) {
        return Ok(());
    }
    Err(ConvertError::format(
        &hp.path,
        None,
        "Glm5NextTextConfig rejects this config (its KV heads must be the attention heads, \
         its k-pool positive and a divisor of index_topk, its q-lora rank set and its rope \
         part 0, its indexer pattern F/S letters); the class loads its tokenizer with \
         AutoTokenizer, which builds that config, so the reference refuses it",
    ))
}

/// `Glm5NextModel.set_gguf_parameters`, after the refusal of a config the class's tokenizer
/// step cannot load.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    config_class_refusal(p.hp)?;
    // The class drops `head_dim` before the generic keys.
    let mut generic = p.hp.clone();
    generic.map.remove("head_dim");
    p.with_hparams(&generic).generic()?;
    let hp = p.hp;
    let blocks = p.block_count()?;
    p.i32s(attention::HEAD_COUNT_KV, head_count_kv(hp, blocks)?);
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    p.f32(attention::LAYERNORM_EPS, 1e-6);
    let nextn = hp.find_u64(&["num_nextn_predict_layers"])?.unwrap_or(0);
    if hp.mtp != Mtp::Drop && nextn > 0 {
        p.u32(mla::NEXTN_PREDICT_LAYERS, nextn)?;
    }
    kda_params(p)?;
    mla_params(p)?;
    indexer_params(p)?;
    hc_params(p)?;
    moe_params(p, blocks)
}

/// The KDA keys from `linear_attn_config` (whose head count must be the attention heads').
fn kda_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let la = linear_attn_config(hp)?;
    let heads = la_u64(hp, la, "num_heads")?;
    let attn_heads = hp.req_u64(&["num_attention_heads"])?;
    if heads != attn_heads {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "linear_attn_config.num_heads",
            heads,
            format!("num_attention_heads ({attn_heads})"),
        ));
    }
    p.u32(ssm::CONV_KERNEL, la_u64(hp, la, "short_conv_kernel_size")?)?;
    p.u32(kda::HEAD_DIM, la_u64(hp, la, "head_dim")?)?;
    match la.get("gate_lower_bound") {
        None | Some(Json::Null) => {}
        Some(v) => {
            let lb = v.as_f64().ok_or_else(|| {
                ConvertError::wrong_type(
                    &hp.path,
                    "linear_attn_config.gate_lower_bound",
                    "a number",
                    v,
                )
            })?;
            p.f32(kda::GATE_LOWER_BOUND, lb);
        }
    }
    Ok(())
}

/// The nope-only MLA keys.
fn mla_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let rope_dim = hp.req_u64(&["qk_rope_head_dim"])?;
    if !hp.get("mla_use_nope").is_some_and(json_truthy) || rope_dim != 0 {
        return Err(ConvertError::Unsupported(format!(
            "{}: expected nope-only MLA (mla_use_nope set and qk_rope_head_dim 0)",
            hp.path.display()
        )));
    }
    let kv_lora = hp.req_u64(&["kv_lora_rank"])?;
    p.req_u32(mla::Q_LORA_RANK, &["q_lora_rank"])?;
    p.u32(mla::KV_LORA_RANK, kv_lora)?;
    p.u32(rope::DIMENSION_COUNT, 0)?;
    p.u32(attention::KEY_LENGTH, kv_lora)?;
    p.u32(attention::VALUE_LENGTH, kv_lora)?;
    p.req_u32(mla::KEY_LENGTH_MLA, &["qk_nope_head_dim"])?;
    p.req_u32(mla::VALUE_LENGTH_MLA, &["v_head_dim"])
}

/// The DSA indexer with its k-pool compression.
fn indexer_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.req_u32(indexer::HEAD_COUNT, &["index_n_heads"])?;
    p.req_u32(indexer::KEY_LENGTH, &["index_head_dim"])?;
    p.req_u32(indexer::TOP_K, &["index_topk"])?;
    p.req_u32(indexer::KPOOL, &["index_kpool"])?;
    let tail = flag(hp, "index_kpool_always_select_tail", true)?;
    p.bool(indexer::KPOOL_SELECT_TAIL, tail);
    match hp.get("indexer_types") {
        None | Some(Json::Null) => {}
        Some(Json::Array(a)) => {
            let full = a.iter().map(|t| t.as_str() == Some("full")).collect();
            p.bools(indexer::TYPES, full);
        }
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "indexer_types",
                "a list",
                v,
            ))
        }
    }
    Ok(())
}

/// The mHC sizes (`mhc`, when given, must be set).
fn hc_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    if !hp.get("mhc").is_none_or(json_truthy) {
        return Err(ConvertError::Unsupported(format!(
            "{}: mhc is false; the converter expects manifold-constrained hyper-connections",
            hp.path.display()
        )));
    }
    p.req_u32(compressed::HC_COUNT, &["hc_mult"])?;
    p.req_u32(compressed::HC_SINKHORN_ITERATIONS, &["hc_sinkhorn_iters"])?;
    let eps = hp.req_f64(&["hc_eps"])?;
    p.f32(compressed::HC_EPSILON, eps);
    Ok(())
}

/// The MoE keys and the SwiGLU clamp of every block.
fn moe_params(p: &mut Params, blocks: u64) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.req_u32(llm::LEADING_DENSE_BLOCK_COUNT, &["first_k_dense_replace"])?;
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    p.req_u32(llm::EXPERT_SHARED_COUNT, &["n_shared_experts"])?;
    let scale = hp.req_f64(&["routed_scaling_factor"])?;
    p.f32(mla::EXPERT_WEIGHTS_SCALE, scale);
    match hp.get("norm_topk_prob") {
        None => return Err(hp.missing(&["norm_topk_prob"])),
        Some(Json::Bool(b)) => p.bool(mla::EXPERT_WEIGHTS_NORM, *b),
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "norm_topk_prob",
                "a boolean",
                v,
            ))
        }
    }
    match hp.get("swiglu_limit") {
        None | Some(Json::Null) => {}
        Some(v) => {
            let limit = v
                .as_f64()
                .ok_or_else(|| ConvertError::wrong_type(&hp.path, "swiglu_limit", "a number", v))?;
            p.f32s(llm::SWIGLU_CLAMP_EXP, vec![limit as f32; blocks as usize]);
            p.f32s(
                compressed::SWIGLU_CLAMP_SHEXP,
                vec![limit as f32; blocks as usize],
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hp(cfg: Json) -> Hparams {
        crate::hf::config::from_json(cfg, "config.json".into()).unwrap()
    }

    fn text(extra: Json) -> Json {
        let mut t = json!({
            "model_type": "glm5_next_text", "num_hidden_layers": 5, "num_attention_heads": 2,
            "num_key_value_heads": 2, "index_topk": 4, "index_kpool": 2, "q_lora_rank": 8,
        });
        t.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"architectures": ["Glm5NextForConditionalGeneration"], "model_type": "glm5_next",
               "text_config": t})
    }

    #[test]
    fn the_config_class_fills_the_layer_lists() {
        let h = hp(text(json!({})));
        assert_eq!(
            h.get("layer_types"),
            Some(&json!([
                "linear_attention",
                "linear_attention",
                "linear_attention",
                "indexed_attention",
                "linear_attention"
            ]))
        );
        assert_eq!(
            h.get("mlp_layer_types"),
            Some(&json!(["dense", "dense", "dense", "sparse", "sparse"]))
        );
        assert_eq!(
            h.get("indexer_types"),
            Some(&json!(["full", "full", "full", "full", "full"]))
        );
        assert_eq!(h.get("num_key_value_heads"), Some(&json!(2)));
        assert_eq!(h.get("head_dim"), Some(&json!(0)));
        let freq = hp(text(
            json!({"index_topk_freq": 2, "index_skip_topk_offset": 1,
                                   "layer_types": ["full_attention", "linear_attention",
                                                   "linear_attention", "linear_attention",
                                                   "linear_attention"]}),
        ));
        assert_eq!(
            freq.get("indexer_types"),
            Some(&json!(["full", "shared", "full", "shared", "full"]))
        );
        assert_eq!(
            freq.get("layer_types").and_then(|t| t.get(0)),
            Some(&json!("indexed_attention"))
        );
        let pattern = hp(text(json!({"index_topk_pattern": "FSF"})));
        assert_eq!(
            pattern.get("indexer_types"),
            Some(&json!(["full", "shared", "full"]))
        );
    }

    #[test]
    fn a_config_the_class_rejects_is_read_as_written() {
        // KV heads other than the attention heads: AutoConfig raises, no defaults.
        let h = hp(text(json!({"num_key_value_heads": 1})));
        assert_eq!(h.get("mlp_layer_types"), None);
        let h = hp(text(json!({"index_topk": 5})));
        assert_eq!(h.get("layer_types"), None);
        // Absent KV heads are the class default (64), not the attention heads.
        let h = hp(text(json!({"num_key_value_heads": null})));
        assert_eq!(h.get("num_key_value_heads"), Some(&json!(2)));
    }

    #[test]
    fn a_config_the_class_rejects_is_refused_at_the_tokenizer_step() {
        let rejected = hp(text(json!({"num_key_value_heads": 1})));
        assert!(matches!(
            config_class_refusal(&rejected),
            Err(ConvertError::Format { .. })
        ));
        let pattern = hp(text(json!({"index_topk_pattern": "FX"})));
        assert!(config_class_refusal(&pattern).is_err());
        assert!(config_class_refusal(&hp(text(json!({})))).is_ok());
    }

    #[test]
    fn kv_heads_are_per_block_with_the_mtp_blocks_last() {
        let h = hp(text(json!({"num_hidden_layers": 2,
                               "layer_types": ["linear_attention", "indexed_attention"]})));
        assert_eq!(head_count_kv(&h, 3).unwrap(), [0, 1, 1]);
        assert_eq!(head_count_kv(&h, 2).unwrap(), [0, 1]);
        let short = hp(text(json!({"num_hidden_layers": 3,
                                   "layer_types": ["linear_attention"]})));
        assert!(matches!(
            head_count_kv(&short, 3),
            Err(ConvertError::OutOfRange { .. })
        ));
    }

    #[test]
    fn the_decay_is_taken_from_the_first_heads() {
        let h = hp(text(json!({})));
        let a = Expr::constant(vec![0., 1., 2., 3.], vec![1, 1, 4, 1]);
        let out = a_from_log(&h, "a", a).unwrap();
        assert_eq!(out.shape(), [2]);
        assert_eq!(out.eval_f32().unwrap(), [-1., -(1f32.exp())]);
    }
}
