//! GGUF metadata keys (gguf-py's `constants.py` `Keys`), each written once.
//!
//! Global keys are full names. Per-architecture keys (`{arch}.context_length`, …) are given
//! as the part after `{arch}.`; [`arch_key`] makes the full name. Keys that are built from a
//! prefix and an index or a suffix (`general.base_model.{i}.name`, `general.sampling.top_k`)
//! are given as their prefix.

/// `{arch}.{suffix}`: a per-architecture key.
pub fn arch_key(arch: &str, suffix: &str) -> String {
    format!("{arch}.{suffix}")
}

/// `general.*`.
pub mod general {
    /// The architecture (`llama`, `qwen2`, …).
    pub const ARCHITECTURE: &str = "general.architecture";
    /// The version of the quantization format.
    pub const QUANTIZATION_VERSION: &str = "general.quantization_version";
    /// Names of the tensors the parallel `general.tensor_extra.*` arrays describe.
    pub const TENSOR_EXTRA_NAME: &str = "general.tensor_extra.name";
    /// Per listed tensor: whether it may use 4-bit activations (false for W4A16 weights).
    pub const TENSOR_EXTRA_PREC_A4: &str = "general.tensor_extra.prec_a4";
    /// Tensor data alignment.
    pub const ALIGNMENT: &str = "general.alignment";
    /// The file type (`LLAMA_FTYPE_*`).
    pub const FILE_TYPE: &str = "general.file_type";
    /// `model` or `adapter`.
    pub const TYPE: &str = "general.type";
    /// The model's name.
    pub const NAME: &str = "general.name";
    /// The author.
    pub const AUTHOR: &str = "general.author";
    /// The version.
    pub const VERSION: &str = "general.version";
    /// The organization.
    pub const ORGANIZATION: &str = "general.organization";
    /// The finetune.
    pub const FINETUNE: &str = "general.finetune";
    /// The base name.
    pub const BASENAME: &str = "general.basename";
    /// The description.
    pub const DESCRIPTION: &str = "general.description";
    /// Who quantized the model.
    pub const QUANTIZED_BY: &str = "general.quantized_by";
    /// The size label (`7B`, `8x7B`).
    pub const SIZE_LABEL: &str = "general.size_label";
    /// The license.
    pub const LICENSE: &str = "general.license";
    /// The license's name.
    pub const LICENSE_NAME: &str = "general.license.name";
    /// The license's link.
    pub const LICENSE_LINK: &str = "general.license.link";
    /// The model's URL.
    pub const URL: &str = "general.url";
    /// The model's DOI.
    pub const DOI: &str = "general.doi";
    /// The model's UUID.
    pub const UUID: &str = "general.uuid";
    /// The model's repository URL.
    pub const REPO_URL: &str = "general.repo_url";
    /// The source model's URL.
    pub const SOURCE_URL: &str = "general.source.url";
    /// The source model's DOI.
    pub const SOURCE_DOI: &str = "general.source.doi";
    /// The source model's UUID.
    pub const SOURCE_UUID: &str = "general.source.uuid";
    /// The source model's repository URL.
    pub const SOURCE_REPO_URL: &str = "general.source.repo_url";
    /// Prefix of the base-model keys (`.count`, `.{i}.name`, …).
    pub const BASE_MODEL: &str = "general.base_model";
    /// Prefix of the dataset keys (`.count`, `.{i}.name`, …).
    pub const DATASET: &str = "general.dataset";
    /// Prefix of the recommended-sampling keys (`.top_k`, `.temp`, …).
    pub const SAMPLING: &str = "general.sampling";
    /// The tags.
    pub const TAGS: &str = "general.tags";
    /// The languages.
    pub const LANGUAGES: &str = "general.languages";
    /// The base models, as a metadata override gives them (a list of dicts).
    pub const BASE_MODELS: &str = "general.base_models";
    /// The datasets, as a metadata override gives them (a list of dicts).
    pub const DATASETS: &str = "general.datasets";
}

