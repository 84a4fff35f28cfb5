//! Squig-curve rivers on triangular midpoint displacement (Prusinkiewicz & Hammel 1993, "A
//! Fractal Model of Mountains with Rivers", Graphics Interface '93; seed 001 §2.1).
//!
//! The square `(2^d + 1)²` grid is split along its anti-diagonal into two right isosceles
//! triangles; each level splits every triangle into four through its edge midpoints, so every
//! vertex at leg length `s` lies on the lattice of multiples of `s`.
//!
//! **River (squig curve).** River triangles label their edges *entry*, *exit* or neutral. The
//! main river enters the first root triangle through the west map edge, crosses the diagonal,
//! and leaves the second through the east or south edge. On subdivision, each labelled edge
//! keeps one of its two halves, chosen at random once per edge (so both triangles sharing it
//! agree); the corner child holding the chosen entry half routes to the corner child holding
//! the chosen exit half through the central child, or directly when it is the same corner
//! (seed 001 §2.1.1). Tributaries (the branching seed 001 §2.1.3 proposes): at level
//! `branch-level`, a few river triangles turn a neutral edge into a second entry; a triangle
//! with two entries routes both to its exit, so the network is a tree of confluences.
//!
//! **Heights.** Triangular midpoint displacement: a new vertex is the mean of its edge's two
//! endpoints plus `a_ℓ · u`, `u` uniform in [−1, 1) from a hash of (seed, level, cell),
//! `a_ℓ = roughness · 2^(−smoothness · ℓ)`; corners start uniform in [0, 1). The river
//! vertices of a level are the midpoints of the edges the river crosses; they only take the
//! downward part `mean − a_ℓ·|u|`, then, visited from sources to mouth, each is clamped to at
//! most the minimum of (a) the river vertices upstream of it and (b) its non-river
//! 8-neighbours on the current lattice (seed 001 §2.1.2: "au plus la valeur minimale des
//! sommets voisins ne faisant pas passer la rivière"). Applied at every level, this carves a
//! valley at every scale, and at the last level it guarantees that heights never increase
//! downstream along the final river. The result is normalised to [0, 1] and turned by one of
//! the 8 symmetries of the square (from the seed), so rivers run in any direction.
//!
//! Limits (seed 001 §2.1.3): slopes along the river are gentle; valleys can be asymmetric.

use std::collections::{HashMap, HashSet};

use terrasynth_noise::rng::{SplitMix64, derive_seed, mix64};

use super::HydroLayers;
use super::rivers::{River, RiverPoint};
use crate::step::params::step_params;
use crate::step::{Category, DefaultValue, ParamKind as K, Step, StepContext, StepInfo, Terrain};
use crate::{Error, Heightmap, Result};

/// Largest detail level (grid side `2^d + 1`).
pub const MAX_DETAIL: u32 = 14;

step_params! {
    /// The squig-curve river generator (see the module docs for the algorithm and parameters).
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct SquigRivers {
        roughness: f32 = ParamSpec {
            name: "roughness",
            kind: K::Float { min: 0.0, max: 4.0 },
            default: DefaultValue::Number(0.5),
            unit: "",
            doc: "Midpoint displacement amplitude at the first level, as a fraction of the height range; it \
                  halves (× 2^-smoothness) at each level. Higher is more rugged.",
        },
        smoothness: f32 = ParamSpec {
            name: "smoothness",
            kind: K::Float { min: 0.0, max: 4.0 },
            default: DefaultValue::Number(1.0),
            unit: "",
            doc: "Amplitude decay exponent H: displacement scales by 2^-H per level (1 = classic fractal \
                  terrain, higher is smoother).",
        },
        tributaries: usize = ParamSpec {
            name: "tributaries",
            kind: K::Int { min: 0, max: 64 },
            default: DefaultValue::Number(2.0),
            unit: "",
            doc: "Number of tributaries joining the main river (squig-curve branching, seed 001 §2.1.3).",
        },
        branch_level: usize = ParamSpec {
            name: "branch-level",
            kind: K::Int { min: 1, max: 12 },
            default: DefaultValue::Number(2.0),
            unit: "",
            doc: "Subdivision level at which tributaries spring (clamped to the last level): lower gives \
                  longer tributaries.",
        },
    }
}

