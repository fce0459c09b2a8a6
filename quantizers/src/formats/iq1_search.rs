//! Pieces shared by the IQ1_S and IQ1_M quantizers.
//!
//! An IQ1 group is fitted as `scale · (code − 1 ± δ)` with codes in {0, 1, 2}. Sorting the
//! group's values lets an exhaustive search over the two split points (which values map to
//! code 0, 1 and 2) find the best unconstrained fit; each 8 values are then moved to the
//! IQ1 grid, through the neighbour lists when they are off it.

use super::iq_lattice::Lattice;
use crate::simd::V8;

/// Fills `pairs` with `(xb[i], i)` sorted by value the way glibc's `qsort` sorts them (the
/// reference sorts a group with it), for a group of 8, 16, 24 or 32 values.
///
/// Without NaN the sorted position of value `i` is its rank: the number of values below it
/// plus the number of equal values before it (−0 and +0 are equal, as in the comparison).
/// Ranks are counted eight lanes at a time, without branches: for each value `j`, lanes
/// after `j` count it when `x_j ≤ x_lane`, the others when `x_j < x_lane`. A group with NaN
/// takes [`glibc_msort`], which fixes the order NaN inputs end up in (the quantized bits
/// depend on it); without NaN its stable order is the rank order.
#[inline(always)]
pub(crate) fn sort_group<S: V8>(v8: S, xb: &[f32], pairs: &mut [(f32, u8)], tmp: &mut [(f32, u8)]) {
    let n = xb.len();
    debug_assert!(n.is_multiple_of(8) && n <= 32 && pairs.len() == n);
    let chunks = n / 8;
    let zero = v8.splat(0.0);
    let mut v = [zero; 4];
    let mut nan = zero;
    for (c, vc) in v.iter_mut().enumerate().take(chunks) {
        *vc = v8.load(xb[8 * c..8 * c + 8].try_into().expect("8 values"));
        nan = v8.or(nan, v8.ne(*vc, *vc));
    }
    if v8.any(nan) {
        for (j, (p, &x)) in pairs.iter_mut().zip(xb).enumerate() {
            *p = (x, j as u8);
        }
        glibc_msort(pairs, tmp);
        return;
    }
    let one = v8.splat(1.0);
    let lane = v8.load(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    let mut rank = [zero; 4];
    for (j, &xj) in xb.iter().enumerate() {
        let b = v8.splat(xj);
        let (cj, lj) = (j / 8, (j % 8) as f32);
        for c in 0..chunks {
            let counts = match c.cmp(&cj) {
                std::cmp::Ordering::Less => v8.lt(b, v[c]),
                std::cmp::Ordering::Greater => v8.le(b, v[c]),
                std::cmp::Ordering::Equal => {
                    let after = v8.lt(v8.splat(lj), lane);
                    v8.select(after, v8.le(b, v[c]), v8.lt(b, v[c]))
                }
            };
            // Counts of at most 31: exact in f32.
            rank[c] = v8.add(rank[c], v8.and(counts, one));
        }
    }
    for (c, &rc) in rank.iter().enumerate().take(chunks) {
        for (l, &r) in v8.to_array(rc).iter().enumerate() {
            let i = 8 * c + l;
            pairs[r as usize] = (xb[i], i as u8);
        }
    }
}

/// glibc's `msort_with_tmp` for the comparison "a < b ? -1 : a > b ? 1 : 0": a top-down
/// merge sort that splits `n` into `n/2` and `n − n/2` and takes the left element when the
/// comparison is not "greater". With a comparison that calls NaN equal to everything this
/// fixes the order NaN inputs end up in.
fn glibc_msort(v: &mut [(f32, u8)], tmp: &mut [(f32, u8)]) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    glibc_msort(&mut v[..n1], tmp);
    glibc_msort(&mut v[n1..], tmp);
    let (mut i, mut j, mut o) = (0, n1, 0);
    while i < n1 && j < n {
        // `cmp(a, b) <= 0` with cmp = a < b ? -1 : a > b ? 1 : 0.
        if v[i].0.partial_cmp(&v[j].0) != Some(std::cmp::Ordering::Greater) {
            tmp[o] = v[i];
            i += 1;
        } else {
            tmp[o] = v[j];
            j += 1;
        }
        o += 1;
    }
    while i < n1 {
        tmp[o] = v[i];
        i += 1;
        o += 1;
    }
    // The rest of the right half is already in place.
    v[..o].copy_from_slice(&tmp[..o]);
}