/// Per-architecture keys (the part after `{arch}.`; see [`arch_key`]).
pub mod llm {
    /// The vocabulary size.
    pub const VOCAB_SIZE: &str = "vocab_size";
    /// The training context length.
    pub const CONTEXT_LENGTH: &str = "context_length";
    /// The embedding width.
    pub const EMBEDDING_LENGTH: &str = "embedding_length";
    /// The number of blocks.
    pub const BLOCK_COUNT: &str = "block_count";
    /// The number of decoder blocks of an encoder-decoder model (T5).
    pub const DECODER_BLOCK_COUNT: &str = "decoder_block_count";
    /// The token the decoder of an encoder-decoder model starts from (T5).
    pub const DECODER_START_TOKEN_ID: &str = "decoder_start_token_id";
    /// The FFN width.
    pub const FEED_FORWARD_LENGTH: &str = "feed_forward_length";
    /// One expert's FFN width.
    pub const EXPERT_FEED_FORWARD_LENGTH: &str = "expert_feed_forward_length";
    /// The shared expert's FFN width.
    pub const EXPERT_SHARED_FEED_FORWARD_LENGTH: &str = "expert_shared_feed_forward_length";
    /// The number of shared experts.
    pub const EXPERT_SHARED_COUNT: &str = "expert_shared_count";
    /// The latent size routed experts work in (Nemotron 3 Super).
    pub const MOE_LATENT_SIZE: &str = "moe_latent_size";
    /// The latent size routed experts work in, between their down and up projections
    /// (Kimi-K3's latent MoE).
    pub const EXPERT_LATENT_LENGTH: &str = "expert_latent_length";
    /// Every how many layers one is a MoE layer (Llama 4, ERNIE 4.5 MoE).
    pub const INTERLEAVE_MOE_LAYER_STEP: &str = "interleave_moe_layer_step";
    /// The number of dense blocks before the first MoE block.
    pub const LEADING_DENSE_BLOCK_COUNT: &str = "leading_dense_block_count";
    /// Whether attention and FFN run in parallel.
    pub const USE_PARALLEL_RESIDUAL: &str = "use_parallel_residual";
    /// The layout of fused tensors (Falcon's `jploski`).
    pub const TENSOR_DATA_LAYOUT: &str = "tensor_data_layout";
    /// The number of experts.
    pub const EXPERT_COUNT: &str = "expert_count";
    /// Experts used per token.
    pub const EXPERT_USED_COUNT: &str = "expert_used_count";
    /// Expert groups.
    pub const EXPERT_GROUP_COUNT: &str = "expert_group_count";
    /// Expert groups used per token.
    pub const EXPERT_GROUP_USED_COUNT: &str = "expert_group_used_count";
    /// The expert gating function (`ExpertGatingFuncType`).
    pub const EXPERT_GATING_FUNC: &str = "expert_gating_func";
    /// The pooling type of an embedding model.
    pub const POOLING_TYPE: &str = "pooling_type";
    /// The logit scale.
    pub const LOGIT_SCALE: &str = "logit_scale";
    /// The embedding scale.
    pub const EMBEDDING_SCALE: &str = "embedding_scale";
    /// The residual scale.
    pub const RESIDUAL_SCALE: &str = "residual_scale";
    /// Final logit soft-capping.
    pub const FINAL_LOGIT_SOFTCAPPING: &str = "final_logit_softcapping";
    /// Attention logit soft-capping.
    pub const ATTN_LOGIT_SOFTCAPPING: &str = "attn_logit_softcapping";
    /// A classifier's output labels.
    pub const CLASSIFIER_OUTPUT_LABELS: &str = "classifier.output_labels";
    /// A classifier's pooling type.
    pub const CLASSIFIER_POOLING_TYPE: &str = "classifier.pooling_type";
    /// The number of vision deepstack layers feeding the text model (Qwen3-VL).
    pub const NUM_DEEPSTACK_LAYERS: &str = "n_deepstack_layers";
    /// How many times the block stack is run (looped decoders).
    pub const NUM_LOOPS: &str = "num_loops";
    /// Whether the output norm is skipped between loops of the block stack.
    pub const SKIP_LOOP_FINAL_NORM: &str = "skip_loop_final_norm";
    /// The clamp of the routed experts' SwiGLU gate/up, one value per block.
    pub const SWIGLU_CLAMP_EXP: &str = "swiglu_clamp_exp";
    /// The feed-forward activation's name (`gelu_pytorch_tanh`, ...).
    pub const HIDDEN_ACTIVATION: &str = "hidden_activation";
    /// The width of an audio decoder's input features (WavTokenizer's code embedding).
    pub const FEATURES_LENGTH: &str = "features_length";
    /// Every how many blocks one has routed experts.
    pub const MOE_EVERY_N_LAYERS: &str = "moe_every_n_layers";
}

/// Per-architecture `attention.*` keys (the part after `{arch}.`).
pub mod attention {
    /// Query heads.
    pub const HEAD_COUNT: &str = "attention.head_count";
    /// Key/value heads.
    pub const HEAD_COUNT_KV: &str = "attention.head_count_kv";
    /// Key head size.
    pub const KEY_LENGTH: &str = "attention.key_length";
    /// Value head size.
    pub const VALUE_LENGTH: &str = "attention.value_length";
    /// LayerNorm epsilon.
    pub const LAYERNORM_EPS: &str = "attention.layer_norm_epsilon";
    /// RMSNorm epsilon.
    pub const LAYERNORM_RMS_EPS: &str = "attention.layer_norm_rms_epsilon";
    /// The number of relative-position buckets (T5).
    pub const REL_BUCKETS_COUNT: &str = "attention.relative_buckets_count";
    /// Whether attention is causal.
    pub const CAUSAL: &str = "attention.causal";
    /// The epsilon of group normalisation.
    pub const GROUPNORM_EPS: &str = "attention.group_norm_epsilon";
    /// The number of groups of group normalisation.
    pub const GROUPNORM_GROUPS: &str = "attention.group_norm_groups";
    /// The q/k/v clamp.
    pub const CLAMP_KQV: &str = "attention.clamp_kqv";
    /// The ALiBi bias maximum (MPT).
    pub const MAX_ALIBI_BIAS: &str = "attention.max_alibi_bias";
    /// The sliding window.
    pub const SLIDING_WINDOW: &str = "attention.sliding_window";
    /// Which layers use the sliding window.
    pub const SLIDING_WINDOW_PATTERN: &str = "attention.sliding_window_pattern";
    /// The attention scale.
    pub const SCALE: &str = "attention.scale";
    /// The scale applied to the attention values.
    pub const VALUE_SCALE: &str = "attention.value_scale";
    /// Which layers apply RoPE (false: no positional encoding).
    pub const ROPE_PATTERN: &str = "attention.rope_pattern";
}

/// Per-architecture `rope.*` keys (the part after `{arch}.`).
pub mod rope {
    /// Rotary dimensions.
    pub const DIMENSION_COUNT: &str = "rope.dimension_count";
    /// Rotary dimensions of the sliding-window layers.
    pub const DIMENSION_COUNT_SWA: &str = "rope.dimension_count_swa";
    /// M-RoPE sections.
    pub const DIMENSION_SECTIONS: &str = "rope.dimension_sections";
    /// The rope base frequency.
    pub const FREQ_BASE: &str = "rope.freq_base";
    /// The sliding-window layers' base frequency.
    pub const FREQ_BASE_SWA: &str = "rope.freq_base_swa";
    /// The scaling type.
    pub const SCALING_TYPE: &str = "rope.scaling.type";
    /// The scaling factor.
    pub const SCALING_FACTOR: &str = "rope.scaling.factor";
    /// The attention factor.
    pub const SCALING_ATTN_FACTOR: &str = "rope.scaling.attn_factor";
    /// The context length before scaling.
    pub const SCALING_ORIG_CTX_LEN: &str = "rope.scaling.original_context_length";
    /// NTK-aware scaling's alpha (HunyuanVL's XD-RoPE).
    pub const SCALING_ALPHA: &str = "rope.scaling.alpha";
    /// YaRN's extrapolation factor.
    pub const SCALING_YARN_EXT_FACTOR: &str = "rope.scaling.yarn_ext_factor";
    /// YaRN's attention factor.
    pub const SCALING_YARN_ATTN_FACTOR: &str = "rope.scaling.yarn_attn_factor";
    /// YaRN's beta fast.
    pub const SCALING_YARN_BETA_FAST: &str = "rope.scaling.yarn_beta_fast";
    /// YaRN's beta slow.
    pub const SCALING_YARN_BETA_SLOW: &str = "rope.scaling.yarn_beta_slow";
}

