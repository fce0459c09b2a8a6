//! The search tables of the IQ lattice quantizers: which lattice points are grid entries, and
//! for every other point the grid entries nearest to it.
//!
//! A lattice point is a group of 8 (IQ1/IQ2) or 4 (IQ3) lane codes packed like the grids'
//! codes (2 or 3 bits per lane, lane 0 lowest). Lane code `c` sits at coordinate `2c + 1`,
//! so distances are squared Euclidean distances between those coordinates. For a point that
//! is not a grid entry, the candidates are all grid entries at one of the `nwant` smallest
//! distances from it, ordered by distance and then by grid index: the quantizers take the
//! first best candidate, so this order is part of the result.
//!
//! The tables are built once, on first use, and shared by all threads.

use std::sync::OnceLock;

use super::iq_grids::{
    IQ1S_CODES, IQ2S_CODES, IQ2XS_CODES, IQ2XXS_CODES, IQ3S_CODES, IQ3XXS_CODES,
};

/// Map entry of a point with no table (a lane code outside the lattice's levels).
const INVALID: i32 = i32::MIN;

/// One grid with its point map and neighbour lists.
pub(crate) struct Lattice {
    /// Lanes per grid entry (8 or 4).
    lanes: usize,
    /// Bits per lane code (2 or 3).
    bits: u32,
    /// Coordinates (`2·code + 1`) of every grid entry, lanes past `lanes` zero.
    coords: Vec<[i8; 8]>,
    /// Per packed point: the grid index (≥ 0), its neighbour list's number `k` as
    /// `-(k + 1)`, or [`INVALID`].
    map: Vec<i32>,
    /// Where each neighbour list starts in `neighbours`.
    list_starts: Vec<u32>,
    /// Number of code values per lane (3 or 8).
    levels: usize,
    /// `map` again, indexed by the codes read as a base-`levels` number (every point in
    /// range, so small enough to stay in the L1 cache): the grid index, or `-(k + 1)`.
    compact: Vec<i16>,
    /// Neighbour lists: a count, then that many grid indices.
    neighbours: Vec<u16>,
    /// Per neighbour list (in `neighbours` order), where its coordinates start in `soa`.
    soa_start: Vec<u32>,
    /// The candidates' coordinates lane by lane: for a list of `n` candidates, `lanes` rows
    /// of `n` rounded up to a multiple of 8 (zero padded), so that scoring all candidates is
    /// a loop over independent lanes the compiler vectorises.
    soa: Vec<u8>,
}

/// The longest neighbour list of any lattice (IQ2_XS has one of 292), rounded up to 8.
pub(crate) const MAX_NEIGHBOURS: usize = 296;

/// `n` rounded up to a multiple of 8.
#[inline(always)]
fn padded(n: usize) -> usize {
    (n + 7) & !7
}

