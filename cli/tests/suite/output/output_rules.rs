//! The output-path rules (README, Security), one test per rule, through gguf-quantize: what
//! a careless user or an attacker can name as OUT never damages anything but OUT itself.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-quantize");

fn input() -> PathBuf {
    conv::golden_gguf("llama-spm", "convert-f32")
}

fn quantize(args: &[&str], out: &Path) -> Output {
    Command::new(BIN)
        .arg("-q")
        .args(args)
        .arg(input())
        .arg(out)
        .arg("Q8_0")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Temporary output files left in `dir`.
fn temps(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".ggufkit-tmp."))
        .collect()
}

fn is_gguf(p: &Path) -> bool {
    std::fs::read(p).is_ok_and(|b| b.starts_with(b"GGUF"))
}

#[cfg(unix)]
#[test]
fn a_character_device_is_written_in_place_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    // /dev/null takes the bytes and stays a device.
    let o = quantize(&[], Path::new("/dev/null"));
    assert!(o.status.success(), "{}", stderr(&o));
    let m = std::fs::metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/null was replaced");
    // /dev/full reports the full disk (exit 1) and stays a device.
    let o = quantize(&[], Path::new("/dev/full"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("/dev/full"), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).matches("os error 28").count(),
        1,
        "the OS error is said once: {}",
        stderr(&o)
    );
    let m = std::fs::metadata("/dev/full").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/full was replaced");
}

#[cfg(unix)]
#[test]
fn a_fifo_is_written_in_place() {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("rules-fifo");
    let fifo = dir.join("pipe.gguf");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            bytes
        })
    };
    let o = quantize(&[], &fifo);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = reader.join().unwrap();
    assert!(bytes.starts_with(b"GGUF") && bytes.len() > 1 << 20);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(temps(&dir).is_empty());
}

/// Rule 4's refusals: a socket (through the tool) and a block device (through the output
/// rules themselves, so that a regression cannot write to a real device) are refused before
/// anything is written, and stay what they were.
#[cfg(unix)]
#[test]
fn a_socket_or_a_block_device_is_refused_and_left_alone() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("rules-socket");
    let sock = dir.join("listening.gguf");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    for args in [&[][..], &["--force"][..]] {
        let o = quantize(args, &sock);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("socket"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("ggufkit-tmp"), "{}", stderr(&o));
    }
    assert!(std::fs::symlink_metadata(&sock)
        .unwrap()
        .file_type()
        .is_socket());
    assert!(temps(&dir).is_empty());

    let block = std::fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_block_device()));
    let Some(block) = block else {
        eprintln!("no block device under /dev: that half is not checked here");
        return;
    };
    let rules = ggufkit::output::OutputRules {
        inputs: &[],
        overwrite: true,
        sync: false,
    };
    for target in [block.clone(), {
        // A symlink to it is refused as well (the rules look through links).
        let link = dir.join("to-block.gguf");
        std::os::unix::fs::symlink(&block, &link).unwrap();
        link
    }] {
        let err = match ggufkit::output::AtomicOutput::create(&target, &rules) {
            Ok(_) => panic!(
                "{}: a block device was accepted as an output",
                target.display()
            ),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("block device"), "{err}");
    }
    assert!(std::fs::metadata(&block)
        .unwrap()
        .file_type()
        .is_block_device());
    assert!(temps(&dir).is_empty());
}

#[cfg(unix)]
#[test]
fn a_symlinked_output_is_written_through_and_stays_a_link() {
    let dir = scratch("rules-symlink");
    let real = dir.join("real.gguf");
    std::fs::write(&real, b"old").unwrap();
    let link = dir.join("link.gguf");
    std::os::unix::fs::symlink("real.gguf", &link).unwrap();
    let o = quantize(&[], &link);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(is_gguf(&real), "the link's target was not written");
    // A dangling link is refused, and nothing is created.
    let dangling = dir.join("dangling.gguf");
    std::os::unix::fs::symlink("nowhere.gguf", &dangling).unwrap();
    let o = quantize(&[], &dangling);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("symlink"), "{}", stderr(&o));
    assert!(!dir.join("nowhere.gguf").exists());
    assert!(temps(&dir).is_empty());
}