/// `tokenizer.*`.
pub mod tokenizer {
    /// The tokenizer model (`llama`, `gpt2`, `bert`).
    pub const MODEL: &str = "tokenizer.ggml.model";
    /// The pre-tokenizer.
    pub const PRE: &str = "tokenizer.ggml.pre";
    /// The tokens.
    pub const TOKENS: &str = "tokenizer.ggml.tokens";
    /// The token types.
    pub const TOKEN_TYPE: &str = "tokenizer.ggml.token_type";
    /// The number of token types (BERT).
    pub const TOKEN_TYPE_COUNT: &str = "tokenizer.ggml.token_type_count";
    /// The token scores.
    pub const SCORES: &str = "tokenizer.ggml.scores";
    /// The BPE merges.
    pub const MERGES: &str = "tokenizer.ggml.merges";
    /// The BOS token id.
    pub const BOS_ID: &str = "tokenizer.ggml.bos_token_id";
    /// The EOS token id.
    pub const EOS_ID: &str = "tokenizer.ggml.eos_token_id";
    /// The unknown token id.
    pub const UNK_ID: &str = "tokenizer.ggml.unknown_token_id";
    /// The separator token id (gguf-py's spelling).
    pub const SEP_ID: &str = "tokenizer.ggml.seperator_token_id";
    /// The padding token id.
    pub const PAD_ID: &str = "tokenizer.ggml.padding_token_id";
    /// The mask token id.
    pub const MASK_ID: &str = "tokenizer.ggml.mask_token_id";
    /// The end-of-turn token id.
    pub const EOT_ID: &str = "tokenizer.ggml.eot_token_id";
    /// The end-of-message token id.
    pub const EOM_ID: &str = "tokenizer.ggml.eom_token_id";
    /// Whether to add BOS.
    pub const ADD_BOS: &str = "tokenizer.ggml.add_bos_token";
    /// Whether to add EOS.
    pub const ADD_EOS: &str = "tokenizer.ggml.add_eos_token";
    /// Whether to add SEP.
    pub const ADD_SEP: &str = "tokenizer.ggml.add_sep_token";
    /// Whether to add a space prefix.
    pub const ADD_SPACE_PREFIX: &str = "tokenizer.ggml.add_space_prefix";
    /// Whether SentencePiece collapses runs of whitespace (`remove_extra_whitespaces`).
    pub const REMOVE_EXTRA_WS: &str = "tokenizer.ggml.remove_extra_whitespaces";
    /// SentencePiece's precompiled normalization map, as bytes.
    pub const PRECOMPILED_CHARSMAP: &str = "tokenizer.ggml.precompiled_charsmap";
    /// Token ids whose logits are suppressed.
    pub const SUPPRESS_TOKENS: &str = "tokenizer.ggml.suppress_tokens";
    /// The fill-in-the-middle prefix token id.
    pub const FIM_PRE_ID: &str = "tokenizer.ggml.fim_pre_token_id";
    /// The fill-in-the-middle suffix token id.
    pub const FIM_SUF_ID: &str = "tokenizer.ggml.fim_suf_token_id";
    /// The fill-in-the-middle middle token id.
    pub const FIM_MID_ID: &str = "tokenizer.ggml.fim_mid_token_id";
    /// The fill-in-the-middle padding token id.
    pub const FIM_PAD_ID: &str = "tokenizer.ggml.fim_pad_token_id";
    /// The fill-in-the-middle repository-name token id.
    pub const FIM_REP_ID: &str = "tokenizer.ggml.fim_rep_token_id";
    /// The fill-in-the-middle file-separator token id.
    pub const FIM_SEP_ID: &str = "tokenizer.ggml.fim_sep_token_id";
    /// The older spelling of the fill-in-the-middle prefix token id (gguf-py keeps it,
    /// deprecated).
    pub const PREFIX_ID: &str = "tokenizer.ggml.prefix_token_id";
    /// The older spelling of the fill-in-the-middle suffix token id (deprecated).
    pub const SUFFIX_ID: &str = "tokenizer.ggml.suffix_token_id";
    /// The older spelling of the fill-in-the-middle middle token id (deprecated).
    pub const MIDDLE_ID: &str = "tokenizer.ggml.middle_token_id";
    /// A whole Hugging Face `tokenizer.json`, as a string.
    pub const HF_JSON: &str = "tokenizer.huggingface.json";
    /// The RWKV world tokenizer's vocabulary.
    pub const RWKV: &str = "tokenizer.rwkv.world";
    /// WordPiece lowercasing.
    pub const LOWERCASE: &str = "tokenizer.ggml.normalizer.lowercase";
    /// WordPiece accent stripping.
    pub const STRIP_ACCENTS: &str = "tokenizer.ggml.normalizer.strip_accents";
    /// The default chat template.
    pub const CHAT_TEMPLATE: &str = "tokenizer.chat_template";
    /// The names of the named chat templates.
    pub const CHAT_TEMPLATES: &str = "tokenizer.chat_templates";
    /// The tool-use chat template.
    pub const CHAT_TEMPLATE_TOOL_USE: &str = "tokenizer.chat_template.tool_use";
}

/// `split.*` (shards of one model).
pub mod split {
    /// This shard's index.
    pub const NO: &str = "split.no";
    /// The number of shards.
    pub const COUNT: &str = "split.count";
    /// The number of tensors in all shards.
    pub const TENSORS_COUNT: &str = "split.tensors.count";
}

/// `quantize.*` (what llama-quantize records).
pub mod quantize {
    /// The importance-matrix file.
    pub const IMATRIX_FILE: &str = "quantize.imatrix.file";
    /// The importance matrix's dataset.
    pub const IMATRIX_DATASET: &str = "quantize.imatrix.dataset";
    /// The number of importance-matrix entries.
    pub const IMATRIX_ENTRIES_COUNT: &str = "quantize.imatrix.entries_count";
    /// The number of chunks the importance matrix was computed on.
    pub const IMATRIX_CHUNKS_COUNT: &str = "quantize.imatrix.chunks_count";
}

