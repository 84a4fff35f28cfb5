//! A small file browser inside the editor (pure egui, testable headless): the folder's
//! sub-folders and project files, Up, a file name field (a full path typed there works too),
//! and a confirm button. Used by Open…, Save As…, the export folder and the `import` step's
//! heightmap path.

use std::path::{Path, PathBuf};

use eframe::egui;

use super::entry::error_note;

/// What the browser chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// An existing project file to open.
    Open,
    /// Where to save the project (`.tsproj` is added when the name has no extension).
    SaveAs,
    /// A folder to export into (created if missing).
    ExportFolder,
    /// A project file to save to or open from (an existing one or a new name: the world view's
    /// project field, which Save world and Open world then use).
    ProjectFile,
    /// An existing heightmap file for the `import` step (the listing shows the formats it
    /// reads: [`HEIGHTMAP_EXTENSIONS`]).
    ImportFile,
}

/// File extensions the browser lists for [`Purpose::ImportFile`]: the formats the library's
/// `import` step reads (16-bit PNG, R16/RAW, OpenEXR, GeoTIFF).
pub const HEIGHTMAP_EXTENSIONS: &[&str] = &["png", "r16", "raw", "exr", "tif", "tiff"];

impl Purpose {
    fn title(self) -> &'static str {
        match self {
            Purpose::Open => "Open project",
            Purpose::SaveAs => "Save project as",
            Purpose::ExportFolder => "Export folder",
            Purpose::ImportFile => "Heightmap to import",
            Purpose::ProjectFile => "World project file",
        }
    }

    /// Whether the listing shows the file `name`.
    fn lists(self, name: &str) -> bool {
        match self {
            Purpose::Open | Purpose::SaveAs | Purpose::ProjectFile => name.ends_with(".tsproj"),
            Purpose::ExportFolder => false,
            Purpose::ImportFile => Path::new(name)
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| HEIGHTMAP_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())),
        }
    }

    fn confirm(self) -> &'static str {
        match self {
            Purpose::Open => "Open file",
            Purpose::SaveAs => "Save here",
            Purpose::ExportFolder => "Choose folder",
            Purpose::ImportFile => "Use file",
            Purpose::ProjectFile => "Use this file",
        }
    }
}

/// The result of one frame of the browser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Still choosing.
    Open,
    /// Closed without a choice.
    Cancelled,
    /// The chosen path.
    Chosen(PathBuf),
}

/// One sub-folder or file of the folder shown.
struct Item {
    name: String,
    is_dir: bool,
}

/// The browser's state.
pub struct FileBrowser {
    /// What it chooses.
    pub purpose: Purpose,
    /// The folder shown.
    pub dir: PathBuf,
    /// The file name (or path) field.
    pub name: String,
    items: Vec<Item>,
    listed: Option<PathBuf>,
    problem: Option<String>,
}

