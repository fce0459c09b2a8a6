//! One HTTP request done reliably: redirects followed by hand (bounded, same scheme, the
//! token only to the endpoint's own host), failures retried with backoff, a range resumed
//! from the last byte received, and every response checked before a byte of it is used.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::proxy::Proxies;
use super::{Endpoint, RemoteError, RemoteOptions};

/// Counters of one run, for the progress display and the summary.
#[derive(Debug)]
pub struct Stats {
    /// Body bytes received (ranges and small files).
    pub bytes: AtomicU64,
    /// Requests sent (each redirect hop counts).
    pub requests: AtomicU64,
    /// Attempts retried after a failure.
    pub retries: AtomicU64,
    /// When the client was made.
    pub start: Instant,
}

impl Stats {
    /// Bytes received so far and the mean rate in bytes per second since the start.
    pub fn rate(&self) -> (u64, f64) {
        let bytes = self.bytes.load(Ordering::Relaxed);
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        (bytes, bytes as f64 / secs)
    }
}

/// What a file was when first seen: later responses must agree, or the file changed under
/// us.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pin {
    /// The ETag of the response that carried the bytes (empty when the server sends none).
    pub etag: String,
    /// The file's size.
    pub size: u64,
}

/// An attempt's failure: worth retrying (after a wait), or final.
enum Failure {
    Retry {
        why: String,
        after: Option<Duration>,
    },
    /// Bytes came, but too slowly: retried, and counted as an attempt without progress.
    Slow(String),
    Fatal(RemoteError),
}

impl From<RemoteError> for Failure {
    fn from(e: RemoteError) -> Self {
        Failure::Fatal(e)
    }
}

/// A counting semaphore: at most `n` range requests in flight.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    fn take(&self) -> SlotGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        SlotGuard(self)
    }
}

struct SlotGuard<'a>(&'a Slots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.0.freed.notify_one();
    }
}

/// The HTTP client of one run: the endpoint, the options, the connection limit, counters.
pub struct Client {
    /// Direct connections.
    agent: ureq::Agent,
    /// Through the proxy of `http://` URLs, and of `https://` URLs, when set.
    via_http: Option<ureq::Agent>,
    via_https: Option<ureq::Agent>,
    proxies: Proxies,
    endpoint: Endpoint,
    options: RemoteOptions,
    slots: Slots,
    stats: Stats,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The endpoint's Debug never shows the token.
        write!(f, "Client({:?}, {:?})", self.endpoint, self.options)
    }
}

/// A response whose status is final (redirects followed).
struct Answer {
    resp: ureq::Response,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.resp.header(name)
    }
}

impl Client {
    /// A client of `endpoint` with `options`, connecting directly.
    pub fn new(endpoint: Endpoint, options: RemoteOptions) -> Client {
        Client::with_proxies(endpoint, options, Proxies::default())
            .unwrap_or_else(|_| unreachable!("no proxy to parse"))
    }

    /// A client of `endpoint` with `options` that reaches each URL through the proxy
    /// `proxies` names for it ([`Proxies::for_url`]); a proxy that is not an `http://` URL
    /// is [`RemoteError::BadProxy`].
    pub fn with_proxies(
        endpoint: Endpoint,
        options: RemoteOptions,
        proxies: Proxies,
    ) -> Result<Client, RemoteError> {
        let agent = |proxy: Option<&str>| -> Result<ureq::Agent, RemoteError> {
            let mut b = ureq::AgentBuilder::new()
                .timeout_connect(options.connect_timeout)
                .timeout_read(options.read_timeout)
                .timeout_write(options.read_timeout)
                // Followed here, where the token and the scheme are checked at every hop.
                .redirects(0)
                .tls_config(super::tls::client_config())
                .user_agent(concat!("ggufkit/", env!("CARGO_PKG_VERSION")));
            if let Some(p) = proxy {
                b = b.proxy(Proxies::parse(p)?);
            }
            Ok(b.build())
        };
        let via_http = proxies
            .http
            .as_deref()
            .map(|p| agent(Some(p)))
            .transpose()?;
        let via_https = proxies
            .https
            .as_deref()
            .map(|p| agent(Some(p)))
            .transpose()?;
        Ok(Client {
            agent: agent(None)?,
            via_http,
            via_https,
            proxies,
            slots: Slots {
                free: Mutex::new(options.connections.max(1)),
                freed: Condvar::new(),
            },
            endpoint,
            options,
            stats: Stats {
                bytes: AtomicU64::new(0),
                requests: AtomicU64::new(0),
                retries: AtomicU64::new(0),
                start: Instant::now(),
            },
        })
    }

