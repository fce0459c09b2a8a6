//! `torch.nn.functional.softplus` (beta 1, threshold 20) of a contiguous CPU tensor, as torch
//! 2.15's x86-64 build computes it with its AVX-512 kernels.
//!
//! torch runs two loops over the elements. The first `n − n mod (2 · lanes)` elements go
//! through the vector kernel (torch's own vector `exp`, then `log1p`); the rest through the
//! scalar one, `x > 20 ? x : log1p(exp(x))` with the C library's `expf` and `log1pf` (Rust's
//! `f32::exp` and `f32::ln_1p` call the same functions). The lanes are 16 for a float32
//! tensor and 32 for a float16 one, whose values are widened to float32, computed and rounded
//! once to half.
//!
//! The vector kernel differs from the scalar one in the last bit for some inputs. Its results
//! are measured, not reconstructed (`conformance/make_torch_softplus_table.py`): for every
//! bfloat16 value (what a bfloat16 checkpoint's tensor holds once the converter widens it to
//! float32) and every float16 value, `softplus_avx512.bin` lists the inputs where the vector
//! kernel's result is not the scalar one. Float32 inputs that are not bfloat16 values take
//! the scalar result in both loops, which the vector kernel can miss by one bit (a float32
//! checkpoint's vector-loop elements; see docs/torch-float-semantics.md).

use std::sync::OnceLock;

use ggufkit::quantizers::{f16_to_f32, f32_to_f16};

/// The measured deviations of the vector kernel (format in the generator).
static TABLE: &[u8] = include_bytes!("softplus_avx512.bin");

/// Elements per vector-loop step of a float32 tensor (two vectors of 16 lanes).
pub const SOFTPLUS_STEP_F32: usize = 32;

/// Elements per vector-loop step of a float16 tensor (two vectors of 32 lanes).
pub const SOFTPLUS_STEP_F16: usize = 64;

/// The decoded table: bfloat16 input bits → float32 result bits, float16 input bits →
/// float16 result bits, each sorted by input.
struct Table {
    bf16: Vec<(u16, u32)>,
    f16: Vec<(u16, u16)>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The table compiled into the crate (not input: its shape is checked by the unit tests),
/// decoded on first use; panics on a wrong magic or length.
fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        assert_eq!(&TABLE[..4], b"TSPL", "softplus table: bad magic");
        let n_bf16 = u32_at(TABLE, 4) as usize;
        let n_f16 = u32_at(TABLE, 8) as usize;
        assert_eq!(
            TABLE.len(),
            12 + 6 * n_bf16 + 4 * n_f16,
            "softplus table: bad length"
        );
        let bf16 = (0..n_bf16)
            .map(|i| (u16_at(TABLE, 12 + 6 * i), u32_at(TABLE, 14 + 6 * i)))
            .collect();
        let at = 12 + 6 * n_bf16;
        let f16 = (0..n_f16)
            .map(|i| (u16_at(TABLE, at + 4 * i), u16_at(TABLE, at + 4 * i + 2)))
            .collect();
        Table { bf16, f16 }
    })
}

/// The scalar loop's softplus of a float32.
pub fn scalar_softplus(x: f32) -> f32 {
    if x > 20.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

/// The vector loop's softplus of a float32: the measured result for a bfloat16 value the
/// table lists, else the scalar one.
pub fn vector_softplus(x: f32) -> f32 {
    let bits = x.to_bits();
    if bits & 0xffff == 0 {
        let t = &table().bf16;
        if let Ok(i) = t.binary_search_by_key(&((bits >> 16) as u16), |p| p.0) {
            return f32::from_bits(t[i].1);
        }
    }
    scalar_softplus(x)
}

/// `softplus` of a contiguous float32 tensor.
pub fn torch_softplus_f32(xs: &[f32]) -> Vec<f32> {
    let body = xs.len() - xs.len() % SOFTPLUS_STEP_F32;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            if i < body {
                vector_softplus(x)
            } else {
                scalar_softplus(x)
            }
        })
        .collect()
}

/// `softplus` of a contiguous float16 tensor (IEEE half bits in and out).
pub fn torch_softplus_f16(xs: &[u16]) -> Vec<u16> {
    let body = xs.len() - xs.len() % SOFTPLUS_STEP_F16;
    let t = &table().f16;
    xs.iter()
        .enumerate()
        .map(|(i, &h)| {
            if i < body {
                if let Ok(j) = t.binary_search_by_key(&h, |p| p.0) {
                    return t[j].1;
                }
            }
            let x = f16_to_f32(h);
            if x > 20.0 {
                h
            } else {
                f32_to_f16(scalar_softplus(x))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_decodes_sorted() {
        let t = table();
        assert!(t.bf16.len() > 100);
        assert!(t.bf16.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(t.f16.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn loops_by_position() {
        // 5.96e-8 (bfloat16 0x3380) is one of the inputs the vector kernel rounds the
        // other way.
        let x = f32::from_bits(0x3380_0000);
        assert_ne!(vector_softplus(x), scalar_softplus(x));
        let mut xs = vec![x; 33];
        xs[0] = x;
        let out = torch_softplus_f32(&xs);
        assert_eq!(out[0], vector_softplus(x));
        assert_eq!(out[31], vector_softplus(x));
        assert_eq!(out[32], scalar_softplus(x));
        assert_eq!(torch_softplus_f32(&xs[..8])[0], scalar_softplus(x));
    }

    #[test]
    fn threshold_and_zero() {
        assert_eq!(scalar_softplus(25.0), 25.0);
        assert_eq!(scalar_softplus(0.0), std::f32::consts::LN_2);
        assert_eq!(
            torch_softplus_f16(&[f32_to_f16(30.0)]),
            vec![f32_to_f16(30.0)]
        );
    }
}
