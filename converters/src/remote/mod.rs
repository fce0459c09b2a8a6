//! Conversion without downloading (`gguf-convert --remote org/name[@revision]`): a model on
//! the HuggingFace Hub (or a mirror, or any server with the Hub's layout) read over HTTP(S).
//!
//! * [`snapshot`]: the revision is resolved once through the Hub's API
//!   (`/api/models/{repo}/revision/{rev}`) and pinned to its commit; the small files (config,
//!   tokenizer, generation config, model card, weight index: the reference's
//!   `LICENSE, *.json, *.md, *.txt, tokenizer.model`) are fetched into the local HuggingFace
//!   cache layout [`crate::hub`] reads; the safetensors shards are never stored.
//! * [`file`]: each shard is a [`ggufkit::mapped::FileBytes::remote`] whose bytes are read by
//!   HTTP range requests, a window at a time: the readers and the output engine see the same
//!   tensor sources as for local files, and memory stays bounded by the engine's window.
//! * [`http`]: one request done reliably: retries with backoff on timeouts, resets, 429
//!   (`Retry-After`) and 5xx, a resumed range continuing where the last byte arrived, every
//!   response checked (206, the exact `Content-Range`, the length, the pinned ETag),
//!   redirects bounded and same-scheme, the token sent only to the endpoint's own host.
//! * [`plain`]: a plain HTTP(S) directory of HF files (no API): its files fetched by the
//!   names a model directory uses, its weights read by range as a snapshot's are.
//! * [`source`]: a batch job's remote source (`hf://org/name[@rev]`, an `http(s)://`
//!   directory), opened with an identity that pins its weights.
//! * [`dirs`]: which local snapshot directories have their weight files remote.
//! * [`proxy`]: `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY` / `NO_PROXY` as curl reads them;
//!   [`tls`]: the bundled TLS roots and the system's store.
//! * [`config`]: the environment (`HF_ENDPOINT`, `HF_TOKEN` and the token file,
//!   `HF_HUB_OFFLINE`) and the limits.

pub mod config;
pub mod dirs;
mod error;
pub mod file;
pub mod http;
pub mod plain;
pub mod proxy;
pub mod snapshot;
pub mod source;
pub mod tls;

pub use config::{Endpoint, RemoteOptions};
pub use error::RemoteError;
pub use file::open_url;
pub use http::{Client, Stats};
pub use plain::{fetch_plain_dir, PlainDir};
pub use snapshot::{fetch_snapshot, RemoteSnapshot};
