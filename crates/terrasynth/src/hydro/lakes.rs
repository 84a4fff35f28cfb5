//! Lakes: the cells an exact (ε-free) Priority-Flood raises, grouped into 8-connected
//! components. Each component has one flat water surface (its spill height): two raised cells
//! that touch were flooded from the same spill level, so a lake never has two levels.
//!
//! Depth of a cell = `filled − original` (height units); volume = Σ depth · cell_size² (f64).

use serde::{Deserialize, Serialize};

use super::fill::DepressionFiller;
use crate::grid::D8;
use crate::{Grid, Heightmap, Result};

/// One lake.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lake {
    /// Id, as stored in [`LakeMap::labels`] (ids start at 1; 0 means "no lake").
    pub id: u32,
    /// Water surface height (the spill height of the depression), height units.
    pub level: f32,
    /// Number of cells covered.
    pub area_cells: usize,
    /// Greatest depth, height units.
    pub max_depth: f32,
    /// Water volume Σ depth · cell_size², in height units × m².
    pub volume: f64,
    /// Bounding box `[x0, y0, x1, y1]` (inclusive) in cells.
    pub bbox: [usize; 4],
}

/// All lakes of a terrain plus a label grid.
#[derive(Clone, Debug, PartialEq)]
pub struct LakeMap {
    /// Lake id per cell (0 = dry land or sea).
    pub labels: Grid<u32>,
    /// The lakes, by id (`lakes[k].id == k + 1`).
    pub lakes: Vec<Lake>,
    /// Water depth per cell (0 outside lakes), height units.
    pub depth: Heightmap,
}

/// Finds lakes of `dem` (see the module docs). A lake is kept when its greatest depth is at
/// least `min_depth` (height units, ≥ 0) and it covers at least `min_area` cells; cells of
/// dropped lakes get label 0 and depth 0. `sea_level` as in [`DepressionFiller::fill`].
pub fn find_lakes(dem: &Heightmap, sea_level: f32, min_depth: f32, min_area: usize) -> Result<LakeMap> {
    let filled = DepressionFiller::exact().fill(dem, sea_level)?;
    lakes_from_fill(dem, &filled, min_depth, min_area)
}

/// [`find_lakes`] from an exact fill already computed (e.g. by [`DepressionFiller::fill_both`]).
pub fn lakes_from_fill(
    dem: &Heightmap,
    filled: &Heightmap,
    min_depth: f32,
    min_area: usize,
) -> Result<LakeMap> {
    check_min_depth(min_depth)?;
    LakeComponents::new(dem, filled)?.select(dem, filled, min_depth, min_area)
}

fn check_min_depth(min_depth: f32) -> Result<()> {
    if !(min_depth.is_finite() && min_depth >= 0.0) {
        return Err(crate::Error::param("min-depth", min_depth, "a finite number >= 0"));
    }
    Ok(())
}

/// Every 8-connected group of the cells an exact fill raised, before any depth or area filter:
/// the part of [`lakes_from_fill`] that does not depend on them, which the `rivers` step finds
/// beside its flow routing (on the other core) for the `lakes` step to filter.
#[derive(Clone, Debug)]
pub(crate) struct LakeComponents {
    /// Group per cell, numbered from 1 in the row-major order of their first cells; 0 = dry.
    labels: Vec<u32>,
    /// The groups as lakes, `lakes[k].id == k + 1`.
    lakes: Vec<Lake>,
}

impl LakeComponents {
    /// The groups of `filled > dem` (depth-first from each group's first cell in row-major
    /// order, with its level, area, depth, volume and box).
    pub(crate) fn new(dem: &Heightmap, filled: &Heightmap) -> Result<Self> {
        if !dem.same_size(filled) {
            return Err(crate::Error::SizeMismatch {
                what: "filled surface".into(),
                expected_w: dem.width(),
                expected_h: dem.height(),
                got_w: filled.width(),
                got_h: filled.height(),
            });
        }
        let (w, h) = (dem.width(), dem.height());
        let z = dem.as_slice();
        let f = filled.as_slice();
        // Read before written: zeros written now (see `memory::zeros_written`).
        let mut labels: Vec<u32> = crate::memory::zeros_written(w * h);
        let mut lakes = Vec::new();
        let mut stack = Vec::new();
        let cell_area = dem.cell_size() * dem.cell_size();
        for start in 0..w * h {
            if labels[start] != 0 || f[start] <= z[start] {
                continue;
            }
            let id = lakes.len() as u32 + 1;
            labels[start] = id;
            stack.push(start);
            let mut lake = Lake {
                id,
                level: f[start],
                area_cells: 0,
                max_depth: 0.0,
                volume: 0.0,
                bbox: [usize::MAX, usize::MAX, 0, 0],
            };
            while let Some(c) = stack.pop() {
                let (x, y) = (c % w, c / w);
                let d = f[c] - z[c];
                lake.area_cells += 1;
                lake.max_depth = lake.max_depth.max(d);
                lake.volume += d as f64 * cell_area;
                lake.bbox =
                    [lake.bbox[0].min(x), lake.bbox[1].min(y), lake.bbox[2].max(x), lake.bbox[3].max(y)];
                for &(dx, dy) in &D8 {
                    let (nx, ny) = (x as i64 + dx as i64, y as i64 + dy as i64);
                    if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                        continue;
                    }
                    let n = ny as usize * w + nx as usize;
                    if labels[n] == 0 && f[n] > z[n] {
                        labels[n] = id;
                        stack.push(n);
                    }
                }
            }
            lakes.push(lake);
        }
        Ok(Self { labels, lakes })
    }

    /// The lakes at least `min_depth` deep somewhere and `min_area` cells large, numbered from 1
    /// in the groups' order; the cells of the others get label 0 and depth 0. `dem` and
    /// `filled` are the grids the groups were found on.
    pub(crate) fn select(
        &self,
        dem: &Heightmap,
        filled: &Heightmap,
        min_depth: f32,
        min_area: usize,
    ) -> Result<LakeMap> {
        use rayon::prelude::*;
        check_min_depth(min_depth)?;
        let mut id_of = vec![0u32; self.lakes.len() + 1];
        let mut lakes = Vec::new();
        for (k, lake) in self.lakes.iter().enumerate() {
            if lake.max_depth >= min_depth && lake.area_cells >= min_area {
                id_of[k + 1] = lakes.len() as u32 + 1;
                lakes.push(Lake { id: id_of[k + 1], ..lake.clone() });
            }
        }
        let labels: Vec<u32> = self.labels.par_iter().map(|&l| id_of[l as usize]).collect();
        let (z, f) = (dem.as_slice(), filled.as_slice());
        let depth: Vec<f32> =
            labels.par_iter().enumerate().map(|(c, &l)| if l != 0 { f[c] - z[c] } else { 0.0 }).collect();
        let (w, h) = (dem.width(), dem.height());
        Ok(LakeMap {
            labels: Grid::from_vec(w, h, dem.cell_size(), labels)?,
            lakes,
            depth: Grid::from_vec(w, h, dem.cell_size(), depth)?,
        })
    }
}
