//! `gguf-convert --outtype a,b,c` and `gguf-convert --batch` end to end: every output equals
//! the single-output conversion (and llama.cpp's golden manifest where one exists), for any
//! thread count; a failing job does not stop the others; a killed batch resumes with only
//! what is missing; up-to-date outputs are skipped, changed ones rebuilt.

use ggufkit_testsupport::golden as support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ggufkit::gguf::GgufFile;
use ggufkit::manifest::{diff_manifests, manifest};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_gguf-convert");

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn sha(p: &Path) -> String {
    let b = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Sha256::digest(&b)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn lines(text: &[u8]) -> Vec<Json> {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// Output records of a report, by output file name.
fn outputs(report: &[Json]) -> BTreeMap<String, Json> {
    report
        .iter()
        .filter(|r| r["type"] == "output")
        .map(|r| {
            let name = Path::new(r["output"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, r.clone())
        })
        .collect()
}

/// A single-output conversion into `dir`; returns the sha256 of the file.
fn single(src: &Path, outtype: &str, extra: &[&str], dir: &Path, cwd: &Path) -> (PathBuf, String) {
    std::fs::create_dir_all(dir).unwrap();
    let before: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let mut args = vec![s(src), "--outtype", outtype, "--outdir", s(dir), "-q", "-f"];
    args.extend_from_slice(extra);
    let o = run(&args, cwd);
    assert!(
        o.status.success(),
        "single {} {outtype}: {}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let new: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(new.len(), 1, "{new:?}");
    let h = sha(&new[0]);
    (new[0].clone(), h)
}

const LEGACY: &[&str] = &["--gqa", "2", "--eps", "1e-5"];

#[test]
fn several_outtypes_equal_single_runs_for_any_thread_count() {
    let work = scratch("batch-multi");
    let cases: [(PathBuf, &str, &[&str]); 2] = [
        (
            golden_gguf("llama-spm", "convert-f32"),
            "q8_0,q4_k_m,q2_k,q4_0,iq4_xs",
            &[],
        ),
        (
            testdata("legacy/ggjt-v3-q4_0.bin"),
            "f16,q8_0,q4_k_m,auto",
            LEGACY,
        ),
    ];
    for (src, types, extra) in cases {
        let mut want = BTreeMap::new();
        for t in types.split(',') {
            let (p, h) = single(&src, t, extra, &work.join("single"), &work);
            want.insert(p.file_name().unwrap().to_string_lossy().into_owned(), h);
            std::fs::remove_file(p).unwrap();
        }
        for j in ["1", "2", "3"] {
            let out = work.join(format!("j{j}"));
            // The memory budget changes the schedule (a starved one evicts and recomputes),
            // never the bytes.
            let mem = match j {
                "1" => "1G",
                "2" => "64K",
                _ => "1M",
            };
            let mut args = vec![
                s(&src),
                "--outtype",
                types,
                "--outdir",
                s(&out),
                "--json",
                "-q",
                "-j",
                j,
                "--max-memory",
                mem,
            ];
            args.extend_from_slice(extra);
            let o = run(&args, &work);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let report = lines(&o.stdout);
            let got = outputs(&report);
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                want.keys().collect::<Vec<_>>()
            );
            for (name, r) in &got {
                assert_eq!(r["status"], "done", "{name}: {r}");
                assert_eq!(r["sha256"], want[name].as_str(), "{name} with -j {j}");
                assert_eq!(sha(&out.join(name)), want[name], "{name} with -j {j}");
                assert!(r["bits_per_weight"].as_f64().unwrap() > 1.0);
                assert!(r["seconds"].as_f64().is_some());
                assert_eq!(
                    r["size"].as_u64().unwrap(),
                    std::fs::metadata(out.join(name)).unwrap().len()
                );
            }
            let summary = report.iter().find(|r| r["type"] == "summary").unwrap();
            assert_eq!(summary["outputs_written"], want.len());
            let job = report.iter().find(|r| r["type"] == "job").unwrap();
            assert_eq!(job["status"], "ok");
            if mem == "1G" {
                assert_eq!(job["f32_decoded"], job["shared_f32_tensors"], "{job}");
            }
            std::fs::remove_dir_all(&out).unwrap();
        }
    }
}

/// `--verbose` on several outputs from one read prints where the time went, each phase
/// summed over the jobs (the reader's phases and the writer's), with the run's total; a
/// dry run writes nothing and times nothing.
#[test]
fn verbose_batch_prints_the_phase_table() {
    let work = scratch("batch-verbose");
    let src = testdata("hf/qwen2");
    let o = run(
        &[
            s(&src),
            "--outtype",
            "f16,q8_0",
            "--outdir",
            s(&work),
            "--verbose",
        ],
        &work,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let table = err
        .split_once("phase timings (wall seconds, each phase summed over the jobs):")
        .unwrap_or_else(|| panic!("no phase table: {err}"))
        .1;
    for phase in [
        "read: config and tensor index",
        "read: vocabulary",
        "write: tensor data",
        "write: sync and commit",
        "total",
    ] {
        let rest = table
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(phase))
            .unwrap_or_else(|| panic!("no {phase:?} line: {table}"));
        let secs: f64 = rest
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no seconds after {phase:?}: {rest:?}"));
        assert!(secs >= 0.0, "{phase}: {rest}");
    }
    let o = run(
        &[
            s(&src),
            "--outtype",
            "f16,q8_0",
            "--outdir",
            s(&work.join("dry")),
            "--verbose",
            "--dry-run",
        ],
        &work,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("phase timings"));
}

/// Is HF conversion available on this branch (the tokenizer converter is another
/// engineer's work)? None when it is; the error otherwise.
fn hf_unavailable(work: &Path) -> Option<String> {
    let o = run(
        &[
            s(&testdata("hf/qwen2")),
            "--outtype",
            "f32",
            "--outdir",
            s(work),
            "-q",
            "-f",
        ],
        work,
    );
    if o.status.success() {
        None
    } else {
        Some(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

#[test]
fn batch_of_fixtures_matches_golden_manifests_and_single_runs() {
    let work = scratch("batch-e2e");
    let golden = Some(golden_dir(
        "batch_of_fixtures_matches_golden_manifests_and_single_runs",
    ));
    std::fs::copy(
        testdata("golden/llama-spm/files/imatrix.gguf"),
        work.join("imatrix.gguf"),
    )
    .unwrap();
    let hf_error = hf_unavailable(&work);
    if let Some(e) = &hf_error {
        panic!("HF conversion does not work: {e}");
    }
    // (job name, source, extra single-run args, outputs: (outtype, name, job-file extras,
    // single-run extras, golden manifest))
    type Out = (
        &'static str,
        Option<&'static str>,
        &'static str,
        Vec<&'static str>,
        Option<String>,
    );
    type Job = (
        &'static str,
        PathBuf,
        &'static [&'static str],
        &'static str,
        Vec<Out>,
    );
    let mut jobs: Vec<Job> = vec![
        (
            "spm-f32",
            golden_gguf("llama-spm", "convert-f32"),
            &[],
            "",
            vec![
                (
                    "q4_0",
                    None,
                    "",
                    vec![],
                    Some("llama-spm/quant-Q4_0".into()),
                ),
                (
                    "q4_k_m",
                    None,
                    "",
                    vec![],
                    Some("llama-spm/quant-Q4_K_M".into()),
                ),
                (
                    "q6_k",
                    None,
                    "",
                    vec![],
                    Some("llama-spm/quant-Q6_K".into()),
                ),
                (
                    "q8_0",
                    None,
                    "",
                    vec![],
                    Some("llama-spm/quant-Q8_0".into()),
                ),
                (
                    "q4_k_m",
                    Some("imat.gguf"),
                    "imatrix = \"imatrix.gguf\"",
                    vec!["--imatrix", "imatrix.gguf"],
                    Some("llama-spm/quant-imatrix-Q4_K_M".into()),
                ),
                (
                    "q4_k_m",
                    Some("tt.gguf"),
                    "tensor_type = [\"ffn_down=q8_0\"]",
                    vec!["--tensor-type", "ffn_down=q8_0"],
                    Some("llama-spm/quant-tensortype-ffn_down-q8_0-Q4_K_M".into()),
                ),
                (
                    "q4_k_m",
                    Some("pure.gguf"),
                    "pure = true",
                    vec!["--pure"],
                    Some("llama-spm/quant-pure-Q4_K_M".into()),
                ),
            ],
        ),
        (
            "qwen2-f32",
            golden_gguf("qwen2", "convert-f32"),
            &[],
            "",
            vec![
                (
                    "q4_k_m",
                    None,
                    "",
                    vec![],
                    Some("qwen2/quant-Q4_K_M".into()),
                ),
                ("q5_0", None, "", vec![], Some("qwen2/quant-Q5_0".into())),
                ("q2_k", None, "", vec![], Some("qwen2/quant-Q2_K".into())),
            ],
        ),
        (
            "legacy",
            testdata("legacy/ggjt-v3-q4_0.bin"),
            LEGACY,
            "gqa = 2\neps = 1e-5",
            vec![
                ("auto", None, "", vec![], Some("legacy/ggjt-v3-q4_0".into())),
                ("f16", None, "", vec![], None),
                ("q8_0", None, "", vec![], None),
            ],
        ),
        (
            "hf-llama-spm",
            fixture("llama-spm"),
            &[],
            "",
            vec![
                (
                    "f16",
                    None,
                    "",
                    vec![],
                    Some("llama-spm/convert-f16".into()),
                ),
                (
                    "q8_0",
                    None,
                    "",
                    vec![],
                    Some("llama-spm/convert-q8_0".into()),
                ),
                (
                    "q4_k_m",
                    None,
                    "",
                    vec![],
                    Some("llama-spm/quant-Q4_K_M".into()),
                ),
            ],
        ),
        (
            "hf-qwen2",
            fixture("qwen2"),
            &[],
            "",
            vec![
                ("bf16", None, "", vec![], Some("qwen2/convert-bf16".into())),
                ("q4_0", None, "", vec![], Some("qwen2/quant-Q4_0".into())),
            ],
        ),
    ];
    if golden.is_some() {
        jobs.push((
            "spm-f16",
            golden_gguf("llama-spm", "convert-f16"),
            &[],
            "",
            vec![
                (
                    "q4_k_m",
                    None,
                    "",
                    vec![],
                    Some("llama-spm/quant-from-f16-Q4_K_M".into()),
                ),
                (
                    "q5_1",
                    None,
                    "",
                    vec![],
                    Some("llama-spm/quant-from-f16-Q5_1".into()),
                ),
            ],
        ));
    }
    // The jobs file.
    let mut toml = String::from("outdir = \"out\"\n");
    for (name, src, _, extra, outs) in &jobs {
        toml += &format!(
            "\n[[job]]\nname = \"{name}\"\nsource = \"{}\"\noutdir = \"out/{name}\"\n{extra}\noutputs = [\n",
            s(src)
        );
        for (t, file, opts, _, _) in outs {
            match file {
                None => toml += &format!("  \"{t}\",\n"),
                Some(f) => toml += &format!("  {{ type = \"{t}\", name = \"{f}\", {opts} }},\n"),
            }
        }
        toml += "]\n";
    }
    toml += "\n[[job]]\nname = \"missing\"\nsource = \"no-such-model\"\noutputs = [\"q4_0\"]\n";
    std::fs::write(work.join("jobs.toml"), &toml).unwrap();

    let o = run(
        &[
            "--batch",
            "jobs.toml",
            "--report",
            "report.jsonl",
            "-j",
            "2",
        ],
        &work,
    );
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "a job fails: {stderr}");
    // Not a terminal: line-oriented progress.
    assert!(stderr.contains("[1/"), "{stderr}");
    assert!(stderr.contains("job done"), "{stderr}");
    let report = lines(&std::fs::read(work.join("report.jsonl")).unwrap());
    let job_records: BTreeMap<String, Json> = report
        .iter()
        .filter(|r| r["type"] == "job")
        .map(|r| (r["name"].as_str().unwrap().to_string(), r.clone()))
        .collect();
    assert_eq!(job_records.len(), jobs.len() + 1);
    let missing = &job_records["missing"];
    assert_eq!(missing["status"], "failed");
    assert!(missing["error"]
        .as_str()
        .unwrap()
        .contains("not a HuggingFace model directory"));

    let mut checked_golden = 0;
    let mut problems = Vec::new();
    for (name, src, extra_single, _, outs) in &jobs {
        let job = &job_records[*name];
        let is_hf = name.starts_with("hf-");
        if is_hf && hf_error.is_some() {
            assert_eq!(job["status"], "failed", "{job}");
            let e = job["error"].as_str().unwrap();
            assert!(e.contains("tokenizer"), "{e}");
            continue;
        }
        assert_eq!(job["status"], "ok", "{job}");
        let recs: Vec<&Json> = report
            .iter()
            .filter(|r| r["type"] == "output" && r["job_name"] == *name)
            .collect();
        assert_eq!(recs.len(), outs.len(), "{name}");
        for (i, (t, file, _, single_extra, gold)) in outs.iter().enumerate() {
            let r = recs
                .iter()
                .find(|r| match file {
                    Some(f) => r["output"].as_str().unwrap().ends_with(f),
                    None => {
                        r["outtype"] == *t
                            && !r["output"].as_str().unwrap().ends_with("imat.gguf")
                            && !r["output"].as_str().unwrap().ends_with("tt.gguf")
                            && !r["output"].as_str().unwrap().ends_with("pure.gguf")
                    }
                })
                .unwrap_or_else(|| panic!("{name} {t}: no record"));
            assert_eq!(r["status"], "done", "{r}");
            let out = work.join(r["output"].as_str().unwrap());
            assert_eq!(r["sha256"], sha(&out).as_str());
            // Against a single-output run.
            let mut args: Vec<&str> = extra_single.to_vec();
            args.extend(single_extra.iter());
            let (p, h) = single(
                src,
                t,
                &args,
                &work.join(format!("single-{name}-{i}")),
                &work,
            );
            assert_eq!(
                r["sha256"],
                h.as_str(),
                "{name} {t}: batch and single outputs differ"
            );
            let _ = std::fs::remove_file(p);
            // Against llama.cpp.
            if let (Some(g), Some(gold)) = (&golden, gold) {
                let f = GgufFile::open(&out).unwrap();
                let d = diff_manifests(
                    &manifest(&f, &out, None),
                    &read_json(&g.join(format!("{gold}.json"))),
                );
                if !d.is_empty() {
                    problems.push(format!(
                        "{name} {t} vs {gold}: {}",
                        d[..d.len().min(3)].join("; ")
                    ));
                }
                checked_golden += 1;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("{checked_golden} batch outputs matched llama.cpp's golden manifests");
    if golden.is_some() {
        assert!(checked_golden >= 12, "only {checked_golden} golden checks");
    }
    record(
        "batch_cli-fixtures",
        checked_golden,
        "batch outputs matched llama.cpp's manifests (and single runs)",
        &[],
    );
    let summary = report.iter().find(|r| r["type"] == "summary").unwrap();
    assert_eq!(
        summary["failed_jobs"].as_u64().unwrap() as usize,
        1 + if hf_error.is_some() { 2 } else { 0 }
    );
}

/// A jobs file whose jobs each write several outputs of the f32 test model.
fn slow_jobs(work: &Path, n_jobs: usize) -> Vec<String> {
    let mut toml = String::new();
    let mut names = Vec::new();
    for j in 0..n_jobs {
        toml += &format!(
            "[[job]]\nname = \"j{j}\"\nsource = \"{}\"\noutdir = \"out/j{j}\"\noutputs = [\"q4_k_m\", \"q6_k\", \"q3_k_m\", \"q5_k_m\", \"q2_k\", \"iq4_xs\"]\n",
            s(&golden_gguf("llama-spm", "convert-f32"))
        );
        for t in ["Q4_K_M", "Q6_K", "Q3_K_M", "Q5_K_M", "Q2_K", "IQ4_XS"] {
            names.push(format!("j{j}/llama-spm-convert-f32-{t}.gguf"));
        }
    }
    std::fs::write(work.join("jobs.toml"), toml).unwrap();
    names
}

fn present(work: &Path, names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|n| work.join("out").join(n).exists())
        .cloned()
        .collect()
}

fn temps(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            v.extend(temps(&e.path()));
        } else if e.file_name().to_string_lossy().contains(".ggufkit-tmp.") {
            v.push(e.path());
        }
    }
    v
}

#[test]
fn a_killed_batch_resumes_with_only_what_is_missing() {
    let work = scratch("batch-kill");
    let names = slow_jobs(&work, 6);
    // The reference: an uninterrupted run elsewhere.
    let reference = scratch("batch-kill-ref");
    slow_jobs(&reference, 6);
    let o = run(&["--batch", "jobs.toml", "-q", "-j", "1"], &reference);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // Kill it (SIGKILL) once the first job's outputs exist, while later jobs are running.
    let mut child = Command::new(BIN)
        .args(["--batch", "jobs.toml", "-q", "-j", "1"])
        .current_dir(&work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        if present(&work, &names).len() >= 6 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the batch finished before it could be killed"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "no output appeared"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done_before = present(&work, &names);
    assert!(
        done_before.len() < names.len(),
        "everything was written before the kill"
    );
    // Whatever exists is complete and correct.
    for n in &done_before {
        assert_eq!(
            sha(&work.join("out").join(n)),
            sha(&reference.join("out").join(n)),
            "{n}"
        );
    }

    // Rerun: only the missing outputs are written, leftovers are cleaned.
    let o = run(
        &[
            "--batch",
            "jobs.toml",
            "--report",
            "r.jsonl",
            "-q",
            "-j",
            "2",
        ],
        &work,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = lines(&std::fs::read(work.join("r.jsonl")).unwrap());
    let recs: BTreeMap<String, String> = report
        .iter()
        .filter(|r| r["type"] == "output")
        .map(|r| {
            let p = PathBuf::from(r["output"].as_str().unwrap());
            let n = p.components().count();
            let rel: PathBuf = p.components().skip(n - 2).collect();
            let rel = rel.to_string_lossy().into_owned();
            (rel, r["status"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(recs.len(), names.len());
    for n in &names {
        let want = if done_before.contains(n) {
            "skipped"
        } else {
            "done"
        };
        assert_eq!(recs[n], want, "{n}");
        assert_eq!(
            sha(&work.join("out").join(n)),
            sha(&reference.join("out").join(n)),
            "{n}"
        );
    }
    assert!(temps(&work).is_empty(), "{:?}", temps(&work));
    let summary = report.iter().find(|r| r["type"] == "summary").unwrap();
    assert_eq!(summary["outputs_skipped"], done_before.len());
    assert_eq!(summary["outputs_written"], names.len() - done_before.len());
}

#[test]
fn reruns_skip_what_is_up_to_date_and_rebuild_what_changed() {
    let work = scratch("batch-rerun");
    let src = work.join("model.gguf");
    std::fs::copy(golden_gguf("llama-spm", "convert-f32"), &src).unwrap();
    let write_jobs = |extra: &str| {
        std::fs::write(
            work.join("jobs.json"),
            format!(
                r#"{{"outdir": "out", "jobs": [{{"source": "model.gguf", "outputs": ["q4_0", {{"type": "q8_0"{extra}}}]}}]}}"#
            ),
        )
        .unwrap();
    };
    write_jobs("");
    let batch = |args: &[&str]| {
        let mut a = vec!["--batch", "jobs.json", "--json", "-q"];
        a.extend_from_slice(args);
        let o = run(&a, &work);
        let status = o.status.code();
        let recs: BTreeMap<String, String> = outputs(&lines(&o.stdout))
            .into_iter()
            .map(|(k, v)| (k, v["status"].as_str().unwrap().to_string()))
            .collect();
        (
            status,
            recs,
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let q4 = "model-Q4_0.gguf";
    let q8 = "model-Q8_0.gguf";
    let (st, r, e) = batch(&[]);
    assert_eq!(st, Some(0), "{e}");
    assert_eq!((r[q4].as_str(), r[q8].as_str()), ("done", "done"));
    // Idempotent.
    let (_, r, _) = batch(&[]);
    assert_eq!((r[q4].as_str(), r[q8].as_str()), ("skipped", "skipped"));
    // A touched output (same bytes, new mtime) is verified by hash and still skipped.
    let f = std::fs::File::options()
        .append(true)
        .open(work.join("out").join(q4))
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(f);
    let (_, r, _) = batch(&[]);
    assert_eq!(r[q4], "skipped");
    // A changed option rebuilds that output only.
    write_jobs(r#", "override_kv": ["general.name=str:renamed"]"#);
    let (_, r, _) = batch(&[]);
    assert_eq!((r[q4].as_str(), r[q8].as_str()), ("skipped", "done"));
    let f = GgufFile::open(&work.join("out").join(q8)).unwrap();
    assert_eq!(f.metadata.get_str("general.name").unwrap(), "renamed");
    // A touched source rebuilds everything.
    let f = std::fs::File::options().append(true).open(&src).unwrap();
    f.set_modified(std::time::SystemTime::now() + Duration::from_secs(10))
        .unwrap();
    drop(f);
    let (_, r, _) = batch(&[]);
    assert_eq!((r[q4].as_str(), r[q8].as_str()), ("done", "done"));
    // A damaged output is rebuilt.
    std::fs::write(work.join("out").join(q4), b"garbage").unwrap();
    let (_, r, _) = batch(&[]);
    assert_eq!((r[q4].as_str(), r[q8].as_str()), ("done", "skipped"));
    // --force rebuilds everything.
    let (_, r, _) = batch(&["--force"]);
    assert_eq!((r[q4].as_str(), r[q8].as_str()), ("done", "done"));
    // A file the batch did not make is not replaced without --force.
    std::fs::remove_file(work.join("out/.ggufkit-batch.json")).unwrap();
    let (st, r, e) = batch(&[]);
    assert_eq!(st, Some(1), "{e}");
    assert_eq!((r[q4].as_str(), r[q8].as_str()), ("failed", "failed"));
    // Leftover temporary files of dead processes are removed.
    let stale = work.join("out/.model-Q4_0.gguf.ggufkit-tmp.4000000001");
    std::fs::write(&stale, b"partial").unwrap();
    let (st, _, e) = batch(&["--force"]);
    assert_eq!(st, Some(0), "{e}");
    assert!(!stale.exists());
    // Dry run: nothing written, everything reported (up-to-date outputs as skipped).
    let (st, r, _) = batch(&["--dry-run"]);
    assert_eq!(st, Some(0));
    assert_eq!((r[q4].as_str(), r[q8].as_str()), ("skipped", "skipped"));
    let (st, r, _) = batch(&["--dry-run", "--force"]);
    assert_eq!(st, Some(0));
    assert_eq!((r[q4].as_str(), r[q8].as_str()), ("planned", "planned"));
}

#[test]
fn usage_errors_exit_with_2() {
    let work = scratch("batch-usage");
    let src = golden_gguf("llama-spm", "convert-f32");
    for (file, text, want) in [
        ("a.toml", "[[job]\n", "a.toml"),
        (
            "b.toml",
            "[[job]]\nsource = \"x\"\noutputs = [\"q4_0\"]\nimatrx = \"y\"\n",
            "unknown field 'imatrx'",
        ),
        (
            "c.json",
            r#"{"jobs": [{"source": "x", "outputs": ["q9_9"]}]}"#,
            "unknown --outtype",
        ),
    ] {
        std::fs::write(work.join(file), text).unwrap();
        let o = run(&["--batch", file], &work);
        assert_eq!(o.status.code(), Some(2), "{file}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(want), "{file}: {e}");
    }
    let o = run(&["--batch", "missing.toml"], &work);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--batch", "a.toml", s(&src)], &work);
    assert_eq!(o.status.code(), Some(2), "--batch with SRC");
    let o = run(
        &[s(&src), s(&work.join("x.gguf")), "--outtype", "q4_0,q8_0"],
        &work,
    );
    assert_eq!(o.status.code(), Some(2), "several types into one file");
    let o = run(&[s(&src), "--outtype", "q4_0,q9_9"], &work);
    assert_eq!(o.status.code(), Some(2));
    let o = run(
        &[s(&src), "--outtype", "q4_0,q8_0", "--max-memory", "lots"],
        &work,
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 3);
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Every golden conversion and one-pass quantization of every fixture, as one batch: one
/// job per fixture whose outputs are all of its variants (each written in the same pass).
#[test]
fn every_golden_variant_as_one_batch() {
    let golden = golden_dir("every_golden_variant_as_one_batch");
    let work = scratch("batch-golden-all");
    for f in ["imatrix.gguf", "imatrix.dat"] {
        std::fs::copy(golden.join("llama-spm/files").join(f), work.join(f)).unwrap();
    }
    // (fixture, variant) → (expected ok, golden manifest)
    let mut expect: BTreeMap<(String, String), (bool, Option<PathBuf>)> = BTreeMap::new();
    let mut toml = String::new();
    let mut not_run = Vec::new();
    for fx in FIXTURES {
        let fdir = golden.join(fx);
        let variants = read_json(&fdir.join("variants.json"));
        let status = read_json(&fdir.join("status.json"));
        let mut outs = Vec::new();
        for v in variants["variants"].as_array().unwrap() {
            let name = v["variant"].as_str().unwrap();
            let args: Vec<&str> = v["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            let ok = v["ok"].as_bool().unwrap();
            let manifest_of = |m: &str| Some(fdir.join(m));
            let entry = match v["tool"].as_str().unwrap() {
                "convert_hf_to_gguf.py" => {
                    let t = args[args.iter().position(|a| *a == "--outtype").unwrap() + 1];
                    let m = match v["manifests"][0].as_str() {
                        Some(m) => manifest_of(m),
                        None => status[name]["identical_to"][0]
                            .as_str()
                            .and_then(|i| manifest_of(&format!("{i}.json"))),
                    };
                    (
                        format!("{{ type = \"{t}\", name = \"{fx}-{name}.gguf\" }}"),
                        m,
                    )
                }
                "llama-quantize" if args.contains(&"{variant:convert-f32}") => {
                    let ftype = *args.last().unwrap();
                    // Q8_0/TQ1_0/TQ2_0 name the converter's own types in gguf-convert.
                    if NOT_YET.contains(&ftype) {
                        not_run.push((format!("{fx}/{name}"), NOT_YET_REASON.to_string()));
                        continue;
                    }
                    if ["Q8_0", "TQ1_0", "TQ2_0"].contains(&ftype) {
                        continue;
                    }
                    let mut opts = String::new();
                    let mut i = 0;
                    while i < args.len() {
                        let (k, val) = (args[i], args.get(i + 1).copied().unwrap_or(""));
                        match k {
                            "--pure" => opts += ", pure = true",
                            "--leave-output-tensor" => opts += ", leave_output_tensor = true",
                            "--imatrix" => opts += &format!(", imatrix = {}", toml_str(val)),
                            "--output-tensor-type" => {
                                opts += &format!(", output_tensor_type = {}", toml_str(val))
                            }
                            "--token-embedding-type" => {
                                opts += &format!(", token_embedding_type = {}", toml_str(val))
                            }
                            "--tensor-type" => {
                                opts += &format!(", tensor_type = [{}]", toml_str(val))
                            }
                            _ => {
                                i += 1;
                                continue;
                            }
                        }
                        i += if k.starts_with("--pure") || k.starts_with("--leave") {
                            1
                        } else {
                            2
                        };
                    }
                    (
                        format!("{{ type = \"{ftype}\", name = \"{fx}-{name}.gguf\"{opts} }}"),
                        v["manifests"][0].as_str().and_then(manifest_of),
                    )
                }
                _ => continue,
            };
            outs.push(entry.0);
            expect.insert((fx.to_string(), name.to_string()), (ok, entry.1));
        }
        toml += &format!(
            "[[job]]\nname = \"{fx}\"\nsource = {}\noutdir = \"out\"\noutputs = [\n  {}\n]\n\n",
            toml_str(s(&fixture(fx))),
            outs.join(",\n  ")
        );
    }
    std::fs::write(work.join("jobs.toml"), &toml).unwrap();
    let o = run(&["--batch", "jobs.toml", "--json", "-q", "-j", "2"], &work);
    let report = lines(&o.stdout);
    let recs = outputs(&report);
    let mut problems = Vec::new();
    let mut matched = 0;
    for ((fx, name), (ok, gold)) in &expect {
        let file = format!("{fx}-{name}.gguf");
        let Some(r) = recs.get(&file) else {
            problems.push(format!("{file}: no report record"));
            continue;
        };
        match (ok, r["status"].as_str().unwrap()) {
            (true, "done") => {
                let Some(gold) = gold else { continue };
                let out = work.join("out").join(&file);
                let f = GgufFile::open(&out).unwrap();
                let d = diff_manifests(&manifest(&f, &out, None), &read_json(gold));
                if d.is_empty() {
                    matched += 1;
                } else {
                    problems.push(format!("{file}: {}", d[..d.len().min(3)].join("; ")));
                }
            }
            (false, "failed") => assert!(!work.join("out").join(&file).exists()),
            (true, st) => problems.push(format!("{file}: {st}: {}", r["error"])),
            (false, st) => problems.push(format!("{file}: llama.cpp failed, we said {st}")),
        }
    }
    eprintln!(
        "{matched} outputs of {} one-pass jobs matched llama.cpp's manifests",
        FIXTURES.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(matched >= 200, "only {matched} golden matches");
    record(
        "batch_cli-every-variant",
        matched,
        "golden variants matched, written as one batch per fixture",
        &not_run,
    );
    // Expected failures (Q2_K_S without an imatrix) make their jobs fail, and only those.
    let want_failed = expect.iter().filter(|(_, (ok, _))| !ok).count() > 0;
    assert_eq!(o.status.code(), Some(if want_failed { 1 } else { 0 }));
}

#[test]
fn split_outputs_equal_split_single_runs() {
    let work = scratch("batch-split");
    let src = golden_gguf("llama-spm", "convert-f32");
    std::fs::write(
        work.join("jobs.toml"),
        format!(
            "[[job]]\nsource = {}\noutdir = \"out\"\noutputs = [{{ type = \"q4_k_m\", split_max_tensors = 10 }}, \"q6_k\"]\n",
            toml_str(s(&src))
        ),
    )
    .unwrap();
    let o = run(&["--batch", "jobs.toml", "--json", "-q"], &work);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = lines(&o.stdout);
    let rec = report
        .iter()
        .find(|r| r["type"] == "output" && r["outtype"] == "q4_k_m")
        .unwrap();
    let files = rec["files"].as_array().unwrap();
    assert_eq!(files.len(), 3, "{rec}");
    let single = work.join("single");
    std::fs::create_dir_all(&single).unwrap();
    let o = run(
        &[
            s(&src),
            "--outtype",
            "q4_k_m",
            "--outdir",
            s(&single),
            "--split-max-tensors",
            "10",
            "-q",
        ],
        &work,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (i, f) in files.iter().enumerate() {
        let p = PathBuf::from(f["path"].as_str().unwrap());
        let name = p.file_name().unwrap();
        assert!(name
            .to_string_lossy()
            .ends_with(&format!("-{:05}-of-00003.gguf", i + 1)));
        assert_eq!(f["sha256"], sha(&single.join(name)).as_str(), "{name:?}");
        assert_eq!(f["sha256"], sha(&work.join(&p)).as_str());
    }
    // A rerun finds every shard up to date.
    let o = run(&["--batch", "jobs.toml", "--json", "-q"], &work);
    let recs = outputs(&lines(&o.stdout));
    assert!(recs.values().all(|r| r["status"] == "skipped"), "{recs:?}");
}

#[test]
fn the_batch_state_and_report_are_never_written_over_an_input() {
    let work = scratch("batch-no-input-writes");
    let src = work.join("model.gguf");
    std::fs::copy(golden_gguf("llama-spm", "convert-f32"), &src).unwrap();
    std::fs::write(
        work.join("jobs.json"),
        r#"{"outdir": "out", "jobs": [{"source": "model.gguf", "outputs": ["q8_0"]}]}"#,
    )
    .unwrap();
    let (src_sha, jobs_sha) = (sha(&src), sha(&work.join("jobs.json")));
    let unchanged = |what: &str| {
        assert_eq!(sha(&src), src_sha, "{what}: the source changed");
        assert_eq!(
            sha(&work.join("jobs.json")),
            jobs_sha,
            "{what}: the jobs file changed"
        );
    };
    std::fs::create_dir_all(work.join("out")).unwrap();
    let state = work.join("out/.ggufkit-batch.json");
    let journal = work.join("out/.ggufkit-batch.json.journal");
    // The state file (and its journal) as symlinks to the source and to the jobs file.
    for (link, to) in [
        (&state, &src),
        (&state, &work.join("jobs.json")),
        (&journal, &src),
    ] {
        let _ = std::fs::remove_file(&state);
        let _ = std::fs::remove_file(&journal);
        if link == &journal {
            // A journal counts beside a real state file.
            let o = run(&["--batch", "jobs.json", "-q", "--force"], &work);
            assert_eq!(o.status.code(), Some(0));
        }
        std::os::unix::fs::symlink(to, link).unwrap();
        let o = run(&["--batch", "jobs.json", "-q", "--force"], &work);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{}: {e}", link.display());
        assert!(e.contains("symlink"), "{e}");
        unchanged(&link.display().to_string());
        assert!(std::fs::symlink_metadata(link).unwrap().is_symlink());
    }
    let _ = std::fs::remove_file(&state);
    let _ = std::fs::remove_file(&journal);
    // --report naming an input: refused before anything runs.
    for (report, what) in [
        ("jobs.json", "the jobs file"),
        ("model.gguf", "a source"),
        ("link.jsonl", "a link to a source"),
    ] {
        if report == "link.jsonl" {
            std::os::unix::fs::symlink(&src, work.join(report)).unwrap();
        }
        let o = run(&["--batch", "jobs.json", "-q", "--report", report], &work);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {e}");
        assert!(e.contains("input"), "{what}: {e}");
        unchanged(what);
    }
    let o = run(
        &[
            "--batch",
            "jobs.json",
            "-q",
            "--force",
            "--report",
            "report.jsonl",
        ],
        &work,
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(!lines(&std::fs::read(work.join("report.jsonl")).unwrap()).is_empty());
    std::fs::remove_dir_all(&work).unwrap();
}
