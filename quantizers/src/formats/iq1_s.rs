//! iq1_s: 256 elements per block, 50 bytes per block (1.5625 bits per weight).
//!
//! Layout: `d: f16`, `qs: [u8; 32]` (low 8 bits of one [`IQ1S_GRID`] index per 8 elements),
//! `qh: [u16; 8]`, one per 32 elements: bits `3l..3l+3` are the high 3 bits of the `l`-th
//! index, bits 12–14 the group scale `s`, bit 15 the sign of the delta. Element value:
//! `d·(2s+1) · (grid ± IQ1S_DELTA)`.

use super::iq_grids::{IQ1S_DELTA, IQ1S_GRID};
use crate::common::{f16_to_f32, get_u16};
use crate::registry::{Quantizer, TypeTraits};
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 256;
/// Bytes per block.
const BLOCK_BYTES: usize = 50;
/// Byte offset of `qs` in a block.
const QS: usize = 2;
/// Byte offset of `qh` in a block.
const QH: usize = QS + 32;

/// Registry entry for iq1_s.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::IQ1_S,
    name: "iq1_s",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: true,
    uses_imatrix: true,
    quantize: None,
    dequantize: Some(dequantize_row),
};

/// Dequantizes whole iq1_s blocks (`dequantize_row_iq1_s`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_to_f32(get_u16(block, 0));
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let qh = get_u16(block, QH + 2 * g) as usize;
            let dl = d * (2 * ((qh >> 12) & 7) + 1) as f32;
            let delta = if qh & 0x8000 != 0 {
                -IQ1S_DELTA
            } else {
                IQ1S_DELTA
            };
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let index = block[QS + 4 * g + l] as usize | (((qh >> (3 * l)) & 7) << 8);
                let grid = &IQ1S_GRID[index];
                for (y, &v) in y8.iter_mut().zip(grid) {
                    *y = dl * (v as f32 + delta);
                }
            }
        }
    }
}
