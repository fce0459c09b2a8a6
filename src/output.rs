//! Crash-safe output files: written under a temporary name beside the target and renamed
//! into place only when complete.
//!
//! The temporary name is `.<file name>.ggufkit-tmp.<pid>`: recognisable (and ignored by the
//! batch runner) if a SIGKILL leaves one behind. Dropping an uncommitted output removes
//! it; on SIGINT/SIGTERM the handler installed by [`install_signal_cleanup`] removes every
//! live temporary file before the process exits.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

static LIVE_TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

static SYNC_BEFORE_RENAME: AtomicBool = AtomicBool::new(true);

/// Whether outputs are synced to disk before they are renamed into place (the default), for
/// the whole process (the CLIs' `--no-sync`). Either way a killed process leaves no partial
/// output; only a power failure soon after an unsynced run can lose a file.
pub fn set_sync_before_rename(sync: bool) {
    SYNC_BEFORE_RENAME.store(sync, Ordering::Relaxed);
}

/// Suffix marker of temporary output files.
pub const TEMP_MARKER: &str = ".ggufkit-tmp.";

/// An output file being written.
pub struct AtomicOutput {
    target: PathBuf,
    temp: PathBuf,
    writer: Option<BufWriter<File>>,
    flusher: Option<Flusher>,
    unflushed: u64,
}

/// How many bytes are written between two background flushes to disk.
const FLUSH_EVERY: u64 = 128 << 20;

/// A thread that flushes the file's written data to disk while the writer goes on, so that
/// the final sync of [`AtomicOutput::commit`] only waits for the tail, not for the whole
/// file: writing and computing then overlap with the disk.
struct Flusher {
    wake: std::sync::mpsc::Sender<()>,
    done: std::thread::JoinHandle<std::io::Result<()>>,
}

impl Flusher {
    fn start(file: File) -> Flusher {
        let (wake, requests) = std::sync::mpsc::channel::<()>();
        let done = std::thread::spawn(move || {
            while requests.recv().is_ok() {
                while requests.try_recv().is_ok() {} // one flush covers every request so far
                file.sync_data()?;
            }
            Ok(())
        });
        Flusher { wake, done }
    }

    /// Waits for the flushes asked for so far; their first error, if any.
    fn finish(self) -> std::io::Result<()> {
        drop(self.wake);
        self.done
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

/// Why an output could not be created or committed.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output path is one of the inputs.
    #[error("refusing to write {0}: it is an input of this run")]
    IsInput(PathBuf),
    /// The output exists and overwriting was not allowed.
    #[error("{0} already exists (use --force to overwrite)")]
    Exists(PathBuf),
    /// An I/O error on the output.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// True when `a` and `b` name the same file (same inode when both exist).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

impl AtomicOutput {
    /// Starts writing `target`. Refuses when `target` is one of `inputs`, or exists and
    /// `overwrite` is false.
    pub fn create(
        target: &Path,
        inputs: &[&Path],
        overwrite: bool,
    ) -> Result<AtomicOutput, OutputError> {
        if inputs.iter().any(|i| same_file(i, target)) {
            return Err(OutputError::IsInput(target.to_path_buf()));
        }
        if !overwrite && target.exists() {
            return Err(OutputError::Exists(target.to_path_buf()));
        }
        install_signal_cleanup();
        let dir = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "output".into());
        let temp = dir.join(format!(".{name}{TEMP_MARKER}{}", std::process::id()));
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)
            .map_err(|source| OutputError::Io {
                path: temp.clone(),
                source,
            })?;
        LIVE_TEMPS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(temp.clone());
        // Without a second handle the output is still correct, only synced at the end.
        let flusher = if SYNC_BEFORE_RENAME.load(Ordering::Relaxed) {
            file.try_clone().ok().map(Flusher::start)
        } else {
            None
        };
        Ok(AtomicOutput {
            target: target.to_path_buf(),
            temp,
            writer: Some(BufWriter::with_capacity(8 << 20, file)),
            flusher,
            unflushed: 0,
        })
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The writer for the temporary file.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.writer
            .as_mut()
            .expect("writer is present until commit")
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| OutputError::Io { path, source }
        };
        let writer = self.writer.as_mut().expect("commit once");
        writer.flush().map_err(io(&self.temp))?;
        if let Some(flusher) = self.flusher.take() {
            flusher.finish().map_err(io(&self.temp))?;
        }
        let writer = self.writer.take().expect("commit once");
        let file = writer.into_inner().map_err(|e| OutputError::Io {
            path: self.temp.clone(),
            source: e.into_error(),
        })?;
        if SYNC_BEFORE_RENAME.load(Ordering::Relaxed) {
            file.sync_all().map_err(io(&self.temp))?;
        }
        drop(file);
        std::fs::rename(&self.temp, &self.target).map_err(io(&self.target))?;
        forget_temp(&self.temp);
        Ok(())
    }
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.temp);
            forget_temp(&self.temp);
        }
    }
}

impl Write for AtomicOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.writer().write(buf)?;
        self.unflushed += n as u64;
        if self.unflushed >= FLUSH_EVERY {
            self.unflushed = 0;
            if let Some(f) = &self.flusher {
                let _ = f.wake.send(()); // a stopped flusher reports its error at commit
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer().flush()
    }
}

fn forget_temp(p: &Path) {
    LIVE_TEMPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|t| t != p);
}

/// Installs (once) a SIGINT/SIGTERM handler that removes live temporary outputs and exits
/// with status 130.
pub fn install_signal_cleanup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            for p in LIVE_TEMPS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                let _ = std::fs::remove_file(p);
            }
            eprintln!("interrupted: no output was written");
            std::process::exit(130);
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_output_leaves_nothing_and_commit_renames() {
        let dir = std::env::temp_dir().join(format!("ggufkit-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("x.gguf");
        {
            let mut o = AtomicOutput::create(&target, &[], false).unwrap();
            o.write_all(b"partial").unwrap();
        }
        assert!(!target.exists());
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "temp file left behind"
        );
        let mut o = AtomicOutput::create(&target, &[], false).unwrap();
        o.write_all(b"done").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"done");
        assert!(matches!(
            AtomicOutput::create(&target, &[], false),
            Err(OutputError::Exists(_))
        ));
        assert!(matches!(
            AtomicOutput::create(&target, &[target.as_path()], true),
            Err(OutputError::IsInput(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
