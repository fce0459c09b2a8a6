//! The architectures of issue #13 against the reference's output, from `testdata/` alone.
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

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use ggufkit::quantize::{plan, FileType, QuantizeOptions};
use ggufkit::write::{write_model, WriteOptions};
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use serde_json::Value as Json;
use support::{materialize_fixture as materialize, read_json, scratch, testdata};

/// Converts `dir` to `outtype` (and quantizes it when `quant` is set), writes the file and
/// returns its manifest, or the error.
fn convert(dir: &Path, outtype: OutType, quant: Option<&str>, out: &Path) -> Result<Json, String> {
    let opts = HfOptions {
        outtype,
        ..HfOptions::default()
    };
    let conv = read_hf_dir(dir, &opts).map_err(|e| e.to_string())?;
    let model = match quant {
        None => conv.model,
        Some(q) => {
            let ft = FileType::parse(q).unwrap();
            let mut qo = QuantizeOptions::new(ft);
            qo.allow_requantize = true;
            plan(&conv.model, &qo).map_err(|e| e.to_string())?.model
        }
    };
    write_model(&model, out, &WriteOptions::default()).map_err(|e| e.to_string())?;
    let file = GgufFile::open(out).map_err(|e| e.to_string())?;
    let m = manifest(&file, out, None);
    let _ = std::fs::remove_file(out);
    Ok(m)
}

fn run(fixture: &str) {
    let golden = testdata(&format!("golden/{fixture}"));
    let status = read_json(&golden.join("status.json"));
    let work = scratch(&format!("arch-{fixture}"));
    let dir = materialize(fixture, &work);
    let mut problems = Vec::new();
    let mut checked = 0;
    let variants = [
        ("convert-f32", "f32", None),
        ("convert-f16", "f16", None),
        ("convert-bf16", "bf16", None),
        ("convert-q8_0", "q8_0", None),
        ("convert-auto", "auto", None),
        ("quant-Q4_K_M", "f32", Some("q4_k_m")),
    ];
    let f32_refused = status["convert-f32"]["ok"] == Json::Bool(false);
    for (variant, t, quant) in variants {
        let st = &status[variant];
        let refused_f32 = serde_json::json!({"ok": false, "via": "convert-f32"});
        let st = match (st.is_null(), variant) {
            (false, _) => st,
            // llama-quantize had no f32 file to read: our one pass must refuse like the
            // reference's conversion.
            (true, "quant-Q4_K_M") if f32_refused => &refused_f32,
            (true, _) => {
                problems.push(format!("{variant}: not in status.json"));
                continue;
            }
        };
        let out = work.join(format!("{variant}.gguf"));
        let ours = convert(&dir, OutType::parse(t).unwrap(), quant, &out);
        checked += 1;
        if st["ok"] != Json::Bool(true) {
            // The reference refused this model: so must we, leaving no file.
            match ours {
                Ok(_) => problems.push(format!("{variant}: the reference failed, we converted")),
                Err(e) => eprintln!("{fixture} {variant}: refused like the reference ({e})"),
            }
            assert!(!out.exists(), "{variant}: a refused conversion left a file");
            continue;
        }
        let manifest_name = match st["identical_to"][0].as_str() {
            Some(v) => format!("{v}.json"),
            None => format!("{variant}.json"),
        };
        let want = read_json(&golden.join(manifest_name));
        match ours {
            Err(e) => problems.push(format!("{variant}: conversion failed: {e}")),
            Ok(m) => {
                let d = diff_manifests(&m, &want);
                eprintln!(
                    "{fixture} {variant}: {}",
                    if d.is_empty() {
                        "byte-identical"
                    } else {
                        "MISMATCH"
                    }
                );
                problems.extend(d.into_iter().map(|x| format!("{variant}: {x}")));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert_eq!(
        checked,
        variants.len(),
        "{fixture}: golden variants missing"
    );
    assert!(
        problems.is_empty(),
        "{fixture}: {} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Fixtures made by conformance/make_fixtures.py (their commands.txt says so).
fn generated_fixtures() -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(testdata("golden")).unwrap().flatten() {
        let c = e.path().join("commands.txt");
        if std::fs::read_to_string(&c)
            .is_ok_and(|t| t.contains("generated by conformance/make_fixtures.py"))
        {
            v.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    v.sort();
    v
}

macro_rules! fixtures {
    ($($t:ident => $name:literal),* $(,)?) => {
        $(#[test] fn $t() { run($name); })*

        #[test]
        fn every_generated_fixture_has_a_test() {
            let listed = [$($name),*];
            for n in generated_fixtures() {
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
    // Issue #14: MLA, next-token-prediction layers, gpt-oss.
    deepseek2 => "deepseek2",
    deepseek3 => "deepseek3",
    glm4moe => "glm4moe",
    gptoss => "gptoss",
    glm4moelite => "glm4moelite",
    // State-space and hybrid families (issue #14).
    mamba => "mamba",
    mamba2 => "mamba2",
    granitehybrid => "granitehybrid",
    granitehybrid_dense => "granitehybrid-dense",
    granitehybrid_attn => "granitehybrid-attn",
    lfm2 => "lfm2",
    lfm2moe => "lfm2moe",
    jamba => "jamba",
    falcon_h1 => "falcon-h1",
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
