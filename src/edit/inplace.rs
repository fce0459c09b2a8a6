//! Rewriting a GGUF file's header in place, when an edit leaves the tensor data where it is,
//! without ever leaving a file that cannot be recovered.
//!
//! **When.** The new header (metadata, tensor infos and the padding after them) must have
//! exactly the old one's size, the tensors the same offsets and alignment, the file its
//! planned size and the padding between tensors only zeros: then the file with the new header
//! written over the old one is byte for byte the file a streamed copy would write, and
//! [`fits`] says so. Otherwise the caller copies.
//!
//! **How (the journal).** [`rewrite_header`]:
//!
//! 1. writes a journal `<file>.gguf-edit-journal` beside the file — magic, the file's size,
//!    the old header, the new header and a sha256 of all that — and syncs it and its
//!    directory;
//! 2. writes the new header over the old one and syncs the file;
//! 3. removes the journal and syncs the directory.
//!
//! The file is touched only once the journal is complete on disk, so a crash leaves one of:
//! no journal and the old file (crash in 1 before the journal was created) or the new file
//! (after 3); a journal that fails its checksum and the old file (crash in 1); a complete
//! journal and a header that is old, new or a mixture of both (crash in 2 or 3). [`recover`]
//! resolves a leftover journal: an incomplete one is removed (the file was never touched); a
//! complete one is rolled forward — the new header written again, the file synced, the
//! journal removed — after checking that the file still has the journal's size and that
//! every header byte is the old or the new one (anything else means the file changed since,
//! and recovery refuses). Rolling forward is idempotent, so a crash during recovery is
//! recovered the same way. gguf-edit runs [`recover`] before editing a file in place, and
//! `gguf-edit recover FILE` runs it alone.
//!
//! Readers that do not know the journal (llama.cpp) must not load a file while its journal
//! exists; the window is the few milliseconds of step 2.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::gguf::{ByteOrder, GgufFile, Layout};
use crate::output::internal;
pub use crate::output::lock::FileLock;

/// Suffix of the journal of an in-place edit (`model.gguf.gguf-edit-journal`).
pub const JOURNAL_SUFFIX: &str = ".gguf-edit-journal";

const MAGIC: &[u8; 8] = b"GGUFEDJ1";

/// The journal of `file`.
pub fn journal_path(file: &Path) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(JOURNAL_SUFFIX);
    PathBuf::from(s)
}

/// Why a new header cannot be written in place (the caller copies the file instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotInPlace {
    /// The header changes size.
    #[error("the header grows or shrinks from {old} to {new} bytes (with padding)")]
    HeaderSize {
        /// Old size (the data offset).
        old: u64,
        /// New size.
        new: u64,
    },
    /// The alignment changes.
    #[error("the alignment changes from {old} to {new}")]
    Alignment {
        /// Old alignment.
        old: u64,
        /// New alignment.
        new: u64,
    },
    /// The file is not laid out as the writer lays it out (offsets, size or padding).
    #[error("the file's layout is not the canonical one ({0})")]
    Layout(String),
    /// A big-endian file.
    #[error("the file is big-endian")]
    BigEndian,
}

