//! Flat valley floors beside the rivers: the floodplains a channel planes out as it swings
//! from side to side, which a stream-power model with one-cell channels does not make
//! (issue 13 §4, "flat deposition plains"). Used by [`StreamPowerEroder`](super::StreamPowerEroder)
//! after its last step (`floodplain-area`, `floodplain-depth`).
//!
//! Each cell is measured by its **height above the nearest drainage** (HAND; Rennó et al.
//! 2008, "HAND, a new terrain descriptor using SRTM-DEM", Remote Sensing of Environment
//! 112:3469–3481): follow its flow path down to the first river cell `k`, a cell draining
//! at least `A_f` cells (`floodplain-area`), and take `HAND = z − z_k`, `z_k` the river's
//! water level there: its height, or where it lies in a hollow of the channel (below the next
//! river cell downstream; the routing climbs out of it) the level of its spill, so the floor
//! beside a hollow is not planed down into a lake. Valley floors are the cells of small HAND.
//! The flood depth that planes them grows downstream with the river as `D_k = D·(A_k/A_f)^0.4`
//! (`D` = `floodplain-depth`; a channel's depth grows as discharge to the power 0.4, Leopold &
//! Maddock 1953, USGS Professional Paper 252), so large rivers get wide floors and small ones
//! narrow strips.
//!
//! How far a cell is planed follows its neighbourhood's HAND, not its own: `H̄`, the mean HAND
//! of the 3 × 3 cells around it (those draining to a river, river cells counting 0; session
//! 49). On a hillside cut by rills a cell's own HAND changes from groove to rib every few
//! cells, and floors planed by it had edges notched at every rill (sessions 47–48); the mean's
//! contours are smoother. A wider mean (a 5 × 5 square or a disc of 21 cells) smoothed the
//! edges a little more but put the grid's 8-fold signature of `highlands` out of range at 4
//! more runs of 144 (docs/EROSION.md, "Session 49"). A cell's new height is
//!
//! `z' = max(min(z, z_k + r + (H̃ − r)·s), next_up(z'_rcv))`, `s = smoothstep(H̄/D_k from 0.5 to 1)`,
//! `H̃ = H̄ + (HAND − H̄)·s`, `r = min(HAND, max(0.05·HAND, 1.5·S_k·p))`,
//!
//! with `S_k` the slope of the river's level at `k`, `p` the cell's flow-path length to `k` in
//! cells and `z'_rcv` its receiver's new height. Below `H̄ = D_k/2` the floor is flat but for
//! `r`, which tilts it towards the river at one and a half times the river's slope (so water on
//! the floor runs to the river, not beside it down the valley: without the tilt, floor cells
//! drained in long parallel lines and Hack's exponent of `highlands` rose by 0.02–0.03), and
//! above `H̄ = D_k` the valley side is left as it was, with a smooth wall between whose relief
//! `H̃` goes from the mean's to the cell's own. Cells only come down (lateral planation, not
//! deposition: `z' ≤ z`), river cells keep their height, and wherever a flow path fell it still
//! falls: a cell is planed after its receiver (down the stack) and stays above the receiver's
//! new height (`next_up`, the next float up, which the cell's old height allows where the path
//! fell), so no closed depression is made on a routing that descends (one that crosses a
//! depression climbs to its pass, and there nothing is promised). Base level (the sea, the
//! map's edges) is neither planed nor a river to plane towards: a river's mouth in the sea
//! drains a whole basin, and planing the coast down to the sea floor would drown it. One pass
//! down the stack for the rivers and HAND, one over the cells near a floor for the means, and
//! one over those cells in stack order to plane: sequential, the same bytes on any thread
//! count.

/// The floor's least rise over the river, as a share of the cell's height above it.
const FLOOR_RISE: f64 = 0.05;
/// The floor's tilt towards the river, in units of the river's own slope.
const FLOOR_TILT: f64 = 1.5;
/// Half the side of the square (3 × 3 cells) whose mean HAND decides how far a cell is planed.
const SMOOTH_RADIUS: usize = 1;
/// Cells at most this many flood depths above their river may be planed (their neighbourhood
/// may lie lower than they do).
const SMOOTH_REACH: f64 = 2.0;
/// Exponent of the flood depth's growth with drainage area (Leopold & Maddock's depth–discharge
/// exponent).
const DEPTH_EXPONENT: f64 = 0.4;

