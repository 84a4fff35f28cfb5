//! Unsaved work is not lost: closing with unsaved changes asks (keep editing / discard / save),
//! and a recovery file is written periodically while there are unsaved changes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use eframe::egui::{Key, Modifiers, ViewportCommand, ViewportEvent, ViewportId};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use terrasynth::recipe::PipelineProgress;
use terrasynth_gui::document::load_project;
use terrasynth_gui::{AppOptions, TerrainApp, ViewSettings};

use crate::common::{HarnessSpec, app_harness, click_label, drag_cells, harness, temp_dir, wait_idle};

/// Sends the window's close button (a `ViewportEvent::Close` on the root viewport) and runs the
/// frame that sees it; returns the viewport commands the app sent in that frame.
fn request_close(h: &mut Harness<'static, TerrainApp>) -> Vec<ViewportCommand> {
    h.input_mut().viewports.entry(ViewportId::ROOT).or_default().events.push(ViewportEvent::Close);
    h.step();
    root_commands(h)
}

/// Viewport commands of the last frame.
fn root_commands(h: &Harness<'static, TerrainApp>) -> Vec<ViewportCommand> {
    h.output().viewport_output.get(&ViewportId::ROOT).map(|v| v.commands.clone()).unwrap_or_default()
}

/// Clicks a button of the close prompt; returns the viewport commands of the click's frame.
fn click_prompt(h: &mut Harness<'static, TerrainApp>, label: &str) -> Vec<ViewportCommand> {
    h.get_by_label(label).click();
    h.step();
    let cmds = root_commands(h);
    h.step();
    cmds
}

fn cancels(cmds: &[ViewportCommand]) -> bool {
    cmds.iter().any(|c| matches!(c, ViewportCommand::CancelClose))
}

fn closes(cmds: &[ViewportCommand]) -> bool {
    cmds.iter().any(|c| matches!(c, ViewportCommand::Close))
}

fn prompt_shown(h: &Harness<'static, TerrainApp>) -> bool {
    h.query_by_label("Unsaved changes").is_some()
}

/// Closes the window with unsaved changes: the close must be cancelled and the prompt shown.
fn open_prompt(h: &mut Harness<'static, TerrainApp>) {
    let cmds = request_close(h);
    assert!(cancels(&cmds), "the close is cancelled while the prompt is up: {cmds:?}");
    h.step();
    assert!(prompt_shown(h), "the prompt is shown");
}

/// The app with one terraform stroke painted (unsaved).
fn edited(spec: HarnessSpec) -> Harness<'static, TerrainApp> {
    let mut h = harness(spec);
    click_label(&mut h, "Terraform");
    drag_cells(&mut h, (40.0, 60.0), (90.0, 64.0));
    assert!(h.state().has_unsaved_changes());
    h
}

#[test]
fn closing_without_changes_does_not_ask() {
    let mut h = app_harness();
    assert!(!h.state().has_unsaved_changes());
    let cmds = request_close(&mut h);
    assert!(!cancels(&cmds), "close went through: {cmds:?}");
    h.step();
    assert!(!prompt_shown(&h));
}

#[test]
fn close_with_unsaved_changes_asks_and_keep_editing_keeps_the_work() {
    let mut h = edited(HarnessSpec::default());
    let bytes = h.state().height_bytes();
    let doc = h.state().doc.clone();
    open_prompt(&mut h);
    let cmds = click_prompt(&mut h, "Keep editing");
    assert!(!closes(&cmds), "keep editing does not close: {cmds:?}");
    assert!(!prompt_shown(&h), "the prompt is gone");
    assert_eq!(h.state().doc, doc, "edits kept");
    assert_eq!(h.state().height_bytes(), bytes, "heights kept");
    assert!(h.state().has_unsaved_changes());
    // A second close asks again.
    assert!(cancels(&request_close(&mut h)));
}

#[test]
fn discard_and_close_closes_without_saving() {
    let dir = temp_dir("discard");
    let path = dir.join("never.tsproj");
    let mut h = edited(HarnessSpec::default());
    h.state_mut().project_path = Some(path.clone());
    open_prompt(&mut h);
    let cmds = click_prompt(&mut h, "Discard and close");
    assert!(closes(&cmds), "discard sends Close: {cmds:?}");
    assert!(!path.exists(), "nothing saved");
    // The window's own close that follows is no longer cancelled.
    assert!(!cancels(&request_close(&mut h)));
}

#[test]
fn save_and_close_writes_the_project_then_closes() {
    let dir = temp_dir("saveclose");
    let path = dir.join("work.tsproj");
    let mut h = edited(HarnessSpec::default());
    h.state_mut().project_path = Some(path.clone());
    let doc = h.state().doc.clone();
    open_prompt(&mut h);
    let cmds = click_prompt(&mut h, "Save and close");
    assert!(closes(&cmds), "save sends Close: {cmds:?}");
    let (saved, _) = load_project::<ViewSettings>(&path).expect("project written");
    assert_eq!(saved, doc, "the saved project holds the edits");
    assert!(!h.state().has_unsaved_changes());
    assert!(!cancels(&request_close(&mut h)));
}

