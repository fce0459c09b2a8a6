//! q2_0: 64 elements per block, 18 bytes per block.
//!
//! Layout: `d: f16` (the block's max |x|), then `qs[16]`: element `j` is the 2-bit code at bit
//! `2 * (j % 4)` of byte `j / 4`. Value = `(code - 1) * d`, i.e. one of `-d, 0, d, 2d`.

use super::block32::in_fast_range;
use super::block32::round_fast;
use super::blocks::BlockQ2_0;
use crate::common::{c_round_i32, f16_to_f32, f32_to_f16, get_u16, put_u16};
use crate::simd::{multiversion, V8};
use std::mem::size_of;

/// Elements per block.
pub(crate) const QK: usize = 64;
/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = size_of::<BlockQ2_0>();

multiversion! {
    /// `quantize_row_q2_0_ref` (the imatrix is ignored).
    pub(crate) fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) = quantize_row_impl;
}

/// The block's `amax` (`if a > amax { amax = a }` from 0) is an integer maximum over the
/// bit patterns of `|x|` with NaNs (which never win `>`) counted as 0, and `roundf` is
/// q8_0's `round_fast` where that is exact; both loops vectorise. A block with a quant
/// outside the fast range is redone with the exact conversion.
#[inline(always)]
fn quantize_row_impl<S: V8>(_: S, src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    for (x, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let mut lanes = [0u32; 8];
        for chunk in x.chunks_exact(8) {
            for (l, &v) in lanes.iter_mut().zip(chunk) {
                let a = v.to_bits() & 0x7fff_ffff;
                let a = if a > 0x7f80_0000 { 0 } else { a };
                *l = (*l).max(a);
            }
        }
        let d = f32::from_bits(lanes.iter().fold(0, |m, &l| m.max(l)));
        let id = if d > 0.0 { 1.0f32 / d } else { 0.0 };
        put_u16(y, 0, f32_to_f16(d));
        let mut q = [0u8; QK];
        let mut exact = true;
        for (q, &w) in q.iter_mut().zip(x) {
            let s = w * id;
            exact &= in_fast_range(s);
            *q = (round_fast(s) + 1).clamp(0, 3) as u8;
        }
        if !exact {
            for (q, &w) in q.iter_mut().zip(x) {
                *q = c_round_i32(w * id).wrapping_add(1).clamp(0, 3) as u8;
            }
        }
        for (byte, q) in y[2..].iter_mut().zip(q.chunks_exact(4)) {
            *byte = q[0] | (q[1] << 2) | (q[2] << 4) | (q[3] << 6);
        }
    }
}

/// `dequantize_row_q2_0`.
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(b, 0));
        for (&byte, ys) in b[2..].iter().zip(y.chunks_exact_mut(4)) {
            for (k, v) in ys.iter_mut().enumerate() {
                let q = ((byte >> (2 * k)) & 3) as i32;
                *v = (q - 1) as f32 * d;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_half_away_and_clamp() {
        let mut x = vec![0f32; QK];
        x[0] = 4.0; // amax → code 2 (+1·d)
        x[1] = -4.0; // code 0 (-1·d)
        x[2] = 2.0; // 0.5 rounds away from zero → +1 → code 2
        x[3] = -2.0; // -0.5 → -1 → code 0
        x[4] = 1.9; // 0.475 → 0 → code 1
        let mut q = vec![0u8; BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        assert_eq!(q[2], 0b00_10_00_10);
        assert_eq!(q[3], 0b01_01_01_01);
        let mut y = vec![0f32; QK];
        dequantize_row(&q, &mut y);
        assert_eq!(&y[..5], &[4.0, -4.0, 4.0, -4.0, 0.0]);
    }

    #[test]
    fn zero_block() {
        let x = vec![0f32; QK];
        let mut q = vec![0xffu8; BLOCK_BYTES];
        quantize_row(&x, &mut q, None);
        assert_eq!(get_u16(&q, 0), 0);
        assert!(q[2..].iter().all(|&b| b == 0x55));
    }
}
