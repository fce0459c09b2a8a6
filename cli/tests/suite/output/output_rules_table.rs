//! The output rules (README, Security, "Output paths") checked rule by rule against every
//! kind of file the tools write, as one table: each writer is a command that writes one
//! target, each rule a situation set up at that target, and every applicable pair is run.
//!
//! Writers of user-named files (a model, its split shards, a LoRA adapter, a projector, a
//! manifest) follow the user's symlink, write a character device in place, refuse any input
//! of the run by file identity and leave nothing after a failure. ggufkit's own files (the
//! batch state, an edit journal) are never written through a symlink and never opened when
//! a FIFO has their name. In-place writers wait for the lock another writer holds.

use ggufkit_testsupport::golden::golden_gguf;
use ggufkit_testsupport::{scratch, testdata};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// A writer: its name and how it writes `target` from the input `input` in `work`.
struct Writer {
    name: &'static str,
    /// The input it reads (copied into the work directory).
    input: fn(&Path) -> PathBuf,
    /// The command writing `target`.
    command: fn(&Path, &Path) -> Command,
    /// The file the command writes when told to write `target` (itself, or the first of the
    /// split shards named after it): where each rule's situation is set up.
    written: fn(&Path) -> PathBuf,
}

/// The file a command writes is the one it is told to write.
fn itself(target: &Path) -> PathBuf {
    target.to_path_buf()
}

/// llama-spm's f16 conversion has 21 tensors: `--split-max-tensors 8` makes three shards.
const SHARDS: usize = 3;

/// The first split shard of output `target` (gguf-split's names, after `target` as given
/// when it does not end in `.gguf`).
fn first_shard(target: &Path) -> PathBuf {
    PathBuf::from(format!("{}-00001-of-{SHARDS:05}.gguf", target.display()))
}

fn bin(name: &str) -> Command {
    let path = match name {
        "gguf-convert" => env!("CARGO_BIN_EXE_gguf-convert"),
        "gguf-quantize" => env!("CARGO_BIN_EXE_gguf-quantize"),
        "gguf-edit" => env!("CARGO_BIN_EXE_gguf-edit"),
        _ => env!("CARGO_BIN_EXE_gguf-inspect"),
    };
    let mut c = Command::new(path);
    c.stdin(Stdio::null());
    c
}

fn gguf_input(work: &Path) -> PathBuf {
    let p = work.join("in.gguf");
    std::fs::copy(golden_gguf("llama-spm", "convert-f16"), &p).unwrap();
    p
}

fn hf_input(work: &Path) -> PathBuf {
    let d = work.join("hf");
    ggufkit_testsupport::copy_tree(&testdata("hf/llama-spm"), &d);
    d.join("model-00001-of-00002.safetensors")
}

/// A PEFT LoRA adapter of llama-spm (its weights are the input) beside its base model.
fn lora_input(work: &Path) -> PathBuf {
    ggufkit_testsupport::copy_tree(&testdata("lora/llama-lora"), &work.join("lora"));
    ggufkit_testsupport::copy_tree(&testdata("hf/llama-spm"), &work.join("base"));
    work.join("lora/adapter_model.safetensors")
}

/// A vision-language checkpoint, for its projector.
fn vl_input(work: &Path) -> PathBuf {
    let d = work.join("vl");
    ggufkit_testsupport::copy_tree(&ggufkit_testsupport::fixture("gemma3-vl"), &d);
    d.join("model.safetensors")
}

