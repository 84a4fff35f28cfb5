//! Olsen's levelling sweeps (his optimised thermal erosion and his erosion algorithm, Olsen
//! 2004; seed 001 §3) with a 4-cell neighbourhood, computed tile by tile.
//!
//! One sweep is the two coloured exchange passes of [`super::exchange::Exchange`] (every cell
//! of a colour picks its lowest neighbour from the heights before the pass and moves
//! `d_max/(k + 1)` to it, `k` being the number of cells feeding that neighbour). A cell's height
//! after one pass depends only on the cells within 3 of it (its receiver's other feeders and
//! their lowest neighbours), so after a whole sweep on the cells within 6. Each tile therefore
//! copies its cells and a 6-cell halo from the heights before the sweep, runs both passes on
//! that copy (small enough to stay in the processor's caches), and writes back only its own
//! cells: one read and one write of the map per sweep, instead of the exchange's full-map
//! passes over receivers, amounts and feeder counts for each colour (roughly 150 bytes per
//! cell and sweep). Tiles are independent, so they run in parallel and the result does not
//! depend on the thread count.
//!
//! In the copy each row is split into its even and its odd columns. Both colourings here are
//! checkerboards of columns (Von Neumann: `(x + y) mod 2`, so one half of each row, alternating
//! from row to row; rotated Von Neumann: `x mod 2`, the same half in every row), so a pass
//! reads and writes whole half rows: the cells of the colour choose, the other half gains, the
//! first half pays, each in branch-free loops the compiler turns into SIMD, with no lane spent
//! on a cell the step does not concern.
//!
//! The arithmetic is the exchange's, operation for operation (the same lowest neighbour with
//! ties to the first in offset order, the same divisions, the shares of three or more feeders
//! summed in ascending order), so the heights are the same bits: a test compares the two on
//! maps of many sizes, origins, neighbourhoods and thresholds. Cells beyond a closed edge hold
//! `+∞`: never lower than a cell, they never receive, and they never choose.

use rayon::prelude::*;

use crate::grid::{Boundary, Neighbourhood};

/// Cells of halo around a tile: the reach of one sweep (two passes of 3). Even, so the copy's
/// columns and rows have the parities of the tile's.
const HALO: usize = 6;
/// Largest tile interior width and height, in cells: the copy is then 268 × 76 cells in 4
/// arrays of `f64`, 650 KB, about a core's L2 cache here (512 KB); 256 × 128 and 512 × 64 ran as
/// fast at 4097², 128 × 128 4 % slower (session 33, before the split rows).
const TILE_W: usize = 256;
const TILE_H: usize = 64;
/// No receiver (a direction code is the offset's index, 0–3).
const NONE: f64 = -1.0;

/// Whether [`sweep`] handles this neighbourhood and edge rule on a `w × h` map: 4 neighbours
/// (2 colours), closed edges or a wrapped map with even sides of at least 4 (an odd side puts
/// two cells of one colour side by side across the seam, which the split rows cannot hold; on
/// a side of 2, one cell is two of another's neighbours, which the exchange counts twice and a
/// tile's copy would not). The exchange serves the other maps.
pub(crate) fn supports(nb: Neighbourhood, boundary: Boundary, (w, h): (usize, usize)) -> bool {
    let even = |side: usize| side.is_multiple_of(2) && side >= 4;
    nb != Neighbourhood::Moore && (boundary == Boundary::Closed || (even(w) && even(h)))
}

/// Which cells move material: `gentle` (Olsen's erosion) where `0 < d_max ≤ talus`, otherwise
/// (his optimised thermal erosion) where `d_max > talus`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rule {
    pub talus: f64,
    pub gentle: bool,
}

