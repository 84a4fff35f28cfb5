//! Files a recipe or project names (issue 15 part 4; docs/RECIPES.md "Files a recipe names"):
//! relative `import` paths resolve against the recipe's or project's folder, `..` and symbolic
//! links are followed as documented, only regular files are read, and a recipe's text cannot
//! make a tile set write outside its folder.

use std::path::{Path, PathBuf};

use terrasynth::export::tiles::{TileLayout, TileOptions, write_tiles};
use terrasynth::io::engine::Engine;
use terrasynth::io::raw::write_r16;
use terrasynth::recipe::project::{Document, load_project, save_project};
use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, registry};
use terrasynth::step::ParamValue;
use terrasynth::{Error, Heightmap, World};

fn fresh_dir(tag: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("untrusted-paths").join(tag);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A 5 × 5 ramp written as R16 at `path` (values k / 24 for cell k).
fn write_ramp(path: &Path) -> Heightmap {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let map = Heightmap::from_fn(5, 5, 1.0, |x, y| (y * 5 + x) as f32 / 24.0).unwrap();
    write_r16(path, &map, 0.0, 1.0).unwrap();
    map
}

fn import_recipe(path: &str) -> String {
    format!("width = 5\nheight = 5\n[[steps]]\ntype = \"import\"\npath = {path:?}\nresize = \"error\"\n")
}

fn import_path(recipe: &Recipe) -> String {
    match recipe.steps[0].params.get("path") {
        Some(ParamValue::Text(p)) => p.clone(),
        other => panic!("no path: {other:?}"),
    }
}

fn run(recipe: Recipe) -> terrasynth::Result<Heightmap> {
    let pipeline = Pipeline::new(recipe, &registry())?;
    Ok(pipeline.run(&PipelineProgress::new())?.terrain.height)
}

#[test]
fn relative_import_paths_resolve_against_the_recipe_folder_not_the_working_directory() {
    let dir = fresh_dir("relative");
    let map = write_ramp(&dir.join("maps/ramp.r16"));
    let recipe_path = dir.join("shared/../recipe.toml");
    std::fs::create_dir_all(dir.join("shared")).unwrap();
    std::fs::write(dir.join("recipe.toml"), import_recipe("maps/ramp.r16")).unwrap();
    // The test runs in the crate folder, far from `dir`.
    assert!(!Path::new("maps/ramp.r16").exists());
    let recipe = Recipe::from_path(&recipe_path).unwrap();
    let resolved = import_path(&recipe);
    assert!(Path::new(&resolved).is_absolute(), "{resolved}");
    assert_eq!(
        std::fs::canonicalize(&resolved).unwrap(),
        std::fs::canonicalize(dir.join("maps/ramp.r16")).unwrap()
    );
    let got = run(recipe.clone()).unwrap();
    for (a, b) in got.as_slice().iter().zip(map.as_slice()) {
        assert!((a - b).abs() <= 0.5 / 65535.0, "{a} vs {b}");
    }
    // Saved again elsewhere, the recipe still names the same file.
    let elsewhere = fresh_dir("relative-elsewhere").join("copy.toml");
    std::fs::write(&elsewhere, recipe.to_toml_string().unwrap()).unwrap();
    assert_eq!(import_path(&Recipe::from_path(&elsewhere).unwrap()), resolved);
    // From text (no file), the path is left relative: the working directory's.
    let text = Recipe::from_toml_str(&import_recipe("maps/ramp.r16")).unwrap();
    assert_eq!(import_path(&text), "maps/ramp.r16");
    assert!(matches!(run(text), Err(Error::Step { .. })));
}

#[test]
fn dot_dot_absolute_and_symlinked_import_paths_are_followed() {
    let dir = fresh_dir("dotdot");
    write_ramp(&dir.join("common/ramp.r16"));
    std::fs::create_dir_all(dir.join("recipes")).unwrap();
    // `..` climbs from the recipe's folder.
    std::fs::write(dir.join("recipes/up.toml"), import_recipe("../common/ramp.r16")).unwrap();
    assert!(run(Recipe::from_path(&dir.join("recipes/up.toml")).unwrap()).is_ok());
    // An absolute path is kept as it is.
    let abs = dir.join("common/ramp.r16").to_string_lossy().into_owned();
    std::fs::write(dir.join("recipes/abs.toml"), import_recipe(&abs)).unwrap();
    let r = Recipe::from_path(&dir.join("recipes/abs.toml")).unwrap();
    assert_eq!(import_path(&r), abs);
    assert!(run(r).is_ok());
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("common/ramp.r16"), dir.join("recipes/link.r16")).unwrap();
        std::fs::write(dir.join("recipes/link.toml"), import_recipe("link.r16")).unwrap();
        assert!(run(Recipe::from_path(&dir.join("recipes/link.toml")).unwrap()).is_ok());
    }
}

