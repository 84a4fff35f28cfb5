//! The editor application: the [`Editor`] model (document, undo history, jobs, view settings;
//! no egui types) drawn by small panels ([`crate::panels`]). The app only lays the panels out,
//! routes keyboard shortcuts and the window's close request, and tells the model when a frame
//! starts and ends.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

use eframe::egui::{self, Color32, Key, Modifiers, Pos2};

use crate::editor::Editor;
use crate::panels::{
    BrushPanel, Dialogs, ErosionPanel, HelpPanel, MapView, RecipePanel, StatusBar, StepsPanel, TopBar,
    View3dPanel, around,
};
pub use crate::settings::{AppOptions, BrushSettings, Tool, ViewSettings};
use crate::view3d_gpu::View3dGpu;

/// Width of the left panel (recipe, steps, brush, erosion), points: fixed.
pub const LEFT_PANEL_WIDTH: f32 = 380.0;

/// Environment variable naming a file to which the window appends one line per frame it
/// draws: the Unix time in seconds (`scripts/gui-fps.sh` counts the frames of a drag with it).
pub const FRAME_LOG_ENV: &str = "TERRASYNTH_FRAME_LOG";

/// The editor window: the model and its panels. It dereferences to its [`Editor`], so callers
/// (and the GUI tests) read and drive the model through the app.
pub struct TerrainApp {
    /// The model.
    pub editor: Editor,
    top_bar: TopBar,
    recipe: RecipePanel,
    steps: StepsPanel,
    brush: BrushPanel,
    erosion: ErosionPanel,
    map: MapView,
    view3d: View3dPanel,
    status: StatusBar,
    help: HelpPanel,
    dialogs: Dialogs,
    /// The window title last sent (the project's file name and the unsaved mark).
    title: String,
    /// [`FRAME_LOG_ENV`]'s file, when set and writable.
    frame_log: Option<std::fs::File>,
    /// The world view opened from the World menu, shown instead of the editor until "Back to
    /// the editor" (the project stays as it was).
    world: Option<crate::world_view::WorldApp>,
    /// The start screen, shown instead of the editor until its Generate is pressed.
    start: Option<crate::start::StartScreen>,
    /// Gives a Tab typed within the same frame as other keys a frame of its own.
    focus_moves: crate::panels::FocusMoveDeferral,
}

impl Deref for TerrainApp {
    type Target = Editor;

    fn deref(&self) -> &Editor {
        &self.editor
    }
}

impl DerefMut for TerrainApp {
    fn deref_mut(&mut self) -> &mut Editor {
        &mut self.editor
    }
}

impl TerrainApp {
    /// The app as eframe creates it (default preset, generation started at once).
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        Self::with_options(cc, AppOptions::default())
    }

    /// The app with explicit options (tests turn off the recovery file).
    pub fn with_options(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        let ctx = cc.egui_ctx.clone();
        let start = options.start_screen.then(crate::start::StartScreen::default);
        let editor = Editor::new(options, Some(Arc::new(move || ctx.request_repaint())));
        Self {
            editor,
            top_bar: TopBar::default(),
            world: None,
            start,
            recipe: RecipePanel,
            steps: StepsPanel::default(),
            brush: BrushPanel::default(),
            erosion: ErosionPanel,
            map: MapView::default(),
            view3d: View3dPanel::new(cc.wgpu_render_state.as_ref().map(View3dGpu::new)),
            status: StatusBar,
            help: HelpPanel,
            dialogs: Dialogs::default(),
            title: String::new(),
            frame_log: std::env::var_os(FRAME_LOG_ENV)
                .and_then(|p| std::fs::OpenOptions::new().create(true).append(true).open(p).ok()),
            focus_moves: Default::default(),
        }
    }

    /// Appends this frame's time to the frame log (see [`FRAME_LOG_ENV`]).
    fn log_frame(&mut self) {
        if let Some(f) = &mut self.frame_log {
            use std::io::Write;
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            if writeln!(f, "{:.6}", t.as_secs_f64()).is_err() {
                self.frame_log = None;
            }
        }
    }

    /// Screen position of the centre of cell `(x, y)` in the 2D view drawn last frame.
    pub fn cell_to_screen(&self, x: f32, y: f32) -> Option<Pos2> {
        self.map.cell_to_screen(x, y)
    }

    /// The window title sent last (file name, `*` when unsaved).
    pub fn window_title(&self) -> &str {
        &self.title
    }

    /// Whether the 3D view has drawn a frame.
    pub fn has_3d_image(&self) -> bool {
        self.view3d.has_image()
    }

    /// Opens the world view of world preset `name` (an error goes to the error bar).
    pub fn open_world(&mut self, name: &str) {
        match terrasynth::World::from_preset(name) {
            Ok(world) => self.world = Some(crate::world_view::WorldApp::new(world, name)),
            Err(e) => self.editor.report_error(format!("cannot open world `{name}`: {e}")),
        }
    }

    /// Whether the start screen is shown.
    pub fn showing_start_screen(&self) -> bool {
        self.start.is_some()
    }

    /// Whether the world view is shown.
    pub fn showing_world(&self) -> bool {
        self.world.is_some()
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        let redo = ctx.input_mut(|i| {
            i.consume_key(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z)
                || i.consume_key(Modifiers::COMMAND, Key::Y)
        });
        if redo {
            self.editor.redo();
        } else if ctx.input_mut(|i| i.consume_key(Modifiers::COMMAND, Key::Z)) {
            self.editor.undo();
        }
        if ctx.input_mut(|i| i.consume_key(Modifiers::NONE, Key::F1)) {
            self.editor.view.show_help = !self.editor.view.show_help;
        }
    }
}

