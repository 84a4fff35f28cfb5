//! The 2D map view: the map texture (recoloured only where the map changed), rivers and river
//! sources, the brush outline, pan and zoom, and the tools (painting, placing sources).

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke as LineStroke, TextureHandle, Vec2};

use crate::editor::Editor;
use crate::maprender::{MapStyle, render_rect};
use crate::settings::{Tool, ViewMode};

/// The view's background around the map.
const BACKGROUND: Color32 = Color32::from_gray(30);

/// The parts of `outer` outside `inner`: up to four strips (above, below, left, right).
pub fn around(outer: Rect, inner: Rect) -> Vec<Rect> {
    let inner = inner.intersect(outer);
    if !inner.is_positive() {
        return vec![outer];
    }
    let strips = [
        Rect::from_min_max(outer.min, Pos2::new(outer.max.x, inner.min.y)),
        Rect::from_min_max(Pos2::new(outer.min.x, inner.max.y), outer.max),
        Rect::from_min_max(Pos2::new(outer.min.x, inner.min.y), Pos2::new(inner.min.x, inner.max.y)),
        Rect::from_min_max(Pos2::new(inner.max.x, inner.min.y), Pos2::new(outer.max.x, inner.max.y)),
    ];
    strips.into_iter().filter(|r| r.is_positive()).collect()
}

/// The 2D view and its texture.
#[derive(Default)]
pub struct MapView {
    texture: Option<TextureHandle>,
    /// What the texture shows: mode, size and height scale (a change redraws it all).
    texture_key: Option<(ViewMode, [usize; 2], u64)>,
    /// The cell under the cursor (the status bar reads it).
    pub hover_cell: Option<(usize, usize)>,
    /// Where the map was drawn last frame (screen rect of the whole map) and points per cell.
    pub map_screen: Option<(Rect, f32)>,
    /// The mask overlay's texture and the mask version it shows.
    mask_texture: Option<(TextureHandle, u64)>,
}

impl MapView {
    /// Screen position of the centre of cell `(x, y)` in the view drawn last frame.
    pub fn cell_to_screen(&self, x: f32, y: f32) -> Option<Pos2> {
        let (r, scale) = self.map_screen?;
        Some(Pos2::new(r.min.x + (x + 0.5) * scale, r.min.y + (y + 0.5) * scale))
    }

    /// Brings the texture up to date with the map: all of it after a new map, a mode change
    /// or a height-scale change; only the changed rectangle (grown by one cell: shading uses
    /// the neighbours) after a stroke.
    fn update_texture(&mut self, ctx: &egui::Context, editor: &mut Editor) {
        let changes = editor.take_map_changes();
        let (Some(t), Some(c)) = (&editor.terrain, editor.colours()) else { return };
        let map = &t.height;
        let height_scale = editor.doc.recipe.exports.height_scale;
        let style =
            MapStyle::new(&c.palette, (c.lo, c.hi), t.sea_level, height_scale, editor.water_for_map())
                .with_recipe_water(c.recipe_water.as_deref().filter(|m| m.len() == t.height.len()));
        let (w, h) = (map.width(), map.height());
        let key = (editor.view.mode, [w, h], height_scale.to_bits());
        if self.texture.is_none() || changes.full || self.texture_key != Some(key) {
            let pixels = render_rect(map, &style, editor.view.mode, (0, 0, w, h));
            let img = egui::ColorImage::new([w, h], pixels);
            match &mut self.texture {
                Some(tex) if tex.size() == [w, h] => tex.set(img, egui::TextureOptions::LINEAR),
                _ => self.texture = Some(ctx.load_texture("terrain-map", img, egui::TextureOptions::LINEAR)),
            }
            self.texture_key = Some(key);
        } else if let Some([x, y, rw, rh]) = changes.rect {
            let (x0, y0) = (x.saturating_sub(1), y.saturating_sub(1));
            let (x1, y1) = ((x + rw + 1).min(w), (y + rh + 1).min(h));
            let pixels = render_rect(map, &style, editor.view.mode, (x0, y0, x1 - x0, y1 - y0));
            let img = egui::ColorImage::new([x1 - x0, y1 - y0], pixels);
            if let Some(tex) = &mut self.texture {
                tex.set_partial([x0, y0], img, egui::TextureOptions::LINEAR);
            }
        }
    }