/// The heights of a `w × h` map after one sweep from `src` into `dst`, passes in colour order
/// `order` (colours of world cells, the map's cell (0, 0) having parities `origin`, as in
/// [`super::exchange::colour_of`]). On a wrapped map a tile's halo is taken across the edges.
/// [`supports`] must hold.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep(
    src: &[f64],
    dst: &mut [f64],
    (w, h): (usize, usize),
    boundary: Boundary,
    nb: Neighbourhood,
    origin: (usize, usize),
    order: [usize; 2],
    rule: Rule,
) {
    debug_assert!(supports(nb, boundary, (w, h)) && src.len() == w * h && dst.len() == w * h);
    let wrap = boundary == Boundary::Wrap;
    // Columns in tiles of equal widths (within one cell), at most TILE_W.
    let across = w.div_ceil(TILE_W);
    dst.par_chunks_mut(w * TILE_H).enumerate().for_each_init(Tile::default, |tile, (band, rows)| {
        let y0 = band * TILE_H;
        let th = rows.len() / w;
        for t in 0..across {
            let (x0, x1) = (t * w / across, (t + 1) * w / across);
            tile.load(src, (w, h), wrap, (x0, y0), (x1 - x0, th));
            // The parities of the world cell at the copy's (0, 0).
            let parity = ((x0 + origin.0) & 1, (y0 + origin.1) & 1);
            for colour in order {
                tile.pass(nb, parity, colour, rule);
            }
            tile.store(rows, w, x0);
        }
    });
}

/// One tile's copy with its halo, and the pass's scratch: `bh` rows of `bw` cells, each row
/// stored as its even columns then its odd ones, `half` values each (in arrays sized for the
/// largest tile). Buffer cell `(lx, ly)` is at `(2·ly + lx mod 2)·half + lx / 2`.
#[derive(Default)]
struct Tile {
    bw: usize,
    bh: usize,
    half: usize,
    /// Heights (`+∞` beyond a closed edge).
    v: Vec<f64>,
    /// `d_max` of each cell of the pass's colour.
    want: Vec<f64>,
    /// Receiver direction (offset index) of each cell of the colour, or [`NONE`].
    dir: Vec<f64>,
    /// `k + 1` of each receiver.
    kp1: Vec<f64>,
    /// One row of the copy in map order, before it is split.
    row: Vec<f64>,
}

impl Tile {
    /// Copies the tile of interior `(tw, th)` at `(x0, y0)` and its halo from `src`, across
    /// the edges when `wrap`, else `+∞` beyond them.
    fn load(
        &mut self,
        src: &[f64],
        (w, h): (usize, usize),
        wrap: bool,
        (x0, y0): (usize, usize),
        (tw, th): (usize, usize),
    ) {
        let (bw, bh) = (tw + 2 * HALO, th + 2 * HALO);
        let half = bw.div_ceil(2);
        let n = 2 * bh * half;
        if self.v.len() < n {
            *self = Self {
                v: vec![0.0; n],
                want: vec![0.0; n],
                dir: vec![NONE; n],
                // Every receiver's k + 1 is written by the pass; 1.0 elsewhere keeps the
                // (discarded) payments of the outer cells finite.
                kp1: vec![1.0; n],
                ..Self::default()
            };
        }
        (self.bw, self.bh, self.half) = (bw, bh, half);
        // Buffer column (row) k holds map column x0 + k − HALO (row y0 + k − HALO), taken
        // modulo the side when wrapping; None beyond a closed edge.
        let on_map = |at: usize, k: usize, side: usize| {
            let z = (at + k) as i64 - HALO as i64;
            if wrap {
                Some(z.rem_euclid(side as i64) as usize)
            } else {
                (0..side as i64).contains(&z).then_some(z as usize)
            }
        };
        self.row.resize(bw, 0.0);
        // Whether the copy's columns are one run of map columns (most tiles).
        let inside = x0 >= HALO && x0 + tw + HALO <= w;
        for ly in 0..bh {
            let y = on_map(y0, ly, h);
            let cells: &[f64] = match y {
                Some(y) if inside => &src[y * w + x0 - HALO..y * w + x0 + tw + HALO],
                None => {
                    self.row.fill(f64::INFINITY);
                    &self.row
                }
                Some(y) => {
                    // Runs of consecutive map columns.
                    let row = &mut self.row;
                    let mut lx = 0;
                    while lx < bw {
                        match on_map(x0, lx, w) {
                            Some(x) => {
                                let run = (bw - lx).min(w - x);
                                row[lx..lx + run].copy_from_slice(&src[y * w + x..y * w + x + run]);
                                lx += run;
                            }
                            None => {
                                row[lx] = f64::INFINITY;
                                lx += 1;
                            }
                        }
                    }
                    row
                }
            };
            let (even, odd) = self.v[2 * ly * half..(2 * ly + 2) * half].split_at_mut(half);
            let pairs = cells.chunks_exact(2);
            if let [last] = pairs.remainder() {
                even[bw / 2] = *last;
            }
            for ((pair, e), o) in pairs.zip(even.iter_mut()).zip(odd.iter_mut()) {
                (*e, *o) = (pair[0], pair[1]);
            }
        }
        // The outer ring never chooses (its neighbours are not all in the copy).
        self.dir[..n].fill(NONE);
    }