/// The user-named outputs.
const WRITERS: &[Writer] = &[
    Writer {
        name: "gguf-convert",
        input: hf_input,
        command: |input, target| {
            let mut c = bin("gguf-convert");
            c.args([s(input.parent().unwrap()), "--outfile".into(), s(target)])
                .args(["--outtype", "f16", "--force", "-q"]);
            c
        },
        written: itself,
    },
    Writer {
        name: "gguf-convert split shards",
        input: hf_input,
        command: |input, target| {
            let mut c = bin("gguf-convert");
            c.args([s(input.parent().unwrap()), "--outfile".into(), s(target)])
                .args([
                    "--outtype",
                    "f16",
                    "--split-max-tensors",
                    "8",
                    "--force",
                    "-q",
                ]);
            c
        },
        written: first_shard,
    },
    Writer {
        name: "gguf-convert LoRA adapter",
        input: lora_input,
        command: |input, target| {
            let lora = input.parent().unwrap();
            let mut c = bin("gguf-convert");
            c.args([s(lora), "--base".into(), s(&lora.with_file_name("base"))])
                .args(["--outfile".into(), s(target)])
                .args(["--outtype", "f16", "--force", "-q"]);
            c
        },
        written: itself,
    },
    Writer {
        name: "gguf-convert projector",
        input: vl_input,
        command: |input, target| {
            let mut c = bin("gguf-convert");
            c.args([s(input.parent().unwrap()), "--mmproj".into()])
                .args(["--outfile".into(), s(target), "--force".into(), "-q".into()]);
            c
        },
        written: itself,
    },
    Writer {
        name: "gguf-quantize",
        input: gguf_input,
        command: |input, target| {
            let mut c = bin("gguf-quantize");
            c.args([s(input), s(target), "q8_0".into()]);
            c
        },
        written: itself,
    },
    Writer {
        name: "gguf-edit copy",
        input: gguf_input,
        command: |input, target| {
            let mut c = bin("gguf-edit");
            c.args([s(input), s(target)])
                .args(["--general-name", "x", "--force", "-q"]);
            c
        },
        written: itself,
    },
    Writer {
        name: "gguf-inspect manifest",
        input: gguf_input,
        command: |input, target| {
            let mut c = bin("gguf-inspect");
            c.args(["manifest".into(), s(input), "-o".into(), s(target)]);
            c
        },
        written: itself,
    },
];

fn run(mut c: Command) -> Output {
    c.output().unwrap()
}

/// Files in `dir` whose names mark them as temporary.
fn temps(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".ggufkit-tmp."))
        .collect()
}

