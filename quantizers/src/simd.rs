//! Eight-lane f32 vectors for the lane-parallel kernels, and runtime dispatch of the hot row
//! kernels to an AVX2 build of the same source.
//!
//! [`V8`] is the small set of lane-wise operations the kernels in [`crate::lanes`] use. It
//! has three implementations: [`Avx2`] (one 256-bit register), [`Sse2`] (two 128-bit
//! registers; SSE2 is part of every x86-64 CPU) and [`Scalar`] (plain arrays, for other
//! architectures and as a test oracle). Every operation is the IEEE operation the scalar
//! code performs, applied to each lane on its own (vector add, multiply, divide and square
//! root round exactly like their scalar forms, and FMA is never used), so the three give
//! bit-identical results.
//!
//! The crate is compiled for baseline x86-64, so [`multiversion!`] compiles each hot row
//! function a second time with AVX2 enabled (which also lets the compiler auto-vectorise
//! the plain loops with 256-bit registers) and picks that copy when the CPU has AVX2.
//! [`force_portable`] turns the AVX2 copies off, so that tests can check both builds.

use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// 0: not yet decided, 1: portable, 2: AVX2.
static MODE: AtomicU8 = AtomicU8::new(0);
/// Set by [`force_portable`].
static FORCED_PORTABLE: AtomicU8 = AtomicU8::new(0);

/// Whether the AVX2 copies of the kernels may run: the CPU supports AVX2 and
/// [`force_portable`] is off.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline]
fn avx2_enabled() -> bool {
    match MODE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let on = detect_avx2() && FORCED_PORTABLE.load(Ordering::Relaxed) == 0;
            MODE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn detect_avx2() -> bool {
    std::is_x86_feature_detected!("avx2")
}

#[cfg(not(target_arch = "x86_64"))]
#[allow(dead_code)]
fn detect_avx2() -> bool {
    false
}

/// Makes every kernel use its portable (baseline-ISA) copy (`true`), or the fastest one
/// the CPU supports (`false`, the default). Both give identical bytes; this exists so that
/// the conformance tests can check both builds on one machine.
#[doc(hidden)]
pub fn force_portable(on: bool) {
    FORCED_PORTABLE.store(on as u8, Ordering::Relaxed);
    MODE.store(0, Ordering::Relaxed);
}

/// `multiversion! { fn name(args) -> ret = body; }` defines `name(args)`, which calls
/// `body(v8, args)` with the best [`V8`] the CPU supports. `body` must be
/// `#[inline(always)]`, generic over `V8`, and so must its hot callees: on x86-64 it is
/// compiled a second time inside a function with AVX2 enabled.
macro_rules! multiversion {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? = $body:path;) => {
        $(#[$attr])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                if let Some(v8) = $crate::simd::Avx2::get() {
                    // Unsafe to call: the CPU must support AVX2 (the caller below checks).
                    #[target_feature(enable = "avx2")]
                    unsafe fn avx2(v8: $crate::simd::Avx2, $($arg: $ty),*) $(-> $ret)? {
                        $body(v8, $($arg),*)
                    }
                    // SAFETY: `avx2` only requires a CPU with AVX2, which the existence of
                    // an `Avx2` value proves.
                    return unsafe { avx2(v8, $($arg),*) };
                }
                $body($crate::simd::Sse2, $($arg),*)
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                $body($crate::simd::Scalar, $($arg),*)
            }
        }
    };
}
pub(crate) use multiversion;