    /// Writes the tile's interior into `rows` (map rows `y0..`, width `w`) at column `x0`.
    fn store(&self, rows: &mut [f64], w: usize, x0: usize) {
        let (bw, half) = (self.bw, self.half);
        let tw = bw - 2 * HALO;
        for (ly, out) in rows.chunks_exact_mut(w).enumerate() {
            let at = 2 * (ly + HALO) * half;
            let (even, odd) = self.v[at..at + 2 * half].split_at(half);
            // HALO is even: map column x0 + t is buffer column HALO + t, of t's parity.
            let (even, odd) = (&even[HALO / 2..], &odd[HALO / 2..]);
            let mut pairs = out[x0..x0 + tw].chunks_exact_mut(2);
            for ((pair, &e), &o) in pairs.by_ref().zip(even).zip(odd) {
                (pair[0], pair[1]) = (e, o);
            }
            if let [last] = pairs.into_remainder() {
                *last = even[tw / 2];
            }
        }
    }

    /// One coloured exchange pass over the copy (all but its outer ring): cells of `colour`
    /// choose, their receivers gain, then they pay. `parity` is that of the world cell at the
    /// copy's (0, 0).
    fn pass(&mut self, nb: Neighbourhood, parity: (usize, usize), colour: usize, rule: Rule) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: this CPU has AVX2 (checked just above).
            unsafe { self.pass_avx2(nb, parity, colour, rule) };
            return;
        }
        self.pass_body(nb, parity, colour, rule);
    }

    /// [`Tile::pass`] compiled for AVX2 (4 `f64` lanes).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn pass_avx2(&mut self, nb: Neighbourhood, parity: (usize, usize), colour: usize, rule: Rule) {
        self.pass_body(nb, parity, colour, rule);
    }

    /// The pass, half row by half row in branch-free loops the compiler turns into SIMD. The
    /// gain of a cell with no feeder and the payment of a cell with no receiver are selected
    /// away (adding `+0.0` would turn a height of `−0.0` into `+0.0`).
    #[inline(always)]
    fn pass_body(&mut self, nb: Neighbourhood, parity: (usize, usize), colour: usize, rule: Rule) {
        let (bw, bh, half) = (self.bw, self.bh, self.half);
        // The half of row ly holding the cells of the colour (0: even columns).
        let choosers = |ly: usize| match nb {
            Neighbourhood::VonNeumann => (colour + parity.0 + parity.1 + ly) & 1,
            _ => (colour + parity.0) & 1,
        };
        // The cells of half q of row ly not on the outer ring: columns 1 ..= bw − 2, so
        // j from 1 − q to (bw − 2 − q) / 2.
        let lanes = |ly: usize, q: usize| {
            let (lo, hi) = (1 - q, (bw - 2 - q) / 2 + 1);
            let at = (2 * ly + q) * half;
            (at + lo, hi - lo)
        };
        // Where the lanes' neighbour o starts, for the lanes of half q of row ly starting at
        // index i: same column in the next or previous row (same half, same j), or one column
        // left (other half, j − 1 + q) or right (other half, j + q).
        let neighbour = |i: usize, q: usize, (dx, dy): (i32, i32)| -> usize {
            let row = (i as isize + dy as isize * 2 * half as isize) as usize;
            match dx {
                0 => row,
                // From half q to half 1 − q of the same row: ± half, then the column shift.
                -1 => {
                    if q == 0 {
                        row + half - 1
                    } else {
                        row - half
                    }
                }
                _ => {
                    if q == 0 {
                        row + half
                    } else {
                        row - half + 1
                    }
                }
            }
        };
        let offsets = nb.offsets();
        let starts = |i: usize, q: usize| [0, 1, 2, 3].map(|o| neighbour(i, q, offsets[o]));
        let (lo, hi) = if rule.gentle { (0.0, rule.talus) } else { (rule.talus, f64::INFINITY) };
        let Self { v, want, dir, kp1, .. } = self;
        // Choose: lowest neighbour (first strict maximum of the drop, in offset order).
        for ly in 1..bh - 1 {
            let q = choosers(ly);
            let (i, m) = lanes(ly, q);
            let [n0, n1, n2, n3] = rows_at(v, starts(i, q), m);
            let centre = &v[i..i + m];
            let (d_row, w_row) = (&mut dir[i..i + m], &mut want[i..i + m]);
            for (((((&h, &a), &b), &c), &d), (dr, wr)) in
                centre.iter().zip(n0).zip(n1).zip(n2).zip(n3).zip(d_row.iter_mut().zip(w_row))
            {
                let mut d_max = 0.0;
                let mut best = NONE;
                for (o, n) in [a, b, c, d].into_iter().enumerate() {
                    let drop = h - n;
                    let lower = drop > d_max;
                    d_max = if lower { drop } else { d_max };
                    best = if lower { o as f64 } else { best };
                }
                // A cell beyond the edge (+∞) has d = NaN or +∞ to its neighbours: it never acts.
                let act = (d_max > lo) & (d_max <= hi) & (h < f64::INFINITY);
                *dr = if act { best } else { NONE };
                *wr = d_max;
            }
        }
        // Gain: each cell of the other half takes d/(k + 1) from each of its k feeders.
        for ly in 1..bh - 1 {
            let q = 1 - choosers(ly);
            let (i, m) = lanes(ly, q);
            let [d0, d1, d2, d3] = rows_at(dir, starts(i, q), m);
            let [w0, w1, w2, w3] = rows_at(want, starts(i, q), m);
            let (v_row, k_row) = (&mut v[i..i + m], &mut kp1[i..i + m]);
            let mut crowded = false;
            for ((((((((vr, kr), &d0), &d1), &d2), &d3), &w0), (&w1, &w2)), &w3) in v_row
                .iter_mut()
                .zip(k_row)
                .zip(d0)
                .zip(d1)
                .zip(d2)
                .zip(d3)
                .zip(w0)
                .zip(w1.iter().zip(w2))
                .zip(w3)
            {
                // The opposite offset of index o is 3 − o in both neighbourhoods.
                let fed = [d0 == 3.0, d1 == 2.0, d2 == 1.0, d3 == 0.0];
                let k = fed.iter().map(|&f| if f { 1.0 } else { 0.0 }).sum::<f64>();
                let kp = k + 1.0;
                *kr = kp;
                // Up to two shares, the first and second feeders' in offset order (two
                // divisions per cell, not four), summed as the exchange sums them; three or
                // more are summed in ascending order below.
                let (mut first, mut second, mut seen) = (0.0, 0.0, false);
                for (f, w) in fed.into_iter().zip([w0, w1, w2, w3]) {
                    second = if f & seen { w } else { second };
                    first = if f & !seen { w } else { first };
                    seen |= f;
                }
                let gain = first / kp + second / kp;
                *vr = if k > 0.0 && k <= 2.0 { *vr + gain } else { *vr };
                crowded |= k > 2.0;
            }
            if crowded {
                gain_crowded(&mut v[i..i + m], &kp1[i..i + m], dir, want, starts(i, q));
            }
        }
        // Pay: each feeder loses what its receiver gained from it.
        for ly in 1..bh - 1 {
            let q = choosers(ly);
            let (i, m) = lanes(ly, q);
            let [k0, k1, k2, k3] = rows_at(kp1, starts(i, q), m);
            let (v_row, d_row, w_row) = (&mut v[i..i + m], &dir[i..i + m], &want[i..i + m]);
            for ((((((vr, &d), &w), &k0), &k1), &k2), &k3) in
                v_row.iter_mut().zip(d_row).zip(w_row).zip(k0).zip(k1).zip(k2).zip(k3)
            {
                let mut kp = 1.0;
                for (o, k) in [k0, k1, k2, k3].into_iter().enumerate() {
                    kp = if d == o as f64 { k } else { kp };
                }
                *vr = if d != NONE { *vr - w / kp } else { *vr };
            }
        }
    }
}