impl eframe::App for TerrainApp {
    fn raw_input_hook(&mut self, ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        self.focus_moves.hook(ctx, raw_input);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        self.log_frame();
        self.editor.poll();
        self.shortcuts(&ctx);
        if ctx.input(|i| i.viewport().close_requested()) {
            self.dialogs.on_close_requested(&ctx, &self.editor);
        }
        let title = self.editor.title();
        if title != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
        if let Some(name) = self.top_bar.open_world.take() {
            self.open_world(&name);
        }
        if let Some(world) = &mut self.world {
            let mut back = false;
            egui::Panel::top("world-top-bar").show(ui, |ui| {
                ui.horizontal(|ui| {
                    back = ui
                        .button("Back to the editor")
                        .on_hover_text("Close the world view; your project is as you left it.")
                        .clicked();
                });
            });
            world.frame_ui(ui);
            if back {
                self.world = None;
            }
            return;
        }
        if let Some(start) = &mut self.start {
            let mut go = false;
            egui::CentralPanel::default().show(ui, |ui| go = start.ui(ui, &mut self.editor));
            self.dialogs.ui(&ctx, &mut self.editor);
            if go {
                self.start = None;
            }
            let idle = !ctx.input(|i| i.pointer.any_down()) && ctx.memory(|m| m.focused().is_none());
            if self.editor.end_frame(idle) {
                ctx.request_repaint_after(Duration::from_millis(50));
            }
            return;
        }
        let Self {
            editor, top_bar, recipe, steps, brush, erosion, map, view3d, status, help, dialogs, ..
        } = self;
        egui::Panel::top("top-bar").show(ui, |ui| top_bar.ui(ui, editor, dialogs));
        egui::Panel::bottom("status-bar").show(ui, |ui| status.ui(ui, editor, map.hover_cell));
        if editor.error.is_some() {
            egui::Panel::bottom("error-bar").show(ui, |ui| dialogs.error_bar_ui(ui, editor));
        }
        // A fixed width: opening a step or a value's text changing width never moves the map;
        // rows wider than the panel scroll sideways instead of widening it.
        egui::Panel::left("left-panel").resizable(false).exact_size(LEFT_PANEL_WIDTH).show(ui, |ui| {
            egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
                recipe.ui(ui, editor);
                ui.separator();
                steps.ui(ui, editor);
                ui.separator();
                brush.ui(ui, editor);
                ui.separator();
                erosion.ui(ui, editor);
            });
        });
        if editor.view.show_help {
            egui::Panel::right("help-panel")
                .resizable(true)
                .default_size(280.0)
                .show(ui, |ui| help.ui(ui, editor.view.tool));
        }
        // The central panel's fill is painted only where the view's image does not cover it
        // (its margin, the 3D view's tool row; the map view paints its own background around
        // the map). Without a GPU every shaded pixel costs (lavapipe rasterises in software),
        // and a fill under the whole map was a second layer per frame: the 2D pan went from
        // 11.7 to 21 fps without it (docs/GUI.md).
        let style = ctx.global_style();
        let frame = egui::Frame::central_panel(&style).fill(Color32::TRANSPARENT);
        let margin = frame.inner_margin;
        egui::CentralPanel::default().frame(frame).show(ui, |ui| {
            let (inner, outer) = (ui.max_rect(), ui.max_rect() + margin);
            let background = ui.painter().add(egui::Shape::Noop);
            let covered = if editor.view.show_3d {
                view3d.ui(ui, editor);
                view3d.image_rect.unwrap_or(inner)
            } else {
                map.ui(ui, editor);
                inner
            };
            let fill = style.visuals.panel_fill;
            let strips = around(outer, covered).into_iter().map(|r| egui::Shape::rect_filled(r, 0.0, fill));
            ui.painter().set(background, egui::Shape::Vec(strips.collect()));
        });
        dialogs.ui(&ctx, editor);
        brush.gallery.ui(&ctx, editor);
        // A parameter change regenerates at once (preview first); it becomes one undo step when
        // the pointer is released and no field has focus.
        let idle = !ctx.input(|i| i.pointer.any_down()) && ctx.memory(|m| m.focused().is_none());
        if editor.end_frame(idle) {
            ctx.request_repaint_after(Duration::from_millis(50));
        }
    }
}
