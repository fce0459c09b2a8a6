//! Every HF architecture's fixtures against the reference's output, from `testdata/` alone.
//!
//! `conformance/make_fixtures.py` built each tiny model in `testdata/hf/<fixture>/` (big
//! tokenizer files shared through `shared-files.txt`) and recorded what llama.cpp's
//! `convert_hf_to_gguf.py` (f32, f16, bf16, q8_0, auto) and `llama-quantize` (Q4_K_M on the
//! f32 file) wrote, in `testdata/golden/<fixture>/`. Each test materializes the fixture in a
//! scratch directory of the same name (general.name comes from it), converts every variant
//! and compares the whole manifest, i.e. the sha256 of the file; Q4_K_M is one pass from the
//! HF directory. A variant the reference refused must be refused here too, before writing.

use ggufkit_testsupport::golden as support;

use std::path::Path;

use ggufkit::manifest::diff_manifests;
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_testsupport::unloadable::{is_unloadable, UNLOADABLE_FIXTURES};
use serde_json::Value as Json;

use super::golden_variants::{check_text_variants, written_manifest};
use support::{materialize_fixture as materialize, read_json, scratch, testdata};

/// The options of a conversion of the fixture copy `dir` to `outtype`.
fn options(dir: &Path, outtype: OutType) -> HfOptions {
    HfOptions {
        outtype,
        allow_unloadable: is_unloadable(dir),
        ..HfOptions::default()
    }
}

/// Converts `dir` to `outtype` (and quantizes it when `quant` is set), writes the file and
/// returns its manifest, or the error.
fn convert(dir: &Path, outtype: OutType, quant: Option<&str>, out: &Path) -> Result<Json, String> {
    let conv = read_hf_dir(dir, &options(dir, outtype)).map_err(|e| e.to_string())?;
    written_manifest(conv.model, quant, out)
}

