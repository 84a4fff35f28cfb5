//! Step masks in the editor (no egui types): the "Paint mask" brush that paints into one of the
//! recipe's painted masks (`recipe.masks`, see `terrasynth::recipe::mask`), and the overlay the
//! map view draws while a mask is edited.
//!
//! A mask stroke is painted live on a copy of the mask rasterised at the shown map's size; when
//! it ends it is stored in the recipe as one [`MaskStroke`] (map-relative: the cells of the map
//! it was painted on and that map's size), so the recipe changes once, the map regenerates from
//! it, and undo/redo of that change (the editor's document history) removes or restores the
//! stroke exactly. Replaying the strokes ([`PaintedMask::rasterize`]) gives the same values the
//! live copy showed.

use serde::{Deserialize, Serialize};
use terrasynth::Grid;
use terrasynth::recipe::{MaskStroke, PaintedMask, StepMask};
use terrasynth::step::Frame;

use crate::editor::Editor;

/// Name given to a new painted mask.
pub const DEFAULT_MASK_NAME: &str = "mask";

/// The mask brush (saved with the view settings).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MaskBrush {
    /// The painted mask of the recipe it paints into.
    pub name: String,
    /// Radius, cells of the shown map.
    pub radius: f64,
    /// Fraction in [0, 1] per dab.
    pub strength: f32,
    /// Erase (toward 0) instead of paint (toward 1).
    pub erase: bool,
}

impl Default for MaskBrush {
    fn default() -> Self {
        Self { name: DEFAULT_MASK_NAME.into(), radius: 16.0, strength: 0.5, erase: false }
    }
}

/// What the mask overlay shows.
#[derive(Clone, Debug, PartialEq)]
pub enum OverlaySource {
    /// The painted mask `name` (the one being painted).
    Painted(String),
    /// The mask of step `index` (0-based), weighed on the shown map.
    Step(usize),
}

/// Runtime state of mask editing (not saved).
#[derive(Default)]
pub struct MaskPaint {
    /// The stroke being painted: its mask so far (at the shown map's size) and its dabs.
    live: Option<(Grid<f32>, MaskStroke, [f64; 2])>,
    /// The step whose mask the overlay shows ("Show" in its mask section), if any.
    pub show_step: Option<usize>,
    /// The last overlay and what it was made from (recomputed when that changes).
    cache: Option<(OverlayKey, Grid<f32>)>,
    /// Bumped whenever the overlay's values change (the view re-uploads its texture).
    pub version: u64,
}

/// What an overlay was computed from.
#[derive(Clone, Debug, PartialEq)]
enum OverlayKey {
    Painted(String, PaintedMask, [usize; 2]),
    Step(StepMask, u64, f64, [usize; 2]),
}

impl Editor {
    /// Continues the mask stroke to cell position `p` of the shown map (starting one with the
    /// mask brush if none is), one dab every radius / 4 cells.
    pub fn mask_stroke_to(&mut self, p: [f64; 2]) {
        let Some(t) = &self.terrain else { return };
        let (w, h) = (t.height.width(), t.height.height());
        let brush = self.view.mask_brush.clone();
        let fresh = || {
            let mask = self.doc.recipe.masks.get(&brush.name).cloned().unwrap_or_default();
            mask.rasterize(w, h).ok()
        };
        if self.mask.live.as_ref().is_none_or(|(g, ..)| (g.width(), g.height()) != (w, h)) {
            let Some(grid) = fresh() else { return };
            let stroke = MaskStroke {
                erase: brush.erase,
                radius: brush.radius,
                strength: brush.strength,
                dabs: Vec::new(),
                map: [w, h],
            };
            self.mask.live = Some((grid, stroke, p));
        }
        let Some((grid, stroke, last)) = self.mask.live.as_mut() else { return };
        let spacing = (stroke.radius / 4.0).max(0.5);
        let mut centres = Vec::new();
        if stroke.dabs.is_empty() {
            centres.push(p);
        } else {
            let d = ((p[0] - last[0]).powi(2) + (p[1] - last[1]).powi(2)).sqrt();
            for k in 1..=(d / spacing).floor() as usize {
                let f = k as f64 * spacing / d;
                centres.push([last[0] + (p[0] - last[0]) * f, last[1] + (p[1] - last[1]) * f]);
            }
        }
        if centres.is_empty() {
            return;
        }
        // Apply only the new dabs to the live copy: the same arithmetic, in the same order, as
        // replaying the whole stroke.
        let new = MaskStroke { dabs: centres.clone(), ..stroke.clone() };
        if let Err(e) = new.apply(grid) {
            self.mask.live = None;
            self.report_error(format!("Mask brush: {e}"));
            return;
        }
        *last = *centres.last().expect("not empty");
        stroke.dabs.extend(centres);
        self.mask.version += 1;
    }