#[cfg(unix)]
#[test]
fn a_planted_temporary_name_cannot_redirect_the_output() {
    use ggufkit::output::{AtomicOutput, OutputRules};
    // The old, predictable temporary name of this very process, planted as a symlink to a
    // victim file: writing must neither touch the victim nor leave OUT a link.
    let dir = scratch("rules-hijack");
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    let out = dir.join("out.gguf");
    let planted = dir.join(format!(".out.gguf.ggufkit-tmp.{}", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let rules = OutputRules {
        inputs: &[],
        overwrite: true,
        sync: false,
    };
    let mut o = AtomicOutput::create(&out, &rules).unwrap();
    std::io::Write::write_all(&mut o, b"GGUF new").unwrap();
    o.commit().unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert_eq!(std::fs::read(&out).unwrap(), b"GGUF new");
    assert!(!std::fs::symlink_metadata(&out)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_link(&planted).unwrap(), victim);
    // Temporary names are unpredictable and created exclusively: two outputs of the same
    // target at once get different names, neither a link.
    let a = AtomicOutput::create(&out, &rules).unwrap();
    let b = AtomicOutput::create(&out, &rules).unwrap();
    let names = temps(&dir);
    assert_eq!(names.len(), 3, "{names:?}"); // the planted link and two real files
    for n in names.iter().filter(|n| dir.join(n) != planted) {
        let m = std::fs::symlink_metadata(dir.join(n)).unwrap();
        assert!(m.file_type().is_file(), "{n}");
        assert!(n.len() >= ".out.gguf.ggufkit-tmp.1.".len() + 10, "{n}");
    }
    drop((a, b));
    assert_eq!(temps(&dir).len(), 1);
    // The batch runner's state file is written the same way.
    let state = dir.join(".ggufkit-batch.json");
    let planted = dir.join(format!(".ggufkit-batch.json.tmp.{}", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    ggufkit::output::write_file_atomically(&state, b"{}", &rules).unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn an_output_that_is_any_input_is_refused() {
    let dir = scratch("rules-inputs");
    let model = dir.join("model.gguf");
    std::fs::copy(input(), &model).unwrap();
    let imatrix = dir.join("imatrix.gguf");
    std::fs::copy(testdata("golden/llama-spm/files/imatrix.gguf"), &imatrix).unwrap();
    let tt = dir.join("types.txt");
    std::fs::write(&tt, "ffn_down=q8_0\n").unwrap();
    let saved: Vec<(PathBuf, Vec<u8>)> = [&model, &imatrix, &tt]
        .iter()
        .map(|p| (p.to_path_buf(), std::fs::read(p).unwrap()))
        .collect();
    let run = |args: &[&str], out: &Path| {
        Command::new(BIN)
            .arg("-q")
            .args(args)
            .arg(&model)
            .arg(out)
            .arg("Q4_K_M")
            .output()
            .unwrap()
    };
    let im = imatrix.to_str().unwrap();
    let ttf = tt.to_str().unwrap();
    // The model itself, the imatrix, the tensor-type file…
    for (args, out) in [
        (vec![], model.clone()),
        (vec!["--imatrix", im], imatrix.clone()),
        (vec!["--tensor-type-file", ttf], tt.clone()),
    ] {
        let o = run(&args, &out);
        assert_eq!(o.status.code(), Some(1), "{out:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("input of this run"), "{}", stderr(&o));
    }
    // …also under another name: a hard link and a symlink (compared by device and inode).
    let hard = dir.join("hard.gguf");
    std::fs::hard_link(&imatrix, &hard).unwrap();
    let o = run(&["--imatrix", im], &hard);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    #[cfg(unix)]
    {
        let soft = dir.join("soft.gguf");
        std::os::unix::fs::symlink(&model, &soft).unwrap();
        let o = run(&[], &soft);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    }
    for (p, bytes) in saved {
        assert_eq!(std::fs::read(&p).unwrap(), bytes, "{p:?} was touched");
    }
    assert!(temps(&dir).is_empty());
}

#[test]
fn a_directory_or_a_path_that_cannot_name_a_file_is_refused_and_leaves_nothing() {
    let dir = scratch("rules-dir");
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    for out in [
        sub.clone(),
        PathBuf::from(format!("{}/", sub.display())),
        PathBuf::from(format!("{}/new/", dir.display())),
        PathBuf::new(),
        dir.join("missing-dir/out.gguf"),
    ] {
        let o = quantize(&["--force"], &out);
        assert_eq!(o.status.code(), Some(1), "{out:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("ggufkit-tmp"), "{}", stderr(&o));
    }
    assert!(sub.is_dir());
    assert!(temps(&dir).is_empty() && temps(&sub).is_empty());
}

#[test]
fn a_failed_rename_removes_the_temporary_file() {
    let dir = scratch("rules-rename");
    let target = dir.join("x.gguf");
    let rules = ggufkit::output::OutputRules {
        inputs: &[],
        overwrite: true,
        sync: false,
    };
    let mut out = ggufkit::output::AtomicOutput::create(&target, &rules).unwrap();
    std::io::Write::write_all(&mut out, b"data").unwrap();
    // The target turns into a non-empty directory while the output is being written.
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"k").unwrap();
    let err = out.commit().unwrap_err().to_string();
    assert!(
        err.contains("x.gguf") && !err.contains("ggufkit-tmp"),
        "{err}"
    );
    assert!(temps(&dir).is_empty(), "{:?}", temps(&dir));
    assert_eq!(std::fs::read(target.join("keep")).unwrap(), b"k");
}

#[test]
fn an_existing_output_is_replaced_like_llama_quantize_unless_no_clobber() {
    let dir = scratch("rules-clobber");
    let out = dir.join("out.gguf");
    std::fs::write(&out, b"old").unwrap();
    let o = quantize(&["--no-clobber"], &out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    let o = quantize(&[], &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_gguf(&out));
    // -f / --force are still accepted.
    let o = quantize(&["-f"], &out);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_huge_thread_count_is_capped() {
    let dir = scratch("rules-threads");
    let out = dir.join("out.gguf");
    // Both the flag and llama-quantize's positional NTHREADS.
    let o = quantize(&["-j", "1000000"], &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = Command::new(BIN)
        .arg(input())
        .arg(&out)
        .args(["Q8_0", "1000000"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1000000 threads requested"),
        "{}",
        stderr(&o)
    );
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_tool_quietly() {
    // `gguf-quantize --dry-run … | head` where head has already gone: the first write meets
    // a closed pipe. The pipe is made by bash, not by this multi-threaded test process: a
    // child another test forks at the same moment would inherit our end of a pipe made here
    // and keep it open, so the write would succeed.
    let script =
        r#"(sleep 1; exec "$0" --dry-run "$1" Q8_0) | true; echo "status ${PIPESTATUS[0]}""#;
    let o = Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .arg(input())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    let killed_by_sigpipe = format!("status {}", 128 + libc_sigpipe());
    assert_eq!(out.trim(), killed_by_sigpipe, "{err}");
}

/// SIGPIPE's number on the platforms the tools run on.
#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}

/// A GGUF whose `gguf-inspect dump` is about 400 KB (3,000 keys, 2,000 tensors): far more
/// than a pipe buffer holds.
fn big_dump_input(dir: &Path) -> PathBuf {
    fn s(out: &mut Vec<u8>, x: &str) {
        out.extend((x.len() as u64).to_le_bytes());
        out.extend(x.as_bytes());
    }
    let (n_kv, n_t) = (3000u64, 2000u64);
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(n_t.to_le_bytes());
    out.extend((n_kv + 1).to_le_bytes());
    s(&mut out, "general.architecture");
    out.extend(8u32.to_le_bytes());
    s(&mut out, "llama");
    for i in 0..n_kv {
        s(&mut out, &format!("x.key{i:05}"));
        out.extend(8u32.to_le_bytes());
        s(&mut out, "vvvvvvvvvvvvvvvvvvvv");
    }
    for i in 0..n_t {
        s(&mut out, &format!("blk.{i}.ffn_down.weight"));
        out.extend(2u32.to_le_bytes());
        out.extend(32u64.to_le_bytes());
        out.extend(1u64.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend((i * 128).to_le_bytes());
    }
    out.resize(out.len().next_multiple_of(32) + (n_t * 128) as usize, 0);
    let p = dir.join("big-dump.gguf");
    std::fs::write(&p, out).unwrap();
    p
}

/// Runs `BIN ARGS… | head -1` in bash (see `a_closed_pipe_ends_the_tool_quietly` for why
/// bash makes the pipe) and returns the tool's exit status as bash saw it, and its stderr.
/// With `late`, the tool starts a second after head has gone, so its very first write
/// meets the closed pipe; otherwise head reads the first line and leaves while the tool
/// still has most of its output to write.
#[cfg(unix)]
fn into_head(bin: &str, args: &[&str], late: bool) -> (String, String) {
    let dir = scratch("rules-pipe-err");
    let err = dir.join(format!("{}.err", std::process::id()));
    let script = if late {
        r#"err=$1; shift; (sleep 1; exec "$@" 2> "$err") | true; echo "status ${PIPESTATUS[0]}""#
    } else {
        r#"err=$1; shift; "$@" 2> "$err" | head -1 > /dev/null; echo "status ${PIPESTATUS[0]}""#
    };
    let o = Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg("bash")
        .arg(&err)
        .arg(bin)
        .args(args)
        .output()
        .unwrap();
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    (
        String::from_utf8_lossy(&o.stdout).trim().to_string(),
        stderr,
    )
}

/// Every tool ends quietly when its standard output is a pipe that has been closed
/// (`… | head`): killed by SIGPIPE like any Unix tool (or done, when everything fitted in the
/// pipe before head left), never a panic with a backtrace (exit 101). The signal disposition
/// is set in one place for every tool (cli/src/edge.rs, `start`).
#[cfg(unix)]
#[test]
fn every_tool_piped_into_head_ends_quietly() {
    let dir = scratch("rules-pipe");
    let big = big_dump_input(&dir);
    let model = input();
    let edited = dir.join("edited.gguf");
    let sigpipe = format!("status {}", 128 + libc_sigpipe());
    let cases: [(&str, Vec<&str>); 4] = [
        (
            env!("CARGO_BIN_EXE_gguf-convert"),
            vec!["--list-architectures"],
        ),
        (
            env!("CARGO_BIN_EXE_gguf-inspect"),
            vec!["dump", big.to_str().unwrap()],
        ),
        (
            env!("CARGO_BIN_EXE_gguf-quantize"),
            vec!["--dry-run", model.to_str().unwrap(), "Q8_0"],
        ),
        (
            env!("CARGO_BIN_EXE_gguf-edit"),
            vec![
                "--dry-run",
                model.to_str().unwrap(),
                edited.to_str().unwrap(),
                "--general-name",
                "x",
            ],
        ),
    ];
    for (bin, args) in &cases {
        // The first write meets the closed pipe: killed by SIGPIPE, whatever the size.
        let (status, err) = into_head(bin, args, true);
        assert!(!err.contains("panicked"), "{bin} {args:?}: {err}");
        assert_eq!(status, sigpipe, "{bin} {args:?}: {err}");
    }
    // The example of a closed pipe, `gguf-inspect dump FILE | head -1`, with ~400 KB of output
    // (a pipe holds 64 KiB): head leaves after the first line, a later write fails.
    let (status, err) = into_head(
        env!("CARGO_BIN_EXE_gguf-inspect"),
        &["dump", big.to_str().unwrap()],
        false,
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.is_empty(), "not quiet: {err}");
    assert!(status == sigpipe || status == "status 0", "{status}: {err}");
    assert!(!edited.exists(), "--dry-run wrote its output");
}
