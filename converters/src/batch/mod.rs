//! Batch conversion: several outputs from one read of each source, several sources
//! (jobs) at once, resumable, with a JSON Lines report.
//!
//! * [`plan`]: source → output [`Model`](ggufkit::ir::Model), the planning half of
//!   `gguf-convert`, shared by single conversions and batches.
//! * [`share`]: which output tensors are encodings of a base tensor (read and converted to
//!   f32 once for all outputs of a job), identical encodings computed once, and the use
//!   counts that drop each computed tensor after its last writer.
//! * [`engine`]: N writers advancing together, a bounded window of tensors at a time.
//! * [`jobs`]: jobs files (TOML or JSON).
//! * [`state`]: fingerprints and the per-directory state that makes reruns skip what is
//!   up to date.
//! * [`progress`]: multi-bar or line-oriented progress.
//!
//! [`run_batch`] ties them together: jobs run concurrently (at most one per thread of the
//! budget, each admitted when its memory reservation fits in `max_memory`), each job
//! plans its outputs, skips those that are up to date, writes the others in one pass, and
//! reports every output and job as a JSON line. A failing job does not stop the others.

pub mod engine;
pub mod jobs;
pub mod plan;
pub mod progress;
pub mod shard;
pub mod share;
pub mod state;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use serde_json::{json, Value as Json};

use ggufkit::ir::Model;
use ggufkit::split::{distribute, split_path};

use engine::{EngineOptions, Hooks, OutputPlan, ShardPlan, WrittenOutput};
pub use jobs::{JobSpec, OutputSpec};
use plan::{PlanError, Source};
use progress::Progress;
use state::Fingerprint;

/// Options of a whole batch.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Memory budget shared by the running jobs (tensors in flight and products waiting;
    /// not counting mapped input files, which the OS pages in and out).
    pub max_memory: u64,
    /// Worker threads (also the most jobs that run at once).
    pub threads: usize,
    /// Rebuild outputs even when up to date, and replace files the batch did not make.
    pub force: bool,
    /// Plan and report, write nothing.
    pub dry_run: bool,
    /// Sync outputs to disk before renaming them into place.
    pub sync: bool,
    /// Files of the run besides the jobs' own (the jobs file, the report) that no output
    /// may replace.
    pub inputs: Vec<PathBuf>,
}

/// The JSON Lines report: one object per line, flushed as it is written.
pub struct Report {
    sink: Mutex<Vec<Box<dyn Write + Send>>>,
}

impl Report {
    /// A report written to these sinks (a file, stdout, both or none).
    pub fn new(sinks: Vec<Box<dyn Write + Send>>) -> Report {
        Report {
            sink: Mutex::new(sinks),
        }
    }

    /// Writes one record.
    pub fn emit(&self, record: &Json) {
        let line = serde_json::to_string(record).expect("json");
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        for w in s.iter_mut() {
            let _ = writeln!(w, "{line}");
            let _ = w.flush();
        }
    }
}

/// What a batch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Jobs run.
    pub jobs: usize,
    /// Jobs with at least one failed output (or no source).
    pub failed_jobs: usize,
    /// Outputs written.
    pub written: usize,
    /// Outputs up to date.
    pub skipped: usize,
    /// Outputs that failed.
    pub failed: usize,
}

/// Memory reservations of running jobs.
struct MemoryPool {
    max: u64,
    used: Mutex<u64>,
    freed: Condvar,
}

impl MemoryPool {
    fn acquire(&self, bytes: u64) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        while *used > 0 && *used + bytes > self.max {
            used = self.freed.wait(used).unwrap_or_else(|e| e.into_inner());
        }
        *used += bytes;
    }

    fn release(&self, bytes: u64) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        *used -= bytes;
        self.freed.notify_all();
    }
}

/// Runs `jobs` and reports them; returns the counts.
pub fn run_batch(
    jobs: &[JobSpec],
    opts: &BatchOptions,
    report: &Report,
    progress: &Progress,
) -> Summary {
    let t0 = Instant::now();
    let slots = opts.threads.max(1).min(jobs.len().max(1));
    let pool = MemoryPool {
        max: opts.max_memory.max(1),
        used: Mutex::new(0),
        freed: Condvar::new(),
    };
    let next = AtomicUsize::new(0);
    let claimed: Mutex<HashMap<PathBuf, usize>> = Mutex::new(HashMap::new());
    let results: Mutex<Vec<(usize, JobOutcome)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..slots {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= jobs.len() {
                    break;
                }
                let share = opts.max_memory / slots as u64;
                let ctx = JobContext {
                    opts,
                    share,
                    pool: &pool,
                    report,
                    progress,
                    claimed: &claimed,
                };
                let r = run_job(i, &jobs[i], &ctx);
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, r));
            });
        }
    });
    let mut sum = Summary {
        jobs: jobs.len(),
        ..Default::default()
    };
    for (_, r) in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        sum.written += r.written;
        sum.skipped += r.skipped;
        sum.failed += r.failed;
        if r.error.is_some() || r.failed > 0 {
            sum.failed_jobs += 1;
        }
    }
    progress.finish();
    report.emit(&json!({
        "type": "summary",
        "jobs": sum.jobs,
        "failed_jobs": sum.failed_jobs,
        "outputs_written": sum.written,
        "outputs_skipped": sum.skipped,
        "outputs_failed": sum.failed,
        "threads": opts.threads,
        "max_memory": opts.max_memory,
        "dry_run": opts.dry_run,
        "seconds": t0.elapsed().as_secs_f64(),
    }));
    sum
}