impl Lattice {
    /// Builds the tables of the grid `codes` with `lanes` lanes of `bits` bits, keeping the
    /// grid entries at the `nwant` smallest distances of every off-grid point.
    #[allow(clippy::needless_range_loop)] // lanes index the coordinates of many entries
    fn build(codes: &[u16], lanes: usize, bits: u32, levels: u16, nwant: usize) -> Lattice {
        let mask = (1u16 << bits) - 1;
        let coords: Vec<[i8; 8]> = codes
            .iter()
            .map(|&c| {
                let mut p = [0i8; 8];
                for (j, v) in p.iter_mut().enumerate().take(lanes) {
                    *v = 2 * ((c >> (bits as usize * j)) & mask) as i8 + 1;
                }
                p
            })
            .collect();
        let npoints = 1usize << (bits as usize * lanes);
        let mut map = vec![INVALID; npoints];
        for (i, &c) in codes.iter().enumerate() {
            map[c as usize] = i as i32;
        }
        let mut neighbours = Vec::new();
        let mut list_starts: Vec<u32> = Vec::new();
        let mut dist = vec![0u32; codes.len()];
        for (u, slot) in map.iter_mut().enumerate() {
            if *slot != INVALID {
                continue;
            }
            let mut pos = [0i32; 8];
            let mut valid = true;
            for (j, p) in pos.iter_mut().enumerate().take(lanes) {
                let c = (u >> (bits as usize * j)) as u16 & mask;
                valid &= c < levels;
                *p = 2 * c as i32 + 1;
            }
            if !valid {
                continue;
            }
            // The `nwant` smallest distinct distances, ascending.
            let mut smallest: Vec<u32> = Vec::with_capacity(nwant + 1);
            for (d, g) in dist.iter_mut().zip(&coords) {
                *d = (0..lanes)
                    .map(|j| {
                        let e = g[j] as i32 - pos[j];
                        (e * e) as u32
                    })
                    .sum();
                if !smallest.contains(d) {
                    let at = smallest.partition_point(|&s| s < *d);
                    if at < nwant {
                        smallest.insert(at, *d);
                        smallest.truncate(nwant);
                    }
                }
            }
            *slot = -(list_starts.len() as i32 + 1);
            let count_at = neighbours.len();
            list_starts.push(count_at as u32);
            neighbours.push(0);
            for &level in &smallest {
                for (g, &d) in dist.iter().enumerate() {
                    if d == level {
                        neighbours.push(g as u16);
                    }
                }
            }
            neighbours[count_at] = (neighbours.len() - count_at - 1) as u16;
        }
        let mut soa_start = Vec::new();
        let mut soa = Vec::new();
        let mut at = 0;
        while at < neighbours.len() {
            let n = neighbours[at] as usize;
            let list = &neighbours[at + 1..at + 1 + n];
            assert!(padded(n) <= MAX_NEIGHBOURS, "neighbour list of {n}");
            soa_start.push(soa.len() as u32);
            for lane in 0..lanes {
                soa.extend(list.iter().map(|&g| coords[g as usize][lane] as u8));
                soa.resize(soa.len() + padded(n) - n, 0);
            }
            at += 1 + n;
        }
        let mut compact = vec![0i16; (levels as usize).pow(lanes as u32)];
        for (idx, slot) in compact.iter_mut().enumerate() {
            let mut u = 0usize;
            let mut rest = idx;
            for j in 0..lanes {
                u |= (rest % levels as usize) << (bits as usize * j);
                rest /= levels as usize;
            }
            *slot = i16::try_from(map[u]).expect("grid and list numbers fit in i16");
        }
        Lattice {
            lanes,
            bits,
            coords,
            map,
            list_starts,
            levels: levels as usize,
            compact,
            neighbours,
            soa_start,
            soa,
        }
    }

    /// Packs the lane codes `l` (C's `u |= l[i] << bits·i` into a `uint16_t`, sign extension
    /// of the `int8_t` codes included).
    #[inline(always)]
    pub(crate) fn pack(&self, l: &[i8]) -> u16 {
        let mut u = 0u16;
        for (i, &v) in l[..self.lanes].iter().enumerate() {
            u |= ((v as i32) << (self.bits as usize * i)) as u16;
        }
        u
    }

    /// The grid index of the packed point `u`, if it is a grid entry.
    #[inline(always)]
    pub(crate) fn on_grid(&self, u: u16) -> Option<u16> {
        match self.map.get(u as usize) {
            Some(&m) if m >= 0 => Some(m as u16),
            _ => None,
        }
    }

    /// The number of the neighbour list of the off-grid point `u`, if it has one.
    #[cfg(test)]
    fn list(&self, u: u16) -> Option<usize> {
        match self.map.get(u as usize) {
            Some(&m) if m < 0 && m != INVALID => Some((-(m + 1)) as usize),
            _ => None,
        }
    }

    /// The candidate grid indices of the off-grid point `u` (empty when it has none).
    #[cfg(test)]
    pub(crate) fn neighbours(&self, u: u16) -> &[u16] {
        match self.list(u) {
            Some(k) => {
                let start = self.list_starts[k] as usize;
                let n = self.neighbours[start] as usize;
                &self.neighbours[start + 1..start + 1 + n]
            }
            None => &[],
        }
    }

