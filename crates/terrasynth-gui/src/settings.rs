//! The editor's persistent settings, apart from any runtime resource: what the views show,
//! the tool and brush ([`ViewSettings`], saved in project files), and the start-up options
//! ([`AppOptions`], not saved). Plain serde data with no egui types, as the egui demo app keeps
//! its `State` apart from its textures.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use terrasynth::shape::brush::BrushMode;

use crate::view3d::Camera;

/// The editor's tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tool {
    /// Look around: drag pans, the cursor readout shows heights.
    Inspect,
    /// Paint the terrain with a brush.
    Terraform,
    /// Click to place river sources.
    River,
    /// Paint a mask of the recipe (the step masks' `painted` masks).
    Mask,
}

/// What the 2D view shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViewMode {
    /// Palette colours by height.
    Colour,
    /// Palette colours times the hillshade.
    Shaded,
    /// Height as grey, low = black.
    Grayscale,
    /// Slope, 0° (dark green) to 60°+ (red).
    Slope,
    /// Shaded land in muted colours with the sea, lakes and rivers in blue.
    Water,
    /// D8 flow accumulation, `ln(1 + area)`, dark to bright cyan.
    Flow,
}

impl ViewMode {
    /// Every mode, in menu order.
    pub const ALL: [ViewMode; 6] = [
        ViewMode::Colour,
        ViewMode::Shaded,
        ViewMode::Grayscale,
        ViewMode::Slope,
        ViewMode::Water,
        ViewMode::Flow,
    ];

    /// Label shown in the UI.
    pub fn label(self) -> &'static str {
        match self {
            ViewMode::Colour => "Colour",
            ViewMode::Shaded => "Shaded relief",
            ViewMode::Grayscale => "Grayscale",
            ViewMode::Slope => "Slope",
            ViewMode::Water => "Water",
            ViewMode::Flow => "Flow",
        }
    }

    /// Tooltip text.
    pub fn tooltip(self) -> &'static str {
        match self {
            ViewMode::Colour => "Terrain colours by height (the recipe's palette), sea below the sea level.",
            ViewMode::Shaded => {
                "Palette colours lit by a sun in the north-west (45° high), as the exported shaded.png."
            }
            ViewMode::Grayscale => "Height as grey: the lowest cell black, the highest white.",
            ViewMode::Slope => "Steepness: flat is dark green, 30° yellow, 60° and steeper red.",
            ViewMode::Water => {
                "Sea, the lakes and rivers the export writes (water.png), and rivers from your sources, in blue."
            }
            ViewMode::Flow => "Drainage area (D8 flow accumulation, log scale): valleys light up.",
        }
    }

    /// Whether the mode draws the water layers (lakes, flow).
    pub fn shows_water(self) -> bool {
        matches!(self, ViewMode::Water | ViewMode::Flow)
    }
}

/// Brush settings of the terraform tool.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BrushSettings {
    /// Raise, lower, flatten or smooth.
    pub mode: BrushMode,
    /// Radius, cells, in [1, `shape::brush::MAX_RADIUS`]; default 24.
    pub radius: f64,
    /// Strength per dab: height units for raise/lower/flatten in [0, 0.1] (default 0.01); a
    /// fraction in [0, 1] for smooth.
    pub strength: f32,
}

/// View settings saved with a project.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ViewSettings {
    /// What the 2D view shows.
    pub mode: ViewMode,
    /// 2D zoom (1 = the map fits the view).
    pub zoom: f32,
    /// 2D pan, points.
    pub pan: [f32; 2],
    /// Show the 3D view instead of the 2D one.
    pub show_3d: bool,
    /// 3D camera.
    pub camera: Camera,
    /// Current tool.
    pub tool: Tool,
    /// Brush of the terraform tool.
    pub brush: BrushSettings,
    /// Brush of the Paint mask tool.
    pub mask_brush: crate::mask_paint::MaskBrush,
    /// Keep the seed when a preset is loaded, and disable "Random".
    pub seed_locked: bool,
    /// Show the help panel.
    pub show_help: bool,
    /// How the river tool traces a new source (seed 004 §9 v1, v2, or the filled surface).
    pub river_mode: terrasynth::hydro::RiverMode,
}

impl Default for ViewSettings {
    fn default() -> Self {
        Self {
            mode: ViewMode::Shaded,
            zoom: 1.0,
            pan: [0.0, 0.0],
            show_3d: false,
            camera: Camera::default(),
            tool: Tool::Inspect,
            brush: BrushSettings { mode: BrushMode::Raise, radius: 24.0, strength: 0.01 },
            mask_brush: Default::default(),
            seed_locked: false,
            show_help: true,
            river_mode: terrasynth::hydro::RiverMode::Filled,
        }
    }
}

/// Start-up options (not saved).
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// Where the periodic recovery file goes (None: no recovery file).
    pub recovery_path: Option<PathBuf>,
    /// Time between recovery saves while there are unsaved changes.
    pub recovery_interval: Duration,
    /// Generate the first map at start.
    pub generate_at_start: bool,
    /// A project to open at start (the command line's `PROJECT.tsproj`); when it cannot be
    /// opened the error is shown and the default preset generated.
    pub open_at_start: Option<PathBuf>,
    /// Where the recent-files list is kept (None: only in memory).
    pub recent_path: Option<PathBuf>,
    /// Open on the start screen (seed 004 §11: the parameters and a Generate button) instead of
    /// the editor. The binary sets it when no project is given; tests leave it off.
    pub start_screen: bool,
}

impl Default for AppOptions {
    fn default() -> Self {
        let dir = std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
            .map(|d| d.join("terrasynth"));
        Self {
            recent_path: dir.as_ref().map(|d| d.join("recent.json")),
            recovery_path: dir.map(|d| d.join("recovery.tsproj")),
            recovery_interval: Duration::from_secs(30),
            generate_at_start: true,
            open_at_start: None,
            start_screen: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_settings_serialise_and_fill_missing_fields() {
        let view = ViewSettings {
            mode: ViewMode::Slope,
            zoom: 2.5,
            pan: [10.25, -3.5],
            show_3d: true,
            camera: Camera { yaw: 0.3, detail: 512, ..Camera::default() },
            tool: Tool::Terraform,
            river_mode: terrasynth::hydro::RiverMode::BacktrackV2,
            brush: BrushSettings { mode: BrushMode::Smooth, radius: 7.5, strength: 0.25 },
            mask_brush: crate::mask_paint::MaskBrush {
                name: "valley".into(),
                erase: true,
                ..Default::default()
            },
            seed_locked: true,
            show_help: false,
        };
        let json = serde_json::to_string(&view).unwrap();
        assert_eq!(serde_json::from_str::<ViewSettings>(&json).unwrap(), view);
        // Settings from an older file (fields missing) take the defaults.
        let old: ViewSettings = serde_json::from_str(r#"{"mode":"Water","zoom":3.0}"#).unwrap();
        assert_eq!(old, ViewSettings { mode: ViewMode::Water, zoom: 3.0, ..ViewSettings::default() });
        assert!(serde_json::from_str::<ViewSettings>(r#"{"mode":"Nope"}"#).is_err());
    }
}