#[test]
fn every_rule_holds_for_every_user_named_output() {
    let root = scratch("rules-table");
    for w in WRITERS {
        let work = root.join(w.name.replace(' ', "-"));
        std::fs::create_dir_all(&work).unwrap();
        let input = (w.input)(&work);
        let before = std::fs::read(&input).unwrap();

        // Identity: a hard link to the input is the input.
        let hard = work.join("hard.out");
        std::fs::hard_link(&input, (w.written)(&hard)).unwrap();
        let o = run((w.command)(&input, &hard));
        assert!(!o.status.success(), "{}: wrote over its input", w.name);
        assert_eq!(std::fs::read(&input).unwrap(), before, "{}", w.name);
        std::fs::remove_file((w.written)(&hard)).unwrap();

        // A symlink is written through and stays a link.
        let real = work.join("real.out");
        let link = work.join("link.out");
        std::os::unix::fs::symlink(&real, (w.written)(&link)).unwrap();
        std::fs::write(&real, b"old").unwrap();
        let o = run((w.command)(&input, &link));
        assert!(
            o.status.success(),
            "{}: {}",
            w.name,
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            std::fs::symlink_metadata((w.written)(&link))
                .unwrap()
                .is_symlink(),
            "{}",
            w.name
        );
        assert_ne!(std::fs::read(&real).unwrap(), b"old", "{}", w.name);

        // A character device is written in place, never replaced (a device's name cannot
        // take a shard's suffix: shards have no such case).
        if (w.written)(Path::new("/dev/null")) == Path::new("/dev/null") {
            let o = run((w.command)(&input, Path::new("/dev/null")));
            assert!(
                o.status.success(),
                "{}: {}",
                w.name,
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        }

        // A failure while writing (the file size limit, as a full disk) leaves nothing.
        let target = work.join("full.out");
        let cmd = (w.command)(&input, &target);
        let mut c = Command::new("bash");
        c.args(["-c", "trap '' XFSZ; ulimit -f 1; exec \"$@\"", "bash"])
            .arg(cmd.get_program())
            .args(cmd.get_args())
            .stdin(Stdio::null());
        let o = c.output().unwrap();
        assert!(
            !o.status.success(),
            "{}: a full disk went unnoticed",
            w.name
        );
        let partial: Vec<String> = std::fs::read_dir(&work)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("full.out"))
            .collect();
        assert!(
            partial.is_empty(),
            "{}: a partial output {partial:?}",
            w.name
        );
        assert!(temps(&work).is_empty(), "{}: {:?}", w.name, temps(&work));
        assert_eq!(std::fs::read(&input).unwrap(), before, "{}", w.name);
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn ggufkit_own_files_are_never_written_through_a_symlink() {
    let work = scratch("rules-table-own");
    let input = gguf_input(&work);
    let victim = work.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    // The edit journal of an in-place edit.
    let journal = work.join("in.gguf.gguf-edit-journal");
    std::os::unix::fs::symlink(&victim, &journal).unwrap();
    let mut c = bin("gguf-edit");
    c.args([
        "set".into(),
        s(&input),
        "tokenizer.ggml.eos_token_id".into(),
        "3".into(),
    ]);
    let o = run(c);
    assert!(!o.status.success());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    std::fs::remove_file(&journal).unwrap();
    // The batch state file (cli/tests/suite/batch/batch_cli.rs covers its journal and the report).
    std::fs::write(
        work.join("jobs.json"),
        r#"{"outdir": "out", "jobs": [{"source": "in.gguf", "outputs": ["q8_0"]}]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(work.join("out")).unwrap();
    std::os::unix::fs::symlink(&victim, work.join("out/.ggufkit-batch.json")).unwrap();
    let mut c = bin("gguf-convert");
    c.args(["--batch", "jobs.json", "-q"]).current_dir(&*work);
    let o = run(c);
    assert!(!o.status.success());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn in_place_writers_and_replacements_wait_for_the_lock() {
    use std::os::fd::AsRawFd;
    let work = scratch("rules-table-lock");
    let input = gguf_input(&work);
    let out = work.join("q.gguf");
    std::fs::copy(&input, &out).unwrap();
    let writers: Vec<(&str, Command)> = vec![
        ("gguf-edit set", {
            let mut c = bin("gguf-edit");
            c.args([
                "set".into(),
                s(&input),
                "tokenizer.ggml.eos_token_id".into(),
                "3".into(),
            ]);
            c
        }),
        ("gguf-edit --in-place", {
            let mut c = bin("gguf-edit");
            c.args([
                "--in-place".into(),
                s(&input),
                "--general-description".into(),
                "d".repeat(300),
            ]);
            c
        }),
        ("gguf-quantize over an existing file", {
            let mut c = bin("gguf-quantize");
            c.args([s(&input), s(&out), "q8_0".into()]);
            c
        }),
    ];
    for (name, mut c) in writers {
        let target = if name.starts_with("gguf-quantize") {
            &out
        } else {
            &input
        };
        let held = std::fs::File::open(target).unwrap();
        // SAFETY: flock on a descriptor this test owns.
        assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX) }, 0);
        let mut child = c
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        assert!(
            child.try_wait().unwrap().is_none(),
            "{name} did not wait for the lock"
        );
        drop(held);
        let o = child.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    std::fs::remove_dir_all(&work).unwrap();
}

/// Runs `c` to its end, failing the test if it is still running after a minute (a writer
/// that opened a FIFO nobody reads would block forever).
fn run_bounded(mut c: Command, what: &str) -> Output {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: still running after a minute (blocked on the FIFO?)");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "{}",
        path.display()
    );
}

#[test]
fn ggufkit_own_files_are_never_opened_when_a_fifo_has_their_name() {
    use std::os::unix::fs::FileTypeExt;
    let work = scratch("rules-table-fifo");
    let input = gguf_input(&work);
    let before = std::fs::read(&input).unwrap();
    // The edit journal of an in-place edit: refused, the file untouched.
    let journal = work.join("in.gguf.gguf-edit-journal");
    mkfifo(&journal);
    let mut c = bin("gguf-edit");
    c.args([
        "set".into(),
        s(&input),
        "tokenizer.ggml.eos_token_id".into(),
        "3".into(),
    ]);
    let o = run_bounded(c, "gguf-edit set");
    assert!(!o.status.success(), "gguf-edit set with a FIFO journal");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("gguf-edit-journal"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&input).unwrap(), before);
    assert!(std::fs::metadata(&journal).unwrap().file_type().is_fifo());
    std::fs::remove_file(&journal).unwrap();
    // The batch state file: the batch fails and the FIFO stays as it was.
    std::fs::write(
        work.join("jobs.json"),
        r#"{"outdir": "out", "jobs": [{"source": "in.gguf", "outputs": ["q8_0"]}]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(work.join("out")).unwrap();
    let state = work.join("out/.ggufkit-batch.json");
    mkfifo(&state);
    let mut c = bin("gguf-convert");
    c.args(["--batch", "jobs.json", "-q"]).current_dir(&*work);
    let o = run_bounded(c, "gguf-convert --batch");
    assert!(!o.status.success(), "a batch with a FIFO state file");
    assert!(std::fs::metadata(&state).unwrap().file_type().is_fifo());
    std::fs::remove_dir_all(&work).unwrap();
}
