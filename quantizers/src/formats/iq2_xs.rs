//! iq2_xs: 256 elements per block, 74 bytes per block (2.3125 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u16; 32]`, `scales: [u8; 8]`. Each `qs` entry covers 8 elements:
//! its low 9 bits index [`IQ2XS_GRID`], its top 7 bits are a sign index into [`KSIGNS_IQ2XS`].
//! `scales[g]` holds two 4-bit scales for the 32 elements of group `g`: the low nibble for
//! the first 16, the high nibble for the last 16. Element value: `d·(0.5+s)·0.25 · grid · sign`.

use super::iq_grids::{sign_factor, IQ2XS_GRID, KSIGNS_IQ2XS};
use crate::common::{f16_to_f32, get_u16};
use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 256;
/// Bytes per block.
const BLOCK_BYTES: usize = 74;
/// Byte offset of `scales`.
const SCALES: usize = 2 + 64;

/// Registry entry for iq2_xs.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::IQ2_XS,
    name: "iq2_xs",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: true,
    uses_imatrix: true,
    quantize: None,
    dequantize: Some(dequantize_row),
};

/// Dequantizes whole iq2_xs blocks (`dequantize_row_iq2_xs`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let sc = block[SCALES + g];
            let db = [
                d * (0.5 + (sc & 0xf) as f32) * 0.25,
                d * (0.5 + (sc >> 4) as f32) * 0.25,
            ];
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let q = get_u16(block, 2 + 2 * (4 * g + l));
                let grid = &IQ2XS_GRID[(q & 511) as usize];
                let signs = KSIGNS_IQ2XS[(q >> 9) as usize];
                for (j, y) in y8.iter_mut().enumerate() {
                    *y = db[l / 2] * grid[j] as f32 * sign_factor(signs, j);
                }
            }
        }
    }
}
