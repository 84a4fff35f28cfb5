//! Recipe steps of the hydrology stage: `fill`, `rivers`, `lakes`, `river-sources` (the
//! `squig-rivers` generator is declared beside its algorithm in `squig.rs` and registered with
//! the generators), and [`source_rivers`], the one tracer of rivers from sources that the
//! `river-sources` step and a project's placed sources share.

use super::HydroLayers;
use super::fill::DepressionFiller;
use super::layers::{ExactFill, FlowGraph, default_max_width, lakes_of};
use super::rivers::{River, RiverMode, RiverPoint, RiverTracer, carve_rivers};
use crate::step::params::{Choice, step_params};
use crate::step::{Category, Step, StepContext, StepInfo, Terrain};
use crate::step::{DefaultValue, ParamKind};
use crate::{Error, Result};

step_params! {
    /// The `rivers` step: route water by D8 on the ε-filled surface ([`FlowGraph`]), keep the
    /// cells draining at least `threshold` of the map as rivers (width ∝ A^0.5, Leopold &
    /// Maddock 1953), optionally carve them ([`carve_rivers`]). Its defaults are also the rule of
    /// the rivers [`WaterLayers`](super::WaterLayers) computes for a recipe without this step.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct RiversStep {
        threshold: f64 = ParamSpec {
            name: "threshold",
            label: "River threshold",
            kind: ParamKind::Float { min: 1e-6, max: 1.0 },
            default: DefaultValue::Number(0.002),
            unit: "fraction of map area",
            doc: "Drainage area a cell needs to be a river, as a fraction of the map's cells (at least 1 cell); \
                  lower gives more, shorter tributaries.",
        },
        max_width: f32 = ParamSpec {
            name: "max-width",
            label: "Largest width",
            kind: ParamKind::Float { min: 0.0, max: 64.0 },
            default: DefaultValue::Number(3.0),
            unit: "cells",
            doc: "Channel width at the largest drainage area; elsewhere width = max-width · (A / A_max)^0.5 \
                  (hydraulic geometry, Leopold & Maddock 1953).",
        },
        carve_depth: f32 = ParamSpec {
            name: "carve-depth",
            label: "Carve depth",
            kind: ParamKind::Float { min: 0.0, max: 1e6 },
            default: DefaultValue::Number(0.0),
            unit: "height units",
            doc: "Depth the largest river is cut below the filled surface; elsewhere carve-depth · (A / A_max)^0.4. \
                  0 leaves the terrain unchanged. A project's placed river sources are cut the same way.",
        },
    }
}

step_params! {
    /// The `lakes` step: find lakes ([`find_lakes`](super::find_lakes): depressions of the exact Priority-Flood
    /// fill, Barnes et al. 2014), store their depth as the water layer and their outlines,
    /// optionally deepen their beds.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct LakesStep {
        min_depth: f32 = ParamSpec {
            name: "min-depth",
            label: "Smallest lake depth",
            kind: ParamKind::Float { min: 0.0, max: 1e6 },
            default: DefaultValue::Number(0.0),
            unit: "height units",
            doc: "Depressions shallower than this (greatest depth) are not lakes.",
        },
        min_area: usize = ParamSpec {
            name: "min-area",
            label: "Smallest lake area",
            kind: ParamKind::Int { min: 1, max: 1 << 40 },
            default: DefaultValue::Number(4.0),
            unit: "cells",
            doc: "Depressions covering fewer cells are not lakes.",
        },
        carve_depth: f32 = ParamSpec {
            name: "carve-depth",
            label: "Carve depth",
            kind: ParamKind::Float { min: 0.0, max: 1e6 },
            default: DefaultValue::Number(0.0),
            unit: "height units",
            doc: "Deepen lake beds: each lake cell is lowered by carve-depth · depth / max depth of its lake, so the \
                  shore stays put and the water surface level is unchanged. 0 leaves the terrain unchanged.",
        },
    }
}

