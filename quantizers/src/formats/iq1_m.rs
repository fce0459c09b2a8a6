//! iq1_m: 256 elements per block, 56 bytes per block (1.75 bits per weight).
//!
//! Layout: `qs: [u8; 32]` (low 8 bits of one [`IQ1S_GRID`] index per 8 elements), `qh: [u8;
//! 16]` (one nibble per 8 elements: bits 0–2 the high index bits, bit 3 the delta sign),
//! `scales: [u8; 8]` read as four little-endian u16 `sc`. Each `sc[k]` holds four 3-bit
//! scales in bits 0–11 (two per 32 elements: the first and second 16) and, in its top nibble,
//! nibble `k` of the block's f16 super-scale `d` (there is no separate `d` field). Element
//! value: `d·(2s+1) · (grid ± IQ1S_DELTA)`.

use super::iq_grids::{IQ1S_DELTA, IQ1S_GRID};
use crate::common::{f16_to_f32, get_u16};
use crate::registry::{Quantizer, TypeTraits};
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 256;
/// Bytes per block.
const BLOCK_BYTES: usize = 56;
/// Byte offset of `qs` in a block.
const QS: usize = 0;
/// Byte offset of `qh` in a block.
const QH: usize = QS + 32;
/// Byte offset of `scales` in a block.
const SCALES: usize = QH + 16;

/// Registry entry for iq1_m.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::IQ1_M,
    name: "iq1_m",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: true,
    quantize: None,
    dequantize: Some(dequantize_row),
};

/// Dequantizes whole iq1_m blocks (`dequantize_row_iq1_m`).
pub(crate) fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    for (block, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let sc: [u16; 4] = std::array::from_fn(|k| get_u16(block, SCALES + 2 * k));
        let d_bits = sc
            .iter()
            .enumerate()
            .fold(0u16, |bits, (k, &s)| bits | ((s >> 12) << (4 * k)));
        let d = f16_to_f32(d_bits);
        for (g, y32) in out.chunks_exact_mut(32).enumerate() {
            let s = (sc[g / 2] >> (6 * (g % 2))) as usize;
            // One scale for each 16 elements.
            let dl = [
                d * (2 * (s & 7) + 1) as f32,
                d * (2 * ((s >> 3) & 7) + 1) as f32,
            ];
            for (l, y8) in y32.chunks_exact_mut(8).enumerate() {
                let h = (block[QH + 2 * g + l / 2] >> (4 * (l % 2))) as usize & 0xf;
                let index = block[QS + 4 * g + l] as usize | ((h & 7) << 8);
                let delta = if h & 8 != 0 { -IQ1S_DELTA } else { IQ1S_DELTA };
                let grid = &IQ1S_GRID[index];
                for (y, &v) in y8.iter_mut().zip(grid) {
                    *y = dl[l / 2] * (v as f32 + delta);
                }
            }
        }
    }
}
