//! The 3D view, one file per job: the orbit camera ([`camera`]), the level-of-detail (LOD)
//! terrain mesh with its near-camera patch and skirts ([`mesh`]), and the software rasteriser
//! used when there is no GPU ([`raster`]); the wgpu renderer is in [`crate::view3d_gpu`].
//! This file holds what they share: the lighting and the scene constants.
//!
//! **Mesh** ([`Mesh3d`]): the map sampled every `step` cells along both axes, `step =
//! ⌈max(w, h) / detail⌉` (plus the last row and column, [`terrasynth::render::mesh::lod_samples`]).
//! World `X` is east and `Y` north in map widths (the longer side spans 1, origin at the map
//! centre), `Z` = height × height scale / (cell size × (longer side − 1)), so relief is true to
//! scale; the vertical exaggeration `e` is applied when drawing (`Z·e`), so changing it never
//! rebuilds the mesh. Each vertex stores its position, the slope `(∂Z/∂X, ∂Z/∂Y)` by central
//! differences over the neighbouring samples (one-sided at the border) and its palette colour.
//! Four side walls close the block (a diorama): from the border samples (or the sea level,
//! if higher) down to [`WALL_DEPTH`] below the lowest point, soil brown shaded by the side's
//! facing, so the sea floor seen through the translucent water has sides instead of sky
//! around it.
//!
//! **Lighting** (both renderers, per vertex, Gouraud): the library's hillshade model
//! (`terrasynth::render::hillshade`, as `shaded.png` and the 2D shaded view): normal
//! `n = normalize(−e·∂Z/∂X, −e·∂Z/∂Y, 1)`, sun `L` = [`HillshadeOptions::sun_vector`] of the
//! default options (azimuth 315°, north-west; altitude 45°), colour = palette colour ×
//! [`HillshadeOptions::light_factor`]`(max(0, n · L))` = `ambient + (1 − ambient) · max(0, n · L)
//! / sin 45°` in sRGB values (ambient 0.35; flat ground keeps its palette colour). Sky: a vertical gradient
//! from (120, 160, 210) at the top to (180, 210, 235) at the bottom. Water: the rectangle of the
//! map at `Z = sea·e`, blended over what is behind it as 0.35 · behind + 0.65 · (30, 90, 170).
//!
//! **Projection**: pinhole camera looking at [`Camera::target`] (at half the sea height) from
//! [`Camera::basis`]; focal length 0.9 × image height (vertical field of view ≈ 58°), near plane
//! 0.01, far plane 100 map widths.
//!
//! **LOD policy** (the editor, `panels/view_3d.rs` and [`crate::view3d_gpu::View3dGpu`]): one regular
//! grid at [`Camera::detail`] samples a side (default 256: a 2049² map → every 9th cell, 52 k
//! vertices, 104 k triangles), kept while the camera moves up to [`MOVING_DETAIL`] (finer
//! settings are halved while moving), so a drag never switches meshes. A map or detail change
//! rebuilds the grid; camera moves only change the view matrix. In close-ups a finer **patch**
//! ([`Mesh3d::patch_rect`], [`Mesh3d::patch`]) replaces the grid squares between the target
//! and the eye, with stitching skirts down (or up) to the coarse edges so no cracks open; it is
//! rebuilt only when its snapped rectangle changes. The wgpu path renders at half resolution
//! without MSAA while the camera moves and once at full resolution with 4× MSAA at rest. The
//! software fallback draws the grid only. A single patch (not a quadtree of chunks) was chosen
//! for simplicity: one extra mesh, one hole, one placement rule.

mod camera;
mod mesh;
mod raster;

pub use camera::{Camera, ViewBasis};
pub use mesh::{Mesh3d, PATCH_HALF, PATCH_SAMPLES, PatchRect, PatchSource, Vertex3d, z_scale};

use terrasynth::render::HillshadeOptions;