/// A generated terrain and its river network.
#[derive(Clone, Debug)]
pub struct SquigOutput {
    /// Heights in [0, 1].
    pub height: Heightmap,
    /// River polylines, sources first; the main river first. Tributaries end at their junction.
    pub rivers: Vec<River>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    Neutral,
    Entry,
    Exit,
}

type P = (i64, i64);

#[derive(Clone, Copy, Debug)]
struct Tri {
    v: [P; 3],
    /// Label of edge k = (v[k], v[(k+1) % 3]).
    lab: [Label; 3],
}

fn mid(a: P, b: P) -> P {
    ((a.0 + b.0) / 2, (a.1 + b.1) / 2)
}

impl SquigRivers {
    /// Checks the parameter ranges (NaN refused) against [`SquigRivers::PARAMS`].
    pub fn validate(&self) -> Result<()> {
        self.check_ranges()
    }

    /// The registry entry of the `squig-rivers` generator.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "squig-rivers",
            category: Category::Generate,
            doc: "Triangular midpoint displacement with a squig-curve river (and tributaries) whose heights never \
                  rise downstream and stay below the neighbouring terrain.",
            source: "Prusinkiewicz & Hammel 1993; seed 001 §2.1",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(SquigStep { generator: Self::read_params(p)? })),
        }
    }

    /// Generates a `(2^detail + 1)²` terrain (detail in 1..=[`MAX_DETAIL`]).
    pub fn generate(&self, detail: u32, cell_size: f64, seed: u64) -> Result<SquigOutput> {
        self.validate()?;
        if !(1..=MAX_DETAIL).contains(&detail) {
            return Err(Error::param("detail", detail, format!("an integer in 1..={MAX_DETAIL}")));
        }
        let n = 1i64 << detail;
        let side = (n + 1) as usize;
        let mut z = vec![0.0f32; side * side];
        let at = |p: P| p.1 as usize * side + p.0 as usize;
        let mut rng = SplitMix64::new(derive_seed(seed, 1));
        for c in [(0, 0), (n, 0), (0, n), (n, n)] {
            z[at(c)] = rng.next_f64() as f32;
        }
        let t2_exit = if rng.next_u64() & 1 == 0 {
            [Label::Exit, Label::Neutral]
        } else {
            [Label::Neutral, Label::Exit]
        };
        let mut tris = vec![
            Tri { v: [(0, 0), (n, 0), (0, n)], lab: [Label::Neutral, Label::Exit, Label::Entry] },
            Tri { v: [(n, 0), (n, n), (0, n)], lab: [t2_exit[0], t2_exit[1], Label::Entry] },
        ];
        let branch_level = (self.branch_level as u32).min(detail - 1);
        let hash_seed = derive_seed(seed, 2);
        let mut s = n;
        let mut level = 0u32;
        let mut graph: Vec<(P, P)> = Vec::new();
        while s >= 2 {
            let half = s / 2;
            if level == branch_level {
                self.add_tributaries(&mut tris, &mut rng);
            }
            // River graph of this level: entry midpoint → exit midpoint of each river triangle.
            graph.clear();
            for t in &tris {
                let x = (0..3).find(|&k| t.lab[k] == Label::Exit).expect("a river triangle has an exit");
                let xm = mid(t.v[x], t.v[(x + 1) % 3]);
                for k in (0..3).filter(|&k| t.lab[k] == Label::Entry) {
                    graph.push((mid(t.v[k], t.v[(k + 1) % 3]), xm));
                }
            }
            let river: HashSet<P> = graph.iter().flat_map(|&(a, b)| [a, b]).collect();
            let mut preds: HashMap<P, Vec<P>> = HashMap::new();
            for &(a, b) in &graph {
                preds.entry(b).or_default().push(a);
            }
            // Midpoint displacement of every new lattice point.
            let amp = self.roughness as f64 * 2f64.powf(-(self.smoothness as f64) * level as f64);
            let disp = |p: P| {
                let h = mix64(hash_seed ^ mix64(((level as u64) << 48) ^ at(p) as u64));
                ((h >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * 2.0 - 1.0) * amp
            };
            let mut y = 0;
            while y <= n {
                let mut x = 0;
                while x <= n {
                    let mut set = |p: P, a: P, b: P| {
                        let mean = (z[at(a)] as f64 + z[at(b)] as f64) * 0.5;
                        let d = disp(p);
                        z[at(p)] = if river.contains(&p) { mean - d.abs() } else { mean + d } as f32;
                    };
                    if x + s <= n {
                        set((x + half, y), (x, y), (x + s, y));
                    }
                    if y + s <= n {
                        set((x, y + half), (x, y), (x, y + s));
                    }
                    if x + s <= n && y + s <= n {
                        set((x + half, y + half), (x + s, y), (x, y + s));
                    }
                    x += s;
                }
                y += s;
            }
            // Clamp river vertices from sources to mouth.
            for p in topological(&graph) {
                let mut v = z[at(p)];
                for a in preds.get(&p).into_iter().flatten() {
                    v = v.min(z[at(*a)]);
                }
                for dy in [-half, 0, half] {
                    for dx in [-half, 0, half] {
                        let q = (p.0 + dx, p.1 + dy);
                        if (dx, dy) != (0, 0)
                            && q.0 >= 0
                            && q.1 >= 0
                            && q.0 <= n
                            && q.1 <= n
                            && !river.contains(&q)
                        {
                            v = v.min(z[at(q)]);
                        }
                    }
                }
                z[at(p)] = v;
            }
            if half >= 2 {
                tris = subdivide(&tris, hash_seed ^ (level as u64).wrapping_mul(0x9E37_79B9));
            }
            s = half;
            level += 1;
        }
        let mut height = Heightmap::from_vec(side, side, cell_size, z)?;
        height.normalize();
        let rivers = polylines(&graph, &height);
        Ok(self.turn(height, rivers, rng.below(8) as u8))
    }

    /// Generates at the smallest `2^d + 1` side covering `width × height`, then resamples
    /// bilinearly to `width × height` (river points are scaled; their heights are re-sampled,
    /// so downstream monotonicity is exact only when no resampling is needed).
    pub fn generate_sized(
        &self,
        width: usize,
        height: usize,
        cell_size: f64,
        seed: u64,
    ) -> Result<SquigOutput> {
        crate::grid::check_size::<f32>(width, height)?;
        let need = width.max(height).max(3) - 1;
        let detail = usize::BITS - (need - 1).leading_zeros();
        if detail > MAX_DETAIL {
            return Err(Error::InvalidSize {
                width,
                height,
                reason: format!("squig-rivers supports sides up to {}", (1usize << MAX_DETAIL) + 1),
            });
        }
        let out = self.generate(detail, cell_size, seed)?;
        let side = out.height.width();
        if side == width && side == height {
            return Ok(out);
        }
        let resampled = out.height.resample(width, height)?;
        let (sx, sy) = ((width - 1) as f32 / (side - 1) as f32, (height - 1) as f32 / (side - 1) as f32);
        let rivers = map_points(out.rivers, |p| {
            let (x, y) = (p.x * sx, p.y * sy);
            RiverPoint { x, y, height: resampled.sample_bilinear(x as f64, y as f64), ..p }
        });
        let mut height = resampled;
        height.set_cell_size(cell_size)?;
        Ok(SquigOutput { height, rivers })
    }

    fn add_tributaries(&self, tris: &mut [Tri], rng: &mut SplitMix64) {
        // A spring may only open on an edge no other river triangle shares, so every river
        // vertex keeps a single downstream neighbour.
        let mut shared: HashMap<P, usize> = HashMap::new();
        for t in tris.iter() {
            for k in 0..3 {
                *shared.entry(mid(t.v[k], t.v[(k + 1) % 3])).or_default() += 1;
            }
        }
        let free =
            |t: &Tri, k: usize| t.lab[k] == Label::Neutral && shared[&mid(t.v[k], t.v[(k + 1) % 3])] == 1;
        let mut candidates: Vec<usize> = (0..tris.len())
            .filter(|&i| {
                let t = &tris[i];
                t.lab.iter().filter(|&&l| l == Label::Entry).count() == 1 && (0..3).any(|k| free(t, k))
            })
            .collect();
        rng.shuffle(&mut candidates);
        for &i in candidates.iter().take(self.tributaries) {
            let open: Vec<usize> = (0..3).filter(|&k| free(&tris[i], k)).collect();
            let k = open[rng.below(open.len() as u64) as usize];
            tris[i].lab[k] = Label::Entry;
        }
    }

    /// Applies symmetry `sym` (bit 0: mirror x, bit 1: mirror y, bit 2: transpose).
    fn turn(&self, height: Heightmap, rivers: Vec<River>, sym: u8) -> SquigOutput {
        let side = height.width();
        let m = (side - 1) as f32;
        let map = |x: f32, y: f32| {
            let x = if sym & 1 != 0 { m - x } else { x };
            let y = if sym & 2 != 0 { m - y } else { y };
            if sym & 4 != 0 { (y, x) } else { (x, y) }
        };
        let mut out = height.clone();
        for y in 0..side {
            for x in 0..side {
                let (tx, ty) = map(x as f32, y as f32);
                out[(tx as usize, ty as usize)] = height[(x, y)];
            }
        }
        let rivers = map_points(rivers, |p| {
            let (x, y) = map(p.x, p.y);
            RiverPoint { x, y, ..p }
        });
        SquigOutput { height: out, rivers }
    }
}

