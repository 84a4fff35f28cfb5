//! The one hydrology layer builder: the lakes, rivers (with widths), flow accumulation and
//! Strahler orders that the outputs draw (`water.png`, `flow.png`, the biomes,
//! `rivers.geojson`, a carved mesh) and the editor shows, from a finished [`Terrain`].
//!
//! Rule (the same for `generate`, the library export and the editor):
//! - **Flow and rivers**: the `rivers`/`squig-rivers` steps' layers when the recipe has them;
//!   otherwise one [`FlowGraph`] of the final heights (Priority-Flood fill with ε, Barnes,
//!   Lehman & Mulla 2014 → D8, O'Callaghan & Mark 1984 → accumulation) and rivers where the
//!   drainage area is at least the `rivers` step's default `threshold` of the map, at its
//!   default `max-width` (both from [`RiversStep::default`](super::RiversStep), the one
//!   declaration of the step's parameters).
//! - **Placed rivers** (traced from the recipe's `river-sources` steps,
//!   [`HydroLayers::sourced`], then from a project's river sources, [`HydroLayers::placed`])
//!   come after the network, whichever way it was made.
//! - **Lakes**: the `lakes` step's layers when the recipe has one; otherwise the depressions
//!   of the final heights covering at least max(4, cells / 2000) cells (small pits are left
//!   out), [`find_lakes`] with the `lakes` step's default min depth (0).
//!
//! The terrain is never changed. The flow and lake parts are independent, so a caller can
//! run them in parallel ([`WaterLayers::flow_part`], [`WaterLayers::lake_part`],
//! [`WaterLayers::from_parts`]); [`WaterLayers::parts`] (which [`WaterLayers::build`] and the
//! export use) does that when the steps made either, and otherwise makes both from one ε fill,
//! the lakes from the exact fill of the cells it raised (the same layers, one flood fewer).

use std::borrow::Cow;

use super::HydroLayers;
use super::fill::DepressionFiller;
use super::flow::{D8Router, FlowField};
use super::lakes::{LakeComponents, LakeMap, find_lakes};
use super::rivers::{River, extract_rivers, strahler_orders};
use super::steps::{LakesStep, RiversStep};
use crate::step::Terrain;
use crate::{Grid, Heightmap, Result};

/// The flow graph of one terrain state: the ε-filled surface, its D8 routing and the drainage
/// area of every cell. Computed once and shared by the layers that need it (rivers, flow),
/// as fastscapelib shares one `FlowGraph` between its eroders.
#[derive(Clone, Debug)]
pub struct FlowGraph {
    /// Priority-Flood+ε filled heights (every cell drains).
    pub filled: Heightmap,
    /// D8 receivers and topological order on `filled`.
    pub field: FlowField,
    /// Drainage area per cell, in cells (unit rainfall).
    pub accumulation: Grid<f64>,
}

impl FlowGraph {
    /// Fills `height` with ε (outlets: the map edge and cells below `sea_level`), routes it by
    /// D8 and accumulates.
    pub fn new(height: &Heightmap, sea_level: f32) -> Result<Self> {
        Ok(Self::with_exact_fill(height, sea_level, false)?.0)
    }

    /// [`FlowGraph::new`] and, unless `exact` is false, the exact fill of the same heights
    /// ([`ExactFill`]) derived from the ε fill (only the cells it raised are flooded again,
    /// beside the D8 routing and accumulation: `rayon::join`), instead of a second flood of
    /// the whole map.
    pub(crate) fn with_exact_fill(
        height: &Heightmap,
        sea_level: f32,
        exact: bool,
    ) -> Result<(Self, Option<ExactFill>)> {
        let filled = DepressionFiller::with_epsilon().fill(height, sea_level)?;
        let (routed, exact) = rayon::join(
            || -> Result<_> {
                let field = D8Router.d8(&filled, sea_level)?;
                let accumulation = field.accumulate(None)?;
                Ok((field, accumulation))
            },
            || if exact { ExactFill::from_epsilon(height, sea_level, &filled) } else { Ok(None) },
        );
        let (field, accumulation) = routed?;
        Ok((Self { filled, field, accumulation }, exact?))
    }

    /// The river network: cells draining at least `threshold` (a fraction of the map's cells,
    /// at least one cell), `max_width` cells wide at the largest drainage area
    /// ([`extract_rivers`]).
    pub fn rivers(&self, threshold: f64, max_width: f32) -> Result<Vec<River>> {
        let cells = (threshold * self.filled.len() as f64).max(1.0);
        extract_rivers(&self.filled, &self.field, &self.accumulation, cells, max_width)
    }

