//! The block layouts llama.cpp used before GGJT v3: dequantizers that compute what the
//! runtime of the time computed in f32, and the exact repacking into today's layouts.
//!
//! The formulas are those of the scalar `dequantize_row_*` of ggml at the two layout
//! changes (2023-05-14, "new Q4 and Q5 quantization formats"; 2023-05-20, "new quantization
//! formats Q4 + Q8"), evaluated as today's ggml-base evaluates its own: products and sums in
//! f32, unfused, in source order. Only the container of each block differs from today's
//! types, so the values below are exactly those a current dequantizer gives for the same
//! scale, quants and nibble order.
//!
//! Repacking is exact when every f32 scale (and minimum) is an f16 value: the block then
//! means the same numbers in the current type. Nibbles are reordered from pairwise to split
//! where needed; Q5's high-bit word `qh` already numbers the elements and stays as it is.

use ggufkit::quantizers::{f16_to_f32, f32_to_f16};

use super::layout::Layout;

fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn f16_at(b: &[u8], at: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[at], b[at + 1]]))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The 4-bit value of element `i` of a nibble array holding `2 * qs.len()` elements.
#[inline]
fn nibble(qs: &[u8], i: usize, split: bool) -> u8 {
    let half = qs.len();
    let (byte, high) = if split {
        (i % half, i >= half)
    } else {
        (i / 2, i % 2 == 1)
    };
    if high {
        qs[byte] >> 4
    } else {
        qs[byte] & 0x0F
    }
}

/// Dequantizes whole blocks of a changed layout: `src` holds `dst.len() / block_size`
/// blocks. Panics if the sizes disagree or the layout is a current type (callers check).
pub fn dequantize(layout: Layout, src: &[u8], dst: &mut [f32]) {
    let (bs, bb) = (layout.block_size(), layout.block_bytes());
    assert!(
        dst.len().is_multiple_of(bs) && src.len() == dst.len() / bs * bb,
        "block count mismatch"
    );
    for (b, y) in src.chunks_exact(bb).zip(dst.chunks_exact_mut(bs)) {
        match layout {
            Layout::Q4_0F32 { split } => {
                let d = f32_at(b, 0);
                for (i, v) in y.iter_mut().enumerate() {
                    *v = (i32::from(nibble(&b[4..20], i, split)) - 8) as f32 * d;
                }
            }
            Layout::Q4_1F32 { split } => {
                let (d, m) = (f32_at(b, 0), f32_at(b, 4));
                for (i, v) in y.iter_mut().enumerate() {
                    *v = f32::from(nibble(&b[8..24], i, split)) * d + m;
                }
            }
            Layout::Q4_2 => {
                let d = f16_at(b, 0);
                for (i, v) in y.iter_mut().enumerate() {
                    *v = (i32::from(nibble(&b[2..10], i, false)) - 8) as f32 * d;
                }
            }
            Layout::Q4_3 => {
                let (d, m) = (f16_at(b, 0), f16_at(b, 2));
                for (i, v) in y.iter_mut().enumerate() {
                    *v = f32::from(nibble(&b[4..12], i, false)) * d + m;
                }
            }
            Layout::Q5_0Pairwise => {
                let (d, qh) = (f16_at(b, 0), u32_at(b, 2));
                for (i, v) in y.iter_mut().enumerate() {
                    let q = nibble(&b[6..22], i, false) | (((qh >> i) & 1) << 4) as u8;
                    *v = (i32::from(q) - 16) as f32 * d;
                }
            }
            Layout::Q5_1Pairwise => {
                let (d, m, qh) = (f16_at(b, 0), f16_at(b, 2), u32_at(b, 4));
                for (i, v) in y.iter_mut().enumerate() {
                    let q = nibble(&b[8..24], i, false) | (((qh >> i) & 1) << 4) as u8;
                    *v = f32::from(q) * d + m;
                }
            }
            Layout::Q8_0F32 => {
                let d = f32_at(b, 0);
                for (v, &q) in y.iter_mut().zip(&b[4..36]) {
                    *v = f32::from(q as i8) * d;
                }
            }
            Layout::Current(t) => panic!("{t} is not an old layout"),
        }
    }
}

/// `x` as f16 bits when the conversion is exact (same bits back).
fn exact_f16(x: f32) -> Option<[u8; 2]> {
    let h = f32_to_f16(x);
    (f16_to_f32(h).to_bits() == x.to_bits()).then(|| h.to_le_bytes())
}

/// Nibbles of a pairwise array re-ordered into the split order of the same length.
fn split_nibbles(pairwise: &[u8], out: &mut Vec<u8>) {
    let half = pairwise.len();
    for j in 0..half {
        let lo = nibble(pairwise, j, false);
        let hi = nibble(pairwise, j + half, false);
        out.push(lo | (hi << 4));
    }
}

