//! Squig-curve rivers on the triangular midpoint displacement (Prusinkiewicz & Hammel 1993, "A
//! Fractal Model of Mountains with Rivers", Graphics Interface '93; seed 001 §2.1), built on
//! the `triangular` step's triangle form (`generate::Triangular::triangle_array_with`, seed 001
//! §1.1.1, Fig. 5).
//!
//! **Terrain.** Exactly the `triangular` step with `shape = "triangle"` and the same
//! `roughness`, `smoothness`, `detail` and seed: the seed's triangular array, each midpoint the
//! mean of its triangle's three vertices plus noise; with `rivers = 0` the heights are those of
//! that step bit for bit. The rivers only change the river points after each level, so the
//! following levels subdivide the lowered valleys (the coupling seed 001 §2.1.2 describes).
//! The map holds the array in its lower-left half (cells `x ≤ y`, `generate::TriangleMask`), the
//! other half mirrored, and the triangle outputs mask it (`triangle.png`, `triangle.glb`).
//!
//! **Rivers (squig curves, seed 001 §2.1.1).** At level `river-level` the triangle is cut into
//! triangles of leg `2^n / 2^river-level`; `rivers` of those that touch the coast (the big
//! triangle's border) and share no edge with each other are picked at random; each gets its
//! *exit* on a coast edge (the mouth) and its *entry* on an inland edge (the spring). On every
//! later subdivision, each labelled edge keeps one of its two halves, chosen at random once per
//! edge (so the triangles sharing it agree); the corner child holding the chosen entry half
//! routes to the corner child holding the chosen exit half through the central child, or
//! directly when it is the same corner. Tributaries (the branching seed 001 §2.1.3 proposes
//! and leaves open): at level `branch-level`, `tributaries` river triangles turn a free neutral
//! edge into a second entry; a triangle with two entries routes both to its one exit, so each
//! river is a tree of confluences ending at its mouth on the coast.
//!
//! **River heights (seed 001 §2.1.2).** After each level, the river points of that level (the
//! midpoints of the river triangles' entry and exit edges), visited from the springs to the
//! mouths, are set to at most the minimum of (a) the river points upstream of them ("la hauteur
//! du milieu du segment de sortie est au plus égale à la hauteur du milieu de celui
//! d'entrée") and (b) their non-river neighbours on that level's lattice, the 8 around them
//! inside the triangle ("prendre au plus la valeur minimale des sommets voisins ne faisant pas
//! passer la rivière"). At the last level this makes heights never rise downstream along every
//! river, and every river cell a valley floor.
//!
//! Limits (seed 001 §2.1.3): slopes along the rivers are gentle; valleys can be asymmetric.

use std::collections::{HashMap, HashSet};

use terrasynth_noise::rng::{SplitMix64, derive_seed, mix64};

use super::HydroLayers;
use super::rivers::{River, RiverPoint};
use crate::generate::common::pow2_exponent;
use crate::generate::{DiamondSquare, TriangleArray, TriangleMask, TriangleShape, Triangular};
use crate::step::params::step_params;
use crate::step::{Category, DefaultValue, ParamKind as K, Step, StepContext, StepInfo, Terrain};
use crate::{Error, Heightmap, Result};

/// Largest detail level (array of `2^d + 1` rows).
pub const MAX_DETAIL: u32 = 14;

