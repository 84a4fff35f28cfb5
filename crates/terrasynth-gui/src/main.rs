//! `terrasynth-gui`: starts the editor.
//!
//! ```text
//! terrasynth-gui [PROJECT.tsproj] [--preset NAME] [--tool inspect|terraform|river]
//!                [--view colour|shaded|grayscale|slope|water|flow] [--3d] [--no-help]
//!                [--size N]     # an N×N map (2..=the library's largest side)
//! terrasynth-gui --bench-ui      # prints the editor's speed figures and exits
//! ```
//!
//! Without a project it opens on the start screen, unless `--tool`, `--view` or `--3d` asks
//! for the editor itself (then the map is generated at once).

use terrasynth_gui::app::Tool;
use terrasynth_gui::maprender::ViewMode;
use terrasynth_gui::{AppOptions, TerrainApp};

fn main() -> eframe::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--bench-ui") {
        terrasynth_gui::bench::run();
        return Ok(());
    }
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    if let Some(i) = args.iter().position(|a| a == "--world") {
        return run_world(args.get(i + 1).map_or("world", String::as_str));
    }
    let tool = value("--tool");
    let view = value("--view");
    let preset = value("--preset");
    let show_3d = args.iter().any(|a| a == "--3d");
    let no_help = args.iter().any(|a| a == "--no-help");
    let size = match value("--size").map(|s| s.parse::<usize>()) {
        Some(Ok(n)) if (2..=terrasynth::recipe::model::MAX_RECIPE_SIDE).contains(&n) => Some(n),
        Some(_) => {
            eprintln!(
                "terrasynth-gui: invalid --size: allowed an integer in 2..={}",
                terrasynth::recipe::model::MAX_RECIPE_SIDE
            );
            std::process::exit(2);
        }
        None => None,
    };
    let flags_with_value = ["--tool", "--view", "--preset", "--size"];
    let project = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with('-') && (*i == 0 || !flags_with_value.contains(&args[i - 1].as_str())))
        .map(|(_, a)| a.clone());
    let options = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default()
            .with_inner_size([1400.0, 880.0])
            .with_title("terrasynth"),
        ..Default::default()
    };
    eframe::run_native(
        "terrasynth",
        options,
        Box::new(move |cc| {
            // Without a project the editor opens on the start screen (seed 004 §11), which
            // generates when its Generate button is pressed; a flag that sets up the editor
            // itself (--tool, --view, --3d) opens the editor directly on a generated map.
            let editor_flags = tool.is_some() || view.is_some() || show_3d;
            let options = AppOptions {
                start_screen: project.is_none() && !editor_flags,
                generate_at_start: project.is_some() || editor_flags,
                open_at_start: project.map(Into::into),
                ..AppOptions::default()
            };
            let mut app = TerrainApp::with_options(cc, options);
            if let Some(name) = preset {
                app.load_preset(&name);
            }
            if let Some(n) = size {
                (app.doc.recipe.width, app.doc.recipe.height) = (n, n);
            }
            match tool.as_deref() {
                Some("terraform") => app.view.tool = Tool::Terraform,
                Some("river") => app.view.tool = Tool::River,
                _ => {}
            }
            if let Some(v) = view
                && let Some(m) = ViewMode::ALL.into_iter().find(|m| format!("{m:?}").eq_ignore_ascii_case(&v))
            {
                app.view.mode = m;
            }
            app.view.show_3d = show_3d;
            if no_help {
                app.view.show_help = false;
            }
            Ok(Box::new(app))
        }),
    )
}

/// `--world PRESET-OR-RECIPE`: the world view of a world preset or a world recipe file; a bad
/// name or a recipe that is not a world prints one line and exits with code 2.
fn run_world(name: &str) -> eframe::Result<()> {
    let path = std::path::Path::new(name);
    let recipe = if path.extension().is_some_and(|e| e == "toml" || e == "json") {
        terrasynth::Recipe::from_path(path)
    } else {
        terrasynth::recipe::preset(name).and_then(|p| p.recipe())
    };
    let world = match recipe.and_then(terrasynth::World::new) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let options = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default()
            .with_inner_size([1400.0, 880.0])
            .with_title(format!("terrasynth — world {name}")),
        ..Default::default()
    };
    let name = name.to_string();
    eframe::run_native(
        "terrasynth-world",
        options,
        Box::new(move |_cc| Ok(Box::new(terrasynth_gui::world_view::WorldApp::new(world, &name)))),
    )
}