/// `iq1_find_best_neighbour2`: among the candidates of neighbour list `list`, the first
/// minimising `Σ w·(scale·xx[code] − x)²`, with its codes written to `l`.
///
/// When no candidate scores below `f32::MAX`, llama.cpp scans the whole grid, reading the
/// value at offset `i` (the grid index) from the group's start instead of offset `j`; `row`
/// and `at` (the group's offset in it) let us reproduce that scan while it stays inside the
/// row. `None` when it leaves the row or finds nothing (llama.cpp aborts or reads past its
/// input there).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn best_neighbour2<S: V8>(
    s: S,
    lat: &Lattice,
    list: usize,
    row: &[f32],
    at: usize,
    w: &[f32],
    scale: f32,
    xx: &[f32; 3],
    l: &mut [i8],
    ngrid: usize,
) -> Option<u16> {
    let xval = &row[at..at + 8];
    let mut best_score = f32::MAX;
    let mut best = lat.best_neighbour_iq1(s, list, xval, w, scale, xx);
    if best.is_none() {
        for g in 0..ngrid {
            let x = *row.get(at + g)?;
            let pg = lat.coords(g as u16);
            let mut d2 = 0.0f32;
            for j in 0..8 {
                let q = xx[((pg[j] - 1) / 2) as usize];
                let diff = scale * q - x;
                d2 += w[j] * diff * diff;
            }
            if d2 < best_score {
                best_score = d2;
                best = Some(g as u16);
            }
        }
    }
    let g = best?;
    lat.decode(g, l);
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::simd::{Scalar, Sse2};

    #[test]
    fn glibc_msort_is_stable_and_sorted() {
        let mut v: Vec<(f32, u8)> = [3.0, -1.0, 3.0, 0.0, -0.0, 2.0, -1.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, i as u8))
            .collect();
        let mut tmp = vec![(0.0, 0); v.len()];
        glibc_msort(&mut v, &mut tmp);
        let idx: Vec<u8> = v.iter().map(|p| p.1).collect();
        assert_eq!(idx, [1, 6, 3, 4, 5, 0, 2]);
    }

    /// `sort_group`'s ranks give glibc's order, ties, ±0, infinities and NaN included.
    fn sort_group_matches_glibc<S: V8>(v8: S) {
        let pool = [
            0.0,
            -0.0,
            1.5,
            -1.5,
            2.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-40,
        ];
        let mut s: u64 = 0x2545_f491_4f6c_dd1d;
        for case in 0..4000 {
            let n = 8 * (1 + case % 4);
            let xb: Vec<f32> = (0..n)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    match s % 16 {
                        0..=5 => pool[(s >> 8) as usize % pool.len()],
                        6 if case % 5 == 0 => f32::NAN,
                        _ => ((s >> 20) as u32 as f32 / u32::MAX as f32 - 0.5) * 8.0,
                    }
                })
                .collect();
            let mut want: Vec<(f32, u8)> =
                xb.iter().enumerate().map(|(i, &x)| (x, i as u8)).collect();
            let mut tmp = vec![(0.0, 0); n];
            glibc_msort(&mut want, &mut tmp);
            let mut got = vec![(0.0, 0); n];
            sort_group(v8, &xb, &mut got, &mut tmp);
            let key = |v: &[(f32, u8)]| v.iter().map(|p| (p.0.to_bits(), p.1)).collect::<Vec<_>>();
            assert_eq!(key(&got), key(&want), "case {case}: {xb:?}");
        }
    }

    #[test]
    fn sort_group_is_glibcs_order() {
        sort_group_matches_glibc(Scalar);
        sort_group_matches_glibc(Sse2);
        if let Some(v8) = crate::simd::Avx2::get() {
            sort_group_matches_glibc(v8);
        }
    }
}
