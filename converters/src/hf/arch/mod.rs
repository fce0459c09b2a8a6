//! One declarative description per supported architecture.
//!
//! An [`Arch`] says everything `convert_hf_to_gguf.py`'s model class does for one family:
//! the HF architecture names it is registered for, the transformers config classes behind
//! them ([`ModelType`]: `model_type`, the defaults AutoConfig fills in), the GGUF
//! architecture, the GGUF tensors it has (their HF spellings are in the shared table,
//! [`super::names::TABLE`]), the tensor filters and transforms ([`Rules`]), the hparam KVs
//! ([`Arch::params`]), generated tensors, and the vocabulary path with its quirks. Adding an
//! architecture is adding one file with its `pub const` (declared with `mod` below) and
//! listing it in [`ALL`]; the tests at the end fail when a file is not listed.

use ggufkit::gguf::Value;
use serde_json::{Map, Value as Json};

use super::config::Hparams;
use super::expr::Expr;
use super::names::Tensor;
use super::params::Params;
use super::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `key => value` pairs as [`ConfigDefault`]s.
macro_rules! defaults {
    ($($k:literal => $v:expr),* $(,)?) => {
        &[$(($k, || serde_json::json!($v))),*]
    };
}

mod apertus;
mod arcee;
mod bert;
pub(crate) use bert::nomic_tokenizer_is_unigram;
mod command_r;
mod ernie4_5;
mod exaone4;
mod falcon;
mod falcon_h1;
mod gemma;
mod gemma3n;
mod glm4;
mod gpt2;
mod gptneox;
mod granite;
mod granite_hybrid;
pub(crate) use granite_hybrid::granite_hybrid_has_ssm;
mod internlm3;
mod jamba;
mod lfm2;
mod llama;
mod llama4;
mod mamba;
mod mistral;
pub(crate) use mistral::for_params as mistral_native;
mod mistral3;
mod modernbert;
mod olmo;
mod phi2;
mod phi3;
mod qwen;
mod qwenvl;
mod seed_oss;
mod smollm3;
mod stablelm;
mod starcoder;
// Issue #14: MLA, next-token-prediction layers, gpt-oss.
mod deepseek2;
mod glm4moe;
mod gpt_oss;
// Gated delta-net hybrids (issue #14, helper arch2).
mod nemotron_h;
mod qwen3next;
// Encoder-decoder (issue #14).
mod t5;

/// Tensors and KVs an architecture generates itself (`generate_extra_tensors`).
#[derive(Default)]
pub struct Extra {
    /// Synthetic tensors (GGUF name, values), written before the model's tensors.
    pub tensors: Vec<(String, Expr)>,
    /// KVs added while tensors are processed (they land before `general.type`).
    pub early_kvs: Vec<(String, Value)>,
}

/// How per-expert tensors are stacked into one 3-D tensor per layer.
pub struct Experts {
    /// A tensor whose (filtered) name contains this is an expert tensor.
    pub marker: &'static str,
    /// The hparams holding the number of experts.
    pub count_keys: &'static [&'static str],
    /// The projections, in the order the stacked tensors are emitted.
    pub parts: &'static [&'static str],
    /// One expert's tensor name (`{bid}`, `{xid}`, `{w}`).
    pub expert_name: &'static str,
    /// The stacked tensor's name before mapping (`{bid}`, `{w}`).
    pub merged_name: &'static str,
}

/// Top-level tensors stacked into one along a new leading dimension (Gemma 3n's AltUp
/// projections): a tensor whose name contains `marker` is member `i` when its name contains
/// `.{i}.` (`i < count`); the stack is emitted, in member order, when the last member
/// arrives; members of an incomplete stack are not written.
pub struct Stacked {
    /// A tensor whose (filtered) name contains this is a member.
    pub marker: &'static str,
    /// The number of members.
    pub count: usize,
    /// The stacked tensor's name before mapping.
    pub merged_name: &'static str,
}

/// Which q/k tensors get Llama's rotary permutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QkPermute {
    /// None.
    No,
    /// `q_proj`/`k_proj` weights and biases (Llama and its subclasses).
    WeightsAndBiases,
    /// `q_proj`/`k_proj` weights only (OLMo).
    Weights,
}

