//! The list of supported architectures: one file per family, each a value of
//! [`super::family::Arch`], and the lookups over the list.
//!
//! Adding an architecture is adding one file with its `pub const` (declared with `mod`
//! below) and listing it in [`ALL`]; the tests at the end fail when a file is not listed.

pub use super::family::*;

/// `key => value` pairs as [`ConfigDefault`]s.
macro_rules! defaults {
    ($($k:literal => $v:expr),* $(,)?) => {
        &[$(($k, || serde_json::json!($v))),*]
    };
}

mod apertus;
mod arcee;
mod bert;
mod command_r;
mod ernie4_5;
mod exaone4;
mod exaone4_5;
mod falcon;
mod falcon_h1;
mod gemma;
mod gemma3n;
mod gemma4;
mod gemma4_assistant;
mod glm4;
mod gpt2;
mod gptneox;
mod granite;
mod granite_hybrid;
mod granite_swa;
mod granite_switch;
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
mod solar_open;
mod stablelm;
mod starcoder;
// MLA attention, next-token-prediction layers, gpt-oss.
mod deepseek;
mod deepseek2;
mod deepseek32;
mod dots3note;
mod glm4moe;
mod glm5_next;
mod glm_dsa;
mod gpt_oss;
// Gated delta-net hybrids.
mod nemotron_h;
mod nemotron_h_puzzle;
mod qwen3next;
mod qwen3omni;
mod qwen4exp;
// Encoder-decoder.
mod t5;
// 2025-2026 MoE text families.
mod afmoe;
mod bailingmoe;
mod bailingmoe2;
mod cohere2moe;
mod dots1;
mod dots_ocr;
mod exaone_moe;
mod hunyuan;
mod hy_v3;
mod laguna;
mod minimax;
mod minimax01;
mod minimax_m3;
// Older encoders and GPT-era decoders.
mod bloom;
mod codeshell;
mod distilbert;
mod eurobert;
mod exaone;
mod jinabert;
mod llama_embed;
mod mpt;
mod nemotron;
mod neobert;
mod roberta;
// Llama-like remote-code text families.
mod baichuan;
mod internlm2;
mod iquestcoder;
mod kormo;
mod maincoder;
mod maple;
mod mellum;
mod nanbeige;
mod orion;
mod pangu;
mod plm;
mod smallthinker;
mod spark2_5;
mod xverse;
// GPT-era decoders, third group.
mod jais;
mod jais2;
mod openelm;
// GPT-era families (second batch).
mod dbrx;
mod refact;
// DeepSeek V4.
mod deepseek4;
pub(crate) mod deepseek4_dspark;
// Older text families (second batch).
mod chatglm;
mod deci;
mod minicpm;
// Older text families (third batch).
mod arctic;
mod grok;
// RWKV.
mod rwkv6;
mod rwkv7;
// 2026 text families (first batch).
mod hy_v4;
mod mimo2;
mod step35;
// Speculative-decoding drafts.
mod dflash;
mod dspark;
mod eagle3;
// Kimi Linear.
mod kimi_k3;
mod kimi_linear;
// DeepSeek-OCR.
mod deepseek_ocr;
// PaddleOCR-VL (text half).
mod paddleocr;
// Sarashina2-Vision (text half).
mod sarashina2;
// MiniCPM-V 4.6 (text half).
mod minicpmv46;
// Small families and diffusion language models.
mod dream;
mod grovemoe;
mod hrm_text;
mod llada;
mod rnd1;
mod sarvam_moe;
mod talkie;
// PLaMo 2 (Mamba hybrid) and PLaMo 3.
mod plamo;
// Chameleon (text half).
mod chameleon;
// Text models of vision-language classes (second batch).
mod cogvlm;
mod janus;
// Bailing V3 (KDA + MLA hybrid).
mod bailingmoe3;
mod gemma4_dspark;
// Audio tokenizers.
mod lfm25_audio;
// LFM2 embedding models.
mod lfm2_colbert;
mod wavtokenizer;

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
    &phi3::PHI4V,
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
    &exaone4_5::EXAONE4_5,
    &glm4::GLM4,
    &glm4::GLMOCR,
    &ernie4_5::ERNIE4_5,
    &apertus::APERTUS,
    &mistral3::MISTRAL3,
    &gemma::EMBEDDING_GEMMA,
    &bert::XLM_ROBERTA,
    &modernbert::MODERN_BERT,
    &bert::NOMIC_BERT,
    &internlm3::INTERNLM3,
    // MLA attention, next-token-prediction layers, gpt-oss.
    &deepseek2::DEEPSEEK2,
    &glm4moe::GLM4MOE,
    &gpt_oss::GPT_OSS,
    &deepseek2::GLM4MOE_LITE,
    &deepseek32::DEEPSEEK32,
    &dots3note::DOTS3NOTE,
    &deepseek::DEEPSEEK,
    &glm_dsa::GLM_DSA,
    &glm5_next::GLM5_NEXT,
    // State-space and hybrid families.
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
    &nemotron_h_puzzle::NEMOTRON_H_PUZZLE,
    &granite_switch::GRANITE_SWITCH,
    // Encoder-decoder.
    &t5::T5,
    &t5::T5ENCODER,
    // Gemma 3n.
    &gemma3n::GEMMA3N,
    // Text models of vision-language classes.
    &qwenvl::QWEN2VL,
    &qwenvl::QWEN3VL,
    &qwenvl::QWEN3VLMOE,
    &qwen3omni::QWEN3OMNIMOE,
    &qwen3omni::QWEN3ASR,
    &qwen4exp::QWEN4EXP,
    &gemma4::GEMMA4,
    &gemma4::GEMMA4_UNIFIED,
    &gemma4_assistant::GEMMA4_ASSISTANT,
    // 2025-2026 MoE text families.
    &dots1::DOTS1,
    &hunyuan::HUNYUAN_DENSE,
    &minimax::MINIMAX_M2,
    &minimax_m3::MINIMAX_M3,
    &minimax01::MINIMAX_01,
    &dots_ocr::DOTS_OCR,
    &bailingmoe::BAILINGMOE,
    &hy_v3::HY_V3,
    &afmoe::AFMOE,
    &exaone_moe::EXAONE_MOE,
    &cohere2moe::COHERE2MOE,
    &bailingmoe2::BAILINGMOE2,
    &laguna::LAGUNA,
    // Older encoders and GPT-era decoders.
    &distilbert::DISTIL_BERT,
    &roberta::ROBERTA,
    &eurobert::EUROBERT,
    &neobert::NEO_BERT,
    &jinabert::JINA_BERT_V2,
    &bloom::BLOOM,
    &mpt::MPT,
    &nemotron::NEMOTRON,
    &codeshell::CODESHELL,
    &exaone::EXAONE,
    &llama_embed::LLAMA_EMBED,
    // Llama-like remote-code text families.
    &maincoder::MAINCODER,
    &nanbeige::NANBEIGE,
    &orion::ORION,
    &baichuan::BAICHUAN,
    &iquestcoder::IQUESTCODER,
    &pangu::PANGU_EMBEDDED,
    &plm::PLM,
    &kormo::KORMO,
    &smallthinker::SMALLTHINKER,
    &spark2_5::SPARK2_5,
    &maple::MAPLE,
    &mellum::MELLUM,
    &internlm2::INTERNLM2,
    &xverse::XVERSE,
    &jais::JAIS,
    &jais2::JAIS2,
    &openelm::OPENELM,
    &dbrx::DBRX,
    &refact::REFACT,
    &deepseek4::DEEPSEEK4,
    &deepseek4_dspark::DEEPSEEK4_DSPARK,
    &chatglm::CHATGLM,
    &minicpm::MINICPM,
    &minicpm::MINICPM3,
    &deci::DECI,
    &arctic::ARCTIC,
    &grok::GROK,
    &rwkv6::RWKV6,
    &rwkv7::RWKV7,
    &rwkv6::RWKV6QWEN2,
    &rwkv7::ARWKV7,
    &hy_v4::HY_V4,
    &mimo2::MIMO2,
    &step35::STEP35,
    &eagle3::EAGLE3,
    &dflash::DFLASH,
    &granite_swa::GRANITE_SWA,
    &granite_swa::GRANITE_MOE_SWA,
    &solar_open::SOLAR_OPEN,
    &kimi_linear::KIMI_LINEAR,
    &kimi_k3::KIMI_K3,
    &deepseek_ocr::DEEPSEEK2_OCR,
    // Small families and diffusion language models.
    &grovemoe::GROVEMOE,
    &sarvam_moe::SARVAM_MOE,
    &llada::LLADA,
    &llada::LLADA_MOE,
    &dream::DREAM,
    &rnd1::RND1,
    &hrm_text::HRM_TEXT,
    &talkie::TALKIE,
    &plamo::PLAMO2,
    &plamo::PLAMO3,
    &chameleon::CHAMELEON,
    &gpt2::RUGPT3XL,
    &cogvlm::COGVLM,
    &janus::JANUS,
    &bailingmoe3::BAILINGMOE3,
    &bailingmoe3::BAILINGMOE3_VL,
    &dspark::DSPARK,
    &gemma4_dspark::GEMMA4_DSPARK,
    &lfm25_audio::LFM25_AUDIO,
    &lfm2_colbert::LFM2_COLBERT,
    &wavtokenizer::WAVTOKENIZER_DEC,
    &paddleocr::PADDLEOCR,
    &sarashina2::SARASHINA2,
    &minicpmv46::MINICPMV46,
    &hunyuan::HUNYUAN_VL,
];

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
    use std::collections::{BTreeSet, HashSet};
    use std::path::{Path, PathBuf};

    use serde_json::Value as Json;

    use super::*;
    use crate::hf::names::{block_id, Spelling, Tensor, TensorMap, TABLE};

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
        let tabled: HashSet<Tensor> = TABLE.iter().map(|r| r.tensor).collect();
        for a in ALL {
            // Several classes may write one GGUF architecture (XLM-R is a BERT); the
            // vocabulary quirks the tokenizer looks up by GGUF name must then agree (where
            // the tokenizer comes from and whether it pads are read from the class's own
            // description).
            if !gguf.insert(a.gguf) {
                let by_name = |q: &VocabQuirks| format!("{} {:?}", q.requires_spm, q.spm_size_keys);
                let first = by_gguf(a.gguf).unwrap();
                assert_eq!(
                    by_name(&first.vocab_quirks),
                    by_name(&a.vocab_quirks),
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

    /// Each spelling is written once in its row and names the families that use it, each
    /// once; a spelling in two rows (`post_attention_layernorm`) is used by different
    /// families in each, so every family gives it one meaning.
    #[test]
    fn every_spelling_is_written_once_and_used_by_some_family() {
        let (mut pairs, mut meanings) = (HashSet::new(), HashSet::new());
        let mut n = 0;
        for row in TABLE {
            for s in row.spellings {
                assert!(
                    pairs.insert((row.tensor, s.hf)),
                    "{} twice in the {:?} row",
                    s.hf,
                    row.tensor
                );
                assert!(!s.used_by.is_empty(), "{} is used by no family", s.hf);
                for family in s.used_by {
                    assert!(
                        meanings.insert((s.hf, *family)),
                        "{family} uses {} twice (or in two rows)",
                        s.hf
                    );
                }
                n += 1;
            }
        }
        assert!(n > 300, "only {n} spellings");
    }

    /// A spelling's families are real: each is the GGUF architecture of a family whose name
    /// map (its tensors and overrides, the table's later row winning) resolves the spelling
    /// to the row's tensor.
    #[test]
    fn every_family_of_a_spelling_maps_it_to_its_tensor() {
        let mut wrong = Vec::new();
        for row in TABLE {
            let want = row.tensor.gguf().replace("{bid}", "0");
            for s in row.spellings {
                let name = s.hf.replace("{bid}", "0");
                for family in s.used_by {
                    let archs: Vec<&Arch> =
                        ALL.iter().filter(|a| a.gguf == *family).copied().collect();
                    let got: BTreeSet<String> = archs
                        .iter()
                        .map(|a| {
                            let map = TensorMap::new(a.tensors, a.tensor_overrides, 1);
                            map.get(&name).unwrap_or_else(|| "nothing".into())
                        })
                        .collect();
                    if !got.contains(&want) {
                        wrong.push(format!("{family}: {} is {got:?}, not {want}", s.hf));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "wrong families:\n{}", wrong.join("\n"));
    }

    /// The tensor names of the weight files of a fixture directory: its safetensors files,
    /// stored whole, hollow (the header stays in place) or shared (`shared-files.txt`).
    fn fixture_tensor_names(dir: &Path) -> Vec<String> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        if let Ok(shared) = std::fs::read_to_string(dir.join("shared-files.txt")) {
            for line in shared.lines() {
                if let Some((_, stored)) = line.split_once(" = ") {
                    let stored = stored.split(" | ").next().unwrap();
                    files.push(dir.join(stored));
                }
            }
        }
        let mut names = Vec::new();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy();
            if !(name.ends_with(".safetensors") || name.ends_with(".safetensors.hollow")) {
                continue;
            }
            let bytes = std::fs::read(&f).unwrap();
            let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
            let header: Json = serde_json::from_slice(&bytes[8..8 + len]).unwrap();
            names.extend(
                header
                    .as_object()
                    .unwrap()
                    .keys()
                    .filter(|k| *k != "__metadata__")
                    .cloned(),
            );
        }
        names
    }

    /// Whether `name` is `spelling` with `{bid}` a block number.
    fn spells(spelling: &str, name: &str) -> bool {
        match spelling.split_once("{bid}") {
            None => spelling == name,
            Some((pre, post)) => name
                .strip_prefix(pre)
                .and_then(|rest| rest.strip_suffix(post))
                .is_some_and(|b| !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit())),
        }
    }

    /// The table spelling (and its tensor) a family's name map resolves `name` through, as
    /// [`TensorMap::get`] does: the whole name first, then without `.weight` / `.bias`; among
    /// the tensors the family has, the later row winning; `None` for a name an override or
    /// no spelling maps.
    fn spelling_of(arch: &Arch, name: &str) -> Option<(&'static Spelling, Tensor)> {
        let has = |t: &Tensor| arch.tensors.iter().any(|g| g.contains(t));
        let find = |n: &str| {
            TABLE
                .iter()
                .filter(|r| has(&r.tensor))
                .flat_map(|r| r.spellings.iter().map(move |s| (s, r.tensor)))
                .rfind(|(s, _)| spells(s.hf, n))
        };
        let overridden = |n: &str| {
            arch.tensor_overrides
                .iter()
                .any(|(_, spellings)| spellings.iter().any(|s| spells(s, n)))
        };
        let bases = [".weight", ".bias"].map(|x| name.strip_suffix(x));
        for n in std::iter::once(Some(name)).chain(bases).flatten() {
            if overridden(n) {
                return None;
            }
            if let Some(found) = find(n) {
                return Some(found);
            }
        }
        None
    }

    /// Every spelling a fixture's checkpoint uses is listed as used by the fixture's family:
    /// a tensor name of a fixture (after the family's filter) that the family's name map
    /// resolves through a spelling of the table names that family among the spelling's users.
    #[test]
    fn fixture_tensor_names_are_used_by_their_family() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/hf");
        let (mut checked, mut missing) = (0, BTreeSet::new());
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let Ok(text) = std::fs::read_to_string(e.path().join("config.json")) else {
                continue;
            };
            let cfg: Json = serde_json::from_str(&crate::hf::config::python_json(&text)).unwrap();
            let Some(arch) = cfg["architectures"][0].as_str().and_then(lookup) else {
                continue;
            };
            // The names the family's map sees: after its own filter (a headless
            // checkpoint's `model.` prefix, a renamed or dropped tensor).
            let names: Vec<String> = fixture_tensor_names(&e.path())
                .iter()
                .filter_map(|n| (arch.filter)(n))
                .collect();
            let blocks = names
                .iter()
                .filter_map(|n| block_id(n))
                .max()
                .map_or(1, |b| b + 1);
            let map = TensorMap::new(arch.tensors, arch.tensor_overrides, blocks);
            for name in &names {
                let Some(gguf) = map.get(name) else { continue };
                if let Some((s, _)) = spelling_of(arch, name).filter(|(_, t)| {
                    let bid = block_id(name).map_or(String::new(), |b| b.to_string());
                    gguf.starts_with(&t.gguf().replace("{bid}", &bid))
                }) {
                    if !s.used_by.contains(&arch.gguf) {
                        missing.insert(format!("{}: {} ({name})", arch.gguf, s.hf));
                    }
                    checked += 1;
                }
            }
        }
        assert!(
            checked > 1000,
            "only {checked} fixture tensor names resolved"
        );
        assert!(
            missing.is_empty(),
            "spellings a fixture uses without its family among their users:\n{}",
            missing.into_iter().collect::<Vec<_>>().join("\n")
        );
    }
}
