//! Crash-safe output files: written under a temporary name beside the target and renamed
//! into place only when complete.
//!
//! The rules, in the order they are checked (`docs/security.md` lists them too):
//!
//! 1. An empty path, or one ending in `/`, is refused: it cannot name a file.
//! 2. A symlinked output is written *through*, like `cp`: the file the link points to is
//!    replaced and the link stays a link. A dangling link is refused.
//! 3. An output that is the same file (device and inode) as any input of the run — model files,
//!    shards, imatrix, tensor-type file, metadata file, jobs file — is refused.
//! 4. A directory, block device or socket is refused. A character device or FIFO
//!    (`/dev/null`, a named pipe) is written in place, never renamed over.
//! 5. An existing regular file is replaced only when overwriting is allowed; its permissions
//!    are kept.
//! 6. Everything else is written to a temporary file created exclusively, with an
//!    unpredictable name (`.<name>.ggufkit-tmp.<pid>.<random>`, `O_EXCL`, never through a planted
//!    symlink), in the target's directory, and renamed over the target when complete. A failed
//!    rename removes the temporary file.
//!
//! Dropping an uncommitted output removes its temporary file; on SIGINT/SIGTERM the handler
//! installed by [`install_signal_cleanup`] removes every live temporary file before the
//! process exits. A SIGKILL leaves only a recognisable temporary file (see [`TEMP_MARKER`]).
//!
//! A rename over an existing regular file first takes the file's advisory lock
//! ([`lock::FileLock`]), which in-place writers hold while they change a file, so a file is
//! never replaced in the middle of someone else's in-place edit.
//!
//! ggufkit's own files (the batch state and its journal, edit journals) follow stricter
//! rules ([`internal`]): never through a symlink, never over anything but a regular file.
//! Files appended to at the user's request (a batch report) follow [`append`].

// Only `lock` (flock) and this module (SIGPIPE's disposition) call the OS directly.
#[forbid(unsafe_code)]
pub mod append;
#[forbid(unsafe_code)]
pub mod internal;
pub mod lock;

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

static LIVE_TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Marker in the names of temporary output files (`.<name>.ggufkit-tmp.<pid>.<random>`).
pub const TEMP_MARKER: &str = ".ggufkit-tmp.";

/// How an output may be created.
#[derive(Clone, Copy, Debug)]
pub struct OutputRules<'a> {
    /// Files of this run the output must not be (compared by device and inode).
    pub inputs: &'a [&'a Path],
    /// Replace an existing regular file.
    pub overwrite: bool,
    /// Sync the data to disk before the rename (the CLIs' default; `--no-sync` turns it off).
    /// Either way a killed process leaves no partial output; only a power failure soon after
    /// an unsynced run can lose a file.
    pub sync: bool,
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
    /// The path cannot name an output file.
    #[error("refusing to write {path}: {why}")]
    Refused {
        /// The output as given.
        path: PathBuf,
        /// Why (a directory, a block device, a dangling symlink…).
        why: String,
    },
    /// An I/O error on the output.
    #[error("{path}: {source}")]
    Io {
        /// The output as given (never the temporary file's name).
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// True when `a` and `b` name the same file (same device and inode when both exist).
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

/// Where the bytes go.
pub(crate) enum Destination {
    /// A temporary file, renamed over `dest` (the target with symlinks resolved) at commit.
    Rename { dest: PathBuf, temp: PathBuf },
    /// A character device or FIFO, written in place.
    InPlace,
}

/// Checks `target` against the rules of this module and says where its bytes go.
fn destination(target: &Path, rules: &OutputRules) -> Result<(PathBuf, bool), OutputError> {
    let refused = |why: &str| OutputError::Refused {
        path: target.to_path_buf(),
        why: why.to_string(),
    };
    let text = target.as_os_str();
    if text.is_empty() {
        return Err(refused("the output path is empty"));
    }
    if text.as_encoded_bytes().ends_with(b"/") {
        return Err(refused("the path ends in '/', so it names a directory"));
    }
    let link = std::fs::symlink_metadata(target).ok();
    let dest = match &link {
        Some(m) if m.file_type().is_symlink() => target
            .canonicalize()
            .map_err(|_| refused("it is a symlink to a file that does not exist"))?,
        _ => target.to_path_buf(),
    };
    if rules.inputs.iter().any(|i| same_file(i, &dest)) {
        return Err(OutputError::IsInput(target.to_path_buf()));
    }
    let meta = match std::fs::metadata(&dest) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = parent_dir(&dest);
            return match std::fs::metadata(dir) {
                Ok(d) if d.is_dir() => Ok((dest, false)),
                Ok(_) => Err(refused(&format!("{} is not a directory", dir.display()))),
                Err(e) => Err(OutputError::Io {
                    path: dir.to_path_buf(),
                    source: e,
                }),
            };
        }
        Err(source) => {
            return Err(OutputError::Io {
                path: target.to_path_buf(),
                source,
            })
        }
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(refused("it is a directory"));
    }
    if !rules.overwrite {
        return Err(OutputError::Exists(target.to_path_buf()));
    }
    if kind.is_file() {
        return Ok((dest, false));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() || kind.is_fifo() {
            return Ok((dest, true));
        }
        if kind.is_block_device() {
            return Err(refused("it is a block device"));
        }
        if kind.is_socket() {
            return Err(refused("it is a socket"));
        }
    }
    Err(refused("it is not a regular file"))
}