/// Number of blocks of `src` whose scales (or minimums) are not f16 values, i.e. that
/// [`repack`] cannot carry over exactly. Layouts that are not repackable count every block.
pub fn inexact_blocks(layout: Layout, src: &[u8]) -> usize {
    let bb = layout.block_bytes();
    let blocks = src.chunks_exact(bb);
    match layout {
        Layout::Q4_0F32 { .. } | Layout::Q8_0F32 => {
            blocks.filter(|b| exact_f16(f32_at(b, 0)).is_none()).count()
        }
        Layout::Q4_1F32 { .. } => blocks
            .filter(|b| exact_f16(f32_at(b, 0)).is_none() || exact_f16(f32_at(b, 4)).is_none())
            .count(),
        Layout::Q5_0Pairwise | Layout::Q5_1Pairwise => 0,
        Layout::Q4_2 | Layout::Q4_3 => src.len() / bb,
        Layout::Current(_) => 0,
    }
}

/// The bytes of `src` in the layout's [`Layout::closest`] type, or `None` when a block's
/// scale is not an f16 value (the result would not be exact) or the layout cannot be
/// repacked at all.
pub fn repack(layout: Layout, src: &[u8]) -> Option<Vec<u8>> {
    if !layout.repackable() {
        return None;
    }
    let bb = layout.block_bytes();
    let nblocks = src.len() / bb;
    let mut out = Vec::with_capacity(nblocks * layout.closest().type_size());
    for b in src.chunks_exact(bb) {
        match layout {
            Layout::Q4_0F32 { split } => {
                out.extend(exact_f16(f32_at(b, 0))?);
                if split {
                    out.extend_from_slice(&b[4..20]);
                } else {
                    split_nibbles(&b[4..20], &mut out);
                }
            }
            Layout::Q4_1F32 { split } => {
                out.extend(exact_f16(f32_at(b, 0))?);
                out.extend(exact_f16(f32_at(b, 4))?);
                if split {
                    out.extend_from_slice(&b[8..24]);
                } else {
                    split_nibbles(&b[8..24], &mut out);
                }
            }
            Layout::Q5_0Pairwise => {
                out.extend_from_slice(&b[0..6]);
                split_nibbles(&b[6..22], &mut out);
            }
            Layout::Q5_1Pairwise => {
                out.extend_from_slice(&b[0..8]);
                split_nibbles(&b[8..24], &mut out);
            }
            Layout::Q8_0F32 => {
                out.extend(exact_f16(f32_at(b, 0))?);
                out.extend_from_slice(&b[4..36]);
            }
            Layout::Q4_2 | Layout::Q4_3 | Layout::Current(_) => return None,
        }
    }
    debug_assert_eq!(out.len(), nblocks * layout.closest().type_size());
    Some(out)
}

#[cfg(test)]
mod tests {
    use ggufkit::quantizers::{dequantize_rows, GgmlType};

    use super::*;

    /// 32 nibble values 0..15 in a fixed, irregular order.
    fn quants() -> [u8; 32] {
        let mut q = [0u8; 32];
        for (i, v) in q.iter_mut().enumerate() {
            *v = ((i * 7 + 3) % 16) as u8;
        }
        q
    }

    fn pack(q: &[u8], split: bool) -> Vec<u8> {
        let half = q.len() / 2;
        (0..half)
            .map(|j| {
                if split {
                    q[j] | (q[j + half] << 4)
                } else {
                    q[2 * j] | (q[2 * j + 1] << 4)
                }
            })
            .collect()
    }

    fn deq(layout: Layout, block: &[u8]) -> Vec<f32> {
        let mut y = vec![0f32; layout.block_size()];
        dequantize(layout, block, &mut y);
        y
    }

    fn deq_current(t: GgmlType, block: &[u8]) -> Vec<f32> {
        let mut y = vec![0f32; t.block_size()];
        dequantize_rows(t, block, &mut y).unwrap();
        y
    }

    #[test]
    fn q4_0_both_orders_by_hand() {
        let q = quants();
        let d = 0.25f32;
        for split in [false, true] {
            let mut b = d.to_le_bytes().to_vec();
            b.extend(pack(&q, split));
            let y = deq(Layout::Q4_0F32 { split }, &b);
            for i in 0..32 {
                assert_eq!(
                    y[i],
                    (q[i] as f32 - 8.0) * 0.25,
                    "split {split} element {i}"
                );
            }
            // d = 0.25 is an f16 value: the repacked block means the same numbers today.
            let r = repack(Layout::Q4_0F32 { split }, &b).unwrap();
            assert_eq!(r.len(), 18);
            assert_eq!(deq_current(GgmlType::Q4_0, &r), y);
        }
    }