#[test]
fn project_import_paths_resolve_against_the_project_folder() {
    let dir = fresh_dir("project");
    write_ramp(&dir.join("p/maps/ramp.r16"));
    let doc = Document::new(Recipe::from_toml_str(&import_recipe("maps/ramp.r16")).unwrap());
    // Saved with a relative path (a hand-written or older project), opened from elsewhere.
    save_project(&dir.join("p/x.tsproj"), &doc, &()).unwrap();
    let (loaded, _) = load_project::<serde_json::Value>(&dir.join("p/x.tsproj")).unwrap();
    assert_eq!(
        std::fs::canonicalize(import_path(&loaded.recipe)).unwrap(),
        std::fs::canonicalize(dir.join("p/maps/ramp.r16")).unwrap()
    );
    assert!(run(loaded.recipe).is_ok());
}

#[test]
fn only_regular_files_are_read() {
    let dir = fresh_dir("special");
    // A folder, a device that never ends and (on Unix) a FIFO nobody writes: each refused
    // at once, naming the file, instead of blocking or filling memory.
    let mut specials = vec![dir.clone()];
    #[cfg(target_os = "linux")]
    specials.push(PathBuf::from("/dev/zero"));
    #[cfg(unix)]
    {
        let fifo = dir.join("pipe.r16");
        let ok = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
        if ok {
            specials.push(fifo);
        }
    }
    for p in &specials {
        let text = import_recipe(&p.to_string_lossy());
        let err = run(Recipe::from_toml_str(&text).unwrap()).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{}: {err}", p.display());
        let err = Recipe::from_path(p).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{}: {err}", p.display());
        let err = load_project::<serde_json::Value>(p).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{}: {err}", p.display());
    }
}

/// Regression: `tiles --engine` named its engine files `<recipe name>_x{i}_y{j}` in
/// `OUT/<engine>/`, so a shared recipe with `name = "../../escaped"` wrote outside the tile
/// set's folder.
#[test]
fn a_recipe_name_cannot_make_a_tile_set_write_outside_its_folder() {
    let dir = fresh_dir("name-escape");
    let set = dir.join("a/b/set");
    let text = format!("name = \"../../../escaped\"\n{}", terrasynth_world_recipe());
    let world = World::new(Recipe::from_toml_str(&text).unwrap()).unwrap();
    let layout = TileLayout::new((0, 0), (1, 1), 65, Some(Engine::Godot)).unwrap();
    write_tiles(&set, &world, &layout, &TileOptions::default()).unwrap();
    let mut outside = Vec::new();
    for entry in walk(&dir) {
        if !entry.starts_with(&set) {
            outside.push(entry);
        }
    }
    assert!(outside.iter().all(|p| p.is_dir()), "files written outside the tile set: {outside:?}");
    let engine_files: Vec<String> = std::fs::read_dir(set.join("godot"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(engine_files, vec!["_________escaped_x0_y0.exr".to_string()]);
}

fn terrasynth_world_recipe() -> &'static str {
    "cell-size = 30.0\n[world]\nheight-range = [-100.0, 200.0]\n[exports]\nglb = false\nimages = false\n\
     [[steps]]\ntype = \"noise\"\nfeature-size-m = 300.0\n"
}

/// Every path under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}