/// Checks `target` against the output rules without creating anything: lets a writer of
/// several files refuse before the first one is written.
pub fn check(target: &Path, rules: &OutputRules) -> Result<(), OutputError> {
    destination(target, rules).map(|_| ())
}

/// The directory a file path lives in (`.` for a bare name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Creates the temporary file for `dest`: exclusively, with an unpredictable name, in the
/// same directory (so the final rename is atomic), with `dest`'s permissions when it exists.
pub(crate) fn create_temp(dest: &Path, target: &Path) -> Result<(File, PathBuf), OutputError> {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let prefix = format!(".{name}{TEMP_MARKER}{}.", std::process::id());
    let mut builder = tempfile::Builder::new();
    // The pid lets a later batch run tell a dead run's leftovers from a live one's; the
    // random part makes the name unpredictable.
    builder.prefix(&prefix).rand_bytes(10);
    install_signal_cleanup();
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        // An existing target keeps its mode; a new file gets 0666 less the umask, like any
        // file a program creates.
        let mode = std::fs::metadata(dest)
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(0o666);
        builder.permissions(std::fs::Permissions::from_mode(0o666));
        mode
    };
    // The list of live temporaries stays locked from before the file exists until its name
    // is on the list: a signal handled in between would otherwise miss it. The handler holds
    // the same lock until the process exits, so no file is created after its sweep.
    let mut live = LIVE_TEMPS.lock().unwrap_or_else(|e| e.into_inner());
    let (file, temp) = builder
        .tempfile_in(parent_dir(dest))
        .and_then(|t| t.keep().map_err(|e| e.error))
        .map_err(|source| OutputError::Io {
            path: target.to_path_buf(),
            source,
        })?;
    live.push(temp.clone());
    drop(live);
    #[cfg(unix)]
    if std::fs::metadata(dest).is_ok() {
        use std::os::unix::fs::PermissionsExt;
        let _ = file.set_permissions(std::fs::Permissions::from_mode(mode));
    }
    Ok((file, temp))
}

/// An output file being written.
pub struct AtomicOutput {
    pub(crate) target: PathBuf,
    pub(crate) dest: Destination,
    writer: Option<BufWriter<File>>,
    flusher: Option<Flusher>,
    unflushed: u64,
    sync: bool,
}

impl AtomicOutput {
    /// Starts writing `target` under `rules` (see the module documentation).
    pub fn create(target: &Path, rules: &OutputRules) -> Result<AtomicOutput, OutputError> {
        let (dest, in_place) = destination(target, rules)?;
        install_signal_cleanup();
        let io = |source| OutputError::Io {
            path: target.to_path_buf(),
            source,
        };
        let (file, dest) = if in_place {
            let file = OpenOptions::new().write(true).open(&dest).map_err(io)?;
            (file, Destination::InPlace)
        } else {
            let (file, temp) = create_temp(&dest, target)?;
            (file, Destination::Rename { dest, temp })
        };
        Ok(Self::from_parts(target, file, dest, rules.sync))
    }

    /// An output over `file` (created by the caller) going to `dest`; a temporary file comes
    /// from [`create_temp`], which registered it for removal on a signal.
    pub(crate) fn from_parts(
        target: &Path,
        file: File,
        dest: Destination,
        sync: bool,
    ) -> AtomicOutput {
        install_signal_cleanup();
        // Without a second handle the output is still correct, only synced at the end.
        let flusher = match dest {
            Destination::Rename { .. } if sync => file.try_clone().ok().map(Flusher::start),
            _ => None,
        };
        AtomicOutput {
            target: target.to_path_buf(),
            dest,
            writer: Some(BufWriter::with_capacity(8 << 20, file)),
            flusher,
            unflushed: 0,
            sync,
        }
    }

