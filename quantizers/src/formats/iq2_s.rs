//! iq2_s: 256 elements per block, 82 bytes per block (2.5625 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u8; 32]` (low 8 bits of the grid index of each 8 elements),
//! `signs: [u8; 32]` (one explicit sign byte per 8 elements), `qh: [u8; 8]` (bits `2l..2l+2`
//! of `qh[g]` are bits 8–9 of the index of the `l`-th 8 in group `g`), `scales: [u8; 8]` (two
//! 4-bit scales per 32, as in iq2_xs). The index selects one of 1024 entries of
//! [`IQ2S_GRID`]. Element value: `d·(0.5+s)·0.25 · grid · sign`.

use super::iq_grids::{sign_factor, IQ2S_GRID};
use crate::common::{f16_to_f32, get_u16};
use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 256;
/// Bytes per block.
const BLOCK_BYTES: usize = 82;
/// Byte offset of `qs` in a block.
const QS: usize = 2;
/// Byte offset of `signs` in a block.
const SIGNS: usize = QS + 32;
/// Byte offset of `qh` in a block.
const QH: usize = SIGNS + 32;
/// Byte offset of `scales` in a block.
const SCALES: usize = QH + 8;

/// Registry entry for iq2_s.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::IQ2_S,
    name: "iq2_s",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: true,
    quantize: None,
    dequantize: Some(dequantize_row),
};

/// Dequantizes whole iq2_s blocks (`dequantize_row_iq2_s`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let sc = block[SCALES + g];
            let db = [
                d * (0.5 + (sc & 0xf) as f32) * 0.25,
                d * (0.5 + (sc >> 4) as f32) * 0.25,
            ];
            let qh = block[QH + g] as usize;
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let k = 4 * g + l;
                let index = block[QS + k] as usize | (((qh >> (2 * l)) & 3) << 8);
                let grid = &IQ2S_GRID[index];
                let signs = block[SIGNS + k];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db[l / 2] * grid[j] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