/// Applies `f` to every point of every river.
fn map_points(rivers: Vec<River>, f: impl Fn(RiverPoint) -> RiverPoint) -> Vec<River> {
    rivers.into_iter().map(|r| River { points: r.points.into_iter().map(&f).collect() }).collect()
}

/// Splits each river triangle into its river children (see the module docs), choosing one half
/// of every labelled edge from a hash of the edge's midpoint, so neighbours agree.
fn subdivide(tris: &[Tri], seed: u64) -> Vec<Tri> {
    let mut out = Vec::with_capacity(tris.len() * 3);
    for t in tris {
        let [p0, p1, p2] = t.v;
        let m = [mid(p0, p1), mid(p1, p2), mid(p2, p0)];
        let mut kids = [
            Tri { v: [p0, m[0], m[2]], lab: [Label::Neutral; 3] },
            Tri { v: [p1, m[1], m[0]], lab: [Label::Neutral; 3] },
            Tri { v: [p2, m[2], m[1]], lab: [Label::Neutral; 3] },
            Tri { v: [m[0], m[1], m[2]], lab: [Label::Neutral; 3] },
        ];
        // Corner child of the chosen half of parent edge k, and the child's edge index.
        let half = |k: usize| {
            let (a, b) = (t.v[k], t.v[(k + 1) % 3]);
            // Pick by a hash of the midpoint, then orient so both sides of the edge agree.
            let pick_low = mix64(seed ^ ((m[k].0 as u64) << 32 | m[k].1 as u64)) & 1 == 0;
            let first_is_low = a < b;
            if pick_low == first_is_low { (k, 0) } else { ((k + 1) % 3, 2) }
        };
        let centre_edge = |c: usize| (c + 2) % 3;
        let x = (0..3).find(|&k| t.lab[k] == Label::Exit).expect("a river triangle has an exit");
        let (cx, ex) = half(x);
        kids[cx].lab[ex] = Label::Exit;
        let mut centre_used = false;
        for k in (0..3).filter(|&k| t.lab[k] == Label::Entry) {
            let (ce, ee) = half(k);
            kids[ce].lab[ee] = Label::Entry;
            if ce != cx {
                kids[ce].lab[1] = Label::Exit;
                kids[3].lab[centre_edge(ce)] = Label::Entry;
                centre_used = true;
            }
        }
        if centre_used {
            kids[3].lab[centre_edge(cx)] = Label::Exit;
            kids[cx].lab[1] = Label::Entry;
        }
        out.extend(kids.into_iter().filter(|c| c.lab.iter().any(|&l| l != Label::Neutral)));
    }
    out
}