step_params! {
    /// The squig-curve river generator (see the module docs for the algorithm and parameters).
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct SquigRivers {
        /// Initial displacement factor of the triangular step, in height units (default 1).
        roughness: f64 = shared(DiamondSquare::PARAMS, "roughness"),
        /// `H` in `2^(−H)` per level (default 1).
        smoothness: f64 = shared(DiamondSquare::PARAMS, "smoothness"),
        /// Number of displaced levels; 0 = all (default 0).
        detail: u32 = shared(DiamondSquare::PARAMS, "detail"),
        rivers: usize = ParamSpec {
            name: "rivers",
            label: "Rivers",
            kind: K::Int { min: 0, max: 64 },
            default: DefaultValue::Number(3.0),
            unit: "",
            doc: "Rivers, each with its mouth on the coast (the triangle's border); fewer when the \
                  level has too few coast triangles that share no edge. 0 = the triangular terrain alone.",
        },
        river_level: usize = ParamSpec {
            name: "river-level",
            label: "River start level",
            kind: K::Int { min: 1, max: 12 },
            default: DefaultValue::Number(2.0),
            unit: "",
            doc: "Subdivision level at which the rivers start (4^level triangles; clamped to the last \
                  level): lower gives longer rivers.",
        },
        tributaries: usize = ParamSpec {
            name: "tributaries",
            label: "Tributaries",
            kind: K::Int { min: 0, max: 64 },
            default: DefaultValue::Number(4.0),
            unit: "",
            doc: "Tributaries joining the rivers (squig-curve branching, seed 001 §2.1.3).",
        },
        branch_level: usize = ParamSpec {
            name: "branch-level",
            label: "Tributary start level",
            kind: K::Int { min: 1, max: 12 },
            default: DefaultValue::Number(3.0),
            unit: "",
            doc: "Subdivision level at which tributaries spring (clamped to river-level .. the last \
                  level): lower gives longer tributaries.",
        },
    }
}

/// A generated terrain and its river network.
#[derive(Clone, Debug)]
pub struct SquigOutput {
    /// Heights: the triangular array in the lower-left half (`x ≤ y`), mirrored in the other.
    pub height: Heightmap,
    /// River polylines, springs first; longest first. Tributaries end at their junction; the
    /// others end at their mouth on the coast.
    pub rivers: Vec<River>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    Neutral,
    Entry,
    Exit,
}

/// A lattice point `(x, y)` = triangular-array point `(i, j) = (y, x)`.
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