    /// The final path, as given.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The writer for the temporary file.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.writer
            .as_mut()
            .expect("writer is present until finished")
    }

    pub(crate) fn io(&self) -> impl Fn(std::io::Error) -> OutputError {
        let path = self.target.clone();
        move |source| OutputError::Io {
            path: path.clone(),
            source,
        }
    }

    /// Flushes and syncs the data and closes the file, without renaming it into place yet:
    /// the way to write several files (split shards, outputs of one batch pass) one after
    /// another and make them appear together. Holds no buffer and no thread afterwards.
    pub fn finish(mut self) -> Result<FinishedOutput, OutputError> {
        let io = self.io();
        let mut writer = self.writer.take().expect("finish once");
        let flushed = writer.flush();
        let file = writer.into_inner().map_err(|e| e.into_error());
        let flusher = self.flusher.take().map(Flusher::finish);
        let dest = std::mem::replace(&mut self.dest, Destination::InPlace);
        let finished = FinishedOutput {
            target: self.target.clone(),
            dest,
        };
        // From here on `finished` removes the temporary file if anything fails.
        flushed.map_err(&io)?;
        let file = file.map_err(&io)?;
        if let Some(r) = flusher {
            r.map_err(&io)?;
        }
        if self.sync && matches!(finished.dest, Destination::Rename { .. }) {
            file.sync_all().map_err(&io)?;
        }
        Ok(finished)
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(self) -> Result<(), OutputError> {
        let sync = self.sync;
        self.finish()?.commit(sync)
    }
}

impl AtomicOutput {
    /// A second handle on the temporary file for writes at given offsets from any thread
    /// ([`PlacedWriter`]), after the bytes written so far are flushed; `None` when the output
    /// is not a temporary file of ours (one written in place may be a pipe or a device) or
    /// on a platform without positional writes.
    pub fn placed(&mut self) -> Result<Option<PlacedWriter>, OutputError> {
        if !cfg!(unix) || !matches!(self.dest, Destination::Rename { .. }) {
            return Ok(None);
        }
        let io = self.io();
        let writer = self.writer();
        writer.flush().map_err(&io)?;
        let file = writer.get_ref().try_clone().map_err(&io)?;
        Ok(Some(PlacedWriter {
            file,
            target: self.target.clone(),
            wake: self.flusher.as_ref().map(|f| f.wake.clone()),
            placed: std::sync::atomic::AtomicU64::new(0),
        }))
    }
}

/// Writes at given offsets of an output's temporary file, from any thread: the way several
/// threads each write what they computed where it belongs, instead of handing it to one
/// writer. The background flusher of a durable output is woken as the bytes add up, as it is
/// for sequential writes.
pub struct PlacedWriter {
    file: File,
    target: PathBuf,
    wake: Option<std::sync::mpsc::Sender<()>>,
    /// Bytes written through this handle so far.
    placed: std::sync::atomic::AtomicU64,
}

impl PlacedWriter {
    /// Writes all of `data` at byte `offset` of the file.
    pub fn write_at(&self, data: &[u8], offset: u64) -> Result<(), OutputError> {
        write_all_at(&self.file, data, offset).map_err(|source| OutputError::Io {
            path: self.target.clone(),
            source,
        })?;
        let n = data.len() as u64;
        let before = self
            .placed
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        if before / FLUSH_EVERY != (before + n) / FLUSH_EVERY {
            if let Some(wake) = &self.wake {
                let _ = wake.send(()); // a stopped flusher reports its error at finish
            }
        }
        Ok(())
    }

    /// Makes the file `len` bytes long (zeros past what is written).
    pub fn set_len(&self, len: u64) -> Result<(), OutputError> {
        self.file.set_len(len).map_err(|source| OutputError::Io {
            path: self.target.clone(),
            source,
        })
    }
}

#[cfg(unix)]
fn write_all_at(file: &File, data: &[u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, data, offset)
}

#[cfg(not(unix))]
fn write_all_at(_: &File, _: &[u8], _: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        self.writer = None;
        if let Destination::Rename { temp, .. } = &self.dest {
            let _ = std::fs::remove_file(temp);
            forget_temp(temp);
        }
    }
}

/// Writes at least this long go to the file directly (after whatever is buffered) instead of
/// through the buffer: a tensor's data would otherwise be copied once more on its way.
const DIRECT_WRITE: usize = 256 << 10;