    /// The coordinates (`2·code + 1`) of grid entry `g`.
    #[inline(always)]
    pub(crate) fn coords(&self, g: u16) -> &[i8; 8] {
        &self.coords[g as usize]
    }

    /// The lane codes of grid entry `g`, written to `l`.
    #[inline(always)]
    pub(crate) fn decode(&self, g: u16, l: &mut [i8]) {
        for (v, &c) in l[..self.lanes].iter_mut().zip(self.coords(g)) {
            *v = (c - 1) / 2;
        }
    }

    /// Looks the lane codes `l` (each below the lattice's level count) up: `Ok(grid index)`
    /// on the grid, else `Err(list)` with the number of its neighbour list.
    #[inline(always)]
    pub(crate) fn lookup(&self, l: &[i8]) -> Result<u16, usize> {
        let mut idx = 0usize;
        for &v in l[..self.lanes].iter().rev() {
            idx = idx * self.levels + v as usize;
        }
        let e = self.compact[idx];
        if e >= 0 {
            Ok(e as u16)
        } else {
            Err((-(e as i32 + 1)) as usize)
        }
    }

    /// Scores every candidate of neighbour list `k`: `d2[c] = Σ w·(scale·q(c) − x)²` summed
    /// lane by lane in the reference's order, with `q` the coordinate mapped by `level`.
    /// Candidates are independent, so eight at a time are kept in one vector register.
    /// Returns the candidate indices.
    #[inline(always)]
    fn score(
        &self,
        k: usize,
        xval: &[f32],
        w: &[f32],
        scale: f32,
        level: impl Fn(u8) -> f32,
        d2: &mut [f32; MAX_NEIGHBOURS],
    ) -> (&[u16], usize) {
        let start = self.list_starts[k] as usize;
        let n = self.neighbours[start] as usize;
        let list = &self.neighbours[start + 1..start + 1 + n];
        let np = padded(n);
        let soa = &self.soa[self.soa_start[k] as usize..][..self.lanes * np];
        for (c8, out) in d2[..np].chunks_exact_mut(8).enumerate() {
            let mut acc = [0f32; 8];
            for i in 0..self.lanes {
                let (wi, xi) = (w[i], xval[i]);
                let col = &soa[i * np + 8 * c8..i * np + 8 * c8 + 8];
                for (a, &c) in acc.iter_mut().zip(col) {
                    let diff = scale * level(c) - xi;
                    *a += wi * diff * diff;
                }
            }
            out.copy_from_slice(&acc);
        }
        (list, n)
    }

    /// The first candidate with the smallest score below `f32::MAX` (NaN never wins): the
    /// reference's `if (d2 < best) best = d2` scan.
    #[inline(always)]
    fn first_best(list: &[u16], d2: &[f32]) -> Option<u16> {
        let mut best_d2 = f32::MAX;
        let mut best = None;
        for (&d, &g) in d2.iter().zip(list) {
            if d < best_d2 {
                best_d2 = d;
                best = Some(g);
            }
        }
        best
    }

    /// The IQ2/IQ3 neighbour search (`iq2_find_best_neighbour`, `iq3_find_best_neighbour`)
    /// over neighbour list `k`: the first candidate minimising `Σ w·(scale·coord − x)²`,
    /// with its codes written to `l`. `None` when no candidate scores below `f32::MAX` (NaN
    /// or infinite errors), where llama.cpp aborts. `d2` is scratch.
    #[inline(always)]
    pub(crate) fn best_neighbour(
        &self,
        k: usize,
        xval: &[f32],
        w: &[f32],
        scale: f32,
        l: &mut [i8],
        d2: &mut [f32; MAX_NEIGHBOURS],
    ) -> Option<u16> {
        let (list, n) = self.score(k, xval, w, scale, |c| c as f32, d2);
        let g = Self::first_best(list, &d2[..n])?;
        self.decode(g, l);
        Some(g)
    }