/// `ggufkit.quantize.*`: how `gguf-quantize --target-size/--target-bpw` chose the types.
/// llama.cpp writes no `ggufkit.*` key, so these never collide with its own; the default
/// (byte-identical) path writes none of them.
pub mod ggufkit {
    /// The budget as asked: `size=<bytes>` or `bpw=<bits per weight>` (string).
    pub const BUDGET: &str = "ggufkit.quantize.budget";
    /// The tool and version that chose the types: `ggufkit gguf-quantize 0.1.0` (string).
    pub const TOOL: &str = "ggufkit.quantize.tool";
    /// What the allocation minimised: `imatrix-weighted squared error` or `squared error`.
    pub const METRIC: &str = "ggufkit.quantize.metric";
    /// The candidate types, comma-separated (`q3_k,q4_k,…`).
    pub const CANDIDATES: &str = "ggufkit.quantize.candidates";
}

/// `imatrix.*` (a GGUF importance-matrix file).
pub mod imatrix {
    /// The datasets.
    pub const DATASETS: &str = "imatrix.datasets";
    /// The number of chunks.
    pub const CHUNK_COUNT: &str = "imatrix.chunk_count";
    /// The chunk size.
    pub const CHUNK_SIZE: &str = "imatrix.chunk_size";
}

/// `xielu.*`: per-layer parameters of the xIELU activation (Apertus), global keys.
pub mod xielu {
    /// `alpha_p` per layer.
    pub const ALPHA_P: &str = "xielu.alpha_p";
    /// `alpha_n` per layer.
    pub const ALPHA_N: &str = "xielu.alpha_n";
    /// `beta` per layer.
    pub const BETA: &str = "xielu.beta";
    /// `eps` per layer.
    pub const EPS: &str = "xielu.eps";
}

/// Per-architecture keys of the families added with Apertus, Ministral 3, EmbeddingGemma
/// and the encoders (`{arch}.` + these).
pub mod extra {
    /// `attention.temperature_scale` (Ministral 3's Llama-4 scaling beta).
    pub const ATTN_TEMPERATURE_SCALE: &str = "attention.temperature_scale";
    /// `attention.temperature_length` (Mistral Large 3: yarn's original context length).
    pub const ATTN_TEMPERATURE_LENGTH: &str = "attention.temperature_length";
    /// `rope.scaling.yarn_log_multiplier`.
    pub const ROPE_SCALING_YARN_LOG_MUL: &str = "rope.scaling.yarn_log_multiplier";
    /// `{dense}_feat_in` (EmbeddingGemma's sentence-transformers Dense layers).
    pub const DENSE_FEAT_IN: &str = "{dense}_feat_in";
    /// `{dense}_feat_out`.
    pub const DENSE_FEAT_OUT: &str = "{dense}_feat_out";
    /// `router_logit_softcapping` (Grok: the cap on the expert router's logits).
    pub const ROUTER_LOGIT_SOFTCAPPING: &str = "router_logit_softcapping";
    /// `attention.output_scale` (Grok: the attention logits' multiplier).
    pub const ATTN_OUTPUT_SCALE: &str = "attention.output_scale";
}

/// Per-architecture keys of multi-head latent attention (DeepSeek V2/V3), next-token
/// prediction layers (GLM-4.5) and gpt-oss (`{arch}.` + these).
pub mod mla {
    /// `attention.q_lora_rank`: the rank of MLA's query down-projection.
    pub const Q_LORA_RANK: &str = "attention.q_lora_rank";
    /// `attention.kv_lora_rank`: the rank of MLA's key/value down-projection.
    pub const KV_LORA_RANK: &str = "attention.kv_lora_rank";
    /// `attention.key_length_mla`: the decompressed key head size.
    pub const KEY_LENGTH_MLA: &str = "attention.key_length_mla";
    /// `attention.value_length_mla`: the decompressed value head size.
    pub const VALUE_LENGTH_MLA: &str = "attention.value_length_mla";
    /// `expert_weights_scale`: the routed experts' output scale.
    pub const EXPERT_WEIGHTS_SCALE: &str = "expert_weights_scale";
    /// `expert_weights_norm`: whether the top-k expert weights are normalised.
    pub const EXPERT_WEIGHTS_NORM: &str = "expert_weights_norm";
    /// `nextn_predict_layers`: the number of next-token-prediction layers at the end.
    pub const NEXTN_PREDICT_LAYERS: &str = "nextn_predict_layers";
    /// `attention.kv_lora_rank_swa`: the key/value rank of sliding-window MLA layers.
    pub const KV_LORA_RANK_SWA: &str = "attention.kv_lora_rank_swa";
    /// `attention.key_length_mla_swa`: the decompressed key head size of sliding-window layers.
    pub const KEY_LENGTH_MLA_SWA: &str = "attention.key_length_mla_swa";
    /// `attention.value_length_mla_swa`: the decompressed value head size of sliding-window
    /// layers.
    pub const VALUE_LENGTH_MLA_SWA: &str = "attention.value_length_mla_swa";
}

/// `attention.indexer.*`: the lightning indexer of DeepSeek sparse attention (DSA), which
/// picks the keys each query attends to, `{arch}.` + these.
pub mod indexer {
    /// The indexer's query heads.
    pub const HEAD_COUNT: &str = "attention.indexer.head_count";
    /// The indexer's key (and query head) size.
    pub const KEY_LENGTH: &str = "attention.indexer.key_length";
    /// The number of keys each query selects.
    pub const TOP_K: &str = "attention.indexer.top_k";
    /// Per layer: whether the indexer runs there (`full`) or the layer reuses the previous
    /// full layer's selection.
    pub const TYPES: &str = "attention.indexer.types";
    /// The number of key positions pooled into one scored block (block-sparse attention).
    pub const BLOCK_SIZE: &str = "attention.indexer.block_size";
    /// The number of blocks just before a query that it always attends to.
    pub const LOCAL_BLOCKS: &str = "attention.indexer.local_blocks";
    /// The number of key positions the indexer's k-pool compresses into one entry.
    pub const KPOOL: &str = "attention.indexer.kpool";
    /// Whether the incomplete k-pool entry at the end is always selected.
    pub const KPOOL_SELECT_TAIL: &str = "attention.indexer.kpool_select_tail";
}