/// Whether edge `(a, b)` lies on the border of the triangle of leg `n` (the coast): both ends on
/// `x = 0`, on `y = n`, or on the diagonal `x = y`.
fn on_coast(a: P, b: P, n: i64) -> bool {
    (a.0 == 0 && b.0 == 0) || (a.1 == n && b.1 == n) || (a.0 == a.1 && b.0 == b.1)
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
            doc: "The triangular step's triangle (shape = triangle) with squig-curve rivers and tributaries \
                  reaching the coast, whose heights never rise downstream and stay below the neighbouring \
                  terrain.",
            source: "Prusinkiewicz & Hammel 1993; seed 001 §2.1 and §1.1.1",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(SquigStep { generator: Self::read_params(p)? })),
        }
    }

    /// The triangular generator the terrain comes from (`shape = "triangle"`).
    pub fn triangular(&self) -> Result<Triangular> {
        Ok(Triangular::new(self.roughness, self.smoothness, self.detail)?.with_shape(TriangleShape::Triangle))
    }

    /// Generates the triangular array of `2^detail + 1` rows (detail in 1..=[`MAX_DETAIL`]) as a
    /// `(2^detail + 1)²` map, with its rivers.
    pub fn generate(&self, detail: u32, cell_size: f64, seed: u64) -> Result<SquigOutput> {
        let side = (1usize << detail.min(MAX_DETAIL)) + 1;
        self.generate_levels(detail, side, side, cell_size, seed)
    }

    /// Generates at the smallest `2^d + 1` array covering `width × height` and keeps the
    /// top-left window (as `triangular` does); rivers are cut where they leave the window.
    pub fn generate_sized(
        &self,
        width: usize,
        height: usize,
        cell_size: f64,
        seed: u64,
    ) -> Result<SquigOutput> {
        crate::grid::check_size::<f32>(width, height)?;
        let detail = pow2_exponent(width, height);
        if detail > MAX_DETAIL {
            return Err(Error::InvalidSize {
                width,
                height,
                reason: format!("squig-rivers supports sides up to {}", (1usize << MAX_DETAIL) + 1),
            });
        }
        self.generate_levels(detail, width, height, cell_size, seed)
    }

    fn generate_levels(
        &self,
        detail: u32,
        width: usize,
        height: usize,
        cell_size: f64,
        seed: u64,
    ) -> Result<SquigOutput> {
        self.validate()?;
        if !(1..=MAX_DETAIL).contains(&detail) {
            return Err(Error::param("detail", detail, format!("an integer in 1..={MAX_DETAIL}")));
        }
        let (array, graph) = self.array(detail, seed)?;
        let mut map = array.to_map(width, height)?;
        map.set_cell_size(cell_size)?;
        let rivers = polylines(&graph, &array, width, height);
        Ok(SquigOutput { height: map, rivers })
    }

    /// The triangular array with its rivers carved, and the last level's river graph.
    fn array(&self, levels: u32, seed: u64) -> Result<(TriangleArray, Vec<(P, P)>)> {
        let tri = self.triangular()?;
        let n = 1i64 << levels;
        let last_level = levels as usize - 1;
        let river_level = self.river_level.min(last_level);
        let branch_level = self.branch_level.clamp(river_level, last_level);
        // Streams 0 and 1 are the triangular step's (corners, midpoints).
        let mut rng = SplitMix64::new(derive_seed(seed, 2));
        let hash_seed = derive_seed(seed, 3);
        let mut tris: Vec<Tri> = Vec::new();
        let mut graph: Vec<(P, P)> = Vec::new();
        let array = tri.triangle_array_with(levels, seed, &mut |level, s, t| {
            let (level, s) = (level as usize, s as i64);
            if level == river_level && self.rivers > 0 {
                tris = start_rivers(n, s, self.rivers, &mut rng);
            }
            if level == branch_level && !tris.is_empty() {
                self.add_tributaries(&mut tris, n, &mut rng);
            }
            if tris.is_empty() {
                return;
            }
            let half = s / 2;
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
            let get = |t: &TriangleArray, p: P| t.get(p.1 as usize, p.0 as usize);
            // Springs to mouths: at most the river upstream and the non-river neighbours.
            for p in topological(&graph) {
                let mut v = get(t, p);
                for a in preds.get(&p).into_iter().flatten() {
                    v = v.min(get(t, *a));
                }
                for dy in [-half, 0, half] {
                    for dx in [-half, 0, half] {
                        let q = (p.0 + dx, p.1 + dy);
                        let inside = q.0 >= 0 && q.1 <= n && q.0 <= q.1;
                        if (dx, dy) != (0, 0) && inside && !river.contains(&q) {
                            v = v.min(get(t, q));
                        }
                    }
                }
                t.set(p.1 as usize, p.0 as usize, v);
            }
            if half >= 2 {
                tris = subdivide(&tris, hash_seed ^ (level as u64).wrapping_mul(0x9E37_79B9));
            }
        });
        Ok((array, graph))
    }

    fn add_tributaries(&self, tris: &mut [Tri], n: i64, rng: &mut SplitMix64) {
        // A spring may only open on an inland edge (a spring on the coast would start at the
        // sea) that no other river triangle shares, so every river point keeps a single
        // downstream neighbour.
        let mut shared: HashMap<P, usize> = HashMap::new();
        for t in tris.iter() {
            for k in 0..3 {
                *shared.entry(mid(t.v[k], t.v[(k + 1) % 3])).or_default() += 1;
            }
        }
        let free = |t: &Tri, k: usize| {
            let (a, b) = (t.v[k], t.v[(k + 1) % 3]);
            t.lab[k] == Label::Neutral && shared[&mid(a, b)] == 1 && !on_coast(a, b, n)
        };
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
}