/// What an architecture's own tensor hook decided (`modify_tensors` of the class).
pub enum Modified {
    /// Go on with the generic rules, with this name and value.
    Pass(String, Expr),
    /// Not written.
    Drop,
    /// These tensors (GGUF names, or HF names the table maps), written as they are.
    Out(Vec<(String, Expr)>),
}

/// A class's next-token-prediction renaming (see [`Rules::mtp`]), run on the filtered tensors
/// before anything else.
pub type MtpRule = fn(
    &mut Hparams,
    Vec<super::tensors::Entry>,
) -> Result<Vec<super::tensors::Entry>, ConvertError>;

/// How a class with MTP export tells its next-token-prediction tensors from the others
/// (its `filter_tensors` under `--mtp` / `--no-mtp`).
pub struct MtpExport {
    /// Whether the test sees the checkpoint's names before the class's and the generic
    /// filters (Nemotron-H) rather than after them.
    pub raw_names: bool,
    /// Whether a tensor (by name) belongs to the MTP layers.
    pub is_mtp: fn(&Hparams, &str) -> Result<bool, ConvertError>,
    /// The other tensors `--mtp` keeps (those the MTP head shares with the model).
    pub shared: &'static [&'static str],
}

/// The `filter_tensors` test of the GLM-4.5 family: `re.match(r"model\.layers\.(\d+)\.")`
/// with a block at or past `num_hidden_layers` (the first block-count key present).
pub(crate) fn is_past_main_layers(hp: &Hparams, name: &str) -> Result<bool, ConvertError> {
    let Some(rest) = name.strip_prefix("model.layers.") else {
        return Ok(false);
    };
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    if digits.is_empty() || rest.as_bytes().get(digits.len()) != Some(&b'.') {
        return Ok(false);
    }
    let n = hp
        .find_u64(super::params::BLOCK_COUNT_KEYS)?
        .ok_or_else(|| hp.missing(super::params::BLOCK_COUNT_KEYS))?;
    // An index too long for u64 is past any layer count.
    Ok(digits.parse::<u64>().map_or(true, |i| i >= n))
}

/// The tensors the GLM-4.5 family's `--mtp` keeps besides the MTP layers.
pub(crate) const GLM_MTP_SHARED: &[&str] = &[
    "model.embed_tokens.weight",
    "model.norm.weight",
    "lm_head.weight",
];

/// A class's own `modify_tensors` step, run first (after [`Rules::rename`]).
pub type Hook = fn(&Hparams, String, Expr) -> Result<Modified, ConvertError>;

/// Per-tensor transforms (`modify_tensors`), applied in this order: class hook, name prefix,
/// rotary permutation, norm shift, embedding slice, transposes, fused-expert split, stacking.
pub struct Rules {
    /// Headless checkpoints of this HF architecture get a `model.` name prefix.
    pub headless_arch: Option<&'static str>,
    /// Undo HF's rotate-half q/k layout (Llama).
    pub permute_qk: QkPermute,
    /// Add 1 to tensors whose HF name ends with `norm.weight` (Gemma).
    pub norm_shift: bool,
    /// Cut `embed_tokens` to the real vocabulary size (Gemma 3).
    pub slice_embeddings: bool,
    /// Transpose the `.weight` of tensors whose HF name ends with one of these (GPT-2).
    pub transpose: &'static [&'static str],
    /// Split fused 3-D `mlp.experts.gate_up_proj` and pass `mlp.experts.down_proj` (Qwen MoE).
    pub fused_experts: bool,
    /// Stack per-expert (or per-head) tensors; the first whose marker the name contains.
    pub experts: &'static [Experts],
    /// Stack top-level tensors (checked right after the class hook, first marker first).
    pub stacked: &'static [Stacked],
    /// Rename a (filtered) HF name before mapping.
    pub rename: Option<fn(&Hparams, &str) -> String>,
    /// The class's own step.
    pub hook: Option<Hook>,
    /// The block count includes `num_nextn_predict_layers` next-token-prediction blocks
    /// after the `num_hidden_layers` ones (GLM-4.5's kept MTP layers).
    pub nextn_blocks: bool,
    /// Renames a checkpoint's next-token-prediction (`mtp.*`) tensors to the blocks after
    /// the config's and extends the block count ([`super::config::Hparams::extra_blocks`]):
    /// Qwen3-Next / Qwen3.5 (`qwen3next::mtp_entries`), Nemotron-H (`nemotron_h::mtp_entries`).
    /// Any other class-level pass over the whole list in the reference's order goes here too:
    /// T5's first-of-three shared embedding (`t5::shared_embedding`).
    pub mtp: Option<MtpRule>,
    /// The class exports its next-token-prediction layers on request (`supports_mtp_export`:
    /// `--mtp` / `--no-mtp`); `None` refuses both switches.
    pub mtp_export: Option<MtpExport>,
    /// Drop `output.weight` when its values equal `token_embd.weight`'s, seen before it
    /// (Mamba's checkpoints save the tied head).
    pub omit_tied_output: bool,
    /// The class repacks MXFP4 experts (`*_blocks` / `*_scales`) into GGML MXFP4 blocks and
    /// skips `dequant_model` for `quant_method: "mxfp4"` (gpt-oss): takes those tensors out
    /// of the model's and returns the repacked ones (HF names), written before all others.
    pub mxfp4: Option<RepackFn>,
}

