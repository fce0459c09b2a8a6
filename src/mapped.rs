//! Read-only file bytes shared between a parsed file and the lazy tensors that point into it.

use std::fs::File;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;

/// The bytes of an input file: memory-mapped, or owned (tests, tiny files, stdin).
pub struct FileBytes {
    backing: Backing,
    path: Option<PathBuf>,
}

enum Backing {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl FileBytes {
    /// Maps `path` read-only.
    pub fn map(path: &Path) -> std::io::Result<Arc<FileBytes>> {
        let file = File::open(path)?;
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
        }))
    }

    /// Wraps bytes already in memory.
    pub fn from_vec(bytes: Vec<u8>) -> Arc<FileBytes> {
        Arc::new(FileBytes {
            backing: Backing::Owned(bytes),
            path: None,
        })
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

    /// The file this came from, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.backing {
            Backing::Mapped(m) => m,
            Backing::Owned(v) => v,
        }
    }
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileBytes({:?}, {} bytes)", self.path, self.len())
    }
}
