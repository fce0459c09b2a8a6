//! HF tensor name → GGUF tensor name (gguf-py's `tensor_mapping.py`).
//!
//! [`TABLE`] lists, for each GGUF tensor ([`Tensor`]), every HF spelling of it, with `{bid}`
//! standing for the block number, and which families use each spelling (as gguf-py's
//! comments do; the tests of `arch` check them); each architecture lists which GGUF tensors it has
//! (`Arch::tensors`, gguf-py's `MODEL_TENSORS`), and its [`TensorMap`] holds the spellings
//! of those tensors only. Where one HF spelling names different tensors in different
//! architectures, the later row of [`TABLE`] wins among the tensors an architecture has, and
//! an architecture may override a spelling (`Arch::tensor_overrides`). A lookup tries the
//! full name, then the name without a trailing `.weight` / `.bias`, re-appending that suffix
//! to the GGUF name. GGUF names map to themselves, so a name that is already mapped (stacked
//! experts, GPT-2's double mapping) passes through.

use std::collections::HashMap;

/// An HF spelling of a tensor and the families whose conversions use it.
#[derive(Debug)]
pub struct Spelling {
    /// The HF name without `.weight` / `.bias` (unless the suffix is part of the spelling),
    /// `{bid}` for the block number.
    pub hf: &'static str,
    /// The families that use this spelling (gguf-py's comments beside each name in
    /// `tensor_mapping.py`, made checkable). In [`TABLE`], the `general.architecture` of each
    /// text family: its name map resolves the spelling to the row's tensor, and a fixture
    /// tensor name of the family that resolves through the spelling is listed here (see the
    /// tests of `arch`). In the projector table, the `clip.projector_type` of each projector
    /// family.
    /// Documentation the tests check; the conversion itself reads only [`Spelling::hf`].
    #[allow(dead_code)]
    pub used_by: &'static [&'static str],
}

/// One GGUF tensor and every HF spelling of it.
#[derive(Debug)]
pub struct Row {
    /// The GGUF tensor.
    pub tensor: Tensor,
    /// Its HF spellings, each with the families that use it.
    pub spellings: &'static [Spelling],
}

