//! ggufkit's own files: the batch state and its journal, gguf-edit's journals.
//!
//! Their names are chosen by ggufkit, not by the user, so a symlink, a directory, a device or
//! a FIFO found under such a name was put there by someone else: it is refused, never
//! followed or written. A whole file ([`write`]) is written to an exclusive temporary file
//! beside it and renamed over the name itself (a rename replaces the directory entry, so it
//! cannot reach another file through a link, hard or symbolic); it appears complete or not at
//! all. An appended file ([`open_append`]) is opened without following a symlink and must be
//! a regular file with no other hard link, so an append can only reach the journal itself.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::{create_temp, parent_dir, AtomicOutput, Destination, OutputError};

/// Refuses `path` unless it is absent or a regular file (not followed through a symlink).
fn check(path: &Path) -> Result<(), OutputError> {
    let refused = |why: &str| OutputError::Refused {
        path: path.to_path_buf(),
        why: format!("{why}; ggufkit writes this file itself, so remove what is there"),
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(refused("it is a symlink")),
        Ok(m) if m.is_dir() => Err(refused("it is a directory")),
        Ok(m) if !m.is_file() => Err(refused("it is not a regular file")),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(OutputError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Starts writing ggufkit's own file `path`: a temporary file beside it, renamed over the
/// name itself at commit (see the module documentation).
pub fn create(path: &Path, sync: bool) -> Result<AtomicOutput, OutputError> {
    check(path)?;
    if path.as_os_str().is_empty() || !parent_dir(path).is_dir() {
        return Err(OutputError::Refused {
            path: path.to_path_buf(),
            why: "its directory does not exist".into(),
        });
    }
    let (file, temp) = create_temp(path, path)?;
    let dest = Destination::Rename {
        dest: path.to_path_buf(),
        temp,
    };
    Ok(AtomicOutput::from_parts(path, file, dest, sync))
}

/// Writes ggufkit's own file `path` whole: complete or not at all.
pub fn write(path: &Path, bytes: &[u8], sync: bool) -> Result<(), OutputError> {
    let mut out = create(path, sync)?;
    out.write_all(bytes).map_err(out.io())?;
    out.commit()
}

/// Opens ggufkit's own append-only file `path` (created if absent): never through a
/// symlink, only a regular file with one link.
pub fn open_append(path: &Path) -> Result<File, OutputError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    check(path)?;
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io)?;
    let m = f.metadata().map_err(io)?;
    if !m.is_file() || m.nlink() != 1 {
        return Err(OutputError::Refused {
            path: path.to_path_buf(),
            why: "it is not a regular file with a single link; ggufkit writes this file \
                  itself, so remove what is there"
                .into(),
        });
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_special_files_are_never_written_through() {
        let dir = std::env::temp_dir().join(format!("ggufkit-internal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let link = dir.join("state");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(matches!(
            write(&link, b"{}", false),
            Err(OutputError::Refused { .. })
        ));
        assert!(open_append(&link).is_err());
        let hard = dir.join("journal");
        std::fs::hard_link(&victim, &hard).unwrap();
        assert!(open_append(&hard).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        // A hard link is replaced by the rename, never written through.
        write(&hard, b"new", false).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&hard).unwrap(), b"new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
