//! Projects: New / Open… / Save / Save As… through the in-editor file browser, the file name
//! and unsaved mark in the title, recent files, and Save after a failed Open saving the project
//! that is open (it used to write the failed path).

use egui_kittest::kittest::Queryable;
use terrasynth_gui::ViewSettings;
use terrasynth_gui::document::{EditOp, load_project};

use crate::common::{app_harness, choose_file, click_label, drag_cells, temp_dir, wait_idle};

fn strokes(path: &std::path::Path) -> usize {
    let (doc, _) = load_project::<ViewSettings>(path).expect("project readable");
    doc.edits.iter().filter(|e| matches!(e, EditOp::Stroke { .. })).count()
}

#[test]
fn save_after_a_failed_open_saves_the_open_project() {
    let dir = temp_dir("failed-open");
    let p1 = dir.join("p1.tsproj");
    let bad = dir.join("bad.tsproj");
    std::fs::write(&bad, b"{ corrupt").unwrap();
    let mut h = app_harness();
    assert_eq!(h.state().window_title(), "untitled — terrasynth");
    click_label(&mut h, "Terraform");
    drag_cells(&mut h, (30.0, 30.0), (80.0, 40.0));
    assert_eq!(h.state().window_title(), "untitled * — terrasynth", "unsaved mark");
    // Save with no file yet asks where (the browser), then the title names the file.
    click_label(&mut h, "Save");
    assert!(h.query_by_label("Save here").is_some(), "Save asks where the first time");
    choose_file(&mut h, &p1.display().to_string(), "Save here");
    assert_eq!(strokes(&p1), 1);
    assert_eq!(h.state().window_title(), "p1.tsproj — terrasynth");
    assert_eq!(h.state().recent.first().and_then(|p| p.file_name()), p1.file_name(), "recent files");
    // A failed Open changes nothing: not the work, not where Save writes.
    click_label(&mut h, "Open…");
    choose_file(&mut h, &bad.display().to_string(), "Open file");
    assert!(h.state().error.as_deref().is_some_and(|e| e.contains("Cannot open project")));
    assert_eq!(h.state().project_path.as_deref(), Some(p1.as_path()));
    drag_cells(&mut h, (60.0, 80.0), (100.0, 90.0));
    click_label(&mut h, "Save");
    assert!(h.query_by_label("Save here").is_none(), "Save went to the open project without asking");
    assert_eq!(strokes(&p1), 2, "the open project holds the new stroke");
    assert_eq!(std::fs::read(&bad).unwrap(), b"{ corrupt", "the failed path was not written");
    assert_eq!(h.state().window_title(), "p1.tsproj — terrasynth");
}

#[test]
fn new_asks_before_discarding_and_open_reopens_from_recent() {
    let dir = temp_dir("new-recent");
    let p = dir.join("kept.tsproj");
    let mut h = app_harness();
    click_label(&mut h, "Terraform");
    drag_cells(&mut h, (30.0, 30.0), (80.0, 40.0));
    h.state_mut().save_project_to(&p);
    let saved = h.state().doc.clone();
    drag_cells(&mut h, (60.0, 80.0), (100.0, 90.0));
    // New with unsaved changes asks; Keep editing keeps them.
    click_label(&mut h, "New");
    click_label(&mut h, "Keep editing");
    assert_eq!(h.state().doc.edits.len(), 2);
    click_label(&mut h, "New");
    click_label(&mut h, "Discard changes");
    wait_idle(&mut h);
    assert!(h.state().doc.edits.is_empty() && h.state().project_path.is_none());
    assert_eq!(h.state().window_title(), "untitled — terrasynth");
    // The saved project comes back from the Recent menu.
    click_label(&mut h, "Recent");
    click_label(&mut h, "kept.tsproj");
    wait_idle(&mut h);
    assert_eq!(h.state().doc, saved);
    assert_eq!(h.state().window_title(), "kept.tsproj — terrasynth");
}
