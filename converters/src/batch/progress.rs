//! Progress of a batch: one `indicatif` multi-bar display on a terminal (a batch bar with
//! jobs, outputs, bytes and ETA; one bar per output being written), plain lines otherwise
//! (CI logs: a line per job start, every 10% of a job, and per finished output), nothing
//! when quiet. Everything goes to stderr.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use ggufkit::inspect::human_bytes;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Multi-bar display.
    Bars,
    /// Line-oriented.
    Lines,
    /// Nothing.
    Quiet,
}

impl Mode {
    /// Bars on a terminal, lines otherwise, nothing when quiet.
    pub fn auto(quiet: bool) -> Mode {
        if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Bars
        } else {
            Mode::Lines
        }
    }
}

struct JobState {
    label: String,
    total: u64,
    done_bytes: HashMap<usize, u64>,
    last_tenth: u64,
    bars: HashMap<usize, ProgressBar>,
}

struct Inner {
    jobs: HashMap<usize, JobState>,
    n_jobs: usize,
    jobs_done: usize,
    outputs_total: usize,
    outputs_done: usize,
    bytes_total: u64,
    bytes_done: u64,
}

/// The progress display of one batch.
pub struct Progress {
    mode: Mode,
    multi: Option<MultiProgress>,
    top: Option<ProgressBar>,
    inner: Mutex<Inner>,
    t0: Instant,
}

fn style(t: &str) -> ProgressStyle {
    ProgressStyle::with_template(t)
        .expect("valid template")
        .progress_chars("=> ")
}

