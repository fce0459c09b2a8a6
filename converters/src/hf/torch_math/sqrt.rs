//! `torch.sqrt` of a float32, as torch 2.15's x86-64 CPU build computes it in the reference
//! environment.
//!
//! torch hands a float32 tensor's `sqrt` to MKL's vector square root (`vsSqrt`,
//! high-accuracy mode), whatever its size. On the reference machine (an AMD EPYC with
//! AVX-512) MKL runs its generic SSE kernel for it, with every `MKL_ENABLE_INSTRUCTIONS` /
//! `MKL_CBWR` setting: a positive normal input's root starts from the CPU's `rsqrtps`
//! estimate `r` of `1/sqrt(x)` and takes one Newton step and one correction, each operation
//! an IEEE float32 one, rounded, none fused:
//!
//! ```text
//! s = x·r, h = r·0.5, t = 0.5 − s·h, s1 = s·t + s, h1 = t·h + h,
//! sqrt = (x − s1·s1)·h1 + s1
//! ```
//!
//! which is the correctly rounded root or, for about 17% of inputs, the float on the exact
//! value's other side (at most 0.75 ulp away). `rsqrtps` is an approximation whose bits each
//! CPU family defines for itself; the reference CPU's depends on the input's exponent parity
//! and its 12 leading mantissa bits only (checked on 2·10^8 random normal inputs) and scales
//! exactly by powers of 4, so its 8192 values on [1, 4) (`rsqrtps_zen.bin`, little-endian
//! `u32` bits, measured by `conformance/make_rsqrtps_table.c`) give every estimate.
//! Subnormal inputs take MKL's separate path, whose results are the correctly rounded
//! roots; a negative input (not -0) gives the positive quiet NaN, a NaN comes back quieted,
//! ±0 and +∞ are their own roots.

/// `rsqrtps` of `(1 + i/4096)·2^p` for parity `p` (0, 1) and `i` in `0..4096`, at `p·4096 + i`.
static RSQRTPS: &[u8] = include_bytes!("rsqrtps_zen.bin");

/// The reference CPU's `rsqrtps(x)` for a positive normal `x`.
fn rsqrtps(x: f32) -> f32 {
    let b = x.to_bits();
    let e = (b >> 23) as i32 - 127;
    let p = e.rem_euclid(2);
    let k = (e - p) / 2;
    let i = (p as usize) * 4096 + ((b >> 11) & 0xfff) as usize;
    let t = u32::from_le_bytes([
        RSQRTPS[4 * i],
        RSQRTPS[4 * i + 1],
        RSQRTPS[4 * i + 2],
        RSQRTPS[4 * i + 3],
    ]);
    // The estimate for x = m·4^k is the one for m divided by 2^k: an exponent change only
    // (the result stays normal for every normal input).
    let te = (t >> 23) as i32 - k;
    f32::from_bits((t & 0x807f_ffff) | ((te as u32) << 23))
}

/// `torch.sqrt` of one float32 element (see the module doc).
pub fn torch_sqrt_f32(x: f32) -> f32 {
    if x.is_nan() {
        return f32::from_bits(x.to_bits() | 0x0040_0000);
    }
    if x == 0.0 || x == f32::INFINITY {
        return x;
    }
    if x < 0.0 {
        return f32::from_bits(0x7fc0_0000);
    }
    if !x.is_normal() {
        return x.sqrt();
    }
    let r = rsqrtps(x);
    let s = x * r;
    let h = r * 0.5;
    let t = 0.5 - s * h;
    let s1 = s * t + s;
    let h1 = t * h + h;
    let e = x - s1 * s1;
    e * h1 + s1
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    /// 2^20 inputs spread over every binade of positive normals, and the special values,
    /// against torch 2.15 in the reference environment (179,844 of the roots are not the
    /// correctly rounded ones).
    #[test]
    fn sqrt_matches_torch() {
        let out: Vec<u8> = (0u32..1 << 20)
            .flat_map(|i| torch_sqrt_f32(f32::from_bits(0x0080_0000 + i * 0x7e0)).to_le_bytes())
            .collect();
        let hex: String = Sha256::digest(&out)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            hex,
            "ea3889f1c45967297b740bdc881019a82041bcf26fd802c5f5141f92a4d0ae78"
        );
        for (x, want) in [
            (0.0f32, 0x0000_0000u32),
            (-0.0, 0x8000_0000),
            (f32::INFINITY, 0x7f80_0000),
            (f32::NEG_INFINITY, 0x7fc0_0000),
            (-1.0, 0x7fc0_0000),
            (1e-45, 0x1a35_04f3),
            (3e-39, 0x1f81_53cd),
        ] {
            assert_eq!(torch_sqrt_f32(x).to_bits(), want, "{x:e}");
        }
    }
}
