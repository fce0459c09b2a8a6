//! Second-seed fixtures against the reference, from `testdata/` alone.
//!
//! `conformance/make_seed_fixtures.py` rebuilt every generated architecture fixture with
//! another seed, FFN and SSM state sizes off the multiples of 8, and float32 `A_log` tensors
//! drawn over the range real checkpoints hold (so `-exp(A_log)` goes through torch's float32
//! exp), stored it as `testdata/hf/<fixture>-s2/`, and recorded in
//! `testdata/golden/seeds/<fixture>-s2.json` the reference's f32 manifest and its bf16 file's
//! size and sha256 (or its error). Each test converts the checkpoint and compares whole
//! files.

use std::path::Path;

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use ggufkit::write::{write_model, WriteOptions};
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_testsupport::golden::{as_read_back, read_json};
use ggufkit_testsupport::paths::materialize_fixture;
use ggufkit_testsupport::{scratch, testdata};
use serde_json::Value as Json;

fn convert(dir: &Path, outtype: OutType, out: &Path) -> Result<Json, String> {
    let opts = HfOptions {
        outtype,
        allow_unloadable: ggufkit_testsupport::unloadable::is_unloadable(dir),
        ..HfOptions::default()
    };
    let conv = read_hf_dir(dir, &opts).map_err(|e| e.to_string())?;
    write_model(&conv.model, out, &WriteOptions::default()).map_err(|e| e.to_string())?;
    let file = GgufFile::open(out).map_err(|e| e.to_string())?;
    let m = manifest(&file, out, None);
    let _ = std::fs::remove_file(out);
    Ok(m)
}

fn run(fixture: &str) {
    let rec = read_json(&testdata(&format!("golden/seeds/{fixture}.json")));
    let work = scratch(&format!("seed-{fixture}"));
    let dir = materialize_fixture(fixture, &work);
    let mut problems = Vec::new();
    for (t, outtype) in [("f32", OutType::F32), ("bf16", OutType::Bf16)] {
        let want = &rec[t];
        assert!(want.is_object(), "{fixture}: no {t} record");
        let out = work.join(format!("out-{t}.gguf"));
        let ours = convert(&dir, outtype, &out);
        if want["ok"] != Json::Bool(true) {
            if ours.is_ok() {
                problems.push(format!(
                    "{t}: the reference refused ({}), we converted",
                    want["error"]
                ));
            }
            continue;
        }
        let ours = match ours {
            Ok(m) => m,
            Err(e) => {
                problems.push(format!("{t}: we refused: {e}"));
                continue;
            }
        };
        if ours["sha256"] == want["sha256"] && ours["size"] == want["size"] {
            continue;
        }
        if t == "f32" {
            let d = diff_manifests(&as_read_back(&ours), &want["manifest"]);
            problems.extend(d.into_iter().map(|x| format!("f32: {x}")));
        } else {
            problems.push(format!(
                "bf16: ours {} bytes {} vs reference {} bytes {}",
                ours["size"], ours["sha256"], want["size"], want["sha256"]
            ));
        }
    }
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
        fn every_seed_fixture_has_a_test() {
            let listed = [$($name),*];
            for e in std::fs::read_dir(testdata("golden/seeds")).unwrap().flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                let n = n.trim_end_matches(".json");
                assert!(listed.contains(&n), "seed fixture {n} has no test");
            }
        }
    };
}