/// `ssm.*`: state-space mixer parameters (Mamba, Mamba-2 and the hybrids), `{arch}.` + these.
pub mod ssm {
    /// The depthwise convolution's kernel size.
    pub const CONV_KERNEL: &str = "ssm.conv_kernel";
    /// The inner (expanded) size.
    pub const INNER_SIZE: &str = "ssm.inner_size";
    /// The state size.
    pub const STATE_SIZE: &str = "ssm.state_size";
    /// The time-step rank (Mamba-2 and the hybrids: the number of SSM heads).
    pub const TIME_STEP_RANK: &str = "ssm.time_step_rank";
    /// The number of B/C groups (Mamba-2).
    pub const GROUP_COUNT: &str = "ssm.group_count";
    /// RMS norms on dt, B and C (Falcon-Mamba, Jamba).
    pub const DT_B_C_RMS: &str = "ssm.dt_b_c_rms";
}

/// `kda.*`: Kimi Delta Attention (gated delta-rule linear attention), `{arch}.` + these.
pub mod kda {
    /// The size of one linear-attention head.
    pub const HEAD_DIM: &str = "kda.head_dim";
    /// `kda.safe_gate`: the forget gate is bounded below.
    pub const SAFE_GATE: &str = "kda.safe_gate";
    /// `kda.gate_lower_bound`: the forget gate's lower bound in log space.
    pub const GATE_LOWER_BOUND: &str = "kda.gate_lower_bound";
}

/// `activation.*`: parameters of a block's activation function, `{arch}.` + these.
pub mod activation {
    /// `activation.situ_beta`: the situ activation's beta.
    pub const SITU_BETA: &str = "activation.situ_beta";
    /// `activation.situ_linear_beta`: the situ activation's linear-part beta.
    pub const SITU_LINEAR_BETA: &str = "activation.situ_linear_beta";
}

/// `attn_res.*`: cross-layer attention residuals, `{arch}.` + these.
pub mod attn_res {
    /// `attn_res.block_size`: how many layers one residual block spans.
    pub const BLOCK_SIZE: &str = "attn_res.block_size";
}

/// `shortconv.*`: LFM2's short convolution, `{arch}.` + these.
pub mod shortconv {
    /// The convolution's cache length (its kernel size).
    pub const L_CACHE: &str = "shortconv.l_cache";
}

/// Keys of the hybrid (attention + state-space) families, `{arch}.` + these.
pub mod hybrid {
    /// Whether rope scaling was used in fine-tuning (Granite hybrids: rope is used at all).
    pub const ROPE_SCALING_FINETUNED: &str = "rope.scaling.finetuned";
    /// Which layers are recurrent (Qwen3-Next, Qwen3.5: linear attention).
    pub const RECURRENT_LAYERS: &str = "attention.recurrent_layers";
    /// Every how many layers one is full attention (Qwen3-Next, Qwen3.5).
    pub const FULL_ATTENTION_INTERVAL: &str = "full_attention_interval";
}

/// `clip.*`: multimodal projector files (`general.architecture = clip`,
/// `general.type = mmproj`; gguf-py's `Keys.Clip`, `Keys.ClipVision`, `Keys.ClipAudio`).
pub mod clip {
    /// The projector type (`gemma3`, `pixtral`, `qwen2vl_merger`, …).
    pub const PROJECTOR_TYPE: &str = "clip.projector_type";
    /// The file holds a vision encoder.
    pub const HAS_VISION_ENCODER: &str = "clip.has_vision_encoder";
    /// The file holds an audio encoder.
    pub const HAS_AUDIO_ENCODER: &str = "clip.has_audio_encoder";
    /// The vision tower uses GELU.
    pub const USE_GELU: &str = "clip.use_gelu";
    /// The vision tower uses SiLU.
    pub const USE_SILU: &str = "clip.use_silu";
    /// The position table's height in patches (written without the `clip.` prefix, as
    /// gguf-py's writer is called with this literal key).
    pub const POS_EMB_HEIGHT: &str = "vision.pos_emb_height";
    /// The position table's width in patches (no `clip.` prefix, as above).
    pub const POS_EMB_WIDTH: &str = "vision.pos_emb_width";
    /// The temporal position table's length in frames (no `clip.` prefix, as above).
    pub const POS_EMB_TIME: &str = "vision.pos_emb_time";