/// Nodes of the river graph from sources to mouth (Kahn's algorithm; deterministic order).
fn topological(graph: &[(P, P)]) -> Vec<P> {
    let mut indeg: HashMap<P, usize> = HashMap::new();
    let mut next: HashMap<P, P> = HashMap::new();
    let mut nodes: Vec<P> = Vec::new();
    for &(a, b) in graph {
        for p in [a, b] {
            if let std::collections::hash_map::Entry::Vacant(e) = indeg.entry(p) {
                e.insert(0);
                nodes.push(p);
            }
        }
        *indeg.get_mut(&b).expect("inserted") += 1;
        next.insert(a, b);
    }
    let mut queue: Vec<P> = nodes.iter().copied().filter(|p| indeg[p] == 0).collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(p) = queue.pop() {
        order.push(p);
        if let Some(&q) = next.get(&p) {
            let d = indeg.get_mut(&q).expect("node");
            *d -= 1;
            if *d == 0 {
                queue.push(q);
            }
        }
    }
    order
}

/// Polylines of the final river graph: from each source downstream to the mouth or to the
/// first vertex already drawn (the junction, included). Rivers entering from the map edge come
/// first, longest first, so the first river is the main one, drawn whole.
fn polylines(graph: &[(P, P)], height: &Heightmap) -> Vec<River> {
    let mut next: HashMap<P, P> = HashMap::new();
    let mut has_pred: HashMap<P, bool> = HashMap::new();
    let mut nodes = Vec::new();
    for &(a, b) in graph {
        next.insert(a, b);
        for p in [a, b] {
            if let std::collections::hash_map::Entry::Vacant(e) = has_pred.entry(p) {
                e.insert(false);
                nodes.push(p);
            }
        }
        has_pred.insert(b, true);
    }
    // Upstream length of each node, as a discharge proxy.
    let mut upstream: HashMap<P, f32> = HashMap::new();
    for p in topological(graph) {
        let u = upstream.get(&p).copied().unwrap_or(0.0) + 1.0;
        upstream.insert(p, u);
        if let Some(&q) = next.get(&p) {
            *upstream.entry(q).or_insert(0.0) += u;
        }
    }
    let mut sources: Vec<P> = nodes.iter().copied().filter(|p| !has_pred[p]).collect();
    // Longest path first: the main river is drawn whole, tributaries end at the junction.
    let length = |mut p: P| {
        let mut n = 0;
        while let Some(&q) = next.get(&p) {
            p = q;
            n += 1;
        }
        n
    };
    let last = height.width() as i64 - 1;
    let inland = |p: P| !(p.0 == 0 || p.1 == 0 || p.0 == last || p.1 == last);
    sources.sort_by_key(|&p| (inland(p), std::cmp::Reverse(length(p)), p));
    let mut drawn = HashSet::new();
    let mut rivers = Vec::new();
    for s in sources {
        let mut r = River::default();
        let mut p = s;
        loop {
            r.points.push(RiverPoint {
                x: p.0 as f32,
                y: p.1 as f32,
                height: height[(p.0 as usize, p.1 as usize)],
                discharge: upstream[&p],
                width: 1.0,
            });
            if !drawn.insert(p) {
                break;
            }
            match next.get(&p) {
                Some(&q) => p = q,
                None => break,
            }
        }
        rivers.push(r);
    }
    rivers
}

