//! `torch.exp` of a float32, as torch 2.15's x86-64 CPU build computes it.
//!
//! torch hands a contiguous float32 tensor's `exp` to MKL's vector exp (`vsExp`,
//! high-accuracy mode). MKL picks its code path from the CPU on its own (`ATEN_CPU_CAPABILITY`
//! changes nothing; `MKL_CBWR` does), and the paths disagree in the last bit for about 1% of
//! inputs (the AVX2 path for 4%). Two are matched ([`MklPath`]): the AVX-512 path, which torch's
//! default dispatch takes on an AVX-512 x86-64 CPU and with which the project's reference
//! outputs were made, and MKL's generic path (what the reference computes with
//! `MKL_CBWR=COMPATIBLE`, on any x86-64 CPU). [`torch_exp_f32`] follows the path
//! `GGUFKIT_TORCH_MKL` names (`avx512`, the default, or `compatible`). The AVX2 path is not
//! matched. Each result depends on its input alone: not on the tensor's size, the
//! element's position (no separate tail path), the stride or the thread count.
//!
//! MKL's result is the correctly rounded exp, or the float on the exact value's other side
//! (concentrated just below 0, where the results sit just below 1). MKL's algorithm is not
//! published, so the deviations are data: the f64 exp is rounded to f32 and stepped to the
//! other neighbour for the inputs listed in `exp_<path>.bin`, measured by
//! `conformance/make_torch_exp_table.py` (AVX-512: all 2^32 inputs; generic: every input of
//! magnitude in [2^-27, 128), outside which exp is 1, 0 or infinite). Inputs whose exp lies
//! within 2^-20 of a spacing of a rounding midpoint, where two libms' f64 exp might round to
//! different f32s, carry their result explicitly, so the outcome does not depend on the
//! platform's libm.

use std::sync::OnceLock;

use super::deviations::{near_midpoint, round_and_other, Deviations};

/// The measured deviations of each path (format in `conformance/make_torch_exp_table.py`).
static TABLE_COMPATIBLE: &[u8] = include_bytes!("exp_compatible.bin");
static TABLE_AVX512: &[u8] = include_bytes!("exp_avx512.bin");

/// One of MKL's code paths for float32 exp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MklPath {
    /// The AVX-512 path torch's default MKL dispatch takes on an AVX-512 x86-64 CPU: the
    /// default.
    Avx512,
    /// The generic x86-64 path, which the reference takes with `MKL_CBWR=COMPATIBLE`.
    Compatible,
}

impl MklPath {
    /// The path `GGUFKIT_TORCH_MKL` selects, read once: `compatible` (any case) is
    /// [`MklPath::Compatible`]; `avx512`, anything else, or nothing is [`MklPath::Avx512`].
    pub fn selected() -> MklPath {
        static SELECTED: OnceLock<MklPath> = OnceLock::new();
        *SELECTED.get_or_init(|| MklPath::from_setting(std::env::var("GGUFKIT_TORCH_MKL").ok()))
    }

    /// The path a `GGUFKIT_TORCH_MKL` value (`None` when unset) names; see [`MklPath::selected`].
    pub fn from_setting(value: Option<String>) -> MklPath {
        match value {
            Some(v) if v.eq_ignore_ascii_case("compatible") => MklPath::Compatible,
            _ => MklPath::Avx512,
        }
    }
}

/// The path's table, decoded on first use (a table is compiled in, not input: its shape is
/// checked by the unit tests).
fn deviations(path: MklPath) -> &'static Deviations {
    static COMPATIBLE: OnceLock<Deviations> = OnceLock::new();
    static AVX512: OnceLock<Deviations> = OnceLock::new();
    match path {
        MklPath::Compatible => {
            COMPATIBLE.get_or_init(|| Deviations::decode(TABLE_COMPATIBLE, b"TEXP"))
        }
        MklPath::Avx512 => AVX512.get_or_init(|| Deviations::decode(TABLE_AVX512, b"TEXP")),
    }
}

