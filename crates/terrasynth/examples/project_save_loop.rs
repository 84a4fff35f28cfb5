//! Helper of `scripts/kill-test.sh` (issue 15 part 3): saves an editor project over and over
//! with `recipe::project::save_project`, the call the editor's Save and its recovery file use,
//! so the script can SIGKILL it at random moments; then checks what is left.
//!
//! ```text
//! project_save_loop save PATH      # saves version 1, 2, 3, … of a project to PATH forever
//! project_save_loop check PATH     # exit 0 if PATH is exactly one complete saved version
//! ```
//!
//! Version k is a fixed recipe with k brush strokes (k dabs each), so any complete file is
//! recognised by re-saving version k and comparing bytes; a partial or mixed file is not.

use std::path::Path;

use terrasynth::recipe::Recipe;
use terrasynth::recipe::project::{Document, EditOp, load_project, save_project};
use terrasynth::shape::brush::BrushMode;

/// Version `k` of the project.
fn version(k: usize) -> Document {
    let mut recipe = Recipe::new("kill-test");
    recipe.width = 33;
    recipe.height = 33;
    let mut doc = Document::new(recipe);
    for s in 0..k {
        let dabs = (0..k).map(|d| [(s * 7 + d) as f64 % 33.0, (s * 3 + d * 5) as f64 % 33.0]).collect();
        doc.edits.push(EditOp::Stroke {
            mode: BrushMode::Raise,
            radius: 4.0,
            strength: 0.01,
            dabs,
            map: Some([33, 33]),
        });
    }
    doc
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, path) = match args.as_slice() {
        [_, m, p] => (m.as_str(), Path::new(p)),
        _ => {
            eprintln!("usage: project_save_loop save|check PATH");
            std::process::exit(2);
        }
    };
    match mode {
        "save" => {
            for k in 1.. {
                save_project(path, &version(k % 200 + 1), &()).expect("save");
            }
        }
        "check" => {
            let bytes = std::fs::read(path).unwrap_or_else(|e| {
                eprintln!("{}: {e}", path.display());
                std::process::exit(1)
            });
            let doc = match load_project::<serde_json::Value>(path) {
                Ok((doc, _)) => doc,
                Err(e) => {
                    eprintln!("not a complete project: {e}");
                    std::process::exit(1)
                }
            };
            let k = doc.edits.len();
            let tmp = std::env::temp_dir().join(format!("kill-check-{}.tsproj", std::process::id()));
            save_project(&tmp, &version(k), &()).expect("save reference");
            let reference = std::fs::read(&tmp).expect("read reference");
            let _ = std::fs::remove_file(&tmp);
            if bytes != reference {
                eprintln!("{}: parses but is not version {k} byte for byte", path.display());
                std::process::exit(1);
            }
            println!("{k}");
        }
        _ => {
            eprintln!("usage: project_save_loop save|check PATH");
            std::process::exit(2);
        }
    }
}
