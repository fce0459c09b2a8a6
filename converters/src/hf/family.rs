//! The vocabulary an architecture is described in: the types of [`Arch`] and its parts.
//!
//! An [`Arch`] says everything `convert_hf_to_gguf.py`'s model class does for one family:
//! the HF architecture names it is registered for, the transformers config classes behind
//! them ([`ModelType`]: `model_type`, the defaults AutoConfig fills in), the GGUF
//! architecture, the GGUF tensors it has (their HF spellings are in the shared table,
//! `names::TABLE`), the tensor filters and transforms ([`Rules`]), the hparam KVs
//! ([`Arch::params`]), generated tensors, and the vocabulary path with its quirks.
//!
//! This module is a leaf of the HF reader: it names no family and imports none. The
//! families (`arch/`) are values of these types; the shared machinery (`config`, `tensors`,
//! `tokenizer`, the reader) reads those values and never asks for a family by name.

use ggufkit::gguf::Value;
use ggufkit::quantizers::GgmlType;
use serde_json::{Map, Value as Json};

use super::config::Hparams;
use super::expr::Expr;
use super::names::Tensor;
use super::params::Params;
use super::safetensors::StDtype;
use super::tokenizer::VocabKind;
use crate::ConvertError;

/// A model tensor after filtering: its (renamed) name, values, and source dtype.
pub struct Entry {
    /// Name after the filters.
    pub name: String,
    /// The values.
    pub expr: Expr,
    /// The source dtype (for `--outtype auto`).
    pub dtype: StDtype,
    /// Dequantized from FP8 under `--fp8-as-q8`: its matrices are written as Q8_0.
    pub fp8_q8: bool,
    /// The block number the output type is chosen with, when it is not the one of `name`:
    /// a class that renames a tensor in `modify_tensors` (Nemotron-H's MTP head) still has
    /// its type chosen with the original name's block (`prepare_tensors`' `bid`).
    pub type_bid: Option<Option<u64>>,
}

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
    /// These tensors under exactly these GGUF names, not looked up in the table (a class
    /// that yields a name with a suffix the table has no spelling for, such as `.scale`).
    Named(Vec<(String, Expr)>),
}

/// A class's next-token-prediction renaming (see [`Rules::mtp`]), run on the filtered tensors
/// before anything else.
pub type MtpRule = fn(&mut Hparams, Vec<Entry>) -> Result<Vec<Entry>, ConvertError>;

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
    /// The class's `tensor_force_quant` asks for the outtype's type for every tensor of two or
    /// more dimensions: only 1-D tensors and norms stay F32, the always-F32 names (routers,
    /// position embeddings) and the ternary outtypes' F16 names do not apply.
    pub quantize_all_matrices: bool,
    /// The class's own `dequant_model`, which replaces the generic one (the NVFP4 repacking
    /// before it still applies): it folds the checkpoint's scales into their weights.
    pub dequant: Option<DequantFn>,
    /// When set, [`Rules::dequant`] replaces the generic `dequant_model` only for the
    /// checkpoints this accepts (a class that skips it for one published layout, as Kimi-K3
    /// does for its MXFP4 experts); the others get the generic one.
    pub dequant_when: Option<fn(&Hparams) -> bool>,
    /// The class's `generate_extra_tensors` over the model's tensors (after `dequant_model`):
    /// it takes the tensors it consumes out of the list (and may put new ones in it, which
    /// then go through the class's `modify_tensors`), and returns the tensors it writes itself
    /// before all others, under exactly these GGUF names, in their own (packed) types.
    pub generate: Option<GenerateFn>,
    /// The class's `tensor_force_quant` choice for one output tensor from its GGUF name, its
    /// source dtype and its dimensions; `None` leaves it to the generic rules. A forced type
    /// is still F32 for 1-D tensors and norms, and F16 when a row is not whole blocks.
    pub force_type: Option<ForceTypeFn>,
    /// The `general.file_type` (and the default file name's type label) the class sets in
    /// `prepare_tensors` whatever the outtype, for a conversion that writes tensors.
    pub file_type: Option<u32>,
    /// As [`Rules::file_type`], for a class that sets it only for some checkpoints: the file
    /// type the config asks for, if any (Kimi-K3's MXFP4 experts).
    pub file_type_of: Option<fn(&Hparams) -> Option<u32>>,
    /// The class's `tensor_force_quant` keeps a tensor F32 whatever the outtype when its
    /// GGUF name contains one of these (tiny projections the runtime reads in F32).
    pub f32_names: &'static [&'static str],
    /// The class's `tensor_force_quant` keeps an output tensor F32 whatever the outtype by
    /// its GGUF name and the config (a setting that asks for an F32 head).
    pub f32_when: Option<fn(&Hparams, &str) -> bool>,
    /// Tensors the class writes itself after all the others (its `prepare_tensors` after the
    /// parent's): it takes the tensors it consumes out of the list and returns them under
    /// exactly these GGUF names, in their own (packed) types.
    pub late: Option<GenerateFn>,
}

/// A class's own `dequant_model` (see [`Rules::dequant`]).
pub type DequantFn = fn(&Hparams, Vec<Entry>) -> Result<Vec<Entry>, ConvertError>;

/// A class's `generate_extra_tensors` over the model's tensors (see [`Rules::generate`]).
pub type GenerateFn = fn(&Hparams, &mut Vec<Entry>) -> Result<Vec<(String, Expr)>, ConvertError>;

