//! q4_0: 32 elements per block, 18 bytes per block.
//!
//! Layout: `d: f16`, then `qs[16]`; byte `j` holds element `j` in its low nibble and element
//! `j + 16` in its high nibble. Element value = `(q - 8) · d`.
//!
//! Without an imatrix (`quantize_row_q4_0_ref`): `d = m / -8` where `m` is the signed element
//! of largest magnitude (first one wins), `q = min(15, (i8)(x/d + 8.5))`. An all-zero block
//! stores `d = -0.0` (`0 / -8`).
//!
//! With an imatrix (`quantize_row_q4_0_impl`): weights `w = qw · sqrt(σ² + x²)` with σ² the
//! row's mean square, then the weighted fit of `make_qx_quants(nmax = 8, rmse_type = 1)`.
//!
//! **NaN handling:** NaNs never win the magnitude search (the comparison is false), so they
//! only reach the quants: C's float→int conversion gives `i32::MIN` on x86-64 for NaN and
//! out-of-range values, whose low byte (0) is what the `(int8_t)` cast keeps. An infinite
//! maximum gives `d = ∓inf`, `1/d = ∓0`, and `±inf · 0 = NaN` quants. All of that is
//! reproduced exactly.

use super::f16::{f16_bits_to_f32, f32_to_f16_bits};
use crate::common::{c_trunc_i32, get_u16, put_u16};
use crate::kquants::make_qx_quants;
use crate::registry::TypeTraits;
use crate::types::GgmlType;

/// Elements per block.
const QK: usize = 32;
/// Bytes per block.
const BLOCK_BYTES: usize = 18;

/// Registry entry for q4_0.
pub(crate) const TRAITS: TypeTraits = TypeTraits {
    ty: GgmlType::Q4_0,
    name: "q4_0",
    block_size: QK,
    type_size: BLOCK_BYTES,
    requires_imatrix: false,
    uses_imatrix: true,
    quantize: Some(quantize_row),
    dequantize: Some(dequantize_row),
};

/// The signed element of largest magnitude, the first one on ties, or `+0.0` when every
/// element is zero or NaN: the result of the reference's sequential
/// `if amax < |v| { amax = |v|; max = v }` scan.
///
/// Computed on the bit patterns so it vectorises: for non-negative floats the integer order
/// of the bits is the float order, and NaNs (which the strict `<` never lets in) are
/// mapped to 0.
#[inline(always)]
pub(super) fn signed_abs_max(x: &[f32; QK]) -> f32 {
    let mag = |v: f32| (v.to_bits() & 0x7fff_ffff) as i32;
    let mut lanes = [0i32; 8];
    for chunk in x.chunks_exact(8) {
        for (l, &v) in lanes.iter_mut().zip(chunk) {
            let a = mag(v);
            let a = if a > 0x7f80_0000 { 0 } else { a };
            *l = if a > *l { a } else { *l };
        }
    }
    let amax = lanes.iter().fold(0, |m, &l| m.max(l));
    if amax == 0 {
        return 0.0;
    }
    // The reference keeps the first element that reached the final maximum.
    let mut hits = 0u32;
    for (j, &v) in x.iter().enumerate() {
        hits |= ((mag(v) == amax) as u32) << j;
    }
    x[hits.trailing_zeros() as usize % QK]
}

/// The range `|v| < 2^22` (NaN excluded) in which [`trunc_fast`] and q8_0's `round_fast`
/// are exact.
#[inline(always)]
pub(super) fn in_fast_range(v: f32) -> bool {
    v.abs() < 4_194_304.0
}

/// C's `(int)v`, truncation toward zero, for `|v| < 2^22` only. Adding 1.5·2^23 rounds to
/// the nearest integer (ties to even) and leaves it in the low mantissa bits; one step back
/// toward zero turns that into truncation. No float→int instruction is involved, so loops
/// over it vectorise (Rust's saturating `as` does not on x86-64 without SSE4.1).
#[inline(always)]
pub(super) fn trunc_fast(v: f32) -> i32 {
    const MAGIC: f32 = 12_582_912.0;
    let t = v + MAGIC;
    let nearest = (t.to_bits() & 0x007f_ffff) as i32 - 0x0040_0000;
    let nearest_f = t - MAGIC; // exact
    nearest - (v >= 0.0 && nearest_f > v) as i32 + (v < 0.0 && nearest_f < v) as i32
}

/// [`trunc_fast`], clearing `exact` when `v` is outside its range; the caller then redoes
/// the block with [`c_trunc_i32`].
#[inline(always)]
pub(super) fn trunc_flagged(v: f32, exact: &mut bool) -> i32 {
    *exact &= in_fast_range(v);
    trunc_fast(v)
}