/// The river triangles of the level of leg `s` in the triangle of leg `n`: up to `count`
/// triangles touching the coast that share no edge with each other, in random order, each
/// with its exit on a random coast edge and its entry on a random inland edge.
fn start_rivers(n: i64, s: i64, count: usize, rng: &mut SplitMix64) -> Vec<Tri> {
    let mut all = Vec::new();
    for y in (0..n).step_by(s as usize) {
        for x in (0..=y).step_by(s as usize) {
            all.push([(x, y), (x, y + s), (x + s, y + s)]);
            if x + s <= y {
                all.push([(x, y), (x + s, y + s), (x + s, y)]);
            }
        }
    }
    let coast = |v: &[P; 3], k: usize| on_coast(v[k], v[(k + 1) % 3], n);
    let mut candidates: Vec<[P; 3]> =
        all.into_iter().filter(|v| (0..3).any(|k| coast(v, k)) && (0..3).any(|k| !coast(v, k))).collect();
    rng.shuffle(&mut candidates);
    let mut used: HashSet<P> = HashSet::new();
    let mut out = Vec::new();
    for v in candidates {
        if out.len() == count {
            break;
        }
        let mids = [0, 1, 2].map(|k| mid(v[k], v[(k + 1) % 3]));
        if mids.iter().any(|m| used.contains(m)) {
            continue;
        }
        used.extend(mids);
        let coasts: Vec<usize> = (0..3).filter(|&k| coast(&v, k)).collect();
        let inland: Vec<usize> = (0..3).filter(|&k| !coast(&v, k)).collect();
        let mut lab = [Label::Neutral; 3];
        lab[coasts[rng.below(coasts.len() as u64) as usize]] = Label::Exit;
        lab[inland[rng.below(inland.len() as u64) as usize]] = Label::Entry;
        out.push(Tri { v, lab });
    }
    out
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

/// Polylines of the final river graph: from each spring downstream to the mouth or to the
/// first point already drawn (the junction, included); longest first, so each river is drawn
/// whole and its tributaries end at their junction. Heights from `array`; a river is cut where
/// it leaves a `width × height` window.
fn polylines(graph: &[(P, P)], array: &TriangleArray, width: usize, height: usize) -> Vec<River> {
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
    let length = |mut p: P| {
        let mut n = 0;
        while let Some(&q) = next.get(&p) {
            p = q;
            n += 1;
        }
        n
    };
    sources.sort_by_key(|&p| (std::cmp::Reverse(length(p)), p));
    let inside = |p: P| (p.0 as usize) < width && (p.1 as usize) < height;
    let mut drawn = HashSet::new();
    let mut rivers = Vec::new();
    for s in sources {
        let mut r = River::default();
        let mut p = s;
        while inside(p) {
            r.points.push(RiverPoint {
                x: p.0 as f32,
                y: p.1 as f32,
                height: array.get(p.1 as usize, p.0 as usize) as f32,
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
        if r.points.len() >= 2 {
            rivers.push(r);
        }
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
        terrain.layers.insert(TriangleMask);
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
        assert_eq!(assert_ranges_enforced(SquigRivers::PARAMS, &build), 7);
        let d = SquigRivers::default();
        assert_eq!((d.rivers, d.river_level, d.tributaries, d.branch_level), (3, 2, 4, 3));
        // The terrain parameters are the triangular step's (same specs).
        assert_eq!(&SquigRivers::PARAMS[..3], &Triangular::PARAMS[..3]);
        let nan = SquigRivers { roughness: f64::NAN, ..d };
        assert!(matches!(nan.validate(), Err(Error::InvalidParameter { name, .. }) if name == "roughness"));
    }

    /// Every spring (a river point with nothing upstream) is inland: none lies on the
    /// triangle's coast (x = 0, y = n or x = y), where only mouths belong. Before the fix a
    /// tributary could spring on a coast edge.
    #[test]
    fn springs_are_never_on_the_coast() {
        let levels = 7;
        let n = 1i64 << levels;
        let mut springs = 0;
        for seed in 0..40 {
            let squig = SquigRivers { rivers: 6, tributaries: 12, ..SquigRivers::default() };
            let (_, graph) = squig.array(levels, seed).unwrap();
            let downstream: HashSet<P> = graph.iter().map(|&(_, b)| b).collect();
            for &(a, _) in &graph {
                if !downstream.contains(&a) {
                    springs += 1;
                    assert!(!(a.0 == 0 || a.1 == n || a.0 == a.1), "seed {seed}: spring {a:?} on the coast");
                }
            }
        }
        assert!(springs > 40 * 6, "only {springs} springs: the tributaries were not made");
    }
}
