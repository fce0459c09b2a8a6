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
