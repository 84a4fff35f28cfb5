//! Talus: slopes steeper than a critical angle fail, down to that angle (issue 13 §3, "thermal
//! erosion for talus, where it belongs").
//!
//! Above a critical slope, rock and soil do not stay: hillslopes in fast-eroding mountains
//! stand at a threshold angle whatever the rate of incision below them, and what the rivers
//! cut deeper comes down as landslides and scree (Burbank et al. 1996, "Bedrock incision,
//! rock uplift and threshold hillslopes in the northwestern Himalayas", Nature 379; Montgomery
//! & Brandon 2002, "Topographic controls on erosion rates in tectonically active mountain
//! ranges", EPSL 201). Olsen's thermal erosion (seed 001 §3) moves material to lower
//! neighbours a fraction at a time, everywhere the height difference exceeds `T`; run to the
//! end on a grid it leaves slopes shaped by the 4 or 8 neighbours it compares. This rule goes
//! straight to that end, without the grid: every cell comes down to the highest surface below
//! the map whose slope nowhere exceeds the critical one, the lower envelope of the cones
//! `z(s) + S_c·|x − s|` (Euclidean distance) over all cells `s`. Cells on gentler ground keep
//! their height exactly, so the rule acts only where the slope is above `S_c`.
//!
//! The envelope is computed by vector propagation (Danielsson 1980, "Euclidean distance
//! mapping", Computer Graphics and Image Processing 14): each lowered cell keeps the cell
//! whose cone lowered it, and four sweeps, one from each corner, hand these sources on from
//! neighbour to neighbour, so each cone is the exact Euclidean one: round (around one low
//! cell, exact in every direction: test `a_single_low_cell_leaves_a_round_cone`). Schemes
//! that interpolate between neighbours (the upwind eikonal update on 4 or 8 neighbours) leave
//! cones a little polygonal and turned the failed slopes towards the grid's directions on
//! `eroded-island` (docs/EROSION.md, "Session 52").

/// Brings every cell of `z` (a `w`-wide row-major grid of cells `dx` apart) down to the lower
/// envelope of the cones of slope `critical` (height per unit of `dx`) standing on the cells,
/// and returns the volume removed (height × cells). Cells with `fixed` set never move (but
/// their cones count). Sequential: the same result on any thread count.
///
/// Each sweep lowers a cell to the least of the cones handed on by its four neighbours on the
/// side the sweep comes from (each neighbour's own cone, or the cone of the cell that lowered
/// it). A source lowered later still gives a cone through it, an upper bound, so the result
/// never goes below the exact envelope; where a cone's region is too thin to be handed on
/// from neighbour to neighbour it stays a little above it (on average 0.3 % of a cell's climb
/// `critical·dx` on the test's fields, at most a sixth of it). Gentle ground (no cell steeper
/// than `critical` above any other) does not move.
pub(crate) fn fail_steep_slopes(z: &mut [f64], w: usize, dx: f64, critical: f64, fixed: &[bool]) -> f64 {
    let n = z.len();
    if n == 0 || w < 2 || n / w < 2 || critical <= 0.0 || !critical.is_finite() {
        return 0.0;
    }
    let h = n / w;
    let f = critical * dx;
    let volume_before: f64 = z.iter().sum();
    // Where each cell's source lies from it, (x, y) as two i16 in a u32; (0, 0) while no cone
    // has lowered it. A source farther than i16 reaches is not handed on (an upper bound).
    let mut source = vec![0u32; n];
    for (down, right) in [(true, true), (true, false), (false, true), (false, false)] {
        // The neighbours a sweep comes from, as steps (x, y) from the cell, and their distance.
        let (bx, uy) = (if right { -1 } else { 1 }, if down { -1 } else { 1 });
        let from = [(bx, 0), (0, uy), (bx, uy), (-bx, uy)];
        let steps = [f, f, f * std::f64::consts::SQRT_2, f * std::f64::consts::SQRT_2];
        let offsets = from.map(|(sx, sy)| sy * w as isize + sx);
        // One cell: the least of its own height and the cones its neighbours hand on (all four
        // inside the map where `inside`, else each checked).
        let mut relax = |z: &mut [f64], x: usize, y: usize, inside: bool| {
            let c = y * w + x;
            if fixed[c] {
                return;
            }
            let (mut best, mut best_source) = (z[c], source[c]);
            for k in 0..4 {
                let (sx, sy) = from[k];
                if !inside {
                    let (nx, ny) = (x as isize + sx, y as isize + sy);
                    if nx < 0 || nx >= w as isize || ny < 0 || ny >= h as isize {
                        continue;
                    }
                }
                let nb = (c as isize + offsets[k]) as usize;
                let (u, ex, ey) = match source[nb] {
                    // An unmoved neighbour: its own cone, one step away.
                    0 => (z[nb] + steps[k], sx, sy),
                    packed => {
                        // The neighbour's source, seen from this cell.
                        let (ox, oy) = unpack(packed);
                        let (ex, ey) = (ox + sx, oy + sy);
                        let s = (c as isize + ey * w as isize + ex) as usize;
                        (z[s] + f * ((ex * ex + ey * ey) as f64).sqrt(), ex, ey)
                    }
                };
                if u < best
                    && let (Ok(ex), Ok(ey)) = (i16::try_from(ex), i16::try_from(ey))
                {
                    best = u;
                    best_source = pack(ex, ey);
                }
            }
            z[c] = best;
            source[c] = best_source;
        };
        for yi in 0..h {
            let y = if down { yi } else { h - 1 - yi };
            let edge_row = yi == 0 || yi == h - 1;
            for xi in 0..w {
                let x = if right { xi } else { w - 1 - xi };
                relax(z, x, y, !edge_row && xi != 0 && xi != w - 1);
            }
        }
    }
    volume_before - z.iter().sum::<f64>()
}

