//! q8_0: 32 elements per block, 34 bytes per block.
//!
//! Layout: `d: f16`, then `qs[32]: i8`. Element value = `q · d`.
//!
//! Quantization (`quantize_row_q8_0_ref`; the imatrix is always ignored): `amax` = the
//! largest `|x|` (`amax = amax > |v| ? amax : |v|` from 0), `d = amax / 127`,
//! `q = (i8)roundf(x / d)` with the division done as a multiplication by the f32 `1/d`.
//!
//! **NaN handling:** the reference's max reduction lets a NaN through only while it is the
//! latest element (the next comparison with a number replaces it), so a NaN `amax` needs
//! the NaN to be the block's last element, or followed only by NaNs; then every quant is
//! NaN. A NaN or out-of-range quant is C's x86-64 `i32::MIN` truncated to a byte (0). All of
//! that is reproduced exactly.

use super::f16::{f16_bits_to_f32, f32_to_f16_bits};
use crate::common::{get_u16, put_u16};
use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 32;
/// Bytes per block.
const BLOCK_BYTES: usize = 34;

/// Registry entry for q8_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::Q8_0,
    name: "q8_0",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: false,
    quantize: Some(quantize_row),
    dequantize: Some(dequantize_row),
};

/// The reference's sequential `amax = amax > |v| ? amax : |v|` from 0.
fn abs_max_scalar(x: &[f32; QK]) -> f32 {
    x.iter().fold(0f32, |m, &v| {
        let a = v.abs();
        if m > a {
            m
        } else {
            a
        }
    })
}

/// [`abs_max_scalar`], computed in lanes so it vectorises. Without NaNs the reduction is
/// order-independent (all values are non-negative, equal values have equal bits); with a
/// NaN it is not, and the sequential scan decides.
#[inline(always)]
pub(super) fn abs_max(x: &[f32; QK]) -> f32 {
    let mut lanes = [0f32; 8];
    let mut nan = [false; 8];
    for chunk in x.chunks_exact(8) {
        for ((l, n), &v) in lanes.iter_mut().zip(nan.iter_mut()).zip(chunk) {
            let a = v.abs();
            *l = if *l > a { *l } else { a };
            *n |= a.is_nan();
        }
    }
    if nan.iter().any(|&n| n) {
        abs_max_scalar(x)
    } else {
        lanes.iter().fold(0f32, |m, &l| if m > l { m } else { l })
    }
}

/// C's `(int8_t)roundf(v)` on x86-64: round half away from zero, convert to 32 bits
/// (`i32::MIN` for NaN and out of range) and keep the low byte. Written without a libm
/// call so that the quant loops vectorise.
#[inline(always)]
pub(super) fn round_i8(v: f32) -> i8 {
    // For |v| < 2^23 the fraction `v - trunc(v)` is exact; above, v is an integer and the
    // fraction is 0.
    let t = v as i32;
    let frac = v - t as f32;
    let r = t + (frac >= 0.5) as i32 - (frac <= -0.5) as i32;
    let r = if v.abs() < 2_147_483_648.0 { r } else { i32::MIN };
    r as i8
}

/// Quantizes one row (`quantize_row_q8_0_ref`). The imatrix is ignored.
fn quantize_row(src: &[f32], dst: &mut [u8], _imatrix: Option<&[f32]>) {
    debug_assert_eq!(src.len() % QK, 0);
    debug_assert_eq!(dst.len(), src.len() / QK * BLOCK_BYTES);
    for (xb, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let x: &[f32; QK] = xb.try_into().unwrap();
        let d = abs_max(x) / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        put_u16(y, 0, f32_to_f16_bits(d));
        for (q, &v) in y[2..].iter_mut().zip(x) {
            *q = round_i8(v * id) as u8;
        }
    }
}

/// `dequantize_row_q8_0`: `q · d`.
fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len() / BLOCK_BYTES * QK, dst.len());
    for (y, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_bits_to_f32(get_u16(y, 0));
        for (o, &q) in out.iter_mut().zip(&y[2..]) {
            *o = q as i8 as f32 * d;
        }
    }
}
