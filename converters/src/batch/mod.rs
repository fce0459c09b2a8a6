//! Batch conversion: several outputs from one read of each source, several sources
//! (jobs) at once, resumable, with a JSON Lines report.
//!
//! * [`plan`]: source → output [`Model`](ggufkit::ir::Model), the planning half of
//!   `gguf-convert`, shared by single conversions and batches.
//! * [`jobs`]: jobs files (TOML or JSON).
//! * [`state`]: fingerprints and the per-directory state that makes reruns skip what is
//!   up to date.
//! * [`progress`]: multi-bar or line-oriented progress.
//!
//! [`run_batch`] ties them together: jobs run concurrently (at most one per thread of the
//! budget, each admitted when its memory reservation fits in `max_memory`), each job
//! plans its outputs, skips those that are up to date, writes the others in one pass of the
//! output engine ([`ggufkit::pipeline`], which computes the f32 stage the outputs share
//! once), and reports every output and job as a JSON line. A failing job does not stop the
//! others.

pub mod jobs;
pub mod plan;
pub mod progress;
pub mod shard;
pub mod state;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use serde_json::{json, Value as Json};

use ggufkit::gguf::ByteOrder;
use ggufkit::ir::Model;
use ggufkit::split::{distribute, split_path};

use crate::remote::config::offline_from_env;
use crate::remote::source::{open_source, RemoteSource};

use ggufkit::pipeline::{
    self, ExecuteOptions, Observer, OutputPlan, PipelineError, ShardPlan, WriteOptions,
    WrittenOutput,
};
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
    /// The HTTP client of the jobs whose source is remote (`hf://org/name`, a URL); without
    /// one such a job fails.
    pub remote: Option<Arc<crate::remote::Client>>,
}

/// The directory of an output directory where remote plain directories' small files are
/// kept between runs (so that a resumed batch finds them unchanged).
pub const REMOTE_DIR: &str = ".ggufkit-remote";

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

fn nbytes(t: &ggufkit::ir::Tensor) -> u64 {
    ggufkit::gguf::tensor_nbytes(t.ty, &t.dims).unwrap_or(0)
}

fn tensor_stats(model: &Model) -> (u64, u64) {
    let bytes = model.tensors.iter().map(nbytes).sum();
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
    if let Some(r) = &source.remote {
        fp.value("remote", json!(r));
    }
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

/// The engine's observer for one job: progress display and the state journal.
struct JobObserver<'a> {
    job: usize,
    progress: &'a Progress,
    prepared: &'a [Prepared],
}

impl Observer for JobObserver<'_> {
    fn tensor_written(&self, output: usize, _tensor: usize, bytes: u64) {
        self.progress.output_progress(self.job, output, bytes);
    }

    fn before_commit(&self, output: usize, written: &WrittenOutput) -> Result<(), String> {
        let p = &self.prepared[output];
        let rec = state::record_for(&p.fingerprint, &written.files, false);
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

/// One job as it runs: its counts, its errors, and what it reports.
struct JobRun<'a> {
    job: usize,
    spec: &'a JobSpec,
    ctx: &'a JobContext<'a>,
    t0: Instant,
    out: JobOutcome,
    errors: Vec<String>,
    /// The paths of the outputs planned for writing so far.
    to_write: Vec<PathBuf>,
}

/// What planning one output of a job gave.
enum Planned {
    /// To write.
    Write(Box<Prepared>),
    /// Reported already (skipped, failed or, in a dry run, planned).
    Reported,
}

fn run_job(job: usize, spec: &JobSpec, ctx: &JobContext) -> JobOutcome {
    let mut run = JobRun {
        job,
        spec,
        ctx,
        t0: Instant::now(),
        out: JobOutcome::default(),
        errors: Vec::new(),
        to_write: Vec::new(),
    };
    let source = match run.open() {
        Ok(s) => s,
        Err(e) => return run.abort(e),
    };
    let prepared: Vec<Prepared> = (0..spec.outputs.len())
        .filter_map(|k| match run.plan_output(&source, k) {
            Planned::Write(p) => Some(*p),
            Planned::Reported => None,
        })
        .collect();
    if prepared.is_empty() {
        return run.finish(json!({}));
    }
    let extra = run.write(&source, &prepared);
    if let Err(e) = state::settle(&spec.outdir) {
        run.errors
            .push(format!("cannot write the batch state: {e}"));
    }
    run.finish(extra)
}