/// Takes a class's already-quantized tensors out of the model's and returns them repacked
/// (HF names, [`Expr::packed`] values).
pub type RepackFn =
    fn(&mut Vec<crate::hf::tensors::Entry>) -> Result<Vec<(String, Expr)>, ConvertError>;

impl Rules {
    /// No transform at all.
    pub const NONE: Rules = Rules {
        headless_arch: None,
        permute_qk: QkPermute::No,
        norm_shift: false,
        slice_embeddings: false,
        transpose: &[],
        fused_experts: false,
        experts: &[],
        stacked: &[],
        rename: None,
        hook: None,
        nextn_blocks: false,
        mtp: None,
        mtp_export: None,
        omit_tied_output: false,
        mxfp4: None,
    };
}

/// A transformers config default: key and value, inserted when the key is absent.
pub type ConfigDefault = (&'static str, fn() -> Json);

/// A config class's own adjustment of the dict (see [`ModelType::prepare`]).
pub type Prepare = fn(&mut Map<String, Json>) -> bool;

/// A config class's `attribute_map` alias: config.json's `alias` is stored as `attr` (the
/// name `to_dict()` shows). Mixtral and Qwen3-MoE map `num_experts` to `num_local_experts`.
fn alias(cfg: &mut Map<String, Json>, alias: &str, attr: &str) {
    if let Some(v) = cfg.remove(alias) {
        cfg.insert(attr.into(), v);
    }
}

/// `attribute_map = {"num_experts": "num_local_experts"}` (Mixtral, Qwen3-MoE).
pub(crate) fn num_experts_alias(cfg: &mut Map<String, Json>) -> bool {
    alias(cfg, "num_experts", "num_local_experts");
    true
}

/// `attribute_map = {"num_local_experts": "num_experts"}` (OLMoE).
pub(crate) fn num_local_experts_alias(cfg: &mut Map<String, Json>) -> bool {
    alias(cfg, "num_local_experts", "num_experts");
    true
}

/// How a config class fills `head_dim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadDim {
    /// Left as the file (and the plain defaults) give it.
    Keep,
    /// `hidden_size / num_attention_heads` when absent or null.
    FillWhenNull,
    /// Always `hidden_size / num_attention_heads`, whatever the file says (Cohere2Config).
    Derive,
    /// Always the value of this key (after the defaults), else `hidden_size /
    /// num_attention_heads` (DeepseekV2Config's `head_dim = qk_rope_head_dim`).
    CopyOf(&'static str),
}

/// A transformers config class (`model_type`) and what AutoConfig fills in for it. Only the
/// keys the converter reads are listed.
pub struct ModelType {
    /// transformers' `model_type`.
    pub name: &'static str,
    /// The HF architecture names whose configs carry this `model_type` (documentation,
    /// checked against `hf_names` by the unit tests). A config without `model_type` gets no
    /// class defaults: AutoConfig fails on it and the reference reads config.json as written.
    #[allow(dead_code)]
    pub hf_classes: &'static [&'static str],
    /// The class's plain defaults (transformers 5).
    pub defaults: &'static [ConfigDefault],
    /// Whether and how `head_dim` is derived.
    pub head_dim: HeadDim,
    /// The KV-head key filled from `num_attention_heads` when absent or null, if any.
    pub kv_heads_key: Option<&'static str>,
    /// Runs first: adjusts the dict as the class's `__init__` does; `false` means AutoConfig
    /// raises for this config, so the converter reads config.json as written (no defaults).
    pub prepare: Option<Prepare>,
}