    #[test]
    fn q4_1_and_q8_0_repack_exactly_or_not_at_all() {
        let q = quants();
        let mut b = 0.5f32.to_le_bytes().to_vec();
        b.extend((-3.0f32).to_le_bytes());
        b.extend(pack(&q, false));
        let y = deq(Layout::Q4_1F32 { split: false }, &b);
        assert_eq!(y[5], q[5] as f32 * 0.5 - 3.0);
        let r = repack(Layout::Q4_1F32 { split: false }, &b).unwrap();
        assert_eq!(deq_current(GgmlType::Q4_1, &r), y);
        // A minimum that f16 cannot hold: no exact repack, one inexact block.
        b[4..8].copy_from_slice(&(-3.0001f32).to_le_bytes());
        assert_eq!(repack(Layout::Q4_1F32 { split: false }, &b), None);
        assert_eq!(inexact_blocks(Layout::Q4_1F32 { split: false }, &b), 1);

        let mut b8 = 0.125f32.to_le_bytes().to_vec();
        b8.extend((0..32).map(|i| (i * 7 - 100) as i8 as u8));
        let y = deq(Layout::Q8_0F32, &b8);
        assert_eq!(y[31], (31 * 7 - 100) as f32 * 0.125);
        let r = repack(Layout::Q8_0F32, &b8).unwrap();
        assert_eq!(deq_current(GgmlType::Q8_0, &r), y);
        b8[0..4].copy_from_slice(&1e-9f32.to_le_bytes());
        assert_eq!(repack(Layout::Q8_0F32, &b8), None);
    }

    #[test]
    fn q5_pairwise_keeps_qh_and_reorders_nibbles() {
        let q = quants();
        let qh: u32 = 0xA5C3_0F81;
        let d = f32_to_f16(0.75);
        let m = f32_to_f16(-1.5);
        let mut b0 = d.to_le_bytes().to_vec();
        b0.extend(qh.to_le_bytes());
        b0.extend(pack(&q, false));
        let y = deq(Layout::Q5_0Pairwise, &b0);
        for i in 0..32 {
            let full = q[i] as i32 | (((qh >> i) & 1) as i32) << 4;
            assert_eq!(y[i], (full - 16) as f32 * 0.75, "element {i}");
        }
        let r = repack(Layout::Q5_0Pairwise, &b0).unwrap();
        assert_eq!(r[..6], b0[..6]);
        assert_eq!(deq_current(GgmlType::Q5_0, &r), y);

        let mut b1 = d.to_le_bytes().to_vec();
        b1.extend(m.to_le_bytes());
        b1.extend(qh.to_le_bytes());
        b1.extend(pack(&q, false));
        let y = deq(Layout::Q5_1Pairwise, &b1);
        let full = q[9] as i32 | (((qh >> 9) & 1) as i32) << 4;
        assert_eq!(y[9], full as f32 * 0.75 - 1.5);
        let r = repack(Layout::Q5_1Pairwise, &b1).unwrap();
        assert_eq!(deq_current(GgmlType::Q5_1, &r), y);
        assert_eq!(inexact_blocks(Layout::Q5_1Pairwise, &b1), 0);
    }

    #[test]
    fn q4_2_and_q4_3_by_hand() {
        let q = &quants()[..16];
        let mut b = f32_to_f16(2.0).to_le_bytes().to_vec();
        b.extend(pack(q, false));
        let y = deq(Layout::Q4_2, &b);
        for i in 0..16 {
            assert_eq!(y[i], (q[i] as f32 - 8.0) * 2.0);
        }
        let mut b3 = f32_to_f16(0.5).to_le_bytes().to_vec();
        b3.extend(f32_to_f16(1.0).to_le_bytes());
        b3.extend(pack(q, false));
        let y = deq(Layout::Q4_3, &b3);
        for i in 0..16 {
            assert_eq!(y[i], q[i] as f32 * 0.5 + 1.0);
        }
        assert_eq!(repack(Layout::Q4_2, &b), None);
        assert_eq!(inexact_blocks(Layout::Q4_3, &b3), 1);
    }

    #[test]
    fn negative_zero_and_nan_scales_are_not_lost() {
        let q = quants();
        let mut b = (-0.0f32).to_le_bytes().to_vec();
        b.extend(pack(&q, true));
        let r = repack(Layout::Q4_0F32 { split: true }, &b).unwrap();
        assert_eq!(u16::from_le_bytes([r[0], r[1]]), 0x8000);
        // A NaN whose payload f16 cannot carry is not "exact".
        b[0..4].copy_from_slice(&f32::from_bits(0x7fc0_0001).to_le_bytes());
        assert_eq!(repack(Layout::Q4_0F32 { split: true }, &b), None);
    }
}
