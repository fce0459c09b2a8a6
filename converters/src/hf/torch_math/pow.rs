//! `torch.pow` of float32 tensors, as torch 2.15's x86-64 CPU build computes it on an AVX-512
//! machine (Llama 3's `base ** (torch.arange(0, dim, 2) / dim)`).
//!
//! torch runs an elementwise binary op over a contiguous tensor in blocks of two vectors
//! (32 floats with AVX-512) through the vector kernel, and the remaining `n mod 32` elements
//! through the scalar kernel. For `pow` the vector kernel is SLEEF's 1-ulp `powf`
//! (`Sleef_powf16_u10`, built with FMA) and the scalar kernel is the C library's `powf`;
//! the two differ in the last bit for about 1% of inputs, so an element's result depends on
//! its index. [`torch_pow_f32`] reproduces that split: [`vector_powf`] for the body, Rust's
//! `f32::powf` (the platform's `powf`: glibc's on Linux, as torch's) for the tail.
//!
//! [`vector_powf`] is SLEEF's algorithm: `log|x|` in double-float arithmetic (a mantissa in
//! [0.75, 1.5) and an exponent, `atanh`-style series in `(m - 1)/(m + 1)`), multiplied by `y`
//! in double-float, then `exp` of the pair (reduction by `ln 2` in two parts, a degree-5
//! polynomial, scaling by `2^q`), each step with the same fused multiply-adds and the same
//! float32 roundings, so the result is bit-identical; the sign and special cases follow C's
//! `pow`.

use super::double_float::{
    add2_df_df, add2_df_f, add2_ff, add_df_df, add_f_df, df, div_df_df, getexp, getmant, ldexp,
    mul_df_df, mul_df_f, normalize, scale, square, Df,
};

/// The width of torch's vector loop step for float32 with AVX-512: two 16-lane vectors.
pub const VECTOR_STEP: usize = 32;

/// `log |d|` as a double-float.
// The coefficients as published, in decimal, each rounded to f32 as the C source's are.
#[allow(clippy::excessive_precision)]
fn log_df(d: f32) -> Df {
    let mut e = getexp(d * (1.0f32 / 0.75f32));
    if e == f32::INFINITY {
        e = 128.0;
    }
    let m = getmant(d);
    let x = div_df_df(add2_ff(-1.0, m), add2_ff(1.0, m));
    let x2 = square(x);
    let mut t = 0.240_320_354_700_088_500_976_562_f32;
    t = t.mul_add(x2.hi, 0.285_112_679_004_669_189_453_125);
    t = t.mul_add(x2.hi, 0.400_007_992_982_864_379_882_812);
    let c = df(
        0.666_666_626_930_236_816_406_25,
        3.691_838_612_596_143_320_843_11e-9,
    );
    let mut s = mul_df_f(
        df(0.693_147_182_464_599_609_38, -1.904_654_323_148_236_017e-9),
        e,
    );
    s = add_df_df(s, scale(x, 2.0));
    add_df_df(
        s,
        mul_df_df(mul_df_df(x2, x), add2_df_df(mul_df_f(x2, t), c)),
    )
}

/// `exp` of a double-float, rounded to float.
// The coefficients as published, in decimal, each rounded to f32 as the C source's are.
#[allow(clippy::excessive_precision)]
fn exp_df(d: Df) -> f32 {
    const R_LN2: f32 = std::f32::consts::LOG2_E;
    const L2U: f32 = 0.693_145_751_953_125;
    const L2L: f32 = 1.428_606_765_330_187_045e-6;
    let u = (d.hi + d.lo) * R_LN2;
    // Round half to even, as the vector conversion does; out of range gives i32::MIN.
    let r = u.round_ties_even();
    let q = if (-2_147_483_648.0..2_147_483_648.0).contains(&r) {
        r as i32
    } else {
        i32::MIN
    };
    let qf = q as f32;
    let mut s = add2_df_f(d, qf * -L2U);
    s = add2_df_f(s, qf * -L2L);
    s = normalize(s);
    let mut u = 0.001_363_246_468_827_128_410_339_36_f32;
    u = u.mul_add(s.hi, 0.008_365_969_173_610_210_418_701_17);
    u = u.mul_add(s.hi, 0.041_671_082_377_433_776_855_468_8);
    u = u.mul_add(s.hi, 0.166_665_524_244_308_471_679_688);
    u = u.mul_add(s.hi, 0.499_999_850_988_388_061_523_438);
    let mut t = add_df_df(s, mul_df_f(square(s), u));
    t = add_f_df(1.0, t);
    let v = ldexp(t.hi + t.lo, q);
    if d.hi < -104.0 {
        0.0
    } else {
        v
    }
}

/// SLEEF's 1-ulp `powf` (the vector kernel torch's float32 `pow` uses on AVX-512).
pub fn vector_powf(x: f32, y: f32) -> f32 {
    let y_is_int = y.trunc() == y || y.abs() > (1u32 << 24) as f32;
    let y_is_odd = y_is_int && y.abs() < (1u32 << 24) as f32 && (y.trunc() as i32) & 1 == 1;
    let mut r = exp_df(mul_df_f(log_df(x.abs()), y));
    if r.is_nan() {
        r = f32::INFINITY;
    }
    r *= if x > 0.0 {
        1.0
    } else if y_is_int {
        if y_is_odd {
            -1.0
        } else {
            1.0
        }
    } else {
        f32::NAN
    };
    // |x| − 1, its sign flipped when y is negative.
    let efx = if y.is_sign_negative() {
        -(x.abs() - 1.0)
    } else {
        x.abs() - 1.0
    };
    if y.is_infinite() {
        r = if efx < 0.0 {
            0.0
        } else if efx == 0.0 {
            1.0
        } else {
            f32::INFINITY
        };
    }
    if x.is_infinite() || x == 0.0 {
        let mag = if y.is_sign_negative() != (x == 0.0) {
            0.0
        } else {
            f32::INFINITY
        };
        let sign_of = if y_is_odd { x } else { 1.0 };
        r = if sign_of.is_sign_negative() {
            -mag
        } else {
            mag
        };
    }
    if x.is_nan() || y.is_nan() {
        r = f32::from_bits(u32::MAX);
    }
    if y == 0.0 || x == 1.0 {
        r = 1.0;
    }
    r
}

/// `torch.pow(base, exponents)` over a contiguous float32 tensor on the reference's AVX-512
/// path: the vector kernel for the first `n − n mod 32` elements, the scalar `powf` for the
/// rest.
pub fn torch_pow_f32(base: f32, exponents: &[f32]) -> Vec<f32> {
    let body = exponents.len() - exponents.len() % VECTOR_STEP;
    exponents
        .iter()
        .enumerate()
        .map(|(i, &y)| {
            if i < body {
                vector_powf(base, y)
            } else {
                base.powf(y)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_cases() {
        assert_eq!(vector_powf(2.0, 10.0), 1024.0);
        assert_eq!(vector_powf(10_000.0, 0.0), 1.0);
        assert_eq!(vector_powf(1.0, f32::NAN), 1.0);
        assert_eq!(vector_powf(-2.0, 3.0), -8.0);
        assert!(vector_powf(-2.0, 0.5).is_nan());
        assert_eq!(vector_powf(0.0, -1.0), f32::INFINITY);
        assert_eq!(vector_powf(f32::INFINITY, -1.0), 0.0);
    }
}