#[test]
fn save_and_close_stays_open_when_saving_fails() {
    let dir = temp_dir("savefail");
    // A folder where the project file should be: the save fails.
    let path = dir.join("taken");
    std::fs::create_dir_all(&path).unwrap();
    let mut h = edited(HarnessSpec::default());
    h.state_mut().project_path = Some(path.clone());
    open_prompt(&mut h);
    let cmds = click_prompt(&mut h, "Save and close");
    assert!(!closes(&cmds), "a failed save does not close: {cmds:?}");
    assert!(h.state().error.as_deref().is_some_and(|e| e.contains("Cannot save")), "{:?}", h.state().error);
    assert!(h.state().has_unsaved_changes());
}

/// A project with no file yet: Save and close asks where, then closes once saved.
#[test]
fn save_and_close_without_a_file_asks_where() {
    let dir = temp_dir("saveas-close");
    let path = dir.join("chosen.tsproj");
    let mut h = edited(HarnessSpec::default());
    assert_eq!(h.state().project_path, None);
    let doc = h.state().doc.clone();
    open_prompt(&mut h);
    let cmds = click_prompt(&mut h, "Save and close");
    assert!(!closes(&cmds), "nothing saved yet: {cmds:?}");
    // The browser's window shows from the next frame (egui sizes a new window first).
    h.step();
    h.get_by_label("file name field").focus();
    h.step();
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.get_by_label("file name field").type_text(&path.display().to_string());
    h.step();
    let cmds = click_prompt(&mut h, "Save here");
    assert!(closes(&cmds), "saved, then closed: {cmds:?}");
    assert_eq!(load_project::<ViewSettings>(&path).unwrap().0, doc);
}

fn recovery_spec(dir: &Path, interval: Duration) -> (HarnessSpec, PathBuf) {
    let path = dir.join("state").join("recovery.tsproj");
    let options = AppOptions {
        recovery_path: Some(path.clone()),
        recovery_interval: interval,
        generate_at_start: false,
        open_at_start: None,
        recent_path: None,
        start_screen: false,
    };
    (HarnessSpec { options, ..HarnessSpec::default() }, path)
}

#[test]
fn the_recovery_file_restores_the_exact_heights() {
    let dir = temp_dir("recovery");
    let (spec, path) = recovery_spec(&dir, Duration::ZERO);
    let mut h = edited(spec);
    h.state_mut().add_river_source(64, 64);
    wait_idle(&mut h);
    let bytes = h.state().height_bytes();
    let doc = h.state().doc.clone();
    assert!(path.exists(), "recovery file written while there are unsaved changes");
    let (recovered, _) = load_project::<ViewSettings>(&path).unwrap();
    assert_eq!(recovered, doc, "the recovery file holds the current edits");
    let rebuilt = recovered.build(&PipelineProgress::new()).unwrap();
    let rebuilt: Vec<u8> = rebuilt.height.as_slice().iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(rebuilt, bytes, "replaying the recovery file gives the same heights");

    // A new session offers the file and restores it through the Project dialog.
    let (spec, _) = recovery_spec(&dir, Duration::ZERO);
    let mut h2 = harness(spec);
    assert_ne!(h2.state().height_bytes(), bytes);
    click_label(&mut h2, "Restore recovery file");
    wait_idle(&mut h2);
    assert_eq!(h2.state().error, None);
    assert_eq!(h2.state().doc, doc);
    assert_eq!(h2.state().height_bytes(), bytes, "restored heights are bit-identical");
    assert!(h2.state().has_unsaved_changes(), "restored work still needs saving");
}

#[test]
fn no_recovery_file_without_changes_or_before_the_interval() {
    let dir = temp_dir("norecovery");
    // Nothing changed: no file, even with a zero interval.
    let (spec, path) = recovery_spec(&dir, Duration::ZERO);
    let mut h = harness(spec);
    h.run_steps(10);
    assert!(!path.exists(), "no recovery write when nothing changed");
    // Changed, but the interval has not passed yet.
    let (spec, path) = recovery_spec(&dir, Duration::from_secs(3600));
    let mut h = edited(spec);
    h.run_steps(10);
    assert!(!path.exists(), "no recovery write before the interval");
    drop(h);
    // Changed with a zero interval: written; after a save it is removed and not written again.
    let (spec, path) = recovery_spec(&dir, Duration::ZERO);
    let mut h = edited(spec);
    assert!(path.exists());
    let project = dir.join("saved.tsproj").display().to_string();
    h.state_mut().save_project_to(&project);
    assert!(!h.state().has_unsaved_changes());
    h.run_steps(10);
    assert!(!path.exists(), "the saved project replaces the recovery file");
}