/// Packs the q4_0/q4_1 nibbles `min(15, (int8_t)(arg(x)))` of a block into `qs`, element `j`
/// low and `j + 16` high; `trunc` is the float→int conversion.
#[inline(always)]
pub(super) fn pack_nibbles(
    x: &[f32; QK],
    qs: &mut [u8],
    arg: impl Fn(f32) -> f32,
    mut trunc: impl FnMut(f32) -> i32,
) {
    let mut nibble = |v: f32| (trunc(arg(v)) as i8 as i32).min(15) as u8;
    let (lo, hi) = x.split_at(QK / 2);
    for ((q, &a), &b) in qs.iter_mut().zip(lo).zip(hi) {
        *q = nibble(a) | (nibble(b) << 4);
    }
}

/// Σx² of the whole row, summed in order in f32, divided by the row length: the σ² of the
/// legacy imatrix paths.
pub(super) fn row_sigma2(x: &[f32]) -> f32 {
    let sum_x2 = x.iter().fold(0f32, |s, &v| s + v * v);
    sum_x2 / x.len() as f32
}

/// The legacy imatrix weights of one block: `qw[j] · sqrt(σ² + x[j]²)`.
#[inline(always)]
pub(super) fn block_weights(x: &[f32], qw: &[f32], sigma2: f32) -> [f32; QK] {
    let mut w = [0f32; QK];
    for ((w, &x), &q) in w.iter_mut().zip(x).zip(qw) {
        *w = q * (sigma2 + x * x).sqrt();
    }
    w
}

/// Quantizes one row; with an imatrix, through the weighted scale search.
fn quantize_row(src: &[f32], dst: &mut [u8], imatrix: Option<&[f32]>) {
    debug_assert_eq!(src.len() % QK, 0);
    debug_assert_eq!(dst.len(), src.len() / QK * BLOCK_BYTES);
    match imatrix {
        None => quantize_row_ref(src, dst),
        Some(qw) => quantize_row_weighted(src, dst, qw),
    }
}

/// `quantize_row_q4_0_ref`.
fn quantize_row_ref(src: &[f32], dst: &mut [u8]) {
    for (xb, y) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let x: &[f32; QK] = xb.try_into().unwrap();
        let d = signed_abs_max(x) / -8.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        put_u16(y, 0, f32_to_f16_bits(d));
        let arg = |v: f32| v * id + 8.5;
        let mut exact = true;
        pack_nibbles(x, &mut y[2..], arg, |v| trunc_flagged(v, &mut exact));
        if !exact {
            pack_nibbles(x, &mut y[2..], arg, c_trunc_i32);
        }
    }
}

/// `quantize_row_q4_0_impl`: σ² over the whole row, then per block the weighted
/// `make_qx_quants(nmax = 8, rmse_type = 1)`; its levels `0..=15` are the nibbles and its
/// fitted scale (either sign) is `d`.
fn quantize_row_weighted(src: &[f32], dst: &mut [u8], qw: &[f32]) {
    let sigma2 = row_sigma2(src);
    let blocks = src.chunks_exact(QK).zip(qw.chunks_exact(QK));
    for ((xb, qwb), y) in blocks.zip(dst.chunks_exact_mut(BLOCK_BYTES)) {
        let w = block_weights(xb, qwb, sigma2);
        let mut l = [0u8; QK];
        let d = make_qx_quants(8, xb, Some(&w), &mut l);
        put_u16(y, 0, f32_to_f16_bits(d));
        let (lo, hi) = l.split_at(QK / 2);
        for ((q, &a), &b) in y[2..].iter_mut().zip(lo).zip(hi) {
            *q = a | (b << 4);
        }
    }
}

/// `dequantize_row_q4_0`: `(q - 8) · d`.
fn dequantize_row(src: &[u8], dst: &mut [f32]) {
    debug_assert_eq!(src.len() / BLOCK_BYTES * QK, dst.len());
    for (y, out) in src.chunks_exact(BLOCK_BYTES).zip(dst.chunks_exact_mut(QK)) {
        let d = f16_bits_to_f32(get_u16(y, 0));
        let (lo, hi) = out.split_at_mut(QK / 2);
        for ((&q, a), b) in y[2..].iter().zip(lo).zip(hi) {
            *a = ((q & 0x0f) as i32 - 8) as f32 * d;
            *b = ((q >> 4) as i32 - 8) as f32 * d;
        }
    }
}