impl Write for AtomicOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let writer = self.writer();
        let n = if buf.len() >= DIRECT_WRITE {
            writer.flush()?;
            writer.get_mut().write(buf)?
        } else {
            writer.write(buf)?
        };
        self.unflushed += n as u64;
        if self.unflushed >= FLUSH_EVERY {
            self.unflushed = 0;
            if let Some(f) = &self.flusher {
                let _ = f.wake.send(()); // a stopped flusher reports its error at finish
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer().flush()
    }
}

/// A complete output waiting to be renamed into place ([`AtomicOutput::finish`]). Dropping
/// it removes the temporary file.
pub struct FinishedOutput {
    target: PathBuf,
    dest: Destination,
}

impl FinishedOutput {
    /// The final path, as given.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the file into place (and, with `sync`, syncs the directory so the rename
    /// itself is durable), holding the lock of the file it replaces ([`lock`]). A failed
    /// rename removes the temporary file.
    pub fn commit(mut self, sync: bool) -> Result<(), OutputError> {
        let Destination::Rename { dest, temp } =
            std::mem::replace(&mut self.dest, Destination::InPlace)
        else {
            return Ok(());
        };
        let locked = lock::for_replacing(&dest);
        let renamed = match &locked {
            Ok(_) => std::fs::rename(&temp, &dest),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        };
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        forget_temp(&temp);
        renamed.map_err(|source| OutputError::Io {
            path: self.target.clone(),
            source,
        })?;
        if sync {
            if let Ok(dir) = File::open(parent_dir(&dest)) {
                let _ = dir.sync_all();
            }
        }
        drop(locked);
        Ok(())
    }
}

impl Drop for FinishedOutput {
    fn drop(&mut self) {
        if let Destination::Rename { temp, .. } = &self.dest {
            let _ = std::fs::remove_file(temp);
            forget_temp(temp);
        }
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
            // The lock is held until exit, so no temporary file is created after the sweep.
            let live = LIVE_TEMPS.lock().unwrap_or_else(|e| e.into_inner());
            for p in live.iter() {
                let _ = std::fs::remove_file(p);
            }
            eprintln!("interrupted: no output was written");
            std::process::exit(130);
        });
    });
}

/// Writes `bytes` to `target` under `rules`: the whole file appears at once or not at all.
pub fn write_file_atomically(
    target: &Path,
    bytes: &[u8],
    rules: &OutputRules,
) -> Result<(), OutputError> {
    let mut out = AtomicOutput::create(target, rules)?;
    out.write_all(bytes).map_err(out.io())?;
    out.commit()
}

/// Makes a process killed by SIGPIPE when it writes to a closed pipe, as Unix tools are
/// (`gguf-inspect dump … | head`): Rust's runtime ignores SIGPIPE, so every `println!` to a
/// closed pipe would panic instead. Call first thing in `main`.
pub fn default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: `signal` with SIG_DFL installs no handler code, only restores the default
    // disposition; it is called at the start of `main`, before any thread exists, so no other
    // thread can be changing signal dispositions at the same time.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules<'a>(inputs: &'a [&'a Path], overwrite: bool) -> OutputRules<'a> {
        OutputRules {
            inputs,
            overwrite,
            sync: false,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ggufkit-out-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn dropped_output_leaves_nothing_and_commit_renames() {
        let dir = scratch("commit");
        let target = dir.join("x.gguf");
        {
            let mut o = AtomicOutput::create(&target, &rules(&[], false)).unwrap();
            o.write_all(b"partial").unwrap();
        }
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "temp left");
        let mut o = AtomicOutput::create(&target, &rules(&[], false)).unwrap();
        o.write_all(b"done").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"done");
        assert!(matches!(
            AtomicOutput::create(&target, &rules(&[], false)),
            Err(OutputError::Exists(_))
        ));
        assert!(matches!(
            AtomicOutput::create(&target, &rules(&[target.as_path()], true)),
            Err(OutputError::IsInput(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn finished_outputs_hold_no_file_and_drop_removes_them() {
        let dir = scratch("finish");
        let target = dir.join("y.gguf");
        let mut o = AtomicOutput::create(&target, &rules(&[], false)).unwrap();
        o.write_all(b"abc").unwrap();
        let f = o.finish().unwrap();
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        drop(f);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn existing_mode_is_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("mode");
        let target = dir.join("z.gguf");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file_atomically(&target, b"new", &rules(&[], true)).unwrap();
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
