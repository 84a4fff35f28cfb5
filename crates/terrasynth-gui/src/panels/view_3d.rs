//! The 3D view panel: exaggeration and detail controls, orbit/pan/zoom, and the image from the
//! wgpu renderer (or the software rasteriser when there is no wgpu device).

use eframe::egui::{self, Color32, Pos2, Rect, Sense, TextureHandle, Vec2};

use super::entry::{error_note, typed_slider};
use crate::editor::Editor;
use crate::view3d::{Camera, Mesh3d};
use crate::view3d_gpu::View3dGpu;

/// The exaggeration slider's range (1 = true to scale).
pub const EXAGGERATION_RANGE: std::ops::RangeInclusive<f64> = 0.1..=20.0;

/// The 3D view and its renderer resources.
pub struct View3dPanel {
    gpu: Option<View3dGpu>,
    /// Software path: the mesh of (map version, detail) and the last image with its key.
    mesh: Option<((u64, u32), Mesh3d)>,
    texture: Option<TextureHandle>,
    texture_key: Option<(u64, [u32; 2], [u32; 6])>,
    /// Where the 3D image was drawn last frame (the caller paints the background around it).
    pub image_rect: Option<egui::Rect>,
}

impl View3dPanel {
    /// The panel drawing with `gpu` (None: the software rasteriser).
    pub fn new(gpu: Option<View3dGpu>) -> Self {
        Self { gpu, mesh: None, texture: None, texture_key: None, image_rect: None }
    }

    /// Whether the view has drawn a frame.
    pub fn has_image(&self) -> bool {
        self.texture.is_some() || self.gpu.as_ref().is_some_and(View3dGpu::has_image)
    }

    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, editor: &mut Editor) {
        let cam = &mut editor.view.camera;
        let mut errors = Vec::new();
        ui.horizontal(|ui| {
            let mut exaggeration = cam.exaggeration as f64;
            errors.extend(typed_slider(
                ui,
                "3d",
                ("exaggeration", "×", "Vertical exaggeration of the 3D view (1 = true to scale)."),
                &mut exaggeration,
                EXAGGERATION_RANGE,
                true,
            ));
            cam.exaggeration = exaggeration as f32;
            let [lo, hi] = crate::view3d::DETAIL_RANGE;
            let mut detail = cam.detail as f64;
            errors.extend(typed_slider(
                ui,
                "3d",
                (
                    "detail",
                    "samples",
                    "Mesh samples along the longer side (above 256, halved while the view moves). \
                     Higher is finer and slower.",
                ),
                &mut detail,
                lo as f64..=hi as f64,
                true,
            ));
            cam.detail = detail.round() as u32;
            if ui.button("Reset view").on_hover_text("Back to the default camera.").clicked() {
                *cam = Camera { exaggeration: cam.exaggeration, detail: cam.detail, ..Camera::default() };
            }
        });
        for e in &errors {
            error_note(ui, Some(e));
        }
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        self.image_rect = Some(rect);
        if response.dragged_by(egui::PointerButton::Primary) {
            let d = response.drag_delta();
            cam.orbit(d.x, d.y);
        }
        if response.dragged_by(egui::PointerButton::Secondary)
            || response.dragged_by(egui::PointerButton::Middle)
        {
            let d = response.drag_delta();
            cam.pan(d.x, d.y, rect.width());
        }
        let mut scrolling = false;
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                cam.zoom(scroll);
                scrolling = true;
            }
        }
        let Some(t) = &editor.terrain else { return };
        let hs = editor.doc.recipe.exports.height_scale as f32;
        let cam = &mut editor.view.camera;
        cam.keep_above(&t.height, hs, t.sea_level);
        // Level of detail: the full detail at rest, half of it while the camera moves.
        let moving = response.dragged() || scrolling;
        let detail = cam.lod_detail(moving);
        let cam = *cam;
        let Some(s) = editor.colours() else { return };
        // The fresh water the colour view paints: the recipe's lakes and rivers and the
        // sources' rivers. The mesh is rebuilt when new water layers arrive.
        let water = editor.water_for_map();
        let version = editor.version() ^ editor.water_version().map_or(0, |v| v.rotate_left(32) ^ 1);
        let build = || {
            let placed = water.map(|w| &w.placed_cells).filter(|m| m.contains(&true));
            let mask = match (s.recipe_water.as_ref().filter(|m| m.len() == t.height.len()), placed) {
                (None, None) => None,
                (Some(m), None) | (None, Some(m)) => Some(std::sync::Arc::new(m.clone())),
                (Some(a), Some(b)) => {
                    Some(std::sync::Arc::new(a.iter().zip(b).map(|(a, b)| *a || *b).collect()))
                }
            };
            Mesh3d::build_with_water(&t.height, &s.palette, &s.fraction, t.sea_level, hs, detail, mask)
        };
        let ppp = ui.ctx().pixels_per_point();
        let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
        let lod = if let Some(gpu) = &mut self.gpu {
            // wgpu: full resolution at rest, half while moving (a quarter of the pixels to shade
            // on a software rasteriser); the mesh stays on the GPU while only the camera changes.
            let k = if moving { 0.5 * ppp } else { ppp };
            let px = [(rect.width() * k).round() as u32, (rect.height() * k).round() as u32];
            let key = version.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(detail);
            let drawn = gpu.draw(key, build, &cam, px);
            drawn.map(|(tex, lod)| {
                ui.painter().image(tex, rect, uv, Color32::WHITE);
                lod
            })
        } else {
            // No wgpu device (glow or a headless test): the software rasteriser, ≤ 1280×960.
            let key = (version, detail);
            if self.mesh.as_ref().is_none_or(|(k, _)| *k != key) {
                self.mesh = Some((key, build()));
            }
            let px = [(rect.width() * ppp).min(1280.0) as u32, (rect.height() * ppp).min(960.0) as u32];
            let cam_key = [cam.yaw, cam.pitch, cam.distance, cam.target[0], cam.target[1], cam.exaggeration]
                .map(f32::to_bits);
            let tkey = (version ^ ((detail as u64) << 40), px, cam_key);
            if self.texture_key != Some(tkey)
                && let Some((_, mesh)) = &self.mesh
            {
                let img = mesh.render(&cam, px[0] as usize, px[1] as usize);
                match &mut self.texture {
                    Some(tex) => tex.set(img, egui::TextureOptions::LINEAR),
                    None => {
                        self.texture =
                            Some(ui.ctx().load_texture("terrain-3d", img, egui::TextureOptions::LINEAR))
                    }
                }
                self.texture_key = Some(tkey);
            }
            if let Some(tex) = &self.texture {
                ui.painter().image(tex.id(), rect, uv, Color32::WHITE);
            }
            self.mesh.as_ref().map(|(_, m)| (m.step, m.triangle_count()))
        };
        if let Some((step, triangles)) = lod {
            let renderer = if self.gpu.is_some() { "wgpu" } else { "software" };
            ui.painter().text(
                rect.left_bottom() + Vec2::new(8.0, -8.0),
                egui::Align2::LEFT_BOTTOM,
                format!("LOD: every {step} cells, {triangles} triangles ({renderer})"),
                egui::FontId::proportional(13.0),
                Color32::WHITE,
            );
        }
        ui.painter().text(
            rect.left_top() + Vec2::new(8.0, 8.0),
            egui::Align2::LEFT_TOP,
            "Drag: orbit · right-drag: pan · scroll: zoom",
            egui::FontId::proportional(13.0),
            Color32::WHITE,
        );
    }
}
