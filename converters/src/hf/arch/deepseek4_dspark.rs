//! The DeepSeek-V4 DSpark draft (`DeepseekV4DSparkModel`, arch `dflash`): a DeepSeek-V4
//! checkpoint's `mtp.*` stages written as a speculative-decoding draft, from a config that
//! names the class or from a `DeepseekV4ForCausalLM` checkpoint with `--dspark`; converted
//! with `--target-model-dir` (the target's tokenizer).
//!
//! * **Tensors.** Only `mtp.K.*` is read. The draft's own root tensors (`main_proj`,
//!   `main_norm`, the Markov head, the confidence head) and the shared ones (`norm`,
//!   `hc_head_*`, `main_proj.scale`) lose their stage prefix, whichever stage holds them;
//!   every other `mtp.K.rest` becomes block K's `layers.K.rest`. The block count is one past
//!   the highest block number so formed. The rest follows DeepSeek-V4's rules
//!   ([`super::deepseek4`]): FP8 weights dequantized with their E8M0 block scales and
//!   written as Q8_0, source types kept, MXFP4 routed experts repacked for every block and
//!   written first, `general.file_type` MOSTLY_MXFP4_MOE. The image routing bias
//!   (`ffn.gate.bias_vl`) and any hash-routing table are dropped; a tensor of a kind the
//!   `dflash` architecture has no name for (the compressor, the indexer, the NextN
//!   projections) is refused, as the reference refuses it.
//! * **Config.** DeepSeek-V4's keys under the `dflash` architecture, with every block
//!   uncompressed (`compress_ratios` all 0) and no hash-routed layer, and without the
//!   output width; then `dspark_block_size` and the one-based `dspark_target_layer_ids`.
//!   The vocabulary is the target's (DeepSeek-V4's GPT-2 path on the target's tokenizer),
//!   followed by `dspark_noise_token_id` as the mask token.

use ggufkit::gguf::keys::{draft, tokenizer};
use ggufkit::gguf::Value;
use ggufkit::quantize::ftype::ft;
use serde_json::Value as Json;

use super::deepseek4::{self, gguf_name, is_expert, map_name, terr};
use super::{Arch, Entry, Extra, Hooks, Modified, MtpExport, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The DeepSeek-V4 kinds the `dflash` architecture names (gguf-py's `MODEL_TENSORS[DFLASH]`
/// met by DeepSeek-V4's name map); any other kind is refused.
const TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::OutputNorm,
    Tensor::AttnNorm,
    Tensor::AttnSinks,
    Tensor::AttnQA,
    Tensor::AttnQB,
    Tensor::AttnQANorm,
    Tensor::AttnKv,
    Tensor::AttnKvANorm,
    Tensor::AttnOutA,
    Tensor::AttnOutB,
    Tensor::HcAttnFn,
    Tensor::HcAttnBase,
    Tensor::HcAttnScale,
    Tensor::HcFfnFn,
    Tensor::HcFfnBase,
    Tensor::HcFfnScale,
    Tensor::HcHeadFn,
    Tensor::HcHeadBase,
    Tensor::HcHeadScale,
    Tensor::FfnNorm,
    Tensor::FfnGateInp,
    Tensor::FfnExpProbsB,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnUpShexp,
];

/// The hparam holding the draft's block count (one past its highest block number).
const BLOCK_COUNT: &str = "dspark_block_count";

/// The DeepSeek-V4 DSpark draft.
pub const DEEPSEEK4_DSPARK: Arch = Arch {
    hf_names: &["DeepseekV4DSparkModel"],
    // The config is DeepSeek-V4's (`model_type` deepseek_v4, its class defaults).
    model_types: &[],
    composites: &[],
    gguf: "dflash",
    // DeepSeek-V4's own `set_vocab` (GPT-2) on the target's tokenizer.
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks {
        from_target: true,
        ..VocabQuirks::NONE
    },
    tensors: &[TENSORS],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        mtp: Some(class_init),
        // The class inherits DeepSeek-V4's MTP export, which its own filter undoes:
        // `--no-mtp` changes nothing, `--mtp` keeps no block (and is refused).
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp: never_mtp,
            shared: &[],
        }),
        dequant: Some(deepseek4::dequant),
        generate: Some(deepseek4::generate),
        force_type: Some(deepseek4::force_type),
        file_type: Some(ft::MXFP4_MOE),
        ..Rules::NONE
    },
    params,
    extra,
    hooks: Hooks {
        block_count_keys: Some(&[BLOCK_COUNT]),
        vocab_tail: Some(mask_token),
        ..Hooks::NONE
    },
};

/// The HF class `--dspark` converts a checkpoint of (and the only one it accepts).
pub const DSPARK_SOURCE_CLASS: &str = "DeepseekV4ForCausalLM";