fn pack(dx: i16, dy: i16) -> u32 {
    (dx as u16 as u32) | ((dy as u16 as u32) << 16)
}

fn unpack(v: u32) -> (isize, isize) {
    ((v as u16 as i16) as isize, ((v >> 16) as u16 as i16) as isize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth field: a sum of waves in random directions (slopes up to about 3).
    fn waves(n: usize, seed: u64) -> Vec<f64> {
        let mut r = terrasynth_noise::rng::SplitMix64::new(seed);
        let tau = std::f64::consts::TAU;
        let waves: Vec<(f64, f64, f64, f64)> = (0..40)
            .map(|_| {
                let a = r.range_f64(0.0, tau);
                let k = r.range_f64(0.03, 0.15);
                (k * a.cos(), k * a.sin(), r.range_f64(0.0, tau), 0.4 / k)
            })
            .collect();
        (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f64, (i / n) as f64);
                waves.iter().map(|(kx, ky, p, amp)| amp * (kx * x + ky * y + p).sin()).sum()
            })
            .collect()
    }

    #[test]
    fn a_single_low_cell_leaves_a_round_cone() {
        let n = 101;
        let mut z = vec![1e3; n * n];
        z[50 * n + 50] = 0.0;
        fail_steep_slopes(&mut z, n, 2.0, 0.5, &vec![false; n * n]);
        for y in 0..n {
            for x in 0..n {
                let d = ((x as f64 - 50.0).powi(2) + (y as f64 - 50.0).powi(2)).sqrt();
                // Height = slope × distance in length units (dx = 2), in every direction.
                assert!((z[y * n + x] - 0.5 * 2.0 * d).abs() < 1e-9, "({x}, {y}): {}", z[y * n + x]);
            }
        }
    }

    /// Brute force: the least over every cell `s` of `z(s) + critical·dx·|x − s|`.
    fn envelope(z: &[f64], w: usize, dx: f64, critical: f64, fixed: &[bool]) -> Vec<f64> {
        (0..z.len())
            .map(|c| {
                if fixed[c] {
                    return z[c];
                }
                let (cx, cy) = ((c % w) as f64, (c / w) as f64);
                (0..z.len())
                    .map(|s| {
                        let (ex, ey) = ((s % w) as f64 - cx, (s / w) as f64 - cy);
                        z[s] + critical * dx * (ex * ex + ey * ey).sqrt()
                    })
                    .fold(f64::INFINITY, f64::min)
            })
            .collect()
    }

    #[test]
    fn the_result_is_the_lower_envelope_of_the_cones() {
        let n = 48;
        for (seed, dx, critical) in [(3u64, 1.0, 1.0), (4, 2.0, 0.4), (5, 0.5, 1.5)] {
            let z = waves(n, seed);
            let no_fixed = vec![false; n * n];
            let mut got = z.clone();
            let removed = fail_steep_slopes(&mut got, n, dx, critical, &no_fixed);
            let want = envelope(&z, n, dx, critical, &no_fixed);
            let lowered = got.iter().zip(&z).filter(|(g, z)| g < z).count();
            assert!(lowered > n * n / 10, "seed {seed}: only {lowered} cells steep enough to fail");
            let f = critical * dx;
            for (c, (g, e)) in got.iter().zip(&want).enumerate() {
                // Never below the envelope, never above the map, and near the envelope.
                assert!(*g >= e - 1e-9 && *g <= z[c], "seed {seed}, cell {c}: {g} against {e}");
                assert!(g - e < 0.25 * f, "seed {seed}, cell {c}: {} above the envelope", g - e);
            }
            // Vector propagation misses the best source in some cells (where a cone's region is
            // too thin to hand it on), by a small part of a cell's climb (at most 0.16 and 0.3 %
            // on average on these fields).
            let mean = got.iter().zip(&want).map(|(g, e)| (g - e) / f).sum::<f64>() / (n * n) as f64;
            assert!(mean < 0.01, "seed {seed}: {mean} of a cell's climb above the envelope on average");
            let sum = |v: &[f64]| v.iter().sum::<f64>();
            assert!((removed - (sum(&z) - sum(&got))).abs() < 1e-9 * sum(&z).abs().max(1.0));
        }
    }

    #[test]
    fn gentle_ground_and_fixed_cells_do_not_move() {
        let n = 40;
        // Slopes of at most 0.3 everywhere: nothing fails at 0.35.
        let gentle: Vec<f64> =
            (0..n * n).map(|i| 0.3 * ((i % n) as f64 * 0.7).sin() + 0.1 * (i / n) as f64).collect();
        let mut z = gentle.clone();
        assert_eq!(fail_steep_slopes(&mut z, n, 1.0, 0.35, &vec![false; n * n]), 0.0);
        assert_eq!(z, gentle);
        // A steep field with its middle column fixed: that column keeps its heights.
        let steep = waves(n, 9);
        let fixed: Vec<bool> = (0..n * n).map(|i| i % n == n / 2).collect();
        let mut z = steep.clone();
        fail_steep_slopes(&mut z, n, 1.0, 0.5, &fixed);
        for c in (0..n * n).filter(|&c| fixed[c]) {
            assert_eq!(z[c], steep[c]);
        }
        assert!(z.iter().zip(&steep).any(|(a, b)| a < b));
    }
}