/// Eight f32 lanes and the lane-wise operations the kernels need. Comparisons return masks
/// (all bits set in the lanes where they hold) of the same type, with Rust's (IEEE) results
/// for NaN.
pub(crate) trait V8: Copy {
    /// Eight f32 lanes.
    type F: Copy;
    /// `[v; 8]`.
    fn splat(self, v: f32) -> Self::F;
    /// Loads eight values.
    fn load(self, a: &[f32; 8]) -> Self::F;
    /// The eight values.
    fn to_array(self, v: Self::F) -> [f32; 8];
    /// `a + b`.
    fn add(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a - b`.
    fn sub(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a * b`.
    fn mul(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a / b`.
    fn div(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a.abs()` (clears the sign bit).
    fn abs(self, a: Self::F) -> Self::F;
    /// `-a` (flips the sign bit).
    fn neg(self, a: Self::F) -> Self::F;
    /// `if a > b { a } else { b }` per lane (x86's `maxps`: `b` on ties and NaNs).
    fn max(self, a: Self::F, b: Self::F) -> Self::F;
    /// `if a < b { a } else { b }` per lane (x86's `minps`: `b` on ties and NaNs).
    fn min(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a < b`.
    fn lt(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a <= b`.
    fn le(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a != b`.
    fn ne(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a == b`.
    fn eq(self, a: Self::F, b: Self::F) -> Self::F;
    /// Bitwise `a & b` (of masks).
    fn and(self, a: Self::F, b: Self::F) -> Self::F;
    /// Bitwise `a | b` (of masks).
    fn or(self, a: Self::F, b: Self::F) -> Self::F;
    /// `if m { a } else { b }` per lane, `m` a mask.
    fn select(self, m: Self::F, a: Self::F, b: Self::F) -> Self::F;
    /// Whether any lane of the mask `m` is set.
    fn any(self, m: Self::F) -> bool;
    /// The lanes of the mask `m` as the bits 0..8 of an integer (lane `i` in bit `i`).
    fn mask_bits(self, m: Self::F) -> u32;
    /// C's `(int)v` per lane as x86-64 computes it (`cvttps2dq`): truncation toward zero,
    /// and `i32::MIN` for NaN and out-of-range values.
    fn trunc_i32(self, v: Self::F) -> [i32; 8];
    /// ggml's fp16 bits of each lane (`crate::formats::f16::f32_to_f16_bits`, whose
    /// branch-free integer steps this repeats lane-wise).
    fn f16_bits(self, v: Self::F) -> [u16; 8];
    /// `nearest_int(v).clamp(lo, hi) as f32` per lane: ggml's 1.5·2²³ rounding trick
    /// reproduced on the bits (exact for every input, NaN and out-of-range included),
    /// then the clamp, done on the exactly converted integer.
    fn level(self, v: Self::F, lo: f32, hi: f32) -> Self::F;
    /// The smallest lane of `v`, whose lanes must not be NaN (which of two equal zeros is
    /// unspecified).
    fn hmin(self, v: Self::F) -> f32;
    /// Whether `a*b + c` is computed with one rounding, as a build that contracts it into a
    /// fused multiply-add does (llama.cpp's arm64 and clang builds). Only the emulation of
    /// such a build ([`crate::fused`]) sets it; every real kernel rounds twice, as x86-64
    /// builds of the reference do.
    const FUSED: bool = false;
    /// `acc + a*b` (one rounding when [`V8::FUSED`]).
    #[inline(always)]
    fn acc_mul(self, acc: Self::F, a: Self::F, b: Self::F) -> Self::F {
        self.add(acc, self.mul(a, b))
    }
    /// `a*b + c` (one rounding when [`V8::FUSED`]).
    #[inline(always)]
    fn mul_add(self, a: Self::F, b: Self::F, c: Self::F) -> Self::F {
        self.add(self.mul(a, b), c)
    }
    /// `a*b - c*d` (when [`V8::FUSED`]: `fma(a, b, -(c*d))`, the contraction compilers make).
    #[inline(always)]
    fn mul_sub_mul(self, a: Self::F, b: Self::F, c: Self::F, d: Self::F) -> Self::F {
        self.sub(self.mul(a, b), self.mul(c, d))
    }
    /// Eight u32 lanes.
    type U: Copy;
    /// Eight u16 values, zero-extended.
    fn load_u16(self, a: &[u16; 8]) -> Self::U;
    /// `table[(codes >> shift) & 7]` per lane: a lookup in an eight-entry table.
    fn lookup8(self, table: Self::F, codes: Self::U, shift: u32) -> Self::F;
}

/// Scalar `a*b + c` in kernel `S`'s arithmetic: one rounding when `S` emulates a build with
/// fused multiply-adds ([`V8::FUSED`]), two otherwise.
#[inline(always)]
pub(crate) fn madd<S: V8>(a: f32, b: f32, c: f32) -> f32 {
    if S::FUSED {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// `t + 1.5·2²³`, the addend of ggml's `nearest_int`.
#[cfg(target_arch = "x86_64")]
const MAGIC: f32 = 12_582_912.0;

/// Plain arrays: the reference implementation of [`V8`] (the kernels' choice on other
/// architectures; on x86-64 only the tests use it).
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scalar;

impl V8 for Scalar {
    type F = [f32; 8];
    type U = [u32; 8];
    #[inline(always)]
    fn hmin(self, v: [f32; 8]) -> f32 {
        v.into_iter().fold(f32::INFINITY, f32::min)
    }
    #[inline(always)]
    fn load_u16(self, a: &[u16; 8]) -> [u32; 8] {
        a.map(u32::from)
    }
    #[inline(always)]
    fn lookup8(self, table: [f32; 8], codes: [u32; 8], shift: u32) -> [f32; 8] {
        codes.map(|c| table[((c >> shift) & 7) as usize])
    }
    #[inline(always)]
    fn splat(self, v: f32) -> [f32; 8] {
        [v; 8]
    }
    #[inline(always)]
    fn load(self, a: &[f32; 8]) -> [f32; 8] {
        *a
    }
    #[inline(always)]
    fn to_array(self, v: [f32; 8]) -> [f32; 8] {
        v
    }
    #[inline(always)]
    fn add(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| a[i] + b[i])
    }
    #[inline(always)]
    fn sub(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| a[i] - b[i])
    }
    #[inline(always)]
    fn mul(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| a[i] * b[i])
    }
    #[inline(always)]
    fn div(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| a[i] / b[i])
    }
    #[inline(always)]
    fn abs(self, a: [f32; 8]) -> [f32; 8] {
        a.map(f32::abs)
    }
    #[inline(always)]
    fn neg(self, a: [f32; 8]) -> [f32; 8] {
        a.map(|v| -v)
    }
    #[inline(always)]
    fn max(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| if a[i] > b[i] { a[i] } else { b[i] })
    }
    #[inline(always)]
    fn min(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| if a[i] < b[i] { a[i] } else { b[i] })
    }
    #[inline(always)]
    fn lt(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| mask(a[i] < b[i]))
    }
    #[inline(always)]
    fn le(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| mask(a[i] <= b[i]))
    }
    #[inline(always)]
    fn ne(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| mask(a[i] != b[i]))
    }
    #[inline(always)]
    fn eq(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| mask(a[i] == b[i]))
    }
    #[inline(always)]
    fn and(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| f32::from_bits(a[i].to_bits() & b[i].to_bits()))
    }
    #[inline(always)]
    fn or(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| f32::from_bits(a[i].to_bits() | b[i].to_bits()))
    }
    #[inline(always)]
    fn select(self, m: [f32; 8], a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        std::array::from_fn(|i| if m[i].to_bits() != 0 { a[i] } else { b[i] })
    }
    #[inline(always)]
    fn any(self, m: [f32; 8]) -> bool {
        m.iter().any(|v| v.to_bits() != 0)
    }
    #[inline(always)]
    fn mask_bits(self, m: [f32; 8]) -> u32 {
        m.iter()
            .enumerate()
            .fold(0, |b, (i, v)| b | (((v.to_bits() != 0) as u32) << i))
    }
    #[inline(always)]
    fn trunc_i32(self, v: [f32; 8]) -> [i32; 8] {
        v.map(crate::common::c_trunc_i32)
    }
    #[inline(always)]
    fn f16_bits(self, v: [f32; 8]) -> [u16; 8] {
        v.map(crate::formats::f16::f32_to_f16_bits)
    }
    #[inline(always)]
    fn level(self, v: [f32; 8], lo: f32, hi: f32) -> [f32; 8] {
        v.map(|v| {
            let n = crate::common::nearest_int(v) as f32;
            if n < lo {
                lo
            } else if n > hi {
                hi
            } else {
                n
            }
        })
    }
}

