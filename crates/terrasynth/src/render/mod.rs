//! Rendering: colour palettes ([`palette`]), hillshade and shaded relief ([`mod@hillshade`]),
//! triangle meshes with level of detail ([`mesh`]). Output goes to files through [`crate::io`].

pub mod biomes;
pub mod font;
pub mod hillshade;
pub mod mesh;
pub mod palette;
pub mod plot;

pub use hillshade::{HillshadeOptions, hillshade, shade, shaded_relief};
pub use mesh::{GridMesh, Mesh, MeshOptions};
pub use palette::Palette;
