//! Recipe steps of the hydrology stage: `fill`, `rivers`, `lakes`, `squig-rivers`.

use super::HydroLayers;
use super::fill::DepressionFiller;
use super::lakes::find_lakes;
use super::layers::FlowGraph;
use super::rivers::carve_rivers;
use super::squig::SquigRivers;
use crate::Result;
use crate::step::{Category, Step, StepContext, StepInfo, Terrain};
use crate::step::{DefaultValue, ParamKind as K, ParamSpec, Params};

const FILL: &[ParamSpec] = &[ParamSpec {
    name: "epsilon",
    kind: K::Bool,
    default: DefaultValue::Bool(true),
    unit: "",
    doc: "Raise filled cells and flats by one f32 ulp per cell of flood distance (Priority-Flood+ε) so every \
          cell drains; false gives the exact, flat-lake fill.",
}];

/// Parameters of the `rivers` step (its defaults are also the rule of the layers the outputs
/// compute for a recipe without one: `hydro::layers`).
pub(super) const RIVERS: &[ParamSpec] = &[
    ParamSpec {
        name: "threshold",
        kind: K::Float { min: 1e-6, max: 1.0 },
        default: DefaultValue::Number(0.002),
        unit: "fraction of map area",
        doc: "Drainage area a cell needs to be a river, as a fraction of the map's cells (at least 1 cell); \
              lower gives more, shorter tributaries.",
    },
    ParamSpec {
        name: "max-width",
        kind: K::Float { min: 0.0, max: 64.0 },
        default: DefaultValue::Number(3.0),
        unit: "cells",
        doc: "Channel width at the largest drainage area; elsewhere width = max-width · (A / A_max)^0.5 \
              (hydraulic geometry, Leopold & Maddock 1953).",
    },
    ParamSpec {
        name: "carve-depth",
        kind: K::Float { min: 0.0, max: 1e6 },
        default: DefaultValue::Number(0.0),
        unit: "height units",
        doc: "Depth the largest river is cut below the filled surface; elsewhere carve-depth · (A / A_max)^0.4. \
              0 leaves the terrain unchanged.",
    },
];

const LAKES: &[ParamSpec] = &[
    ParamSpec {
        name: "min-depth",
        kind: K::Float { min: 0.0, max: 1e6 },
        default: DefaultValue::Number(0.0),
        unit: "height units",
        doc: "Depressions shallower than this (greatest depth) are not lakes.",
    },
    ParamSpec {
        name: "min-area",
        kind: K::Int { min: 1, max: 1 << 40 },
        default: DefaultValue::Number(4.0),
        unit: "cells",
        doc: "Depressions covering fewer cells are not lakes.",
    },
    ParamSpec {
        name: "carve-depth",
        kind: K::Float { min: 0.0, max: 1e6 },
        default: DefaultValue::Number(0.0),
        unit: "height units",
        doc: "Deepen lake beds: each lake cell is lowered by carve-depth · depth / max depth of its lake, so the \
              shore stays put and the water surface level is unchanged. 0 leaves the terrain unchanged.",
    },
];

const SQUIG: &[ParamSpec] = &[
    ParamSpec {
        name: "roughness",
        kind: K::Float { min: 0.0, max: 4.0 },
        default: DefaultValue::Number(0.5),
        unit: "",
        doc: "Midpoint displacement amplitude at the first level, as a fraction of the height range; it halves \
              (× 2^-smoothness) at each level. Higher is more rugged.",
    },
    ParamSpec {
        name: "smoothness",
        kind: K::Float { min: 0.0, max: 4.0 },
        default: DefaultValue::Number(1.0),
        unit: "",
        doc: "Amplitude decay exponent H: displacement scales by 2^-H per level (1 = classic fractal \
              terrain, higher is smoother).",
    },
    ParamSpec {
        name: "tributaries",
        kind: K::Int { min: 0, max: 64 },
        default: DefaultValue::Number(2.0),
        unit: "",
        doc: "Number of tributaries joining the main river (squig-curve branching, seed 001 §2.1.3).",
    },
    ParamSpec {
        name: "branch-level",
        kind: K::Int { min: 1, max: 12 },
        default: DefaultValue::Number(2.0),
        unit: "",
        doc: "Subdivision level at which tributaries spring: lower gives longer tributaries.",
    },
];

