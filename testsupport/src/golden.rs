//! The golden data: the HF fixtures llama.cpp's golden manifests cover, the whole golden GGUF
//! files rebuilt with our own tools (and checked against llama.cpp's sha256), manifests of our
//! conversions and their comparison with llama.cpp's, and small HF model directories made
//! on the fly.

use std::path::{Path, PathBuf};

pub use crate::limits;
pub use crate::paths::{
    copy_tree, fixture, golden_dir, materialize_fixture, root, scratch, testdata,
};
pub use crate::record::{profile_dir, record};

use crate::engine::write_gguf;

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use serde_json::Value as Json;

/// The HuggingFace fixtures of `testdata/hf` that the golden data (`testdata/golden`) covers.
pub const FIXTURES: [&str; 10] = [
    "llama-spm",
    "llama-bpe",
    "qwen2",
    "qwen3",
    "qwen3moe",
    "gemma3",
    "mixtral",
    "phi3",
    "gpt2",
    "bert",
];

/// llama-quantize target types with no quantizer yet (none now: every ftype is supported).
/// Golden variants of such types are reported as "not run: not implemented yet"
/// ([`NOT_YET_REASON`]), never as passed.
pub const NOT_YET: &[&str] = &[];

/// Why a [`NOT_YET`] variant did not run.
pub const NOT_YET_REASON: &str = "not implemented yet";

/// The whole GGUF files llama.cpp wrote that tests read (as inputs, or to round-trip them):
/// every fixture's f32 conversion and, for llama-spm, these. The repository keeps only their
/// manifests; [`golden_gguf`] makes them with our own tools.
pub const GOLDEN_FILES_LLAMA_SPM: &[&str] = &[
    "convert-f16",
    "quant-Q4_0",
    "quant-Q4_K_M",
    "quant-Q6_K",
    "quant-imatrix-Q4_K_M",
];

/// Every `(fixture, variant)` of [`GOLDEN_FILES_LLAMA_SPM`] and the f32 conversions.
pub fn golden_files() -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<(&str, &str)> = FIXTURES.iter().map(|f| (*f, "convert-f32")).collect();
    v.extend(GOLDEN_FILES_LLAMA_SPM.iter().map(|g| ("llama-spm", *g)));
    v
}

/// The small set of whole files the quick tests use (`(file, llama.cpp's manifest)`):
/// llama-spm's f32 conversion, Q4_0 and Q4_K_M, qwen2's f32 conversion and the imatrix.
pub fn core_golden_files() -> Vec<(PathBuf, PathBuf)> {
    let golden = golden_dir("golden files");
    let mut v: Vec<(PathBuf, PathBuf)> = [
        ("llama-spm", "convert-f32"),
        ("llama-spm", "quant-Q4_0"),
        ("llama-spm", "quant-Q4_K_M"),
        ("qwen2", "convert-f32"),
    ]
    .iter()
    .map(|(fx, v)| {
        (
            golden_gguf(fx, v),
            golden.join(fx).join(format!("{v}.json")),
        )
    })
    .collect();
    v.push((
        golden.join("llama-spm/files/imatrix.gguf"),
        golden.join("llama-spm/imatrix-gguf.json"),
    ));
    v
}

