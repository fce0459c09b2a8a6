//! What llama.cpp's model loader refuses before it reads a tensor: an architecture it does
//! not know, and the hyperparameters every architecture requires. llama-quantize loads the
//! architecture and the hyperparameters the same way, so [`crate::quantize::plan`] refuses
//! these files too, and `gguf-inspect verify` reports them.

use crate::gguf::keys;
use crate::gguf::{ArrayValue, Metadata, Value};

/// `general.architecture` values llama.cpp knows (its architecture name table at the
/// reference commit; `clip` is only used by llama-quantize for projector files).
pub const KNOWN_ARCHITECTURES: &[&str] = &[
    "clip",
    "llama",
    "llama4",
    "deci",
    "falcon",
    "grok",
    "gpt2",
    "gptj",
    "gptneox",
    "mpt",
    "baichuan",
    "starcoder",
    "refact",
    "bert",
    "modern-bert",
    "nomic-bert",
    "nomic-bert-moe",
    "neo-bert",
    "jina-bert-v2",
    "jina-bert-v3",
    "eurobert",
    "bloom",
    "stablelm",
    "qwen",
    "qwen2",
    "qwen2moe",
    "qwen2vl",
    "qwen3",
    "qwen3moe",
    "qwen3next",
    "qwen3vl",
    "qwen3vlmoe",
    "qwen35",
    "qwen35moe",
    "qwen4exp",
    "phi2",
    "phi3",
    "phimoe",
    "plamo",
    "plamo2",
    "plamo3",
    "codeshell",
    "orion",
    "internlm2",
    "minicpm",
    "minicpm3",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3n",
    "gemma4",
    "gemma4-assistant",
    "gemma-embedding",
    "starcoder2",
    "mamba",
    "mamba2",
    "maple",
    "jamba",
    "falcon-h1",
    "xverse",
    "command-r",
    "cohere2",
    "cohere2moe",
    "dbrx",
    "olmo",
    "olmo2",
    "olmoe",
    "muse-glimmer",
    "openelm",
    "arctic",
    "deepseek",
    "deepseek2",
    "deepseek2-ocr",
    "deepseek32",
    "deepseek4",
    "chatglm",
    "glm4",
    "glm4moe",
    "glm-dsa",
    "bitnet",
    "t5",
    "t5encoder",
    "jais",
    "jais2",
    "nemotron",
    "nemotron_h",
    "nemotron_h_moe",
    "exaone",
    "exaone4",
    "exaone-moe",
    "rwkv6",
    "rwkv6qwen2",
    "rwkv7",
    "arwkv7",
    "granite",
    "granitemoe",
    "granitehybrid",
    "graniteswitch",
    "granite_swa",
    "chameleon",
    "wavtokenizer-dec",
    "plm",
    "bailingmoe",
    "bailingmoe2",
    "bailingmoe3",
    "dots1",
    "dots3note",
    "arcee",
    "afmoe",
    "laguna",
    "ernie4_5",
    "ernie4_5-moe",
    "hunyuan-moe",
    "hunyuan-dense",
    "hunyuan_vl",
    "hy_v3",
    "hy_v4",
    "smollm3",
    "gpt-oss",
    "lfm2",
    "lfm2moe",
    "dream",
    "smallthinker",
    "llada",
    "llada-moe",
    "seed_oss",
    "grovemoe",
    "apertus",
    "minimax-01",
    "hrm_text",
    "minimax-m2",
    "minimax-m3",
    "cogvlm",
    "rnd1",
    "pangu-embedded",
    "mistral3",
    "eagle3",
    "dflash",
    "mistral4",
    "paddleocr",
    "mimo2",
    "step35",
    "spark2_5",
    "llama-embed",
    "maincoder",
    "kimi-linear",
    "kimi-k3",
    "glm5-next",
    "talkie",
    "mellum",
    "nanbeige",
    "qwen3tts",
    "pockettts",
];

/// Most blocks llama.cpp's hyperparameters hold (`LLAMA_MAX_LAYERS`).
pub const MAX_LAYERS: u64 = 512;

