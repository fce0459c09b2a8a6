//! f32: 1 element per block, 4 bytes per block. Stored verbatim, little-endian.
//!
//! `ggml_quantize_chunk` copies F32 rows with `memcpy`; both directions here are the same
//! exact byte copy, so every bit pattern (NaN payloads, signed zeros, subnormals) survives.

/// Elements per block.
pub(crate) const QK: usize = 1;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = 4;

/// Writes `src` as little-endian f32 bytes. The imatrix is ignored.
pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    debug_assert_eq!(dst.len(), src.len() * 4);
    for (d, &v) in dst.chunks_exact_mut(4).zip(src) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}

/// Reads little-endian f32 bytes back, bit for bit.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len(), dst.len() * 4);
    for (b, d) in src.chunks_exact(4).zip(dst.iter_mut()) {
        *d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_bit() {
        let src = [
            1.5f32,
            -0.0,
            f32::from_bits(0x7fa0_0001),
            f32::INFINITY,
            f32::from_bits(1),
        ];
        let mut bytes = [0u8; 20];
        quantize_row(&src, &mut bytes, None);
        assert_eq!(&bytes[0..4], &1.5f32.to_le_bytes());
        let mut back = [0f32; 5];
        dequantize_row(&bytes, &mut back);
        for (a, b) in src.iter().zip(&back) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }
}
