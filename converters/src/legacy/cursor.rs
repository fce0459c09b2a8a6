//! The core's checked [`Cursor`](ggufkit::cursor::Cursor) with the legacy reader's errors:
//! every read names what it reads and fails with the file and absolute offset when the file is
//! too short.

use std::path::Path;

use ggufkit::cursor::Short;

use super::error::{LegacyError, LegacyErrorKind};

/// Reads little-endian fields from `bytes`, starting at an absolute offset.
pub(crate) struct Cursor<'a> {
    inner: ggufkit::cursor::Cursor<'a>,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    /// A cursor at offset 0 of `bytes`, which came from `path`.
    pub(crate) fn new(bytes: &'a [u8], path: &'a Path) -> Self {
        Cursor {
            inner: ggufkit::cursor::Cursor::new(bytes),
            path,
        }
    }

    /// Absolute offset of the next read.
    pub(crate) fn pos(&self) -> usize {
        self.inner.pos()
    }

    /// Bytes after the current position.
    pub(crate) fn remaining(&self) -> usize {
        self.inner.remaining()
    }

    /// True at end of file.
    pub(crate) fn at_end(&self) -> bool {
        self.inner.at_end()
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

    /// A short read as the legacy reader's error.
    fn truncated(&self, short: Short, what: String) -> LegacyError {
        self.error_at(
            short.offset as usize,
            LegacyErrorKind::Truncated {
                what,
                need: short.needed,
                available: short.available,
            },
        )
    }

    /// The next `n` bytes.
    pub(crate) fn take(
        &mut self,
        n: usize,
        what: impl FnOnce() -> String,
    ) -> Result<&'a [u8], LegacyError> {
        self.inner
            .take(n as u64)
            .map_err(|short| self.truncated(short, what()))
    }

    /// A little-endian u32.
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, LegacyError> {
        self.inner
            .u32()
            .map_err(|short| self.truncated(short, what.to_string()))
    }

    /// A little-endian f32, bits preserved.
    pub(crate) fn f32(&mut self, what: impl FnOnce() -> String) -> Result<f32, LegacyError> {
        self.inner
            .f32()
            .map_err(|short| self.truncated(short, what()))
    }
}
