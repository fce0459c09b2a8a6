//! A measured table of where one of MKL's float32 functions is not correctly rounded.
//!
//! MKL's algorithms are not published, so `exp.rs` and `erfinv.rs` reconstruct each result as
//! the f64 value rounded to f32 and consult a table measured against torch on every input
//! (`conformance/make_torch_exp_table.py`, `conformance/make_torch_erfinv_table.py`): runs of
//! input bit patterns whose result is the float on the exact value's other side, and explicit
//! `(input, output)` pairs for inputs whose value lies so close to a rounding midpoint that
//! two f64 evaluations could round differently. Format (little-endian): a four-byte magic,
//! `u32 n_runs`, `u32 n_explicit`, then `n_runs` pairs of LEB128 (gap from the previous run's
//! end, length − 1), then `n_explicit` pairs `(u32 input bits, u32 output bits)` sorted by
//! input.

/// A decoded table.
pub(super) struct Deviations {
    starts: Vec<u32>,
    ends: Vec<u32>,
    explicit: Vec<(u32, u32)>,
}

fn leb128(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

impl Deviations {
    /// Decodes a table compiled into the crate (not input: its shape is checked by the unit
    /// tests), panicking on a wrong `magic` or length.
    pub(super) fn decode(table: &[u8], magic: &[u8; 4]) -> Deviations {
        assert_eq!(&table[..4], magic, "torch math table: bad magic");
        let n_runs = u32_at(table, 4) as usize;
        let n_explicit = u32_at(table, 8) as usize;
        let mut at = 12;
        let (mut starts, mut ends) = (Vec::with_capacity(n_runs), Vec::with_capacity(n_runs));
        let mut prev = 0u64;
        for _ in 0..n_runs {
            let start = prev + leb128(table, &mut at);
            let end = start + leb128(table, &mut at) + 1;
            starts.push(start as u32);
            // A run may end at 2^32 (the last bit pattern); `end` is stored minus one.
            ends.push((end - 1) as u32);
            prev = end;
        }
        let explicit = (0..n_explicit)
            .map(|i| (u32_at(table, at + 8 * i), u32_at(table, at + 8 * i + 4)))
            .collect();
        assert_eq!(
            at + 8 * n_explicit,
            table.len(),
            "torch math table: bad length"
        );
        Deviations {
            starts,
            ends,
            explicit,
        }
    }

    /// The explicitly listed result for input bits `bits`, if any.
    pub(super) fn explicit(&self, bits: u32) -> Option<f32> {
        self.explicit
            .binary_search_by_key(&bits, |p| p.0)
            .ok()
            .map(|i| f32::from_bits(self.explicit[i].1))
    }

    /// Whether input bits `bits` lie in a run (the result is the other neighbour).
    pub(super) fn deviates(&self, bits: u32) -> bool {
        let i = self.starts.partition_point(|&s| s <= bits);
        i > 0 && bits <= self.ends[i - 1]
    }

    /// How many runs the table holds.
    #[cfg(test)]
    pub(super) fn runs(&self) -> usize {
        self.starts.len()
    }

    /// Whether runs and explicit pairs are sorted and non-overlapping.
    #[cfg(test)]
    pub(super) fn is_well_formed(&self) -> bool {
        self.starts.windows(2).all(|w| w[0] < w[1])
            && self.starts.iter().zip(&self.ends).all(|(s, e)| s <= e)
            && self.ends.windows(2).all(|w| w[0] < w[1])
            && self.explicit.windows(2).all(|w| w[0].0 < w[1].0)
    }
}

/// How close (in units of the f32 spacing) to a rounding midpoint a value must be for its
/// result to be listed explicitly; the generators use the same bound.
pub(super) const NEAR: f64 = 1.0 / (1u64 << 20) as f64;

/// The next float toward +∞ (`up`) or −∞ from a non-NaN `r`.
pub(super) fn step(r: f32, up: bool) -> f32 {
    if r == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = r.to_bits();
    // Away from zero means a larger magnitude, i.e. the next bit pattern.
    let away = up == (r > 0.0);
    f32::from_bits(if away { b + 1 } else { b - 1 })
}

/// `e` rounded to f32, and the float on the exact value's other side of it (`None` when
/// `e` is exactly a float).
pub(super) fn round_and_other(e: f64) -> (f32, Option<f32>) {
    let r = e as f32;
    let r64 = r as f64;
    if e == r64 {
        return (r, None);
    }
    let up = e > r64;
    let other = if r.is_infinite() && !up {
        f32::MAX
    } else {
        step(r, up)
    };
    (r, Some(other))
}

/// Whether `e` lies within [`NEAR`] of the midpoint between the finite floats `r` and
/// `other`.
pub(super) fn near_midpoint(e: f64, r: f32, other: f32) -> bool {
    if !(r.is_finite() && other.is_finite()) {
        return false;
    }
    let (r64, o64) = (r as f64, other as f64);
    ((e - (r64 + o64) * 0.5).abs() / (o64 - r64).abs()) < NEAR
}
