//! Files appended to at the user's request (a batch's `--report`).
//!
//! Such a file is the user's choice, so a symlink is followed and a character device or FIFO
//! (`/dev/stdout`, a pipe) is written as it is, like an output; but it must not be any input
//! of the run. The check is made on the opened file (device and inode), so a path swapped
//! after the check cannot slip through. Each record is appended in one write.

use std::fs::{File, OpenOptions};
use std::path::Path;

use super::OutputError;

/// Opens `path` for appending (created if absent), refusing a directory, a block device, a
/// socket and any file that is one of `inputs` (compared by device and inode; an input that
/// is a directory counts with every file directly inside it and in its subdirectories one
/// level down, where a model directory keeps its files).
pub fn open_append(path: &Path, inputs: &[&Path]) -> Result<File, OutputError> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if path.as_os_str().is_empty() {
        return Err(OutputError::Refused {
            path: path.to_path_buf(),
            why: "the path is empty".into(),
        });
    }
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Ok(m) = std::fs::metadata(path) {
        refuse_kind(path, &m)?;
    }
    let f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    let m = f.metadata().map_err(io)?;
    refuse_kind(path, &m)?;
    if m.file_type().is_char_device() || m.file_type().is_fifo() {
        return Ok(f);
    }
    let id = (m.dev(), m.ino());
    if inputs.iter().any(|i| names(i, id)) {
        return Err(OutputError::IsInput(path.to_path_buf()));
    }
    Ok(f)
}

fn refuse_kind(path: &Path, m: &std::fs::Metadata) -> Result<(), OutputError> {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    let why = if t.is_dir() {
        "it is a directory"
    } else if t.is_block_device() {
        "it is a block device"
    } else if t.is_socket() {
        "it is a socket"
    } else {
        return Ok(());
    };
    Err(OutputError::Refused {
        path: path.to_path_buf(),
        why: why.into(),
    })
}

/// Whether the input `input` is, or (a directory) holds at depth ≤ 2, the file `id`.
fn names(input: &Path, id: (u64, u64)) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::metadata(input) else {
        return false;
    };
    if (m.dev(), m.ino()) == id {
        return true;
    }
    m.is_dir() && holds(input, id, 2)
}

fn holds(dir: &Path, id: (u64, u64), depth: usize) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().take(100_000).any(|e| {
        let p = e.path();
        match std::fs::metadata(&p) {
            Ok(m) if (m.dev(), m.ino()) == id => true,
            Ok(m) if m.is_dir() && depth > 1 => holds(&p, id, depth - 1),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_or_a_file_in_an_input_directory_is_refused() {
        let dir = std::env::temp_dir().join(format!("ggufkit-append-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("model/sub")).unwrap();
        let jobs = dir.join("jobs.toml");
        std::fs::write(&jobs, b"x").unwrap();
        std::fs::write(dir.join("model/sub/w.bin"), b"w").unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&jobs, &link).unwrap();
        let model = dir.join("model");
        let inputs = [jobs.as_path(), model.as_path()];
        for bad in [&jobs, &link, &dir.join("model/sub/w.bin")] {
            assert!(
                matches!(open_append(bad, &inputs), Err(OutputError::IsInput(_))),
                "{}",
                bad.display()
            );
        }
        assert!(open_append(&model, &inputs).is_err());
        assert_eq!(std::fs::read(&jobs).unwrap(), b"x");
        assert!(open_append(&dir.join("report.jsonl"), &inputs).is_ok());
        assert!(open_append(Path::new("/dev/null"), &inputs).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