/// The `m` values of `a` from each of `starts`.
fn rows_at(a: &[f64], starts: [usize; 4], m: usize) -> [&[f64]; 4] {
    starts.map(|at| &a[at..at + m])
}

/// The gain of the receivers of three or more feeders (`k + 1 ≥ 4`, left out by the SIMD
/// loop) among the lanes `v_row`, whose neighbour o is at `from[o] + lane`: the shares summed
/// in ascending order, as the exchange does, so the sum does not depend on which side each
/// feeder is on.
#[cold]
fn gain_crowded(v_row: &mut [f64], kp1_row: &[f64], dir: &[f64], want: &[f64], from: [usize; 4]) {
    for (x, (v, &kp)) in v_row.iter_mut().zip(kp1_row).enumerate() {
        if kp < 4.0 {
            continue;
        }
        let mut shares = [0.0f64; 4];
        let mut k = 0;
        for (o, &at) in from.iter().enumerate() {
            if dir[at + x] == (3 - o) as f64 {
                shares[k] = want[at + x] / kp;
                k += 1;
            }
        }
        let shares = &mut shares[..k];
        shares.sort_unstable_by(f64::total_cmp);
        *v += shares.iter().sum::<f64>();
    }
}

#[cfg(test)]
mod tests {
    use terrasynth_noise::rng::{SplitMix64, derive_seed};