    /// The drainage area as `f32` (the flow layer the `rivers` step stores).
    pub fn accumulation_f32(&self) -> Heightmap {
        self.accumulation.par_map(|&a| a as f32)
    }
}

/// The exact Priority-Flood fill (Barnes, Lehman & Mulla 2014) of one terrain state, which the
/// `rivers` step derives from its own ε fill (only the raised cells flooded again, beside the
/// routing: [`FlowGraph::with_exact_fill`]; a second whole flood cost a fifth of the step on
/// one thread) and leaves on the terrain, so that the `lakes` step, or the
/// outputs' lake search when a recipe has no `lakes` step, need not flood the same heights
/// again (one flood is 0.7–0.9 s at 4097²). It is read only while the terrain's heights and
/// sea level are, bit for bit, the ones it was made from ([`ExactFill::matches`]); any step that
/// changes a height in between makes the reader flood afresh. The `lakes` step takes it out.
#[derive(Clone, Debug)]
pub(crate) struct ExactFill {
    sea_level: f32,
    source: Heightmap,
    filled: Heightmap,
    /// The raised cells' groups, for the lakes.
    components: LakeComponents,
}

impl ExactFill {
    /// The exact fill of `height` (outlets as [`DepressionFiller::fill`]) from `eps`, its ε
    /// fill at the same sea level ([`DepressionFiller::exact_from_epsilon`]: the same bits as a
    /// flood of its own, without flooding the whole map again), or `None` when its two grids
    /// (a copy of the heights and the fill, with the refill's state byte and the groups' labels
    /// while they are made: 13 bytes a cell) would not fit in memory: it is only a shortcut,
    /// the reader then floods itself.
    pub(crate) fn from_epsilon(height: &Heightmap, sea_level: f32, eps: &Heightmap) -> Result<Option<Self>> {
        if crate::memory::check_cells(height.width(), height.height(), 13, "the kept exact fill").is_err() {
            return Ok(None);
        }
        let filled = DepressionFiller::exact_from_epsilon(height, eps)?;
        let components = LakeComponents::new(height, &filled)?;
        Ok(Some(Self { sea_level, source: height.clone(), filled, components }))
    }

    /// Whether it was made from exactly `height` and `sea_level` (compared bit for bit).
    pub(crate) fn matches(&self, height: &Heightmap, sea_level: f32) -> bool {
        let same_heights = self.source.same_size(height)
            && self.source.as_slice().iter().zip(height.as_slice()).all(|(a, b)| a.to_bits() == b.to_bits());
        same_heights && self.sea_level.to_bits() == sea_level.to_bits()
    }
}

/// The lakes of `height` at `sea_level` ([`find_lakes`]), from `kept` when it is the exact fill
/// of these heights, else from a new flood.
pub(crate) fn lakes_of(
    height: &Heightmap,
    sea_level: f32,
    kept: Option<&ExactFill>,
    min_depth: f32,
    min_area: usize,
) -> Result<LakeMap> {
    match kept.filter(|k| k.matches(height, sea_level)) {
        Some(k) => k.components.select(height, &k.filled, min_depth, min_area),
        None => find_lakes(height, sea_level, min_depth, min_area),
    }
}

/// Drainage area (fraction of the map's cells) from which a cell is a river when the recipe
/// has no `rivers` step: the `rivers` step's default `threshold`.
pub fn default_river_threshold() -> f64 {
    RiversStep::default().threshold
}

/// Channel width in cells of the largest computed river: the `rivers` step's default
/// `max-width`.
pub fn default_max_width() -> f32 {
    RiversStep::default().max_width
}

/// Smallest lake (cells) of the computed lakes of a map of `cells` cells: max(4, cells / 2000).
pub fn computed_lake_min_area(cells: usize) -> usize {
    (cells / 2000).max(4)
}

/// `network` followed by the rivers traced from sources ([`HydroLayers::sourced`] and
/// [`HydroLayers::placed`]).
fn with_placed<'t>(network: Cow<'t, [River]>, placed: &[River]) -> Cow<'t, [River]> {
    if placed.is_empty() {
        return network;
    }
    let mut all = network.into_owned();
    all.extend_from_slice(placed);
    Cow::Owned(all)
}

/// Flow accumulation and rivers of [`WaterLayers`], with which of them were computed.
#[derive(Debug)]
pub struct FlowPart<'t> {
    flow: Cow<'t, [f32]>,
    rivers: Cow<'t, [River]>,
    computed: Vec<&'static str>,
}