fn run(fixture: &str) {
    let work = scratch(&format!("arch-{fixture}"));
    let dir = materialize(fixture, &work);
    let golden = testdata(&format!("golden/{fixture}"));
    let problems = check_text_variants(fixture, &golden, &dir, &work, |t| options(&dir, t));
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        problems.is_empty(),
        "{fixture}: {} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

macro_rules! fixtures {
    ($($t:ident => $name:literal),* $(,)?) => {
        $(#[test] fn $t() { run($name); })*

        #[test]
        fn every_generated_fixture_has_a_test() {
            let listed = [$($name),*];
            for n in support::fixtures_made_by("make_fixtures.py") {
                assert!(listed.contains(&n.as_str()), "fixture {n} has no test");
            }
        }
    };
}

fixtures! {
    olmo2 => "olmo2",
    smollm3 => "smollm3",
    granite => "granite",
    glm4 => "glm4",
    stablelm => "stablelm",
    cohere2 => "cohere2",
    cohere => "cohere",
    starcoder2 => "starcoder2",
    phi2 => "phi2",
    gptneox => "gptneox",
    falcon => "falcon",
    exaone4 => "exaone4",
    ernie4_5 => "ernie4_5",
    stablelm_2 => "stablelm-2",
    olmoe => "olmoe",
    granitemoe => "granitemoe",
    seedoss => "seedoss",
    arcee => "arcee",
    qwen2moe => "qwen2moe",
    phimoe => "phimoe",
    ernie4_5moe => "ernie4_5moe",
    llama4 => "llama4",
    llama4_vl => "llama4-vl",
    granitemoeshared => "granitemoeshared",
    apertus => "apertus",
    olmo3 => "olmo3",
    ministral3 => "ministral3",
    mistral3 => "mistral3",
    embeddinggemma => "embeddinggemma",
    xlmroberta => "xlmroberta",
    xlmroberta_cls => "xlmroberta-cls",
    modernbert => "modernbert",
    modernbert_cls => "modernbert-cls",
    nomicbert => "nomicbert",
    internlm3 => "internlm3",
    olmo => "olmo",
    gptbigcode => "gptbigcode",
    // MLA, next-token-prediction layers, gpt-oss.
    deepseek2 => "deepseek2",
    deepseek3 => "deepseek3",
    glm4moe => "glm4moe",
    gptoss => "gptoss",
    glm4moelite => "glm4moelite",
    deepseek32 => "deepseek32",
    deepseek => "deepseek",
    kimik25 => "kimik25",
    glmdsa => "glmdsa",
    glm5next_text => "glm5next-text",
    // State-space and hybrid families.
    mamba => "mamba",
    mamba2 => "mamba2",
    granitehybrid => "granitehybrid",
    granitehybrid_dense => "granitehybrid-dense",
    granitehybrid_attn => "granitehybrid-attn",
    lfm2 => "lfm2",
    lfm2moe => "lfm2moe",
    jamba => "jamba",
    falcon_h1 => "falcon-h1",
    // Gated delta-net hybrids with next-token-prediction layers.
    qwen3next => "qwen3next",
    qwen35 => "qwen35",
    qwen35moe => "qwen35moe",
    qwen4exp => "qwen4exp",
    nemotronh => "nemotronh",
    // Encoder-decoder with relative attention buckets and a unigram vocabulary.
    t5 => "t5",
    t5encoder => "t5encoder",
    gemma3n => "gemma3n",
    gemma4 => "gemma4",
    gemma4moe => "gemma4moe",
    gemma4unified => "gemma4unified",
    gemma4assistant => "gemma4assistant",
    // 2025-2026 MoE text families.
    dots1 => "dots1",
    hunyuan_dense => "hunyuan-dense",
    minimax_m2 => "minimax-m2",
    minimax_m3 => "minimax-m3",
    minimax01 => "minimax01",
    dotsocr => "dotsocr",
    bailingmoe => "bailingmoe",
    hyv3 => "hyv3",
    afmoe => "afmoe",
    exaonemoe => "exaonemoe",
    cohere2moe => "cohere2moe",
    bailingmoe2 => "bailingmoe2",
    laguna => "laguna",
    distilbert => "distilbert",
    distilbert_cls => "distilbert-cls",
    roberta => "roberta",
    roberta_cls => "roberta-cls",
    eurobert => "eurobert",
    neobert => "neobert",
    neobert_cls => "neobert-cls",
    jinabert => "jinabert",
    bloom => "bloom",
    bloom_model => "bloom-model",
    mpt => "mpt",
    nemotron => "nemotron",
    nemotron_linear => "nemotron-linear",
    codeshell => "codeshell",
    exaone => "exaone",
    llamaembed => "llamaembed",
    maincoder => "maincoder",
    nanbeige => "nanbeige",
    orion => "orion",
    baichuan => "baichuan",
    iquestcoder => "iquestcoder",
    pangu => "pangu",
    plm => "plm",
    kormo => "kormo",
    smallthinker => "smallthinker",
    spark2_5 => "spark2_5",
    maple => "maple",
    mellum => "mellum",
    internlm2 => "internlm2",
    xverse => "xverse",
    jais => "jais",
    jais2 => "jais2",
    openelm => "openelm",
    dbrx => "dbrx",
    refact => "refact",
    deepseek4 => "deepseek4",
    glm => "glm",
    chatglm => "chatglm",
    minicpm => "minicpm",
    minicpm3 => "minicpm3",
    deci => "deci",
    deci7b => "deci7b",
    arctic => "arctic",
    grok => "grok",
    grok1 => "grok1",
    bamba => "bamba",
    youtu => "youtu",
    youtuvl_text => "youtuvl-text",
    paddleocr_text => "paddleocr-text",
    sarashina2_text => "sarashina2-text",
    hunyuanvl_text => "hunyuanvl-text",
    minicpmv46_text => "minicpmv46-text",
    rwkv6 => "rwkv6",
    rwkv7 => "rwkv7",
    rwkv6qwen2 => "rwkv6qwen2",
    arwkv7 => "arwkv7",
    hyv4 => "hyv4",
    dots3 => "dots3",
    mimo2 => "mimo2",
    granite_swa => "granite-swa",
    granitemoe_swa => "granitemoe-swa",
    solaropen => "solaropen",
    kimilinear => "kimilinear",
    kimik3 => "kimik3",
    deepseekocr => "deepseekocr",
    unlimitedocr => "unlimitedocr",
    // Small families and diffusion language models.
    grovemoe => "grovemoe",
    sarvam_untyped => "sarvam-untyped",
    llada => "llada",
    lladamoe => "lladamoe",
    dream => "dream",
    rnd1 => "rnd1",
    hrmtext => "hrmtext",
    talkie => "talkie",
    plamo2 => "plamo2",
    plamo3 => "plamo3",
    chameleon => "chameleon",
    rugpt3xl => "rugpt3xl",
    bailingmoe3 => "bailingmoe3",
    bailingmoe3_vl => "bailingmoe3-vl",
    lfm25audio => "lfm25audio",
    lfm2_colbert => "lfm2-colbert",
    lfm2_bidir => "lfm2-bidir",
    wavtokenizer => "wavtokenizer",
    step35 => "step35",
    nemotronhpuzzle => "nemotronhpuzzle",
    graniteswitch => "graniteswitch",
}

/// Variants the reference converts through paths we do not offer are refused, naming the
/// class and the feature, before anything is written.
#[test]
fn unsupported_variants_are_refused() {
    let work = scratch("arch-refusals");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    // XLM-R with tokenizer.json only (the reference builds it through AutoTokenizer).
    let dir = materialize("xlmroberta", &work);
    std::fs::remove_file(dir.join("sentencepiece.bpe.model")).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(
        e.contains("XLMRobertaModel") && e.contains("sentencepiece.bpe.model"),
        "{e}"
    );
    // A Mistral 4 text model behind the Mistral 3 class.
    let dir = materialize("ministral3", &work);
    let cfg_path = dir.join("config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    cfg["model_type"] = Json::from("mistral4");
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(
        e.contains("Ministral3ForCausalLM") && e.contains("mistral4"),
        "{e}"
    );
    // jina-embeddings-v3's LoRA adapters.
    let dir = materialize("xlmroberta-cls", &work);
    let cfg_path = dir.join("config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    cfg["lora_adaptations"] = serde_json::json!(["retrieval.query"]);
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(
        e.contains("XLMRobertaForSequenceClassification") && e.contains("lora"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// DeepSeek V3.2's tokenizer check: with a tokenizer.json, transformers 5 ignores
/// tokenizer_config.json's `add_bos_token` and the class refuses the tokenizer (the golden
/// records the reference's refusal); without one the setting is read and `true` passes on
/// to the GPT-2 path.
#[test]
fn deepseek32_requires_add_bos_token() {
    let work = scratch("arch-deepseek32-bos");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let dir = materialize("deepseek32", &work);
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(
        e.contains("tokenizer_config.json") && e.contains("add_bos_token"),
        "{e}"
    );
    // Without tokenizer.json the check passes; the GPT-2 path then needs the file.
    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(!e.contains("add_bos_token"), "{e}");
    // ... and `add_bos_token: false` is refused again.
    let tc_path = dir.join("tokenizer_config.json");
    let mut tc: Json = serde_json::from_str(&std::fs::read_to_string(&tc_path).unwrap()).unwrap();
    tc["add_bos_token"] = Json::Bool(false);
    std::fs::write(&tc_path, tc.to_string()).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("add_bos_token"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// GLM's special tokens are looked up among the added tokens of the tokenizer transformers
/// builds: a GPT2Tokenizer config (glm_moe_dsa registers no tokenizer class) rebuilds the
/// pipeline and drops tokenizer.json's added tokens, so `[gMASK]` is missing and the
/// conversion is refused, as the reference's `get_added_vocab()["[gMASK]"]` fails.
#[test]
fn glm_specials_come_from_the_built_tokenizer() {
    let work = scratch("arch-glmdsa-specials");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let dir = materialize("glmdsa", &work);
    let tc_path = dir.join("tokenizer_config.json");
    let mut tc: Json = serde_json::from_str(&std::fs::read_to_string(&tc_path).unwrap()).unwrap();
    tc["tokenizer_class"] = Json::from("GPT2Tokenizer");
    std::fs::write(&tc_path, tc.to_string()).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("[gMASK]"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// T5's vocabulary rules: the SentencePiece model is required, a `vocab_size` below its
/// pieces and a null one are errors, added_tokens.json ids past the table are skipped.
#[test]
fn t5_vocabulary_errors_are_typed() {
    let work = scratch("arch-t5-vocab");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let set_cfg = |dir: &Path, key: &str, v: Json| {
        let path = dir.join("config.json");
        let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        cfg[key] = v;
        std::fs::write(&path, cfg.to_string()).unwrap();
    };
    let dir = materialize("t5encoder", &work);
    std::fs::remove_file(dir.join("spiece.model")).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("spiece.model"), "{e}");

    let dir = materialize("t5encoder", &work);
    set_cfg(&dir, "vocab_size", Json::from(100));
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("pieces") && e.contains("100"), "{e}");

    let dir = materialize("t5encoder", &work);
    set_cfg(&dir, "vocab_size", Json::Null);
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("vocab_size"), "{e}");

    let dir = materialize("t5encoder", &work);
    std::fs::write(
        dir.join("added_tokens.json"),
        r#"{"<far>": 9999, "<x>": 303}"#,
    )
    .unwrap();
    assert!(read_hf_dir(&dir, &opts).is_ok());
    std::fs::write(dir.join("added_tokens.json"), r#"{"<x>": "303"}"#).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("added_tokens.json"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// A T5 checkpoint holding its token embeddings three times (`shared.weight`, and here
/// `encoder.embed_tokens.weight` all zeros and `decoder.embed_tokens.weight` all ones): the
/// first in the reference's (sorted) order, the decoder's, is `token_embd`, the others are
/// dropped. The sha256 is the reference's f32 output for this directory.
#[test]
fn t5_first_embedding_copy_wins() {
    let work = scratch("arch-t5-embeddings");
    let dir = materialize("t5encoder", &work);
    let shape = vec![304u64, 24];
    let n = (24 * 304) as usize;
    let bf16 = |v: [u8; 2]| v.iter().copied().cycle().take(2 * n).collect::<Vec<u8>>();
    edit_tensors(
        &dir,
        |_| true,
        vec![
            (
                "encoder.embed_tokens.weight".into(),
                "BF16".into(),
                shape.clone(),
                bf16([0, 0]),
            ),
            (
                "decoder.embed_tokens.weight".into(),
                "BF16".into(),
                shape,
                // bf16 1.0 (0x3f80), little-endian.
                bf16([0x80, 0x3f]),
            ),
        ],
    );
    let m = convert(&dir, OutType::F32, None, &work.join("t5dup.gguf")).unwrap();
    assert_eq!(m["tensors"].as_array().unwrap().len(), 19);
    assert_eq!(
        m["sha256"],
        "2a8d4db5b6894669c25f16027dbcf1ecd056b3abadb35d4492e86f4fad3985b0"
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// Rewrites `dir/model.safetensors` keeping only the tensors `keep` accepts.
fn drop_tensors(dir: &Path, keep: impl Fn(&str) -> bool) {
    edit_tensors(dir, keep, Vec::new());
}

/// A safetensors entry: name, dtype, shape, bytes.
type StTensor = (String, String, Vec<u64>, Vec<u8>);

/// Rewrites `dir/model.safetensors` keeping the tensors `keep` accepts, then `extra`.
fn edit_tensors(dir: &Path, keep: impl Fn(&str) -> bool, extra: Vec<StTensor>) {
    let path = dir.join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Json = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let data = &bytes[8 + n..];
    let mut kept: Vec<StTensor> = Vec::new();
    for (name, t) in header.as_object().unwrap() {
        if name == "__metadata__" || !keep(name) {
            continue;
        }
        let off: Vec<usize> = t["data_offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        let shape = t["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        kept.push((
            name.clone(),
            t["dtype"].as_str().unwrap().to_string(),
            shape,
            data[off[0]..off[1]].to_vec(),
        ));
    }
    kept.extend(extra);
    let refs: Vec<(&str, &str, &[u64], Vec<u8>)> = kept
        .iter()
        .map(|(n, d, s, b)| (n.as_str(), d.as_str(), s.as_slice(), b.clone()))
        .collect();
    std::fs::write(&path, support::safetensors(&refs)).unwrap();
}

/// Qwen3-Next's next-token-prediction layers: without `mtp.*` tensors and without
/// `mtp_num_hidden_layers` the reference refuses the checkpoint (its MTP block count would be
/// 0), so do we; with `mtp_num_hidden_layers` the count comes from the config and the layers
/// after the config's are written even when the config says more than the checkpoint has.
#[test]
fn qwen3next_needs_its_mtp_layers() {
    let work = scratch("arch-qwen3next-mtp");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let dir = materialize("qwen3next", &work);
    let conv = read_hf_dir(&dir, &opts).unwrap();
    let md = &conv.model.metadata;
    assert_eq!(
        md.get("qwen3next.block_count"),
        Some(&ggufkit::gguf::Value::U32(3))
    );
    assert_eq!(
        md.get("qwen3next.nextn_predict_layers"),
        Some(&ggufkit::gguf::Value::U32(1))
    );
    let names: Vec<&str> = conv.model.tensors.iter().map(|t| t.name.as_str()).collect();
    for n in [
        "blk.2.nextn.eh_proj.weight",
        "blk.2.nextn.enorm.weight",
        "blk.2.nextn.hnorm.weight",
        "blk.2.nextn.shared_head_norm.weight",
        "blk.2.ffn_gate_exps.weight",
        "blk.2.attn_q.weight",
    ] {
        assert!(names.contains(&n), "{n} missing: {names:?}");
    }
    drop_tensors(&dir, |n| !n.starts_with("mtp."));
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(
        e.contains("next-token-prediction") && e.contains("mtp"),
        "{e}"
    );
    let cfg_path = dir.join("config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    cfg["mtp_num_hidden_layers"] = Json::from(2);
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    // The reference counts the two MTP layers the weights do not have into the block count:
    // llama.cpp cannot load that file, so it is written only with `allow_unloadable`.
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("no tensor is in block 2"), "{e}");
    let unloadable = HfOptions {
        allow_unloadable: true,
        ..opts.clone()
    };
    let conv = read_hf_dir(&dir, &unloadable).unwrap();
    let md = &conv.model.metadata;
    assert_eq!(
        md.get("qwen3next.block_count"),
        Some(&ggufkit::gguf::Value::U32(4))
    );
    assert_eq!(
        md.get("qwen3next.nextn_predict_layers"),
        Some(&ggufkit::gguf::Value::U32(2))
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// Per-expert tensors stacked into `ffn_*_exps` are computed a range of rows at a time by
/// the writer (the stacked tensor never exists whole in memory): any split into row ranges
/// gives the bytes of the whole tensor, for every outtype, across expert boundaries.
#[test]
fn stacked_experts_by_rows_equal_whole_tensors() {
    use ggufkit::ir::TensorData;
    let work = scratch("arch-stack-rows");
    let mut split = 0;
    for fixture in ["qwen3next", "qwen35moe", "mixtral", "olmoe", "granitemoe"] {
        let dir = materialize(fixture, &work);
        for outtype in ["f32", "f16", "bf16", "q8_0"] {
            let opts = HfOptions {
                outtype: OutType::parse(outtype).unwrap(),
                ..HfOptions::default()
            };
            let conv = read_hf_dir(&dir, &opts).unwrap();
            for t in &conv.model.tensors {
                let TensorData::Derived(d) = &t.data else {
                    continue;
                };
                let Some(rows) = d.rows() else {
                    continue;
                };
                if !t.name.contains("_exps") {
                    continue;
                }
                let whole = d.compute().unwrap();
                let mut pieces = Vec::new();
                let mut start = 0;
                while start < rows.count {
                    let end = (start + 5).min(rows.count);
                    pieces.extend(d.compute_rows(start..end).unwrap());
                    start = end;
                }
                assert_eq!(pieces.len(), rows.count * rows.out_bytes, "{}", t.name);
                assert!(
                    pieces == whole,
                    "{fixture} {outtype} {}: pieces differ",
                    t.name
                );
                split += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(split >= 40, "{split} stacked tensors computed by rows");
}

/// A plain read of a float tensor (an embedding, an attention matrix, a 3-D expert tensor
/// stored stacked) converted to another type is computed a range of rows at a time too, so
/// that a large BF16 embedding written as Q8_0 is never whole in F32 (that would be most
/// of the peak memory of a gpt-oss conversion): any split into row ranges gives the bytes of
/// the whole tensor, for every outtype, across matrix boundaries.
#[test]
fn plain_reads_by_rows_equal_whole_tensors() {
    use ggufkit::ir::TensorData;
    let work = scratch("arch-read-rows");
    let mut split = 0;
    for fixture in ["llama-spm", "qwen2", "gptoss", "qwen3moe", "t5"] {
        let dir = materialize(fixture, &work);
        for outtype in ["f32", "f16", "bf16", "q8_0"] {
            let opts = HfOptions {
                outtype: OutType::parse(outtype).unwrap(),
                ..HfOptions::default()
            };
            let conv = read_hf_dir(&dir, &opts).unwrap();
            // Converted by rows, or a plain copy of the mapped bytes (BF16 to BF16).
            let mut embd = false;
            for t in &conv.model.tensors {
                let TensorData::Derived(d) = &t.data else {
                    embd |= t.name == "token_embd.weight";
                    continue;
                };
                let Some(rows) = d.rows() else {
                    continue;
                };
                embd |= t.name == "token_embd.weight";
                let whole = d.compute().unwrap();
                let mut pieces = Vec::new();
                let mut start = 0;
                while start < rows.count {
                    let end = (start + 3).min(rows.count);
                    pieces.extend(d.compute_rows(start..end).unwrap());
                    start = end;
                }
                assert!(
                    pieces == whole,
                    "{fixture} {outtype} {}: pieces differ",
                    t.name
                );
                split += 1;
            }
            assert!(
                embd,
                "{fixture} {outtype}: token_embd.weight computed whole"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(split >= 100, "{split} tensors computed by rows");
}

/// Rewrites the text fixture in `dir` as a vision-language checkpoint of `class` (config
/// `model_type`): its tensors under `model.language_model.`, the zero-filled F32 `encoders`
/// beside them, its hparams in `text_config` next to the `sub_configs`.
fn as_conditional_generation(
    dir: &Path,
    class: &str,
    model_type: &str,
    encoders: &[(&str, &[u64])],
    sub_configs: Json,
) {
    let st_path = dir.join("model.safetensors");
    let bytes = std::fs::read(&st_path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Json = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let mut data = bytes[8 + n..].to_vec();
    let mut renamed = serde_json::Map::new();
    for (k, v) in header.as_object().unwrap() {
        let k = match k.strip_prefix("model.") {
            Some(rest) => format!("model.language_model.{rest}"),
            None => k.clone(),
        };
        renamed.insert(k, v.clone());
    }
    for (name, shape) in encoders {
        let start = data.len();
        data.resize(start + 4 * shape.iter().product::<u64>() as usize, 0);
        renamed.insert(
            name.to_string(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    let h = serde_json::to_vec(&Json::Object(renamed)).unwrap();
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&data);
    std::fs::write(&st_path, out).unwrap();
    let cfg_path = dir.join("config.json");
    let mut text = read_json(&cfg_path);
    text.as_object_mut().unwrap().remove("architectures");
    let mut cfg = serde_json::json!({
        "architectures": [class], "model_type": model_type,
        "text_config": text, "tie_word_embeddings": true,
    });
    for (k, v) in sub_configs.as_object().unwrap() {
        cfg[k] = v.clone();
    }
    std::fs::write(&cfg_path, serde_json::to_vec_pretty(&cfg).unwrap()).unwrap();
}

/// The f32 conversion of `dir` is `fixture`'s golden f32 file.
fn assert_converts_to_golden_f32(dir: &Path, fixture: &str, work: &Path) {
    let want = read_json(&testdata(&format!("golden/{fixture}/convert-f32.json")));
    let ours = convert(dir, OutType::F32, None, &work.join("out.gguf")).unwrap();
    let d = diff_manifests(&support::as_read_back(&ours), &want);
    assert!(d.is_empty(), "{fixture}: {}", d.join("\n"));
}

/// `Gemma3nForConditionalGeneration` is the same text model: the gemma3n fixture rewritten
/// as the vision-language checkpoint (its tensors under `model.language_model.`, vision and
/// audio tensors beside them, its hparams in `text_config` of a `gemma3n` config) converts
/// to the fixture's golden f32 file (the reference gives the same sha256 for this
/// directory: the encoders are filtered out, `language_model.` is dropped).
#[test]
fn gemma3n_conditional_generation_is_the_text_model() {
    let work = scratch("arch-gemma3n-conditional");
    let dir = materialize("gemma3n", &work);
    let encoders: [(&str, &[u64]); 4] = [
        (
            "model.vision_tower.timm_model.conv_stem.conv.weight",
            &[2, 3, 3, 3],
        ),
        ("model.embed_vision.embedding.weight", &[4, 16]),
        (
            "model.audio_tower.subsample_conv_projection.input_proj_linear.weight",
            &[16, 8],
        ),
        ("model.embed_audio.embedding.weight", &[4, 16]),
    ];
    as_conditional_generation(
        &dir,
        "Gemma3nForConditionalGeneration",
        "gemma3n",
        &encoders,
        serde_json::json!({"vision_config": {"model_type": "gemma3n_vision"},
            "audio_config": {"model_type": "gemma3n_audio"}}),
    );
    assert_converts_to_golden_f32(&dir, "gemma3n", &work);
    let _ = std::fs::remove_dir_all(&work);
}

/// Gemma 4 Unified's text config has no expert width, and the reference looks it up
/// (`find_hparam(["expert_intermediate_size", "moe_intermediate_size"])`: KeyError when
/// neither key is there): without the key the fixture is refused, naming both keys, before
/// anything is written.
#[test]
fn gemma4_unified_without_expert_width_is_refused() {
    let work = scratch("arch-gemma4unified-no-moe");
    let dir = materialize("gemma4unified", &work);
    let cfg_path = dir.join("config.json");
    let mut cfg = read_json(&cfg_path);
    let removed = cfg["text_config"]
        .as_object_mut()
        .unwrap()
        .remove("moe_intermediate_size");
    assert!(removed.is_some(), "the fixture names moe_intermediate_size");
    std::fs::write(&cfg_path, serde_json::to_vec_pretty(&cfg).unwrap()).unwrap();
    let out = work.join("out.gguf");
    let e = convert(&dir, OutType::F32, None, &out).expect_err("refused");
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        e.contains("expert_intermediate_size") && e.contains("moe_intermediate_size"),
        "{e}"
    );
}

/// The assistant's config class makes every layer reuse the target model's KV cache when
/// `num_kv_shared_layers` is 0, and defaults `backbone_hidden_size` to 1536: with both
/// taken out of the fixture's config.json the reference writes `shared_kv_layers` 2 (the
/// block count) and `embedding_length_out` 1536, and so do we; every other KV and tensor
/// is the fixture's.
#[test]
fn gemma4_assistant_config_class_defaults() {
    let work = scratch("arch-gemma4assistant-defaults");
    let dir = materialize("gemma4assistant", &work);
    let cfg_path = dir.join("config.json");
    let mut cfg = read_json(&cfg_path);
    cfg["text_config"]["num_kv_shared_layers"] = Json::from(0);
    cfg.as_object_mut().unwrap().remove("backbone_hidden_size");
    std::fs::write(&cfg_path, serde_json::to_vec_pretty(&cfg).unwrap()).unwrap();
    let ours = convert(&dir, OutType::F32, None, &work.join("out.gguf")).unwrap();
    let ours = support::as_read_back(&ours);
    let _ = std::fs::remove_dir_all(&work);
    let want = read_json(&testdata("golden/gemma4assistant/convert-f32.json"));
    let kv = |m: &Json, key: &str| {
        m["kv"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e[0] == key)
            .cloned()
    };
    let shared = "gemma4-assistant.attention.shared_kv_layers";
    let width = "gemma4-assistant.embedding_length_out";
    assert_eq!(kv(&ours, shared).unwrap()[2], Json::from(2));
    assert_eq!(kv(&ours, width).unwrap()[2], Json::from(1536));
    assert_eq!(kv(&want, width).unwrap()[2], Json::from(24));
    let others = |m: &Json| -> Vec<Json> {
        m["kv"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e[0] != width)
            .cloned()
            .collect()
    };
    assert_eq!(others(&ours), others(&want));
    assert_eq!(ours["tensors"], want["tensors"]);
}

/// `Gemma4ForConditionalGeneration`'s text half is the Gemma 4 text model: the gemma4 fixture
/// rewritten as the vision-language checkpoint (vision and audio tower and embedder tensors
/// beside the text ones, a `gemma4` config) converts to the fixture's golden f32 file, as
/// the reference does (same sha256 for this directory).
#[test]
fn gemma4_conditional_generation_is_the_text_model() {
    let work = scratch("arch-gemma4-conditional");
    let dir = materialize("gemma4", &work);
    let encoders: [(&str, &[u64]); 4] = [
        (
            "model.vision_tower.patch_embedder.input_proj.weight",
            &[4, 12],
        ),
        ("model.embed_vision.embedding_projection.weight", &[16, 4]),
        ("model.audio_tower.output_proj.weight", &[4, 4]),
        ("model.embed_audio.embedding_projection.weight", &[16, 4]),
    ];
    as_conditional_generation(
        &dir,
        "Gemma4ForConditionalGeneration",
        "gemma4",
        &encoders,
        serde_json::json!({"vision_config": {"model_type": "gemma4_vision"},
            "audio_config": {"model_type": "gemma4_audio"}}),
    );
    assert_converts_to_golden_f32(&dir, "gemma4", &work);
    let _ = std::fs::remove_dir_all(&work);
}

/// `Gemma4AssistantConfig` refuses a text config with per-layer inputs, experts, a
/// double-wide MLP or layers that do not all share the KV cache (transformers raises, and
/// the reference's tokenizer loading lets the error through): each is refused, naming the
/// key. The class defaults of the text config (per-layer input sizes 256 and 262144) are
/// such values, so a config that does not zero them is refused too.
#[test]
fn gemma4_assistant_invalid_architectures_are_refused() {
    let cases: [(&str, Json); 5] = [
        ("vocab_size_per_layer_input", Json::Null),
        ("hidden_size_per_layer_input", Json::from(4)),
        ("num_kv_shared_layers", Json::from(1)),
        ("enable_moe_block", Json::Bool(true)),
        ("use_double_wide_mlp", Json::Bool(true)),
    ];
    for (key, value) in cases {
        let work = scratch("arch-gemma4assistant-invalid");
        let dir = materialize("gemma4assistant", &work);
        let cfg_path = dir.join("config.json");
        let mut cfg = read_json(&cfg_path);
        let tc = cfg["text_config"].as_object_mut().unwrap();
        if value.is_null() {
            tc.remove(key);
        } else {
            tc.insert(key.into(), value);
        }
        std::fs::write(&cfg_path, serde_json::to_vec_pretty(&cfg).unwrap()).unwrap();
        let out = work.join("out.gguf");
        let e = convert(&dir, OutType::F32, None, &out).expect_err(key);
        assert!(!out.exists(), "{key}: a refused conversion left a file");
        let _ = std::fs::remove_dir_all(&work);
        assert!(e.contains(key), "{key}: {e}");
    }
}

/// Hunyuan dense: NTK-alpha ("dynamic") rope outside the base and lengths the reference
/// asserts, and a checkpoint without tokenizer.json (its tiktoken tokenizer is remote code),
/// are refused with the reason.
#[test]
fn hunyuan_dense_refusals() {
    let work = scratch("arch-hunyuan-refusals");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let set_cfg = |dir: &Path, key: &str, v: Json| {
        let path = dir.join("config.json");
        let mut cfg = read_json(&path);
        cfg[key] = v;
        std::fs::write(&path, cfg.to_string()).unwrap();
    };
    let dir = materialize("hunyuan-dense", &work);
    set_cfg(&dir, "max_position_embeddings", Json::from(4096));
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("max_position_embeddings"), "{e}");

    let dir = materialize("hunyuan-dense", &work);
    set_cfg(
        &dir,
        "rope_parameters",
        serde_json::json!({"rope_type": "dynamic", "alpha": 1000.0, "factor": 1.0, "rope_theta": 20000.0}),
    );
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("rope_theta 20000"), "{e}");

    let dir = materialize("hunyuan-dense", &work);
    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("tokenizer.json"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// K-EXAONE's next-token-prediction tensors: routed experts inside an MTP layer and an
/// `mtp.*` tensor the class does not know are refused (the reference fails on both), naming
/// the tensor.
#[test]
fn exaonemoe_mtp_refusals() {
    let work = scratch("arch-exaonemoe-mtp");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let bf16 = |n: usize| vec![0u8; 2 * n];
    for (name, shape) in [
        (
            "mtp.layers.0.mlp.experts.0.gate_proj.weight",
            vec![24u64, 16],
        ),
        ("mtp.extra_norm.weight", vec![16u64]),
    ] {
        let dir = materialize("exaonemoe", &work);
        let n = shape.iter().product::<u64>() as usize;
        edit_tensors(
            &dir,
            |_| true,
            vec![(name.into(), "BF16".into(), shape, bf16(n))],
        );
        let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
        assert!(e.contains(name), "{e}");
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// Cohere2 MoE's bias rule: an all-zero bias is dropped (the file is the reference's), a
/// non-zero one is refused naming it; a shared-expert combination other than "average" is
/// refused.
#[test]
fn cohere2moe_biases_and_shared_strategy() {
    let work = scratch("arch-cohere2moe-rules");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let bias = "model.layers.1.self_attn.q_proj.bias";
    let dir = materialize("cohere2moe", &work);
    edit_tensors(
        &dir,
        |_| true,
        vec![(bias.into(), "BF16".into(), vec![16], vec![0u8; 32])],
    );
    let want = read_json(&testdata("golden/cohere2moe/convert-f32.json"));
    let ours = convert(&dir, OutType::F32, None, &work.join("zero-bias.gguf")).unwrap();
    let d = diff_manifests(&support::as_read_back(&ours), &want);
    assert!(d.is_empty(), "{}", d.join("\n"));

    let dir = materialize("cohere2moe", &work);
    // bf16 1.0 at the first element.
    let mut bytes = vec![0u8; 32];
    bytes[0] = 0x80;
    bytes[1] = 0x3f;
    edit_tensors(
        &dir,
        |_| true,
        vec![(bias.into(), "BF16".into(), vec![16], bytes)],
    );
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains(bias) && e.contains("not zero"), "{e}");

    let dir = materialize("cohere2moe", &work);
    let path = dir.join("config.json");
    let mut cfg = read_json(&path);
    cfg["shared_expert_combination_strategy"] = Json::from("sum");
    std::fs::write(&path, cfg.to_string()).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("average"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// Laguna's attention gate rules: a per-element gate that `gating` does not declare as the
/// string "per-element" is refused, and a declared per-element gate whose weights are per
/// head (width = heads) is refused naming the tensor (the reference fails on both).
#[test]
fn laguna_gate_refusals() {
    let work = scratch("arch-laguna-gates");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let set_cfg = |dir: &Path, key: &str, v: Json| {
        let path = dir.join("config.json");
        let mut cfg = read_json(&path);
        cfg[key] = v;
        std::fs::write(&path, cfg.to_string()).unwrap();
    };
    let dir = materialize("laguna", &work);
    set_cfg(
        &dir,
        "gating_types",
        serde_json::json!(["per_element", "per_head", "per_head"]),
    );
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("per-element"), "{e}");

    let dir = materialize("laguna", &work);
    set_cfg(&dir, "gating", Json::from("per-element"));
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("g_proj") && e.contains("expected 16"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// Every fixture whose reference conversion llama.cpp cannot load is refused by default,
/// with the contradiction named and the hyperparameters' file given.
#[test]
fn unloadable_reference_conversions_are_refused_by_default() {
    for (name, why) in UNLOADABLE_FIXTURES {
        // A seed recipe's checkpoint is rebuilt by the recipe test (which converts it with
        // allow_unloadable); the stored fixtures are checked here.
        if !ggufkit_testsupport::testdata("hf").join(name).is_dir() {
            continue;
        }
        let dir = ggufkit_testsupport::fixture(name);
        let opts = HfOptions {
            outtype: OutType::F32,
            ..HfOptions::default()
        };
        match read_hf_dir(&dir, &opts) {
            Err(ggufkit_converters::ConvertError::HparamsContradictTensors {
                config,
                problems,
            }) => {
                assert!(
                    config.ends_with("config.json"),
                    "{name}: {}",
                    config.display()
                );
                assert!(!problems.is_empty(), "{name}");
            }
            Err(e) => panic!("{name} ({why}): refused for another reason: {e}"),
            Ok(_) => panic!("{name} ({why}): converted without allow_unloadable"),
        }
    }
}

/// Solar Open looks its special tokens up among the tokenizer's added tokens by text: a
/// tokenizer without `<unk>` is refused, naming it, as the reference's
/// `get_added_vocab()["<unk>"]` fails.
#[test]
fn solar_open_needs_its_added_specials() {
    let work = scratch("arch-solaropen-specials");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let dir = materialize("solaropen", &work);
    let tj_path = dir.join("tokenizer.json");
    let mut tj: Json = serde_json::from_str(&std::fs::read_to_string(&tj_path).unwrap()).unwrap();
    tj["added_tokens"]
        .as_array_mut()
        .unwrap()
        .retain(|t| t["content"] != "<unk>");
    std::fs::write(&tj_path, tj.to_string()).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(e.contains("<unk>"), "{e}");
    let _ = std::fs::remove_dir_all(&work);
}

/// Granite-MoE SWA keeps the experts' gate and up halves fused, and checks the fused rows
/// against `intermediate_size` as the reference asserts: a config that disagrees with the
/// checkpoint is refused, naming the tensor.
#[test]
fn granite_moe_swa_checks_fused_gate_up_rows() {
    let work = scratch("arch-granitemoe-swa-rows");
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    let dir = materialize("granitemoe-swa", &work);
    let cfg_path = dir.join("config.json");
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    cfg["intermediate_size"] = Json::from(20);
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let e = read_hf_dir(&dir, &opts).err().expect("refused").to_string();
    assert!(
        e.contains("block_sparse_moe.experts.gate_up_proj") && e.contains("2 * 20"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&work);
}