/// sha256 of a file.
pub fn sha256_file(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::io::copy(&mut f, &mut h).unwrap();
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The GGUF file llama.cpp wrote for `variant` of `fixture`
/// (`testdata/golden/<fixture>/<variant>.json`), made with our own converter (`convert-<t>`)
/// or quantizer (`quant-[imatrix-]<FTYPE>` from `convert-f32`, the imatrix as
/// `imatrix.gguf`), and checked byte for byte against the manifest's sha256: a file that
/// differs is a test failure. Kept in `<target>/<profile>/golden-cache/` and reused while
/// its hash still matches.
pub fn golden_gguf(fixture_name: &str, variant: &str) -> PathBuf {
    use std::sync::Mutex;
    static LOCK: Mutex<()> = Mutex::new(());
    // The quantized variants start from the f32 conversion (made first, outside the lock).
    let input = variant
        .starts_with("quant-")
        .then(|| golden_gguf(fixture_name, "convert-f32"));
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let fdir = golden_dir("golden files").join(fixture_name);
    let golden = read_json(&fdir.join(format!("{variant}.json")));
    let want = golden["sha256"]
        .as_str()
        .expect("manifest sha256")
        .to_string();
    let dir = profile_dir().join("golden-cache").join(fixture_name);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{fixture_name}-{variant}.gguf"));
    if path.is_file() && sha256_file(&path) == want {
        return path;
    }
    let tmp = dir.join(format!(
        ".{fixture_name}-{variant}.{}.tmp",
        std::process::id()
    ));
    let model = if let Some(t) = variant.strip_prefix("convert-") {
        let dir = fixture(fixture_name);
        let opts = HfOptions {
            outtype: OutType::parse(t).unwrap_or_else(|| panic!("outtype {t}")),
            allow_unloadable: crate::unloadable::is_unloadable(&dir),
            ..HfOptions::default()
        };
        read_hf_dir(&dir, &opts)
            .unwrap_or_else(|e| panic!("{}: conversion failed: {e}", dir.display()))
            .model
    } else if let Some(q) = variant.strip_prefix("quant-") {
        use ggufkit::quantize::{plan, FileType, Imatrix, QuantizeOptions};
        let (imatrix, ftype) = match q.strip_prefix("imatrix-") {
            Some(t) => (true, t),
            None => (false, q),
        };
        let input = input.unwrap();
        let src = GgufFile::open(&input).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
        let mut opts =
            QuantizeOptions::new(FileType::parse(ftype).unwrap_or_else(|| panic!("{ftype}")));
        if imatrix {
            let im = fdir.join("files/imatrix.gguf");
            let im = Imatrix::load(&im).unwrap_or_else(|e| panic!("{}: {e}", im.display()));
            opts.imatrix = Some(("imatrix.gguf".to_string(), im));
        }
        plan(&ggufkit::ir::Model::from_gguf(&src), &opts)
            .unwrap_or_else(|e| panic!("{fixture_name}/{variant}: {e}"))
            .model
    } else {
        panic!("no recipe for golden file {fixture_name}/{variant}")
    };
    write_gguf(&model, &tmp).unwrap_or_else(|e| panic!("{}: {e}", tmp.display()));
    if sha256_file(&tmp) != want {
        let f = GgufFile::open(&tmp).unwrap_or_else(|e| panic!("{}: {e}", tmp.display()));
        let d = diff_manifests(&manifest(&f, &tmp, None), &golden);
        panic!(
            "{fixture_name}/{variant}: our file differs from llama.cpp's:\n{}",
            d.join("\n")
        );
    }
    std::fs::rename(&tmp, &path).unwrap();
    path
}

/// The legacy fixtures (`<name>.bin` and `expected/`), every one of them: the quantized ones
/// are stored in `testdata/legacy`; the F32/F16 ones (27 MB) are made here from llama.cpp's
/// f32/f16 conversions of llama-spm (the fixtures were written from those weights) with the
/// header and vocabulary of `ggjt-v3-q4_0.bin`, and must equal the size and sha256 their
/// `expected/<name>.expected.json` records. Assembled once per process in
/// `<target>/<profile>/golden-cache/legacy/`.
pub fn legacy_dir() -> PathBuf {
    use std::sync::Mutex;
    static DONE: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = done.as_ref() {
        return d.clone();
    }
    let src = testdata("legacy");
    let dir = profile_dir().join("golden-cache/legacy");
    let _ = std::fs::remove_dir_all(dir.join("expected"));
    copy_tree(&src.join("expected"), &dir.join("expected"));
    let mut names: Vec<PathBuf> = std::fs::read_dir(src.join("expected"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    for p in names {
        let expected = read_json(&p);
        let file = expected["file"].as_str().expect("file");
        let want = expected["sha256"].as_str().expect("sha256");
        let out = dir.join(file);
        if src.join(file).is_file() {
            std::fs::copy(src.join(file), &out).unwrap();
        } else if !(out.is_file() && sha256_file(&out) == want) {
            let tmp = dir.join(format!(".{file}.{}.tmp", std::process::id()));
            std::fs::write(&tmp, make_legacy(&src.join("ggjt-v3-q4_0.bin"), &expected)).unwrap();
            std::fs::rename(&tmp, &out).unwrap();
        }
        assert_eq!(
            sha256_file(&out),
            want,
            "{}: not the legacy fixture",
            out.display()
        );
    }
    *done = Some(dir.clone());
    dir
}

/// A legacy F32/F16 llama file as `expected` describes it: container and ftype from it,
/// the other hparams and the vocabulary from the GGJT v3 file `header_from`, tensor bytes
/// from llama.cpp's conversions of llama-spm (by the GGUF name `expected` maps each to).
fn make_legacy(header_from: &Path, expected: &Json) -> Vec<u8> {
    let src = std::fs::read(header_from).unwrap();
    let u32_at = |p: usize| u32::from_le_bytes(src[p..p + 4].try_into().unwrap());
    assert_eq!(&src[..4], b"tjgg");
    let hparams: Vec<u32> = (0..6).map(|i| u32_at(8 + 4 * i)).collect();
    let mut vocab = Vec::new(); // (token bytes, score bytes)
    let mut p = 8 + 28;
    for _ in 0..hparams[0] {
        let n = u32_at(p) as usize;
        vocab.push((&src[p + 4..p + 4 + n], &src[p + 4 + n..p + 8 + n]));
        p += 8 + n;
    }
    let (magic, version): (&[u8; 4], Option<u32>) = match expected["container"].as_str().unwrap() {
        "GGML (unversioned)" => (b"lmgg", None),
        "GGMF v1" => (b"fmgg", Some(1)),
        "GGJT v1" => (b"tjgg", Some(1)),
        "GGJT v3" => (b"tjgg", Some(3)),
        c => panic!("no recipe for a {c} legacy file"),
    };
    let mut out = magic.to_vec();
    if let Some(v) = version {
        out.extend(v.to_le_bytes());
    }
    for h in &hparams {
        out.extend(h.to_le_bytes());
    }
    out.extend((expected["ftype"].as_u64().unwrap() as u32).to_le_bytes());
    for (t, score) in vocab {
        out.extend((t.len() as u32).to_le_bytes());
        out.extend(t);
        if magic != b"lmgg" {
            out.extend(score);
        }
    }
    let f32 = GgufFile::open(&golden_gguf("llama-spm", "convert-f32")).unwrap();
    let f16 = GgufFile::open(&golden_gguf("llama-spm", "convert-f16")).unwrap();
    for t in expected["tensors"].as_array().unwrap() {
        let (ty, from) = match t["type"].as_str().unwrap() {
            "F32" => (0u32, &f32),
            "F16" => (1u32, &f16),
            other => panic!("no recipe for {other} tensors"),
        };
        let name = t["legacy_name"].as_str().unwrap();
        let ne: Vec<u32> = t["ne"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as u32)
            .collect();
        out.extend((ne.len() as u32).to_le_bytes());
        out.extend((name.len() as u32).to_le_bytes());
        out.extend(ty.to_le_bytes());
        for d in &ne {
            out.extend(d.to_le_bytes());
        }
        out.extend(name.as_bytes());
        if magic == b"tjgg" {
            out.resize(out.len().div_ceil(32) * 32, 0);
        }
        let gguf_name = t["gguf_name"].as_str().unwrap();
        let info = from
            .tensor(gguf_name)
            .unwrap_or_else(|| panic!("{gguf_name} not in llama-spm's conversion"));
        let data = from.tensor_data(info);
        assert_eq!(data.len() as u64, t["nbytes"].as_u64().unwrap(), "{name}");
        out.extend(data);
    }
    out
}

/// Converts `dir` with `outtype`, writes the GGUF into `scratch`, and returns its manifest
/// and, when the tokenizer could not be converted, why.
pub fn convert_manifest(dir: &Path, outtype: OutType, scratch: &Path) -> (Json, Option<String>) {
    let opts = HfOptions {
        outtype,
        allow_missing_vocab: true,
        allow_unloadable: crate::unloadable::is_unloadable(dir),
        ..HfOptions::default()
    };
    let conv = read_hf_dir(dir, &opts)
        .unwrap_or_else(|e| panic!("{}: conversion failed: {e}", dir.display()));
    let out = scratch.join(&conv.default_file_name);
    write_gguf(&conv.model, &out)
        .unwrap_or_else(|e| panic!("{}: writing failed: {e}", out.display()));
    let file = GgufFile::open(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let m = manifest(&file, &out, None);
    let _ = std::fs::remove_file(&out);
    (m, conv.vocab_error)
}

/// Differences between our manifest and the golden one. With `full`, the whole manifest
/// (llama.cpp's bytes); without, everything except what the tokenizer keys decide: the
/// non-`tokenizer.*` KVs in order and the complete tensor list (names, types, shapes,
/// offsets, sizes, hashes).
pub fn compare(ours: &Json, golden: &Json, full: bool) -> Vec<String> {
    let ours = &as_read_back(ours);
    if full {
        return diff_manifests(ours, golden);
    }
    let mut d = Vec::new();
    let kvs = |m: &Json| -> Vec<Json> {
        m["kv"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|e| !e[0].as_str().unwrap_or_default().starts_with("tokenizer."))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (kvs(ours), kvs(golden));
    for i in 0..a.len().max(b.len()) {
        if a.get(i) != b.get(i) {
            d.push(format!(
                "kv[{i}]: ours {} vs golden {}",
                a.get(i).map_or("(none)".into(), Json::to_string),
                b.get(i).map_or("(none)".into(), Json::to_string)
            ));
        }
    }
    if ours["n_tensors"] != golden["n_tensors"] {
        d.push(format!(
            "n_tensors: ours {} vs golden {}",
            ours["n_tensors"], golden["n_tensors"]
        ));
    }
    let empty = Vec::new();
    let (a, b) = (
        ours["tensors"].as_array().unwrap_or(&empty),
        golden["tensors"].as_array().unwrap_or(&empty),
    );
    for i in 0..a.len().max(b.len()) {
        if a.get(i) != b.get(i) {
            d.push(format!(
                "tensors[{i}]: ours {} vs golden {}",
                a.get(i).map_or("(none)".into(), Json::to_string),
                b.get(i).map_or("(none)".into(), Json::to_string)
            ));
        }
    }
    d
}

/// Reads a JSON file. Python's `json.dumps` writes non-finite floats as the bare tokens
/// `NaN`, `Infinity` and `-Infinity` (Gemma 3n's activation sparsity scales are -inf);
/// they are read as `null`, which is what our manifests hold for them (`json!` of a
/// non-finite f64): the file's sha256 still tells the values apart.
pub fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&non_finite_as_null(&text))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Our manifest as [`read_json`] would read it back from text. serde_json's float parsing
/// is not correctly rounded for every 17-digit decimal; the golden manifests hold Python's
/// shortest round-trip spelling of each float and ours serializes to the same (ryu's), so
/// comparing both after the same parse compares the values exactly.
pub fn as_read_back(ours: &Json) -> Json {
    serde_json::from_str(&ours.to_string()).expect("a manifest serializes to JSON")
}

/// `NaN`, `Infinity`, `-Infinity` outside strings replaced by `null`.
fn non_finite_as_null(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("Infinity") && !text.contains("NaN") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_str, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        } else if let Some(tok) = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|t| rest.starts_with(t))
        {
            out.push_str("null");
            rest = &rest[tok.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// The outtypes a fixture has golden conversions for (`convert-<t>.json`).
pub fn golden_outtypes(dir: &Path) -> Vec<(String, OutType)> {
    let mut v: Vec<(String, OutType)> = OutType::all()
        .filter(|o| *o != OutType::Auto)
        .map(|o| (o.name().to_string(), o))
        .filter(|(t, _)| dir.join(format!("convert-{t}.json")).is_file())
        .collect();
    v.sort_by_key(|(t, _)| t.clone());
    v
}

/// Converts `fixture` for every golden outtype in `expected` and returns all differences.
pub fn check_fixture(fixture: &Path, expected: &Path, tag: &str) -> Vec<String> {
    check_fixture_counted(fixture, expected, tag).0
}

/// [`check_fixture`], also returning how many golden conversions were compared as whole
/// manifests and which were compared without their `tokenizer.*` keys (with why).
pub fn check_fixture_counted(
    fixture: &Path,
    expected: &Path,
    tag: &str,
) -> (Vec<String>, usize, Vec<(String, String)>) {
    let scratch = scratch(tag);
    let mut problems = Vec::new();
    let mut full_checks = 0;
    let mut partial = Vec::new();
    let types = golden_outtypes(expected);
    assert!(
        !types.is_empty(),
        "no golden conversions in {}",
        expected.display()
    );
    for (t, ty) in types {
        let golden = read_json(&expected.join(format!("convert-{t}.json")));
        let (ours, vocab_error) = convert_manifest(fixture, ty, &scratch);
        let full = vocab_error.is_none();
        match &vocab_error {
            None => full_checks += 1,
            Some(e) => partial.push((
                format!("{tag} convert-{t} (tokenizer keys)"),
                format!("tokenizer not converted: {e}"),
            )),
        }
        let diffs = compare(&ours, &golden, full);
        eprintln!(
            "{tag} {t}: {} ({})",
            if diffs.is_empty() {
                "match"
            } else {
                "MISMATCH"
            },
            if full {
                "full manifest"
            } else {
                "tokenizer keys skipped: tokenizer not converted"
            }
        );
        problems.extend(diffs.into_iter().map(|d| format!("{tag} {t}: {d}")));
    }
    // `--outtype auto` gave a file identical to one of the variants (status.json).
    let status = expected.join("status.json");
    if status.is_file() {
        let same = read_json(&status)["convert-auto"]["identical_to"][0]
            .as_str()
            .map(str::to_string);
        if let Some(v) = same {
            let golden = read_json(&expected.join(format!("{v}.json")));
            let (ours, vocab_error) = convert_manifest(fixture, OutType::Auto, &scratch);
            match &vocab_error {
                None => full_checks += 1,
                Some(e) => partial.push((
                    format!("{tag} convert-auto (tokenizer keys)"),
                    format!("tokenizer not converted: {e}"),
                )),
            }
            let diffs = compare(&ours, &golden, vocab_error.is_none());
            eprintln!(
                "{tag} auto (= {v}): {}",
                if diffs.is_empty() {
                    "match"
                } else {
                    "MISMATCH"
                }
            );
            problems.extend(diffs.into_iter().map(|d| format!("{tag} auto: {d}")));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    (problems, full_checks, partial)
}

/// A safetensors file: `(name, dtype, shape, data)` in order, data concatenated.
pub fn safetensors(tensors: &[(&str, &str, &[u64], Vec<u8>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let begin = data.len();
        data.extend_from_slice(bytes);
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [begin, data.len()]}),
        );
    }
    let h = serde_json::to_vec(&Json::Object(header)).unwrap();
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&data);
    out
}

/// Little-endian f32 bytes.
pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A scratch model directory with `config.json` and the given files.
pub fn model_dir(tag: &str, config: &str, files: &[(&str, Vec<u8>)]) -> crate::Scratch {
    let d = scratch(tag);
    std::fs::write(d.join("config.json"), config).unwrap();
    for (name, bytes) in files {
        std::fs::write(d.join(name), bytes).unwrap();
    }
    d
}

/// The golden fixture directories a generator made (`testdata/golden/<fixture>/commands.txt`
/// says "generated by conformance/<generator>"), sorted.
pub fn fixtures_made_by(generator: &str) -> Vec<String> {
    let mark = format!("generated by conformance/{generator}");
    let mut v = Vec::new();
    for e in std::fs::read_dir(testdata("golden")).unwrap().flatten() {
        let c = e.path().join("commands.txt");
        if std::fs::read_to_string(&c).is_ok_and(|t| t.contains(&mark)) {
            v.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    v.sort();
    v
}

#[cfg(test)]
mod non_finite_tests {
    #[test]
    fn bare_non_finite_tokens_read_as_null() {
        let t = r#"[1.5, -Infinity, "a -Infinity \" NaN", Infinity, NaN]"#;
        assert_eq!(
            super::non_finite_as_null(t),
            r#"[1.5, null, "a -Infinity \" NaN", null, null]"#
        );
    }
}