/// `torch.exp(x)` for a float32 `x` on the path [`MklPath::selected`] names.
pub fn torch_exp_f32(x: f32) -> f32 {
    torch_exp_f32_on(MklPath::selected(), x)
}

/// `torch.exp(x)` for a float32 `x` on MKL's `path` (see the module doc).
pub fn torch_exp_f32_on(path: MklPath, x: f32) -> f32 {
    if x.is_nan() {
        // MKL quiets a NaN and keeps its payload.
        return f32::from_bits(x.to_bits() | 0x0040_0000);
    }
    let e = (x as f64).exp();
    let (r, other) = round_and_other(e);
    let Some(other) = other else {
        return r;
    };
    let dev = deviations(path);
    let bits = x.to_bits();
    if near_midpoint(e, r, other) {
        if let Some(v) = dev.explicit(bits) {
            return v;
        }
    }
    if dev.deviates(bits) {
        other
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_decode_whole_and_sorted() {
        for path in [MklPath::Compatible, MklPath::Avx512] {
            let d = deviations(path);
            assert!(d.runs() > 100_000, "{path:?}");
            assert!(d.is_well_formed(), "{path:?}");
        }
    }

    #[test]
    fn the_default_path_is_avx512() {
        assert_eq!(MklPath::from_setting(None), MklPath::Avx512);
        assert_eq!(
            MklPath::from_setting(Some("avx512".into())),
            MklPath::Avx512
        );
        assert_eq!(
            MklPath::from_setting(Some("COMPATIBLE".into())),
            MklPath::Compatible
        );
    }

    #[test]
    fn special_values() {
        for path in [MklPath::Compatible, MklPath::Avx512] {
            let e = |x: f32| torch_exp_f32_on(path, x);
            assert_eq!(e(0.0), 1.0);
            assert_eq!(e(-0.0), 1.0);
            assert_eq!(e(f32::INFINITY), f32::INFINITY);
            assert_eq!(e(f32::NEG_INFINITY), 0.0);
            assert_eq!(e(f32::from_bits(0x7f80_0001)).to_bits(), 0x7fc0_0001);
            assert_eq!(e(100.0), f32::INFINITY);
        }
    }

    /// The four inputs whose `-exp` is −0.99421847 with torch's default dispatch on an
    /// AVX-512 machine (the reference outputs' path) and −0.9942184 on the generic path
    /// (measured with torch 2.15, with and without `MKL_CBWR=COMPATIBLE`).
    #[test]
    fn the_default_path_gives_the_reference_value() {
        for bits in [0xbbbd_ffffu32, 0xbbbe_0000, 0xbbbe_0001, 0xbbbe_0002] {
            let x = f32::from_bits(bits);
            let on = |path| -torch_exp_f32_on(path, x);
            assert_eq!(on(MklPath::from_setting(None)), -0.994_218_47, "{bits:#x}");
            assert_eq!(on(MklPath::Compatible), -0.994_218_4, "{bits:#x}");
        }
    }

    /// Inputs where the paths disagree (values measured with torch 2.15): the bfloat16
    /// -0.00177 (−exp is −0.99823... on the generic path, one float lower on AVX-512), and
    /// 2^-24, where both give 1 rather than the correctly rounded 1 + 2^-23.
    #[test]
    fn measured_values() {
        let x = f32::from_bits(0xbae9_0000);
        assert_eq!(
            torch_exp_f32_on(MklPath::Compatible, x).to_bits(),
            0x3f7f_8b9b
        );
        assert_eq!(torch_exp_f32_on(MklPath::Avx512, x).to_bits(), 0x3f7f_8b9a);
        let x = f32::from_bits(0x3380_0000);
        assert_eq!(
            torch_exp_f32_on(MklPath::Compatible, x).to_bits(),
            0x3f80_0000
        );
        assert_eq!(torch_exp_f32_on(MklPath::Avx512, x).to_bits(), 0x3f80_0000);
    }
}
