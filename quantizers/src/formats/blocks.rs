//! The on-disk block of every block-quantized type, as ggml declares it (`ggml-common.h`),
//! with its size checked at compile time.
//!
//! The kernels read and write blocks as byte slices (which keeps them free of alignment
//! requirements and lets them vectorise); these structs are the layout they follow. Each
//! format takes its `BLOCK_BYTES` and field offsets from here, and the type table checks
//! `BLOCK_BYTES` against its row, so a layout, a kernel and a row cannot disagree.
//! `f16` fields are little-endian IEEE binary16.

use half::f16;
use std::mem::size_of;

macro_rules! blocks {
    ($(
        $(#[$doc:meta])*
        $name:ident = $bytes:literal { $( $field:ident: $ty:ty ),* $(,)? }
    )*) => {$(
        $(#[$doc])*
        #[repr(C)]
        pub(crate) struct $name {
            $( pub(crate) $field: $ty, )*
        }

        const _: () = assert!(size_of::<$name>() == $bytes);
    )*};
}

blocks! {
    /// q4_0: 32 elements.
    BlockQ4_0 = 18 { d: f16, qs: [u8; 16] }
    /// q4_1: 32 elements.
    BlockQ4_1 = 20 { d: f16, m: f16, qs: [u8; 16] }
    /// q5_0: 32 elements (`qh` is a little-endian u32 stored as bytes).
    BlockQ5_0 = 22 { d: f16, qh: [u8; 4], qs: [u8; 16] }
    /// q5_1: 32 elements.
    BlockQ5_1 = 24 { d: f16, m: f16, qh: [u8; 4], qs: [u8; 16] }
    /// q8_0: 32 elements.
    BlockQ8_0 = 34 { d: f16, qs: [i8; 32] }
    /// q8_1: 32 elements; `s` is `d` times the sum of the quants.
    BlockQ8_1 = 36 { d: f16, s: f16, qs: [i8; 32] }
    /// q2_K: 256 elements.
    BlockQ2K = 84 { scales: [u8; 16], qs: [u8; 64], d: f16, dmin: f16 }
    /// q3_K: 256 elements.
    BlockQ3K = 110 { hmask: [u8; 32], qs: [u8; 64], scales: [u8; 12], d: f16 }
    /// q4_K: 256 elements.
    BlockQ4K = 144 { d: f16, dmin: f16, scales: [u8; 12], qs: [u8; 128] }
    /// q5_K: 256 elements.
    BlockQ5K = 176 { d: f16, dmin: f16, scales: [u8; 12], qh: [u8; 32], qs: [u8; 128] }
    /// q6_K: 256 elements.
    BlockQ6K = 210 { ql: [u8; 128], qh: [u8; 64], scales: [i8; 16], d: f16 }
    /// q8_K: 256 elements.
    BlockQ8K = 292 { d: f32, qs: [i8; 256], bsums: [i16; 16] }
    /// iq2_xxs: 256 elements.
    BlockIq2Xxs = 66 { d: f16, qs: [u16; 32] }
    /// iq2_xs: 256 elements.
    BlockIq2Xs = 74 { d: f16, qs: [u16; 32], scales: [u8; 8] }
    /// iq2_s: 256 elements (ggml's `qs[64]` is `qs` then `signs`).
    BlockIq2S = 82 { d: f16, qs: [u8; 32], signs: [u8; 32], qh: [u8; 8], scales: [u8; 8] }
    /// iq3_xxs: 256 elements (ggml's `qs[96]` is `qs` then `scales_and_signs`).
    BlockIq3Xxs = 98 { d: f16, qs: [u8; 64], scales_and_signs: [u8; 32] }
    /// iq3_s: 256 elements.
    BlockIq3S = 110 { d: f16, qs: [u8; 64], qh: [u8; 8], signs: [u8; 32], scales: [u8; 4] }
    /// iq1_s: 256 elements.
    BlockIq1S = 50 { d: f16, qs: [u8; 32], qh: [u16; 8] }
    /// iq1_m: 256 elements (the scale is spread over the top bits of `scales`).
    BlockIq1M = 56 { qs: [u8; 32], qh: [u8; 16], scales: [u8; 8] }
    /// iq4_nl: 32 elements.
    BlockIq4Nl = 18 { d: f16, qs: [u8; 16] }
    /// iq4_xs: 256 elements.
    BlockIq4Xs = 136 { d: f16, scales_h: u16, scales_l: [u8; 4], qs: [u8; 128] }
    /// tq1_0: 256 elements.
    BlockTq1_0 = 54 { qs: [u8; 48], qh: [u8; 4], d: f16 }
    /// tq2_0: 256 elements.
    BlockTq2_0 = 66 { qs: [u8; 64], d: f16 }
    /// mxfp4: 32 elements.
    BlockMxfp4 = 17 { e: u8, qs: [u8; 16] }
    /// nvfp4: 64 elements, one UE4M3 scale per 16.
    BlockNvfp4 = 36 { d: [u8; 4], qs: [u8; 32] }
    /// q1_0: 128 elements.
    BlockQ1_0 = 18 { d: f16, qs: [u8; 16] }
    /// q2_0: 64 elements.
    BlockQ2_0 = 18 { d: f16, qs: [u8; 16] }
}
