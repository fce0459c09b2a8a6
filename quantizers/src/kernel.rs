//! The shapes of the row kernels: what a format module exports and the registry collects.
//!
//! A neutral module: the formats implement these signatures without knowing the registry,
//! and the registry names the formats without the formats naming it back.

/// Quantizes one row: `src` holds `n_per_row` floats (a whole number of blocks), `dst` exactly
/// the row's bytes. `imatrix`, when given, has `n_per_row` importance weights (llama.cpp
/// passes the same vector for every row). Types that ignore the imatrix accept and ignore it.
pub type QuantizeRowFn = fn(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>);

/// Quantizes one row like [`QuantizeRowFn`], but may refuse it: the IQ lattice searches
/// meet inputs (infinities, NaN, values near `f32::MAX`) on which llama.cpp aborts.
pub type TryQuantizeRowFn =
    fn(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) -> Result<(), Unrepresentable>;

/// Dequantizes whole blocks: `src` holds `dst.len() / block_size` blocks.
pub type DequantizeRowFn = fn(src: &[u8], dst: &mut [f32]);

/// A block a quantizer cannot represent (llama.cpp aborts on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unrepresentable {
    /// The block's index within its row.
    pub block: usize,
    /// What went wrong.
    pub reason: &'static str,
}

impl std::fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "block {}: {}", self.block, self.reason)
    }
}

/// A row quantizer: one that always succeeds, or one that may refuse a row.
#[derive(Debug, Clone, Copy)]
pub enum Quantizer {
    /// Succeeds on every input.
    Total(QuantizeRowFn),
    /// May refuse a row it cannot represent.
    Partial(TryQuantizeRowFn),
}

impl Quantizer {
    /// Quantizes one row (see [`QuantizeRowFn`]).
    pub fn quantize_row(
        self,
        src: &[f32],
        dst: &mut [u8],
        imatrix: Option<&[f32]>,
    ) -> Result<(), Unrepresentable> {
        match self {
            Quantizer::Total(f) => {
                f(src, dst, imatrix);
                Ok(())
            }
            Quantizer::Partial(f) => f(src, dst, imatrix),
        }
    }
}