/// How a composite (vision-language) config class types its `text_config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextType {
    /// Always this class (Gemma3Config's text_config is a Gemma3TextConfig).
    Fixed(&'static str),
    /// The class its own `model_type` names, else this one (Llava's defaults to llama).
    Named(&'static str),
    /// This class; a config without `text_config` has the text keys at its root, which the
    /// class moves into its `text_config` (Qwen2-VL's hub configs).
    Flat(&'static str),
}

/// One architecture.
pub struct Arch {
    /// HF `architectures[0]` values handled.
    pub hf_names: &'static [&'static str],
    /// The transformers config classes of these architectures.
    pub model_types: &'static [ModelType],
    /// Composite config classes (`model_type`) whose text part is this architecture.
    pub composites: &'static [(&'static str, TextType)],
    /// `general.architecture`.
    pub gguf: &'static str,
    /// The vocabulary path.
    pub vocab: VocabKind,
    /// What its `set_vocab` adds to that path.
    pub vocab_quirks: VocabQuirks,
    /// The GGUF tensors it has (gguf-py's `MODEL_TENSORS`), in groups (most start with
    /// [`super::names::DECODER`]); their HF spellings come from [`super::names::TABLE`].
    pub tensors: &'static [&'static [Tensor]],
    /// HF spellings that name a different tensor here than the shared table says (applied
    /// last).
    pub tensor_overrides: &'static [(Tensor, &'static [&'static str])],
    /// Class-level tensor filter: `None` drops, `Some` renames (after the generic filters).
    pub filter: fn(&str) -> Option<String>,
    /// Tensor transforms.
    pub rules: Rules,
    /// The hparam KVs (`set_gguf_parameters`).
    pub params: fn(&mut Params) -> Result<(), ConvertError>,
    /// Generated tensors and early KVs.
    pub extra: fn(&Hparams) -> Result<Extra, ConvertError>,
}

/// No class-level filter.
pub fn keep(name: &str) -> Option<String> {
    Some(name.to_string())
}

/// Nothing generated.
pub fn no_extra(_: &Hparams) -> Result<Extra, ConvertError> {
    Ok(Extra::default())
}

