//! The output rules (README, Security, "Output paths") checked rule by rule against every
//! kind of file the tools write, as one table: each writer is a command that writes one
//! target, each rule a situation set up at that target, and every applicable pair is run.
//!
//! Writers of user-named files (a model, a manifest) follow the user's symlink, write a
//! character device in place, refuse any input of the run by file identity and leave nothing
//! after a failure. ggufkit's own files (the batch state, an edit journal) are never written
//! through a symlink. In-place writers wait for the lock another writer holds.

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
    },
    Writer {
        name: "gguf-quantize",
        input: gguf_input,
        command: |input, target| {
            let mut c = bin("gguf-quantize");
            c.args([s(input), s(target), "q8_0".into()]);
            c
        },
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
    },
    Writer {
        name: "gguf-inspect manifest",
        input: gguf_input,
        command: |input, target| {
            let mut c = bin("gguf-inspect");
            c.args(["manifest".into(), s(input), "-o".into(), s(target)]);
            c
        },
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
        std::fs::hard_link(&input, &hard).unwrap();
        let o = run((w.command)(&input, &hard));
        assert!(!o.status.success(), "{}: wrote over its input", w.name);
        assert_eq!(std::fs::read(&input).unwrap(), before, "{}", w.name);
        std::fs::remove_file(&hard).unwrap();

        // A symlink is written through and stays a link.
        let real = work.join("real.out");
        let link = work.join("link.out");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        std::fs::write(&real, b"old").unwrap();
        let o = run((w.command)(&input, &link));
        assert!(
            o.status.success(),
            "{}: {}",
            w.name,
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            std::fs::symlink_metadata(&link).unwrap().is_symlink(),
            "{}",
            w.name
        );
        assert_ne!(std::fs::read(&real).unwrap(), b"old", "{}", w.name);

        // A character device is written in place, never replaced.
        let o = run((w.command)(&input, Path::new("/dev/null")));
        assert!(
            o.status.success(),
            "{}: {}",
            w.name,
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());

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
        assert!(!target.exists(), "{}: a partial output", w.name);
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
    // The batch state file (cli/tests/batch_cli.rs covers its journal and the report).
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
