//! bf16: 1 element per block, 2 bytes per block (the top half of the f32 bits, little-endian).
//!
//! Quantization is `ggml_fp32_to_bf16_row_ref` (the function `ggml_quantize_chunk` uses):
//! round to nearest even, subnormals kept. **NaN handling:** a NaN keeps its sign and the top
//! 7 payload bits and is made quiet (`(bits >> 16) | 0x40`). Dequantization is exact
//! (`bits << 16`).

use crate::common::{bf16_to_f32, f32_to_bf16};
use crate::simd::{multiversion, V8};

/// Elements per block.
pub(crate) const QK: usize = 1;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = 2;

multiversion! {
    /// Converts a row to bf16. The imatrix is ignored.
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

#[inline(always)]
fn quantize_row_impl<S: V8>(_: S, src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    debug_assert_eq!(dst.len(), src.len() * 2);
    for (d, &v) in dst.chunks_exact_mut(2).zip(src) {
        d.copy_from_slice(&f32_to_bf16(v).to_le_bytes());
    }
}

multiversion! {
    /// Widens bf16 values to f32.
    pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) = dequantize_row_impl;
}

#[inline(always)]
fn dequantize_row_impl<S: V8>(_: S, src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len(), dst.len() * 2);
    for (s, d) in src.chunks_exact(2).zip(dst.iter_mut()) {
        *d = bf16_to_f32(u16::from_le_bytes([s[0], s[1]]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_nan_and_round_trip() {
        let src = [
            1.0f32,
            f32::from_bits(0x3f80_8000), // halfway, even below: stays
            f32::from_bits(0x3f81_8000), // halfway, odd below: rounds up
            f32::from_bits(0x0000_0001), // subnormal: kept (rounds to +0 here)
            f32::from_bits(0x0001_8000), // subnormal that survives
            f32::from_bits(0xff80_0001), // signalling NaN, negative
            f32::INFINITY,
            -0.0,
        ];
        let mut q = [0u8; 16];
        quantize_row(&src, &mut q, None);
        let bits: Vec<u16> = q
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(
            bits,
            [0x3f80, 0x3f80, 0x3f82, 0x0000, 0x0002, 0xffc0, 0x7f80, 0x8000]
        );
        let mut back = [0f32; 8];
        dequantize_row(&q, &mut back);
        for (b, h) in back.iter().zip(&bits) {
            assert_eq!(b.to_bits(), (*h as u32) << 16);
        }
    }
}
