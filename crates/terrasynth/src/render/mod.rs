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

/// `x.round().clamp(0.0, max)` as an integer, bit for bit (`round` halves away from zero; NaN
/// gives 0), for a whole `max` below 2³²: the pixel and 16-bit height writers call it for every
/// cell, and `round` is a library call on x86-64 without SSE4.1 (the build's baseline). After
/// the clamp, truncation is one instruction and `x − trunc(x)` is exact.
#[inline]
pub(crate) fn round_clamped(x: f64, max: f64) -> u32 {
    let x = x.clamp(0.0, max);
    let i = x as u32;
    i + u32::from(x - i as f64 >= 0.5)
}

#[cfg(test)]
mod tests {
    use super::round_clamped;

    /// Equal to `round` then `clamp` on halves and their neighbouring doubles, out-of-range
    /// values, NaN and infinities, and a million pseudo-random values over [−10, 70000].
    #[test]
    fn round_clamped_equals_round_then_clamp() {
        let reference = |x: f64, max: f64| {
            let r = x.round().clamp(0.0, max);
            if r.is_nan() { 0 } else { r as u32 }
        };
        let mut xs = vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, -0.5, 0.49999999999999994];
        for k in -3..70_000 {
            let half = k as f64 + 0.5;
            xs.extend([half, half.next_up(), half.next_down(), k as f64, (k as f64).next_down()]);
        }
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1_000_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            xs.push((state >> 11) as f64 / (1u64 << 53) as f64 * 70_010.0 - 10.0);
        }
        for max in [255.0, 65535.0] {
            for &x in &xs {
                assert_eq!(round_clamped(x, max), reference(x, max), "{x} (max {max})");
                let f = x as f32;
                assert_eq!(round_clamped(f as f64, max), reference(f.round() as f64, max), "{f}f32");
            }
        }
    }
}
