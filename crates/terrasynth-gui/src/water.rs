//! Water layers the 2D view draws: lakes, rivers traced from the user's sources, and D8 flow
//! accumulation. Recomputed off the UI thread after every edit.

use terrasynth::hydro::{D8Router, RiverMode, RiverTracer};
use terrasynth::{Grid, Heightmap, Result};

/// Lakes, rivers from sources and flow accumulation of one heightmap.
#[derive(Clone, Debug)]
pub struct Water {
    /// Lake id per cell (0 = dry), from the exact depression fill (seed 004 §9 lakes).
    pub lake_labels: Grid<u32>,
    /// One polyline of cells per river source, downstream order.
    pub rivers: Vec<Vec<(usize, usize)>>,
    /// `ln(1 + drainage area in cells)` per cell, D8 on the ε-filled surface.
    pub log_flow: Heightmap,
}

impl Water {
    /// Fills `map` (outlets: the edge and cells below `sea_level`), finds its lakes, traces a
    /// river from each source with D8 steepest descent on the filled surface
    /// ([`RiverMode::Filled`]: rivers cross lakes and always reach the sea or the edge), and
    /// accumulates D8 flow.
    pub fn compute(map: &Heightmap, sea_level: f32, sources: &[(usize, usize)]) -> Result<Self> {
        let tracer = RiverTracer::new(map, sea_level)?;
        let mut rivers = Vec::with_capacity(sources.len());
        for &s in sources {
            rivers.push(tracer.trace(s, RiverMode::Filled)?.cells);
        }
        let flow = D8Router.d8(tracer.filled(), sea_level)?.accumulate(None)?;
        let log_flow: Heightmap = flow.map(|&a| (1.0 + a).ln() as f32);
        Ok(Self { lake_labels: tracer.lakes().labels.clone(), rivers, log_flow })
    }
}
