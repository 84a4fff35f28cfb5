//! The river tool's panel: the walk a new source uses (seed 004 §9 v1, v2, or the filled
//! surface), each explained, and the gallery window that traces every source by all three walks
//! on the current map, side by side.

use eframe::egui;
use terrasynth::hydro::{RiverMode, RiverTracer};
use terrasynth::step::params::Choice;

use crate::editor::Editor;

/// Label and explanation of each walk, in [`RiverMode::ALL`] order (also the help panel's).
pub const RIVER_MODES: [(RiverMode, &str, &str); 3] = [
    (
        RiverMode::WalkV1,
        "Walk v1 (seed)",
        "Seed 004 §9, first version: the river steps to its lowest neighbour not yet in the river, uphill if it \
         must, and stops at the sea or when its head is surrounded by its own cells.",
    ),
    (
        RiverMode::BacktrackV2,
        "Backtrack v2 (seed)",
        "Seed 004 §9, second version: the same walk, but when the head is surrounded by its own cells it steps \
         back and tries again, so the river always reaches the sea (or the map edge); the cells it steps back \
         from stay water, the seed's lakes.",
    ),
    (
        RiverMode::Filled,
        "Filled surface",
        "Steepest descent on the depression-filled terrain: always reaches the sea or the map edge, crossing \
         lakes at their surface (the default).",
    ),
];

/// The river tool's settings: the mode of new sources and the gallery button.
pub fn river_mode_ui(ui: &mut egui::Ui, editor: &mut Editor, gallery: &mut RiverGallery) {
    ui.heading("River sources");
    ui.label(format!("{} sources. Click the map to add one.", editor.doc.sources().len()));
    ui.label("New sources walk by:");
    for (mode, label, tip) in RIVER_MODES {
        ui.radio_value(&mut editor.view.river_mode, mode, label).on_hover_text(tip);
    }
    if ui
        .button("Compare the modes…")
        .on_hover_text("Trace every source by all three walks on this map, side by side.")
        .clicked()
    {
        gallery.open = true;
    }
}

/// The gallery's images and what they were made from: (map version, sources, one texture per
/// mode).
type GalleryImages = (u64, Vec<(usize, usize)>, Vec<egui::TextureHandle>);

/// The gallery window: the current map three times (grey relief), each with every source's
/// river traced by one walk (in red) and its lake cells (in blue for v2's stepped-back cells).
#[derive(Default)]
pub struct RiverGallery {
    /// Whether the window is shown.
    pub open: bool,
    /// The images and what they were made from (map version, sources).
    images: Option<GalleryImages>,
    /// The end of each traced river per mode, for the captions.
    captions: Vec<String>,
}

/// Longest side of a gallery image, pixels.
const GALLERY_SIDE: usize = 256;

impl RiverGallery {
    /// Draws the window when open.
    pub fn ui(&mut self, ctx: &egui::Context, editor: &Editor) {
        if !self.open {
            return;
        }
        let mut open = self.open;
        egui::Window::new("River modes")
            .open(&mut open)
            .default_width(3.0 * GALLERY_SIDE as f32 + 40.0)
            .show(ctx, |ui| {
                let Some(t) = &editor.terrain else {
                    ui.label("Generate a map first.");
                    return;
                };
                let sources = editor.doc.sources();
                if sources.is_empty() {
                    ui.label(
                        "Place sources with the river tool (click on the map); each appears here traced by \
                              the three walks.",
                    );
                }
                let key = (editor.version(), sources.clone());
                if self.images.as_ref().is_none_or(|(v, s, _)| (*v, s) != (key.0, &key.1)) {
                    let (textures, captions) = gallery_images(ctx, t, &sources);
                    self.images = Some((key.0, key.1, textures));
                    self.captions = captions;
                }
                let Some((_, _, textures)) = &self.images else { return };
                ui.horizontal_top(|ui| {
                    for (k, (tex, (_, label, tip))) in textures.iter().zip(RIVER_MODES).enumerate() {
                        ui.vertical(|ui| {
                            ui.strong(label).on_hover_text(tip);
                            ui.image((tex.id(), tex.size_vec2()));
                            ui.label(self.captions.get(k).map_or("", String::as_str));
                        });
                    }
                });
            });
        self.open = open;
    }
}

/// One image per mode of `terrain` (grey by height, sea dark) with every source's river traced
/// by that mode; captions count how the rivers ended.
fn gallery_images(
    ctx: &egui::Context,
    terrain: &terrasynth::step::Terrain,
    sources: &[(usize, usize)],
) -> (Vec<egui::TextureHandle>, Vec<String>) {
    let map = &terrain.height;
    let (w, h) = (map.width(), map.height());
    let step = w.max(h).div_ceil(GALLERY_SIDE).max(1);
    let (iw, ih) = (w.div_ceil(step), h.div_ceil(step));
    let (lo, hi) = map.as_slice().iter().fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let span = (hi - lo).max(f32::MIN_POSITIVE);
    let base: Vec<egui::Color32> = (0..ih)
        .flat_map(|j| (0..iw).map(move |i| (i * step, j * step)))
        .map(|(x, y)| {
            let v = map[(x, y)];
            let g = (40.0 + 200.0 * (v - lo) / span) as u8;
            if v < terrain.sea_level {
                egui::Color32::from_rgb(20, 40, 90)
            } else {
                egui::Color32::from_gray(g)
            }
        })
        .collect();
    let tracer = RiverTracer::new(map, terrain.sea_level).ok();
    let mut textures = Vec::new();
    let mut captions = Vec::new();
    for mode in RiverMode::ALL {
        let mut pixels = base.clone();
        let mut ends = std::collections::BTreeMap::<String, usize>::new();
        let mut paint = |(x, y): (usize, usize), c: egui::Color32| pixels[(y / step) * iw + x / step] = c;
        for &s in sources {
            let Some(r) = tracer.as_ref().and_then(|t| t.trace(s, *mode).ok()) else { continue };
            for arm in &r.lake_arms {
                for &c in arm {
                    paint(c, egui::Color32::from_rgb(60, 140, 255));
                }
            }
            for &c in &r.cells {
                paint(c, egui::Color32::from_rgb(230, 40, 40));
            }
            *ends.entry(format!("{:?}", r.end).to_lowercase()).or_default() += 1;
        }
        let caption = ends.iter().map(|(k, n)| format!("{n} at {k}")).collect::<Vec<_>>().join(", ");
        captions.push(if caption.is_empty() { format!("{}: no sources", mode.name()) } else { caption });
        let image = egui::ColorImage::new([iw, ih], pixels);
        textures.push(ctx.load_texture(format!("river-gallery-{}", mode.name()), image, Default::default()));
    }
    (textures, captions)
}
