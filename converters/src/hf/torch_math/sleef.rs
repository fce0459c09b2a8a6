//! SLEEF's 1-ulp float32 `exp` and `log1p` (`Sleef_expf16_u10`, `Sleef_log1pf16_u10`), as
//! its AVX-512 build computes them: the functions torch's `Vectorized<float>::exp()` and
//! `log1p()` call on an AVX-512 machine (its vector `softplus`, for one).
//!
//! `exp(d)`: `d = q·ln 2 + s` with `q` the nearest integer to `d·log2(e)` (ties to even, as
//! the vector conversion rounds) and `s` reduced by `ln 2` split in two parts, each step one
//! fused multiply-add; `exp(s)` is `1 + s + s²·p(s)` with a degree-5 polynomial `p` in
//! Horner form (fused); the result is scaled by `2^q` in two halves, so that a result near
//! the subnormal range is rounded once. Inputs below −104 give +0 and above 100 give +∞.
//!
//! `log1p(d)`: the exponent `e` of `(1 + d)·4/3` (AVX-512 `getexp`) splits `1 + d = 2^e·m`
//! with `m` in [0.75, 1.5), but `m − 1` is computed from `d` itself (`d·2^−e + (2^−e − 1)`,
//! fused), so that the low bits `1 + d` rounds away are kept. Then `log(m) = 2·atanh(x)`
//! with `x = (m − 1)/(m + 1)` in double-float arithmetic, an odd polynomial in `x`, and
//! `e·ln 2` in double-float, summed in double-float and rounded once. `d` above 10^38 takes
//! SLEEF's 1-ulp `log` instead; −1 gives −∞, anything below it NaN, −0 stays −0.
//!
//! Both are written from SLEEF's published algorithms with the operations and roundings of
//! its vector build ([`super::double_float`]), so they are bit-identical to it; a NaN input
//! gives a NaN (its payload is not reproduced).

use super::double_float::{
    add2_ff, add_df_df, add_df_f, add_ff, df, div_df_df, getexp, getmant, mul_df_f, scale, Df,
};

/// `ln 2` as a double-float, as SLEEF's logarithms split it.
// The halves as published, in decimal, each rounded to f32 as the C source's are.
#[allow(clippy::excessive_precision)]
const LN2: Df = Df {
    hi: 0.693_147_182_464_599_609_38,
    lo: -1.904_654_323_148_236_017e-9,
};

/// Above this, `log1p` is computed as `log`: `1 + d` loses nothing that matters.
#[allow(clippy::excessive_precision)]
const LOG1P_BOUND: f32 = 1.0e38;

/// The vector conversion of a float to the nearest 32-bit integer (ties to even); NaN and
/// out-of-range inputs give `i32::MIN`, as the instruction's "integer indefinite" does.
fn round_to_i32(x: f32) -> i32 {
    let r = x.round_ties_even();
    if (-2_147_483_648.0..2_147_483_648.0).contains(&r) {
        r as i32
    } else {
        i32::MIN
    }
}

/// `2^k` from its exponent bits (no range check: callers keep `k` in [−126, 127]).
fn pow2i(k: i32) -> f32 {
    f32::from_bits((k.wrapping_add(0x7f) as u32) << 23)
}

/// SLEEF's 1-ulp `expf`.
// The coefficients as published, in decimal, each rounded to f32 as the C source's are.
#[allow(clippy::excessive_precision)]
pub fn expf_u10(d: f32) -> f32 {
    const L2U: f32 = 0.693_145_751_953_125;
    const L2L: f32 = 1.428_606_765_330_187_045e-6;
    let q = round_to_i32(d * std::f32::consts::LOG2_E);
    let qf = q as f32;
    let s = qf.mul_add(-L2U, d);
    let s = qf.mul_add(-L2L, s);
    let mut u = 0.000_198_527_617_612_853_646_278_381_f32;
    u = u.mul_add(s, 0.001_393_043_552_525_341_510_772_71);
    u = u.mul_add(s, 0.008_333_360_776_305_198_669_433_59);
    u = u.mul_add(s, 0.041_666_485_369_205_474_853_515_6);
    u = u.mul_add(s, 0.166_666_671_633_720_397_949_219);
    u = u.mul_add(s, 0.5);
    let u = 1.0 + (s * s).mul_add(u, s);
    let half = q >> 1;
    let u = u * pow2i(half) * pow2i(q - half);
    if d < -104.0 {
        0.0
    } else if d > 100.0 {
        f32::INFINITY
    } else {
        u
    }
}

