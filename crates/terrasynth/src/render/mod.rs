//! Rendering: colour palettes ([`palette`]), hillshade and shaded relief ([`mod@hillshade`]),
//! triangle meshes with level of detail ([`mesh`]), and a tiny bitmap [`font`] for captions.
//! Everything here returns pixels or vertices in memory; writing them to files is `io`'s job
//! (a layer above, so `render` never imports it).

pub mod font;
pub mod hillshade;
pub mod mesh;
pub mod palette;
pub mod plot;
pub mod triangle_mesh;
pub mod water;

pub use hillshade::{HillshadeOptions, hillshade, shade, shaded_relief};
pub use mesh::{GridMesh, Mesh, MeshOptions};
pub use palette::Palette;
