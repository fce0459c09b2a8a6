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
    transfer: Transfer,
}

/// The variable that sets how many attempts of a request that brings nothing are made
/// before giving up (default 8).
const ATTEMPTS_VAR: &str = "GGUFKIT_REMOTE_ATTEMPTS";

/// How often the progress line is printed while fetching.
const TICK: Duration = Duration::from_secs(5);

fn input(e: RemoteError) -> Failure {
    Failure::Input(e.into())
}

/// The client of one run and its progress line on stderr.
pub struct Transfer {
    client: Arc<Client>,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Transfer {
    /// A client with `connections` ranges in flight on the endpoint the environment names
    /// (where the token may go); `progress`: a line every few seconds while the run lasts.
    pub fn start(connections: usize, progress: bool) -> Result<Transfer, Failure> {
        if connections == 0 {
            return Err(Failure::Usage(anyhow!(
                "--remote-connections must be at least 1"
            )));
        }
        let endpoint = Endpoint::from_env().map_err(input)?;
        let attempts = match std::env::var(ATTEMPTS_VAR) {
            Err(_) => RemoteOptions::default().attempts,
            Ok(v) => v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=100).contains(n))
                .ok_or_else(|| {
                    Failure::Usage(anyhow!("{ATTEMPTS_VAR}={v:?}: expected 1 to 100 attempts"))
                })?,
        };
        let options = RemoteOptions {
            connections,
            attempts,
            ..RemoteOptions::default()
        };
        let proxies = ggufkit_converters::remote::proxy::Proxies::from_env();
        let client = Arc::new(
            Client::with_proxies(endpoint, options, proxies)
                .map_err(|e| Failure::Usage(e.into()))?,
        );
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
        Ok(Transfer {
            client,
            stop,
            ticker,
        })
    }

    /// The client.
    pub fn client(&self) -> &Arc<Client> {
        &self.client
    }

    /// Stops the progress line; the closing summary about `what`, when `report`.
    pub fn finish(mut self, what: &str, report: bool) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if report {
            eprintln!("note: remote {what}: {}", summary(&self.client));
        }
    }
}

/// Whether a command-line input names a URL (`http://` or `https://`) rather than a path.
pub fn is_url(p: &std::path::Path) -> bool {
    p.to_str()
        .is_some_and(|s| s.starts_with("http://") || s.starts_with("https://"))
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
    let transfer = Transfer::start(connections, progress)?;
    let cache = ggufkit_converters::hub::cache_dir().ok_or_else(|| input(RemoteError::NoCache))?;
    let snap = fetch_snapshot(transfer.client.clone(), &cache, id, revision).map_err(input)?;
    Ok(RemoteRun {
        id: id.to_string(),
        dir: snap.dir,
        transfer,
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
    pub fn finish(self, report: bool) {
        self.transfer.finish(&self.id, report);
    }

    /// The reference's default output name for a remote model: `./org-name-{ftype}.gguf`.
    pub fn default_out(&self) -> PathBuf {
        PathBuf::from(format!("{}-{{ftype}}.gguf", self.id.replace('/', "-")))
    }
}

/// A GGUF file opener for `gguf-quantize` and `gguf-inspect`: a URL is read on demand through
/// `transfer`'s client (only the header now, the tensors when the engine asks), a path is
/// mapped.
pub fn gguf_opener(
    transfer: &Transfer,
) -> impl Fn(&std::path::Path) -> Result<ggufkit::gguf::GgufFile, ggufkit::gguf::GgufError> + '_ {
    move |p| {
        if !is_url(p) {
            return ggufkit::gguf::GgufFile::open(p);
        }
        let url = p.to_string_lossy();
        let bytes =
            ggufkit_converters::remote::open_url(transfer.client.clone(), &url).map_err(|e| {
                ggufkit::gguf::GgufError::Io {
                    path: Some(p.to_path_buf()),
                    source: e.into(),
                }
            })?;
        ggufkit::gguf::GgufFile::parse(bytes)
    }
}

/// A private temporary directory for one run's small files, removed when dropped.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates `$TMPDIR/ggufkit-http-<pid>-<n>` (a new name, never an existing directory).
    pub fn new() -> std::io::Result<ScratchDir> {
        let base = std::env::temp_dir();
        let pid = std::process::id();
        for n in 0..1000u32 {
            let p = base.join(format!("ggufkit-http-{pid}-{n}"));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(ScratchDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("no free ggufkit-http-{pid}-N name in {}", base.display()),
        ))
    }

    /// The directory.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