/// A class's `tensor_force_quant` (see [`Rules::force_type`]): GGUF name, source dtype and
/// number of dimensions in, the type it asks for out.
pub type ForceTypeFn = fn(&str, StDtype, usize) -> Option<GgmlType>;

/// Takes a class's already-quantized tensors out of the model's and returns them repacked
/// (HF names, [`Expr::packed`] values).
pub type RepackFn = fn(&mut Vec<Entry>) -> Result<Vec<(String, Expr)>, ConvertError>;

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
        quantize_all_matrices: false,
        dequant: None,
        dequant_when: None,
        generate: None,
        force_type: None,
        file_type: None,
        file_type_of: None,
        f32_names: &[],
        f32_when: None,
        late: None,
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
/// What an architecture's `set_vocab` does beyond its [`VocabKind`]'s path.
#[derive(Debug, Clone, Copy)]
pub struct VocabQuirks {
    /// `tokenizer.model` is required: no fallback to tokenizer.json (Gemma 1 and 2).
    pub requires_spm: bool,
    /// The hparams a SentencePiece vocabulary takes its size from, the first present
    /// (possibly null) winning; a class that hides one during `set_vocab` leaves it out.
    pub spm_size_keys: &'static [&'static str],
    /// The vocabulary path pads the token list to `vocab_size`, so a `vocab_size` beyond the
    /// token embedding's rows is refused; `false` for a class whose vocabulary is the
    /// tokenizer's own size whatever the config says (Gemma 4's `LlamaHfVocab`).
    pub pads_to_vocab_size: bool,
    /// `set_vocab` reads the tokenizer of the target model (`--target-model-dir`) rather
    /// than the directory's own: a speculative-decoding draft ships none.
    pub from_target: bool,
    /// `set_vocab` is the target model class's own (its path and quirks), run on the
    /// target's tokenizer; this description's when the target is of this class.
    pub target_class: bool,
}

impl VocabQuirks {
    /// Nothing beyond the path.
    pub const NONE: VocabQuirks = VocabQuirks {
        requires_spm: false,
        spm_size_keys: &["vocab_size_per_layer_input", "vocab_size"],
        pads_to_vocab_size: true,
        from_target: false,
        target_class: false,
    };
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
    /// Like [`TextType::Named`], except that a text_config naming the first `model_type` of
    /// a pair is built (and shown, `model_type` included) as the second: the hub's
    /// remote-code spelling of a class transformers has under another name.
    NamedRenamed(&'static str, &'static [(&'static str, &'static str)]),
    /// Like [`TextType::Named`], except that a config without `text_config` (or with a null
    /// one) gets the class's own values for it first (a JSON object): the keyword arguments
    /// the composite class passes when it builds a default text config, under which the
    /// text class's defaults fill the rest.
    NamedWithInit(&'static str, &'static str),
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
    /// What the class decides from the config that the shared steps then follow.
    pub hooks: Hooks,
}

/// The class's decisions taken from its config, where the shared steps would otherwise
/// have to ask which family they are converting. Each is `None` for the common case.
#[derive(Clone, Copy)]
pub struct Hooks {
    /// `general.architecture` (and the key prefix) when the class switches it in its
    /// constructor; `None` writes [`Arch::gguf`].
    pub gguf_arch: Option<fn(&Hparams) -> &'static str>,
    /// The hparams the block count is read from when the class reads it from its own
    /// spelling instead of the common ones (`params::BLOCK_COUNT_KEYS`).
    pub block_count_keys: Option<&'static [&'static str]>,
    /// The class's own pass over the hparams once they are loaded, before anything reads
    /// them (a nested sub-config its `index_tensors` merges into the root).
    pub adjust: Option<AdjustFn>,
    /// The description the class becomes when its config says so (a constructor that
    /// switches to another GGUF architecture with its own tensors, keys and vocabulary);
    /// `Ok(None)` keeps this one. Runs after [`Hooks::adjust`].
    pub switch: Option<SwitchFn>,
    /// KVs the class's `set_vocab` writes after the vocabulary (a draft's mask token).
    pub vocab_tail: Option<VocabTailFn>,
    /// The reference picks this class from the root `architectures` even when the
    /// `text_config` names another one (a wrapper whose text config reports an older class
    /// that cannot load it).
    pub routes_on_root: bool,
}

/// See [`Hooks::vocab_tail`].
pub type VocabTailFn = fn(&Hparams) -> Result<Vec<(String, Value)>, ConvertError>;

/// See [`Hooks::adjust`].
pub type AdjustFn = fn(&mut Hparams) -> Result<(), ConvertError>;

/// See [`Hooks::switch`].
pub type SwitchFn = fn(&Hparams) -> Result<Option<&'static Arch>, ConvertError>;

impl Hooks {
    /// No decision of its own.
    pub const NONE: Hooks = Hooks {
        gguf_arch: None,
        block_count_keys: None,
        adjust: None,
        switch: None,
        vocab_tail: None,
        routes_on_root: false,
    };
}

impl Arch {
    /// `general.architecture` (and the key prefix) for this config.
    pub fn gguf_arch(&self, hp: &Hparams) -> &'static str {
        self.hooks.gguf_arch.map_or(self.gguf, |f| f(hp))
    }
}

/// No class-level filter.
pub fn keep(name: &str) -> Option<String> {
    Some(name.to_string())
}

/// Nothing generated.
pub fn no_extra(_: &Hparams) -> Result<Extra, ConvertError> {
    Ok(Extra::default())
}