/// Whether the file `old` with the header of `new` is exactly the file `new` plans (see the
/// module documentation).
pub fn fits(old: &GgufFile, new: &Layout) -> Result<(), NotInPlace> {
    if old.byte_order != ByteOrder::Little {
        return Err(NotInPlace::BigEndian);
    }
    if new.data_offset() != old.data_offset {
        return Err(NotInPlace::HeaderSize {
            old: old.data_offset,
            new: new.data_offset(),
        });
    }
    if new.alignment != old.alignment as u64 {
        return Err(NotInPlace::Alignment {
            old: old.alignment as u64,
            new: new.alignment,
        });
    }
    if new.file_size != old.file_size() {
        return Err(NotInPlace::Layout(format!(
            "{} bytes, {} planned",
            old.file_size(),
            new.file_size
        )));
    }
    let bytes: &[u8] = old.local_bytes();
    let mut end = 0u64;
    for (i, t) in old.tensors.iter().enumerate() {
        if new.offsets.get(i) != Some(&t.offset) || new.sizes.get(i) != Some(&t.nbytes) {
            return Err(NotInPlace::Layout(format!("tensor '{}' moves", t.name)));
        }
        let gap = (old.data_offset + end) as usize..(old.data_offset + t.offset) as usize;
        if bytes.get(gap).is_none_or(|g| g.iter().any(|&b| b != 0)) {
            return Err(NotInPlace::Layout(format!(
                "non-zero padding before tensor '{}'",
                t.name
            )));
        }
        end = t.offset + t.nbytes;
    }
    let tail = (old.data_offset + end) as usize..bytes.len();
    if bytes.get(tail).is_none_or(|g| g.iter().any(|&b| b != 0)) {
        return Err(NotInPlace::Layout(
            "non-zero padding after the last tensor".into(),
        ));
    }
    Ok(())
}

/// Why an in-place rewrite or a recovery failed.
#[derive(Debug, thiserror::Error)]
pub enum InPlaceError {
    /// An I/O error (or an injected crash, see [`Faults`]).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A journal is already there: an earlier edit was interrupted.
    #[error("{journal}: an earlier in-place edit of this file was interrupted; run `gguf-edit recover {file}` to finish it")]
    Pending {
        /// The file.
        file: PathBuf,
        /// Its journal.
        journal: PathBuf,
    },
    /// The journal does not describe this file as it is.
    #[error("{journal} does not match {file} ({problem}): the file changed after the interrupted edit; if the file is good, delete the journal")]
    Mismatch {
        /// The file.
        file: PathBuf,
        /// Its journal.
        journal: PathBuf,
        /// What differs.
        problem: String,
    },
    /// The file's header is no longer the one the edit was planned from: another writer
    /// changed it.
    #[error("{0}: the file changed since it was read (another program wrote it); nothing was written, run the edit again")]
    Changed(PathBuf),
    /// Old and new headers differ in size (not an in-place edit).
    #[error("the new header has {new} bytes, the old one {old}")]
    SizeChange {
        /// Old size.
        old: usize,
        /// New size.
        new: usize,
    },
}

/// Write steps of [`rewrite_header`] and [`recover`], counted; for tests, a crash injected
/// after a given number of them (the operation then stops where it is, as a killed process
/// would, leaving everything on disk as it is).
#[derive(Debug, Default, Clone)]
pub struct Faults {
    /// Fail at the step with this index (0 = before the first write).
    pub fail_at: Option<usize>,
    /// Steps taken so far.
    pub steps: usize,
    /// Whether the header write has not yet written any byte of the file.
    untouched: bool,
    /// Whether an injected crash happened (the operation then cleans nothing up).
    crashed: bool,
}

impl Faults {
    /// No failure.
    pub fn none() -> Faults {
        Faults::default()
    }

    /// A crash before step `k` (counted from 0).
    pub fn crash_at(k: usize) -> Faults {
        Faults {
            fail_at: Some(k),
            ..Faults::default()
        }
    }

