//! Crash-safe output: killing gguf-quantize at any point, or running out of disk, never leaves
//! anything at the output path but a complete, valid file.

use ggufkit_testsupport as support;
use ggufkit_testsupport::golden as conv;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use ggufkit::gguf::{GgufFile, Value};
use ggufkit::ir::{DataError, Derive, Model, Tensor, TensorData};
use ggufkit::quantizers::GgmlType;
use ggufkit::write::{write_model, WriteOptions};
use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-quantize");

struct Noise(usize, u64);

impl Derive for Noise {
    fn describe(&self) -> String {
        "noise".into()
    }
    fn compute(&self) -> Result<Vec<u8>, DataError> {
        let mut s = self.1 | 1;
        Ok((0..self.0)
            .flat_map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (((s >> 40) as f32 / 16_777_216.0 - 0.5) * 0.1).to_le_bytes()
            })
            .collect())
    }
}

/// A llama-shaped f32 model of about 48 MB: slow enough to quantize that a kill lands mid-run.
fn big_model(dir: &Path) -> PathBuf {
    let path = dir.join("big-f32.gguf");
    let mut m = Model::default();
    m.metadata.set("general.architecture", "llama");
    m.metadata.set("llama.block_count", Value::U32(4));
    m.metadata.set("llama.context_length", Value::U32(2048));
    m.metadata.set("llama.embedding_length", Value::U32(1024));
    m.metadata.set("llama.attention.head_count", Value::U32(8));
    for l in 0..4u64 {
        for t in [
            "attn_q",
            "attn_k",
            "attn_v",
            "attn_output",
            "ffn_up",
            "ffn_down",
        ] {
            let dims = vec![1024, 512];
            m.tensors.push(Tensor {
                name: format!("blk.{l}.{t}.weight"),
                dims,
                ty: GgmlType::F32,
                data: TensorData::Derived(Arc::new(Noise(1024 * 512, l * 31 + t.len() as u64))),
            });
        }
    }
    write_model(&m, &path, &WriteOptions::default()).unwrap();
    path
}

fn start(input: &Path, out: &Path) -> Child {
    Command::new(BIN)
        .args(["--quiet", "-j", "1"])
        .arg(input)
        .arg(out)
        .arg("Q4_K_M")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(ggufkit::output::TEMP_MARKER))
        .collect()
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} failed");
}

#[test]
fn killed_runs_leave_no_partial_output() {
    let dir = scratch("crash");
    let input = big_model(&dir);
    // The reference: one complete run, timed, so the kills below land inside a run.
    let reference = dir.join("reference.gguf");
    let t = Instant::now();
    let o = start(&input, &reference).wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let full = t.elapsed();
    let want = std::fs::read(&reference).unwrap();

    let out = dir.join("out.gguf");
    for (i, sig) in ["-INT", "-TERM", "-KILL", "-INT", "-TERM", "-KILL"]
        .iter()
        .enumerate()
    {
        let mut child = start(&input, &out);
        // Spread the kills over the run: early (header), middle, late.
        std::thread::sleep(full.mul_f64([0.05, 0.4, 0.6, 0.25, 0.8, 0.9][i]));
        signal(&child, sig);
        let status = child.wait().unwrap();
        if out.exists() {
            // The run finished before the signal: the file must be the complete one.
            assert_eq!(
                std::fs::read(&out).unwrap(),
                want,
                "{sig}: a file at the output path differs from a full run"
            );
            std::fs::remove_file(&out).unwrap();
            continue;
        }
        assert!(
            !status.success(),
            "{sig}: exited successfully but left no output"
        );
        let temps = temp_files(&dir);
        if *sig == "-KILL" {
            // Nothing can clean up after SIGKILL; the leftover is recognisable by its name.
            for t in temps {
                assert!(t
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(".out.gguf"));
                std::fs::remove_file(t).unwrap();
            }
        } else {
            assert!(temps.is_empty(), "{sig}: temporary files left: {temps:?}");
            assert_eq!(
                status.code(),
                Some(130),
                "{sig}: interrupted runs exit with 130"
            );
        }
    }
    // And a run that is left alone produces exactly the reference.
    let o = start(&input, &out).wait_with_output().unwrap();
    assert!(o.status.success());
    assert_eq!(std::fs::read(&out).unwrap(), want);
    assert!(GgufFile::open(&out).is_ok());
}

/// A tiny tmpfs, unmounted when dropped.
struct SmallFs(PathBuf);

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
#[ignore = "mounts a tmpfs (needs root or a user namespace); scripts/test runs it where it can"]
fn disk_full_gives_a_clear_error_and_no_output() {
    let dir = scratch("diskfull");
    let mnt = dir.join("small");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        mounted,
        "cannot mount a tmpfs to simulate a full disk (not root?); this test is #[ignore]d for \
         that reason: run it only where mounting works"
    );
    let _guard = SmallFs(mnt.clone());
    let out = mnt.join("out.gguf");
    let o = Command::new(BIN)
        .arg("--quiet")
        .arg(conv::golden_gguf("llama-spm", "convert-f32"))
        .arg(&out)
        .arg("Q8_0")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("No space left on device") && err.contains("out.gguf"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&mnt).unwrap().count(),
        0,
        "partial or temporary files left on the full disk"
    );
}