    /// Ends the mask stroke: it is added to the recipe's painted mask (created if missing), one
    /// recipe change (regenerates the map; one undo step).
    pub fn end_mask_stroke(&mut self) {
        let Some((_, stroke, _)) = self.mask.live.take() else { return };
        if stroke.dabs.is_empty() {
            return;
        }
        let name = self.view.mask_brush.name.clone();
        self.doc.recipe.masks.entry(name.clone()).or_default().strokes.push(stroke);
        self.mask.version += 1;
        self.status = format!("Painted mask `{name}`");
    }

    /// Whether a mask stroke is being painted.
    pub fn is_painting_mask(&self) -> bool {
        self.mask.live.is_some()
    }

    /// What the mask overlay shows now: the painted mask while the Paint mask tool is on, else
    /// the mask of the step whose "Show" is on; `None` for no overlay.
    pub fn overlay_source(&self) -> Option<OverlaySource> {
        if self.view.tool == crate::settings::Tool::Mask {
            return Some(OverlaySource::Painted(self.view.mask_brush.name.clone()));
        }
        let i = self.mask.show_step?;
        self.doc.recipe.steps.get(i).and_then(|e| e.mask.as_ref()).map(|_| OverlaySource::Step(i))
    }

    /// The overlay's weights in [0, 1], one per cell of the shown map (cached). A step's height
    /// or slope mask is weighed on the shown map (the final terrain, which is close to but not
    /// the step's input); a painted mask is shown as painted, with the stroke in progress.
    pub fn mask_overlay(&mut self) -> Option<&Grid<f32>> {
        let source = self.overlay_source()?;
        let t = self.terrain.as_ref()?;
        let size = [t.height.width(), t.height.height()];
        if let (OverlaySource::Painted(_), Some((grid, ..))) = (&source, &self.mask.live)
            && [grid.width(), grid.height()] == size
        {
            return self.mask.live.as_ref().map(|(g, ..)| g);
        }
        let key = match &source {
            OverlaySource::Painted(name) => OverlayKey::Painted(
                name.clone(),
                self.doc.recipe.masks.get(name).cloned().unwrap_or_default(),
                size,
            ),
            OverlaySource::Step(i) => {
                let mask = self.doc.recipe.steps[*i].mask.clone()?;
                OverlayKey::Step(mask, self.version(), self.doc.recipe.exports.height_scale, size)
            }
        };
        if self.mask.cache.as_ref().is_none_or(|(k, _)| *k != key) {
            let grid = match &key {
                OverlayKey::Painted(_, mask, [w, h]) => mask.rasterize(*w, *h).ok()?,
                OverlayKey::Step(mask, _, scale, [w, h]) => {
                    // Painted parts of a step's mask come from the recipe, as when it runs.
                    let weights = mask.weights(t, &Frame::Map, *scale, &self.doc.recipe.masks).ok()?;
                    Grid::from_vec(*w, *h, 1.0, weights).ok()?
                }
            };
            self.mask.cache = Some((key, grid));
            self.mask.version += 1;
        }
        self.mask.cache.as_ref().map(|(_, g)| g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{AppOptions, Tool};

    fn editor() -> Editor {
        let options = AppOptions {
            recovery_path: None,
            recovery_interval: std::time::Duration::from_secs(3600),
            generate_at_start: false,
            open_at_start: None,
            recent_path: None,
            start_screen: false,
        };
        let mut e = Editor::new(options, None);
        e.doc.recipe.width = 65;
        e.doc.recipe.height = 65;
        e.terrain = Some(terrasynth::step::Terrain::new(65, 65, 10.0).unwrap());
        e
    }

    /// The live mask equals the stored stroke replayed, bit for bit.
    #[test]
    fn painted_stroke_is_stored_map_relative_and_replays_exactly() {
        let mut e = editor();
        e.view.tool = Tool::Mask;
        e.mask_stroke_to([10.0, 10.0]);
        e.mask_stroke_to([40.0, 20.0]);
        e.mask_stroke_to([41.0, 50.0]);
        let live = e.mask_overlay().unwrap().clone();
        assert!(live[(10, 10)] > 0.4 && live[(60, 60)] == 0.0);
        e.end_mask_stroke();
        let stored = &e.doc.recipe.masks[DEFAULT_MASK_NAME];
        assert_eq!(stored.strokes.len(), 1);
        assert_eq!(stored.strokes[0].map, [65, 65]);
        assert_eq!(stored.strokes[0].dabs[0], [10.0, 10.0]);
        let replayed = stored.rasterize(65, 65).unwrap();
        assert_eq!(replayed.as_slice(), live.as_slice());
        assert_eq!(e.mask_overlay().unwrap().as_slice(), live.as_slice());
    }
}
