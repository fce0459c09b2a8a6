//! What can go wrong reading a model over HTTP: each error names the URL (or the local file)
//! and what the server did.

use std::path::PathBuf;

/// Why a remote model could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// `HF_HUB_OFFLINE` forbids the network.
    #[error("HF_HUB_OFFLINE is set: --remote needs the network (convert the cached snapshot with `gguf-convert {id}` instead, or unset HF_HUB_OFFLINE)")]
    Offline {
        /// The model id.
        id: String,
    },
    /// The model id or revision is not one the Hub allows.
    #[error("'{0}' is not a HuggingFace model id (org/name, or org/name@revision)")]
    BadId(String),
    /// The endpoint is not an `http://` or `https://` URL with a host.
    #[error("HF_ENDPOINT {0:?} is not an http:// or https:// URL")]
    BadEndpoint(String),
    /// The server answered with an error status.
    #[error("{url}: HTTP {status} {reason}{hint}")]
    Status {
        /// The URL asked.
        url: String,
        /// The status code.
        status: u16,
        /// The status line's text.
        reason: String,
        /// What it likely means (a missing token, a wrong id).
        hint: String,
    },
    /// A range request answered with the whole file (200) instead of the range (206).
    #[error("{url}: the server ignored the range request for bytes {start}-{end} (HTTP {status} instead of 206 Partial Content); --remote needs a server that honours ranges")]
    RangeIgnored {
        /// The URL asked.
        url: String,
        /// The status it answered.
        status: u16,
        /// First byte asked.
        start: u64,
        /// Last byte asked (inclusive).
        end: u64,
    },
    /// A 206 whose `Content-Range` is not the range asked.
    #[error("{url}: asked for bytes {start}-{end}, the server answered Content-Range {got:?}")]
    BadContentRange {
        /// The URL asked.
        url: String,
        /// First byte asked.
        start: u64,
        /// Last byte asked (inclusive).
        end: u64,
        /// The header as received (empty when absent).
        got: String,
    },
    /// A `Content-Length` that is not the length of the range asked.
    #[error("{url}: asked for {expected} bytes, the server declared Content-Length {got}")]
    BadLength {
        /// The URL asked.
        url: String,
        /// The length asked.
        expected: u64,
        /// The length declared.
        got: String,
    },
    /// A body sent in a content encoding nobody asked for (its bytes are not the file's).
    #[error("{url}: the server sent a body with Content-Encoding {encoding:?}, which was not asked for (its bytes are not the file's)")]
    Encoded {
        /// The URL asked.
        url: String,
        /// The encoding declared.
        encoding: String,
    },
    /// The file changed on the server while it was being read.
    #[error("{url} changed on the server during the conversion (ETag {was} became {now}; size {was_size} became {now_size}): its bytes would mix two versions")]
    Changed {
        /// The file's URL.
        url: String,
        /// The ETag first seen.
        was: String,
        /// The ETag seen now.
        now: String,
        /// The size first seen.
        was_size: u64,
        /// The size seen now.
        now_size: u64,
    },
    /// Too many redirects (a loop).
    #[error("{url}: more than {limit} redirects (the last to {to}): a redirect loop?")]
    TooManyRedirects {
        /// The URL first asked.
        url: String,
        /// The limit.
        limit: usize,
        /// Where the last redirect pointed.
        to: String,
    },
    /// A redirect that is not followed (another scheme, no or a bad `Location`).
    #[error("{url}: redirect refused: {why}")]
    BadRedirect {
        /// The URL that redirected.
        url: String,
        /// Why it is not followed.
        why: String,
    },
    /// The retries are exhausted.
    #[error("{url}: gave up after {attempts} attempts; the last: {last}")]
    GaveUp {
        /// The URL asked.
        url: String,
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// A body larger than the limit for its kind.
    #[error("{url}: {what} is larger than the {limit}-byte limit")]
    TooLarge {
        /// The URL asked.
        url: String,
        /// What it is (the revision API's answer, a small file).
        what: String,
        /// The limit.
        limit: u64,
    },
    /// The revision API's answer is not what the Hub sends.
    #[error("{url}: unexpected answer from the revision API: {why}")]
    BadApi {
        /// The URL asked.
        url: String,
        /// What is wrong.
        why: String,
    },
    /// The repository has no safetensors weights at the revision.
    #[error("{id}@{commit}: no safetensors weights (--remote reads *.safetensors only; the repository holds {files})")]
    NoSafetensors {
        /// The model id.
        id: String,
        /// The pinned commit.
        commit: String,
        /// Some of the files it has.
        files: String,
    },
    /// A proxy the environment names that cannot be used.
    #[error("proxy {proxy:?} (from HTTP_PROXY / HTTPS_PROXY / ALL_PROXY): {why}")]
    BadProxy {
        /// The proxy as given.
        proxy: String,
        /// What is wrong with it.
        why: String,
    },
    /// A local file of the cache could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// No HuggingFace cache directory could be determined.
    #[error("no HuggingFace cache: set HF_HUB_CACHE or HF_HOME (HOME is not set either)")]
    NoCache,
}

impl RemoteError {
    /// A local file error.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        RemoteError::Io {
            path: path.into(),
            source,
        }
    }
}

impl From<RemoteError> for std::io::Error {
    fn from(e: RemoteError) -> Self {
        std::io::Error::other(e)
    }
}