step_params! {
    /// The `river-sources` step: a river traced from each listed source (seed 004 §9: the user
    /// places the sources), by one of three walks ([`RiverMode`]): the seed's first version
    /// (`walk-v1`: lowest neighbour not yet in the river, uphill if it must, stops at the sea or
    /// when enclosed by its own cells), its second version (`backtrack-v2`: steps back around
    /// the lakes it makes, so it always reaches the sea or the map edge), or D8 descent on the
    /// ε-filled surface (`filled`, Barnes et al. 2014: the editor's default). Sources are cells
    /// (`sources`, x, y pairs, rounded to the nearest cell) and/or metres from the map's corner
    /// (`sources-m`, divided by the cell size, rounded); a source outside the map is an error
    /// naming the map's size. The rivers are drawn with the placed rivers (water.png, the
    /// colour maps, rivers.geojson; [`HydroLayers::sourced`]); the heights are not changed.
    /// Single maps only (a world has no edge to run to: refused there as a global step).
    #[derive(Clone, Debug, PartialEq)]
    pub struct RiverSourcesStep {
        sources: Vec<f64> = ParamSpec {
            name: "sources",
            label: "Sources",
            kind: ParamKind::List { min: 0.0, max: 1.0e9, min_len: 0, max_len: 512 },
            default: DefaultValue::List(&[]),
            unit: "cells",
            doc: "River sources as x, y pairs of cell coordinates (column, row; rounded to the nearest cell).",
        },
        sources_m: Vec<f64> = ParamSpec {
            name: "sources-m",
            label: "Sources in metres",
            kind: ParamKind::List { min: 0.0, max: 1.0e12, min_len: 0, max_len: 512 },
            default: DefaultValue::List(&[]),
            unit: "m",
            doc: "More sources as x, y pairs in metres from the map's first cell (divided by the cell size, \
                  rounded to the nearest cell).",
        },
        mode: RiverMode = ParamSpec {
            name: "mode",
            label: "Mode",
            kind: ParamKind::Choice(RiverMode::NAMES),
            default: DefaultValue::Text("filled"),
            unit: "",
            doc: "`walk-v1`: seed 004 §9 first version (lowest neighbour not yet in the river, uphill if it \
                  must; stops at the sea or enclosed by its own cells). `backtrack-v2`: the seed's second \
                  version (steps back around the lakes it makes: always reaches the sea or the edge). `filled`: \
                  D8 descent on the depression-filled surface (always reaches the sea or the edge, crosses lakes).",
        },
    }
}

impl RiverSourcesStep {
    /// A checked step: ranges, and both lists of even length (x, y pairs).
    pub fn new(sources: Vec<f64>, sources_m: Vec<f64>, mode: RiverMode) -> Result<Self> {
        Self { sources, sources_m, mode }.checked()
    }

    fn checked(self) -> Result<Self> {
        self.check_ranges()?;
        crate::step::params::check_pairs(&[("sources", &self.sources), ("sources-m", &self.sources_m)])?;
        Ok(self)
    }

    /// The sources as cells of a `w × h` map of `cell_size_m` metres: `sources` then
    /// `sources-m`, each rounded to the nearest cell. Errors on a source outside the map.
    pub fn cells(&self, w: usize, h: usize, cell_size_m: f64) -> Result<Vec<(usize, usize)>> {
        let cells = self.sources.chunks(2).map(|p| ("sources", p[0], p[1], 1.0));
        let metres = self.sources_m.chunks(2).map(|p| ("sources-m", p[0], p[1], cell_size_m));
        cells
            .chain(metres)
            .map(|(name, x, y, unit)| {
                let (cx, cy) = ((x / unit).round(), (y / unit).round());
                if cx < w as f64 && cy < h as f64 {
                    Ok((cx as usize, cy as usize))
                } else {
                    let allowed = if name == "sources" {
                        format!("cells inside the {w}x{h} map (x < {w}, y < {h})")
                    } else {
                        format!(
                            "metres inside the {w}x{h} map of {cell_size_m} m cells (x < {}, y < {})",
                            (w as f64 - 0.5) * cell_size_m,
                            (h as f64 - 0.5) * cell_size_m
                        )
                    };
                    Err(Error::param(name, format!("[{x}, {y}]"), allowed))
                }
            })
            .collect()
    }
}