    /// Draws the view and handles the tools.
    pub fn ui(&mut self, ui: &mut egui::Ui, editor: &mut Editor) {
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        self.update_texture(ui.ctx(), editor);
        let Some(t) = &editor.terrain else {
            ui.painter().rect_filled(rect, 0.0, BACKGROUND);
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "Generating…",
                egui::FontId::proportional(20.0),
                Color32::WHITE,
            );
            return;
        };
        let view = &mut editor.view;
        let (w, h) = (t.height.width() as f32, t.height.height() as f32);
        let fit = (rect.width() / w).min(rect.height() / h);
        // Zoom with the scroll wheel around the cursor.
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                let old = view.zoom;
                view.zoom = (old * (scroll * 0.002).exp()).clamp(0.2, 64.0);
                if let Some(p) = response.hover_pos() {
                    let c = rect.center() + Vec2::from(view.pan);
                    let k = view.zoom / old;
                    let nc = p + (c - p) * k;
                    view.pan = (nc - rect.center()).into();
                }
            }
        }
        let scale = fit * view.zoom;
        let centre = rect.center() + Vec2::from(view.pan);
        let img_rect = Rect::from_center_size(centre, Vec2::new(w * scale, h * scale));
        let to_cell =
            |p: Pos2| [((p.x - img_rect.min.x) / scale) as f64, ((p.y - img_rect.min.y) / scale) as f64];
        let to_screen = |c: (f32, f32)| {
            Pos2::new(img_rect.min.x + (c.0 + 0.5) * scale, img_rect.min.y + (c.1 + 0.5) * scale)
        };
        self.map_screen = Some((img_rect, scale));
        let painter = ui.painter_at(rect);
        // The background only where the map does not cover the view: each pixel is shaded once.
        for strip in around(rect, img_rect) {
            painter.rect_filled(strip, 0.0, BACKGROUND);
        }
        if let Some(tex) = &self.texture {
            painter.image(
                tex.id(),
                img_rect,
                Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                Color32::WHITE,
            );
        }
        self.mask_overlay_ui(ui.ctx(), &painter, img_rect, editor);
        let t = editor.terrain.as_ref().expect("checked above");
        let view = &mut editor.view;
        // Rivers from sources.
        if let Some(water) = &editor.water
            && water.lake_labels.same_size(&t.height)
        {
            for river in &water.rivers {
                let pts: Vec<Pos2> = river.iter().map(|&(x, y)| to_screen((x as f32, y as f32))).collect();
                painter.add(egui::Shape::line(
                    pts,
                    LineStroke::new((scale * 0.8).clamp(1.5, 4.0), Color32::from_rgb(30, 110, 230)),
                ));
            }
        }
        for (x, y) in editor.doc.sources() {
            painter.circle(
                to_screen((x as f32, y as f32)),
                4.0,
                Color32::from_rgb(120, 200, 255),
                LineStroke::new(1.0, Color32::BLACK),
            );
        }
        // Hover readout.
        self.hover_cell = None;
        if let Some(p) = response.hover_pos() {
            let c = to_cell(p);
            if c[0] >= 0.0 && c[1] >= 0.0 && c[0] < w as f64 && c[1] < h as f64 {
                self.hover_cell = Some((c[0] as usize, c[1] as usize));
            }
            let radius = match view.tool {
                Tool::Terraform => Some(view.brush.radius),
                Tool::Mask => Some(view.mask_brush.radius),
                _ => None,
            };
            if let Some(radius) = radius {
                let r = radius as f32 * scale;
                painter.circle_stroke(p, r, LineStroke::new(1.5, Color32::WHITE));
                painter.circle_stroke(p, r + 1.5, LineStroke::new(1.0, Color32::BLACK));
            }
        }
        if let Some(label) = editor.map_overlay() {
            painter.text(
                rect.left_top() + Vec2::new(10.0, 10.0),
                egui::Align2::LEFT_TOP,
                label,
                egui::FontId::proportional(18.0),
                Color32::WHITE,
            );
        }
        // Tools.
        let pointer = response.interact_pointer_pos();
        let pan = |view: &mut crate::settings::ViewSettings| {
            let d = response.drag_delta();
            view.pan = [view.pan[0] + d.x, view.pan[1] + d.y];
        };
        match editor.view.tool {
            Tool::Inspect => {
                if response.dragged() {
                    pan(&mut editor.view);
                }
            }
            tool @ (Tool::Terraform | Tool::Mask) => {
                // The terrain brush or the mask brush: the same gestures.
                let mask = tool == Tool::Mask;
                let to = |editor: &mut Editor, c: [f64; 2]| {
                    if mask { editor.mask_stroke_to(c) } else { editor.stroke_to(c) }
                };
                let end =
                    |editor: &mut Editor| if mask { editor.end_mask_stroke() } else { editor.end_stroke() };
                if (response.dragged_by(egui::PointerButton::Primary)
                    || response.drag_started_by(egui::PointerButton::Primary))
                    && let Some(p) = pointer
                {
                    to(editor, to_cell(p));
                } else if response.clicked()
                    && let Some(p) = pointer
                {
                    to(editor, to_cell(p));
                    end(editor);
                }
                if response.drag_stopped() {
                    end(editor);
                }
                if response.dragged_by(egui::PointerButton::Secondary) {
                    pan(&mut editor.view);
                }
            }
            Tool::River => {
                if response.clicked()
                    && let Some(p) = pointer
                {
                    let c = to_cell(p);
                    if c[0] >= 0.0 && c[1] >= 0.0 {
                        editor.add_river_source(c[0] as usize, c[1] as usize);
                    }
                }
                if response.dragged() {
                    pan(&mut editor.view);
                }
            }
        }
    }
}

