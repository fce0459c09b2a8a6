//! iq3_s: 256 elements per block, 110 bytes per block (3.4375 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u8; 64]` (low 8 bits of one [`IQ3S_GRID`] index per 4 elements),
//! `qh: [u8; 8]` (bit `k` of `qh[g]` is bit 8 of the `k`-th index of group `g`), `signs:
//! [u8; 32]` (one explicit sign byte per 8 elements), `scales: [u8; 4]` (two 4-bit scales per
//! 64 elements: low nibble for the first 32). Element value: `d·(1+2s) · grid · sign`.

use super::iq_grids::{sign_factor, IQ3S_GRID};
use crate::common::{f16_to_f32, get_u16};
use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 256;
/// Bytes per block.
const BLOCK_BYTES: usize = 110;
/// Byte offset of `qs` in a block.
const QS: usize = 2;
/// Byte offset of `qh` in a block.
const QH: usize = QS + 64;
/// Byte offset of `signs` in a block.
const SIGNS: usize = QH + 8;
/// Byte offset of `scales` in a block.
const SCALES: usize = SIGNS + 32;

/// Registry entry for iq3_s.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::IQ3_S,
    name: "iq3_s",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: true,
    quantize: None,
    dequantize: Some(dequantize_row),
};

/// Dequantizes whole iq3_s blocks (`dequantize_row_iq3_s`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let nibble = (block[SCALES + g / 2] >> (4 * (g % 2))) & 0xf;
            let db = d * (1 + 2 * nibble as i32) as f32;
            let qh = block[QH + g] as usize;
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let k = 2 * l;
                let q = QS + 8 * g + k;
                let index = |h: usize| block[q + h] as usize | (((qh >> (k + h)) & 1) << 8);
                let halves = [&IQ3S_GRID[index(0)], &IQ3S_GRID[index(1)]];
                let signs = block[SIGNS + 4 * g + l];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db * halves[j / 4][j % 4] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