impl Progress {
    /// A display for `n_jobs` jobs.
    pub fn new(mode: Mode, n_jobs: usize) -> Progress {
        let (multi, top) = if mode == Mode::Bars {
            let m = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8));
            let top = m.add(ProgressBar::new(0));
            top.set_style(style(
                "{prefix:.bold} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta} {msg}",
            ));
            top.set_prefix("batch");
            top.enable_steady_tick(Duration::from_millis(250));
            (Some(m), Some(top))
        } else {
            (None, None)
        };
        let p = Progress {
            mode,
            multi,
            top,
            inner: Mutex::new(Inner {
                jobs: HashMap::new(),
                n_jobs,
                jobs_done: 0,
                outputs_total: 0,
                outputs_done: 0,
                bytes_total: 0,
                bytes_done: 0,
            }),
            t0: Instant::now(),
        };
        p.refresh_top(&p.lock());
        p
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn refresh_top(&self, i: &Inner) {
        if let Some(top) = &self.top {
            top.set_length(i.bytes_total);
            top.set_position(i.bytes_done);
            top.set_message(format!(
                "jobs {}/{} outputs {}/{}",
                i.jobs_done, i.n_jobs, i.outputs_done, i.outputs_total
            ));
        }
    }

    fn line(&self, s: String) {
        match self.mode {
            Mode::Quiet => {}
            Mode::Lines => eprintln!("{s}"),
            Mode::Bars => {
                if let Some(m) = &self.multi {
                    let _ = m.println(s);
                }
            }
        }
    }

    /// A failure: shown in every mode, quiet included (quiet silences progress, not errors).
    fn alert(&self, s: String) {
        match self.mode {
            Mode::Quiet => eprintln!("{s}"),
            _ => self.line(s),
        }
    }

    fn eta(&self, i: &Inner) -> String {
        let el = self.t0.elapsed().as_secs_f64();
        if i.bytes_done == 0 || i.bytes_total <= i.bytes_done {
            return "-".into();
        }
        let left = el * (i.bytes_total - i.bytes_done) as f64 / i.bytes_done as f64;
        format!("{left:.0}s")
    }

    /// A job starts writing `outputs` (name, tensor bytes); `skipped` were up to date.
    pub fn job_started(&self, job: usize, label: &str, outputs: &[(String, u64)], skipped: usize) {
        let mut i = self.lock();
        let total: u64 = outputs.iter().map(|o| o.1).sum();
        i.bytes_total += total;
        i.outputs_total += outputs.len() + skipped;
        let mut bars = HashMap::new();
        if let Some(m) = &self.multi {
            for (k, (name, bytes)) in outputs.iter().enumerate() {
                let b = m.add(ProgressBar::new(*bytes));
                b.set_style(style("  {prefix:40!} [{bar:25}] {bytes}/{total_bytes}"));
                b.set_prefix(format!("{label} → {name}"));
                bars.insert(k, b);
            }
        }
        i.jobs.insert(
            job,
            JobState {
                label: label.to_string(),
                total,
                done_bytes: HashMap::new(),
                last_tenth: 0,
                bars,
            },
        );
        let n = i.n_jobs;
        self.refresh_top(&i);
        drop(i);
        self.line(format!(
            "[{}/{n}] {label}: {} output(s) to write ({}){}",
            job + 1,
            outputs.len(),
            human_bytes(total),
            if skipped > 0 {
                format!(", {skipped} up to date")
            } else {
                String::new()
            }
        ));
    }

    /// Output `output` of `job` has written `bytes`.
    pub fn output_progress(&self, job: usize, output: usize, bytes: u64) {
        let mut i = self.lock();
        let Some(j) = i.jobs.get_mut(&job) else {
            return;
        };
        let prev = j.done_bytes.insert(output, bytes).unwrap_or(0);
        if let Some(b) = j.bars.get(&output) {
            b.set_position(bytes);
        }
        let job_done: u64 = j.done_bytes.values().sum();
        let tenth = (job_done * 10).checked_div(j.total).unwrap_or(10);
        let report = tenth > j.last_tenth && tenth < 10;
        if report {
            j.last_tenth = tenth;
        }
        let (label, total) = (j.label.clone(), j.total);
        i.bytes_done += bytes.saturating_sub(prev);
        self.refresh_top(&i);
        if report && self.mode == Mode::Lines {
            let msg = format!(
                "[{}/{}] {label}: {}% ({}/{}), batch {}%, eta {}",
                job + 1,
                i.n_jobs,
                tenth * 10,
                human_bytes(job_done),
                human_bytes(total),
                (i.bytes_done * 100)
                    .checked_div(i.bytes_total)
                    .unwrap_or(100),
                self.eta(&i)
            );
            drop(i);
            self.line(msg);
        }
    }

    /// An output finished (`status`: done, failed, skipped…) with a one-line detail.
    pub fn output_done(
        &self,
        job: usize,
        label: &str,
        output: Option<usize>,
        status: &str,
        detail: &str,
    ) {
        let mut i = self.lock();
        if output.is_some() {
            i.outputs_done += 1;
        }
        let n = i.n_jobs;
        if let Some(b) = output.and_then(|o| i.jobs.get_mut(&job)?.bars.remove(&o)) {
            b.finish_and_clear();
            if let Some(m) = &self.multi {
                m.remove(&b);
            }
        }
        self.refresh_top(&i);
        drop(i);
        let msg = format!("[{}/{n}] {label}: {status} {detail}", job + 1);
        if status.eq_ignore_ascii_case("failed") {
            self.alert(msg);
        } else {
            self.line(msg);
        }
    }

    /// An output was up to date (counted, not shown as a bar).
    pub fn output_skipped(&self, job: usize, label: &str, path: &str) {
        let mut i = self.lock();
        i.outputs_done += 1;
        i.outputs_total += 1;
        let n = i.n_jobs;
        self.refresh_top(&i);
        drop(i);
        self.line(format!("[{}/{n}] {label}: up to date {path}", job + 1));
    }

    /// A job finished.
    pub fn job_done(&self, job: usize, label: &str, error: Option<&str>) {
        let mut i = self.lock();
        i.jobs_done += 1;
        if let Some(j) = i.jobs.remove(&job) {
            for b in j.bars.into_values() {
                b.finish_and_clear();
            }
        }
        let n = i.n_jobs;
        self.refresh_top(&i);
        drop(i);
        match error {
            Some(e) => self.alert(format!("[{}/{n}] {label}: job FAILED: {e}", job + 1)),
            None => self.line(format!("[{}/{n}] {label}: job done", job + 1)),
        }
    }

    /// Ends the display.
    pub fn finish(&self) {
        if let Some(t) = &self.top {
            t.finish_and_clear();
        }
    }
}
