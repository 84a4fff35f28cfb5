//! The triangle outputs of `triangular` with `shape = "triangle"` (and of `squig-rivers`,
//! built on it): `triangle.png` is transparent exactly outside the triangle (cells `x > y`) and
//! opaque inside, `triangle.glb` holds the triangle's vertices only; the square form writes
//! neither.

use terrasynth::export::{ExportOptions, write};
use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, StepEntry, registry};

fn export(steps: Vec<StepEntry>, dir: &std::path::Path) -> Vec<String> {
    let recipe = Recipe { width: 33, height: 33, seed: 5, steps, ..Recipe::new("t") };
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