/// `2·atanh(x) + e·ln 2` for the double-float `x = (m − 1)/(m + 1)` and the exponent `e`,
/// rounded to float: the part SLEEF's `log1pf` and 1-ulp `logf` share.
// The coefficients as published, in decimal, each rounded to f32 as the C source's are.
#[allow(clippy::excessive_precision)]
fn log_core(x: Df, e: f32) -> f32 {
    let x2 = x.hi * x.hi;
    let mut t = 0.302_729_487_4_f32;
    t = t.mul_add(x2, 0.399_610_817_4);
    t = t.mul_add(x2, 0.666_669_488_0);
    let s = mul_df_f(LN2, e);
    let s = add_df_df(s, scale(x, 2.0));
    let s = add_df_f(s, (x2 * x.hi) * t);
    s.hi + s.lo
}

/// The exponent of `v · 4/3` as the AVX-512 build takes it: `getexp`, with +∞ read as 128.
fn exponent_of(v: f32) -> f32 {
    let e = getexp(v * (1.0f32 / 0.75f32));
    if e == f32::INFINITY {
        128.0
    } else {
        e
    }
}

/// SLEEF's 1-ulp `logf` of a positive `d` (the only inputs [`log1pf_u10`] hands it: above
/// 10^38, +∞ or NaN).
fn logf_u1_positive(d: f32) -> f32 {
    if d.is_nan() || d == f32::INFINITY {
        return d;
    }
    let e = exponent_of(d);
    let m = getmant(d);
    log_core(div_df_df(add2_ff(-1.0, m), add2_ff(1.0, m)), e)
}

/// SLEEF's 1-ulp `log1pf`.
pub fn log1pf_u10(d: f32) -> f32 {
    let e = exponent_of(d + 1.0);
    // 2^−e, built from its exponent bits as the vector build does.
    let t = f32::from_bits(
        1.0f32
            .to_bits()
            .wrapping_add((round_to_i32(e).wrapping_neg() as u32) << 23),
    );
    let m = d.mul_add(t, t - 1.0);
    let x = div_df_df(df(m, 0.0), add_ff(2.0, m));
    let r = if d <= LOG1P_BOUND {
        log_core(x, e)
    } else {
        logf_u1_positive(d)
    };
    if d < -1.0 {
        f32::from_bits(u32::MAX)
    } else if d == -1.0 {
        f32::NEG_INFINITY
    } else if d == 0.0 && d.is_sign_negative() {
        -0.0
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_exact_and_limits() {
        assert_eq!(expf_u10(0.0), 1.0);
        assert_eq!(expf_u10(1.0), std::f32::consts::E);
        assert_eq!(expf_u10(-104.5), 0.0);
        assert_eq!(expf_u10(100.5), f32::INFINITY);
        assert_eq!(expf_u10(89.0), f32::INFINITY);
        // The smallest subnormal's neighbourhood is reached without double rounding.
        assert_eq!(expf_u10(-103.3), f32::from_bits(1));
        assert!(expf_u10(f32::NAN).is_nan());
    }

    #[test]
    fn log1p_exact_and_limits() {
        assert_eq!(log1pf_u10(0.0), 0.0);
        assert!(log1pf_u10(-0.0).is_sign_negative());
        assert_eq!(log1pf_u10(-1.0), f32::NEG_INFINITY);
        assert!(log1pf_u10(-2.0).is_nan());
        assert_eq!(log1pf_u10(f32::INFINITY), f32::INFINITY);
        assert_eq!(log1pf_u10(1.0), std::f32::consts::LN_2);
        // Tiny inputs keep their bits: log1p(x) = x for |x| below 2^−24.
        assert_eq!(log1pf_u10(1.0e-10), 1.0e-10);
        // Above the bound, the logarithm: ln(2^127) = 127 ln 2.
        let big = 2.0f32.powi(127);
        assert_eq!(log1pf_u10(big), 127.0 * std::f32::consts::LN_2);
    }
}