/// Traces a river from each of `sources` (cells of `terrain`'s map, each with its walk) on the
/// terrain's heights and sea level ([`RiverTracer`]). Each point carries the drainage area of
/// its cell (the `rivers` step's flow layer when the terrain has one, else a [`FlowGraph`] of
/// its heights) and the hydraulic-geometry width `max-width · (A / A_max)^0.5` (Leopold &
/// Maddock 1953; `max-width` of the terrain's network, else the `rivers` step's default).
/// Heights: the ε-filled surface for [`RiverMode::Filled`], the raw terrain for the walks. A
/// filled river that reaches a river of the terrain's own network ([`HydroLayers::rivers`])
/// stops there, the junction included, as a tributary does; the walks run to their own end
/// (the seed's rules). A [`RiverMode::BacktrackV2`] river's lake arms
/// ([`SourceRiver::lake_arms`](super::SourceRiver)) follow it as rivers of their own, each
/// ending on the cell the walk went on from. Errors on a source outside the map.
pub fn source_rivers(terrain: &Terrain, sources: &[((usize, usize), RiverMode)]) -> Result<Vec<River>> {
    if sources.is_empty() {
        return Ok(Vec::new());
    }
    let map = &terrain.height;
    let w = map.width();
    let tracer = RiverTracer::new(map, terrain.sea_level)?;
    let steps = terrain.layers.get::<HydroLayers>();
    let area: Vec<f32> = match steps.and_then(|l| l.flow.as_ref()) {
        Some(flow) => flow.as_slice().to_vec(),
        None => {
            let graph = FlowGraph::new(map, terrain.sea_level)?;
            graph.accumulation.as_slice().iter().map(|&a| a as f32).collect()
        }
    };
    let network = steps.map_or(&[][..], |l| l.rivers.as_slice());
    let max_width = network
        .iter()
        .flat_map(|r| r.points.iter().map(|p| p.width))
        .fold(None, |m: Option<f32>, v| Some(m.map_or(v, |m| m.max(v))))
        .unwrap_or_else(default_max_width);
    let mut on_network = vec![false; area.len()];
    for p in network.iter().flat_map(|r| r.points.iter()) {
        let (x, y) = (p.x.round(), p.y.round());
        if x >= 0.0 && y >= 0.0 && (x as usize) < w && (y as usize * w + x as usize) < area.len() {
            on_network[y as usize * w + x as usize] = true;
        }
    }
    let a_max = area.iter().copied().fold(1.0f32, f32::max);
    let point = |(x, y): (usize, usize), height: f32| {
        let i = y * w + x;
        RiverPoint {
            x: x as f32,
            y: y as f32,
            height,
            discharge: area[i],
            width: max_width * (area[i] / a_max).sqrt(),
        }
    };
    let raw = map.as_slice();
    let mut out = Vec::with_capacity(sources.len());
    for &(s, mode) in sources {
        let traced = tracer.trace(s, mode)?;
        let mut river = River::default();
        for (&c, &height) in traced.cells.iter().zip(&traced.heights) {
            river.points.push(point(c, height));
            if mode == RiverMode::Filled && on_network[c.1 * w + c.0] {
                break;
            }
        }
        if river.points.len() >= 2 {
            out.push(river);
        }
        for arm in &traced.lake_arms {
            let points: Vec<RiverPoint> = arm.iter().map(|&c| point(c, raw[c.1 * w + c.0])).collect();
            if points.len() >= 2 {
                out.push(River { points });
            }
        }
    }
    Ok(out)
}

impl Step for RiverSourcesStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        let map = &terrain.height;
        let cells = self.cells(map.width(), map.height(), map.cell_size())?;
        let sources: Vec<_> = cells.into_iter().map(|c| (c, self.mode)).collect();
        let rivers = source_rivers(terrain, &sources)?;
        terrain.layers.get_or_default::<HydroLayers>().sourced.extend(rivers);
        ctx.progress.set(1.0);
        Ok(())
    }
}

