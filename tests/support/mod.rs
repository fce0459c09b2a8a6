//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `testdata/<rel>`.
pub fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// `../shared/golden` (the full conformance data). Missing: under `CI=true` that is a test
/// failure; otherwise the caller skips, and this says so loudly.
pub fn golden_dir(suite: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("GGUFKIT_GOLDEN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/golden"));
    if dir.join("README.md").exists() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{suite}: golden data not found at {} (required under CI=true)",
            dir.display()
        );
    }
    eprintln!(
        "\n*** SKIPPED {suite}: golden data not found at {} ***\n",
        dir.display()
    );
    None
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ggufkit-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every `*.gguf` below `dir`, sorted.
pub fn gguf_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "gguf") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Runs the ignored test `inner` of the current test binary again in a child process whose
/// address space is limited to `memory_kib` (`ulimit -v`), with `env` set, and kills it
/// after `time_limit`: an allocation sized by a hostile value aborts the child, a loop on
/// one times out, and either fails the calling test.
pub fn run_under_limits(inner: &str, env: &str, memory_kib: u64, time_limit: std::time::Duration) {
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "ulimit -v {memory_kib} && exec \"$0\" --ignored --exact \"$1\" --nocapture --test-threads=1"
    );
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(&exe)
        .arg(inner)
        .env(env, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > time_limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{inner} took longer than {time_limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "child failed ({status}):\n{out}\n{err}");
    // `--exact` with a wrong name would run nothing and succeed.
    assert!(
        out.contains("running 1 test") && out.contains("test result: ok. 1 passed"),
        "the inner test did not run:\n{out}\n{err}"
    );
}

/// In the child of [`run_under_limits`] (when `env` is set): fails unless an address-space
/// limit is in force.
pub fn assert_memory_limited(env: &str) {
    if std::env::var_os(env).is_some() {
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
        let line = limits
            .lines()
            .find(|l| l.starts_with("Max address space"))
            .unwrap_or("Max address space unknown");
        assert!(!line.contains("unlimited"), "no memory limit: {line}");
    }
}
