//! Already-quantized data: a tensor whose source holds it in (a rearrangement of) its GGML
//! type's blocks, so that its output bytes are made by moving bits, never by dequantizing and
//! quantizing again.
//!
//! Pre-quantized checkpoints ship some tensors this way: gpt-oss's MXFP4 experts (`*_blocks`
//! nibbles plus `*_scales` E8M0 exponents), ModelOpt's NVFP4 weights (nibbles plus E4M3 scales
//! per 16 values). A reader describes such a tensor with a [`PackRows`]: how many rows it has,
//! how many bytes each output row takes, and a kernel that writes the GGML blocks of a range
//! of rows from the mapped source bytes. [`Packed`] makes it a [`Derive`] whose output is
//! computed a range of rows at a time, so the engine splits a large tensor into pieces as it
//! does for any row-wise transform, and peak memory stays a window of rows.
//!
//! A packed tensor's type is the GGML type of its blocks: it has no f32 stage (there are no
//! f32 values to share between outputs; every output gets the same bytes) and the planner
//! writes it under that type whatever the output type of the other tensors.

use std::ops::Range;
use std::sync::Arc;

use super::{DataError, Derive, Rows};

/// A source of already-quantized rows (see the module documentation).
pub trait PackRows: Send + Sync {
    /// One line naming the source tensors and the layout (for plans and errors).
    fn describe(&self) -> String;
    /// The output row layout: number of rows, bytes per output row, and source bytes read per
    /// row.
    fn rows(&self) -> Rows;
    /// The output bytes of rows `range` (`range.len() * rows().out_bytes` bytes).
    fn pack_rows(&self, range: Range<usize>) -> Result<Vec<u8>, DataError>;
    /// Tells the source that rows `range` will not be read again (drop mapped pages).
    fn release_rows(&self, range: Range<usize>);
}

/// The [`Derive`] of an already-quantized tensor: its bytes are [`PackRows::pack_rows`].
#[derive(Clone)]
pub struct Packed(pub Arc<dyn PackRows>);

impl Packed {
    /// Wraps a row source.
    pub fn new(source: impl PackRows + 'static) -> Packed {
        Packed(Arc::new(source))
    }

    fn check(&self, range: &Range<usize>, bytes: &[u8]) -> Result<(), DataError> {
        let rows = self.0.rows();
        if range.end > rows.count || range.start > range.end {
            return Err(DataError(format!(
                "{}: rows {range:?} outside its {} rows",
                self.0.describe(),
                rows.count
            )));
        }
        if bytes.len() != range.len() * rows.out_bytes {
            return Err(DataError(format!(
                "{}: {} bytes for {} rows of {} bytes",
                self.0.describe(),
                bytes.len(),
                range.len(),
                rows.out_bytes
            )));
        }
        Ok(())
    }
}

impl Derive for Packed {
    fn describe(&self) -> String {
        format!("repack({})", self.0.describe())
    }

    fn compute(&self) -> Result<Vec<u8>, DataError> {
        self.compute_rows(0..self.0.rows().count)
    }

    fn release(&self) {
        self.0.release_rows(0..self.0.rows().count);
    }

    fn rows(&self) -> Option<Rows> {
        Some(self.0.rows())
    }

    fn compute_rows(&self, range: Range<usize>) -> Result<Vec<u8>, DataError> {
        let out = self.0.pack_rows(range.clone())?;
        self.check(&range, &out)?;
        Ok(out)
    }

    fn release_rows(&self, range: Range<usize>) {
        self.0.release_rows(range);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row `r` is `width` bytes of value `r`.
    struct Counting {
        count: usize,
        width: usize,
        short: bool,
    }

    impl PackRows for Counting {
        fn describe(&self) -> String {
            "counting".into()
        }
        fn rows(&self) -> Rows {
            Rows {
                count: self.count,
                out_bytes: self.width,
                in_bytes: self.width,
            }
        }
        fn pack_rows(&self, range: Range<usize>) -> Result<Vec<u8>, DataError> {
            let n = if self.short { 1 } else { self.width };
            Ok(range
                .flat_map(|r| std::iter::repeat_n(r as u8, n))
                .collect())
        }
        fn release_rows(&self, _: Range<usize>) {}
    }

    #[test]
    fn rows_in_pieces_equal_the_whole() {
        let p = Packed::new(Counting {
            count: 5,
            width: 3,
            short: false,
        });
        let whole = p.compute().unwrap();
        assert_eq!(whole.len(), 15);
        let mut pieces = p.compute_rows(0..2).unwrap();
        pieces.extend(p.compute_rows(2..5).unwrap());
        assert_eq!(pieces, whole);
        assert_eq!(p.rows().unwrap().count, 5);
    }

    #[test]
    fn a_kernel_giving_the_wrong_size_or_rows_outside_are_errors() {
        let p = Packed::new(Counting {
            count: 5,
            width: 3,
            short: true,
        });
        assert!(p.compute().unwrap_err().0.contains("bytes for 5 rows"));
        let ok = Packed::new(Counting {
            count: 5,
            width: 3,
            short: false,
        });
        assert!(ok.compute_rows(4..6).is_err());
    }
}
