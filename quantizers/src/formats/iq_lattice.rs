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

use crate::simd::V8;

use super::iq_grids::{
    IQ1S_CODES, IQ2S_CODES, IQ2XS_CODES, IQ2XXS_CODES, IQ3S_CODES, IQ3XXS_CODES,
};

/// Map entry of a point with no table (a lane code outside the lattice's levels).
const INVALID: i32 = i32::MIN;

/// Flag of a grid entry in `Lattice::compact`.
const ON_GRID: u32 = 1 << 31;

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
    #[cfg_attr(not(test), allow(dead_code))]
    list_starts: Vec<u32>,
    /// Number of code values per lane (3 or 8).
    levels: usize,
    /// `map` again, indexed by the codes read as a base-`levels` number (every point in
    /// range, so small enough to stay in the L1 cache): [`ON_GRID`] plus the grid index, or
    /// the point's neighbour list as `(chunk << 9) | count`, its candidates being at
    /// `candidates[8·chunk..]`.
    compact: Vec<u32>,
    /// Neighbour lists: a count, then that many grid indices.
    #[cfg_attr(not(test), allow(dead_code))]
    neighbours: Vec<u16>,
    /// The neighbour lists again, for the search: the candidates' packed grid codes, 8 to a
    /// chunk (the winner's grid index is then its `compact` entry: two bytes per candidate keep the
    /// lists of the IQ1 grid, about 650 KB, within reach of the L2 cache). A list's last
    /// chunk is padded with copies of its last candidate (a copy scores like the original
    /// and comes after it, so it never wins).
    candidates: Vec<u16>,
    /// Lane code → coordinate (`2·code + 1`) as the 8-entry table that
    /// [`V8::lookup8`] reads with the codes shifted to a lane (2-bit codes repeat it).
    coord_table: [f32; 8],
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
        let mut handles = Vec::new();
        let mut candidates = Vec::new();
        let mut at = 0;
        while at < neighbours.len() {
            let n = neighbours[at] as usize;
            let list = &neighbours[at + 1..at + 1 + n];
            assert!(
                n < 512 && candidates.len() / 8 < 1 << 22,
                "neighbour list too long"
            );
            handles.push(((candidates.len() / 8) << 9 | n) as u32);
            for chunk in 0..n.div_ceil(8) {
                let g: [u16; 8] = std::array::from_fn(|j| list[(8 * chunk + j).min(n - 1)]);
                candidates.extend(g.iter().map(|&g| codes[g as usize]));
            }
            at += 1 + n;
        }
        let coord_table = std::array::from_fn(|c| (2 * (c as u32 & u32::from(mask)) + 1) as f32);
        let mut compact = vec![0u32; (levels as usize).pow(lanes as u32)];
        for (idx, slot) in compact.iter_mut().enumerate() {
            let mut u = 0usize;
            let mut rest = idx;
            for j in 0..lanes {
                u |= (rest % levels as usize) << (bits as usize * j);
                rest /= levels as usize;
            }
            *slot = match map[u] {
                m if m >= 0 => ON_GRID | m as u32,
                m => handles[(-(m + 1)) as usize],
            };
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
            candidates,
            coord_table,
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
    /// on the grid, else `Err(list)` with a handle on its neighbour list.
    #[inline(always)]
    pub(crate) fn lookup(&self, l: &[i8]) -> Result<u16, usize> {
        let mut idx = 0usize;
        for &v in l[..self.lanes].iter().rev() {
            idx = idx * self.levels + v as usize;
        }
        self.entry(idx)
    }

    /// The entry of the point whose lane codes, read as a base-`levels` number (lane 0
    /// lowest), are `idx`: `Ok(grid index)` on the grid, else `Err(list)` (a handle on its
    /// neighbour list).
    #[inline(always)]
    pub(crate) fn entry(&self, idx: usize) -> Result<u16, usize> {
        let e = self.compact[idx];
        if e & ON_GRID != 0 {
            Ok(e as u16)
        } else {
            Err(e as usize)
        }
    }

    /// Asks the CPU to bring the first candidates of neighbour list `k` (a handle from
    /// [`Lattice::lookup`]) into the cache, so that a search over it started later does not
    /// wait for memory. Only a hint: it changes no result.
    #[inline(always)]
    pub(crate) fn prefetch(&self, k: usize) {
        // Two bytes per candidate: the first four cache lines hold 128 candidates.
        const LINES: usize = 4;
        let n = (k & 511).next_multiple_of(8);
        let start = 8 * (k >> 9);
        let cands = &self.candidates[start..start + n];
        for line in 0..LINES.min(cands.len().div_ceil(32)) {
            let p = cands[32 * line..].as_ptr();
            #[cfg(target_arch = "x86_64")]
            // SAFETY: SSE is part of the x86-64 baseline, and a prefetch never faults (`p`
            // points into `candidates` anyway).
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    p.cast::<i8>(),
                );
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = p;
        }
    }

    /// The first candidate of neighbour list `k` minimising `Σ w·(scale·q − x)²` summed
    /// lane by lane in the reference's order from 0, with `q = levels[code]` (`levels` an
    /// 8-entry table as [`Lattice::coord_table`], repeated for 2-bit codes), or `None` when
    /// no candidate scores below `f32::MAX` (the reference's `if (d2 < best)` scan from
    /// `FLT_MAX`: NaN never wins, ties go to the first).
    ///
    /// A lane value `i` has only 3 or 8 possible terms `w·(scale·q − x)²`: they are
    /// computed once (with the reference's operations), and each candidate's score is the
    /// sum of its lanes' terms, eight candidates to a vector. Each vector lane keeps its
    /// own first minimum; the first candidate with the overall minimum is then the earliest
    /// of the lanes holding it.
    #[inline(always)]
    fn search<S: V8, const L: usize>(
        &self,
        s: S,
        k: usize,
        xval: &[f32],
        w: &[f32],
        scale: f32,
        levels: &[f32; 8],
    ) -> Option<u16> {
        let n = k & 511;
        let cands = &self.candidates[8 * (k >> 9)..][..n.next_multiple_of(8)];
        let sq = s.mul(s.splat(scale), s.load(levels));
        // A plain loop: a closure would not be compiled with the caller's target features.
        let mut terms = [sq; L];
        for (i, t) in terms.iter_mut().enumerate() {
            let diff = s.sub(sq, s.splat(xval[i]));
            *t = s.mul(s.mul(s.splat(w[i]), diff), diff);
        }
        let (mut best, mut best_at) = (s.splat(f32::MAX), s.splat(0.0));
        for (c8, chunk) in cands.chunks_exact(8).enumerate() {
            let u = s.load_u16(chunk.try_into().expect("chunks of 8"));
            let mut d2 = s.splat(0.0);
            for (i, &t) in terms.iter().enumerate() {
                d2 = s.add(d2, s.lookup8(t, u, self.bits * i as u32));
            }
            let better = s.lt(d2, best);
            best = s.select(better, d2, best);
            best_at = s.select(better, s.splat(c8 as f32), best_at);
        }
        // `best` holds no NaN: a lane is either `f32::MAX` or a score below it.
        let min = s.hmin(best);
        if min >= f32::MAX {
            return None;
        }
        let at_min = s.eq(best, s.splat(min));
        let first = if n <= 8 {
            s.mask_bits(at_min).trailing_zeros() as usize
        } else {
            const LANE: [f32; 8] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
            let index = s.add(s.mul(best_at, s.splat(8.0)), s.load(&LANE));
            s.hmin(s.select(at_min, index, s.splat(f32::MAX))) as usize
        };
        // A candidate's code is a grid entry's: its compact entry (read with the code's lanes
        // as base-`levels` digits; that table is small and hot, unlike `map`) holds the grid
        // index.
        let code = cands[first] as usize;
        let (mask, mut idx, mut place) = ((1usize << self.bits) - 1, 0usize, 1usize);
        for j in 0..L {
            idx += ((code >> (self.bits as usize * j)) & mask) * place;
            place *= self.levels;
        }
        Some(self.compact[idx] as u16)
    }

    /// [`Lattice::search`] with the lattice's lane count.
    #[inline(always)]
    fn search_lanes<S: V8>(
        &self,
        s: S,
        k: usize,
        xval: &[f32],
        w: &[f32],
        scale: f32,
        levels: &[f32; 8],
    ) -> Option<u16> {
        if self.lanes == 8 {
            self.search::<S, 8>(s, k, xval, w, scale, levels)
        } else {
            self.search::<S, 4>(s, k, xval, w, scale, levels)
        }
    }

    /// The IQ2/IQ3 neighbour search (`iq2_find_best_neighbour`, `iq3_find_best_neighbour`)
    /// over neighbour list `k`: the first candidate minimising `Σ w·(scale·coord − x)²`.
    /// `None` when no candidate scores below `f32::MAX` (NaN or infinite errors), where
    /// llama.cpp aborts.
    #[inline(always)]
    pub(crate) fn nearest<S: V8>(
        &self,
        s: S,
        k: usize,
        xval: &[f32],
        w: &[f32],
        scale: f32,
    ) -> Option<u16> {
        self.search_lanes(s, k, xval, w, scale, &self.coord_table)
    }

    /// [`Lattice::nearest`] with the winner's codes written to `l`.
    #[inline(always)]
    pub(crate) fn best_neighbour<S: V8>(
        &self,
        s: S,
        k: usize,
        xval: &[f32],
        w: &[f32],
        scale: f32,
        l: &mut [i8],
    ) -> Option<u16> {
        let g = self.nearest(s, k, xval, w, scale)?;
        self.decode(g, l);
        Some(g)
    }

    /// `iq1_find_best_neighbour2` over neighbour list `k`: the first candidate minimising
    /// `Σ w·(scale·xx[code] − x)²`. `None` when no candidate scores below `f32::MAX`.
    #[inline(always)]
    pub(crate) fn best_neighbour_iq1<S: V8>(
        &self,
        s: S,
        k: usize,
        xval: &[f32],
        w: &[f32],
        scale: f32,
        xx: &[f32; 3],
    ) -> Option<u16> {
        debug_assert_eq!(self.bits, 2);
        let levels = [xx[0], xx[1], xx[2], 0.0, xx[0], xx[1], xx[2], 0.0];
        self.search_lanes(s, k, xval, w, scale, &levels)
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
