//! Where the Hub is and how to talk to it: the environment huggingface_hub users already set,
//! and the limits of one run.

use std::path::PathBuf;
use std::time::Duration;

use super::RemoteError;

/// The Hub's address (`HF_ENDPOINT`, default `https://huggingface.co`) and the token sent to
/// it (`HF_TOKEN`, else the token file huggingface_hub writes).
#[derive(Clone)]
pub struct Endpoint {
    /// The base URL without a trailing `/`.
    pub base: url::Url,
    /// The bearer token, sent only to [`Endpoint::base`]'s own scheme, host and port.
    pub token: Option<String>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token.
        write!(
            f,
            "Endpoint({}, token {})",
            self.base,
            if self.token.is_some() { "set" } else { "unset" }
        )
    }
}

/// The public Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

impl Endpoint {
    /// An endpoint at `base` (an `http://` or `https://` URL).
    pub fn new(base: &str, token: Option<String>) -> Result<Endpoint, RemoteError> {
        let bad = || RemoteError::BadEndpoint(base.to_string());
        let mut url = url::Url::parse(base.trim_end_matches('/')).map_err(|_| bad())?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(bad());
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad());
        }
        let path = url.path().trim_end_matches('/').to_string();
        url.set_path(&path);
        Ok(Endpoint {
            base: url,
            token: token.filter(|t| !t.is_empty()),
        })
    }

    /// The endpoint the environment names: `HF_ENDPOINT` (default the public Hub), the token
    /// of `HF_TOKEN`, else of the file `HF_TOKEN_PATH`, else `$HF_HOME/token` (default
    /// `~/.cache/huggingface/token`).
    pub fn from_env() -> Result<Endpoint, RemoteError> {
        let base = env("HF_ENDPOINT").unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        Endpoint::new(&base, token_from_env())
    }

    /// Whether `url` is on this endpoint's own scheme, host and port (where the token may go).
    pub fn same_origin(&self, url: &url::Url) -> bool {
        url.scheme() == self.base.scheme()
            && url.host_str() == self.base.host_str()
            && url.port_or_known_default() == self.base.port_or_known_default()
    }

    /// `{base}/{path}` (segments already encoded).
    pub fn join(&self, path: &str) -> String {
        format!("{}/{}", self.base.as_str().trim_end_matches('/'), path)
    }
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.trim().is_empty())
}

/// The token: `HF_TOKEN`, else the first line of `HF_TOKEN_PATH`'s file, else of
/// `$HF_HOME/token` (`HF_HOME` default `$XDG_CACHE_HOME/huggingface`, else
/// `~/.cache/huggingface`).
pub fn token_from_env() -> Option<String> {
    token_from(&env)
}

/// [`token_from_env`] with the variables `var` gives (empty values count as unset).
pub fn token_from(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let env = |k: &str| var(k).filter(|v| !v.trim().is_empty());
    if let Some(t) = env("HF_TOKEN") {
        return Some(t.trim().to_string());
    }
    let file = env("HF_TOKEN_PATH").map(PathBuf::from).or_else(|| {
        env("HF_HOME")
            .map(PathBuf::from)
            .or_else(|| env("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("huggingface")))
            .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".cache/huggingface")))
            .map(|h| h.join("token"))
    })?;
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// Whether `HF_HUB_OFFLINE` forbids the network (huggingface_hub's truthy values).
pub fn offline_from_env() -> bool {
    env("HF_HUB_OFFLINE")
        .map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "on" | "yes" | "true"))
        .unwrap_or(false)
}

/// Range requests in flight by default: with about 1 MiB/s ... 100 MiB/s per connection to a
/// CDN, 8 keep a 1 Gbit/s link busy without opening more than a browser would.
pub const DEFAULT_CONNECTIONS: usize = 8;

/// How one run reads a remote model.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// Range requests in flight at most (`--remote-connections`, at least 1).
    pub connections: usize,
    /// Attempts of one request before giving up (at least 1), counting only failed attempts
    /// that brought no byte: a transfer that keeps advancing is resumed as long as it does.
    pub attempts: u32,
    /// First wait between attempts; doubled after each failure up to [`Self::max_backoff`].
    pub backoff: Duration,
    /// Longest wait between attempts.
    pub max_backoff: Duration,
    /// Longest `Retry-After` honoured; a server asking for more is an error.
    pub max_retry_after: Duration,
    /// Connecting to a server.
    pub connect_timeout: Duration,
    /// Silence on an open connection (no byte of the headers or body) before it is dropped
    /// and the request retried.
    pub read_timeout: Duration,
    /// Slowest transfer accepted, in bytes per second: a range whose body arrives slower
    /// than this over [`Self::rate_window`] is dropped and resumed on a new connection (a
    /// trickle that keeps data flowing would never trip the read timeout); such attempts
    /// count against [`Self::attempts`] though they bring bytes.
    pub min_rate: u64,
    /// The time over which [`Self::min_rate`] is measured.
    pub rate_window: Duration,
    /// Bytes of one range request (a larger read is split and fetched in parallel).
    pub chunk: usize,
    /// Largest small file (config, tokenizer, model card...) fetched into the cache.
    pub max_small_file: u64,
    /// Redirects followed at most for one request.
    pub max_redirects: usize,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            connections: DEFAULT_CONNECTIONS,
            attempts: 8,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(16),
            max_retry_after: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(20),
            read_timeout: Duration::from_secs(60),
            min_rate: 16 << 10,
            rate_window: Duration::from_secs(30),
            chunk: 16 << 20,
            max_small_file: 1 << 30,
            max_redirects: 8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_comes_from_hf_token_else_the_token_file() {
        let dir = std::env::temp_dir().join(format!("ggufkit-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("token"), "hf_from_file\nsecond line\n").unwrap();
        let home = dir.to_str().unwrap().to_string();
        let vars = |pairs: Vec<(&'static str, String)>| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
        };
        let t = |pairs| token_from(&vars(pairs));
        assert_eq!(
            t(vec![
                ("HF_TOKEN", " hf_env ".into()),
                ("HF_HOME", home.clone())
            ])
            .as_deref(),
            Some("hf_env")
        );
        assert_eq!(
            t(vec![("HF_HOME", home.clone())]).as_deref(),
            Some("hf_from_file")
        );
        assert_eq!(
            t(vec![("HF_TOKEN", "".into()), ("HF_HOME", home.clone())]).as_deref(),
            Some("hf_from_file")
        );
        assert_eq!(
            t(vec![(
                "HF_TOKEN_PATH",
                dir.join("token").to_str().unwrap().into()
            )])
            .as_deref(),
            Some("hf_from_file")
        );
        assert_eq!(t(vec![("HF_HOME", "/nonexistent/ggufkit".into())]), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_token_stays_on_the_endpoints_origin() {
        let ep = Endpoint::new("https://hub.example/", Some("hf_secret".into())).unwrap();
        assert_eq!(
            ep.join("api/models/a/b"),
            "https://hub.example/api/models/a/b"
        );
        for (url, same) in [
            ("https://hub.example/x", true),
            ("https://hub.example:443/x", true),
            ("http://hub.example/x", false),
            ("https://cdn.hub.example/x", false),
            ("https://hub.example:8443/x", false),
        ] {
            assert_eq!(
                ep.same_origin(&url::Url::parse(url).unwrap()),
                same,
                "{url}"
            );
        }
        assert!(Endpoint::new("ftp://hub.example", None).is_err());
        assert!(Endpoint::new("hub.example", None).is_err());
        assert!(
            !format!("{ep:?}").contains("hf_secret"),
            "the token is never printed"
        );
    }
}
