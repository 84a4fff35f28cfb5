//! The triangle outputs of `triangular` with `shape = "triangle"` (and of `squig-rivers`,
//! built on it): `triangle.png` is transparent exactly outside the triangle (cells `x > y`) and
//! opaque inside, `triangle.glb` holds the triangle's vertices only; the square form writes
//! neither.

use terrasynth::export::{ExportOptions, write};
use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, StepEntry, registry};

fn export(steps: Vec<StepEntry>, dir: &std::path::Path) -> Vec<String> {
    export_with(Recipe { width: 33, height: 33, seed: 5, steps, ..Recipe::new("t") }, dir)
}

fn export_with(recipe: Recipe, dir: &std::path::Path) -> Vec<String> {
    let pipeline = Pipeline::new(recipe, &registry()).unwrap();
    let run = pipeline.run(&PipelineProgress::new()).unwrap();
    write(dir, &run, &pipeline, &ExportOptions::default()).unwrap().files
}

#[test]
fn triangle_png_is_masked_outside_the_triangle_and_the_glb_keeps_the_triangle() {
    for step in [StepEntry::new("triangular").with("shape", "triangle"), StepEntry::new("squig-rivers")] {
        let dir =
            std::env::temp_dir().join(format!("terrasynth-triangle-{}-{}", std::process::id(), step.kind));
        let files = export(vec![step], &dir);
        assert!(files.contains(&"triangle.png".to_string()) && files.contains(&"triangle.glb".to_string()));
        let png = image::open(dir.join("triangle.png")).unwrap().to_rgba8();
        assert_eq!(png.dimensions(), (33, 33));
        let color = image::open(dir.join("color.png")).unwrap().to_rgb8();
        for (x, y, px) in png.enumerate_pixels() {
            let inside = x <= y;
            assert_eq!(px[3], if inside { 255 } else { 0 }, "alpha at ({x}, {y})");
            assert_eq!(&px.0[..3], &color.get_pixel(x, y).0[..], "colour at ({x}, {y})");
        }
        let (doc, _) = terrasynth::io::gltf::read_glb(dir.join("triangle.glb")).unwrap();
        let count = doc.accessors[0].count.0;
        assert_eq!(count, 33 * 34 / 2, "vertices of the triangle of 33 rows");
        std::fs::remove_dir_all(&dir).ok();
    }
    let dir = std::env::temp_dir().join(format!("terrasynth-square-{}", std::process::id()));
    let files = export(vec![StepEntry::new("triangular")], &dir);
    assert!(!files.iter().any(|f| f.starts_with("triangle.")));
    assert!(!dir.join("triangle.png").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `triangle.png` is written even with the images and the mesh switched off, so it must still
/// get the palette colours the export shares (regression: the shared colour map was computed
/// only for the images and the mesh, and `triangle.png` then read past its end), and they are
/// those of the full export.
#[test]
fn triangle_png_has_its_colours_with_images_and_mesh_off() {
    let steps = vec![StepEntry::new("triangular").with("shape", "triangle")];
    let full = std::env::temp_dir().join(format!("terrasynth-triangle-full-{}", std::process::id()));
    let bare = std::env::temp_dir().join(format!("terrasynth-triangle-bare-{}", std::process::id()));
    export(steps.clone(), &full);
    let mut recipe = Recipe { width: 33, height: 33, seed: 5, steps, ..Recipe::new("t") };
    recipe.exports.images = false;
    recipe.exports.glb = false;
    let files = export_with(recipe, &bare);
    assert!(files.contains(&"triangle.png".to_string()) && !files.contains(&"color.png".to_string()));
    let (a, b) = (
        std::fs::read(full.join("triangle.png")).unwrap(),
        std::fs::read(bare.join("triangle.png")).unwrap(),
    );
    assert_eq!(a, b, "triangle.png differs with the images and mesh off");
    std::fs::remove_dir_all(&full).ok();
    std::fs::remove_dir_all(&bare).ok();
}
