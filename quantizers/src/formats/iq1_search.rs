//! Pieces shared by the IQ1_S and IQ1_M quantizers.
//!
//! An IQ1 group is fitted as `scale · (code − 1 ± δ)` with codes in {0, 1, 2}. Sorting the
//! group's values lets an exhaustive search over the two split points (which values map to
//! code 0, 1 and 2) find the best unconstrained fit; each 8 values are then moved to the
//! IQ1 grid, through the neighbour lists when they are off it.

use super::iq_lattice::Lattice;
use crate::simd::V8;

/// Sorts `(value, index)` pairs by value the way glibc's `qsort` does for small arrays: a
/// top-down merge sort that splits `n` into `n/2` and `n − n/2` and takes the left element
/// when the comparison is not "greater". With a comparison that calls NaN equal to everything
/// this fixes the order NaN inputs end up in, which the quantized bits depend on.
///
/// Without NaN the order is total up to ties, which a stable merge sort leaves in index
/// order; any sort by (value, index) then gives the same result, so that case takes the
/// standard library's sort.
pub(crate) fn merge_sort(v: &mut [(f32, u8)], tmp: &mut [(f32, u8)]) {
    if v.len() <= 32 && v.iter().all(|p| !p.0.is_nan()) {
        // Sorted as integers: the value's bits mapped to an unsigned key in the same order
        // (−0 and +0 made equal, as the comparison has them), then the index.
        let mut keys = [0u64; 32];
        let mut vals = [0f32; 256];
        for (key, &(x, i)) in keys.iter_mut().zip(v.iter()) {
            let bits = if x == 0.0 { 0 } else { x.to_bits() };
            let ord = if bits >> 31 == 1 {
                !bits
            } else {
                bits | 0x8000_0000
            };
            *key = (u64::from(ord) << 8) | u64::from(i);
            vals[i as usize] = x;
        }
        let keys = &mut keys[..v.len()];
        keys.sort_unstable();
        for (p, &key) in v.iter_mut().zip(keys.iter()) {
            let i = key as u8;
            *p = (vals[i as usize], i);
        }
        return;
    }
    glibc_msort(v, tmp);
}

/// glibc's `msort_with_tmp` for the comparison "a < b ? -1 : a > b ? 1 : 0".
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

    #[test]
    fn merge_sort_is_stable_and_sorted() {
        let mut v: Vec<(f32, u8)> = [3.0, -1.0, 3.0, 0.0, -0.0, 2.0, -1.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, i as u8))
            .collect();
        let mut tmp = vec![(0.0, 0); v.len()];
        let mut w = v.clone();
        merge_sort(&mut v, &mut tmp);
        let idx: Vec<u8> = v.iter().map(|p| p.1).collect();
        assert_eq!(idx, [1, 6, 3, 4, 5, 0, 2]);
        // The glibc path (taken with NaN) agrees when there is none.
        glibc_msort(&mut w, &mut tmp);
        assert_eq!(v, w);
    }
}
