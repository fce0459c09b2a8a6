//! The advisory lock every ggufkit writer of an existing file takes before changing or
//! replacing it.
//!
//! An in-place writer (gguf-edit's header rewrite, its copy renamed over the input, its
//! recovery) reads a file and later writes what it read back: if another writer replaced the
//! file in between, the second write would lay an old header over new tensor data. So a
//! writer takes an exclusive `flock` on the file *before* reading it and holds it until its
//! change is on disk, and every rename over an existing regular file ([`super::FinishedOutput`])
//! takes the same lock first. A lock is held on an inode, while a rename changes which inode
//! a path names; so after locking, [`FileLock::acquire`] checks that the path still names the
//! locked inode and starts again if it does not (the writer it waited for has replaced the
//! file). The lock is advisory: only ggufkit's writers respect it, which is why in-place
//! writers also compare the header bytes they are about to replace.
//!
//! A process never waits for itself: locks it holds are registered, and a rename over a file
//! this process has locked proceeds under that lock.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Files (device, inode) this process holds a [`FileLock`] on.
static HELD: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// How long a writer waits for another one to finish before giving up.
pub const LOCK_WAIT: Duration = Duration::from_secs(30);

/// How often a path may turn out to have been replaced while waiting before we give up.
const MAX_REPLACED: usize = 64;

/// Why a file could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The file could not be opened or locked.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// Another process holds the lock for longer than [`LOCK_WAIT`].
    #[error("{0}: another ggufkit process is changing this file; try again when it is done")]
    Busy(PathBuf),
    /// The path kept being replaced while we waited.
    #[error("{0}: the file keeps being replaced by other processes")]
    Unstable(PathBuf),
}

/// An exclusive advisory lock on an existing file, held until dropped; also the open file
/// itself, so that the writer writes the inode it locked, never whatever the path names
/// later.
#[derive(Debug)]
pub struct FileLock {
    file: File,
    writer: Option<File>,
    path: PathBuf,
    id: (u64, u64),
}

fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// Whether this process holds a lock on the file `id`.
fn held(id: (u64, u64)) -> bool {
    HELD.lock().unwrap_or_else(|e| e.into_inner()).contains(&id)
}

impl FileLock {
    /// Opens `path` (following symlinks; for reading, and for writing too when `write`) and
    /// locks it, waiting up to [`LOCK_WAIT`] for another writer; succeeds only once the path
    /// still names the locked file. A file opened for writing fails here, before anything is
    /// written, when it cannot be written (read-only file or mount).
    pub fn acquire(path: &Path, write: bool) -> Result<FileLock, LockError> {
        Self::acquire_within(path, write, LOCK_WAIT)
    }

    /// [`FileLock::acquire`] with another time limit.
    pub fn acquire_within(path: &Path, write: bool, wait: Duration) -> Result<FileLock, LockError> {
        use std::os::fd::AsRawFd;
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        let deadline = Instant::now() + wait;
        for _ in 0..MAX_REPLACED {
            let file = OpenOptions::new()
                .read(true)
                .write(write)
                .open(path)
                .map_err(io)?;
            let id = identity(&file.metadata().map_err(io)?);
            if held(id) {
                return Err(io(std::io::Error::other(
                    "this process already holds the lock on this file",
                )));
            }
            loop {
                // SAFETY: `flock` on a descriptor this function owns; no memory is passed.
                let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
                if r == 0 {
                    break;
                }
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::WouldBlock {
                    return Err(io(e));
                }
                if Instant::now() >= deadline {
                    return Err(LockError::Busy(path.to_path_buf()));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            // Locked; but the writer we waited for may have renamed a new file over the path.
            match std::fs::metadata(path) {
                Ok(m) if identity(&m) == id => {
                    HELD.lock().unwrap_or_else(|e| e.into_inner()).push(id);
                    return Ok(FileLock {
                        writer: None,
                        file,
                        path: path.to_path_buf(),
                        id,
                    });
                }
                Ok(_) => continue,
                Err(e) => return Err(io(e)),
            }
        }
        Err(LockError::Unstable(path.to_path_buf()))
    }

    /// The locked file, opened for reading (and for writing when locked so).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Opens the locked file for writing too (a lock taken to read may need to write once
    /// the writer knows what): fails, before anything is written, when the file cannot be
    /// written or the path no longer names the locked file.
    pub fn upgrade(&mut self) -> Result<(), LockError> {
        let io = |source| LockError::Io {
            path: self.path.clone(),
            source,
        };
        let w = OpenOptions::new()
            .write(true)
            .open(&self.path)
            .map_err(io)?;
        if identity(&w.metadata().map_err(io)?) != self.id {
            return Err(LockError::Unstable(self.path.clone()));
        }
        self.writer = Some(w);
        Ok(())
    }

    /// The file to write through: the one [`FileLock::upgrade`] opened, else the locked one
    /// (which can write when it was locked for writing).
    pub fn writer(&self) -> &File {
        self.writer.as_ref().unwrap_or(&self.file)
    }

    /// The path it was locked through.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `path` still names the locked file.
    pub fn still_names(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|m| identity(&m) == self.id)
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let mut h = HELD.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = h.iter().position(|&x| x == self.id) {
            h.swap_remove(i);
        }
        // Closing the file releases the lock.
    }
}

/// The lock to hold while renaming over `dest`: none when `dest` is not an existing regular
/// file or this process already holds its lock, else the file's lock.
pub(crate) fn for_replacing(dest: &Path) -> Result<Option<FileLock>, LockError> {
    match std::fs::metadata(dest) {
        Ok(m) if m.is_file() && !held(identity(&m)) => FileLock::acquire(dest, false).map(Some),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_locker_waits_then_sees_a_replaced_file() {
        let dir = std::env::temp_dir().join(format!("ggufkit-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, b"old").unwrap();
        let first = FileLock::acquire(&p, true).unwrap();
        // Another open file description of the same file cannot take the lock meanwhile.
        let f2 = File::open(&p).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor owned by this test.
        let r = unsafe { libc::flock(f2.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_ne!(r, 0, "the lock is exclusive");
        drop(f2);
        // This process does not wait for itself.
        assert!(FileLock::acquire_within(&p, false, Duration::from_millis(50)).is_err());
        assert!(for_replacing(&p).unwrap().is_none());
        let t = {
            let p = p.clone();
            std::thread::spawn(move || {
                // Replace the file while the lock is held, then release it.
                let tmp = p.with_extension("new");
                std::fs::write(&tmp, b"new").unwrap();
                std::thread::sleep(Duration::from_millis(100));
                std::fs::rename(&tmp, &p).unwrap();
                drop(first);
            })
        };
        t.join().unwrap();
        let second = FileLock::acquire(&p, false).unwrap();
        assert!(second.still_names(&p));
        let mut s = String::new();
        std::io::Read::read_to_string(&mut second.file(), &mut s).unwrap();
        assert_eq!(s, "new", "the lock is on the file the path names now");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