/// A mask lane.
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
#[inline(always)]
fn mask(b: bool) -> f32 {
    f32::from_bits(if b { u32::MAX } else { 0 })
}

/// Two SSE2 registers. SSE and SSE2 are part of the x86-64 baseline: every x86-64 CPU has
/// them, which is what makes calling their intrinsics sound.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sse2;

#[cfg(target_arch = "x86_64")]
macro_rules! sse2_binary {
    ($($name:ident => $op:ident),* $(,)?) => {
        $(
            #[inline(always)]
            fn $name(self, a: [__m128; 2], b: [__m128; 2]) -> [__m128; 2] {
                // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`).
                unsafe { [$op(a[0], b[0]), $op(a[1], b[1])] }
            }
        )*
    };
}

#[cfg(target_arch = "x86_64")]
impl V8 for Sse2 {
    type F = [__m128; 2];
    type U = [u32; 8];
    #[inline(always)]
    fn hmin(self, v: [__m128; 2]) -> f32 {
        self.to_array(v).into_iter().fold(f32::INFINITY, f32::min)
    }
    #[inline(always)]
    fn load_u16(self, a: &[u16; 8]) -> [u32; 8] {
        a.map(u32::from)
    }
    #[inline(always)]
    fn lookup8(self, table: [__m128; 2], codes: [u32; 8], shift: u32) -> [__m128; 2] {
        let t = self.to_array(table);
        self.load(&codes.map(|c| t[((c >> shift) & 7) as usize]))
    }
    #[inline(always)]
    fn splat(self, v: f32) -> [__m128; 2] {
        // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`).
        unsafe { [_mm_set1_ps(v); 2] }
    }
    #[inline(always)]
    fn load(self, a: &[f32; 8]) -> [__m128; 2] {
        // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`); the unaligned loads
        // read `a[0..4]` and `a[4..8]`.
        unsafe { [_mm_loadu_ps(a.as_ptr()), _mm_loadu_ps(a.as_ptr().add(4))] }
    }
    #[inline(always)]
    fn to_array(self, v: [__m128; 2]) -> [f32; 8] {
        let mut out = [0f32; 8];
        // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`); the unaligned stores
        // write `out[0..4]` and `out[4..8]`.
        unsafe {
            _mm_storeu_ps(out.as_mut_ptr(), v[0]);
            _mm_storeu_ps(out.as_mut_ptr().add(4), v[1]);
        }
        out
    }
    sse2_binary! {
        add => _mm_add_ps,
        sub => _mm_sub_ps,
        mul => _mm_mul_ps,
        div => _mm_div_ps,
        max => _mm_max_ps,
        min => _mm_min_ps,
        lt => _mm_cmplt_ps,
        le => _mm_cmple_ps,
        ne => _mm_cmpneq_ps,
        eq => _mm_cmpeq_ps,
        and => _mm_and_ps,
        or => _mm_or_ps,
    }
    #[inline(always)]
    fn abs(self, a: [__m128; 2]) -> [__m128; 2] {
        // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`).
        unsafe {
            let m = _mm_castsi128_ps(_mm_set1_epi32(0x7fff_ffff));
            [_mm_and_ps(a[0], m), _mm_and_ps(a[1], m)]
        }
    }
    #[inline(always)]
    fn neg(self, a: [__m128; 2]) -> [__m128; 2] {
        // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`).
        unsafe {
            let m = _mm_set1_ps(-0.0);
            [_mm_xor_ps(a[0], m), _mm_xor_ps(a[1], m)]
        }
    }
    #[inline(always)]
    fn select(self, m: [__m128; 2], a: [__m128; 2], b: [__m128; 2]) -> [__m128; 2] {
        #[inline(always)]
        fn sel(m: __m128, a: __m128, b: __m128) -> __m128 {
            // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`).
            unsafe { _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b)) }
        }
        [sel(m[0], a[0], b[0]), sel(m[1], a[1], b[1])]
    }
    #[inline(always)]
    fn any(self, m: [__m128; 2]) -> bool {
        // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`).
        unsafe { _mm_movemask_ps(_mm_or_ps(m[0], m[1])) != 0 }
    }
    #[inline(always)]
    fn mask_bits(self, m: [__m128; 2]) -> u32 {
        // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`).
        unsafe { (_mm_movemask_ps(m[0]) | (_mm_movemask_ps(m[1]) << 4)) as u32 }
    }
    #[inline(always)]
    fn trunc_i32(self, v: [__m128; 2]) -> [i32; 8] {
        let mut out = [0i32; 8];
        // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`); the unaligned stores
        // write `out[0..4]` and `out[4..8]`.
        unsafe {
            _mm_storeu_si128(out.as_mut_ptr().cast(), _mm_cvttps_epi32(v[0]));
            _mm_storeu_si128(out.as_mut_ptr().add(4).cast(), _mm_cvttps_epi32(v[1]));
        }
        out
    }
    #[inline(always)]
    fn f16_bits(self, v: [__m128; 2]) -> [u16; 8] {
        #[inline(always)]
        fn one(v: __m128) -> __m128i {
            // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`).
            unsafe {
                let c = _mm_set1_epi32;
                let u = _mm_castps_si128(v);
                let a = _mm_and_si128(u, c(0x7fff_ffff));
                let sign = _mm_and_si128(_mm_srli_epi32::<16>(u), c(0x8000));
                let round = _mm_and_si128(_mm_srli_epi32::<13>(a), c(1));
                let biased = _mm_add_epi32(_mm_sub_epi32(a, c(0x3800_0000)), c(0x0fff));
                let normal = _mm_srli_epi32::<13>(_mm_add_epi32(biased, round));
                let half = _mm_add_ps(_mm_castsi128_ps(a), _mm_set1_ps(0.5));
                let sub = _mm_sub_epi32(_mm_castps_si128(half), c(0x3f00_0000));
                // `a` is below 2³¹, so the signed comparisons are the unsigned ones.
                let sel = |m: __m128i, t: __m128i, f: __m128i| {
                    _mm_or_si128(_mm_and_si128(m, t), _mm_andnot_si128(m, f))
                };
                let mag = sel(_mm_cmpgt_epi32(a, c(0x387f_ffff)), normal, sub);
                let mag = sel(_mm_cmpgt_epi32(a, c(0x477f_efff)), c(0x7c00), mag);
                let mag = sel(_mm_cmpgt_epi32(a, c(0x7f80_0000)), c(0x7e00), mag);
                // Biased by -0x8000 so that the signed 16-bit pack is exact.
                _mm_sub_epi32(_mm_or_si128(sign, mag), c(0x8000))
            }
        }
        let mut out = [0u16; 8];
        // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`); the unaligned store
        // writes the 8 u16 of `out`.
        unsafe {
            let h = _mm_packs_epi32(one(v[0]), one(v[1]));
            let h = _mm_xor_si128(h, _mm_set1_epi16(i16::MIN));
            _mm_storeu_si128(out.as_mut_ptr().cast(), h);
        }
        out
    }
    #[inline(always)]
    fn level(self, v: [__m128; 2], lo: f32, hi: f32) -> [__m128; 2] {
        #[inline(always)]
        fn one(v: __m128, lo: f32, hi: f32) -> __m128 {
            // SAFETY: SSE2 is part of the x86-64 baseline (see `Sse2`).
            unsafe {
                let t = _mm_castps_si128(_mm_add_ps(v, _mm_set1_ps(MAGIC)));
                let n = _mm_sub_epi32(
                    _mm_and_si128(t, _mm_set1_epi32(0x007f_ffff)),
                    _mm_set1_epi32(0x0040_0000),
                );
                // `n` is an integer of magnitude at most 2²², so the conversion is exact
                // and clamping the float is clamping the integer.
                let f = _mm_cvtepi32_ps(n);
                _mm_min_ps(_mm_max_ps(f, _mm_set1_ps(lo)), _mm_set1_ps(hi))
            }
        }
        [one(v[0], lo, hi), one(v[1], lo, hi)]
    }
}

