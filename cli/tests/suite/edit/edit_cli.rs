//! gguf-edit's forms, refusals and guarantees: in place equals a copy, --dry-run writes
//! nothing, an existing OUT needs --force, bad edits fail with their exit code and leave every
//! file as it was.

use ggufkit_testsupport as support;

use std::path::Path;
use std::process::{Command, Output};

use support::golden::sha256_file;
use support::*;

const EDIT: &str = env!("CARGO_BIN_EXE_gguf-edit");

fn edit(args: &[&str]) -> Output {
    Command::new(EDIT).args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn in_place_dry_run_force_and_refusals() {
    let dir = scratch("edit-cli");
    let input = dir.join("in.gguf");
    std::fs::copy(conv_input(), &input).unwrap();
    let before = sha256_file(&input);

    // A copy, then the same edit in place: the same bytes.
    let copy = dir.join("copy.gguf");
    let o = edit(&[s(&input), s(&copy), "--general-name", "Renamed", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sha256_file(&input), before, "the input was touched");
    let inplace = dir.join("inplace.gguf");
    std::fs::copy(&input, &inplace).unwrap();
    let o = edit(&["--in-place", s(&inplace), "--general-name", "Renamed", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sha256_file(&inplace), sha256_file(&copy));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".ggufkit-tmp."))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    // --dry-run shows the change and writes nothing.
    let dry = dir.join("dry.gguf");
    let o = edit(&[s(&input), s(&dry), "--general-name", "X", "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("~ general.name"));
    assert!(!dry.exists());

    // An existing OUT needs --force; with it, it is replaced.
    let o = edit(&[s(&input), s(&copy), "--general-name", "Again"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    let o = edit(&[
        s(&input),
        s(&copy),
        "--general-name",
        "Again",
        "--force",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    // Refusals, each leaving the files as they were.
    let copy_sha = sha256_file(&copy);
    for (args, code, words) in [
        (vec!["--in-place", s(&input), s(&copy)], 2, "--in-place"),
        (vec![s(&input)], 2, "IN and OUT"),
        (
            vec![
                s(&input),
                s(&dry),
                "--special-token",
                "eos",
                "no such token",
            ],
            1,
            "unable to find",
        ),
        (
            vec![s(&input), s(&dry), "--special-token-by-id", "eos", "99999"],
            1,
            "not within the token list",
        ),
        (
            vec![s(&input), s(&dry), "--set", "general.name"],
            2,
            "KEY=TYPE:VALUE",
        ),
        (
            vec!["set", s(&input), "general.name", "x"],
            2,
            "only numbers and booleans",
        ),
        (vec!["set", s(&input), "no.such.key", "1"], 1, "not found"),
        (
            vec!["set", s(&input), "tokenizer.ggml.eos_token_id", "-1"],
            2,
            "not a valid",
        ),
    ] {
        let o = edit(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(words), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(sha256_file(&input), before);
    assert_eq!(sha256_file(&copy), copy_sha);
    assert!(!dry.exists());
}

/// llama-spm's f16 conversion (made with our converter, equal to llama.cpp's).
fn conv_input() -> std::path::PathBuf {
    support::golden::golden_gguf("llama-spm", "convert-f16")
}

/// An edit copies the data section by the kernel only when that gives the engine's bytes: an
/// input whose padding is not zero is copied tensor by tensor, so the output's padding is
/// zero (as gguf_new_metadata.py writes it) and the tensors are unchanged.
#[test]
fn nonzero_padding_is_not_copied_raw() {
    use ggufkit::ir::{Model, Tensor, TensorData};
    let dir = scratch("edit-padding");
    let source = dir.join("source.gguf");
    // Two F32 tensors of 3 elements: 20 bytes of padding after each.
    let mut model = Model::default();
    model.metadata.set("general.architecture", "llama");
    for name in ["a.weight", "b.weight"] {
        model.tensors.push(Tensor {
            name: name.into(),
            dims: vec![3],
            ty: ggufkit::quantizers::GgmlType::F32,
            data: TensorData::Owned(std::sync::Arc::new(vec![7u8; 12])),
        });
    }
    ggufkit::write::write_model(&model, &source, &Default::default()).unwrap();
    let input = dir.join("padded.gguf");
    let mut bytes = std::fs::read(&source).unwrap();
    let file = ggufkit::gguf::GgufFile::open(&source).unwrap();
    // The first tensor whose size is not a multiple of the alignment has padding after it.
    let t = file
        .tensors
        .iter()
        .find(|t| t.nbytes % file.alignment as u64 != 0)
        .expect("a padded tensor");
    let pad_at = (file.data_offset + t.offset + t.nbytes) as usize;
    bytes[pad_at] = 0xAA;
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.join("out.gguf");
    let o = edit(&[s(&input), s(&out), "--general-name", "Padded"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let edited = ggufkit::gguf::GgufFile::open(&out).unwrap();
    let ob = std::fs::read(&out).unwrap();
    for (a, b) in file.tensors.iter().zip(&edited.tensors) {
        let (ia, ib) = (
            (file.data_offset + a.offset) as usize,
            (edited.data_offset + b.offset) as usize,
        );
        assert_eq!(
            bytes[ia..ia + a.nbytes as usize],
            ob[ib..ib + b.nbytes as usize]
        );
    }
    let pad_out = (edited.data_offset + t.offset + t.nbytes) as usize;
    assert_eq!(ob[pad_out], 0, "padding copied from the input");
}

/// The chat template files are inputs of the run: an OUT that is one of them (by name, or
/// another name of the same file) is refused with --force too, and the file stays as it was.
#[test]
fn chat_template_files_are_inputs_and_are_never_replaced() {
    let dir = scratch("edit-template-inputs");
    let input = dir.join("in.gguf");
    std::fs::copy(conv_input(), &input).unwrap();
    let jinja = dir.join("template.jinja");
    std::fs::write(&jinja, "{{ messages }}").unwrap();
    let config = dir.join("tokenizer_config.json");
    let config_text = r#"{"chat_template": "{{ bos_token }}"}"#;
    std::fs::write(&config, config_text).unwrap();
    for (flag, file) in [
        ("--chat-template-file", &jinja),
        ("--chat-template-config", &config),
    ] {
        let before = std::fs::read(file).unwrap();
        let o = edit(&[s(&input), s(file), flag, s(file), "-f", "-q"]);
        assert_eq!(o.status.code(), Some(1), "{flag}: {}", stderr(&o));
        assert!(stderr(&o).contains("input of this run"), "{}", stderr(&o));
        assert_eq!(std::fs::read(file).unwrap(), before, "{flag}: replaced");
        // Another name of the same file (a hard link) is the same input.
        let link = dir.join(format!(
            "link-{}",
            file.file_name().unwrap().to_str().unwrap()
        ));
        let _ = std::fs::remove_file(&link);
        std::fs::hard_link(file, &link).unwrap();
        let o = edit(&[s(&input), s(&link), flag, s(file), "-f", "-q"]);
        assert_eq!(o.status.code(), Some(1), "{flag}: {}", stderr(&o));
        assert_eq!(std::fs::read(file).unwrap(), before, "{flag}: replaced");
    }
    // The template read from a file that is then written: still fine for a different OUT.
    let out = dir.join("out.gguf");
    let o = edit(&[s(&input), s(&out), "--chat-template-file", s(&jinja), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&out).unwrap().starts_with(b"GGUF"));
}

/// The metadata of `path`, key → value.
fn metadata(path: &Path) -> ggufkit::gguf::Metadata {
    ggufkit::gguf::GgufFile::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .metadata
        .clone()
}

/// --remove-matching searches every key with the regular expression (not anchored unless the
/// pattern says so): it removes exactly the matching keys, equals --remove-metadata of the
/// same keys byte for byte, combines with itself (repeated) and refuses a bad pattern.
#[test]
fn remove_matching() {
    let dir = scratch("edit-remove-matching");
    let input = conv_input();
    let before = metadata(&input);
    let keys: Vec<String> = before.iter().map(|(k, _)| k.to_string()).collect();

    let out = dir.join("matching.gguf");
    let o = edit(&[
        s(&input),
        s(&out),
        "--remove-matching",
        r"add_(bos|eos)_token$",
        "--remove-matching",
        r"^general\.size",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let removed: Vec<&String> = keys
        .iter()
        .filter(|k| {
            k.ends_with("add_bos_token")
                || k.ends_with("add_eos_token")
                || k.starts_with("general.size")
        })
        .collect();
    assert!(removed.len() >= 3, "the fixture lacks the keys: {keys:?}");
    let after = metadata(&out);
    for k in &keys {
        assert_eq!(
            after.get(k).is_none(),
            removed.contains(&k),
            "{k}: kept or removed wrongly"
        );
    }

    // The same keys named one by one: the same bytes.
    let by_name = dir.join("by-name.gguf");
    let mut args = vec![s(&input).to_string(), s(&by_name).to_string(), "-q".into()];
    for k in &removed {
        args.push("--remove-metadata".into());
        args.push(k.to_string());
    }
    let o = Command::new(EDIT).args(&args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sha256_file(&out), sha256_file(&by_name));

    // A pattern that matches nothing changes nothing but the copy.
    let none = dir.join("none.gguf");
    let o = edit(&[
        s(&input),
        s(&none),
        "--remove-matching",
        "^no\\.such\\.",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(metadata(&none).len(), before.len());

    // An invalid regular expression is a usage error, nothing written.
    let bad = dir.join("bad.gguf");
    let o = edit(&[s(&input), s(&bad), "--remove-matching", "(unclosed"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--remove-matching"), "{}", stderr(&o));
    assert!(!bad.exists());
}

/// --set KEY=TYPE:VALUE writes the type --override-kv gives each (int → UINT32 of |v|,
/// float → FLOAT32, bool → BOOL, str → STRING), new keys and replaced ones; read back
/// with the library reader for the exact type and value.
#[test]
fn set_typed_values() {
    use ggufkit::gguf::Value;
    let dir = scratch("edit-set-types");
    let input = conv_input();
    let out = dir.join("set.gguf");
    let o = edit(&[
        s(&input),
        s(&out),
        "--set",
        "test.int=int:42",
        "--set",
        "test.float=float:0.1",
        "--set",
        "test.bool=bool:true",
        "--set",
        "test.off=bool:false",
        "--set",
        "test.str=str:hello world",
        "--set",
        "llama.context_length=int:8192",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = metadata(&out);
    let want = [
        ("test.int", Value::U32(42)),
        ("test.float", Value::F32(0.1)),
        ("test.bool", Value::Bool(true)),
        ("test.off", Value::Bool(false)),
        ("test.str", Value::from("hello world")),
        ("llama.context_length", Value::U32(8192)),
    ];
    for (k, v) in &want {
        assert_eq!(md.get(k), Some(v), "{k}");
    }
    if let Some(Value::F32(f)) = md.get("test.float") {
        assert_eq!(f.to_bits(), 0.1f32.to_bits());
    }
    // A replaced key keeps its place; new keys are appended in command-line order.
    let order: Vec<&str> = md.iter().map(|(k, _)| k).collect();
    let old: Vec<String> = metadata(&input)
        .iter()
        .map(|(k, _)| k.to_string())
        .collect();
    assert_eq!(
        order.iter().position(|k| *k == "llama.context_length"),
        old.iter().position(|k| k == "llama.context_length")
    );
    assert_eq!(
        &order[order.len() - 5..],
        &[
            "test.int",
            "test.float",
            "test.bool",
            "test.off",
            "test.str"
        ]
    );

    // Values that do not parse as their type are usage errors.
    for bad in [
        "test.x=int:4.5",
        "test.x=float:abc",
        "test.x=bool:yes",
        "test.x=u64:1",
    ] {
        let o = edit(&[s(&input), s(&dir.join("bad.gguf")), "--set", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(!dir.join("bad.gguf").exists());
    }
}

/// --verbose prints the change of every key (and writes the file); without it, nothing
/// goes to stdout.
#[test]
fn verbose_prints_each_changed_key() {
    let dir = scratch("edit-verbose");
    let input = conv_input();
    let out = dir.join("v.gguf");
    let o = edit(&[
        s(&input),
        s(&out),
        "--verbose",
        "--general-name",
        "Verbose",
        "--remove-metadata",
        "general.size_label",
        "--set",
        "test.added=int:3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("~ general.name:") && l.contains("\"Verbose\"")),
        "{stdout}"
    );
    assert!(lines.contains(&"- general.size_label"), "{stdout}");
    assert!(lines.contains(&"+ test.added = U32(3)"), "{stdout}");
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(out.exists(), "--verbose must still write");
    let quiet = dir.join("q.gguf");
    let o = edit(&[s(&input), s(&quiet), "--general-name", "Verbose", "-q"]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
}

#[test]
fn a_set_value_that_does_not_fit_its_type_is_refused() {
    let dir = ggufkit_testsupport::scratch("edit-set-range");
    let src = ggufkit_testsupport::golden::golden_gguf("llama-spm", "convert-f16");
    let out = dir.join("o.gguf");
    for bad in [
        "tokenizer.ggml.eos_token_id=int:-1",
        "tokenizer.ggml.eos_token_id=int:4294967296",
        "general.x=float:1e300",
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_gguf-edit"))
            .args([src.to_str().unwrap(), out.to_str().unwrap(), "--set", bad])
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {e}");
        assert!(e.contains("does not fit"), "{bad}: {e}");
        assert!(!out.exists(), "{bad}");
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_gguf-edit"))
        .args([
            src.to_str().unwrap(),
            out.to_str().unwrap(),
            "--set",
            "tokenizer.ggml.eos_token_id=int:4294967295",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // gguf-quantize keeps llama-quantize's arithmetic (|v| as UINT32), with a warning.
    let q = dir.join("q.gguf");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_gguf-quantize"))
        .args([
            "--override-kv",
            "tokenizer.ggml.eos_token_id=int:-1",
            src.to_str().unwrap(),
            q.to_str().unwrap(),
            "q8_0",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning"));
    let f = ggufkit::gguf::GgufFile::open(&q).unwrap();
    assert_eq!(
        f.metadata.get("tokenizer.ggml.eos_token_id"),
        Some(&ggufkit::gguf::Value::U32(1))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