/// Planes the floodplains of `z` (`width` cells a row) from the routing it was last routed
/// with: each cell's `receiver` (itself at outlets), the `stack` (every cell after its
/// receiver) and the drainage area `cells` in cells; `base` marks base level. `area` = `A_f`
/// in cells, `depth` = `D` in height units (either 0: nothing changes). `scratch` and
/// `hands` are any buffers of `z`'s length.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plane(
    z: &mut [f64],
    width: usize,
    receiver: &[u32],
    stack: &[u32],
    cells: impl Fn(usize) -> f64,
    base: &[bool],
    area: f64,
    depth: f64,
    scratch: &mut [f64],
    hands: &mut [f64],
) {
    if !(area > 0.0 && depth > 0.0) || z.is_empty() {
        return;
    }
    let n = z.len();
    debug_assert!(
        receiver.len() == n && stack.len() == n && base.len() == n && scratch.len() == n && hands.len() == n
    );
    let step = |a: usize, b: usize| crate::grid::d8_link_length(a, b, width);
    // The river each cell drains to first and the length of the path there, walked from the
    // outlets up so a receiver is known before its donors. Each cell's entry of `scratch`
    // packs the two (no new buffer to fault in): the river's number in `rivers` in its high 32
    // bits (`NONE`: no river on the way), the path length as an `f32` in its low ones (0 for a
    // river cell).
    const NONE: u32 = u32::MAX;
    let pack = |k: u32, v: f32| f64::from_bits(((k as u64) << 32) | v.to_bits() as u64);
    let unpack = |e: f64| ((e.to_bits() >> 32) as u32, f32::from_bits(e.to_bits() as u32));
    scratch.fill(pack(NONE, 0.0));
    let mut rivers: Vec<River> = Vec::new();
    // The cells close enough above their river to be planed, in stack order.
    let mut near = Vec::new();
    for &c in stack {
        let c = c as usize;
        // Each cell's HAND (0 for a river cell), NaN with no river downstream (the stack holds
        // every cell once).
        hands[c] = f64::NAN;
        if base[c] {
            continue;
        }
        let r = receiver[c] as usize;
        let (down, before) = unpack(scratch[r]);
        let a = cells(c);
        if a >= area && rivers.len() < NONE as usize {
            // A river cell: its water level is its own height, or the level downstream where
            // it lies in a hollow of the channel (planing beside it to its own height would
            // widen the hollow into a lake); its slope is the level's.
            let (level, slope) = match rivers.get(down as usize) {
                _ if r == c => (z[c], 0.0),
                Some(d) => {
                    let level = z[c].max(d.level);
                    (level, (level - d.level) / step(c, r))
                }
                // Into base level (the sea, the edge).
                None => (z[c], ((z[c] - z[r]) / step(c, r)).max(0.0)),
            };
            let flood = depth * terrasynth_noise::detmath::pow(a / area, DEPTH_EXPONENT);
            scratch[c] = pack(rivers.len() as u32, 0.0);
            hands[c] = (z[c] - level).max(0.0);
            rivers.push(River { level, slope, flood });
            continue;
        }
        if r == c || down == NONE {
            continue;
        }
        scratch[c] = pack(down, before + step(c, r) as f32);
        let river = &rivers[down as usize];
        let hand = z[c] - river.level;
        hands[c] = hand.max(0.0);
        if hand > 0.0 && hand < SMOOTH_REACH * river.flood {
            near.push(c as u32);
        }
    }
    // Each of them gets the mean HAND of its neighbourhood (river cells count 0), read before
    // anything is planed.
    let height = n / width;
    let means: Vec<f64> = near
        .iter()
        .map(|&c| {
            let c = c as usize;
            let (x, y) = (c % width, c / width);
            let (mut sum, mut count) = (0.0, 0u32);
            for ny in y.saturating_sub(SMOOTH_RADIUS)..(y + SMOOTH_RADIUS + 1).min(height) {
                for nx in x.saturating_sub(SMOOTH_RADIUS)..(x + SMOOTH_RADIUS + 1).min(width) {
                    let hand = hands[ny * width + nx];
                    if !hand.is_nan() {
                        sum += hand;
                        count += 1;
                    }
                }
            }
            sum / count as f64
        })
        .collect();
    // Planed from the outlets up, so each cell's receiver has its final height.
    for (&c, &mean) in near.iter().zip(&means) {
        let c = c as usize;
        let (k, p) = unpack(scratch[c]);
        let River { level, slope, flood } = rivers[k as usize];
        let s = ((mean / flood - 0.5) / 0.5).clamp(0.0, 1.0);
        if s >= 1.0 {
            // The valley side above the flood keeps its bits.
            continue;
        }
        let hand = z[c] - level;
        let s = terrasynth_noise::detmath::smoothstep(s);
        let rise = (FLOOR_RISE * hand).max(FLOOR_TILT * slope * p as f64).min(hand);
        // The wall follows the mean HAND, the cell's own relief fading in towards its top.
        let relief = mean + (hand - mean) * s;
        // Never above the cell's own height, whatever the rounding; never down to its
        // receiver's or below (where the path fell before, its old height allows that).
        let planed = (level + rise + (relief - rise) * s).min(z[c]);
        let above = z[receiver[c] as usize].next_up().min(z[c]);
        z[c] = planed.max(above);
    }
}

