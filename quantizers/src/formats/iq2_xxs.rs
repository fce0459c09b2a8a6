//! iq2_xxs: 256 elements per block, 66 bytes per block (2.0625 bits per weight).
//!
//! Layout: `d: f16`, then 8 groups of 8 bytes, one per 32 elements. A group holds four grid
//! indices into [`IQ2XXS_GRID`] (bytes 0–3, one per 8 elements), then a little-endian u32
//! whose bits `7l..7l+7` are the sign index of the `l`-th 8 (into [`KSIGNS_IQ2XS`]) and whose
//! top 4 bits are the group scale `s`. Element value: `d·(0.5+s)·0.25 · grid · sign`.

use super::iq_grids::{sign_factor, IQ2XXS_GRID, KSIGNS_IQ2XS};
use crate::common::{f16_to_f32, get_u16};
use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 256;
/// Bytes per block.
const BLOCK_BYTES: usize = 66;

/// Registry entry for iq2_xxs.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::IQ2_XXS,
    name: "iq2_xxs",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: true,
    uses_imatrix: true,
    quantize: None,
    dequantize: Some(dequantize_row),
};

/// Dequantizes whole iq2_xxs blocks (`dequantize_row_iq2_xxs`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (group, y32) in block[2..].chunks_exact(8).zip(out.chunks_exact_mut(32)) {
            let aux = u32::from_le_bytes([group[4], group[5], group[6], group[7]]);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.25;
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let grid = &IQ2XXS_GRID[group[l] as usize];
                let signs = KSIGNS_IQ2XS[((aux >> (7 * l)) & 127) as usize];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db * grid[j] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
