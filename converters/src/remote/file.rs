//! A remote file read by HTTP range requests: a [`RangeRead`] the readers wrap in
//! [`FileBytes::remote`], so that the engine sees the same tensor sources as for local files.
//!
//! A read larger than a block is fetched as it is asked (split into chunks fetched in
//! parallel, at most [`RemoteOptions::connections`](super::RemoteOptions) in flight): the
//! engine asks for a window of rows at a time, so memory is that window. A small read (a
//! header, one row of an FP8 matrix, one word of a packed-int tensor) goes through a small
//! cache of aligned blocks shared by the files of a run, so that many small reads of one
//! region cost one request.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ggufkit::mapped::{FileBytes, RangeRead};

use super::http::Pin;
use super::{Client, RemoteError};

/// Bytes of one cached block; reads up to this size go through the cache.
pub const BLOCK: usize = 1 << 20;

/// Blocks the cache holds at most (so at most this many MiB).
const CACHE_BLOCKS: usize = 32;

/// A cached block: (file id, block index) and its bytes.
type Block = ((u64, u64), Arc<Vec<u8>>);

/// Recently read blocks of the remote files of a run, least recently used dropped first.
#[derive(Default)]
pub struct BlockCache {
    blocks: Mutex<VecDeque<Block>>,
}

impl BlockCache {
    fn get(&self, key: (u64, u64)) -> Option<Arc<Vec<u8>>> {
        let mut b = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        let i = b.iter().position(|(k, _)| *k == key)?;
        let entry = b.remove(i)?;
        let bytes = entry.1.clone();
        b.push_back(entry);
        Some(bytes)
    }

    fn put(&self, key: (u64, u64), bytes: Arc<Vec<u8>>) {
        let mut b = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        if b.iter().any(|(k, _)| *k == key) {
            return;
        }
        if b.len() >= CACHE_BLOCKS {
            b.pop_front();
        }
        b.push_back((key, bytes));
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// One remote file: its URL, its size and ETag as first seen (pinned), and the client.
pub struct RemoteFile {
    client: Arc<Client>,
    cache: Arc<BlockCache>,
    url: String,
    pin: Mutex<Option<Pin>>,
    size: u64,
    id: u64,
}

impl RemoteFile {
    /// Opens `url`: its size and ETag are learnt and pinned, and its first block read.
    pub fn open(
        client: Arc<Client>,
        cache: Arc<BlockCache>,
        url: String,
    ) -> Result<RemoteFile, RemoteError> {
        let (head, pin) = client.open(&url, BLOCK as u64)?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        cache.put((id, 0), Arc::new(head));
        Ok(RemoteFile {
            client,
            cache,
            url,
            size: pin.size,
            pin: Mutex::new(Some(pin)),
            id,
        })
    }

    /// As a [`FileBytes`] the readers take.
    pub fn into_file_bytes(self) -> Arc<FileBytes> {
        FileBytes::remote(Box::new(self))
    }

    /// Block `i` (the last one may be short), from the cache or the server.
    fn block(&self, i: u64) -> Result<Arc<Vec<u8>>, RemoteError> {
        if let Some(b) = self.cache.get((self.id, i)) {
            return Ok(b);
        }
        let start = i * BLOCK as u64;
        let len = (BLOCK as u64).min(self.size - start);
        let bytes = Arc::new(self.client.range(&self.url, start, len, &self.pin)?);
        self.cache.put((self.id, i), bytes.clone());
        Ok(bytes)
    }

    /// `offset..offset + len` through the block cache.
    fn read_blocks(&self, offset: u64, len: usize) -> Result<Vec<u8>, RemoteError> {
        let mut out = Vec::with_capacity(len);
        let end = offset + len as u64;
        let mut at = offset;
        while at < end {
            let i = at / BLOCK as u64;
            let block = self.block(i)?;
            let from = (at - i * BLOCK as u64) as usize;
            let to = ((end - i * BLOCK as u64) as usize).min(block.len());
            out.extend_from_slice(&block[from..to]);
            at += (to - from) as u64;
        }
        Ok(out)
    }

    /// `offset..offset + len` as chunks fetched in parallel.
    fn read_chunks(&self, offset: u64, len: usize) -> Result<Vec<u8>, RemoteError> {
        let chunk = self.client.options().chunk.max(BLOCK) as u64;
        let end = offset + len as u64;
        let starts: Vec<u64> = (offset..end).step_by(chunk as usize).collect();
        if starts.len() == 1 {
            return self.client.range(&self.url, offset, len as u64, &self.pin);
        }
        let parts: Vec<Result<Vec<u8>, RemoteError>> = std::thread::scope(|s| {
            let handles: Vec<_> = starts
                .iter()
                .map(|&a| {
                    let n = chunk.min(end - a);
                    s.spawn(move || self.client.range(&self.url, a, n, &self.pin))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(RemoteError::GaveUp {
                            url: self.url.clone(),
                            attempts: 0,
                            last: "a fetching thread panicked".into(),
                        })
                    })
                })
                .collect()
        });
        // Every chunk arrived whole before the output is allocated.
        let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::with_capacity(len);
        for p in parts {
            out.extend_from_slice(&p);
        }
        Ok(out)
    }
}

/// A file at `url` read on demand by range requests through `client` (its size and ETag
/// pinned now, its first block read): a GGUF given by URL, a weight file.
pub fn open_url(client: Arc<Client>, url: &str) -> Result<Arc<FileBytes>, RemoteError> {
    let file = RemoteFile::open(client, Arc::new(BlockCache::default()), url.to_string())?;
    Ok(file.into_file_bytes())
}

impl RangeRead for RemoteFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_range(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        if offset.checked_add(len as u64).is_none_or(|e| e > self.size) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: bytes {offset}+{len} lie outside the file ({} bytes)",
                    self.url, self.size
                ),
            ));
        }
        let r = if len <= BLOCK {
            self.read_blocks(offset, len)
        } else {
            self.read_chunks(offset, len)
        };
        r.map_err(std::io::Error::from)
    }

    fn name(&self) -> &str {
        &self.url
    }
}