    /// `clip.vision.*`.
    pub mod vision {
        /// The vision projector type of a file with several encoders.
        pub const PROJECTOR_TYPE: &str = "clip.vision.projector_type";
        /// The input image size.
        pub const IMAGE_SIZE: &str = "clip.vision.image_size";
        /// The smallest image, in pixels (dynamic-resolution towers).
        pub const IMAGE_MIN_PIXELS: &str = "clip.vision.image_min_pixels";
        /// The largest image, in pixels (dynamic-resolution towers).
        pub const IMAGE_MAX_PIXELS: &str = "clip.vision.image_max_pixels";
        /// The preprocessor's image size (tiling towers).
        pub const PREPROC_IMAGE_SIZE: &str = "clip.vision.preproc_image_size";
        /// The fewest tiles an image is cut into (dynamic tiling, InternVL).
        pub const PREPROC_MIN_TILES: &str = "clip.vision.preproc_min_tiles";
        /// The most tiles an image is cut into (dynamic tiling, InternVL).
        pub const PREPROC_MAX_TILES: &str = "clip.vision.preproc_max_tiles";
        /// The patch size.
        pub const PATCH_SIZE: &str = "clip.vision.patch_size";
        /// The tower's width.
        pub const EMBEDDING_LENGTH: &str = "clip.vision.embedding_length";
        /// The tower's FFN width.
        pub const FEED_FORWARD_LENGTH: &str = "clip.vision.feed_forward_length";
        /// The text model's width (what the projector outputs).
        pub const PROJECTION_DIM: &str = "clip.vision.projection_dim";
        /// The tower's block count.
        pub const BLOCK_COUNT: &str = "clip.vision.block_count";
        /// The per-channel image mean.
        pub const IMAGE_MEAN: &str = "clip.vision.image_mean";
        /// The per-channel image standard deviation.
        pub const IMAGE_STD: &str = "clip.vision.image_std";
        /// The spatial merge size (patches merged per side).
        pub const SPATIAL_MERGE_SIZE: &str = "clip.vision.spatial_merge_size";
        /// Qwen2.5-VL: every n-th block uses full attention.
        pub const N_WA_PATTERN: &str = "clip.vision.n_wa_pattern";
        /// Qwen3-VL: which blocks feed a deepstack merger.
        pub const IS_DEEPSTACK_LAYERS: &str = "clip.vision.is_deepstack_layers";
        /// Windowed attention's window size.
        pub const WINDOW_SIZE: &str = "clip.vision.window_size";
        /// Each block's attention kind (-1 full, 0 / 1 windowed kinds: MiMo-VL).
        pub const WA_PATTERN_MODE: &str = "clip.vision.wa_pattern_mode";
        /// The bound the tower's SwiGLU activations are clamped to (GLM-5V).
        pub const SWIGLU_CLAMP: &str = "clip.vision.swiglu_clamp";
        /// The attention heads.
        pub const HEAD_COUNT: &str = "clip.vision.attention.head_count";
        /// The key/value heads of a grouped-query tower (EXAONE 4.5).
        pub const HEAD_COUNT_KV: &str = "clip.vision.attention.head_count_kv";
        /// The layer norm epsilon.
        pub const LAYERNORM_EPS: &str = "clip.vision.attention.layer_norm_epsilon";
        /// The projector's scale (pooling or pixel-shuffle) factor.
        pub const PROJECTOR_SCALE_FACTOR: &str = "clip.vision.projector.scale_factor";
        /// The tower layer each of several projectors reads (Granite 4 Vision).
        pub const FEATURE_LAYERS: &str = "clip.vision.feature_layer";
        /// The image grid pinpoints, as (width, height) pairs flattened (Granite 4 Vision).
        pub const IMAGE_GRID_PINPOINTS: &str = "clip.vision.image_grid_pinpoints";
        /// A window-QFormer projector's query side (Granite 4 Vision).
        pub const PROJECTOR_QUERY_SIDE: &str = "clip.vision.projector.query_side";
        /// A window-QFormer projector's window side (Granite 4 Vision).
        pub const PROJECTOR_WINDOW_SIDE: &str = "clip.vision.projector.window_side";
        /// Each projector's spatial sampling offset, -1 for none (Granite 4 Vision).
        pub const PROJECTOR_SPATIAL_OFFSETS: &str = "clip.vision.projector.spatial_offsets";
        /// Block indexes of the tower: those with full attention, the others windowed
        /// (Youtu-VL), or where a merger is inserted (MiniCPM-V 4.6).
        pub const WA_LAYER_INDEXES: &str = "clip.vision.wa_layer_indexes";

        /// `clip.vision.sam.*`: the SAM tower beside the main one (DeepSeek-OCR).
        pub mod sam {
            /// The SAM tower's block count.
            pub const BLOCK_COUNT: &str = "clip.vision.sam.block_count";
            /// The SAM tower's width.
            pub const EMBEDDING_LENGTH: &str = "clip.vision.sam.embedding_length";
            /// The SAM tower's attention heads.
            pub const HEAD_COUNT: &str = "clip.vision.sam.head_count";
        }
    }

    /// `clip.audio.*`.
    pub mod audio {
        /// The audio projector type of a file with several encoders.
        pub const PROJECTOR_TYPE: &str = "clip.audio.projector_type";
        /// The mel bins of the input features.
        pub const NUM_MEL_BINS: &str = "clip.audio.num_mel_bins";
        /// The encoder's width.
        pub const EMBEDDING_LENGTH: &str = "clip.audio.embedding_length";
        /// The encoder's FFN width.
        pub const FEED_FORWARD_LENGTH: &str = "clip.audio.feed_forward_length";
        /// The text model's width.
        pub const PROJECTION_DIM: &str = "clip.audio.projection_dim";
        /// The encoder's block count.
        pub const BLOCK_COUNT: &str = "clip.audio.block_count";
        /// The attention heads.
        pub const HEAD_COUNT: &str = "clip.audio.attention.head_count";
        /// The layer norm epsilon.
        pub const LAYERNORM_EPS: &str = "clip.audio.attention.layer_norm_epsilon";
        /// The projector's frame stacking factor.
        pub const PROJECTOR_STACK_FACTOR: &str = "clip.audio.projector.stack_factor";
        /// The encoder's total time subsampling (Parakeet).
        pub const SUBSAMPLING_FACTOR: &str = "clip.audio.subsampling_factor";
        /// The frames of one attention block of a block-attention encoder.
        pub const CHUNK_SIZE: &str = "clip.audio.chunk_size";
        /// The encoder's depthwise convolution kernel size.
        pub const CONV_KERNEL_SIZE: &str = "clip.audio.conv_kernel_size";
        /// The relative positions the encoder's attention embeds.
        pub const MAX_POS_EMB: &str = "clip.audio.max_pos_emb";
        /// The encoder layers whose outputs the projector reads beside the last one's.
        pub const FEATURE_LAYERS: &str = "clip.audio.feature_layer";
        /// The frames of one window of a window-QFormer projector.
        pub const PROJECTOR_WINDOW_SIZE: &str = "clip.audio.projector.window_size";
        /// The window-QFormer projector's downsampling rate.
        pub const PROJECTOR_DOWNSAMPLE_RATE: &str = "clip.audio.projector.downsample_rate";
        /// The window-QFormer projector's attention heads.
        pub const PROJECTOR_HEAD_COUNT: &str = "clip.audio.projector.head_count";
        /// The residual vector quantizer's quantizer count (MiMo's audio tokenizer).
        pub const RVQ_NUM_QUANTIZERS: &str = "clip.audio.rvq.num_quantizers";
        /// Each quantizer's codebook size.
        pub const RVQ_CODEBOOK_SIZE: &str = "clip.audio.rvq.codebook_size";
        /// Each block's attention kind (-1 full, 0 windowed).
        pub const WA_PATTERN_MODE: &str = "clip.audio.wa_pattern_mode";
        /// Windowed attention's window size.
        pub const WINDOW_SIZE: &str = "clip.audio.window_size";
        /// The block count of the LLM-side audio connector (MiMo's input local transformer).
        pub const LOCAL_BLOCK_COUNT: &str = "clip.audio.local_block_count";
        /// The frames that connector groups into one.
        pub const LOCAL_GROUP_SIZE: &str = "clip.audio.local_group_size";
    }
}