/// One AVX2 register. A value of this type exists only once the CPU has been found to
/// support AVX2 ([`Avx2::get`]), which is what makes calling the AVX intrinsics sound.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// The token, when the CPU supports AVX2 and [`force_portable`] is off.
    #[inline]
    pub(crate) fn get() -> Option<Avx2> {
        avx2_enabled().then_some(Avx2(()))
    }
}

#[cfg(target_arch = "x86_64")]
macro_rules! avx_binary {
    ($($name:ident => $op:ident),* $(,)?) => {
        $(
            #[inline(always)]
            fn $name(self, a: __m256, b: __m256) -> __m256 {
                // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
                unsafe { $op(a, b) }
            }
        )*
    };
}

#[cfg(target_arch = "x86_64")]
impl V8 for Avx2 {
    type F = __m256;
    type U = __m256i;
    #[inline(always)]
    fn hmin(self, v: __m256) -> f32 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe {
            let a = _mm256_min_ps(v, _mm256_permute2f128_ps::<1>(v, v));
            let b = _mm256_min_ps(a, _mm256_shuffle_ps::<0b01_00_11_10>(a, a));
            let c = _mm256_min_ps(b, _mm256_shuffle_ps::<0b10_11_00_01>(b, b));
            _mm256_cvtss_f32(c)
        }
    }
    #[inline(always)]
    fn load_u16(self, a: &[u16; 8]) -> __m256i {
        // SAFETY: AVX2 is supported (see `Avx2`), and the unaligned load reads exactly the
        // 8 u16 of `a`.
        unsafe { _mm256_cvtepu16_epi32(_mm_loadu_si128(a.as_ptr().cast())) }
    }
    #[inline(always)]
    fn lookup8(self, table: __m256, codes: __m256i, shift: u32) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`). `vpermps` reads
        // only the low 3 bits of each index, which is the `& 7`.
        unsafe {
            let idx = _mm256_srl_epi32(codes, _mm_cvtsi32_si128(shift as i32));
            _mm256_permutevar8x32_ps(table, idx)
        }
    }
    #[inline(always)]
    fn splat(self, v: f32) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_set1_ps(v) }
    }
    #[inline(always)]
    fn load(self, a: &[f32; 8]) -> __m256 {
        // SAFETY: AVX2 is supported (see `Avx2`), and the unaligned load reads exactly the
        // 8 f32 of `a`.
        unsafe { _mm256_loadu_ps(a.as_ptr()) }
    }
    #[inline(always)]
    fn to_array(self, v: __m256) -> [f32; 8] {
        let mut out = [0f32; 8];
        // SAFETY: AVX2 is supported (see `Avx2`), and the unaligned store writes exactly
        // the 8 f32 of `out`.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), v) };
        out
    }
    avx_binary! {
        add => _mm256_add_ps,
        sub => _mm256_sub_ps,
        mul => _mm256_mul_ps,
        div => _mm256_div_ps,
        max => _mm256_max_ps,
        min => _mm256_min_ps,
        and => _mm256_and_ps,
        or => _mm256_or_ps,
    }
    #[inline(always)]
    fn lt(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(a, b) }
    }
    #[inline(always)]
    fn le(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_cmp_ps::<_CMP_LE_OQ>(a, b) }
    }
    #[inline(always)]
    fn ne(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_cmp_ps::<_CMP_NEQ_UQ>(a, b) }
    }
    #[inline(always)]
    fn eq(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b) }
    }
    #[inline(always)]
    fn abs(self, a: __m256) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff))) }
    }
    #[inline(always)]
    fn neg(self, a: __m256) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_xor_ps(a, _mm256_set1_ps(-0.0)) }
    }
    #[inline(always)]
    fn select(self, m: __m256, a: __m256, b: __m256) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_blendv_ps(b, a, m) }
    }
    #[inline(always)]
    fn any(self, m: __m256) -> bool {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_movemask_ps(m) != 0 }
    }
    #[inline(always)]
    fn mask_bits(self, m: __m256) -> u32 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe { _mm256_movemask_ps(m) as u32 }
    }
    #[inline(always)]
    fn trunc_i32(self, v: __m256) -> [i32; 8] {
        let mut out = [0i32; 8];
        // SAFETY: AVX2 is supported (see `Avx2`), and the unaligned store writes exactly
        // the 8 i32 of `out`.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), _mm256_cvttps_epi32(v)) };
        out
    }
    #[inline(always)]
    fn f16_bits(self, v: __m256) -> [u16; 8] {
        let mut out = [0u16; 8];
        // SAFETY: AVX2 is supported (see `Avx2`), and the unaligned store writes exactly
        // the 8 u16 of `out`.
        unsafe {
            let c = _mm256_set1_epi32;
            let u = _mm256_castps_si256(v);
            let a = _mm256_and_si256(u, c(0x7fff_ffff));
            let sign = _mm256_and_si256(_mm256_srli_epi32::<16>(u), c(0x8000));
            let round = _mm256_and_si256(_mm256_srli_epi32::<13>(a), c(1));
            let biased = _mm256_add_epi32(_mm256_sub_epi32(a, c(0x3800_0000)), c(0x0fff));
            let normal = _mm256_srli_epi32::<13>(_mm256_add_epi32(biased, round));
            let half = _mm256_add_ps(_mm256_castsi256_ps(a), _mm256_set1_ps(0.5));
            let sub = _mm256_sub_epi32(_mm256_castps_si256(half), c(0x3f00_0000));
            // `a` is below 2³¹, so the signed comparisons are the unsigned ones.
            let mag = _mm256_blendv_epi8(sub, normal, _mm256_cmpgt_epi32(a, c(0x387f_ffff)));
            let mag = _mm256_blendv_epi8(mag, c(0x7c00), _mm256_cmpgt_epi32(a, c(0x477f_efff)));
            let mag = _mm256_blendv_epi8(mag, c(0x7e00), _mm256_cmpgt_epi32(a, c(0x7f80_0000)));
            // At most 0xfe00, so the unsigned saturating pack is exact; it packs within
            // each 128-bit half, and the permutation puts the halves' results together.
            let h = _mm256_packus_epi32(_mm256_or_si256(sign, mag), _mm256_setzero_si256());
            let h = _mm256_permute4x64_epi64::<0b1000>(h);
            _mm_storeu_si128(out.as_mut_ptr().cast(), _mm256_castsi256_si128(h));
        }
        out
    }
    #[inline(always)]
    fn level(self, v: __m256, lo: f32, hi: f32) -> __m256 {
        // SAFETY: `self` proves that the CPU supports AVX2 (see `Avx2`).
        unsafe {
            let t = _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(MAGIC)));
            let n = _mm256_sub_epi32(
                _mm256_and_si256(t, _mm256_set1_epi32(0x007f_ffff)),
                _mm256_set1_epi32(0x0040_0000),
            );
            // Exact conversion of an integer of magnitude at most 2²², as in `Sse2`.
            let f = _mm256_cvtepi32_ps(n);
            _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(lo)), _mm256_set1_ps(hi))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values around every boundary of the conversions: zeros, halves, the 2²² and 2³¹
    /// limits, infinities, NaNs, subnormals.
    fn edge_values() -> Vec<f32> {
        let mut v = vec![0.0, -0.0, 0.5, -0.5, 1.5, -2.5, f32::NAN, -f32::NAN];
        v.extend([
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
        ]);
        for c in [
            4_194_304.0f32,
            2_147_483_648.0,
            12_582_912.0,
            1.0,
            15.5,
            127.5,
        ] {
            for k in -3i32..=3 {
                let b = (c.to_bits() as i32 + k) as u32;
                v.extend([f32::from_bits(b), -f32::from_bits(b)]);
            }
        }
        // And bit patterns from all over the range.
        let mut r = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            v.push(f32::from_bits((r >> 32) as u32));
        }
        while v.len() % 8 != 0 {
            v.push(3.25);
        }
        v
    }

    fn check<S: V8>(s: S) {
        for chunk in edge_values().chunks_exact(8) {
            let x = s.load(chunk.try_into().unwrap());
            let t = s.trunc_i32(x);
            let l = s.to_array(s.level(x, -4.0, 3.0));
            let h = s.f16_bits(x);
            let rot: [f32; 8] = std::array::from_fn(|i| chunk[(i + 3) % 8]);
            let (mx, mn) = (
                s.to_array(s.max(x, s.load(&rot))),
                s.to_array(s.min(x, s.load(&rot))),
            );
            for i in 0..8 {
                let (a, b) = (chunk[i], rot[i]);
                assert_eq!(mx[i].to_bits(), if a > b { a } else { b }.to_bits(), "max");
                assert_eq!(mn[i].to_bits(), if a < b { a } else { b }.to_bits(), "min");
            }
            for (i, &v) in chunk.iter().enumerate() {
                assert_eq!(h[i], crate::formats::f16::f32_to_f16_bits(v), "f16 {v:e}");
                assert_eq!(t[i], crate::common::c_trunc_i32(v), "trunc {v:e}");
                let want = crate::common::nearest_int(v).clamp(-4, 3) as f32;
                assert_eq!(l[i], want, "level {v:e}");
            }
        }
        for chunk in edge_values().chunks_exact(8) {
            let v: [f32; 8] =
                std::array::from_fn(|i| if chunk[i].is_nan() { 1.0 } else { chunk[i] });
            let want = v.iter().fold(f32::INFINITY, |m, &x| m.min(x));
            assert_eq!(s.hmin(s.load(&v)), want, "hmin {v:?}");
        }
        let table = [1.5f32, -2.0, 3.25, f32::NAN, 0.0, -0.0, 7.0, 1e30];
        let codes: [u16; 8] = [0, 0xffff, 0x1234, 0x8001, 7, 0x00f0, 0x4321, 0xabcd];
        for shift in 0..14 {
            let got = s.to_array(s.lookup8(s.load(&table), s.load_u16(&codes), shift));
            for (g, &c) in got.iter().zip(&codes) {
                let want = table[((c as u32 >> shift) & 7) as usize];
                assert_eq!(g.to_bits(), want.to_bits(), "lookup8 {c:#x} >> {shift}");
            }
        }
    }

    #[test]
    fn conversions_match_c() {
        check(Scalar);
        #[cfg(target_arch = "x86_64")]
        {
            check(Sse2);
            if let Some(s) = Avx2::get() {
                check(s);
            }
        }
    }
}