    use super::*;
    use crate::erode::exchange::Exchange;
    use crate::grid::{Stencil, Topology};

    /// One sweep by the general coloured exchange, as the levellers ran it before tiles.
    fn exchange_sweep(
        values: &mut [f64],
        stencil: &Stencil,
        nb: Neighbourhood,
        ex: &mut Exchange,
        sweep: u64,
        rule: Rule,
    ) {
        for colour in Exchange::colour_order(nb, sweep) {
            let h = values.to_vec();
            ex.choose(stencil, nb, colour, |x, y, i| {
                let (mut d_max, mut lowest) = (0.0, i);
                stencil.for_each(x, y, |j| {
                    let d = h[i] - h[j];
                    if d > d_max {
                        d_max = d;
                        lowest = j;
                    }
                });
                let act = if rule.gentle { d_max > 0.0 && d_max <= rule.talus } else { d_max > rule.talus };
                act.then_some((lowest, d_max, f64::INFINITY))
            });
            ex.apply(stencil, nb, colour, values);
        }
    }

    #[test]
    fn tiles_give_the_exchange_bits() {
        // Maps narrower and wider than a tile and its halo, several tiles across both ways,
        // heights on a coarse lattice (ties, pits fed from 3 and 4 sides) or continuous.
        let mut cases = 0;
        // Closed maps of odd and even sides; wrapped maps of even sides (`supports`), some
        // narrower than the halo (copied round the map more than once).
        let closed = [(1, 1), (2, 3), (13, 7), (40, 90), (300, 70), (531, 140)];
        let wrapped = [(4, 4), (4, 6), (8, 14), (40, 90), (302, 70), (530, 140)];
        let sizes =
            closed.map(|s| (s, Boundary::Closed)).into_iter().chain(wrapped.map(|s| (s, Boundary::Wrap)));
        for ((w, h), boundary) in sizes {
            for nb in [Neighbourhood::VonNeumann, Neighbourhood::RotatedVonNeumann] {
                for (origin, lattice, gentle) in
                    [((0, 0), true, true), ((-3, 2), false, true), ((5, -7), true, false)]
                {
                    assert!(supports(nb, boundary, (w, h)));
                    let topo = Topology { width: w, height: h, boundary };
                    let stencil = Stencil::new(topo, nb);
                    let seed = derive_seed(cases, 29);
                    let cell = |i: usize| SplitMix64::new(derive_seed(seed, i as u64)).next_f64();
                    let start: Vec<f64> = (0..w * h)
                        .map(|i| if lattice { (cell(i) * 6.0).floor() / 8.0 } else { cell(i) })
                        .collect();
                    let rule = Rule { talus: if gentle { 0.3 } else { 0.1 }, gentle };
                    let mut expected = start.clone();
                    let mut ex = Exchange::at_world_origin(origin.0, origin.1);
                    let (mut src, mut dst) = (start.clone(), vec![0.0; w * h]);
                    for s in 0..4 {
                        exchange_sweep(&mut expected, &stencil, nb, &mut ex, s, rule);
                        let mut order = Exchange::colour_order(nb, s);
                        let order = [order.next().unwrap(), order.next().unwrap()];
                        sweep(&src, &mut dst, (w, h), boundary, nb, ex.origin(), order, rule);
                        std::mem::swap(&mut src, &mut dst);
                        let same = src.iter().zip(&expected).all(|(a, b)| a.to_bits() == b.to_bits());
                        assert!(
                            same,
                            "{w}×{h} {boundary:?} {nb:?} origin {origin:?} gentle {gentle} sweep {s}"
                        );
                    }
                    if w * h >= 100 {
                        assert_ne!(src, start, "{w}×{h} {nb:?}: nothing moved, the case tests nothing");
                    }
                    cases += 1;
                }
            }
        }
        assert_eq!(cases, 12 * 2 * 3);
        assert!(!supports(Neighbourhood::VonNeumann, Boundary::Wrap, (301, 70)));
        assert!(!supports(Neighbourhood::VonNeumann, Boundary::Wrap, (2, 8)));
        assert!(!supports(Neighbourhood::RotatedVonNeumann, Boundary::Wrap, (300, 69)));
        assert!(!supports(Neighbourhood::Moore, Boundary::Closed, (9, 9)));
    }

    #[test]
    fn tiles_are_the_same_on_any_thread_count() {
        // 3 × 10 tiles: the bands of rows go to different threads.
        let (w, h) = (700, 600);
        let start: Vec<f64> =
            (0..w * h).map(|i| SplitMix64::new(derive_seed(41, i as u64)).next_f64()).collect();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let (mut src, mut dst) = (start.clone(), vec![0.0; w * h]);
                for s in 0..3 {
                    let order = if s % 2 == 0 { [0, 1] } else { [1, 0] };
                    let rule = Rule { talus: 0.2, gentle: true };
                    sweep(
                        &src,
                        &mut dst,
                        (w, h),
                        Boundary::Wrap,
                        Neighbourhood::VonNeumann,
                        (1, 0),
                        order,
                        rule,
                    );
                    std::mem::swap(&mut src, &mut dst);
                }
                src.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            })
        };
        let one = run(1);
        assert_ne!(one, start.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "nothing moved");
        assert_eq!(one, run(2));
        assert_eq!(one, run(3));
    }
}
