//! iq3_xxs: 256 elements per block, 98 bytes per block (3.0625 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u8; 64]` (one [`IQ3XXS_GRID`] index per 4 elements), then eight
//! little-endian u32, one per 32 elements: bits `7l..7l+7` are the sign index (into
//! [`KSIGNS_IQ2XS`]) of the `l`-th 8 elements, the top 4 bits the group scale `s`.
//! Element value: `d·(0.5+s)·0.5 · grid · sign`.

use super::iq_grids::{sign_factor, IQ3XXS_GRID, KSIGNS_IQ2XS};
use crate::common::{f16_to_f32, get_u16};
use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 256;
/// Bytes per block.
const BLOCK_BYTES: usize = 98;
/// Byte offset of `qs` in a block.
const QS: usize = 2;
/// Byte offset of `scales_and_signs` in a block.
const SCALES_AND_SIGNS: usize = QS + 64;

/// Registry entry for iq3_xxs.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::IQ3_XXS,
    name: "iq3_xxs",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: true,
    quantize: None,
    dequantize: Some(dequantize_row),
};

/// Dequantizes whole iq3_xxs blocks (`dequantize_row_iq3_xxs`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let at = SCALES_AND_SIGNS + 4 * g;
            let aux = u32::from_le_bytes([block[at], block[at + 1], block[at + 2], block[at + 3]]);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let signs = KSIGNS_IQ2XS[((aux >> (7 * l)) & 127) as usize];
                let q = QS + 8 * g + 2 * l;
                let halves = [
                    &IQ3XXS_GRID[block[q] as usize],
                    &IQ3XXS_GRID[block[q + 1] as usize],
                ];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db * halves[j / 4][j % 4] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
