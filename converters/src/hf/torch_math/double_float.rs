//! The building blocks of SLEEF's float32 functions, as its AVX-512 build computes them:
//! double-float arithmetic (a value carried as an unevaluated sum of two floats), the
//! exponent and significand extraction of the AVX-512 `getexp` / `getmant` instructions, and
//! scaling by a power of two. Every fused multiply-add of the vector build is an
//! `f32::mul_add` here and every other operation one IEEE float32 operation, in the same
//! order, so a function assembled from these rounds exactly as SLEEF's does.

/// A double-float: an unevaluated sum `hi + lo` with `|lo| ≤ ulp(hi) / 2`.
#[derive(Clone, Copy)]
pub(super) struct Df {
    pub(super) hi: f32,
    pub(super) lo: f32,
}

pub(super) fn df(hi: f32, lo: f32) -> Df {
    Df { hi, lo }
}

/// `a · b − c`, rounded once.
fn fms(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, -c)
}

/// `−(a · b) + c`, rounded once.
fn fnma(a: f32, b: f32, c: f32) -> f32 {
    (-a).mul_add(b, c)
}

/// `x + y` exactly, for any magnitudes.
pub(super) fn add2_ff(x: f32, y: f32) -> Df {
    let s = x + y;
    let v = s - x;
    df(s, (x - (s - v)) + (y - v))
}

/// `x + y` for floats with `|x| ≥ |y|` (or `x` a power of two no smaller than `|y|`).
pub(super) fn add_ff(x: f32, y: f32) -> Df {
    let s = x + y;
    df(s, (x - s) + y)
}

/// `x + y` for a double-float `x` with `|x.hi| ≥ |y|`.
pub(super) fn add_df_f(x: Df, y: f32) -> Df {
    let s = x.hi + y;
    df(s, ((x.hi - s) + y) + x.lo)
}

/// `x + y` for a double-float `x` and any `y`.
pub(super) fn add2_df_f(x: Df, y: f32) -> Df {
    let s = x.hi + y;
    let v = s - x.hi;
    let t = (x.hi - (s - v)) + (y - v);
    df(s, t + x.lo)
}

/// `x + y` of two double-floats, any magnitudes.
pub(super) fn add2_df_df(x: Df, y: Df) -> Df {
    let s = x.hi + y.hi;
    let v = s - x.hi;
    let t = (x.hi - (s - v)) + (y.hi - v);
    df(s, t + (x.lo + y.lo))
}

/// `x + y` of two double-floats with `|x| ≥ |y|`.
pub(super) fn add_df_df(x: Df, y: Df) -> Df {
    let s = x.hi + y.hi;
    df(s, (((x.hi - s) + y.hi) + x.lo) + y.lo)
}

/// `x + y` for a float `x` with `|x| ≥ |y|`.
pub(super) fn add_f_df(x: f32, y: Df) -> Df {
    let s = x + y.hi;
    df(s, ((x - s) + y.hi) + y.lo)
}

pub(super) fn normalize(t: Df) -> Df {
    let s = t.hi + t.lo;
    df(s, (t.hi - s) + t.lo)
}

pub(super) fn scale(d: Df, s: f32) -> Df {
    df(d.hi * s, d.lo * s)
}

pub(super) fn mul_df_f(x: Df, y: f32) -> Df {
    let s = x.hi * y;
    df(s, x.lo.mul_add(y, fms(x.hi, y, s)))
}

pub(super) fn mul_df_df(x: Df, y: Df) -> Df {
    let s = x.hi * y.hi;
    df(
        s,
        x.hi.mul_add(y.lo, x.lo.mul_add(y.hi, fms(x.hi, y.hi, s))),
    )
}

pub(super) fn square(x: Df) -> Df {
    let s = x.hi * x.hi;
    df(s, (x.hi + x.hi).mul_add(x.lo, fms(x.hi, x.hi, s)))
}

pub(super) fn div_df_df(n: Df, d: Df) -> Df {
    let t = 1.0 / d.hi;
    let s = n.hi * t;
    let u = fms(t, n.hi, s);
    let v = fnma(d.lo, t, fnma(d.hi, t, 1.0));
    df(s, s.mul_add(v, n.lo.mul_add(t, u)))
}

/// `floor(log2 |v|)` as a float (the AVX-512 `getexp`): −∞ for 0, +∞ for ∞.
pub(super) fn getexp(v: f32) -> f32 {
    let a = v.abs();
    if a.is_nan() {
        return a;
    }
    if a == 0.0 {
        return f32::NEG_INFINITY;
    }
    if a.is_infinite() {
        return f32::INFINITY;
    }
    let bits = a.to_bits();
    let e = (bits >> 23) as i32;
    if e == 0 {
        // A subnormal: the exponent of its leading bit.
        let lead = 31 - bits.leading_zeros() as i32;
        (lead - 149) as f32
    } else {
        (e - 127) as f32
    }
}

/// The significand of a finite non-zero `v` scaled into [0.75, 1.5), sign dropped (the
/// AVX-512 `getmant` with that interval).
pub(super) fn getmant(v: f32) -> f32 {
    let a = v.abs();
    if a == 0.0 || !a.is_finite() {
        return a;
    }
    let mut bits = a.to_bits();
    if bits >> 23 == 0 {
        // Normalize a subnormal: shift its leading bit into the implicit position.
        let shift = bits.leading_zeros() - 8;
        bits = (bits << shift) & 0x007f_ffff;
    }
    let frac = bits & 0x007f_ffff;
    // A significand of 1.5 or more is halved into [0.75, 1).
    let exp = if frac & 0x0040_0000 != 0 { 126 } else { 127 };
    f32::from_bits((exp << 23) | frac)
}

/// `x · 2^q` by four multiplications by a power of two and one more (never a subnormal
/// intermediate that a single scaling would round twice).
pub(super) fn ldexp(x: f32, q: i32) -> f32 {
    // Two's-complement wrapping, as the C original computes it for exponents near the
    // ends of `i32` (they scale to zero or infinity either way).
    let mut m = q >> 31;
    m = ((m.wrapping_add(q) >> 6) - m) << 4;
    let q = q.wrapping_sub(m << 2);
    m += 0x7f;
    m = if m > 0 { m } else { 0 };
    if m > 0xff {
        m = 0xff;
    }
    let u = f32::from_bits((m as u32) << 23);
    let x = x * u * u * u * u;
    let u = f32::from_bits(((q + 0x7f) as u32) << 23);
    x * u
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnormal_helpers() {
        let tiny = f32::from_bits(1);
        assert_eq!(getexp(tiny), -149.0);
        assert_eq!(getmant(tiny), 1.0);
        assert_eq!(getmant(1.75), 0.875);
        assert_eq!(getmant(1.25), 1.25);
        assert_eq!(ldexp(1.0, -149), tiny);
        assert_eq!(ldexp(1.5, 10), 1536.0);
    }
}
