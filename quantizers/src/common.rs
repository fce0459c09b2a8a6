//! Scalar helpers shared by the kernels: half/bfloat conversions and C's rounding and casts.

/// f32 → IEEE binary16 bits, round-to-nearest-even, overflow to ±inf, NaN → `sign | 0x7E00`
/// (ggml's `GGML_FP32_TO_FP16`).
/// The one f16 encoder: the branchless one the f16 row kernel vectorises.
#[inline]
pub fn f32_to_f16(x: f32) -> u16 {
    crate::formats::f16::f32_to_f16_bits(x)
}

/// IEEE binary16 bits → f32 (exact).
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    half::f16::from_bits(h).to_f32()
}

/// f32 → bfloat16 bits as `ggml_fp32_to_bf16_row_ref` does: round-to-nearest-even, NaN made
/// quiet, subnormals kept.
#[inline]
pub fn f32_to_bf16(x: f32) -> u16 {
    let u = x.to_bits();
    if (u & 0x7fff_ffff) > 0x7f80_0000 {
        return ((u >> 16) | 0x40) as u16;
    }
    (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16
}

/// bfloat16 bits → f32 (exact).
#[inline]
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// ggml's `nearest_int`: round half to even through the 1.5·2²³ bit trick, reproduced
/// literally so that out-of-range and NaN inputs give the same bits as the C code.
#[inline]
#[allow(dead_code)]
pub(crate) fn nearest_int(v: f32) -> i32 {
    let t = v + 12_582_912.0f32;
    ((t.to_bits() & 0x007f_ffff) as i32) - 0x0040_0000
}

/// `(v + m) / d` as the x86-64 C code evaluates it, NaN payload included: when both operands
/// of an SSE operation are NaN the result is the first (left) one, quieted, whereas Rust
/// leaves the choice to the compiler, which may swap the operands of `+`. So a NaN `v`, or
/// a NaN sum, propagates itself explicitly (`a + a` is `a` quieted); a single NaN operand
/// propagates the same way in either order.
#[inline(always)]
pub(crate) fn add_div_left_nan(v: f32, m: f32, d: f32) -> f32 {
    let t = if v.is_nan() { v + v } else { v + m };
    if t.is_nan() {
        t + t
    } else {
        t / d
    }
}

/// C's `(int)x` as x86-64 compiles it (`cvttss2si`): truncation toward zero, and the
/// "integer indefinite" value `i32::MIN` for NaN and out-of-range inputs (Rust's `as`
/// saturates instead).
#[inline]
#[allow(dead_code)]
pub(crate) fn c_trunc_i32(x: f32) -> i32 {
    if !(-2_147_483_648.0f32..2_147_483_648.0f32).contains(&x) {
        i32::MIN
    } else {
        x as i32
    }
}

/// C's `lroundf(x)` / `(int)roundf(x)` on x86-64: round half away from zero, then the
/// same out-of-range behaviour as [`c_trunc_i32`].
#[inline]
#[allow(dead_code)]
pub(crate) fn c_round_i32(x: f32) -> i32 {
    c_trunc_i32(x.round())
}

/// Little-endian u16 store.
#[inline]
#[allow(dead_code)]
pub(crate) fn put_u16(dst: &mut [u8], at: usize, v: u16) {
    dst[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

/// Little-endian u16 load.
#[inline]
#[allow(dead_code)]
pub(crate) fn get_u16(src: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([src[at], src[at + 1]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_int_is_round_half_even_in_range() {
        for &(v, r) in &[
            (0.5f32, 0),
            (1.5, 2),
            (2.5, 2),
            (-0.5, 0),
            (-1.5, -2),
            (3.49, 3),
        ] {
            assert_eq!(nearest_int(v), r, "{v}");
        }
    }

    #[test]
    fn c_casts_follow_x86() {
        assert_eq!(c_trunc_i32(f32::NAN), i32::MIN);
        assert_eq!(c_trunc_i32(3e9), i32::MIN);
        assert_eq!(c_trunc_i32(-2.7), -2);
        assert_eq!(c_round_i32(-2.5), -3);
        assert_eq!(c_round_i32(2.5), 3);
    }

    #[test]
    fn half_conversions() {
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(-f32::NAN), 0xFE00);
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x7f80_0001)), 0x7fc0);
        assert_eq!(bf16_to_f32(0x3f80), 1.0);
    }
}