/// Lake labels of [`WaterLayers`] and their count; `computed` if the builder found them.
#[derive(Debug)]
pub struct LakePart<'t> {
    labels: Cow<'t, [u32]>,
    count: usize,
    computed: bool,
}

/// The hydrology layers of a finished terrain (module docs): borrowed from the terrain when
/// its steps made them, computed (and owned) otherwise.
#[derive(Clone, Debug)]
pub struct WaterLayers<'t> {
    /// Map width in cells.
    pub width: usize,
    /// Map height in cells.
    pub height: usize,
    /// D8 flow accumulation per cell, in cells.
    pub flow: Cow<'t, [f32]>,
    /// River polylines, upstream first (grid coordinates).
    pub rivers: Cow<'t, [River]>,
    /// Lake id per cell (0 = none).
    pub lake_labels: Cow<'t, [u32]>,
    /// Number of lakes.
    pub lake_count: usize,
    /// Which layers were computed by the builder rather than taken from the recipe's steps, in
    /// the order `flow`, `rivers`, `lakes`.
    pub computed: Vec<&'static str>,
}

impl<'t> WaterLayers<'t> {
    /// Both parts ([`WaterLayers::parts`]).
    pub fn build(terrain: &'t Terrain) -> Result<Self> {
        let (flow, lakes) = Self::parts(terrain)?;
        Ok(Self::from_parts(terrain, flow, lakes))
    }

    /// Both parts. When the terrain's steps left neither flow nor lakes (nor an exact fill),
    /// one ε fill serves both: the flow graph, and the exact fill the lakes are
    /// found in, from the cells the ε fill raised ([`FlowGraph::with_exact_fill`]; a second
    /// flood of the whole map for the lakes was a fifth of the outputs of the `island` preset
    /// on one thread until session 36). Otherwise the two parts, in parallel.
    pub fn parts(terrain: &'t Terrain) -> Result<(FlowPart<'t>, LakePart<'t>)> {
        let steps = terrain.layers.get::<HydroLayers>();
        let made = steps.is_some_and(|l| l.flow.is_some() || l.lake_labels.is_some());
        // A kept exact fill (the `rivers` step's) is matched to the heights by `lake_part`.
        if made || terrain.layers.get::<ExactFill>().is_some() {
            let (flow, lakes) = rayon::join(|| Self::flow_part(terrain), || Self::lake_part(terrain));
            return Ok((flow?, lakes?));
        }
        let (h, sea_level) = (&terrain.height, terrain.sea_level);
        let mut exact = None;
        let flow = Self::flow_part_with(terrain, || {
            let (graph, kept) = FlowGraph::with_exact_fill(h, sea_level, true)?;
            exact = kept;
            Ok(graph)
        })?;
        let min_area = computed_lake_min_area(h.len());
        let map = lakes_of(h, sea_level, exact.as_ref(), LakesStep::default().min_depth, min_area)?;
        let lakes =
            LakePart { labels: Cow::Owned(map.labels.into_vec()), count: map.lakes.len(), computed: true };
        Ok((flow, lakes))
    }

    /// The flow accumulation and rivers: the terrain's, or computed (module docs).
    pub fn flow_part(terrain: &'t Terrain) -> Result<FlowPart<'t>> {
        Self::flow_part_with(terrain, || FlowGraph::new(&terrain.height, terrain.sea_level))
    }

    /// [`WaterLayers::flow_part`], `graph` making the flow graph of a terrain without a flow
    /// layer.
    fn flow_part_with(
        terrain: &'t Terrain,
        graph: impl FnOnce() -> Result<FlowGraph>,
    ) -> Result<FlowPart<'t>> {
        let steps = terrain.layers.get::<HydroLayers>();
        let flow = steps.and_then(|l| l.flow.as_ref());
        let rivers = steps.map_or(&[][..], |l| l.rivers.as_slice());
        let placed: Vec<River> =
            steps.map_or(Vec::new(), |l| l.sourced.iter().chain(&l.placed).cloned().collect());
        let placed = placed.as_slice();
        let have_rivers = flow.is_some() || !rivers.is_empty();
        if let Some(f) = flow {
            return Ok(FlowPart {
                flow: Cow::Borrowed(f.as_slice()),
                rivers: with_placed(Cow::Borrowed(rivers), placed),
                computed: vec![],
            });
        }
        let graph = graph()?;
        let mut computed = vec!["flow"];
        let rivers = if have_rivers {
            Cow::Borrowed(rivers)
        } else {
            computed.push("rivers");
            Cow::Owned(graph.rivers(default_river_threshold(), default_max_width())?)
        };
        Ok(FlowPart {
            flow: Cow::Owned(graph.accumulation.par_map(|&a| a as f32).into_vec()),
            rivers: with_placed(rivers, placed),
            computed,
        })
    }

