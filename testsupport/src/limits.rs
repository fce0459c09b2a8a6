//! Runs a test binary's hostile-input corpus in a child process under a memory and a time
//! limit.

/// The name libtest gives the test function `test` of the module whose `module_path!()` is
/// `module`: its path without the crate's (the test binary's) name, e.g.
/// `security::hostile_gguf::corpus_inner`. `--exact` needs this full name.
pub fn test_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{test}"),
        None => test.to_string(),
    }
}

/// Runs the ignored test `inner` of the caller's module (`module` is its `module_path!()`)
/// again in a child process of the current test binary whose address space is limited to
/// `memory_kib` (`ulimit -v`), with `env` set, and kills it after `time_limit`: an
/// allocation sized by a hostile value aborts the child, a loop on one times out, and either
/// fails the calling test.
pub fn run_under_limits(
    module: &str,
    inner: &str,
    env: &str,
    memory_kib: u64,
    time_limit: std::time::Duration,
) {
    let inner = &test_name(module, inner);
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
        // ulimit -v counts reserved address space, and glibc reserves 64 MiB per malloc
        // arena, a new one whenever a thread finds the others busy: with one arena the limit
        // measures what the code allocates, not how its threads happened to contend.
        .env("MALLOC_ARENA_MAX", "1")
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

#[cfg(test)]
mod tests {
    use super::test_name;

    #[test]
    fn a_test_is_named_by_its_module_path_without_the_crate() {
        assert_eq!(
            test_name("suite::security::hostile_gguf", "corpus_inner"),
            "security::hostile_gguf::corpus_inner"
        );
        assert_eq!(test_name("hostile_gguf", "corpus_inner"), "corpus_inner");
    }
}