/// The problems llama.cpp's loader stops at when it loads the architecture and the
/// hyperparameters (as llama-quantize does): empty when it gets past them.
pub fn arch_problems(md: &Metadata) -> Vec<String> {
    let mut out = Vec::new();
    let arch = match md.get(keys::general::ARCHITECTURE) {
        None => {
            out.push("general.architecture is missing (llama.cpp requires it)".to_string());
            return out;
        }
        Some(Value::String(s)) => s.to_lossy().into_owned(),
        Some(v) => {
            out.push(format!(
                "general.architecture is a {:?}, not a string",
                v.value_type()
            ));
            return out;
        }
    };
    if !KNOWN_ARCHITECTURES.contains(&arch.as_str()) {
        out.push(format!(
            "unknown model architecture: '{arch}' (llama.cpp cannot load it)"
        ));
        return out;
    }
    if arch == "clip" {
        return out;
    }
    for k in [
        keys::llm::CONTEXT_LENGTH,
        keys::llm::EMBEDDING_LENGTH,
        keys::llm::BLOCK_COUNT,
    ] {
        let key = keys::arch_key(&arch, k);
        match md.get(&key).map(scalar_u64) {
            None => out.push(format!("{key} is missing (llama.cpp requires it)")),
            Some(None) => out.push(format!("{key} is not an unsigned integer")),
            Some(Some(n)) if k == "block_count" && !(1..=MAX_LAYERS).contains(&n) => {
                out.push(format!("{key} = {n}: llama.cpp needs 1 to {MAX_LAYERS}"))
            }
            Some(Some(_)) => {}
        }
    }
    out.extend(nextn_problem(md, &arch));
    out.extend(rope_problem(md, &arch));
    out.extend(super::experts::expert_problems(md, &arch));
    if out.is_empty() {
        for (archs, required) in ARCH_REQUIRED_FLOATS {
            if !archs.contains(&arch.as_str()) {
                continue;
            }
            for k in required.iter() {
                let key = keys::arch_key(&arch, k);
                match md.get(&key) {
                    Some(Value::F32(_)) => {}
                    None => out.push(format!(
                        "key not found in model: {key} (llama.cpp requires it for {arch})"
                    )),
                    Some(v) => out.push(format!("{key} is a {:?}, not a FLOAT32", v.value_type())),
                }
            }
        }
        for (archs, required) in ARCH_REQUIRED_KEYS {
            if !archs.contains(&arch.as_str()) {
                continue;
            }
            for k in required.iter() {
                let key = keys::arch_key(&arch, k);
                if md.get(&key).is_none() {
                    out.push(format!(
                        "key not found in model: {key} (llama.cpp requires it for {arch})"
                    ));
                }
            }
        }
    }
    out
}

/// The per-architecture keys (a value or an array) llama.cpp's model loader
/// (`load_arch_hparams`) reads without a default, in the order it reads them, for the
/// architectures whose files can lack them: a file without one is refused with the first
/// missing key.
const ARCH_REQUIRED_KEYS: &[(&[&str], &[&str])] = {
    use keys::{attention as at, llm};
    &[
        // The M-RoPE sections of the Qwen VL text models (`get_key_or_arr`, required), which
        // the converter does not write for every class that maps to them.
        (
            &[
                "qwen2vl",
                "qwen3vl",
                "qwen3vlmoe",
                "qwen35",
                "qwen35moe",
                "qwen4exp",
            ],
            &[keys::rope::DIMENSION_SECTIONS],
        ),
        (
            &["exaone-moe"],
            &[
                at::SLIDING_WINDOW,
                at::LAYERNORM_RMS_EPS,
                llm::EXPERT_FEED_FORWARD_LENGTH,
                llm::EXPERT_GATING_FUNC,
            ],
        ),
        (
            &["dots1"],
            &[
                at::LAYERNORM_RMS_EPS,
                llm::EXPERT_FEED_FORWARD_LENGTH,
                llm::EXPERT_SHARED_COUNT,
            ],
        ),
        (
            &["minimax-m2"],
            &[at::LAYERNORM_RMS_EPS, llm::EXPERT_FEED_FORWARD_LENGTH],
        ),
        (
            &["afmoe"],
            &[
                at::LAYERNORM_RMS_EPS,
                llm::EXPERT_FEED_FORWARD_LENGTH,
                llm::EXPERT_SHARED_COUNT,
            ],
        ),
        (
            &["cohere2moe"],
            &[
                at::SLIDING_WINDOW,
                llm::LOGIT_SCALE,
                llm::LEADING_DENSE_BLOCK_COUNT,
                llm::EXPERT_FEED_FORWARD_LENGTH,
            ],
        ),
        (
            &["bailingmoe2"],
            &[
                at::LAYERNORM_RMS_EPS,
                llm::EXPERT_FEED_FORWARD_LENGTH,
                llm::EXPERT_SHARED_COUNT,
                llm::EXPERT_GATING_FUNC,
            ],
        ),
        (
            &["laguna"],
            &[
                at::LAYERNORM_RMS_EPS,
                llm::LEADING_DENSE_BLOCK_COUNT,
                llm::EXPERT_FEED_FORWARD_LENGTH,
            ],
        ),
    ]
};