    /// The agent that reaches `url`: through its scheme's proxy unless no_proxy exempts it.
    fn agent_for(&self, url: &url::Url) -> &ureq::Agent {
        let via = match url.scheme() {
            "http" => self.via_http.as_ref(),
            _ => self.via_https.as_ref(),
        };
        match via {
            Some(a) if self.proxies.for_url(url).is_some() => a,
            _ => &self.agent,
        }
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The options.
    pub fn options(&self) -> &RemoteOptions {
        &self.options
    }

    /// The counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Sends a GET for `url` (with `range`, inclusive), following redirects: at most
    /// `max_redirects`, never to another scheme, the token only to the endpoint's origin.
    fn send(&self, url: &str, range: Option<(u64, u64)>) -> Result<Answer, Failure> {
        let mut current = url::Url::parse(url).map_err(|e| {
            Failure::Fatal(RemoteError::BadRedirect {
                url: url.to_string(),
                why: format!("not a URL: {e}"),
            })
        })?;
        let mut hops = 0;
        loop {
            let mut req = self.agent_for(&current).request_url("GET", &current);
            if let Some((a, b)) = range {
                req = req.set("Range", &format!("bytes={a}-{b}"));
            }
            if let Some(t) = self
                .endpoint
                .token
                .as_deref()
                .filter(|_| self.endpoint.same_origin(&current))
            {
                req = req.set("Authorization", &format!("Bearer {t}"));
            }
            self.stats.requests.fetch_add(1, Ordering::Relaxed);
            let resp = match req.call() {
                Ok(r) => r,
                Err(ureq::Error::Status(_, r)) => r,
                Err(ureq::Error::Transport(t)) => {
                    return Err(match t.kind() {
                        ureq::ErrorKind::InvalidUrl | ureq::ErrorKind::UnknownScheme => {
                            Failure::Fatal(RemoteError::BadRedirect {
                                url: url.to_string(),
                                why: t.to_string(),
                            })
                        }
                        _ => Failure::Retry {
                            why: format!("{current}: {t}"),
                            after: None,
                        },
                    })
                }
            };
            let status = resp.status();
            if !matches!(status, 301 | 302 | 303 | 307 | 308) {
                return self.classify(url, Answer { resp });
            }
            let location = resp.header("Location").unwrap_or_default().to_string();
            let next = current.join(&location).map_err(|_| {
                Failure::Fatal(RemoteError::BadRedirect {
                    url: current.to_string(),
                    why: format!("HTTP {status} with Location {location:?}, not a URL"),
                })
            })?;
            if location.is_empty() {
                return Err(Failure::Fatal(RemoteError::BadRedirect {
                    url: current.to_string(),
                    why: format!("HTTP {status} without a Location"),
                }));
            }
            if next.scheme() != current.scheme() {
                return Err(Failure::Fatal(RemoteError::BadRedirect {
                    url: current.to_string(),
                    why: format!(
                        "HTTP {status} to {next}, another scheme ({} → {})",
                        current.scheme(),
                        next.scheme()
                    ),
                }));
            }
            hops += 1;
            if hops > self.options.max_redirects {
                return Err(Failure::Fatal(RemoteError::TooManyRedirects {
                    url: url.to_string(),
                    limit: self.options.max_redirects,
                    to: next.to_string(),
                }));
            }
            current = next;
        }
    }

    /// A final status: success passes, 429/408/5xx are retried (after `Retry-After` when
    /// given), anything else is an error naming the URL. A body in a `Content-Encoding` is
    /// refused: none is asked for (no `Accept-Encoding`), and its bytes are not the file's.
    fn classify(&self, url: &str, a: Answer) -> Result<Answer, Failure> {
        let status = a.resp.status();
        if (200..300).contains(&status) {
            if let Some(enc) = a
                .header("Content-Encoding")
                .map(str::trim)
                .filter(|e| !e.is_empty() && !e.eq_ignore_ascii_case("identity"))
            {
                return Err(Failure::Fatal(RemoteError::Encoded {
                    url: url.to_string(),
                    encoding: enc.to_string(),
                }));
            }
            return Ok(a);
        }
        let reason = a.resp.status_text().to_string();
        if matches!(status, 408 | 429) || (500..600).contains(&status) {
            let after = match a.header("Retry-After").map(str::trim) {
                Some(v) => match v.parse::<u64>() {
                    Ok(s) if Duration::from_secs(s) > self.options.max_retry_after => {
                        return Err(Failure::Fatal(RemoteError::Status {
                            url: url.to_string(),
                            status,
                            reason,
                            hint: format!(
                                " (the server asks to retry after {s} s, more than the {} s \
                                 waited at most)",
                                self.options.max_retry_after.as_secs()
                            ),
                        }))
                    }
                    Ok(s) => Some(Duration::from_secs(s)),
                    // An HTTP date: the usual backoff.
                    Err(_) => None,
                },
                None => None,
            };
            return Err(Failure::Retry {
                why: format!("HTTP {status} {reason}"),
                after,
            });
        }
        let hint = match status {
            401 | 403 if self.endpoint.token.is_none() => {
                " (a private or gated model: set HF_TOKEN or log in with `hf auth login`)"
            }
            401 | 403 => " (the token has no access to this model)",
            404 => " (no such model, revision or file)",
            _ => "",
        };
        Err(Failure::Fatal(RemoteError::Status {
            url: url.to_string(),
            status,
            reason,
            hint: hint.to_string(),
        }))
    }

    /// Runs `attempt` until it succeeds, retrying failures with backoff. `progress` tells
    /// whether the last failed attempt advanced (a resumed transfer): only attempts that
    /// brought nothing count against the limit (with a hard cap of 16 times the limit).
    fn retrying<T>(
        &self,
        url: &str,
        mut attempt: impl FnMut() -> Result<T, Failure>,
        mut progress: impl FnMut() -> bool,
    ) -> Result<T, RemoteError> {
        let limit = self.options.attempts.max(1);
        let (mut idle, mut total) = (0u32, 0u32);
        loop {
            total += 1;
            let (why, after, slow) = match attempt() {
                Ok(v) => return Ok(v),
                Err(Failure::Fatal(e)) => return Err(e),
                Err(Failure::Retry { why, after }) => (why, after, false),
                Err(Failure::Slow(why)) => (why, None, true),
            };
            if progress() && !slow {
                idle = 0;
            } else {
                idle += 1;
            }
            if idle >= limit || total >= limit.saturating_mul(16) {
                return Err(RemoteError::GaveUp {
                    url: url.to_string(),
                    attempts: total,
                    last: why,
                });
            }
            self.stats.retries.fetch_add(1, Ordering::Relaxed);
            let backoff = self
                .options
                .backoff
                .saturating_mul(1 << idle.saturating_sub(1).min(16))
                .min(self.options.max_backoff);
            std::thread::sleep(after.unwrap_or(backoff));
        }
    }

    /// Bytes `start..start + len` of `url`, by range requests resumed from the last byte
    /// received. `pin` is the file's ETag and size when known (a response that disagrees is
    /// [`RemoteError::Changed`]), else the first response's are stored in it.
    pub fn range(
        &self,
        url: &str,
        start: u64,
        len: u64,
        pin: &Mutex<Option<Pin>>,
    ) -> Result<Vec<u8>, RemoteError> {
        if len == 0 {
            return Ok(Vec::new());
        }
        // Grows as bytes arrive: memory follows what the server really sent, never a
        // length it declared.
        let out = std::cell::RefCell::new(Vec::new());
        let before = std::cell::Cell::new(0usize);
        let _slot = self.slots.take();
        self.retrying(
            url,
            || {
                let mut b = out.borrow_mut();
                before.set(b.len());
                self.try_range(url, start, len, pin, &mut b)
            },
            || out.borrow().len() > before.get(),
        )?;
        Ok(out.into_inner())
    }

    /// One attempt at the rest of a range: `buf` holds what earlier attempts received.
    fn try_range(
        &self,
        url: &str,
        start: u64,
        len: u64,
        pin: &Mutex<Option<Pin>>,
        buf: &mut Vec<u8>,
    ) -> Result<(), Failure> {
        let a = start + buf.len() as u64;
        let b = start + len - 1;
        let answer = self.send(url, Some((a, b)))?;
        let status = answer.resp.status();
        if status != 206 {
            return Err(RemoteError::RangeIgnored {
                url: url.to_string(),
                status,
                start: a,
                end: b,
            }
            .into());
        }
        let got = answer
            .header("Content-Range")
            .unwrap_or_default()
            .to_string();
        let size = parse_content_range(&got)
            .filter(|&(ra, rb, _)| (ra, rb) == (a, b))
            .map(|(_, _, size)| size)
            .ok_or_else(|| RemoteError::BadContentRange {
                url: url.to_string(),
                start: a,
                end: b,
                got: got.clone(),
            })?;
        if let Some(cl) = answer.header("Content-Length") {
            if cl.trim().parse::<u64>().ok() != Some(b - a + 1) {
                return Err(RemoteError::BadLength {
                    url: url.to_string(),
                    expected: b - a + 1,
                    got: cl.to_string(),
                }
                .into());
            }
        }
        check_pin(url, pin, &answer, size)?;
        let want = b - a + 1;
        let mut body = answer.resp.into_reader().take(want);
        let mut chunk = vec![0u8; 256 << 10];
        let mut got_now = 0u64;
        let began = Instant::now();
        loop {
            match body.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    got_now += n as u64;
                    self.stats.bytes.fetch_add(n as u64, Ordering::Relaxed);
                    let secs = began.elapsed().as_secs_f64();
                    if got_now < want
                        && began.elapsed() >= self.options.rate_window
                        && (got_now as f64) < self.options.min_rate as f64 * secs
                    {
                        return Err(Failure::Slow(format!(
                            "{url}: too slow: {got_now} bytes in {secs:.1} s, below the \
                             {} bytes/s accepted",
                            self.options.min_rate
                        )));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Failure::Retry {
                        why: format!("{url}: {e} after {got_now} of {want} bytes"),
                        after: None,
                    })
                }
            }
        }
        if got_now < want {
            return Err(Failure::Retry {
                why: format!(
                    "{url}: the connection closed after {got_now} of {want} bytes of the range"
                ),
                after: None,
            });
        }
        Ok(())
    }

    /// The first `probe` bytes of `url` (fewer when the file is smaller) and the file's pin:
    /// a one-byte range first learns the size (its `Content-Range`) and the ETag.
    pub fn open(&self, url: &str, probe: u64) -> Result<(Vec<u8>, Pin), RemoteError> {
        let pin = Mutex::new(None);
        let size = self.retrying(
            url,
            || {
                let answer = self.send(url, Some((0, 0)))?;
                let status = answer.resp.status();
                if status != 206 {
                    return Err(RemoteError::RangeIgnored {
                        url: url.to_string(),
                        status,
                        start: 0,
                        end: 0,
                    }
                    .into());
                }
                let got = answer
                    .header("Content-Range")
                    .unwrap_or_default()
                    .to_string();
                match parse_content_range(&got) {
                    Some((0, 0, size)) => {
                        check_pin(url, &pin, &answer, size)?;
                        Ok(size)
                    }
                    _ => Err(RemoteError::BadContentRange {
                        url: url.to_string(),
                        start: 0,
                        end: 0,
                        got,
                    }
                    .into()),
                }
            },
            || false,
        )?;
        let bytes = self.range(url, 0, probe.min(size), &pin)?;
        let pin = pin
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_default();
        Ok((bytes, pin))
    }

    /// The whole body of `url` (status 200), at most `limit` bytes, written to `out` (which is
    /// rewound by `restart` before a retry). Returns the response's ETag (empty when none).
    pub fn download(
        &self,
        url: &str,
        what: &str,
        limit: u64,
        out: &mut dyn Write,
        restart: &mut dyn FnMut() -> std::io::Result<()>,
    ) -> Result<String, RemoteError> {
        let out = std::cell::RefCell::new(out);
        let restart = std::cell::RefCell::new(restart);
        let mut first = true;
        self.retrying(
            url,
            || {
                if !first {
                    (restart.borrow_mut())().map_err(|e| {
                        Failure::Fatal(RemoteError::io(format!("(the copy of {url})"), e))
                    })?;
                }
                first = false;
                let answer = self.send(url, None)?;
                let too_large = || {
                    Failure::Fatal(RemoteError::TooLarge {
                        url: url.to_string(),
                        what: what.to_string(),
                        limit,
                    })
                };
                let declared = answer
                    .header("Content-Length")
                    .and_then(|v| v.trim().parse::<u64>().ok());
                if declared.is_some_and(|n| n > limit) {
                    return Err(too_large());
                }
                let etag = etag_of(&answer);
                let mut body = answer.resp.into_reader().take(limit + 1);
                let mut chunk = vec![0u8; 64 << 10];
                let mut n_total = 0u64;
                loop {
                    let n = match body.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            return Err(Failure::Retry {
                                why: format!("{url}: {e} after {n_total} bytes"),
                                after: None,
                            })
                        }
                    };
                    n_total += n as u64;
                    if n_total > limit {
                        return Err(too_large());
                    }
                    self.stats.bytes.fetch_add(n as u64, Ordering::Relaxed);
                    out.borrow_mut().write_all(&chunk[..n]).map_err(|e| {
                        Failure::Fatal(RemoteError::io(format!("(the copy of {url})"), e))
                    })?;
                }
                if declared.is_some_and(|d| d != n_total) {
                    return Err(Failure::Retry {
                        why: format!(
                            "{url}: the body ended after {n_total} of {} bytes",
                            declared.unwrap_or_default()
                        ),
                        after: None,
                    });
                }
                Ok(etag)
            },
            || false,
        )
    }

    /// The whole body of `url` in memory, at most `limit` bytes.
    pub fn get_small(&self, url: &str, what: &str, limit: u64) -> Result<Vec<u8>, RemoteError> {
        let buf = std::cell::RefCell::new(Vec::new());
        struct Sink<'a>(&'a std::cell::RefCell<Vec<u8>>);
        impl Write for Sink<'_> {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.borrow_mut().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        self.download(url, what, limit, &mut Sink(&buf), &mut || {
            buf.borrow_mut().clear();
            Ok(())
        })?;
        Ok(buf.into_inner())
    }
}

