//! The one checked byte cursor under every binary reader (GGUF, legacy GGML, imatrix `.dat`,
//! protobuf `tokenizer.model`).
//!
//! No read can panic or run past the end: every read checks the bytes behind it first and
//! fails with a [`Short`] that says where and how much was missing, so a count or length read
//! from a file is never trusted before the bytes it announces are known to exist. Each reader
//! turns a [`Short`] into its own typed error, adding *what* it was reading.
//!
//! ```
//! use ggufkit::cursor::Cursor;
//!
//! let mut c = Cursor::new(&[1, 0, 0, 0, 0xff]);
//! assert_eq!(c.u32().unwrap(), 1);
//! let short = c.u32().unwrap_err();
//! assert_eq!((short.offset, short.needed, short.available), (4, 4, 1));
//! ```

/// A read that needed more bytes than remain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {needed} bytes needed, {available} remain")]
pub struct Short {
    /// Absolute offset of the read.
    pub offset: u64,
    /// Bytes the read needed.
    pub needed: u64,
    /// Bytes that remained.
    pub available: u64,
}

/// Reads fixed-width fields from a byte slice, little-endian unless told otherwise.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
    big_endian: bool,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`, whose first byte is at offset 0 of its file.
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor::at(bytes, 0)
    }

    /// A cursor at the start of `bytes`, whose first byte is at offset `base` of its file
    /// (offsets in errors are absolute).
    pub fn at(bytes: &'a [u8], base: u64) -> Self {
        Cursor {
            bytes,
            pos: 0,
            base,
            big_endian: false,
        }
    }

    /// Reads multi-byte numbers big-endian from now on (or little-endian again).
    pub fn set_big_endian(&mut self, big: bool) {
        self.big_endian = big;
    }

    /// True when numbers are read big-endian.
    pub fn is_big_endian(&self) -> bool {
        self.big_endian
    }

    /// Absolute offset of the next read.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Position of the next read within the slice.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Length of the whole slice.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when the slice is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bytes after the current position.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// True when every byte has been read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// The bytes not read yet (the cursor does not move).
    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    /// The shortfall of a read of `needed` bytes here.
    pub fn short(&self, needed: u64) -> Short {
        Short {
            offset: self.offset(),
            needed,
            available: self.remaining() as u64,
        }
    }

    /// The next `n` bytes. `n` is a `u64` so that a length read from a file is checked before
    /// any conversion to `usize`.
    pub fn take(&mut self, n: u64) -> Result<&'a [u8], Short> {
        if n > self.remaining() as u64 {
            return Err(self.short(n));
        }
        let start = self.pos;
        self.pos += n as usize;
        Ok(&self.bytes[start..self.pos])
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: u64) -> Result<(), Short> {
        self.take(n).map(|_| ())
    }

    /// The next `N` bytes as an array, in little-endian order (reversed when reading
    /// big-endian), ready for `from_le_bytes`.
    pub fn le_array<const N: usize>(&mut self) -> Result<[u8; N], Short> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N as u64)?);
        if self.big_endian {
            a.reverse();
        }
        Ok(a)
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, Short> {
        Ok(self.take(1)?[0])
    }

    /// A 32-bit unsigned integer.
    pub fn u32(&mut self) -> Result<u32, Short> {
        self.le_array().map(u32::from_le_bytes)
    }

    /// A 32-bit signed integer.
    pub fn i32(&mut self) -> Result<i32, Short> {
        self.le_array().map(i32::from_le_bytes)
    }

    /// A 64-bit unsigned integer.
    pub fn u64(&mut self) -> Result<u64, Short> {
        self.le_array().map(u64::from_le_bytes)
    }

    /// A 32-bit float, bits preserved.
    pub fn f32(&mut self) -> Result<f32, Short> {
        self.le_array().map(f32::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_checked_and_never_move_on_failure() {
        let mut c = Cursor::at(&[1, 2, 3], 100);
        assert_eq!(
            c.take(4),
            Err(Short {
                offset: 100,
                needed: 4,
                available: 3
            })
        );
        assert_eq!(c.pos(), 0);
        assert_eq!(c.take(u64::MAX).unwrap_err().needed, u64::MAX);
        assert_eq!(c.take(2).unwrap(), &[1, 2]);
        assert_eq!(c.offset(), 102);
        assert_eq!(c.u32().unwrap_err().available, 1);
        assert_eq!(c.u8().unwrap(), 3);
        assert!(c.at_end());
    }

    #[test]
    fn big_endian_numbers() {
        let mut c = Cursor::new(&[0, 0, 0, 3, 0, 0, 0, 3]);
        c.set_big_endian(true);
        assert_eq!(c.u32().unwrap(), 3);
        c.set_big_endian(false);
        assert_eq!(c.u32().unwrap(), 3 << 24);
    }
}