/// FLOAT32 hyperparameters an architecture's loader requires (`ml.get_key` without
/// `required = false` in its `load_arch_hparams`), for the architectures listed here.
const ARCH_REQUIRED_FLOATS: &[(&[&str], &[&str])] = &[
    (
        &["bert", "modern-bert", "nomic-bert"],
        &[keys::attention::LAYERNORM_EPS],
    ),
    (
        &["apertus", "mistral3", "gemma-embedding", "olmo2"],
        &[keys::attention::LAYERNORM_RMS_EPS],
    ),
    // Their converters write the epsilon only when the (remote-code) config names it.
    (&["arctic", "grok"], &[keys::attention::LAYERNORM_RMS_EPS]),
];

/// The problems llama.cpp's vocabulary loader stops at: the token list must be strings.
pub fn vocab_problems(md: &Metadata) -> Vec<String> {
    let mut out = Vec::new();
    match md.get(keys::tokenizer::TOKENS) {
        None | Some(Value::Array(ArrayValue::String(_))) => {}
        Some(Value::Array(a)) => out.push(format!(
            "tokenizer.ggml.tokens is an array of {:?}, not of strings (llama.cpp cannot load \
             the vocabulary)",
            a.elem_type()
        )),
        Some(v) => out.push(format!(
            "tokenizer.ggml.tokens is a {:?}, not an array of strings",
            v.value_type()
        )),
    }
    out
}

/// Per-block tensors every layer of these architectures has (llama.cpp creates them as
/// required): (architectures, alternatives for each required tensor).
const REQUIRED_BLOCK_TENSORS: &[(&[&str], &[&[&str]])] = &[(
    &[
        "llama",
        "qwen2",
        "qwen3",
        "qwen2moe",
        "qwen3moe",
        "gemma",
        "gemma2",
        "gemma3",
        "phi3",
        "gpt2",
        "starcoder2",
        "mistral3",
    ],
    &[
        &["attn_norm.weight"],
        &["attn_q.weight", "attn_qkv.weight"],
        &["attn_output.weight"],
        &["ffn_norm.weight", "post_attention_norm.weight"],
        &["ffn_down.weight", "ffn_down_exps.weight"],
        &["ffn_up.weight", "ffn_up_exps.weight"],
    ],
)];

/// Layer tensors llama.cpp requires that are missing (for the architectures whose layer
/// layout is listed here), given the tensor names and the block count.
pub fn missing_layer_tensors<'a>(
    md: &Metadata,
    names: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let Ok(arch) = md.get_str(keys::general::ARCHITECTURE) else {
        return Vec::new();
    };
    let Some((_, required)) = REQUIRED_BLOCK_TENSORS
        .iter()
        .find(|(archs, _)| archs.contains(&arch))
    else {
        return Vec::new();
    };
    let Some(Some(n)) = md
        .get(&keys::arch_key(arch, keys::llm::BLOCK_COUNT))
        .map(scalar_u64)
    else {
        return Vec::new();
    };
    if n > MAX_LAYERS {
        return Vec::new();
    }
    let names: std::collections::HashSet<&str> = names.collect();
    let mut out = Vec::new();
    for b in 0..n {
        for alts in required.iter() {
            if !alts
                .iter()
                .any(|t| names.contains(format!("blk.{b}.{t}").as_str()))
            {
                out.push(format!(
                    "missing tensor 'blk.{b}.{}' (llama.cpp requires it for {arch})",
                    alts[0]
                ));
            }
        }
    }
    out
}

/// llama.cpp's loader reads `{arch}.nextn_predict_layers` (the trailing next-token-prediction
/// blocks, 0 when absent) among the block count and stops unless it is an unsigned integer
/// no larger than `{arch}.block_count`.
fn nextn_problem(md: &Metadata, arch: &str) -> Option<String> {
    let key = keys::arch_key(arch, keys::mla::NEXTN_PREDICT_LAYERS);
    let nextn = match md.get(&key).map(scalar_u64)? {
        None => return Some(format!("{key} is not an unsigned integer")),
        Some(n) => n,
    };
    let blocks_key = keys::arch_key(arch, keys::llm::BLOCK_COUNT);
    let blocks = md.get(&blocks_key).and_then(scalar_u64)?;
    (nextn > blocks).then(|| {
        format!(
            "{key} = {nextn} is more than {blocks_key} = {blocks}: there are not that many \
             blocks to predict with (llama.cpp's loader stops here)"
        )
    })
}

/// Architectures whose loader requires the rotary dimensions to be the whole key head.
const FULL_ROPE_ARCHITECTURES: &[&str] = &["llama", "deci", "falcon", "llama-embed"];

