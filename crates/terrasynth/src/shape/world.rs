//! What the shaping steps share on windows of an endless world: the world's floor height, world
//! positions of cells, world centres, the fBm displacement fields sampled at world cells.
//!
//! In a world recipe lengths are metres in world coordinates and heights are metres within the
//! recipe's declared range ([`WorldFrame::height_range`]); no step may read the window's own
//! extent or min/max, so that any window equals the same cells cut from a larger window.

use terrasynth_noise::rng::derive_seed;
use terrasynth_noise::{CellRegion, FractalKind, NoiseKind, NoiseSpec, Seed};

use crate::Result;
use crate::step::{Frame, WorldFrame};

/// The two displacement fields (x, then y) of a domain warp over the cells of `cells`: each an
/// fBm of `kind` noise with `octaves` octaves (lacunarity 2, persistence 0.5), seeds
/// `derive_seed(seed, 0)` and `derive_seed(seed, 1)`, clamped to [−1, 1]. Each value depends only
/// on its cell's index and `cells`' scale, so any window of a world sees the same values. Used
/// by the falloff's coast warp and by `perturb` in a world.
pub(crate) fn warp_fields(
    cells: &CellRegion,
    kind: NoiseKind,
    octaves: u32,
    seed: u64,
) -> Result<[Vec<f32>; 2]> {
    let field = |stream: u64| -> Result<Vec<f32>> {
        let spec = NoiseSpec {
            kind,
            seed: Seed::Number(derive_seed(seed, stream)),
            fractal: FractalKind::Fbm,
            octaves,
            lacunarity: 2.0,
            persistence: 0.5,
            ..NoiseSpec::default()
        };
        let mut out = vec![0.0f32; cells.width * cells.height];
        spec.build()?.fill_cells(cells, &mut out)?;
        for v in &mut out {
            *v = v.clamp(-1.0, 1.0);
        }
        Ok(out)
    };
    Ok([field(0)?, field(1)?])
}

/// The world frame when the step runs on a window of a world.
pub(crate) fn world_of(frame: &Frame) -> Option<&WorldFrame> {
    match frame {
        Frame::Map => None,
        Frame::World(w) => Some(w),
    }
}

/// The height a weight of 0 sends a cell to: on a map its own minimum, in a world the bottom of
/// the declared height range (never the window's minimum).
pub(crate) fn floor_of(world: &WorldFrame) -> f32 {
    world.height_range[0] as f32
}

/// `(x, y)` in metres of the window's cell `(i, j)`: the world cell times the cell size, the
/// same bits whatever window holds the cell.
#[inline]
pub(crate) fn metres(world: &WorldFrame, i: usize, j: usize) -> (f64, f64) {
    (world.x_m(i), world.y_m(j))
}

/// The `(x, y)` pair of an optional world centre key (`centre-m`): `None` when empty.
pub(crate) fn centre(list: &[f64]) -> Option<(f64, f64)> {
    match list {
        [x, y] => Some((*x, *y)),
        _ => None,
    }
}

/// `(x − cx)² + (y − cy)²` by multiplications (no `powi`, whose result may depend on the
/// platform's libm).
#[inline]
pub(crate) fn dist2(x: f64, y: f64, cx: f64, cy: f64) -> f64 {
    let (dx, dy) = (x - cx, y - cy);
    dx * dx + dy * dy
}

/// The error of a world-only key that a world recipe must give.
pub(crate) fn required(name: &str, what: &str) -> crate::Error {
    crate::Error::param(name, "(absent)", format!("{what} in a world recipe"))
}
