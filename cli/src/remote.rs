//! `gguf-convert --remote org/name[@revision]`: the model's revision resolved and pinned, its
//! small files fetched into the local HuggingFace cache, its safetensors read by HTTP ranges
//! (`ggufkit_converters::remote`), and the transfer's progress on stderr.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use ggufkit::inspect::human_bytes;
use ggufkit_converters::remote::config::offline_from_env;
use ggufkit_converters::remote::snapshot::split_spec;
use ggufkit_converters::remote::{fetch_snapshot, Client, Endpoint, RemoteError, RemoteOptions};

use crate::edge::Failure;

/// A remote model opened for one run.
pub struct RemoteRun {
    /// The model id.
    pub id: String,
    /// The snapshot directory (small files; the weights are read remotely).
    pub dir: PathBuf,
    client: Arc<Client>,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

/// How often the progress line is printed while fetching.
const TICK: Duration = Duration::from_secs(5);

fn input(e: RemoteError) -> Failure {
    Failure::Input(e.into())
}

/// Opens `spec` (`org/name` or `org/name@revision`; `revision` is `--revision`) on the
/// endpoint the environment names, with `connections` ranges in flight. `progress`: print
/// bytes fetched and the rate to stderr while the run lasts.
pub fn open(
    spec: &str,
    revision: Option<&str>,
    connections: usize,
    progress: bool,
) -> Result<RemoteRun, Failure> {
    let (id, rev) = split_spec(spec);
    let revision = match (rev, revision) {
        (Some(a), Some(b)) if a != b => {
            return Err(Failure::Usage(anyhow!(
                "--remote {spec} names revision {a}, --revision says {b}"
            )))
        }
        (a, b) => a.or(b),
    };
    if offline_from_env() {
        return Err(input(RemoteError::Offline { id: id.to_string() }));
    }
    if connections == 0 {
        return Err(Failure::Usage(anyhow!(
            "--remote-connections must be at least 1"
        )));
    }
    let endpoint = Endpoint::from_env().map_err(input)?;
    let options = RemoteOptions {
        connections,
        ..RemoteOptions::default()
    };
    let client = Arc::new(Client::new(endpoint, options));
    let cache = ggufkit_converters::hub::cache_dir().ok_or_else(|| input(RemoteError::NoCache))?;
    let snap = fetch_snapshot(client.clone(), &cache, id, revision).map_err(input)?;
    let stop = Arc::new(AtomicBool::new(false));
    let ticker = progress.then(|| {
        let (client, stop) = (client.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut waited = Duration::ZERO;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                waited += Duration::from_millis(100);
                if waited >= TICK {
                    waited = Duration::ZERO;
                    eprintln!("note: remote: {}", summary(&client));
                }
            }
        })
    });
    Ok(RemoteRun {
        id: id.to_string(),
        dir: snap.dir,
        client,
        stop,
        ticker,
    })
}

fn summary(client: &Client) -> String {
    let (bytes, rate) = client.stats().rate();
    let s = client.stats();
    format!(
        "{} fetched at {}/s ({} requests, {} retried)",
        human_bytes(bytes),
        human_bytes(rate as u64),
        s.requests.load(Ordering::Relaxed),
        s.retries.load(Ordering::Relaxed)
    )
}

impl RemoteRun {
    /// Stops the progress line; the closing summary, when `report`.
    pub fn finish(mut self, report: bool) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if report {
            eprintln!("note: remote {}: {}", self.id, summary(&self.client));
        }
    }

    /// The reference's default output name for a remote model: `./org-name-{ftype}.gguf`.
    pub fn default_out(&self) -> PathBuf {
        PathBuf::from(format!("{}-{{ftype}}.gguf", self.id.replace('/', "-")))
    }
}
