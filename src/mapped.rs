//! Read-only file bytes shared between a parsed file and the lazy tensors that point into it.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;

/// Opens an input file for reading, refusing anything but a regular file: opening a FIFO
/// would block until some writer appears (a hang), and a directory, socket or device has no
/// model bytes to read or map. Symbolic links are followed.
pub fn open_input(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        // Non-blocking, so that opening a FIFO returns at once and is refused below; reads
        // of a regular file do not block either way.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let what = if kind.is_dir() {
        "a directory"
    } else if is_fifo(&kind) {
        "a FIFO"
    } else {
        "a device or socket"
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("is {what}, not a regular file"),
    ))
}

#[cfg(unix)]
fn is_fifo(kind: &std::fs::FileType) -> bool {
    std::os::unix::fs::FileTypeExt::is_fifo(kind)
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::FileType) -> bool {
    false
}

/// Reads a whole input file ([`open_input`]'s rules).
pub fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open_input(path)?, &mut bytes)?;
    Ok(bytes)
}

/// Reads a whole UTF-8 input file ([`open_input`]'s rules).
pub fn read_input_to_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_input(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// A file read on demand, a byte range at a time, from somewhere other than a local disk
/// (a URL). The readers that accept such a source (safetensors) read it only through
/// [`FileBytes::range`]; nothing holds all of it in memory.
pub trait RangeRead: Send + Sync {
    /// The file's size in bytes.
    fn size(&self) -> u64;
    /// The bytes of `offset..offset + len`, exactly `len` of them, or an error naming the
    /// source and what went wrong. Called from several threads at once.
    fn read_range(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>>;
    /// Where the bytes come from, for messages (a URL).
    fn name(&self) -> &str;
}

/// The bytes of an input file: memory-mapped, owned (tests, tiny files, stdin), or read on
/// demand ([`RangeRead`]: a remote file).
pub struct FileBytes {
    backing: Backing,
    path: Option<PathBuf>,
    /// The mapped file, for positioned reads ([`FileBytes::read_copy`]).
    file: Option<File>,
}

enum Backing {
    Mapped(Mmap),
    Owned(Vec<u8>),
    Remote(Box<dyn RangeRead>),
}

impl FileBytes {
    /// Maps `path` read-only.
    pub fn map(path: &Path) -> std::io::Result<Arc<FileBytes>> {
        let file = open_input(path)?;
        let len = file.metadata()?.len();
        let backing = if len == 0 {
            // Mapping an empty file fails on some platforms; there is nothing to map anyway.
            Backing::Owned(Vec::new())
        } else {
            // SAFETY: the map is read-only and we only ever read it as plain bytes (no
            // references to typed data that could become invalid). The remaining hazard of
            // any file mapping, another process truncating or rewriting the file while we
            // read, is documented for users: inputs must not be modified during a run (it
            // would be a SIGBUS, not memory corruption, for truncation).
            Backing::Mapped(unsafe { Mmap::map(&file)? })
        };
        Ok(Arc::new(FileBytes {
            backing,
            path: Some(path.to_path_buf()),
            file: Some(file),
        }))
    }

    /// Wraps bytes already in memory.
    pub fn from_vec(bytes: Vec<u8>) -> Arc<FileBytes> {
        Arc::new(FileBytes {
            backing: Backing::Owned(bytes),
            path: None,
            file: None,
        })
    }

    /// A file read on demand through `source`. It has no whole-file slice
    /// ([`FileBytes::local`] is [`NotLocal`]): it is read with [`FileBytes::range`], and its
    /// size is [`FileBytes::size`]. [`FileBytes::path`]
    /// is the source's name (its URL), which also tells its ranges apart from other files'.
    pub fn remote(source: Box<dyn RangeRead>) -> Arc<FileBytes> {
        let path = Some(PathBuf::from(source.name()));
        Arc::new(FileBytes {
            backing: Backing::Remote(source),
            path,
            file: None,
        })
    }

    /// The whole file as one slice: a mapped or owned file's bytes. A file read on demand
    /// ([`FileBytes::remote`]) has none in memory: [`NotLocal`], read it with
    /// [`FileBytes::range`].
    pub fn local(&self) -> Result<&[u8], NotLocal> {
        match &self.backing {
            Backing::Mapped(m) => Ok(m),
            Backing::Owned(v) => Ok(v),
            Backing::Remote(r) => Err(NotLocal {
                name: r.name().to_string(),
            }),
        }
    }

    /// The file's size in bytes (for a remote file, the size it declared).
    pub fn size(&self) -> u64 {
        match &self.backing {
            Backing::Mapped(m) => m.len() as u64,
            Backing::Owned(v) => v.len() as u64,
            Backing::Remote(r) => r.size(),
        }
    }

    /// Whether the bytes are read on demand ([`FileBytes::remote`]).
    pub fn is_remote(&self) -> bool {
        matches!(self.backing, Backing::Remote(_))
    }

    /// The bytes of `offset..offset + len`, as [`FileBytes::range`] gives them, but from a
    /// mapped file by a positioned read into a buffer: no page of the mapping is touched, so
    /// reading a few scattered rows neither maps the pages around them nor leaves pages to
    /// release.
    pub fn read_copy(&self, offset: usize, len: usize) -> std::io::Result<Cow<'_, [u8]>> {
        #[cfg(unix)]
        if let (Backing::Mapped(m), Some(file)) = (&self.backing, &self.file) {
            use std::os::unix::fs::FileExt;
            let end = offset.checked_add(len).filter(|&e| e <= m.len());
            if end.is_some() {
                let mut buf = vec![0u8; len];
                file.read_exact_at(&mut buf, offset as u64)?;
                return Ok(Cow::Owned(buf));
            }
        }
        self.range(offset, len)
    }

    /// The bytes of `offset..offset + len`: borrowed from the mapping or memory, read from a
    /// remote source. A range outside the file is an error (`UnexpectedEof`).
    pub fn range(&self, offset: usize, len: usize) -> std::io::Result<Cow<'_, [u8]>> {
        let outside = || {
            std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "bytes {offset}+{len} lie outside {} ({} bytes)",
                    self.describe(),
                    self.size()
                ),
            )
        };
        let end = offset.checked_add(len).ok_or_else(outside)?;
        if end as u64 > self.size() {
            return Err(outside());
        }
        match &self.backing {
            Backing::Remote(r) => {
                let bytes = r.read_range(offset as u64, len)?;
                if bytes.len() != len {
                    return Err(outside());
                }
                Ok(Cow::Owned(bytes))
            }
            Backing::Mapped(m) => Ok(Cow::Borrowed(&m[offset..end])),
            Backing::Owned(v) => Ok(Cow::Borrowed(&v[offset..end])),
        }
    }

    fn describe(&self) -> String {
        self.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "<memory>".into())
    }

    /// Drops the pages of `offset..offset + len` from this process's memory (`MADV_DONTNEED`);
    /// a later read faults them in again from the file. Only whole pages inside the range are
    /// released. No effect on owned bytes.
    pub fn release(&self, offset: usize, len: usize) {
        let Backing::Mapped(m) = &self.backing else {
            return;
        };
        const PAGE: usize = 4096;
        let start = offset.div_ceil(PAGE) * PAGE;
        let end = (offset.saturating_add(len)).min(m.len()) / PAGE * PAGE;
        if end > start {
            // SAFETY: the map is a read-only, shared mapping of a file (`Mmap::map`).
            // MADV_DONTNEED on such a mapping only drops the page-table entries: the next
            // access (from any thread, including a concurrent reader of a neighbouring
            // tensor) faults the same bytes back in from the file, so no reference ever sees
            // different contents (the same file-stability assumption as the mapping itself).
            // The range is inside the mapping.
            let _ = unsafe {
                m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
            };
        }
    }

    /// The file this came from, if any (a remote file's URL).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

/// A whole-file slice asked of a file read on demand ([`FileBytes::local`]): its bytes are
/// only ever read by range.
#[derive(Debug, thiserror::Error)]
#[error("{name} is read on demand (by URL): its bytes are read by range, never as one slice")]
pub struct NotLocal {
    /// The source's name (its URL).
    pub name: String,
}

impl From<NotLocal> for std::io::Error {
    fn from(e: NotLocal) -> Self {
        std::io::Error::new(std::io::ErrorKind::Unsupported, e)
    }
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileBytes({:?}, {} bytes)", self.path, self.size())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_positioned_read_gives_the_mapped_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bytes");
        let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let f = FileBytes::map(&path).unwrap();
        for (offset, len) in [(0, 1), (4095, 2), (12_345, 4096), (19_999, 1), (0, 20_000)] {
            assert_eq!(
                &*f.read_copy(offset, len).unwrap(),
                &data[offset..offset + len]
            );
        }
        assert!(f.read_copy(19_999, 2).is_err());
        let owned = FileBytes::from_vec(data.clone());
        assert_eq!(&*owned.read_copy(5, 10).unwrap(), &data[5..15]);
    }
}
