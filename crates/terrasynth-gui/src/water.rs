//! Water layers the 2D view draws: the lakes, rivers and D8 flow accumulation that the export
//! writes (built by the library's one hydrology layer builder, `terrasynth::hydro::WaterLayers`,
//! the same call `water.png`, `flow.png` and `rivers.geojson` come from), including the rivers
//! traced from the user's sources ([`place_rivers_with`], as the export traces them). Recomputed off
//! the UI thread after every edit.

use terrasynth::hydro::RiverMode;
use terrasynth::hydro::{HydroLayers, River, WaterLayers};
use terrasynth::recipe::project::place_rivers_with;
use terrasynth::render::water::stamp_rivers;
use terrasynth::step::Terrain;
use terrasynth::{Grid, Heightmap, Result};

/// Lakes, rivers and flow accumulation of one terrain, as the export draws them, and the
/// rivers traced from sources.
#[derive(Clone, Debug)]
pub struct Water {
    /// Lake id per cell (0 = dry): the export's lakes (the recipe's `lakes` step, else the
    /// depressions covering at least max(4, cells / 2000) cells).
    pub lake_labels: Grid<u32>,
    /// The export's river network (the recipe's `rivers` step, else the `rivers` step's rule
    /// with its defaults), then the rivers of the sources; polylines in grid coordinates.
    pub network: Vec<River>,
    /// Cells the network (and the sources' rivers) cover, stamped at channel width as in
    /// `water.png`.
    pub river_cells: Vec<bool>,
    /// One polyline of cells per river source, downstream order (down to the sea, the edge,
    /// or the recipe's own river it joins).
    pub rivers: Vec<Vec<(usize, usize)>>,
    /// The sources' river cells, stamped at channel width: painted on the colour and shaded
    /// views as the export paints them on `color.png`/`shaded.png`.
    pub placed_cells: Vec<bool>,
    /// `ln(1 + drainage area in cells)` per cell: the export's flow layer (`flow.png`).
    pub log_flow: Heightmap,
}

impl Water {
    /// Traces a river from each source by its mode ([`place_rivers_with`]: the seed's walk v1,
    /// its backtracking v2, or D8 descent on the filled surface) and
    /// builds the export's hydrology layers of the result ([`WaterLayers::build`]).
    pub fn compute(terrain: &Terrain, sources: &[((usize, usize), RiverMode)]) -> Result<Self> {
        let mut terrain = terrain.clone();
        place_rivers_with(&mut terrain, sources)?;
        let terrain = &terrain;
        let map = &terrain.height;
        let (w, h, cs) = (map.width(), map.height(), map.cell_size());
        let layers = WaterLayers::build(terrain)?;
        let placed = terrain.layers.get::<HydroLayers>().map_or(&[][..], |l| l.placed.as_slice());
        let rivers =
            placed.iter().map(|r| r.points.iter().map(|p| (p.x as usize, p.y as usize)).collect()).collect();
        let mut placed_cells = vec![false; w * h];
        stamp_rivers(w, h, placed, |i, _| placed_cells[i] = true);
        let mut river_cells = vec![false; w * h];
        stamp_rivers(w, h, &layers.rivers, |i, _| river_cells[i] = true);
        let log_flow =
            Heightmap::from_vec(w, h, cs, layers.flow.iter().map(|&a| a.max(0.0).ln_1p()).collect())?;
        let lake_labels = Grid::from_vec(w, h, cs, layers.lake_labels.into_owned())?;
        Ok(Self {
            lake_labels,
            network: layers.rivers.into_owned(),
            river_cells,
            rivers,
            placed_cells,
            log_flow,
        })
    }

    /// Whether cell `i` (row-major) is fresh water: a lake or a river of the network.
    pub fn is_fresh(&self, i: usize) -> bool {
        self.lake_labels.as_slice()[i] != 0 || self.river_cells[i]
    }
}