impl RiversStep {
    /// A checked step: every value in its [`RiversStep::PARAMS`] range.
    pub fn new(threshold: f64, max_width: f32, carve_depth: f32) -> Result<Self> {
        let s = Self { threshold, max_width, carve_depth };
        s.check_ranges()?;
        Ok(s)
    }
}

impl LakesStep {
    /// A checked step: every value in its [`LakesStep::PARAMS`] range.
    pub fn new(min_depth: f32, min_area: usize, carve_depth: f32) -> Result<Self> {
        let s = Self { min_depth, min_area, carve_depth };
        s.check_ranges()?;
        Ok(s)
    }
}

impl Step for DepressionFiller {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        self.fill_in_place(&mut terrain.height, terrain.sea_level)?;
        ctx.progress.set(1.0);
        Ok(())
    }
}

impl Step for RiversStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        let (map, sea_level) = (&terrain.height, terrain.sea_level);
        // The exact fill for the lakes (`ExactFill`), from the ε fill's raised cells beside
        // the routing, unless carving is about to change the heights it would be the fill of.
        let (graph, exact) = FlowGraph::with_exact_fill(map, sea_level, self.carve_depth <= 0.0)?;
        ctx.progress.set(0.7);
        ctx.progress.check_cancelled()?;
        let rivers = graph.rivers(self.threshold, self.max_width)?;
        if self.carve_depth > 0.0 {
            carve_rivers(&mut terrain.height, &rivers, self.carve_depth)?;
        }
        let layers = terrain.layers.get_or_default::<HydroLayers>();
        layers.flow = Some(graph.accumulation_f32());
        layers.rivers = rivers;
        match exact {
            Some(exact) => terrain.layers.insert(exact),
            None => terrain.layers.remove::<ExactFill>(),
        };
        ctx.progress.set(1.0);
        Ok(())
    }
}

impl Step for LakesStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        let kept = terrain.layers.remove::<ExactFill>();
        let mut map =
            lakes_of(&terrain.height, terrain.sea_level, kept.as_ref(), self.min_depth, self.min_area)?;
        drop(kept);
        if self.carve_depth > 0.0 {
            let labels = map.labels.as_slice();
            for (i, (h, d)) in
                terrain.height.as_mut_slice().iter_mut().zip(map.depth.as_mut_slice()).enumerate()
            {
                if labels[i] != 0 {
                    let lake = &map.lakes[labels[i] as usize - 1];
                    let cut = self.carve_depth * *d / lake.max_depth;
                    *h -= cut;
                    *d += cut;
                }
            }
            for lake in &mut map.lakes {
                lake.max_depth += self.carve_depth;
                lake.volume = 0.0;
            }
            let cell_area = terrain.height.cell_size() * terrain.height.cell_size();
            for (i, &l) in labels.iter().enumerate() {
                if l != 0 {
                    map.lakes[l as usize - 1].volume += map.depth.as_slice()[i] as f64 * cell_area;
                }
            }
        }
        terrain.water = Some(map.depth);
        let layers = terrain.layers.get_or_default::<HydroLayers>();
        layers.lake_labels = Some(map.labels);
        layers.lakes = map.lakes;
        ctx.progress.set(1.0);
        Ok(())
    }
}