impl JobRun<'_> {
    /// Opens the source and the output directory (clearing dead runs' temporary files).
    fn open(&self) -> Result<Source, String> {
        let mut sopts = self.spec.source_opts.clone();
        sopts.dry_run = self.ctx.opts.dry_run;
        std::fs::create_dir_all(&self.spec.outdir)
            .map_err(|e| format!("{}: {e}", self.spec.outdir.display()))?;
        let (path, remote) = match RemoteSource::parse(&self.spec.source) {
            None => (self.spec.source.clone(), None),
            Some(r) => {
                let client = self.ctx.opts.remote.as_ref().ok_or_else(|| {
                    format!(
                        "{}: a remote source, and no HTTP client",
                        self.spec.source.display()
                    )
                })?;
                let opened = open_source(
                    &r,
                    client,
                    crate::hub::cache_dir().as_deref(),
                    offline_from_env(),
                    &self.spec.outdir.join(REMOTE_DIR),
                )
                .map_err(|e| e.to_string())?;
                if sopts.model_name.is_none() {
                    sopts.model_name = opened.model_name;
                }
                (opened.dir, Some(opened.identity))
            }
        };
        let mut source = Source::open(&path, sopts).map_err(|e| e.to_string())?;
        source.remote = remote;
        state::clean_temps(&self.spec.outdir);
        Ok(source)
    }

    /// The job failed before planning: every output fails with it.
    fn abort(mut self, error: String) -> JobOutcome {
        self.out.error = Some(error);
        self.out.failed = self.spec.outputs.len();
        self.ctx
            .progress
            .job_done(self.job, &self.spec.label, self.out.error.as_deref());
        self.ctx.report.emit(&self.job_record(json!({})));
        self.out
    }

    /// Reports the job (with `extra` fields) and returns its counts.
    fn finish(mut self, extra: Json) -> JobOutcome {
        if !self.errors.is_empty() {
            self.out.error = Some(self.errors.join("; "));
        }
        self.ctx
            .progress
            .job_done(self.job, &self.spec.label, self.out.error.as_deref());
        self.ctx.report.emit(&self.job_record(extra));
        self.out
    }

    fn job_record(&self, extra: Json) -> Json {
        let out = &self.out;
        merge(
            json!({
                "type": "job",
                "job": self.job + 1,
                "name": self.spec.label,
                "source": self.spec.source,
                "status": if out.error.is_some() || out.failed > 0 { "failed" } else { "ok" },
                "outputs": self.spec.outputs.len(),
                "written": out.written,
                "skipped": out.skipped,
                "failed": out.failed,
                "error": out.error,
                "seconds": self.t0.elapsed().as_secs_f64(),
            }),
            extra,
        )
    }

    /// Output `o` failed: counted, reported.
    fn fail(&mut self, o: &OutputSpec, path: &Path, e: String) {
        self.out.failed += 1;
        self.errors.push(e.clone());
        self.ctx.report.emit(&merge(
            output_record(self.job, self.spec, o, path),
            json!({"status": "failed", "error": e}),
        ));
    }

    /// Plans output `k`: its model, its path (claimed for this job), its shards; reports it
    /// when it fails, is up to date or (in a dry run) is planned.
    fn plan_output(&mut self, source: &Source, k: usize) -> Planned {
        let (spec, opts) = (self.spec, self.ctx.opts);
        let o = &spec.outputs[k];
        let mut oo = o.opts.clone();
        oo.dry_run = opts.dry_run;
        let planned = match source.plan_output(o.target, &oo) {
            Ok(p) => p,
            Err(e) => {
                let path = o
                    .name
                    .as_ref()
                    .map_or_else(|| spec.outdir.clone(), |n| spec.outdir.join(n));
                self.fail(o, &path, e.to_string());
                return Planned::Reported;
            }
        };
        let path = match &o.name {
            Some(n) => spec.outdir.join(n),
            // A remote model's name is its id (`org/name`): one file name, not a path.
            None if source.remote.is_some() => {
                spec.outdir.join(planned.default_name.replace('/', "-"))
            }
            None => spec.outdir.join(&planned.default_name),
        };
        if let Err(e) = self.claim(&path) {
            self.fail(o, &path, e);
            return Planned::Reported;
        }
        if source.opts.vocab_only && o.split.splitting() {
            self.fail(o, &path, "--vocab-only cannot be split".into());
            return Planned::Reported;
        }
        let sizes: Vec<u64> = planned.model.tensors.iter().map(nbytes).collect();
        let shard_of = o.split.assign(&sizes);
        let n_shards = shard_of.iter().copied().max().map_or(1, |m| m + 1);
        let p = Prepared {
            spec_index: k,
            shard_paths: shard_paths(&path, n_shards),
            fingerprint: fingerprint(spec, source, o, &path),
            path,
            model: planned.model,
            shard_of,
            notes: planned.notes,
        };
        if !opts.force && self.up_to_date_or_foreign(o, &p) {
            return Planned::Reported;
        }
        if opts.dry_run {
            let (tbytes, n_el) = tensor_stats(&p.model);
            self.ctx.report.emit(&merge(
                output_record(self.job, spec, o, &p.path),
                json!({
                    "status": "planned",
                    "files": p.shard_paths,
                    "tensors": p.model.tensors.len(),
                    "tensor_bytes": tbytes,
                    "bits_per_weight": bpw(tbytes, n_el),
                    "notes": p.notes,
                }),
            ));
            return Planned::Reported;
        }
        self.to_write.push(p.path.clone());
        Planned::Write(Box::new(p))
    }

    /// Claims `path` for this job: refused when another job, or another output this job
    /// writes, has it, or when it names the state file.
    fn claim(&self, path: &Path) -> Result<(), String> {
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(state::STATE_FILE))
        {
            return Err(format!(
                "{}: that name is reserved for the batch state file",
                path.display()
            ));
        }
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let other = *self
            .ctx
            .claimed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(abs)
            .or_insert(self.job);
        if other != self.job || self.to_write.iter().any(|p| p == path) {
            return Err(format!(
                "job {} writes another output to the same path",
                other + 1
            ));
        }
        Ok(())
    }

    /// True when output `p` was reported: up to date (skipped) or in the way of a file this
    /// batch did not make (failed).
    fn up_to_date_or_foreign(&mut self, o: &OutputSpec, p: &Prepared) -> bool {
        let Some(rec) = state::lookup(&p.path) else {
            if let Some(f) = p.shard_paths.iter().find(|f| f.exists()) {
                let e = format!(
                    "{} exists and was not made by this batch (use --force to replace it)",
                    f.display()
                );
                self.fail(o, &p.path, e);
                return true;
            }
            return false;
        };
        if rec.fingerprint != p.fingerprint || !state::verify(&p.path, &rec) {
            return false;
        }
        let (tbytes, n_el) = tensor_stats(&p.model);
        self.out.skipped += 1;
        self.ctx.report.emit(&merge(
            output_record(self.job, self.spec, o, &p.path),
            json!({
                "status": "skipped",
                "reason": "up to date",
                "size": rec.files.iter().map(|f| f.size).sum::<u64>(),
                "sha256": (rec.files.len() == 1).then(|| rec.files[0].sha256.clone()),
                "files": files_json(rec.files.iter().map(|f| (&f.path, f.size, &f.sha256))),
                "tensor_bytes": tbytes,
                "bits_per_weight": bpw(tbytes, n_el),
            }),
        ));
        self.ctx
            .progress
            .output_skipped(self.job, &self.spec.label, &p.path.display().to_string());
        true
    }

    /// Writes the prepared outputs in one pass within the job's memory reservation, reports
    /// each; returns the job record's counters of the pass.
    fn write(&mut self, source: &Source, prepared: &[Prepared]) -> Json {
        let ctx = self.ctx;
        let mut inputs = source.files();
        inputs.extend(ctx.opts.inputs.iter().cloned());
        inputs.extend(
            self.spec
                .outputs
                .iter()
                .filter_map(|o| o.opts.imatrix.clone()),
        );
        let options = WriteOptions {
            inputs,
            overwrite: true,
            sync: ctx.opts.sync,
            digest: true,
            vocab_only: source.opts.vocab_only,
            byte_order: if source.opts.big_endian {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            },
            ..WriteOptions::default()
        };
        let plans: Vec<OutputPlan> = prepared.iter().map(|p| p.plan(&options)).collect();
        let need = pipeline::minimum_budget(&plans);
        let reserve = ctx.share.max(need).min(ctx.opts.max_memory.max(need));
        let listing: Vec<(String, u64)> = prepared
            .iter()
            .map(|p| {
                let name = p.path.file_name().map(|n| n.to_string_lossy().into_owned());
                (name.unwrap_or_default(), tensor_stats(&p.model).0)
            })
            .collect();
        ctx.pool.acquire(reserve);
        ctx.progress
            .job_started(self.job, &self.spec.label, &listing, 0);
        let observer = JobObserver {
            job: self.job,
            progress: ctx.progress,
            prepared,
        };
        let (results, stats) =
            pipeline::execute(&plans, &ExecuteOptions { budget: reserve }, &observer);
        ctx.pool.release(reserve);
        for (k, (p, r)) in prepared.iter().zip(results).enumerate() {
            self.report_written(k, p, r);
        }
        json!({
            "shared_f32_tensors": stats.shared_keys,
            "f32_decoded": stats.decoded,
            "peak_cache_bytes": stats.peak_cache_bytes,
            "memory_budget": reserve,
        })
    }

    /// Reports output `k` of the pass (records it in the state journal when written).
    fn report_written(&mut self, k: usize, p: &Prepared, r: Result<WrittenOutput, PipelineError>) {
        let (job, spec, progress) = (self.job, self.spec, self.ctx.progress);
        let o = &spec.outputs[p.spec_index];
        let w = match r {
            Ok(w) => w,
            Err(e) => {
                let msg = e.to_string();
                let line = format!("{}: {msg}", p.path.display());
                progress.output_done(job, &spec.label, Some(k), "FAILED", &line);
                self.fail(o, &p.path, msg);
                return;
            }
        };
        let rec = state::record_for(&p.fingerprint, &w.files, true);
        let _ = state::store(&p.path, Some(&rec));
        self.out.written += 1;
        self.ctx.report.emit(&merge(
            output_record(job, spec, o, &p.path),
            json!({
                "status": "done",
                "size": w.size(),
                "sha256": (w.files.len() == 1).then(|| w.files[0].sha256.clone()),
                "files": files_json(w.files.iter().map(|f| (&f.path, f.size, &f.sha256))),
                "tensors": p.model.tensors.len(),
                "tensor_bytes": w.tensor_bytes,
                "bits_per_weight": w.bits_per_weight(),
                "seconds": w.seconds,
                "notes": p.notes,
            }),
        ));
        let line = format!(
            "{} ({}, {:.2} bpw) in {:.1}s",
            p.path.display(),
            ggufkit::inspect::human_bytes(w.size()),
            w.bits_per_weight(),
            w.seconds
        );
        progress.output_done(job, &spec.label, Some(k), "done", &line);
    }
}

impl Prepared {
    /// The engine's plan of this output: its model laid out over its shards.
    fn plan(&self, options: &WriteOptions) -> OutputPlan {
        let mut parts = distribute(&self.model, &self.shard_of);
        if parts.is_empty() {
            parts.push(self.model.clone());
        }
        OutputPlan {
            shards: parts
                .into_iter()
                .zip(&self.shard_paths)
                .map(|(model, path)| ShardPlan {
                    path: path.clone(),
                    model,
                })
                .collect(),
            options: options.clone(),
        }
    }
}

/// The `files` array of an output record.
fn files_json<'a>(files: impl Iterator<Item = (&'a PathBuf, u64, &'a String)>) -> Json {
    files
        .map(|(path, size, sha256)| json!({"path": path, "size": size, "sha256": sha256}))
        .collect()
}

/// A usage problem of a batch request (for the CLI's exit status 2).
pub fn is_usage(e: &PlanError) -> bool {
    e.kind() == plan::PlanErrorKind::Usage
}
