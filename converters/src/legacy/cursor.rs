//! A checked cursor over a file's bytes: every read names what it reads and fails with the
//! absolute offset when the file is too short, so no count read from the file is trusted
//! before the bytes behind it are known to exist.

use std::path::Path;

use super::error::{LegacyError, LegacyErrorKind};

/// Reads little-endian fields from `bytes`, starting at an absolute offset.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    /// A cursor at offset 0 of `bytes`, which came from `path`.
    pub(crate) fn new(bytes: &'a [u8], path: &'a Path) -> Self {
        Cursor {
            bytes,
            pos: 0,
            path,
        }
    }

    /// Absolute offset of the next read.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes after the current position.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// True at end of file.
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// An error at `offset` of this file.
    pub(crate) fn error_at(&self, offset: usize, kind: LegacyErrorKind) -> LegacyError {
        LegacyError {
            path: self.path.to_path_buf(),
            offset: Some(offset as u64),
            tensor: None,
            kind,
        }
    }

    /// The next `n` bytes.
    pub(crate) fn take(
        &mut self,
        n: usize,
        what: impl FnOnce() -> String,
    ) -> Result<&'a [u8], LegacyError> {
        if n > self.remaining() {
            return Err(self.error_at(
                self.pos,
                LegacyErrorKind::Truncated {
                    what: what(),
                    need: n as u64,
                    available: self.remaining() as u64,
                },
            ));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A little-endian u32.
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, LegacyError> {
        let b = self.take(4, || what.to_string())?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A little-endian f32, bits preserved.
    pub(crate) fn f32(&mut self, what: impl FnOnce() -> String) -> Result<f32, LegacyError> {
        let b = self.take(4, what)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}