/// The hydrology stage's registry entries.
pub fn steps() -> Vec<StepInfo> {
    vec![
        StepInfo {
            name: "fill",
            category: Category::Hydro,
            doc: "Fill depressions so every cell drains to the map edge or the sea (cells below the sea level).",
            source: "Barnes, Lehman & Mulla 2014, Priority-Flood (+ε variant)",
            params: DepressionFiller::PARAMS,
            build: |p| Ok(Box::new(DepressionFiller::read_params(p)?)),
        },
        StepInfo {
            name: "rivers",
            category: Category::Hydro,
            doc: "Route water by D8 on the ε-filled surface, accumulate drainage area, keep cells above a threshold \
                  as rivers (width ∝ A^0.5), optionally carve them; stores rivers and the flow map on the terrain.",
            source: "O'Callaghan & Mark 1984 (D8); Barnes et al. 2014; Leopold & Maddock 1953; issue 4 §2",
            params: RiversStep::PARAMS,
            build: |p| Ok(Box::new(RiversStep::read_params(p)?)),
        },
        StepInfo {
            name: "river-sources",
            category: Category::Hydro,
            doc: "Trace a river from each listed source (cells or metres) by the seed's walk v1, its backtracking \
                  v2, or D8 descent on the filled surface; stores them with the placed rivers (heights unchanged).",
            source: "seed 004 §9 (rivers v1 and v2); Barnes et al. 2014 (filled); issue 14 §1",
            params: RiverSourcesStep::PARAMS,
            build: |p| Ok(Box::new(RiverSourcesStep::read_params(p)?.checked()?)),
        },
        StepInfo {
            name: "lakes",
            category: Category::Hydro,
            doc: "Find lakes (depressions filled to their spill level), store their depth as the water layer and \
                  their outlines; optionally deepen lake beds.",
            source: "Barnes et al. 2014 (exact Priority-Flood); issue 4 §2",
            params: LakesStep::PARAMS,
            build: |p| Ok(Box::new(LakesStep::read_params(p)?)),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::step::params::{assert_ranges_enforced, just_outside, spec_named};
    use crate::step::{ParamSpec, Params};

    /// [`assert_ranges_enforced`] on a constructor taking its values by position (`build(i, v)`
    /// sets the `i`-th spec's value to `v`), every spec a number; a refusal must also word the
    /// range as the spec does.
    fn check_constructor(specs: &[ParamSpec], build: impl Fn(usize, f64) -> Result<()>) {
        let by_name = |key: &str, v: f64| {
            let i = specs.iter().position(|s| s.name == key).expect("a spec of this step");
            let r = build(i, v);
            if let Err(Error::InvalidParameter { name, allowed, .. }) = &r {
                assert_eq!(allowed, &spec_named(specs, name).allowed(), "{key} = {v}");
            }
            r
        };
        assert_eq!(assert_ranges_enforced(specs, &by_name), specs.len());
    }

    #[test]
    fn rivers_new_refuses_exactly_outside_its_specs() {
        let d = RiversStep::default();
        check_constructor(RiversStep::PARAMS, |i, v| {
            let mut a = [d.threshold, d.max_width as f64, d.carve_depth as f64];
            a[i] = v;
            RiversStep::new(a[0], a[1] as f32, a[2] as f32).map(|_| ())
        });
        assert_eq!(d, RiversStep::new(0.002, 3.0, 0.0).unwrap());
    }

    #[test]
    fn lakes_new_refuses_exactly_outside_its_specs() {
        let d = LakesStep::default();
        check_constructor(LakesStep::PARAMS, |i, v| {
            let mut a = [d.min_depth as f64, d.min_area as f64, d.carve_depth as f64];
            a[i] = v;
            LakesStep::new(a[0] as f32, a[1] as usize, a[2] as f32).map(|_| ())
        });
        assert_eq!(d, LakesStep::new(0.0, 4, 0.0).unwrap());
    }

    /// Recipe validation and the constructor read the same declaration: a recipe value just
    /// outside a range is refused by `Params::validate` with the range the constructor names.
    #[test]
    fn recipes_and_constructors_share_the_ranges() {
        for (name, specs) in [("rivers", RiversStep::PARAMS), ("lakes", LakesStep::PARAMS)] {
            let info = steps().into_iter().find(|s| s.name == name).unwrap();
            assert_eq!(info.params, specs, "{name}");
            for spec in specs {
                let (_, _, _, above) = just_outside(spec).expect("a number spec");
                let given = [(spec.name.to_string(), crate::step::ParamValue::Number(above))].into();
                let problems = Params::validate(info.params, &given).unwrap_err();
                assert_eq!(problems.len(), 1, "{name}.{}: {problems:?}", spec.name);
                assert!(problems[0].to_string().contains(&spec.allowed()), "{problems:?}");
            }
        }
        let fill = steps().into_iter().find(|s| s.name == "fill").unwrap();
        assert_eq!(fill.params, DepressionFiller::PARAMS);
        assert_eq!(DepressionFiller::default(), DepressionFiller::with_epsilon());
    }
}