/// Per-architecture keys of models whose sliding-window layers have their own head and
/// rotary sizes, whose last layers reuse earlier layers' KV cache, and which add a per-layer
/// input embedding (`{arch}.` + these).
pub mod layered {
    /// `attention.key_length_swa`: the key head size of sliding-window layers.
    pub const KEY_LENGTH_SWA: &str = "attention.key_length_swa";
    /// `attention.value_length_swa`: the value head size of sliding-window layers.
    pub const VALUE_LENGTH_SWA: &str = "attention.value_length_swa";
    /// `rope.dimension_count_swa`: the rotary dimensions of sliding-window layers.
    pub const ROPE_DIMENSION_COUNT_SWA: &str = "rope.dimension_count_swa";
    /// `attention.shared_kv_layers`: how many last layers reuse an earlier layer's KV cache.
    pub const SHARED_KV_LAYERS: &str = "attention.shared_kv_layers";
    /// `embedding_length_per_layer_input`: the width of the per-layer input embedding.
    pub const EMBEDDING_LENGTH_PER_LAYER_INPUT: &str = "embedding_length_per_layer_input";
    /// `embedding_length_out`: the width of the hidden state a draft head hands back.
    pub const EMBEDDING_LENGTH_OUT: &str = "embedding_length_out";
}

/// Per-architecture keys of hashed n-gram per-layer embeddings (`{arch}.` + these; gguf-py's
/// `Keys.PerLayerEmbedding`).
pub mod ple {
    /// `ple.layers`: the (0-based) layers with an n-gram embedding module.
    pub const LAYERS: &str = "ple.layers";
    /// `ple.ngram_size`: the largest n-gram hashed.
    pub const NGRAM_SIZE: &str = "ple.ngram_size";
    /// `ple.heads_per_ngram`: hashed heads per n-gram order.
    pub const HEADS_PER_NGRAM: &str = "ple.heads_per_ngram";
    /// `ple.conv_kernel`: the kernel of the module's depthwise convolution.
    pub const CONV_KERNEL: &str = "ple.conv_kernel";
    /// `ple.layer_multipliers`: the hash multipliers (UINT64).
    pub const LAYER_MULTIPLIERS: &str = "ple.layer_multipliers";
    /// `ple.head_offsets`: each head's first row in the table (UINT64).
    pub const HEAD_OFFSETS: &str = "ple.head_offsets";
    /// `ple.head_vocab_sizes`: each head's rows in the table (UINT64).
    pub const HEAD_VOCAB_SIZES: &str = "ple.head_vocab_sizes";
    /// `ple.eos_token_id`: the token that resets the n-grams.
    pub const EOS_TOKEN_ID: &str = "ple.eos_token_id";
    /// `ple.image_token_id`: the token standing in for image positions.
    pub const IMAGE_TOKEN_ID: &str = "ple.image_token_id";
}

/// Per-architecture keys of hyper-connections, compressed sparse attention with a grouped
/// output projection, and hash-routed MoE layers (`{arch}.` + these; gguf-py's
/// `Keys.HyperConnection`, `Keys.Attention` and `Keys.LLM`).
pub mod compressed {
    /// `hyper_connection.count`: the number of parallel residual streams.
    pub const HC_COUNT: &str = "hyper_connection.count";
    /// `hyper_connection.sinkhorn_iterations`: Sinkhorn-Knopp iterations of the mixing.
    pub const HC_SINKHORN_ITERATIONS: &str = "hyper_connection.sinkhorn_iterations";
    /// `hyper_connection.epsilon`: the Sinkhorn-Knopp normalisation floor.
    pub const HC_EPSILON: &str = "hyper_connection.epsilon";
    /// `hyper_connection.magnitude`: the scale of the post gate.
    pub const HC_MAGNITUDE: &str = "hyper_connection.magnitude";
    /// `hyper_connection.low_rank`: the rank of a low-rank input mixer (absent: full rank).
    pub const HC_LOW_RANK: &str = "hyper_connection.low_rank";
    /// `attention.output_group_count`: the head groups of the grouped output projection.
    pub const OUTPUT_GROUP_COUNT: &str = "attention.output_group_count";
    /// `attention.output_lora_rank`: the per-group rank of the grouped output projection.
    pub const OUTPUT_LORA_RANK: &str = "attention.output_lora_rank";
    /// `attention.compress_ratios`: per layer, how many positions a compressed entry holds.
    pub const COMPRESS_RATIOS: &str = "attention.compress_ratios";
    /// `attention.compress_rope_freq_base`: the rope base of the compressed branches.
    pub const COMPRESS_ROPE_FREQ_BASE: &str = "attention.compress_rope_freq_base";
    /// `hash_layer_count`: the leading MoE layers routed by a token-id table.
    pub const HASH_LAYER_COUNT: &str = "hash_layer_count";
    /// `swiglu_clamp_shexp`: per layer, the shared experts' SwiGLU clamp.
    pub const SWIGLU_CLAMP_SHEXP: &str = "swiglu_clamp_shexp";
}