/// A river cell's water level (its height, or the level downstream where it lies in a hollow
/// of the channel), the level's slope to the next river cell, and its flood depth.
#[derive(Clone, Copy)]
struct River {
    level: f64,
    slope: f64,
    flood: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hydro::StreamPowerRouter;

    /// Routes `z` (`w × h`, outlets on the west edge) with the stream-power router and returns
    /// (receivers, stack, area in cells, base level).
    fn route(z: &[f64], w: usize, h: usize) -> (Vec<u32>, Vec<u32>, Vec<f64>, Vec<bool>) {
        let base: Vec<bool> = (0..w * h).map(|i| i % w == 0).collect();
        let mut router = StreamPowerRouter::default();
        router.compute(z, w, h, 1.0, &base);
        (router.receiver.clone(), router.stack.clone(), router.area.clone(), base)
    }

    /// The routing of `z0` (as [`route`]) and `z0` planed on it with `A_f` = `a_f` cells and
    /// `D` = `depth`.
    struct Planed {
        z: Vec<f64>,
        receiver: Vec<u32>,
        area: Vec<f64>,
        base: Vec<bool>,
    }

    fn planed(z0: &[f64], w: usize, h: usize, a_f: f64, depth: f64) -> Planed {
        let (receiver, stack, area, base) = route(z0, w, h);
        let mut z = z0.to_vec();
        let (mut scratch, mut hands) = (vec![0.0; w * h], vec![0.0; w * h]);
        plane(&mut z, w, &receiver, &stack, |c| area[c], &base, a_f, depth, &mut scratch, &mut hands);
        Planed { z, receiver, area, base }
    }