/// Sky colour at the top and at the bottom of the image (sRGB).
pub const SKY: [[f32; 3]; 2] = [[120.0, 160.0, 210.0], [180.0, 210.0, 235.0]];
/// Water colour (sRGB) and its opacity.
pub const WATER: ([f32; 3], f32) = ([30.0, 90.0, 170.0], 0.65);
/// Focal length in image heights.
pub const FOCAL: f32 = 0.9;
/// Near and far clipping distances, map widths.
pub const NEAR_FAR: [f32; 2] = [0.01, 100.0];
/// Colour of the side walls (sRGB, soil brown) before shading.
pub const WALL: [f32; 3] = [112.0, 94.0, 74.0];
/// How far the side walls reach below the lowest point of the mesh (or the sea, if lower), in
/// map widths at exaggeration 1.
pub const WALL_DEPTH: f32 = 0.02;
/// Highest detail kept while the camera moves (finer rest meshes are halved while moving):
/// 256 samples a side (≈ 105 k triangles) draw at half resolution in ≈ 10–20 ms on lavapipe.
pub const MOVING_DETAIL: u32 = 256;
/// Allowed range of [`Camera::detail`].
pub const DETAIL_RANGE: [u32; 2] = [32, 1024];

/// The sun and ambient of the 3D view: the library's default hillshade (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Light {
    /// Unit vector towards the sun `(X east, Y north, Z up)`.
    pub sun: [f32; 3],
    /// Share of light on faces turned away from the sun.
    pub ambient: f32,
}

impl Light {
    /// The library's default hillshade light ([`HillshadeOptions::default`]).
    pub fn library() -> Self {
        let opts = HillshadeOptions::default();
        Self { sun: opts.sun_vector().map(|v| v as f32), ambient: opts.ambient as f32 }
    }

    /// Colour factor of a surface with unit normal `n`:
    /// [`HillshadeOptions::light_factor`]`(max(0, n · sun))`, 1 on flat ground.
    pub fn factor(&self, n: [f32; 3]) -> f32 {
        let hs = dot(n, self.sun).max(0.0);
        self.ambient + (1.0 - self.ambient) * hs / self.sun[2]
    }
}

/// Light factor ([`Light::factor`] of [`Light::library`]) of a vertex with slope `grad` drawn
/// at exaggeration `e`.
pub fn light_factor(grad: [f32; 2], e: f32) -> f32 {
    Light::library().factor(normalize([-grad[0] * e, -grad[1] * e, 1.0]))
}

pub(crate) fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
pub(crate) fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
pub(crate) fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
pub(crate) fn normalize(a: [f32; 3]) -> [f32; 3] {
    let n = dot(a, a).sqrt().max(1e-20);
    [a[0] / n, a[1] / n, a[2] / n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lighting_is_the_library_hillshade() {
        let light = Light::library();
        let opts = HillshadeOptions::default();
        // The sun of shaded.png: north-west, 45° high.
        let s = std::f32::consts::FRAC_1_SQRT_2;
        for (a, b) in light.sun.iter().zip([-0.5, 0.5, s]) {
            assert!((a - b).abs() < 1e-6, "{:?}", light.sun);
        }
        // Flat ground keeps its colour (factor 1), whatever the exaggeration.
        assert!((light_factor([0.0, 0.0], 2.0) - 1.0).abs() < 1e-6);
        // A slope whose normal is the sun direction gets the library's factor of hillshade 1;
        // a cliff facing south-east (away from the north-west sun) gets the ambient only.
        let sun = light.sun;
        let full = opts.light_factor(1.0) as f32;
        assert!((light_factor([-sun[0] / sun[2], -sun[1] / sun[2]], 1.0) - full).abs() < 1e-5);
        assert!((light_factor([-1e6, 1e6], 1.0) - light.ambient).abs() < 1e-4);
        // Each factor is the library's light factor of the same hillshade value.
        for g in [[0.3f32, -0.1], [-0.7, 0.2], [0.05, 0.9]] {
            let n = normalize([-g[0], -g[1], 1.0]);
            let want = opts.light_factor(dot(n, sun).max(0.0) as f64) as f32;
            assert!((light_factor(g, 1.0) - want).abs() < 1e-6);
        }
        // Exaggeration steepens a gentle slope that faces the sun (rising to the south-east).
        assert!(light_factor([0.2, -0.2], 3.0) > light_factor([0.2, -0.2], 1.0));
    }
}