    /// The lake labels: the terrain's, or the depressions of the final heights (module docs).
    pub fn lake_part(terrain: &'t Terrain) -> Result<LakePart<'t>> {
        let h = &terrain.height;
        let steps = terrain.layers.get::<HydroLayers>();
        Ok(match steps.and_then(|l| l.lake_labels.as_ref().map(|g| (g, l.lakes.len()))) {
            Some((labels, count)) => {
                LakePart { labels: Cow::Borrowed(labels.as_slice()), count, computed: false }
            }
            None => {
                let map = lakes_of(
                    h,
                    terrain.sea_level,
                    terrain.layers.get::<ExactFill>(),
                    LakesStep::default().min_depth,
                    computed_lake_min_area(h.len()),
                )?;
                LakePart { labels: Cow::Owned(map.labels.into_vec()), count: map.lakes.len(), computed: true }
            }
        })
    }

    /// Puts the two parts of `terrain`'s layers together.
    pub fn from_parts(terrain: &Terrain, flow: FlowPart<'t>, lakes: LakePart<'t>) -> Self {
        let mut computed = flow.computed;
        if lakes.computed {
            computed.push("lakes");
        }
        Self {
            width: terrain.height.width(),
            height: terrain.height.height(),
            flow: flow.flow,
            rivers: flow.rivers,
            lake_labels: lakes.labels,
            lake_count: lakes.count,
            computed,
        }
    }

    /// Strahler order at every vertex of every river ([`strahler_orders`]).
    pub fn strahler_orders(&self) -> Vec<Vec<u32>> {
        strahler_orders(&self.rivers)
    }

    /// An owned copy (for a caller that outlives the terrain, e.g. the editor's view).
    pub fn into_owned(self) -> WaterLayers<'static> {
        WaterLayers {
            width: self.width,
            height: self.height,
            flow: Cow::Owned(self.flow.into_owned()),
            rivers: Cow::Owned(self.rivers.into_owned()),
            lake_labels: Cow::Owned(self.lake_labels.into_owned()),
            lake_count: self.lake_count,
            computed: self.computed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_rivers_step() {
        assert_eq!(default_river_threshold(), 0.002);
        assert_eq!(default_max_width(), 3.0);
        assert_eq!(computed_lake_min_area(257 * 257), 33);
        assert_eq!(computed_lake_min_area(100), 4);
    }

    /// The kept fill's lake groups, filtered at any depth and area, give the lakes a fresh
    /// search finds (labels, depths and every lake's figures); changed heights are not matched.
    #[test]
    fn kept_lake_groups_filter_to_the_lakes_of_a_fresh_search() {
        let mut rng = terrasynth_noise::rng::SplitMix64::new(3);
        let dem = Heightmap::from_fn(83, 59, 2.0, |x, y| {
            ((x as f32 * 0.31).sin() + (y as f32 * 0.23).cos()) * 5.0 + rng.below(100) as f32 * 0.02
        })
        .unwrap();
        let eps = DepressionFiller::with_epsilon().fill(&dem, 0.5).unwrap();
        let kept = ExactFill::from_epsilon(&dem, 0.5, &eps).unwrap().unwrap();
        assert!(find_lakes(&dem, 0.5, 0.0, 1).unwrap().lakes.len() > 5, "a map with lakes");
        for (depth, area) in [(0.0, 1), (0.3, 1), (0.0, 6), (0.5, 20), (100.0, 1)] {
            assert_eq!(
                lakes_of(&dem, 0.5, Some(&kept), depth, area).unwrap(),
                find_lakes(&dem, 0.5, depth, area).unwrap(),
                "min depth {depth}, min area {area}"
            );
        }
        let mut changed = dem.clone();
        changed.as_mut_slice()[500] += 1.0;
        assert_eq!(
            lakes_of(&changed, 0.5, Some(&kept), 0.0, 1).unwrap(),
            find_lakes(&changed, 0.5, 0.0, 1).unwrap()
        );
        assert!(lakes_of(&dem, 0.5, Some(&kept), f32::NAN, 1).is_err());
    }
}