impl FileBrowser {
    /// A browser for `purpose` starting at `start`: a file (its folder is shown and its name
    /// filled in) or a folder.
    pub fn new(purpose: Purpose, start: &Path) -> Self {
        let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
        let (dir, name) = if start.is_dir() || purpose == Purpose::ExportFolder && !start.exists() {
            match purpose {
                Purpose::ExportFolder => {
                    let name =
                        start.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    (start.parent().map_or(start.clone(), Path::to_path_buf), name)
                }
                _ => (start, String::new()),
            }
        } else {
            let name = start.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (start.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf), name)
        };
        Self { purpose, dir, name, items: Vec::new(), listed: None, problem: None }
    }

    /// The path the name field points to (a full path is taken as is), with `.tsproj` added
    /// for Save As and a project file when the name has no extension.
    pub fn target(&self) -> PathBuf {
        let mut p = self.dir.join(self.name.trim());
        if matches!(self.purpose, Purpose::SaveAs | Purpose::ProjectFile) && p.extension().is_none() {
            p.set_extension("tsproj");
        }
        p
    }

    fn list(&mut self) {
        if self.listed.as_deref() == Some(self.dir.as_path()) {
            return;
        }
        self.listed = Some(self.dir.clone());
        self.items.clear();
        match std::fs::read_dir(&self.dir) {
            Ok(entries) => {
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                    let shown = is_dir || self.purpose.lists(&name);
                    if shown && !name.starts_with('.') {
                        self.items.push(Item { name, is_dir });
                    }
                }
                self.items.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
                self.problem = None;
            }
            Err(e) => self.problem = Some(format!("Cannot list {}: {e}", self.dir.display())),
        }
    }

    /// Checks the choice; `Err` says why it cannot be taken.
    fn check(&self) -> Result<PathBuf, String> {
        let p = self.target();
        if self.name.trim().is_empty() && self.purpose != Purpose::ExportFolder {
            return Err("Type a file name or pick a file.".into());
        }
        match self.purpose {
            Purpose::Open | Purpose::ImportFile if !p.is_file() => {
                Err(format!("{} is not a file", p.display()))
            }
            Purpose::SaveAs | Purpose::ProjectFile if p.is_dir() => {
                Err(format!("{} is a folder", p.display()))
            }
            Purpose::SaveAs | Purpose::ProjectFile if !p.parent().is_some_and(Path::is_dir) => {
                Err(format!("the folder of {} does not exist", p.display()))
            }
            Purpose::ExportFolder if p.is_file() => Err(format!("{} is a file", p.display())),
            _ => Ok(p),
        }
    }

    /// Draws the browser window; returns the outcome of this frame.
    pub fn ui(&mut self, ctx: &egui::Context) -> Outcome {
        self.list();
        let mut outcome = Outcome::Open;
        let mut open = true;
        egui::Window::new(self.purpose.title()).collapsible(false).default_width(440.0).open(&mut open).show(
            ctx,
            |ui| {
                ui.horizontal(|ui| {
                    if ui.button("Up").on_hover_text("The parent folder.").clicked()
                        && let Some(parent) = self.dir.parent()
                    {
                        self.dir = parent.to_path_buf();
                    }
                    ui.monospace(self.dir.display().to_string());
                });
                egui::ScrollArea::vertical().max_height(260.0).auto_shrink([false, true]).show(ui, |ui| {
                    if self.items.is_empty() {
                        ui.weak(match self.purpose {
                            Purpose::ImportFile => "(no folders or heightmap files here)",
                            _ => "(no folders or project files here)",
                        });
                    }
                    let mut enter = None;
                    for item in &self.items {
                        let label = if item.is_dir { format!("{}/", item.name) } else { item.name.clone() };
                        let r = ui.selectable_label(!item.is_dir && item.name == self.name, label);
                        if r.clicked() {
                            if item.is_dir {
                                enter = Some(item.name.clone());
                            } else {
                                self.name = item.name.clone();
                            }
                        }
                        if r.double_clicked() && !item.is_dir {
                            self.name = item.name.clone();
                            if let Ok(p) = self.check() {
                                outcome = Outcome::Chosen(p);
                            }
                        }
                    }
                    if let Some(d) = enter {
                        self.dir = self.dir.join(d);
                    }
                });
                ui.horizontal(|ui| {
                    ui.label(if self.purpose == Purpose::ExportFolder { "Folder" } else { "File" });
                    let r = ui
                        .add(egui::TextEdit::singleline(&mut self.name).desired_width(300.0))
                        .accessible_name("file name field")
                        .on_hover_text("A name in the folder above, or a full path.");
                    if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        match self.check() {
                            Ok(p) => outcome = Outcome::Chosen(p),
                            Err(e) => self.problem = Some(e),
                        }
                    }
                });
                error_note(ui, self.problem.as_deref());
                ui.horizontal(|ui| {
                    if ui.button(self.purpose.confirm()).clicked() {
                        match self.check() {
                            Ok(p) => outcome = Outcome::Chosen(p),
                            Err(e) => self.problem = Some(e),
                        }
                    }
                    if ui.button("Cancel").clicked() {
                        outcome = Outcome::Cancelled;
                    }
                });
            },
        );
        if !open { Outcome::Cancelled } else { outcome }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_the_typed_name_in_the_folder_or_a_full_path() {
        let dir = std::env::temp_dir().join(format!("ts-browser-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut b = FileBrowser::new(Purpose::SaveAs, &dir);
        assert_eq!(b.dir, dir);
        b.name = "island".into();
        assert_eq!(b.target(), dir.join("island.tsproj"));
        assert_eq!(b.check(), Ok(dir.join("island.tsproj")));
        b.name = "/no/such/folder/x.tsproj".into();
        assert!(b.check().unwrap_err().contains("does not exist"));
        // Open: the file must exist; starting from a file shows its folder and name.
        std::fs::write(dir.join("a.tsproj"), "{}").unwrap();
        let b = FileBrowser::new(Purpose::Open, &dir.join("a.tsproj"));
        assert_eq!((b.dir.as_path(), b.name.as_str()), (dir.as_path(), "a.tsproj"));
        assert_eq!(b.check(), Ok(dir.join("a.tsproj")));
        let mut b = FileBrowser::new(Purpose::Open, &dir);
        b.name = "missing.tsproj".into();
        assert!(b.check().is_err());
        b.list();
        assert_eq!(b.items.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["a.tsproj"]);
        // Import: heightmap files only, and the chosen one must exist.
        std::fs::write(dir.join("dem.PNG"), "x").unwrap();
        std::fs::write(dir.join("dem.r16"), "x").unwrap();
        let mut b = FileBrowser::new(Purpose::ImportFile, &dir);
        b.list();
        assert_eq!(b.items.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["dem.PNG", "dem.r16"]);
        b.name = "dem.r16".into();
        assert_eq!(b.check(), Ok(dir.join("dem.r16")));
        b.name = "a.tsproj.png".into();
        assert!(b.check().unwrap_err().contains("is not a file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