    /// A valley down to the west: a river along the middle row falling 0.002 a cell, sides
    /// rising 0.01 a cell away from it, and small bumps so the sides are not planes.
    fn valley(w: usize, h: usize) -> Vec<f64> {
        let mid = (h / 2) as f64;
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f64, (i / w) as f64);
                0.002 * x + 0.01 * (y - mid).abs() + 1e-4 * ((x * 0.7).sin() * (y * 1.3).cos()).abs()
            })
            .collect()
    }

    /// Every cell whose receiver was strictly lower before is still strictly above it after:
    /// planing makes no closed depression on a strictly descending routing.
    fn assert_descent_kept(before: &[f64], after: &[f64], receiver: &[u32]) {
        for (c, &r) in receiver.iter().enumerate() {
            let r = r as usize;
            if r != c && before[c] > before[r] {
                assert!(after[c] > after[r], "cell {c} no longer above its receiver {r}");
            }
        }
    }

    #[test]
    fn a_valley_gets_a_flat_floor_and_keeps_its_sides_and_river() {
        let (w, h) = (80, 41);
        let z0 = valley(w, h);
        let (a_f, depth) = (200.0, 0.05);
        let Planed { z, receiver, area, base } = planed(&z0, w, h, a_f, depth);
        let river: Vec<bool> = area.iter().map(|&a| a >= a_f).collect();
        assert!(river.iter().filter(|&&r| r).count() > w / 2, "the middle row is a river");
        let mut floor = 0;
        for c in 0..w * h {
            // Nothing rises, river cells keep their bits.
            assert!(z[c] <= z0[c], "cell {c} rose");
            if river[c] {
                assert_eq!(z[c].to_bits(), z0[c].to_bits(), "river cell {c} moved");
            }
            // Base level is not planed, nor planed towards (the outlets drain the whole valley).
            if base[c] || base[receiver[c] as usize] {
                assert_eq!(z[c].to_bits(), z0[c].to_bits(), "cell {c} at or into base level moved");
            }
        }
        // Beside the lower river (its flood depth at least `depth`), cells less than half a
        // flood depth above it are planed to within the floor's rise; well above, nothing moves.
        for x in 1..w / 2 {
            let k = (h / 2) * w + x;
            if !river[k] {
                continue;
            }
            for y in 0..h {
                let c = y * w + x;
                let hand = z0[c] - z0[k];
                if river[c] || hand <= 0.0 || receiver[c] as usize != c && z0[receiver[c] as usize] >= z0[c] {
                    continue;
                }
                let flood = depth * terrasynth_noise::detmath::pow(area[k] / a_f, DEPTH_EXPONENT);
                if hand < 0.5 * flood {
                    // On this valley the side falls straight to the river (the path is the
                    // distance to it, at most √2 a step): the floor keeps at most a tenth of
                    // its height above the river, or its tilt of 1.5 times the river's slope.
                    let path = std::f64::consts::SQRT_2 * (y as f64 - (h / 2) as f64).abs();
                    let bound = (0.1 * hand).max(1.5 * 0.002 * path);
                    assert!(z[c] - z0[k] <= bound + 1e-12, "({x}, {y}): {} above the river", z[c] - z0[k]);
                    floor += 1;
                } else if hand > 1.5 * flood {
                    assert_eq!(z[c].to_bits(), z0[c].to_bits(), "({x}, {y}) on the valley side moved");
                }
            }
        }
        assert!(floor > 100, "only {floor} floor cells checked");
        assert_descent_kept(&z0, &z, &receiver);
        // Water on the floor runs to the river, not beside it down the valley: each planed
        // cell's steepest way down (D8, drop over distance) leads closer to the middle row.
        let mid = (h / 2) as i64;
        let mut planed = 0;
        for c in 0..w * h {
            let (x, y) = ((c % w) as i64, (c / w) as i64);
            if river[c] || z[c] == z0[c] || x == 0 || x + 1 == w as i64 || y == 0 || y + 1 == h as i64 {
                continue;
            }
            let steepest = (-1..=1i64)
                .flat_map(|dy| (-1..=1i64).map(move |dx| (dx, dy)))
                .filter(|&d| d != (0, 0))
                .map(|(dx, dy)| {
                    let n = ((y + dy) * w as i64 + x + dx) as usize;
                    ((z[c] - z[n]) / ((dx * dx + dy * dy) as f64).sqrt(), y + dy)
                })
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap();
            assert!((steepest.1 - mid).abs() < (y - mid).abs(), "({x}, {y}) drains along the floor");
            planed += 1;
        }
        assert!(planed > 100, "only {planed} planed cells");
    }

    /// A hollow in the channel (a river cell below the next one downstream) is not widened
    /// into a lake: the floor beside it is planed to the river's level at the hollow's spill,
    /// not to the hollow's bottom.
    #[test]
    fn a_hollow_in_the_channel_is_planed_to_its_spill_level() {
        let (w, h) = (80, 41);
        let mid = h / 2;
        let mut z0 = valley(w, h);
        let (hollow, spill) = (mid * w + 20, mid * w + 19);
        z0[hollow] -= 0.01;
        assert!(z0[hollow] < z0[spill]);
        let Planed { z, .. } = planed(&z0, w, h, 200.0, 0.05);
        let beside: Vec<usize> = [hollow - w, hollow + w, hollow - w + 1, hollow + w + 1].into();
        assert!(beside.iter().any(|&c| z[c] < z0[c]), "nothing beside the hollow was planed");
        for c in beside {
            assert!(z[c] >= z0[spill], "cell {c} planed to {} below the spill {}", z[c], z0[spill]);
        }
    }

    #[test]
    fn no_area_or_depth_changes_nothing() {
        let (w, h) = (30, 21);
        let z0 = valley(w, h);
        for (a_f, depth) in [(0.0, 0.05), (100.0, 0.0), (1e9, 0.05)] {
            let Planed { z, .. } = planed(&z0, w, h, a_f, depth);
            assert!(z.iter().zip(&z0).all(|(a, b)| a.to_bits() == b.to_bits()), "{a_f}, {depth}");
        }
    }

    /// On rough terrain routed across its depressions (receivers may climb to a pass), cells
    /// only come down, and wherever a receiver was strictly lower it stays strictly lower.
    #[test]
    fn rough_terrain_only_comes_down_and_keeps_its_descents() {
        let (w, h) = (64, 48);
        let mut rng = terrasynth_noise::rng::SplitMix64::new(3);
        let z0: Vec<f64> = valley(w, h).iter().map(|v| v + 0.004 * rng.next_f64()).collect();
        let Planed { z, receiver, .. } = planed(&z0, w, h, 30.0, 0.04);
        assert!(z.iter().zip(&z0).all(|(a, b)| a <= b));
        assert!(z.iter().zip(&z0).filter(|(a, b)| a < b).count() > w * h / 20, "little was planed");
        assert_descent_kept(&z0, &z, &receiver);
    }

    /// Rills down the valley sides (grooves every 4 columns) make the cells' own HAND jagged
    /// along the valley; the floor's edge follows the mean HAND, so where the planing stops
    /// moves far less from column to column than where the cells' own HAND crosses the flood
    /// depth (where it stopped before).
    #[test]
    fn rills_on_the_sides_do_not_notch_the_floor() {
        let (w, h) = (120, 61);
        let mid = h / 2;
        let z0: Vec<f64> = valley(w, h)
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let (x, y) = ((i % w) as f64, (i / w) as f64);
                let groove = 0.5 + 0.5 * (std::f64::consts::TAU * x / 4.0).cos();
                v + 0.04 * groove * ((y - mid as f64).abs() / 3.0).min(1.0)
            })
            .collect();
        let (a_f, depth) = (200.0, 0.025);
        let Planed { z, receiver, area, .. } = planed(&z0, w, h, a_f, depth);
        assert_descent_kept(&z0, &z, &receiver);
        // North of the river, per column of the lower valley: the rows planed (up to the top
        // of the wall) and the rows whose own HAND is under the flood depth.
        let (mut floor, mut own) = (Vec::new(), Vec::new());
        for x in 6..w / 2 {
            let k = mid * w + x;
            if area[k] < a_f || receiver[k] as usize != k - 1 {
                continue;
            }
            let flood = depth * terrasynth_noise::detmath::pow(area[k] / a_f, DEPTH_EXPONENT);
            let rows = |f: &dyn Fn(usize) -> bool| (1..mid).take_while(|&d| f(k - d * w)).count();
            floor.push(rows(&|c| z[c] < z0[c]));
            own.push(rows(&|c| z0[c] - z0[k] < flood));
        }
        assert!(floor.len() > 30, "only {} columns", floor.len());
        // How far the edge moves in all from column to column (the width shrinks upstream
        // by a few rows: that much is the valley, the rest is notches).
        let travel = |v: &[usize]| v.windows(2).map(|p| p[0].abs_diff(p[1])).sum::<usize>();
        assert!(floor.iter().all(|&n| n >= 2), "no floor in some column: {floor:?}");
        assert!(travel(&own) >= 20, "the rills do not notch HAND: {own:?}");
        assert!(2 * travel(&floor) <= travel(&own), "the floor's edge is notched: {floor:?} (HAND: {own:?})");
    }
}