fixtures! {
    apertus_s2 => "apertus-s2",
    arcee_s2 => "arcee-s2",
    cohere_s2 => "cohere-s2",
    cohere2_s2 => "cohere2-s2",
    deepseek2_s2 => "deepseek2-s2",
    deepseek3_s2 => "deepseek3-s2",
    embeddinggemma_s2 => "embeddinggemma-s2",
    ernie4_5_s2 => "ernie4_5-s2",
    ernie4_5moe_s2 => "ernie4_5moe-s2",
    exaone4_s2 => "exaone4-s2",
    falcon_h1_s2 => "falcon-h1-s2",
    falcon_s2 => "falcon-s2",
    gemma3n_s2 => "gemma3n-s2",
    glm4_s2 => "glm4-s2",
    glm4moe_s2 => "glm4moe-s2",
    glm4moelite_s2 => "glm4moelite-s2",
    gptbigcode_s2 => "gptbigcode-s2",
    gptoss_s2 => "gptoss-s2",
    granite_s2 => "granite-s2",
    granitehybrid_attn_s2 => "granitehybrid-attn-s2",
    granitehybrid_dense_s2 => "granitehybrid-dense-s2",
    granitehybrid_s2 => "granitehybrid-s2",
    granitemoe_s2 => "granitemoe-s2",
    granitemoeshared_s2 => "granitemoeshared-s2",
    internlm3_s2 => "internlm3-s2",
    jamba_s2 => "jamba-s2",
    lfm2_s2 => "lfm2-s2",
    lfm2moe_s2 => "lfm2moe-s2",
    llama4_s2 => "llama4-s2",
    llama4_vl_s2 => "llama4-vl-s2",
    mamba_s2 => "mamba-s2",
    mamba2_s2 => "mamba2-s2",
    ministral3_s2 => "ministral3-s2",
    mistral3_s2 => "mistral3-s2",
    modernbert_cls_s2 => "modernbert-cls-s2",
    modernbert_s2 => "modernbert-s2",
    nemotronh_s2 => "nemotronh-s2",
    nomicbert_s2 => "nomicbert-s2",
    olmo_s2 => "olmo-s2",
    olmo2_s2 => "olmo2-s2",
    olmo3_s2 => "olmo3-s2",
    olmoe_s2 => "olmoe-s2",
    phi2_s2 => "phi2-s2",
    phimoe_s2 => "phimoe-s2",
    qwen2moe_s2 => "qwen2moe-s2",
    qwen35_s2 => "qwen35-s2",
    qwen35moe_s2 => "qwen35moe-s2",
    qwen3next_s2 => "qwen3next-s2",
    seedoss_s2 => "seedoss-s2",
    smollm3_s2 => "smollm3-s2",
    stablelm_2_s2 => "stablelm-2-s2",
    stablelm_s2 => "stablelm-s2",
    starcoder2_s2 => "starcoder2-s2",
    t5_s2 => "t5-s2",
    t5encoder_s2 => "t5encoder-s2",
    xlmroberta_cls_s2 => "xlmroberta-cls-s2",
    xlmroberta_s2 => "xlmroberta-s2",
    afmoe_s2 => "afmoe-s2",
    cohere2moe_s2 => "cohere2moe-s2",
    dots1_s2 => "dots1-s2",
    exaonemoe_s2 => "exaonemoe-s2",
    gemma4_s2 => "gemma4-s2",
    gemma4moe_s2 => "gemma4moe-s2",
    glmdsa_s2 => "glmdsa-s2",
    hunyuan_dense_s2 => "hunyuan-dense-s2",
    laguna_s2 => "laguna-s2",
    minimax_m2_s2 => "minimax-m2-s2",
    bailingmoe2_s2 => "bailingmoe2-s2",
    deepseek_s2 => "deepseek-s2",
    gemma4assistant_s2 => "gemma4assistant-s2",
    gemma4unified_s2 => "gemma4unified-s2",
    bert_s2 => "bert-s2",
    gemma3_s2 => "gemma3-s2",
    gpt2_s2 => "gpt2-s2",
    llama_spm_s2 => "llama-spm-s2",
    mixtral_s2 => "mixtral-s2",
    phi3_s2 => "phi3-s2",
    qwen2_s2 => "qwen2-s2",
    qwen3_s2 => "qwen3-s2",
    qwen3moe_s2 => "qwen3moe-s2",
    deepseek4_s2 => "deepseek4-s2",
}