/// llama.cpp's loader stops with "invalid n_rot" when, for the architectures of
/// [`FULL_ROPE_ARCHITECTURES`], `{arch}.rope.dimension_count` is not the key head size
/// (`{arch}.attention.key_length`, else `embedding_length / head_count`).
fn rope_problem(md: &Metadata, arch: &str) -> Option<String> {
    if !FULL_ROPE_ARCHITECTURES.contains(&arch) {
        return None;
    }
    let first = |k: &str| md.get(&keys::arch_key(arch, k)).and_then(scalar_u64);
    let heads = first(keys::attention::HEAD_COUNT).filter(|&h| h > 0)?;
    let embd = first(keys::llm::EMBEDDING_LENGTH)?;
    let head = first(keys::attention::KEY_LENGTH).unwrap_or(embd / heads);
    let rot = first(keys::rope::DIMENSION_COUNT)?;
    (rot != head).then(|| {
        format!(
            "{} = {rot} is not the key head size {head}: invalid n_rot (llama.cpp's loader \
             stops here)",
            keys::arch_key(arch, keys::rope::DIMENSION_COUNT)
        )
    })
}

/// An unsigned integer of any width, or the first value of a per-layer array (what
/// llama.cpp's `get_key_or_arr` gives layer 0).
pub(super) fn scalar_u64(v: &Value) -> Option<u64> {
    match v {
        Value::U8(x) => Some(u64::from(*x)),
        Value::U16(x) => Some(u64::from(*x)),
        Value::U32(x) => Some(u64::from(*x)),
        Value::U64(x) => Some(*x),
        Value::I8(x) => u64::try_from(*x).ok(),
        Value::I16(x) => u64::try_from(*x).ok(),
        Value::I32(x) => u64::try_from(*x).ok(),
        Value::I64(x) => u64::try_from(*x).ok(),
        // Per-layer arrays (the first value is what a scalar reader sees).
        Value::Array(ArrayValue::U32(a)) => a.first().map(|x| u64::from(*x)),
        Value::Array(ArrayValue::I32(a)) => a.first().and_then(|x| u64::try_from(*x).ok()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(pairs: &[(&str, Value)]) -> Metadata {
        let mut m = Metadata::new();
        m.set(
            keys::general::ARCHITECTURE.to_string(),
            Value::String("glm4moe".into()),
        );
        for (k, v) in pairs {
            m.set(format!("glm4moe.{k}"), v.clone());
        }
        m
    }

    /// Arctic's and Grok's loaders read the RMS epsilon without a default: a file without it
    /// is refused, naming the key; with it, nothing is missing.
    #[test]
    fn arctic_and_grok_require_the_rms_epsilon() {
        for arch in ["arctic", "grok"] {
            let mut m = Metadata::new();
            m.set(
                keys::general::ARCHITECTURE.to_string(),
                Value::String(arch.into()),
            );
            for k in [
                keys::llm::CONTEXT_LENGTH,
                keys::llm::EMBEDDING_LENGTH,
                keys::llm::BLOCK_COUNT,
            ] {
                m.set(keys::arch_key(arch, k), Value::U32(4));
            }
            let problems = arch_problems(&m);
            let key = keys::arch_key(arch, keys::attention::LAYERNORM_RMS_EPS);
            assert!(
                problems.iter().any(|p| p.contains(&key)),
                "{arch}: {problems:?}"
            );
            m.set(key, Value::F32(1e-5));
            assert!(
                arch_problems(&m).iter().all(|p| !p.contains("epsilon")),
                "{arch}"
            );
        }
    }

    #[test]
    fn nextn_layers_fit_in_the_blocks() {
        let blocks = ("block_count", Value::U32(4));
        assert_eq!(
            nextn_problem(&md(std::slice::from_ref(&blocks)), "glm4moe"),
            None
        );
        for ok in [0, 1, 4] {
            let m = md(&[blocks.clone(), ("nextn_predict_layers", Value::U32(ok))]);
            assert_eq!(nextn_problem(&m, "glm4moe"), None, "{ok}");
        }
        let m = md(&[blocks.clone(), ("nextn_predict_layers", Value::U32(5))]);
        let p = nextn_problem(&m, "glm4moe").unwrap();
        assert!(
            p.contains("glm4moe.nextn_predict_layers = 5") && p.contains("glm4moe.block_count = 4"),
            "{p}"
        );
        let m = md(&[blocks, ("nextn_predict_layers", Value::I32(-1))]);
        assert!(nextn_problem(&m, "glm4moe")
            .unwrap()
            .contains("not an unsigned integer"));
    }
}
