//! World windows for the exports: [`Window`] (which cells of an endless world a file set
//! holds) and [`run_window`], which runs a world recipe on that window grown by
//! [`WINDOW_MARGIN`] cell on each side, so that the hillshade of the window's edge cells is
//! computed with their true neighbours and matches the neighbouring tile's (research
//! anchors-scale.md §4: "normals computed with the neighbours").

use serde::{Deserialize, Serialize};

use crate::recipe::model::MAX_RECIPE_SIDE;
use crate::recipe::{Pipeline, PipelineProgress, RunObserver, RunOutput};
use crate::{Error, Result};

/// Cells added on each side of a window before it runs, cut off by the export: the 3×3
/// hillshade stencil of an edge cell reads one cell beyond the window.
pub const WINDOW_MARGIN: usize = 1;

/// Largest absolute world cell coordinate a window may reach (10¹² cells: far beyond any
/// use, and small enough that every sum of coordinates and sizes stays exact in `i64` and in
/// `f64` metres).
pub const MAX_WORLD_CELL: i64 = 1_000_000_000_000;

/// The `width × height` window of a world whose cell (0, 0) is world cell `(x0, y0)`
/// (x grows east, y grows south, as image rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// World column of the window's first column.
    pub x0: i64,
    /// World row of the window's first row.
    pub y0: i64,
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

impl Window {
    /// A checked window: each side in 2..=[`MAX_RECIPE_SIDE`] and every cell within
    /// ±[`MAX_WORLD_CELL`] (margin included).
    pub fn new(x0: i64, y0: i64, width: usize, height: usize) -> Result<Self> {
        let w = Self { x0, y0, width, height };
        w.check()?;
        Ok(w)
    }

    /// The checks of [`Window::new`].
    pub fn check(&self) -> Result<()> {
        let side_ok = |s: usize| (2..=MAX_RECIPE_SIDE).contains(&s);
        if !side_ok(self.width) || !side_ok(self.height) {
            return Err(Error::param(
                "window size",
                format!("{}x{}", self.width, self.height),
                format!("each side an integer in 2..={MAX_RECIPE_SIDE}"),
            ));
        }
        let m = WINDOW_MARGIN as i64;
        let inside = |start: i64, len: usize| {
            let end = start.checked_add(len as i64 - 1);
            start.checked_sub(m).is_some_and(|s| s >= -MAX_WORLD_CELL)
                && end.and_then(|e| e.checked_add(m)).is_some_and(|e| e <= MAX_WORLD_CELL)
        };
        if !inside(self.x0, self.width) || !inside(self.y0, self.height) {
            let lim = MAX_WORLD_CELL - m;
            return Err(Error::param(
                "window origin",
                format!("{},{}", self.x0, self.y0),
                format!("every cell of the window within -{lim}..={lim} (world cells)"),
            ));
        }
        Ok(())
    }

    /// The window grown by [`WINDOW_MARGIN`] on each side (what [`run_window`] computes).
    pub fn grown(&self) -> Self {
        let m = WINDOW_MARGIN;
        Self {
            x0: self.x0 - m as i64,
            y0: self.y0 - m as i64,
            width: self.width + 2 * m,
            height: self.height + 2 * m,
        }
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.width * self.height
    }
}

/// Runs the world recipe of `pipeline` on `window` grown by [`WINDOW_MARGIN`]: the
/// [`RunOutput`] an export with [`ExportOptions::window`](super::ExportOptions::window) takes.
/// `observer` sees every step, as with [`Pipeline::run_with`].
pub fn run_window(
    pipeline: &Pipeline,
    window: &Window,
    progress: &PipelineProgress,
    observer: &mut dyn RunObserver,
) -> Result<RunOutput> {
    window.check()?;
    let g = window.grown();
    pipeline.run_window(g.x0, g.y0, g.width, g.height, progress, observer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_limits_name_the_allowed_range() {
        assert!(Window::new(-5, 7, 2, 2).is_ok());
        let e = Window::new(0, 0, 1, 5).unwrap_err().to_string();
        assert!(e.contains("2..=32769"), "{e}");
        let e = Window::new(MAX_WORLD_CELL, 0, 5, 5).unwrap_err().to_string();
        assert!(e.contains("999999999999"), "{e}");
        assert!(Window::new(i64::MIN, 0, 5, 5).is_err());
        assert!(Window::new(MAX_WORLD_CELL - 5, 1 - MAX_WORLD_CELL, 5, 5).is_ok());
        assert!(Window::new(MAX_WORLD_CELL - 4, 0, 5, 5).is_err());
    }

    #[test]
    fn grown_adds_the_margin_on_each_side() {
        let g = Window::new(-3, 4, 10, 6).unwrap().grown();
        assert_eq!(g, Window { x0: -4, y0: 3, width: 12, height: 8 });
    }
}
