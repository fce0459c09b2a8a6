//! `torch.erfinv` of a float32, as torch 2.15's x86-64 CPU build computes it, and the normal
//! quantile built on it.
//!
//! torch hands a float32 tensor's `erfinv` (any size, a 0-dim tensor included) to MKL's vector
//! erfinv (`vsErfInv`, high-accuracy mode), which picks its code path by CPU like MKL's exp
//! ([`MklPath`]). Its result is the correctly rounded erfinv or, for a few inputs in ten
//! thousand, the float on the exact value's other side; it is odd and depends on the input
//! alone. So, as for exp, the result is the f64 erfinv rounded to f32, stepped to the other
//! neighbour for the inputs `erfinv_<path>.bin` lists ([`super::deviations`]), measured by
//! `conformance/make_torch_erfinv_table.py` on every float32 of [0, 1) (and checked odd on
//! every negative one). The f64 erfinv here is Newton's method on an f64 `erf` (a series
//! below 2, a continued fraction for `erfc` beyond), within 2^-22 of an f32 spacing of the
//! exact value: well inside the 2^-20 of a spacing around a midpoint within which the table
//! lists results explicitly.

use std::sync::OnceLock;

use super::deviations::{round_and_other, Deviations};
use super::MklPath;

static TABLE_AVX512: &[u8] = include_bytes!("erfinv_avx512.bin");
static TABLE_COMPATIBLE: &[u8] = include_bytes!("erfinv_compatible.bin");

fn deviations(path: MklPath) -> &'static Deviations {
    static COMPATIBLE: OnceLock<Deviations> = OnceLock::new();
    static AVX512: OnceLock<Deviations> = OnceLock::new();
    match path {
        MklPath::Compatible => {
            COMPATIBLE.get_or_init(|| Deviations::decode(TABLE_COMPATIBLE, b"TERF"))
        }
        MklPath::Avx512 => AVX512.get_or_init(|| Deviations::decode(TABLE_AVX512, b"TERF")),
    }
}

/// 2/√π.
const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// `e^(−x²)` with `x²` carried as an exact sum `h + l` (an f64 and its rounding error, by a
/// fused multiply-add), so the rounding of `x²` (up to 2^-51 relative for x near 2) does not
/// reach the result.
fn exp_minus_square(x: f64) -> f64 {
    let h = x * x;
    let l = x.mul_add(x, -h);
    (-h).exp() * (1.0 - l)
}

/// `erf(x)` for 0 ≤ x < 2: `2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (2n+1)!!`, whose terms are all
/// positive (no cancellation), summed with a compensation term.
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let (mut sum, mut carry) = (x, 0.0f64);
    let mut n = 0.0f64;
    while term > sum * 1e-18 {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        // Kahan summation: `carry` holds what the previous additions rounded away.
        let t = term - carry;
        let next = sum + t;
        carry = (next - sum) - t;
        sum = next;
    }
    TWO_OVER_SQRT_PI * exp_minus_square(x) * sum
}

/// `erfc(x)` for x ≥ 2: `e^(−x²)/√π / (x + ½/(x + 1/(x + (3/2)/(x + …))))`, the continued
/// fraction evaluated from its 200th level back (converged to f64 precision for x ≥ 2).
fn erfc_fraction(x: f64) -> f64 {
    let mut t = x;
    for n in (1..=200).rev() {
        t = x + (n as f64 * 0.5) / t;
    }
    0.5 * TWO_OVER_SQRT_PI * exp_minus_square(x) / t
}

/// The float32 first guess of Pavlis' rational approximation (two forms, split at 0.7),
/// accurate to about 10^-7 relative, for 0 ≤ y < 1.
// The published decimal coefficients.
#[allow(clippy::excessive_precision)]
fn first_guess(y: f64) -> f64 {
    const A: [f64; 4] = [0.886226899, -1.645349621, 0.914624893, -0.140543331];
    const B: [f64; 4] = [-2.118377725, 1.442710462, -0.329097515, 0.012229801];
    const C: [f64; 4] = [-1.970840454, -1.624906493, 3.429567803, 1.641345311];
    const D: [f64; 2] = [3.543889200, 1.637067800];
    if y <= 0.7 {
        let z = y * y;
        let num = ((A[3] * z + A[2]) * z + A[1]) * z + A[0];
        let dem = (((B[3] * z + B[2]) * z + B[1]) * z + B[0]) * z + 1.0;
        y * num / dem
    } else {
        let z = (-((1.0 - y) / 2.0).ln()).sqrt();
        let num = ((C[3] * z + C[2]) * z + C[1]) * z + C[0];
        let dem = (D[1] * z + D[0]) * z + 1.0;
        num / dem
    }
}