/// The draft's root tensors: stage-free name → GGUF name.
const ROOT_MAP: &[(&str, &str)] = &[
    ("main_proj.weight", "fc.weight"),
    ("main_norm.weight", "enc.output_norm.weight"),
    ("markov_head.markov_w1.weight", "markov_w1.weight"),
    ("markov_head.markov_w2.weight", "markov_w2.weight"),
    ("confidence_head.proj.weight", "conf_proj.weight"),
];

/// Shared tensors a stage holds that keep their root name.
const ROOT_NAMES: &[&str] = &[
    "main_proj.scale",
    "norm.weight",
    "hc_head_fn",
    "hc_head_base",
    "hc_head_scale",
];

/// `DeepseekV4DSparkModel.filter_tensors`: only the `mtp.*` stages, renamed
/// ([`rekey`]), then DeepSeek-V4's filter. A stage name of another shape stays as it is
/// and is refused by the name map.
fn filter(name: &str) -> Option<String> {
    if !name.starts_with("mtp.") {
        return None;
    }
    deepseek4::filter(&rekey(name).unwrap_or_else(|| name.to_string()))
}

/// `mtp.K.rest`: the root name when `rest` is one of the draft's root or shared tensors,
/// else `layers.K.rest`; `None` when the name is not `mtp.<digits>.<rest>`.
fn rekey(name: &str) -> Option<String> {
    let rest = name.strip_prefix("mtp.")?;
    let (stage, rest) = rest.split_once('.')?;
    if stage.is_empty() || !stage.bytes().all(|b| b.is_ascii_digit()) || rest.is_empty() {
        return None;
    }
    if ROOT_MAP.iter().any(|(hf, _)| *hf == rest) || ROOT_NAMES.contains(&rest) {
        return Some(rest.to_string());
    }
    Some(format!("layers.{stage}.{rest}"))
}

/// No renamed tensor is an MTP one: `--no-mtp` keeps them all and `--mtp` none (its
/// filter keeps only the model's embedding, final norm and head, which a stage's names
/// never are).
fn never_mtp(_: &Hparams, _: &str) -> Result<bool, ConvertError> {
    Ok(false)
}

/// The block number of a `layers.N.` name.
fn layer_of(name: &str) -> Option<u64> {
    let (n, _) = name.strip_prefix("layers.")?.split_once('.')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// `DeepseekV4DSparkModel.__init__`: DeepSeek-V4's (config.json's keys restored), then
/// the block count from the renamed tensors, every block uncompressed and none
/// hash-routed. A name met twice keeps its first place and its last value.
fn class_init(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    deepseek4::restore_raw_keys(hp);
    let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
    for e in entries {
        match out.iter().position(|o| o.name == e.name) {
            Some(i) => out[i] = e,
            None => out.push(e),
        }
    }
    let blocks = out
        .iter()
        .filter_map(|e| layer_of(&e.name))
        .max()
        .map(|b| b.saturating_add(1))
        .ok_or_else(|| {
            ConvertError::format(
                &hp.path,
                None,
                "DeepSeek-V4 DSpark: the checkpoint has no mtp.K.* block tensor",
            )
        })?;
    hp.map.insert(BLOCK_COUNT.into(), Json::from(blocks));
    let n = usize::try_from(blocks).unwrap_or(usize::MAX);
    hp.map
        .insert("compress_ratios".into(), Json::from(vec![0; n]));
    hp.map.insert("num_hash_layers".into(), Json::from(0));
    Ok(out)
}

/// `DeepseekV4DSparkModel.modify_tensors`: the image routing bias is dropped, the draft's
/// root tensors take their `dflash` names, then DeepSeek-V4's rules, refusing a kind the
/// `dflash` architecture does not name.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.ends_with(".ffn.gate.bias_vl") {
        return Ok(Modified::Drop);
    }
    if let Some((_, gguf)) = ROOT_MAP.iter().find(|(hf, _)| *hf == name) {
        return Ok(Modified::Named(vec![((*gguf).to_string(), expr)]));
    }
    if let Some((l, r)) = name.strip_prefix("layers.").and_then(|r| r.split_once('.')) {
        if l.bytes().all(|b| b.is_ascii_digit()) && is_expert(r) {
            return Ok(Modified::Drop);
        }
    }
    let bid = block_id(&name);
    if name.ends_with(".ffn.gate.bias") {
        let hashed = hp.req_u64(&["num_hash_layers"])?;
        if bid.is_some_and(|b| b < hashed) {
            return Ok(Modified::Drop);
        }
    }
    let (tensor, block, suffix) = map_name(&name)?;
    if tensor == Tensor::FfnGateTid2eid {
        return Ok(Modified::Drop);
    }
    if !TENSORS.contains(&tensor) {
        return Err(terr(
            &name,
            format!(
                "the dflash architecture has no {} tensor: llama.cpp's converter refuses it \
                 in a DeepSeek-V4 DSpark draft",
                tensor.gguf()
            ),
        ));
    }
    Ok(Modified::Named(vec![(
        gguf_name(tensor, block, suffix),
        expr,
    )]))
}