/// Declares a tensor table from one row per tensor: its documentation, its variant and GGUF
/// base name, then each HF spelling with the families that use it. The header names the
/// tensor enum and the row type, each with its documentation; the macro declares the enum,
/// its `gguf()` base names and `TABLE`, the rows in the order written. The text
/// architectures' table ([`Tensor`], [`TABLE`]) and the projectors' (`mmproj::names`) are
/// both written with it.
macro_rules! tensor_table {
    (
        $(#[$enum_doc:meta])* enum $enum_name:ident;
        $(#[$table_doc:meta])* static TABLE: [$row:ident];
        $(
            $(#[$doc:meta])*
            $t:ident = $gguf:literal {
                $($hf:literal: [$($family:literal),+ $(,)?]),* $(,)?
            }
        )*
    ) => {
        $(#[$enum_doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $enum_name {
            $($(#[$doc])* $t,)*
        }

        impl $enum_name {
            /// The GGUF base name (no `.weight` / `.bias`), `{bid}` for the block.
            pub const fn gguf(self) -> &'static str {
                match self {
                    $($enum_name::$t => $gguf,)*
                }
            }
        }

        $(#[$table_doc])*
        pub static TABLE: &[$row] = &[$($row {
            tensor: $enum_name::$t,
            spellings: &[$(Spelling { hf: $hf, used_by: &[$($family),+] }),*],
        }),*];
    };
}
pub(crate) use tensor_table;

tensor_table! {
    /// A GGUF tensor (gguf-py's `MODEL_TENSOR`); [`Tensor::gguf`] is its base name.
    enum Tensor;
    /// Every GGUF tensor with its HF spellings, in the order the rows are written. Order
    /// matters only where a spelling appears in two rows: `post_attention_layernorm` is
    /// `ffn_norm` in Llama-style blocks, but `post_attention_norm` in an architecture
    /// that has both (Gemma 2/3, Seed-OSS): among the tensors an architecture has, the
    /// later row wins.
    static TABLE: [Row];
    /// `token_embd`.
    TokenEmbd = "token_embd" {
        "model.embed_tokens": [
            "afmoe", "apertus", "arcee", "cohere2", "cohere2moe", "command-r", "deepseek",
            "deepseek2", "deepseek32", "dots3note", "dots1", "ernie4_5", "paddleocr", "ernie4_5-moe", "exaone-moe", "exaone4",
            "falcon-h1", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "glm-dsa", "glm4",
            "glm4moe", "gpt-oss", "granite", "granitehybrid", "granitemoe", "hunyuan-dense", "hunyuan_vl",
            "jamba", "laguna", "lfm2", "lfm2moe", "llama", "llama4", "minimax-m2", "mistral3",
            "olmo", "olmo2", "olmoe", "phi2", "phi3", "phimoe", "qwen2", "qwen2moe", "qwen2vl",
            "qwen3", "qwen35", "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe",
            "seed_oss", "smollm3", "stablelm", "starcoder2", "nemotron", "exaone", "maincoder",
            "nanbeige", "orion", "baichuan", "pangu-embedded", "plm", "smallthinker", "spark2_5",
            "maple", "mellum", "xverse",
            "jais2",
            "chatglm", "minicpm", "minicpm3", "deci", "minimax-m3", "hy_v3", "arctic", "grok",
            "rwkv6qwen2", "arwkv7", "minimax-01", "hy_v4", "mimo2", "granite_swa", "kimi-linear", "kimi-k3",
            "deepseek2-ocr", "grovemoe", "llada-moe", "dream", "rnd1", "hrm_text", "cogvlm",
            "step35",
            "plamo2", "plamo3",
            "chameleon",
            "gpt2",
            "graniteswitch",
            "glm5-next",
        ],
        "embeddings.word_embeddings": ["bert", "nomic-bert", "jina-bert-v2"],
        "tok_embeddings": ["deepseek2", "llama", "mistral3"],
        "transformer.word_embeddings": ["falcon", "bloom"],
        "transformer.wte": ["gpt2", "starcoder", "mpt", "codeshell", "exaone", "jais", "dbrx", "refact"],
        "wte": ["gpt2"],
        "gpt_neox.embed_in": ["gptneox"],
        "transformer.embd.wte": ["phi2"],
        "embed_tokens": ["gemma-embedding", "qwen2vl", "eurobert", "llama-embed"],
        "embeddings.tok_embeddings": ["modern-bert"],
        "backbone.embedding": ["mamba", "mamba2", "wavtokenizer-dec"],
        "backbone.embeddings": ["mamba", "mamba2", "nemotron_h_moe"],
        "shared": ["t5", "t5encoder"],
        "model.word_embeddings": ["bailingmoe2", "bailingmoe", "bailingmoe3"],
        "encoder": ["neo-bert"],
        "word_embeddings": ["bloom"],
        "model.tok_embeddings": ["internlm2"],
        "transformer.token_embeddings": ["openelm"],
        "embedding.word_embeddings": ["chatglm"],
        "transformer.in_out_embed": ["grok"],
        "rwkv.embeddings": ["rwkv6"],
        "model.embeddings": ["rwkv7", "nemotron_h_moe"],
        "model.transformer.wte": ["llada"],
        "model.embed": ["talkie"],
    }
    /// `token_types`.
    TokenTypes = "token_types" {
        "embeddings.token_type_embeddings": ["bert", "nomic-bert", "jina-bert-v2"],
    }
    /// `token_embd_norm`.
    TokenEmbdNorm = "token_embd_norm" {
        "embeddings.LayerNorm": ["bert", "jina-bert-v2"],
        "embeddings.norm": ["modern-bert"],
        "emb_ln": ["nomic-bert"],
        "model.embedding_norm": ["lfm2", "lfm2moe"],
        "word_embeddings_layernorm": ["bloom"],
        "rwkv.blocks.0.pre_ln": ["rwkv6"],
        "model.pre_ln": ["rwkv7"],
        "model.layers.0.pre_norm": ["rwkv7"],
        "backbone.norm": ["wavtokenizer-dec"],
    }
    /// `position_embd`.
    PosEmbd = "position_embd" {
        "embeddings.position_embeddings": ["bert"],
        "transformer.wpe": ["gpt2", "starcoder", "mpt", "codeshell"],
        "wpe": ["gpt2"],
        "model.embed_positions": ["gpt2"],
    }
    /// `output`.
    Output = "output" {
        "lm_head": [
            "apertus", "arcee", "deepseek", "deepseek2", "ernie4_5-moe", "gemma4", "glm4moe", "granitehybrid",
            "granitemoe", "jamba", "llama", "llama4", "mamba2", "mistral3", "olmo", "phi2", "phi3",
            "phimoe", "qwen2", "qwen2moe", "qwen2vl", "smollm3", "t5", "bloom", "nemotron",
            "codeshell", "exaone", "maincoder", "nanbeige", "orion", "baichuan", "pangu-embedded",
            "plm", "smallthinker", "spark2_5", "maple", "mellum", "xverse", "jais", "jais2", "dbrx",
            "refact",
            "chatglm", "minicpm", "minicpm3", "deci", "arctic", "grok", "rwkv7", "minimax-01",
            "bailingmoe", "hy_v4", "mimo2",
            "eagle3", "grovemoe", "llada-moe", "dream", "rnd1", "hrm_text", "talkie", "dflash",
            "plamo2", "plamo3",
            "chameleon",
            "gpt2",
            "qwen3",
            "glm5-next",
        ],
        "embed_out": ["gptneox"],
        "lm_head.linear": ["phi2"],
        "output": ["internlm2"],
        "output_layer": ["chatglm"],
        "head": ["rwkv6", "deepseek4"],
        "model.transformer.ff_out": ["llada"],
        "model.lm_head": ["dflash"],
        "head.out": ["wavtokenizer-dec"],
    }
    /// `output_norm`.
    OutputNorm = "output_norm" {
        "model.norm": [
            "afmoe", "apertus", "arcee", "bailingmoe2", "cohere2", "cohere2moe", "command-r",
            "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1", "ernie4_5", "paddleocr", "ernie4_5-moe",
            "exaone-moe", "exaone4", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "glm-dsa",
            "glm4", "glm4moe", "gpt-oss", "granite", "granitehybrid", "granitemoe", "hunyuan-dense", "hunyuan_vl",
            "laguna", "llama", "llama4", "minimax-m2", "mistral3", "olmo2", "olmoe", "phi3",
            "phimoe", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen35", "qwen35moe", "qwen3moe",
            "qwen3next", "qwen3vl", "qwen3vlmoe", "seed_oss", "smollm3", "stablelm", "starcoder2",
            "nemotron", "exaone", "maincoder", "nanbeige", "orion", "baichuan", "pangu-embedded",
            "plm", "smallthinker", "spark2_5", "maple", "internlm2", "mellum", "xverse",
            "jais2",
            "chatglm", "minicpm", "minicpm3", "deci", "minimax-m3", "hy_v3", "arctic", "grok",
            "rwkv7", "rwkv6qwen2", "arwkv7", "minimax-01", "bailingmoe", "hy_v4", "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "grovemoe",
            "llada-moe", "dream", "rnd1", "cogvlm", "bailingmoe3", "step35",
            "plamo2", "plamo3",
            "chameleon",
            "gpt2",
            "graniteswitch",
            "glm5-next",
        ],
        "norm": [
            "deepseek2", "gemma-embedding", "llama", "mistral3", "qwen2vl", "eurobert",
            "llama-embed", "deepseek4", "eagle3", "dflash",
        ],
        "transformer.ln_f": ["falcon", "gpt2", "starcoder", "bloom", "codeshell", "exaone", "jais", "refact"],
        "ln_f": ["gpt2", "bloom"],
        "gpt_neox.final_layer_norm": ["gptneox"],
        "model.final_layernorm": ["falcon-h1", "jamba", "phi2", "granitehybrid"],
        "lm_head.ln": ["phi2"],
        "final_norm": ["modern-bert"],
        "backbone.norm_f": ["mamba", "mamba2", "nemotron_h_moe"],
        "transformer.norm_f": ["mpt", "dbrx"],
        "transformer.norm": ["openelm"],
        "encoder.final_layernorm": ["chatglm"],
        "transformer.rms_norm": ["grok"],
        "rwkv.ln_out": ["rwkv6"],
        "model.ln_out": ["rwkv7"],
        "model.transformer.ln_f": ["llada"],
        "backbone.final_layer_norm": ["wavtokenizer-dec"],
    }
    /// `cls`.
    Cls = "cls" {
        "classifier": ["bert", "modern-bert", "neo-bert", "jina-bert-v2"],
        "classifier.dense": ["bert"],
        "head.dense": ["modern-bert"],
        "pre_classifier": ["bert"],
        "dense": ["neo-bert"],
    }
    /// `cls.output`.
    ClsOut = "cls.output" {
        "classifier.out_proj": ["bert", "modern-bert", "neo-bert"],
    }
    /// `cls.norm`.
    ClsNorm = "cls.norm" {
        "head.norm": ["modern-bert"],
    }
    /// `blk.{bid}.attn_norm`.
    AttnNorm = "blk.{bid}.attn_norm" {
        "model.layers.{bid}.input_layernorm": [
            "afmoe", "arcee", "bailingmoe2", "cohere2", "cohere2moe", "command-r", "deepseek",
            "deepseek2", "deepseek32", "dots3note", "dots1", "ernie4_5", "paddleocr", "ernie4_5-moe", "exaone-moe",
            "falcon-h1", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "glm-dsa", "glm4",
            "glm4moe", "gpt-oss", "granite", "granitehybrid", "granitemoe", "hunyuan-dense", "hunyuan_vl",
            "jamba", "laguna", "llama", "llama4", "minimax-m2", "mistral3", "olmoe", "phi2", "phi3",
            "phimoe", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen35", "qwen35moe", "qwen3moe",
            "qwen3next", "qwen3vl", "qwen3vlmoe", "seed_oss", "smollm3", "stablelm", "starcoder2",
            "nemotron", "exaone", "maincoder", "nanbeige", "orion", "baichuan", "pangu-embedded",
            "plm", "smallthinker", "spark2_5", "maple", "mellum", "xverse",
            "jais2",
            "chatglm", "minicpm", "minicpm3", "deci", "minimax-m3", "hy_v3", "arctic", "rwkv6qwen2",
            "arwkv7", "minimax-01", "bailingmoe", "hy_v4", "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "grovemoe",
            "llada-moe", "dream", "rnd1", "cogvlm", "bailingmoe3", "step35",
            "chameleon",
            "gpt2",
            "graniteswitch",
            "glm5-next",
        ],
        "layers.{bid}.attention_norm": ["deepseek2", "llama", "mistral3"],
        "transformer.h.{bid}.input_layernorm": ["falcon", "bloom"],
        "transformer.h.{bid}.ln_mlp": ["falcon"],
        "transformer.h.{bid}.ln_1": ["gpt2", "starcoder", "codeshell", "exaone", "jais", "refact"],
        "h.{bid}.ln_1": ["gpt2"],
        "gpt_neox.layers.{bid}.input_layernorm": ["gptneox"],
        "transformer.h.{bid}.ln": ["phi2"],
        "model.layers.{bid}.attention_layernorm": ["apertus"],
        "layers.{bid}.input_layernorm": ["gemma-embedding", "qwen2vl", "eurobert", "llama-embed", "eagle3", "dflash"],
        "layers.{bid}.attn_norm": ["modern-bert", "deepseek4", "dflash"],
        "backbone.layers.{bid}.norm": ["mamba", "mamba2", "nemotron_h_moe"],
        "model.layers.{bid}.operator_norm": ["lfm2", "lfm2moe"],
        "transformer_encoder.{bid}.attention_norm": ["neo-bert"],
        "h.{bid}.input_layernorm": ["bloom"],
        "transformer.blocks.{bid}.norm_1": ["mpt"],
        "model.layers.{bid}.attention_norm": ["internlm2", "rwkv7"],
        "transformer.layers.{bid}.attn_norm": ["openelm"],
        "transformer.blocks.{bid}.norm_attn_norm.norm_1": ["dbrx"],
        "encoder.layers.{bid}.input_layernorm": ["chatglm"],
        "model.layers.{bid}.pre_attn_norm": ["grok"],
        "transformer.decoder_layer.{bid}.rms_norm": ["grok"],
        "rwkv.blocks.{bid}.ln1": ["rwkv6"],
        "model.layers.{bid}.ln1": ["rwkv7"],
        "model.transformer.blocks.{bid}.attn_norm": ["llada"],
        "model.layers.layers.{bid}.pre_mixer_norm": ["plamo2", "plamo3"],
    }
    /// `blk.{bid}.attn_norm_2`.
    AttnNorm2 = "blk.{bid}.attn_norm_2" {
        "transformer.h.{bid}.ln_attn": ["falcon"],
        "encoder.layer.{bid}.layer_norm_1": ["jina-bert-v2"],
        "rwkv.blocks.{bid}.ln2": ["rwkv6"],
        "model.layers.{bid}.ln2": ["rwkv7"],
        "model.layers.{bid}.self_attn.norm": ["minimax-01"],
    }
    /// `blk.{bid}.attn_qkv`.
    AttnQkv = "blk.{bid}.attn_qkv" {
        "transformer.h.{bid}.self_attention.query_key_value": ["falcon", "bloom"],
        "transformer.h.{bid}.attn.c_attn": ["gpt2", "starcoder", "codeshell", "jais"],
        "h.{bid}.attn.c_attn": ["gpt2"],
        "gpt_neox.layers.{bid}.attention.query_key_value": ["gptneox"],
        "transformer.h.{bid}.mixer.Wqkv": ["phi2"],
        "model.layers.{bid}.self_attn.qkv_proj": ["phi3", "minimax-01", "mimo2"],
        "layers.{bid}.attn.Wqkv": ["modern-bert"],
        "encoder.layers.{bid}.attn.Wqkv": ["nomic-bert"],
        "model.layers.{bid}.linear_attn.in_proj_qkv": ["qwen35", "qwen35moe", "qwen4exp"],
        "model.layers.{bid}.attention.query_key_value": ["bailingmoe2", "bailingmoe"],
        "transformer_encoder.{bid}.qkv": ["neo-bert"],
        "h.{bid}.self_attention.query_key_value": ["bloom"],
        "transformer.blocks.{bid}.attn.Wqkv": ["mpt"],
        "model.layers.{bid}.self_attn.W_pack": ["baichuan"],
        "model.layers.{bid}.attention.wqkv": ["internlm2"],
        "transformer.layers.{bid}.attn.qkv_proj": ["openelm"],
        "transformer.blocks.{bid}.norm_attn_norm.attn.Wqkv": ["dbrx"],
        "encoder.layers.{bid}.self_attention.query_key_value": ["chatglm"],
        "model.layers.{bid}.self_attn.language_expert_query_key_value": ["cogvlm"],
        "model.layers.layers.{bid}.mixer.qkv_proj": ["plamo2", "plamo3"],
    }
    /// `blk.{bid}.attn_q`.
    AttnQ = "blk.{bid}.attn_q" {
        "model.layers.{bid}.self_attn.q_proj": [
            "afmoe", "apertus", "arcee", "cohere2", "cohere2moe", "command-r", "deepseek",
            "deepseek2", "dots1", "ernie4_5", "paddleocr", "ernie4_5-moe", "exaone-moe", "exaone4", "falcon-h1",
            "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "glm4", "glm4moe", "gpt-oss",
            "granite", "granitehybrid", "granitemoe", "hunyuan-dense", "hunyuan_vl", "jamba", "laguna", "lfm2",
            "lfm2moe", "llama", "llama4", "minimax-m2", "mistral3", "olmo", "olmo2", "olmoe",
            "phi2", "phimoe", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen35", "qwen35moe", "qwen4exp",
            "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "seed_oss", "smollm3", "stablelm",
            "starcoder2", "nemotron", "exaone", "maincoder", "nanbeige", "orion", "pangu-embedded",
            "plm", "smallthinker", "maple", "mellum", "xverse",
            "jais2",
            "chatglm", "minicpm", "deci", "minimax-m3", "hy_v3", "arctic", "grok", "minimax-01",
            "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "grovemoe",
            "llada-moe", "dream", "rnd1", "step35",
            "chameleon",
            "glm5-next",
        ],
        "encoder.layer.{bid}.attention.self.query": ["bert", "jina-bert-v2"],
        "layers.{bid}.attention.wq": ["llama", "mistral3"],
        "layers.{bid}.self_attn.q_proj": ["gemma-embedding", "qwen2vl", "eurobert", "llama-embed", "eagle3", "dflash"],
        "backbone.layers.{bid}.mixer.q_proj": ["nemotron_h_moe"],
        "transformer.layer.{bid}.attention.q_lin": ["bert"],
        "transformer.h.{bid}.attn.attention.q_proj": ["exaone"],
        "model.layers.{bid}.attention.wq": ["internlm2"],
        "transformer.decoder_layer.{bid}.multi_head_attention.query": ["grok"],
        "model.transformer.blocks.{bid}.q_proj": ["llada"],
        "model.blocks.{bid}.attn.attn_query": ["talkie"],
        "model.layers.{bid}.attention.q_proj": ["bailingmoe3"],
    }
    /// `blk.{bid}.attn_k`.
    AttnK = "blk.{bid}.attn_k" {
        "model.layers.{bid}.self_attn.k_proj": [
            "afmoe", "apertus", "arcee", "cohere2", "cohere2moe", "command-r", "deepseek", "dots1",
            "ernie4_5", "paddleocr", "ernie4_5-moe", "exaone-moe", "exaone4", "falcon-h1", "gemma3", "gemma3n",
            "gemma4", "glm4", "glm4moe", "gpt-oss", "granite", "granitehybrid", "granitemoe",
            "hunyuan-dense", "hunyuan_vl", "jamba", "laguna", "lfm2", "lfm2moe", "llama", "llama4", "minimax-m2",
            "mistral3", "olmo", "olmo2", "olmoe", "phi2", "phimoe", "qwen2", "qwen2moe", "qwen2vl",
            "qwen3", "qwen35", "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe",
            "seed_oss", "smollm3", "stablelm", "starcoder2", "nemotron", "exaone", "maincoder",
            "nanbeige", "orion", "pangu-embedded", "smallthinker", "maple", "mellum", "xverse",
            "jais2",
            "chatglm", "minicpm", "deci", "minimax-m3", "hy_v3", "arctic", "grok", "minimax-01",
            "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "grovemoe",
            "llada-moe", "dream", "rnd1", "step35",
            "chameleon",
            "glm5-next",
        ],
        "encoder.layer.{bid}.attention.self.key": ["bert", "jina-bert-v2"],
        "layers.{bid}.attention.wk": ["llama", "mistral3"],
        "layers.{bid}.self_attn.k_proj": ["gemma-embedding", "qwen2vl", "eurobert", "llama-embed", "eagle3", "dflash"],
        "backbone.layers.{bid}.mixer.k_proj": ["nemotron_h_moe"],
        "transformer.layer.{bid}.attention.k_lin": ["bert"],
        "transformer.h.{bid}.attn.attention.k_proj": ["exaone"],
        "model.layers.{bid}.attention.wk": ["internlm2"],
        "transformer.decoder_layer.{bid}.multi_head_attention.key": ["grok"],
        "model.transformer.blocks.{bid}.k_proj": ["llada"],
        "model.blocks.{bid}.attn.attn_key": ["talkie"],
        "model.layers.{bid}.attention.k_proj": ["bailingmoe3"],
    }
    /// `blk.{bid}.attn_v`.
    AttnV = "blk.{bid}.attn_v" {
        "model.layers.{bid}.self_attn.v_proj": [
            "afmoe", "apertus", "arcee", "cohere2", "cohere2moe", "command-r", "deepseek", "dots1",
            "ernie4_5", "paddleocr", "ernie4_5-moe", "exaone-moe", "exaone4", "falcon-h1", "gemma3", "gemma3n",
            "gemma4", "glm4", "glm4moe", "gpt-oss", "granite", "granitehybrid", "granitemoe",
            "hunyuan-dense", "hunyuan_vl", "jamba", "laguna", "lfm2", "lfm2moe", "llama", "llama4", "minimax-m2",
            "mistral3", "olmo", "olmo2", "olmoe", "phi2", "phimoe", "qwen2", "qwen2moe", "qwen2vl",
            "qwen3", "qwen35", "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe",
            "seed_oss", "smollm3", "stablelm", "starcoder2", "nemotron", "exaone", "maincoder",
            "nanbeige", "orion", "pangu-embedded", "smallthinker", "maple", "mellum", "xverse",
            "jais2",
            "chatglm", "minicpm", "deci", "minimax-m3", "hy_v3", "arctic", "grok", "minimax-01",
            "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "grovemoe",
            "llada-moe", "dream", "rnd1", "step35",
            "chameleon",
            "glm5-next",
        ],
        "encoder.layer.{bid}.attention.self.value": ["bert", "jina-bert-v2"],
        "layers.{bid}.attention.wv": ["llama", "mistral3"],
        "layers.{bid}.self_attn.v_proj": ["gemma-embedding", "qwen2vl", "eurobert", "llama-embed", "eagle3", "dflash"],
        "backbone.layers.{bid}.mixer.v_proj": ["nemotron_h_moe"],
        "transformer.layer.{bid}.attention.v_lin": ["bert"],
        "transformer.h.{bid}.attn.attention.v_proj": ["exaone"],
        "model.layers.{bid}.attention.wv": ["internlm2"],
        "transformer.decoder_layer.{bid}.multi_head_attention.value": ["grok"],
        "model.transformer.blocks.{bid}.v_proj": ["llada"],
        "model.blocks.{bid}.attn.attn_value": ["talkie"],
        "model.layers.{bid}.attention.v_proj": ["bailingmoe3"],
    }
    /// `blk.{bid}.attn_output`.
    AttnOut = "blk.{bid}.attn_output" {
        "model.layers.{bid}.self_attn.o_proj": [
            "afmoe", "apertus", "arcee", "cohere2", "cohere2moe", "command-r", "deepseek",
            "deepseek2", "deepseek32", "dots3note", "dots1", "ernie4_5", "paddleocr", "ernie4_5-moe", "exaone-moe", "exaone4",
            "falcon-h1", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "glm-dsa", "glm4",
            "glm4moe", "gpt-oss", "granite", "granitehybrid", "granitemoe", "hunyuan-dense", "hunyuan_vl",
            "jamba", "laguna", "llama", "llama4", "minimax-m2", "mistral3", "olmo", "olmo2",
            "olmoe", "phi3", "phimoe", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen35",
            "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "seed_oss", "smollm3",
            "stablelm", "starcoder2", "nemotron", "exaone", "maincoder", "nanbeige", "orion",
            "baichuan", "pangu-embedded", "plm", "smallthinker", "spark2_5", "maple", "mellum",
            "xverse",
            "jais2",
            "chatglm", "minicpm", "minicpm3", "deci", "minimax-m3", "hy_v3", "arctic", "grok",
            "minimax-01", "hy_v4", "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "grovemoe",
            "llada-moe", "dream", "rnd1", "step35",
            "chameleon",
            "gpt2",
            "glm5-next",
        ],
        "encoder.layer.{bid}.attention.output.dense": ["bert", "jina-bert-v2"],
        "layers.{bid}.attention.wo": ["deepseek2", "llama", "mistral3"],
        "transformer.h.{bid}.self_attention.dense": ["falcon", "bloom"],
        "transformer.h.{bid}.attn.c_proj": ["gpt2", "starcoder", "codeshell", "jais", "refact"],
        "h.{bid}.attn.c_proj": ["gpt2"],
        "gpt_neox.layers.{bid}.attention.dense": ["gptneox"],
        "model.layers.{bid}.self_attn.dense": ["phi2"],
        "transformer.h.{bid}.mixer.out_proj": ["phi2"],
        "layers.{bid}.self_attn.o_proj": ["gemma-embedding", "qwen2vl", "eurobert", "llama-embed", "eagle3", "dflash"],
        "layers.{bid}.attn.Wo": ["modern-bert"],
        "encoder.layers.{bid}.attn.out_proj": ["nomic-bert"],
        "model.layers.{bid}.self_attn.out_proj": ["lfm2", "lfm2moe", "minimax-01"],
        "backbone.layers.{bid}.mixer.o_proj": ["nemotron_h_moe"],
        "model.layers.{bid}.attention.dense": ["bailingmoe2", "bailingmoe", "bailingmoe3"],
        "transformer.layer.{bid}.attention.out_lin": ["bert"],
        "transformer_encoder.{bid}.wo": ["neo-bert"],
        "h.{bid}.self_attention.dense": ["bloom"],
        "transformer.blocks.{bid}.attn.out_proj": ["mpt"],
        "transformer.h.{bid}.attn.attention.out_proj": ["exaone"],
        "model.layers.{bid}.attention.wo": ["internlm2"],
        "transformer.layers.{bid}.attn.out_proj": ["openelm"],
        "transformer.blocks.{bid}.norm_attn_norm.attn.out_proj": ["dbrx"],
        "encoder.layers.{bid}.self_attention.dense": ["chatglm"],
        "model.layers.{bid}.self_attn.linear_attn": ["deci"],
        "transformer.decoder_layer.{bid}.multi_head_attention.linear": ["grok"],
        "model.transformer.blocks.{bid}.attn_out": ["llada"],
        "model.blocks.{bid}.attn.attn_resid": ["talkie"],
        "model.layers.{bid}.self_attn.language_expert_dense": ["cogvlm"],
        "model.layers.{bid}.attention.o_proj": ["bailingmoe3"],
        "model.layers.layers.{bid}.mixer.o_proj": ["plamo2", "plamo3"],
    }
    /// `blk.{bid}.attn_output_norm`.
    AttnOutNorm = "blk.{bid}.attn_output_norm" {
        "encoder.layer.{bid}.attention.output.LayerNorm": ["bert", "jina-bert-v2"],
        "encoder.layers.{bid}.norm1": ["nomic-bert"],
        "transformer.layer.{bid}.sa_layer_norm": ["bert"],
        "transformer.blocks.{bid}.norm_attn_norm.norm_2": ["dbrx"],
        "model.layers.{bid}.post_attn_norm": ["grok"],
        "transformer.decoder_layer.{bid}.rms_norm_1": ["grok"],
    }
    /// `blk.{bid}.attn_q_norm`.
    AttnQNorm = "blk.{bid}.attn_q_norm" {
        "model.layers.{bid}.self_attn.q_norm": [
            "afmoe", "apertus", "command-r", "dots1", "exaone-moe", "exaone4", "gemma3", "gemma3n",
            "gemma4", "gemma4-assistant", "glm4moe", "laguna", "minimax-m2", "olmo2", "olmoe",
            "qwen3", "qwen35", "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe",
            "maincoder", "maple", "mellum",
            "minimax-m3",
            "hy_v3", "dflash",
            "grovemoe", "llada-moe", "rnd1", "step35",
            "chameleon",
        ],
        "model.layers.{bid}.self_attn.q_layernorm": ["lfm2", "lfm2moe"],
        "layers.{bid}.self_attn.q_norm": ["gemma-embedding", "dflash"],
        "model.layers.{bid}.self_attn.query_layernorm": ["hunyuan-dense", "hunyuan_vl"],
        "model.layers.{bid}.attention.query_layernorm": ["bailingmoe2"],
        "encoder.layer.{bid}.attention.self.layer_norm_q": ["jina-bert-v2"],
        "transformer.layers.{bid}.attn.q_norm": ["openelm"],
        "model.blocks.{bid}.attn.head_gain.head_g": ["talkie"],
        "model.layers.layers.{bid}.mixer.q": ["plamo2"],
        "model.layers.layers.{bid}.mixer.q_norm": ["plamo3"],
    }
    /// `blk.{bid}.attn_k_norm`.
    AttnKNorm = "blk.{bid}.attn_k_norm" {
        "model.layers.{bid}.self_attn.k_rope_only_layernorm": ["dots3note"],
        "model.layers.{bid}.self_attn.k_norm": [
            "afmoe", "apertus", "command-r", "dots1", "exaone-moe", "exaone4", "gemma3", "gemma3n",
            "gemma4", "glm4moe", "laguna", "minimax-m2", "olmo2", "olmoe", "qwen3", "qwen35",
            "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "maincoder", "maple",
            "mellum",
            "minimax-m3",
            "hy_v3", "dflash",
            "grovemoe", "llada-moe", "rnd1", "step35",
            "chameleon",
        ],
        "model.layers.{bid}.self_attn.k_layernorm": ["lfm2", "lfm2moe"],
        "layers.{bid}.self_attn.k_norm": ["gemma-embedding", "dflash"],
        "model.layers.{bid}.self_attn.key_layernorm": ["hunyuan-dense", "hunyuan_vl"],
        "model.layers.{bid}.attention.key_layernorm": ["bailingmoe2"],
        "encoder.layer.{bid}.attention.self.layer_norm_k": ["jina-bert-v2"],
        "transformer.layers.{bid}.attn.k_norm": ["openelm"],
        "model.layers.layers.{bid}.mixer.k": ["plamo2"],
        "model.layers.layers.{bid}.mixer.k_norm": ["plamo3"],
    }
    /// `blk.{bid}.ffn_norm`.
    FfnNorm = "blk.{bid}.ffn_norm" {
        "model.layers.{bid}.post_attention_layernorm": [
            "arcee", "bailingmoe2", "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1", "ernie4_5", "paddleocr",
            "ernie4_5-moe", "exaone-moe", "glm-dsa", "glm4", "granite", "granitehybrid",
            "granitemoe", "hunyuan-dense", "hunyuan_vl", "laguna", "llama", "llama4", "minimax-m2", "mistral3",
            "olmoe", "phi3", "phimoe", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen3moe",
            "qwen3vl", "qwen3vlmoe", "smollm3", "stablelm", "starcoder2", "nemotron", "exaone",
            "maincoder", "nanbeige", "orion", "baichuan", "pangu-embedded", "plm", "smallthinker",
            "spark2_5", "maple", "mellum", "xverse",
            "jais2",
            "chatglm", "minicpm", "minicpm3", "deci", "minimax-m3", "hy_v3", "rwkv6qwen2", "arwkv7",
            "minimax-01", "bailingmoe", "hy_v4", "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "llada-moe", "dream",
            "rnd1", "grovemoe", "cogvlm", "bailingmoe3", "step35",
            "chameleon",
            "gpt2",
            "graniteswitch",
            "glm5-next",
        ],
        "layers.{bid}.ffn_norm": ["deepseek2", "llama", "mistral3", "deepseek4", "dflash"],
        "model.layers.{bid}.pre_feedforward_layernorm": [
            "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "dflash",
        ],
        "transformer.h.{bid}.ln_2": ["gpt2", "starcoder", "codeshell", "exaone", "jais", "refact"],
        "h.{bid}.ln_2": ["gpt2"],
        "gpt_neox.layers.{bid}.post_attention_layernorm": ["gptneox"],
        "model.layers.{bid}.feedforward_layernorm": ["apertus"],
        "layers.{bid}.mlp_norm": ["modern-bert"],
        "layers.{bid}.pre_feedforward_layernorm": ["gemma-embedding", "dflash"],
        "layers.{bid}.post_attention_layernorm": ["qwen2vl", "qwen3", "eurobert", "llama-embed", "eagle3", "dflash"],
        "model.layers.{bid}.ffn_norm": ["lfm2", "lfm2moe", "internlm2"],
        "model.layers.{bid}.pre_ff_layernorm": ["jamba", "granitehybrid"],
        "transformer_encoder.{bid}.ffn_norm": ["neo-bert"],
        "h.{bid}.post_attention_layernorm": ["bloom"],
        "transformer.blocks.{bid}.norm_2": ["mpt"],
        "transformer.layers.{bid}.ffn_norm": ["openelm"],
        "encoder.layers.{bid}.post_attention_layernorm": ["chatglm"],
        "model.layers.{bid}.pre_moe_norm": ["grok"],
        "transformer.decoder_layer.{bid}.rms_norm_2": ["grok"],
        "model.transformer.blocks.{bid}.ff_norm": ["llada"],
        "model.layers.layers.{bid}.pre_mlp_norm": ["plamo2", "plamo3"],
    }
    /// `blk.{bid}.post_attention_norm`.
    AttnPostNorm = "blk.{bid}.post_attention_norm" {
        "model.layers.{bid}.post_attention_layernorm": [
            "afmoe", "exaone4", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "glm4moe",
            "gpt-oss", "nemotron_h_moe", "olmo2", "qwen35", "qwen35moe", "qwen3next", "seed_oss",
        ],
        "model.layers.{bid}.post_self_attn_layernorm": ["glm4"],
        "layers.{bid}.post_attention_layernorm": ["gemma-embedding"],
        "model.layers.layers.{bid}.post_mixer_norm.weight": ["plamo2", "plamo3"],
    }
    /// `blk.{bid}.post_ffw_norm`.
    FfnPostNorm = "blk.{bid}.post_ffw_norm" {
        "model.layers.{bid}.post_feedforward_layernorm": [
            "exaone4", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "olmo2", "dflash",
        ],
        "model.layers.{bid}.post_mlp_layernorm": ["afmoe", "glm4"],
        "layers.{bid}.post_feedforward_layernorm": ["gemma-embedding", "dflash"],
        "model.layers.{bid}.post_moe_norm": ["grok"],
        "model.layers.layers.{bid}.post_mlp_norm.weight": ["plamo2", "plamo3"],
    }
    /// `blk.{bid}.ffn_gate_inp`.
    FfnGateInp = "blk.{bid}.ffn_gate_inp" {
        "model.layers.{bid}.block_sparse_moe.router.layer": ["granitehybrid", "granitemoe"],
        "model.layers.{bid}.block_sparse_moe.router": ["granite_swa"],
        "model.layers.{bid}.block_sparse_moe.gate": [
            "llama", "minimax-m2", "phimoe", "minimax-m3", "arctic", "grok", "minimax-01", "kimi-linear", "kimi-k3",
        ],
        "model.layers.{bid}.mlp.gate": [
            "bailingmoe2", "cohere2moe", "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1",
            "ernie4_5-moe", "exaone-moe", "glm-dsa", "glm4moe", "laguna", "olmoe", "qwen2moe",
            "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next", "qwen3vlmoe", "maple", "mellum", "bailingmoe",
            "hy_v4", "mimo2", "deepseek2-ocr", "grovemoe", "llada-moe", "rnd1", "bailingmoe3",
            "glm5-next",
        ],
        "model.layers.{bid}.feed_forward.router": ["jamba", "llama4"],
        "model.layers.{bid}.mlp.router": ["gpt-oss"],
        "model.layers.{bid}.feed_forward.gate": ["lfm2moe"],
        "backbone.layers.{bid}.mixer.gate": ["nemotron_h_moe"],
        "layers.{bid}.gate": ["deepseek2"],
        "model.layers.{bid}.router.proj": ["gemma4"],
        "model.layers.{bid}.mlp.router.gate": ["afmoe", "hy_v3"],
        "model.layers.{bid}.block_sparse_moe.primary_router": ["smallthinker"],
        "transformer.blocks.{bid}.ffn.router.layer": ["dbrx"],
        "transformer.decoder_layer.{bid}.router": ["grok"],
        "model.layers.{bid}.moe.gate": ["step35"],
    }
    /// `blk.{bid}.ffn_gate_inp_shexp`.
    FfnGateInpShexp = "blk.{bid}.ffn_gate_inp_shexp" {
        "model.layers.{bid}.mlp.shared_expert_gate": ["qwen2moe", "qwen35moe", "qwen4exp", "qwen3next"],
    }
    /// `blk.{bid}.ffn_gate`.
    FfnGate = "blk.{bid}.ffn_gate" {
        "model.layers.{bid}.mlp.gate_proj": [
            "afmoe", "bailingmoe2", "cohere2", "cohere2moe", "command-r", "deepseek", "deepseek2",
            "deepseek32", "dots3note", "dots1", "ernie4_5", "paddleocr", "ernie4_5-moe", "exaone-moe", "exaone4", "gemma3",
            "gemma3n", "gemma4", "gemma4-assistant", "glm-dsa", "glm4moe", "granite",
            "hunyuan-dense", "hunyuan_vl", "laguna", "llama", "mistral3", "olmo", "olmo2", "qwen2", "qwen2vl",
            "qwen3", "qwen35", "qwen3vl", "seed_oss", "smollm3", "stablelm", "exaone", "maincoder",
            "nanbeige", "orion", "baichuan", "pangu-embedded", "spark2_5", "xverse",
            "minicpm", "minicpm3", "deci", "minimax-m3", "hy_v3",
            "grok", "rwkv6qwen2", "arwkv7", "hy_v4", "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "dream",
            "bailingmoe3", "step35",
            "chameleon",
            "glm5-next",
        ],
        "layers.{bid}.feed_forward.w1": ["deepseek2", "llama", "mistral3"],
        "model.layers.{bid}.feed_forward.gate_proj": [
            "falcon-h1", "jamba", "llama4", "granitehybrid",
        ],
        "layers.{bid}.mlp.gate_proj": ["gemma-embedding", "qwen2vl", "eurobert", "llama-embed", "eagle3", "dflash"],
        "encoder.layers.{bid}.mlp.fc12": ["nomic-bert"],
        "model.layers.{bid}.feed_forward.w1": ["lfm2", "lfm2moe", "internlm2"],
        "encoder.layer.{bid}.mlp.gated_layers_w": ["jina-bert-v2"],
        "transformer.h.{bid}.mlp.c_fc_0": ["exaone"],
        "transformer.h.{bid}.mlp.c_fc2": ["jais"],
        "model.layers.{bid}.residual_mlp.w1": ["arctic"],
        "model.transformer.blocks.{bid}.ff_proj": ["llada"],
        "model.blocks.{bid}.mlp.mlp_gate": ["talkie"],
        "model.layers.{bid}.mlp.language_mlp.gate_proj": ["cogvlm"],
    }
    /// `blk.{bid}.ffn_up`.
    FfnUp = "blk.{bid}.ffn_up" {
        "model.layers.{bid}.mlp.up_proj": [
            "afmoe", "apertus", "arcee", "bailingmoe2", "cohere2", "cohere2moe", "command-r",
            "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1", "ernie4_5", "paddleocr", "ernie4_5-moe",
            "exaone-moe", "exaone4", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "glm-dsa",
            "glm4moe", "granite", "hunyuan-dense", "hunyuan_vl", "laguna", "llama", "mistral3", "olmo", "olmo2",
            "qwen2", "qwen2vl", "qwen3", "qwen35", "qwen3vl", "seed_oss", "smollm3", "stablelm",
            "nemotron", "exaone", "maincoder", "nanbeige", "orion", "baichuan", "pangu-embedded",
            "plm", "spark2_5", "xverse",
            "jais2",
            "minicpm", "minicpm3", "deci", "minimax-m3", "hy_v3",
            "grok", "rwkv6qwen2", "arwkv7", "hy_v4", "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "dream",
            "bailingmoe3", "step35",
            "chameleon",
            "gpt2",
            "glm5-next",
        ],
        "encoder.layer.{bid}.intermediate.dense": ["bert"],
        "layers.{bid}.feed_forward.w3": ["deepseek2", "llama", "mistral3"],
        "transformer.h.{bid}.mlp.dense_h_to_4h": ["falcon", "bloom"],
        "model.layers.{bid}.mlp.gate_up_proj": ["glm4", "phi3", "chatglm"],
        "transformer.h.{bid}.mlp.c_fc": ["gpt2", "starcoder", "codeshell", "jais"],
        "h.{bid}.mlp.c_fc": ["gpt2"],
        "gpt_neox.layers.{bid}.mlp.dense_h_to_4h": ["gptneox"],
        "model.layers.{bid}.mlp.fc1": ["phi2"],
        "transformer.h.{bid}.mlp.fc1": ["phi2"],
        "model.layers.{bid}.mlp.c_fc": ["starcoder2"],
        "model.layers.{bid}.feed_forward.up_proj": [
            "falcon-h1", "jamba", "llama4", "granitehybrid",
        ],
        "layers.{bid}.mlp.up_proj": ["gemma-embedding", "qwen2vl", "eurobert", "llama-embed", "eagle3", "dflash"],
        "layers.{bid}.mlp.Wi": ["modern-bert"],
        "encoder.layers.{bid}.mlp.fc11": ["nomic-bert"],
        "model.layers.{bid}.feed_forward.w3": ["lfm2", "lfm2moe", "internlm2"],
        "backbone.layers.{bid}.mixer.up_proj": ["nemotron_h_moe"],
        "transformer.layer.{bid}.ffn.lin1": ["bert"],
        "transformer_encoder.{bid}.ffn.w12": ["neo-bert"],
        "encoder.layer.{bid}.mlp.gated_layers_v": ["jina-bert-v2"],
        "encoder.layer.{bid}.mlp.gated_layers": ["jina-bert-v2"],
        "encoder.layer.{bid}.mlp.up_gated_layer": ["jina-bert-v2"],
        "h.{bid}.mlp.dense_h_to_4h": ["bloom"],
        "transformer.blocks.{bid}.ffn.up_proj": ["mpt"],
        "transformer.h.{bid}.mlp.c_fc_1": ["exaone"],
        "model.layers.{bid}.block_sparse_moe.up": ["smallthinker"],
        "encoder.layers.{bid}.mlp.dense_h_to_4h": ["chatglm"],
        "model.layers.{bid}.residual_mlp.w3": ["arctic"],
        "model.transformer.blocks.{bid}.up_proj": ["llada"],
        "model.blocks.{bid}.mlp.mlp_linear": ["talkie"],
        "model.layers.{bid}.mlp.language_mlp.up_proj": ["cogvlm"],
        "model.layers.layers.{bid}.mlp.gate_up_proj": ["plamo2", "plamo3"],
    }
    /// `blk.{bid}.ffn_down`.
    FfnDown = "blk.{bid}.ffn_down" {
        "model.layers.{bid}.mlp.down_proj": [
            "afmoe", "apertus", "arcee", "bailingmoe2", "cohere2", "cohere2moe", "command-r",
            "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1", "ernie4_5", "paddleocr", "ernie4_5-moe",
            "exaone-moe", "exaone4", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "glm-dsa",
            "glm4", "glm4moe", "granite", "hunyuan-dense", "hunyuan_vl", "laguna", "llama", "mistral3", "olmo",
            "olmo2", "phi3", "qwen2", "qwen2vl", "qwen3", "qwen35", "qwen3vl", "seed_oss",
            "smollm3", "stablelm", "nemotron", "exaone", "maincoder", "nanbeige", "orion",
            "baichuan", "pangu-embedded", "plm", "spark2_5", "xverse",
            "jais2",
            "chatglm", "minicpm", "minicpm3", "deci", "minimax-m3", "hy_v3",
            "grok", "rwkv6qwen2", "arwkv7", "hy_v4", "mimo2",
            "eagle3", "dflash", "granite_swa", "kimi-linear", "kimi-k3", "deepseek2-ocr", "dream",
            "bailingmoe3", "step35",
            "chameleon",
            "gpt2",
            "glm5-next",
        ],
        "encoder.layer.{bid}.output.dense": ["bert"],
        "layers.{bid}.feed_forward.w2": ["deepseek2", "llama", "mistral3"],
        "transformer.h.{bid}.mlp.dense_4h_to_h": ["falcon", "bloom"],
        "transformer.h.{bid}.mlp.c_proj": ["gpt2", "starcoder", "codeshell", "exaone", "jais", "refact"],
        "h.{bid}.mlp.c_proj": ["gpt2"],
        "gpt_neox.layers.{bid}.mlp.dense_4h_to_h": ["gptneox"],
        "model.layers.{bid}.mlp.fc2": ["phi2"],
        "transformer.h.{bid}.mlp.fc2": ["phi2"],
        "model.layers.{bid}.mlp.c_proj": ["starcoder2"],
        "model.layers.{bid}.feed_forward.down_proj": [
            "falcon-h1", "jamba", "llama4", "granitehybrid",
        ],
        "layers.{bid}.mlp.down_proj": ["gemma-embedding", "qwen2vl", "eurobert", "llama-embed", "eagle3", "dflash"],
        "layers.{bid}.mlp.Wo": ["modern-bert"],
        "encoder.layers.{bid}.mlp.fc2": ["nomic-bert"],
        "model.layers.{bid}.feed_forward.w2": ["lfm2", "lfm2moe", "internlm2"],
        "backbone.layers.{bid}.mixer.down_proj": ["nemotron_h_moe"],
        "transformer.layer.{bid}.ffn.lin2": ["bert"],
        "transformer_encoder.{bid}.ffn.w3": ["neo-bert"],
        "encoder.layer.{bid}.mlp.wo": ["jina-bert-v2"],
        "encoder.layer.{bid}.mlp.down_layer": ["jina-bert-v2"],
        "h.{bid}.mlp.dense_4h_to_h": ["bloom"],
        "transformer.blocks.{bid}.ffn.down_proj": ["mpt"],
        "model.layers.h.{bid}.mlp.c_proj": ["exaone"],
        "model.layers.{bid}.block_sparse_moe.down": ["smallthinker"],
        "transformer.layers.{bid}.ffn.proj_2": ["openelm"],
        "encoder.layers.{bid}.mlp.dense_4h_to_h": ["chatglm"],
        "model.layers.{bid}.residual_mlp.w2": ["arctic"],
        "model.transformer.blocks.{bid}.ff_out": ["llada"],
        "model.blocks.{bid}.mlp.mlp_resid": ["talkie"],
        "model.layers.{bid}.mlp.language_mlp.down_proj": ["cogvlm"],
        "model.layers.layers.{bid}.mlp.down_proj": ["plamo2", "plamo3"],
    }
    /// `blk.{bid}.ffn_gate_exps`.
    FfnGateExp = "blk.{bid}.ffn_gate_exps" {
        "layers.{bid}.feed_forward.experts.w1": ["lfm2moe", "llama", "minimax-01"],
        "model.layers.{bid}.mlp.experts.gate_proj": [
            "afmoe", "bailingmoe2", "cohere2moe", "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1",
            "ernie4_5-moe", "exaone-moe", "glm-dsa", "glm4moe", "gpt-oss", "jamba", "laguna",
            "olmoe", "qwen2moe", "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next", "qwen3vlmoe", "maple",
            "mellum",
            "hy_v3", "bailingmoe",
            "mimo2", "deepseek2-ocr", "grovemoe", "llada-moe", "rnd1",
            "glm5-next",
        ],
        "model.layers.{bid}.block_sparse_moe.experts.w1": [
            "minimax-m2", "phimoe", "minimax-m3", "grok",
            "hy_v3",
            "mimo2", "kimi-linear", "kimi-k3",
        ],
        "model.layers.{bid}.feed_forward.experts.gate_proj": ["llama4"],
        "model.layers.{bid}.block_sparse_moe.experts.gate": ["smallthinker"],
        "transformer.blocks.{bid}.ffn.experts.mlp.w1": ["dbrx"],
        "transformer.decoder_layer.{bid}.moe.linear": ["grok"],
        "model.layers.{bid}.moe.gate_proj": ["step35"],
    }
    /// `blk.{bid}.ffn_up_exps`.
    FfnUpExp = "blk.{bid}.ffn_up_exps" {
        "layers.{bid}.feed_forward.experts.w3": ["lfm2moe", "llama", "minimax-01"],
        "model.layers.{bid}.mlp.experts.up_proj": [
            "afmoe", "bailingmoe2", "cohere2moe", "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1",
            "ernie4_5-moe", "exaone-moe", "glm-dsa", "glm4moe", "gpt-oss", "jamba", "laguna",
            "nemotron_h_moe", "olmoe", "qwen2moe", "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next",
            "qwen3vlmoe", "maple", "mellum",
            "hy_v3", "bailingmoe",
            "mimo2", "deepseek2-ocr", "grovemoe", "llada-moe", "rnd1",
            "glm5-next",
        ],
        "model.layers.{bid}.block_sparse_moe.experts.w3": [
            "minimax-m2", "phimoe", "minimax-m3", "grok",
            "hy_v3",
            "mimo2", "kimi-linear", "kimi-k3",
        ],
        "model.layers.{bid}.feed_forward.experts.up_proj": ["llama4"],
        "model.layers.{bid}.block_sparse_moe.experts.up": ["smallthinker"],
        "transformer.blocks.{bid}.ffn.experts.mlp.v1": ["dbrx"],
        "transformer.decoder_layer.{bid}.moe.linear_v": ["grok"],
        "model.layers.{bid}.moe.up_proj": ["step35"],
    }
    /// `blk.{bid}.ffn_down_exps`.
    FfnDownExp = "blk.{bid}.ffn_down_exps" {
        "model.layers.{bid}.block_sparse_moe.output_linear": ["granitehybrid", "granitemoe"],
        "layers.{bid}.feed_forward.experts.w2": ["lfm2moe", "llama", "minimax-01"],
        "model.layers.{bid}.mlp.experts.down_proj": [
            "afmoe", "bailingmoe2", "cohere2moe", "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1",
            "ernie4_5-moe", "exaone-moe", "glm-dsa", "glm4moe", "gpt-oss", "jamba", "laguna",
            "nemotron_h_moe", "olmoe", "qwen2moe", "qwen35moe", "qwen4exp", "qwen3moe", "qwen3next",
            "qwen3vlmoe", "maple", "mellum",
            "hy_v3", "bailingmoe",
            "hy_v4", "mimo2", "deepseek2-ocr", "grovemoe", "llada-moe", "rnd1",
            "glm5-next",
        ],
        "model.layers.{bid}.block_sparse_moe.experts.w2": [
            "minimax-m2", "phimoe", "minimax-m3", "grok",
            "hy_v3",
            "hy_v4",
            "mimo2", "kimi-linear", "kimi-k3",
        ],
        "model.layers.{bid}.feed_forward.experts.down_proj": ["llama4"],
        "model.layers.{bid}.experts.down_proj": ["gemma4"],
        "model.layers.{bid}.block_sparse_moe.experts.down": ["smallthinker"],
        "transformer.blocks.{bid}.ffn.experts.mlp.w2": ["dbrx"],
        "transformer.decoder_layer.{bid}.moe.linear_1": ["grok"],
        "model.layers.{bid}.moe.down_proj": ["step35"],
    }
    /// `blk.{bid}.ffn_gate_shexp`.
    FfnGateShexp = "blk.{bid}.ffn_gate_shexp" {
        "model.layers.{bid}.mlp.shared_expert.gate_proj": [
            "laguna", "qwen2moe", "qwen35moe", "qwen4exp", "qwen3next",
        ],
        "model.layers.{bid}.mlp.shared_experts.gate_proj": [
            "afmoe", "bailingmoe2", "cohere2moe", "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1",
            "ernie4_5-moe", "exaone-moe", "glm-dsa", "glm4moe", "bailingmoe", "hy_v4",
            "deepseek2-ocr", "bailingmoe3",
            "glm5-next",
        ],
        "model.layers.{bid}.feed_forward.shared_expert.gate_proj": ["llama4"],
        "layers.{bid}.shared_experts.w1": ["deepseek2"],
        "model.layers.{bid}.block_sparse_moe.shared_experts.gate_proj": ["minimax-m3", "kimi-linear", "kimi-k3"],
        "model.layers.{bid}.mlp.shared_mlp.gate_proj": ["hy_v3"],
        "model.layers.{bid}.share_expert.gate_proj": ["step35"],
    }
    /// `blk.{bid}.ffn_up_shexp`.
    FfnUpShexp = "blk.{bid}.ffn_up_shexp" {
        "model.layers.{bid}.mlp.shared_expert.up_proj": [
            "laguna", "qwen2moe", "qwen35moe", "qwen4exp", "qwen3next",
        ],
        "model.layers.{bid}.mlp.shared_experts.up_proj": [
            "afmoe", "bailingmoe2", "cohere2moe", "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1",
            "ernie4_5-moe", "exaone-moe", "glm-dsa", "glm4moe", "bailingmoe", "hy_v4",
            "deepseek2-ocr", "bailingmoe3",
            "glm5-next",
        ],
        "model.layers.{bid}.feed_forward.shared_expert.up_proj": ["llama4"],
        "backbone.layers.{bid}.mixer.shared_experts.up_proj": ["nemotron_h_moe"],
        "layers.{bid}.shared_experts.w3": ["deepseek2"],
        "model.layers.{bid}.block_sparse_moe.shared_experts.up_proj": ["minimax-m3", "kimi-linear", "kimi-k3"],
        "model.layers.{bid}.mlp.shared_mlp.up_proj": ["hy_v3"],
        "model.layers.{bid}.share_expert.up_proj": ["step35"],
    }
    /// `blk.{bid}.ffn_down_shexp`.
    FfnDownShexp = "blk.{bid}.ffn_down_shexp" {
        "model.layers.{bid}.shared_mlp.output_linear": ["granitehybrid", "granitemoe", "granite_swa"],
        "model.layers.{bid}.mlp.shared_expert.down_proj": [
            "laguna", "qwen2moe", "qwen35moe", "qwen4exp", "qwen3next",
        ],
        "model.layers.{bid}.mlp.shared_experts.down_proj": [
            "afmoe", "bailingmoe2", "cohere2moe", "deepseek", "deepseek2", "deepseek32", "dots3note", "dots1",
            "ernie4_5-moe", "exaone-moe", "glm-dsa", "glm4moe", "bailingmoe", "hy_v4",
            "deepseek2-ocr", "bailingmoe3",
            "glm5-next",
        ],
        "model.layers.{bid}.feed_forward.shared_expert.down_proj": ["llama4"],
        "backbone.layers.{bid}.mixer.shared_experts.down_proj": ["nemotron_h_moe"],
        "layers.{bid}.shared_experts.w2": ["deepseek2"],
        "model.layers.{bid}.block_sparse_moe.shared_experts.down_proj": ["minimax-m3", "kimi-linear", "kimi-k3"],
        "model.layers.{bid}.mlp.shared_mlp.down_proj": ["hy_v3"],
        "model.layers.{bid}.share_expert.down_proj": ["step35"],
    }
    /// `blk.{bid}.exp_probs_b` (the expert selection bias).
    FfnExpProbsB = "blk.{bid}.exp_probs_b" {
        "model.layers.{bid}.mlp.gate.e_score_correction": [
            "deepseek2", "deepseek32", "dots3note", "dots1", "glm-dsa", "glm4moe",
            "hy_v4",
            "mimo2",
            "glm5-next",
        ],
        "model.layers.{bid}.mlp.moe_statics.e_score_correction": ["ernie4_5-moe"],
        "model.layers.{bid}.feed_forward.expert_bias": ["lfm2moe"],
        "backbone.layers.{bid}.mixer.gate.e_score_correction": ["nemotron_h_moe"],
        "model.layers.{bid}.block_sparse_moe.e_score_correction": ["minimax-m2", "minimax-m3"],
        "model.layers.{bid}.mlp.expert_bias": ["afmoe", "hy_v3"],
        "model.layers.{bid}.mlp.e_score_correction": ["exaone-moe"],
        "model.layers.{bid}.mlp.gate.expert_bias": ["bailingmoe2", "bailingmoe3"],
        "model.layers.{bid}.mlp.experts.e_score_correction": ["laguna"],
        "model.layers.{bid}.block_sparse_moe.gate.e_score_correction": ["kimi-linear", "kimi-k3"],
        "model.layers.{bid}.moe.router_bias": ["step35"],
    }
    /// `blk.{bid}.layer_output_norm`.
    LayerOutNorm = "blk.{bid}.layer_output_norm" {
        "encoder.layer.{bid}.output.LayerNorm": ["bert"],
        "encoder.layers.{bid}.norm2": ["nomic-bert"],
        "model.layers.{bid}.final_layernorm": ["bailingmoe2", "mimo2", "bailingmoe3"],
        "transformer.layer.{bid}.output_layer_norm": ["bert"],
        "encoder.layer.{bid}.mlp.layernorm": ["jina-bert-v2"],
        "encoder.layer.{bid}.layer_norm_2": ["jina-bert-v2"],
        "transformer.decoder_layer.{bid}.rms_norm_3": ["grok"],
    }
    // MLA attention, next-token-prediction layers and attention sinks.
    // `layers.{bid}.attention.*`: Mistral Large 3's native names.
    /// `blk.{bid}.attn_q_a` (MLA's query down-projection).
    AttnQA = "blk.{bid}.attn_q_a" {
        "model.layers.{bid}.self_attn.q_a_proj": [
            "deepseek2", "deepseek32", "dots3note", "glm-dsa", "minicpm3",
            "hy_v4",
            "glm5-next",
        ],
        "layers.{bid}.attention.wq_a": ["deepseek2"],
        "model.layers.{bid}.attention.q_a_proj": ["bailingmoe3"],
    }
    /// `blk.{bid}.attn_q_b` (MLA's query up-projection).
    AttnQB = "blk.{bid}.attn_q_b" {
        "model.layers.{bid}.self_attn.q_b_proj": [
            "deepseek2", "deepseek32", "dots3note", "glm-dsa", "minicpm3",
            "hy_v4",
            "glm5-next",
        ],
        "layers.{bid}.attention.wq_b": ["deepseek2"],
        "model.layers.{bid}.attention.q_b_proj": ["bailingmoe3"],
    }
    /// `blk.{bid}.attn_kv_a_mqa` (MLA's shared key/value down-projection with the rope key).
    AttnKvAMqa = "blk.{bid}.attn_kv_a_mqa" {
        "model.layers.{bid}.self_attn.kv_a_proj_with_mqa": [
            "deepseek2", "deepseek32", "dots3note", "glm-dsa", "plm",
            "minicpm3",
            "hy_v4", "kimi-linear", "kimi-k3",
            "glm5-next",
        ],
        "layers.{bid}.attention.wkv_a_with_mqa": ["deepseek2"],
        "model.layers.{bid}.attention.kv_a_proj_with_mqa": ["bailingmoe3"],
    }
    /// `blk.{bid}.attn_kv_b` (MLA's key/value up-projection, unsplit).
    AttnKvB = "blk.{bid}.attn_kv_b" {
        "model.layers.{bid}.self_attn.kv_b_proj": ["deepseek2", "deepseek32", "glm-dsa", "plm", "minicpm3", "kimi-linear", "kimi-k3"],
    }
    /// `blk.{bid}.attn_k_b` (the key part of `attn_kv_b`, per head, transposed).
    AttnKB = "blk.{bid}.attn_k_b" {
        "model.layers.{bid}.self_attn.k_b_proj": ["deepseek2", "deepseek32", "dots3note", "glm-dsa", "hy_v4", "glm5-next"],
        "layers.{bid}.attention.k_b_proj": ["deepseek2"],
    }
    /// `blk.{bid}.attn_v_b` (the value part of `attn_kv_b`, per head).
    AttnVB = "blk.{bid}.attn_v_b" {
        "model.layers.{bid}.self_attn.v_b_proj": ["deepseek2", "deepseek32", "dots3note", "glm-dsa", "hy_v4", "glm5-next"],
        "layers.{bid}.attention.v_b_proj": ["deepseek2"],
    }
    /// `blk.{bid}.attn_q_a_norm`.
    AttnQANorm = "blk.{bid}.attn_q_a_norm" {
        "model.layers.{bid}.self_attn.q_a_layernorm": [
            "deepseek2", "deepseek32", "dots3note", "glm-dsa", "minicpm3",
            "hy_v4",
            "glm5-next",
        ],
        "layers.{bid}.attention.q_a_norm": ["deepseek2"],
        "model.layers.{bid}.attention.q_a_layernorm": ["bailingmoe3"],
    }
    /// `blk.{bid}.attn_kv_a_norm`.
    AttnKvANorm = "blk.{bid}.attn_kv_a_norm" {
        "model.layers.{bid}.self_attn.kv_a_layernorm": [
            "deepseek2", "deepseek32", "dots3note", "glm-dsa", "plm",
            "minicpm3",
            "hy_v4", "kimi-linear", "kimi-k3",
            "glm5-next",
        ],
        "layers.{bid}.attention.kv_a_norm": ["deepseek2"],
        "model.layers.{bid}.attention.kv_a_layernorm": ["bailingmoe3"],
    }
    /// `blk.{bid}.nextn.eh_proj`.
    NextnEhProj = "blk.{bid}.nextn.eh_proj" {
        "model.layers.{bid}.eh_proj": [
            "deepseek2", "deepseek32", "exaone-moe", "exaone4", "glm-dsa", "glm4", "glm4moe", "nemotron_h_moe", "dots3note",
            "qwen35", "qwen35moe", "qwen3next",
            "hy_v3",
            "mimo2",
            "bailingmoe3", "step35",
            "glm5-next",
        ],
    }
    /// `blk.{bid}.nextn.embed_tokens`.
    NextnEmbedTokens = "blk.{bid}.nextn.embed_tokens" {
        "model.layers.{bid}.embed_tokens": ["dots3note", "glm4moe", "mimo2"],
    }
    /// `blk.{bid}.nextn.enorm`.
    NextnEnorm = "blk.{bid}.nextn.enorm" {
        "model.layers.{bid}.enorm": [
            "deepseek2", "deepseek32", "exaone-moe", "exaone4", "glm-dsa", "glm4", "glm4moe", "nemotron_h_moe", "dots3note",
            "qwen35", "qwen35moe", "qwen3next",
            "hy_v3",
            "mimo2",
            "bailingmoe3", "step35",
            "glm5-next",
        ],
    }
    /// `blk.{bid}.nextn.hnorm`.
    NextnHnorm = "blk.{bid}.nextn.hnorm" {
        "model.layers.{bid}.hnorm": [
            "deepseek2", "deepseek32", "exaone-moe", "exaone4", "glm-dsa", "glm4", "glm4moe", "nemotron_h_moe", "dots3note",
            "qwen35", "qwen35moe", "qwen3next",
            "hy_v3",
            "mimo2",
            "bailingmoe3", "step35",
            "glm5-next",
        ],
    }
    /// `blk.{bid}.nextn.shared_head_head`.
    NextnSharedHeadHead = "blk.{bid}.nextn.shared_head_head" {
        "model.layers.{bid}.shared_head.head": ["glm4moe", "mimo2", "step35"],
    }
    /// `blk.{bid}.nextn.shared_head_norm`.
    NextnSharedHeadNorm = "blk.{bid}.nextn.shared_head_norm" {
        "model.layers.{bid}.shared_head.norm": [
            "deepseek2", "deepseek32", "exaone-moe", "exaone4", "glm-dsa", "glm4", "glm4moe", "nemotron_h_moe", "dots3note",
            "qwen35", "qwen35moe", "qwen3next",
            "hy_v3",
            "mimo2",
            "step35",
            "glm5-next",
        ],
    }
    /// `blk.{bid}.attn_sinks`.
    AttnSinks = "blk.{bid}.attn_sinks" {
        "model.layers.{bid}.self_attn.sinks": ["gpt-oss", "granite_swa"],
        "model.layers.{bid}.self_attn.learnable_sink_param": ["hy_v4"],
        "model.layers.{bid}.self_attn.attention_sink_bias": ["mimo2"],
    }
    // State-space mixers.
    /// `blk.{bid}.ssm_in`.
    SsmIn = "blk.{bid}.ssm_in" {
        "model.layers.{bid}.in_proj": ["mamba"],
        "backbone.layers.{bid}.mixer.in_proj": ["mamba", "mamba2", "nemotron_h_moe"],
        "model.layers.{bid}.mamba.in_proj": ["falcon-h1", "granitehybrid", "jamba"],
        "model.layers.{bid}.linear_attn.in_proj_qkvz": ["qwen3next"],
        "model.layers.layers.{bid}.mixer.in_proj": ["plamo2"],
    }
    /// `blk.{bid}.ssm_conv1d`.
    SsmConv1d = "blk.{bid}.ssm_conv1d" {
        "model.layers.{bid}.conv1d": ["mamba"],
        "backbone.layers.{bid}.mixer.conv1d": ["mamba", "mamba2", "nemotron_h_moe"],
        "model.layers.{bid}.mamba.conv1d": ["falcon-h1", "granitehybrid", "jamba"],
        "model.layers.{bid}.linear_attn.conv1d": ["qwen35", "qwen35moe", "qwen4exp", "qwen3next"],
        "model.layers.layers.{bid}.mixer.conv1d": ["plamo2"],
    }
    /// `blk.{bid}.ssm_x`.
    SsmX = "blk.{bid}.ssm_x" {
        "model.layers.{bid}.x_proj": ["mamba"],
        "backbone.layers.{bid}.mixer.x_proj": ["mamba"],
        "model.layers.{bid}.mamba.x_proj": ["jamba"],
        "model.layers.layers.{bid}.mixer.bcdt_proj": ["plamo2"],
    }
    /// `blk.{bid}.ssm_dt`.
    SsmDt = "blk.{bid}.ssm_dt" {
        "model.layers.{bid}.dt_proj": ["mamba"],
        "backbone.layers.{bid}.mixer.dt_proj": ["mamba", "mamba2", "nemotron_h_moe"],
        "model.layers.{bid}.mamba.dt_proj": ["falcon-h1", "granitehybrid", "jamba"],
        "model.layers.{bid}.linear_attn.dt_proj": ["qwen35", "qwen35moe", "qwen4exp", "qwen3next"],
        "backbone.layers.{bid}.mixer.dt": ["nemotron_h_moe"],
        "model.layers.{bid}.self_attn.dt_proj": ["kimi-linear", "kimi-k3", "glm5-next"],
        "model.layers.{bid}.attention.dt_proj": ["bailingmoe3"],
        "model.layers.layers.{bid}.mixer.dt_proj": ["plamo2"],
    }
    /// `blk.{bid}.ssm_dt_norm`.
    SsmDtNorm = "blk.{bid}.ssm_dt_norm" {
        "model.layers.{bid}.mamba.dt_layernorm": ["jamba"],
        "model.layers.layers.{bid}.mixer.dt_norm.weight": ["plamo2"],
    }
    /// `blk.{bid}.ssm_a`.
    SsmA = "blk.{bid}.ssm_a" {
        "model.layers.{bid}.A_log": ["mamba"],
        "backbone.layers.{bid}.mixer.A_log": ["mamba", "mamba2", "nemotron_h_moe"],
        "model.layers.{bid}.mamba.A_log": ["falcon-h1", "granitehybrid", "jamba"],
        "model.layers.{bid}.linear_attn.A_log": ["qwen35", "qwen35moe", "qwen4exp", "qwen3next"],
        "model.layers.{bid}.self_attn.A_log": ["kimi-linear", "kimi-k3", "glm5-next"],
        "model.layers.{bid}.attention.A_log": ["bailingmoe3"],
        "model.layers.layers.{bid}.mixer.A_log": ["plamo2"],
    }
    /// `blk.{bid}.ssm_b_norm`.
    SsmBNorm = "blk.{bid}.ssm_b_norm" {
        "model.layers.{bid}.mamba.b_layernorm": ["jamba"],
        "model.layers.{bid}.mamba.B_layernorm": ["jamba"],
        "model.layers.layers.{bid}.mixer.B_norm.weight": ["plamo2"],
    }
    /// `blk.{bid}.ssm_c_norm`.
    SsmCNorm = "blk.{bid}.ssm_c_norm" {
        "model.layers.{bid}.mamba.c_layernorm": ["jamba"],
        "model.layers.{bid}.mamba.C_layernorm": ["jamba"],
        "model.layers.layers.{bid}.mixer.C_norm.weight": ["plamo2"],
    }
    /// `blk.{bid}.ssm_d`.
    SsmD = "blk.{bid}.ssm_d" {
        "model.layers.{bid}.D": ["mamba"],
        "backbone.layers.{bid}.mixer.D": ["mamba", "mamba2", "nemotron_h_moe"],
        "model.layers.{bid}.mamba.D": ["falcon-h1", "granitehybrid", "jamba"],
        "model.layers.layers.{bid}.mixer.D": ["plamo2"],
    }
    /// `blk.{bid}.ssm_norm`.
    SsmNorm = "blk.{bid}.ssm_norm" {
        "model.layers.{bid}.mamba.norm": ["granitehybrid"],
        "backbone.layers.{bid}.mixer.norm": ["mamba2", "nemotron_h_moe"],
        "model.layers.{bid}.linear_attn.norm": ["qwen35", "qwen35moe", "qwen4exp", "qwen3next"],
        "model.layers.{bid}.self_attn.o_norm": ["kimi-linear", "kimi-k3", "glm5-next"],
        "model.layers.{bid}.attention.o_norm": ["bailingmoe3"],
    }
    /// `blk.{bid}.ssm_out`.
    SsmOut = "blk.{bid}.ssm_out" {
        "model.layers.{bid}.out_proj": ["mamba"],
        "backbone.layers.{bid}.mixer.out_proj": ["mamba", "mamba2", "nemotron_h_moe"],
        "model.layers.{bid}.mamba.out_proj": ["falcon-h1", "granitehybrid", "jamba"],
        "model.layers.{bid}.linear_attn.out_proj": ["qwen35", "qwen35moe", "qwen4exp", "qwen3next"],
        "model.layers.layers.{bid}.mixer.out_proj": ["plamo2"],
    }
    /// `blk.{bid}.attn_gate` (the output gate of linear attention).
    AttnGate = "blk.{bid}.attn_gate" {
        "model.layers.{bid}.linear_attn.in_proj_z": ["qwen35", "qwen35moe", "qwen4exp"],
        "model.layers.{bid}.self_attn.gate_proj": ["afmoe"],
        "model.layers.{bid}.self_attn.g_proj": ["dots3note", "laguna", "spark2_5", "step35"],
        "model.layers.{bid}.self_attn.output_gate": ["minimax-01"],
        "model.layers.{bid}.self_attn.linear_gate": ["hy_v4"],
    }
    /// `blk.{bid}.ssm_ba` (Qwen3-Next's fused beta/alpha projection).
    SsmBetaAlpha = "blk.{bid}.ssm_ba" {
        "model.layers.{bid}.linear_attn.in_proj_ba": ["qwen3next"],
    }
    /// `blk.{bid}.ssm_beta`.
    SsmBeta = "blk.{bid}.ssm_beta" {
        "model.layers.{bid}.linear_attn.in_proj_b": ["qwen35", "qwen35moe", "qwen4exp"],
        "model.layers.{bid}.self_attn.b_proj": ["kimi-linear", "kimi-k3", "glm5-next"],
        "model.layers.{bid}.attention.b_proj": ["bailingmoe3"],
    }
    /// `blk.{bid}.ssm_alpha`.
    SsmAlpha = "blk.{bid}.ssm_alpha" {
        "model.layers.{bid}.linear_attn.in_proj_a": ["qwen35", "qwen35moe", "qwen4exp"],
    }
    /// `blk.{bid}.ffn_latent_down` (Nemotron 3 Super's expert latent projection).
    FfnLatentDown = "blk.{bid}.ffn_latent_down" {
        "backbone.layers.{bid}.mixer.fc1_latent_proj": ["nemotron_h_moe"],
    }
    /// `blk.{bid}.ffn_latent_up`.
    FfnLatentUp = "blk.{bid}.ffn_latent_up" {
        "backbone.layers.{bid}.mixer.fc2_latent_proj": ["nemotron_h_moe"],
    }
    // LFM2's short convolution.
    /// `blk.{bid}.shortconv.conv`.
    ShortConv = "blk.{bid}.shortconv.conv" {
        "model.layers.{bid}.conv.conv": ["lfm2", "lfm2moe"],
    }
    /// `blk.{bid}.shortconv.in_proj`.
    ShortConvIn = "blk.{bid}.shortconv.in_proj" {
        "model.layers.{bid}.conv.in_proj": ["lfm2", "lfm2moe"],
    }
    /// `blk.{bid}.shortconv.out_proj`.
    ShortConvOut = "blk.{bid}.shortconv.out_proj" {
        "model.layers.{bid}.conv.out_proj": ["lfm2", "lfm2moe"],
    }
    /// `blk.{bid}.ffn_norm` as gguf-py's `FFN_PRE_NORM` (Falcon-H1): its one spelling
    /// includes `.weight`, so the GGUF name has no suffix.
    FfnPreNorm = "blk.{bid}.ffn_norm" {
        "model.layers.{bid}.pre_ff_layernorm.weight": ["falcon-h1"],
        "model.layers.{bid}.pre_mlp_layernorm": ["afmoe"],
    }
    // T5 (gguf-py's `DEC_*` / `ENC_*`).
    /// `dec.blk.{bid}.attn_norm`.
    DecAttnNorm = "dec.blk.{bid}.attn_norm" {
        "decoder.block.{bid}.layer.0.layer_norm": ["t5"],
    }
    /// `dec.blk.{bid}.attn_q`.
    DecAttnQ = "dec.blk.{bid}.attn_q" {
        "decoder.block.{bid}.layer.0.SelfAttention.q": ["t5"],
    }
    /// `dec.blk.{bid}.attn_k`.
    DecAttnK = "dec.blk.{bid}.attn_k" {
        "decoder.block.{bid}.layer.0.SelfAttention.k": ["t5"],
    }
    /// `dec.blk.{bid}.attn_v`.
    DecAttnV = "dec.blk.{bid}.attn_v" {
        "decoder.block.{bid}.layer.0.SelfAttention.v": ["t5"],
    }
    /// `dec.blk.{bid}.attn_o`.
    DecAttnOut = "dec.blk.{bid}.attn_o" {
        "decoder.block.{bid}.layer.0.SelfAttention.o": ["t5"],
    }
    /// `dec.blk.{bid}.attn_rel_b`.
    DecAttnRelB = "dec.blk.{bid}.attn_rel_b" {
        "decoder.block.{bid}.layer.0.SelfAttention.relative_attention_bias": ["t5"],
    }
    /// `dec.blk.{bid}.cross_attn_norm`.
    DecCrossAttnNorm = "dec.blk.{bid}.cross_attn_norm" {
        "decoder.block.{bid}.layer.1.layer_norm": ["t5"],
    }
    /// `dec.blk.{bid}.cross_attn_q`.
    DecCrossAttnQ = "dec.blk.{bid}.cross_attn_q" {
        "decoder.block.{bid}.layer.1.EncDecAttention.q": ["t5"],
    }
    /// `dec.blk.{bid}.cross_attn_k`.
    DecCrossAttnK = "dec.blk.{bid}.cross_attn_k" {
        "decoder.block.{bid}.layer.1.EncDecAttention.k": ["t5"],
    }
    /// `dec.blk.{bid}.cross_attn_v`.
    DecCrossAttnV = "dec.blk.{bid}.cross_attn_v" {
        "decoder.block.{bid}.layer.1.EncDecAttention.v": ["t5"],
    }
    /// `dec.blk.{bid}.cross_attn_o`.
    DecCrossAttnOut = "dec.blk.{bid}.cross_attn_o" {
        "decoder.block.{bid}.layer.1.EncDecAttention.o": ["t5"],
    }
    /// `dec.blk.{bid}.cross_attn_rel_b`.
    DecCrossAttnRelB = "dec.blk.{bid}.cross_attn_rel_b" {
        "decoder.block.{bid}.layer.1.EncDecAttention.relative_attention_bias": ["t5"],
    }
    /// `dec.blk.{bid}.ffn_norm`.
    DecFfnNorm = "dec.blk.{bid}.ffn_norm" {
        "decoder.block.{bid}.layer.2.layer_norm": ["t5"],
    }
    /// `dec.blk.{bid}.ffn_gate`.
    DecFfnGate = "dec.blk.{bid}.ffn_gate" {
        "decoder.block.{bid}.layer.2.DenseReluDense.wi_0": ["t5"],
    }
    /// `dec.blk.{bid}.ffn_up`.
    DecFfnUp = "dec.blk.{bid}.ffn_up" {
        "decoder.block.{bid}.layer.2.DenseReluDense.wi": ["t5"],
        "decoder.block.{bid}.layer.2.DenseReluDense.wi_1": ["t5"],
    }
    /// `dec.blk.{bid}.ffn_down`.
    DecFfnDown = "dec.blk.{bid}.ffn_down" {
        "decoder.block.{bid}.layer.2.DenseReluDense.wo": ["t5"],
    }
    /// `dec.output_norm`.
    DecOutputNorm = "dec.output_norm" {
        "decoder.final_layer_norm": ["t5"],
    }
    /// `enc.blk.{bid}.attn_norm`.
    EncAttnNorm = "enc.blk.{bid}.attn_norm" {
        "encoder.block.{bid}.layer.0.layer_norm": ["t5", "t5encoder"],
    }
    /// `enc.blk.{bid}.attn_q`.
    EncAttnQ = "enc.blk.{bid}.attn_q" {
        "encoder.block.{bid}.layer.0.SelfAttention.q": ["t5", "t5encoder"],
    }
    /// `enc.blk.{bid}.attn_k`.
    EncAttnK = "enc.blk.{bid}.attn_k" {
        "encoder.block.{bid}.layer.0.SelfAttention.k": ["t5", "t5encoder"],
    }
    /// `enc.blk.{bid}.attn_v`.
    EncAttnV = "enc.blk.{bid}.attn_v" {
        "encoder.block.{bid}.layer.0.SelfAttention.v": ["t5", "t5encoder"],
    }
    /// `enc.blk.{bid}.attn_o`.
    EncAttnOut = "enc.blk.{bid}.attn_o" {
        "encoder.block.{bid}.layer.0.SelfAttention.o": ["t5", "t5encoder"],
    }
    /// `enc.blk.{bid}.attn_rel_b`.
    EncAttnRelB = "enc.blk.{bid}.attn_rel_b" {
        "encoder.block.{bid}.layer.0.SelfAttention.relative_attention_bias": ["t5", "t5encoder"],
    }
    /// `enc.blk.{bid}.ffn_norm`.
    EncFfnNorm = "enc.blk.{bid}.ffn_norm" {
        "encoder.block.{bid}.layer.1.layer_norm": ["t5", "t5encoder"],
    }
    /// `enc.blk.{bid}.ffn_gate`.
    EncFfnGate = "enc.blk.{bid}.ffn_gate" {
        "encoder.block.{bid}.layer.1.DenseReluDense.wi_0": ["t5"],
    }
    /// `enc.blk.{bid}.ffn_up`.
    EncFfnUp = "enc.blk.{bid}.ffn_up" {
        "encoder.block.{bid}.layer.1.DenseReluDense.wi": ["t5encoder"],
        "encoder.block.{bid}.layer.1.DenseReluDense.wi_1": ["t5"],
    }
    /// `enc.blk.{bid}.ffn_down`.
    EncFfnDown = "enc.blk.{bid}.ffn_down" {
        "encoder.block.{bid}.layer.1.DenseReluDense.wo": ["t5", "t5encoder"],
    }
    /// `enc.output_norm`.
    EncOutputNorm = "enc.output_norm" {
        "encoder.final_layer_norm": ["t5", "t5encoder"],
        "layer_norm": ["neo-bert"],
    }
    // Gemma 3n.
    /// `per_layer_token_embd` (Gemma 3n's per-layer token embeddings).
    PerLayerTokenEmbd = "per_layer_token_embd" {
        "model.embed_tokens_per_layer": ["gemma3n", "gemma4"],
    }
    /// `per_layer_model_proj`.
    PerLayerModelProj = "per_layer_model_proj" {
        "model.per_layer_model_projection": ["gemma3n", "gemma4"],
    }
    /// `per_layer_proj_norm`.
    PerLayerProjNorm = "per_layer_proj_norm" {
        "model.per_layer_projection_norm": ["gemma3n", "gemma4"],
    }
    /// `altup_proj` (the stacked AltUp input projections).
    AltupProj = "altup_proj" {
        "model.altup_projections": ["gemma3n"],
    }
    /// `altup_unembd_proj`.
    AltupUnembdProj = "altup_unembd_proj" {
        "model.altup_unembed_projections": ["gemma3n"],
    }
    /// `blk.{bid}.inp_gate`.
    PerLayerInpGate = "blk.{bid}.inp_gate" {
        "model.layers.{bid}.per_layer_input_gate": ["gemma3n", "gemma4"],
    }
    /// `blk.{bid}.proj`.
    PerLayerProj = "blk.{bid}.proj" {
        "model.layers.{bid}.per_layer_projection": ["gemma3n", "gemma4"],
    }
    /// `blk.{bid}.post_norm`.
    PerLayerPostNorm = "blk.{bid}.post_norm" {
        "model.layers.{bid}.post_per_layer_input_norm": ["gemma3n", "gemma4"],
    }
    /// `blk.{bid}.altup_correct_coef`.
    AltupCorrectCoef = "blk.{bid}.altup_correct_coef" {
        "model.layers.{bid}.altup.correction_coefs": ["gemma3n"],
    }
    /// `blk.{bid}.altup_correct_scale`.
    AltupCorrectScale = "blk.{bid}.altup_correct_scale" {
        "model.layers.{bid}.altup.correct_output_scale": ["gemma3n"],
    }
    /// `blk.{bid}.altup_predict_coef`.
    AltupPredictCoef = "blk.{bid}.altup_predict_coef" {
        "model.layers.{bid}.altup.prediction_coefs": ["gemma3n"],
    }
    /// `blk.{bid}.altup_router`.
    AltupRouter = "blk.{bid}.altup_router" {
        "model.layers.{bid}.altup.modality_router": ["gemma3n"],
    }
    /// `blk.{bid}.altup_router_norm`.
    AltupRouterNorm = "blk.{bid}.altup_router_norm" {
        "model.layers.{bid}.altup.router_norm": ["gemma3n"],
    }
    /// `blk.{bid}.laurel_l`.
    LaurelL = "blk.{bid}.laurel_l" {
        "model.layers.{bid}.laurel.linear_left": ["gemma3n"],
    }
    /// `blk.{bid}.laurel_r`.
    LaurelR = "blk.{bid}.laurel_r" {
        "model.layers.{bid}.laurel.linear_right": ["gemma3n"],
    }
    /// `blk.{bid}.laurel_post_norm`.
    LaurelPostNorm = "blk.{bid}.laurel_post_norm" {
        "model.layers.{bid}.laurel.post_laurel_norm": ["gemma3n"],
    }
    /// `blk.{bid}.indexer.k_norm` (DeepSeek sparse attention's indexer key norm).
    IndexerKNorm = "blk.{bid}.indexer.k_norm" {
        "model.layers.{bid}.self_attn.indexer.k_norm": ["deepseek32", "dots3note", "glm-dsa", "hy_v4", "glm5-next"],
        "model.layers.{bid}.self_attn.index_k_norm": ["glm-dsa", "minimax-m3"],
        "model.layers.{bid}.self_attn.indexer.k_layernorm": ["qwen4exp"],
    }
    /// `blk.{bid}.indexer.proj` (the indexer's per-head weights).
    IndexerProj = "blk.{bid}.indexer.proj" {
        "model.layers.{bid}.self_attn.indexer.weights_proj": ["deepseek32", "dots3note", "glm-dsa", "hy_v4", "glm5-next"],
    }
    /// `blk.{bid}.indexer.attn_k` (the indexer's key projection).
    IndexerAttnK = "blk.{bid}.indexer.attn_k" {
        "model.layers.{bid}.self_attn.indexer.wk": ["deepseek32", "dots3note", "glm-dsa", "hy_v4", "glm5-next"],
    }
    /// `blk.{bid}.indexer.attn_q_b` (the indexer's query up-projection).
    IndexerAttnQB = "blk.{bid}.indexer.attn_q_b" {
        "model.layers.{bid}.self_attn.indexer.wq_b": ["deepseek32", "dots3note", "glm-dsa", "hy_v4", "glm5-next"],
    }
    /// `blk.{bid}.indexer.q_proj` (MiniMax sparse attention's indexer query projection).
    IndexerQProj = "blk.{bid}.indexer.q_proj" {
        "model.layers.{bid}.self_attn.index_q_proj": ["minimax-m3"],
    }
    /// `blk.{bid}.indexer.k_proj` (MiniMax sparse attention's indexer key projection).
    IndexerKProj = "blk.{bid}.indexer.k_proj" {
        "model.layers.{bid}.self_attn.index_k_proj": ["minimax-m3"],
    }
    /// `blk.{bid}.indexer.q_norm` (MiniMax sparse attention's indexer query norm).
    IndexerQNorm = "blk.{bid}.indexer.q_norm" {
        "model.layers.{bid}.self_attn.index_q_norm": ["minimax-m3"],
        "model.layers.{bid}.self_attn.indexer.q_layernorm": ["qwen4exp"],
    }
    // Gemma 4: the fused experts and their router, the second FFN's norms, the layer scalar.
    /// `blk.{bid}.ffn_gate_up_exps`: the experts' gate and up projections in one tensor.
    FfnGateUpExp = "blk.{bid}.ffn_gate_up_exps" {
        "model.layers.{bid}.mlp.experts.gate_up_proj": ["gemma4"],
        "model.layers.{bid}.experts.gate_up_proj": ["gemma4"],
    }
    /// `blk.{bid}.pre_ffw_norm_2`.
    FfnPreNorm2 = "blk.{bid}.pre_ffw_norm_2" {
        "model.layers.{bid}.pre_feedforward_layernorm_2": ["gemma4"],
    }
    /// `blk.{bid}.post_ffw_norm_1`.
    FfnPostNorm1 = "blk.{bid}.post_ffw_norm_1" {
        "model.layers.{bid}.post_feedforward_layernorm_1": ["gemma4"],
    }
    /// `blk.{bid}.post_ffw_norm_2`.
    FfnPostNorm2 = "blk.{bid}.post_ffw_norm_2" {
        "model.layers.{bid}.post_feedforward_layernorm_2": ["gemma4"],
    }
    /// `blk.{bid}.layer_output_scale`.
    LayerOutScale = "blk.{bid}.layer_output_scale" {
        "model.layers.{bid}.layer_scalar": ["gemma4", "gemma4-assistant", "dflash"],
        "model.blocks.{bid}.embed_skip.a_g": ["talkie"],
    }
    // Gemma 4's assistant (draft head).
    /// `nextn.pre_projection`: a draft head's projection of its input.
    NextnProjPre = "nextn.pre_projection" {
        "pre_projection": ["gemma4-assistant"],
    }
    /// `nextn.post_projection`: a draft head's projection to the target model's width.
    NextnProjPost = "nextn.post_projection" {
        "post_projection": ["gemma4-assistant"],
    }
    // Hyper-connections, compressed attention and hash routing (DeepSeek V4, which names
    // these tensors itself: its own name map, not gguf-py's table). Hy4's iHC tensors are
    // gguf-py's spellings.
    /// `output_hc_fn`: the final hyper-connection mixing weights.
    HcHeadFn = "output_hc_fn" {
        "model.hc_head.hc_head_fn": ["hy_v4"],
    }
    /// `output_hc_base`: the final hyper-connection mixing bias.
    HcHeadBase = "output_hc_base" {
        "model.hc_head.hc_head_base": ["hy_v4"],
    }
    /// `output_hc_scale`: the final hyper-connection mixing scale.
    HcHeadScale = "output_hc_scale" {
        "model.hc_head.hc_head_scale": ["hy_v4"],
    }
    // Low-rank hyper-connections (Qwen4-Exp): a norm, a down / up input mixer and the
    // block's injection weights, per block for attention and FFN, and once before the head.
    /// `output_hc_norm`.
    HcHeadNorm = "output_hc_norm" {
        "model.hyper_connection_mixer.hc_norm": ["qwen4exp"],
    }
    /// `output_hc_down`.
    HcHeadDown = "output_hc_down" {
        "model.hyper_connection_mixer.input_mix_weight_down": ["qwen4exp"],
    }
    /// `output_hc_up`.
    HcHeadUp = "output_hc_up" {
        "model.hyper_connection_mixer.input_mix_weight_up": ["qwen4exp"],
    }
    /// `blk.{bid}.hc_attn_norm`.
    HcAttnNorm = "blk.{bid}.hc_attn_norm" {
        "model.layers.{bid}.attn_hyper_connection.hc_norm": ["qwen4exp"],
    }
    /// `blk.{bid}.hc_attn_down`.
    HcAttnDown = "blk.{bid}.hc_attn_down" {
        "model.layers.{bid}.attn_hyper_connection.input_mix_weight_down": ["qwen4exp"],
    }
    /// `blk.{bid}.hc_attn_up`.
    HcAttnUp = "blk.{bid}.hc_attn_up" {
        "model.layers.{bid}.attn_hyper_connection.input_mix_weight_up": ["qwen4exp"],
    }
    /// `blk.{bid}.hc_attn_inject`.
    HcAttnInject = "blk.{bid}.hc_attn_inject" {
        "model.layers.{bid}.attn_hyper_connection.block_inject_weight": ["qwen4exp"],
    }
    /// `blk.{bid}.hc_ffn_norm`.
    HcFfnNorm = "blk.{bid}.hc_ffn_norm" {
        "model.layers.{bid}.mlp_hyper_connection.hc_norm": ["qwen4exp"],
    }
    /// `blk.{bid}.hc_ffn_down`.
    HcFfnDown = "blk.{bid}.hc_ffn_down" {
        "model.layers.{bid}.mlp_hyper_connection.input_mix_weight_down": ["qwen4exp"],
    }
    /// `blk.{bid}.hc_ffn_up`.
    HcFfnUp = "blk.{bid}.hc_ffn_up" {
        "model.layers.{bid}.mlp_hyper_connection.input_mix_weight_up": ["qwen4exp"],
    }
    /// `blk.{bid}.hc_ffn_inject`.
    HcFfnInject = "blk.{bid}.hc_ffn_inject" {
        "model.layers.{bid}.mlp_hyper_connection.block_inject_weight": ["qwen4exp"],
    }
    // The hashed n-gram per-layer embedding module (Qwen4-Exp).
    /// `blk.{bid}.ple_key`.
    PleKey = "blk.{bid}.ple_key" {
        "model.layers.{bid}.ple.key_proj": ["qwen4exp"],
    }
    /// `blk.{bid}.ple_value`.
    PleValue = "blk.{bid}.ple_value" {
        "model.layers.{bid}.ple.value_proj": ["qwen4exp"],
    }
    /// `blk.{bid}.ple_norm_key`.
    PleNormKey = "blk.{bid}.ple_norm_key" {
        "model.layers.{bid}.ple.norm_key": ["qwen4exp"],
    }
    /// `blk.{bid}.ple_norm_query`.
    PleNormQuery = "blk.{bid}.ple_norm_query" {
        "model.layers.{bid}.ple.norm_query": ["qwen4exp"],
    }
    /// `blk.{bid}.ple_norm_conv`.
    PleNormConv = "blk.{bid}.ple_norm_conv" {
        "model.layers.{bid}.ple.norm_conv": ["qwen4exp"],
    }
    /// `blk.{bid}.ple_conv1d`.
    PleConv1d = "blk.{bid}.ple_conv1d" {
        "model.layers.{bid}.ple.conv1d": ["qwen4exp"],
    }
    /// `blk.{bid}.hc_attn_fn`: the hyper-connection mixing weights around attention.
    HcAttnFn = "blk.{bid}.hc_attn_fn" {
        "model.layers.{bid}.hc_attn_fn": ["glm5-next"],
        "model.layers.{bid}.hc_attn_layer.hc_pre.hc_fn": ["hy_v4"],
    }
    /// `blk.{bid}.hc_attn_base`.
    HcAttnBase = "blk.{bid}.hc_attn_base" {
        "model.layers.{bid}.hc_attn_base": ["glm5-next"],
        "model.layers.{bid}.hc_attn_layer.hc_pre.hc_base": ["hy_v4"],
    }
    /// `blk.{bid}.hc_attn_scale`.
    HcAttnScale = "blk.{bid}.hc_attn_scale" {
        "model.layers.{bid}.hc_attn_scale": ["glm5-next"],
        "model.layers.{bid}.hc_attn_layer.hc_pre.hc_scale": ["hy_v4"],
    }
    /// `blk.{bid}.hc_ffn_fn`: the hyper-connection mixing weights around the FFN.
    HcFfnFn = "blk.{bid}.hc_ffn_fn" {
        "model.layers.{bid}.hc_ffn_fn": ["glm5-next"],
        "model.layers.{bid}.hc_mlp_layer.hc_pre.hc_fn": ["hy_v4"],
    }
    /// `blk.{bid}.hc_ffn_base`.
    HcFfnBase = "blk.{bid}.hc_ffn_base" {
        "model.layers.{bid}.hc_ffn_base": ["glm5-next"],
        "model.layers.{bid}.hc_mlp_layer.hc_pre.hc_base": ["hy_v4"],
    }
    /// `blk.{bid}.hc_ffn_scale`.
    HcFfnScale = "blk.{bid}.hc_ffn_scale" {
        "model.layers.{bid}.hc_ffn_scale": ["glm5-next"],
        "model.layers.{bid}.hc_mlp_layer.hc_pre.hc_scale": ["hy_v4"],
    }
    /// `blk.{bid}.attn_kv`: the single shared key/value projection.
    /// `blk.{bid}.attn_res_score`: a block's attention-residual score vector before attention
    /// (the product of the checkpoint's `self_attention_res_norm` and `_res_proj` weights).
    AttnResScore = "blk.{bid}.attn_res_score" {}
    /// `blk.{bid}.ffn_res_score`: the same score before the FFN (`mlp_res_norm` and `_res_proj`).
    FfnResScore = "blk.{bid}.ffn_res_score" {}
    /// `output_res_score`: the final one (`output_attn_res_norm` and `_res_proj`).
    OutputResScore = "output_res_score" {}
    /// `blk.{bid}.ssm_g`: a linear-attention block's full-rank output gate.
    SsmG = "blk.{bid}.ssm_g" {}
    /// `blk.{bid}.ffn_routed_down`: a latent MoE's projection into the experts' space.
    FfnRoutedDown = "blk.{bid}.ffn_routed_down" {
        "model.layers.{bid}.block_sparse_moe.routed_expert_down_proj": ["kimi-k3"],
    }
    /// `blk.{bid}.ffn_routed_up`: its projection back to the hidden size.
    FfnRoutedUp = "blk.{bid}.ffn_routed_up" {
        "model.layers.{bid}.block_sparse_moe.routed_expert_up_proj": ["kimi-k3"],
    }
    /// `blk.{bid}.ffn_routed_norm`: the norm on the routed experts' latent output.
    FfnRoutedNorm = "blk.{bid}.ffn_routed_norm" {
        "model.layers.{bid}.block_sparse_moe.routed_expert_norm": ["kimi-k3"],
    }
    AttnKv = "blk.{bid}.attn_kv" {}
    /// `blk.{bid}.attn_output_a`: the grouped output projection's first (per-group) part.
    AttnOutA = "blk.{bid}.attn_output_a" {}
    /// `blk.{bid}.attn_output_b`: the grouped output projection's second part.
    AttnOutB = "blk.{bid}.attn_output_b" {}
    /// `blk.{bid}.attn_compressor_kv`: the KV compressor's projection.
    AttnCompressorWkv = "blk.{bid}.attn_compressor_kv" {}
    /// `blk.{bid}.attn_compressor_gate`: the KV compressor's gate.
    AttnCompressorWgate = "blk.{bid}.attn_compressor_gate" {}
    /// `blk.{bid}.attn_compressor_ape`: the KV compressor's position embedding.
    AttnCompressorApe = "blk.{bid}.attn_compressor_ape" {}
    /// `blk.{bid}.attn_compressor_norm`.
    AttnCompressorNorm = "blk.{bid}.attn_compressor_norm" {}
    /// `blk.{bid}.indexer_compressor_kv`: the indexer's own KV compressor.
    IndexerCompressorWkv = "blk.{bid}.indexer_compressor_kv" {}
    /// `blk.{bid}.indexer_compressor_gate`.
    IndexerCompressorWgate = "blk.{bid}.indexer_compressor_gate" {
        "model.layers.{bid}.self_attn.indexer.index_kpool_compress_gate": ["glm5-next"],
    }
    /// `blk.{bid}.indexer_compressor_ape`.
    IndexerCompressorApe = "blk.{bid}.indexer_compressor_ape" {
        "model.layers.{bid}.self_attn.indexer.index_kpool_compress_ape": ["glm5-next"],
    }
    /// `blk.{bid}.indexer_compressor_norm`.
    IndexerCompressorNorm = "blk.{bid}.indexer_compressor_norm" {}
    /// `blk.{bid}.exp_probs_b_vl`: the expert selection bias of image tokens.
    FfnExpProbsBVl = "blk.{bid}.exp_probs_b_vl" {}
    /// `blk.{bid}.ffn_gate_tid2eid`: a hash-routed layer's token id → experts table (I32).
    FfnGateTid2eid = "blk.{bid}.ffn_gate_tid2eid" {}
    /// `blk.{bid}.ffn_norm_exps`: the norm before the routed experts of a block that also has
    /// a dense FFN (Arctic; its spelling is the family's own override).
    FfnNormExp = "blk.{bid}.ffn_norm_exps" {}
    /// `blk.{bid}.time_mix_w0`: the decay LoRA's bias.
    TimeMixW0 = "blk.{bid}.time_mix_w0" {
        "model.layers.{bid}.attention.w0": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_w1`: the token-shift (RWKV-6) or decay (RWKV-7) LoRA's first matrix.
    TimeMixW1 = "blk.{bid}.time_mix_w1" {
        "rwkv.blocks.{bid}.attention.time_maa_w1": ["rwkv6"],
        "model.layers.{bid}.attention.w1": ["rwkv7", "arwkv7"],
        "model.layers.{bid}.self_attn.time_maa_w1": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_w2`: the same LoRA's second matrix.
    TimeMixW2 = "blk.{bid}.time_mix_w2" {
        "rwkv.blocks.{bid}.attention.time_maa_w2": ["rwkv6"],
        "model.layers.{bid}.attention.w2": ["rwkv7", "arwkv7"],
        "model.layers.{bid}.self_attn.time_maa_w2": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_a0`: the in-context learning-rate LoRA's bias.
    TimeMixA0 = "blk.{bid}.time_mix_a0" {
        "model.layers.{bid}.attention.a0": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_a1`: the in-context learning-rate LoRA's first matrix.
    TimeMixA1 = "blk.{bid}.time_mix_a1" {
        "model.layers.{bid}.attention.a1": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_a2`: the in-context learning-rate LoRA's second matrix.
    TimeMixA2 = "blk.{bid}.time_mix_a2" {
        "model.layers.{bid}.attention.a2": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_v0`: the value-residual LoRA's bias.
    TimeMixV0 = "blk.{bid}.time_mix_v0" {
        "model.layers.{bid}.attention.v0": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_v1`: the value-residual LoRA's first matrix.
    TimeMixV1 = "blk.{bid}.time_mix_v1" {
        "model.layers.{bid}.attention.v1": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_v2`: the value-residual LoRA's second matrix.
    TimeMixV2 = "blk.{bid}.time_mix_v2" {
        "model.layers.{bid}.attention.v2": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_g1`: the output-gate LoRA's first matrix.
    TimeMixG1 = "blk.{bid}.time_mix_g1" {
        "model.layers.{bid}.attention.g1": ["rwkv7"],
    }
    /// `blk.{bid}.time_mix_g2`: the output-gate LoRA's second matrix.
    TimeMixG2 = "blk.{bid}.time_mix_g2" {
        "model.layers.{bid}.attention.g2": ["rwkv7"],
    }
    /// `blk.{bid}.time_mix_k_k`: the key normalisation scale.
    TimeMixKK = "blk.{bid}.time_mix_k_k" {
        "model.layers.{bid}.attention.k_k": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_k_a`: the key learning-rate scale.
    TimeMixKA = "blk.{bid}.time_mix_k_a" {
        "model.layers.{bid}.attention.k_a": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_r_k`: the per-head receptance-key bonus.
    TimeMixRK = "blk.{bid}.time_mix_r_k" {
        "model.layers.{bid}.attention.r_k": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_lerp_x`: the token-shift mix of the LoRA's input.
    TimeMixLerpX = "blk.{bid}.time_mix_lerp_x" {
        "rwkv.blocks.{bid}.attention.time_maa_x": ["rwkv6"],
        "model.layers.{bid}.self_attn.time_maa_x": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_lerp_k`: the key token-shift mix (fused into `time_mix_lerp_fused`).
    TimeMixLerpK = "blk.{bid}.time_mix_lerp_k" {
        "rwkv.blocks.{bid}.attention.time_maa_k": ["rwkv6"],
        "model.layers.{bid}.self_attn.time_maa_k": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_lerp_v`: the value token-shift mix (fused).
    TimeMixLerpV = "blk.{bid}.time_mix_lerp_v" {
        "rwkv.blocks.{bid}.attention.time_maa_v": ["rwkv6"],
        "model.layers.{bid}.self_attn.time_maa_v": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_lerp_r`: the receptance token-shift mix (fused).
    TimeMixLerpR = "blk.{bid}.time_mix_lerp_r" {
        "rwkv.blocks.{bid}.attention.time_maa_r": ["rwkv6"],
        "model.layers.{bid}.self_attn.time_maa_r": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_lerp_g`: the gate token-shift mix (fused).
    TimeMixLerpG = "blk.{bid}.time_mix_lerp_g" {
        "rwkv.blocks.{bid}.attention.time_maa_g": ["rwkv6"],
        "model.layers.{bid}.self_attn.time_maa_g": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_lerp_w`: the decay token-shift mix (fused).
    TimeMixLerpW = "blk.{bid}.time_mix_lerp_w" {
        "rwkv.blocks.{bid}.attention.time_maa_w": ["rwkv6"],
        "model.layers.{bid}.self_attn.time_maa_w": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_lerp_fused`: the token-shift mixes stacked into one tensor.
    TimeMixLerpFused = "blk.{bid}.time_mix_lerp_fused" {}
    /// `blk.{bid}.time_mix_first`: the per-head bonus of the current token (`time_faaaa`).
    TimeMixFirst = "blk.{bid}.time_mix_first" {
        "rwkv.blocks.{bid}.attention.time_faaaa": ["rwkv6"],
    }
    /// `blk.{bid}.time_mix_decay`: the decay's base.
    TimeMixDecay = "blk.{bid}.time_mix_decay" {
        "rwkv.blocks.{bid}.attention.time_decay": ["rwkv6"],
        "model.layers.{bid}.self_attn.time_decay": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_decay_w1`: the decay LoRA's first matrix.
    TimeMixDecayW1 = "blk.{bid}.time_mix_decay_w1" {
        "rwkv.blocks.{bid}.attention.time_decay_w1": ["rwkv6"],
        "model.layers.{bid}.self_attn.time_decay_w1": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_decay_w2`: the decay LoRA's second matrix.
    TimeMixDecayW2 = "blk.{bid}.time_mix_decay_w2" {
        "rwkv.blocks.{bid}.attention.time_decay_w2": ["rwkv6"],
        "model.layers.{bid}.self_attn.time_decay_w2": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_key`: the key projection.
    TimeMixKey = "blk.{bid}.time_mix_key" {
        "rwkv.blocks.{bid}.attention.key": ["rwkv6"],
        "model.layers.{bid}.attention.key": ["rwkv7", "arwkv7"],
        "model.layers.{bid}.attention.k_proj": ["rwkv7"],
        "model.layers.{bid}.self_attn.k_proj": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_value`: the value projection.
    TimeMixValue = "blk.{bid}.time_mix_value" {
        "rwkv.blocks.{bid}.attention.value": ["rwkv6"],
        "model.layers.{bid}.attention.value": ["rwkv7", "arwkv7"],
        "model.layers.{bid}.attention.v_proj": ["rwkv7"],
        "model.layers.{bid}.self_attn.v_proj": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_receptance`: the receptance projection.
    TimeMixReceptance = "blk.{bid}.time_mix_receptance" {
        "rwkv.blocks.{bid}.attention.receptance": ["rwkv6"],
        "model.layers.{bid}.attention.receptance": ["rwkv7", "arwkv7"],
        "model.layers.{bid}.attention.r_proj": ["rwkv7"],
        "model.layers.{bid}.self_attn.q_proj": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_gate`: the output gate projection.
    TimeMixGate = "blk.{bid}.time_mix_gate" {
        "rwkv.blocks.{bid}.attention.gate": ["rwkv6"],
        "model.layers.{bid}.self_attn.gate": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.time_mix_ln`: the group norm of the WKV output.
    TimeMixLn = "blk.{bid}.time_mix_ln" {
        "rwkv.blocks.{bid}.attention.ln_x": ["rwkv6"],
        "model.layers.{bid}.attention.ln_x": ["rwkv7", "arwkv7"],
    }
    /// `blk.{bid}.time_mix_output`: the output projection.
    TimeMixOutput = "blk.{bid}.time_mix_output" {
        "rwkv.blocks.{bid}.attention.output": ["rwkv6"],
        "model.layers.{bid}.attention.output": ["rwkv7", "arwkv7"],
        "model.layers.{bid}.attention.o_proj": ["rwkv7"],
        "model.layers.{bid}.self_attn.o_proj": ["rwkv6qwen2"],
    }
    /// `blk.{bid}.channel_mix_lerp_k`: the channel mix's key token-shift mix.
    ChannelMixLerpK = "blk.{bid}.channel_mix_lerp_k" {
        "rwkv.blocks.{bid}.feed_forward.time_maa_k": ["rwkv6"],
        "model.layers.{bid}.feed_forward.x_k": ["rwkv7"],
    }
    /// `blk.{bid}.channel_mix_lerp_r`: the channel mix's receptance token-shift mix.
    ChannelMixLerpR = "blk.{bid}.channel_mix_lerp_r" {
        "rwkv.blocks.{bid}.feed_forward.time_maa_r": ["rwkv6"],
    }
    /// `blk.{bid}.channel_mix_key`: the channel mix's key projection.
    ChannelMixKey = "blk.{bid}.channel_mix_key" {
        "rwkv.blocks.{bid}.feed_forward.key": ["rwkv6"],
        "model.layers.{bid}.feed_forward.key": ["rwkv7"],
    }
    /// `blk.{bid}.channel_mix_receptance`: the channel mix's receptance projection.
    ChannelMixReceptance = "blk.{bid}.channel_mix_receptance" {
        "rwkv.blocks.{bid}.feed_forward.receptance": ["rwkv6"],
    }
    /// `blk.{bid}.channel_mix_value`: the channel mix's value projection.
    ChannelMixValue = "blk.{bid}.channel_mix_value" {
        "rwkv.blocks.{bid}.feed_forward.value": ["rwkv6"],
        "model.layers.{bid}.feed_forward.value": ["rwkv7"],
    }
    /// `blk.{bid}.ssm_conv1d_q` (Kimi Delta Attention's short convolution of the queries).
    SsmConv1dQ = "blk.{bid}.ssm_conv1d_q" {
        "model.layers.{bid}.self_attn.q_conv1d": ["kimi-linear", "kimi-k3", "glm5-next"],
        "model.layers.{bid}.attention.q_conv1d": ["bailingmoe3"],
    }
    /// `blk.{bid}.ssm_conv1d_k` (of the keys).
    SsmConv1dK = "blk.{bid}.ssm_conv1d_k" {
        "model.layers.{bid}.self_attn.k_conv1d": ["kimi-linear", "kimi-k3", "glm5-next"],
        "model.layers.{bid}.attention.k_conv1d": ["bailingmoe3"],
    }
    /// `blk.{bid}.ssm_conv1d_v` (of the values).
    SsmConv1dV = "blk.{bid}.ssm_conv1d_v" {
        "model.layers.{bid}.self_attn.v_conv1d": ["kimi-linear", "kimi-k3", "glm5-next"],
        "model.layers.{bid}.attention.v_conv1d": ["bailingmoe3"],
    }
    /// `blk.{bid}.ssm_f_a` (the forget gate's low-rank down projection).
    SsmFA = "blk.{bid}.ssm_f_a" {
        "model.layers.{bid}.self_attn.f_a_proj": ["kimi-linear", "kimi-k3", "glm5-next"],
    }
    /// `blk.{bid}.ssm_f_b` (its up projection).
    SsmFB = "blk.{bid}.ssm_f_b" {
        "model.layers.{bid}.self_attn.f_b_proj": ["kimi-linear", "kimi-k3", "glm5-next"],
    }
    /// `blk.{bid}.ssm_g_a` (the output gate's low-rank down projection).
    SsmGA = "blk.{bid}.ssm_g_a" {
        "model.layers.{bid}.self_attn.g_a_proj": ["kimi-linear", "glm5-next"],
    }
    /// `blk.{bid}.ssm_g_b` (its up projection).
    SsmGB = "blk.{bid}.ssm_g_b" {
        "model.layers.{bid}.self_attn.g_b_proj": ["kimi-linear", "glm5-next"],
    }
    /// `blk.{bid}.ffn_gate_chexps`: the stacked gate projections of the chunk experts
    /// (GroveMoE's small experts shared by a group of routed ones).
    FfnGateChexp = "blk.{bid}.ffn_gate_chexps" {
        "model.layers.{bid}.mlp.chunk_experts.gate_proj": ["grovemoe"],
    }
    /// `blk.{bid}.ffn_up_chexps`: the chunk experts' up projections.
    FfnUpChexp = "blk.{bid}.ffn_up_chexps" {
        "model.layers.{bid}.mlp.chunk_experts.up_proj": ["grovemoe"],
    }
    /// `blk.{bid}.ffn_down_chexps`: the chunk experts' down projections.
    FfnDownChexp = "blk.{bid}.ffn_down_chexps" {
        "model.layers.{bid}.mlp.chunk_experts.down_proj": ["grovemoe"],
    }
    /// `dense_2`: a projection after the final hidden state (LFM2.5-Audio's detokenizer
    /// output).
    Dense2Out = "dense_2" {
        "dense_2_out": ["lfm2"],
    }
    // WavTokenizer's decoder.
    /// `conv1d`: the input convolution.
    Conv1d = "conv1d" {
        "backbone.embed": ["wavtokenizer-dec"],
    }
    /// `convnext.{bid}.dw`: a ConvNeXt block's depthwise convolution.
    ConvnextDw = "convnext.{bid}.dw" {
        "backbone.convnext.{bid}.dwconv": ["wavtokenizer-dec"],
    }
    /// `convnext.{bid}.norm`: a ConvNeXt block's norm.
    ConvnextNorm = "convnext.{bid}.norm" {
        "backbone.convnext.{bid}.norm": ["wavtokenizer-dec"],
    }
    /// `convnext.{bid}.pw1`: a ConvNeXt block's first pointwise projection.
    ConvnextPw1 = "convnext.{bid}.pw1" {
        "backbone.convnext.{bid}.pwconv1": ["wavtokenizer-dec"],
    }
    /// `convnext.{bid}.pw2`: a ConvNeXt block's second pointwise projection.
    ConvnextPw2 = "convnext.{bid}.pw2" {
        "backbone.convnext.{bid}.pwconv2": ["wavtokenizer-dec"],
    }
    /// `convnext.{bid}.gamma`: a ConvNeXt block's layer scale.
    ConvnextGamma = "convnext.{bid}.gamma" {
        "backbone.convnext.{bid}.gamma": ["wavtokenizer-dec"],
    }
    /// `posnet.{bid}.conv1`: a PosNet residual block's first convolution.
    PosnetConv1 = "posnet.{bid}.conv1" {
        "backbone.posnet.{bid}.conv1": ["wavtokenizer-dec"],
    }
    /// `posnet.{bid}.conv2`: a PosNet residual block's second convolution.
    PosnetConv2 = "posnet.{bid}.conv2" {
        "backbone.posnet.{bid}.conv2": ["wavtokenizer-dec"],
    }
    /// `posnet.{bid}.norm1`: a PosNet residual block's first norm.
    PosnetNorm1 = "posnet.{bid}.norm1" {
        "backbone.posnet.{bid}.norm1": ["wavtokenizer-dec"],
    }
    /// `posnet.{bid}.norm2`: a PosNet residual block's second norm.
    PosnetNorm2 = "posnet.{bid}.norm2" {
        "backbone.posnet.{bid}.norm2": ["wavtokenizer-dec"],
    }
    /// `posnet.{bid}.attn_norm`: a PosNet attention (or final) block's norm.
    PosnetAttnNorm = "posnet.{bid}.attn_norm" {
        "backbone.posnet.{bid}.norm": ["wavtokenizer-dec"],
    }
    /// `posnet.{bid}.attn_q`: a PosNet attention block's query projection.
    PosnetAttnQ = "posnet.{bid}.attn_q" {
        "backbone.posnet.{bid}.q": ["wavtokenizer-dec"],
    }
    /// `posnet.{bid}.attn_k`: a PosNet attention block's key projection.
    PosnetAttnK = "posnet.{bid}.attn_k" {
        "backbone.posnet.{bid}.k": ["wavtokenizer-dec"],
    }
    /// `posnet.{bid}.attn_v`: a PosNet attention block's value projection.
    PosnetAttnV = "posnet.{bid}.attn_v" {
        "backbone.posnet.{bid}.v": ["wavtokenizer-dec"],
    }
    /// `posnet.{bid}.attn_output`: a PosNet attention block's output projection.
    PosnetAttnOut = "posnet.{bid}.attn_output" {
        "backbone.posnet.{bid}.proj_out": ["wavtokenizer-dec"],
    }
}

/// The tensors of a Llama-style decoder (embeddings, output, and per block the attention and
/// the gated feed-forward with their norms), which most architectures have; an
/// architecture lists this group plus its own tensors.
pub const DECODER: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::OutputNorm,
    Tensor::AttnNorm,
    Tensor::AttnQ,
    Tensor::AttnK,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnGate,
    Tensor::FfnUp,
    Tensor::FfnDown,
];

/// The tensors of a decoder whose FFN is always the routed experts: no dense FFN (gguf-py's
/// lists for `qwen2moe`, `qwen3moe`, `olmoe`, `granitemoe`, so a dense layer's
/// `mlp.gate_proj` cannot be mapped there and the reference refuses the checkpoint), and a
/// fused `attn_qkv` spelling.
pub const MOE_DECODER: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::OutputNorm,
    Tensor::AttnNorm,
    Tensor::AttnQkv,
    Tensor::AttnQ,
    Tensor::AttnK,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnUpExp,
    Tensor::FfnDownExp,
];

/// The expanded name table of one architecture and block count.
pub struct TensorMap {
    map: HashMap<String, String>,
}

impl TensorMap {
    /// The spellings of `tensors` (GGUF names included) in [`TABLE`] order, then
    /// `overrides` (later entries win), expanded for blocks `0..n_blocks`.
    pub fn new(groups: &[&[Tensor]], overrides: &[(Tensor, &[&str])], n_blocks: u64) -> TensorMap {
        let mut map = TensorMap::empty();
        let has = |t: &Tensor| groups.iter().any(|g| g.contains(t));
        for t in groups.iter().flat_map(|g| g.iter()) {
            map.add(t.gguf(), t.gguf(), n_blocks);
        }
        for row in TABLE.iter().filter(|r| has(&r.tensor)) {
            for s in row.spellings {
                map.add(row.tensor.gguf(), s.hf, n_blocks);
            }
        }
        for (t, spellings) in overrides {
            for hf in spellings.iter() {
                map.add(t.gguf(), hf, n_blocks);
            }
        }
        map
    }

    /// A map with no names.
    pub(crate) fn empty() -> TensorMap {
        TensorMap {
            map: HashMap::new(),
        }
    }

    /// Maps the HF spelling `hf` to `gguf` (a later call for the same spelling wins), each
    /// `{bid}` expanded for blocks `0..n_blocks`.
    pub(crate) fn add(&mut self, gguf: &str, hf: &str, n_blocks: u64) {
        if gguf.contains("{bid}") || hf.contains("{bid}") {
            for bid in 0..n_blocks {
                let b = bid.to_string();
                self.map
                    .insert(hf.replace("{bid}", &b), gguf.replace("{bid}", &b));
            }
        } else {
            self.map.insert(hf.to_string(), gguf.to_string());
        }
    }

    /// The GGUF name of `name`, if the table knows it: the name itself, or the name
    /// without `.weight` / `.bias` with that suffix appended to its GGUF name.
    pub fn get(&self, name: &str) -> Option<String> {
        self.get_with(name, &[".weight", ".bias"])
    }

    /// [`TensorMap::get`] with other suffixes tried (gguf-py's `try_suffixes`).
    pub fn get_with(&self, name: &str, suffixes: &[&str]) -> Option<String> {
        if let Some(g) = self.map.get(name) {
            return Some(g.clone());
        }
        for &suffix in suffixes {
            if let Some(base) = name.strip_suffix(suffix) {
                if let Some(g) = self.map.get(base) {
                    return Some(format!("{g}{suffix}"));
                }
            }
        }
        None
    }
}

/// The block id of a tensor name: its first dot-separated part made only of digits.
pub fn block_id(name: &str) -> Option<u64> {
    name.split('.')
        .find(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use Tensor as T;

    #[test]
    fn lookup_with_and_without_suffix() {
        let m = TensorMap::new(&[&[T::TokenEmbd, T::AttnQ]], &[], 2);
        assert_eq!(
            m.get("model.embed_tokens.weight").unwrap(),
            "token_embd.weight"
        );
        assert_eq!(
            m.get("model.layers.1.self_attn.q_proj.bias").unwrap(),
            "blk.1.attn_q.bias"
        );
        assert_eq!(m.get("blk.1.attn_q.weight").unwrap(), "blk.1.attn_q.weight");
        assert!(m.get("model.layers.2.self_attn.q_proj.weight").is_none());
        assert!(m.get("model.layers.0.self_attn.k_proj.weight").is_none());
        assert_eq!(block_id("model.layers.12.mlp"), Some(12));
        assert_eq!(block_id("lm_head.weight"), None);
    }

    #[test]
    fn later_rows_and_overrides_win() {
        let hf = "model.layers.0.post_attention_layernorm.weight";
        let llama = TensorMap::new(&[&[T::FfnNorm]], &[], 1);
        assert_eq!(llama.get(hf).unwrap(), "blk.0.ffn_norm.weight");
        let gemma2 = TensorMap::new(&[&[T::FfnNorm, T::AttnPostNorm]], &[], 1);
        assert_eq!(gemma2.get(hf).unwrap(), "blk.0.post_attention_norm.weight");
        let glm4 = TensorMap::new(
            &[&[T::FfnNorm, T::AttnPostNorm]],
            &[(T::FfnNorm, &["model.layers.{bid}.post_attention_layernorm"])],
            1,
        );
        assert_eq!(glm4.get(hf).unwrap(), "blk.0.ffn_norm.weight");
    }

    #[test]
    fn each_tensor_has_one_row() {
        let mut seen = std::collections::HashSet::new();
        for row in TABLE {
            assert!(seen.insert(row.tensor), "{:?} has two rows", row.tensor);
        }
    }
}