/// `squig-rivers` as a pipeline step: overwrites the heights (map size and cell size kept) and
/// stores the river network in the terrain's [`HydroLayers`].
#[derive(Debug)]
struct SquigStep {
    generator: SquigRivers,
}

impl Step for SquigStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        let (w, h, cs) = (terrain.height.width(), terrain.height.height(), terrain.height.cell_size());
        let out = self.generator.generate_sized(w, h, cs, ctx.seed)?;
        terrain.height = out.height;
        terrain.layers.get_or_default::<HydroLayers>().rivers = out.rivers;
        ctx.progress.set(1.0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::params::assert_ranges_enforced;
    use crate::step::{ParamValue, Params};

    /// `validate` (called by `generate`) refuses exactly what the specs refuse.
    #[test]
    fn squig_enforces_exactly_its_spec_ranges() {
        let build = |name: &str, v: f64| {
            let p = Params::defaults(SquigRivers::PARAMS).with(name, ParamValue::Number(v));
            SquigRivers::read_params(&p)?.validate()
        };
        assert_eq!(assert_ranges_enforced(SquigRivers::PARAMS, &build), 4);
        let d = SquigRivers::default();
        assert_eq!((d.roughness, d.smoothness, d.tributaries, d.branch_level), (0.5, 1.0, 2, 2));
        let nan = SquigRivers { roughness: f32::NAN, ..d };
        assert!(matches!(nan.validate(), Err(Error::InvalidParameter { name, .. }) if name == "roughness"));
    }
}