/// Every supported architecture.
pub static ALL: &[&Arch] = &[
    &llama::LLAMA,
    &llama4::LLAMA4,
    &qwen::QWEN2,
    &qwen::QWEN3,
    &qwen::QWEN2MOE,
    &qwen::QWEN3MOE,
    &gemma::GEMMA,
    &gemma::GEMMA2,
    &gemma::GEMMA3,
    &phi3::PHI3,
    &phi3::PHIMOE,
    &gpt2::GPT2,
    &bert::BERT,
    &olmo::OLMO,
    &olmo::OLMO2,
    &olmo::OLMOE,
    &ernie4_5::ERNIE4_5_MOE,
    &seed_oss::SEED_OSS,
    &smollm3::SMOLLM3,
    &arcee::ARCEE,
    &granite::GRANITE,
    &granite::GRANITE_MOE,
    &command_r::COMMAND_R,
    &command_r::COHERE2,
    &stablelm::STABLELM,
    &starcoder::STARCODER2,
    &starcoder::STARCODER,
    &phi2::PHI2,
    &gptneox::GPTNEOX,
    &falcon::FALCON,
    &exaone4::EXAONE4,
    &glm4::GLM4,
    &ernie4_5::ERNIE4_5,
    &apertus::APERTUS,
    &mistral3::MISTRAL3,
    &gemma::EMBEDDING_GEMMA,
    &bert::XLM_ROBERTA,
    &modernbert::MODERN_BERT,
    &bert::NOMIC_BERT,
    &internlm3::INTERNLM3,
    // Issue #14: MLA, next-token-prediction layers, gpt-oss.
    &deepseek2::DEEPSEEK2,
    &glm4moe::GLM4MOE,
    &gpt_oss::GPT_OSS,
    &deepseek2::GLM4MOE_LITE,
    // State-space and hybrid families (issue #14).
    &mamba::MAMBA,
    &mamba::MAMBA2,
    &granite_hybrid::GRANITE_HYBRID,
    &lfm2::LFM2,
    &lfm2::LFM2MOE,
    &jamba::JAMBA,
    &falcon_h1::FALCON_H1,
    &qwen3next::QWEN3NEXT,
    &qwen3next::QWEN35,
    &qwen3next::QWEN35MOE,
    // Mistral's native format (`--mistral-format` only, no HF name).
    &mistral::MISTRAL_NATIVE,
    &mistral::MISTRAL_NATIVE_3,
    &mistral::MISTRAL_NATIVE_MOE,
    &nemotron_h::NEMOTRON_H,
    // Encoder-decoder (issue #14).
    &t5::T5,
    &t5::T5ENCODER,
    // Gemma 3n (issue #14).
    &gemma3n::GEMMA3N,
    // Text models of vision-language classes (issue #16).
    &qwenvl::QWEN2VL,
    &qwenvl::QWEN3VL,
    &qwenvl::QWEN3VLMOE,
];

/// `general.architecture` (and the key prefix) for this config: the architecture's own,
/// except where the class switches it in its constructor (a GraniteMoeHybrid model without
/// SSM layers is written as `granite` or `granitemoe`).
pub fn gguf_arch(arch: &Arch, hp: &Hparams) -> &'static str {
    if arch.gguf == granite_hybrid::GRANITE_HYBRID.gguf {
        return granite_hybrid::gguf_arch(hp);
    }
    if arch.gguf == nemotron_h::NEMOTRON_H.gguf {
        return nemotron_h::gguf_arch(hp);
    }
    arch.gguf
}

/// The description for an HF architecture name.
pub fn lookup(hf_arch: &str) -> Option<&'static Arch> {
    ALL.iter().copied().find(|a| a.hf_names.contains(&hf_arch))
}

/// The description whose `general.architecture` is `gguf`.
pub fn by_gguf(gguf: &str) -> Option<&'static Arch> {
    ALL.iter().copied().find(|a| a.gguf == gguf)
}

/// The config class of a `model_type` (not a composite one).
pub fn model_type(name: &str) -> Option<&'static ModelType> {
    ALL.iter()
        .flat_map(|a| a.model_types.iter())
        .find(|m| m.name == name)
}