    /// `iq1_find_best_neighbour2` over neighbour list `k`: the first candidate minimising
    /// `Σ w·(scale·xx[code] − x)²`, where the IQ1 levels `xx` are `code + xx[0]` (exactly,
    /// for both delta signs). `None` when no candidate scores below `f32::MAX`.
    #[inline(always)]
    pub(crate) fn best_neighbour_iq1(
        &self,
        k: usize,
        xval: &[f32],
        w: &[f32],
        scale: f32,
        xx: &[f32; 3],
        d2: &mut [f32; MAX_NEIGHBOURS],
    ) -> Option<u16> {
        debug_assert!(xx[1] == xx[0] + 1.0 && xx[2] == xx[0] + 2.0);
        let x0 = xx[0];
        // `c` is the coordinate `2·code + 1`.
        let (list, n) = self.score(k, xval, w, scale, |c| (c >> 1) as f32 + x0, d2);
        Self::first_best(list, &d2[..n])
    }
}

/// The tables of the IQ2_XXS grid.
pub(crate) fn iq2xxs() -> &'static Lattice {
    static T: OnceLock<Lattice> = OnceLock::new();
    T.get_or_init(|| Lattice::build(&IQ2XXS_CODES, 8, 2, 3, 2))
}

/// The tables of the IQ2_XS grid.
pub(crate) fn iq2xs() -> &'static Lattice {
    static T: OnceLock<Lattice> = OnceLock::new();
    T.get_or_init(|| Lattice::build(&IQ2XS_CODES, 8, 2, 3, 2))
}

/// The tables of the IQ2_S grid.
pub(crate) fn iq2s() -> &'static Lattice {
    static T: OnceLock<Lattice> = OnceLock::new();
    T.get_or_init(|| Lattice::build(&IQ2S_CODES, 8, 2, 3, 1))
}

/// The tables of the IQ1_S / IQ1_M grid.
pub(crate) fn iq1s() -> &'static Lattice {
    static T: OnceLock<Lattice> = OnceLock::new();
    T.get_or_init(|| Lattice::build(&IQ1S_CODES, 8, 2, 3, 3))
}

/// The tables of the IQ3_XXS grid.
pub(crate) fn iq3xxs() -> &'static Lattice {
    static T: OnceLock<Lattice> = OnceLock::new();
    T.get_or_init(|| Lattice::build(&IQ3XXS_CODES, 4, 3, 8, 2))
}

/// The tables of the IQ3_S grid.
pub(crate) fn iq3s() -> &'static Lattice {
    static T: OnceLock<Lattice> = OnceLock::new();
    T.get_or_init(|| Lattice::build(&IQ3S_CODES, 4, 3, 8, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_points_map_to_themselves() {
        let lat = iq2xs();
        for (i, &c) in IQ2XS_CODES.iter().enumerate() {
            assert_eq!(lat.on_grid(c), Some(i as u16));
            let mut l = [0i8; 8];
            lat.decode(i as u16, &mut l);
            assert_eq!(lat.pack(&l), c);
        }
    }

    #[test]
    fn neighbours_are_nearest_first() {
        let lat = iq3xxs();
        // A point off the grid: all lanes at code 7.
        let u = 0o7777u16;
        assert!(lat.on_grid(u).is_none());
        let nb = lat.neighbours(u);
        assert!(!nb.is_empty());
        let d = |g: u16| -> i32 {
            lat.coords(g)[..4]
                .iter()
                .map(|&c| (c as i32 - 15) * (c as i32 - 15))
                .sum()
        };
        for w in nb.windows(2) {
            assert!((d(w[0]), w[0]) < (d(w[1]), w[1]));
        }
        // Two distinct distances at most.
        let mut ds: Vec<i32> = nb.iter().map(|&g| d(g)).collect();
        ds.dedup();
        assert!(ds.len() <= 2);
    }

    #[test]
    fn points_with_unused_codes_have_no_table() {
        let lat = iq1s();
        assert!(lat.on_grid(0xffff).is_none());
        assert!(lat.neighbours(0xffff).is_empty());
    }
}
