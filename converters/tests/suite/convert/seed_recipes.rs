//! Second-seed variants rebuilt from recipes, against the reference.
//!
//! `conformance/make_seed_recipes.py` recorded, for the families whose second-seed checkpoint
//! is not stored (`testdata/golden/seed-recipes/<fixture>-s2.json`), a config with sizes off
//! the multiples of 8, the checkpoint's tensor table and the sha256 of the reference's f32
//! and bf16 outputs. Each test rebuilds that checkpoint (the base fixture's files, the
//! recipe's config.json and one model.safetensors of values a counter-based generator
//! determines) and compares whole files. `every_family_has_a_second_seed` requires a
//! second-seed variant of every generated fixture.

use std::path::{Path, PathBuf};

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::manifest;
use ggufkit::write::{write_model, WriteOptions};
use ggufkit_converters::hf::mistral::MistralFormat;
use ggufkit_converters::hf::{read_hf_dir, read_mmproj_dir, HfOptions, OutType};
use ggufkit_testsupport::golden::{fixtures_made_by, read_json, safetensors};
use ggufkit_testsupport::paths::materialize_fixture;
use ggufkit_testsupport::{scratch, testdata};
use serde_json::Value as Json;

/// The first bit pattern of the `A_log` values (0.05) and the number of patterns drawn from.
const A_LOG_FIRST: u32 = 0x3d4c_cccd;
const A_LOG_SPAN: u32 = 0x4031_7218 - A_LOG_FIRST;

