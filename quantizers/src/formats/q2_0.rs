//! q2_0: 64 elements per block, 18 bytes per block.
//!
//! Layout: `d: f16` (the block's max |x|), then `qs[16]`: element `j` is the 2-bit code at bit
//! `2 * (j % 4)` of byte `j / 4`. Value = `(code - 1) * d`, i.e. one of `-d, 0, d, 2d`.

use crate::common::{c_round_i32, f16_to_f32, f32_to_f16, get_u16, put_u16};
use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 64;
/// Bytes per block.
const BLOCK_BYTES: usize = 18;

/// Registry entry for q2_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::Q2_0,
    name: "q2_0",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: false,
    quantize: Some(quantize_row),
    dequantize: Some(dequantize_row),
};

/// `quantize_row_q2_0_ref` (the imatrix is ignored).
fn quantize_row(src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    for (x, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let mut amax = 0f32;
        for &v in x {
            let a = v.abs();
            if a > amax {
                amax = a;
            }
        }
        let d = amax;
        let id = if d > 0.0 { 1.0f32 / d } else { 0.0 };
        put_u16(y, 0, f32_to_f16(d));
        for (byte, xs) in y[2..].iter_mut().zip(x.chunks_exact(4)) {
            let mut b = 0u8;
            for (k, &w) in xs.iter().enumerate() {
                let q = c_round_i32(w * id).wrapping_add(1).clamp(0, 3);
                b |= (q as u8) << (2 * k);
            }
            *byte = b;
        }
    }
}

/// `dequantize_row_q2_0`.
fn dequantize_row(src: &[u8], dst: &mut [f32]) {
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