#[derive(Default)]
struct JobOutcome {
    written: usize,
    skipped: usize,
    failed: usize,
    error: Option<String>,
}

/// One output of a job, planned.
struct Prepared {
    spec_index: usize,
    path: PathBuf,
    shard_paths: Vec<PathBuf>,
    model: Model,
    shard_of: Vec<usize>,
    fingerprint: String,
    notes: Vec<String>,
}

fn output_record(job: usize, spec: &JobSpec, o: &OutputSpec, path: &Path) -> Json {
    json!({
        "type": "output",
        "job": job + 1,
        "job_name": spec.label,
        "source": spec.source,
        "outtype": o.outtype,
        "output": path,
    })
}

fn merge(mut a: Json, b: Json) -> Json {
    if let (Some(a), Json::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

fn tensor_stats(model: &Model) -> (u64, u64) {
    let bytes = model
        .tensors
        .iter()
        .map(|t| ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0))
        .sum();
    let n = model.tensors.iter().map(|t| t.n_elements()).sum();
    (bytes, n)
}

fn bpw(bytes: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / n as f64
    }
}

fn fingerprint(spec: &JobSpec, source: &Source, o: &OutputSpec, path: &Path) -> String {
    let mut fp = Fingerprint::new();
    fp.value("source_kind", json!(format!("{:?}", source.kind)));
    for f in source.files() {
        fp.file("source", &f);
    }
    if let Some(m) = &spec.source_opts.metadata {
        fp.file("metadata", m);
    }
    if let Some(i) = &o.opts.imatrix {
        fp.file("imatrix", i);
    }
    // Options as their Debug text: every field, in declaration order (a dry run plans the
    // same outputs).
    let mut so = spec.source_opts.clone();
    so.dry_run = false;
    let mut oo = o.opts.clone();
    oo.dry_run = false;
    fp.value("source_options", json!(format!("{so:?}")));
    fp.value("target", json!(o.target.label()));
    fp.value("output_options", json!(format!("{oo:?}")));
    fp.value("split", json!(format!("{:?}", o.split)));
    fp.value(
        "output",
        json!(std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())),
    );
    fp.finish()
}

fn shard_paths(path: &Path, n: usize) -> Vec<PathBuf> {
    if n <= 1 {
        return vec![path.to_path_buf()];
    }
    let s = path.to_string_lossy();
    let prefix = s.strip_suffix(".gguf").unwrap_or(&s).to_string();
    (0..n).map(|i| split_path(&prefix, i, n)).collect()
}

struct JobHooks<'a> {
    job: usize,
    progress: &'a Progress,
    prepared: &'a [Prepared],
}

impl Hooks for JobHooks<'_> {
    fn progress(&self, index: usize, bytes: u64) {
        self.progress.output_progress(self.job, index, bytes);
    }

    fn before_commit(&self, index: usize, out: &WrittenOutput) -> Result<(), String> {
        let p = &self.prepared[index];
        let rec = state::record_for(&p.fingerprint, &out.files, false);
        state::store(&p.path, Some(&rec))
            .map_err(|e| format!("cannot record the output in the batch state: {e}"))
    }
}

/// What every job of a batch shares.
struct JobContext<'a> {
    opts: &'a BatchOptions,
    /// The job's default share of the memory budget.
    share: u64,
    pool: &'a MemoryPool,
    report: &'a Report,
    progress: &'a Progress,
    /// Output paths already claimed, by job (two jobs must not write one file).
    claimed: &'a Mutex<HashMap<PathBuf, usize>>,
}