    fn step(&mut self, path: &Path) -> Result<(), InPlaceError> {
        if self.fail_at == Some(self.steps) {
            self.crashed = true;
            return Err(InPlaceError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other(format!("injected crash at step {}", self.steps)),
            });
        }
        self.steps += 1;
        Ok(())
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> InPlaceError + '_ {
    move |source| InPlaceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn sync_dir(file: &Path) -> Result<(), InPlaceError> {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

fn encode_journal(file_len: u64, old: &[u8], new: &[u8]) -> Vec<u8> {
    let mut j = Vec::with_capacity(64 + old.len() + new.len());
    j.extend_from_slice(MAGIC);
    j.extend(file_len.to_le_bytes());
    j.extend((old.len() as u64).to_le_bytes());
    j.extend(old);
    j.extend(new);
    let digest = Sha256::digest(&j);
    j.extend_from_slice(&digest);
    j
}

/// A complete journal: the file's size, old and new header.
struct Journal {
    file_len: u64,
    old: Vec<u8>,
    new: Vec<u8>,
}

/// Parses a journal; `None` when it is incomplete or damaged.
fn decode_journal(j: &[u8]) -> Option<Journal> {
    let body_len = j.len().checked_sub(32)?;
    let (body, digest) = j.split_at(body_len);
    if body.len() < 24 || &body[..8] != MAGIC || Sha256::digest(body).as_slice() != digest {
        return None;
    }
    let file_len = u64::from_le_bytes(body[8..16].try_into().ok()?);
    let n = usize::try_from(u64::from_le_bytes(body[16..24].try_into().ok()?)).ok()?;
    let rest = &body[24..];
    if rest.len() != n.checked_mul(2)? {
        return None;
    }
    Some(Journal {
        file_len,
        old: rest[..n].to_vec(),
        new: rest[n..].to_vec(),
    })
}

/// Writes `new` over the first bytes of the locked file (which must hold `old`) through the
/// journal (see the module documentation). `sync` false skips the syncs (then a power
/// failure, unlike a crash, can lose the journal's protection). A journal already there is
/// an error ([`InPlaceError::Pending`]): call [`recover`] first. The file must have been
/// locked for writing before it was read, so that nobody replaced it since
/// ([`FileLock::acquire`]); its first bytes are compared with `old` all the same (a writer
/// that ignores the lock), and nothing is written when they differ. The journal is written
/// aside and renamed into place, so it is complete or absent, and it exists only while the
/// file is being changed: any failure before the header write starts removes it.
pub fn rewrite_header(
    lock: &FileLock,
    old: &[u8],
    new: &[u8],
    sync: bool,
    faults: &mut Faults,
) -> Result<(), InPlaceError> {
    use std::os::unix::fs::FileExt;
    let path = lock.path();
    if old.len() != new.len() {
        return Err(InPlaceError::SizeChange {
            old: old.len(),
            new: new.len(),
        });
    }
    let jpath = journal_path(path);
    if std::fs::symlink_metadata(&jpath).is_ok() {
        return Err(InPlaceError::Pending {
            file: path.to_path_buf(),
            journal: jpath,
        });
    }
    let mut head = vec![0u8; old.len()];
    lock.file().read_exact_at(&mut head, 0).map_err(io(path))?;
    if head != old {
        return Err(InPlaceError::Changed(path.to_path_buf()));
    }
    let file_len = lock.file().metadata().map_err(io(path))?.len();
    let journal = encode_journal(file_len, old, new);

    // 1. The journal, complete and on disk before the file is touched.
    write_journal(&jpath, &journal, sync, faults)?;

    // 2. The new header over the old one (in two writes: a crash may tear it).
    if let Err(e) = write_header(lock, new, sync, faults) {
        if faults.untouched && !faults.crashed {
            // Nothing of the file was written: the journal must not outlive the edit.
            let _ = std::fs::remove_file(&jpath);
        }
        return Err(e);
    }

    // 3. The journal goes.
    faults.step(&jpath)?;
    std::fs::remove_file(&jpath).map_err(io(&jpath))?;
    if sync {
        faults.step(&jpath)?;
        sync_dir(&jpath)?;
    }
    Ok(())
}

/// Writes the journal beside the file as ggufkit's own file (never through a link): a
/// temporary file, synced, renamed into place. A failure leaves no journal.
fn write_journal(
    jpath: &Path,
    journal: &[u8],
    sync: bool,
    faults: &mut Faults,
) -> Result<(), InPlaceError> {
    let out_err = |e: crate::output::OutputError| InPlaceError::Io {
        path: jpath.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    };
    faults.step(jpath)?;
    let mut j = internal::create(jpath, sync).map_err(out_err)?;
    let half = journal.len() / 2;
    faults.step(jpath)?;
    j.write_all(&journal[..half]).map_err(io(jpath))?;
    faults.step(jpath)?;
    j.write_all(&journal[half..]).map_err(io(jpath))?;
    faults.step(jpath)?;
    let finished = j.finish().map_err(out_err)?;
    faults.step(jpath)?;
    finished.commit(sync).map_err(out_err)
}

fn write_header(
    lock: &FileLock,
    new: &[u8],
    sync: bool,
    faults: &mut Faults,
) -> Result<(), InPlaceError> {
    use std::os::unix::fs::FileExt;
    let path = lock.path();
    let f = lock.writer();
    faults.untouched = true;
    faults.step(path)?;
    let half = new.len() / 2;
    faults.step(path)?;
    f.write_all_at(&new[..half], 0).map_err(io(path))?;
    faults.untouched = false;
    faults.step(path)?;
    f.write_all_at(&new[half..], half as u64)
        .map_err(io(path))?;
    if sync {
        faults.step(path)?;
        f.sync_all().map_err(io(path))?;
    }
    Ok(())
}

/// What [`recover`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// No journal: nothing to do.
    Clean,
    /// An incomplete journal (the edit stopped before touching the file): removed.
    Discarded,
    /// A complete journal: the new header written (again), the journal removed.
    RolledForward,
}

/// Whether `path` has a journal (an interrupted in-place edit) to recover.
pub fn pending(path: &Path) -> bool {
    std::fs::symlink_metadata(journal_path(path)).is_ok()
}

/// Finishes an interrupted [`rewrite_header`] of the locked file (see the module
/// documentation). The file must be locked for writing when it has a journal.
pub fn recover(lock: &FileLock, sync: bool, faults: &mut Faults) -> Result<Recovery, InPlaceError> {
    use std::os::unix::fs::FileExt;
    let path = lock.path();
    let jpath = journal_path(path);
    if std::fs::symlink_metadata(&jpath).is_ok_and(|m| !m.is_file()) {
        return Err(InPlaceError::Io {
            path: jpath,
            source: std::io::Error::other(
                "not a regular file (a journal is never a symlink); remove it",
            ),
        });
    }
    let mut bytes = Vec::new();
    match File::open(&jpath) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Recovery::Clean),
        Err(e) => return Err(io(&jpath)(e)),
        Ok(mut f) => {
            f.read_to_end(&mut bytes).map_err(io(&jpath))?;
        }
    }
    let Some(journal) = decode_journal(&bytes) else {
        faults.step(&jpath)?;
        std::fs::remove_file(&jpath).map_err(io(&jpath))?;
        if sync {
            faults.step(&jpath)?;
            sync_dir(&jpath)?;
        }
        return Ok(Recovery::Discarded);
    };
    let mismatch = |problem: String| InPlaceError::Mismatch {
        file: path.to_path_buf(),
        journal: jpath.clone(),
        problem,
    };
    let len = lock.file().metadata().map_err(io(path))?.len();
    if len != journal.file_len {
        return Err(mismatch(format!(
            "the file has {len} bytes, the journal says {}",
            journal.file_len
        )));
    }
    let mut head = vec![0u8; journal.new.len()];
    lock.file().read_exact_at(&mut head, 0).map_err(io(path))?;
    let foreign = head
        .iter()
        .zip(journal.old.iter().zip(&journal.new))
        .position(|(h, (o, n))| h != o && h != n);
    if let Some(at) = foreign {
        return Err(mismatch(format!(
            "header byte {at} is neither the old nor the new one"
        )));
    }
    if head != journal.new {
        write_header(lock, &journal.new, sync, faults)?;
    }
    faults.step(&jpath)?;
    std::fs::remove_file(&jpath).map_err(io(&jpath))?;
    if sync {
        faults.step(&jpath)?;
        sync_dir(&jpath)?;
    }
    Ok(Recovery::RolledForward)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::gguf::layout;
    use crate::ir::{Model, Tensor, TensorData};
    use crate::write::{write_model, WriteOptions};
    use ggufkit_quantizers::GgmlType;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ggufkit-inplace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn model(name: &str) -> Model {
        let mut m = Model::default();
        m.metadata.set("general.architecture", "llama");
        m.metadata.set("general.name", name);
        m.metadata
            .set("llama.context_length", crate::gguf::Value::U32(2048));
        for (i, n) in [40usize, 7, 64].iter().enumerate() {
            m.tensors.push(Tensor {
                name: format!("t{i}"),
                dims: vec![*n as u64],
                ty: GgmlType::F32,
                data: TensorData::Owned(Arc::new((0..n * 4).map(|b| b as u8 | 1).collect())),
            });
        }
        m
    }

    fn write(m: &Model, path: &Path) {
        write_model(
            m,
            path,
            &WriteOptions {
                overwrite: true,
                ..WriteOptions::default()
            },
        )
        .unwrap();
    }

    /// The old file, the new file and the new header of a same-size edit.
    fn setup(dir: &Path) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let old = dir.join("old.gguf");
        let new = dir.join("new.gguf");
        write(&model("aaaa"), &old);
        write(&model("bbbbbb"), &new);
        let (old, new) = (std::fs::read(&old).unwrap(), std::fs::read(&new).unwrap());
        let f = GgufFile::parse(crate::mapped::FileBytes::from_vec(old.clone())).unwrap();
        let m = model("bbbbbb");
        let l = layout(&m.metadata, &m.headers()).unwrap();
        assert_eq!(fits(&f, &l), Ok(()));
        let header = l.header.clone();
        assert_eq!(&new[..header.len()], &header[..]);
        (old, new, header)
    }

    #[test]
    fn a_crash_at_any_write_step_leaves_the_old_or_the_new_file_after_recovery() {
        let dir = scratch("crash");
        let (old, new, header) = setup(&dir);
        let target = dir.join("m.gguf");
        let jpath = journal_path(&target);
        let mut torn_seen = false;
        let mut recoveries = 0;
        let mut k = 0;
        loop {
            std::fs::write(&target, &old).unwrap();
            let mut faults = Faults::crash_at(k);
            let lock = FileLock::acquire(&target, true).unwrap();
            let done =
                rewrite_header(&lock, &old[..header.len()], &header, true, &mut faults).is_ok();
            drop(lock);
            let crashed = std::fs::read(&target).unwrap();
            if done {
                assert_eq!(crashed, new, "no crash: the new file");
                assert!(!jpath.exists(), "no crash: no journal");
                break;
            }
            let Ok(journal) = std::fs::read(&jpath) else {
                // No journal: not yet touched, or already complete; never torn.
                assert!(
                    crashed == old || crashed == new,
                    "crash at step {k} without a journal"
                );
                k += 1;
                continue;
            };
            torn_seen |= crashed != old && crashed != new;
            // Recovery, itself crashed at every one of its steps, then run again.
            let mut j = 0;
            loop {
                std::fs::write(&target, &crashed).unwrap();
                std::fs::write(&jpath, &journal).unwrap();
                let lock = FileLock::acquire(&target, true).unwrap();
                let first = recover(&lock, true, &mut Faults::crash_at(j));
                let outcome = match first {
                    Ok(r) => r,
                    Err(_) => recover(&lock, true, &mut Faults::none()).unwrap(),
                };
                drop(lock);
                let after = std::fs::read(&target).unwrap();
                assert!(!jpath.exists(), "step {k}/{j}: journal left");
                // A complete journal rolls forward; an incomplete one means an untouched file.
                let complete = decode_journal(&journal).is_some();
                let want = if complete { &new } else { &old };
                assert!(after == *want, "step {k}/{j}: complete journal {complete}");
                match outcome {
                    Recovery::Discarded => assert!(!complete, "step {k}/{j}"),
                    Recovery::RolledForward => assert!(complete, "step {k}/{j}"),
                    // A crash after the journal was removed: nothing left to do.
                    Recovery::Clean => assert!(first.is_err(), "step {k}/{j}"),
                }
                recoveries += 1;
                if first.is_ok() {
                    break;
                }
                j += 1;
            }
            k += 1;
        }
        assert!(k >= 8, "only {k} steps");
        assert!(recoveries > k, "{recoveries} recoveries");
        assert!(
            torn_seen,
            "no step left a torn header: the test proves nothing"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_pending_or_foreign_journal_is_never_ignored() {
        let dir = scratch("pending");
        let (old, _, header) = setup(&dir);
        let target = dir.join("m.gguf");
        std::fs::write(&target, &old).unwrap();
        // Crash after the journal is complete, before the file is touched.
        let mut f = Faults::crash_at(5);
        let lock = FileLock::acquire(&target, true).unwrap();
        assert!(rewrite_header(&lock, &old[..header.len()], &header, true, &mut f).is_err());
        assert!(journal_path(&target).exists());
        let e = rewrite_header(
            &lock,
            &old[..header.len()],
            &header,
            true,
            &mut Faults::none(),
        )
        .unwrap_err();
        assert!(matches!(e, InPlaceError::Pending { .. }), "{e}");
        assert!(e.to_string().contains("gguf-edit recover"), "{e}");
        // The file changed since: recovery refuses.
        let mut changed = old.clone();
        changed[10] ^= 0xff;
        std::fs::write(&target, &changed).unwrap();
        let e = recover(&lock, true, &mut Faults::none()).unwrap_err();
        assert!(matches!(e, InPlaceError::Mismatch { .. }), "{e}");
        std::fs::write(&target, &old[..old.len() - 1]).unwrap();
        let e = recover(&lock, true, &mut Faults::none()).unwrap_err();
        assert!(e.to_string().contains("bytes"), "{e}");
        drop(lock);
        let none = dir.join("none.gguf");
        std::fs::write(&none, &old).unwrap();
        let lock = FileLock::acquire(&none, true).unwrap();
        assert_eq!(
            recover(&lock, true, &mut Faults::none()).unwrap(),
            Recovery::Clean
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_header_changed_since_it_was_read_is_never_overwritten() {
        let dir = scratch("changed");
        let (old, _, header) = setup(&dir);
        let target = dir.join("m.gguf");
        let mut other = old.clone();
        other[header.len() - 1] ^= 0x55;
        std::fs::write(&target, &other).unwrap();
        let lock = FileLock::acquire(&target, true).unwrap();
        let e = rewrite_header(
            &lock,
            &old[..header.len()],
            &header,
            true,
            &mut Faults::none(),
        )
        .unwrap_err();
        assert!(matches!(e, InPlaceError::Changed(_)), "{e}");
        assert_eq!(std::fs::read(&target).unwrap(), other);
        assert!(!journal_path(&target).exists());
        // A journal that is a symlink is never followed.
        let victim = dir.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::fs::write(&target, &old).unwrap();
        std::os::unix::fs::symlink(&victim, journal_path(&target)).unwrap();
        assert!(recover(&lock, true, &mut Faults::none()).is_err());
        assert!(rewrite_header(
            &lock,
            &old[..header.len()],
            &header,
            true,
            &mut Faults::none()
        )
        .is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&target).unwrap(), old);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fits_only_when_nothing_moves() {
        let dir = scratch("fits");
        let p = dir.join("a.gguf");
        write(&model("aaaa"), &p);
        let f = GgufFile::open(&p).unwrap();
        let check = |name: &str| {
            let m = model(name);
            fits(&f, &layout(&m.metadata, &m.headers()).unwrap())
        };
        assert_eq!(check("a"), Ok(()));
        assert!(matches!(
            check(&"x".repeat(400)),
            Err(NotInPlace::HeaderSize { .. })
        ));
        let mut m = model("a");
        m.metadata
            .set("general.alignment", crate::gguf::Value::U32(64));
        let l = layout(&m.metadata, &m.headers()).unwrap();
        assert!(fits(&f, &l).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