/// How a composite config class (`model_type`) types its text part, if it is one.
pub fn composite_text_type(model_type: &str) -> Option<TextType> {
    ALL.iter()
        .flat_map(|a| a.composites.iter())
        .find(|(m, _)| *m == model_type)
        .map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::path::Path;

    use super::*;
    use crate::hf::names::TABLE;

    fn src_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src/hf/arch")
    }

    /// Every `pub const X: Arch` of every file in this directory is declared and in [`ALL`].
    #[test]
    fn every_arch_file_is_listed() {
        let list = std::fs::read_to_string(src_dir().join("mod.rs")).unwrap();
        let all = &list[list.find("pub static ALL").unwrap()..];
        let all: Vec<&str> = all[..all.find("];").unwrap()]
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("//"))
            .collect();
        let mut found = 0;
        for e in std::fs::read_dir(src_dir()).unwrap().flatten() {
            let file = e.file_name().into_string().unwrap();
            let Some(module) = file.strip_suffix(".rs").filter(|m| *m != "mod") else {
                continue;
            };
            assert!(
                list.contains(&format!("\nmod {module};"))
                    || list.contains(&format!("\npub(crate) mod {module};")),
                "arch/{file} is not declared in arch/mod.rs"
            );
            let text = std::fs::read_to_string(e.path()).unwrap();
            let consts: Vec<&str> = text
                .match_indices("pub const ")
                .filter_map(|(i, _)| text[i + 10..].split_once(": Arch ="))
                .map(|(name, _)| name)
                .filter(|name| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .collect();
            assert!(!consts.is_empty(), "arch/{file} defines no Arch");
            for c in consts {
                let entry = format!("&{module}::{c},");
                assert!(
                    all.contains(&entry.as_str()),
                    "{module}::{c} is not in arch::ALL"
                );
                found += 1;
            }
        }
        assert_eq!(found, ALL.len(), "ALL lists something no arch file defines");
    }

    /// Names are unique, every HF name resolves to its own entry, every model type and
    /// composite resolves, and every tensor an architecture has is in the shared table.
    #[test]
    fn the_list_is_consistent() {
        let (mut gguf, mut hf, mut types) = (HashSet::new(), HashSet::new(), HashSet::new());
        let tabled: HashSet<Tensor> = TABLE.iter().map(|(t, _)| *t).collect();
        for a in ALL {
            // Several classes may write one GGUF architecture (XLM-R is a BERT); the
            // vocabulary quirks, looked up by GGUF name, must then agree.
            if !gguf.insert(a.gguf) {
                let first = by_gguf(a.gguf).unwrap();
                assert_eq!(
                    format!("{:?}", first.vocab_quirks),
                    format!("{:?}", a.vocab_quirks),
                    "{} twice with different vocabulary quirks",
                    a.gguf
                );
            }
            for n in a.hf_names {
                assert!(hf.insert(*n), "{n} twice");
                assert!(std::ptr::eq(lookup(n).unwrap(), *a), "{n}");
            }
            for m in a.model_types {
                assert!(types.insert(m.name), "model_type {} twice", m.name);
                assert!(std::ptr::eq(model_type(m.name).unwrap(), m));
                for c in m.hf_classes {
                    assert!(a.hf_names.contains(c), "{c} ({}) not in {}", m.name, a.gguf);
                }
                for (_, v) in m.defaults {
                    assert!(!v().is_object(), "{}", m.name);
                }
            }
            for (c, _) in a.composites {
                assert!(composite_text_type(c).is_some());
                assert!(model_type(c).is_none(), "{c} is both composite and plain");
            }
            for t in a
                .tensors
                .iter()
                .flat_map(|g| g.iter())
                .chain(a.tensor_overrides.iter().map(|(t, _)| t))
            {
                assert!(
                    tabled.contains(t),
                    "{}: {t:?} is not in names::TABLE",
                    a.gguf
                );
            }
        }
    }

    /// Every fixture model in testdata/hf names an architecture in the list.
    #[test]
    fn every_fixture_architecture_resolves() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/hf");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let Ok(text) = std::fs::read_to_string(e.path().join("config.json")) else {
                continue;
            };
            // Mistral-native fixtures (params.json) convert with --mistral-format; the
            // config.json beside a MoE one only carries hparams the reference also reads.
            if e.path().join("params.json").is_file() {
                continue;
            }
            let cfg: Json = serde_json::from_str(&crate::hf::config::python_json(&text)).unwrap();
            let Some(name) = cfg["architectures"][0].as_str() else {
                continue;
            };
            let tc = cfg["text_config"]["architectures"][0].as_str();
            // Projector fixtures (conformance/make_mmproj_fixtures.py) name a projector
            // family; their text half may be one ggufkit does not convert.
            let projector = crate::hf::mmproj::mmproj_arch(&cfg)
                .is_some_and(|a| crate::hf::mmproj::lookup(&a).is_some());
            assert!(
                lookup(tc.unwrap_or(name)).is_some() || projector,
                "{}: {name} is neither in arch::ALL nor in mmproj::ALL",
                e.path().display()
            );
            n += 1;
        }
        assert!(n >= 16, "only {n} fixtures in {}", dir.display());
    }
}