impl MapView {
    /// Draws the mask overlay (the painted mask while painting it, or a step's mask with its
    /// "Show mask" on) over the map: magenta, as opaque as the weight (at most 60 %).
    fn mask_overlay_ui(
        &mut self,
        ctx: &egui::Context,
        painter: &egui::Painter,
        img_rect: Rect,
        editor: &mut Editor,
    ) {
        if editor.mask_overlay().is_none() {
            self.mask_texture = None;
            return;
        }
        // Read after the overlay is brought up to date (that may bump it).
        let version = editor.mask.version;
        let Some(grid) = editor.mask_overlay() else { return };
        let size = [grid.width(), grid.height()];
        let stale = self.mask_texture.as_ref().is_none_or(|(t, v)| *v != version || t.size() != size);
        if stale {
            let pixels: Vec<Color32> = grid
                .as_slice()
                .iter()
                .map(|&w| Color32::from_rgba_unmultiplied(255, 40, 200, (w.clamp(0.0, 1.0) * 150.0) as u8))
                .collect();
            let img = egui::ColorImage::new(size, pixels);
            match &mut self.mask_texture {
                Some((tex, v)) if tex.size() == size => {
                    tex.set(img, egui::TextureOptions::NEAREST);
                    *v = version;
                }
                _ => {
                    let tex = ctx.load_texture("mask-overlay", img, egui::TextureOptions::NEAREST);
                    self.mask_texture = Some((tex, version));
                }
            }
        }
        if let Some((tex, _)) = &self.mask_texture {
            painter.image(
                tex.id(),
                img_rect,
                Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                Color32::WHITE,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The strips around an image and the image itself tile the view: their areas add up to
    /// the view's and no two overlap, so each pixel is painted once; an image that covers the
    /// view (zoomed in) leaves no strip, one outside it leaves the whole view.
    #[test]
    fn strips_around_the_image_tile_the_view_once() {
        let view = Rect::from_min_max(Pos2::new(0.0, 0.0), Pos2::new(100.0, 80.0));
        let image = Rect::from_min_max(Pos2::new(20.0, 10.0), Pos2::new(70.0, 60.0));
        let strips = around(view, image);
        assert_eq!(strips.len(), 4);
        let area: f32 = strips.iter().map(|r| r.area()).sum::<f32>() + image.area();
        assert_eq!(area, view.area());
        for (i, a) in strips.iter().enumerate() {
            assert!(!a.intersects(image.shrink(0.01)));
            for b in &strips[i + 1..] {
                assert!(!a.shrink(0.01).intersects(b.shrink(0.01)), "{a:?} {b:?}");
            }
        }
        assert!(around(view, view.expand(50.0)).is_empty(), "zoomed in: nothing to fill");
        let away = Rect::from_min_max(Pos2::new(200.0, 200.0), Pos2::new(300.0, 300.0));
        assert_eq!(around(view, away), vec![view]);
    }
}
