//! torch's float32 bilinear resize with `align_corners=True`
//! (`F.interpolate(x, size, mode="bilinear", align_corners=True)`) of a square grid whose
//! channels are innermost: the reference resizes a `[1, n·n, C]` position table viewed as
//! `[1, C, n, n]` in channels-last memory.
//!
//! Such a tensor (channels-last contiguous, `C > 3`, or an output of at most 128 rows plus
//! columns) takes ATen's channels-last CPU kernel. Per output pixel it takes the four
//! neighbours `i00, i01, i10, i11` (row `h0`/`h1`, column `w0`/`w1`) and the weights
//! `w00 = h0λ·w0λ`, `w01 = h0λ·w1λ`, `w10 = h1λ·w0λ`, `w11 = h1λ·w1λ` (float32 products).
//! The vector body (16 floats with AVX-512) computes `i00·w00 + (i01·w01 + (i10·w10 + i11·w11))`
//! as the compiler contracts it: `fma(i00, w00, fma(i01, w01, fma(i11, w11, i10·w10)))`. The
//! scalar tail (the last `C mod 16` channels) computes `((i00·w00 + i01·w01) + i10·w10) +
//! i11·w11` as the compiler contracts it: `fma(i11, w11, fma(i10, w10, fma(i00, w00, i01·w01)))`.
//! The indices and weights: `scale = (in − 1) / (out − 1)` in float32 (0 for one output), the
//! source `real = scale · o`, `i0 = min(⌊real⌋, in − 1)`, `λ1 = clamp(real − i0, 0, 1)`,
//! `λ0 = 1 − λ1`, `i1 = i0 + (i0 < in − 1)`; an axis of equal sizes copies (`λ0 = 1`).
//! Measured against torch 2.15 on an AVX-512 CPU (`conformance/probe_torch_bilinear.py`).

/// The vector width of torch's AVX-512 channels-last kernel (float32 lanes).
pub const BILINEAR_LANES: usize = 16;

/// One output index's source indices and weights along an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tap {
    i0: usize,
    i1: usize,
    l0: f32,
    l1: f32,
}

/// ATen's `compute_source_index_and_lambda` with `align_corners=True` for every output
/// index of an axis resized from `from` to `to` (both positive).
fn taps(from: usize, to: usize) -> Vec<Tap> {
    if from == to {
        return (0..to)
            .map(|o| Tap {
                i0: o,
                i1: o,
                l0: 1.0,
                l1: 0.0,
            })
            .collect();
    }
    let scale = if to > 1 {
        (from - 1) as f32 / (to - 1) as f32
    } else {
        0.0
    };
    (0..to)
        .map(|o| {
            let real = scale * o as f32;
            let i0 = (real.floor() as usize).min(from - 1);
            let l1 = (real - i0 as f32).clamp(0.0, 1.0);
            let i1 = i0 + usize::from(i0 < from - 1);
            Tap {
                i0,
                i1,
                l0: 1.0 - l1,
                l1,
            }
        })
        .collect()
}

/// Resizes the `from × from` grid of `c`-channel pixels in `x` (row-major pixels, channels
/// innermost: `x.len() == from·from·c`) to `to × to` as torch's float32 kernel does. `from`
/// and `to` must be positive.
pub fn torch_bilinear_align_corners_f32(x: &[f32], from: usize, to: usize, c: usize) -> Vec<f32> {
    debug_assert_eq!(x.len(), from * from * c);
    let t = taps(from, to);
    let body = c - c % BILINEAR_LANES;
    let mut out = Vec::with_capacity(to * to * c);
    let px = |h: usize, w: usize| &x[(h * from + w) * c..(h * from + w + 1) * c];
    for th in &t {
        for tw in &t {
            let w00 = th.l0 * tw.l0;
            let w01 = th.l0 * tw.l1;
            let w10 = th.l1 * tw.l0;
            let w11 = th.l1 * tw.l1;
            let (i00, i01) = (px(th.i0, tw.i0), px(th.i0, tw.i1));
            let (i10, i11) = (px(th.i1, tw.i0), px(th.i1, tw.i1));
            for d in 0..c {
                let v = if d < body {
                    let inner = i11[d].mul_add(w11, i10[d] * w10);
                    i00[d].mul_add(w00, i01[d].mul_add(w01, inner))
                } else {
                    let acc = i00[d].mul_add(w00, i01[d] * w01);
                    i11[d].mul_add(w11, i10[d].mul_add(w10, acc))
                };
                out.push(v);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_follow_aten() {
        // 9 → 4: scale 8/3 in float32.
        let t = taps(9, 4);
        assert_eq!((t[0].i0, t[0].i1, t[0].l1), (0, 1, 0.0));
        assert_eq!((t[1].i0, t[1].i1), (2, 3));
        assert_eq!(t[1].l1, 0.666_666_75);
        assert_eq!(t[1].l0, 0.333_333_25);
        assert_eq!((t[3].i0, t[3].i1, t[3].l1), (8, 8, 0.0));
        // One output: scale 0, the first pixel.
        assert_eq!(taps(5, 1)[0].i0, 0);
        // Equal sizes copy.
        assert!(taps(3, 3).iter().all(|t| t.l0 == 1.0 && t.i0 == t.i1));
    }

    #[test]
    fn corners_are_kept() {
        let x: Vec<f32> = (0..3 * 3 * 2).map(|i| i as f32 * 0.37).collect();
        let y = torch_bilinear_align_corners_f32(&x, 3, 5, 2);
        assert_eq!(y.len(), 5 * 5 * 2);
        assert_eq!(&y[0..2], &x[0..2]);
        assert_eq!(&y[(4 * 5 + 4) * 2..], &x[(2 * 3 + 2) * 2..]);
    }
}