fn run_job(job: usize, spec: &JobSpec, ctx: &JobContext) -> JobOutcome {
    let JobContext {
        opts,
        share,
        pool,
        report,
        progress,
        claimed,
    } = *ctx;
    let t0 = Instant::now();
    let mut out = JobOutcome::default();
    let job_record = |out: &JobOutcome, extra: Json| {
        merge(
            json!({
                "type": "job",
                "job": job + 1,
                "name": spec.label,
                "source": spec.source,
                "status": if out.error.is_some() || out.failed > 0 { "failed" } else { "ok" },
                "outputs": spec.outputs.len(),
                "written": out.written,
                "skipped": out.skipped,
                "failed": out.failed,
                "error": out.error,
                "seconds": t0.elapsed().as_secs_f64(),
            }),
            extra,
        )
    };
    let mut sopts = spec.source_opts.clone();
    sopts.dry_run = opts.dry_run;
    let source = match Source::open(&spec.source, sopts) {
        Ok(s) => s,
        Err(e) => {
            out.error = Some(e.to_string());
            out.failed = spec.outputs.len();
            progress.job_done(job, &spec.label, out.error.as_deref());
            report.emit(&job_record(&out, json!({})));
            return out;
        }
    };
    if let Err(e) = std::fs::create_dir_all(&spec.outdir) {
        out.error = Some(format!("{}: {e}", spec.outdir.display()));
        out.failed = spec.outputs.len();
        progress.job_done(job, &spec.label, out.error.as_deref());
        report.emit(&job_record(&out, json!({})));
        return out;
    }
    state::clean_temps(&spec.outdir);

    // Plan every output; skip those that are up to date.
    let mut prepared: Vec<Prepared> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut fail = |o: &OutputSpec, path: &Path, e: String, out: &mut JobOutcome| {
        out.failed += 1;
        errors.push(e.clone());
        report.emit(&merge(
            output_record(job, spec, o, path),
            json!({"status": "failed", "error": e}),
        ));
    };
    for (k, o) in spec.outputs.iter().enumerate() {
        let mut oo = o.opts.clone();
        oo.dry_run = opts.dry_run;
        let planned = match source.plan_output(o.target, &oo) {
            Ok(p) => p,
            Err(e) => {
                let path = o
                    .name
                    .as_ref()
                    .map_or_else(|| spec.outdir.clone(), |n| spec.outdir.join(n));
                fail(o, &path, e.to_string(), &mut out);
                continue;
            }
        };
        let path = match &o.name {
            Some(n) => spec.outdir.join(n),
            None => spec.outdir.join(&planned.default_name),
        };
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(state::STATE_FILE))
        {
            fail(
                o,
                &path,
                format!(
                    "{}: that name is reserved for the batch state file",
                    path.display()
                ),
                &mut out,
            );
            continue;
        }
        let abs = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        let other = *claimed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(abs)
            .or_insert(job);
        if other != job || prepared.iter().any(|p| p.path == path) {
            fail(
                o,
                &path,
                format!("job {} writes another output to the same path", other + 1),
                &mut out,
            );
            continue;
        }
        let sizes: Vec<u64> = planned
            .model
            .tensors
            .iter()
            .map(|t| ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0))
            .collect();
        if source.opts.vocab_only && o.split.splitting() {
            fail(o, &path, "--vocab-only cannot be split".into(), &mut out);
            continue;
        }
        let shard_of = o.split.assign(&sizes);
        let n_shards = shard_of.iter().copied().max().map_or(1, |m| m + 1);
        let shard_paths = shard_paths(&path, n_shards);
        let fp = fingerprint(spec, &source, o, &path);
        let (tbytes, n_el) = tensor_stats(&planned.model);
        let base = output_record(job, spec, o, &path);
        if !opts.force {
            if let Some(rec) = state::lookup(&path) {
                if rec.fingerprint == fp && state::verify(&path, &rec) {
                    out.skipped += 1;
                    report.emit(&merge(
                        base,
                        json!({
                            "status": "skipped",
                            "reason": "up to date",
                            "size": rec.files.iter().map(|f| f.size).sum::<u64>(),
                            "sha256": (rec.files.len() == 1).then(|| rec.files[0].sha256.clone()),
                            "files": rec.files.iter().map(|f| json!({"path": f.path, "size": f.size, "sha256": f.sha256})).collect::<Vec<_>>(),
                            "tensor_bytes": tbytes,
                            "bits_per_weight": bpw(tbytes, n_el),
                        }),
                    ));
                    progress.output_skipped(job, &spec.label, &path.display().to_string());
                    continue;
                }
            } else if let Some(p) = shard_paths.iter().find(|p| p.exists()) {
                fail(
                    o,
                    &path,
                    format!(
                        "{} exists and was not made by this batch (use --force to replace it)",
                        p.display()
                    ),
                    &mut out,
                );
                continue;
            }
        }
        if opts.dry_run {
            report.emit(&merge(
                base,
                json!({
                    "status": "planned",
                    "files": shard_paths,
                    "tensors": planned.model.tensors.len(),
                    "tensor_bytes": tbytes,
                    "bits_per_weight": bpw(tbytes, n_el),
                    "notes": planned.notes,
                }),
            ));
            continue;
        }
        prepared.push(Prepared {
            spec_index: k,
            path,
            shard_paths,
            model: planned.model,
            shard_of,
            fingerprint: fp,
            notes: planned.notes,
        });
    }

    if !prepared.is_empty() {
        // Share the f32 stage when there is more than one output to write.
        let base: Option<&Model> = if prepared.len() > 1 {
            source.base().ok().map(|b| &b.model)
        } else {
            None
        };
        let empty = Model::default();
        let base = base.unwrap_or(&empty);
        let plans: Vec<OutputPlan> = prepared
            .iter()
            .map(|p| {
                let mut parts = distribute(&p.model, &p.shard_of);
                if parts.is_empty() {
                    parts.push(p.model.clone());
                }
                OutputPlan {
                    shards: parts
                        .into_iter()
                        .zip(&p.shard_paths)
                        .map(|(model, path)| ShardPlan {
                            path: path.clone(),
                            model,
                        })
                        .collect(),
                    recipes: share::rebase(base, &p.model),
                    vocab_only: source.opts.vocab_only,
                }
            })
            .collect();
        let need = engine::minimum_budget(base, &plans);
        let reserve = share.max(need).min(opts.max_memory.max(need));
        let listing: Vec<(String, u64)> = prepared
            .iter()
            .map(|p| {
                (
                    p.path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    tensor_stats(&p.model).0,
                )
            })
            .collect();
        pool.acquire(reserve);
        progress.job_started(job, &spec.label, &listing, 0);
        let hooks = JobHooks {
            job,
            progress,
            prepared: &prepared,
        };
        let mut inputs = source.files();
        inputs.extend(opts.inputs.iter().cloned());
        inputs.extend(spec.outputs.iter().filter_map(|o| o.opts.imatrix.clone()));
        let eopts = EngineOptions {
            budget: reserve,
            inputs,
            overwrite: true,
            sync: opts.sync,
        };
        let (results, stats) = engine::write_outputs(base, &plans, &eopts, &hooks);
        pool.release(reserve);
        for (k, (p, r)) in prepared.iter().zip(results).enumerate() {
            let o = &spec.outputs[p.spec_index];
            match r {
                Ok(w) => {
                    let rec = state::record_for(&p.fingerprint, &w.files, true);
                    let _ = state::store(&p.path, Some(&rec));
                    out.written += 1;
                    report.emit(&merge(
                        output_record(job, spec, o, &p.path),
                        json!({
                            "status": "done",
                            "size": w.size(),
                            "sha256": (w.files.len() == 1).then(|| w.files[0].sha256.clone()),
                            "files": w.files.iter().map(|f| json!({"path": f.path, "size": f.size, "sha256": f.sha256})).collect::<Vec<_>>(),
                            "tensors": p.model.tensors.len(),
                            "tensor_bytes": w.tensor_bytes,
                            "bits_per_weight": w.bits_per_weight(),
                            "seconds": w.seconds,
                            "notes": p.notes,
                        }),
                    ));
                    progress.output_done(
                        job,
                        &spec.label,
                        Some(k),
                        "done",
                        &format!(
                            "{} ({}, {:.2} bpw) in {:.1}s",
                            p.path.display(),
                            ggufkit::inspect::human_bytes(w.size()),
                            w.bits_per_weight(),
                            w.seconds
                        ),
                    );
                }
                Err(e) => {
                    let msg = e.to_string();
                    progress.output_done(
                        job,
                        &spec.label,
                        Some(k),
                        "FAILED",
                        &format!("{}: {msg}", p.path.display()),
                    );
                    fail(o, &p.path, msg, &mut out);
                }
            }
        }
        if let Err(e) = state::settle(&spec.outdir) {
            errors.push(format!("cannot write the batch state: {e}"));
        }
        if !errors.is_empty() {
            out.error = Some(errors.join("; "));
        }
        progress.job_done(job, &spec.label, out.error.as_deref());
        report.emit(&job_record(
            &out,
            json!({
                "shared_f32_tensors": stats.shared_keys,
                "f32_decoded": stats.decoded,
                "peak_cache_bytes": stats.peak_cache_bytes,
                "memory_budget": reserve,
            }),
        ));
        return out;
    }
    if !errors.is_empty() {
        out.error = Some(errors.join("; "));
    }
    progress.job_done(job, &spec.label, out.error.as_deref());
    report.emit(&job_record(&out, json!({})));
    out
}

/// A usage problem of a batch request (for the CLI's exit status 2).
pub fn is_usage(e: &PlanError) -> bool {
    matches!(e, PlanError::Usage(_))
}