#[derive(Debug)]
struct FillStep {
    epsilon: bool,
}

impl Step for FillStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        DepressionFiller { epsilon: self.epsilon }.fill_in_place(&mut terrain.height, terrain.sea_level)?;
        ctx.progress.set(1.0);
        Ok(())
    }
}

#[derive(Debug)]
struct RiversStep {
    threshold: f64,
    max_width: f32,
    carve_depth: f32,
}

impl Step for RiversStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        let graph = FlowGraph::new(&terrain.height, terrain.sea_level)?;
        ctx.progress.set(0.7);
        ctx.progress.check_cancelled()?;
        let rivers = graph.rivers(self.threshold, self.max_width)?;
        if self.carve_depth > 0.0 {
            carve_rivers(&mut terrain.height, &rivers, self.carve_depth)?;
        }
        let layers = terrain.layers.get_or_default::<HydroLayers>();
        layers.flow = Some(graph.accumulation_f32());
        layers.rivers = rivers;
        ctx.progress.set(1.0);
        Ok(())
    }
}

#[derive(Debug)]
struct LakesStep {
    min_depth: f32,
    min_area: usize,
    carve_depth: f32,
}

impl Step for LakesStep {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        let mut map = find_lakes(&terrain.height, terrain.sea_level, self.min_depth, self.min_area)?;
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

fn build_fill(p: &Params) -> Result<Box<dyn Step>> {
    Ok(Box::new(FillStep { epsilon: p.bool("epsilon")? }))
}

fn build_rivers(p: &Params) -> Result<Box<dyn Step>> {
    Ok(Box::new(RiversStep {
        threshold: p.f64("threshold")?,
        max_width: p.f32("max-width")?,
        carve_depth: p.f32("carve-depth")?,
    }))
}

fn build_lakes(p: &Params) -> Result<Box<dyn Step>> {
    Ok(Box::new(LakesStep {
        min_depth: p.f32("min-depth")?,
        min_area: p.usize("min-area")?,
        carve_depth: p.f32("carve-depth")?,
    }))
}

fn build_squig(p: &Params) -> Result<Box<dyn Step>> {
    let generator = SquigRivers {
        roughness: p.f32("roughness")?,
        smoothness: p.f32("smoothness")?,
        tributaries: p.usize("tributaries")?,
        branch_level: p.usize("branch-level")?,
    };
    generator.validate()?;
    Ok(Box::new(SquigStep { generator }))
}

/// The hydrology stage's registry entries.
pub fn steps() -> Vec<StepInfo> {
    vec![
        StepInfo {
            name: "fill",
            category: Category::Hydro,
            doc: "Fill depressions so every cell drains to the map edge or the sea (cells below the sea level).",
            source: "Barnes, Lehman & Mulla 2014, Priority-Flood (+ε variant)",
            params: FILL,
            build: build_fill,
        },
        StepInfo {
            name: "rivers",
            category: Category::Hydro,
            doc: "Route water by D8 on the ε-filled surface, accumulate drainage area, keep cells above a threshold \
                  as rivers (width ∝ A^0.5), optionally carve them; stores rivers and the flow map on the terrain.",
            source: "O'Callaghan & Mark 1984 (D8); Barnes et al. 2014; Leopold & Maddock 1953; issue 4 §2",
            params: RIVERS,
            build: build_rivers,
        },
        StepInfo {
            name: "lakes",
            category: Category::Hydro,
            doc: "Find lakes (depressions filled to their spill level), store their depth as the water layer and \
                  their outlines; optionally deepen lake beds.",
            source: "Barnes et al. 2014 (exact Priority-Flood); issue 4 §2",
            params: LAKES,
            build: build_lakes,
        },
        StepInfo {
            name: "squig-rivers",
            category: Category::Generate,
            doc: "Triangular midpoint displacement with a squig-curve river (and tributaries) whose heights never \
                  rise downstream and stay below the neighbouring terrain.",
            source: "Prusinkiewicz & Hammel 1993; seed 001 §2.1",
            params: SQUIG,
            build: build_squig,
        },
    ]
}