/// The ETag a response carries: the Hub's `X-Linked-Etag` (the LFS object's) else `ETag`,
/// without a weak prefix or quotes.
fn etag_of(a: &Answer) -> String {
    a.header("X-Linked-Etag")
        .or_else(|| a.header("ETag"))
        .unwrap_or_default()
        .trim()
        .trim_start_matches("W/")
        .trim_matches('"')
        .to_string()
}

/// Checks a response against the file's pin, or pins the file to it.
fn check_pin(
    url: &str,
    pin: &Mutex<Option<Pin>>,
    answer: &Answer,
    size: u64,
) -> Result<(), Failure> {
    let now = Pin {
        etag: etag_of(answer),
        size,
    };
    let mut p = pin.lock().unwrap_or_else(|p| p.into_inner());
    match &*p {
        None => {
            *p = Some(now);
            Ok(())
        }
        Some(was) if *was == now => Ok(()),
        Some(was) => Err(Failure::Fatal(RemoteError::Changed {
            url: url.to_string(),
            was: was.etag.clone(),
            now: now.etag,
            was_size: was.size,
            now_size: now.size,
        })),
    }
}

/// `bytes A-B/SIZE` → `(A, B, SIZE)`, with `A <= B < SIZE`.
fn parse_content_range(v: &str) -> Option<(u64, u64, u64)> {
    let rest = v.trim().strip_prefix("bytes ")?;
    let (range, size) = rest.split_once('/')?;
    let (a, b) = range.split_once('-')?;
    let (a, b, size) = (
        a.trim().parse::<u64>().ok()?,
        b.trim().parse::<u64>().ok()?,
        size.trim().parse::<u64>().ok()?,
    );
    (a <= b && b < size).then_some((a, b, size))
}

#[cfg(test)]
mod tests {
    use super::parse_content_range;

    #[test]
    fn content_ranges_are_parsed_strictly() {
        assert_eq!(parse_content_range("bytes 0-9/100"), Some((0, 9, 100)));
        assert_eq!(parse_content_range("bytes 5-4/100"), None);
        assert_eq!(parse_content_range("bytes 0-100/100"), None);
        assert_eq!(parse_content_range("bytes 0-9/*"), None);
        assert_eq!(parse_content_range("items 0-9/100"), None);
    }
}