/// Per-architecture keys of the RWKV-style recurrent (time-mix / channel-mix) models,
/// `{arch}.` + these (gguf-py's `Keys.LLM`, `Keys.Attention` and `Keys.WKV`).
pub mod wkv {
    /// `rescale_every_n_layers`: every how many layers the output matrices were halved.
    pub const RESCALE_EVERY_N_LAYERS: &str = "rescale_every_n_layers";
    /// `time_mix_extra_dim`: the rank of the token-shift LoRA.
    pub const TIME_MIX_EXTRA_DIM: &str = "time_mix_extra_dim";
    /// `time_decay_extra_dim`: the rank of the decay LoRA.
    pub const TIME_DECAY_EXTRA_DIM: &str = "time_decay_extra_dim";
    /// `token_shift_count`: how many token shifts a layer keeps.
    pub const TOKEN_SHIFT_COUNT: &str = "token_shift_count";
    /// `wkv.head_size`: the size of one WKV head.
    pub const HEAD_SIZE: &str = "wkv.head_size";
    /// `attention.decay_lora_rank`: the rank of the decay LoRA.
    pub const DECAY_LORA_RANK: &str = "attention.decay_lora_rank";
    /// `attention.iclr_lora_rank`: the rank of the in-context learning-rate LoRA.
    pub const ICLR_LORA_RANK: &str = "attention.iclr_lora_rank";
    /// `attention.value_residual_mix_lora_rank`: the rank of the value-residual LoRA.
    pub const VALUE_RESIDUAL_MIX_LORA_RANK: &str = "attention.value_residual_mix_lora_rank";
    /// `attention.gate_lora_rank`: the rank of the output-gate LoRA.
    pub const GATE_LORA_RANK: &str = "attention.gate_lora_rank";
}

/// Per-architecture keys of speculative-decoding drafts (the part after `{arch}.`).
pub mod draft {
    /// `target_layers`: the target model's layers whose hidden states the draft reads.
    pub const TARGET_LAYERS: &str = "target_layers";
    /// `target_hidden_size`: the width of the target model's hidden states.
    pub const TARGET_HIDDEN_SIZE: &str = "target_hidden_size";
    /// `norm_before_residual`: the draft normalises before its residual connection.
    pub const NORM_BEFORE_RESIDUAL: &str = "norm_before_residual";
    /// `norm_before_fc`: the fused target features are normalised before the fc projection.
    pub const NORM_BEFORE_FC: &str = "norm_before_fc";
    /// `block_size`: how many tokens a block-diffusion draft proposes at once.
    pub const BLOCK_SIZE: &str = "block_size";
    /// `conv_kernel_size`: the width of a draft's short convolutions.
    pub const CONV_KERNEL_SIZE: &str = "conv_kernel_size";
    /// `conv_group_size`: the channels per group of those convolutions.
    pub const CONV_GROUP_SIZE: &str = "conv_group_size";
    /// `selector_rank`: the rank of the candidate selector's projection.
    pub const SELECTOR_RANK: &str = "selector_rank";
    /// `selector_top_k`: how many candidates the selector keeps.
    pub const SELECTOR_TOP_K: &str = "selector_top_k";
    /// `sample_from_anchor`: a DSpark draft samples its first token from the anchor position.
    pub const SAMPLE_FROM_ANCHOR: &str = "sample_from_anchor";
    /// `has_confidence_head`: a DSpark draft has a confidence head (`conf_proj`).
    pub const HAS_CONFIDENCE_HEAD: &str = "has_confidence_head";
}

/// An audio decoder's PosNet stack (WavTokenizer).
pub mod posnet {
    /// The PosNet blocks' width.
    pub const EMBEDDING_LENGTH: &str = "posnet.embedding_length";
    /// The number of PosNet blocks.
    pub const BLOCK_COUNT: &str = "posnet.block_count";
}

/// An audio decoder's ConvNeXt stack (WavTokenizer).
pub mod convnext {
    /// The ConvNeXt blocks' width.
    pub const EMBEDDING_LENGTH: &str = "convnext.embedding_length";
    /// The number of ConvNeXt blocks.
    pub const BLOCK_COUNT: &str = "convnext.block_count";
}

/// Per-architecture keys of grouped chunk experts (GroveMoE: small experts each shared by a
/// group of routed ones), `{arch}.` + these.
pub mod chunk_experts {
    /// `expert_chunk_feed_forward_length`: the FFN width of one chunk expert.
    pub const FEED_FORWARD_LENGTH: &str = "expert_chunk_feed_forward_length";
    /// `experts_per_group`: how many routed experts share one chunk expert.
    pub const EXPERTS_PER_GROUP: &str = "experts_per_group";
    /// `expert_group_scale`: the chunk experts' output scale.
    pub const GROUP_SCALE: &str = "expert_group_scale";
}

/// Keys of diffusion language models (global: no architecture prefix).
pub mod diffusion {
    /// `diffusion.shift_logits`: whether the logits are shifted by one position.
    pub const SHIFT_LOGITS: &str = "diffusion.shift_logits";
}

/// Per-architecture keys of Granite Switch's embedded LoRA adapters, `{arch}.` + these.
pub mod adapters {
    /// `adapters.count`: the adapters (without the zero slot).
    pub const COUNT: &str = "adapters.count";
    /// `adapters.token_ids_activate`: the control tokens that select each adapter.
    pub const TOKEN_IDS_ACTIVATE: &str = "adapters.token_ids_activate";
    /// `adapters.token_ids_substitute`: the tokens that replace them in the input.
    pub const TOKEN_IDS_SUBSTITUTE: &str = "adapters.token_ids_substitute";
    /// `adapters.lora_rank`: the largest LoRA rank.
    pub const LORA_RANK: &str = "adapters.lora_rank";
    /// `adapters.router_gain`: the control-token router's gain.
    pub const ROUTER_GAIN: &str = "adapters.router_gain";
}

/// Per-architecture keys of HRM-Text's recurrent stacks, `{arch}.` + these.
pub mod hrm {
    /// `hrm.layers_per_stack`: the blocks of each of the L and H stacks.
    pub const LAYERS_PER_STACK: &str = "hrm.layers_per_stack";
    /// `hrm.h_cycles`: the high-level cycles.
    pub const H_CYCLES: &str = "hrm.h_cycles";
    /// `hrm.l_cycles`: the low-level cycles per high-level one.
    pub const L_CYCLES: &str = "hrm.l_cycles";
    /// `hrm.prefix_lm`: instruction tokens attend bidirectionally.
    pub const PREFIX_LM: &str = "hrm.prefix_lm";
}