/// DeepSeek-V4's chat-template rule, on the target's tokenizer (whose template replaces
/// the bundled one).
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    let target = hp
        .target
        .as_deref()
        .ok_or_else(|| ConvertError::NeedsTarget {
            path: hp.path.clone(),
            class: hp.arch.clone(),
        })?;
    deepseek4::template_extra(target)
}

/// A required count of the config.
fn count(hp: &Hparams, key: &str, v: &Json) -> Result<u64, ConvertError> {
    json_u64(v).ok_or_else(|| ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![key.into()],
        expected: "a count".into(),
        found: v.to_string(),
    })
}

/// `DeepseekV4DSparkModel.set_gguf_parameters`: DeepSeek-V4's keys (no output width under
/// `dflash`), the block size and the one-based target layers.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    deepseek4::common_params(p)?;
    let hp = p.hp;
    let key = "dspark_block_size";
    let v = hp
        .get(key)
        .filter(|v| !v.is_null())
        .ok_or_else(|| hp.missing(&[key]))?;
    p.u32(draft::BLOCK_SIZE, count(hp, key, v)?)?;
    let key = "dspark_target_layer_ids";
    let ids = hp
        .get(key)
        .filter(|v| !v.is_null())
        .ok_or_else(|| hp.missing(&[key]))?;
    let bad = || ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![key.into()],
        expected: "a list of layer numbers".into(),
        found: ids.to_string(),
    };
    let ids = ids
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|v| {
            v.as_i64()
                .and_then(|x| x.checked_add(1))
                .and_then(|x| i32::try_from(x).ok())
                .ok_or_else(bad)
        })
        .collect::<Result<Vec<_>, _>>()?;
    p.i32s(draft::TARGET_LAYERS, ids);
    Ok(())
}

/// `set_vocab`'s last step: `dspark_noise_token_id` as the mask token.
fn mask_token(hp: &Hparams) -> Result<Vec<(String, Value)>, ConvertError> {
    let key = "dspark_noise_token_id";
    let v = hp
        .get(key)
        .filter(|v| !v.is_null())
        .ok_or_else(|| hp.missing(&[key]))?;
    let id = json_u64(v)
        .and_then(|x| u32::try_from(x).ok())
        .ok_or_else(|| ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec![key.into()],
            expected: "a 32-bit token id".into(),
            found: v.to_string(),
        })?;
    Ok(vec![(tokenizer::MASK_ID.to_string(), Value::U32(id))])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_become_blocks_and_root_tensors() {
        assert_eq!(rekey("mtp.0.main_proj.weight").unwrap(), "main_proj.weight");
        assert_eq!(rekey("mtp.2.main_proj.scale").unwrap(), "main_proj.scale");
        assert_eq!(rekey("mtp.1.hc_head_fn").unwrap(), "hc_head_fn");
        assert_eq!(
            rekey("mtp.1.attn.wkv.weight").unwrap(),
            "layers.1.attn.wkv.weight"
        );
        assert!(rekey("mtp.x.norm.weight").is_none());
        assert!(rekey("mtp.0").is_none());
        assert_eq!(filter("layers.0.attn.wkv.weight"), None);
        assert_eq!(filter("mtp.0.norm.weight").as_deref(), Some("norm.weight"));
        assert_eq!(layer_of("layers.12.x"), Some(12));
        assert_eq!(layer_of("main_proj.weight"), None);
    }

    #[test]
    fn dflash_names_and_refusals() {
        let hp = crate::hf::config::from_json(
            serde_json::json!({"architectures": ["DeepseekV4DSparkModel"],
                               "num_hash_layers": 0}),
            std::path::PathBuf::from("config.json"),
        )
        .unwrap();
        let x = || Expr::constant(vec![0.0; 2], vec![2]);
        let named = |n: &str| match hook(&hp, n.to_string(), x()).unwrap() {
            Modified::Named(v) => v[0].0.clone(),
            _ => "dropped".to_string(),
        };
        assert_eq!(named("main_proj.weight"), "fc.weight");
        assert_eq!(named("main_norm.weight"), "enc.output_norm.weight");
        assert_eq!(named("hc_head_fn"), "output_hc_fn.weight");
        assert_eq!(named("layers.1.ffn.gate.bias"), "blk.1.exp_probs_b.bias");
        assert_eq!(named("layers.1.ffn.gate.bias_vl"), "dropped");
        assert_eq!(named("layers.1.ffn.gate.tid2eid"), "dropped");
        assert_eq!(named("layers.0.ffn.experts.3.w2.scale"), "dropped");
        for refused in [
            "layers.0.attn.compressor.ape",
            "layers.0.attn.indexer.wq_b.weight",
            "layers.0.nextn.enorm.weight",
            "layers.0.e_proj.weight",
            "main_proj.scale",
        ] {
            assert!(hook(&hp, refused.to_string(), x()).is_err(), "{refused}");
        }
    }
}