/// Files of a fixture that hold or index its weights, replaced by the recipe's.
fn is_weight_file(name: &str) -> bool {
    [".safetensors", ".bin", ".pt", ".pth"]
        .iter()
        .any(|s| name.ends_with(s))
        || name == "model.safetensors.index.json"
        || name == "pytorch_model.bin.index.json"
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The little-endian bytes of tensor number `t` of the recipe: the signed top byte of each
/// draw times 2^-9 in the tensor's dtype, for `A_log` a float32 of the trained range, for
/// an int64 tensor the draw's top 44 bits.
fn synthetic_bytes(seed: u64, t: u64, name: &str, dtype: &str, n: u64) -> Vec<u8> {
    let base = (seed << 48).wrapping_add(t << 32);
    let draws = (0..n).map(move |i| splitmix64(base.wrapping_add(i)));
    if name.ends_with("A_log") {
        return draws
            .flat_map(|z| (A_LOG_FIRST + ((z >> 32) % u64::from(A_LOG_SPAN)) as u32).to_le_bytes())
            .collect();
    }
    let value = |z: u64| f32::from((z >> 56) as u8 as i8) * (1.0 / 512.0);
    match dtype {
        "F32" => draws.flat_map(|z| value(z).to_le_bytes()).collect(),
        "F16" => draws
            .flat_map(|z| ggufkit::quantizers::f32_to_f16(value(z)).to_le_bytes())
            .collect(),
        "BF16" => draws
            .flat_map(|z| ((value(z).to_bits() >> 16) as u16).to_le_bytes())
            .collect(),
        // Integer constants (hash multipliers, offsets): the draw's top 44 bits.
        "I64" => draws
            .flat_map(|z| ((z >> 20) as i64).to_le_bytes())
            .collect(),
        other => panic!("{name}: no synthetic values for dtype {other}"),
    }
}

/// The names of the recipe's config and weights files (an HF checkpoint's unless it names
/// others: a Mistral-format one's `params.json` and `consolidated.safetensors`).
fn recipe_files(rec: &Json) -> (&str, &str) {
    match rec.get("files").and_then(Json::as_array) {
        Some(f) => (f[0].as_str().unwrap(), f[1].as_str().unwrap()),
        None => ("config.json", "model.safetensors"),
    }
}

/// The recipe's checkpoint, in `work/<fixture>-s2` (the directory name is general.name).
fn rebuild(rec: &Json, variant: &str, work: &Path) -> PathBuf {
    let (config_file, weights_file) = recipe_files(rec);
    let base = rec["fixture"].as_str().expect("fixture");
    let seed = rec["seed"].as_u64().expect("seed");
    let dir = work.join(variant);
    std::fs::rename(materialize_fixture(base, work), &dir).unwrap();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_file() && is_weight_file(&name) {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    std::fs::write(
        dir.join(config_file),
        rec["config"].as_str().expect("config"),
    )
    .unwrap();
    let table = rec["tensors"].as_array().expect("tensors");
    let tensors: Vec<(String, String, Vec<u64>)> = table
        .iter()
        .map(|r| {
            let shape = r[2].as_array().unwrap().iter();
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
                shape.map(|d| d.as_u64().unwrap()).collect(),
            )
        })
        .collect();
    let data: Vec<Vec<u8>> = tensors
        .iter()
        .enumerate()
        .map(|(t, (name, dtype, shape))| {
            synthetic_bytes(seed, t as u64, name, dtype, shape.iter().product())
        })
        .collect();
    let entries: Vec<(&str, &str, &[u64], Vec<u8>)> = tensors
        .iter()
        .zip(data)
        .map(|((n, d, s), b)| (n.as_str(), d.as_str(), s.as_slice(), b))
        .collect();
    std::fs::write(dir.join(weights_file), safetensors(&entries)).unwrap();
    if rec.get("index").and_then(Json::as_bool) == Some(true) {
        // The base fixture's class reads the safetensors index: every tensor in the one file.
        let map: serde_json::Map<String, Json> = tensors
            .iter()
            .map(|(n, _, _)| (n.clone(), Json::from(weights_file)))
            .collect();
        let index = serde_json::json!({ "metadata": {}, "weight_map": map });
        std::fs::write(
            dir.join("model.safetensors.index.json"),
            serde_json::to_string_pretty(&index).unwrap(),
        )
        .unwrap();
    }
    dir
}

/// Our output's `(size, sha256)` for `outtype`, or our error; `mistral` reads the
/// directory as `--mistral-format` does, `mmproj` writes the `--mmproj` file.
fn convert_as(
    dir: &Path,
    outtype: OutType,
    mistral: bool,
    mmproj: bool,
    out: &Path,
) -> Result<(Json, Json), String> {
    let opts = HfOptions {
        outtype,
        allow_unloadable: ggufkit_testsupport::unloadable::is_unloadable(dir),
        mistral_format: mistral.then(MistralFormat::default),
        ..HfOptions::default()
    };
    let conv = if mmproj {
        read_mmproj_dir(dir, &opts)
    } else {
        read_hf_dir(dir, &opts)
    }
    .map_err(|e| e.to_string())?;
    write_model(&conv.model, out, &WriteOptions::default()).map_err(|e| e.to_string())?;
    let file = GgufFile::open(out).map_err(|e| e.to_string())?;
    let m = manifest(&file, out, None);
    let _ = std::fs::remove_file(out);
    Ok((m["size"].clone(), m["sha256"].clone()))
}

fn run(variant: &str) {
    let rec = read_json(&testdata(&format!("golden/seed-recipes/{variant}.json")));
    let work = scratch(&format!("seed-recipe-{variant}"));
    let dir = rebuild(&rec, variant, &work);
    let mut problems = Vec::new();
    // (record key, outtype, the --mmproj file): a text recipe's f32 and bf16 files, a
    // projector recipe's f32 text half and projector where the reference made them.
    let outputs: &[(&str, OutType, bool)] = if rec["format"] == "projector" {
        &[
            ("text-f32", OutType::F32, false),
            ("mmproj-f32", OutType::F32, true),
        ]
    } else {
        &[("f32", OutType::F32, false), ("bf16", OutType::Bf16, false)]
    };
    let mistral = rec["format"] == "mistral";
    let mut compared = 0;
    for &(t, outtype, mmproj) in outputs {
        let want = &rec[t];
        if want.is_null() {
            continue;
        }
        compared += 1;
        let out = work.join(format!("out-{t}.gguf"));
        match (
            convert_as(&dir, outtype, mistral, mmproj, &out),
            want["ok"].as_bool(),
        ) {
            (Ok((size, sha)), Some(true)) => {
                let size_ok = want.get("size").is_none_or(|w| *w == size);
                if !size_ok || sha != want["sha256"] {
                    problems.push(format!(
                        "{t}: ours {size} bytes {sha}, the reference's {} bytes {}",
                        want["size"], want["sha256"]
                    ));
                }
            }
            (Ok(_), _) => problems.push(format!(
                "{t}: the reference refused ({}), we converted",
                want["error"]
            )),
            (Err(e), Some(true)) => problems.push(format!("{t}: we refused: {e}")),
            (Err(_), _) => {}
        }
    }
    assert!(compared > 0, "{variant}: no output recorded");
    assert!(
        problems.is_empty(),
        "{variant}: {} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Generated fixtures without a second-seed variant, each with the reason.
const WITHOUT_SECOND_SEED: &[(&str, &str)] = &[(
    "baichuan",
    "the reference refuses every Baichuan checkpoint, as ggufkit does",
)];

macro_rules! recipes {
    ($($t:ident => $name:literal),* $(,)?) => {
        $(#[test] fn $t() { run($name); })*

        #[test]
        fn every_recipe_has_a_test() {
            let listed = [$($name),*];
            for e in std::fs::read_dir(testdata("golden/seed-recipes")).unwrap().flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                let n = n.trim_end_matches(".json");
                assert!(listed.contains(&n), "seed recipe {n} has no test");
            }
        }
    };
}

/// Every fixture `make_fixtures.py` generates has a second-seed variant (a stored checkpoint
/// or a recipe), unless listed above with its reason, and every projector fixture
/// `make_mmproj_fixtures.py` generates one in the projector seeds or a recipe: a family added
/// later must add one.
/// (The Mistral-format checkpoints have recipes too: `mistral-spm`, `mistral-tekken`,
/// `mistral-moe`.)
#[test]
fn every_family_has_a_second_seed() {
    let has =
        |dir: &str, fixture: &str| testdata(&format!("golden/{dir}/{fixture}-s2.json")).is_file();
    let mut missing = Vec::new();
    for f in fixtures_made_by("make_fixtures.py") {
        let excused = WITHOUT_SECOND_SEED.iter().any(|(n, _)| *n == f);
        let covered = has("seeds", &f) || has("seed-recipes", &f);
        assert!(
            !(excused && covered),
            "{f} is listed without a second seed but has one"
        );
        if !excused && !covered {
            missing.push(f);
        }
    }
    let projectors = read_json(&testdata("golden/projector-seeds.json"));
    for f in fixtures_made_by("make_mmproj_fixtures.py") {
        let covered = projectors.get(format!("{f}-s2")).is_some() || has("seed-recipes", &f);
        if !covered {
            missing.push(f);
        }
    }
    assert!(
        missing.is_empty(),
        "fixtures without a second-seed variant: {missing:?}"
    );
}

/// Every projector family ggufkit converts (`--mmproj`, by projector type) has a fixture
/// with a second-seed variant: a projector seed (`projector-seeds.json`) or a recipe whose
/// record holds a projector output.
#[test]
fn every_projector_family_has_a_second_seed() {
    use ggufkit_converters::hf::mmproj::{mmproj_arch, projector_table};
    let table = projector_table();
    let projectors = read_json(&testdata("golden/projector-seeds.json"));
    let mut covered = std::collections::BTreeSet::new();
    for f in fixtures_made_by("make_mmproj_fixtures.py") {
        let seeded = projectors.get(format!("{f}-s2")).is_some()
            || testdata(&format!("golden/seed-recipes/{f}-s2.json")).is_file();
        let cfg = fixture_config(&f);
        let class = mmproj_arch(&cfg).expect("a class");
        if let Some((_, ty)) = table.iter().find(|(c, _)| *c == class) {
            if seeded {
                covered.insert(*ty);
            }
        }
    }
    let missing: Vec<&str> = table
        .iter()
        .map(|(_, ty)| *ty)
        .filter(|ty| !covered.contains(ty))
        .collect();
    assert!(
        missing.is_empty(),
        "projector types without a second-seed fixture: {missing:?}"
    );
    assert!(covered.len() >= 13, "only {covered:?}");
}

/// Fixture `f`'s config.json (stored in place, or where its `shared-files.txt` says).
fn fixture_config(f: &str) -> Json {
    let dir = testdata(&format!("hf/{f}"));
    let shared = std::fs::read_to_string(dir.join("shared-files.txt")).unwrap_or_default();
    let path = shared
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .find(|(name, _)| name.trim() == "config.json")
        .map_or_else(|| dir.join("config.json"), |(_, rel)| dir.join(rel.trim()));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{f}: {e}"));
    serde_json::from_str(&text).expect("config.json")
}

recipes! {
    bloom_model_s2 => "bloom-model-s2",
    bloom_s2 => "bloom-s2",
    chatglm_s2 => "chatglm-s2",
    codeshell_s2 => "codeshell-s2",
    dbrx_s2 => "dbrx-s2",
    deci7b_s2 => "deci7b-s2",
    deci_s2 => "deci-s2",
    deepseek32_s2 => "deepseek32-s2",
    distilbert_cls_s2 => "distilbert-cls-s2",
    distilbert_s2 => "distilbert-s2",
    eurobert_s2 => "eurobert-s2",
    exaone_s2 => "exaone-s2",
    gemma3n_vl_hf_s2 => "gemma3n-vl-hf-s2",
    gemma3n_vl_s2 => "gemma3n-vl-s2",
    glm_s2 => "glm-s2",
    gptneox_s2 => "gptneox-s2",
    hyv3_s2 => "hyv3-s2",
    internlm2_s2 => "internlm2-s2",
    internvl3_s2 => "internvl3-s2",
    iquestcoder_s2 => "iquestcoder-s2",
    jais2_s2 => "jais2-s2",
    jais_s2 => "jais-s2",
    jinabert_s2 => "jinabert-s2",
    kimik25_s2 => "kimik25-s2",
    kormo_s2 => "kormo-s2",
    llamaembed_s2 => "llamaembed-s2",
    maincoder_s2 => "maincoder-s2",
    maple_s2 => "maple-s2",
    mellum_s2 => "mellum-s2",
    minicpm3_s2 => "minicpm3-s2",
    minicpm_s2 => "minicpm-s2",
    minimax_m3_s2 => "minimax-m3-s2",
    minimax01_s2 => "minimax01-s2",
    dotsocr_s2 => "dotsocr-s2",
    bailingmoe_s2 => "bailingmoe-s2",
    mistral_moe_s2 => "mistral-moe-s2",
    mistral_spm_s2 => "mistral-spm-s2",
    mistral_tekken_s2 => "mistral-tekken-s2",
    mpt_s2 => "mpt-s2",
    nanbeige_s2 => "nanbeige-s2",
    nemotron_linear_s2 => "nemotron-linear-s2",
    nemotron_s2 => "nemotron-s2",
    neobert_cls_s2 => "neobert-cls-s2",
    neobert_s2 => "neobert-s2",
    openelm_s2 => "openelm-s2",
    orion_s2 => "orion-s2",
    pangu_s2 => "pangu-s2",
    plm_s2 => "plm-s2",
    refact_s2 => "refact-s2",
    roberta_cls_s2 => "roberta-cls-s2",
    roberta_s2 => "roberta-s2",
    rwkv6_s2 => "rwkv6-s2",
    rwkv7_s2 => "rwkv7-s2",
    rwkv6qwen2_s2 => "rwkv6qwen2-s2",
    arwkv7_s2 => "arwkv7-s2",
    smallthinker_s2 => "smallthinker-s2",
    spark2_5_s2 => "spark2_5-s2",
    ultravox_s2 => "ultravox-s2",
    xverse_s2 => "xverse-s2",
    voxtral_s2 => "voxtral-s2",
    audioflamingo3_s2 => "audioflamingo3-s2",
    meralion2_s2 => "meralion2-s2",
    glmasr_s2 => "glmasr-s2",
    sarashina2_vl_s2 => "sarashina2-vl-s2",
    kimik25_vl_s2 => "kimik25-vl-s2",
    kimivl_s2 => "kimivl-s2",
    llama4_vision_s2 => "llama4-vision-s2",
    lfm2vl_s2 => "lfm2vl-s2",
    lightonocr_s2 => "lightonocr-s2",
    cogvlm_s2 => "cogvlm-s2",
    janus_s2 => "janus-s2",
    minicpmv46_s2 => "minicpmv46-s2",
    arctic_s2 => "arctic-s2",
    grok_s2 => "grok-s2",
    grok1_s2 => "grok1-s2",
    bamba_s2 => "bamba-s2",
    youtu_s2 => "youtu-s2",
    hyv4_s2 => "hyv4-s2",
    dots3_s2 => "dots3-s2",
    mimo2_s2 => "mimo2-s2",
    granite4v_s2 => "granite4v-s2",
    youtuvl_s2 => "youtuvl-s2",
    hunyuanvl_s2 => "hunyuanvl-s2",
    paddleocr_vl_s2 => "paddleocr-vl-s2",
    granite_swa_s2 => "granite-swa-s2",
    granitemoe_swa_s2 => "granitemoe-swa-s2",
    solaropen_s2 => "solaropen-s2",
    kimilinear_s2 => "kimilinear-s2",
    kimik3_s2 => "kimik3-s2",
    glm5next_text_s2 => "glm5next-text-s2",
    deepseek4_vl_s2 => "deepseek4-vl-s2",
    deepseekocr_s2 => "deepseekocr-s2",
    unlimitedocr_s2 => "unlimitedocr-s2",
    deepseekocr_vl_s2 => "deepseekocr-vl-s2",
    deepseekocr2_vl_s2 => "deepseekocr2-vl-s2",
    youtuvl_text_s2 => "youtuvl-text-s2",
    paddleocr_text_s2 => "paddleocr-text-s2",
    sarashina2_text_s2 => "sarashina2-text-s2",
    hunyuanvl_text_s2 => "hunyuanvl-text-s2",
    minicpmv46_text_s2 => "minicpmv46-text-s2",
    // Small families and diffusion language models.
    grovemoe_s2 => "grovemoe-s2",
    sarvam_untyped_s2 => "sarvam-untyped-s2",
    llada_s2 => "llada-s2",
    lladamoe_s2 => "lladamoe-s2",
    dream_s2 => "dream-s2",
    rnd1_s2 => "rnd1-s2",
    hrmtext_s2 => "hrmtext-s2",
    talkie_s2 => "talkie-s2",
    qwen4exp_s2 => "qwen4exp-s2",
    plamo2_s2 => "plamo2-s2",
    plamo3_s2 => "plamo3-s2",
    chameleon_s2 => "chameleon-s2",
    rugpt3xl_s2 => "rugpt3xl-s2",
    bailingmoe3_s2 => "bailingmoe3-s2",
    bailingmoe3_vl_s2 => "bailingmoe3-vl-s2",
    ling3vl_s2 => "ling3vl-s2",
    exaone45_vl_s2 => "exaone45-vl-s2",
    minimax_m3_vl_s2 => "minimax-m3-vl-s2",
    lfm25audio_s2 => "lfm25audio-s2",
    lfm2_colbert_s2 => "lfm2-colbert-s2",
    lfm2_bidir_s2 => "lfm2-bidir-s2",
    wavtokenizer_s2 => "wavtokenizer-s2",
    step35_s2 => "step35-s2",
    nemotronhpuzzle_s2 => "nemotronhpuzzle-s2",
    graniteswitch_s2 => "graniteswitch-s2",
    stepvl_s2 => "stepvl-s2",
    step3p7_s2 => "step3p7-s2",
    dotsocr_vl_s2 => "dotsocr-vl-s2",
    phi4v_s2 => "phi4v-s2",
    nemotron_vl_s2 => "nemotron-vl-s2",
    nemotron_omni_s2 => "nemotron-omni-s2",
    granitespeech_s2 => "granitespeech-s2",
    lfm2audio_s2 => "lfm2audio-s2",
    mimo_vl_s2 => "mimo-vl-s2",
}
