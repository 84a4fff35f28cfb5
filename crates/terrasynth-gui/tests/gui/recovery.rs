//! The editor's recovery file brings the work back after a kill (issue 15 part 3).
//!
//! A child process (this test binary again, running the ignored test [`child_session`]) runs an
//! editor model with a recovery file written at every frame, and makes edits one after the
//! other: brush strokes, river sources and recipe (seed) changes, printing `edit K` after each.
//! Once it has made a few, the parent SIGKILLs it: no clean shutdown, no save, possibly in the
//! middle of a recovery write. A new editor on the same recovery path then offers the file,
//! restores it, and must hold exactly the document of the last finished edit (or of the one in
//! progress, if its recovery write had finished), with the heights that document builds.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use terrasynth::recipe::PipelineProgress;
use terrasynth::recipe::project::{Document, EditOp};
use terrasynth_gui::AppOptions;
use terrasynth_gui::editor::Editor;

/// Set (to the folder of the recovery file) in the child's environment.
const CHILD_ENV: &str = "TERRASYNTH_RECOVERY_CHILD";

/// Edits the child finishes before it is killed (strokes, sources and seeds, two of each).
const EDITS_BEFORE_KILL: usize = 6;

/// Map side of the test document.
const SIDE: usize = 65;

fn options(recovery: Option<PathBuf>) -> AppOptions {
    AppOptions {
        recovery_path: recovery,
        // Written at every frame while there are unsaved changes.
        recovery_interval: Duration::ZERO,
        generate_at_start: false,
        open_at_start: None,
        recent_path: None,
        start_screen: false,
    }
}

/// Runs frames (idle UI: each commits and writes the recovery file when due) until no job runs.
fn settle(e: &mut Editor) {
    assert!(e.run_until_idle(Duration::from_secs(300)), "editor stayed busy: {}", e.status);
}

/// An editor on the default preset at [`SIDE`]² with seed 7, generated; no unsaved changes.
fn session(recovery: Option<PathBuf>) -> Editor {
    let mut e = Editor::new(options(recovery), None);
    let mut recipe = e.doc.recipe.clone();
    (recipe.width, recipe.height, recipe.seed) = (SIDE, SIDE, 7);
    e.new_document(Document::new(recipe));
    settle(&mut e);
    assert!(!e.has_unsaved_changes());
    e
}

/// Edit `k` of a session (the same in the child and in the parent's reference session): a
/// stroke, a river source or a new seed in turn, then frames until the editor is idle.
fn edit(e: &mut Editor, k: usize) {
    let o = (k * 5 % 40) as f64;
    match k % 3 {
        0 => e.paint_stroke([8.0 + o, 12.0], [20.0 + o, 50.0]),
        1 => e.add_river_source(10 + k * 7 % 40, 30 + k % 20),
        _ => e.doc.recipe.seed = 100 + k as u64,
    }
    settle(e);
    assert_eq!(e.error, None, "edit {k}");
}

/// The child: edits forever (until killed), reporting each finished edit on stdout.
#[test]
#[ignore = "run by recovery_file_brings_the_work_back_after_sigkill in a child process"]
fn child_session() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else { return };
    let mut e = session(Some(Path::new(&dir).join("recovery.tsproj")));
    for k in 0.. {
        edit(&mut e, k);
        println!("edit {k}");
    }
}

fn height_bytes(doc: &Document) -> Vec<u8> {
    let t = doc.build(&PipelineProgress::new()).expect("the restored document builds");
    t.height.as_slice().iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn recovery_file_brings_the_work_back_after_sigkill() {
    let dir = std::env::temp_dir().join(format!("terrasynth-recovery-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("recovery.tsproj");

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["recovery::child_session", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the child session");
    let mut last = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(k) = line.strip_prefix("edit ") {
            last = Some(k.parse::<usize>().unwrap());
            if last == Some(EDITS_BEFORE_KILL - 1) {
                break;
            }
        }
    }
    // The child is already on its next edit: killed in the middle of it.
    child.kill().expect("SIGKILL the child");
    let status = child.wait().unwrap();
    assert_eq!(last, Some(EDITS_BEFORE_KILL - 1), "the child reported its edits (status {status})");
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "killed by SIGKILL, not ended: {status}");
    }

    // The same edits in this process, without a recovery file: the documents after the last
    // reported edit and after the one in progress.
    let mut reference = session(None);
    let mut expected = Vec::new();
    for k in 0..=EDITS_BEFORE_KILL {
        edit(&mut reference, k);
        if k + 1 >= EDITS_BEFORE_KILL {
            expected.push(reference.doc.clone());
        }
    }
    let done = &expected[0];
    let strokes = done.edits.iter().filter(|op| matches!(op, EditOp::Stroke { .. })).count();
    let sources = done.edits.iter().filter(|op| matches!(op, EditOp::RiverSource { .. })).count();
    assert_eq!((strokes, sources, done.recipe.seed), (2, 2, 105), "the reference session's edits");

    // A new session offers the recovery file and restores it.
    let mut e = session(Some(path.clone()));
    assert_eq!(e.recovery_file(), Some(path.as_path()), "the new session offers the recovery file");
    assert_ne!(&e.doc, done);
    e.restore_recovery();
    settle(&mut e);
    assert_eq!(e.error, None);
    let which = expected.iter().position(|d| *d == e.doc);
    assert!(
        which.is_some(),
        "the restored document is neither the last finished edit nor the one in progress: {} edits, seed {}",
        e.doc.edits.len(),
        e.doc.recipe.seed
    );
    assert_eq!(e.height_bytes(), height_bytes(&e.doc), "restored heights are the document's");
    assert!(e.has_unsaved_changes(), "restored work still needs saving");
    assert_eq!(e.recovery_file(), None, "restored: no longer offered");
    eprintln!(
        "restored the document of edit {} (killed during edit {EDITS_BEFORE_KILL})",
        EDITS_BEFORE_KILL - 1 + which.unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