/// `erfinv(y)` in f64 for 0 ≤ y < 1 (y a float32, so `1 − y` is exact): Newton's method
/// from [`first_guess`], with the residual `erf(x) − y` below x = 2 and `(1 − y) − erfc(x)`
/// from 2 on, until a step no longer changes x.
pub(super) fn erfinv_f64(y: f64) -> f64 {
    if y == 0.0 {
        return 0.0;
    }
    let mut x = first_guess(y);
    for _ in 0..8 {
        let residual = if x < 2.0 {
            erf_series(x) - y
        } else {
            (1.0 - y) - erfc_fraction(x)
        };
        let next = x - residual / (TWO_OVER_SQRT_PI * (-x * x).exp());
        if next == x {
            break;
        }
        x = next;
    }
    x
}

/// `torch.erfinv(y)` for a float32 `y` on the path [`MklPath::selected`] names.
pub fn torch_erfinv_f32(y: f32) -> f32 {
    torch_erfinv_f32_on(MklPath::selected(), y)
}

/// `torch.erfinv(y)` for a float32 `y` on MKL's `path` (see the module doc).
pub fn torch_erfinv_f32_on(path: MklPath, y: f32) -> f32 {
    if y.is_nan() {
        // MKL quiets a NaN and keeps its payload.
        return f32::from_bits(y.to_bits() | 0x0040_0000);
    }
    let a = y.abs();
    if a > 1.0 {
        // MKL's "invalid" result: the default NaN with the sign bit set.
        return f32::from_bits(0xffc0_0000);
    }
    if a == 1.0 {
        return f32::INFINITY.copysign(y);
    }
    let e = erfinv_f64(a as f64);
    let (r, other) = round_and_other(e);
    let dev = deviations(path);
    let bits = a.to_bits();
    let v = match other {
        None => r,
        // An input listed explicitly is one the generator found near a midpoint: its
        // result is taken as listed, even where this f64 value sits just outside the bound.
        Some(other) => match dev.explicit(bits) {
            Some(v) => v,
            None if dev.deviates(bits) => other,
            None => r,
        },
    };
    v.copysign(y)
}

/// `torch.distributions.Normal(0, 1).icdf(torch.tensor(p, dtype=torch.float32))`: the
/// float32 operations `2 · p − 1` (one rounding), `erfinv`, `· f32(√2)`; the `0 + 1 ·`
/// around them change no bits.
pub fn torch_normal_icdf_f32(p: f32) -> f32 {
    let y = 2.0f32 * p - 1.0f32;
    torch_erfinv_f32(y) * std::f64::consts::SQRT_2 as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_decode_whole_and_sorted() {
        for path in [MklPath::Compatible, MklPath::Avx512] {
            let d = deviations(path);
            assert!(d.runs() > 10_000, "{path:?}");
            assert!(d.is_well_formed(), "{path:?}");
        }
    }

    /// torch 2.15's results at the edges of the domain (measured).
    #[test]
    fn special_values() {
        for path in [MklPath::Compatible, MklPath::Avx512] {
            let e = |y: f32| torch_erfinv_f32_on(path, y).to_bits();
            assert_eq!(e(1.0), 0x7f80_0000);
            assert_eq!(e(-1.0), 0xff80_0000);
            assert_eq!(e(0.0), 0);
            assert_eq!(e(-0.0), 0x8000_0000);
            assert_eq!(e(f32::from_bits(1)), 1);
            assert_eq!(e(f32::from_bits(0x8000_0001)), 0x8000_0001);
            for bad in [2.0f32, -2.0, f32::INFINITY, f32::NEG_INFINITY] {
                assert_eq!(e(bad), 0xffc0_0000, "{bad}");
            }
            assert_eq!(e(f32::from_bits(0x7f80_0001)), 0x7fc0_0001);
            assert_eq!(e(f32::from_bits(0xffc0_0005)), 0xffc0_0005);
        }
    }

    /// Round trips `x → erf(x) → erfinv` land within 2^-22 of an f32 spacing of `x` (at most
    /// 8.2 · 10^-8, near x = 2, where erf is within a few f64 units of 1), beyond what
    /// rounding `erf(x)` to an f64 `y` moves the exact inverse (half a unit of `y` over erf's
    /// slope): four times inside the 2^-20 bound within which the table lists results
    /// explicitly, so rounding this f64 value gives what rounding the exact one does.
    #[test]
    fn erfinv_f64_inverts_erf() {
        let mut worst = 0.0f64;
        for k in 1..4000 {
            let x = k as f64 * 0.000_97;
            let y = if x < 2.0 {
                erf_series(x)
            } else {
                1.0 - erfc_fraction(x)
            };
            let slope = TWO_OVER_SQRT_PI * (-x * x).exp();
            let spacing = f64::from((x as f32).abs() * f32::EPSILON);
            let err = ((erfinv_f64(y) - x).abs() - 1.2e-16 / slope).max(0.0) / spacing;
            worst = worst.max(err);
        }
        assert!(worst < 1.0 / (1u64 << 22) as f64, "{worst:e} of a spacing");
    }
}
